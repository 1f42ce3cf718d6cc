"""HPA controller normalization, ported from kubernetes/kubernetes
pkg/controller/podautoscaler/horizontal_test.go, plus seed 004's scale-up and a bounds property.

Upstream builds events and recommendations relative to ``time.Now()``; here ``NOW`` plays that part.
``generateScalingRules(pods, podsPeriod, percent, percentPeriod, stabilizationWindow)`` and
``generateEventsUniformDistribution(events, period)`` are reproduced as :func:`rules` and :func:`uniform`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.autoscaling.hpa_controller import (
    HPA_SYNC_PERIOD_SECONDS,
    HorizontalAutoscaler,
    HPAControllerConfig,
    TimestampedRecommendation,
    TimestampedScaleEvent,
    calculate_scale_down_limit_with_behaviors,
    calculate_scale_up_limit,
    calculate_scale_up_limit_with_scaling_rules,
    convert_desired_replicas_with_behavior_rate,
    convert_desired_replicas_with_rules,
    get_replicas_change_per_period,
    stabilize_recommendation,
    stabilize_recommendation_with_behaviors,
    store_scale_event,
)
from gpufleet.autoscaling.hpa_replicas import HPAPod, PodMetric, Tolerances
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    ExternalMetricSource,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerSpec,
    HPAScalingPolicy,
    HPAScalingRules,
    HPASpecError,
    MetricIdentifier,
    MetricTarget,
    PodsMetricSource,
    ScalingPolicySelect,
    generate_scale_down_rules,
    generate_scale_up_rules,
    milli_value,
)

NOW = 100_000.0
TARGET = CrossVersionObjectReference("Deployment", "app", "apps/v1")
QUEUE = PodsMetricSource(
    MetricIdentifier("queue"), MetricTarget("AverageValue", average_value=milli_value(10))
)


def rules(
    pods: int,
    pods_period: int,
    percent: int,
    percent_period: int,
    window: int,
    select: ScalingPolicySelect = "Max",
) -> HPAScalingRules:
    """``generateScalingRules``."""
    policies: list[HPAScalingPolicy] = []
    if pods:
        policies.append(HPAScalingPolicy("Pods", pods, pods_period))
    if percent:
        policies.append(HPAScalingPolicy("Percent", percent, percent_period))
    return HPAScalingRules(window, select, tuple(policies) if policies else None)


def uniform(changes: Sequence[int], period: int) -> list[TimestampedScaleEvent]:
    """``generateEventsUniformDistribution``: events centred in equal segments of the last ``period``."""
    segment = period / len(changes)
    return [
        TimestampedScaleEvent(change, NOW - int(period - segment * (i + 1) + segment / 2))
        for i, change in enumerate(changes)
    ]


def spec(
    min_replicas: int = 1,
    max_replicas: int = 1000,
    behavior: HorizontalPodAutoscalerBehavior | None = None,
    metrics: tuple[PodsMetricSource | ExternalMetricSource, ...] = (QUEUE,),
) -> HorizontalPodAutoscalerSpec:
    return HorizontalPodAutoscalerSpec(TARGET, max_replicas, min_replicas, metrics, behavior)


# --- rate limits with behavior ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "up_events", "down_events", "min_r", "max_r", "up", "down", "current", "desired", "expected"),
    [
        (
            "maxReplicas is the limit because maxReplicas < scaleUpLimit",
            [],
            [],
            1,
            10,
            None,
            None,
            20,
            1000,
            (10, "TooManyReplicas"),
        ),
        (
            "prenormalized desired replicas < minReplicas",
            [],
            [],
            2,
            8,
            None,
            None,
            3,
            1,
            (2, "TooFewReplicas"),
        ),
        ("scaleUp with default behavior", [], [], 1, 1000, None, None, 10, 50, (20, "ScaleUpLimit")),
        (
            "scaleUp with pods policy larger than percent policy",
            [],
            [],
            1,
            1000,
            rules(100, 60, 100, 60, 0),
            None,
            10,
            500,
            (110, "ScaleUpLimit"),
        ),
        (
            "scaleUp with percent policy larger than pods policy",
            [],
            [],
            1,
            1000,
            rules(2, 60, 100, 60, 0),
            None,
            10,
            500,
            (20, "ScaleUpLimit"),
        ),
        (
            "scaleUp with pod policy limitation",
            [],
            [],
            1,
            1000,
            rules(30, 60, 0, 0, 0),
            None,
            10,
            50,
            (40, "ScaleUpLimit"),
        ),
        (
            "scaleUp with percent policy limitation",
            [],
            [],
            1,
            1000,
            rules(0, 0, 200, 60, 0),
            None,
            10,
            50,
            (30, "ScaleUpLimit"),
        ),
        (
            "scaleDown with percent policy larger than pod policy",
            [],
            [],
            1,
            1000,
            None,
            rules(20, 60, 1, 60, 300),
            100,
            2,
            (80, "ScaleDownLimit"),
        ),
        (
            "scaleDown with pod policy larger than percent policy",
            [],
            [],
            1,
            1000,
            None,
            rules(2, 60, 1, 60, 300),
            100,
            2,
            (98, "ScaleDownLimit"),
        ),
        (
            "scaleDown with spec MinReplicas limitation with large pod policy",
            [],
            [],
            1,
            1000,
            None,
            rules(100, 60, 0, 0, 300),
            10,
            0,
            (1, "TooFewReplicas"),
        ),
        (
            "scaleDown with pod policy limitation",
            [],
            [],
            1,
            1000,
            None,
            rules(5, 60, 0, 0, 300),
            10,
            2,
            (5, "ScaleDownLimit"),
        ),
        (
            "scaleUp with pod policy and previous scale up events",
            uniform([1, 5, 9], 120),
            [],
            1,
            1000,
            rules(150, 120, 0, 0, 0),
            None,
            100,
            500,
            (235, "ScaleUpLimit"),
        ),
        (
            "scaleUp with percent policy and previous scale up events",
            uniform([1, 5, 9], 120),
            [],
            1,
            1000,
            rules(0, 0, 200, 120, 0),
            None,
            100,
            500,
            (255, "ScaleUpLimit"),
        ),
        (
            "scaleUp with percent policy and previous scale up and down events",
            uniform([4], 120),
            uniform([2], 120),
            1,
            1000,
            rules(0, 0, 300, 300, 0),
            None,
            6,
            24,
            (16, "ScaleUpLimit"),
        ),
        (
            "scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up "
            "events",
            uniform([1, 5, 9], 120),
            [],
            1,
            1000,
            rules(5, 120, 0, 0, 0),
            None,
            100,
            500,
            (100, "ScaleUpLimit"),
        ),
        (
            "scaleDown with percent policy limitation and previous events",
            [],
            uniform([2, 4, 6], 120),
            1,
            1000,
            None,
            rules(0, 0, 50, 120, 300),
            100,
            0,
            (56, "ScaleDownLimit"),
        ),
        (
            "scaleDown with percent policy and previous scale up and down events",
            uniform([2], 120),
            uniform([4], 120),
            1,
            1000,
            None,
            rules(0, 0, 50, 180, 0),
            10,
            1,
            (6, "ScaleDownLimit"),
        ),
        (
            "scaleDown with previous events preventing further scale down",
            [],
            uniform([10, 10, 10], 120),
            1,
            1000,
            None,
            rules(0, 0, 10, 120, 300),
            100,
            0,
            (100, "ScaleDownLimit"),
        ),
        (
            "scaleDown with with previous events still allowing more scale down",
            [],
            uniform([10, 10, 10], 120),
            1,
            1000,
            None,
            rules(0, 0, 1000, 120, 300),
            10,
            5,
            (5, "DesiredWithinRange"),
        ),
    ],
)
def test_scaling_with_rules(
    name: str,
    up_events: list[TimestampedScaleEvent],
    down_events: list[TimestampedScaleEvent],
    min_r: int,
    max_r: int,
    up: HPAScalingRules | None,
    down: HPAScalingRules | None,
    current: int,
    desired: int,
    expected: tuple[int, str],
) -> None:
    """TestScalingWithRules: ``convertDesiredReplicasWithBehaviorRate`` with Pods vs Percent policies,
    selectPolicy Max, min/max replicas and past scale events."""
    result = convert_desired_replicas_with_behavior_rate(
        current,
        desired,
        min_r,
        max_r,
        generate_scale_up_rules(up),
        generate_scale_down_rules(down),
        up_events,
        down_events,
        NOW,
    )
    assert result == expected, name


def test_calculate_limits_with_min_select_policy() -> None:
    """TestCalculateScaleUpLimitWithScalingRules and TestCalculateScaleDownLimitWithBehaviors:
    selectPolicy Min picks the smallest change (Pods 2 vs 50 % per 60 s)."""
    min_rules = HPAScalingRules(
        300, "Min", (HPAScalingPolicy("Pods", 2, 60), HPAScalingPolicy("Percent", 50, 60))
    )
    assert calculate_scale_up_limit_with_scaling_rules(1, [], [], min_rules, NOW) == 2
    assert calculate_scale_down_limit_with_behaviors(5, [], [], min_rules, NOW) == 3


def test_disabled_select_policy_freezes_the_direction() -> None:
    """calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors with selectPolicy
    Disabled: the limit is the current count, so that direction never moves."""
    disabled = rules(100, 15, 100, 15, 0, select="Disabled")
    assert calculate_scale_up_limit_with_scaling_rules(5, [], [], disabled, NOW) == 5
    assert calculate_scale_down_limit_with_behaviors(5, [], [], disabled, NOW) == 5
    up_only = spec(
        behavior=HorizontalPodAutoscalerBehavior(scale_down=rules(100, 15, 0, 0, 0, select="Disabled"))
    )
    hpa = HorizontalAutoscaler(up_only)
    assert hpa.sync(NOW, 5, 1) == 5
    assert hpa.sync(NOW + 15, 5, 9) == 9


def test_store_scale_events() -> None:
    """TestStoreScaleEvents ("one outdated entry to be replaced with behavior", "replace one entry, use
    policies with different periods", "two entries, both actual")."""
    events = [TimestampedScaleEvent(7, NOW - 61)]
    store_scale_event(events, rules(10, 60, 100, 60, 0), 5, NOW)
    assert [(e.replica_change, e.outdated) for e in events] == [(5, False)]

    events = [
        TimestampedScaleEvent(8, NOW - 29),
        TimestampedScaleEvent(6, NOW - 59),
        TimestampedScaleEvent(7, NOW - 61),
        TimestampedScaleEvent(9, NOW - 61),
    ]
    assert get_replicas_change_per_period(60, events, NOW) == 14
    store_scale_event(events, rules(10, 60, 100, 30, 0), 5, NOW)
    assert [(e.replica_change, e.outdated) for e in events] == [(8, False), (6, False), (7, True), (5, False)]

    events = [TimestampedScaleEvent(7, NOW - 58), TimestampedScaleEvent(6, NOW - 59)]
    assert get_replicas_change_per_period(60, events, NOW) == 13
    store_scale_event(events, rules(10, 120, 100, 30, 0), 5, NOW)
    assert [e.replica_change for e in events] == [7, 6, 5]


# --- stabilization -----------------------------------------------------------------------------------


def recs(*pairs: tuple[int, float]) -> list[TimestampedRecommendation]:
    return [TimestampedRecommendation(value, NOW - ago) for value, ago in pairs]


@pytest.mark.parametrize(
    ("name", "history", "desired", "expected", "log_length"),
    [
        ("empty log", [], 5, 5, 1),
        ("stabilize", recs((4, 120), (5, 60)), 3, 5, 3),
        ("no stabilize", recs((1, 120), (2, 60)), 3, 3, 3),
        ("no stabilize - old recommendations", recs((10, 600), (9, 540)), 3, 3, 2),
        ("stabilize - old recommendations", recs((10, 600), (4, 60), (5, 120), (9, 540)), 3, 5, 4),
    ],
)
def test_normalize_desired_replicas(
    name: str, history: list[TimestampedRecommendation], desired: int, expected: int, log_length: int
) -> None:
    """TestNormalizeDesiredReplicas: the legacy path keeps the highest recommendation of the last 5 min and
    reuses an expired slot."""
    assert stabilize_recommendation(history, NOW, desired, 300.0) == expected, name
    assert len(history) == log_length, name


@pytest.mark.parametrize(
    ("name", "history", "current", "desired", "up_window", "down_window", "expected", "stored"),
    [
        ("empty recommendations for scaling down", [], 100, 5, 0, 0, 5, [5]),
        ("simple scale down stabilization", recs((4, 120), (5, 60)), 100, 3, 0, 180, 5, [4, 5, 3]),
        ("simple scale up stabilization", recs((4, 120), (5, 60)), 1, 7, 300, 0, 4, [4, 5, 7]),
        ("no scale down stabilization", recs((1, 120), (2, 60)), 100, 3, 300, 0, 3, [1, 2, 3]),
        ("no scale up stabilization", recs((4, 120), (5, 60)), 1, 3, 0, 300, 3, [4, 5, 3]),
        (
            "no scale down stabilization, reuse recommendation element",
            recs((10, 600), (9, 540)),
            100,
            3,
            0,
            0,
            3,
            [10, 3],
        ),
        (
            "scale down stabilization, reuse one of obsolete recommendation element",
            recs((10, 600), (4, 60), (5, 120), (9, 540)),
            100,
            3,
            0,
            180,
            5,
            [10, 4, 5, 3],
        ),
        (
            "scale up stabilization, reuse one of obsolete recommendation element",
            recs((10, 6000), (6, 60), (5, 120), (9, 180)),
            1,
            100,
            300,
            0,
            5,
            [100, 6, 5, 9],
        ),
        (
            "scale up and down stabilization, do not scale up when prenormalized rec goes down",
            recs((2, 6000), (3, 180)),
            2,
            1,
            300,
            300,
            2,
            None,
        ),
        (
            "scale up and down stabilization, do not scale down when prenormalized rec goes up",
            recs((2, 6000), (1, 180)),
            2,
            3,
            300,
            300,
            2,
            None,
        ),
    ],
)
def test_normalize_desired_replicas_with_behavior(
    name: str,
    history: list[TimestampedRecommendation],
    current: int,
    desired: int,
    up_window: int,
    down_window: int,
    expected: int,
    stored: list[int] | None,
) -> None:
    """TestNormalizeDesiredReplicasWithBehavior: stabilization windows in both directions; the current
    count is clamped between the scale-up window's lowest and the scale-down window's highest
    recommendation."""
    result, _ = stabilize_recommendation_with_behaviors(
        history, NOW, current, desired, up_window, down_window
    )
    assert result == expected, name
    if stored is not None:
        assert [r.recommendation for r in history] == stored, name


def test_scale_down_stabilization_window_through_syncs() -> None:
    """The default 300 s scale-down window with behavior (scaleDown window unset -> controller flag):
    a drop in demand at t=15 takes effect once the t=0 recommendations of 10 are 300 s old."""
    hpa = HorizontalAutoscaler(spec(behavior=HorizontalPodAutoscalerBehavior()))
    assert hpa.sync(0.0, 10, 10) == 10
    assert hpa.sync(15.0, 10, 4) == 10
    decision = hpa.decide(285.0, 10, 4)
    assert (decision.desired_replicas, decision.able_to_scale) == (10, "ScaleDownStabilized")
    assert hpa.sync(299.0, 10, 4) == 10
    assert hpa.sync(300.0, 10, 4) == 4  # recommendations exactly at the cutoff no longer count


def test_scale_up_stabilization_window_through_syncs() -> None:
    """A 60 s scaleUp window: the scale-up follows the lowest recommendation of the last minute."""
    behavior = HorizontalPodAutoscalerBehavior(scale_up=HPAScalingRules(stabilization_window_seconds=60))
    hpa = HorizontalAutoscaler(spec(behavior=behavior))
    assert hpa.sync(0.0, 2, 2) == 2
    assert hpa.sync(15.0, 2, 6) == 2  # the t=0 recommendation (2) is within the window
    assert hpa.sync(30.0, 2, 8) == 2
    assert hpa.sync(70.0, 2, 8) == 6  # t=0 has left the window; the lowest is t=15's 6
    assert hpa.sync(85.0, 6, 8) == 8


# --- legacy path (no behavior) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "desired", "min_r", "max_r", "expected"),
    [
        (5, 7, 3, 8, (7, "DesiredWithinRange")),
        (3, 1, 2, 8, (2, "TooFewReplicas")),
        (1, 0, 0, 10, (0, "DesiredWithinRange")),
        (20, 1000, 1, 10, (10, "TooManyReplicas")),
        (3, 1000, 1, 2000, (6, "ScaleUpLimit")),
    ],
)
def test_convert_desired_replicas_with_rules(
    current: int, desired: int, min_r: int, max_r: int, expected: tuple[int, str]
) -> None:
    """TestConvertDesiredReplicasWithRules; the scale-up limit is ``max(2 × current, 4)`` (upstream's test
    raises the factor to 8; production is 2, so 3 -> 6)."""
    assert convert_desired_replicas_with_rules(current, desired, min_r, max_r) == expected
    assert calculate_scale_up_limit(3) == 6
    assert calculate_scale_up_limit(1) == 4


