"""cluster-autoscaler 1.34's own table for the unneeded nodes that may go (tag ``cluster-autoscaler-1.34.5``,
``cluster-autoscaler/core/scaledown/unneeded/nodes_test.go``), case by case: ``TestUpdate``, since when a node
is unneeded (the time of the first update that found it so, kept while each update finds it), and
``TestRemovableAt``, the min-size rule (``verifyMinSize``: the group's target size less its deletions in
progress, counting down with each removable node, empty nodes first). The unneeded and unready times are 0
(``fakeScaleDownTimeGetter``) and no resource limit applies, as upstream's."""

from __future__ import annotations

import pytest
from ca_builders import removable_at, unneeded_since

INITIAL, FINAL = 0.0, 60.0  # initialTimestamp, finalTimestamp (a minute later)
VERSIONS = (
    "the NodeToBeRemoved a node is kept with (its version) is upstream's bookkeeping; here only its time"
)
TAINTS = (
    "DeletionCandidate taints are put on and taken off (autoscaling.soft_taints) but not read back: "
    "gpufleet's autoscaler does not restart, so it never reloads its unneeded nodes from a cluster "
    "(--node-deletion-candidate-ttl, 0 by default: off)"
)


@pytest.mark.parametrize(
    ("empty", "drain", "min_size", "target_size", "deletions", "want"),
    [
        pytest.param(3, 2, 1, 10, 2, (3, 2), id="TestRemovableAt/Node group min size is not reached"),
        pytest.param(
            3, 5, 1, 10, 2, (3, 4), id="TestRemovableAt/Node group min size is reached for drain nodes"
        ),
        pytest.param(
            3,
            5,
            1,
            5,
            2,
            (2, 0),
            id="TestRemovableAt/Node group min size is reached for empty and drain nodes",
        ),
    ],
)
def test_removable_at(
    empty: int, drain: int, min_size: int, target_size: int, deletions: int, want: tuple[int, int]
) -> None:
    assert removable_at(empty, drain, min_size, target_size, deletions) == want


N3 = ["n1", "n2", "n3"]


@pytest.mark.parametrize(
    ("initial", "final", "want"),
    [
        pytest.param(N3, [], {}, id="TestUpdate/added then deleted"),
        pytest.param([], N3, dict.fromkeys(N3, FINAL), id="TestUpdate/added in last call"),
        pytest.param(N3, ["n2"], {"n2": INITIAL}, id="TestUpdate/single one remaining"),
        pytest.param(["n2"], N3, {"n1": FINAL, "n2": INITIAL, "n3": FINAL}, id="TestUpdate/single one older"),
    ],
)
def test_update(initial: list[str], final: list[str], want: dict[str, float]) -> None:
    """The times only: ``wantVersions`` (which ``NodeToBeRemoved`` a node is kept with) is upstream's
    bookkeeping, with no counterpart here."""
    assert unneeded_since([(INITIAL, initial), (FINAL, final)]) == want


@pytest.mark.skip(reason=TAINTS)
def test_node_load_from_existing_taints() -> None:
    """``TestNodeLoadFromExistingTaints``."""
