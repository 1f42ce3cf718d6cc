"""A scale-up answer that stands while the cluster only loses room (``ScaleUpReply.room_only``): no group
grew, no pending pod went to the cluster's nodes and no pod-aware filter judged one. A pod that fitted no
node fits none with less room, and the upcoming nodes and the templates it went to, or was turned away
from, are as they were; so cluster-autoscaler's loop does not ask again after pods are only placed
(``tests/control/test_loops_through_a_port.py``)."""

from __future__ import annotations

from conftest import gpu_node, gpu_pod, scale_up_reply
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod_affinity import TopologySpreadConstraint

UPCOMING = PoolOption("h100", gpu_node("h100-template", 8), room=0, upcoming=1, max_size=1, size=1)
ZONE = "topology.kubernetes.io/zone"


def test_a_pod_waiting_for_an_upcoming_node_is_an_answer_that_stands_while_room_is_only_taken() -> None:
    state = ClusterState([gpu_node("a", 8)])
    state.assign(gpu_pod("a0", 8), "a", 0.0)
    reply = scale_up_reply(state, [gpu_pod("train", 8)], [UPCOMING])
    assert reply.scale_up is None and reply.placed == () and reply.room_only


def test_a_pod_put_on_a_node_of_the_cluster_is_an_answer_that_room_taken_there_may_change() -> None:
    state = ClusterState([gpu_node("a", 8)])
    reply = scale_up_reply(state, [gpu_pod("train", 8)], [UPCOMING])
    assert [(pod.name, node) for pod, node in reply.placed] == [("train", "a")] and not reply.room_only


def test_a_pod_a_pod_aware_filter_judges_is_an_answer_pods_placed_elsewhere_may_change() -> None:
    """Its zone spread counts the pods on every node of the zone, upcoming nodes' zones included."""
    state = ClusterState([gpu_node("a", 8, labels={ZONE: "z1"})])
    state.assign(gpu_pod("a0", 8), "a", 0.0)
    spread = (TopologySpreadConstraint(1, ZONE, "DoNotSchedule", None),)
    reply = scale_up_reply(state, [gpu_pod("train", 8, spread_constraints=spread)], [UPCOMING])
    assert reply.scale_up is None and reply.placed == () and not reply.room_only