def test_legacy_path_limits_each_sync_and_stabilizes_scale_down() -> None:
    """normalizeDesiredReplicas without behavior: +max(2×, 4) per sync regardless of time, and 300 s
    downscale stabilization (``--horizontal-pod-autoscaler-downscale-stabilization``)."""
    hpa = HorizontalAutoscaler(spec())
    assert hpa.sync(0.0, 2, 50) == 4
    assert hpa.sync(1.0, 4, 50) == 8
    assert hpa.sync(2.0, 8, 50) == 16
    # Legacy stabilization takes the highest recommendation of the last 5 min in both directions, so a
    # drop to 5 right after recommending 50 still scales up, to the per-sync limit.
    assert hpa.sync(3.0, 16, 5) == 32
    assert hpa.sync(303.0, 32, 5) == 5
    assert hpa.scale_up_events == [] and hpa.scale_down_events == []


# --- reconcileAutoscaler -----------------------------------------------------------------------------


def test_reconcile_bounds_and_zero() -> None:
    """TestScaleRCImmediately ("scale up to min when below min replicas", "scale down to max when above max
    replicas") and scaling disabled when the target has zero replicas (minReplicas != 0)."""
    hpa = HorizontalAutoscaler(spec(min_replicas=2, max_replicas=5))
    assert hpa.sync(NOW, 1, None) == 2
    assert hpa.sync(NOW, 6, None) == 5
    decision = hpa.decide(NOW, 0, 3)
    assert (decision.desired_replicas, decision.rescale, decision.reason) == (0, False, "ScalingDisabled")
    assert hpa.decide(NOW, 3, None).reason == "FailedComputeMetricsReplicas"
    assert hpa.sync(NOW, 3, None) == 3


