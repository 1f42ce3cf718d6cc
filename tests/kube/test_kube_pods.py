"""Pods: API-server resource rules, priority admission, annotations, unmodelled fields, snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import load, pod, problems, relative, warnings

LABEL = "scenario.yaml: document 1 (Pod/default/p)"


def with_resources(resources: str) -> str:
    return pod().replace("    image: busybox\n", f"    image: busybox\n    resources: {resources}\n")


@pytest.mark.parametrize(
    ("resources", "line"),
    [
        (
            '{requests: {nvidia.com/gpu: "0.5"}, limits: {nvidia.com/gpu: "0.5"}}',
            "spec.containers[0].resources.requests.nvidia.com/gpu: Invalid value: '0.5': must be an integer",
        ),
        (
            "{limits: {nvidia.com/gpu: -1}}",
            "spec.containers[0].resources.limits.nvidia.com/gpu: Invalid value: -1: must be greater than "
            "or equal to 0",
        ),
        (
            "{requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: 1}}",
            "spec.containers[0].resources.requests.nvidia.com/gpu: Invalid value: 2: must be equal to "
            "nvidia.com/gpu "
            "limit of 1",
        ),
        (
            "{requests: {nvidia.com/gpu: 1}}",
            "spec.containers[0].resources.limits: Forbidden: Limit must be set for non overcommitable "
            "resources",
        ),
        (
            "{requests: {gpu: 1}}",
            'spec.containers[0].resources.requests.gpu: Invalid value: "gpu": must be a standard resource '
            "for containers",
        ),
        (
            "{requests: {cpu: 2}, limits: {cpu: 1}}",
            "spec.containers[0].resources.requests.cpu: Invalid value: 2: must be less than or equal to "
            "cpu limit of 1",
        ),
    ],
)
def test_resource_rules_are_the_api_servers(tmp_path: Path, resources: str, line: str) -> None:
    assert f"{LABEL}: {line}" in problems(tmp_path, with_resources(resources))


def test_fractional_gpu_is_an_error_once_per_field(tmp_path: Path) -> None:
    assert problems(tmp_path, with_resources("{limits: {nvidia.com/gpu: 0.5}}")) == [
        f"{LABEL}: spec.containers[0].resources.limits.nvidia.com/gpu: Invalid value: 0.5: must be an integer"
    ]


def test_pod_requests_add_overhead_and_do_not_count_pods(tmp_path: Path) -> None:
    text = with_resources("{requests: {cpu: 500m, memory: 1Gi, ephemeral-storage: 10G}}") + (
        "  overhead: {cpu: 100m, memory: 64Mi}\n"
    )
    (bare,) = load(tmp_path, text).pods
    assert bare.pod.requests == {"cpu": 600, "memory": 2**30 + 64 * 2**20, "ephemeral-storage": 10**10}


def pod_level(resources: str, containers: str = "{requests: {cpu: 500m, memory: 1Gi}}") -> str:
    """A pod whose container asks ``containers`` and whose own ``spec.resources`` is ``resources``."""
    return with_resources(containers) + f"  resources: {resources}\n"


@pytest.mark.parametrize(
    ("resources", "requests"),
    [
        # PodRequests: a pod-level request stands in for the containers' aggregate of its resource
        ("{requests: {cpu: 2}}", {"cpu": 2000, "memory": 2**30}),
        # defaultPodRequests: with pod-level limits, a resource the containers request and the pod does
        # not gets their aggregate; one named only by a pod-level limit gets the limit
        ("{limits: {cpu: 4, memory: 8Gi}}", {"cpu": 500, "memory": 2**30}),
        ("{requests: {cpu: 1}, limits: {cpu: 4, memory: 8Gi}}", {"cpu": 1000, "memory": 2**30}),
    ],
)
def test_pod_level_requests_stand_in_for_the_containers_sum(
    tmp_path: Path, resources: str, requests: dict[str, int]
) -> None:
    """``PodLevelResources`` (beta, on by default in 1.34): what the scheduler and the HPA count."""
    (bare,) = load(tmp_path, pod_level(resources)).pods
    assert bare.pod.requests == requests


def test_pod_level_limits_default_requests_where_the_containers_ask_for_nothing(tmp_path: Path) -> None:
    text = pod_level("{limits: {cpu: 4, memory: 8Gi}}", "{}") + "  overhead: {cpu: 100m}\n"
    (bare,) = load(tmp_path, text).pods
    assert bare.pod.requests == {"cpu": 4100, "memory": 8 * 2**30}
    assert bare.pod.nonzero_requests == {"cpu": 4100, "memory": 8 * 2**30}


@pytest.mark.parametrize(
    ("resources", "line"),
    [
        (
            "{requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}",
            'spec.resources.requests.nvidia.com/gpu: Unsupported value: "nvidia.com/gpu": supported values: '
            '"cpu", "hugepages-", "memory"',
        ),
        (
            "{requests: {cpu: 250m}}",
            'spec.resources.requests.cpu: Invalid value: "250m": must be greater '
            "than or equal to aggregate container requests of 500m",
        ),
        (
            "{requests: {cpu: 2}, limits: {cpu: 1}}",
            "spec.resources.requests.cpu: Invalid value: 2: must be less than or equal to cpu limit of 1",
        ),
        (
            "{limits: {cpu: 1, memory: 512Mi}}",
            "spec.resources.requests.memory: Invalid value: 1Gi: must be less than or equal to memory "
            "limit of 512Mi",
        ),
        (
            "{claims: [{name: gpu}]}",
            "spec.resources.claims: Forbidden: claims may not be set for Resources at pod-level",
        ),
    ],
)
def test_pod_level_resources_follow_the_api_servers_rules(tmp_path: Path, resources: str, line: str) -> None:
    """``validatePodResources``: names, request and limit, consistency with the containers."""
    assert f"{LABEL}: {line}" in problems(tmp_path, pod_level(resources))


def test_pod_level_hugepages_need_cpu_or_memory_beside_them(tmp_path: Path) -> None:
    """Containers that ask for nothing leave no cpu or memory to default from (where they ask for some,
    ``defaultPodRequests`` puts it beside the hugepages, and the pod is valid)."""
    huge = "{requests: {hugepages-2Mi: 2Mi}, limits: {hugepages-2Mi: 2Mi}}"
    line = f"{LABEL}: spec.resources: Forbidden: HugePages require cpu or memory"
    assert line in problems(tmp_path, pod_level(huge, "{}"))
    (bare,) = load(tmp_path, pod_level(huge)).pods
    assert bare.pod.requests == {"cpu": 500, "memory": 2**30, "hugepages-2Mi": 2 * 2**20}


def test_a_container_limit_above_the_pod_level_limit_is_refused(tmp_path: Path) -> None:
    text = pod_level("{limits: {cpu: 1}}", "{limits: {cpu: 2}}")
    assert (
        f'{LABEL}: spec.resources.containers[0].cpu.limits: Invalid value: "2": must be less than or '
        "equal to pod limits of 1" in problems(tmp_path, text)
    )


def test_pod_level_resources_are_no_longer_a_warning(tmp_path: Path) -> None:
    assert warnings(tmp_path, pod_level("{requests: {cpu: 2}}")) == []


def test_priority_comes_from_the_pod_its_class_or_the_global_default(tmp_path: Path) -> None:
    text = f"""
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: batch}}
value: 100
globalDefault: true
preemptionPolicy: Never
---
{pod(name="defaulted")}---
{pod(name="explicit", spec="priority: 7")}---
{pod(name="critical", spec="priorityClassName: system-cluster-critical")}---
{pod(name="later", spec="priorityClassName: high")}---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: high}}
value: 1000
"""
    pods = {p.pod.name: p.pod for p in load(tmp_path, text).pods}
    assert (pods["defaulted"].priority, pods["defaulted"].priority_class_name) == (100, "batch")
    assert pods["defaulted"].preemption_policy == "Never"
    assert pods["explicit"].priority == 7
    assert pods["critical"].priority == 2_000_000_000
    # A class defined in a later document applies, as admission sees every class.
    assert (pods["later"].priority, pods["later"].preemption_policy) == (1000, "PreemptLowerPriority")


def test_unknown_priority_class_is_rejected_as_admission_does(tmp_path: Path) -> None:
    assert problems(tmp_path, pod(spec="priorityClassName: urgent")) == [
        f"{LABEL}: spec.priorityClassName: no PriorityClass with name urgent was found"
    ]


def test_priority_class_rules(tmp_path: Path) -> None:
    text = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: a}
value: 2000000000
globalDefault: true
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: system-mine}
value: 5
globalDefault: true
"""
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 1 (PriorityClass/a): value: Invalid value: 2000000000: maximum allowed "
        "value of a "
        "user defined priority is 1000000000",
        'scenario.yaml: document 2 (PriorityClass/system-mine): metadata.name: Invalid value: "system-mine": '
        "priority class names with 'system-' prefix are reserved",
        "scenario.yaml: document 2 (PriorityClass/system-mine): globalDefault: Invalid value: true: "
        "PriorityClass a "
        "is already marked as default. Only one default can exist",
    ]


