"""kube-controller-manager's horizontal controller tests: the normalisation and behaviour tables.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/podautoscaler/horizontal_test.go``. The tables
of ``TestConvertDesiredReplicasWithRules``, ``TestCalculateScaleUpLimitWithScalingRules``,
``TestCalculateScaleDownLimitWithBehaviors``, ``TestNormalizeDesiredReplicas``, ``TestScalingWithRules``,
``TestStoreScaleEvents`` and ``TestNormalizeDesiredReplicasWithBehavior`` are ported row by row (their
Go struct literals, field by field), run against ``gpufleet.autoscaling.hpa_controller``'s functions of
the same names. The ``testCase``-driven tests (a CPU Utilization target and/or one Pods, Object or
External metric) are run as one ``HorizontalAutoscaler.reconcile`` over the pods and samples that
``prepareTestClient``'s fakes give, their ``expectedDesiredReplicas`` and status conditions compared as
``runTest`` does (type, status and reason in order: ``expectedConditions``, ``statusOk`` where a case sets
none, ``statusOkWithOverrides``), and for the ``verifyEvents`` cases (``TestEventCreated``,
``TestEventNotCreated``) the events; the monitor labels are not compared.
``TestConfigurableTolerance``, ``TestConditionFailedGetMetrics``, ``TestAvoidUnnecessaryUpdates``,
``TestMultipleHPAs`` and ``TestBuildQuantity`` are ported as their own tests; the cases that need what
gpufleet has no counterpart for (a failing or conflicting API client, a scale without a valid selector,
selectors overlapping on labels) are skipped with that reason.
"""

from __future__ import annotations

from typing import Any

import pytest
from autoscaling_builders import (
    CONTROLLER_CONFIG,
    COOL,
    HOT,
    NOW,
    ControllerTestCase,
    controller_case,
    ev,
    generate_events_uniform_distribution,
    generate_scaling_rules,
    q,
    rec,
    reconcile_controller_case,
)

from gpufleet.autoscaling.hpa_controller import (
    HorizontalAutoscaler,
    ScaleDecision,
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
from gpufleet.autoscaling.hpa_replicas import HPAPod, PodMetric
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    ExternalMetricSource,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerSpec,
    HPAScalingPolicy,
    HPAScalingRules,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
    generate_scale_down_rules,
    generate_scale_up_rules,
    milli_quantity,
)

# TestConvertDesiredReplicasWithRules: (annotation, current, desired, min, max, converted, condition).
CONVERT_WITH_RULES = [
    ("prenormalized desired replicas within range", 5, 7, 3, 8, 7, "DesiredWithinRange"),
    ("prenormalized desired replicas < minReplicas", 3, 1, 2, 8, 2, "TooFewReplicas"),
    ("prenormalized desired zeroed replicas within range", 1, 0, 0, 10, 0, "DesiredWithinRange"),
    ("maxReplicas is the limit because maxReplicas < scaleUpLimit", 20, 1000, 1, 10, 10, "TooManyReplicas"),
    (
        "scaleUpLimit is the limit because scaleUpLimit < maxReplicas",
        3,
        1000,
        1,
        2000,
        calculate_scale_up_limit(3),
        "ScaleUpLimit",
    ),
]


@pytest.mark.parametrize(
    ("current", "desired", "minimum", "maximum", "converted", "condition"),
    [pytest.param(*r[1:], id=f"TestConvertDesiredReplicasWithRules/{r[0]}") for r in CONVERT_WITH_RULES],
)
def test_convert_desired_replicas_with_rules(
    current: int, desired: int, minimum: int, maximum: int, converted: int, condition: str
) -> None:
    assert convert_desired_replicas_with_rules(current, desired, minimum, maximum) == (converted, condition)


_MIN_SELECT = HPAScalingRules(
    300, "Min", (HPAScalingPolicy("Pods", 2, 60), HPAScalingPolicy("Percent", 50, 60))
)


def test_calculate_scale_up_limit_with_scaling_rules() -> None:
    """TestCalculateScaleUpLimitWithScalingRules: selectPolicy Min of +2 pods and +50 % from 1 replica."""
    assert calculate_scale_up_limit_with_scaling_rules(1, [], [], _MIN_SELECT, NOW) == 2


def test_calculate_scale_down_limit_with_behaviors() -> None:
    """TestCalculateScaleDownLimitWithBehaviors: selectPolicy Min of -2 pods and -50 % from 5 replicas."""
    assert calculate_scale_down_limit_with_behaviors(5, [], [], _MIN_SELECT, NOW) == 3


# TestNormalizeDesiredReplicas: (name, recommendations, prenormalized, stabilized, log length); window 5 min.
NORMALIZE = [
    ("empty log", [], 5, 5, 1),
    ("stabilize", [rec(4, NOW - 120), rec(5, NOW - 60)], 3, 5, 3),
    ("no stabilize", [rec(1, NOW - 120), rec(2, NOW - 60)], 3, 3, 3),
    ("no stabilize - old recommendations", [rec(10, NOW - 600), rec(9, NOW - 540)], 3, 3, 2),
    (
        "stabilize - old recommendations",
        [rec(10, NOW - 600), rec(4, NOW - 60), rec(5, NOW - 120), rec(9, NOW - 540)],
        3,
        5,
        4,
    ),
]


@pytest.mark.parametrize(
    ("recommendations", "desired", "stabilized", "log_length"),
    [pytest.param(*row[1:], id=f"TestNormalizeDesiredReplicas/{row[0]}") for row in NORMALIZE],
)
def test_normalize_desired_replicas(
    recommendations: list[TimestampedRecommendation], desired: int, stabilized: int, log_length: int
) -> None:
    history = list(recommendations)
    assert stabilize_recommendation(history, NOW, desired, 300.0) == stabilized
    assert len(history) == log_length


