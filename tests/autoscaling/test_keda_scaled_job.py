"""ScaledJob decisions: how many Jobs each poll creates, per scaling strategy.

Upstream: ``kedacore/keda: pkg/scaling/executor/scale_jobs.go`` (``RequestJobScale``,
``getScalingDecision``, ``createJobs``, ``GetEffectiveMaxScale``), its ``scale_jobs_test.go``
tables, ``pkg/scaling/scaledjob/metrics.go`` (``IsScaledJobActive``) and the keda-docs
``scaledjob-spec.md`` (scaling strategies, the ``eager`` example).
"""

from __future__ import annotations

import pytest

from gpufleet.autoscaling.keda import (
    ScaledJobState,
    ScalerMetrics,
    combine_scaler_metrics,
    decide_scaled_job,
    effective_max_scale,
    scaler_metrics,
)
from gpufleet.model.keda import (
    MultipleScalersCalculation,
    PrometheusScaler,
    RedisListScaler,
    ScaledJobSpec,
    ScaleTrigger,
    ScalingStrategy,
)

DEFAULT = ScalingStrategy("default")
ACCURATE = ScalingStrategy("accurate")
EAGER = ScalingStrategy("eager")


def redis(list_length: int = 1, activation: int = 0, value_target: bool = False) -> ScaleTrigger:
    scaler = RedisListScaler("jobs", list_length, activation)
    return ScaleTrigger(scaler, metric_type="Value" if value_target else "AverageValue")


def job(
    *triggers: ScaleTrigger,
    strategy: ScalingStrategy = DEFAULT,
    min_replica_count: int = 0,
    max_replica_count: int | None = None,
    polling_interval_s: int = 30,
) -> ScaledJobSpec:
    return ScaledJobSpec(
        "sj",
        "default",
        "sj",
        triggers or (redis(),),
        polling_interval_s=polling_interval_s,
        min_replica_count=min_replica_count,
        max_replica_count=max_replica_count,
        scaling_strategy=strategy,
    )


def created(spec: ScaledJobSpec, queue: float | None, running: int, pending: int = 0) -> int:
    return decide_scaled_job(spec, [queue], running, pending).jobs_to_create


# --- the strategies' GetEffectiveMaxScale, with scale_jobs_test.go's numbers --------------------


@pytest.mark.parametrize(
    ("strategy", "args", "expected"),
    [
        # TestDefaultScalingStrategy: maxScale - running.
        (DEFAULT, (3, 2, 0, 5), 1),
        (DEFAULT, (2, 0, 0, 5), 2),
        # TestCustomScalingStrategy: min(maxScale - deduction - int(running * pct), max).
        (ScalingStrategy("custom", 1, "0.5"), (3, 2, 0, 5), 1),
        (ScalingStrategy("custom", 1, "0.5"), (10, 0, 0, 10), 9),
        (ScalingStrategy("custom", 2, "0"), (3, 2, 0, 5), 1),
        (ScalingStrategy("custom", -2, "0"), (3, 2, 0, 4), 4),
        (ScalingStrategy("custom", 1, ""), (3, 2, 0, 5), 1),  # unparsable percentage: default
        # TestAccurateScalingStrategy: max - running if maxScale + running > max, else maxScale - pending.
        (ACCURATE, (3, 2, 0, 5), 3),
        (ACCURATE, (5, 2, 0, 5), 3),
        (ACCURATE, (3, 4, 2, 10), 1),
        (ACCURATE, (5, 4, 2, 5), 1),
        # eager: min(max - running - pending, maxScale).
        (EAGER, (3, 3, 0, 10), 3),
        (EAGER, (8, 3, 2, 10), 5),
    ],
)
def test_effective_max_scale_matches_upstream_tables(
    strategy: ScalingStrategy, args: tuple[int, int, int, int], expected: int
) -> None:
    max_scale, running, pending, max_replicas = args
    effective, _ = effective_max_scale(
        strategy, max_scale, running, pending, max_replicas, scale_to=max_scale
    )
    assert effective == expected


def test_eager_raises_scale_to_to_max_replica_count() -> None:
    assert effective_max_scale(EAGER, 3, 3, 0, 10, scale_to=3) == (3, 10)


# --- end to end: (queue, running, pending) -> Jobs created ----------------------------------------


@pytest.mark.parametrize(
    ("queue", "running", "pending", "max_replicas", "expected"),
    [
        (5, 0, 0, None, 5),
        (5, 2, 0, None, 3),
        (5, 5, 0, None, 0),
        (3, 4, 0, None, 0),  # negative effective scale is floored at 0
        (20, 3, 0, 10, 7),  # min(max, ceil(queue/target)) - running
        (20, 3, 3, 10, 7),  # pending does not matter to default
    ],
)
def test_default_strategy_creates_max_scale_minus_running(
    queue: int, running: int, pending: int, max_replicas: int | None, expected: int
) -> None:
    assert created(job(strategy=DEFAULT, max_replica_count=max_replicas), queue, running, pending) == expected


@pytest.mark.parametrize(
    ("queue", "running", "pending", "expected"),
    [
        (3, 2, 0, 3),  # 3 + 2 <= 10: maxScale - pending
        (3, 4, 2, 1),
        (8, 4, 1, 6),  # 8 + 4 > 10: max - running
        (2, 9, 0, 1),  # 2 + 9 > 10: max - running
        (5, 5, 5, 0),
    ],
)
def test_accurate_strategy_deducts_pending_jobs_and_caps_at_free_slots(
    queue: int, running: int, pending: int, expected: int
) -> None:
    assert created(job(strategy=ACCURATE, max_replica_count=10), queue, running, pending) == expected


