"""cluster-autoscaler 1.34's own table for the nodes it keeps unremovable (tag ``cluster-autoscaler-1.34.5``,
``cluster-autoscaler/core/scaledown/unremovable/nodes_test.go``), case by case: ``TestUpdate``, the nodes
``Nodes.Update`` keeps among those ``AddTimeout`` added (a node stays while its timeout is after the update
time and the snapshot still has it). Upstream's times are ``beforeUpdate``, ``updateTime`` and
``afterUpdate``, 1.111 s apart; here seconds from the update time."""

from __future__ import annotations

import pytest
from ca_builders import unremovable_after_update

BEFORE_UPDATE, UPDATE_TIME, AFTER_UPDATE = -1.111, 0.0, 1.111

CONTAINS = (
    "gpufleet keeps no reasons between scans: each scan's reply lists the reasons it found "
    "(Update's reset of `reasons`), and Add/AddReason/Contains have no counterpart to call"
)


@pytest.mark.parametrize(
    ("timeouts", "nodes", "want"),
    [
        pytest.param({}, [], 0, id="TestUpdate/empty"),
        pytest.param(
            {"n1": BEFORE_UPDATE, "n2": AFTER_UPDATE}, ["n1", "n2"], 1, id="TestUpdate/one removed via ttl"
        ),
        pytest.param(
            {"n1": AFTER_UPDATE, "n2": AFTER_UPDATE}, ["n2"], 1, id="TestUpdate/one missing from cluster"
        ),
        pytest.param({"n1": AFTER_UPDATE, "n2": AFTER_UPDATE}, ["n1", "n2"], 2, id="TestUpdate/all stay"),
    ],
)
def test_update(timeouts: dict[str, float], nodes: list[str], want: int) -> None:
    assert len(unremovable_after_update(nodes, timeouts, UPDATE_TIME)) == want


@pytest.mark.skip(reason=CONTAINS)
def test_contains() -> None:
    """``TestContains``."""
