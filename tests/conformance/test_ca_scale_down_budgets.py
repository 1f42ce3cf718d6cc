"""cluster-autoscaler 1.34's table for the scale-down deletion budgets (tag ``cluster-autoscaler-1.34.5``):
``cluster-autoscaler/core/scaledown/budgets/budgets_test.go`` (``TestCropNodesToBudgets``: which of the
empty nodes and of those to drain ``ScaleDownBudgetProcessor.CropNodes`` lets go, with
``MaxScaleDownParallelism`` 10, ``MaxDrainParallelism`` 5 and some deletions in progress), case by case,
as ``cluster_autoscaler.crop_to_budgets``. A row's node lists are upstream's ``generateNodeGroupViewList(ng,
from, to)``: nodes ``<ng>-node-<i>`` for ``i`` in ``[from, to)``, compared as upstream's
``transformNodeGroupView`` does (each group's id and nodes, in order). Groups ``atomic-<n>`` are upstream's
``sizedNodeGroup("atomic-<n>", n, true)``: ``ZeroOrMaxNodeScaling``, target size ``n``, their registered nodes
those the row lists (``otherNodes`` included); ``test-ng`` and ``test-ng2`` scale a node at a time."""

from __future__ import annotations

from collections import Counter

import pytest
from builders import cases

from gpufleet.autoscaling.cluster_autoscaler import Candidate, crop_to_budgets

NG, NG2 = "test-ng", "test-ng2"
A3, A4, A5, A8, A11 = "atomic-3", "atomic-4", "atomic-5", "atomic-8", "atomic-11"

View = tuple[str, int, int]  # (node group, from, to)

