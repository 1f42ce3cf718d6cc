"""KEDA's ``spec.advanced.scalingModifiers`` at run time: the composite metric and the activity it decides.

Mirrors ``kedacore/keda`` v2.20.2:

- ``pkg/scaling/modifiers/formula.go``: ``HandleScalingModifiers`` (with a fallback active the HPA
  reads the first fallback metric as ``composite-metric``, else the formula runs),
  ``calculateScalingModifiersFormula`` (each named trigger's value a variable; a nil result is
  ``fallback.replicas × target`` (``scalingModifiersFallbackTarget``), an error without a fallback; a
  result that is not a float64 is an error; the value is ``int64(out × 1000)`` milli-units) and
  ``scalingModifierTriggerValue`` (with the fallback behavior ``scalingModifiers``, a trigger failing
  more than ``failureThreshold`` times is nil, for ``??`` to replace);
- ``pkg/scaling/scale_handler.go``: ``GetScaledObjectMetrics`` (a trigger failing below its threshold,
  with no fallback active, makes the metric unavailable: ``metric:... encountered error``) and
  ``getScaledObjectState`` (with a formula the object is active when the composite value is above
  ``activationTarget``, default 0; a failing trigger makes it inactive and in error; an
  ``activationTarget`` that does not parse fails every poll; a formula that fails to run leaves it
  inactive, without error).

The formula itself is :mod:`gpufleet.model.expr_lang`; its validation (``ValidateAndCompileScalingModifiers``)
is :meth:`gpufleet.model.keda.ScalingModifiers.compiled`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gpufleet.model.expr_lang import ExprError
from gpufleet.model.keda import ScaledObjectSpec, ScaleTrigger


@dataclass(frozen=True)
class TriggerRead:
    """One External trigger's answer as ``GetMetricsWithFallback`` leaves it."""

    #: the metric value; None: the trigger failed and no fallback stands in (an error)
    value: float | None
    #: the value is ``doFallback``'s (the fallback replicas' metric)
    fallback_active: bool = False
    #: the fallback behavior ``scalingModifiers`` past ``failureThreshold``: nil in the formula
    nil: bool = False


def external_triggers(spec: ScaledObjectSpec) -> list[tuple[int, ScaleTrigger]]:
    """The triggers with an External metric (all but cpu/memory), with their index."""
    return [(i, t) for i, t in enumerate(spec.triggers) if not t.is_resource]


def composite_value(spec: ScaledObjectSpec, reads: Sequence[TriggerRead]) -> float | None:
    """The ``composite-metric`` value the HPA reads, from each External trigger's read (in
    :func:`external_triggers`' order); None where KEDA answers no metric."""
    modifiers = spec.scaling_modifiers
    assert modifiers is not None and modifiers.program is not None
    fallbacks = [r.value for r in reads if r.fallback_active]
    if fallbacks:
        return fallbacks[0]
    if any(r.value is None for r in reads):
        return None
    env = {
        trigger.name: None if read.nil else read.value
        for (_, trigger), read in zip(external_triggers(spec), reads, strict=True)
        if trigger.name
    }
    try:
        out = modifiers.program.run(env)
    except ExprError:
        return None  # "error trying to run custom formula": the HPA gets no metric
    if out is None:
        if spec.fallback is None:
            return None  # "scalingModifiers formula evaluated to nil but no fallback is configured"
        out = spec.fallback.replicas * modifiers.target_value
    if not isinstance(out, float) or not math.isfinite(out):
        # "formula returned non-float result"; gpufleet also refuses ±Inf and NaN (Go's int64 of them
        # is the platform's, not a number of replicas)
        return None
    return int(out * 1000) / 1000


def composite_activity(spec: ScaledObjectSpec, reads: Sequence[TriggerRead]) -> tuple[bool, bool]:
    """``getScaledObjectState`` with a formula: (active, error)."""
    modifiers = spec.scaling_modifiers
    assert modifiers is not None
    activation = modifiers.activation_value
    if activation is None or any(r.value is None for r in reads):
        return False, True
    value = composite_value(spec, reads)
    return value is not None and value > activation, False