def test_scale_to_zero_needs_the_gate_and_an_object_or_external_metric() -> None:
    """validation.go (minReplicas lower bound 1 without HPAScaleToZero; "must specify at least one Object or
    External metric to support scaling to zero replicas") and the controller from/to zero."""
    lag = ExternalMetricSource(MetricIdentifier("lag"), MetricTarget("Value", value=1000))
    with pytest.raises(HPASpecError, match="must be greater than or equal to 1"):
        HorizontalAutoscaler(spec(min_replicas=0, metrics=(lag,)))
    gate = HPAControllerConfig(hpa_scale_to_zero=True)
    with pytest.raises(HPASpecError, match="at least one Object or External metric"):
        HorizontalAutoscaler(spec(min_replicas=0), gate)
    hpa = HorizontalAutoscaler(spec(min_replicas=0, metrics=(lag,)), gate)
    pods = [HPAPod("p0")]
    assert (
        hpa.reconcile(0.0, spec_replicas=1, status_replicas=1, pods=pods, observations=[[0]]).desired_replicas
        == 1
    )
    assert (
        hpa.reconcile(
            301.0, spec_replicas=1, status_replicas=1, pods=pods, observations=[[0]]
        ).desired_replicas
        == 0
    )
    from_zero = hpa.reconcile(316.0, spec_replicas=0, status_replicas=0, pods=[], observations=[[2500]])
    assert from_zero.desired_replicas == 3