SCALING_WITH_RULES: list[dict[str, Any]] = [
    dict(
        currentReplicas=5,
        prenormalizedDesiredReplicas=7,
        specMinReplicas=3,
        specMaxReplicas=8,
        expectedReplicas=7,
        expectedCondition="DesiredWithinRange",
        name="prenormalized desired replicas within range",
    ),
    dict(
        currentReplicas=3,
        prenormalizedDesiredReplicas=1,
        specMinReplicas=2,
        specMaxReplicas=8,
        expectedReplicas=2,
        expectedCondition="TooFewReplicas",
        name="prenormalized desired replicas < minReplicas",
    ),
    dict(
        currentReplicas=1,
        prenormalizedDesiredReplicas=0,
        specMinReplicas=0,
        specMaxReplicas=10,
        expectedReplicas=0,
        expectedCondition="DesiredWithinRange",
        name="prenormalized desired replicas within range when minReplicas is 0",
    ),
    dict(
        currentReplicas=20,
        prenormalizedDesiredReplicas=1000,
        specMinReplicas=1,
        specMaxReplicas=10,
        expectedReplicas=10,
        expectedCondition="TooManyReplicas",
        name="maxReplicas is the limit because maxReplicas < scaleUpLimit",
    ),
    dict(
        currentReplicas=100,
        prenormalizedDesiredReplicas=1000,
        specMinReplicas=100,
        specMaxReplicas=150,
        expectedReplicas=150,
        expectedCondition="TooManyReplicas",
        name="desired replica count is more than the maximum replica count",
    ),
    dict(
        currentReplicas=3,
        prenormalizedDesiredReplicas=1000,
        specMinReplicas=1,
        specMaxReplicas=2000,
        expectedReplicas=4,
        expectedCondition="ScaleUpLimit",
        scaleUpRules=generate_scaling_rules(0, 0, 1, 60, 0),
        name="scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies",
    ),
    dict(
        currentReplicas=1000,
        prenormalizedDesiredReplicas=3,
        specMinReplicas=3,
        specMaxReplicas=2000,
        scaleDownRules=generate_scaling_rules(20, 60, 0, 0, 0),
        expectedReplicas=980,
        expectedCondition="ScaleDownLimit",
        name="scaleDownLimit is the limit because scaleDownLimit > minReplicas with user defined policies",
        testThis=True,
    ),
    # ScaleUp without PeriodSeconds usage
    dict(
        name="scaleUp with default behavior",
        specMinReplicas=1,
        specMaxReplicas=1000,
        currentReplicas=10,
        prenormalizedDesiredReplicas=50,
        expectedReplicas=20,
        expectedCondition="ScaleUpLimit",
    ),
    dict(
        name="scaleUp with pods policy larger than percent policy",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(100, 60, 100, 60, 0),
        currentReplicas=10,
        prenormalizedDesiredReplicas=500,
        expectedReplicas=110,
        expectedCondition="ScaleUpLimit",
    ),
    dict(
        name="scaleUp with percent policy larger than pods policy",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(2, 60, 100, 60, 0),
        currentReplicas=10,
        prenormalizedDesiredReplicas=500,
        expectedReplicas=20,
        expectedCondition="ScaleUpLimit",
    ),
    dict(
        name="scaleUp with spec MaxReplicas limitation with large pod policy",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(100, 60, 0, 0, 0),
        currentReplicas=10,
        prenormalizedDesiredReplicas=50,
        expectedReplicas=50,
        expectedCondition="DesiredWithinRange",
    ),
    dict(
        name="scaleUp with spec MaxReplicas limitation with large percent policy",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(10000, 60, 0, 0, 0),
        currentReplicas=10,
        prenormalizedDesiredReplicas=50,
        expectedReplicas=50,
        expectedCondition="DesiredWithinRange",
    ),
    dict(
        name="scaleUp with pod policy limitation",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(30, 60, 0, 0, 0),
        currentReplicas=10,
        prenormalizedDesiredReplicas=50,
        expectedReplicas=40,
        expectedCondition="ScaleUpLimit",
    ),
    dict(
        name="scaleUp with percent policy limitation",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(0, 0, 200, 60, 0),
        currentReplicas=10,
        prenormalizedDesiredReplicas=50,
        expectedReplicas=30,
        expectedCondition="ScaleUpLimit",
    ),
    dict(
        name="scaleDown with percent policy larger than pod policy",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(20, 60, 1, 60, 300),
        currentReplicas=100,
        prenormalizedDesiredReplicas=2,
        expectedReplicas=80,
        expectedCondition="ScaleDownLimit",
    ),
    dict(
        name="scaleDown with pod policy larger than percent policy",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(2, 60, 1, 60, 300),
        currentReplicas=100,
        prenormalizedDesiredReplicas=2,
        expectedReplicas=98,
        expectedCondition="ScaleDownLimit",
    ),
    dict(
        name="scaleDown with spec MinReplicas=nil limitation with large pod policy",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(100, 60, 0, 0, 300),
        currentReplicas=10,
        prenormalizedDesiredReplicas=0,
        expectedReplicas=1,
        expectedCondition="TooFewReplicas",
    ),
    dict(
        name="scaleDown with spec MinReplicas limitation with large pod policy",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(100, 60, 0, 0, 300),
        currentReplicas=10,
        prenormalizedDesiredReplicas=0,
        expectedReplicas=1,
        expectedCondition="TooFewReplicas",
    ),
    dict(
        name="scaleDown with spec MinReplicas limitation with large percent policy",
        specMinReplicas=5,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(0, 0, 100, 60, 300),
        currentReplicas=10,
        prenormalizedDesiredReplicas=2,
        expectedReplicas=5,
        expectedCondition="TooFewReplicas",
    ),
    dict(
        name="scaleDown with pod policy limitation",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(5, 60, 0, 0, 300),
        currentReplicas=10,
        prenormalizedDesiredReplicas=2,
        expectedReplicas=5,
        expectedCondition="ScaleDownLimit",
    ),
    dict(
        name="scaleDown with percent policy limitation",
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(0, 0, 50, 60, 300),
        currentReplicas=10,
        prenormalizedDesiredReplicas=5,
        expectedReplicas=5,
        expectedCondition="DesiredWithinRange",
    ),
    dict(
        name="scaleUp with spec MaxReplicas limitation with large pod policy and events",
        scaleUpEvents=generate_events_uniform_distribution([1, 5, 9], 120),
        specMinReplicas=1,
        specMaxReplicas=200,
        scaleUpRules=generate_scaling_rules(300, 60, 0, 0, 0),
        currentReplicas=100,
        prenormalizedDesiredReplicas=500,
        expectedReplicas=200,  # 200 < 100 - 15 + 300
        expectedCondition="TooManyReplicas",
    ),
    dict(
        name="scaleUp with spec MaxReplicas limitation with large percent policy and events",
        scaleUpEvents=generate_events_uniform_distribution([1, 5, 9], 120),
        specMinReplicas=1,
        specMaxReplicas=200,
        scaleUpRules=generate_scaling_rules(0, 0, 10000, 60, 0),
        currentReplicas=100,
        prenormalizedDesiredReplicas=500,
        expectedReplicas=200,
        expectedCondition="TooManyReplicas",
    ),
    dict(
        # corner case for calculating the scaleUpLimit, when we changed pod policy after a lot of scaleUp
        # events: in this case we shouldn't allow scale up, though, the naive formula will suggest that
        # scaleUplimit is less then CurrentReplicas (100-15+5 < 100)
        name="scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up "
        "events",
        scaleUpEvents=generate_events_uniform_distribution([1, 5, 9], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(5, 120, 0, 0, 0),
        currentReplicas=100,
        prenormalizedDesiredReplicas=500,
        expectedReplicas=100,  # 120 seconds ago we had (100 - 15) replicas, NOW the rate.Pods = 5,
        expectedCondition="ScaleUpLimit",
    ),
    dict(
        name="scaleUp with pod policy and previous scale up events",
        scaleUpEvents=generate_events_uniform_distribution([1, 5, 9], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(150, 120, 0, 0, 0),
        currentReplicas=100,
        prenormalizedDesiredReplicas=500,
        expectedReplicas=235,  # 100 - 15 + 150
        expectedCondition="ScaleUpLimit",
    ),
    dict(
        name="scaleUp with percent policy and previous scale up events",
        scaleUpEvents=generate_events_uniform_distribution([1, 5, 9], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(0, 0, 200, 120, 0),
        currentReplicas=100,
        prenormalizedDesiredReplicas=500,
        expectedReplicas=255,  # (100 - 15) + 200%
        expectedCondition="ScaleUpLimit",
    ),
    dict(
        name="scaleUp with percent policy and previous scale up and down events",
        scaleUpEvents=generate_events_uniform_distribution([4], 120),
        scaleDownEvents=generate_events_uniform_distribution([2], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(0, 0, 300, 300, 0),
        currentReplicas=6,
        prenormalizedDesiredReplicas=24,
        expectedReplicas=16,
        expectedCondition="ScaleUpLimit",
    ),
    # ScaleDown with PeriodSeconds usage
    dict(
        name="scaleDown with default policy and previous events",
        scaleDownEvents=generate_events_uniform_distribution([1, 5, 9], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        currentReplicas=10,
        prenormalizedDesiredReplicas=5,
        expectedReplicas=5,  # without scaleDown rate limitations the PeriodSeconds does not influence it
        expectedCondition="DesiredWithinRange",
    ),
    dict(
        name="scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events",
        scaleDownEvents=generate_events_uniform_distribution([1, 5, 9], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(115, 120, 0, 0, 300),
        currentReplicas=100,
        prenormalizedDesiredReplicas=0,
        expectedReplicas=1,
        expectedCondition="TooFewReplicas",
    ),
    dict(
        name="scaleDown with spec MinReplicas limitation with large pod policy and previous events",
        scaleDownEvents=generate_events_uniform_distribution([1, 5, 9], 120),
        specMinReplicas=5,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(130, 120, 0, 0, 300),
        currentReplicas=100,
        prenormalizedDesiredReplicas=0,
        expectedReplicas=5,
        expectedCondition="TooFewReplicas",
    ),
    dict(
        name="scaleDown with spec MinReplicas limitation with large percent policy and previous events",
        scaleDownEvents=generate_events_uniform_distribution([1, 5, 9], 120),
        specMinReplicas=5,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(
            0, 0, 100, 120, 300
        ),  # 100% removal - is always to 0 => limited by MinReplicas
        currentReplicas=100,
        prenormalizedDesiredReplicas=2,
        expectedReplicas=5,
        expectedCondition="TooFewReplicas",
    ),
    dict(
        name="scaleDown with pod policy limitation and previous events",
        scaleDownEvents=generate_events_uniform_distribution([1, 5, 9], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(5, 120, 0, 0, 300),
        currentReplicas=100,
        prenormalizedDesiredReplicas=2,
        expectedReplicas=100,  # 100 + 15 - 5
        expectedCondition="ScaleDownLimit",
    ),
    dict(
        name="scaleDown with percent policy limitation and previous events",
        scaleDownEvents=generate_events_uniform_distribution([2, 4, 6], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(0, 0, 50, 120, 300),
        currentReplicas=100,
        prenormalizedDesiredReplicas=0,
        expectedReplicas=56,  # (100 + 12) - 50%
        expectedCondition="ScaleDownLimit",
    ),
    dict(
        name="scaleDown with percent policy and previous scale up and down events",
        scaleUpEvents=generate_events_uniform_distribution([2], 120),
        scaleDownEvents=generate_events_uniform_distribution([4], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(0, 0, 50, 180, 0),
        currentReplicas=10,
        prenormalizedDesiredReplicas=1,
        expectedReplicas=6,
        expectedCondition="ScaleDownLimit",
    ),
    dict(
        # corner case for calculating the scaleDownLimit, when we changed pod or percent policy after a lot
        # of scaleDown events: in this case we shouldn't allow scale down, though, the naive formula will
        # suggest that scaleDownlimit is more then CurrentReplicas (100+30-10% > 100)
        name="scaleDown with previous events preventing further scale down",
        scaleDownEvents=generate_events_uniform_distribution([10, 10, 10], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(0, 0, 10, 120, 300),
        currentReplicas=100,
        prenormalizedDesiredReplicas=0,
        expectedReplicas=100,  # (100 + 30) - 10% = 117 is more then 100 (currentReplicas), keep 100
        expectedCondition="ScaleDownLimit",
    ),
    dict(
        # corner case, the same as above, but calculation shows that we should go below zero
        name="scaleDown with with previous events still allowing more scale down",
        scaleDownEvents=generate_events_uniform_distribution([10, 10, 10], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(0, 0, 1000, 120, 300),
        currentReplicas=10,
        prenormalizedDesiredReplicas=5,
        expectedReplicas=5,  # (10 + 30) - 1000% = -360 is less than 0 and than 5 (desired by metrics): 5
        expectedCondition="DesiredWithinRange",
    ),
    dict(
        name="check 'outdated' flag for events for one behavior for up",
        scaleUpEvents=generate_events_uniform_distribution([8, 12, 9, 11], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(1000, 60, 0, 0, 0),
        currentReplicas=100,
        prenormalizedDesiredReplicas=200,
        expectedReplicas=200,
        expectedCondition="DesiredWithinRange",
    ),
    dict(
        name="check that events were not marked 'outdated' for two different policies in the behavior for up",
        scaleUpEvents=generate_events_uniform_distribution([8, 12, 9, 11], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(1000, 120, 100, 60, 0),
        currentReplicas=100,
        prenormalizedDesiredReplicas=200,
        expectedReplicas=200,
        expectedCondition="DesiredWithinRange",
    ),
    dict(
        name="check that events were marked 'outdated' for two different policies in the behavior for up",
        scaleUpEvents=generate_events_uniform_distribution([8, 12, 9, 11], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleUpRules=generate_scaling_rules(1000, 30, 100, 60, 0),
        currentReplicas=100,
        prenormalizedDesiredReplicas=200,
        expectedReplicas=200,
        expectedCondition="DesiredWithinRange",
    ),
    dict(
        name="check 'outdated' flag for events for one behavior for down",
        scaleDownEvents=generate_events_uniform_distribution([8, 12, 9, 11], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(1000, 60, 0, 0, 300),
        currentReplicas=100,
        prenormalizedDesiredReplicas=5,
        expectedReplicas=5,
        expectedCondition="DesiredWithinRange",
    ),
    dict(
        name="check that events were not marked 'outdated' for two different policies in the behavior for "
        "down",
        scaleDownEvents=generate_events_uniform_distribution([8, 12, 9, 11], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(1000, 120, 100, 60, 300),
        currentReplicas=100,
        prenormalizedDesiredReplicas=5,
        expectedReplicas=5,
        expectedCondition="DesiredWithinRange",
    ),
    dict(
        name="check that events were marked 'outdated' for two different policies in the behavior for down",
        scaleDownEvents=generate_events_uniform_distribution([8, 12, 9, 11], 120),
        specMinReplicas=1,
        specMaxReplicas=1000,
        scaleDownRules=generate_scaling_rules(1000, 30, 100, 60, 300),
        currentReplicas=100,
        prenormalizedDesiredReplicas=5,
        expectedReplicas=5,
        expectedCondition="DesiredWithinRange",
    ),
]


@pytest.mark.parametrize(
    "tc",
    [
        pytest.param(tc, id=f"TestScalingWithRules/{tc.get('name') or i}")
        for i, tc in enumerate(SCALING_WITH_RULES)
    ],
)
def test_scaling_with_rules(tc: dict[str, Any]) -> None:
    """``convertDesiredReplicasWithBehaviorRate`` with the rules completed by ``GenerateHPAScale*Rules``."""
    replicas, condition = convert_desired_replicas_with_behavior_rate(
        tc["currentReplicas"],
        tc["prenormalizedDesiredReplicas"],
        tc["specMinReplicas"],
        tc["specMaxReplicas"],
        generate_scale_up_rules(tc.get("scaleUpRules")),
        generate_scale_down_rules(tc.get("scaleDownRules")),
        tc.get("scaleUpEvents", []),
        tc.get("scaleDownEvents", []),
        NOW,
    )
    assert (replicas, condition) == (tc["expectedReplicas"], tc["expectedCondition"])


STORE_SCALE_EVENTS: list[dict[str, Any]] = [
    dict(
        name="empty entries with default behavior",
        replicaChange=5,
        prevScaleEvents=[],  # no history -> 0 replica change
        newScaleEvents=[],  # no behavior -> no events are stored
        expectedReplicasChange=0,
    ),
    dict(
        name="empty entries with two-policy-behavior",
        replicaChange=5,
        prevScaleEvents=[],  # no history -> 0 replica change
        newScaleEvents=[ev(5, NOW, False)],
        scalingRules=generate_scaling_rules(10, 60, 100, 60, 0),
        expectedReplicasChange=0,
    ),
    dict(
        name="one outdated entry to be kept untouched without behavior",
        replicaChange=5,
        prevScaleEvents=[
            ev(7, NOW - 61, False),  # outdated event, should be replaced
        ],
        newScaleEvents=[
            ev(7, NOW, False),  # no behavior -> we don't touch stored events
        ],
        expectedReplicasChange=0,
    ),
    dict(
        name="one outdated entry to be replaced with behavior",
        replicaChange=5,
        prevScaleEvents=[
            ev(7, NOW - 61, False),  # outdated event, should be replaced
        ],
        newScaleEvents=[
            ev(5, NOW, False),
        ],
        scalingRules=generate_scaling_rules(10, 60, 100, 60, 0),
        expectedReplicasChange=0,
    ),
    dict(
        name="one actual entry to be not touched with behavior",
        replicaChange=5,
        prevScaleEvents=[
            ev(7, NOW - 58, False),
        ],
        newScaleEvents=[
            ev(7, NOW, False),
            ev(5, NOW, False),
        ],
        scalingRules=generate_scaling_rules(10, 60, 100, 60, 0),
        expectedReplicasChange=7,
    ),
    dict(
        name="two entries, one of them to be replaced",
        replicaChange=5,
        prevScaleEvents=[
            ev(7, NOW - 61, False),  # outdated event, should be replaced
            ev(6, NOW - 59, False),
        ],
        newScaleEvents=[
            ev(5, NOW, False),
            ev(6, NOW, False),
        ],
        scalingRules=generate_scaling_rules(10, 60, 0, 0, 0),
        expectedReplicasChange=6,
    ),
    dict(
        name="replace one entry, use policies with different periods",
        replicaChange=5,
        prevScaleEvents=[
            ev(8, NOW - 29, False),
            ev(6, NOW - 59, False),
            ev(7, NOW - 61, False),  # outdated event, should be marked as outdated
            ev(9, NOW - 61, False),  # outdated event, should be replaced
        ],
        newScaleEvents=[
            ev(8, NOW, False),
            ev(6, NOW, False),
            ev(7, NOW, True),
            ev(5, NOW, False),
        ],
        scalingRules=generate_scaling_rules(10, 60, 100, 30, 0),
        expectedReplicasChange=14,
    ),
    dict(
        name="two entries, both actual",
        replicaChange=5,
        prevScaleEvents=[
            ev(7, NOW - 58, False),
            ev(6, NOW - 59, False),
        ],
        newScaleEvents=[
            ev(7, NOW, False),
            ev(6, NOW, False),
            ev(5, NOW, False),
        ],
        scalingRules=generate_scaling_rules(10, 120, 100, 30, 0),
        expectedReplicasChange=13,
    ),
]


@pytest.mark.parametrize(
    "tc", [pytest.param(tc, id=f"TestStoreScaleEvents/{tc['name']}") for tc in STORE_SCALE_EVENTS]
)
@pytest.mark.parametrize("direction", ["up", "down"])
def test_store_scale_events(tc: dict[str, Any], direction: str) -> None:
    """``storeScaleEvent`` from 10 replicas by ``replicaChange`` up and down; without a behavior the
    controller stores nothing."""
    events: list[TimestampedScaleEvent] = list(tc["prevScaleEvents"])
    assert get_replicas_change_per_period(60, events, NOW) == tc["expectedReplicasChange"]
    rules = tc.get("scalingRules")
    if rules is not None:
        store_scale_event(events, rules, tc["replicaChange"], NOW)
    expected = tc["newScaleEvents"]
    assert [(e.replica_change, e.outdated) for e in events] == [
        (e.replica_change, e.outdated) for e in expected
    ]


NORMALIZE_WITH_BEHAVIOR: list[dict[str, Any]] = [
    dict(
        name="empty recommendations for scaling down",
        key="",
        recommendations=[],
        currentReplicas=100,
        prenormalizedDesiredReplicas=5,
        expectedStabilizedReplicas=5,
        expectedRecommendations=[
            rec(5, NOW),
        ],
    ),
    dict(
        name="simple scale down stabilization",
        key="",
        recommendations=[rec(4, NOW - 120), rec(5, NOW - 60)],
        currentReplicas=100,
        prenormalizedDesiredReplicas=3,
        expectedStabilizedReplicas=5,
        expectedRecommendations=[
            rec(4, NOW),
            rec(5, NOW),
            rec(3, NOW),
        ],
        scaleDownStabilizationWindowSeconds=60 * 3,
    ),
    dict(
        name="simple scale up stabilization",
        key="",
        recommendations=[rec(4, NOW - 120), rec(5, NOW - 60)],
        currentReplicas=1,
        prenormalizedDesiredReplicas=7,
        expectedStabilizedReplicas=4,
        expectedRecommendations=[
            rec(4, NOW),
            rec(5, NOW),
            rec(7, NOW),
        ],
        scaleUpStabilizationWindowSeconds=60 * 5,
    ),
    dict(
        name="no scale down stabilization",
        key="",
        recommendations=[rec(1, NOW - 120), rec(2, NOW - 60)],
        currentReplicas=100,  # to apply scaleDown delay we should have current > desired
        prenormalizedDesiredReplicas=3,
        expectedStabilizedReplicas=3,
        expectedRecommendations=[
            rec(1, NOW),
            rec(2, NOW),
            rec(3, NOW),
        ],
        scaleUpStabilizationWindowSeconds=60 * 5,
    ),
    dict(
        name="no scale up stabilization",
        key="",
        recommendations=[rec(4, NOW - 120), rec(5, NOW - 60)],
        currentReplicas=1,  # to apply scaleDown delay we should have current > desired
        prenormalizedDesiredReplicas=3,
        expectedStabilizedReplicas=3,
        expectedRecommendations=[
            rec(4, NOW),
            rec(5, NOW),
            rec(3, NOW),
        ],
        scaleDownStabilizationWindowSeconds=60 * 5,
    ),
    dict(
        name="no scale down stabilization, reuse recommendation element",
        key="",
        recommendations=[rec(10, NOW - 600), rec(9, NOW - 540)],
        currentReplicas=100,  # to apply scaleDown delay we should have current > desired
        prenormalizedDesiredReplicas=3,
        expectedStabilizedReplicas=3,
        expectedRecommendations=[
            rec(10, NOW),
            rec(3, NOW),
        ],
    ),
    dict(
        name="no scale up stabilization, reuse recommendation element",
        key="",
        recommendations=[rec(10, NOW - 600), rec(9, NOW - 540)],
        currentReplicas=1,
        prenormalizedDesiredReplicas=100,
        expectedStabilizedReplicas=100,
        expectedRecommendations=[
            rec(10, NOW),
            rec(100, NOW),
        ],
    ),
    dict(
        name="scale down stabilization, reuse one of obsolete recommendation element",
        key="",
        recommendations=[rec(10, NOW - 600), rec(4, NOW - 60), rec(5, NOW - 120), rec(9, NOW - 540)],
        currentReplicas=100,
        prenormalizedDesiredReplicas=3,
        expectedStabilizedReplicas=5,
        expectedRecommendations=[
            rec(10, NOW),
            rec(4, NOW),
            rec(5, NOW),
            rec(3, NOW),
        ],
        scaleDownStabilizationWindowSeconds=3 * 60,
    ),
    dict(
        # we can reuse only the first recommendation element
        # as the scale up delay = 150 (set in test), scale down delay = 300 (by default)
        # hence, only the first recommendation is obsolete for both scale up and scale down
        name="scale up stabilization, reuse one of obsolete recommendation element",
        key="",
        recommendations=[rec(10, NOW - 6000), rec(6, NOW - 60), rec(5, NOW - 120), rec(9, NOW - 180)],
        currentReplicas=1,
        prenormalizedDesiredReplicas=100,
        expectedStabilizedReplicas=5,
        expectedRecommendations=[
            rec(100, NOW),
            rec(6, NOW),
            rec(5, NOW),
            rec(9, NOW),
        ],
        scaleUpStabilizationWindowSeconds=300,
    ),
    dict(
        name="scale up and down stabilization, do not scale up when prenormalized rec goes down",
        key="",
        recommendations=[
            rec(2, NOW - 6000),
            rec(3, NOW - 180),
        ],
        currentReplicas=2,
        prenormalizedDesiredReplicas=1,
        expectedStabilizedReplicas=2,
        scaleUpStabilizationWindowSeconds=300,
        scaleDownStabilizationWindowSeconds=300,
    ),
    dict(
        name="scale up and down stabilization, do not scale down when prenormalized rec goes up",
        key="",
        recommendations=[
            rec(2, NOW - 6000),
            rec(1, NOW - 180),
        ],
        currentReplicas=2,
        prenormalizedDesiredReplicas=3,
        expectedStabilizedReplicas=2,
        scaleUpStabilizationWindowSeconds=300,
        scaleDownStabilizationWindowSeconds=300,
    ),
]


@pytest.mark.parametrize(
    "tc",
    [
        pytest.param(tc, id=f"TestNormalizeDesiredReplicasWithBehavior/{tc['name']}")
        for tc in NORMALIZE_WITH_BEHAVIOR
    ],
)
def test_normalize_desired_replicas_with_behavior(tc: dict[str, Any]) -> None:
    """``stabilizeRecommendationWithBehaviors`` with the given windows (0 when unset)."""
    history = list(tc["recommendations"])
    replicas, _ = stabilize_recommendation_with_behaviors(
        history,
        NOW,
        tc["currentReplicas"],
        tc["prenormalizedDesiredReplicas"],
        tc.get("scaleUpStabilizationWindowSeconds", 0),
        tc.get("scaleDownStabilizationWindowSeconds", 0),
    )
    assert replicas == tc["expectedStabilizedReplicas"]
    if tc.get("expectedRecommendations") is not None:
        assert [r.recommendation for r in history] == [
            r.recommendation for r in tc["expectedRecommendations"]
        ]


# The testCase-driven tests: one reconcile of the HPA (a CPU Utilization target and/or one Pods,
# Object or External metric), the replica count the scale ends at (``expectedDesiredReplicas``).
CONTROLLER_CASES: dict[str, ControllerTestCase] = {
    "TestScaleUp": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=5,
        CPUTarget=30,
        reportedLevels=[300, 500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        useMetricsAPI=True,
    ),
    "TestScaleUpUnreadyLessScale": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=4,
        CPUTarget=30,
        reportedLevels=[300, 500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        reportedPodReadiness=["False", "True", "True"],
        useMetricsAPI=True,
    ),
    "TestScaleUpHotCpuLessScale": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=4,
        CPUTarget=30,
        reportedLevels=[300, 500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        reportedPodStartTime=[HOT, COOL, COOL],
        useMetricsAPI=True,
    ),
    "TestScaleUpUnreadyNoScale": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=3,
        CPUTarget=30,
        reportedLevels=[400, 500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        reportedPodReadiness=["True", "False", "False"],
        useMetricsAPI=True,
    ),
    "TestScaleUpHotCpuNoScale": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=3,
        CPUTarget=30,
        reportedLevels=[400, 500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        reportedPodReadiness=["True", "False", "False"],
        reportedPodStartTime=[COOL, HOT, HOT],
        useMetricsAPI=True,
    ),
    "TestScaleUpIgnoresFailedPods": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=2,
        statusReplicas=2,
        expectedDesiredReplicas=4,
        CPUTarget=30,
        reportedLevels=[500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        reportedPodReadiness=["True", "True", "False", "False"],
        reportedPodPhase=["Running", "Running", "Failed", "Failed"],
        useMetricsAPI=True,
    ),
    "TestScaleUpIgnoresDeletionPods": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=2,
        statusReplicas=2,
        expectedDesiredReplicas=4,
        CPUTarget=30,
        reportedLevels=[500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        reportedPodReadiness=["True", "True", "False", "False"],
        reportedPodPhase=["Running", "Running", "Running", "Running"],
        reportedPodDeletionTimestamp=[False, False, True, True],
        useMetricsAPI=True,
    ),
    "TestScaleUpDeployment": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=5,
        CPUTarget=30,
        reportedLevels=[300, 500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        useMetricsAPI=True,
    ),
    "TestScaleUpReplicaSet": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=5,
        CPUTarget=30,
        reportedLevels=[300, 500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        useMetricsAPI=True,
    ),
    "TestScaleDown": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=3,
        CPUTarget=50,
        reportedLevels=[100, 300, 500, 250, 250],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestScaleDownWithScalingRules": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=3,
        CPUTarget=50,
        reportedLevels=[100, 300, 500, 250, 250],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        scaleUpRules=generate_scaling_rules(0, 0, 100, 15, 30),
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestScaleDownStabilizeInitialSize": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=5,
        CPUTarget=50,
        reportedLevels=[100, 300, 500, 250, 250],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        recommendations=None,
        useMetricsAPI=True,
    ),
    "TestScaleDownIncludeUnreadyPods": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=2,
        CPUTarget=50,
        reportedLevels=[100, 300, 500, 250, 250],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        reportedPodReadiness=["True", "True", "True", "False", "False"],
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestScaleDownIgnoreHotCpuPods": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=2,
        CPUTarget=50,
        reportedLevels=[100, 300, 500, 250, 250],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        reportedPodStartTime=[COOL, COOL, COOL, HOT, HOT],
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestScaleDownIgnoresFailedPods": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=3,
        CPUTarget=50,
        reportedLevels=[100, 300, 500, 250, 250],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        reportedPodReadiness=["True", "True", "True", "True", "True", "False", "False"],
        reportedPodPhase=["Running", "Running", "Running", "Running", "Running", "Failed", "Failed"],
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestScaleDownIgnoresDeletionPods": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=3,
        CPUTarget=50,
        reportedLevels=[100, 300, 500, 250, 250],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        reportedPodReadiness=["True", "True", "True", "True", "True", "False", "False"],
        reportedPodPhase=["Running", "Running", "Running", "Running", "Running", "Running", "Running"],
        reportedPodDeletionTimestamp=[False, False, False, False, False, True, True],
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestTolerance": controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=3,
        CPUTarget=100,
        reportedLevels=[1010, 1030, 1020],
        reportedCPURequests=[q("0.9"), q("1.0"), q("1.1")],
        useMetricsAPI=True,
    ),
    "TestMinReplicas": controller_case(
        minReplicas=2,
        maxReplicas=5,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=2,
        CPUTarget=90,
        reportedLevels=[10, 95, 10],
        reportedCPURequests=[q("0.9"), q("1.0"), q("1.1")],
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestZeroMinReplicasDesiredZero": controller_case(
        minReplicas=0,
        maxReplicas=5,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=0,
        CPUTarget=90,
        reportedLevels=[0, 0, 0],
        reportedCPURequests=[q("0.9"), q("1.0"), q("1.1")],
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestMinReplicasDesiredZero": controller_case(
        minReplicas=2,
        maxReplicas=5,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=2,
        CPUTarget=90,
        reportedLevels=[0, 0, 0],
        reportedCPURequests=[q("0.9"), q("1.0"), q("1.1")],
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestZeroReplicas": controller_case(
        minReplicas=3,
        maxReplicas=5,
        specReplicas=0,
        statusReplicas=0,
        expectedDesiredReplicas=0,
        CPUTarget=90,
        reportedLevels=[],
        reportedCPURequests=[],
        useMetricsAPI=True,
    ),
    "TestTooFewReplicas": controller_case(
        minReplicas=3,
        maxReplicas=5,
        specReplicas=2,
        statusReplicas=2,
        expectedDesiredReplicas=3,
        CPUTarget=90,
        reportedLevels=[],
        reportedCPURequests=[],
        useMetricsAPI=True,
    ),
    "TestTooManyReplicas": controller_case(
        minReplicas=3,
        maxReplicas=5,
        specReplicas=10,
        statusReplicas=10,
        expectedDesiredReplicas=5,
        CPUTarget=90,
        reportedLevels=[],
        reportedCPURequests=[],
        useMetricsAPI=True,
    ),
    "TestMaxReplicas": controller_case(
        minReplicas=2,
        maxReplicas=5,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=5,
        CPUTarget=90,
        reportedLevels=[8000, 9500, 1000],
        reportedCPURequests=[q("0.9"), q("1.0"), q("1.1")],
        useMetricsAPI=True,
    ),
    "TestSuperfluousMetrics": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=4,
        statusReplicas=4,
        expectedDesiredReplicas=6,
        CPUTarget=100,
        reportedLevels=[4000, 9500, 3000, 7000, 3200, 2000],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        useMetricsAPI=True,
    ),
    "TestMissingMetrics": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=4,
        statusReplicas=4,
        expectedDesiredReplicas=3,
        CPUTarget=100,
        reportedLevels=[400, 95],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestEmptyMetrics": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=4,
        statusReplicas=4,
        expectedDesiredReplicas=4,
        CPUTarget=100,
        reportedLevels=[],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        useMetricsAPI=True,
    ),
    "TestEmptyCPURequest": controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=1,
        statusReplicas=1,
        expectedDesiredReplicas=1,
        CPUTarget=100,
        reportedLevels=[200],
        reportedCPURequests=[],
        useMetricsAPI=True,
    ),
    "TestEventCreated": controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=1,
        statusReplicas=1,
        expectedDesiredReplicas=2,
        CPUTarget=50,
        reportedLevels=[200],
        reportedCPURequests=[q("0.2")],
        useMetricsAPI=True,
    ),
    "TestEventNotCreated": controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=2,
        statusReplicas=2,
        expectedDesiredReplicas=2,
        CPUTarget=50,
        reportedLevels=[200, 200],
        reportedCPURequests=[q("0.4"), q("0.4")],
        useMetricsAPI=True,
    ),
    "TestMissingReports": controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=4,
        statusReplicas=4,
        expectedDesiredReplicas=2,
        CPUTarget=50,
        reportedLevels=[200],
        reportedCPURequests=[q("0.2")],
        recommendations=[],
        useMetricsAPI=True,
    ),
    "TestUpscaleCap": controller_case(
        minReplicas=1,
        maxReplicas=100,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=24,
        CPUTarget=10,
        reportedLevels=[100, 200, 300],
        reportedCPURequests=[q("0.1"), q("0.1"), q("0.1")],
        scaleUpRules=generate_scaling_rules(0, 0, 700, 60, 0),
        useMetricsAPI=True,
    ),
    "TestStabilizeDownscale": controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=4,
        statusReplicas=4,
        expectedDesiredReplicas=4,
        CPUTarget=100,
        reportedLevels=[50, 50, 50],
        reportedCPURequests=[q("0.1"), q("0.1"), q("0.1")],
        recommendations=[
            rec(10, NOW - 600),
            rec(4, NOW - 60),
        ],
        useMetricsAPI=True,
    ),
    "TestScaleUpContainer": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=5,
        reportedLevels=[300, 500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        useMetricsAPI=True,
        metric=None,
    ),
    "TestScaleUpCM": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=4,
        CPUTarget=0,
        reportedLevels=[20000, 10000, 30000],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        metric=PodsMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=q("15.0"))
        ),
    ),
    "TestScaleUpCMUnreadyAndHotCpuNoLessScale": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=6,
        CPUTarget=0,
        reportedLevels=[50000, 10000, 30000],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        reportedPodReadiness=["True", "True", "False"],
        reportedPodStartTime=[COOL, COOL, HOT],
        metric=PodsMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=q("15.0"))
        ),
    ),
    "TestScaleUpCMUnreadyandCpuHot": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=6,
        CPUTarget=0,
        reportedLevels=[50000, 15000, 30000],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        reportedPodReadiness=["False", "True", "False"],
        reportedPodStartTime=[HOT, COOL, HOT],
        metric=PodsMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=q("15.0"))
        ),
    ),
    "TestScaleUpHotCpuNoScaleWouldScaleDown": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=6,
        CPUTarget=0,
        reportedLevels=[50000, 15000, 30000],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        reportedPodStartTime=[HOT, COOL, HOT],
        metric=PodsMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=q("15.0"))
        ),
    ),
    "TestScaleUpCMObject": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=4,
        CPUTarget=0,
        reportedLevels=[20000],
        metric=ObjectMetricSource(
            CrossVersionObjectReference("Deployment", "some-deployment", "apps/v1"),
            MetricIdentifier("qps"),
            MetricTarget("Value", value=q("15.0")),
        ),
    ),
    "TestScaleUpFromZeroCMObject": controller_case(
        minReplicas=0,
        maxReplicas=6,
        specReplicas=0,
        statusReplicas=0,
        expectedDesiredReplicas=2,
        CPUTarget=0,
        reportedLevels=[20000],
        metric=ObjectMetricSource(
            CrossVersionObjectReference("Deployment", "some-deployment", "apps/v1"),
            MetricIdentifier("qps"),
            MetricTarget("Value", value=q("15.0")),
        ),
    ),
    "TestScaleUpFromZeroIgnoresToleranceCMObject": controller_case(
        minReplicas=0,
        maxReplicas=6,
        specReplicas=0,
        statusReplicas=0,
        expectedDesiredReplicas=1,
        CPUTarget=0,
        reportedLevels=[1000],
        metric=ObjectMetricSource(
            CrossVersionObjectReference("Deployment", "some-deployment", "apps/v1"),
            MetricIdentifier("qps"),
            MetricTarget("Value", value=q("1.0")),
        ),
    ),
    "TestScaleUpPerPodCMObject": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=4,
        CPUTarget=0,
        reportedLevels=[40000],
        metric=ObjectMetricSource(
            CrossVersionObjectReference("Deployment", "some-deployment", "apps/v1"),
            MetricIdentifier("qps"),
            MetricTarget("AverageValue", average_value=q("10.0")),
        ),
    ),
    "TestScaleUpCMExternal": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=4,
        reportedLevels=[8600],
        metric=ExternalMetricSource(MetricIdentifier("qps"), MetricTarget("Value", value=6666)),
    ),
    "TestScaleUpPerPodCMExternal": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=4,
        reportedLevels=[8600],
        metric=ExternalMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=2222)
        ),
    ),
    "TestScaleDownContainerResource": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=3,
        reportedLevels=[100, 300, 500, 250, 250],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        recommendations=[],
        useMetricsAPI=True,
        metric=None,
    ),
    "TestScaleUpOneMetricInvalid": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=4,
        CPUTarget=30,
        reportedLevels=[300, 400, 500],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        metric=None,
    ),
    "TestScaleUpFromZeroOneMetricInvalid": controller_case(
        minReplicas=0,
        maxReplicas=6,
        specReplicas=0,
        statusReplicas=0,
        expectedDesiredReplicas=4,
        CPUTarget=30,
        reportedLevels=[300, 400, 500],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        recommendations=[],
        metric=None,
    ),
    "TestScaleDownCM": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=3,
        CPUTarget=0,
        reportedLevels=[12000, 12000, 12000, 12000, 12000],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        recommendations=[],
        metric=PodsMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=q("20.0"))
        ),
    ),
    "TestScaleDownCMObject": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=3,
        CPUTarget=0,
        reportedLevels=[12000],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        recommendations=[],
        metric=ObjectMetricSource(
            CrossVersionObjectReference("Deployment", "some-deployment", "apps/v1"),
            MetricIdentifier("qps"),
            MetricTarget("Value", value=q("20.0")),
        ),
    ),
    "TestScaleDownToZeroCMObject": controller_case(
        minReplicas=0,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=0,
        CPUTarget=0,
        reportedLevels=[0],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        recommendations=[],
        metric=ObjectMetricSource(
            CrossVersionObjectReference("Deployment", "some-deployment", "apps/v1"),
            MetricIdentifier("qps"),
            MetricTarget("Value", value=q("20.0")),
        ),
    ),
    "TestScaleDownPerPodCMObject": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=3,
        CPUTarget=0,
        reportedLevels=[60000],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        recommendations=[],
        metric=ObjectMetricSource(
            CrossVersionObjectReference("Deployment", "some-deployment", "apps/v1"),
            MetricIdentifier("qps"),
            MetricTarget("AverageValue", average_value=q("20.0")),
        ),
    ),
    "TestScaleDownCMExternal": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=3,
        reportedLevels=[8600],
        recommendations=[],
        metric=ExternalMetricSource(MetricIdentifier("qps"), MetricTarget("Value", value=14400)),
    ),
    "TestScaleDownToZeroCMExternal": controller_case(
        minReplicas=0,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=0,
        reportedLevels=[0],
        recommendations=[],
        metric=ExternalMetricSource(MetricIdentifier("qps"), MetricTarget("Value", value=14400)),
    ),
    "TestScaleDownPerPodCMExternal": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=3,
        reportedLevels=[8600],
        recommendations=[],
        metric=ExternalMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=3000)
        ),
    ),
    "TestToleranceCM": controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=3,
        reportedLevels=[20000, 20001, 21000],
        reportedCPURequests=[q("0.9"), q("1.0"), q("1.1")],
        metric=PodsMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=q("20.0"))
        ),
    ),
    "TestToleranceCMObject": controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=3,
        reportedLevels=[20050],
        reportedCPURequests=[q("0.9"), q("1.0"), q("1.1")],
        metric=ObjectMetricSource(
            CrossVersionObjectReference("Deployment", "some-deployment", "apps/v1"),
            MetricIdentifier("qps"),
            MetricTarget("Value", value=q("20.0")),
        ),
    ),
    "TestToleranceCMExternal": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=4,
        statusReplicas=4,
        expectedDesiredReplicas=4,
        reportedLevels=[8600],
        metric=ExternalMetricSource(MetricIdentifier("qps"), MetricTarget("Value", value=8666)),
    ),
    "TestTolerancePerPodCMObject": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=4,
        statusReplicas=4,
        expectedDesiredReplicas=4,
        reportedLevels=[8600],
        metric=ObjectMetricSource(
            CrossVersionObjectReference("Deployment", "some-deployment", "apps/v1"),
            MetricIdentifier("qps"),
            MetricTarget("AverageValue", average_value=2200),
        ),
    ),
    "TestTolerancePerPodCMExternal": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=4,
        statusReplicas=4,
        expectedDesiredReplicas=4,
        reportedLevels=[8600],
        metric=ExternalMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=2200)
        ),
    ),
    "TestConditionInvalidSourceType": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=3,
        CPUTarget=0,
        reportedLevels=[20000],
        metric=None,
    ),
    "TestNoBackoffUpscaleCM": controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=4,
        CPUTarget=0,
        reportedLevels=[20000, 10000, 30000],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        metric=PodsMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=q("15.0"))
        ),
    ),
    "TestNoBackoffUpscaleCMNoBackoffCpu": controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=5,
        CPUTarget=10,
        reportedLevels=[20000, 10000, 30000],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        useMetricsAPI=True,
        metric=PodsMetricSource(
            MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=q("15.0"))
        ),
    ),
    "TestScaleUpOneMetricEmpty": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=4,
        CPUTarget=30,
        reportedLevels=[300, 400, 500],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        metric=ExternalMetricSource(MetricIdentifier("qps"), MetricTarget("Value", value=100)),
        metricFails=True,
    ),
    "TestNoScaleDownOneMetricInvalid": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=5,
        CPUTarget=50,
        reportedLevels=[100, 300, 500, 250, 250],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        recommendations=[],
        useMetricsAPI=True,
        metric=None,
    ),
    "TestNoScaleDownOneMetricEmpty": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=5,
        statusReplicas=5,
        expectedDesiredReplicas=5,
        CPUTarget=50,
        reportedLevels=[100, 300, 500, 250, 250],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        recommendations=[],
        useMetricsAPI=True,
        metric=ExternalMetricSource(MetricIdentifier("qps"), MetricTarget("Value", value=1000)),
        metricFails=True,
    ),
    "TestScaleUpBothMetricsEmpty": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=3,
        CPUTarget=0,
        reportedLevels=[],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        metric=None,  # {Type: "CheddarCheese"}
    ),
    "TestUpscaleCapGreaterThanMaxReplicas": controller_case(
        minReplicas=1,
        maxReplicas=20,
        specReplicas=3,
        statusReplicas=3,
        scaleUpRules=generate_scaling_rules(0, 0, 700, 60, 0),
        # expectedDesiredReplicas would be 24 without maxReplicas
        expectedDesiredReplicas=20,
        CPUTarget=10,
        reportedLevels=[100, 200, 300],
        reportedCPURequests=[q("0.1"), q("0.1"), q("0.1")],
        useMetricsAPI=True,
    ),
    "TestMoreReplicasThanSpecNoScale": controller_case(
        minReplicas=1,
        maxReplicas=8,
        specReplicas=4,
        statusReplicas=5,  # Deployment update with 25% surge.
        expectedDesiredReplicas=4,
        CPUTarget=50,
        reportedLevels=[500, 500, 500, 500, 500],
        reportedCPURequests=[q("1"), q("1"), q("1"), q("1"), q("1")],
        useMetricsAPI=True,
    ),
    # startPods 10 at 150m of 300m each; target int32((1 / (2 × (1 − 0.1)) + .01) × 100) = 56 % gives
    # ceil(1500 / (3000 × 0.5656) × 10) = 9 pods; with + .004 (55 %) the ratio stays within tolerance.
    "TestComputedToleranceAlgImplementation/tc1": controller_case(
        minReplicas=0,
        maxReplicas=1000,
        specReplicas=10,
        statusReplicas=10,
        expectedDesiredReplicas=9,
        CPUTarget=56,
        reportedLevels=[150] * 10,
        reportedCPURequests=[q(f"{300 + d}m") for d in (100, -100, 10, -10, 2, -2, 1, -1, 0, 0)],
        useMetricsAPI=True,
        recommendations=[],
    ),
    "TestComputedToleranceAlgImplementation/tc2": controller_case(
        minReplicas=0,
        maxReplicas=1000,
        specReplicas=10,
        statusReplicas=10,
        expectedDesiredReplicas=10,
        CPUTarget=55,
        reportedLevels=[150] * 10,
        reportedCPURequests=[q(f"{300 + d}m") for d in (100, -100, 10, -10, 2, -2, 1, -1, 0, 0)],
        useMetricsAPI=True,
        recommendations=[],
    ),
    "TestScaleUpRCImmediately": controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=1,
        statusReplicas=1,
        expectedDesiredReplicas=2,
        reportedLevels=[0, 0, 0, 0],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0"), q("1.0")],
        useMetricsAPI=True,
    ),
    "TestScaleDownRCImmediately": controller_case(
        minReplicas=2,
        maxReplicas=5,
        specReplicas=6,
        statusReplicas=6,
        expectedDesiredReplicas=5,
        CPUTarget=50,
        reportedLevels=[8000, 9500, 1000],
        reportedCPURequests=[q("0.9"), q("1.0"), q("1.1")],
        useMetricsAPI=True,
    ),
}
_CONTAINER_RESOURCE = "ContainerResource metrics (a container's own usage and request) are not modelled"
_INVALID_SOURCE = (
    "a metric of an unknown type ('CheddarCheese') cannot be written: gpufleet's manifest reader and model "
    "refuse it, as the API server does"
)
_ZERO_MIN_CPU_ONLY = (
    "minReplicas 0 with only a CPU metric is refused by the API server and by gpufleet (it needs the "
    "HPAScaleToZero gate and an Object or External metric); the test bypasses validation"
)
_CONTROLLER_SKIPPED = {
    "TestScaleUpContainer": _CONTAINER_RESOURCE,
    "TestScaleDownContainerResource": _CONTAINER_RESOURCE,
    "TestScaleUpOneMetricInvalid": _INVALID_SOURCE,
    "TestScaleUpFromZeroOneMetricInvalid": _INVALID_SOURCE,
    "TestConditionInvalidSourceType": _INVALID_SOURCE,
    "TestNoScaleDownOneMetricInvalid": _INVALID_SOURCE,
    "TestScaleUpBothMetricsEmpty": _INVALID_SOURCE,
    "TestZeroMinReplicasDesiredZero": _ZERO_MIN_CPU_ONLY,
    "TestComputedToleranceAlgImplementation/tc1": _ZERO_MIN_CPU_ONLY,
    "TestComputedToleranceAlgImplementation/tc2": _ZERO_MIN_CPU_ONLY,
}


