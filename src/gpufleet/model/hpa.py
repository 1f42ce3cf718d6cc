"""HorizontalPodAutoscaler (``autoscaling/v2``) spec as pure data, with upstream defaults and validation.

Mirrors the types of ``k8s.io/api/autoscaling/v2`` (``HorizontalPodAutoscalerSpec``, ``MetricSpec`` and its
``Resource``/``Pods``/``Object``/``External`` sources, ``MetricTarget``, ``HorizontalPodAutoscalerBehavior``,
``HPAScalingRules``, ``HPAScalingPolicy``), the defaulting of ``kubernetes/kubernetes:
pkg/apis/autoscaling/v2/defaults.go`` (``SetDefaults_HorizontalPodAutoscaler``, ``GenerateHPAScaleUpRules``,
``GenerateHPAScaleDownRules``, ``copyHPAScalingRules``) and the field checks of
``pkg/apis/autoscaling/validation/validation.go`` (``validateMetricTarget``, ``validateScalingRules``,
``validateScalingPolicy``, ``minReplicas``/``maxReplicas``) that keep the replica calculation well defined.
``ContainerResource`` metrics are not modelled.

Quantities: every metric value and target is a Kubernetes *milli-value* (an ``int``), which is what the HPA
controller computes with (``Quantity.MilliValue()``): a CPU usage of ``500m`` is ``500``, a queue length
of 30 is ``30000``. :func:`milli_value` converts a quantity string or number. ``Utilization`` targets are
integer percents of the request. Times and windows are seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from gpufleet.model.quantity import parse_quantity

MetricTargetType = Literal["Utilization", "Value", "AverageValue"]
ScalingPolicyType = Literal["Pods", "Percent"]
ScalingPolicySelect = Literal["Max", "Min", "Disabled"]

METRIC_TARGET_TYPES: tuple[MetricTargetType, ...] = ("Utilization", "Value", "AverageValue")
SCALING_POLICY_TYPES: tuple[ScalingPolicyType, ...] = ("Pods", "Percent")
SCALING_POLICY_SELECTS: tuple[ScalingPolicySelect, ...] = ("Max", "Min", "Disabled")

#: ``autoscaling.DefaultCPUUtilization``: the metric an HPA without ``metrics`` gets.
DEFAULT_CPU_UTILIZATION = 80
#: ``MaxPeriodSeconds`` of a scaling policy (validation).
MAX_POLICY_PERIOD_SECONDS = 1800
#: ``MaxStabilizationWindowSeconds`` (validation).
MAX_STABILIZATION_WINDOW_SECONDS = 3600


class HPASpecError(ValueError):
    """An HPA spec the API server would reject (the message names the field, as upstream)."""


def milli_value(quantity: object) -> int:
    """``resource.Quantity.MilliValue()``: the quantity in thousandths, rounded up (``"1.5"`` -> 1500)."""
    return math.ceil(parse_quantity(quantity) * 1000)


_BINARY_SUFFIXES = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def milli_quantity(milli: int, binary: bool = False) -> str:
    """``resource.NewMilliQuantity(milli, DecimalSI or BinarySI).String()``: the canonical text of a
    milli-value (``1500`` -> ``"1500m"``, ``2000`` -> ``"2"``, ``3000000`` -> ``"3k"``; binary, a whole
    number of bytes in the largest power of 1024 that divides it: ``1073741824000`` -> ``"1Gi"``)."""
    if milli % 1000:
        return f"{milli}m"
    number = milli // 1000
    if binary:
        for suffix, factor in _BINARY_SUFFIXES:
            if number and number % factor == 0:
                return f"{number // factor}{suffix}"
        return str(number)
    for suffix in ("", "k", "M", "G", "T", "P"):
        if number == 0 or number % 1000:
            return f"{number}{suffix}"
        number //= 1000
    return f"{number}E"


@dataclass(frozen=True)
class CrossVersionObjectReference:
    """``scaleTargetRef`` or an Object metric's ``describedObject``."""

    kind: str
    name: str
    api_version: str = ""


