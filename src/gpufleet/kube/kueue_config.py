"""Kueue's manager ``Configuration`` (``config.kueue.x-k8s.io`` v1beta1 and v1beta2): its ``fairSharing``.

Kueue reads it from its ``--config`` file (a ConfigMap's ``controller_manager_config.yaml``); here it is a
document of the scenario, without ``metadata``, at most one. It is decoded strictly, as Kueue decodes it
(``pkg/config/config.go``: ``serializer.EnableStrict``, an unknown field is an error), with the fields of
``apis/config/v1beta{1,2}/configuration_types.go``. Only ``fairSharing`` is modelled; every other field
given is a warning.

``fairSharing`` turns fair sharing on: in v1beta2 by being there, in v1beta1 with ``enable: true``
(``Convert_v1beta1_Configuration_To_v1beta2_Configuration`` drops it otherwise), where an empty
``preemptionStrategies`` defaults to ``[LessThanOrEqualToFinalShare, LessThanInitialShare]``
(``SetDefaults_Configuration``). ``pkg/config/validation.go`` (``validateFairSharing``) then requires the
strategies and accepts only ``[LessThanOrEqualToFinalShare]``, ``[LessThanInitialShare]`` and
``[LessThanOrEqualToFinalShare, LessThanInitialShare]``. ``admissionFairSharing`` (the usage-based
admission fair sharing of LocalQueues) is not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.problems import Reporter, required, unsupported
from gpufleet.kube.spec_model import SpecModel, validate
from gpufleet.model.kueue import DEFAULT_PREEMPTION_STRATEGIES, PREEMPTION_STRATEGY_SETS, FairSharing

GROUP = "config.kueue.x-k8s.io"
VERSIONS = ("v1beta1", "v1beta2")
KIND = "Configuration"


class _FairSharingV1Beta2(SpecModel):
    preemption_strategies: list[str] | None = None


class _FairSharingV1Beta1(_FairSharingV1Beta2):
    enable: bool = False


class _Configuration(SpecModel):
    api_version: str
    kind: str
    namespace: str | None = None
    manage_jobs_without_queue_name: bool | None = None
    managed_jobs_namespace_selector: dict[str, Any] | None = None
    internal_cert_management: dict[str, Any] | None = None
    wait_for_pods_ready: dict[str, Any] | None = None
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


class _ConfigurationV1Beta2(_Configuration):
    visibility_server: dict[str, Any] | None = None


def fair_sharing(body: Mapping[str, Any], version: str, report: Reporter) -> FairSharing | None:
    """The Configuration's ``fairSharing`` (None: fair sharing off); the other fields are warnings."""
    model = _ConfigurationV1Beta1 if version == "v1beta1" else _ConfigurationV1Beta2
    config = validate(model, body, report)
    if config is None:
        return None
    given = config.given()
    report.unmodelled_fields(given, [f for f in given if f not in ("apiVersion", "kind", "fairSharing")])
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