Condition = tuple[str, str, str]
#: ``statusOk``: the conditions ``runTest`` expects where a case sets no ``expectedConditions``
STATUS_OK: list[Condition] = [
    ("AbleToScale", "True", "SucceededRescale"),
    ("ScalingActive", "True", "ValidMetricFound"),
    ("ScalingLimited", "False", "DesiredWithinRange"),
]


def status_ok_with_overrides(*overrides: Condition) -> list[Condition]:
    """``statusOkWithOverrides``: ``statusOk`` with each override put in place of the condition of its
    type (``setConditionInList``), in the order given."""
    out = list(STATUS_OK)
    for override in overrides:
        types = [c[0] for c in out]
        if override[0] in types:
            out[types.index(override[0])] = override
        else:
            out.append(override)
    return out


def _able(reason: str) -> Condition:
    return ("AbleToScale", "True", reason)


def _limited(status: str, reason: str) -> Condition:
    return ("ScalingLimited", status, reason)


_READY = status_ok_with_overrides(_able("ReadyForNewScale"))
_RESCALED_ONLY = [_able("SucceededRescale")]
_AT_MAX = status_ok_with_overrides(_limited("True", "TooManyReplicas"))
#: ``expectedConditions`` of the cases that set them (type, status and reason, in order: ``runTest`` clears
#: the messages and times); every other case expects ``statusOk``. The clamp of a count outside
#: [minReplicas, maxReplicas] (``TestTooFewReplicas``, ``TestScaleUpRCImmediately``, ...) runs no metrics,
#: so it sets AbleToScale only.
CONTROLLER_CONDITIONS: dict[str, list[Condition]] = {
    "TestScaleUpUnreadyNoScale": _READY,
    "TestScaleUpHotCpuNoScale": _READY,
    "TestScaleUpCMUnreadyandCpuHot": status_ok_with_overrides(
        _able("SucceededRescale"), _limited("True", "TooManyReplicas")
    ),
    "TestScaleUpHotCpuNoScaleWouldScaleDown": status_ok_with_overrides(
        _able("SucceededRescale"), _limited("True", "TooManyReplicas")
    ),
    "TestScaleDownStabilizeInitialSize": status_ok_with_overrides(
        _able("ReadyForNewScale"), _able("ScaleDownStabilized")
    ),
    "TestTolerance": _READY,
    "TestToleranceCM": _READY,
    "TestToleranceCMObject": _READY,
    "TestToleranceCMExternal": _READY,
    "TestTolerancePerPodCMObject": _READY,
    "TestTolerancePerPodCMExternal": _READY,
    "TestMinReplicas": status_ok_with_overrides(_limited("True", "TooFewReplicas")),
    "TestMinReplicasDesiredZero": status_ok_with_overrides(_limited("True", "TooFewReplicas")),
    "TestZeroReplicas": [_able("SucceededGetScale"), ("ScalingActive", "False", "ScalingDisabled")],
    "TestTooFewReplicas": _RESCALED_ONLY,
    "TestTooManyReplicas": _RESCALED_ONLY,
    "TestMaxReplicas": _AT_MAX,
    "TestSuperfluousMetrics": _AT_MAX,
    "TestEmptyMetrics": [_able("SucceededGetScale"), ("ScalingActive", "False", "FailedGetResourceMetric")],
    "TestEmptyCPURequest": [
        _able("SucceededGetScale"),
        ("ScalingActive", "False", "FailedGetResourceMetric"),
    ],
    "TestEventNotCreated": _READY,
    "TestUpscaleCap": status_ok_with_overrides(_limited("True", "ScaleUpLimit")),
    "TestUpscaleCapGreaterThanMaxReplicas": _AT_MAX,
    "TestMoreReplicasThanSpecNoScale": _READY,
    "TestNoBackoffUpscaleCM": status_ok_with_overrides(
        _able("ReadyForNewScale"), _able("SucceededRescale"), _limited("False", "DesiredWithinRange")
    ),
    "TestNoBackoffUpscaleCMNoBackoffCpu": status_ok_with_overrides(
        _able("ReadyForNewScale"), _able("SucceededRescale"), _limited("True", "TooManyReplicas")
    ),
    "TestStabilizeDownscale": status_ok_with_overrides(
        _able("ReadyForNewScale"), _able("ScaleDownStabilized")
    ),
    "TestScaleUpRCImmediately": _RESCALED_ONLY,
    "TestScaleDownRCImmediately": _RESCALED_ONLY,
    "TestNoScaleDownOneMetricEmpty": [
        _able("SucceededGetScale"),
        ("ScalingActive", "False", "FailedGetExternalMetric"),
    ],
}


