"""KEDA ScaledJob decisions: how many Jobs to create each polling interval.

Mirrors ``kedacore/keda``:

- ``pkg/scaling/scale_handler.go`` (``getScaledJobMetrics``, ``isScaledJobActive``) and
  ``pkg/scaling/scaledjob/metrics.go`` (``CalculateQueueLengthAndMaxValue``, ``IsScaledJobActive``):
  per trigger that answered, ``queueLength`` = its value and ``maxValue = min(queueLength /
  targetAverageValue, MaxReplicaCount())`` (0 when the target is not an ``AverageValue``); the
  triggers combine by ``multipleScalersCalculation`` over the *active* ones only (``max``: the one
  with the largest queue, ``min``: the smallest, ``avg``: means, ``sum``: sums); ``minReplicaCount >
  0`` forces the object active; the result is ``scaleTo = ceil(queueLength)`` and ``maxScale =
  ceil(min(maxValue, MaxReplicaCount()))``.
- ``pkg/scaling/executor/scale_jobs.go`` (``RequestJobScale``, ``getScalingDecision``,
  ``createJobs``, the ``*ScalingStrategy.GetEffectiveMaxScale`` methods): with ``running`` =
  unfinished Jobs and ``pending`` = unfinished Jobs none of whose pods is Running or Succeeded
  (or, with ``pendingPodConditions``, none of whose pods has all those conditions True:
  :func:`job_is_pending`) -- both counted by the caller -- if ``running < MinReplicaCount()``
  create ``MinReplicaCount() − running``; otherwise,
  with ``r = running − MinReplicaCount()`` and ``M = MaxReplicaCount()``:

  ========  ==============================================================================
  default   ``effectiveMaxScale = maxScale − r``
  custom    ``min(maxScale − customScalingQueueLengthDeduction −
            int(r × customScalingRunningJobPercentage), M)`` (``default`` if the percentage
            does not parse; an unset deduction deducts 0)
  accurate  ``M − r`` if ``maxScale + r − pending > M``, else ``maxScale − pending``
  eager     ``min(M − r − pending, maxScale)``, and ``scaleTo = M``
  ========  ==============================================================================

  and, only if the object is active, create ``min(scaleTo, effectiveMaxScale)`` Jobs (none when
  ``effectiveMaxScale <= 0``).
- ``apis/keda/v1alpha1/scaledjob_types.go``: ``MaxReplicaCount()`` is ``maxReplicaCount −
  MinReplicaCount()`` (see :attr:`ScaledJobSpec.effective_max_replica_count`).

The formulas are those of the pinned KEDA v2.20.2 (before it, ``accurate``'s condition had no
pending term and a ``custom`` strategy without a deduction dereferenced a nil pointer).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gpufleet.autoscaling.keda_triggers import is_active, target_milli, to_milli
from gpufleet.model.keda import (
    MultipleScalersCalculation,
    ScaledJobSpec,
    ScaleTrigger,
    ScalingStrategy,
)


@dataclass(frozen=True)
class ScalerMetrics:
    """``scaledjob.ScalerMetrics`` for one trigger that answered."""

    queue_length: float
    max_value: float
    is_active: bool


def scaler_metrics(trigger: ScaleTrigger, value: float, max_replica_count: int) -> ScalerMetrics:
    """``CalculateQueueLengthAndMaxValue`` for one trigger: queue length, ``maxValue``, activity."""
    queue_length = to_milli(value) / 1000
    # getTargetAverageValue reads Target.AverageValue, which a Value target leaves nil (0).
    target = target_milli(trigger) / 1000 if trigger.metric_type == "AverageValue" else 0.0
    max_value = min(queue_length / target, float(max_replica_count)) if target != 0 else 0.0
    return ScalerMetrics(queue_length, max_value, is_active(trigger, value))


def combine_scaler_metrics(
    metrics: Sequence[ScalerMetrics],
    calculation: MultipleScalersCalculation,
    min_replica_count: int,
    max_replica_count: int,
) -> tuple[bool, int, int]:
    """``IsScaledJobActive``: (active, ``scaleTo = ceil(queueLength)``, ``maxScale``)."""
    queue_length = 0.0
    max_value = 0.0
    active = False
    if calculation == "min":
        for m in metrics:
            if (queue_length == 0 or m.queue_length < queue_length) and m.is_active:
                queue_length, max_value, active = m.queue_length, m.max_value, True
    elif calculation in ("avg", "sum"):
        chosen = [m for m in metrics if m.is_active]
        if chosen:
            active = True
            queue_length = sum(m.queue_length for m in chosen)
            max_value = sum(m.max_value for m in chosen)
            if calculation == "avg":
                queue_length /= len(chosen)
                max_value /= len(chosen)
    else:  # "max", the default
        for m in metrics:
            if m.queue_length > queue_length and m.is_active:
                queue_length, max_value, active = m.queue_length, m.max_value, True
    if min_replica_count > 0:
        active = True
    max_value = min(max_value, float(max_replica_count))
    return active, math.ceil(queue_length), math.ceil(max_value)


def effective_max_scale(
    strategy: ScalingStrategy,
    max_scale: int,
    running: int,
    pending: int,
    max_replica_count: int,
    scale_to: int,
) -> tuple[int, int]:
    """``GetEffectiveMaxScale`` of the chosen strategy: (effectiveMaxScale, scaleTo)."""
    selected = strategy.selected
    if selected == "custom":
        deduction = strategy.custom_scaling_queue_length_deduction or 0
        percentage = strategy.running_job_percentage or 0.0
        return min(max_scale - deduction - int(running * percentage), max_replica_count), scale_to
    if selected == "accurate":
        if max_scale + running - pending > max_replica_count:
            return max_replica_count - running, scale_to
        return max_scale - pending, scale_to
    if selected == "eager":
        return min(max_replica_count - running - pending, max_scale), max_replica_count
    return max_scale - running, scale_to


def scaling_decision(
    spec: ScaledJobSpec, running: int, pending: int, scale_to: int, max_scale: int
) -> tuple[int, int]:
    """``getScalingDecision``: (effectiveMaxScale, scaleTo); below ``MinReplicaCount()`` both are the
    Jobs missing to it, else the strategy decides over the Jobs above the minimum."""
    min_count = spec.effective_min_replica_count
    if running < min_count:
        return min_count - running, min_count - running
    max_count = spec.effective_max_replica_count
    strategy = spec.scaling_strategy
    return effective_max_scale(strategy, max_scale, running - min_count, pending, max_count, scale_to)


@dataclass(frozen=True)
class JobPod:
    """One pod of a ScaledJob's Job, as ``getPendingJobCount`` reads it: its phase and the
    condition types that are True."""

    phase: str
    true_conditions: frozenset[str] = frozenset()


def job_is_pending(pods: Sequence[JobPod], pending_pod_conditions: Sequence[str]) -> bool:
    """Whether an unfinished Job counts as pending (``getPendingJobCount``).

    Without ``pendingPodConditions``: none of its pods is Running or Succeeded
    (``isAnyPodRunningOrCompleted``); with them: no pod has every listed condition True
    (``areAllPendingPodConditionsFulfilled``, which compares the number of distinct fulfilled
    conditions with the length of the list, so a listed duplicate can never be fulfilled).
    """
    if not pending_pod_conditions:
        return not any(p.phase in ("Running", "Succeeded") for p in pods)
    required = set(pending_pod_conditions)
    return not any(len(required & p.true_conditions) == len(pending_pod_conditions) for p in pods)


@dataclass(frozen=True)
class ScaledJobDecision:
    """One ScaledJob poll, with KEDA's intermediate numbers (as its operator log prints them)."""

    active: bool
    #: Some trigger failed (it is skipped; Ready becomes Unknown or False).
    error: bool
    #: ``scaleTo`` after the strategy (``ceil(queueLength)``; ``MaxReplicaCount()`` for eager).
    scale_to: int
    #: ``min(MaxReplicaCount(), ceil(queueLength / targetAverageValue))`` over the combined triggers.
    max_scale: int
    #: The strategy's ``effectiveMaxScale``, floored at 0.
    effective_max_scale: int
    jobs_to_create: int


