"""cluster-autoscaler's scale-down of unready nodes (``autoscaling.cluster_autoscaler.scale_down``):
``--scale-down-unready-enabled`` (default true) and ``--scale-down-unready-time`` (default 20m), as
cluster-autoscaler 1.34 decides them (``core/scaledown/eligibility/eligibility.go``,
``core/scaledown/unneeded/nodes.go``)."""

from __future__ import annotations

from typing import Any

from conftest import gpu_node, gpu_pod, scale_down_with
from gpufleet.autoscaling.cluster_autoscaler import Candidate, ScaleDownReply
from gpufleet.autoscaling.removal_memo import RemovalMemo
from gpufleet.autoscaling.scale_down import Unremovable, UnremovableReason
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef

READY, UNREADY = Candidate("h100-0", "h100", 3, 0), Candidate("h100-1", "h100", 3, 0, ready=False)


def down(state: ClusterState, **kw: Any) -> ScaleDownReply:
    return scale_down_with(state, kw.pop("candidates", [READY, UNREADY]), **kw)


def cluster() -> ClusterState:
    """Three 8-GPU nodes: h100-0 and h100-1 empty, h100-2 busy (not a candidate)."""
    state = ClusterState([gpu_node(f"h100-{k}", 8) for k in range(3)])
    state.assign(gpu_pod("train-0", 8, owner=OwnerRef("Job", "train")), "h100-2", 0.0)
    return state


def test_an_unready_node_goes_after_the_unready_time_a_ready_one_after_the_unneeded_time() -> None:
    """``Nodes.RemovableAt``/``unremovableReason``: a ready node must have been unneeded for more than
    ``ScaleDownUnneededTime`` (10m), an unready one for more than ``ScaleDownUnreadyTime`` (20m), else it
    is ``NotUnneededLongEnough`` / ``NotUnreadyLongEnough`` (``!since.Add(time).Before(now)``). Both empty
    nodes are unneeded from 0 s: at the scan after 10 min (610 s) only the ready one goes, at the scan
    after 20 min (1210 s) the unready one."""
    state = cluster()
    first = down(state)
    assert first.unneeded_since == {"h100-0": 0.0, "h100-1": 0.0} and first.remove == ()
    ten = down(state, now=610.0, unneeded_since=first.unneeded_since)
    assert [c.node for c in ten.remove] == ["h100-0"]
    message = "unready and unneeded for 610s, not more than scaleDownUnreadyTime (1200s)"
    assert ten.unremovable == (("h100-1", Unremovable(UnremovableReason.NOT_UNREADY_LONG_ENOUGH, message)),)
    twenty = down(state, now=1200.0, unneeded_since={"h100-1": 0.0}, candidates=[UNREADY])
    assert twenty.remove == ()
    after = down(state, now=1210.0, unneeded_since={"h100-1": 0.0}, candidates=[UNREADY])
    assert [c.node for c in after.remove] == ["h100-1"] and after.unremovable == ()


def test_the_unready_time_is_the_flag_s_and_a_ready_node_waiting_says_which_time_it_waits_for() -> None:
    """``--scale-down-unready-time`` is read per scan (``GetScaleDownUnreadyTime``): at the scan after 5
    minutes the unready node goes, the ready one is ``NotUnneededLongEnough``."""
    reply = down(cluster(), now=310.0, unneeded_since={"h100-0": 0.0, "h100-1": 0.0}, unready_time_s=300.0)
    assert [c.node for c in reply.remove] == ["h100-1"]
    message = "unneeded for 310s, not more than scaleDownUnneededTime (600s)"
    assert reply.unremovable == (
        ("h100-0", Unremovable(UnremovableReason.NOT_UNNEEDED_LONG_ENOUGH, message)),
    )


def test_with_scale_down_of_unready_nodes_disabled_an_unready_node_is_never_unneeded() -> None:
    """``unremovableReasonAndNodeUtilization``: with ``--scale-down-unready-enabled=false`` an unready node
    is ``ScaleDownUnreadyDisabled``, not a scale-down candidate at all: it leaves the unneeded nodes even
    after the unready time, while the ready node still goes."""
    reply = down(cluster(), now=3600.0, unneeded_since={"h100-0": 0.0, "h100-1": 0.0}, unready_enabled=False)
    assert reply.unneeded_since == {} and [c.node for c in reply.remove] == ["h100-0"]


def test_a_verdict_kept_while_the_node_was_ready_is_not_recalled_while_it_is_unready() -> None:
    """The removal memo keeps verdicts while the node's pods and the nodes they would move to stand; the
    node's readiness is not among them, so with ``--scale-down-unready-enabled=false`` a node found
    unneeded while Ready is not while unready, and is again once Ready (nothing else changed)."""
    state, memo = cluster(), RemovalMemo()

    def unneeded(ready: bool, now: float) -> dict[str, float]:
        candidate = Candidate("h100-1", "h100", 3, 0, ready=ready)
        reply = down(state, now=now, candidates=[candidate], unready_enabled=False, memo=memo)
        return reply.unneeded_since

    assert unneeded(True, 0.0) == {"h100-1": 0.0}
    assert unneeded(False, 10.0) == {}
    assert unneeded(True, 20.0) == {"h100-1": 20.0}
