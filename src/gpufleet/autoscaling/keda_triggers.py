"""KEDA trigger semantics shared by ScaledObject and ScaledJob: activity, metric names, milli-units.

Mirrors ``kedacore/keda``:

- ``pkg/scalers/redis_scaler.go`` and ``pkg/scalers/prometheus_scaler.go``
  (``GetMetricsAndActivity``: active when ``LLEN > activationListLength`` /
  ``value > activationThreshold``, strictly; ``GetMetricSpecForScaling``: metric names
  ``s<i>-redis-<listName>`` / ``s<i>-prometheus``);
- ``pkg/scalers/scaler.go`` (``GenerateMetricNameWithIndex``, ``GetMetricTarget`` for the redis
  integer target, ``GetMetricTargetMili`` for the prometheus decimal threshold,
  ``GenerateMetricInMili`` for the reported value, all truncated to milli-units);
- ``pkg/scalers/cron_scaler.go`` (``GetMetricSpecForScaling``: metric name
  ``s<i>-cron-<timezone>-<start>-<end>`` with ``parseCronTimeFormat``, target 1;
  ``GetMetricsAndActivity``: ``desiredReplicas`` inside the window, else 0, active inside it);
- ``pkg/util/normalize_string.go`` (``NormalizeString``);
- ``prometheus_scaler.go`` ``ExecutePromQuery``: the value a query's result gives the scaler.
"""

from __future__ import annotations

import math

from gpufleet.autoscaling.promql_eval import Sample
from gpufleet.model.keda import CronScaler, PrometheusScaler, RedisListScaler, ScaleTrigger

_NORMALIZED = str.maketrans({c: "-" for c in "/.:%()"})


def normalize_string(text: str) -> str:
    """``NormalizeString``: slashes, dots, colons, percent signs and parentheses become dashes."""
    return text.translate(_NORMALIZED)


def cron_time_format(text: str) -> str:
    """``parseCronTimeFormat``: a schedule as a metric-name part (``0 */2 * * *`` -> ``0xSl2xxx``)."""
    for old, new in ((" ", ""), ("*", "x"), ("/", "Sl"), ("?", "Qm"), (",", "Cm")):
        text = text.replace(old, new)
    return text


def metric_name(index: int, trigger: ScaleTrigger) -> str:
    """The External metric name KEDA gives trigger ``index``: ``s0-redis-train-jobs``, ``s1-prometheus``,
    ``s2-cron-Etc-UTC-00xxThu-5923xxThu``. A cpu/memory trigger has none (a Resource metric)."""
    scaler = trigger.scaler
    if isinstance(scaler, RedisListScaler):
        base = normalize_string(f"redis-{scaler.list_name}")
    elif isinstance(scaler, PrometheusScaler):
        base = normalize_string("prometheus")
    elif isinstance(scaler, CronScaler):
        start, end = cron_time_format(scaler.start), cron_time_format(scaler.end)
        base = normalize_string(f"cron-{scaler.timezone}-{start}-{end}")
    else:
        raise ValueError(f"a {scaler.resource} trigger has no External metric")
    return f"s{index}-{base}"


def to_milli(value: float) -> int:
    """``GenerateMetricInMili``: a metric value as ``int64(value * 1000)`` milli-units (truncated)."""
    return int(value * 1000)


def target_milli(trigger: ScaleTrigger) -> int:
    """The HPA target in milli-units: ``listLength × 1000`` (redis, an integer quantity),
    ``int64(threshold × 1000)`` (prometheus, ``GetMetricTargetMili``) or 1000 (cron: ``GetMetricTarget``
    of 1 replica)."""
    if isinstance(trigger.scaler, RedisListScaler):
        return trigger.scaler.list_length * 1000
    if isinstance(trigger.scaler, CronScaler):
        return 1000
    return to_milli(trigger.target_value)


def is_active(trigger: ScaleTrigger, value: float) -> bool:
    """A scaler is active when its value is *strictly* above its activation value (default 0); a cron
    scaler when it is inside its window, where its value is ``desiredReplicas`` (never 0), else 0."""
    if isinstance(trigger.scaler, CronScaler):
        return value != 0
    return value > trigger.activation_value


def cron_value(scaler: CronScaler, wall_s: float) -> float | None:
    """``GetMetricsAndActivity`` of a cron scaler at ``wall_s`` (Unix seconds): ``desiredReplicas`` when
    inside the window, else 0; None (the scaler fails: ``unable to load timezone``) when its timezone
    names no IANA zone.

    Inside the window is upstream's test on the next start and end after now: with the next start
    before the next end, now is inside only if after that start (never, as it lies ahead, unless the
    start never comes); otherwise inside if after the next start or before the next end (always, unless
    the end never comes). A schedule that never fires within five years answers Go's zero time, before
    any now. So the window is ``[start, end)``: at the start's very second the next start is a period
    later, at the end's the next end is.
    """
    zone = scaler.zone
    if zone is None:
        return None
    never = -math.inf  # Go's zero time
    start = scaler.start_schedule.next_after(wall_s, zone)
    end = scaler.end_schedule.next_after(wall_s, zone)
    next_start = never if start is None else start
    next_end = never if end is None else end
    if next_start < next_end:
        inside = next_start < wall_s < next_end
    else:
        inside = wall_s > next_start or wall_s < next_end
    return float(scaler.desired_replicas) if inside else 0.0


def prometheus_value(scaler: PrometheusScaler, result: list[Sample] | None) -> float | None:
    """``ExecutePromQuery``: the one sample's value; an empty result, NaN or ±Inf is 0 with
    ``ignoreNullValues`` (the default), else the scaler fails (None); more than one sample (``query
    returned multiple elements``) or a failed evaluation (``result`` None) fails it."""
    if result is None or len(result) > 1:
        return None
    if not result or not math.isfinite(result[0][1]):
        return 0.0 if scaler.ignore_null_values else None
    return result[0][1]