def test_behaviour_annotations_are_parsed(tmp_path: Path) -> None:
    text = pod(
        metadata="""
        annotations:
          gpufleet.io/submit-at: 1h30m
          gpufleet.io/duration: 45m
          gpufleet.io/checkpoint-interval: 10m
        """
    )
    (bare,) = load(tmp_path, text).pods
    assert (bare.pod.behavior.submit_at_s, bare.created.submit_at_s) == (5400.0, 5400.0)
    assert bare.pod.behavior.duration_s == 2700.0
    assert bare.pod.behavior.checkpoint_interval_s == 600.0


def test_bad_and_unknown_gpufleet_annotations_are_errors(tmp_path: Path) -> None:
    text = pod(
        metadata="""
        annotations:
          gpufleet.io/duration: soon
          gpufleet.io/checkpoint-on-sigterm: "yes"
          gpufleet.io/image-szie: 10GB
          gpufleet.io/warmup: "{median: 30s, p95: 10s}"
        """
    )
    lines = problems(tmp_path, text)
    assert lines[0] == (
        f"{LABEL}: metadata.annotations.gpufleet.io/duration: invalid duration 'soon' "
        "(use Go syntax such as '90s', '20m', '2h')"
    )
    assert lines[1] == (
        f'{LABEL}: metadata.annotations.gpufleet.io/checkpoint-on-sigterm: Unsupported value: "yes": '
        'supported values: "true", "false"'
    )
    assert lines[2].startswith(
        f"{LABEL}: metadata.annotations.gpufleet.io/image-szie: unknown gpufleet annotation"
    )
    assert lines[3] == (
        f'{LABEL}: metadata.annotations.gpufleet.io/warmup: Invalid value: "{{median: 30s, p95: 10s}}": '
        "p95 (10s) must not be less than median (30s)"
    )


