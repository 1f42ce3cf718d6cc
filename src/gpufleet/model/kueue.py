"""Kueue's tenant-queue objects (``kueue.x-k8s.io`` v1beta1 and v1beta2), as pure data.

Mirrors ``kubernetes-sigs/kueue: apis/kueue/v1beta2/{resourceflavor,clusterqueue,localqueue}_types.go``:
a ``ResourceFlavor`` names the nodes a flavor stands for (``nodeLabels``, ``nodeTaints``,
``tolerations``); a ``ClusterQueue`` holds quotas per (flavor, resource) in ``resourceGroups``
(``nominalQuota``, ``borrowingLimit``, ``lendingLimit``), belongs to at most one cohort, orders
its workloads ``BestEffortFIFO`` (default) or ``StrictFIFO`` and may preempt
(``preemption.reclaimWithinCohort``, ``preemption.withinClusterQueue`` and
``preemption.borrowWithinCohort.policy``, all ``Never`` by default, and
``borrowWithinCohort.maxPriorityThreshold``); a ``LocalQueue`` is a namespace's door to one
ClusterQueue. Workloads name their LocalQueue with the label ``kueue.x-k8s.io/queue-name``.

Also (``cohort_types.go``, ``workloadpriorityclass_types.go``, ``topology_types.go``): a
``Cohort`` (``parentName``: cohorts form a tree; its own ``resourceGroups``: quota its
ClusterQueues may borrow), a ``WorkloadPriorityClass`` (``value``: the priority of a workload
labelled ``kueue.x-k8s.io/priority-class: <name>`` for Kueue's ordering and preemption only) and a
``Topology`` (``levels[].nodeLabel``, widest first), which a ResourceFlavor names
(``topologyName``) for Topology-Aware Scheduling.

Fair sharing (``apis/config/v1beta2/configuration_types.go`` ``FairSharing``; ``fairsharing_types.go``):
Kueue's manager ``Configuration`` turns it on (``fairSharing``, with its ``preemptionStrategies``), and
a ClusterQueue's or Cohort's ``spec.fairSharing.weight`` (default 1) divides its share.

Admission checks (``admissioncheck_types.go``, ``provisioningrequestconfig_types.go``): a ClusterQueue's
``admissionChecksStrategy.admissionChecks`` (v1beta1's ``admissionChecks``, converted to rules without
``onFlavors``) name ``AdmissionCheck`` objects, each run by the controller its ``controllerName`` names; a
rule's ``onFlavors`` limits it to workloads assigned one of those flavors (empty: every flavor of the queue).
A workload of such a queue gets its quota reserved, then is admitted only once every check is ``Ready``.
The one controller gpufleet runs is Kueue's ProvisioningRequest controller
(``kueue.x-k8s.io/provisioning-request``), configured by a ``ProvisioningRequestConfig``
(``provisioningClassName``, ``parameters``, ``managedResources`` and ``retryStrategy``).

Waiting for pods ready (``configuration_types.go`` ``WaitForPodsReady``, ``RequeuingStrategy``): an admitted
workload whose pods are not all Ready within ``timeout`` is evicted (``PodsReadyTimeout``) and requeued after
a backoff, or deactivated past ``backoffLimitCount``; ``blockAdmission`` holds other admissions meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.model.kueue_dumped import DumpedWorkload
from gpufleet.model.node import Taint, Toleration
from gpufleet.model.pod import Requirement

QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
#: A workload's WorkloadPriorityClass (``constants.WorkloadPriorityClassLabel``).
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
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
BORROW_WITHIN_COHORT_POLICIES = (NEVER, LOWER_PRIORITY)
#: ``flavorFungibility``'s policies (v1beta1 also takes the deprecated ``Borrow`` and ``Preempt``, old names
#: of ``MayStopSearch``) and preferences.
MAY_STOP_SEARCH = "MayStopSearch"
TRY_NEXT_FLAVOR = "TryNextFlavor"
FUNGIBILITY_POLICIES = (MAY_STOP_SEARCH, TRY_NEXT_FLAVOR)
BORROWING_OVER_PREEMPTION = "BorrowingOverPreemption"
PREEMPTION_OVER_BORROWING = "PreemptionOverBorrowing"
FUNGIBILITY_PREFERENCES = (BORROWING_OVER_PREEMPTION, PREEMPTION_OVER_BORROWING)

#: Fair sharing's preemption strategies (``config.PreemptionStrategy``), the lists Kueue accepts
#: (``pkg/config/validation.go`` ``validStrategySets``) and the default (``parseStrategies``).
LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"
DEFAULT_PREEMPTION_STRATEGIES = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)
PREEMPTION_STRATEGY_SETS = (
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,),
    (LESS_THAN_INITIAL_SHARE,),
    DEFAULT_PREEMPTION_STRATEGIES,
)
#: ``defaultWeight``: a ClusterQueue's or Cohort's ``fairSharing.weight`` when not given.
DEFAULT_FAIR_WEIGHT = 1.0

#: ``waitForPodsReady``: the eviction reasons and their underlying cause (``workload_types.go``
#: ``WorkloadEvictedByPodsReadyTimeout``, ``WorkloadDeactivated``, ``WorkloadRequeuingLimitExceeded``), the
#: ``requeuingStrategy.timestamp`` values (``EvictionTimestamp``, the default, and ``CreationTimestamp``).
PODS_READY_TIMEOUT = "PodsReadyTimeout"
DEACTIVATED = "Deactivated"
REQUEUING_LIMIT_EXCEEDED = "RequeuingLimitExceeded"
EVICTION_TIMESTAMP = "Eviction"
CREATION_TIMESTAMP = "Creation"
REQUEUING_TIMESTAMPS = (CREATION_TIMESTAMP, EVICTION_TIMESTAMP)

#: Admission checks: Kueue's ProvisioningRequest controller (``ProvisioningRequestControllerName``), the
#: checks' states (``CheckState``), the eviction reason of a workload whose check is Retry or Rejected
#: (``WorkloadEvictedByAdmissionCheck``) and the kind an AdmissionCheck's ``parameters`` names for it
PROVISIONING_REQUEST_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
CHECK_PENDING, CHECK_READY, CHECK_RETRY, CHECK_REJECTED = "Pending", "Ready", "Retry", "Rejected"
EVICTED_BY_ADMISSION_CHECK = "AdmissionCheck"
PROVISIONING_REQUEST_CONFIG = "ProvisioningRequestConfig"

#: A (flavor, resource) pair: the unit Kueue accounts quota in (``resources.FlavorResource``).
FlavorResource = tuple[str, str]


@dataclass(frozen=True)
class ResourceFlavor:
    name: str
    node_labels: dict[str, str] = field(default_factory=dict)
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    topology: str | None = None  # ``topologyName``: a TAS flavor


@dataclass(frozen=True)
class ResourceQuota:
    """Quota of one resource in one flavor; ``None`` limits mean unlimited (borrowing) / all (lending)."""

    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True)
class FlavorQuotas:
    flavor: str
    resources: dict[str, ResourceQuota]


@dataclass(frozen=True)
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


@dataclass(frozen=True)
class FlavorFungibility:
    """Whether the flavor search goes on past a flavor where the workload would borrow
    (``whenCanBorrow``) or preempt (``whenCanPreempt``), and which of the flavors tried it prefers when
    none stops it (``preference``; unset: borrowing over preemption). Kueue's defaults:
    ``MayStopSearch`` and ``TryNextFlavor``."""

    when_can_borrow: str = MAY_STOP_SEARCH
    when_can_preempt: str = TRY_NEXT_FLAVOR
    preference: str | None = None


DEFAULT_FUNGIBILITY = FlavorFungibility()


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
    #: ``preemption.borrowWithinCohort``: its ``policy`` (``LowerPriority``: while borrowing, the queue may
    #: preempt lower-priority workloads of other queues of its cohort) and ``maxPriorityThreshold``
    #: (``None``: unset; else only those of at most this priority)
    borrow_within_cohort: str = NEVER
    max_priority_threshold: int | None = None
    flavor_fungibility: FlavorFungibility = DEFAULT_FUNGIBILITY
    fair_weight: float = DEFAULT_FAIR_WEIGHT  # ``fairSharing.weight``
    #: ``admissionChecksStrategy.admissionChecks``: each check's name and its ``onFlavors`` (empty: all)
    admission_checks: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def quota(self, flavor: str, resource: str) -> ResourceQuota | None:
        return _quota(self.resource_groups, flavor, resource)

    def flavor_names(self) -> tuple[str, ...]:
        """Every flavor of its resource groups, in order (``queue.AllFlavors``)."""
        return tuple(q.flavor for g in self.resource_groups for q in g.flavors)

    def admits_namespace(self, namespace: str) -> bool:
        if self.namespace_selector is None:
            return False
        labels = {NAMESPACE_NAME_LABEL: namespace}
        return all(r.matches(labels) for r in self.namespace_selector)

    @property
    def preempts_while_borrowing(self) -> bool:
        """``borrowWithinCohort.policy`` is not ``Never`` (upstream's ``IsBorrowingWithinCohortForbidden``,
        negated; the flavor assigner's ``canPreemptWhileBorrowing`` without fair sharing)."""
        return self.borrow_within_cohort != NEVER


@dataclass(frozen=True)
class LocalQueue:
    name: str
    namespace: str
    cluster_queue: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Cohort:
    """A node of the cohort tree: its parent (``None``: a root) and its own quota."""

    name: str
    parent: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    fair_weight: float = DEFAULT_FAIR_WEIGHT  # ``fairSharing.weight``

    def quota(self, flavor: str, resource: str) -> ResourceQuota | None:
        return _quota(self.resource_groups, flavor, resource)


@dataclass(frozen=True)
class FairSharing:
    """The manager Configuration's ``fairSharing``: on, with these ``preemptionStrategies``, in order."""

    preemption_strategies: tuple[str, ...] = DEFAULT_PREEMPTION_STRATEGIES


@dataclass(frozen=True)
class WaitForPodsReady:
    """The manager Configuration's ``waitForPodsReady``, defaulted (``SetDefaults_Configuration``; v1beta1's
    defaults where its ``enable: true`` turns it on, v1beta2's where given): ``timeout_s`` for an admitted
    workload to be PodsReady (v1beta1 5 min, v1beta2 30 min); ``block_admission`` (v1beta1 true, v1beta2
    false); ``recovery_timeout_s`` for one that was PodsReady and lost it (default: ``timeout_s``; None:
    ``0s``, not checked); ``requeuingStrategy``: ``timestamp`` (``Eviction``: a workload evicted by the
    timeout is queued by its eviction time; ``Creation``: by its creation time), ``backoff_limit_count``
    (None: requeued without limit; past it the workload is deactivated), ``backoff_base_s`` (60) and
    ``backoff_max_s`` (3600; 0: no cap)."""

    timeout_s: float = 300.0
    block_admission: bool = True
    recovery_timeout_s: float | None = 300.0
    timestamp: str = EVICTION_TIMESTAMP
    backoff_limit_count: int | None = None
    backoff_base_s: float = 60.0
    backoff_max_s: float = 3600.0


#: ``waitForPodsReady`` as v1beta2's ``SetDefaults_Configuration`` sets it on every Configuration (on since
#: Kueue 0.19 unless the ``DisableWaitForPodsReady`` gate is set): 30 min, no ``blockAdmission``
DEFAULT_INSTALL_WAIT = WaitForPodsReady(timeout_s=1800.0, block_admission=False, recovery_timeout_s=1800.0)


@dataclass(frozen=True)
class AdmissionCheck:
    """An ``AdmissionCheck``: the controller that runs it and the ``ProvisioningRequestConfig`` its
    ``parameters`` name (None: none, or another kind)."""

    name: str
    controller_name: str
    config: str | None = None


@dataclass(frozen=True)
class RetryStrategy:
    """``ProvisioningRequestRetryStrategy`` with the CRD's defaults: past ``backoff_limit_count`` failed
    attempts the check is Rejected; the n-th retry waits ``backoff_base_s * 2^(n-1)``, at most
    ``backoff_max_s``."""

    backoff_limit_count: int = 3
    backoff_base_s: float = 60.0
    backoff_max_s: float = 1800.0


@dataclass(frozen=True)
class ProvisioningRequestConfig:
    """A ``ProvisioningRequestConfig``: the class and parameters of the ProvisioningRequests it makes, the
    resources it manages (empty: all) and its retry strategy."""

    name: str
    class_name: str
    parameters: dict[str, str] = field(default_factory=dict)
    managed_resources: tuple[str, ...] = ()
    retry: RetryStrategy = RetryStrategy()


@dataclass(frozen=True)
class WorkloadPriorityClass:
    name: str
    value: int


@dataclass(frozen=True)
class Topology:
    name: str
    levels: tuple[str, ...]  # node labels, widest first


def _quota(groups: tuple[ResourceGroup, ...], flavor: str, resource: str) -> ResourceQuota | None:
    for group in groups:
        for quotas in group.flavors:
            if quotas.flavor == flavor and resource in quotas.resources:
                return quotas.resources[resource]
    return None


@dataclass
class KueueObjects:
    flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueue] = field(default_factory=dict)
    local_queues: dict[str, LocalQueue] = field(default_factory=dict)  # key: ns/name
    #: workloads (Jobs and the other kinds of Kueue's integrations) labelled
    #: ``kueue.x-k8s.io/queue-name``: ``<kind>/<ns>/<name>`` -> the LocalQueue's name.
    workload_queues: dict[str, str] = field(default_factory=dict)
    cohorts: dict[str, Cohort] = field(default_factory=dict)
    priority_classes: dict[str, WorkloadPriorityClass] = field(default_factory=dict)
    topologies: dict[str, Topology] = field(default_factory=dict)
    #: ``<kind>/<ns>/<name>`` of a workload labelled ``kueue.x-k8s.io/priority-class`` -> the class
    workload_priorities: dict[str, str] = field(default_factory=dict)
    #: the manager Configuration's ``fairSharing``; None: fair sharing is off (Kueue's default)
    fair_sharing: FairSharing | None = None
    #: the manager Configuration's ``waitForPodsReady``; None: off (v1beta1 without ``enable: true``).
    #: Without a Configuration document, Kueue's default installation's: its
    #: ``controller_manager_config.yaml`` is a v1beta2 Configuration, which turns it on with v1beta2's
    #: defaults (``DEFAULT_INSTALL_WAIT``)
    wait_for_pods_ready: WaitForPodsReady | None = DEFAULT_INSTALL_WAIT
    admission_checks: dict[str, AdmissionCheck] = field(default_factory=dict)
    provisioning_configs: dict[str, ProvisioningRequestConfig] = field(default_factory=dict)
    #: a dump's Workload objects, by the ``<kind>/<ns>/<name>`` of the workload each belongs to
    #: (``kube.kueue_workloads``)
    dumped: dict[str, DumpedWorkload] = field(default_factory=dict)

    def priority(self, key: str, labels: dict[str, str], pod_priority: int) -> int:
        """The workload's priority for Kueue: its WorkloadPriorityClass's value, else its pods'
        (``pkg/util/priority``: ``GetPriorityFromWorkloadPriorityClass`` before the PriorityClass)."""
        name = self.workload_priorities.get(key) or labels.get(PRIORITY_CLASS_LABEL)
        wpc = None if name is None else self.priority_classes.get(name)
        return pod_priority if wpc is None else wpc.value

    def __bool__(self) -> bool:
        return bool(self.cluster_queues or self.local_queues or self.workload_queues)

    def manages(self, key: str) -> bool:
        """Whether Kueue manages the workload ``key`` (``<kind>/<ns>/<name>``): one labelled with a LocalQueue
        while Kueue is installed (the scenario has ClusterQueues or LocalQueues; else the label is just a
        label). Kueue holds it suspended until it admits it (``spec.suspend``)."""
        return bool(self.cluster_queues or self.local_queues) and key in self.workload_queues

    def holds(self, key: str) -> bool:
        """Whether Kueue holds the workload ``key`` suspended as the run starts: one it manages, unless a
        dump's Workload of it is admitted (``DumpedWorkload.admission``: it runs on)."""
        dumped = self.dumped.get(key)
        return self.manages(key) and (dumped is None or dumped.admission is None)