@dataclass(frozen=True)
class MetricIdentifier:
    """A custom or external metric's name and label selector (``matchLabels`` pairs only)."""

    name: str
    selector: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class MetricTarget:
    """``MetricTarget``: ``value``/``average_value`` are milli-values, ``average_utilization`` a percent."""

    type: MetricTargetType
    value: int | None = None
    average_value: int | None = None
    average_utilization: int | None = None

    def __post_init__(self) -> None:
        if self.type not in METRIC_TARGET_TYPES:
            raise HPASpecError(
                f"target.type: Unsupported value: {self.type!r}: supported values: {METRIC_TARGET_TYPES}"
            )
        if self.type == "Utilization" and self.average_utilization is None:
            raise HPASpecError(
                "target.averageUtilization: Required value: "
                "must set `averageUtilization` when `type` is `Utilization`"
            )
        if self.type == "Value" and self.value is None:
            raise HPASpecError("target.value: Required value: must set `value` when `type` is `Value`")
        if self.type == "AverageValue" and self.average_value is None:
            raise HPASpecError(
                "target.averageValue: Required value: must set `averageValue` when `type` is `AverageValue`"
            )
        if self.average_utilization is not None and self.average_utilization < 1:
            raise HPASpecError(
                f"target.averageUtilization: Invalid value: {self.average_utilization}: "
                "must be greater than 0"
            )
        if self.value is not None and self.value <= 0:
            raise HPASpecError(f"target.value: Invalid value: {self.value}: must be positive")
        if self.average_value is not None and self.average_value <= 0:
            raise HPASpecError(f"target.averageValue: Invalid value: {self.average_value}: must be positive")


def _require_target_type(source: str, target: MetricTarget, allowed: tuple[MetricTargetType, ...]) -> None:
    if target.type not in allowed:
        raise HPASpecError(
            f"{source}.target.type: Unsupported value: {target.type!r}: supported values: {allowed}"
        )


@dataclass(frozen=True)
class ResourceMetricSource:
    """``type: Resource``: a resource of the target's pods (``cpu``, ``memory``); Utilization or
    AverageValue."""

    name: str
    target: MetricTarget

    def __post_init__(self) -> None:
        _require_target_type("resource", self.target, ("Utilization", "AverageValue"))


@dataclass(frozen=True)
class PodsMetricSource:
    """``type: Pods``: a per-pod custom metric averaged over the pods; AverageValue only."""

    metric: MetricIdentifier
    target: MetricTarget

    def __post_init__(self) -> None:
        _require_target_type("pods", self.target, ("AverageValue",))


@dataclass(frozen=True)
class ObjectMetricSource:
    """``type: Object``: a metric describing one object (an Ingress, a queue); Value or AverageValue."""

    described_object: CrossVersionObjectReference
    metric: MetricIdentifier
    target: MetricTarget

    def __post_init__(self) -> None:
        _require_target_type("object", self.target, ("Value", "AverageValue"))


@dataclass(frozen=True)
class ExternalMetricSource:
    """``type: External``: a metric from outside the cluster (the sum of the returned series); Value or
    AverageValue."""

    metric: MetricIdentifier
    target: MetricTarget

    def __post_init__(self) -> None:
        _require_target_type("external", self.target, ("Value", "AverageValue"))


MetricSpec = ResourceMetricSource | PodsMetricSource | ObjectMetricSource | ExternalMetricSource


@dataclass(frozen=True)
class HPAScalingPolicy:
    """One rate limit: at most ``value`` pods (``Pods``) or percent (``Percent``) per ``period_seconds``."""

    type: ScalingPolicyType
    value: int
    period_seconds: int

    def __post_init__(self) -> None:
        if self.type not in SCALING_POLICY_TYPES:
            raise HPASpecError(
                f"policies.type: Unsupported value: {self.type!r}: supported values: {SCALING_POLICY_TYPES}"
            )
        if self.value <= 0:
            raise HPASpecError(f"policies.value: Invalid value: {self.value}: must be greater than zero")
        if not 0 < self.period_seconds <= MAX_POLICY_PERIOD_SECONDS:
            raise HPASpecError(
                f"policies.periodSeconds: Invalid value: {self.period_seconds}: "
                f"must be greater than zero and less than or equal to {MAX_POLICY_PERIOD_SECONDS}"
            )


@dataclass(frozen=True)
class HPAScalingRules:
    """``HPAScalingRules`` for one direction; ``None`` fields are unset and take the defaults.

    ``tolerance`` is the per-direction tolerance of KEP-4951; it only has an effect when the
    ``HPAConfigurableTolerance`` gate is on (alpha and off by default in 1.34).
    """

    stabilization_window_seconds: int | None = None
    select_policy: ScalingPolicySelect | None = None
    policies: tuple[HPAScalingPolicy, ...] | None = None
    tolerance: float | None = None

    def __post_init__(self) -> None:
        window = self.stabilization_window_seconds
        if window is not None and not 0 <= window <= MAX_STABILIZATION_WINDOW_SECONDS:
            raise HPASpecError(
                f"stabilizationWindowSeconds: Invalid value: {window}: "
                "must be greater than or equal to zero and less than or equal to "
                f"{MAX_STABILIZATION_WINDOW_SECONDS}"
            )
        if self.select_policy is not None and self.select_policy not in SCALING_POLICY_SELECTS:
            raise HPASpecError(
                f"selectPolicy: Unsupported value: {self.select_policy!r}: "
                f"supported values: {SCALING_POLICY_SELECTS}"
            )
        if self.policies is not None and not self.policies:
            raise HPASpecError("policies: Required value: must specify at least one Policy")
        if self.tolerance is not None and self.tolerance < 0:
            raise HPASpecError(
                f"tolerance: Invalid value: {self.tolerance}: must be greater than or equal to 0"
            )