# (name, (empty deletions in progress, drain deletions in progress), empty, drain, want empty, want drain[,
# other nodes]) or (name, Skip)
CROP_NODES_TO_BUDGETS = [
    (
        "no nodes",
        (0, 0),
        [],
        [],
        [],
        [],
    ),
    (
        "empty nodes within max limit, no deletions in progress",
        (0, 0),
        [(NG, 0, 10)],
        [],
        [(NG, 0, 10)],
        [],
    ),
    (
        "empty nodes exceeding max limit, no deletions in progress",
        (0, 0),
        [(NG, 0, 11)],
        [],
        [(NG, 0, 10)],
        [],
    ),
    ("empty atomic node group exceeding max limit", (0, 0), [(A11, 0, 11)], [], [(A11, 0, 11)], []),
    ("empty regular and atomic", (0, 0), [(NG, 0, 8), (A3, 0, 3)], [], [(A3, 0, 3), (NG, 0, 7)], []),
    ("multiple empty atomic", (0, 0), [(NG, 0, 3), (A8, 0, 8), (A3, 0, 3)], [], [(A8, 0, 8), (NG, 0, 2)], []),
    (
        "empty nodes with deletions in progress, within budget",
        (1, 1),
        [(NG, 0, 8)],
        [],
        [(NG, 0, 8)],
        [],
    ),
    (
        "empty nodes with deletions in progress, exceeding budget",
        (1, 1),
        [(NG, 0, 10)],
        [],
        [(NG, 0, 8)],
        [],
    ),
    (
        "empty atomic nodes with deletions in progress, exceeding budget",
        (3, 3),
        [(A8, 0, 8)],
        [],
        [(A8, 0, 8)],
        [],
    ),
    (
        "empty nodes with deletions in progress, 0 budget left",
        (5, 5),
        [(NG, 0, 10)],
        [],
        [],
        [],
    ),
    ("empty atomic nodes with deletions in progress, 0 budget left", (5, 5), [(A3, 0, 3)], [], [], []),
    (
        "empty nodes with deletions in progress, budget exceeded",
        (50, 50),
        [(NG, 0, 10)],
        [],
        [],
        [],
    ),
    (
        "drain nodes within max limit, no deletions in progress",
        (0, 0),
        [],
        [(NG, 0, 5)],
        [],
        [(NG, 0, 5)],
    ),
    (
        "multiple drain node groups",
        (0, 0),
        [],
        [(NG, 0, 5), (NG2, 0, 5)],
        [],
        [(NG, 0, 5)],
    ),
    (
        "drain nodes exceeding max limit, no deletions in progress",
        (0, 0),
        [],
        [(NG, 0, 6)],
        [],
        [(NG, 0, 5)],
    ),
    ("drain atomic exceeding limit", (0, 0), [], [(A8, 0, 8)], [], [(A8, 0, 8)]),
    (
        "drain regular and atomic exceeding limit",
        (0, 0),
        [],
        [(NG, 0, 3), (A3, 0, 3)],
        [],
        [(A3, 0, 3), (NG, 0, 2)],
    ),
    ("multiple drain atomic", (0, 0), [], [(NG, 0, 3), (A3, 0, 3), (A4, 0, 4)], [], [(A3, 0, 3), (NG, 0, 2)]),
    (
        "drain nodes with deletions in progress, within budget",
        (1, 2),
        [],
        [(NG, 0, 3)],
        [],
        [(NG, 0, 3)],
    ),
    (
        "drain nodes with deletions in progress, exceeding drain budget",
        (1, 2),
        [],
        [(NG, 0, 5)],
        [],
        [(NG, 0, 3)],
    ),
    (
        "drain atomic nodes with deletions in progress, exceeding drain budget",
        (1, 2),
        [],
        [(A4, 0, 4)],
        [],
        [(A4, 0, 4)],
    ),
    (
        "drain nodes with deletions in progress, 0 drain budget left",
        (1, 5),
        [],
        [(NG, 0, 5)],
        [],
        [],
    ),
    ("drain atomic nodes with deletions in progress, 0 drain budget left", (1, 5), [], [(A4, 0, 4)], [], []),
    (
        "drain nodes with deletions in progress, drain budget exceeded",
        (1, 50),
        [],
        [(NG, 0, 5)],
        [],
        [],
    ),
    (
        "drain nodes with deletions in progress, exceeding overall budget",
        (7, 1),
        [],
        [(NG, 0, 4)],
        [],
        [(NG, 0, 2)],
    ),
    (
        "drain nodes with deletions in progress, 0 overall budget left",
        (10, 0),
        [],
        [(NG, 0, 4)],
        [],
        [],
    ),
    (
        "drain nodes with deletions in progress, overall budget exceeded",
        (50, 0),
        [],
        [(NG, 0, 4)],
        [],
        [],
    ),
    (
        "empty&drain nodes within max limits, no deletions in progress",
        (0, 0),
        [(NG, 0, 5)],
        [(NG2, 0, 5)],
        [(NG, 0, 5)],
        [(NG2, 0, 5)],
    ),
    (
        "empty&drain atomic nodes within max limits, no deletions in progress",
        (0, 0),
        [(A3, 0, 3)],
        [(A4, 0, 4)],
        [(A3, 0, 3)],
        [(A4, 0, 4)],
    ),
    (
        "empty&drain nodes exceeding overall limit, no deletions in progress",
        (0, 0),
        [(NG, 0, 8)],
        [(NG2, 0, 8)],
        [(NG, 0, 8)],
        [(NG2, 0, 2)],
    ),
    (
        "empty&drain atomic nodes exceeding overall limit, no deletions in progress",
        (0, 0),
        [(A8, 0, 8)],
        [(A4, 0, 4)],
        [(A8, 0, 8)],
        [],
    ),
    (
        "empty&drain atomic nodes in same group within overall limit, no deletions in progress",
        (0, 0),
        [(A8, 0, 5)],
        [(A8, 5, 8)],
        [(A8, 0, 5)],
        [(A8, 5, 8)],
    ),
    (
        "empty&drain atomic nodes in same group exceeding overall limit, no deletions in progress",
        (0, 0),
        [(A11, 0, 8)],
        [(A11, 8, 11)],
        [(A11, 0, 8)],
        [(A11, 8, 11)],
    ),
    (
        "empty&drain atomic nodes in same group exceeding drain limit, no deletions in progress",
        (0, 0),
        [(A8, 0, 2)],
        [(A8, 2, 8)],
        [(A8, 0, 2)],
        [(A8, 2, 8)],
    ),
    (
        "empty&drain atomic nodes in same group not matching registered node group size, no deletions in "
        "progress",
        (0, 0),
        [(A8, 0, 2)],
        [(A8, 2, 4)],
        [],
        [],
        [(A8, 4, 8)],
    ),
    (
        "empty&drain atomic nodes in same group matching registered node group size, no deletions in "
        "progress",
        (0, 0),
        [(A8, 0, 2)],
        [(A8, 2, 4)],
        [(A8, 0, 2)],
        [(A8, 2, 4)],
    ),
    (
        "empty&drain atomic nodes exceeding drain limit, no deletions in progress",
        (0, 0),
        [(A4, 0, 4)],
        [(A8, 0, 8)],
        [(A4, 0, 4)],
        [],
    ),
    (
        "empty&drain atomic and regular nodes exceeding drain limit, no deletions in progress",
        (0, 0),
        [(NG, 0, 5), (A3, 0, 3)],
        [(A8, 0, 8)],
        [(A3, 0, 3), (NG, 0, 5)],
        [],
    ),
    (
        "empty&drain regular and atomic nodes in same group exceeding overall limit, no deletions in "
        "progress",
        (0, 0),
        [(NG, 0, 5), (A11, 0, 8)],
        [(A11, 8, 11)],
        [(A11, 0, 8)],
        [(A11, 8, 11)],
    ),
    (
        "empty&drain regular and multiple atomic nodes in same group exceeding drain limit, no deletions in "
        "progress",
        (0, 0),
        [(NG, 0, 5), (A8, 0, 5), (A11, 0, 8)],
        [(A11, 8, 11), (A8, 5, 8)],
        [(A8, 0, 5), (NG, 0, 2)],
        [(A8, 5, 8)],
    ),
    (
        "empty&drain multiple atomic nodes in same group exceeding overall limit, no deletions in progress",
        (0, 0),
        [(A3, 0, 3), (A4, 0, 2), (A11, 0, 11)],
        [(A4, 2, 4)],
        [(A3, 0, 3), (A4, 0, 2)],
        [(A4, 2, 4)],
    ),
    (
        "empty regular and drain atomic nodes exceeding overall limit, no deletions in progress",
        (0, 0),
        [(NG, 0, 5)],
        [(A8, 0, 8)],
        [(NG, 0, 2)],
        [(A8, 0, 8)],
    ),
    (
        "empty&drain nodes exceeding drain limit, no deletions in progress",
        (0, 0),
        [(NG, 0, 2)],
        [(NG2, 0, 8)],
        [(NG, 0, 2)],
        [(NG2, 0, 5)],
    ),
    (
        "empty&drain nodes with deletions in progress, 0 overall budget left",
        (10, 0),
        [(NG, 0, 5)],
        [(NG2, 0, 5)],
        [],
        [],
    ),
    (
        "empty&drain atomic nodes with deletions in progress, 0 overall budget left",
        (10, 0),
        [(A4, 0, 4)],
        [(A3, 0, 3)],
        [],
        [],
    ),
    (
        "empty&drain atomic nodes in same group with deletions in progress, 0 overall budget left",
        (10, 0),
        [(A8, 0, 4)],
        [(A8, 4, 8)],
        [],
        [],
    ),
    (
        "empty&drain nodes with deletions in progress, overall budget exceeded (shouldn't happen, just a "
        "sanity check)",
        (50, 0),
        [(NG, 0, 5)],
        [(NG2, 0, 5)],
        [],
        [],
    ),
    (
        "empty&drain nodes with deletions in progress, 0 drain budget left",
        (0, 5),
        [(NG, 0, 5)],
        [(NG2, 0, 5)],
        [(NG, 0, 5)],
        [],
    ),
    (
        "empty&drain atomic nodes with deletions in progress, 0 drain budget left",
        (0, 5),
        [(A4, 0, 4)],
        [(A3, 0, 3)],
        [(A4, 0, 4)],
        [],
    ),
    (
        "empty&drain nodes with deletions in progress, drain budget exceeded (shouldn't happen, just a "
        "sanity check)",
        (0, 9),
        [(NG, 0, 5)],
        [(NG2, 0, 5)],
        [(NG, 0, 1)],
        [],
    ),
    (
        "empty&drain nodes with deletions in progress, overall budget exceeded, only empty nodes fit",
        (5, 3),
        [(NG, 0, 5)],
        [(NG2, 0, 2)],
        [(NG, 0, 2)],
        [],
    ),
    (
        "empty&drain nodes with deletions in progress, overall budget exceeded, both empty&drain nodes fit",
        (5, 3),
        [(NG, 0, 1)],
        [(NG2, 0, 2)],
        [(NG, 0, 1)],
        [(NG2, 0, 1)],
    ),
    (
        "empty&drain nodes with deletions in progress, drain budget exceeded",
        (1, 3),
        [(NG, 0, 4)],
        [(NG2, 0, 5)],
        [(NG, 0, 4)],
        [(NG2, 0, 2)],
    ),
    (
        "empty&drain atomic nodes with deletions in progress, overall budget exceeded, only empty nodes fit",
        (5, 2),
        [(A4, 0, 4)],
        [(A3, 0, 3)],
        [(A4, 0, 4)],
        [],
    ),
    (
        "empty&drain atomic nodes in same group with deletions in progress, both empty&drain nodes fit",
        (5, 2),
        [(A3, 0, 2)],
        [(A3, 2, 3)],
        [(A3, 0, 2)],
        [(A3, 2, 3)],
    ),
    (
        "empty&drain atomic nodes in same group with deletions in progress, overall budget exceeded, both "
        "empty&drain nodes fit",
        (5, 2),
        [(A8, 0, 6)],
        [(A8, 6, 8)],
        [(A8, 0, 6)],
        [(A8, 6, 8)],
    ),
    (
        "empty&drain atomic nodes in same group with deletions in progress, drain budget exceeded, both "
        "empty&drain nodes fit",
        (2, 2),
        [(A5, 0, 1)],
        [(A5, 1, 5)],
        [(A5, 0, 1)],
        [(A5, 1, 5)],
    ),
    (
        "empty&drain regular and atomic nodes with deletions in progress, overall budget exceeded, only "
        "empty atomic is deleted",
        (5, 2),
        [(NG, 0, 4), (A4, 0, 4)],
        [(NG2, 0, 4), (A3, 0, 3)],
        [(A4, 0, 4)],
        [],
    ),
    (
        "empty&drain regular and atomic nodes in same group with deletions in progress, overall budget "
        "exceeded, both empty&drain atomic nodes fit",
        (5, 2),
        [(NG, 0, 4), (A4, 0, 2)],
        [(NG2, 0, 4), (A4, 2, 4)],
        [(A4, 0, 2)],
        [(A4, 2, 4)],
    ),
    (
        "empty&drain regular and atomic nodes in same group with deletions in progress, both empty&drain "
        "nodes fit",
        (2, 2),
        [(NG, 0, 4), (A4, 0, 2)],
        [(NG2, 0, 4), (A4, 2, 4)],
        [(A4, 0, 2), (NG, 0, 2)],
        [(A4, 2, 4)],
    ),
]