def test_configurable_tolerance_gate() -> None:
    """tolerancesForHpa: behavior tolerances only count with HPAConfigurableTolerance (alpha, off in 1.34)."""
    behavior = HorizontalPodAutoscalerBehavior(
        scale_up=HPAScalingRules(tolerance=0.01), scale_down=HPAScalingRules(tolerance=0.5)
    )
    assert HPAControllerConfig().tolerances_for(spec(behavior=behavior)) == Tolerances(0.1, 0.1)
    gated = HPAControllerConfig(hpa_configurable_tolerance=True)
    assert gated.tolerances_for(spec(behavior=behavior)) == Tolerances(scale_down=0.5, scale_up=0.01)


# --- seed 004 ----------------------------------------------------------------------------------------


def queue_sync(hpa: HorizontalAutoscaler, now: float, replicas: int, total_queue: int) -> int:
    """Reconcile with a queue of ``total_queue`` spread evenly over ``replicas`` Ready pods."""
    pods = [HPAPod(f"worker-{i}") for i in range(replicas)]
    per_pod = milli_value(total_queue) // replicas
    observation = {pod.name: PodMetric(per_pod, now) for pod in pods}
    decision = hpa.reconcile(
        now, spec_replicas=replicas, status_replicas=replicas, pods=pods, observations=[observation]
    )
    return decision.desired_replicas


