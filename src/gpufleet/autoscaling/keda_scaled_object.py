"""KEDA ScaledObject decisions: activation (0 <-> 1) by KEDA, scaling (1 <-> N) by the HPA it creates.

Mirrors ``kedacore/keda``:

- ``pkg/scaling/executor/scale_scaledobjects.go`` (``RequestScale``, ``scaleFromZeroOrIdle``,
  ``scaleToZeroOrIdle``, ``getIdleOrMinimumReplicaCount``): each polling interval KEDA asks its
  scalers whether any is active (``pkg/scaling/scale_handler.go``: the object is active when any
  trigger that answered is active, and in error when any trigger failed) and then
  - active and at 0 replicas (or, with ``idleReplicaCount``, below ``minReplicaCount``): scale to
    ``minReplicaCount`` if > 0, else to 1, and record ``lastActiveTime``;
  - active with replicas, some trigger failing: change nothing (Ready=Unknown, ``PartialTriggerError``);
  - active with replicas: record ``lastActiveTime``; the HPA scales;
  - inactive with a failing trigger: change nothing (with no fallback, Ready=False ``TriggerError``;
    with ``fallback.replicas != 0``, wait for the fallback; with ``fallback.replicas == 0`` go on);
  - inactive above ``idleReplicaCount``, or above 0 with ``minReplicaCount == 0``: scale to
    ``idleReplicaCount`` (else ``minReplicaCount``) once ``lastActiveTime + cooldownPeriod`` has passed
    (with no ``lastActiveTime``: ``creationTimestamp + initialCooldownPeriod``), otherwise cool down;
  - inactive below ``minReplicaCount`` with no ``idleReplicaCount``: scale to ``minReplicaCount``.
- ``pkg/scaling/scale_handler.go`` (``startScaleLoop``): the first poll runs when the object is
  created, then one every ``pollingInterval``; ``getScalerState`` skips a cpu/memory trigger (no
  External metric: neither active nor failing) and ``getScaledObjectState`` makes a ScaledObject
  whose triggers are all cpu/memory active (unless one fails), so that it never scales to zero.
- ``controllers/keda/hpa.go`` and ``apis/keda/v1alpha1/scaledobject_types.go``: the HPA
  ``keda-hpa-<name>`` with ``minReplicas = max(minReplicaCount, 1)``, ``maxReplicas =
  maxReplicaCount``, one External metric per trigger (target ``listLength`` / ``threshold`` / 1 for
  cron), a Resource metric for a cpu/memory trigger (``cpuMemoryScaler``), and
  ``advanced.horizontalPodAutoscalerConfig.behavior`` copied verbatim; with
  ``advanced.scalingModifiers`` (``getScaledObjectMetricSpecs``) the External metrics give way to one,
  ``composite-metric``, against the formula's ``target`` (``AverageValue``, or ``Value`` per
  ``metricType``), the Resource metrics kept (:mod:`gpufleet.autoscaling.keda_scaling_modifiers`
  computes its value and the object's activity).
- ``pkg/fallback/fallback.go`` (``GetMetricsWithFallback``, ``doFallback``): what the HPA reads
  when a trigger keeps failing.

How the HPA turns an External ``AverageValue`` metric into replicas is the HPA's part and is not
repeated here: ``gpufleet.autoscaling.hpa_replicas``
(``ReplicaCalculator.get_external_per_pod_metric_replicas``, mirroring
``GetExternalPerPodMetricReplicas``) computes ``usageRatio = total / (target ×
status.replicas)`` and, outside the tolerance (0.1), ``ceil(total / target)`` -- for a redis list
``ceil(LLEN / listLength)`` whatever the current count -- else ``status.replicas``; the HPA then
clamps to ``[minReplicas, maxReplicas]`` and applies its behavior. Feed it
:attr:`HpaExternalMetric.target_milli` and ``to_milli(value)`` (milli-values, as upstream).

Cooldown comparison (derived): upstream scales in when ``lastActiveTime + cooldownPeriod`` is
strictly *before* ``time.Now()``. ``lastActiveTime`` is a ``metav1.Time``, persisted with
one-second precision and read back before the next poll, and the next poll runs a little after
its nominal time, so in a real cluster the poll exactly ``cooldownPeriod`` after the last active
one scales in. On a virtual clock with no latency that is ``now >= lastActiveTime + cooldownPeriod``,
which is the comparison used here (likewise for ``initialCooldownPeriod``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from gpufleet.autoscaling.keda_scaling_modifiers import (
    TriggerRead,
    composite_activity,
    external_triggers,
)
from gpufleet.autoscaling.keda_triggers import is_active, metric_name, target_milli
from gpufleet.model.hpa import MetricTarget
from gpufleet.model.keda import (
    COMPOSITE_METRIC_NAME,
    ResourceScaler,
    ScaledObjectSpec,
    ScaleTargetRef,
    ScaleTrigger,
)


@dataclass(frozen=True)
class HpaExternalMetric:
    """One External metric of the HPA KEDA creates (one per trigger)."""

    name: str
    target_type: Literal["AverageValue", "Value"]
    #: Target quantity in milli-units, as the HPA reads it (``MilliValue()``).
    target_milli: int

    @property
    def target(self) -> float:
        return self.target_milli / 1000


@dataclass(frozen=True)
class HpaResourceMetric:
    """The ``Resource`` metric of a cpu or memory trigger (``cpuMemoryScaler.GetMetricSpecForScaling``):
    the HPA reads the pods' usage itself; KEDA's scaler reports nothing. ``container`` set: upstream's
    ``ContainerResource`` metric of that container, which gpufleet does not model."""

    resource: str
    target: MetricTarget
    container: str | None = None


HpaMetric = HpaExternalMetric | HpaResourceMetric


@dataclass(frozen=True)
class KedaHpaInputs:
    """What KEDA writes into the HPA it owns for a ScaledObject."""

    name: str
    scale_target_ref: ScaleTargetRef
    min_replicas: int
    max_replicas: int
    #: one per trigger, in order
    metrics: tuple[HpaMetric, ...]
    #: ``advanced.horizontalPodAutoscalerConfig.behavior``, verbatim (None: the HPA defaults).
    behavior: Mapping[str, Any] | None


def hpa_inputs(spec: ScaledObjectSpec) -> KedaHpaInputs:
    """The HPA KEDA creates for ``spec``: name, bounds, one metric per trigger (External, or Resource for
    a cpu/memory trigger) or, with a formula, the Resource metrics and ``composite-metric``, behavior."""
    metrics = tuple(_hpa_metric(i, trigger) for i, trigger in enumerate(spec.triggers))
    modifiers = spec.scaling_modifiers
    if modifiers is not None:
        composite = HpaExternalMetric(
            COMPOSITE_METRIC_NAME, modifiers.target_type, int(modifiers.target_value * 1000)
        )
        metrics = (*(m for m in metrics if isinstance(m, HpaResourceMetric)), composite)
    return KedaHpaInputs(
        name=spec.resolved_hpa_name,
        scale_target_ref=spec.scale_target_ref,
        min_replicas=spec.hpa_min_replicas,
        max_replicas=spec.max_replica_count,
        metrics=metrics,
        behavior=spec.hpa_behavior,
    )


def _hpa_metric(index: int, trigger: ScaleTrigger) -> HpaMetric:
    scaler = trigger.scaler
    if isinstance(scaler, ResourceScaler):
        return HpaResourceMetric(scaler.resource, scaler.target, scaler.container_name)
    return HpaExternalMetric(
        name=metric_name(index, trigger),
        target_type="Value" if trigger.metric_type == "Value" else "AverageValue",
        target_milli=target_milli(trigger),
    )


@dataclass(frozen=True)
class HealthStatus:
    """``status.health[<metric>]`` of a ScaledObject: ``numberOfFailures`` and ``status``."""

    number_of_failures: int
    status: Literal["Happy", "Failing"]


class FallbackTracker:
    """The metrics-adapter side of ``spec.fallback`` (``pkg/fallback/fallback.go``).

    Each time the HPA reads trigger ``i`` (``metric_value``), the scaler's answer passes through
    ``GetMetricsWithFallback``. Health (:meth:`health`) is tracked only when the ScaledObject has a
    fallback: a success sets it to ``0``/``Happy`` and returns the value; a failure increments the
    count, marks it ``Failing`` and, once the count exceeds ``failureThreshold``, returns the fallback
    metric (:func:`fallback_metric_value`) so that the HPA proposes ``replicas``:
    ``fallback.replicas`` (behavior ``static``), the current replicas (``currentReplicas``), or the
    larger/smaller of the two (``currentReplicasIfHigher`` / ``currentReplicasIfLower``); with the
    behavior ``scalingModifiers`` it reads nil for the formula instead (:meth:`read`). Otherwise
    it returns None: the metric is unavailable to the HPA. Without a fallback (or, with a formula, one
    whose ``target`` is not a positive integer: ``HasValidFallback``), a failure is just an error and
    the health is left alone.
    """

    def __init__(self, spec: ScaledObjectSpec) -> None:
        self._spec = spec
        self._health: list[HealthStatus | None] = [None] * len(spec.triggers)

    def failures(self, index: int) -> int:
        """``status.health[<metric>].numberOfFailures`` for trigger ``index`` (0 when not tracked)."""
        health = self._health[index]
        return 0 if health is None else health.number_of_failures

    def health(self, index: int) -> HealthStatus | None:
        """``status.health[<metric>]`` for trigger ``index``; None until a fallback tracks it."""
        return self._health[index]

    @property
    def fallback_condition(self) -> bool | None:
        """The ``Fallback`` condition (``updateStatus``): True when some trigger is ``Failing`` with
        more than ``failureThreshold`` failures (``fallbackExceededThreshold``), False once health is
        tracked and none is; None (the condition stays Unknown) without a fallback or before any read."""
        fallback = self._spec.fallback
        if fallback is None or all(h is None for h in self._health):
            return None
        return any(
            h is not None and h.status == "Failing" and h.number_of_failures > fallback.failure_threshold
            for h in self._health
        )

    def metric_value(
        self, index: int, value: float | None, current_replicas: int, ready_replicas: int | None = None
    ) -> float | None:
        """What the HPA reads for trigger ``index``, given the scaler's answer (None: an error).

        ``ready_replicas`` (Running and Ready pods of the target) is needed only for the fallback of
        a ``Value`` trigger; when it is None or 0 the fallback fails and the metric stays unavailable.
        """
        return self.read(index, value, current_replicas, ready_replicas).value

    def read(
        self,
        index: int,
        value: float | None,
        current_replicas: int,
        ready_replicas: int | None = None,
        record: bool = True,
    ) -> TriggerRead:
        """:meth:`metric_value` with what it was made of (``GetMetricsWithFallback``'s metrics and
        ``fallbackActive``); with the fallback behavior ``scalingModifiers`` a trigger past its threshold
        reads nil for the formula. ``record`` False: the answer the current health gives, health left as
        it is (gpufleet's KEDA poll reads the health the HPA's reads keep)."""
        fallback = self._spec.fallback
        if value is not None:
            if self._spec.fallback_tracked and record:
                self._health[index] = HealthStatus(0, "Happy")
            return TriggerRead(value)
        if fallback is None or not self._spec.fallback_tracked:
            return TriggerRead(None)  # no fallback, or not a valid one (HasValidFallback)
        failures = self.failures(index) + (1 if record else 0)
        if record:
            self._health[index] = HealthStatus(failures, "Failing")
        if failures <= fallback.failure_threshold:
            return TriggerRead(None)
        if fallback.behavior == "scalingModifiers":
            return TriggerRead(-1.0, nil=True)  # the placeholder metric: nil for "??"
        replicas = fallback_metric_value(self._spec, index, current_replicas, ready_replicas)
        return TriggerRead(replicas, fallback_active=replicas is not None)


def fallback_metric_value(
    spec: ScaledObjectSpec, index: int, current_replicas: int, ready_replicas: int | None = None
) -> float | None:
    """``doFallback`` (``pkg/fallback/fallback.go``): the metric value that makes the HPA propose the
    fallback replicas for trigger ``index``.

    ``int64(target × 1000 × replicas)`` milli-units, the target read as a float (a prometheus
    threshold of 0.5 with 4 replicas reports 2). For a ``Value`` trigger the replicas are first
    divided by the ready replicas; with none known (or 0) the fallback fails (None). With a formula
    the target and type are ``scalingModifiers``' (the ``composite-metric`` value); the behavior
    ``scalingModifiers`` has no fallback metric (None: the formula reads nil instead).
    """
    fallback = spec.fallback
    if fallback is None or fallback.behavior == "scalingModifiers":
        return None
    trigger, modifiers = spec.triggers[index], spec.scaling_modifiers
    replicas: float = {
        "static": fallback.replicas,
        "currentReplicas": current_replicas,
        "currentReplicasIfHigher": max(current_replicas, fallback.replicas),
        "currentReplicasIfLower": min(current_replicas, fallback.replicas),
    }[fallback.behavior]
    metric_type = trigger.metric_type if modifiers is None else modifiers.target_type
    if metric_type == "Value":
        if not ready_replicas:
            return None
        replicas /= ready_replicas
    if modifiers is not None:
        return int(modifiers.target_value * 1000 * replicas) / 1000
    return int(target_milli(trigger) * replicas) / 1000


class KedaReason(StrEnum):
    """Why a poll decided what it did, in KEDA's own words (events, condition reasons)."""

    #: ``KEDAScaleTargetActivated``: 0 (or idle) -> ``max(minReplicaCount, 1)``.
    ACTIVATED = "ScaleTargetActivated"
    #: ``KEDAScaleTargetDeactivated``: -> ``idleReplicaCount`` or ``minReplicaCount`` after cooldown.
    DEACTIVATED = "ScaleTargetDeactivated"
    #: Inactive below ``minReplicaCount`` (no idle mode): set to ``minReplicaCount``.
    SET_TO_MIN = "SetToMinReplicaCount"
    #: Active condition True: the HPA scales between ``max(min, 1)`` and ``max``.
    ACTIVE = "ScalerActive"
    #: Inactive, waiting for ``cooldownPeriod`` (or ``initialCooldownPeriod``) before scaling in.
    COOLDOWN = "ScalerCooldown"
    #: Inactive and nothing to do.
    NOT_ACTIVE = "ScalerNotActive"
    #: Active, but some trigger failed: nothing changes, ``lastActiveTime`` is not updated.
    PARTIAL_TRIGGER_ERROR = "PartialTriggerError"
    #: Inactive with a failing trigger and no fallback: nothing changes.
    TRIGGER_ERROR = "TriggerError"
    #: Inactive with a failing trigger and ``fallback.replicas != 0``: KEDA does not scale to 0.
    FALLBACK = "Fallback"


