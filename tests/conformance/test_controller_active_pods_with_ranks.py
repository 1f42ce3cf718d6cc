"""The ReplicaSet controller's scale-down order: ``TestSortingActivePodsWithRanks``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/controller_utils_test.go``. Its pods are
written as :class:`~gpufleet.workloads.replicaset.ActivePod` and compared with
``compare_active_pods`` (``ActivePodsWithRanks.Less``; negative means "less"), with the rank each case
gives. Upstream's pods have no UID, so every ``key`` (the UID stand-in) is empty. Go's zero creation
time is written as 0.0: no case reaches the creation-time rule with it. The feature gates are 1.34's
defaults (PodDeletionCost on, LogarithmicScaleDown locked on).
"""

from __future__ import annotations

import pytest

from gpufleet.workloads.replicaset import POD_DELETION_COST, ActivePod, compare_active_pods

NOW = 1_000_000_000.0
THEN_1_MONTH = NOW - 30 * 86400  # now.AddDate(0, -1, 0): any month is in the same 2^51 ns bucket
THEN_2_HOURS = NOW - 2 * 3600
THEN_5_HOURS = NOW - 5 * 3600
THEN_8_HOURS = NOW - 8 * 3600
ZERO = 0.0


def pod(
    node: str | None,
    phase: str,
    ready: bool,
    restarts: int,
    ready_since: float,
    created: float,
    annotations: dict[str, str] | None = None,
) -> ActivePod:
    """The test's ``pod(name, nodeName, phase, ready, restarts, sideRestarts, readySince, created,
    annotations)`` without sidecar restarts (gpufleet's pods have no sidecars)."""
    return ActivePod("", node, phase, ready_since if ready else None, created, restarts, annotations or {})


PODS = {
    "unscheduled": pod(None, "Pending", False, 0, ZERO, ZERO),
    "pending": pod("node", "Pending", False, 0, ZERO, ZERO),
    "unknown-phase": pod("node", "Unknown", False, 0, ZERO, ZERO),
    "not-ready": pod("node", "Running", False, 0, ZERO, ZERO),
    "ready-now": pod("node", "Running", True, 0, NOW, NOW),
    "ready-then": pod("node", "Running", True, 0, THEN_1_MONTH, THEN_1_MONTH),
    "ready-high-restarts": pod("node", "Running", True, 9001, NOW, NOW),
    "ready-now-created-then": pod("node", "Running", True, 0, NOW, THEN_1_MONTH),
    "low-deletion-cost": pod("node", "Running", True, 0, NOW, THEN_1_MONTH, {POD_DELETION_COST: "10"}),
    "high-deletion-cost": pod("node", "Running", True, 0, NOW, THEN_1_MONTH, {POD_DELETION_COST: "100"}),
    "unscheduled-5-hours": pod(None, "Pending", False, 0, THEN_5_HOURS, THEN_5_HOURS),
    "unscheduled-10-hours": pod(None, "Pending", False, 0, THEN_8_HOURS, THEN_8_HOURS),
    "ready-2-hours": pod(None, "Running", True, 0, THEN_2_HOURS, THEN_1_MONTH),
    "ready-5-hours": pod(None, "Running", True, 0, THEN_5_HOURS, THEN_1_MONTH),
    "ready-10-hours": pod(None, "Running", True, 0, THEN_8_HOURS, THEN_1_MONTH),
}

# equalityTests: (p1, p2); p2 defaults to p1. Both have rank 1.
EQUALITY = [
    ("unscheduled", None),
    ("pending", None),
    ("unknown-phase", None),
    ("not-ready", None),
    ("ready-now-created-then", None),
    ("ready-now", None),
    ("ready-then", None),
    ("ready-high-restarts", None),
    ("ready-now-created-then", None),
    ("unscheduled-5-hours", "unscheduled-10-hours"),
    ("ready-5-hours", "ready-10-hours"),
]


@pytest.mark.parametrize(
    ("p1", "p2"),
    [
        pytest.param(p1, p2, id=f"TestSortingActivePodsWithRanks/Equality tests {i}")
        for i, (p1, p2) in enumerate(EQUALITY)
    ],
)
def test_equal_pods_are_not_less_either_way(p1: str, p2: str | None) -> None:
    """Neither ``Less(0, 1)`` nor ``Less(1, 0)``: ready times (or creation times) in the same log2 bucket of
    age, and equal UIDs, tie."""
    a, b = PODS[p1], PODS[p2 or p1]
    assert compare_active_pods(a, 1, b, 1, NOW) == 0
    assert compare_active_pods(b, 1, a, 1, NOW) == 0


_NO_TRANSITION_TIME = (
    "a Ready pod whose Ready condition has no lastTransitionTime: a gpufleet pod becomes Ready at a time of "
    "the simulation"
)
_SIDECAR = "sidecar restarts: gpufleet's pods have no sidecar containers"
_COST_GATE_OFF = "the PodDeletionCost gate turned off: gpufleet runs 1.34's default (on)"

# inequalityTests: (lesser, its rank, greater, its rank, skip reason).
INEQUALITY: list[tuple[str, int, str, int, str | None]] = [
    ("unscheduled", 1, "pending", 2, None),
    ("unscheduled", 2, "pending", 1, None),
    ("pending", 1, "unknown-phase", 2, None),
    ("unknown-phase", 1, "not-ready", 2, None),
    ("not-ready", 1, "ready-no-last-transition-time", 1, _NO_TRANSITION_TIME),
    ("ready-no-last-transition-time", 1, "ready-now", 1, _NO_TRANSITION_TIME),
    ("ready-now", 2, "ready-no-last-transition-time", 1, _NO_TRANSITION_TIME),
    ("ready-now", 1, "ready-then", 1, None),
    ("ready-now", 2, "ready-then", 1, None),
    ("ready-high-restarts", 1, "ready-now", 1, None),
    ("ready-high-side-restarts", 1, "ready-high-restarts", 1, _SIDECAR),
    ("ready-now", 2, "ready-high-restarts", 1, None),
    ("ready-now", 1, "ready-now-created-then", 1, None),
    ("ready-now-created-then", 2, "ready-now", 1, None),
    ("low-deletion-cost", 2, "high-deletion-cost", 1, None),
    ("high-deletion-cost", 2, "low-deletion-cost", 1, _COST_GATE_OFF),
    ("ready-2-hours", 1, "ready-5-hours", 1, None),
]


@pytest.mark.parametrize(
    ("lesser", "lesser_rank", "greater", "greater_rank"),
    [
        pytest.param(
            *row[:4],
            id=f"TestSortingActivePodsWithRanks/Inequality tests {i}",
            marks=[pytest.mark.skip(reason=row[4])] if row[4] else [],
        )
        for i, row in enumerate(INEQUALITY)
    ],
)
def test_the_lesser_pod_is_deleted_first(
    lesser: str, lesser_rank: int, greater: str, greater_rank: int
) -> None:
    """``Less(0, 1)`` and not ``Less(1, 0)``: unassigned < assigned, Pending < Unknown < Running, not ready <
    ready, lower deletion cost, doubled up (higher rank), ready for less time (log2 buckets), more
    restarts, newer."""
    a, b = PODS[lesser], PODS[greater]
    assert compare_active_pods(a, lesser_rank, b, greater_rank, NOW) < 0
    assert compare_active_pods(b, greater_rank, a, lesser_rank, NOW) >= 0