def _status_conditions(decision: ScaleDecision) -> list[Condition]:
    """The conditions the sync leaves, as ``runTest`` compares them: type, status and reason, in order."""
    return [(c.type, c.status, c.reason) for c in decision.conditions()]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            name,
            id=name,
            marks=[pytest.mark.skip(reason=_CONTROLLER_SKIPPED[name])] if name in _CONTROLLER_SKIPPED else [],
        )
        for name in CONTROLLER_CASES
    ],
)
def test_controller_reconcile(name: str) -> None:
    """``runTest``: the replica count (``expectedDesiredReplicas``) and the status conditions, type, status
    and reason in order (``expectedConditions``, else ``statusOk``); messages, events and monitor labels are
    compared by the tests below and in ``tests/autoscaling/test_hpa_status.py``."""
    tc = CONTROLLER_CASES[name]
    decision = reconcile_controller_case(tc)
    assert decision.desired_replicas == tc.expectedDesiredReplicas
    assert _status_conditions(decision) == CONTROLLER_CONDITIONS.get(name, STATUS_OK)


@pytest.mark.parametrize(
    ("name", "events"),
    [
        pytest.param(
            "TestEventCreated",
            [
                (
                    "Normal",
                    "SuccessfulRescale",
                    "New size: 2; reason: cpu resource utilization (percentage of request) above target",
                )
            ],
            id="TestEventCreated",
        ),
        pytest.param("TestEventNotCreated", [], id="TestEventNotCreated"),
    ],
)
def test_an_event_is_recorded_only_for_a_rescale(name: str, events: list[Condition]) -> None:
    """``verifyEvents``: a SuccessfulRescale "New size: N; reason: cpu resource utilization (percentage of
    request) above target" exactly when the replica count changes (1 -> 2 at 200m of 200m for a 50 %
    target), and no event when it holds (2 pods at 50 %)."""
    decision = reconcile_controller_case(CONTROLLER_CASES[name])
    assert [(e.type, e.reason, e.message) for e in decision.events] == events


