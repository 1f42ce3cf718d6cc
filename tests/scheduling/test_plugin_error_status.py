"""A plugin's Error status aborts the scheduling attempt (kube-scheduler 1.34.10, ``schedule_one.go``):
``schedulePod`` returns the error, not a FitError (``findNodesThatPassFilters`` stops at it, no PostFilter,
no preemption); ``handleSchedulingFailure`` records ``FailedScheduling`` with the error's text (reason
``SchedulerError``) and clears the pod's nominated node; the pod, rejected by no plugin, goes back through
the backoff queue and is tried again when its backoff ends, with no cluster event
(``AddUnschedulableIfNotPresent``). The first plugin to return one is DynamicResources, for a CEL runtime
error in a selector (``statusError``, ``dynamicresources.go``)."""

from __future__ import annotations

from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.dra.state import DraState
from gpufleet.model.dra import (
    Device,
    DeviceClass,
    DeviceRequest,
    DraObjects,
    PodResourceClaim,
    ResourceClaim,
    ResourceSlice,
)
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.diagnosis import claim_hints
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.scheduler import Scheduler

DRIVER = "gpu.example.com"
#: a class whose selector reads an attribute only n2's device has
HEALTHY = DeviceClass("healthy-gpu", (f'device.attributes["{DRIVER}"].healthy',))
PLAIN = DeviceClass("gpu", (f'device.driver == "{DRIVER}"',))
CEL_ERROR = "class healthy-gpu: selector #0: CEL runtime error: no such key: healthy"
FAILED_SCHEDULING = f'running "DynamicResources" filter plugin: {CEL_ERROR}'


def scheduler(class_name: str = HEALTHY.name) -> Scheduler:
    nodes = [Node(n, allocatable={"pods": 110}) for n in ("n1", "n2")]
    state = ClusterState(nodes)
    slices = [
        ResourceSlice("n1-gpu", DRIVER, "n1", (Device("gpu-0"),), "n1"),
        ResourceSlice("n2-gpu", DRIVER, "n2", (Device("gpu-0", {"healthy": True}),), "n2"),
    ]
    claim = ResourceClaim("default", "train", (DeviceRequest("gpus", class_name),))
    classes = {HEALTHY.name: HEALTHY, PLAIN.name: PLAIN}
    state.dra = DraState(DraObjects(classes, slices, {claim.key: claim}))
    return Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state))


def pod(priority: int = 0) -> Pod:
    return Pod("p", priority=priority, resource_claims=(PodResourceClaim("c", resource_claim_name="train"),))


def test_a_cel_runtime_error_aborts_the_attempt_though_another_node_would_pass() -> None:
    """n1's device lacks the attribute (an error), n2's has it: the pod is not placed on n2."""
    assert scheduler().try_schedule(pod()) == (None, FAILED_SCHEDULING)
    assert scheduler(PLAIN.name).try_schedule(pod()) in (("n1", ""), ("n2", ""))


def test_the_failed_attempt_says_the_error_and_does_not_preempt() -> None:
    s = scheduler()
    s.add(pod(priority=1000), 0.0)
    outcomes = s.run(0.0)
    assert [(o.kind, o.message, o.error) for o in outcomes] == [("unschedulable", FAILED_SCHEDULING, True)]
    assert not s.nominated and not s.rejectors


def test_the_pod_is_retried_after_its_backoff_with_no_cluster_event() -> None:
    """Rejected by no plugin, the pod is not parked with the unschedulable pods: it backs off (1 s, then
    2 s: its consecutive errors count; each expiry at the start of the next 1 s window) and is tried
    again."""
    s = scheduler()
    s.add(pod(), 0.0)
    assert [o.error for o in s.run(0.0)] == [True]
    assert not s.queue.unschedulable and s.queue.backing_off == {"default/p"}
    assert s.next_time() == 2.0
    assert s.run(1.99) == []
    assert [o.message for o in s.run(2.0)] == [FAILED_SCHEDULING]
    assert s.next_time() == 5.0


def test_the_diagnosis_names_the_cel_error_and_the_nodes_it_holds_on() -> None:
    s = scheduler()
    state = s.state
    hints = claim_hints(state, pod(), sorted(state.index.values()))
    assert hints == [
        f"{CEL_ERROR} (a robust selector checks for an attribute first, e.g. with has() or 'in') (on n1)"
    ]
