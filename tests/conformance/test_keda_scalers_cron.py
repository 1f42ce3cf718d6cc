"""KEDA's cron scaler tests, ported case by case.

Upstream: ``kedacore/keda`` v2.20.2, ``pkg/scalers/cron_scaler_test.go``. Each pytest id is
``<upstream test function>/<index in its table> <metadata>``; the tests that read ``time.Now()``
upstream carry the fixed wall-clock time they are asked at here.

gpufleet's counterparts: ``parseCronMetadata`` (and ``Validate``) is ``ScaleTrigger.parse("cron", ...)``
(:class:`gpufleet.model.keda.CronScaler`, the schedules parsed as robfig/cron's 5-field parser does,
:mod:`gpufleet.model.cron_schedule`); ``GetMetricsAndActivity`` at a time is
:func:`gpufleet.autoscaling.keda_triggers.cron_value` with ``is_active``; the External metric name
of ``GetMetricSpecForScaling`` is ``metric_name``.

``TestIsActive``/``TestGetMetrics`` (and their ``Range`` variants) ask at whatever time the test
runs and expect "active on Thursday" / "active in an even hour"; here each is asked at a Thursday
and a Friday (an even and an odd hour), avoiding the last minute of the window, which upstream's
expectation gets wrong (the window ends at 23:59). The ``MetricName`` each upstream ``GetMetrics``
checks is the name the caller passed in; gpufleet's value carries no name, so only the value is
compared.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gpufleet.autoscaling.keda_triggers import cron_value, is_active, metric_name, target_milli
from gpufleet.model.keda import CronScaler, KedaSpecError, ScaleTrigger

_VALID = {"timezone": "Etc/UTC", "start": "0 0 * * Thu", "end": "59 23 * * Thu", "desiredReplicas": "10"}
_VALID2 = {"timezone": "Etc/UTC", "start": "0 */2 * * *", "end": "0 1-23/2 * * *", "desiredReplicas": "10"}
_VALID3 = {"timezone": "Etc/UTC", "start": "0,30 * * * *", "end": "15,45 * * * *", "desiredReplicas": "10"}
_KOLKATA = {"timezone": "Asia/Kolkata", "desiredReplicas": "10"}


@pytest.mark.parametrize(
    ("metadata", "is_error"),
    [
        pytest.param({}, True, id="TestCronParseMetadata/0 {} -> error"),
        pytest.param(_VALID, False, id="TestCronParseMetadata/1 validCronMetadata -> ok"),
        pytest.param(_VALID2, False, id="TestCronParseMetadata/2 validCronMetadata2 (even hours) -> ok"),
        pytest.param(_VALID3, False, id="TestCronParseMetadata/3 validCronMetadata3 (comma lists) -> ok"),
        pytest.param(
            {"timezone": "Asia/Kolkata", "start": "30 * * * *", "end": "45 * * * *"},
            True,
            id="TestCronParseMetadata/4 no desiredReplicas -> error",
        ),
        pytest.param(
            {"start": "30 * * * *", "end": "45 * * * *", "desiredReplicas": "10"},
            True,
            id="TestCronParseMetadata/5 no timezone -> error",
        ),
        pytest.param(
            {**_KOLKATA, "start": "30-33 * * * *", "end": "45 * * * *"},
            False,
            id="TestCronParseMetadata/6 start 30-33 -> ok",
        ),
        pytest.param(
            {**_KOLKATA, "start": "30 * * * *", "end": "45-50 * * * *"},
            False,
            id="TestCronParseMetadata/7 end 45-50 -> ok",
        ),
        pytest.param(
            {**_KOLKATA, "start": "-30 * * * *", "end": "45 * * * *"},
            True,
            id="TestCronParseMetadata/8 start -30 -> error",
        ),
        pytest.param(
            {**_KOLKATA, "start": "30 * * * *", "end": "-50 * * * *"},
            True,
            id="TestCronParseMetadata/9 end -50 -> error",
        ),
        pytest.param(
            {**_KOLKATA, "start": "30 * * * *", "end": "50 * * -3 *"},
            True,
            id="TestCronParseMetadata/10 end month -3 -> error",
        ),
        pytest.param(
            {**_KOLKATA, "start": "30 * * * *", "end": "30 * * * *"},
            True,
            id="TestCronParseMetadata/11 start == end -> error",
        ),
    ],
)
def test_cron_parse_metadata(metadata: dict[str, str], is_error: bool) -> None:
    if is_error:
        with pytest.raises(KedaSpecError):
            ScaleTrigger.parse("cron", metadata)
    else:
        assert isinstance(ScaleTrigger.parse("cron", metadata).scaler, CronScaler)


def _at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def _scaler(metadata: dict[str, str]) -> CronScaler:
    scaler = ScaleTrigger.parse("cron", metadata).scaler
    assert isinstance(scaler, CronScaler)
    return scaler


# 2026-12-03 is a Thursday.
_DAYS = [
    pytest.param("2026-12-03T00:00:00", True, id="Thursday 00:00:00 (the start)"),
    pytest.param("2026-12-03T12:34:56", True, id="Thursday 12:34:56"),
    pytest.param("2026-12-04T12:34:56", False, id="Friday 12:34:56"),
    pytest.param("2026-12-02T23:59:30", False, id="Wednesday 23:59:30"),
]
_HOURS = [
    pytest.param("2026-12-04T10:00:00", True, id="10:00:00 (even, the start)"),
    pytest.param("2026-12-04T10:59:59", True, id="10:59:59 (even)"),
    pytest.param("2026-12-04T11:00:00", False, id="11:00:00 (odd, the end)"),
    pytest.param("2026-12-04T00:30:00", True, id="00:30:00 (even)"),
    pytest.param("2026-12-04T23:30:00", False, id="23:30:00 (odd)"),
]


@pytest.mark.parametrize(("now", "thursday"), _DAYS)
def test_is_active(now: str, thursday: bool) -> None:
    """``TestIsActive``: validCronMetadata is active on Thursdays."""
    trigger = ScaleTrigger.parse("cron", _VALID)
    value = cron_value(_scaler(_VALID), _at(now))
    assert value is not None
    assert is_active(trigger, value) is thursday


@pytest.mark.parametrize(("now", "even"), _HOURS)
def test_is_active_range(now: str, even: bool) -> None:
    """``TestIsActiveRange``: validCronMetadata2 is active in even hours."""
    trigger = ScaleTrigger.parse("cron", _VALID2)
    value = cron_value(_scaler(_VALID2), _at(now))
    assert value is not None
    assert is_active(trigger, value) is even


@pytest.mark.parametrize(("now", "thursday"), _DAYS)
def test_get_metrics(now: str, thursday: bool) -> None:
    """``TestGetMetrics``: desiredReplicas (10) on Thursdays, else 0."""
    assert cron_value(_scaler(_VALID), _at(now)) == (10.0 if thursday else 0.0)


@pytest.mark.parametrize(("now", "even"), _HOURS)
def test_get_metrics_range(now: str, even: bool) -> None:
    """``TestGetMetricsRange``: desiredReplicas (10) in even hours, else 0."""
    assert cron_value(_scaler(_VALID2), _at(now)) == (10.0 if even else 0.0)


@pytest.mark.parametrize(
    ("metadata", "index", "name"),
    [
        pytest.param(
            _VALID,
            0,
            "s0-cron-Etc-UTC-00xxThu-5923xxThu",
            id="TestCronGetMetricSpecForScaling/0 s0-cron-Etc-UTC-00xxThu-5923xxThu",
        ),
        pytest.param(
            _VALID2,
            1,
            "s1-cron-Etc-UTC-0xSl2xxx-01-23Sl2xxx",
            id="TestCronGetMetricSpecForScaling/1 s1-cron-Etc-UTC-0xSl2xxx-01-23Sl2xxx",
        ),
        pytest.param(
            _VALID3,
            2,
            "s2-cron-Etc-UTC-0Cm30xxxx-15Cm45xxxx",
            id="TestCronGetMetricSpecForScaling/2 s2-cron-Etc-UTC-0Cm30xxxx-15Cm45xxxx",
        ),
    ],
)
def test_cron_get_metric_spec_for_scaling(metadata: dict[str, str], index: int, name: str) -> None:
    assert metric_name(index, ScaleTrigger.parse("cron", metadata)) == name


def test_cron_metric_target_is_one_replica() -> None:
    """``GetMetricSpecForScaling``: ``GetMetricTarget(metricType, 1)``, so the HPA proposes
    ``ceil(desiredReplicas / 1)``."""
    assert target_milli(ScaleTrigger.parse("cron", _VALID)) == 1000
    assert target_milli(ScaleTrigger.parse("cron", _VALID, "Value")) == 1000
    with pytest.raises(KedaSpecError, match="'Utilization' metric type is unsupported"):
        ScaleTrigger.parse("cron", _VALID, "Utilization")


def test_unknown_timezone_fails_the_scaler_not_the_parse() -> None:
    """``parseCronMetadata`` does not load the zone; ``GetMetricsAndActivity`` fails (unable to load
    timezone) at every poll."""
    scaler = _scaler({**_VALID, "timezone": "Mars/Olympus"})
    assert cron_value(scaler, _at("2026-12-03T12:00:00")) is None


def test_window_in_its_timezone() -> None:
    """The schedules are read in ``timezone``: 09:00-17:00 in Asia/Kolkata (UTC+05:30) is
    03:30-11:30 UTC."""
    scaler = _scaler(
        {"timezone": "Asia/Kolkata", "start": "0 9 * * *", "end": "0 17 * * *", "desiredReplicas": "4"}
    )
    assert cron_value(scaler, _at("2026-12-03T03:29:59")) == 0.0
    assert cron_value(scaler, _at("2026-12-03T03:30:00")) == 4.0
    assert cron_value(scaler, _at("2026-12-03T11:29:59")) == 4.0
    assert cron_value(scaler, _at("2026-12-03T11:30:00")) == 0.0


def test_a_start_that_never_comes_reads_as_go_zero_time() -> None:
    """``Next`` gives up after five years and returns the zero time, which is before the next end: the
    scaler then counts as inside its window until every end (upstream's comparison, copied)."""
    scaler = _scaler({**_VALID, "start": "0 0 30 2 *", "end": "0 12 * * *"})
    assert cron_value(scaler, _at("2026-12-03T11:00:00")) == 10.0