# TestConfigurableTolerance: (name, gate, scaleUp tolerance, scaleDown tolerance, levels, requests, replicas,
# AbleToScale reason); CPU target 100 %, 1 to 5 replicas from 3.
CONFIGURABLE_TOLERANCE = [
    (
        "Scaling up because of a 1% configurable tolerance",
        True,
        0.01,
        None,
        [1010, 1030, 1020],
        ["0.9", "1.0", "1.1"],
        4,
        "SucceededRescale",
    ),
    (
        "No scale-down because of a 90% configurable tolerance",
        True,
        None,
        0.9,
        [300, 300, 300],
        ["1.0", "1.0", "1.0"],
        3,
        "ReadyForNewScale",
    ),
    (
        "No scaling because of the large default tolerance",
        True,
        None,
        None,
        [1010, 1030, 1020],
        ["0.9", "1.0", "1.1"],
        3,
        "ReadyForNewScale",
    ),
    (
        "No scaling because the configurable tolerance is ignored as the feature gate is disabled",
        False,
        0.01,
        None,
        [1010, 1030, 1020],
        ["0.9", "1.0", "1.1"],
        3,
        "ReadyForNewScale",
    ),
]


@pytest.mark.parametrize(
    ("gate", "up", "down", "levels", "requests", "replicas", "able"),
    [pytest.param(*row[1:], id=f"TestConfigurableTolerance/{row[0]}") for row in CONFIGURABLE_TOLERANCE],
)
def test_configurable_tolerance_overrides_the_cluster_tolerance_per_direction_when_gated(
    gate: bool,
    up: float | None,
    down: float | None,
    levels: list[int],
    requests: list[str],
    replicas: int,
    able: str,
) -> None:
    """``tolerancesForHpa``: with HPAConfigurableTolerance on, ``behavior.scaleUp.tolerance`` and
    ``behavior.scaleDown.tolerance`` replace the cluster-wide 0.1 for their direction; off, they are
    ignored. Setting either makes ``behavior`` non-nil, so the behavior path runs with defaulted rules."""
    tc = controller_case(
        minReplicas=1,
        maxReplicas=5,
        specReplicas=3,
        statusReplicas=3,
        scaleUpRules=None if up is None else HPAScalingRules(tolerance=up),
        scaleDownRules=None if down is None else HPAScalingRules(tolerance=down),
        expectedDesiredReplicas=replicas,
        CPUTarget=100,
        reportedLevels=levels,
        reportedCPURequests=[q(r) for r in requests],
        useMetricsAPI=True,
        configurableToleranceGate=gate,
    )
    decision = reconcile_controller_case(tc)
    assert decision.desired_replicas == replicas
    assert _status_conditions(decision) == status_ok_with_overrides(_able(able))