def test_eager_fills_free_slots_where_default_waits() -> None:
    # keda-docs scaledjob-spec.md, "eager": max 10, value 1, 3 Jobs running on 3 items, 3 more arrive.
    assert created(job(strategy=DEFAULT, max_replica_count=10), 3, running=3) == 0
    assert created(job(strategy=EAGER, max_replica_count=10), 3, running=3) == 3
    assert created(job(strategy=EAGER, max_replica_count=10), 8, running=3, pending=2) == 5


def test_scale_to_caps_creation_at_the_queue_length() -> None:
    # createJobs: min(scaleTo = ceil(queueLength), effectiveMaxScale).
    assert created(job(strategy=ScalingStrategy("custom", -2, "0"), max_replica_count=4), 3, running=2) == 3
    half = ScaleTrigger(PrometheusScaler("s", "sum(queue_length)", threshold=0.5))
    decision = decide_scaled_job(job(half), [3], 0, 0)
    assert (decision.max_scale, decision.scale_to, decision.jobs_to_create) == (6, 3, 3)


def test_list_length_is_the_target_average_value() -> None:
    assert created(job(redis(list_length=5)), 11, running=0) == 3  # ceil(11/5)
    assert created(job(redis(list_length=5)), 11, running=1) == 2


def test_value_metric_type_leaves_the_target_average_value_unset_so_nothing_scales() -> None:
    # CalculateQueueLengthAndMaxValue reads Target.AverageValue, nil for a Value target.
    decision = decide_scaled_job(job(redis(value_target=True)), [5], 0, 0)
    assert (decision.active, decision.max_scale, decision.jobs_to_create) == (True, 0, 0)


def test_inactive_scaled_jobs_create_nothing() -> None:
    assert created(job(redis(activation=5)), 5, running=0) == 0
    assert created(job(redis(activation=5)), 6, running=0) == 6
    assert created(job(), 0, running=0) == 0


def test_min_replica_count_keeps_that_many_jobs_and_is_excluded_from_the_strategy() -> None:
    # getScalingDecision: running < min -> create min - running; else strategy on running - min.
    spec = job(min_replica_count=2, max_replica_count=10)
    assert created(spec, 0, running=0) == 2  # minReplicaCount > 0 forces the object active
    assert created(spec, 0, running=1) == 1
    assert created(spec, 5, running=2) == 5  # maxScale min(5, 10 - 2) minus (2 - 2) running
    assert created(spec, 12, running=4) == 6  # min(12, 8) - (4 - 2)


def test_failing_triggers_are_skipped() -> None:
    decision = decide_scaled_job(job(redis(), redis()), [None, 4], 0, 0)
    assert (decision.error, decision.jobs_to_create) == (True, 4)
    nothing = decide_scaled_job(job(), [None], 0, 0)
    assert (nothing.error, nothing.active, nothing.jobs_to_create) == (True, False, 0)


@pytest.mark.parametrize(("calculation", "expected"), [("max", 10), ("min", 4), ("avg", 7), ("sum", 14)])
def test_multiple_scalers_calculation_combines_active_triggers(
    calculation: MultipleScalersCalculation, expected: int
) -> None:
    strategy = ScalingStrategy(multiple_scalers_calculation=calculation)
    assert created_many(job(redis(), redis(), strategy=strategy), [4, 10]) == expected


def created_many(spec: ScaledJobSpec, values: list[float | None]) -> int:
    return decide_scaled_job(spec, values, 0, 0).jobs_to_create


def test_inactive_triggers_are_left_out_of_the_combination() -> None:
    spec = job(redis(), redis(activation=20), strategy=ScalingStrategy(multiple_scalers_calculation="min"))
    assert created_many(spec, [4, 10]) == 4
    avg = job(redis(), redis(activation=20), strategy=ScalingStrategy(multiple_scalers_calculation="avg"))
    assert created_many(avg, [4, 10]) == 4


def test_combination_quirks_follow_is_scaled_job_active() -> None:
    # max: an active trigger with an empty queue is not picked (queueLength must exceed 0).
    empty_but_active = ScalerMetrics(queue_length=0.0, max_value=0.0, is_active=True)
    assert combine_scaler_metrics([empty_but_active], "max", 0, 100) == (False, 0, 0)
    # The combined maxValue is capped at MaxReplicaCount() and rounded up.
    big = scaler_metrics(redis(list_length=3), 10, max_replica_count=100)
    assert big == ScalerMetrics(10.0, 10 / 3, True)
    assert combine_scaler_metrics([big], "sum", 0, 3) == (True, 10, 3)


def test_pending_jobs_cannot_exceed_running_jobs() -> None:
    with pytest.raises(ValueError, match=r"need 0 <= pending \(3\) <= running \(2\)"):
        decide_scaled_job(job(), [1], 2, 3)


def test_scaled_job_state_polls_on_its_interval_and_records_activity() -> None:
    state = ScaledJobState(job(polling_interval_s=10), created_at=0.0)
    assert state.poll(0.0, [0], 0, 0) == 0
    assert state.last_active_at is None
    assert state.poll(10.0, [3], 0, 0) == 3
    assert state.last_active_at == 10.0
    with pytest.raises(ValueError, match=r"before the next polling time 20\.0$"):
        state.poll(15.0, [3], 3, 3)
    assert state.poll(20.0, [3], 3, 3) == 0  # default: maxScale 3 - running 3