def test_every_behaviour_annotation_reaches_the_pod(tmp_path: Path) -> None:
    text = pod(
        metadata="""
        annotations:
          gpufleet.io/image-size: 12GB
          gpufleet.io/model-size: 140GB
          gpufleet.io/gpu-memory: 70Gi
          gpufleet.io/warmup: '{"min": "10s", "max": "40s"}'
          gpufleet.io/checkpoint-on-sigterm: "true"
          gpufleet.io/requeue-on-sigterm: "false"
          gpufleet.io/time-limit: 8h
          gpufleet.io/consumes: train:jobs
          other.example.com/anything: goes
        """
    )
    behavior = load(tmp_path, text).pods[0].pod.behavior
    assert behavior.image == "busybox"
    assert (behavior.image_size_bytes, behavior.model_size_bytes) == (12e9, 140e9)
    assert behavior.warmup == {"min": "10s", "max": "40s"}
    assert behavior.gpu_memory_bytes == 70 * 2**30
    assert (behavior.checkpoint_on_sigterm, behavior.requeue_on_sigterm) == (True, False)
    assert (behavior.time_limit_s, behavior.consumes) == (8 * 3600.0, "train:jobs")
    # Every one is modelled (time-limit by the Backfill plugin): no warning.
    assert warnings(tmp_path, text) == []


