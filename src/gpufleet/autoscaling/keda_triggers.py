"""KEDA trigger semantics shared by ScaledObject and ScaledJob: activity, metric names, milli-units.

Mirrors ``kedacore/keda``:

- ``pkg/scalers/redis_scaler.go`` and ``pkg/scalers/prometheus_scaler.go``
  (``GetMetricsAndActivity``: active when ``LLEN > activationListLength`` /
  ``value > activationThreshold``, strictly; ``GetMetricSpecForScaling``: metric names
  ``s<i>-redis-<listName>`` / ``s<i>-prometheus``);
- ``pkg/scalers/scaler.go`` (``GenerateMetricNameWithIndex``, ``GetMetricTarget`` for the redis
  integer target, ``GetMetricTargetMili`` for the prometheus decimal threshold,
  ``GenerateMetricInMili`` for the reported value, all truncated to milli-units);
- ``pkg/util/normalize_string.go`` (``NormalizeString``);
- ``prometheus_scaler.go`` ``ExecutePromQuery``: the value a query's result gives the scaler.
"""

from __future__ import annotations

import math

from gpufleet.autoscaling.promql_eval import Sample
from gpufleet.model.keda import PrometheusScaler, RedisListScaler, ScaleTrigger

_NORMALIZED = str.maketrans({c: "-" for c in "/.:%()"})


def normalize_string(text: str) -> str:
    """``NormalizeString``: slashes, dots, colons, percent signs and parentheses become dashes."""
    return text.translate(_NORMALIZED)


def metric_name(index: int, trigger: ScaleTrigger) -> str:
    """The External metric name KEDA gives trigger ``index``: ``s0-redis-train-jobs``, ``s1-prometheus``."""
    if isinstance(trigger.scaler, RedisListScaler):
        base = normalize_string(f"redis-{trigger.scaler.list_name}")
    else:
        base = normalize_string("prometheus")
    return f"s{index}-{base}"


def to_milli(value: float) -> int:
    """``GenerateMetricInMili``: a metric value as ``int64(value * 1000)`` milli-units (truncated)."""
    return int(value * 1000)


def target_milli(trigger: ScaleTrigger) -> int:
    """The HPA target in milli-units: ``listLength × 1000`` (redis, an integer quantity) or
    ``int64(threshold × 1000)`` (prometheus, ``GetMetricTargetMili``)."""
    if isinstance(trigger.scaler, RedisListScaler):
        return trigger.scaler.list_length * 1000
    return to_milli(trigger.scaler.threshold)


def is_active(trigger: ScaleTrigger, value: float) -> bool:
    """A scaler is active when its value is *strictly* above its activation value (default 0)."""
    return value > trigger.activation_value


def prometheus_value(scaler: PrometheusScaler, result: list[Sample] | None) -> float | None:
    """``ExecutePromQuery``: the one sample's value; an empty result, NaN or ±Inf is 0 with
    ``ignoreNullValues`` (the default), else the scaler fails (None); more than one sample (``query
    returned multiple elements``) or a failed evaluation (``result`` None) fails it."""
    if result is None or len(result) > 1:
        return None
    if not result or not math.isfinite(result[0][1]):
        return 0.0 if scaler.ignore_null_values else None
    return result[0][1]
