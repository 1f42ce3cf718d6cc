"""cluster-autoscaler's loop waiting for "very new" pods, and ``--bypassed-scheduler-names``' unprocessed
pods, through a port kept by hand (cluster-autoscaler 1.34.5 ``core/static_autoscaler.go``: ``RunOnce``,
``allPodsAreNew``, ``listPods``; ``utils/kubernetes/listers.go``: ``SchedulerUnprocessedPods``;
``core/static_autoscaler_test.go``: ``TestStaticAutoscalerRunOnceWithBypassedSchedulers``, ported)."""

from __future__ import annotations

import pytest
from test_loops_through_a_port import Group, HandKeptCluster, ManualClock, autoscaler

from conftest import gpu_node, gpu_pod
from gpufleet.model.node import Node
from gpufleet.model.pod import DEFAULT_SCHEDULER, Pod
from gpufleet.model.simulation import AutoscalerSettings, NodePool


def test_the_loop_scans_again_when_the_wait_for_a_new_gpu_pod_ends() -> None:
    """A GPU pod created at 5 s, found unschedulable: the scan at 10 s waits (no launch, no event); the loop
    scans again at the first scan at or after 35 s (40 s), which launches its node."""
    port, clock = HandKeptCluster(pods=[gpu_pod("train", 8)], groups=[Group("h100", H100)]), ManualClock()
    port.pods["default/train"].created_s = 5.0
    port.pods["default/train"].message = "0/0 nodes are available"
    ca = autoscaler(port, clock)
    ca.arm(10.0)
    clock.run_until(39.0)
    assert (port.asked, ca.events) == ([], [])
    clock.run_until(40.0)
    assert port.asked == [("launch", "h100", ("default/train",))]
    assert [(e.t_s, e.kind) for e in ca.events] == [(40.0, "scale-up")]


H100 = NodePool("h100", gpu_node("h100-template", 8), min=0, max=2)
#: ``TestStaticAutoscalerRunOnceWithBypassedSchedulers``: one group, its node n1 of 1000m cpu
NG1 = NodePool(
    "ng1", Node("ng1-template", capacity={"cpu": 1000, "memory": 1000, "pods": 110}), min=1, max=10
)


@pytest.mark.parametrize(
    ("pod", "launched"),
    [
        (Pod("p2", requests={"cpu": 100, "memory": 100}, scheduler_name="bypassed-scheduler"), False),
        (Pod("p3", requests={"cpu": 600, "memory": 100}), True),
        (Pod("p4", requests={"cpu": 600, "memory": 100}, scheduler_name="bypassed-scheduler"), True),
        (Pod("p5", requests={"cpu": 600, "memory": 100}, scheduler_name="non-bypassed-scheduler"), False),
    ],
    ids=["fits-with-capacity", "default-scheduler", "non-default-scheduler", "non-bypassed-scheduler"],
)
def test_unprocessed_pods_of_bypassed_schedulers_are_unschedulable_pods(pod: Pod, launched: bool) -> None:
    """``TestStaticAutoscalerRunOnceWithBypassedSchedulers`` (``SchedulerUnprocessedPods``): with
    ``--bypassed-scheduler-names`` default-scheduler and bypassed-scheduler, a pod no scheduler has processed
    yet (no condition: here no message) is unschedulable to cluster-autoscaler: p2 fits beside p1 (no
    scale-up), p3 (default scheduler) and p4 do not (a scale-up by one); p5's scheduler is not bypassed, so
    it is not looked at. The loop runs an hour after the pods' creation."""
    n1 = Node("n1", capacity={"cpu": 1000, "memory": 1000, "pods": 110})
    p1 = Pod("p1", requests={"cpu": 600, "memory": 100}, node_name="n1")
    port, clock = HandKeptCluster([n1], [pod], [Group("ng1", NG1, nodes={"n1"})]), ManualClock()
    port.state.assign(p1, "n1", 0.0)
    settings = AutoscalerSettings(bypassed_scheduler_names=(DEFAULT_SCHEDULER, "bypassed-scheduler"))
    ca = autoscaler(port, clock, settings)
    ca.arm(3600.0)
    clock.run_until(3600.0)
    assert port.asked == ([("launch", "ng1", (pod.key,))] if launched else [])
