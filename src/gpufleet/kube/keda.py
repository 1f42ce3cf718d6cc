"""KEDA's ``keda.sh/v1alpha1`` ScaledObject and ScaledJob.

KEDA's CRDs are structural, so the API server refuses unknown fields: the strict models here
mirror their OpenAPI schemas (``kedacore/keda: config/crd/bases/keda.sh_scaledobjects.yaml``,
``keda.sh_scaledjobs.yaml``) for the shape, then ``gpufleet.model.keda`` reads the values
(``scaled_object_from_manifest`` / ``scaled_job_from_manifest``; its ``KedaSpecError`` names
the field). A ScaledObject's ``advanced.horizontalPodAutoscalerConfig.behavior`` is checked
against the Kubernetes schema of an HPA behavior and the HPA's own rules; a ScaledJob's
``jobTargetRef`` is a ``batch/v1`` JobSpec, checked and converted exactly as a Job's spec.

Fields that only matter for talking to real servers (``authenticationRef``,
``envSourceContainerName``) pass silently (a trigger's ``authenticationRef`` only tells its checks that a
TriggerAuthentication, which gpufleet does not read, may hold a redis address or the credentials of a
prometheus ``authModes``); fields that change scaling but are not modelled
(``advanced.restoreToOriginalReplicaCount``,
``triggers[].useCachedMetrics``, a ScaledJob's ``rollout``/``rolloutStrategy``) are warnings, and
so are a prometheus trigger's connection, TLS, auth and cloud metadata keys (``unsafeSsl``,
``authModes``, ``customHeaders``, ...: ``PROMETHEUS_CONNECTION_KEYS``), which KEDA's
``prometheusMetadata`` parses but a simulated query does without, and a redis trigger's database, TLS
and credential keys and ``...FromEnv`` forms (``REDIS_CONNECTION_KEYS``), which ``redisMetadata``
parses but the simulated queue does without. A cron trigger's unknown
``timezone``, a cpu/memory trigger's ``containerName`` (a ``ContainerResource`` metric, not modelled)
and a ScaledJob's cpu/memory trigger (nothing reads its usage) are warnings too; a ScaledObject's
cpu/memory trigger is a warning where its target's pods have no usage of that resource (the loader
checks it against the scenario: ``kube.load``).

``advanced.scalingModifiers`` is modelled (``gpufleet.model.keda.ScalingModifiers``, validated as KEDA's
webhook does, the formula an expr-lang program: ``gpufleet.model.expr_lang``); what KEDA accepts but
then fails on is a warning: an ``activationTarget`` that is not a number (every poll fails) and a
fallback whose formula ``target`` is not a positive integer (``HasValidFallback``: the fallback never
applies).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gpufleet.kube import hpa, schema_check, workloads
from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.priorities import Priorities
from gpufleet.kube.problems import Reporter, required
from gpufleet.kube.spec_model import SpecModel, validate
from gpufleet.model.keda import (
    PROMETHEUS_CONNECTION_KEYS,
    REDIS_CONNECTION_KEYS,
    TRACKED_POD_CONDITIONS,
    CronScaler,
    KedaSpecError,
    PrometheusScaler,
    ResourceScaler,
    ScaledJobSpec,
    ScaledObjectSpec,
    ScaleTrigger,
    scaled_job_from_manifest,
    scaled_object_from_manifest,
)
from gpufleet.model.keda_trigger_types import REDIS_LIST_TYPES
from gpufleet.model.promql import yields_one_series
from gpufleet.model.workloads import Job

JOB_SPEC_DEFINITION = "io.k8s.api.batch.v1.JobSpec"
_HPA_CONFIG = "spec.advanced.horizontalPodAutoscalerConfig"
_SHAPE_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError)


class _ScaleTargetRef(SpecModel):
    api_version: str | None = None
    kind: str | None = None
    name: str
    env_source_container_name: str | None = None


class _AuthenticationRef(SpecModel):
    name: str
    kind: str | None = None


class _Trigger(SpecModel):
    type: str
    name: str | None = None
    use_cached_metrics: bool | None = None
    metadata: dict[str, str]
    authentication_ref: _AuthenticationRef | None = None
    metric_type: str | None = None


class _HPAConfig(SpecModel):
    name: str | None = None
    behavior: dict[str, Any] | None = None


class _ScalingModifiers(SpecModel):
    formula: str | None = None
    target: str | None = None
    activation_target: str | None = None
    metric_type: str | None = None


class _Advanced(SpecModel):
    horizontal_pod_autoscaler_config: _HPAConfig | None = None
    restore_to_original_replica_count: bool | None = None
    scaling_modifiers: _ScalingModifiers | None = None


class _Fallback(SpecModel):
    failure_threshold: int
    replicas: int
    behavior: str | None = None


class _ScaledObjectSpec(SpecModel):
    scale_target_ref: _ScaleTargetRef
    polling_interval: int | None = None
    initial_cooldown_period: int | None = None
    cooldown_period: int | None = None
    idle_replica_count: int | None = None
    min_replica_count: int | None = None
    max_replica_count: int | None = None
    advanced: _Advanced | None = None
    triggers: list[_Trigger]
    fallback: _Fallback | None = None


class _Rollout(SpecModel):
    strategy: str | None = None
    propagation_policy: str | None = None


class _ScalingStrategy(SpecModel):
    strategy: str | None = None
    custom_scaling_queue_length_deduction: int | None = None
    custom_scaling_running_job_percentage: str | None = None
    pending_pod_conditions: list[str] | None = None
    multiple_scalers_calculation: str | None = None


class _ScaledJobSpec(SpecModel):
    job_target_ref: dict[str, Any]
    polling_interval: int | None = None
    successful_jobs_history_limit: int | None = None
    failed_jobs_history_limit: int | None = None
    env_source_container_name: str | None = None
    min_replica_count: int | None = None
    max_replica_count: int | None = None
    rollout_strategy: str | None = None
    rollout: _Rollout | None = None
    scaling_strategy: _ScalingStrategy | None = None
    triggers: list[_Trigger]


def _spec(body: Mapping[str, Any], report: Reporter) -> dict[str, Any] | None:
    spec = body.get("spec")
    if spec is None:
        report.error("spec", required())
        return None
    return mapping(spec)


def _warn_triggers(spec: Mapping[str, Any], report: Reporter) -> None:
    for i, trigger in enumerate(items(spec.get("triggers"))):
        report.unmodelled_fields(trigger, ("useCachedMetrics",), f"spec.triggers[{i}]")
        if trigger.get("type") == "prometheus":
            _warn_prometheus_connection(
                mapping(trigger.get("metadata")), report, f"spec.triggers[{i}].metadata"
            )
        elif trigger.get("type") in REDIS_LIST_TYPES:
            _warn_redis_connection(mapping(trigger.get("metadata")), report, f"spec.triggers[{i}].metadata")


def _warn_prometheus_connection(metadata: Mapping[str, Any], report: Reporter, path: str) -> None:
    """The connection, TLS, auth and cloud keys of a prometheus trigger (``prometheusMetadata`` and
    what ``NewPrometheusScaler`` reads for AWS, Azure and GCP) shape only the HTTP request to a real
    Prometheus: a warning each, since the simulated query runs without them."""
    for key in PROMETHEUS_CONNECTION_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            report.not_modelled(
                f"{path}.{key}", note="gpufleet evaluates the query over its simulated series"
            )


def _warn_redis_connection(metadata: Mapping[str, Any], report: Reporter, path: str) -> None:
    """The database, TLS and credential keys of a redis trigger and every ``...FromEnv`` form
    (``redisMetadata``, ``redisConnectionInfo``: ``REDIS_CONNECTION_KEYS``) shape only the connection to
    a real Redis: a warning each, since gpufleet reads the list's length from its simulated queue. A
    ``...FromEnv`` key names a variable of the scale target's container, which gpufleet does not
    resolve, so what KEDA would check of its value is not checked."""
    for key in REDIS_CONNECTION_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            note = "gpufleet reads the list from its simulated queue"
            if key.endswith("FromEnv"):
                note += "; the container's environment is not resolved"
            report.not_modelled(f"{path}.{key}", note=note)


def _model_error(report: Reporter, err: KedaSpecError) -> None:
    report.error(err.path, err.message)


#: KEDA's annotations that pause a ScaledObject or force it active (``apis/keda/v1alpha1``), not modelled
_PAUSE_ANNOTATIONS = (
    "autoscaling.keda.sh/paused",
    "autoscaling.keda.sh/paused-replicas",
    "autoscaling.keda.sh/paused-scale-in",
    "autoscaling.keda.sh/paused-scale-out",
    "autoscaling.keda.sh/force-activation",
)


def scaled_object(meta: Meta, body: Mapping[str, Any], report: Reporter) -> ScaledObjectSpec | None:
    """The ScaledObject's spec, or None when it cannot be read (the problems are reported)."""
    for key in _PAUSE_ANNOTATIONS:
        if key in meta.annotations:
            note = "the ScaledObject scales as if it were unset"
            report.at("metadata").not_modelled(f"annotations.{key}", note=note)
    spec = _spec(body, report)
    if spec is None:
        return None
    validate(_ScaledObjectSpec, spec, report, "spec")
    advanced = mapping(spec.get("advanced"))
    report.unmodelled_fields(advanced, ("restoreToOriginalReplicaCount",), "spec.advanced")
    _warn_triggers(spec, report)
    behavior = mapping(advanced.get("horizontalPodAutoscalerConfig")).get("behavior")
    rules = None
    if isinstance(behavior, dict):
        at_behavior = report.at(f"{_HPA_CONFIG}.behavior")
        errors = report.error_count
        schema_check.check(behavior, hpa.BEHAVIOR_DEFINITION, at_behavior)
        if report.error_count == errors:
            rules = hpa.behavior_of(behavior, at_behavior)  # the rules of the HPA KEDA writes
    if not meta.name:
        return None  # reported by the loader
    try:
        scaled = replace(scaled_object_from_manifest(body), hpa_behavior_rules=rules)
    except KedaSpecError as err:
        _model_error(report, err)
        return None
    _warn_queries(scaled.triggers, report, resource_usage_checked=True)
    _warn_modifiers(scaled, report)
    return scaled