@dataclass(frozen=True)
class HorizontalPodAutoscalerBehavior:
    """``spec.behavior``; an HPA without it uses the controller's legacy path, not these defaults."""

    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None


#: ``defaultHPAScaleUpRules``: no stabilization, the larger of +4 pods and +100 % per 15 s.
DEFAULT_SCALE_UP_RULES = HPAScalingRules(
    stabilization_window_seconds=0,
    select_policy="Max",
    policies=(HPAScalingPolicy("Pods", 4, 15), HPAScalingPolicy("Percent", 100, 15)),
)
#: ``defaultHPAScaleDownRules``: window unset (the controller's ``--horizontal-pod-autoscaler-downscale-
#: stabilization``, 300 s, fills it in), up to 100 % of the pods per 15 s.
DEFAULT_SCALE_DOWN_RULES = HPAScalingRules(
    stabilization_window_seconds=None,
    select_policy="Max",
    policies=(HPAScalingPolicy("Percent", 100, 15),),
)


def _copy_scaling_rules(rules: HPAScalingRules | None, defaults: HPAScalingRules) -> HPAScalingRules:
    """``copyHPAScalingRules``: every field set in ``rules`` overrides the default, field by field."""
    if rules is None:
        return defaults
    return HPAScalingRules(
        stabilization_window_seconds=(
            defaults.stabilization_window_seconds
            if rules.stabilization_window_seconds is None
            else rules.stabilization_window_seconds
        ),
        select_policy=defaults.select_policy if rules.select_policy is None else rules.select_policy,
        policies=defaults.policies if rules.policies is None else rules.policies,
        tolerance=defaults.tolerance if rules.tolerance is None else rules.tolerance,
    )


def generate_scale_up_rules(rules: HPAScalingRules | None) -> HPAScalingRules:
    """``GenerateHPAScaleUpRules``: ``rules`` with every unset field taken from the scale-up defaults."""
    return _copy_scaling_rules(rules, DEFAULT_SCALE_UP_RULES)


def generate_scale_down_rules(rules: HPAScalingRules | None) -> HPAScalingRules:
    """``GenerateHPAScaleDownRules``: as above; the stabilization window may stay unset."""
    return _copy_scaling_rules(rules, DEFAULT_SCALE_DOWN_RULES)


@dataclass(frozen=True)
class HorizontalPodAutoscalerSpec:
    """``HorizontalPodAutoscalerSpec``; ``metrics=()`` means the default CPU utilization of 80 %.

    ``min_replicas=0`` passes here; the controller accepts it only with the ``HPAScaleToZero`` gate
    and at least one Object or External metric, as the API server does.
    """

    scale_target_ref: CrossVersionObjectReference
    max_replicas: int
    min_replicas: int = 1
    metrics: tuple[MetricSpec, ...] = ()
    behavior: HorizontalPodAutoscalerBehavior | None = None

    def __post_init__(self) -> None:
        if self.max_replicas < 1:
            raise HPASpecError(
                f"spec.maxReplicas: Invalid value: {self.max_replicas}: must be greater than or equal to 1"
            )
        if self.min_replicas < 0:
            raise HPASpecError(
                f"spec.minReplicas: Invalid value: {self.min_replicas}: must be greater than or equal to 0"
            )
        if self.max_replicas < self.min_replicas:
            raise HPASpecError(
                f"spec.maxReplicas: Invalid value: {self.max_replicas}: "
                "must be greater than or equal to `minReplicas`"
            )

    def effective_metrics(self) -> tuple[MetricSpec, ...]:
        """``spec.metrics`` after ``SetDefaults_HorizontalPodAutoscaler``."""
        if self.metrics:
            return self.metrics
        return (
            ResourceMetricSource(
                "cpu", MetricTarget("Utilization", average_utilization=DEFAULT_CPU_UTILIZATION)
            ),
        )