def test_warmup_may_be_a_plain_duration(tmp_path: Path) -> None:
    text = pod(metadata="annotations: {gpufleet.io/warmup: 45s}")
    assert load(tmp_path, text).pods[0].pod.behavior.warmup == "45s"


def test_scheduling_fields_not_modelled_are_warnings_and_others_pass_silently(tmp_path: Path) -> None:
    text = pod(
        spec="""
        hostNetwork: true
        runtimeClassName: nvidia
        schedulingGates: [{name: wait}]
        topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]
        affinity:
          podAntiAffinity:
            requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname}]
        volumes:
        - {name: data, persistentVolumeClaim: {claimName: data}}
        - {name: scratch, emptyDir: {}}
        dnsPolicy: ClusterFirst
        serviceAccountName: trainer
        """
    ).replace(
        "    image: busybox\n",
        "    image: busybox\n    command: [run]\n    env: [{name: A, value: b}]\n"
        "    ports: [{containerPort: 8080, hostPort: 8080}]\n"
        "    readinessProbe: {httpGet: {path: /, port: 8080}}\n",
    )
    assert warnings(tmp_path, text) == [
        f"{LABEL}: spec.runtimeClassName is not modelled; ignored",
        f"{LABEL}: spec.hostNetwork is not modelled; ignored",
        f"{LABEL}: spec.volumes[0].persistentVolumeClaim is not modelled; ignored",
    ]


def test_node_affinity_and_toleration_rules_are_the_api_servers(tmp_path: Path) -> None:
    text = pod(
        spec="""
        tolerations:
        - {operator: Equal, value: x}
        - {key: a, operator: Exists, value: x}
        - {key: a, effect: NoSchedule, tolerationSeconds: 5}
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions: [{key: a, operator: In}, {key: b, operator: Near, values: [x]}]
              - matchFields: [{key: metadata.labels, operator: In, values: [x]}]
            preferredDuringSchedulingIgnoredDuringExecution:
            - {weight: 0, preference: {matchExpressions: [{key: a, operator: Exists}]}}
        """
    )
    affinity = "spec.affinity.nodeAffinity"
    required = f"{affinity}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    assert problems(tmp_path, text) == [
        f"{LABEL}: {required}[0].matchExpressions[0].values: Required value: must be specified when "
        "`operator` is "
        "'In' or 'NotIn'",
        f'{LABEL}: {required}[0].matchExpressions[1].operator: Invalid value: "Near": not a valid selector '
        "operator",
        f'{LABEL}: {required}[1].matchFields[0].key: Invalid value: "metadata.labels": not a valid field '
        "selector key",
        f"{LABEL}: {affinity}.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: "
        "must be "
        "in the range 1-100",
        f'{LABEL}: spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when '
        "`key` is empty, "
        'which means "match all values and all keys"',
        f'{LABEL}: spec.tolerations[1].operator: Invalid value: {{"key": "a", "operator": "Exists", '
        f'"value": "x"}}: '
        "value must be empty when `operator` is 'Exists'",
        f"{LABEL}: spec.tolerations[2].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' "
        "when "
        "`tolerationSeconds` is set",
    ]


