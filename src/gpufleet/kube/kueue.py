"""Kueue's kinds (``kueue.x-k8s.io/v1beta1`` and ``v1beta2``): ResourceFlavor, ClusterQueue, LocalQueue,
Cohort, WorkloadPriorityClass, AdmissionCheck, ProvisioningRequestConfig and Topology (also ``v1alpha1``).

Fields follow ``kubernetes-sigs/kueue: apis/kueue/v1beta{1,2}/*_types.go``; the only difference
read here is the cohort: ``spec.cohort`` in v1beta1, ``spec.cohortName`` in v1beta2. Specs are
decoded strictly (a misspelt field is an error); fields Kueue has but gpufleet does not model
(``stopPolicy``, a LocalQueue's ``fairSharing``, ...) are warnings. A ClusterQueue's
or Cohort's ``fairSharing.weight`` (default 1) is a quantity, not negative and, when not 0, above
``1n`` (``pkg/webhooks/common.go`` ``validateFairSharing``); without a Kueue ``Configuration`` that
turns fair sharing on, a weight other than 1 has no effect (a warning).
Validation follows the CRDs' rules and Kueue's webhooks (``pkg/webhooks/clusterqueue_webhook.go``):
each flavor lists the group's ``coveredResources`` in the same order; quotas are quantities, not
negative; ``borrowingLimit`` and ``lendingLimit`` need a cohort; ``lendingLimit`` is at most
``nominalQuota``; a resource belongs to one group and a flavor to one group of a queue;
``preemption.borrowWithinCohort.policy`` is ``Never`` (default) or ``LowerPriority``, and not
``LowerPriority`` where ``reclaimWithinCohort`` is ``Never``; its ``maxPriorityThreshold`` is an int32.

A ``Cohort`` (``pkg/webhooks/cohort_webhook.go``) has the same ``resourceGroups`` rules, except that
its limits need a ``parentName`` and its ``lendingLimit`` may exceed its ``nominalQuota``; a cycle
of ``parentName`` is an error here (Kueue leaves every ClusterQueue of such a tree inactive). A
``WorkloadPriorityClass`` needs ``value`` (an int32); a workload labelled with a class that does
not exist is an error (Kueue's webhook refuses such a Workload). A ``Topology`` has 1 to 16
levels, each a distinct ``nodeLabel``, ``kubernetes.io/hostname`` only as the lowest; a
ResourceFlavor naming a Topology that does not exist leaves its ClusterQueues inactive (a warning).

Admission checks: a ClusterQueue's ``admissionChecksStrategy.admissionChecks[]`` (``name``, ``onFlavors``) or
v1beta1's ``admissionChecks`` (names; converted to rules without ``onFlavors``, which replace any strategy, as
``Convert_v1beta1_ClusterQueueSpec_To_v1beta2_ClusterQueueSpec`` does). An ``AdmissionCheck`` needs
``spec.controllerName``; only ``kueue.x-k8s.io/provisioning-request`` is modelled: a check of another
controller is a warning, and the workloads of the queues naming it are never admitted (their check stays
Pending, "not modelled"). A ``ProvisioningRequestConfig`` (``provisioningrequestconfig_types.go``) needs
``provisioningClassName`` (a DNS subdomain of at most 253 characters); ``parameters`` (at most 100, each at
most 255 characters), ``managedResources`` (at most 100, a set) and ``retryStrategy``
(``backoffLimitCount`` 3, ``backoffBaseSeconds`` 60, ``backoffMaxSeconds`` 1800, int32s) are read;
``podSetUpdates`` and ``podSetMergePolicy`` are not modelled (warnings). A ClusterQueue naming a check that
does not exist, or a ProvisioningRequest check whose config does not exist, is inactive
(``AdmissionCheckNotFound``, ``AdmissionCheckInactive``): a warning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from gpufleet.kube import taints
from gpufleet.kube.node_affinity import selector_term
from gpufleet.kube.objects import Meta, mapping
from gpufleet.kube.problems import Reporter, duplicate, invalid, required, too_many, unsupported
from gpufleet.kube.spec_model import SpecModel, validate
from gpufleet.model.kueue import (
    BORROW_WITHIN_COHORT_POLICIES,
    DEFAULT_FAIR_WEIGHT,
    FUNGIBILITY_POLICIES,
    FUNGIBILITY_PREFERENCES,
    MAY_STOP_SEARCH,
    NEVER,
    PRIORITY_CLASS_LABEL,
    PROVISIONING_REQUEST_CONFIG,
    PROVISIONING_REQUEST_CONTROLLER,
    QUEUE_NAME_LABEL,
    QUEUEING_STRATEGIES,
    RECLAIM_WITHIN_COHORT_POLICIES,
    TRY_NEXT_FLAVOR,
    WITHIN_CLUSTER_QUEUE_POLICIES,
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    KueueObjects,
    LocalQueue,
    ProvisioningRequestConfig,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    RetryStrategy,
    Topology,
    WorkloadPriorityClass,
)
from gpufleet.model.pod import Requirement
from gpufleet.model.quantity import QuantityError, parse_quantity
from gpufleet.model.resources import is_extended, to_units

GROUP = "kueue.x-k8s.io"
VERSIONS = ("v1beta1", "v1beta2")
RESOURCE_FLAVOR = "ResourceFlavor"
CLUSTER_QUEUE = "ClusterQueue"
LOCAL_QUEUE = "LocalQueue"
COHORT = "Cohort"
WORKLOAD_PRIORITY_CLASS = "WorkloadPriorityClass"
TOPOLOGY = "Topology"
ADMISSION_CHECK = "AdmissionCheck"
PROVISIONING_CONFIG = PROVISIONING_REQUEST_CONFIG
HOSTNAME = "kubernetes.io/hostname"
MAX_TOPOLOGY_LEVELS = 16
INT32_MAX = 2**31 - 1


def _one_of(values: tuple[str, ...]) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in values:
            raise ValueError(unsupported(value, values))
        return value

    return check


Quantity = str | int | float


class _ResourceQuota(SpecModel):
    name: str
    nominal_quota: Quantity
    borrowing_limit: Quantity | None = None
    lending_limit: Quantity | None = None


class _FlavorQuotas(SpecModel):
    name: str
    resources: list[_ResourceQuota]


class _ResourceGroup(SpecModel):
    covered_resources: list[str]
    flavors: list[_FlavorQuotas]


def _int32(value: int) -> int:
    if not -INT32_MAX - 1 <= value <= INT32_MAX:
        raise ValueError(invalid(value, "must be an int32"))
    return value


class _BorrowWithinCohort(SpecModel):
    policy: Annotated[str, AfterValidator(_one_of(BORROW_WITHIN_COHORT_POLICIES))] = NEVER
    max_priority_threshold: Annotated[int, AfterValidator(_int32)] | None = None


class _Preemption(SpecModel):
    reclaim_within_cohort: Annotated[str, AfterValidator(_one_of(RECLAIM_WITHIN_COHORT_POLICIES))] = "Never"
    within_cluster_queue: Annotated[str, AfterValidator(_one_of(WITHIN_CLUSTER_QUEUE_POLICIES))] = "Never"
    borrow_within_cohort: _BorrowWithinCohort | None = None


class _FlavorFungibility(SpecModel):
    when_can_borrow: str = MAY_STOP_SEARCH
    when_can_preempt: str = TRY_NEXT_FLAVOR
    preference: str | None = None


#: v1beta1's deprecated names of ``MayStopSearch``, per field.
_DEPRECATED_FUNGIBILITY = {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}


def _fungibility(raw: _FlavorFungibility | None, version: str, report: Reporter) -> FlavorFungibility:
    """``spec.flavorFungibility`` (the CRD's enums, v1beta1's deprecated names read as ``MayStopSearch``;
    ``preference`` only where both policies are ``TryNextFlavor``)."""
    if raw is None:
        return FlavorFungibility()
    policies: dict[str, str] = {}
    for field, value in (("whenCanBorrow", raw.when_can_borrow), ("whenCanPreempt", raw.when_can_preempt)):
        allowed: tuple[str, ...] = FUNGIBILITY_POLICIES
        if version == "v1beta1":
            allowed = (*allowed, _DEPRECATED_FUNGIBILITY[field])
        if value not in allowed:
            report.error(f"spec.flavorFungibility.{field}", unsupported(value, allowed))
        policies[field] = MAY_STOP_SEARCH if value == _DEPRECATED_FUNGIBILITY[field] else value
    preference = raw.preference
    if preference is not None and preference not in FUNGIBILITY_PREFERENCES:
        report.error("spec.flavorFungibility.preference", unsupported(preference, FUNGIBILITY_PREFERENCES))
        preference = None
    if preference is not None and set(policies.values()) != {TRY_NEXT_FLAVOR}:
        report.error(
            "spec.flavorFungibility",
            invalid(
                "object",
                "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
            ),
        )
    return FlavorFungibility(policies["whenCanBorrow"], policies["whenCanPreempt"], preference)


class _FairSharing(SpecModel):
    weight: Quantity | None = None


#: ``validateFairSharing``: a weight that is not 0 is above this (``1n``).
_MIN_WEIGHT = Fraction(1, 10**9)


def _fair_weight(raw: _FairSharing | None, report: Reporter) -> float:
    """``spec.fairSharing.weight`` (default 1): a quantity, not negative, and above ``1n`` if not 0."""
    if raw is None or raw.weight is None:
        return DEFAULT_FAIR_WEIGHT
    try:
        weight = parse_quantity(raw.weight)
    except QuantityError as exc:
        report.error("spec.fairSharing.weight", str(exc))
        return DEFAULT_FAIR_WEIGHT
    if weight < 0:
        report.error("spec.fairSharing", invalid(raw.weight, "must be greater than or equal to 0"))
    elif 0 < weight <= _MIN_WEIGHT:
        report.error("spec.fairSharing", invalid(raw.weight, "When not 0, weight must be > 10e-9"))
    return float(weight)


class _CheckRule(SpecModel):
    name: str
    on_flavors: list[str] = Field(default_factory=list)


class _ChecksStrategy(SpecModel):
    admission_checks: list[_CheckRule] = Field(default_factory=list)


class _ClusterQueueCommon(SpecModel):
    namespace_selector: dict[str, Any] | None = None
    queueing_strategy: Annotated[str, AfterValidator(_one_of(QUEUEING_STRATEGIES))] = "BestEffortFIFO"
    resource_groups: list[_ResourceGroup] = Field(default_factory=list)
    preemption: _Preemption | None = None
    flavor_fungibility: _FlavorFungibility | None = None
    stop_policy: str | None = None
    fair_sharing: _FairSharing | None = None
    admission_checks_strategy: _ChecksStrategy | None = None
    admission_scope: dict[str, Any] | None = None


class _ClusterQueueV1Beta1(_ClusterQueueCommon):
    cohort: str | None = None
    admission_checks: list[str] | None = None


class _ClusterQueueV1Beta2(_ClusterQueueCommon):
    cohort_name: str | None = None
    concurrent_admission_policy: dict[str, Any] | None = None


_UNMODELLED_CLUSTER_QUEUE = (
    "stopPolicy",
    "admissionScope",
    "concurrentAdmissionPolicy",
)


class _ResourceFlavor(SpecModel):
    node_labels: dict[str, str] | None = None
    node_taints: list[dict[str, Any]] | None = None
    tolerations: list[dict[str, Any]] | None = None
    topology_name: str | None = None


class _LocalQueue(SpecModel):
    cluster_queue: str
    stop_policy: str | None = None
    fair_sharing: dict[str, Any] | None = None


class _Cohort(SpecModel):
    parent_name: str | None = None
    resource_groups: list[_ResourceGroup] = Field(default_factory=list)
    fair_sharing: _FairSharing | None = None


class _ParametersReference(SpecModel):
    api_group: str
    kind: str
    name: str


class _AdmissionCheck(SpecModel):
    controller_name: str
    retry_delay_minutes: int | None = None  # v1beta1, deprecated
    parameters: _ParametersReference | None = None


class _RetryStrategy(SpecModel):
    backoff_limit_count: Annotated[int, AfterValidator(_int32)] = 3
    backoff_base_seconds: Annotated[int, AfterValidator(_int32)] = 60
    backoff_max_seconds: Annotated[int, AfterValidator(_int32)] = 1800


class _ProvisioningRequestConfig(SpecModel):
    provisioning_class_name: str
    parameters: dict[str, str] | None = None
    managed_resources: list[str] | None = None
    retry_strategy: _RetryStrategy | None = None
    pod_set_updates: dict[str, Any] | None = None
    pod_set_merge_policy: (
        Annotated[
            str, AfterValidator(_one_of(("IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements")))
        ]
        | None
    ) = None


#: the CRD's pattern of ``provisioningClassName`` (a DNS subdomain) and its limits
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_MAX_CLASS_NAME, _MAX_PARAMETERS, _MAX_PARAMETER, _MAX_MANAGED = 253, 100, 255, 100


def admission_check(meta: Meta, body: Mapping[str, Any], report: Reporter) -> AdmissionCheck | None:
    """An AdmissionCheck: its ``controllerName`` (required) and the ProvisioningRequestConfig its
    ``parameters`` name. A controller other than Kueue's ProvisioningRequest one is not modelled (a
    warning: the workloads of the queues naming the check are never admitted)."""
    spec = validate(_AdmissionCheck, body.get("spec") or {}, report, "spec")
    if spec is None:
        return None
    if not spec.controller_name:
        report.error("spec.controllerName", required())
        return None
    report.unmodelled_fields(spec.given(), ("retryDelayMinutes",), "spec")
    if spec.controller_name != PROVISIONING_REQUEST_CONTROLLER:
        report.warn(
            "spec.controllerName",
            f'controller "{spec.controller_name}" is not modelled: the workloads of the ClusterQueues '
            "naming this check are never admitted by gpufleet (the check stays Pending)",
        )
    ref = spec.parameters
    config = None
    if ref is not None and ref.api_group == GROUP and ref.kind == PROVISIONING_REQUEST_CONFIG:
        config = ref.name
    elif ref is not None and spec.controller_name == PROVISIONING_REQUEST_CONTROLLER:
        report.warn(
            "spec.parameters",
            f"must name a {GROUP} {PROVISIONING_REQUEST_CONFIG}: the check is inactive (BadParametersRef)",
        )
    return AdmissionCheck(meta.name, spec.controller_name, config)


def provisioning_request_config(
    meta: Meta, body: Mapping[str, Any], report: Reporter
) -> ProvisioningRequestConfig | None:
    """A ProvisioningRequestConfig, validated as its CRD does; ``podSetUpdates`` and ``podSetMergePolicy``
    are not modelled."""
    spec = validate(_ProvisioningRequestConfig, body.get("spec") or {}, report, "spec")
    if spec is None:
        return None
    errors = report.error_count
    name = spec.provisioning_class_name
    if not name:
        report.error("spec.provisioningClassName", required())
    elif len(name) > _MAX_CLASS_NAME:
        report.error("spec.provisioningClassName", f"Too long: may not be more than {_MAX_CLASS_NAME} bytes")
    elif not _SUBDOMAIN.match(name):
        report.error("spec.provisioningClassName", invalid(name, f"should match '{_SUBDOMAIN.pattern}'"))
    parameters = dict(spec.parameters or {})
    if len(parameters) > _MAX_PARAMETERS:
        report.error(
            "spec.parameters", f"Too many: {len(parameters)}: must have at most {_MAX_PARAMETERS} items"
        )
    for key, value in parameters.items():
        if len(value) > _MAX_PARAMETER:
            report.error(f"spec.parameters.{key}", f"Too long: may not be more than {_MAX_PARAMETER} bytes")
    managed = list(spec.managed_resources or [])
    if len(managed) > _MAX_MANAGED:
        report.error("spec.managedResources", too_many(len(managed), _MAX_MANAGED))
    for i, resource in enumerate(managed):
        if resource in managed[:i]:
            report.error(f"spec.managedResources[{i}]", duplicate(resource, "the list is a set"))
    report.unmodelled_fields(spec.given(), ("podSetUpdates", "podSetMergePolicy"), "spec")
    retry = spec.retry_strategy or _RetryStrategy()
    if report.error_count > errors:
        return None
    return ProvisioningRequestConfig(
        meta.name,
        name,
        parameters,
        tuple(dict.fromkeys(managed)),
        RetryStrategy(
            retry.backoff_limit_count, float(retry.backoff_base_seconds), float(retry.backoff_max_seconds)
        ),
    )


def _admission_checks(spec: _ClusterQueueCommon, report: Reporter) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``admissionChecksStrategy.admissionChecks`` (name, ``onFlavors``), or v1beta1's ``admissionChecks``
    converted to rules without flavors, which replace the strategy (the conversion webhook's order)."""
    names = getattr(spec, "admission_checks", None)
    strategy = spec.admission_checks_strategy
    rules: list[tuple[str, tuple[str, ...]]]
    if names:
        if strategy is not None and strategy.admission_checks:
            report.warn(
                "spec.admissionChecksStrategy",
                "ignored: spec.admissionChecks is set and replaces it (v1beta1 to v1beta2 conversion)",
            )
        rules = [(name, ()) for name in names]
    else:
        rules = [(r.name, tuple(r.on_flavors)) for r in (strategy.admission_checks if strategy else [])]
    seen: set[str] = set()
    for i, (name, _) in enumerate(rules):
        if name in seen:
            report.error(
                f"spec.admissionChecksStrategy.admissionChecks[{i}].name",
                duplicate(name, "a check is named once"),
            )
        seen.add(name)
    return tuple(rules)


