"""KEDA's ScaledJob executor tests, ported case by case.

Upstream: ``kedacore/keda`` v2.20.2, ``pkg/scaling/executor/scale_jobs_test.go``. Each pytest id is
``<upstream test function>/<case>``; a case is one ``assert`` of the upstream function (numbered in
its order) or one row of its table. gpufleet's counterparts: ``ScalingStrategy.selected``
(``NewScalingStrategy``), ``effective_max_scale`` (``GetEffectiveMaxScale``),
``decide_scaled_job`` (``getScalingDecision`` + ``createJobs``) and ``job_is_pending``
(``getPendingJobCount``). Cases gpufleet cannot express are skipped with the reason.
"""

from __future__ import annotations

import pytest
from autoscaling_builders import scaled_job_decision

from gpufleet.autoscaling.keda_scaled_job import JobPod, effective_max_scale, job_is_pending
from gpufleet.model.keda import ScalingStrategy

Case = tuple[str, ScalingStrategy, tuple[int, int, int, int, int], tuple[int, int | None]]

_CUSTOM = ScalingStrategy("custom", 1, "0.5")  # getMockScaledJobWithStrategy("custom", "custom", 1, "0.5")
_CUSTOM_NIL = ScalingStrategy("custom")  # getMockScaledJobWithCustomStrategyWithNilParameter
_CUSTOM_NIL_DEDUCTION = ScalingStrategy("custom", None, "0.5")  # ...WithCustomStrategyNilDeduction
_DEFAULT = ScalingStrategy("default")
_ACCURATE = ScalingStrategy("accurate", 0, "0")
_EAGER = ScalingStrategy("eager", 0, "0")

# (id, strategy, GetEffectiveMaxScale(maxScale, running, pending, maxReplicaCount, scaleTo),
#  (effectiveMaxScale, scaleTo or None when the upstream case does not check it))
GET_EFFECTIVE_MAX_SCALE: list[Case] = [
    ("TestDefaultScalingStrategy/1", _DEFAULT, (3, 2, 0, 5, 1), (1, None)),
    ("TestDefaultScalingStrategy/2", _DEFAULT, (2, 0, 0, 5, 1), (2, None)),
    ("TestCustomScalingStrategy/1", _CUSTOM, (3, 2, 0, 5, 1), (1, None)),
    ("TestCustomScalingStrategy/2", _CUSTOM, (10, 0, 0, 10, 1), (9, None)),
    (
        "TestCustomScalingStrategy/nil parameters are the default strategy 1",
        _CUSTOM_NIL,
        (3, 2, 0, 5, 1),
        (1, None),
    ),
    (
        "TestCustomScalingStrategy/nil parameters are the default strategy 2",
        _CUSTOM_NIL,
        (2, 0, 0, 5, 1),
        (2, None),
    ),
    ("TestCustomScalingStrategy/percentage 0", ScalingStrategy("custom", 2, "0"), (3, 2, 0, 5, 1), (1, None)),
    (
        "TestCustomScalingStrategy/exceed MaxReplicaCount",
        ScalingStrategy("custom", -2, "0"),
        (3, 2, 0, 4, 1),
        (4, None),
    ),
    (
        "TestCustomScalingStrategyNilQueueLengthDeduction/1",
        _CUSTOM_NIL_DEDUCTION,
        (10, 2, 0, 100, 1),
        (9, None),
    ),
    (
        "TestCustomScalingStrategyNilQueueLengthDeduction/2",
        _CUSTOM_NIL_DEDUCTION,
        (10, 0, 0, 100, 1),
        (10, None),
    ),
    (
        "TestCustomScalingStrategyNilQueueLengthDeduction/factory",
        _CUSTOM_NIL_DEDUCTION,
        (10, 2, 0, 100, 1),
        (9, None),
    ),
    ("TestAccurateScalingStrategy/1", _ACCURATE, (3, 2, 0, 5, 1), (3, None)),
    ("TestAccurateScalingStrategy/2", _ACCURATE, (5, 2, 0, 5, 1), (3, None)),
    ("TestAccurateScalingStrategy/2 pending jobs 1", _ACCURATE, (3, 4, 2, 10, 1), (1, None)),
    ("TestAccurateScalingStrategy/2 pending jobs 2", _ACCURATE, (5, 4, 2, 5, 1), (1, None)),
    ("TestAccurateScalingStrategy/3 running jobs are pending", _ACCURATE, (3, 3, 3, 5, 1), (0, None)),
    (
        "TestAccurateScalingStrategy/running jobs pending, higher numbers",
        _ACCURATE,
        (15, 15, 15, 20, 1),
        (0, None),
    ),
    ("TestAccurateScalingStrategy/similar, different numbers", _ACCURATE, (10, 10, 10, 15, 1), (0, None)),
    ("TestAccurateScalingStrategy/partial pending jobs", _ACCURATE, (20, 15, 10, 20, 1), (5, None)),
    ("TestEagerScalingStrategy/1", _EAGER, (4, 3, 0, 10, 1), (4, 10)),
    ("TestEagerScalingStrategy/2", _EAGER, (4, 0, 3, 10, 1), (4, 10)),
    ("TestEagerScalingStrategy/3", _EAGER, (4, 7, 0, 10, 1), (3, 10)),
    ("TestEagerScalingStrategy/4", _EAGER, (4, 1, 6, 10, 1), (3, 10)),
    ("TestEagerScalingStrategy/5", _EAGER, (15, 0, 0, 10, 1), (10, 10)),
]


