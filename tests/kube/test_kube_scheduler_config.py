"""KubeSchedulerConfiguration: defaults and validation as kube-scheduler 1.34's."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings

from gpufleet.model.scheduler_config import PluginRef

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
LABEL = "scenario.yaml: document 1 (KubeSchedulerConfiguration)"


def test_no_profiles_means_one_default_scheduler_profile(tmp_path: Path) -> None:
    (config,) = load(tmp_path, HEADER).schedulers
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler"]
    assert (config.pod_initial_backoff_s, config.pod_max_backoff_s) == (1.0, 10.0)
    assert config.profiles[0].plugins == {}


def test_unknown_plugin_is_an_error_and_an_unmodelled_one_a_warning(tmp_path: Path) -> None:
    score = "profiles:\n- plugins:\n    score:\n      enabled: "
    text = HEADER + score + "[{name: VolumeBinding}, {name: GpuBinPack}]\n"
    assert problems(tmp_path, text) == [
        f'{LABEL}: profiles[0].plugins.score.enabled[1].name: plugin "GpuBinPack" does not exist'
    ]
    text = HEADER + "profiles:\n- plugins:\n    score:\n      enabled: [{name: VolumeBinding, weight: 2}]\n"
    assert warnings(tmp_path, text) == [
        f"{LABEL}: profiles[0].plugins.score.enabled[0] VolumeBinding is not modelled; ignored"
    ]
    (config,) = load(tmp_path, text).schedulers
    assert config.profiles[0].plugins["score"].enabled == (PluginRef("VolumeBinding", 2),)


def test_disabling_everything_or_an_unmodelled_plugin_is_silent(tmp_path: Path) -> None:
    text = (
        HEADER + "profiles:\n- plugins:\n    score:\n      disabled: [{name: '*'}, {name: ImageLocality}]\n"
    )
    assert warnings(tmp_path, text) == []


def test_plugins_removed_from_v1_are_rejected(tmp_path: Path) -> None:
    text = HEADER + "profiles:\n- plugins:\n    filter:\n      enabled: [{name: EBSLimits}]\n"
    assert problems(tmp_path, text) == [
        f'{LABEL}: profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
        '"kubescheduler.config.k8s.io/v1")'
    ]


def test_profiles_share_one_queue_sort_and_names_are_unique(tmp_path: Path) -> None:
    text = (
        HEADER
        + """
percentageOfNodesToScore: 101
podInitialBackoffSeconds: 5
podMaxBackoffSeconds: 2
profiles:
- schedulerName: a
  percentageOfNodesToScore: -1
- schedulerName: a
  plugins:
    queueSort:
      enabled: [{name: Coscheduling}]
      disabled: [{name: "*"}]
- schedulerName: ""
"""
    )
    assert problems(tmp_path, text) == [
        f"{LABEL}: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        f"{LABEL}: podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to "
        "PodInitialBackoffSeconds",
        f"{LABEL}: profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
        f'{LABEL}: profiles[1].schedulerName: Duplicate value: "a"',
        f"{LABEL}: profiles[2].schedulerName: Required value",
        f'{LABEL}: profiles[1].plugins.queueSort: Invalid value: {{"enabled": [{{"name": "Coscheduling"}}], '
        '"disabled": [{"name": "*"}]}: queueSort must be the same for all profiles',
    ]


def test_scheduler_names_are_unique_across_documents(tmp_path: Path) -> None:
    text = (
        HEADER + "profiles: [{schedulerName: gang}]\n---\n" + HEADER + "profiles: [{schedulerName: gang}]\n"
    )
    lines = problems(tmp_path, text)
    assert len(lines) == 1
    assert lines[0].startswith(
        "scenario.yaml: document 2 (KubeSchedulerConfiguration): profiles[0].schedulerName: Duplicate "
        'value: "gang": '
        "a profile of "
    )
    assert lines[0].endswith("scenario.yaml#1 already has this name")


def test_process_fields_are_warnings_and_fields_v1_lacks_are_errors(tmp_path: Path) -> None:
    text = HEADER + "parallelism: 16\nleaderElection: {leaderElect: false}\nclientConnection: {qps: 50}\n"
    assert warnings(tmp_path, text) == [
        f"{LABEL}: {field} is not modelled; ignored"
        for field in ("parallelism", "leaderElection", "clientConnection")
    ]
    text = HEADER + "healthzBindAddress: 0.0.0.0:10251\nmetadata: {name: x}\nparallelism: 0\n"
    assert problems(tmp_path, text) == [
        f"{LABEL}: healthzBindAddress: Additional properties are not allowed ('healthzBindAddress' was "
        "unexpected)",
        f"{LABEL}: metadata: Additional properties are not allowed ('metadata' was unexpected)",
        f"{LABEL}: parallelism: Invalid value: 0: should be an integer value greater than zero",
    ]


def test_node_resources_fit_args_are_validated_as_upstream(tmp_path: Path) -> None:
    text = (
        HEADER
        + """
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      kind: NodeResourcesFitArgs
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources: [{name: nvidia.com/gpu, weight: 101}, {name: cpu}]
        requestedToCapacityRatio:
          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 11}, {utilization: 50, score: 5}]
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated, requestedToCapacityRatio: {shape: []}}, extra: 1}
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: -1, podGroupBackoffSeconds: 1}
"""
    )
    args = "profiles[0].pluginConfig"
    assert problems(tmp_path, text) == [
        f"{LABEL}: {args}[0].args.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight "
        "of "
        "nvidia.com/gpu not in valid range (0, 100]",
        f"{LABEL}: {args}[0].args.scoringStrategy.shape[2].utilization: Invalid "
        "value: 50: "
        "values must be sorted in increasing order",
        f"{LABEL}: {args}[0].args.scoringStrategy.shape[1].score: Invalid value: "
        "11: "
        "not in valid range [0, 10]",
        f'{LABEL}: {args}[1]: Duplicate value: "NodeResourcesFit"',
        f"{LABEL}: {args}[1].args.extra: Additional properties are not allowed ('extra' was unexpected)",
        # ValidateNodeResourcesFitArgs (1.34.10) checks a given shape whatever the type, under ``shape``
        f"{LABEL}: {args}[1].args.scoringStrategy.shape: Required value: at least one point must be "
        "specified",
        f"{LABEL}: {args}[2].args.permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0",
    ]


def test_coscheduling_pod_group_reject_percentage_is_read_and_kept_within_0_and_100(tmp_path: Path) -> None:
    """scheduler-plugins' ``CoschedulingArgs.podGroupRejectPercentage`` (``ValidateCoschedulingArgs``:
    "must be between 0 and 100")."""
    config = "profiles:\n- pluginConfig:\n  - name: Coscheduling\n    args: {podGroupRejectPercentage: %d}\n"
    (loaded,) = load(tmp_path, HEADER + config % 50).schedulers
    assert loaded.profiles[0].plugin_args["Coscheduling"] == {"podGroupRejectPercentage": 50}
    assert problems(tmp_path, HEADER + config % 101) == [
        f"{LABEL}: profiles[0].pluginConfig[0].args.podGroupRejectPercentage: Invalid value: 101: "
        "must be between 0 and 100"
    ]


def test_only_a_single_profile_is_named_default_scheduler_by_default(tmp_path: Path) -> None:
    (config,) = load(tmp_path, HEADER + "profiles: [{percentageOfNodesToScore: 10}]\n").schedulers
    assert config.profiles[0].scheduler_name == "default-scheduler"
    assert problems(tmp_path, HEADER + "profiles: [{schedulerName: a}, {}]\n") == [
        f"{LABEL}: profiles[1].schedulerName: Required value"
    ]
