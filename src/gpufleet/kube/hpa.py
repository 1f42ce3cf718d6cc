"""``autoscaling/v2`` HorizontalPodAutoscaler -> ``gpufleet.model.hpa.HorizontalPodAutoscalerSpec``.

The document has passed the Kubernetes 1.34 schema (types, required fields, unknown fields);
this adds what ``pkg/apis/autoscaling/validation`` checks beyond it (``validateMetricSpec``:
the ``type`` names the one source that is set; scaling to zero needs an Object or External
metric) and converts: quantities to milli-values (``milli_value``), label selectors to their
``matchLabels`` pairs. The model's own checks (``HPASpecError``) become problem lines with the
field path. ``ContainerResource`` metrics and ``matchExpressions`` in metric selectors are
warnings (not modelled). Whether ``scaleTargetRef`` names a Deployment of the scenario is
checked by the loader once every document is read.

The same behavior conversion reads a KEDA ScaledObject's
``advanced.horizontalPodAutoscalerConfig.behavior`` (see ``kube.keda``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from gpufleet.kube.objects import items, mapping
from gpufleet.kube.problems import Reporter, forbidden, required, unsupported
from gpufleet.model.hpa import (
    METRIC_TARGET_TYPES,
    SCALING_POLICY_SELECTS,
    SCALING_POLICY_TYPES,
    CrossVersionObjectReference,
    ExternalMetricSource,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerSpec,
    HPAScalingPolicy,
    HPAScalingRules,
    HPASpecError,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
    ScalingPolicySelect,
    ScalingPolicyType,
    milli_value,
)
from gpufleet.model.quantity import QuantityError, parse_quantity

BEHAVIOR_DEFINITION = "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior"
#: ``spec.metrics[].type`` -> the field that holds its source (``validMetricSourceTypes``).
METRIC_SOURCES = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "External": "external",
}
_DEFAULT_MIN_REPLICAS = 1


def _report(at: Reporter, err: ValueError, strip: str = "") -> None:
    """A model error (``"field.path: message"``) as a problem line below ``at``."""
    path, sep, message = str(err).partition(": ")
    if not sep or " " in path:
        at.error("", str(err))
        return
    at.error(path.removeprefix(strip), message)


def hpa(body: Mapping[str, Any], report: Reporter) -> HorizontalPodAutoscalerSpec | None:
    """The HPA's spec, or None when it cannot be built (the problems are reported)."""
    spec = mapping(body.get("spec"))
    at_spec = report.at("spec")
    ref = mapping(spec.get("scaleTargetRef"))
    target = CrossVersionObjectReference(
        kind=str(ref.get("kind") or ""),
        name=str(ref.get("name") or ""),
        api_version=str(ref.get("apiVersion") or ""),
    )
    metrics, all_read = _metrics(spec.get("metrics"), at_spec)
    behavior = behavior_of(spec.get("behavior"), at_spec.at("behavior"))
    max_replicas = spec.get("maxReplicas")
    min_replicas = spec.get("minReplicas")
    if min_replicas is None:
        min_replicas = _DEFAULT_MIN_REPLICAS
    if not isinstance(max_replicas, int) or not isinstance(min_replicas, int):
        return None  # the schema check reported it
    if min_replicas == 0 and all_read:
        if any(isinstance(m, ObjectMetricSource | ExternalMetricSource) for m in metrics):
            report.warn(
                "spec.minReplicas",
                "0 needs the HPAScaleToZero feature gate (alpha, off by default in Kubernetes 1.34); "
                "read as if it were on",
            )
        else:
            at_spec.error(
                "metrics",
                forbidden("must specify at least one Object or External metric to support scaling to zero"),
            )
    if all_read and spec.get("metrics") and not metrics:
        report.warn("spec.metrics", "no metric gpufleet models: the HPA is ignored")
        return None
    try:
        return HorizontalPodAutoscalerSpec(target, max_replicas, min_replicas, tuple(metrics), behavior)
    except HPASpecError as err:
        _report(report, err)
        return None


# -- metrics -----------------------------------------------------------------------------------


def _metrics(raw: object, at_spec: Reporter) -> tuple[list[MetricSpec], bool]:
    """The metrics gpufleet models, and whether every metric read without an error."""
    metrics: list[MetricSpec] = []
    ok = True
    for i, item in enumerate(items(raw)):
        path = f"metrics[{i}]"
        kind = item.get("type")
        if kind == "ContainerResource" and item.get("containerResource") is not None:
            at_spec.not_modelled(f"{path}.containerResource")
            continue
        metric = _metric(item, at_spec.at(path))
        if metric is None:
            ok = False
        else:
            metrics.append(metric)
    return metrics, ok