@dataclass(frozen=True)
class KedaDecision:
    """The outcome of one ScaledObject poll."""

    #: Replicas KEDA sets on the scale target now; None: KEDA leaves the count alone.
    scale_to: int | None
    reason: KedaReason
    active: bool
    error: bool
    #: Whether the HPA scales the target after this poll (it is disabled at 0 replicas).
    hpa_enabled: bool

    @property
    def ready(self) -> Literal["True", "False", "Unknown"]:
        """The ``Ready`` condition ``RequestScale`` leaves: False with ``TriggerError``, Unknown with
        ``PartialTriggerError``, otherwise True (``ScaledObjectReady``)."""
        if self.reason is KedaReason.TRIGGER_ERROR:
            return "False"
        if self.reason is KedaReason.PARTIAL_TRIGGER_ERROR:
            return "Unknown"
        return "True"


class ScaledObjectState:
    """KEDA's per-ScaledObject loop: ``lastActiveTime`` and the polling clock.

    Call :meth:`poll` at :attr:`next_poll_at` (the creation time, then every ``pollingInterval``)
    with each trigger's current value (the list length, the query result; None when the scaler
    failed; ignored for a cpu/memory trigger) and the scale target's current ``spec.replicas``.
    """

    def __init__(
        self, spec: ScaledObjectSpec, created_at: float, fallback: FallbackTracker | None = None
    ) -> None:
        self.spec = spec
        self.created_at = created_at
        #: the metrics adapter's health, which a formula's activity reads (``getScaledObjectState``)
        self.fallback = fallback
        #: the last poll's decision; None before the first
        self.last_decision: KedaDecision | None = None
        #: ``status.lastActiveTime``; None until a trigger is first active.
        self.last_active_at: float | None = None
        self.next_poll_at = created_at

    def poll(self, now: float, trigger_values: Sequence[float | None], current_replicas: int) -> KedaDecision:
        if now < self.next_poll_at:
            raise ValueError(f"poll at {now} is before the next polling time {self.next_poll_at}")
        if len(trigger_values) != len(self.spec.triggers):
            raise ValueError(f"{len(trigger_values)} trigger values for {len(self.spec.triggers)} triggers")
        self.next_poll_at = now + self.spec.polling_interval_s
        answered = [
            (trigger, value)
            for trigger, value in zip(self.spec.triggers, trigger_values, strict=True)
            if not trigger.is_resource
        ]
        if self.spec.scaling_modifiers is None:
            error = any(value is None for _, value in answered)
            active = any(value is not None and is_active(trigger, value) for trigger, value in answered)
        else:
            active, error = composite_activity(self.spec, self._reads(trigger_values, current_replicas))
        if not answered and not error:
            active = True  # only cpu/memory triggers: always active (getScaledObjectState)
        scale_to, reason = self._decide(now, active, error, current_replicas)
        replicas_after = current_replicas if scale_to is None else scale_to
        self.last_decision = KedaDecision(scale_to, reason, active, error, hpa_enabled=replicas_after > 0)
        return self.last_decision

    def _reads(self, trigger_values: Sequence[float | None], current_replicas: int) -> list[TriggerRead]:
        tracker = self.fallback
        return [
            TriggerRead(trigger_values[i])
            if tracker is None
            else tracker.read(i, trigger_values[i], current_replicas, record=False)
            for i, _ in external_triggers(self.spec)
        ]

    def _decide(self, now: float, active: bool, error: bool, current: int) -> tuple[int | None, KedaReason]:
        spec = self.spec
        minimum, idle = spec.min_replica_count, spec.idle_replica_count
        if active:
            if (idle is not None and current < minimum) or current == 0:
                self.last_active_at = now
                return (minimum if minimum > 0 else 1), KedaReason.ACTIVATED
            if error:
                return None, KedaReason.PARTIAL_TRIGGER_ERROR
            self.last_active_at = now
            return None, KedaReason.ACTIVE
        if error and spec.fallback is not None and spec.fallback.replicas != 0:
            return None, KedaReason.FALLBACK
        if error and spec.fallback is None:
            return None, KedaReason.TRIGGER_ERROR
        if (idle is not None and current > idle) or (current > 0 and minimum == 0):
            if self._cooled_down(now):
                return (idle if idle is not None else minimum), KedaReason.DEACTIVATED
            return None, KedaReason.COOLDOWN
        if current < minimum and idle is None:
            return minimum, KedaReason.SET_TO_MIN
        return None, KedaReason.NOT_ACTIVE

    def _cooled_down(self, now: float) -> bool:
        if self.last_active_at is None:
            return now >= self.created_at + self.spec.initial_cooldown_period_s
        return now >= self.last_active_at + self.spec.cooldown_period_s
