"""Jobs, Deployments, DaemonSets and PodGroups: defaults and validation as upstream."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kube_manifests import load, problems, warnings


def job(spec: str = "", restart: str = "Never", name: str = "train", metadata: str = "") -> str:
    return f"""
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
{textwrap.indent(textwrap.dedent(metadata).strip(), "  ")}
spec:
{textwrap.indent(textwrap.dedent(spec).strip(), "  ")}
  template:
    metadata: {{annotations: {{gpufleet.io/duration: 1h}}}}
    spec:
      restartPolicy: {restart}
      containers: [{{name: c, image: x}}]
"""


def test_job_defaults_follow_the_api_server(tmp_path: Path) -> None:
    text = (
        job(name="plain")
        + "---"
        + job("parallelism: 4", name="queue")
        + "---"
        + job("completions: 3", name="fixed")
    )
    jobs = {j.name: j for j in load(tmp_path, text).jobs}
    assert (jobs["plain"].parallelism, jobs["plain"].completions, jobs["plain"].backoff_limit) == (1, 1, 6)
    # parallelism alone is a work queue: completions stays unset.
    assert (jobs["queue"].parallelism, jobs["queue"].completions) == (4, None)
    assert (jobs["fixed"].parallelism, jobs["fixed"].completions) == (1, 3)


def test_explicit_null_completions_with_parallelism_is_a_work_queue(tmp_path: Path) -> None:
    (queue,) = load(tmp_path, job("parallelism: 2\ncompletions: null")).jobs
    assert queue.completions is None


def test_job_pods_must_not_restart_always(tmp_path: Path) -> None:
    assert problems(tmp_path, job(restart="Always")) == [
        "scenario.yaml: document 1 (Job/default/train): spec.template.spec.restartPolicy: Unsupported "
        'value: "Always": '
        'supported values: "OnFailure", "Never"'
    ]


def test_job_counts_must_not_be_negative_and_indexed_needs_completions(tmp_path: Path) -> None:
    text = job("parallelism: -1\nbackoffLimit: -2\ncompletionMode: Indexed\ncompletions: null")
    label = "scenario.yaml: document 1 (Job/default/train)"
    assert problems(tmp_path, text) == [
        f"{label}: spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        f"{label}: spec.completions: Required value: when completion mode is Indexed",
        f"{label}: spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0",
    ]


def test_job_fields_not_modelled_are_warnings(tmp_path: Path) -> None:
    text = job(
        """
        completions: 4
        completionMode: Indexed
        activeDeadlineSeconds: 3600
        ttlSecondsAfterFinished: 60
        suspend: true
        backoffLimitPerIndex: 1
        podFailurePolicy:
          rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget, status: "True"}]}]
        """
    )
    # spec.suspend is modelled (``manageJob``: a suspended Job creates no pods), and
    # spec.ttlSecondsAfterFinished (the TTL-after-finished controller): not warnings
    assert warnings(tmp_path, text) == []
    label = "scenario.yaml: document 1 (Job/default/train)"
    assert warnings(tmp_path, job("managedBy: kueue.x-k8s.io/multikueue")) == [
        f"{label}: spec.managedBy is not modelled; ignored"
    ]


def test_job_ttl_seconds_after_finished_is_read_and_not_negative(tmp_path: Path) -> None:
    """``spec.ttlSecondsAfterFinished`` (``ValidateNonnegativeField``) is the Job's
    ``ttl_after_finished_s``."""
    (train,) = load(tmp_path, job("ttlSecondsAfterFinished: 60")).jobs
    assert train.ttl_after_finished_s == 60.0
    label = "scenario.yaml: document 1 (Job/default/train)"
    assert problems(tmp_path, job("ttlSecondsAfterFinished: -1")) == [
        f"{label}: spec.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0"
    ]


def test_job_pod_replacement_policy_is_read_without_a_warning(tmp_path: Path) -> None:
    """``spec.podReplacementPolicy`` is modelled (``onlyReplaceFailedPods``); unset, ``SetDefaults_Job``'s
    default: ``Failed`` with a ``podFailurePolicy``, else ``TerminatingOrFailed``."""
    (failed,) = load(tmp_path, job("podReplacementPolicy: Failed")).jobs
    (plain,) = load(tmp_path, job()).jobs
    assert (failed.pod_replacement_policy, failed.only_replace_failed_pods) == ("Failed", True)
    assert (plain.pod_replacement_policy, plain.only_replace_failed_pods) == (None, False)
    assert warnings(tmp_path, job("podReplacementPolicy: TerminatingOrFailed")) == []


def test_job_pod_replacement_policy_is_validated(tmp_path: Path) -> None:
    """``validatePodReplacementPolicy``: ``Failed`` or ``TerminatingOrFailed``; only ``Failed`` with a
    ``podFailurePolicy``."""
    label = "scenario.yaml: document 1 (Job/default/train)"
    assert problems(tmp_path, job("podReplacementPolicy: Sometimes")) == [
        f'{label}: spec.podReplacementPolicy: Unsupported value: "Sometimes": supported values: "Failed", '
        '"TerminatingOrFailed"'
    ]
    with_policy = """
        podReplacementPolicy: TerminatingOrFailed
        podFailurePolicy:
          rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]
        """
    assert problems(tmp_path, job(with_policy)) == [
        f'{label}: spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: '
        '"Failed"'
    ]


def test_job_suspend_is_read(tmp_path: Path) -> None:
    """``spec.suspend: true`` is the Job's ``suspend`` (false when unset or false), without a warning."""
    (held,) = load(tmp_path, job("suspend: true")).jobs
    (plain,) = load(tmp_path, job("suspend: false")).jobs
    assert (held.suspend, plain.suspend) == (True, False)
    assert warnings(tmp_path, job("suspend: true")) == []


