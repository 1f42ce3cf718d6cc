"""Kueue's kinds (``kueue.x-k8s.io/v1beta1`` and ``v1beta2``): ResourceFlavor, ClusterQueue, LocalQueue.

Fields follow ``kubernetes-sigs/kueue: apis/kueue/v1beta{1,2}/*_types.go``; the only difference
read here is the cohort: ``spec.cohort`` in v1beta1, ``spec.cohortName`` in v1beta2. Specs are
decoded strictly (a misspelt field is an error); fields Kueue has but gpufleet does not model
(``flavorFungibility``, ``fairSharing``, ``stopPolicy``, ``admissionChecks``,
``preemption.borrowWithinCohort``, ``topologyName``, ...) are warnings. Validation follows the
CRDs' rules and Kueue's webhooks (``pkg/webhooks/clusterqueue_webhook.go``): each flavor lists
the group's ``coveredResources`` in the same order; quotas are quantities, not negative;
``borrowingLimit`` and ``lendingLimit`` need a cohort; ``lendingLimit`` is at most
``nominalQuota``; a resource belongs to one group and a flavor to one group of a queue.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from gpufleet.kube import taints
from gpufleet.kube.node_affinity import selector_term
from gpufleet.kube.objects import Meta, mapping
from gpufleet.kube.problems import Reporter, duplicate, invalid, required, unsupported
from gpufleet.kube.spec_model import SpecModel, validate
from gpufleet.model.kueue import (
    QUEUE_NAME_LABEL,
    QUEUEING_STRATEGIES,
    RECLAIM_WITHIN_COHORT_POLICIES,
    WITHIN_CLUSTER_QUEUE_POLICIES,
    ClusterQueue,
    FlavorQuotas,
    KueueObjects,
    LocalQueue,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from gpufleet.model.pod import Requirement
from gpufleet.model.quantity import QuantityError, parse_quantity
from gpufleet.model.resources import is_extended, to_units

GROUP = "kueue.x-k8s.io"
VERSIONS = ("v1beta1", "v1beta2")
RESOURCE_FLAVOR = "ResourceFlavor"
CLUSTER_QUEUE = "ClusterQueue"
LOCAL_QUEUE = "LocalQueue"


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


class _Preemption(SpecModel):
    reclaim_within_cohort: Annotated[str, AfterValidator(_one_of(RECLAIM_WITHIN_COHORT_POLICIES))] = "Never"
    within_cluster_queue: Annotated[str, AfterValidator(_one_of(WITHIN_CLUSTER_QUEUE_POLICIES))] = "Never"
    borrow_within_cohort: dict[str, Any] | None = None


class _ClusterQueueCommon(SpecModel):
    namespace_selector: dict[str, Any] | None = None
    queueing_strategy: Annotated[str, AfterValidator(_one_of(QUEUEING_STRATEGIES))] = "BestEffortFIFO"
    resource_groups: list[_ResourceGroup] = Field(default_factory=list)
    preemption: _Preemption | None = None
    flavor_fungibility: dict[str, Any] | None = None
    stop_policy: str | None = None
    fair_sharing: dict[str, Any] | None = None
    admission_checks_strategy: dict[str, Any] | None = None
    admission_scope: dict[str, Any] | None = None


class _ClusterQueueV1Beta1(_ClusterQueueCommon):
    cohort: str | None = None
    admission_checks: list[str] | None = None


class _ClusterQueueV1Beta2(_ClusterQueueCommon):
    cohort_name: str | None = None
    concurrent_admission_policy: dict[str, Any] | None = None


_UNMODELLED_CLUSTER_QUEUE = (
    "flavorFungibility",
    "stopPolicy",
    "fairSharing",
    "admissionChecks",
    "admissionChecksStrategy",
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


def resource_flavor(meta: Meta, body: Mapping[str, Any], report: Reporter) -> ResourceFlavor:
    spec = validate(_ResourceFlavor, body.get("spec") or {}, report, "spec") or _ResourceFlavor()
    report.unmodelled_fields(spec.given(), ("topologyName",), "spec")
    return ResourceFlavor(
        meta.name,
        dict(spec.node_labels or {}),
        taints.taints(spec.node_taints, report, "spec.nodeTaints"),
        taints.tolerations(spec.tolerations, report, "spec.tolerations"),
    )


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
    if preemption.borrow_within_cohort:
        report.not_modelled("spec.preemption.borrowWithinCohort")
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
    groups: list[_ResourceGroup], cohort: bool, report: Reporter
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
                read = _resource_quota(quota, cohort, report, path)
                if read is not None:
                    quotas[quota.name] = read
            flavors.append(FlavorQuotas(flavor.name, quotas))
        out.append(ResourceGroup(tuple(group.covered_resources), tuple(flavors)))
    return tuple(out)


def _resource_quota(quota: _ResourceQuota, cohort: bool, report: Reporter, path: str) -> ResourceQuota | None:
    nominal = _quantity(quota.name, quota.nominal_quota, report, f"{path}.nominalQuota")
    limits: dict[str, int | None] = {}
    for field, value in (("borrowingLimit", quota.borrowing_limit), ("lendingLimit", quota.lending_limit)):
        limits[field] = None if value is None else _quantity(quota.name, value, report, f"{path}.{field}")
        if value is not None and not cohort:
            report.error(f"{path}.{field}", invalid(value, f"{field} must be nil when cohort is empty"))
    lending = limits["lendingLimit"]
    if nominal is not None and lending is not None and lending > nominal:
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
    """Flavors a ClusterQueue names and the ClusterQueue a LocalQueue names: missing ones are
    warnings, as Kueue accepts them and marks the queue inactive (``FlavorNotFound``)."""
    for name, cq in objects.cluster_queues.items():
        report = reports.get(f"{CLUSTER_QUEUE}/{name}")
        for g, group in enumerate(cq.resource_groups):
            for f, quotas in enumerate(group.flavors):
                if report is not None and quotas.flavor not in objects.flavors:
                    report.warn(
                        f"spec.resourceGroups[{g}].flavors[{f}].name",
                        f'no ResourceFlavor "{quotas.flavor}": the ClusterQueue is inactive, admits nothing',
                    )
    for key, lq in objects.local_queues.items():
        report = reports.get(f"{LOCAL_QUEUE}/{key}")
        if report is not None and lq.cluster_queue not in objects.cluster_queues:
            report.warn("spec.clusterQueue", f'no ClusterQueue "{lq.cluster_queue}": its workloads wait')
