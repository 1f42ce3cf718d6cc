"""Why cluster-autoscaler keeps a node, in its own reasons (``simulator.UnremovableReason``, 1.34.5
``simulator/cluster.go``): a candidate that is not unneeded (``Planner.categorizeNodes``:
``FilterOutUnremovable``'s ineligible nodes and ``SimulateNodeRemoval``'s failures) and an unneeded node
that may not go yet (``Nodes.RemovableAt``). ``metrics.UpdateUnremovableNodesCount`` labels each count with
the reason's number (``fmt.Sprintf("%v", reason)`` of an ``int`` type with no ``String`` method)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from conftest import gpu_node, gpu_pod, scale_down_with
from gpufleet.autoscaling.cluster_autoscaler import Candidate, ScaleDownReply
from gpufleet.autoscaling.scale_down import UnremovableReason
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef

JOB = OwnerRef("Job", "train")

#: 1.34.5's ``UnremovableReason`` constants in their order (``NoReason = iota``)
UPSTREAM = (
    "NoReason",
    "ScaleDownDisabledAnnotation",
    "ScaleDownUnreadyDisabled",
    "NotAutoscaled",
    "NotUnneededLongEnough",
    "NotUnreadyLongEnough",
    "NodeGroupMinSizeReached",
    "NodeGroupMaxDeletionCountReached",
    "AtomicScaleDownFailed",
    "MinimalResourceLimitExceeded",
    "CurrentlyBeingDeleted",
    "NotUnderutilized",
    "NotUnneededOtherReason",
    "RecentlyUnremovable",
    "NoPlaceToMovePods",
    "BlockedByPod",
    "UnexpectedError",
    "NoNodeInfo",
)


def down(state: ClusterState, candidates: list[Candidate], **kw: Any) -> ScaleDownReply:
    return scale_down_with(state, candidates, **kw)


def test_each_reason_has_upstreams_number() -> None:
    """The number is the reason's place among upstream's constants: what the metric's label says."""
    for reason in UnremovableReason:
        upstream = "".join(part.capitalize() for part in reason.name.split("_"))
        assert UPSTREAM.index(upstream) == reason.value, reason


def test_a_candidate_that_is_not_unneeded_has_upstreams_reason() -> None:
    """``unremovableReasonAndNodeUtilization`` (annotation, utilisation not computable, unready with
    ``--scale-down-unready-enabled=false``, above the threshold) and ``SimulateNodeRemoval`` (a pod that
    blocks the drain, a pod that fits on no other node): every other node is full, so d's 4 GPUs have
    nowhere to go."""
    nodes = [
        gpu_node("a-busy", 8),
        replace(gpu_node("b-annotated", 8), scale_down_disabled=True),
        gpu_node("c-bare-pod", 4),
        gpu_node("d-no-room", 8),
        gpu_node("e-no-allocatable", 0, cpu=0, mem_gi=0),
        gpu_node("f-unready", 8),
    ]
    state = ClusterState(nodes)
    for node, pod in (
        ("a-busy", gpu_pod("a0", 8, owner=JOB)),
        ("b-annotated", gpu_pod("b0", 8, owner=JOB)),
        ("c-bare-pod", gpu_pod("c0", 1)),  # no controller
        ("d-no-room", gpu_pod("d0", 4, owner=JOB)),
        ("f-unready", gpu_pod("f0", 8, owner=JOB)),
    ):
        state.assign(pod, node, 0.0)
    candidates = [Candidate(n.name, "h100", 6, 0, ready=n.name != "f-unready") for n in nodes]
    reply = down(state, candidates, unready_enabled=False)
    assert reply.unneeded_since == {}
    assert [(name, why.reason) for name, why in reply.not_unneeded] == [
        ("a-busy", UnremovableReason.NOT_UNDERUTILIZED),
        ("b-annotated", UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION),
        ("c-bare-pod", UnremovableReason.BLOCKED_BY_POD),
        ("d-no-room", UnremovableReason.NO_PLACE_TO_MOVE_PODS),
        ("e-no-allocatable", UnremovableReason.UNEXPECTED_ERROR),
        ("f-unready", UnremovableReason.SCALE_DOWN_UNREADY_DISABLED),
    ]
    assert reply.not_unneeded[2][1].message == "pod default/c0 is not replicated (it has no controller)"


def test_unneeded_nodes_that_may_not_go_yet_have_removable_ats_reasons_and_all_count_as_unneeded() -> None:
    """Three empty nodes of a group of three with ``min`` 1, unneeded from 0 s: at 300 s each is
    ``NotUnneededLongEnough``; at 610 s two go and the third is ``NodeGroupMinSizeReached``
    (``verifyMinSize``). ``UpdateUnneededNodesCount`` counts the three at both scans (before
    ``NodesToDelete``)."""
    state = ClusterState([gpu_node(f"h100-{k}", 8) for k in range(3)])
    candidates = [Candidate(f"h100-{k}", "h100", 3, 1) for k in range(3)]
    since = {c.node: 0.0 for c in candidates}
    early = down(state, candidates, now=300.0, unneeded_since=since)
    assert [(n, why.reason) for n, why in early.unremovable] == [
        (c.node, UnremovableReason.NOT_UNNEEDED_LONG_ENOUGH) for c in candidates
    ]
    ripe = down(state, candidates, now=610.0, unneeded_since=since)
    assert [c.node for c in ripe.remove] == ["h100-0", "h100-1"]
    assert [(n, why.reason) for n, why in ripe.unremovable] == [
        ("h100-2", UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED)
    ]
    assert early.unneeded_count == ripe.unneeded_count == 3 and early.not_unneeded == ripe.not_unneeded == ()