def test_seed_004_default_behavior_reaches_12_over_two_syncs() -> None:
    """Seed 004: 4 replicas, 30 queued per replica, target 10 -> the calculation says 12. With the default
    behavior (``behavior: {}``: scale-up max(+100 %, +4 pods) per 15 s) the first sync goes to 8; the next
    sync reaches 12 once the first scale-up event has left its 15 s period (events strictly newer than
    ``now - 15 s`` count), i.e. at the regular 15 s sync; a sync 14.9 s after the first still stops at 8."""
    hpa = HorizontalAutoscaler(spec(behavior=HorizontalPodAutoscalerBehavior()))
    assert queue_sync(hpa, 0.0, 4, 120) == 8
    assert queue_sync(hpa, HPA_SYNC_PERIOD_SECONDS, 8, 120) == 12
    assert queue_sync(hpa, 2 * HPA_SYNC_PERIOD_SECONDS, 12, 120) == 12

    early = HorizontalAutoscaler(spec(behavior=HorizontalPodAutoscalerBehavior()))
    assert queue_sync(early, 0.0, 4, 120) == 8
    assert queue_sync(early, 14.9, 8, 120) == 8
    assert queue_sync(early, 15.0, 8, 120) == 12


def test_seed_004_without_behavior_uses_the_legacy_limit() -> None:
    """Seed 004 with ``spec.behavior`` unset (the common case): the legacy path, not the default
    policies, applies: max(2 × 4, 4) = 8, then 12 at the next sync whenever it comes."""
    hpa = HorizontalAutoscaler(spec())
    assert queue_sync(hpa, 0.0, 4, 120) == 8
    assert queue_sync(hpa, 1.0, 8, 120) == 12