FAILED_GET_METRICS: dict[str, MetricSpec | None] = {
    "FailedGetResourceMetric": None,
    "FailedGetPodsMetric": PodsMetricSource(
        MetricIdentifier("qps"), MetricTarget("AverageValue", average_value=q("15.0"))
    ),
    "FailedGetObjectMetric": ObjectMetricSource(
        CrossVersionObjectReference("Deployment", "some-deployment", "apps/v1"),
        MetricIdentifier("qps"),
        MetricTarget("Value", value=q("15.0")),
    ),
    "FailedGetExternalMetric": ExternalMetricSource(
        MetricIdentifier("qps"), MetricTarget("Value", value=300)
    ),
}


@pytest.mark.parametrize(
    ("reason", "metric"),
    [pytest.param(r, m, id=f"TestConditionFailedGetMetrics/{r}") for r, m in FAILED_GET_METRICS.items()],
)
def test_failed_metrics_keep_the_replica_count(reason: str, metric: MetricSpec | None) -> None:
    """``computeReplicasForMetrics`` with every metrics client failing: no valid metric, so the controller
    records ``FailedComputeMetricsReplicas`` and leaves the scale at 3; the conditions are AbleToScale True
    SucceededGetScale and ScalingActive False with the metric type's reason
    (``getUnableComputeReplicaCountCondition``: FailedGetResourceMetric, FailedGetPodsMetric, ...), and each
    failure is a Warning event of that reason."""
    tc = controller_case(
        minReplicas=1,
        maxReplicas=100,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=3,
        CPUTarget=10 if metric is None else 0,
        reportedLevels=[100, 200, 300],
        reportedCPURequests=[q("0.1"), q("0.1"), q("0.1")],
        useMetricsAPI=True,
        metric=metric,
        metricsClientsFail=True,
    )
    decision = reconcile_controller_case(tc)
    assert (decision.desired_replicas, decision.rescale, decision.reason) == (
        3,
        False,
        "FailedComputeMetricsReplicas",
    )
    assert _status_conditions(decision) == [
        ("AbleToScale", "True", "SucceededGetScale"),
        ("ScalingActive", "False", reason),
    ]
    assert [(e.type, e.reason) for e in decision.events] == [
        ("Warning", reason),
        ("Warning", "FailedComputeMetricsReplicas"),
    ]


