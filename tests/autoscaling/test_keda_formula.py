"""KEDA's ``spec.advanced.scalingModifiers`` (v2.20.2): a formula over the named triggers' metrics is the one
External metric (``composite-metric``) of the HPA KEDA writes, and decides the ScaledObject's activity.

Upstream: ``apis/keda/v1alpha1/scaledobject_webhook.go`` (``ValidateAndCompileScalingModifiers``,
``verifyScaledObjects``), ``controllers/keda/hpa.go`` (``getScaledObjectMetricSpecs``),
``pkg/scaling/modifiers/formula.go`` (``HandleScalingModifiers``, ``calculateScalingModifiersFormula``),
``pkg/scaling/scale_handler.go`` (``getScaledObjectState``: active when the value > ``activationTarget``)
and ``pkg/fallback/fallback.go`` (``doFallback``, ``HasValidFallback``, the ``scalingModifiers`` behavior).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import simulated
from gpufleet.autoscaling.keda import FallbackTracker, HpaExternalMetric, HpaResourceMetric, hpa_inputs
from gpufleet.autoscaling.keda_scaled_object import KedaReason, ScaledObjectState
from gpufleet.autoscaling.keda_scaling_modifiers import TriggerRead, composite_value
from gpufleet.model.keda import (
    Fallback,
    KedaSpecError,
    RedisListScaler,
    ScaledObjectSpec,
    ScaleTargetRef,
    ScaleTrigger,
    ScalingModifiers,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "keda" / "formula-queue-and-rate.yaml"
TARGET = "Deployment/default/llm-server"
MODIFIERS = "spec.advanced.scalingModifiers"


def _trigger(name: str, list_length: int = 5, activation: int = 0) -> ScaleTrigger:
    return ScaleTrigger(RedisListScaler(f"list-{name}", list_length, activation), name=name)


def _cpu(name: str = "") -> ScaleTrigger:
    return ScaleTrigger.parse("cpu", {"value": "60"}, "Utilization", name)


def _so(modifiers: ScalingModifiers, *triggers: ScaleTrigger, **kw: Any) -> ScaledObjectSpec:
    return ScaledObjectSpec(
        "so",
        "default",
        ScaleTargetRef("worker"),
        triggers or (_trigger("a"), _trigger("b")),
        scaling_modifiers=modifiers,
        **kw,
    )


# --- the example ------------------------------------------------------------------------------------


def _changes(summary: dict[str, object]) -> list[tuple[float, float]]:
    timeline = summary["timeline"]
    assert isinstance(timeline, dict)
    out: list[tuple[float, float]] = []
    for t, replicas in zip(timeline["t_s"], timeline["replicas"][TARGET], strict=True):
        if not out or out[-1][1] != replicas:
            out.append((t, replicas))
    return out


def test_the_example_scales_on_a_formula_over_a_queue_and_a_request_rate() -> None:
    """``rate / 10 + ceil(backlog / 10)`` against 1 a replica, active above 0.5: the rate alone cannot
    wake the Deployment (no pods, no series); the 20 prompts at 40 min (18 left once the workers take
    two) activate it at 2 replicas, then the rate adds 3 (5); the requests stop at 60 min (10 prompts
    left: 1) and the HPA steps down after its 5-minute window; the workers take the last prompts at
    85 min (the last active poll at 84.5 min) and KEDA scales to 0 once the 5-minute cooldown has passed
    (89.5 min, the 90-minute sample). ``scaled_objects`` shows the one metric and the last answers."""
    summary = simulated([EXAMPLE])
    assert _changes(summary) == [
        (0.0, 0.0),
        (2400.0, 2.0),
        (2460.0, 5.0),
        (3900.0, 4.0),
        (3960.0, 3.0),
        (4020.0, 1.0),
        (5400.0, 0.0),
    ]
    assert summary["scaled_objects"] == {
        "default/llm-server": {
            "hpa": "keda-hpa-llm-server",
            "metrics": [{"name": "composite-metric", "type": "AverageValue", "target": 1.0, "value": 0.0}],
            "active": False,
            "last_active_s": 5070.0,
            "formula": "rate / 10 + ceil(backlog / 10)",
            "activation_target": 0.5,
        }
    }


# --- the HPA KEDA writes ------------------------------------------------------------------------------


def test_the_hpa_gets_one_composite_metric_against_the_formula_target() -> None:
    """``getScaledObjectMetricSpecs``: the External metrics give way to ``composite-metric``, target
    ``int64(target * 1000)`` milli-units, ``AverageValue`` unless ``metricType`` says ``Value``."""
    so = _so(ScalingModifiers("a + b", "2.5"))
    assert hpa_inputs(so).metrics == (HpaExternalMetric("composite-metric", "AverageValue", 2500),)
    value = _so(ScalingModifiers("a + b", "3", metric_type="Value"))
    assert hpa_inputs(value).metrics == (HpaExternalMetric("composite-metric", "Value", 3000),)


def test_a_cpu_trigger_keeps_its_resource_metric_beside_the_composite_one() -> None:
    so = _so(ScalingModifiers("a * 2", "4"), _trigger("a"), _cpu("c"))
    [resource, composite] = hpa_inputs(so).metrics
    assert isinstance(resource, HpaResourceMetric) and resource.resource == "cpu"
    assert composite == HpaExternalMetric("composite-metric", "AverageValue", 4000)


def test_empty_scaling_modifiers_leave_one_metric_a_trigger() -> None:
    """``IsUsingModifiers``: every field empty is as if unset."""
    so = _so(ScalingModifiers())
    assert so.scaling_modifiers is None
    assert [m.name for m in hpa_inputs(so).metrics if isinstance(m, HpaExternalMetric)] == [
        "s0-redis-list-a",
        "s1-redis-list-b",
    ]


def test_the_composite_value_is_the_formula_over_the_named_triggers_in_milli_units() -> None:
    """``calculateScalingModifiersFormula``: ``int64(out * 1000)`` milli-units."""
    so = _so(ScalingModifiers("(a + b) / 3", "1"))
    assert composite_value(so, [TriggerRead(2.0), TriggerRead(5.0)]) == 2.333


def test_a_failing_trigger_makes_the_composite_metric_unavailable() -> None:
    """``GetScaledObjectMetrics``: a scaler error with no fallback active answers no metric."""
    so = _so(ScalingModifiers("a + b", "1"))
    assert composite_value(so, [TriggerRead(2.0), TriggerRead(None)]) is None


def test_a_formula_failing_at_run_time_answers_no_metric() -> None:
    """``error trying to run custom formula``: here ``1 % 0`` on ints is a division by zero."""
    so = _so(ScalingModifiers("a > 0 ? int(a) % int(b) : 0", "1"))
    assert composite_value(so, [TriggerRead(3.0), TriggerRead(0.0)]) is None
    assert composite_value(so, [TriggerRead(3.0), TriggerRead(2.0)]) == 1.0


# --- the webhook ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("modifiers", "triggers", "path", "message"),
    [
        (ScalingModifiers(target="2"), (), "formula", "error ScalingModifiers.Formula is mandatory"),
        (
            ScalingModifiers("a + b"),
            (),
            "target",
            "error validating formula in ScalingModifiers: formula is given but target is empty",
        ),
        (
            ScalingModifiers("a + c", "2"),
            (),
            "formula",
            "error validating formula in ScalingModifiers: unknown name c (1:11) in 'float(a + c)', "
            "as KEDA compiles it",
        ),
        (
            ScalingModifiers("a % 2", "2"),
            (),
            "formula",
            "error validating formula in ScalingModifiers: invalid operation: % (mismatched types "
            "float64 and int) (1:9) in 'float(a % 2)', as KEDA compiles it",
        ),
        (
            ScalingModifiers("a + b", "two"),
            (),
            "target",
            "error validating target in ScalingModifiers: error converting target for scalingModifiers "
            '(string->float) to valid target: strconv.ParseFloat: parsing "two": invalid syntax',
        ),
        (
            ScalingModifiers("a + b", "0"),
            (),
            "target",
            "error validating target in ScalingModifiers: error converting target for scalingModifiers "
            "(string->float) to valid target: %!w(<nil>)",
        ),
        (
            ScalingModifiers("a + b", "2", metric_type="Utilization"),
            (),
            "metricType",
            'Unsupported value: "Utilization": supported values: "AverageValue", "Value"',
        ),
        (
            # a trigger with no name is no variable (validateScalingModifiersFormula)
            ScalingModifiers("a + b", "2"),
            (_trigger("a"), ScaleTrigger(RedisListScaler("list-b"))),
            "formula",
            "error validating formula in ScalingModifiers: unknown name b (1:11) in 'float(a + b)', "
            "as KEDA compiles it",
        ),
        (
            # nor is a cpu/memory trigger, named or not
            ScalingModifiers("a + c", "2"),
            (_trigger("a"), _cpu("c")),
            "formula",
            "error validating formula in ScalingModifiers: unknown name c (1:11) in 'float(a + c)', "
            "as KEDA compiles it",
        ),
    ],
)
def test_the_webhook_refuses_scaling_modifiers_in_its_words(
    modifiers: ScalingModifiers, triggers: tuple[ScaleTrigger, ...], path: str, message: str
) -> None:
    with pytest.raises(KedaSpecError) as caught:
        _so(modifiers, *triggers)
    assert (caught.value.path, caught.value.message) == (f"{MODIFIERS}.{path}", message)


def test_trigger_names_must_be_unique() -> None:
    """``ValidateTriggers`` (``scaletriggers_types.go``)."""
    with pytest.raises(KedaSpecError) as caught:
        _so(ScalingModifiers("a * 2", "1"), _trigger("a"), _trigger("a"))
    assert caught.value.path == "spec.triggers[1].name"
    assert caught.value.message == (
        "triggerName 'a' is defined multiple times in the ScaledObject/ScaledJob, but it must be unique"
    )


def test_a_formula_lets_a_fallback_serve_only_cpu_triggers_and_its_own_behavior() -> None:
    """``CheckFallbackValid`` skips the non-cpu/memory trigger check with a formula; the behavior
    ``scalingModifiers`` needs one (``verifyScaledObjects``)."""
    so = _so(ScalingModifiers("2", "1"), _cpu(), fallback=Fallback(3, 6), min_replica_count=1)
    assert so.fallback == Fallback(3, 6)
    with pytest.raises(KedaSpecError, match="scalingModifiers fallback behavior requires"):
        _so(ScalingModifiers(), fallback=Fallback(3, 6, "scalingModifiers"))


# --- activation ----------------------------------------------------------------------------------------


def test_the_formula_value_above_activation_target_activates_from_zero() -> None:
    """``getScaledObjectState``: with a formula the triggers' own activation values play no part; the
    object is active when the composite value is above ``activationTarget``."""
    triggers = (_trigger("a", activation=100), _trigger("b", activation=100))
    state = ScaledObjectState(_so(ScalingModifiers("(a + b) / 10", "1", "0.5"), *triggers), 0.0)
    inactive = state.poll(0.0, [2.0, 3.0], 0)  # 0.5, not above
    assert (inactive.active, inactive.scale_to) == (False, None)
    active = state.poll(30.0, [3.0, 3.0], 0)  # 0.6
    assert (active.active, active.scale_to, active.reason) == (True, 1, KedaReason.ACTIVATED)


def test_a_failing_trigger_makes_a_formula_object_inactive_and_in_error() -> None:
    state = ScaledObjectState(_so(ScalingModifiers("a + b", "1")), 0.0)
    decision = state.poll(0.0, [5.0, None], 2)
    assert (decision.active, decision.error, decision.reason) == (False, True, KedaReason.TRIGGER_ERROR)


def test_an_activation_target_that_is_not_a_number_fails_every_poll() -> None:
    """``scalingModifiers.ActivationTarget parsing error``: KEDA accepts it, then every poll fails."""
    state = ScaledObjectState(_so(ScalingModifiers("a + b", "1", "half")), 0.0)
    decision = state.poll(0.0, [5.0, 5.0], 0)
    assert (decision.active, decision.error) == (False, True)


# --- fallback ------------------------------------------------------------------------------------------


def _read(tracker: FallbackTracker, values: list[float | None], current: int = 2) -> list[TriggerRead]:
    return [tracker.read(i, v, current) for i, v in enumerate(values)]


def test_a_static_fallback_past_its_threshold_reports_replicas_times_the_formula_target() -> None:
    """``doFallback`` with a formula: ``target`` is the formula's, the metric ``composite-metric``."""
    so = _so(ScalingModifiers("a + b", "2"), fallback=Fallback(1, 4))
    tracker = FallbackTracker(so)
    assert composite_value(so, _read(tracker, [1.0, None])) is None  # 1 failure: not past 1
    assert composite_value(so, _read(tracker, [1.0, None])) == 8.0  # 4 replicas x 2


