"""cluster-autoscaler 1.34's own tests of its soft DeletionCandidate taint (tag
``cluster-autoscaler-1.34.5``): ``cluster-autoscaler/core/scaledown/actuation/softtaint_test.go``
(``TestSoftTaintUpdate``, ``TestSoftTaintTimeLimit``: ``UpdateSoftDeletionTaints`` marks the unneeded
nodes and cleans the needed ones within ``MaxBulkSoftTaintCount`` API calls and ``MaxBulkSoftTaintTime``)
and the soft-taint cases of ``cluster-autoscaler/utils/taints/taints_test.go`` (``TestSoftMarkNodes``,
``TestSoftCheckNodes``, ``TestSoftQueryNodes``, ``TestSoftCleanNodes``), step by step. gpufleet's
``autoscaling.soft_taints`` answers which nodes a call cleans and marks; the test applies that to its nodes
as upstream's fake client would. ``TestSoftTaintUpdate`` returns at once upstream (``if t != nil
{ return }``): its steps are ported all the same, as what the function does."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from ca_builders import build_test_node

from gpufleet.autoscaling.soft_taints import (
    DELETION_CANDIDATE_TAINT_KEY,
    deletion_candidate_taint,
    has_deletion_candidate_taint,
    update_soft_deletion_taints,
    with_deletion_candidate,
    without_deletion_candidate,
)
from gpufleet.model.node import NO_SCHEDULE, PREFER_NO_SCHEDULE, Node, Taint

NOW = 1_700_000_000.0  # time.Now(), as Unix seconds
TIME_BUDGET = (
    "--max-bulk-soft-taint-time is a wall-clock budget for the API calls (tested with a fake clock the "
    "node updates move on); gpufleet's scans take no time on their clock, so only the count limits them"
)


def update(nodes: list[Node], unneeded: Sequence[Node], needed: Sequence[Node], budget: int) -> list[Node]:
    """``UpdateSoftDeletionTaints(&actx, unneeded, needed)`` with ``MaxBulkSoftTaintCount`` ``budget``, its
    writes applied to ``nodes`` (the fake client's), which it returns (``getAllNodes``)."""
    got = update_soft_deletion_taints(unneeded, needed, frozenset(), budget)
    for node in nodes:
        if node.name in got.clean:
            node.taints = without_deletion_candidate(node)
        elif node.name in got.mark:
            node.taints = with_deletion_candidate(node, NOW)
    return nodes


def count_deletion_candidate_taints(nodes: list[Node]) -> int:
    return sum(1 for node in nodes if has_deletion_candidate_taint(node))


def test_soft_taint_update() -> None:
    """``TestSoftTaintUpdate`` (``MaxBulkSoftTaintCount`` 1): no unneeded node, none marked; one unneeded,
    it alone marked; none unneeded, its taint removed; both unneeded, one marked a call; both needed, one
    cleaned a call."""
    n1000, n2000 = build_test_node("n1000", 1000, 1000), build_test_node("n2000", 2000, 1000)
    nodes = [n1000, n2000]
    # Test no superfluous nodes
    update(nodes, [], list(nodes), 1)
    assert not has_deletion_candidate_taint(n1000) and not has_deletion_candidate_taint(n2000)
    # Test one unneeded node
    update(nodes, [n1000], [n2000], 1)
    assert has_deletion_candidate_taint(n1000) and not has_deletion_candidate_taint(n2000)
    # Test remove soft taint
    update(nodes, [], list(nodes), 1)
    assert not has_deletion_candidate_taint(n1000) and not has_deletion_candidate_taint(n2000)
    # Test bulk update taint limit
    assert count_deletion_candidate_taints(update(nodes, list(nodes), [], 1)) == 1
    assert count_deletion_candidate_taints(update(nodes, list(nodes), [], 1)) == 2
    # Test bulk update untaint limit
    assert count_deletion_candidate_taints(update(nodes, [], list(nodes), 1)) == 1
    assert count_deletion_candidate_taints(update(nodes, [], list(nodes), 1)) == 0


@pytest.mark.parametrize(
    "step",
    [
        pytest.param("bulk taint", id="TestSoftTaintTimeLimit/Test bulk taint"),
        pytest.param("bulk untaint", id="TestSoftTaintTimeLimit/Test bulk untaint"),
        pytest.param(
            None,
            id="TestSoftTaintTimeLimit/Test duration limit of bulk taint",
            marks=pytest.mark.skip(reason=TIME_BUDGET),
        ),
        pytest.param(
            None,
            id="TestSoftTaintTimeLimit/Test duration limit of bulk untaint",
            marks=pytest.mark.skip(reason=TIME_BUDGET),
        ),
    ],
)
def test_soft_taint_time_limit(step: str) -> None:
    """``TestSoftTaintTimeLimit`` (``MaxBulkSoftTaintCount`` 10): each update takes a millisecond, well within
    the second allowed: both nodes marked in one call, then both cleaned in one."""
    n1, n2 = build_test_node("n1", 1000, 1000), build_test_node("n2", 1000, 1000)
    nodes = [n1, n2]
    update(nodes, list(nodes), [], 10)
    if step == "bulk taint":
        assert count_deletion_candidate_taints(nodes) == 2
        assert has_deletion_candidate_taint(n1) and has_deletion_candidate_taint(n2)
        return
    update(nodes, [], list(nodes), 10)
    assert count_deletion_candidate_taints(nodes) == 0
    assert not has_deletion_candidate_taint(n1) and not has_deletion_candidate_taint(n2)


def test_soft_mark_nodes() -> None:
    """``TestSoftMarkNodes``: ``MarkDeletionCandidate`` adds the soft taint, not the ToBeDeleted one."""
    node = build_test_node("node", 1000, 1000)
    node.taints = with_deletion_candidate(node, NOW)
    assert has_deletion_candidate_taint(node)
    assert not any(t.key == "ToBeDeletedByClusterAutoscaler" for t in node.taints)
    assert node.taints == (Taint(DELETION_CANDIDATE_TAINT_KEY, "1700000000", PREFER_NO_SCHEDULE),)


def test_soft_check_nodes() -> None:
    """``TestSoftCheckNodes``: a node with the soft taint and another PreferNoSchedule one has the soft taint,
    not the ToBeDeleted one."""
    node = build_test_node("node", 1000, 1000)
    node.taints = (deletion_candidate_taint(NOW), Taint("other-taint", "1700000000", PREFER_NO_SCHEDULE))
    assert has_deletion_candidate_taint(node)
    assert not any(t.key == "ToBeDeletedByClusterAutoscaler" for t in node.taints)


def test_soft_query_nodes() -> None:
    """``TestSoftQueryNodes``: the soft taint's value is the time it was put on (``GetDeletionCandidateTime``,
    within 10 s of now), in Unix seconds."""
    node = build_test_node("node", 1000, 1000)
    node.taints = with_deletion_candidate(node, NOW + 0.75)
    (taint,) = node.taints
    assert 0 <= NOW + 0.75 - int(taint.value) < 10


def test_soft_clean_nodes() -> None:
    """``TestSoftCleanNodes``: ``CleanDeletionCandidate`` takes the soft taint off and keeps the others."""
    node = build_test_node("node", 1000, 1000)
    other = Taint("other-taint", "1700000000", PREFER_NO_SCHEDULE)
    node.taints = (deletion_candidate_taint(NOW), other)
    cleaned = without_deletion_candidate(node)
    assert cleaned != node.taints
    assert cleaned == (other,)


def test_soft_taint_update_skips_nodes_being_deleted() -> None:
    """``UpdateSoftDeletionTaints``' ``HasToBeDeletedTaint`` checks (no upstream case): a node being deleted
    is neither cleaned nor marked, and uses no budget."""
    going, kept = build_test_node("going", 1000, 1000), build_test_node("kept", 1000, 1000)
    going.taints = (Taint("ToBeDeletedByClusterAutoscaler", "1", NO_SCHEDULE),)
    got = update_soft_deletion_taints([going, kept], [], frozenset({"going"}), 1)
    assert got.mark == ("kept",) and got.clean == () and got.skipped == 0
