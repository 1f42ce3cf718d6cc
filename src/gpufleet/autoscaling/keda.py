"""KEDA (``keda.sh/v1alpha1``) ScaledObject and ScaledJob semantics as pure decision code.

State and time in, decisions out; no I/O. The upstream files each part mirrors are named in
its module: :mod:`gpufleet.autoscaling.keda_triggers` (``pkg/scalers/redis_scaler.go``,
``prometheus_scaler.go``, ``cron_scaler.go``, ``scaler.go``), :mod:`gpufleet.autoscaling.keda_scaled_object`
(``pkg/scaling/executor/scale_scaledobjects.go``, ``pkg/scaling/scale_handler.go``,
``pkg/fallback/fallback.go``), :mod:`gpufleet.autoscaling.keda_scaling_modifiers`
(``pkg/scaling/modifiers/formula.go``: the ``composite-metric`` of ``advanced.scalingModifiers``) and
:mod:`gpufleet.autoscaling.keda_scaled_job` (``pkg/scaling/executor/scale_jobs.go``,
``pkg/scaling/scaledjob/metrics.go``). The specs are in :mod:`gpufleet.model.keda`.
"""

from __future__ import annotations

from gpufleet.autoscaling.keda_scaled_job import (
    JobPod,
    ScaledJobDecision,
    ScaledJobState,
    ScalerMetrics,
    combine_scaler_metrics,
    decide_scaled_job,
    effective_max_scale,
    job_is_pending,
    scaler_metrics,
)
from gpufleet.autoscaling.keda_scaled_object import (
    FallbackTracker,
    HealthStatus,
    HpaExternalMetric,
    HpaMetric,
    HpaResourceMetric,
    KedaDecision,
    KedaHpaInputs,
    KedaReason,
    ScaledObjectState,
    fallback_metric_value,
    hpa_inputs,
)
from gpufleet.autoscaling.keda_triggers import (
    cron_value,
    is_active,
    metric_name,
    normalize_string,
    target_milli,
    to_milli,
)

__all__ = [
    "FallbackTracker",
    "HealthStatus",
    "HpaExternalMetric",
    "HpaMetric",
    "HpaResourceMetric",
    "JobPod",
    "KedaDecision",
    "KedaHpaInputs",
    "KedaReason",
    "ScaledJobDecision",
    "ScaledJobState",
    "ScaledObjectState",
    "ScalerMetrics",
    "combine_scaler_metrics",
    "cron_value",
    "decide_scaled_job",
    "effective_max_scale",
    "fallback_metric_value",
    "hpa_inputs",
    "is_active",
    "job_is_pending",
    "metric_name",
    "normalize_string",
    "scaler_metrics",
    "target_milli",
    "to_milli",
]