@pytest.mark.parametrize(
    ("strategy", "args", "expected"),
    [pytest.param(s, a, e, id=i) for i, s, a, e in GET_EFFECTIVE_MAX_SCALE],
)
def test_get_effective_max_scale(
    strategy: ScalingStrategy, args: tuple[int, int, int, int, int], expected: tuple[int, int | None]
) -> None:
    max_scale, running, pending, max_replica_count, scale_to = args
    effective, new_scale_to = effective_max_scale(
        strategy, max_scale, running, pending, max_replica_count, scale_to
    )
    assert effective == expected[0]
    if expected[1] is not None:
        assert new_scale_to == expected[1]


@pytest.mark.parametrize(
    ("strategy", "selected"),
    [
        pytest.param(ScalingStrategy("custom", 10, "0"), "custom", id="TestNewNewScalingStrategy/custom"),
        pytest.param(_ACCURATE, "accurate", id="TestNewNewScalingStrategy/accurate"),
        pytest.param(ScalingStrategy(), "default", id="TestNewNewScalingStrategy/unset is default"),
        pytest.param(ScalingStrategy("default", 0, "0"), "default", id="TestNewNewScalingStrategy/default"),
        pytest.param(
            ScalingStrategy("custom", 1, ""),
            "default",
            id="TestCustomScalingStrategy/empty percentage is default",
        ),
        pytest.param(
            _CUSTOM_NIL_DEDUCTION,
            "custom",
            id="TestCustomScalingStrategyNilQueueLengthDeduction/factory type",
        ),
    ],
)
def test_new_scaling_strategy_selects(strategy: ScalingStrategy, selected: str) -> None:
    assert strategy.selected == selected


@pytest.mark.parametrize(
    ("min_replica_count", "running", "scale_to", "max_scale", "expected"),
    [
        pytest.param(2, 0, 0, 0, (2, 2), id="TestRunningJobCountSmallerMinReplicaCount"),
        pytest.param(2, 1, 0, 0, (1, 1), id="TestRunningJobCountIsDeductedFromMinReplicaCount"),
        pytest.param(
            1, 1, 2, 2, (2, 2), id="TestRunningJobCountGreaterOrEqualMinReplicaCountExecutesScalingStrategy"
        ),
    ],
)
def test_get_scaling_decision(
    min_replica_count: int, running: int, scale_to: int, max_scale: int, expected: tuple[int, int]
) -> None:
    # getMockScaledJobWithMinReplicaCountAndDefaultStrategy: maxReplicaCount 100, default strategy.
    assert scaled_job_decision(min_replica_count, 100, running, scale_to, max_scale) == expected


_READY = "Ready"
_SCHEDULED = "PodScheduled"
_BOTH = frozenset({_READY, _SCHEDULED})


def _pod(phase: str = "", *conditions: str) -> JobPod:
    return JobPod(phase, frozenset(conditions))


# TestGetPendingJobCount's table, row by row: (pendingPodConditions, the Job's pods, pending).
_CONDITIONS = (_READY, _SCHEDULED)
PENDING_ROWS: list[tuple[str, tuple[str, ...], list[JobPod], bool]] = [
    ("0 Succeeded", (), [_pod("Succeeded")], False),
    ("1 Running", (), [_pod("Running")], False),
    ("2 Failed", (), [_pod("Failed")], True),
    ("3 Pending", (), [_pod("Pending")], True),
    ("4 Unknown", (), [_pod("Unknown")], True),
    ("5 conditions, none", _CONDITIONS, [_pod()], True),
    ("6 conditions, Ready only", _CONDITIONS, [_pod("", _READY)], True),
    ("7 conditions, PodScheduled only", _CONDITIONS, [_pod("", _SCHEDULED)], True),
    ("8 conditions, both", _CONDITIONS, [_pod("", _READY, _SCHEDULED)], False),
    ("9 two pods, both fulfilled", _CONDITIONS, [JobPod("", _BOTH), JobPod("", _BOTH)], False),
    ("10 two pods, one fulfilled", _CONDITIONS, [JobPod("", _BOTH), _pod("", _READY)], False),
    ("11 two pods, neither fulfilled", _CONDITIONS, [_pod("", _READY), _pod("", _SCHEDULED)], True),
    ("12 three pods, one fulfilled", _CONDITIONS, [_pod(), _pod("", _READY), JobPod("", _BOTH)], False),
    ("13 three pods, none fulfilled", _CONDITIONS, [_pod(), _pod("", _READY), _pod("", _SCHEDULED)], True),
    ("14 empty conditions list, Running", (), [_pod("Running", _READY)], False),
]


@pytest.mark.parametrize(
    ("conditions", "pods", "pending"),
    [pytest.param(c, p, e, id=f"TestGetPendingJobCount/{i}") for i, c, p, e in PENDING_ROWS]
    + [
        pytest.param(
            _CONDITIONS,
            [JobPod("", _BOTH), JobPod("", _BOTH)],
            False,
            id="TestAreAllPendingPodConditionsFulfilledBugScenario",
        )
    ],
)
def test_get_pending_job_count(conditions: tuple[str, ...], pods: list[JobPod], pending: bool) -> None:
    assert job_is_pending(pods, conditions) is pending


_NO_CLEANUP = "gpufleet does not delete finished Jobs (history limits are read, not enforced)"
_NO_JOB_OBJECTS = "gpufleet stamps Jobs from the template by name; the Job object's metadata is not modelled"


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param(_NO_CLEANUP, id="TestCleanUpNormalCase"),
        pytest.param(_NO_CLEANUP, id="TestCleanUpMixedCaseWithSortByTime"),
        pytest.param(_NO_CLEANUP, id="TestCleanUpDefaultValue"),
        pytest.param(_NO_JOB_OBJECTS, id="TestCreateJobs"),
        pytest.param(_NO_JOB_OBJECTS, id="TestGenerateJobs"),
    ],
)
def test_not_expressible(reason: str) -> None:
    pytest.skip(reason)