def _metric(item: Mapping[str, Any], at: Reporter) -> MetricSpec | None:
    kind = item.get("type")
    errors = at.error_count
    if not kind:
        at.error("type", required("must specify a metric source type"))
        return None
    if kind not in METRIC_SOURCES:
        at.error("type", unsupported(kind, METRIC_SOURCES))
        return None
    expected = METRIC_SOURCES[kind]
    if item.get(expected) is None:
        at.error(expected, required("must populate information for the given metric source"))
        return None
    for other in METRIC_SOURCES.values():
        if other != expected and item.get(other) is not None:
            at.error(other, forbidden("must populate the given metric source only"))
    source = mapping(item[expected])
    at_source = at.at(expected)
    target = _target(mapping(source.get("target")), at_source)
    if target is None or at.error_count > errors:
        return None
    try:
        if kind == "Resource":
            return ResourceMetricSource(str(source.get("name") or ""), target)
        metric = _identifier(mapping(source.get("metric")), at_source.at("metric"))
        if kind == "Pods":
            return PodsMetricSource(metric, target)
        if kind == "External":
            return ExternalMetricSource(metric, target)
        described = mapping(source.get("describedObject"))
        reference = CrossVersionObjectReference(
            kind=str(described.get("kind") or ""),
            name=str(described.get("name") or ""),
            api_version=str(described.get("apiVersion") or ""),
        )
        return ObjectMetricSource(reference, metric, target)
    except HPASpecError as err:  # "pods.target.type: ..."
        _report(at, err)
        return None


def _enum(raw: Mapping[str, Any], key: str, allowed: tuple[str, ...], at: Reporter) -> bool:
    """Whether ``raw[key]`` (if set) is one of ``allowed``; reported, in the API server's words, if not."""
    value = raw.get(key)
    if value is None or value in allowed:
        return True
    at.error(key, unsupported(value, allowed))
    return False


def _target(raw: Mapping[str, Any], at_source: Reporter) -> MetricTarget | None:
    if not _enum(raw, "type", METRIC_TARGET_TYPES, at_source.at("target")):
        return None
    quantities: dict[str, int | None] = {"value": None, "averageValue": None}
    for key in quantities:
        if raw.get(key) is not None:
            try:
                quantities[key] = milli_value(raw[key])
            except QuantityError as err:
                at_source.error(f"target.{key}", str(err))
                return None
    try:
        return MetricTarget(
            type=cast(MetricTargetType, raw.get("type")),
            value=quantities["value"],
            average_value=quantities["averageValue"],
            average_utilization=raw.get("averageUtilization"),
        )
    except HPASpecError as err:  # "target.value: ..."
        _report(at_source, err)
        return None


def _identifier(raw: Mapping[str, Any], at: Reporter) -> MetricIdentifier:
    selector = mapping(raw.get("selector"))
    if selector.get("matchExpressions"):
        at.not_modelled("selector.matchExpressions", note="the metric is selected by matchLabels only")
    labels = mapping(selector.get("matchLabels"))
    return MetricIdentifier(
        name=str(raw.get("name") or ""),
        selector=tuple(sorted((str(k), str(v)) for k, v in labels.items())),
    )


# -- behavior ----------------------------------------------------------------------------------


def behavior_of(raw: object, at: Reporter) -> HorizontalPodAutoscalerBehavior | None:
    """``spec.behavior`` (already checked against its schema), or None when unset."""
    if raw is None:
        return None
    behavior = mapping(raw)
    return HorizontalPodAutoscalerBehavior(
        scale_up=_rules(behavior.get("scaleUp"), at.at("scaleUp")),
        scale_down=_rules(behavior.get("scaleDown"), at.at("scaleDown")),
    )


def _rules(raw: object, at: Reporter) -> HPAScalingRules | None:
    if raw is None:
        return None
    rules = mapping(raw)
    ok = True
    policies: tuple[HPAScalingPolicy, ...] | None = None
    if rules.get("policies") is not None:
        read: list[HPAScalingPolicy] = []
        for j, policy in enumerate(items(rules["policies"])):
            if not _enum(policy, "type", SCALING_POLICY_TYPES, at.at(f"policies[{j}]")):
                ok = False
                continue
            try:
                read.append(
                    HPAScalingPolicy(
                        type=cast(ScalingPolicyType, policy.get("type")),
                        value=policy["value"],
                        period_seconds=policy["periodSeconds"],
                    )
                )
            except HPASpecError as err:  # "policies.value: ..."
                _report(at.at(f"policies[{j}]"), err, strip="policies.")
                ok = False
        policies = tuple(read)
    ok = _enum(rules, "selectPolicy", SCALING_POLICY_SELECTS, at) and ok
    if rules.get("tolerance") is not None:
        try:
            parse_quantity(rules["tolerance"])
        except QuantityError as err:
            at.error("tolerance", str(err))
            ok = False
        else:
            # pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go, dropDisabledFields
            at.warn(
                "tolerance",
                "dropped, as the API server drops it while the HPAConfigurableTolerance feature gate is off "
                "(alpha, off by default in Kubernetes 1.34): the cluster-wide tolerance 0.1 applies",
            )
    if not ok:
        return None
    try:
        return HPAScalingRules(
            stabilization_window_seconds=rules.get("stabilizationWindowSeconds"),
            select_policy=cast(ScalingPolicySelect | None, rules.get("selectPolicy")),
            policies=policies,
        )
    except HPASpecError as err:  # "stabilizationWindowSeconds: ..."
        _report(at, err)
        return None