def test_job_backoff_limit_per_index_is_read_and_defaults_backoff_limit_to_max_int32(tmp_path: Path) -> None:
    """``SetDefaults_Job``: with ``backoffLimitPerIndex`` an unset ``backoffLimit`` is MaxInt32."""
    text = job("completions: 8\ncompletionMode: Indexed\nbackoffLimitPerIndex: 1\nmaxFailedIndexes: 2")
    (train,) = load(tmp_path, text).jobs
    assert (train.backoff_limit_per_index, train.max_failed_indexes, train.backoff_limit) == (1, 2, 2**31 - 1)
    (plain,) = load(tmp_path, job("completions: 8\ncompletionMode: Indexed")).jobs
    assert (plain.backoff_limit_per_index, plain.max_failed_indexes, plain.backoff_limit) == (None, None, 6)


def test_job_backoff_limit_per_index_validation_follows_the_api_server(tmp_path: Path) -> None:
    """``validateJobSpec``: only Indexed, not negative, ``maxFailedIndexes`` needs ``backoffLimitPerIndex``
    and is at most ``completions`` and 10^5; above 10^5 completions it is required, at most 10^4, as is
    ``parallelism``."""
    label = "scenario.yaml: document 1 (Job/default/train)"
    assert problems(tmp_path, job("completions: 2\nbackoffLimitPerIndex: 1\nmaxFailedIndexes: 1")) == [
        f"{label}: spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
        f"{label}: spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode",
    ]
    indexed = "completionMode: Indexed\n"
    assert problems(
        tmp_path, job(indexed + "completions: 2\nmaxFailedIndexes: 3\nbackoffLimitPerIndex: -1")
    ) == [
        f"{label}: spec.backoffLimitPerIndex: Invalid value: -1: must be greater than or equal to 0",
        f"{label}: spec.maxFailedIndexes: Invalid value: 3: must be less than or equal to completions",
    ]
    assert problems(tmp_path, job(indexed + "completions: 2\nmaxFailedIndexes: 1")) == [
        f"{label}: spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
    ]
    high = "when completions are above 100000 and used with backoff limit per index"
    spec = (
        indexed + "completions: 200000\nparallelism: 20000\nbackoffLimitPerIndex: 0\nmaxFailedIndexes: 150000"
    )
    assert problems(tmp_path, job(spec)) == [
        f"{label}: spec.maxFailedIndexes: Invalid value: 150000: must be less than or equal to 100000",
        f"{label}: spec.parallelism: Invalid value: 20000: must be less than or equal to 10000 {high}",
        f"{label}: spec.maxFailedIndexes: Invalid value: 150000: must be less than or equal to 10000 {high}",
    ]
    spec = indexed + "completions: 200000\nparallelism: 10\nbackoffLimitPerIndex: 0"
    assert problems(tmp_path, job(spec)) == [
        f"{label}: spec.maxFailedIndexes: Required value: must be specified when completions is above 100000",
    ]


