"""KEDA's cpu/memory scaler tests, ported case by case.

Upstream: ``kedacore/keda`` v2.20.2, ``pkg/scalers/cpu_memory_scaler_test.go``. Each pytest id is
``<upstream test function>/<index in its table> <metricType> <metadata>``.

gpufleet's counterparts: ``parseResourceMetadata`` is ``ScaleTrigger.parse("cpu", metadata,
metricType)`` (:class:`gpufleet.model.keda.ResourceScaler`; ``metricType`` ``""`` is a trigger that
sets none); ``GetMetricSpecForScaling`` is the trigger's metric in ``hpa_inputs`` (an
:class:`~gpufleet.autoscaling.keda_scaled_object.HpaResourceMetric`: a ``Resource`` metric, or with
``container`` set upstream's ``ContainerResource`` one) and the HPA spec KEDA writes
(``keda_hpa_spec``). The ScaledObject of those two tests has ``minReplicaCount: 1``: with only
cpu/memory triggers, 0 is refused (``verifyCPUMemoryScalers``), which a test below checks.
"""

from __future__ import annotations

import pytest

from gpufleet.autoscaling.keda_scaled_object import HpaResourceMetric, hpa_inputs
from gpufleet.control.workload_autoscalers import keda_hpa_spec
from gpufleet.model.hpa import MetricTarget, ResourceMetricSource
from gpufleet.model.keda import Fallback, KedaSpecError, ScaledObjectSpec, ScaleTargetRef, ScaleTrigger

_VALID = {"value": "50"}
_VALID_CONTAINER = {"value": "50", "containerName": "foo"}


@pytest.mark.parametrize(
    ("metric_type", "metadata", "is_error"),
    [
        pytest.param("", {}, True, id="TestCPUMemoryParseMetadata/0 '' {} -> error"),
        pytest.param(
            "Utilization",
            {"value": "50"},
            False,
            id="TestCPUMemoryParseMetadata/1 Utilization value=50 -> ok",
        ),
        pytest.param(
            "AverageValue",
            {"value": "50"},
            False,
            id="TestCPUMemoryParseMetadata/2 AverageValue value=50 -> ok",
        ),
        pytest.param(
            "Value", {"value": "50"}, True, id="TestCPUMemoryParseMetadata/3 Value value=50 -> error"
        ),
        pytest.param("", {"value": ""}, True, id="TestCPUMemoryParseMetadata/4 '' value='' -> error"),
        pytest.param("", {}, True, id="TestCPUMemoryParseMetadata/5 '' {} -> error"),
    ],
)
def test_cpu_memory_parse_metadata(metric_type: str, metadata: dict[str, str], is_error: bool) -> None:
    for resource in ("cpu", "memory"):
        if is_error:
            with pytest.raises(KedaSpecError):
                ScaleTrigger.parse(resource, metadata, metric_type)
        else:
            assert ScaleTrigger.parse(resource, metadata, metric_type).metric_type == metric_type


def _scaled_object(*triggers: ScaleTrigger, min_replica_count: int = 1) -> ScaledObjectSpec:
    return ScaledObjectSpec(
        "so", "default", ScaleTargetRef("app"), triggers, min_replica_count=min_replica_count
    )


def test_get_metric_spec_for_scaling() -> None:
    so = _scaled_object(ScaleTrigger.parse("cpu", _VALID, "Utilization"))
    (metric,) = hpa_inputs(so).metrics
    assert metric == HpaResourceMetric("cpu", MetricTarget("Utilization", average_utilization=50))
    assert keda_hpa_spec(hpa_inputs(so), so).metrics == (
        ResourceMetricSource("cpu", MetricTarget("Utilization", average_utilization=50)),
    )


def test_get_container_metric_spec_for_scaling() -> None:
    so = _scaled_object(ScaleTrigger.parse("cpu", _VALID_CONTAINER, "Utilization"))
    (metric,) = hpa_inputs(so).metrics
    assert metric == HpaResourceMetric("cpu", MetricTarget("Utilization", average_utilization=50), "foo")


# -- what gpufleet adds: the rules around the scaler that upstream checks elsewhere -----------------


def test_average_value_is_a_quantity_per_pod() -> None:
    """``resource.MustParse(value)``: the HPA's ``averageValue`` (milli-units)."""
    trigger = ScaleTrigger.parse("memory", {"value": "512Mi"}, "AverageValue")
    so = _scaled_object(trigger)
    assert hpa_inputs(so).metrics == (
        HpaResourceMetric("memory", MetricTarget("AverageValue", average_value=512 * 2**20 * 1000)),
    )


@pytest.mark.parametrize(
    ("metric_type", "metadata", "path", "message"),
    [
        ("Utilization", {"value": "50.5"}, "metadata.value", "strconv.ParseInt"),
        ("Utilization", {"value": "0"}, "metadata.value", "must be greater than 0"),
        ("AverageValue", {"value": "lots"}, "metadata.value", "is not a quantity"),
        ("Utilization", {"value": "50", "type": "Utilization"}, "metadata.type", "is DEPRECATED"),
    ],
)
def test_bad_values_are_refused(metric_type: str, metadata: dict[str, str], path: str, message: str) -> None:
    """``parseUtilization`` (a base-10 int32), ``MustParse`` (which panics upstream), the HPA's own check
    of its target, and the ``type`` key removed in v2.18 (``deprecated``: an error)."""
    with pytest.raises(KedaSpecError) as caught:
        ScaleTrigger.parse("cpu", metadata, metric_type)
    assert caught.value.path == path
    assert message in caught.value.message


def test_only_cpu_memory_triggers_and_min_replica_count_zero_is_refused() -> None:
    """``verifyCPUMemoryScalers``: with only cpu/memory triggers a ScaledObject cannot scale to zero."""
    trigger = ScaleTrigger.parse("cpu", _VALID, "Utilization")
    with pytest.raises(KedaSpecError) as caught:
        _scaled_object(trigger, ScaleTrigger.parse("memory", _VALID, "Utilization"), min_replica_count=0)
    assert caught.value.path == "spec.minReplicaCount"
    assert "scaledobject has only cpu/memory triggers AND minReplica is 0" in caught.value.message
    redis = ScaleTrigger.parse("redis", {"address": "redis:6379", "listName": "jobs"})
    assert _scaled_object(trigger, redis, min_replica_count=0).min_replica_count == 0


def test_a_fallback_needs_a_trigger_that_is_not_cpu_or_memory() -> None:
    """``CheckFallbackValid``: cpu/memory triggers have no External metric for a fallback to replace."""
    cpu = ScaleTrigger.parse("cpu", _VALID, "Utilization")
    with pytest.raises(KedaSpecError) as caught:
        ScaledObjectSpec(
            "so", "default", ScaleTargetRef("app"), (cpu,), min_replica_count=1, fallback=Fallback(3, 2)
        )
    assert caught.value.path == "spec.fallback"
    assert "at least one trigger (that is not cpu or memory)" in caught.value.message
    redis = ScaleTrigger.parse("redis", {"address": "redis:6379", "listName": "jobs"})
    spec = ScaledObjectSpec("so", "default", ScaleTargetRef("app"), (cpu, redis), fallback=Fallback(3, 2))
    assert spec.fallback == Fallback(3, 2)