class _TopologyLevel(SpecModel):
    node_label: str


class _Topology(SpecModel):
    levels: list[_TopologyLevel]


def resource_flavor(meta: Meta, body: Mapping[str, Any], report: Reporter) -> ResourceFlavor:
    spec = validate(_ResourceFlavor, body.get("spec") or {}, report, "spec") or _ResourceFlavor()
    return ResourceFlavor(
        meta.name,
        dict(spec.node_labels or {}),
        taints.taints(spec.node_taints, report, "spec.nodeTaints"),
        taints.tolerations(spec.tolerations, report, "spec.tolerations"),
        spec.topology_name or None,
    )


def cohort(meta: Meta, body: Mapping[str, Any], report: Reporter) -> Cohort:
    """A Cohort: its parent, its own quota and its fair sharing weight."""
    spec = validate(_Cohort, body.get("spec") or {}, report, "spec") or _Cohort()
    parent = spec.parent_name or None
    if parent == meta.name:
        report.error("spec.parentName", invalid(parent, "a Cohort cannot be its own parent"))
        parent = None
    return Cohort(
        meta.name,
        parent,
        _resource_groups(spec.resource_groups, parent is not None, report, False),
        _fair_weight(spec.fair_sharing, report),
    )


def workload_priority_class(meta: Meta, body: Mapping[str, Any], report: Reporter) -> WorkloadPriorityClass:
    """``value`` (required, int32) and ``description`` (not used), at the top level as a PriorityClass."""
    value = body.get("value")
    if value is None:
        report.error("value", required())
        return WorkloadPriorityClass(meta.name, 0)
    if isinstance(value, bool) or not isinstance(value, int) or not -INT32_MAX - 1 <= value <= INT32_MAX:
        report.error("value", invalid(value, "must be an int32"))
        return WorkloadPriorityClass(meta.name, 0)
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        report.error("description", invalid(description, "must be a string"))
    return WorkloadPriorityClass(meta.name, value)