def test_job_active_deadline_is_read_under_kueue_too(tmp_path: Path) -> None:
    """``activeDeadlineSeconds`` is modelled from the Job's ``startTime``; a Job Kueue manages has it set at
    each admission (``StartTime`` reset on resume, cleared by Kueue's ``Job.Stop``), which is modelled too
    (``tests/workloads/test_job_deadline_under_kueue.py``): no warning."""
    (plain,) = load(tmp_path, job("activeDeadlineSeconds: 600")).jobs
    assert plain.active_deadline_s == 600.0
    queued = job("activeDeadlineSeconds: 600", metadata="labels: {kueue.x-k8s.io/queue-name: q}")
    (under_kueue,) = load(tmp_path, queued).jobs
    assert under_kueue.active_deadline_s == 600.0
    assert not [w for w in warnings(tmp_path, queued) if "activeDeadlineSeconds" in w]


def test_workload_submit_time_comes_from_its_own_annotation_first(tmp_path: Path) -> None:
    text = job(metadata="annotations: {gpufleet.io/submit-at: 2m}")
    (train,) = load(tmp_path, text).jobs
    assert train.created.submit_at_s == 120.0


def test_pod_behaviour_annotations_on_a_workload_belong_on_its_template(tmp_path: Path) -> None:
    assert problems(tmp_path, job(metadata="annotations: {gpufleet.io/duration: 1h}")) == [
        "scenario.yaml: document 1 (Job/default/train): metadata.annotations.gpufleet.io/duration: this "
        "annotation "
        "belongs on a pod or a pod template (spec.template.metadata)"
    ]


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: api}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x}]
  strategy: {type: Recreate}
"""


def test_deployment_selector_must_match_template_and_pods_restart_always(tmp_path: Path) -> None:
    label = "scenario.yaml: document 1 (Deployment/default/web)"
    assert problems(tmp_path, DEPLOYMENT) == [
        f'{label}: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        f'{label}: spec.template.metadata.labels: Invalid value: {{"app": "api"}}: `selector` does not match '
        "template `labels`",
    ]


def test_deployment_replicas_default_to_one_and_its_strategy_is_read(tmp_path: Path) -> None:
    """``spec.strategy`` is modelled (``kube.deployment_strategy``): no warning."""
    text = DEPLOYMENT.replace("app: api", "app: web").replace("      restartPolicy: Never\n", "")
    (web,) = load(tmp_path, text).deployments
    assert web.replicas == 1 and web.strategy.type == "Recreate"
    assert warnings(tmp_path, text) == []


def test_daemonset_needs_a_selector(tmp_path: Path) -> None:
    text = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {}
  template:
    spec:
      containers: [{name: c, image: x}]
"""
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 1 (DaemonSet/default/agent): spec.selector: Invalid value: {}: empty "
        "selector is "
        "invalid for daemonset"
    ]


def test_pod_group_validation(tmp_path: Path) -> None:
    text = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g, namespace: ml}
spec: {minMember: 0, scheduleTimeoutSeconds: "60", minMembers: 2}
status: {phase: Running}
"""
    label = "scenario.yaml: document 1 (PodGroup/ml/g)"
    assert problems(tmp_path, text) == [
        f"{label}: spec.minMember: Invalid value: 0: must be greater than or equal to 1",
        f'{label}: spec.scheduleTimeoutSeconds: Invalid value: "60": must be an integer',
        f"{label}: spec.minMembers: Additional properties are not allowed ('minMembers' was unexpected)",
    ]


def test_pod_group_defaults_and_min_resources_read(tmp_path: Path) -> None:
    """``minResources`` is read (Coscheduling's PreFilter checks it: ``CheckClusterResource``), in
    canonical units, without a warning."""
    text = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g}
spec: {minResources: {nvidia.com/gpu: 16, cpu: 1500m}}
"""
    scenario = load(tmp_path, text)
    assert scenario.pod_groups["default/g"].min_member == 1
    assert scenario.pod_groups["default/g"].min_resources == {"nvidia.com/gpu": 16, "cpu": 1500}
    assert warnings(tmp_path, text) == []