def _nodes(views: list[View], registered: Counter[str] | None = None) -> list[Candidate]:
    """The views' nodes; an ``atomic-<n>`` group's with its size ``n`` and its ``registered`` nodes."""
    out = []
    for g, a, b in views:
        atomic = g.startswith("atomic-")
        size = int(g.split("-")[1]) if atomic else 3
        seen = (registered or Counter())[g]
        out += [Candidate(f"{g}-node-{k}", g, size, 0, True, atomic, seen) for k in range(a, b)]
    return out


def _grouped(nodes: list[Candidate]) -> list[tuple[str, list[str]]]:
    """The node group views, as ``transformNodeGroupView`` compares them."""
    out: list[tuple[str, list[str]]] = []
    for c in nodes:
        if out and out[-1][0] == c.group:
            out[-1][1].append(c.node)
        else:
            out.append((c.group, [c.node]))
    return out


@pytest.mark.parametrize(
    ("in_progress", "empty", "drain", "want_empty", "want_drain", "other"),
    cases("TestCropNodesToBudgets", [r if len(r) != 6 else (*r, []) for r in CROP_NODES_TO_BUDGETS], 6),
)
def test_crop_nodes_to_budgets(
    in_progress: tuple[int, int],
    empty: list[View],
    drain: list[View],
    want_empty: list[View],
    want_drain: list[View],
    other: list[View],
) -> None:
    """``CropNodes``: the ``ZeroOrMaxNodeScaling`` groups first, each whole or not at all (one may overflow
    the budget); then the empty nodes within ``MaxScaleDownParallelism`` less every deletion in progress, the
    nodes to drain within what is left of it and ``MaxDrainParallelism`` less the drains in progress, each
    kind taken a node group at a time."""
    registered = Counter(g for g, a, b in (*empty, *drain, *other) for _ in range(a, b))
    got_empty, got_drain = crop_to_budgets(
        _nodes(empty, registered), _nodes(drain, registered), 10, 5, in_progress
    )
    assert _grouped(got_empty) == _grouped(_nodes(want_empty))
    assert _grouped(got_drain) == _grouped(_nodes(want_drain))