# --- property ----------------------------------------------------------------------------------------

policies = st.lists(
    st.builds(
        HPAScalingPolicy, st.sampled_from(["Pods", "Percent"]), st.integers(1, 300), st.integers(1, 120)
    ),
    min_size=1,
    max_size=3,
).map(tuple)
scaling_rules = st.none() | st.builds(
    HPAScalingRules,
    st.none() | st.integers(0, 600),
    st.none() | st.sampled_from(["Max", "Min", "Disabled"]),
    st.none() | policies,
)
behaviors = st.none() | st.builds(HorizontalPodAutoscalerBehavior, scaling_rules, scaling_rules)


@settings(max_examples=200, deadline=None)
@given(
    bounds=st.tuples(st.integers(1, 40), st.integers(0, 40)).map(lambda b: (b[0], b[0] + b[1])),
    behavior=behaviors,
    start=st.integers(1, 100),
    steps=st.lists(st.tuples(st.integers(0, 120), st.none() | st.integers(0, 200)), min_size=1, max_size=25),
)
def test_result_always_within_min_max(
    bounds: tuple[int, int],
    behavior: HorizontalPodAutoscalerBehavior | None,
    start: int,
    steps: list[tuple[int, int | None]],
) -> None:
    """Whatever the metrics propose, each sync of a target with replicas lands in [minReplicas,
    maxReplicas] (the closed loop feeds each result back as the next current count)."""
    min_r, max_r = bounds
    hpa = HorizontalAutoscaler(spec(min_replicas=min_r, max_replicas=max_r, behavior=behavior))
    now, current = 0.0, start
    for dt, proposal in steps:
        now += dt
        current = hpa.sync(now, current, proposal)
        assert min_r <= current <= max_r
