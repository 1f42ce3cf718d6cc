"""kube-scheduler's FailedScheduling message, verbatim (framework.FitError.Error, 1.34)."""

from __future__ import annotations

from collections import Counter

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node, Taint, Toleration
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.messages import fit_error
from gpufleet.scheduling.scheduler import Scheduler

GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")
TOLERATE_GPU = (Toleration("nvidia.com/gpu", "Exists", effect="NoSchedule"),)


def attempt(nodes: list[Node], pod: Pod, placed: dict[str, list[Pod]] | None = None) -> str:
    state = ClusterState(nodes)
    for node, pods in (placed or {}).items():
        for p in pods:
            state.assign(p, node, 0.0)
    scheduler = Scheduler(SchedulerConfig("test"), state, GangView(state))
    node, message = scheduler.try_schedule(pod)
    assert node is None
    return message


def test_histogram_entries_sort_as_strings_so_10_comes_before_2() -> None:
    """FitError.Error sorts "<count> <reason>" strings: "10 ..." < "2 ..."."""
    msg = fit_error(
        12,
        Counter({"Insufficient nvidia.com/gpu": 2, "node(s) didn't match Pod's node affinity/selector": 10}),
    )
    assert msg == (
        "0/12 nodes are available: 10 node(s) didn't match Pod's node affinity/selector, "
        "2 Insufficient nvidia.com/gpu."
    )


def test_design_example_untolerated_taint_and_insufficient_gpus_with_preemption_part() -> None:
    """DESIGN.md principle 7, with DynamicResources' and DefaultPreemption's PostFilter messages
    appended in that order (1.34.10: ``applyDynamicResources`` puts DynamicResources first)."""
    nodes = [gpu_node("gpu-a", 8, taints=(GPU_TAINT,)), gpu_node("gpu-b", 8), gpu_node("gpu-c", 8)]
    pod = gpu_pod("trainer", 8, tolerations=())
    placed = {"gpu-b": [gpu_pod("b", 4)], "gpu-c": [gpu_pod("c", 2)]}
    assert attempt(nodes, pod, placed) == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
        "2 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/3 nodes are available: "
        "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    )


def test_a_request_beyond_a_nodes_allocatable_is_not_helped_by_preemption() -> None:
    """noderesources/fit.go ``InsufficientResource.Unresolvable``: a request above the node's whole
    allocatable is UnschedulableAndUnresolvable, so DefaultPreemption skips the node (1.34)."""
    nodes = [gpu_node("small", 4), gpu_node("big", 8)]
    placed = {"small": [gpu_pod("s", 2)], "big": [gpu_pod("b", 2)]}
    assert attempt(nodes, gpu_pod("trainer", 8), placed).endswith(
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )


def test_each_insufficient_resource_is_its_own_reason() -> None:
    """noderesources/fit.go fitsRequest reports every short resource of a node."""
    msg = attempt([gpu_node("n", 8, cpu=16)], gpu_pod("p", 8, cpu=32), placed={"n": [gpu_pod("x", 1, cpu=1)]})
    assert msg.startswith(
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient nvidia.com/gpu. "
        "no new claims to deallocate, preemption:"
    )


def test_node_selector_mismatch_and_unschedulable_nodes_are_unresolvable() -> None:
    nodes = [
        gpu_node("a", labels={"zone": "x"}),
        Node("b", unschedulable=True, capacity={"cpu": 1000, "pods": 110}),
    ]
    pod = Pod("p", node_selector={"zone": "y"})
    assert attempt(nodes, pod) == (
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) were unschedulable. no new claims to deallocate, preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )


def test_lower_priority_pods_that_would_not_free_enough_are_listed_by_reason() -> None:
    """default_preemption.go: removing every lower-priority pod still leaves too few GPUs."""
    node = gpu_node("n", 8)
    low = gpu_pod("low", 2)
    other = gpu_pod("other", 4, priority=100)
    pod = gpu_pod("p", 8, cpu=8, mem_gi=64, priority=100)
    assert attempt([node], pod, placed={"n": [low, other]}) == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    )


def test_preemption_policy_never_is_not_eligible() -> None:
    msg = attempt([gpu_node("n", 4)], gpu_pod("p", 8, preemption_policy="Never"))
    assert msg.endswith("preemption: not eligible due to preemptionPolicy=Never.")


def test_a_cluster_without_nodes_says_no_nodes_available() -> None:
    """schedule_one.go: ``ErrNoNodesAvailable`` before any plugin runs, so no FitError and no preemption."""
    state = ClusterState([])
    scheduler = Scheduler(SchedulerConfig("test"), state, GangView(state))
    assert scheduler.try_schedule(gpu_pod("lonely", 1)) == (None, "no nodes available to schedule pods")


def test_the_static_reasons_are_counted_again_after_nodes_join_and_leave() -> None:
    """A failed cycle's histogram starts from the static filters' reasons, counted once per set of
    nodes (``ShapeCache.static_histogram``): nodes that join or leave are in the next message."""
    state = ClusterState([gpu_node("a", 8, taints=(GPU_TAINT,)), gpu_node("b", 2)])
    scheduler = Scheduler(SchedulerConfig("test"), state, GangView(state))
    pod = gpu_pod("trainer", 4, tolerations=())
    first = scheduler.try_schedule(pod)[1]
    state.add_node(gpu_node("c", 8, taints=(GPU_TAINT,)))
    second = scheduler.try_schedule(pod)[1]
    state.remove_node("a")
    state.remove_node("b")
    third = scheduler.try_schedule(pod)[1]
    assert first.startswith(
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated"
    )
    assert second.startswith(
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated"
    )
    assert third.startswith("0/1 nodes are available: 1 node(s) had untolerated taint(s).")


def test_a_second_pod_of_one_shape_gets_the_diagnosis_of_the_cluster_as_it_is_then() -> None:
    """Each failed attempt's FitError counts the nodes as they are at that attempt
    (``findNodesThatFitPod``'s diagnosis): pods of one shape failing on an unchanged cluster get one
    message, and a pod placed in between changes the next one's."""
    nodes = [gpu_node("gpu-a", 8, cpu=96), gpu_node("gpu-b", 8, cpu=96)]
    state = ClusterState(nodes)
    state.assign(gpu_pod("a", 4), "gpu-a", 0.0)
    state.assign(gpu_pod("b", 2), "gpu-b", 0.0)
    scheduler = Scheduler(SchedulerConfig("test"), state, GangView(state))
    first, second = (scheduler.try_schedule(gpu_pod(name, 8, cpu=8))[1] for name in ("p1", "p2"))
    assert first == second
    assert first.startswith("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")
    state.assign(gpu_pod("cpu-hog", 0, cpu=90), "gpu-b", 0.0)
    third = scheduler.try_schedule(gpu_pod("p3", 8, cpu=8))[1]
    assert third.startswith("0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient nvidia.com/gpu.")