def _warn_modifiers(spec: ScaledObjectSpec, report: Reporter) -> None:
    """What KEDA accepts of ``advanced.scalingModifiers`` and then does not do: an ``activationTarget``
    that is not a number fails every poll (``getScaledObjectState``: ``scalingModifiers.ActivationTarget
    parsing error``), and with a formula a fallback applies only when ``target`` is a positive integer
    (``HasValidFallback``)."""
    modifiers = spec.scaling_modifiers
    if modifiers is None:
        return
    path = "spec.advanced.scalingModifiers"
    if modifiers.activation_value is None:
        report.warn(
            f"{path}.activationTarget",
            f"{modifiers.activation_target!r} is not a number: KEDA's poll fails every time "
            "(scalingModifiers.ActivationTarget parsing error) and the ScaledObject is never active",
        )
    if spec.fallback is not None and not spec.fallback_tracked:
        report.warn(
            "spec.fallback",
            f"the formula's target {modifiers.target!r} is not a positive integer: KEDA's HasValidFallback "
            "refuses the fallback, so a failing trigger is an error and the fallback never applies",
        )


def scaled_job(
    meta: Meta, body: Mapping[str, Any], report: Reporter, priorities: Priorities, order: int
) -> tuple[ScaledJobSpec | None, Job | None]:
    """The ScaledJob's spec and the Job it stamps (named after the ScaledJob), each None if unreadable."""
    spec = _spec(body, report)
    if spec is None:
        return None, None
    validate(_ScaledJobSpec, spec, report, "spec")
    report.unmodelled_fields(spec, ("rollout", "rolloutStrategy"), "spec")
    _warn_triggers(spec, report)
    job: Job | None = None
    target = spec.get("jobTargetRef")
    if isinstance(target, dict):
        errors = report.error_count
        schema_check.check(target, JOB_SPEC_DEFINITION, report.at("spec.jobTargetRef"))
        # As for a malformed Job: after schema errors, convert only as far as the shape allows.
        with contextlib.suppress(*(() if report.error_count == errors else _SHAPE_ERRORS)):
            job = workloads.job_from_spec(meta, target, report, "spec.jobTargetRef", priorities, order)
    if not meta.name:
        return None, job
    try:
        scaled = scaled_job_from_manifest(body)
    except KedaSpecError as err:
        _model_error(report, err)
        return None, job
    _warn_queries(scaled.triggers, report)
    _warn_strategy_fallback(scaled, report)
    return scaled, job