def test_avoid_unnecessary_updates() -> None:
    """TestAvoidUnnecessaryUpdates: the HPA (80 % CPU, 2 to 6 replicas) already holds the conditions this
    sync would set (ReadyForNewScale, TooFewReplicas) at 2 replicas, so nothing is written: the scale stays
    and the status is unchanged (upstream fails the test on any HPA update)."""
    tc = controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=2,
        statusReplicas=2,
        expectedDesiredReplicas=2,
        CPUTarget=80,  # the HPA its reactor lists, not the testCase's 30 (upstream's TODO)
        reportedLevels=[400, 500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        reportedPodStartTime=[COOL, HOT, HOT],
        useMetricsAPI=True,
        recommendations=[],
    )
    decision = reconcile_controller_case(tc)
    assert (decision.desired_replicas, decision.rescale) == (2, False)
    assert _status_conditions(decision) == status_ok_with_overrides(
        _able("ReadyForNewScale"), _limited("True", "TooFewReplicas")
    )


def test_multiple_hpas_each_scale_their_own_target() -> None:
    """TestMultipleHPAs: 1000 HPAs (1 to 10 replicas, 10 % CPU, scale-up +100 pods per 60 s, scale-down
    -2 pods or -1 % per 60 s with a 300 s window), each with its own scale events, each on a Deployment
    of one pod using 500m of 1 CPU: every one is processed, and each proposes 5 replicas from 1 (50 % over
    10 %), within its own rate limit."""
    behavior = HorizontalPodAutoscalerBehavior(
        generate_scaling_rules(100, 60, 0, 0, 0), generate_scaling_rules(2, 60, 1, 60, 300)
    )
    metric = ResourceMetricSource("cpu", MetricTarget("Utilization", average_utilization=10))
    decisions = []
    for i in range(1000):
        spec = HorizontalPodAutoscalerSpec(
            CrossVersionObjectReference("Deployment", f"dummy-target-{i}", "apps/v1"),
            10,
            1,
            (metric,),
            behavior,
        )
        hpa = HorizontalAutoscaler(spec, CONTROLLER_CONFIG)
        hpa.scale_up_events = generate_events_uniform_distribution([8, 12, 9, 11], 120)
        hpa.scale_down_events = generate_events_uniform_distribution([10, 10, 10], 120)
        pod = HPAPod(f"dummy-target-{i}-0", start_time=NOW - 600, requests={"cpu": 1000})
        decisions.append(
            hpa.reconcile(
                NOW,
                spec_replicas=1,
                status_replicas=1,
                pods=[pod],
                observations=[{pod.name: PodMetric(500, NOW, 60.0)}],
            ).desired_replicas
        )
    assert decisions == [5] * 1000