def test_snapshot_pods_keep_their_binding_and_phase(tmp_path: Path) -> None:
    text = f"""
{pod(name="running", spec="nodeName: gpu-0")}status: {{phase: Running}}
---
{pod(name="done", spec="nodeName: gpu-0")}status: {{phase: Succeeded}}
---
{pod(name="lost", spec="nodeName: gpu-0")}status: {{phase: Unknown}}
---
apiVersion: v1
kind: Node
metadata: {{name: gpu-0}}
status: {{capacity: {{cpu: "8"}}}}
"""
    scenario = load(tmp_path, text)
    states = {p.pod.name: (p.phase, p.bound_node, p.pod.node_name) for p in scenario.pods}
    assert states == {
        "running": ("Running", "gpu-0", "gpu-0"),
        "done": ("Succeeded", "gpu-0", "gpu-0"),
        "lost": ("Running", "gpu-0", "gpu-0"),
    }
    assert relative(tmp_path, scenario.warnings) == [
        "scenario.yaml: document 3 (Pod/default/lost): status.phase Unknown is not modelled "
        "(the pod is treated as Running); ignored"
    ]


def test_a_running_pod_must_be_bound(tmp_path: Path) -> None:
    assert problems(tmp_path, pod() + "status: {phase: Running}\n") == [
        f"{LABEL}: spec.nodeName: Required value: a Running pod is bound to a node"
    ]


def test_references_to_missing_pod_groups_and_nodes_are_warnings(tmp_path: Path) -> None:
    text = pod(spec="nodeName: nowhere", metadata="labels: {scheduling.x-k8s.io/pod-group: g}")
    assert warnings(tmp_path, text) == [
        f'{LABEL}: metadata.labels.scheduling.x-k8s.io/pod-group: no PodGroup "g" in namespace default',
        f'{LABEL}: spec.nodeName: no Node "nowhere" in the scenario',
    ]


def test_scoring_counts_each_containers_missing_cpu_and_memory_and_keeps_an_explicit_zero(
    tmp_path: Path,
) -> None:
    """resource_allocation.go ``NonMissingContainerRequests``: a container without a cpu or memory
    request counts 100m and 200Mi for scoring (per container, init containers too); a request
    written as 0 stays 0. The requests the filter checks are the written ones."""
    mi = 2**20
    text = pod(
        """
        containers:
        - {name: a, image: i, resources: {requests: {cpu: "0", memory: "0"}}}
        - {name: b, image: i}
        - {name: c, image: i, resources: {requests: {cpu: 250m}}}
        initContainers:
        - {name: init, image: i, resources: {requests: {cpu: "1", memory: 16Mi}}}
        """
    )
    (bare,) = load(tmp_path, text).pods
    assert bare.pod.requests == {"cpu": 1000, "memory": 16 * mi}
    # app containers: cpu 0 + 100 + 250 = 350, memory 0 + 200 + 200 = 400 Mi; the init container's
    # 1000m and 16Mi: the maximum of the two for each
    assert bare.pod.nonzero_requests == {"cpu": 1000, "memory": 400 * mi}


def test_an_unknown_toleration_operator_is_an_input_error_not_read_as_equal(tmp_path: Path) -> None:
    """``validateTolerations`` (``pkg/apis/core/validation``): an operator other than ``Equal``, ``Exists``
    (or none) is refused, ``NotSupported`` (``Gt`` and ``Lt`` are for node selectors), the toleration left
    out, never read as ``Equal``."""
    tolerations = "[{key: a, operator: Gt, value: '3', effect: NoExecute}, {key: b, operator: exists}]"
    supported = 'supported values: "Equal", "Exists"'
    assert problems(tmp_path, pod(spec=f"tolerations: {tolerations}")) == [
        f'{LABEL}: spec.tolerations[0].operator: Unsupported value: "Gt": {supported}',
        f'{LABEL}: spec.tolerations[1].operator: Unsupported value: "exists": {supported}',
    ]
