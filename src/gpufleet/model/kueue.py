"""Kueue's tenant-queue objects (``kueue.x-k8s.io`` v1beta1 and v1beta2), as pure data.

Mirrors ``kubernetes-sigs/kueue: apis/kueue/v1beta2/{resourceflavor,clusterqueue,localqueue}_types.go``:
a ``ResourceFlavor`` names the nodes a flavor stands for (``nodeLabels``, ``nodeTaints``,
``tolerations``); a ``ClusterQueue`` holds quotas per (flavor, resource) in ``resourceGroups``
(``nominalQuota``, ``borrowingLimit``, ``lendingLimit``), belongs to at most one cohort, orders
its workloads ``BestEffortFIFO`` (default) or ``StrictFIFO`` and may preempt
(``preemption.reclaimWithinCohort``, ``preemption.withinClusterQueue``, both ``Never`` by
default); a ``LocalQueue`` is a namespace's door to one ClusterQueue. Workloads name their
LocalQueue with the label ``kueue.x-k8s.io/queue-name``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.model.node import Taint, Toleration
from gpufleet.model.pod import Requirement

QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
#: The label every namespace carries (``NamespaceDefaultLabelName``): what a namespaceSelector can match.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

BEST_EFFORT_FIFO = "BestEffortFIFO"
STRICT_FIFO = "StrictFIFO"
QUEUEING_STRATEGIES = (BEST_EFFORT_FIFO, STRICT_FIFO)
NEVER = "Never"
LOWER_PRIORITY = "LowerPriority"
LOWER_OR_NEWER_EQUAL_PRIORITY = "LowerOrNewerEqualPriority"
ANY = "Any"
WITHIN_CLUSTER_QUEUE_POLICIES = (NEVER, LOWER_PRIORITY, LOWER_OR_NEWER_EQUAL_PRIORITY)
RECLAIM_WITHIN_COHORT_POLICIES = (NEVER, LOWER_PRIORITY, ANY)

#: A (flavor, resource) pair: the unit Kueue accounts quota in (``resources.FlavorResource``).
FlavorResource = tuple[str, str]


@dataclass(frozen=True)
class ResourceFlavor:
    name: str
    node_labels: dict[str, str] = field(default_factory=dict)
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()


@dataclass(frozen=True)
class ResourceQuota:
    """Quota of one resource in one flavor; ``None`` limits mean unlimited (borrowing) / all (lending)."""

    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None

    @property
    def guaranteed(self) -> int:
        """What the queue keeps for itself and never lends (``nominalQuota - lendingLimit``)."""
        return 0 if self.lending_limit is None else max(self.nominal - self.lending_limit, 0)


@dataclass(frozen=True)
class FlavorQuotas:
    flavor: str
    resources: dict[str, ResourceQuota]


@dataclass(frozen=True)
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    cohort: str | None = None
    #: ``None``: the nothing selector (no namespace eligible); ``()``: every namespace.
    namespace_selector: tuple[Requirement, ...] | None = None
    queueing_strategy: str = BEST_EFFORT_FIFO
    resource_groups: tuple[ResourceGroup, ...] = ()
    reclaim_within_cohort: str = NEVER
    within_cluster_queue: str = NEVER

    def quota(self, flavor: str, resource: str) -> ResourceQuota | None:
        for group in self.resource_groups:
            for quotas in group.flavors:
                if quotas.flavor == flavor and resource in quotas.resources:
                    return quotas.resources[resource]
        return None

    def admits_namespace(self, namespace: str) -> bool:
        if self.namespace_selector is None:
            return False
        labels = {NAMESPACE_NAME_LABEL: namespace}
        return all(r.matches(labels) for r in self.namespace_selector)


@dataclass(frozen=True)
class LocalQueue:
    name: str
    namespace: str
    cluster_queue: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class KueueObjects:
    flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueue] = field(default_factory=dict)
    local_queues: dict[str, LocalQueue] = field(default_factory=dict)  # key: ns/name
    #: workloads (Jobs and the other kinds of Kueue's integrations) labelled
    #: ``kueue.x-k8s.io/queue-name``: ``<kind>/<ns>/<name>`` -> the LocalQueue's name.
    workload_queues: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.cluster_queues or self.local_queues or self.workload_queues)