def _warn_queries(
    triggers: tuple[ScaleTrigger, ...], report: Reporter, resource_usage_checked: bool = False
) -> None:
    """What makes a trigger fail or do nothing at run time: a query that can return several series
    (KEDA's prometheus scaler fails), a cron trigger's timezone with no IANA zone (its scaler fails at
    every poll), a cpu/memory trigger's Resource metric (unless ``resource_usage_checked``: the loader
    warns where the target's pods have no usage) or ``ContainerResource`` one (not modelled)."""
    for i, trigger in enumerate(triggers):
        scaler = trigger.scaler
        if isinstance(scaler, CronScaler) and scaler.zone is None:
            report.warn(
                f"spec.triggers[{i}].metadata.timezone",
                f"{scaler.timezone!r} is not an IANA time zone: KEDA's cron scaler fails at every poll "
                "(unable to load timezone)",
            )
        if isinstance(scaler, ResourceScaler):
            if scaler.container_name is not None:
                report.not_modelled(
                    f"spec.triggers[{i}].metadata.containerName",
                    note="a ContainerResource metric; the HPA KEDA writes is left without it",
                )
            elif not resource_usage_checked:
                report.warn(
                    f"spec.triggers[{i}]",
                    f"gpufleet has no {scaler.resource} usage model: the Resource metric this trigger "
                    "gives the HPA reads no value, as an HPA's own does, and the HPA holds on it",
                )
        if isinstance(scaler, PrometheusScaler) and not yields_one_series(scaler.expr):
            report.warn(
                f"spec.triggers[{i}].metadata.query",
                f"{scaler.query!r} can return more than one series; KEDA's prometheus scaler then fails "
                "(query returned multiple elements): aggregate it, e.g. sum(...)",
            )


def _warn_strategy_fallback(spec: ScaledJobSpec, report: Reporter) -> None:
    """What the ScaledJob's strategy will do that its author may not expect: a pending-pod condition
    gpufleet's pods never carry, and KEDA's ``NewScalingStrategy`` running ``default`` for a
    ``custom`` strategy whose percentage does not parse."""
    strategy = spec.scaling_strategy
    for i, condition in enumerate(strategy.pending_pod_conditions):
        if condition not in TRACKED_POD_CONDITIONS:
            report.warn(
                f"spec.scalingStrategy.pendingPodConditions[{i}]",
                f"{condition!r} is not a pod condition gpufleet models "
                f"({', '.join(TRACKED_POD_CONDITIONS)}): every Job counts as pending",
            )
    if strategy.strategy == "custom" and strategy.selected == "default":
        report.warn(
            "spec.scalingStrategy.customScalingRunningJobPercentage",
            f"{strategy.custom_scaling_running_job_percentage!r} is not a number: "
            "KEDA runs the default strategy instead of custom",
        )
