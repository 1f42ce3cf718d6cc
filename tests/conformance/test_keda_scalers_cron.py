"""KEDA's cron scaler tests, accounted for case by case.

Upstream: ``kedacore/keda`` v2.20.2, ``pkg/scalers/cron_scaler_test.go``. Each pytest id is
``<upstream test function>/<index in its table> <metadata>``.

gpufleet does not model the ``cron`` trigger: it refuses it when it reads a ScaledObject or
ScaledJob, naming ``spec.triggers[].type``
(:func:`gpufleet.model.keda_trigger_types.unmodelled_trigger_reason`),
which ``test_cron_trigger_is_refused_naming_the_type`` checks. Every upstream case is therefore
skipped: the metadata rules (``timezone``, ``start``, ``end``, ``desiredReplicas``), the metric
names and the activity at a time of day belong to a scaler gpufleet does not have.
"""

from __future__ import annotations

import pytest

from gpufleet.model.keda import KedaSpecError, ScaleTrigger

_NOT_MODELLED = (
    "gpufleet does not model the cron trigger: it refuses it at spec.triggers[].type whatever its metadata"
)

_VALID = {"timezone": "Etc/UTC", "start": "0 0 * * Thu", "end": "59 23 * * Thu", "desiredReplicas": "10"}


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/0 {} -> error"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/1 validCronMetadata -> ok"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/2 validCronMetadata2 (even hours) -> ok"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/3 validCronMetadata3 (comma lists) -> ok"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/4 no desiredReplicas -> error"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/5 no timezone -> error"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/6 start 30-33 -> ok"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/7 end 45-50 -> ok"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/8 start -30 -> error"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/9 end -50 -> error"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/10 end month -3 -> error"),
        pytest.param(_NOT_MODELLED, id="TestCronParseMetadata/11 start == end -> error"),
        pytest.param(_NOT_MODELLED, id="TestIsActive"),
        pytest.param(_NOT_MODELLED, id="TestIsActiveRange"),
        pytest.param(_NOT_MODELLED, id="TestGetMetrics"),
        pytest.param(_NOT_MODELLED, id="TestGetMetricsRange"),
        pytest.param(_NOT_MODELLED, id="TestCronGetMetricSpecForScaling/0 s0-cron-Etc-UTC-00xxThu-5923xxThu"),
        pytest.param(
            _NOT_MODELLED, id="TestCronGetMetricSpecForScaling/1 s1-cron-Etc-UTC-0xSl2xxx-01-23Sl2xxx"
        ),
        pytest.param(
            _NOT_MODELLED, id="TestCronGetMetricSpecForScaling/2 s2-cron-Etc-UTC-0Cm30xxxx-15Cm45xxxx"
        ),
    ],
)
def test_not_modelled(reason: str) -> None:
    pytest.skip(reason)


def test_cron_trigger_is_refused_naming_the_type() -> None:
    """What gpufleet says of upstream's valid ``validCronMetadata``: a refusal at ``type``, never a
    trigger that silently never fires."""
    with pytest.raises(KedaSpecError) as caught:
        ScaleTrigger.parse("cron", _VALID)
    assert caught.value.path == "type"
    assert "the KEDA scaler 'cron' is not modelled" in caught.value.message
