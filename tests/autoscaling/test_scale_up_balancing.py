"""cluster-autoscaler's ``--balance-similar-node-groups`` (``core/scaleup/orchestrator/orchestrator.go``'s
``ComputeSimilarNodeGroups`` and ``balanceScaleUps``, ``processors/nodegroupset``): a scale-up is split
between the chosen group and the similar groups that take the same pending pods, smallest first."""

from __future__ import annotations

from conftest import gpu_node, gpu_pod
from conftest import scale_up_reply as up
from gpufleet.autoscaling.node_group_balancing import Balancing
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState

ZONE = "topology.kubernetes.io/zone"


def h100(name: str, size: int, zone: str, **labels: str) -> PoolOption:
    """A group of H100 nodes in ``zone`` (its template's zone label), ``size`` nodes, max 10."""
    template = gpu_node(f"{name}-template", 8, labels={ZONE: zone, **labels})
    return PoolOption(name, template, room=10 - size, size=size, max_size=10)


def test_a_scale_up_is_split_between_similar_groups_smallest_first() -> None:
    """Three 8-GPU pods need three nodes; two zonal groups alike but for their zone label (ignored) share
    them, the smaller group (1 node) first, until both have 3."""
    pods = [gpu_pod(f"p{k}", 8) for k in range(3)]
    groups = [h100("h100-a", 2, "a"), h100("h100-b", 1, "b")]
    reply = up(ClusterState([]), pods, groups, balancing=Balancing())
    assert reply.scale_up is not None
    assert dict(reply.scale_up.split) == {"h100-b": 2, "h100-a": 1}
    assert reply.scale_up.nodes == 3


def test_groups_whose_labels_differ_are_not_balanced() -> None:
    """A label that is not ignored (``compareLabels``) makes the groups dissimilar: the chosen one grows
    alone."""
    pods = [gpu_pod(f"p{k}", 8) for k in range(2)]
    groups = [h100("h100-a", 1, "a", tier="gold"), h100("h100-b", 1, "b", tier="silver")]
    reply = up(ClusterState([]), pods, groups, balancing=Balancing())
    assert reply.scale_up is not None and len(reply.scale_up.split) == 1


def test_the_similar_groups_room_lets_the_estimate_past_the_chosen_groups_max() -> None:
    """``SngCapacityThreshold``: a group one node below its max estimates for the room of its similar groups
    too, so both grow by one for two pods."""
    pods = [gpu_pod(f"p{k}", 8) for k in range(2)]
    groups = [h100("h100-a", 9, "a"), h100("h100-b", 9, "b")]
    reply = up(ClusterState([]), pods, groups, balancing=Balancing())
    assert reply.scale_up is not None
    assert dict(reply.scale_up.split) == {"h100-a": 1, "h100-b": 1}
