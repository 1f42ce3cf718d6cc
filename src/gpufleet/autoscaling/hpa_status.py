"""An HPA's status and events as the HorizontalPodAutoscaler controller leaves them, sync after sync.

:class:`HPAStatus` takes each sync's :class:`~gpufleet.autoscaling.hpa_controller.ScaleDecision` and keeps
what ``kubectl describe hpa`` shows of the object: ``status.currentReplicas``, ``desiredReplicas``,
``lastScaleTime`` and ``currentMetrics``, the conditions with their ``lastTransitionTime``, and the events.
It stores only what changed: a sync that leaves the status as it was costs a comparison per condition.

Mirrors ``kubernetes/kubernetes: pkg/controller/podautoscaler/horizontal.go``: ``setStatus`` (the desired
count is the current one when nothing is rescaled, ``lastScaleTime`` moves on a rescale),
``setCurrentReplicasAndMetricsInStatus`` (a failed metrics computation keeps the last desired count),
``setConditionInList`` (a condition keeps its place; its ``lastTransitionTime`` moves only when its status
changes). Its events go through client-go's event correlator (:mod:`gpufleet.model.event_correlator`:
repeats counted, similar messages combined, and at most 25 of one type then one per 5 minutes written), as
the controller's ``record.NewBroadcaster`` does.
:func:`hpa_summary` writes it, with the spec, as ``summary.json``'s record of the HPA.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpufleet.autoscaling.hpa_controller import HPACondition, ScaleDecision
from gpufleet.autoscaling.hpa_replicas import MetricStatus
from gpufleet.model.event_correlator import EventCorrelator
from gpufleet.model.hpa import (
    HorizontalPodAutoscalerSpec,
    HPAScalingRules,
    MetricSpec,
    MetricTarget,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
    generate_scale_down_rules,
    generate_scale_up_rules,
    milli_quantity,
)


@dataclass(frozen=True)
class HeldCondition:
    """A condition and its ``lastTransitionTime`` (seconds)."""

    condition: HPACondition
    last_transition_s: float

    @property
    def status(self) -> str:
        return self.condition.status


@dataclass(frozen=True)
class Rescale:
    """One ``SuccessfulRescale``: when, from and to how many replicas, and why."""

    at_s: float
    from_replicas: int
    to_replicas: int
    reason: str


@dataclass
class HPAStatus:
    """One HPA's status and events (see the module docstring)."""

    current_replicas: int = 0
    desired_replicas: int = 0
    last_scale_time_s: float | None = None
    current_metrics: tuple[MetricStatus | None, ...] = ()
    #: by type, in the order each was first set
    conditions: dict[str, HeldCondition] = field(default_factory=dict)
    #: the events of the HPA as the API server holds them
    events: EventCorrelator = field(default_factory=EventCorrelator)
    rescales: list[Rescale] = field(default_factory=list)
    #: what the last sync's conditions were made of (``record`` sets them again only when it changes)
    _conditions_of: tuple[object, ...] = ()

    def record(self, now: float, current_replicas: int, decision: ScaleDecision) -> None:
        """The status a sync at ``now`` leaves, its target at ``current_replicas`` (``spec.replicas``)."""
        self.current_replicas = current_replicas
        if decision.reason != "FailedComputeMetricsReplicas":
            self.desired_replicas = decision.desired_replicas
        self.current_metrics = decision.metrics
        if decision.rescale:
            self.last_scale_time_s = now
            self.rescales.append(Rescale(now, current_replicas, decision.desired_replicas, decision.reason))
        made_of = (
            decision.rescale,
            decision.desired_replicas,
            decision.able_to_scale,
            decision.scaling_limited,
            decision.limited,
            decision.scaling_active,
        )
        if made_of != self._conditions_of:
            self._conditions_of = made_of
            self._set_conditions(now, decision.conditions())
        for event in decision.events:
            self.events.record(now, event.type, event.reason, event.message)

    def _set_conditions(self, now: float, conditions: tuple[HPACondition, ...]) -> None:
        """``setConditionInList`` for each condition the sync set."""
        for condition in conditions:
            held = self.conditions.get(condition.type)
            if held is None or held.status != condition.status:
                self.conditions[condition.type] = HeldCondition(condition, now)
            elif held.condition != condition:
                self.conditions[condition.type] = HeldCondition(condition, held.last_transition_s)