def decide_scaled_job(
    spec: ScaledJobSpec, queue_length_by_trigger: Sequence[float | None], running_jobs: int, pending_jobs: int
) -> ScaledJobDecision:
    """How many Jobs KEDA creates this poll; a None value is a scaler that failed (skipped)."""
    if len(queue_length_by_trigger) != len(spec.triggers):
        raise ValueError(f"{len(queue_length_by_trigger)} trigger values for {len(spec.triggers)} triggers")
    if running_jobs < 0 or pending_jobs < 0 or pending_jobs > running_jobs:
        raise ValueError(f"need 0 <= pending ({pending_jobs}) <= running ({running_jobs})")
    min_count, max_count = spec.effective_min_replica_count, spec.effective_max_replica_count
    metrics = [
        scaler_metrics(trigger, value, max_count)
        for trigger, value in zip(spec.triggers, queue_length_by_trigger, strict=True)
        if value is not None
    ]
    active, scale_to, max_scale = combine_scaler_metrics(
        metrics, spec.scaling_strategy.multiple_scalers_calculation, min_count, max_count
    )
    effective, scale_to = scaling_decision(spec, running_jobs, pending_jobs, scale_to, max_scale)
    effective = max(effective, 0)
    jobs = min(scale_to, effective) if active and effective > 0 else 0
    error = len(metrics) < len(spec.triggers)
    return ScaledJobDecision(active, error, scale_to, max_scale, effective, jobs)


class ScaledJobState:
    """KEDA's per-ScaledJob loop: ``lastActiveTime`` and the polling clock.

    Call :meth:`poll` at :attr:`next_poll_at` (the creation time, then every ``pollingInterval``).
    """

    def __init__(self, spec: ScaledJobSpec, created_at: float) -> None:
        self.spec = spec
        self.created_at = created_at
        #: ``status.lastActiveTime``; None until the object is first active.
        self.last_active_at: float | None = None
        self.next_poll_at = created_at

    def poll(
        self,
        now: float,
        queue_length_by_trigger: Sequence[float | None],
        running_jobs: int,
        pending_jobs: int,
    ) -> int:
        """The number of Jobs to create now."""
        if now < self.next_poll_at:
            raise ValueError(f"poll at {now} is before the next polling time {self.next_poll_at}")
        decision = decide_scaled_job(self.spec, queue_length_by_trigger, running_jobs, pending_jobs)
        self.next_poll_at = now + self.spec.polling_interval_s
        if decision.active:
            self.last_active_at = now
        return decision.jobs_to_create