# hpaSelectors of the Ambiguous/NoAmbiguous selector tests: (test name, the HPAs selecting the test pods,
# expectedDesiredReplicas). test-hpa-2 selects cheddar=cheese (no overlap) or name=test-pod (full overlap).
SELECTOR_OVERLAP = [
    ("TestConditionNoAmbiguousSelectorWhenNoSelectorOverlapBetweenHPAs", ["test-namespace/test-hpa"], 5),
    (
        "TestConditionAmbiguousSelectorWhenFullSelectorOverlapBetweenHPAs",
        ["test-namespace/test-hpa", "test-namespace/test-hpa-2"],
        3,
    ),
]


@pytest.mark.parametrize(
    ("controlling", "replicas"), [pytest.param(*row[1:], id=row[0]) for row in SELECTOR_OVERLAP]
)
def test_pods_controlled_by_several_hpas_are_not_scaled_from_metrics(
    controlling: list[str], replicas: int
) -> None:
    """``validateAndParseSelector``: when the pods under the HPA's selector are controlled by more than
    one HPA (``hpasControllingPodsUnderSelector``), ScalingActive is False with AmbiguousSelector and no
    metric is computed; another HPA selecting other pods changes nothing (30 % CPU: 3 -> 5)."""
    tc = controller_case(
        minReplicas=2,
        maxReplicas=6,
        specReplicas=3,
        statusReplicas=3,
        expectedDesiredReplicas=replicas,
        CPUTarget=30,
        reportedLevels=[300, 500, 700],
        reportedCPURequests=[q("1.0"), q("1.0"), q("1.0")],
        useMetricsAPI=True,
    )
    decision = reconcile_controller_case(tc, controlling_hpas=controlling)
    assert decision.desired_replicas == replicas
    if len(controlling) > 1:  # TestConditionAmbiguousSelectorWhenFullSelectorOverlapBetweenHPAs
        assert _status_conditions(decision) == [
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "AmbiguousSelector"),
        ]
    else:  # statusOk
        assert _status_conditions(decision) == [
            ("AbleToScale", "True", "SucceededRescale"),
            ("ScalingActive", "True", "ValidMetricFound"),
            ("ScalingLimited", "False", "DesiredWithinRange"),
        ]


_FAILING_CLIENT = (
    "a failing API call: gpufleet's HPA reads and writes its target's scale in the cluster state it runs "
    "on, with no client that can fail or conflict (upstream prepends an erroring reactor to the fake "
    "{client})"
)
_NO_SELECTOR = (
    "a scale subresource {what}: every target gpufleet scales (Deployment, ReplicaSet) has the non-empty, "
    "valid spec.selector that apps/v1 validation and gpufleet's manifest reader require (upstream fakes the "
    "scale client's answer)"
)
_PARTIAL_OVERLAP = (
    "two HPAs whose targets' selectors overlap on some labels: gpufleet's HPA selects its target's own "
    "pods, so only HPAs aimed at the same Deployment or ReplicaSet share pods"
)
CONTROLLER_NOT_EXPRESSIBLE = {
    "TestConditionFailedGetScale": _FAILING_CLIENT.format(client="scale client's get"),
    "TestConditionFailedUpdateScale": _FAILING_CLIENT.format(client="scale client's update"),
    "TestHPARescaleWithSuccessfulConflictRetry": _FAILING_CLIENT.format(
        client="scale client's update (a Conflict, then the retry that succeeds)"
    ),
    "TestConditionInvalidSelectorMissing": _NO_SELECTOR.format(what="without a selector"),
    "TestConditionInvalidSelectorUnparsable": _NO_SELECTOR.format(what="with an unparsable selector"),
    "TestConditionAmbiguousSelectorWhenPartialSelectorOverlapBetweenHPAs": _PARTIAL_OVERLAP,
}


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in CONTROLLER_NOT_EXPRESSIBLE])
def test_controller_cases_gpufleet_cannot_express(name: str) -> None:
    pytest.skip(CONTROLLER_NOT_EXPRESSIBLE[name])


# TestBuildQuantity: (name, resource, rawProposal in milli-units, the expected quantity's String()).
BUILD_QUANTITY = [
    ("Memory - 1000 bytes → 1Ki", "memory", 1000, "1"),
    ("Memory - 1000000 bytes → 1000Ki", "memory", 1000000, "1000"),
    ("CPU - 100 milli-cores", "cpu", 100, "100m"),
    ("CPU - 500 milli-cores", "cpu", 500, "500m"),
    ("CPU - 1 milli-core", "cpu", 1, "1m"),
    ("CustomResource - 200 milli-units", "custom-resource", 200, "200m"),
    ("CustomResource - 300 milli-units", "custom-resource", 300, "300m"),
]


@pytest.mark.parametrize(
    ("resource", "raw", "text"),
    [pytest.param(*row[1:], id=f"TestBuildQuantity/{row[0]}") for row in BUILD_QUANTITY],
)
def test_build_quantity_writes_memory_binary_and_the_rest_decimal(resource: str, raw: int, text: str) -> None:
    """``buildQuantity``: a Resource metric's current ``averageValue`` is ``NewMilliQuantity(raw, BinarySI)``
    for memory, ``DecimalSI`` otherwise; compared as the quantity's text, which ``summary.json``'s
    ``hpas[].metrics[].current`` holds (``model.hpa.milli_quantity``; upstream's row names count the raw
    value in bytes, its expectations in milli-units)."""
    assert milli_quantity(raw, binary=resource == "memory") == text
