"""cluster-autoscaler 1.34's table for the atomic scale-down filter (tag ``cluster-autoscaler-1.34.5``):
``cluster-autoscaler/processors/nodes/scale_down_set_processor_test.go``
(``TestAtomicResizeFilterUnremovableNodes``: of the removable candidates, ``AtomicResizeFilteringProcessor``
keeps a ``ZeroOrMaxNodeScaling`` group's nodes only when they are all of it, its target size or all its
registered nodes, else each is ``AtomicScaleDownFailed``), case by case, through
``cluster_autoscaler.scale_down``: every candidate empty and unneeded long enough, the nodes it leaves with
no reason being the removable ones (upstream compares both lists with ``ElementsMatch``). A row's other
nodes are registered nodes of a group (``cloudProviderNodes``) that are not candidates."""

from __future__ import annotations

import math

import pytest
from builders import cases
from ca_builders import build_test_node

from gpufleet.autoscaling.cluster_autoscaler import Candidate, ScaleDownRequest, scale_down
from gpufleet.autoscaling.scale_down import UnremovableReason, UtilizationRule
from gpufleet.cluster.state import ClusterState
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.profile import build_profile

FAILED = UnremovableReason.ATOMIC_SCALE_DOWN_FAILED

# (name, groups: name -> (target size, ZeroOrMaxNodeScaling), candidates (node, group), other registered
# nodes (node, group), want removed, want unremovable) or (name, Skip)
FILTER_UNREMOVABLE = [
    (
        "Atomic removal",
        {"ng1": (3, True), "ng2": (4, True)},
        [("ng1-node-1", "ng1"), ("ng1-node-2", "ng1"), ("ng1-node-3", "ng1"), ("ng2-node-1", "ng2"),
         ("ng2-node-2", "ng2")],
        [("ng2-node-3", "ng2")],
        ["ng1-node-1", "ng1-node-2", "ng1-node-3"],
        [("ng2-node-1", FAILED), ("ng2-node-2", FAILED)],
    ),
    (
        "Mixed Groups",
        {"ng1": (4, False), "ng2": (4, True)},
        [("ng1-node-1", "ng1"), ("ng1-node-2", "ng1"), ("ng1-node-3", "ng1"), ("ng2-node-1", "ng2"),
         ("ng2-node-2", "ng2")],
        [("ng2-node-3", "ng2")],
        ["ng1-node-1", "ng1-node-2", "ng1-node-3"],
        [("ng2-node-1", FAILED), ("ng2-node-2", FAILED)],
    ),
    (
        "No atomic groups",
        {"ng1": (3, False), "ng2": (4, False)},
        [("ng1-node-1", "ng1"), ("ng1-node-2", "ng1"), ("ng1-node-3", "ng1"), ("ng2-node-1", "ng2"),
         ("ng2-node-2", "ng2")],
        [],
        ["ng1-node-1", "ng1-node-2", "ng1-node-3", "ng2-node-1", "ng2-node-2"],
        [],
    ),
    (
        "Atomic removal with failed instances - all registered nodes are removable",
        {"ng1": (10, True)},
        [("ng1-node-1", "ng1"), ("ng1-node-2", "ng1"), ("ng1-node-3", "ng1")],
        [("ng2-node-1", "ng2")],
        ["ng1-node-1", "ng1-node-2", "ng1-node-3"],
        [],
    ),
    (
        "Atomic removal with failed instances - not all registered nodes are unremovable",
        {"ng1": (10, True)},
        [("ng1-node-1", "ng1"), ("ng1-node-2", "ng1"), ("ng1-node-3", "ng1")],
        [("ng1-node-4", "ng1")],
        [],
        [("ng1-node-1", FAILED), ("ng1-node-2", FAILED), ("ng1-node-3", FAILED)],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("groups", "candidates", "others", "want_removed", "want_unremovable"),
    cases("TestAtomicResizeFilterUnremovableNodes", FILTER_UNREMOVABLE, 5),
)
def test_atomic_resize_filter_unremovable_nodes(
    groups: dict[str, tuple[int, bool]],
    candidates: list[tuple[str, str]],
    others: list[tuple[str, str]],
    want_removed: list[str],
    want_unremovable: list[tuple[str, UnremovableReason]],
) -> None:
    """``AtomicResizeFilteringProcessor.FilterUnremovableNodes``: a ``ZeroOrMaxNodeScaling`` group's removable
    nodes pass only when they are as many as its target size or as its registered nodes."""
    every = [*candidates, *others]
    state = ClusterState([build_test_node(name, 1000, 10) for name, _ in every])
    registered = {g: sum(1 for _, k in every if k == g) for g in groups}
    listed = [
        Candidate(name, g, groups[g][0], 0, True, groups[g][1], registered[g]) for name, g in candidates
    ]
    request = ScaleDownRequest(
        3600.0, state, build_profile(ProfileConfig()), listed, UtilizationRule(), 600.0, 0.0, -math.inf,
        {name: 0.0 for name, _ in candidates}, frozenset(), [], {}, frozenset(), None, assess=False,
    )  # fmt: skip
    reply = scale_down(request)
    assert sorted(c.node for c in reply.remove) == sorted(want_removed)
    assert sorted((n, why.reason) for n, why in reply.unremovable) == sorted(want_unremovable)
