"""kube-scheduler v1.34.10 ``pkg/scheduler/framework/plugins/noderesources/fit_test.go``, ported case
by case: TestEnoughRequests, TestNotEnoughRequests, TestStorageRequests,
TestRestartableInitContainers (Filter status: code and reasons) and TestFitScore (scores).

TestIsFit runs the Filter on an empty node. The queueing hints: Test_isSchedulableAfterPodChange,
Test_isSchedulableAfterNodeChange, TestHaveAnyRequestedResourcesIncreased (``error`` is upstream's
``(Queue, err)``). Kept as skipped cases: TestPreFilterDisabled (Filter without PreFilter, a
Go-internal error path), TestEventsToRegister (feature-gate combinations other than 1.34's) and the
cases with InPlacePodVerticalScaling off or DRA-backed extended resources.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import (
    SIDECAR,
    Skip,
    cases,
    container,
    dynamic_scores,
    filter_status,
    hint_of,
    make_node,
    make_pod,
    req_pod,
    resource_container,
    skipped_cases,
    status,
)

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import EventPod
from gpufleet.scheduling.framework import Code, Status
from gpufleet.scheduling.plugins.node_resources_fit import (
    NodeResourcesFit,
    ScoringStrategy,
    after_node_change,
    after_pod_event,
    requested_increased,
)

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_A = "kubernetes.io/something"
K8S_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
DRA_EXT = "extended.resource.dra.io/something"
U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
DRA_BACKED = Skip("extended resources backed by DRA (the alpha DRAExtendedResource gate) are not modelled")


def c(cpu: int = 0, mem: int = 0, **scalars: int) -> dict[str, Any]:
    """A ``framework.Resource`` container; scalars as keyword aliases of the names above."""
    names = {"a": EXT_A, "b": EXT_B, "ka": K8S_A, "kb": K8S_B, "huge": HUGE_A, "dra": DRA_EXT}
    return resource_container(cpu, mem, {names[k]: v for k, v in scalars.items()})


def resource_pod(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = (), **spec: Any) -> Pod:
    """``newResourcePod(...)``, optionally ``newResourceInitPod(..., init...)`` and overhead."""
    return make_pod(containers, init=init, spec=spec or None)


def pod_level(cpu: int, mem: int, huge: int = 0) -> dict[str, Any]:
    """``newPodLevelResourcesPod``'s ``spec.resources``: requests of ``cpu`` millicores, ``mem`` bytes and
    ``huge`` hugepages-2Mi; hugepages with an equal limit, which the API server requires of a real pod
    (upstream's case builds the object without it, past validation)."""
    requests = {"cpu": f"{cpu}m", "memory": str(mem), **({HUGE_A: str(huge)} if huge else {})}
    return {"requests": requests, **({"limits": {HUGE_A: str(huge)}} if huge else {})}


def enough_node() -> Node:
    """``makeAllocatableResources(10, 20, 32, 5, 20, 5)``."""
    return make_node(
        "node",
        {"cpu": "10m", "memory": "20", "pods": "32", EXT_A: "5", "ephemeral-storage": "20", HUGE_A: "5"},
    )


def fit(**args: Any) -> NodeResourcesFit:
    return NodeResourcesFit.from_args(args)


OK = status()
ENOUGH_REQUESTS: list[Any] = [
    ("no resources requested always fits", make_pod(), c(10, 20), {}, OK),
    (
        "too many resources fails",
        resource_pod(c(1, 1)),
        c(10, 20),
        {},
        status(U, "Insufficient cpu", "Insufficient memory"),
    ),
    (
        "too many resources fails due to init container cpu",
        resource_pod(c(1, 1), init=(c(3, 1),)),
        c(8, 19),
        {},
        status(U, "Insufficient cpu"),
    ),
    (
        "too many resources fails due to highest init container cpu",
        resource_pod(c(1, 1), init=(c(3, 1), c(2, 1))),
        c(8, 19),
        {},
        status(U, "Insufficient cpu"),
    ),
    (
        "too many resources fails due to init container memory",
        resource_pod(c(1, 1), init=(c(1, 3),)),
        c(9, 19),
        {},
        status(U, "Insufficient memory"),
    ),
    (
        "too many resources fails due to highest init container memory",
        resource_pod(c(1, 1), init=(c(1, 3), c(1, 2))),
        c(9, 19),
        {},
        status(U, "Insufficient memory"),
    ),
    (
        "init container fits because it's the max, not sum, of containers and init containers",
        resource_pod(c(1, 1), init=(c(1, 1),)),
        c(9, 19),
        {},
        OK,
    ),
    (
        "multiple init containers fit because it's the max, not sum, of containers and init containers",
        resource_pod(c(1, 1), init=(c(1, 1), c(1, 1))),
        c(9, 19),
        {},
        OK,
    ),
    ("both resources fit", resource_pod(c(1, 1)), c(5, 5), {}, OK),
    ("one resource memory fits", resource_pod(c(2, 1)), c(9, 5), {}, status(U, "Insufficient cpu")),
    ("one resource cpu fits", resource_pod(c(1, 2)), c(5, 19), {}, status(U, "Insufficient memory")),
    ("equal edge case", resource_pod(c(5, 1)), c(5, 19), {}, OK),
    ("equal edge case for init container", resource_pod(c(4, 1), init=(c(5, 1),)), c(5, 19), {}, OK),
    ("extended resource fits", resource_pod(c(a=1)), c(), {}, OK),
    ("extended resource fits for init container", resource_pod(c(), init=(c(a=1),)), c(), {}, OK),
    (
        "extended resource capacity enforced",
        resource_pod(c(1, 1, a=10)),
        c(0, 0, a=0),
        {},
        status(UU, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource capacity enforced for init container",
        resource_pod(c(), init=(c(1, 1, a=10),)),
        c(0, 0, a=0),
        {},
        status(UU, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource allocatable enforced",
        resource_pod(c(1, 1, a=1)),
        c(0, 0, a=5),
        {},
        status(U, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource allocatable enforced for init container",
        resource_pod(c(), init=(c(1, 1, a=1),)),
        c(0, 0, a=5),
        {},
        status(U, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource allocatable enforced for multiple containers",
        resource_pod(c(1, 1, a=3), c(1, 1, a=3)),
        c(0, 0, a=2),
        {},
        status(UU, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource allocatable admits multiple init containers",
        resource_pod(c(), init=(c(1, 1, a=3), c(1, 1, a=3))),
        c(0, 0, a=2),
        {},
        OK,
    ),
    (
        "extended resource allocatable enforced for multiple init containers",
        resource_pod(c(), init=(c(1, 1, a=6), c(1, 1, a=3))),
        c(0, 0, a=2),
        {},
        status(UU, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource allocatable enforced for unknown resource",
        resource_pod(c(1, 1, b=1)),
        c(),
        {},
        status(UU, f"Insufficient {EXT_B}"),
    ),
    (
        "extended resource allocatable enforced for unknown resource for init container",
        resource_pod(c(), init=(c(1, 1, b=1),)),
        c(),
        {},
        status(UU, f"Insufficient {EXT_B}"),
    ),
    (
        "kubernetes.io resource capacity enforced",
        resource_pod(c(1, 1, ka=10)),
        c(),
        {},
        status(UU, f"Insufficient {K8S_A}"),
    ),
    (
        "kubernetes.io resource capacity enforced for init container",
        resource_pod(c(), init=(c(1, 1, kb=10),)),
        c(),
        {},
        status(UU, f"Insufficient {K8S_B}"),
    ),
    (
        "hugepages resource capacity enforced",
        resource_pod(c(1, 1, huge=10)),
        c(0, 0, huge=0),
        {},
        status(UU, f"Insufficient {HUGE_A}"),
    ),
    (
        "hugepages resource capacity enforced for init container",
        resource_pod(c(), init=(c(1, 1, huge=10),)),
        c(0, 0, huge=0),
        {},
        status(UU, f"Insufficient {HUGE_A}"),
    ),
    (
        "hugepages resource allocatable enforced for multiple containers",
        resource_pod(c(1, 1, huge=3), c(1, 1, huge=3)),
        c(0, 0, huge=2),
        {},
        status(UU, f"Insufficient {HUGE_A}"),
    ),
    (
        "skip checking ignored extended resource",
        resource_pod(c(1, 1, b=1)),
        c(),
        {"ignoredResources": [EXT_B]},
        OK,
    ),
    (
        "resources + pod overhead fits",
        resource_pod(c(1, 1), overhead={"cpu": "3m", "memory": "13"}),
        c(5, 5),
        {},
        OK,
    ),
    (
        "requests + overhead does not fit for memory",
        resource_pod(c(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        c(5, 5),
        {},
        status(U, "Insufficient memory"),
    ),
    (
        "skip checking ignored extended resource via resource groups",
        resource_pod(c(1, 1, b=1, ka=1)),
        c(),
        {"ignoredResourceGroups": ["example.com"]},
        status(UU, f"Insufficient {K8S_A}"),
    ),
    (
        "skip checking extended resource request with quantity zero via resource groups",
        resource_pod(c(1, 1, a=0)),
        c(0, 0, a=6),
        {},
        OK,
    ),
    # podLevelResourcesEnabled, but the pod sets no pod-level resources: the gate changes nothing
    ("skip checking resource request with quantity zero", resource_pod(c(a=1)), c(20, 30, a=1), {}, OK),
    # podLevelResourcesEnabled (PodLevelResources, on in 1.34): ``PodRequests`` counts the pod-level
    # request of a resource in place of its containers' aggregate
    (
        "both pod-level and container-level resources fit",
        resource_pod(c(1, 1), resources=pod_level(1, 2)),
        c(5, 5),
        {},
        OK,
    ),
    (
        "pod-level cpu resource not fit",
        resource_pod(c(1, 1), resources=pod_level(7, 2)),
        c(5, 5),
        {},
        status(U, "Insufficient cpu"),
    ),
    (
        "pod-level memory resource not fit",
        resource_pod(c(1, 1), resources=pod_level(3, 2)),
        c(5, 19),
        {},
        status(U, "Insufficient memory"),
    ),
    ("pod-level hugepages resource fit", resource_pod(c(), resources=pod_level(3, 2, 5)), c(), {}, OK),
    (
        "both pod-level and container-level hugepages resource fit",
        resource_pod(c(1, 1, huge=3), resources=pod_level(3, 2, 5)),
        c(),
        {},
        OK,
    ),
    (
        "pod-level hugepages resource not fit",
        resource_pod(c(), resources=pod_level(3, 2, 10)),
        c(),
        {},
        status(UU, f"Insufficient {HUGE_A}"),
    ),
    (
        "one pod-level cpu resource fits and all init and non-init containers resources fit",
        resource_pod(c(1, 1), init=(c(1, 1),), resources=pod_level(3, 2)),
        c(5, 19),
        {},
        status(U, "Insufficient memory"),
    ),
    # draExtendedResourceEnabled; the node's device plugin has the resource: it fits either way
    ("extended resource backed by device plugin", resource_pod(c(a=1)), c(), {}, OK),
    ("extended resource backed by DRA", DRA_BACKED),
    ("extended resource backed by DRA, nil resourceToDeviceClass", DRA_BACKED),
    (
        "extended resource backed by DRA not enabled",
        resource_pod(c(1, 1, dra=1)),
        c(),
        {},
        status(UU, f"Insufficient {DRA_EXT}"),
    ),
    # draExtendedResourceEnabled, but no DeviceClass names this resource: the node must have it
    (
        "extended resource NOT backed by DRA",
        resource_pod(c(1, 1, b=1)),
        c(),
        {},
        status(UU, f"Insufficient {EXT_B}"),
    ),
]


@pytest.mark.parametrize(("pod", "usage", "args", "want"), cases("TestEnoughRequests", ENOUGH_REQUESTS, 4))
def test_enough_requests(pod: Pod, usage: dict[str, Any], args: dict[str, Any], want: Status) -> None:
    """Filter on ``makeAllocatableResources(10, 20, 32, 5, 20, 5)`` with one pod using ``usage``."""
    assert filter_status(fit(**args), pod, enough_node(), [make_pod([usage])]) == want


NOT_ENOUGH_REQUESTS: list[Any] = [
    (
        "even without specified resources, predicate fails when there's no space for additional pod",
        make_pod(),
        c(10, 20),
    ),
    (
        "even if both resources fit, predicate fails when there's no space for additional pod",
        resource_pod(c(1, 1)),
        c(5, 5),
    ),
    (
        "even for equal edge case, predicate fails when there's no space for additional pod",
        resource_pod(c(5, 1)),
        c(5, 19),
    ),
    (
        "even for equal edge case, predicate fails when there's no space for additional pod due to init "
        "container",
        resource_pod(c(5, 1), init=(c(5, 1),)),
        c(5, 19),
    ),
]


@pytest.mark.parametrize(("pod", "usage"), cases("TestNotEnoughRequests", NOT_ENOUGH_REQUESTS, 2))
def test_not_enough_requests(pod: Pod, usage: dict[str, Any]) -> None:
    """A node allowing 1 pod (``makeAllocatableResources(10, 20, 1, 0, 0, 0)``) that already runs one."""
    node = make_node("node", {"cpu": "10m", "memory": "20", "pods": "1", EXT_A: "0", HUGE_A: "0"})
    assert filter_status(fit(), pod, node, [make_pod([usage])]) == status(U, "Too many pods")


STORAGE_REQUESTS: list[Any] = [
    ("empty storage requested, and pod fits", resource_pod(c(1, 1)), c(2, 10), OK),
    (
        "storage ephemeral local storage request exceeds allocatable",
        make_pod([container({"cpu": "0m", "memory": "0", "ephemeral-storage": "25"})]),
        c(2, 2),
        status(UU, "Insufficient ephemeral-storage"),
    ),
    (
        "ephemeral local storage is sufficient",
        make_pod([container({"cpu": "0m", "memory": "0", "ephemeral-storage": "5"})]),
        {"cpu": "2m", "memory": "2", "ephemeral-storage": "10"},
        OK,
    ),
    (
        "pod fits",
        make_pod([container({"cpu": "0m", "memory": "0", "ephemeral-storage": "10"})]),
        c(2, 2),
        OK,
    ),
]


@pytest.mark.parametrize(("pod", "usage", "want"), cases("TestStorageRequests", STORAGE_REQUESTS, 3))
def test_storage_requests(pod: Pod, usage: dict[str, Any], want: Status) -> None:
    """Filter on ``makeAllocatableResources(10, 20, 32, 5, 20, 5)``."""
    used = make_pod([usage if "resources" in usage else container(usage)])
    assert filter_status(fit(), pod, enough_node(), [used]) == want


SIDECARS_DISABLED = Skip("the SidecarContainers gate is GA and locked on in 1.34: it cannot be disabled")


def sidecar_pod(request: str | None, sidecar: str | None) -> Pod:
    """``newPodWithRestartableInitContainers``: a regular container and a restartable init one."""
    regular = container({"cpu": request} if request else None)
    side = container({"cpu": sidecar} if sidecar else None, **SIDECAR)
    return make_pod([regular], init=[side])


RESTARTABLE_INIT: list[Any] = [
    ("allow pod without restartable init containers if sidecar containers is disabled", SIDECARS_DISABLED),
    ("not allow pod with restartable init containers if sidecar containers is disabled", SIDECARS_DISABLED),
    (
        "allow pod without restartable init containers if sidecar containers is enabled",
        make_pod([container()]),
        OK,
    ),
    (
        "allow pod with restartable init containers if sidecar containers is enabled",
        sidecar_pod(None, None),
        OK,
    ),
    (
        "allow pod if the total requested resources do not exceed the node's allocatable resources",
        sidecar_pod("1m", "1m"),
        OK,
    ),
    (
        "not allow pod if the total requested resources do exceed the node's allocatable resources",
        sidecar_pod("1m", "2m"),
        status(UU, "Insufficient cpu"),
    ),
]


@pytest.mark.parametrize(("pod", "want"), cases("TestRestartableInitContainers", RESTARTABLE_INIT, 2))
def test_restartable_init_containers(pod: Pod, want: Status) -> None:
    """An empty node with ``makeAllocatableResources(2, 0, 1, 0, 0, 0)``."""
    node = make_node("node", {"cpu": "2m", "memory": "0", "pods": "1", EXT_A: "0", HUGE_A: "0"})
    assert filter_status(fit(), pod, node) == want


def _two_nodes(cpu2: str = "6000") -> list[Node]:
    return [
        make_node("node1", {"cpu": "4000", "memory": "10000"}),
        make_node("node2", {"cpu": cpu2, "memory": "10000"}),
    ]


def _strategy(kind: str, shape: tuple[tuple[int, int], ...] = ((0, 10), (100, 0))) -> ScoringStrategy:
    return ScoringStrategy(kind, (("cpu", 1), ("memory", 1)), shape)


_USED = {
    "node1": [req_pod({"cpu": "2000", "memory": "4000"})],
    "node2": [req_pod({"cpu": "1000", "memory": "2000"})],
}
_SIDECAR_USED = {
    "node1": [
        make_pod(
            [container({"cpu": "1000", "memory": "2000"})],
            init=[container({"cpu": "1000", "memory": "2000"}, **SIDECAR)],
        )
    ],
    "node2": [req_pod({"cpu": "1000", "memory": "2000"})],
}
FIT_SCORE: list[Any] = [
    (
        "test case for ScoringStrategy RequestedToCapacityRatio case1",
        _strategy("RequestedToCapacityRatio"),
        {"cpu": "3000", "memory": "5000"},
        _two_nodes(),
        _USED,
        [10, 32],
    ),
    (
        "test case for ScoringStrategy RequestedToCapacityRatio case2",
        _strategy("RequestedToCapacityRatio", ((0, 0), (100, 10))),
        {"cpu": "3000", "memory": "5000"},
        _two_nodes(),
        _USED,
        [95, 68],
    ),
    (
        "test case for ScoringStrategy MostAllocated",
        _strategy("MostAllocated"),
        {"cpu": "1000", "memory": "2000"},
        _two_nodes(),
        _USED,
        [67, 36],
    ),
    (
        "test case for ScoringStrategy LeastAllocated",
        _strategy("LeastAllocated"),
        {"cpu": "1000", "memory": "2000"},
        _two_nodes(),
        _USED,
        [32, 63],
    ),
    # gpufleet has no PreScore state to miss: the cases without PreScore score the same way
    (
        "test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
        _strategy("RequestedToCapacityRatio"),
        {"cpu": "3000", "memory": "5000"},
        _two_nodes(),
        _USED,
        [10, 32],
    ),
    (
        "test case for ScoringStrategy MostAllocated if PreScore is not called",
        _strategy("MostAllocated"),
        {"cpu": "1000", "memory": "2000"},
        _two_nodes(),
        _USED,
        [67, 36],
    ),
    (
        "test case for ScoringStrategy LeastAllocated if PreScore is not called",
        _strategy("LeastAllocated"),
        {"cpu": "1000", "memory": "2000"},
        _two_nodes(),
        _USED,
        [32, 63],
    ),
    (
        "test case for ScoringStrategy MostAllocated with sidecar container",
        _strategy("MostAllocated"),
        {"cpu": "1000", "memory": "2000"},
        _two_nodes("4000"),
        _SIDECAR_USED,
        [67, 45],
    ),
    (
        "test case for ScoringStrategy LeastAllocated with sidecar container",
        _strategy("LeastAllocated"),
        {"cpu": "1000", "memory": "2000"},
        _two_nodes("4000"),
        _SIDECAR_USED,
        [32, 55],
    ),
]


@pytest.mark.parametrize(
    ("strategy", "request_", "nodes", "existing", "want"), cases("TestFitScore", FIT_SCORE, 5)
)
def test_fit_score(
    strategy: ScoringStrategy,
    request_: dict[str, str],
    nodes: list[Node],
    existing: dict[str, list[Pod]],
    want: list[int],
) -> None:
    assert dynamic_scores(NodeResourcesFit(strategy), req_pod(request_), nodes, existing) == want


def pod_level_only(requests: dict[str, str]) -> Pod:
    """``st.MakePod().Resources(...)``: pod-level requests over a container that asks for nothing. The
    API server requires hugepages to have an equal limit and cpu or memory beside them, so a hugepages
    request comes with its limit and a memory request of 0 (upstream's object skips validation)."""
    resources: dict[str, Any] = {"requests": dict(requests)}
    huge = {name: value for name, value in requests.items() if name.startswith("hugepages-")}
    if huge:
        resources = {"requests": {**requests, "memory": "0"}, "limits": huge}
    return make_pod([container()], spec={"resources": resources})


IS_FIT: list[Any] = [
    ("nil node", Skip("isFit's nil node is a Go nil check; gpufleet has no node without an object")),
    ("insufficient resource", req_pod({"cpu": "2"}), {"cpu": "1"}, False),
    ("sufficient resource", req_pod({"cpu": "1"}), {"cpu": "2"}, True),
    ("insufficient pod-level resource", pod_level_only({"cpu": "2"}), {"cpu": "1"}, False),
    ("sufficient pod-level resource", pod_level_only({"cpu": "2"}), {"cpu": "2"}, True),
    ("sufficient pod-level resource hugepages", pod_level_only({HUGE_A: "2Mi"}), {HUGE_A: "2Mi"}, True),
    ("insufficient pod-level resource hugepages", pod_level_only({HUGE_A: "4Mi"}), {HUGE_A: "2Mi"}, False),
]


@pytest.mark.parametrize(("pod", "capacity", "fits"), cases("TestIsFit", IS_FIT, 3))
def test_is_fit(pod: Pod, capacity: dict[str, str], fits: bool) -> None:
    """``isFit``: the Filter on an empty node with this capacity."""
    assert filter_status(fit(), pod, make_node("node", capacity)).ok is fits


PREFILTER_DISABLED = Skip("Filter without PreFilter is a Go-internal error path (no PreFilter state)")
REGISTRATION = Skip(
    "only 1.34's defaults are modelled, SchedulerQueueingHints (GA, locked on) and InPlacePodVerticalScaling "
    "both on, a combination this table does not check (tests/scheduling/test_queueing_hints.py checks it)"
)
VERTICAL_SCALING_OFF = Skip("InPlacePodVerticalScaling is on in 1.34 and not modelled off")
EVENTS: list[Any] = [
    ("Register events with InPlacePodVerticalScaling feature enabled", REGISTRATION),
    ("Register events with SchedulingQueueHint feature enabled", REGISTRATION),
    ("Register events with InPlacePodVerticalScaling feature disabled", REGISTRATION),
]


@pytest.mark.parametrize("name", cases("TestEventsToRegister", EVENTS, 1))
def test_events_to_register(name: str) -> None:
    """Never runs: every case is skipped with its reason."""


def cpu_pod(name: str, cpu: str, node: str = "", resource: str = "cpu") -> EventPod:
    """``st.MakePod().Name(name).Req({resource: cpu}).Node(node)``."""
    return EventPod(req_pod({resource: cpu}, name=name), node)


POD_1 = cpu_pod("pod1", "1").pod
POD_CHANGES: list[Any] = [
    ("backoff-wrong-old-object", make_pod(), "not-a-pod", None, "error"),
    ("backoff-wrong-new-object", make_pod(), None, "not-a-pod", "error"),
    ("queue-on-other-pod-deleted", POD_1, cpu_pod("pod2", "1", "fake"), None, "Queue"),
    ("skip-queue-on-unscheduled-pod-deleted", make_pod(), EventPod(make_pod()), None, "QueueSkip"),
    ("skip-queue-on-disable-inplace-pod-vertical-scaling", VERTICAL_SCALING_OFF),
    ("skip-queue-on-other-unscheduled-pod", POD_1, cpu_pod("pod2", "2"), cpu_pod("pod2", "1"), "QueueSkip"),
    (
        "skip-queue-on-other-pod-unrelated-resource-scaled-down",
        POD_1,
        cpu_pod("pod2", "2", "fake", "memory"),
        cpu_pod("pod2", "1", "fake", "memory"),
        "QueueSkip",
    ),
    (
        "queue-on-other-pod-some-resource-scale-down",
        POD_1,
        cpu_pod("pod2", "2", "fake"),
        cpu_pod("pod2", "1", "fake"),
        "Queue",
    ),
    (
        "queue-on-target-pod-some-resource-scale-down",
        POD_1,
        cpu_pod("pod1", "2"),
        cpu_pod("pod1", "1"),
        "Queue",
    ),
]


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"), cases("Test_isSchedulableAfterPodChange", POD_CHANGES, 4)
)
def test_is_schedulable_after_pod_change(pod: Pod, old: object, new: object, want: str) -> None:
    assert hint_of(after_pod_event, pod, old, new) == want


def cap(capacity: dict[str, str]) -> Node:
    """``st.MakeNode().Capacity(capacity)`` (32 pods unless it says)."""
    return make_node("", capacity)


EXT_POD = req_pod({"memory": "2", EXT_A: "1"})
NODE_CHANGES: list[Any] = [
    ("backoff-wrong-new-object", make_pod(), None, "not-a-node", "error"),
    ("backoff-wrong-old-object", make_pod(), "not-a-node", Node(""), "error"),
    (
        "skip-queue-on-node-add-without-sufficient-resources",
        req_pod({"memory": "2"}),
        None,
        cap({"memory": "1"}),
        "QueueSkip",
    ),
    (
        "skip-queue-on-node-add-without-required-resource-type",
        req_pod({EXT_A: "1"}),
        None,
        cap({EXT_B: "1"}),
        "QueueSkip",
    ),
    ("queue-on-node-add-with-sufficient-resources", EXT_POD, None, cap({"memory": "4", EXT_A: "2"}), "Queue"),
    (
        "skip-queue-on-node-unrelated-changes",
        EXT_POD,
        cap({"memory": "2", EXT_A: "2"}),
        cap({"memory": "2", EXT_A: "1", EXT_B: "2"}),
        "QueueSkip",
    ),
    (
        "queue-on-pod-requested-resources-increase",
        EXT_POD,
        cap({"memory": "2", EXT_A: "1"}),
        cap({"memory": "2", EXT_A: "2"}),
        "Queue",
    ),
    (
        "skip-queue-on-node-changes-from-suitable-to-unsuitable",
        EXT_POD,
        cap({"memory": "4", EXT_A: "2"}),
        cap({"memory": "1", EXT_A: "2"}),
        "QueueSkip",
    ),
    (
        "queue-on-node-changes-from-unsuitable-to-suitable",
        EXT_POD,
        cap({"memory": "1", EXT_A: "2"}),
        cap({"memory": "4", EXT_A: "2"}),
        "Queue",
    ),
]


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"), cases("Test_isSchedulableAfterNodeChange", NODE_CHANGES, 4)
)
def test_is_schedulable_after_node_change(pod: Pod, old: object, new: object, want: str) -> None:
    assert hint_of(after_node_change, pod, old, new) == want


def resources(cpu: str, memory: str, ephemeral: str, ext_a: str | None = None, pods: str = "32") -> Node:
    """A node's capacity as the table lists it: cpu, memory, ephemeral storage, example.com/aaa."""
    capacity = {"pods": pods, "cpu": cpu, "memory": memory, "ephemeral-storage": ephemeral}
    return cap(capacity if ext_a is None else {**capacity, EXT_A: ext_a})


FULL_REQ = req_pod({"cpu": "2m", "memory": "2", "ephemeral-storage": "2", EXT_A: "2"})
CPU_MEM = req_pod({"cpu": "2m", "memory": "2"})
INCREASED: list[Any] = [
    (
        "no-requested-resources",
        make_pod(),
        resources("1", "1", "1", "1", "1"),
        resources("2", "2", "2", "2", "1"),
        False,
    ),
    (
        "no-requested-resources-pods-increased",
        make_pod(),
        resources("1", "1", "1", "1", "1"),
        resources("1", "1", "1", "1", "2"),
        True,
    ),
    ("requested-resources-dra-in-node", DRA_BACKED),
    ("requested-resources-dra-not-in-node", DRA_BACKED),
    ("scalar-resources-not-in-node", FULL_REQ, resources("1", "2", "3"), resources("1", "2", "1"), False),
    (
        "requested-resources-decreased",
        FULL_REQ,
        resources("1", "2", "3", "4"),
        resources("1", "2", "1", "1"),
        False,
    ),
    (
        "requested-resources-increased",
        FULL_REQ,
        resources("1", "2", "3", "4"),
        resources("3", "4", "3", "4"),
        True,
    ),
    (
        "non-requested-resources-decreased",
        CPU_MEM,
        resources("1", "2", "3", "4"),
        resources("1", "2", "1", "1"),
        False,
    ),
    (
        "non-requested-resources-increased",
        CPU_MEM,
        resources("1", "2", "3", "4"),
        resources("1", "2", "5", "6"),
        False,
    ),
]


@pytest.mark.parametrize(
    ("pod", "before", "after", "want"), cases("TestHaveAnyRequestedResourcesIncreased", INCREASED, 4)
)
def test_have_any_requested_resources_increased(pod: Pod, before: Node, after: Node, want: bool) -> None:
    assert requested_increased(pod, before, after) is want


@pytest.mark.parametrize(
    "name", skipped_cases("TestPreFilterDisabled", ["TestPreFilterDisabled"], PREFILTER_DISABLED)
)
def test_pre_filter_disabled(name: None) -> None:
    """Never runs: the case is skipped with its reason."""