def topology(meta: Meta, body: Mapping[str, Any], report: Reporter) -> Topology | None:
    """``spec.levels[].nodeLabel``, widest first (the CRD's rules: 1 to 16 distinct levels,
    ``kubernetes.io/hostname`` only as the last)."""
    spec = validate(_Topology, body.get("spec") or {}, report, "spec")
    if spec is None:
        return None
    labels = [level.node_label for level in spec.levels]
    if not 1 <= len(labels) <= MAX_TOPOLOGY_LEVELS:
        report.error("spec.levels", invalid(len(labels), f"must have 1 to {MAX_TOPOLOGY_LEVELS} levels"))
        return None
    ok = True
    for i, label in enumerate(labels):
        if label in labels[:i]:
            report.error(f"spec.levels[{i}].nodeLabel", duplicate(label, "each level is a different label"))
            ok = False
        if label == HOSTNAME and i != len(labels) - 1:
            report.error(
                f"spec.levels[{i}].nodeLabel",
                invalid(label, f"{HOSTNAME} can only be used at the lowest level"),
            )
            ok = False
    return Topology(meta.name, tuple(labels)) if ok else None


def local_queue(meta: Meta, body: Mapping[str, Any], report: Reporter) -> LocalQueue | None:
    spec = validate(_LocalQueue, body.get("spec") or {}, report, "spec")
    if spec is None:
        return None
    report.unmodelled_fields(spec.given(), ("stopPolicy", "fairSharing"), "spec")
    return LocalQueue(meta.name, meta.namespace, spec.cluster_queue)


