"""cluster-autoscaler's soft taint on the nodes it finds unneeded (1.34.5,
``core/scaledown/actuation/softtaint.go``, ``utils/taints/taints.go``).

At the end of each scan's scale-down (``StaticAutoscaler.updateSoftDeletionTaints``, whether in cooldown or
not), the nodes of its node groups the planner finds unneeded get the taint
``DeletionCandidateOfClusterAutoscaler=<unix time>:PreferNoSchedule`` (``MarkDeletionCandidate``) and those of
its nodes no longer unneeded lose it (``CleanDeletionCandidate``): the nodes to clean first, then those to
mark, a node being deleted (``ToBeDeletedByClusterAutoscaler``) left alone either way, and at most
``--max-bulk-soft-taint-count`` (10) such API calls a scan (``budgetTracker``; the others wait for the next
scan; 0 turns the taints off). kube-scheduler's TaintToleration scores a node with a ``PreferNoSchedule``
taint a pod does not tolerate lower, so new pods go elsewhere where they can and the unneeded node stays
empty. ``--max-bulk-soft-taint-time`` (3 s of wall-clock time for those calls) has no counterpart: gpufleet's
scans take no time on their clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from gpufleet.model.node import PREFER_NO_SCHEDULE, Node, Taint

#: ``taints.DeletionCandidateTaintKey``
DELETION_CANDIDATE_TAINT_KEY = "DeletionCandidateOfClusterAutoscaler"


def deletion_candidate_taint(unix_s: float) -> Taint:
    """``DeletionCandidateTaint``: the soft taint, its value the Unix time in whole seconds."""
    return Taint(DELETION_CANDIDATE_TAINT_KEY, str(int(unix_s // 1)), PREFER_NO_SCHEDULE)


def has_deletion_candidate_taint(node: Node) -> bool:
    """``HasDeletionCandidateTaint``: a taint with the key, whatever its value and effect."""
    return any(t.key == DELETION_CANDIDATE_TAINT_KEY for t in node.taints)


def with_deletion_candidate(node: Node, unix_s: float) -> tuple[Taint, ...]:
    """The node's taints with the soft taint added (``addTaintsToSpec``: kept as it is if one is there)."""
    if has_deletion_candidate_taint(node):
        return node.taints
    return (*node.taints, deletion_candidate_taint(unix_s))


def without_deletion_candidate(node: Node) -> tuple[Taint, ...]:
    """The node's taints without the soft taint (``CleanTaints``)."""
    return tuple(t for t in node.taints if t.key != DELETION_CANDIDATE_TAINT_KEY)


@dataclass(frozen=True)
class SoftTaintUpdate:
    """What one ``UpdateSoftDeletionTaints`` does: the nodes it cleans, those it marks, and how many it
    skipped for want of budget (``skippedNodes``)."""

    clean: tuple[str, ...] = ()
    mark: tuple[str, ...] = ()
    skipped: int = 0


def update_soft_deletion_taints(
    unneeded: Sequence[Node], needed: Sequence[Node], to_be_deleted: AbstractSet[str], budget: int
) -> SoftTaintUpdate:
    """``UpdateSoftDeletionTaints``: the needed nodes with the soft taint are cleaned, then the unneeded ones
    without it marked, each in the order given, nodes being deleted skipped, within ``budget`` calls in
    all (``processWithinBudget``)."""
    clean: list[str] = []
    mark: list[str] = []
    skipped = 0
    left = budget
    for nodes, tainted, out in ((needed, True, clean), (unneeded, False, mark)):
        for node in nodes:
            if node.name in to_be_deleted or has_deletion_candidate_taint(node) != tainted:
                continue
            if left <= 0:
                skipped += 1
                continue
            left -= 1
            out.append(node.name)
    return SoftTaintUpdate(tuple(clean), tuple(mark), skipped)
