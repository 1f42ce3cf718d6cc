"""ScaledObject decisions: activation, cooldown, polling, bounds, errors, fallback and the HPA inputs.

Upstream: ``kedacore/keda: pkg/scaling/executor/scale_scaledobjects.go`` (``RequestScale``),
``pkg/scaling/scale_handler.go`` (``startScaleLoop``), ``pkg/fallback/fallback.go``,
``controllers/keda/hpa.go``.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpufleet.autoscaling.hpa_replicas import ReplicaCalculator
from gpufleet.autoscaling.keda import (
    FallbackTracker,
    HpaExternalMetric,
    KedaReason,
    ScaledObjectState,
    hpa_inputs,
    metric_name,
    normalize_string,
    to_milli,
)
from gpufleet.model.keda import (
    Fallback,
    FallbackBehavior,
    PrometheusScaler,
    RedisListScaler,
    ScaledObjectSpec,
    ScaleTargetRef,
    ScaleTrigger,
)


def redis(list_length: int = 1, activation: int = 0) -> ScaleTrigger:
    return ScaleTrigger(RedisListScaler("train:jobs", list_length, activation))


def spec(*triggers: ScaleTrigger, **kw: Any) -> ScaledObjectSpec:
    return ScaledObjectSpec(
        "gpu-train-scaler",
        "ai-train",
        ScaleTargetRef("train-worker"),
        triggers or (redis(),),
        **kw,
    )


# --- activation: metric > activation value, strictly ------------------------------------------


def test_an_empty_list_with_activation_0_is_inactive_and_one_item_activates() -> None:
    # redis_scaler.go GetMetricsAndActivity: listLen > ActivationListLength.
    state = ScaledObjectState(spec(), created_at=0.0)
    idle = state.poll(0.0, [0], current_replicas=0)
    assert (idle.active, idle.scale_to, idle.reason) == (False, None, KedaReason.NOT_ACTIVE)
    assert not idle.hpa_enabled
    woke = state.poll(30.0, [1], current_replicas=0)
    assert (woke.active, woke.scale_to, woke.reason) == (True, 1, KedaReason.ACTIVATED)
    assert woke.hpa_enabled
    assert state.last_active_at == 30.0


def test_a_list_at_its_activation_length_stays_inactive() -> None:
    state = ScaledObjectState(spec(redis(activation=2)), created_at=0.0)
    assert state.poll(0.0, [2], current_replicas=0).scale_to is None
    assert state.poll(30.0, [3], current_replicas=0).scale_to == 1


def test_prometheus_activation_is_strict_too() -> None:
    trigger = ScaleTrigger(
        PrometheusScaler("http://prom:9090", "sum(queue_length)", threshold=10.0, activation_threshold=5.5)
    )
    state = ScaledObjectState(spec(trigger), created_at=0.0)
    assert not state.poll(0.0, [5.5], current_replicas=0).active
    assert state.poll(30.0, [5.6], current_replicas=0).active


def test_any_active_trigger_activates_the_object() -> None:
    state = ScaledObjectState(spec(redis(), redis(activation=10)), created_at=0.0)
    decision = state.poll(0.0, [0, 11], current_replicas=0)
    assert decision.active and decision.scale_to == 1


def test_activation_scales_from_zero_to_min_replica_count_when_it_is_positive() -> None:
    # scaleFromZeroOrIdle: minReplicaCount if > 0, else 1.
    state = ScaledObjectState(spec(min_replica_count=2, max_replica_count=4), created_at=0.0)
    assert state.poll(0.0, [7], current_replicas=0).scale_to == 2


def test_while_active_with_replicas_keda_leaves_scaling_to_the_hpa_and_records_last_active_time() -> None:
    state = ScaledObjectState(spec(), created_at=0.0)
    decision = state.poll(0.0, [3], current_replicas=3)
    assert (decision.scale_to, decision.reason, decision.hpa_enabled) == (None, KedaReason.ACTIVE, True)
    assert state.last_active_at == 0.0


# --- polling ------------------------------------------------------------------------------------


def test_polls_run_at_creation_then_every_polling_interval() -> None:
    # startScaleLoop: checkScalers runs at once, then after each pollingInterval.
    state = ScaledObjectState(spec(), created_at=100.0)
    assert state.next_poll_at == 100.0
    state.poll(100.0, [0], current_replicas=0)
    assert state.next_poll_at == 130.0
    with pytest.raises(ValueError, match=r"before the next polling time 130\.0$"):
        state.poll(129.0, [5], current_replicas=0)
    state.poll(130.0, [0], current_replicas=0)
    assert state.next_poll_at == 160.0
    custom = ScaledObjectState(spec(polling_interval_s=5), created_at=0.0)
    custom.poll(0.0, [0], current_replicas=0)
    assert custom.next_poll_at == 5.0


def test_poll_needs_one_value_per_trigger() -> None:
    with pytest.raises(ValueError, match="2 trigger values for 1 triggers"):
        ScaledObjectState(spec(), created_at=0.0).poll(0.0, [1, 2], current_replicas=0)


# --- deactivation: cooldownPeriod after the last active poll --------------------------------


def test_an_emptied_list_scales_to_zero_exactly_cooldown_period_after_the_last_active_poll() -> None:
    # scaleToZeroOrIdle: scale in once lastActiveTime + cooldownPeriod has passed.
    state = ScaledObjectState(spec(cooldown_period_s=300), created_at=0.0)
    assert state.poll(0.0, [0], 0).reason == KedaReason.NOT_ACTIVE
    assert state.poll(30.0, [3], 0).scale_to == 1
    assert state.poll(60.0, [3], 3).reason == KedaReason.ACTIVE  # last active poll
    for now in range(90, 360, 30):
        decision = state.poll(float(now), [0], 3)
        assert (decision.scale_to, decision.reason) == (None, KedaReason.COOLDOWN), now
    final = state.poll(360.0, [0], 3)
    assert (final.scale_to, final.reason, final.hpa_enabled) == (0, KedaReason.DEACTIVATED, False)


def test_cooldown_is_observed_at_polling_granularity() -> None:
    # cooldownPeriod 45 s with 30 s polls: last active at 60, 105 is not a poll, so 120 scales in.
    state = ScaledObjectState(spec(cooldown_period_s=45), created_at=60.0)
    state.poll(60.0, [1], 1)
    assert state.poll(90.0, [0], 1).reason == KedaReason.COOLDOWN
    assert state.poll(120.0, [0], 1).scale_to == 0


def test_a_new_item_during_cooldown_restarts_it() -> None:
    state = ScaledObjectState(spec(cooldown_period_s=60), created_at=0.0)
    state.poll(0.0, [1], 1)
    state.poll(30.0, [0], 1)
    state.poll(60.0, [1], 1)  # active again: lastActiveTime = 60
    assert state.poll(90.0, [0], 1).reason == KedaReason.COOLDOWN
    assert state.poll(120.0, [0], 1).scale_to == 0


def test_never_active_objects_wait_initial_cooldown_period_after_creation() -> None:
    # No lastActiveTime: creationTimestamp + initialCooldownPeriod.
    state = ScaledObjectState(spec(initial_cooldown_period_s=120), created_at=0.0)
    for now in (0.0, 30.0, 60.0, 90.0):
        assert state.poll(now, [0], 2).reason == KedaReason.COOLDOWN
    assert state.poll(120.0, [0], 2).scale_to == 0
    at_once = ScaledObjectState(spec(), created_at=0.0)
    assert at_once.poll(0.0, [0], 2).scale_to == 0


def test_with_min_replica_count_keda_never_scales_in_and_the_hpa_keeps_the_minimum() -> None:
    state = ScaledObjectState(spec(min_replica_count=2, max_replica_count=4), created_at=0.0)
    decision = state.poll(0.0, [0], 3)
    assert (decision.scale_to, decision.reason, decision.hpa_enabled) == (None, KedaReason.NOT_ACTIVE, True)


def test_below_min_replica_count_an_inactive_object_is_raised_to_it() -> None:
    state = ScaledObjectState(spec(min_replica_count=2, max_replica_count=4), created_at=0.0)
    decision = state.poll(0.0, [0], 0)
    assert (decision.scale_to, decision.reason) == (2, KedaReason.SET_TO_MIN)


def test_idle_replica_count_is_the_scale_in_target_and_activation_jumps_to_min() -> None:
    # getIdleOrMinimumReplicaCount; scaleFromZeroOrIdle when idle mode and current < min.
    state = ScaledObjectState(
        spec(min_replica_count=2, max_replica_count=5, idle_replica_count=0, cooldown_period_s=60),
        created_at=0.0,
    )
    assert state.poll(0.0, [1], 0).scale_to == 2
    assert state.poll(30.0, [1], 1).scale_to == 2  # idle mode: below min counts as idle
    assert state.poll(60.0, [0], 3).reason == KedaReason.COOLDOWN
    assert state.poll(90.0, [0], 3).scale_to == 0
    assert state.poll(120.0, [0], 0).reason == KedaReason.NOT_ACTIVE


# --- errors and fallback -----------------------------------------------------------------------


def test_a_failing_trigger_alongside_an_active_one_changes_nothing_and_freezes_last_active_time() -> None:
    state = ScaledObjectState(spec(redis(), redis()), created_at=0.0)
    state.poll(0.0, [1, 1], 1)
    decision = state.poll(30.0, [None, 4], 2)
    assert (decision.active, decision.error, decision.scale_to) == (True, True, None)
    assert decision.reason == KedaReason.PARTIAL_TRIGGER_ERROR
    assert state.last_active_at == 0.0
    # From zero it still activates (the first switch case wins).
    assert state.poll(60.0, [None, 4], 0).scale_to == 1


def test_without_fallback_a_failing_trigger_blocks_scale_to_zero() -> None:
    state = ScaledObjectState(spec(cooldown_period_s=30), created_at=0.0)
    state.poll(0.0, [1], 1)
    for now in (30.0, 60.0, 90.0):
        decision = state.poll(now, [None], 1)
        assert (decision.scale_to, decision.reason) == (None, KedaReason.TRIGGER_ERROR)


def test_with_fallback_replicas_keda_does_not_scale_to_zero_on_errors() -> None:
    state = ScaledObjectState(spec(cooldown_period_s=30, fallback=Fallback(3, 2)), created_at=0.0)
    state.poll(0.0, [1], 1)
    assert state.poll(60.0, [None], 1).reason == KedaReason.FALLBACK
    zero_fallback = ScaledObjectState(spec(cooldown_period_s=30, fallback=Fallback(3, 0)), created_at=0.0)
    zero_fallback.poll(0.0, [1], 1)
    assert zero_fallback.poll(60.0, [None], 1).scale_to == 0


def test_fallback_reports_target_times_replicas_once_failures_exceed_the_threshold() -> None:
    # GetMetricsWithFallback: NumberOfFailures > FailureThreshold -> target * replicas.
    so = spec(redis(list_length=5), fallback=Fallback(failure_threshold=3, replicas=6))
    tracker = FallbackTracker(so)
    metric = hpa_inputs(so).metrics[0]
    assert [tracker.metric_value(0, None, current_replicas=2) for _ in range(3)] == [None, None, None]
    value = tracker.metric_value(0, None, current_replicas=2)
    assert value == 30.0 and tracker.failures(0) == 4
    # The HPA's External AverageValue proposal: ceil(30 / 5).
    proposal = ReplicaCalculator().get_external_per_pod_metric_replicas(
        2, metric.target_milli, metric.name, [to_milli(value)]
    )
    assert proposal.replicas == 6
    assert tracker.metric_value(0, 7.0, current_replicas=6) == 7.0 and tracker.failures(0) == 0


@pytest.mark.parametrize(
    ("behavior", "current", "replicas"),
    [
        ("static", 9, 6),
        ("currentReplicas", 9, 9),
        ("currentReplicasIfHigher", 9, 9),
        ("currentReplicasIfHigher", 2, 6),
        ("currentReplicasIfLower", 9, 6),
        ("currentReplicasIfLower", 2, 2),
    ],
)
def test_fallback_behaviors_pick_the_replicas_to_report(
    behavior: FallbackBehavior, current: int, replicas: int
) -> None:
    tracker = FallbackTracker(spec(redis(list_length=5), fallback=Fallback(0, 6, behavior)))
    assert tracker.metric_value(0, None, current_replicas=current) == 5.0 * replicas


def test_without_fallback_a_failing_metric_is_unavailable_to_the_hpa() -> None:
    tracker = FallbackTracker(spec())
    assert [tracker.metric_value(0, None, 1) for _ in range(5)] == [None] * 5


def test_fallback_keeps_a_fractional_target() -> None:
    # doFallback (KEDA v2.18+): int64(AverageValue.AsApproximateFloat64() * 1000 * replicas) milli;
    # before v2.18 the target was truncated to an integer first, and this reported 0.
    trigger = ScaleTrigger(PrometheusScaler("s", "sum(queue_length)", threshold=0.5))
    tracker = FallbackTracker(spec(trigger, fallback=Fallback(0, 4)))
    assert tracker.metric_value(0, None, 1) == 2.0


def test_fallback_of_a_value_trigger_divides_the_replicas_by_the_ready_replicas() -> None:
    # doFallback: for a Value target, replicas /= readyReplicas; none ready -> the fallback fails.
    trigger = ScaleTrigger(RedisListScaler("train:jobs", 5), metric_type="Value")
    tracker = FallbackTracker(spec(trigger, fallback=Fallback(0, 6)))
    assert tracker.metric_value(0, None, current_replicas=2, ready_replicas=3) == 10.0
    assert tracker.metric_value(0, None, current_replicas=2, ready_replicas=0) is None


def test_without_fallback_the_health_status_is_not_tracked() -> None:
    # GetMetricsWithFallback: health is only tracked for ScaledObjects with a valid fallback.
    tracker = FallbackTracker(spec())
    tracker.metric_value(0, None, 1)
    assert tracker.failures(0) == 0 and tracker.health(0) is None
    assert tracker.fallback_condition is None


def test_fallback_condition_is_true_only_while_a_trigger_is_past_the_threshold() -> None:
    # updateStatus / fallbackExceededThreshold: some health Failing with failures > failureThreshold.
    tracker = FallbackTracker(spec(redis(list_length=5), redis(list_length=5), fallback=Fallback(1, 3)))
    assert tracker.fallback_condition is None  # Unknown until a read sets it
    tracker.metric_value(0, 4.0, 1)
    tracker.metric_value(1, None, 1)
    assert tracker.fallback_condition is False  # 1 failure, threshold 1
    assert tracker.metric_value(1, None, 1) == 15.0
    assert tracker.fallback_condition is True
    tracker.metric_value(1, 2.0, 1)
    assert tracker.fallback_condition is False


# --- the HPA KEDA creates -----------------------------------------------------------------------


def test_hpa_inputs_follow_kedas_naming_and_bounds() -> None:
    prom = ScaleTrigger(PrometheusScaler("http://prom:9090", "queue_length", 100.5), metric_type="Value")
    so = spec(redis(), prom, min_replica_count=0, max_replica_count=4, hpa_behavior={"scaleUp": {}})
    inputs = hpa_inputs(so)
    assert inputs.name == "keda-hpa-gpu-train-scaler"
    assert inputs.scale_target_ref == ScaleTargetRef("train-worker")
    assert (inputs.min_replicas, inputs.max_replicas) == (1, 4)
    assert inputs.metrics == (
        HpaExternalMetric("s0-redis-train-jobs", "AverageValue", 1000),
        HpaExternalMetric("s1-prometheus", "Value", 100500),
    )
    assert inputs.metrics[1].target == 100.5
    assert inputs.behavior == {"scaleUp": {}}
    assert hpa_inputs(spec(min_replica_count=3, max_replica_count=4)).min_replicas == 3


def test_metric_names_are_normalized_like_keda() -> None:
    assert normalize_string("a/b.c:d%e(f)") == "a-b-c-d-e-f-"
    assert metric_name(2, ScaleTrigger(RedisListScaler("queue.v1/jobs"))) == "s2-redis-queue-v1-jobs"