def cluster_queue(meta: Meta, body: Mapping[str, Any], version: str, report: Reporter) -> ClusterQueue:
    model = _ClusterQueueV1Beta1 if version == "v1beta1" else _ClusterQueueV1Beta2
    raw = body.get("spec") or {}
    spec = validate(model, raw, report, "spec") or model()
    cohort = spec.cohort if isinstance(spec, _ClusterQueueV1Beta1) else getattr(spec, "cohort_name", None)
    report.unmodelled_fields(spec.given(), _UNMODELLED_CLUSTER_QUEUE, "spec")
    preemption = spec.preemption or _Preemption()
    borrow = preemption.borrow_within_cohort or _BorrowWithinCohort()
    if preemption.reclaim_within_cohort == NEVER and borrow.policy != NEVER:  # the CRD's rule
        report.error(
            "spec.preemption",
            invalid("object", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"),
        )
    selector = (
        None
        if spec.namespace_selector is None
        else _label_selector(spec.namespace_selector, report, "spec.namespaceSelector")
    )
    return ClusterQueue(
        meta.name,
        cohort or None,
        selector,
        spec.queueing_strategy,
        _resource_groups(spec.resource_groups, bool(cohort), report),
        preemption.reclaim_within_cohort,
        preemption.within_cluster_queue,
        borrow_within_cohort=borrow.policy,
        max_priority_threshold=borrow.max_priority_threshold,
        flavor_fungibility=_fungibility(spec.flavor_fungibility, version, report),
        fair_weight=_fair_weight(spec.fair_sharing, report),
        admission_checks=_admission_checks(spec, report),
    )


def _label_selector(raw: Mapping[str, Any], report: Reporter, path: str) -> tuple[Requirement, ...]:
    """A LabelSelector (``matchLabels`` and ``matchExpressions``, ANDed)."""
    for key in raw:
        if key not in ("matchLabels", "matchExpressions"):
            report.error(f"{path}.{key}", f"Additional properties are not allowed ({key!r} was unexpected)")
    labels = [Requirement(str(k), "In", (str(v),)) for k, v in mapping(raw.get("matchLabels")).items()]
    term = selector_term({"matchExpressions": raw.get("matchExpressions")}, report, path)
    return (*labels, *(term.expressions if term is not None else ()))


def _quantity(resource: str, value: object, report: Reporter, path: str) -> int | None:
    try:
        quantity = parse_quantity(value)
    except QuantityError as exc:
        report.error(path, str(exc))
        return None
    if quantity < 0:
        report.error(path, invalid(value, "must be greater than or equal to 0"))
        return None
    if is_extended(resource) and quantity.denominator != 1:
        report.error(path, invalid(value, "must be an integer"))
        return None
    return to_units(resource, quantity)


def _resource_groups(
    groups: list[_ResourceGroup], cohort: bool, report: Reporter, nominal_over_lending: bool = True
) -> tuple[ResourceGroup, ...]:
    out: list[ResourceGroup] = []
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    for g, group in enumerate(groups):
        at = f"spec.resourceGroups[{g}]"
        if not group.covered_resources:
            report.error(f"{at}.coveredResources", required("must have at least one resource"))
        for i, resource in enumerate(group.covered_resources):
            if resource in seen_resources:
                report.error(f"{at}.coveredResources[{i}]", duplicate(resource, "a resource is in one group"))
            seen_resources.add(resource)
        flavors: list[FlavorQuotas] = []
        for f, flavor in enumerate(group.flavors):
            where = f"{at}.flavors[{f}]"
            if flavor.name in seen_flavors:
                report.error(f"{where}.name", duplicate(flavor.name, "a flavor is in one group"))
            seen_flavors.add(flavor.name)
            if len(flavor.resources) != len(group.covered_resources):
                report.error(
                    f"{where}.resources",
                    invalid(
                        [r.name for r in flavor.resources],
                        "flavors must have the same number of resources as the coveredResources",
                    ),
                )
                continue
            quotas = {}
            for r, (quota, covered) in enumerate(zip(flavor.resources, group.covered_resources, strict=True)):
                path = f"{where}.resources[{r}]"
                if quota.name != covered:
                    report.error(
                        f"{path}.name", invalid(quota.name, f"must be {covered!r}, as in coveredResources")
                    )
                    continue
                read = _resource_quota(quota, cohort, report, path, nominal_over_lending)
                if read is not None:
                    quotas[quota.name] = read
            flavors.append(FlavorQuotas(flavor.name, quotas))
        out.append(ResourceGroup(tuple(group.covered_resources), tuple(flavors)))
    return tuple(out)


def _resource_quota(
    quota: _ResourceQuota, cohort: bool, report: Reporter, path: str, nominal_over_lending: bool
) -> ResourceQuota | None:
    nominal = _quantity(quota.name, quota.nominal_quota, report, f"{path}.nominalQuota")
    limits: dict[str, int | None] = {}
    for field, value in (("borrowingLimit", quota.borrowing_limit), ("lendingLimit", quota.lending_limit)):
        limits[field] = None if value is None else _quantity(quota.name, value, report, f"{path}.{field}")
        if value is not None and not cohort:
            report.error(f"{path}.{field}", invalid(value, f"{field} must be nil when cohort is empty"))
    lending = limits["lendingLimit"]
    if nominal_over_lending and nominal is not None and lending is not None and lending > nominal:
        report.error(
            f"{path}.lendingLimit", invalid(quota.lending_limit, "must be less than or equal to nominalQuota")
        )
    if nominal is None:
        return None
    return ResourceQuota(nominal, limits["borrowingLimit"], lending)


def queue_name(meta: Meta) -> str | None:
    """The LocalQueue a workload names (``metadata.labels[kueue.x-k8s.io/queue-name]``)."""
    return meta.labels.get(QUEUE_NAME_LABEL) or None


def check_references(objects: KueueObjects, reports: Mapping[str, Reporter]) -> None:
    """Flavors a ClusterQueue names, the ClusterQueue a LocalQueue names and the Topology a flavor
    names: missing ones are warnings, as Kueue accepts them and marks the queue inactive
    (``FlavorNotFound``, ``TopologyNotFound``). A cycle of Cohort parents is an error. A fair sharing
    weight while fair sharing is off is a warning."""
    if objects.fair_sharing is None:
        weighted = [(CLUSTER_QUEUE, n, q.fair_weight) for n, q in objects.cluster_queues.items()]
        weighted += [(COHORT, n, c.fair_weight) for n, c in objects.cohorts.items()]
        for kind, name, weight in weighted:
            report = reports.get(f"{kind}/{name}")
            if report is not None and weight != DEFAULT_FAIR_WEIGHT:
                report.warn(
                    "spec.fairSharing.weight",
                    "has no effect: fair sharing is off (no Kueue Configuration with fairSharing)",
                )
    for name, cq in objects.cluster_queues.items():
        report = reports.get(f"{CLUSTER_QUEUE}/{name}")
        for g, group in enumerate(cq.resource_groups):
            for f, quotas in enumerate(group.flavors):
                if report is not None and quotas.flavor not in objects.flavors:
                    report.warn(
                        f"spec.resourceGroups[{g}].flavors[{f}].name",
                        f'no ResourceFlavor "{quotas.flavor}": the ClusterQueue is inactive, admits nothing',
                    )
        for i, (check, _) in enumerate(cq.admission_checks):
            why = _inactive_check(objects, check)
            if report is not None and why is not None:
                report.warn(f"spec.admissionChecksStrategy.admissionChecks[{i}].name", why)
    for key, lq in objects.local_queues.items():
        report = reports.get(f"{LOCAL_QUEUE}/{key}")
        if report is not None and lq.cluster_queue not in objects.cluster_queues:
            report.warn("spec.clusterQueue", f'no ClusterQueue "{lq.cluster_queue}": its workloads wait')
    for name, flavor in objects.flavors.items():
        report = reports.get(f"{RESOURCE_FLAVOR}/{name}")
        if report is not None and flavor.topology is not None and flavor.topology not in objects.topologies:
            report.warn(
                "spec.topologyName",
                f'no Topology "{flavor.topology}": the ClusterQueues using this flavor are inactive, '
                "admit nothing",
            )
    for name in sorted(objects.cohorts):
        seen = [name]
        parent = objects.cohorts[name].parent
        while parent is not None and parent in objects.cohorts and parent not in seen:
            seen.append(parent)
            parent = objects.cohorts[parent].parent
        report = reports.get(f"{COHORT}/{name}")
        if parent is not None and parent in seen and report is not None:
            report.error(
                "spec.parentName", invalid(parent, "the Cohort tree has a cycle: " + " -> ".join(seen))
            )


def _inactive_check(objects: KueueObjects, name: str) -> str | None:
    """Why a check a ClusterQueue names leaves it inactive (``AdmissionCheckNotFound``; a ProvisioningRequest
    check without its config: ``AdmissionCheckInactive``), or None."""
    check = objects.admission_checks.get(name)
    if check is None:
        return f'no AdmissionCheck "{name}": the ClusterQueue is inactive, admits nothing'
    if (
        check.controller_name == PROVISIONING_REQUEST_CONTROLLER
        and check.config not in objects.provisioning_configs
    ):
        return (
            f'the AdmissionCheck "{name}" is inactive (no {PROVISIONING_REQUEST_CONFIG} '
            f'"{check.config or ""}"): the ClusterQueue is inactive, admits nothing'
        )
    return None


def priority_class_label(meta: Meta) -> str | None:
    """The WorkloadPriorityClass a workload names (``metadata.labels[kueue.x-k8s.io/priority-class]``)."""
    return meta.labels.get(PRIORITY_CLASS_LABEL) or None


def check_priority_classes(objects: KueueObjects, labelled: list[tuple[Reporter, str]]) -> None:
    """A workload naming a WorkloadPriorityClass that does not exist is refused (Kueue's Workload
    webhook: ``workloadPriorityClass ... not found``)."""
    for report, name in labelled:
        if name not in objects.priority_classes:
            report.error(
                f"metadata.labels.{PRIORITY_CLASS_LABEL}", f'WorkloadPriorityClass "{name}" not found'
            )