def _target(target: MetricTarget, binary: bool) -> dict[str, Any]:
    """A metric's target as the API writes it: its type and the one field it sets (a quantity)."""
    if target.type == "Utilization":
        return {"type": "Utilization", "average_utilization": target.average_utilization}
    milli = target.value if target.type == "Value" else target.average_value
    assert milli is not None  # MetricTarget validation
    key = "value" if target.type == "Value" else "average_value"
    return {"type": target.type, key: milli_quantity(milli, binary)}


def _current(status: MetricStatus | None, binary: bool) -> dict[str, Any] | None:
    """A metric's ``current`` (``MetricValueStatus``): the fields its computation filled."""
    if status is None:
        return None
    out: dict[str, Any] = {}
    if status.value is not None:
        out["value"] = milli_quantity(status.value, binary)
    if status.average_value is not None:
        out["average_value"] = milli_quantity(status.average_value, binary)
    if status.average_utilization is not None:
        out["average_utilization"] = status.average_utilization
    return out


def _metric(metric: MetricSpec, status: MetricStatus | None) -> dict[str, Any]:
    """One metric of the spec with its current value (memory's as ``buildQuantity`` writes it, BinarySI)."""
    if isinstance(metric, ResourceMetricSource):
        binary = metric.name == "memory"
        head: dict[str, Any] = {"type": "Resource", "name": metric.name}
    elif isinstance(metric, PodsMetricSource):
        binary, head = False, {"type": "Pods", "name": metric.metric.name}
    elif isinstance(metric, ObjectMetricSource):
        ref = metric.described_object
        binary, head = (
            False,
            {"type": "Object", "name": metric.metric.name, "object": f"{ref.kind}/{ref.name}"},
        )
    else:
        binary, head = False, {"type": "External", "name": metric.metric.name}
    return {**head, "target": _target(metric.target, binary), "current": _current(status, binary)}


def _rules(rules: HPAScalingRules) -> dict[str, Any]:
    return {
        "stabilization_window_seconds": rules.stabilization_window_seconds,
        "select_policy": rules.select_policy,
        "policies": [
            {"type": p.type, "value": p.value, "period_seconds": p.period_seconds}
            for p in rules.policies or ()
        ],
    }


def hpa_summary(
    spec: HorizontalPodAutoscalerSpec, status: HPAStatus, scaled_object: str | None = None
) -> dict[str, Any]:
    """``summary.json``'s record of one HPA: its spec as the API server keeps it (the behavior's defaults
    filled, ``GenerateHPAScale{Up,Down}Rules``), its status, conditions, events and rescales;
    ``scaled_object`` names the KEDA ScaledObject that owns it."""
    behavior = spec.behavior
    current = status.current_metrics
    record: dict[str, Any] = {
        "reference": f"{spec.scale_target_ref.kind}/{spec.scale_target_ref.name}",
        "min_replicas": spec.min_replicas,
        "max_replicas": spec.max_replicas,
        "metrics": [
            _metric(m, current[i] if i < len(current) else None)
            for i, m in enumerate(spec.effective_metrics())
        ],
        "behavior": None
        if behavior is None
        else {
            "scale_up": _rules(generate_scale_up_rules(behavior.scale_up)),
            "scale_down": _rules(generate_scale_down_rules(behavior.scale_down)),
        },
        "current_replicas": status.current_replicas,
        "desired_replicas": status.desired_replicas,
        "last_scale_time_s": status.last_scale_time_s,
        "conditions": [
            {**vars(held.condition), "last_transition_s": held.last_transition_s}
            for held in status.conditions.values()
        ],
        "events": [
            {
                "type": e.type,
                "reason": e.reason,
                "message": e.message,
                "first_s": e.first_s,
                "last_s": e.last_s,
                "count": e.count,
            }
            for e in status.events.events
        ],
        "rescales": [
            {"t_s": r.at_s, "from": r.from_replicas, "to": r.to_replicas, "reason": r.reason}
            for r in status.rescales
        ],
    }
    if scaled_object is not None:
        record["scaled_object"] = scaled_object
    return record
