"""How long a node must have been unneeded before cluster-autoscaler removes it, as 1.34.5 decides it
(``core/scaledown/unneeded/nodes.go``, ``Nodes.unremovableReason``): ``NotUnneededLongEnough`` while
``!v.since.Add(unneededTime).Before(ts)``, ``NotUnreadyLongEnough`` alike with the unready time for a
node that is not Ready. A node goes only once unneeded for *more* than that time: with 10 s scans, at
the scan after the one exactly that long after the scan that found it unneeded. Scale-down's cooldown
after a scale-up is the other way round (``static_autoscaler.go`` ``isScaleDownInCooldown``:
``lastScaleUpTime.Add(ScaleDownDelayAfterAdd).After(currentTime)``): it is over at exactly
``scaleDownDelayAfterAdd`` after the scale-up."""

from __future__ import annotations

from typing import Any

from conftest import gpu_node, scale_down_with
from gpufleet.autoscaling.cluster_autoscaler import Candidate, ScaleDownReply
from gpufleet.autoscaling.scale_down import Unremovable, UnremovableReason
from gpufleet.cluster.state import ClusterState

IDLE = Candidate("h100-0", "h100", 2, 0)


def down(now: float, candidates: list[Candidate], since: float = 100.0, **kw: Any) -> ScaleDownReply:
    """A scan at ``now`` of two empty 8-GPU nodes; the candidates were found unneeded at ``since``."""
    return scale_down_with(
        ClusterState([gpu_node(f"h100-{k}", 8) for k in range(2)]),
        candidates,
        **({"now": now, "unneeded_since": {c.node: since for c in candidates}} | kw),
    )


def test_a_node_unneeded_for_exactly_the_unneeded_time_stays_and_goes_at_the_next_scan() -> None:
    """``unremovableReason``: unneeded since 100 s, at 700 s the node has been unneeded for 600 s, not
    more than ``--scale-down-unneeded-time`` (10m): ``NotUnneededLongEnough``. The scan at 710 s removes
    it."""
    exactly = down(700.0, [IDLE])
    message = "unneeded for 600s, not more than scaleDownUnneededTime (600s)"
    assert exactly.remove == ()
    assert exactly.unremovable == (
        ("h100-0", Unremovable(UnremovableReason.NOT_UNNEEDED_LONG_ENOUGH, message)),
    )
    assert [c.node for c in down(710.0, [IDLE]).remove] == ["h100-0"]


def test_an_unready_node_unneeded_for_exactly_the_unready_time_stays_and_goes_at_the_next_scan() -> None:
    """The same for a node that is not Ready, with ``--scale-down-unready-time`` (20m):
    ``NotUnreadyLongEnough`` at 1,300 s, removed at 1,310 s."""
    unready = Candidate("h100-1", "h100", 2, 0, ready=False)
    exactly = down(1300.0, [unready])
    message = "unready and unneeded for 1200s, not more than scaleDownUnreadyTime (1200s)"
    assert exactly.remove == ()
    assert exactly.unremovable == (
        ("h100-1", Unremovable(UnremovableReason.NOT_UNREADY_LONG_ENOUGH, message)),
    )
    assert [c.node for c in down(1310.0, [unready]).remove] == ["h100-1"]


def test_scale_down_cooldown_is_over_at_exactly_the_delay_after_a_scale_up() -> None:
    """``isScaleDownInCooldown``: in cooldown while ``lastScaleUpTime + ScaleDownDelayAfterAdd`` is after
    now. A node unneeded long since stays at 590 s after a scale-up at 0 s (10m delay), and goes at 600 s."""
    within = down(590.0, [IDLE], since=-3600.0, last_scale_up_s=0.0)
    assert within.cooldown and within.remove == () and within.unremovable == ()
    over = down(600.0, [IDLE], since=-3600.0, last_scale_up_s=0.0)
    assert not over.cooldown and [c.node for c in over.remove] == ["h100-0"]