def test_the_scaling_modifiers_behavior_reads_a_failing_trigger_as_nil() -> None:
    """The e2e ``primary ?? secondary ?? 8`` (``tests/internals/fallback``): past its threshold a trigger
    reads nil (``scalingModifierTriggerValue``), so ``??`` takes the next; both failing, the constant."""
    so = _so(
        ScalingModifiers("primary ?? secondary ?? 8", "1"),
        _trigger("primary"),
        _trigger("secondary"),
        fallback=Fallback(1, 5, "scalingModifiers"),
    )
    tracker = FallbackTracker(so)
    assert composite_value(so, _read(tracker, [3.0, 6.0])) == 3.0
    _read(tracker, [None, 6.0])  # the first failure: below the threshold, no metric
    assert composite_value(so, _read(tracker, [None, 6.0])) == 6.0
    _read(tracker, [None, None])
    assert composite_value(so, _read(tracker, [None, None])) == 8.0


def test_a_nil_formula_result_is_the_fallback_replicas_times_the_target() -> None:
    """``scalingModifiersFallbackTarget``: ``trigger1 ?? trigger2`` with both nil is ``replicas * target``."""
    so = _so(
        ScalingModifiers("a ?? b", "2"),
        fallback=Fallback(0, 7, "scalingModifiers"),
    )
    assert composite_value(so, _read(FallbackTracker(so), [None, None])) == 14.0


def test_a_fallback_needs_an_integer_formula_target() -> None:
    """``HasValidFallback``: with a formula, ``target`` must parse as a positive integer; otherwise a
    failing trigger is an error and health is not tracked."""
    so = _so(ScalingModifiers("a + b", "2.5"), fallback=Fallback(0, 4))
    tracker = FallbackTracker(so)
    assert composite_value(so, _read(tracker, [1.0, None])) is None
    assert tracker.health(1) is None
