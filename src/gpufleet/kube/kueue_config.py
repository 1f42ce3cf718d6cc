"""Kueue's manager ``Configuration`` (``config.kueue.x-k8s.io`` v1beta1 and v1beta2): its ``fairSharing`` and
``waitForPodsReady``.

Kueue reads it from its ``--config`` file (a ConfigMap's ``controller_manager_config.yaml``); here it is a
document of the scenario, without ``metadata``, at most one. It is decoded strictly, as Kueue decodes it
(``pkg/config/config.go``: ``serializer.EnableStrict``, an unknown field is an error), with the fields of
``apis/config/v1beta{1,2}/configuration_types.go``. Only ``fairSharing`` and ``waitForPodsReady`` are
modelled; every other field given is a warning.

``fairSharing`` turns fair sharing on: in v1beta2 by being there, in v1beta1 with ``enable: true``
(``Convert_v1beta1_Configuration_To_v1beta2_Configuration`` drops it otherwise), where an empty
``preemptionStrategies`` defaults to ``[LessThanOrEqualToFinalShare, LessThanInitialShare]``
(``SetDefaults_Configuration``). ``pkg/config/validation.go`` (``validateFairSharing``) then requires the
strategies and accepts only ``[LessThanOrEqualToFinalShare]``, ``[LessThanInitialShare]`` and
``[LessThanOrEqualToFinalShare, LessThanInitialShare]``. ``admissionFairSharing`` (the usage-based
admission fair sharing of LocalQueues) is not modelled.

``waitForPodsReady`` (``model.kueue.WaitForPodsReady``): in v1beta1 on with ``enable: true``
(``Convert_v1beta1_Configuration_To_v1beta2_Configuration`` drops it otherwise), defaulted by v1beta1's
``SetDefaults_Configuration`` (``timeout`` 5 min, ``blockAdmission`` true); in v1beta2 on whenever a
Configuration is given (``SetDefaults_Configuration`` always sets it, ``waitforpodsready.Enabled``: not nil;
the ``DisableWaitForPodsReady`` feature gate is off by default), ``timeout`` 30 min, ``blockAdmission``
false. Both: ``recoveryTimeout`` defaults to ``timeout`` (``0s``: off), ``requeuingStrategy``'s ``timestamp``
to ``Eviction``, ``backoffBaseSeconds`` to 60 and ``backoffMaxSeconds`` to 3600. Validation as
``pkg/config/validation.go`` ``validateWaitForPodsReady``: no negative durations or backoff fields, a
``timestamp`` of ``Creation`` or ``Eviction``. With no Configuration document it is as Kueue's default
installation has it (a v1beta2 Configuration: on, 30 min; ``model.kueue.DEFAULT_INSTALL_WAIT``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.problems import Reporter, invalid, required, unsupported
from gpufleet.kube.spec_model import SpecModel, validate
from gpufleet.model.kueue import (
    DEFAULT_PREEMPTION_STRATEGIES,
    EVICTION_TIMESTAMP,
    PREEMPTION_STRATEGY_SETS,
    REQUEUING_TIMESTAMPS,
    FairSharing,
    WaitForPodsReady,
)
from gpufleet.model.quantity import QuantityError, parse_duration

GROUP = "config.kueue.x-k8s.io"
VERSIONS = ("v1beta1", "v1beta2")
KIND = "Configuration"


class _FairSharingV1Beta2(SpecModel):
    preemption_strategies: list[str] | None = None


class _FairSharingV1Beta1(_FairSharingV1Beta2):
    enable: bool = False


class _RequeuingStrategy(SpecModel):
    timestamp: str | None = None
    backoff_limit_count: int | None = None
    backoff_base_seconds: int | None = None
    backoff_max_seconds: int | None = None


class _WaitForPodsReadyV1Beta2(SpecModel):
    timeout: str | None = None
    block_admission: bool | None = None
    requeuing_strategy: _RequeuingStrategy | None = None
    recovery_timeout: str | None = None


class _WaitForPodsReadyV1Beta1(_WaitForPodsReadyV1Beta2):
    enable: bool = False


class _Configuration(SpecModel):
    api_version: str
    kind: str
    namespace: str | None = None
    manage_jobs_without_queue_name: bool | None = None
    managed_jobs_namespace_selector: dict[str, Any] | None = None
    internal_cert_management: dict[str, Any] | None = None
    wait_for_pods_ready: _WaitForPodsReadyV1Beta2 | None = None
    client_connection: dict[str, Any] | None = None
    integrations: dict[str, Any] | None = None
    multi_kueue: dict[str, Any] | None = None
    admission_fair_sharing: dict[str, Any] | None = None
    resources: dict[str, Any] | None = None
    feature_gates: dict[str, bool] | None = None
    object_retention_policies: dict[str, Any] | None = None
    webhook: dict[str, Any] | None = None
    leader_election: dict[str, Any] | None = None
    metrics: dict[str, Any] | None = None
    health: dict[str, Any] | None = None
    pprof_bind_address: str | None = None
    controller: dict[str, Any] | None = None
    tls: dict[str, Any] | None = None
    fair_sharing: _FairSharingV1Beta2 | None = None


class _ConfigurationV1Beta1(_Configuration):
    queue_visibility: dict[str, Any] | None = None
    fair_sharing: _FairSharingV1Beta1 | None = None
    wait_for_pods_ready: _WaitForPodsReadyV1Beta1 | None = None


class _ConfigurationV1Beta2(_Configuration):
    visibility_server: dict[str, Any] | None = None


MODELLED = ("apiVersion", "kind", "fairSharing", "waitForPodsReady")
#: ``DefaultWaitForPodsReadyTimeout`` (v1beta2) and ``defaultPodsReadyTimeout`` (v1beta1)
DEFAULT_TIMEOUT_S = {"v1beta1": 300.0, "v1beta2": 1800.0}
NEGATIVE = "must be greater than or equal to 0"  # ``apimachineryvalidation.IsNegativeErrorMsg``


def manager_configuration(
    body: Mapping[str, Any], version: str, report: Reporter
) -> tuple[FairSharing | None, WaitForPodsReady | None]:
    """The Configuration's ``fairSharing`` and ``waitForPodsReady`` (None: off); the other fields are
    warnings."""
    model = _ConfigurationV1Beta1 if version == "v1beta1" else _ConfigurationV1Beta2
    config = validate(model, body, report)
    if config is None:
        return None, None
    given = config.given()
    report.unmodelled_fields(given, [f for f in given if f not in MODELLED])
    return _fair_sharing(config, report), _wait_for_pods_ready(config, version, report)


def _duration(value: str | None, path: str, report: Reporter) -> float | None:
    """A ``metav1.Duration`` in seconds; None where not given or wrong (reported)."""
    if value is None:
        return None
    if value.strip().startswith("-"):
        report.error(path, invalid(value, NEGATIVE))
        return None
    try:
        return parse_duration(value)
    except QuantityError as err:
        report.error(path, invalid(value, str(err)))
        return None


def _wait_for_pods_ready(config: _Configuration, version: str, report: Reporter) -> WaitForPodsReady | None:
    raw = config.wait_for_pods_ready
    if isinstance(config, _ConfigurationV1Beta1) and (
        raw is None or (isinstance(raw, _WaitForPodsReadyV1Beta1) and not raw.enable)
    ):
        return None
    raw = raw or _WaitForPodsReadyV1Beta2()
    path = "waitForPodsReady"
    errors = report.error_count
    timeout = _duration(raw.timeout, f"{path}.timeout", report) or DEFAULT_TIMEOUT_S[version]
    recovery = _duration(raw.recovery_timeout, f"{path}.recoveryTimeout", report)
    strategy = raw.requeuing_strategy or _RequeuingStrategy()
    where = f"{path}.requeuingStrategy"
    timestamp = strategy.timestamp or EVICTION_TIMESTAMP
    if timestamp not in REQUEUING_TIMESTAMPS:
        report.error(f"{where}.timestamp", unsupported(timestamp, REQUEUING_TIMESTAMPS))
    for name, value in (
        ("backoffLimitCount", strategy.backoff_limit_count),
        ("backoffBaseSeconds", strategy.backoff_base_seconds),
        ("backoffMaxSeconds", strategy.backoff_max_seconds),
    ):
        if value is not None and value < 0:
            report.error(f"{where}.{name}", invalid(value, NEGATIVE))
    if report.error_count > errors:
        return None
    block = raw.block_admission
    return WaitForPodsReady(
        timeout_s=timeout,
        block_admission=(version == "v1beta1") if block is None else block,
        recovery_timeout_s=timeout if raw.recovery_timeout is None else (recovery or None),
        timestamp=timestamp,
        backoff_limit_count=strategy.backoff_limit_count,
        backoff_base_s=float(60 if strategy.backoff_base_seconds is None else strategy.backoff_base_seconds),
        backoff_max_s=float(3600 if strategy.backoff_max_seconds is None else strategy.backoff_max_seconds),
    )


def _fair_sharing(config: _Configuration, report: Reporter) -> FairSharing | None:
    """The Configuration's ``fairSharing`` (None: fair sharing off)."""
    raw = config.fair_sharing
    if raw is None or (isinstance(raw, _FairSharingV1Beta1) and not raw.enable):
        return None
    strategies = tuple(raw.preemption_strategies or ())
    if isinstance(raw, _FairSharingV1Beta1) and not strategies:
        strategies = DEFAULT_PREEMPTION_STRATEGIES
    path = "fairSharing.preemptionStrategies"
    if not strategies:
        report.error(path, required("must be specified"))
        return None
    if strategies not in PREEMPTION_STRATEGY_SETS:
        report.error(path, unsupported(list(strategies), [",".join(s) for s in PREEMPTION_STRATEGY_SETS]))
        return None
    return FairSharing(strategies)
