"""``filterOutSchedulable`` tries the pending pods highest priority first, as cluster-autoscaler 1.34.5 does
(``core/podlistprocessor/filter_out_schedulable.go``, ``filterOutSchedulableByPacking``: ``sort.Slice`` by
``corev1helpers.PodPriority``, descending, before ``TrySchedulePods``): where the room on the cluster's nodes
or an upcoming node holds only some of them, the most important take it and the others are what the node
groups grow for."""

from __future__ import annotations

from conftest import gpu_node, gpu_pod
from conftest import scale_up_reply as up
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState

POOL = PoolOption("h100", gpu_node("h100-template", 8), room=5)


def test_the_higher_priority_pod_takes_the_room_left_on_a_node_and_the_other_triggers_the_scale_up() -> None:
    """A node with 4 GPUs, two pending 4-GPU pods, the low-priority one listed first: the high-priority pod
    goes on the node, and the group grows one node for the low-priority one."""
    pods = [gpu_pod("low", 4, priority=0), gpu_pod("high", 4, priority=1000)]
    reply = up(ClusterState([gpu_node("h100-0", 4)]), pods, [POOL])
    assert reply.scale_up is not None
    assert (reply.scale_up.nodes, reply.scale_up.pods) == (1, ("default/low",))


def test_the_higher_priority_pod_takes_the_upcoming_node() -> None:
    """One 8-GPU node of the group is upcoming; of two pending 8-GPU pods the high-priority one, listed
    second, goes there, and the group grows for the other."""
    pods = [gpu_pod("batch", 8, priority=-10), gpu_pod("serve", 8, priority=100)]
    reply = up(ClusterState([]), pods, [PoolOption("h100", POOL.template, room=5, upcoming=1)])
    assert reply.scale_up is not None
    assert (reply.scale_up.nodes, reply.scale_up.pods) == (1, ("default/batch",))


def test_the_pods_no_group_grows_for_are_the_lower_priority_ones() -> None:
    """No group may grow: the pod left with a ``NotTriggerScaleUp`` reason is the low-priority one."""
    pods = [gpu_pod("low", 4, priority=0), gpu_pod("high", 4, priority=1000)]
    full = PoolOption("h100", POOL.template, room=0)
    reply = up(ClusterState([gpu_node("h100-0", 4)]), pods, [full])
    assert reply.scale_up is None
    assert reply.not_triggered == (("default/low", "1 max node group size reached"),)
