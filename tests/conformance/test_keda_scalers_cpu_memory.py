"""KEDA's cpu/memory scaler tests, accounted for case by case.

Upstream: ``kedacore/keda`` v2.20.2, ``pkg/scalers/cpu_memory_scaler_test.go``. Each pytest id is
``<upstream test function>/<index in its table> <metricType> <metadata>``.

gpufleet does not model the ``cpu`` and ``memory`` triggers (it has no CPU or memory usage model):
it refuses them when it reads a ScaledObject, with the reason and what to use instead
(:func:`gpufleet.model.keda_trigger_types.unmodelled_trigger_reason`), which
``test_cpu_and_memory_triggers_are_refused_naming_the_type`` checks. Every upstream case is
therefore skipped: upstream accepts some of that metadata, gpufleet accepts none of it.
"""

from __future__ import annotations

import pytest

from gpufleet.model.keda import KedaSpecError, ScaleTrigger

_NOT_MODELLED = (
    "gpufleet does not model the cpu/memory triggers (no CPU or memory usage model): it refuses the "
    "trigger at spec.triggers[].type whatever its metadata"
)


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param(_NOT_MODELLED, id="TestCPUMemoryParseMetadata/0 '' {} -> error"),
        pytest.param(_NOT_MODELLED, id="TestCPUMemoryParseMetadata/1 Utilization value=50 -> ok"),
        pytest.param(_NOT_MODELLED, id="TestCPUMemoryParseMetadata/2 AverageValue value=50 -> ok"),
        pytest.param(_NOT_MODELLED, id="TestCPUMemoryParseMetadata/3 Value value=50 -> error"),
        pytest.param(_NOT_MODELLED, id="TestCPUMemoryParseMetadata/4 '' value='' -> error"),
        pytest.param(_NOT_MODELLED, id="TestCPUMemoryParseMetadata/5 '' {} -> error"),
        pytest.param(_NOT_MODELLED, id="TestGetMetricSpecForScaling"),
        pytest.param(_NOT_MODELLED, id="TestGetContainerMetricSpecForScaling"),
    ],
)
def test_not_modelled(reason: str) -> None:
    pytest.skip(reason)


@pytest.mark.parametrize("trigger_type", ["cpu", "memory"])
@pytest.mark.parametrize("metric_type", ["Utilization", "AverageValue"])
def test_cpu_and_memory_triggers_are_refused_naming_the_type(trigger_type: str, metric_type: str) -> None:
    """What gpufleet says of upstream's valid cases (1, 2): a refusal at ``type``, never a silent no-op."""
    with pytest.raises(KedaSpecError) as caught:
        ScaleTrigger.parse(trigger_type, {"value": "50"}, metric_type)
    assert caught.value.path == "type"
    assert f"the KEDA scaler {trigger_type!r} is not modelled" in caught.value.message
    assert "no CPU or memory usage model" in caught.value.message
