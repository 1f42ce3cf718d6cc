"""The narrow port through which the control loops read and change a cluster.

A loop holds no reference to the simulator: it reads the few things it needs (the pods and their
status, the nodes as ``ClusterState`` columns, the node groups of the cloud, a workload's replicas,
a metric) and asks for the few changes it makes (launch, cordon or delete a node, evict or
delete a pod, scale a Deployment or ReplicaSet, create a Job, gate or release a pod). Each loop states what it
needs as one protocol (``NodeGroupPort`` for cluster-autoscaler, ``WorkloadPort`` for the HPA and
KEDA, ``QueuePort`` for Kueue); ``ClusterPort`` is all of them. The simulator implements it over
its in-memory cluster (``sim.simulation``); a live backend implements it over the Kubernetes API
and the cloud's node groups.

A read is what the API or the cloud would answer now; a write takes effect as the cluster makes it
(an evicted pod leaves after its grace period; a launched node joins when it has started).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Protocol, runtime_checkable

from gpufleet.cluster.state import ClusterState
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.dra import ResourceSlice
from gpufleet.model.node import Taint, Toleration
from gpufleet.model.pod import Pod
from gpufleet.model.provisioning_request import ProvisioningRequest
from gpufleet.model.simulation import AutoscalerSettings, NodePool
from gpufleet.model.workloads import Job, PodGroup, PodSet


class PodStatus(Protocol):
    """One pod as a loop reads it: the object, its phase and conditions, and when things happened."""

    @property
    def pod(self) -> Pod: ...
    @property
    def phase(self) -> str: ...
    @property
    def message(self) -> str | None:
        """Why it is not scheduled (``PodScheduled=False``), or what holds it."""
        ...

    @property
    def created_s(self) -> float:
        """When it was created in the run (a dump's pods: when the run starts)."""
        ...

    @property
    def creation_timestamp_s(self) -> float:
        """Its ``metadata.creationTimestamp``, on the run's clock: before time 0 for a dump's pod created
        before the dump; what its age counts from."""
        ...

    @property
    def bound_s(self) -> float | None: ...
    @property
    def running_s(self) -> float | None: ...
    @property
    def working_s(self) -> float | None:
        """When it first did its work (past its start chain): when it started, to a metrics reader."""
        ...

    @property
    def deleted_s(self) -> float | None: ...
    @property
    def ready(self) -> bool: ...
    @property
    def terminating(self) -> bool: ...


class LaunchStatus(Protocol):
    """A node the cloud is starting, until its GPUs are allocatable."""

    @property
    def for_pods(self) -> tuple[str, ...]:
        """The pods cluster-autoscaler launched it for."""
        ...

    @property
    def warm(self) -> bool:
        """Launched to be held empty and ready (``warm``), not for pods."""
        ...

    @property
    def gpu_ready_after_s(self) -> float | None:
        """Seconds from the request until its GPUs are allocatable, where the cloud can tell (the
        simulator's start chain); None where it cannot (a real cloud)."""
        ...

    @property
    def registered_s(self) -> float | None:
        """When it registered (joined the cluster: its ``creationTimestamp``), its GPUs not allocatable yet;
        None while it has not."""
        ...


class NodeGroup(Protocol):
    """A node pool as cluster-autoscaler's cloud provider sees it, with the autoscaler's own
    bookkeeping of it (its backoff, the warm nodes it holds)."""

    @property
    def name(self) -> str: ...
    @property
    def pool(self) -> NodePool:
        """Its spec: min, max, the node template, the price, how many warm nodes to hold."""
        ...

    @property
    def nodes(self) -> AbstractSet[str]:
        """Its nodes, launched and not deleted."""
        ...

    @property
    def launching(self) -> Mapping[str, LaunchStatus]: ...
    @property
    def warm(self) -> set[str]:
        """Its empty nodes held ready, exempt from scale-down (the autoscaler uses them up)."""
        ...

    @property
    def backoff_until(self) -> float: ...
    def backed_off(self, now: float) -> bool: ...
    def back_off(self, now: float, settings: AutoscalerSettings) -> None:
        """A launch failed: 5 minutes, doubled after each failure past the last backoff, up to 30."""
        ...

    def upcoming(self) -> int:
        """Nodes launched that have not registered their GPUs yet."""
        ...

    def slices_for(self, node: str) -> list[ResourceSlice]:
        """The DRA ResourceSlices a node of the group publishes (none for most groups)."""
        ...


class ScaleStatus(Protocol):
    """What the scale subresource of a Deployment, ReplicaSet, StatefulSet or LeaderWorkerSet gives:
    ``spec.replicas``, and the pods it keeps that its selector selects (a LeaderWorkerSet's leaders)."""

    @property
    def replicas(self) -> int: ...
    @property
    def active(self) -> Collection[str]: ...


class JobStatus(Protocol):
    """A Job's spec, whether it is done, and its pods not yet ended."""

    @property
    def job(self) -> Job: ...
    @property
    def done(self) -> bool: ...
    @property
    def active(self) -> Collection[str]: ...


@runtime_checkable
class QueuedWorkload(Protocol):
    """A workload Kueue admits as one (a Job, a PyTorchJob, a JobSet, ...: Kueue's integrations,
    ``pkg/controller/jobs``): its pod sets, whether it finished, and its pods not yet ended."""

    @property
    def done(self) -> bool: ...
    @property
    def active(self) -> Collection[str]: ...
    def pod_sets(self) -> list[PodSet]: ...


@runtime_checkable
class ReclaimsPods(Protocol):
    """A queued workload whose controller reports the pods of its pod sets it will not create again
    (Kueue's ``JobWithReclaimablePods``: a Job, a JobSet, a TrainJob), ``Workload.status.reclaimablePods``:
    Kueue no longer counts them against the quota."""

    def reclaimable_pods(self) -> dict[str, int]:
        """Pod set name -> its pods that will not run again (none: left out)."""
        ...


@runtime_checkable
class AdmitsPartially(Protocol):
    """A queued workload Kueue may admit with fewer pods than it asks (partial admission: its pod sets'
    ``minCount``; a Job, ``kueue.x-k8s.io/job-min-parallelism``): it runs with the counts admitted
    (``RunWithPodSetsInfo``) and asks its spec's again when evicted (``RestorePodSetsInfo``)."""

    def run_with_counts(self, counts: Mapping[str, int]) -> list[str]:
        """Run with ``counts`` (pod set -> pods admitted); the keys of its pods beyond them, which it
        no longer counts (their owner does not replace them)."""
        ...

    def restore_counts(self) -> None:
        """Ask for its spec's counts again."""
        ...


@runtime_checkable
class QueuedInParts(Protocol):
    """A workload Kueue admits part by part, each part a workload of its own (a LeaderWorkerSet: each
    group, ``pkg/controller/jobs/leaderworkerset``)."""

    def queued_part(self, pod: Pod) -> tuple[str, QueuedWorkload] | None:
        """The part ``pod`` belongs to: its key (``<kind>/<ns>/<name>-<part>``) and its workload."""
        ...


class ClusterReads(Protocol):
    @property
    def state(self) -> ClusterState:
        """The nodes and the pods bound (or assumed) to them, as the decisions read them."""
        ...

    @property
    def pods(self) -> Mapping[str, PodStatus]:
        """Every pod by ``namespace/name``, ended ones too."""
        ...


class NodeGroupPort(ClusterReads, Protocol):
    """What cluster-autoscaler reads and changes."""

    @property
    def node_groups(self) -> Mapping[str, NodeGroup]: ...
    @property
    def disruption_budgets(self) -> Sequence[DisruptionBudget]: ...
    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]:
        """Each PodDisruptionBudget with its ``status.disruptionsAllowed``."""
        ...

    def unschedulable_pods(self) -> list[Pod]:
        """Pods whose ``PodScheduled`` condition is False with reason ``Unschedulable`` (``isUnschedulable``),
        whatever their scheduler: those a scheduler of the run marked so, a dump's among them until the run's
        scheduler has tried them, and a dump's of a scheduler the run does not simulate (its condition the
        dump's to the end); not bound, deleted nor waiting at Permit. Any other reason (``SchedulerError``,
        ``SchedulingGated``, a custom one) keeps a pod out."""
        ...

    def scheduler_unprocessed_pods(self, schedulers: AbstractSet[str]) -> list[Pod]:
        """The pending pods of these schedulers (by ``schedulerName``) with no ``PodScheduled`` condition, or
        one without a reason (``SchedulerUnprocessedPods``): none of them processed yet, or of a scheduler
        the run does not simulate; not bound, deleted, gated nor waiting at Permit."""
        ...

    def nominated_nodes(self) -> Mapping[str, str]:
        """The pending pods' ``status.nominatedNodeName`` (the node a scheduler's preemption chose for the
        pod, its victims on their way out), by pod key; a pod nominated nowhere is left out."""
        ...

    def daemonset_templates(self) -> list[Pod]: ...
    def daemon_pod_keys(self) -> AbstractSet[str]: ...
    def computes_on_gpus(self, pod_key: str) -> bool:
        """Whether the pod is computing on GPUs now (what ``gpuAwareScaleDown`` reads from DCGM)."""
        ...

    def nodes_going_away(self) -> AbstractSet[str]:
        """Nodes being drained for deletion by someone other than the autoscaler (a spot interruption)."""
        ...

    def unready_nodes(self) -> Mapping[str, float]:
        """The registered nodes whose Ready condition is not True (False or Unknown: a node down), each
        with when it registered (its ``creationTimestamp``)."""
        ...

    def pods_version(self) -> Hashable:
        """A value that changes whenever a pod is created, changes phase or starts or stops working."""
        ...

    def launch(self, group: str, for_pods: tuple[str, ...], warm: bool) -> str | None:
        """Ask the cloud for one node of the group; its name, or None when the cloud has none (a
        stock-out)."""
        ...

    def delete_node(self, name: str) -> None: ...
    def cordon(self, name: str, unschedulable: bool) -> None:
        """Mark the node to be deleted, no new pod scheduled there (cluster-autoscaler's ToBeDeleted taint,
        ``MarkToBeDeleted``), or no longer (``CleanToBeDeleted``, a deletion that failed)."""
        ...

    def evict_pod(self, key: str, grace_s: float) -> str | None:
        """Ask the Eviction API to evict a pod bound to a node with this grace period: None when it does, else
        its error (429: a PodDisruptionBudget of the pod allows no disruption now). A pod gone or already
        terminating is no refusal."""
        ...

    def pod_waits_for_node(self, key: str, provisioning: bool) -> None:
        """The pod waits for a node being provisioned for it (``TriggeredScaleUp``), or no longer."""
        ...

    def set_node_taints(self, name: str, taints: tuple[Taint, ...]) -> None:
        """Replace the node's ``spec.taints`` (cluster-autoscaler's soft DeletionCandidate taint put on or
        taken off); the schedulers see the node updated."""
        ...


class WorkloadPort(ClusterReads, Protocol):
    """What the HPA controller and KEDA read and change."""

    def scale_target(self, target: str) -> ScaleStatus | None:
        """The Deployment, ReplicaSet, StatefulSet or LeaderWorkerSet ``target`` (``<kind>/<ns>/<name>``)
        names; None for another kind."""
        ...

    def job(self, key: str) -> JobStatus | None: ...
    def list_length(self, name: str) -> int:
        """Items queued on a list (what a ``redis`` trigger reads)."""
        ...

    def target_pods_version(self, target: str) -> Hashable:
        """A value that moves whenever the pods of ``target`` change, or the object or status of one of
        them (what the HPA controller reads: ``phase``, ``ready``, ...); None where none is kept (each
        sync then reads every pod)."""
        ...

    def pod_metric(self, pod: PodStatus, name: str) -> float | None:
        """A per-pod metric (``queue_length``, ``requests_per_second``, ``DCGM_FI_DEV_GPU_UTIL``)."""
        ...

    def pod_metric_source(self, pod: PodStatus) -> Hashable:
        """Where the pod's per-pod metrics come from: pods of one source read the same value of each
        metric at any one time (the simulator's pods share their Traffic's; elsewhere each pod is its
        own). It stays the same while the pod is one of its scale target's pods."""
        ...

    def pod_resource_usage(self, pod: PodStatus, resource: str) -> float | None:
        """What the metrics server reports of a running pod's ``resource`` usage (``cpu``: cores,
        ``memory``: bytes); None when it reports none (the pod does not run, or nothing models its usage)."""
        ...

    def pod_counter_rate(self, pod: PodStatus, name: str, window_s: float) -> float | None:
        """A per-pod counter's per-second rate (``http_requests_total``, or a running pod's
        ``container_cpu_usage_seconds_total``: its CPU cores over the window) over the last ``window_s``
        seconds; 0: the current rate (``irate``)."""
        ...

    def scale(self, target: str, replicas: int) -> None:
        """Set ``spec.replicas`` of the Deployment, ReplicaSet, StatefulSet or LeaderWorkerSet ``target``; its
        controller adds or deletes pods (a StatefulSet: in ordinal order; a LeaderWorkerSet: whole groups)."""
        ...

    def create_job(self, job: Job) -> None: ...


class QueuePort(ClusterReads, Protocol):
    """What Kueue's controllers read and change."""

    def queued_workload(self, pod: Pod) -> tuple[str, QueuedWorkload] | None:
        """The workload whose controller made ``pod`` (its key ``<kind>/<ns>/<name>``), when that
        kind is one Kueue admits whole; None for a plain pod."""
        ...

    def pod_group_of(self, pod: Pod) -> PodGroup | None: ...
    def queue_created(self, pod: Pod) -> float | None:
        """When what ``pod``'s Kueue Workload stands for was created, on the run's clock, where a dump says it
        was before the run (the ``creationTimestamp`` of its workload, a Job or another kind Kueue admits
        whole; else the pod's own); None: created as it arrives in the run."""
        ...

    def set_message(self, key: str, message: str) -> None:
        """Say on a pod why it waits."""
        ...

    def hold(self, key: str, message: str) -> None:
        """A new pod stays gated (Kueue's scheduling gate) with this message."""
        ...

    def release(
        self,
        key: str,
        node_selector: dict[str, str],
        tolerations: tuple[Toleration, ...],
        annotations: Mapping[str, str] | None = None,
    ) -> None:
        """Its workload is admitted: the pod takes these node labels and tolerations (and the annotations
        of its admission checks' ``podSetUpdates``, when any) and is ungated."""
        ...

    def delete_pod(self, key: str, reason: str) -> None:
        """Delete a pod: a bound one gets SIGTERM and its grace period, any other goes at once and its
        owner learns it ended."""
        ...

    def workload_resumed(self, key: str) -> None:
        """Kueue admitted the workload ``key`` (a Job's ``RunWithPodSetsInfo``: ``spec.suspend: false``): its
        controller starts again, a Job's ``status.startTime`` is now and its ``activeDeadlineSeconds``
        counts from it."""
        ...

    def workload_suspended(self, key: str) -> None:
        """Kueue evicted the workload ``key`` (a Job's ``Stop``: ``spec.suspend: true``, ``status.startTime``
        cleared): its active time stops counting until it is resumed."""
        ...


class ProvisioningRequests(Protocol):
    """cluster-autoscaler's ProvisioningRequests, as Kueue's ProvisioningRequest admission check controller
    reads, creates and deletes them (``control.cluster_autoscaler_loop`` holds them)."""

    def provisioning_request(self, key: str) -> ProvisioningRequest | None:
        """The request ``<namespace>/<name>`` with its conditions now, None when there is none."""
        ...

    def create_provisioning_request(self, request: ProvisioningRequest) -> None: ...
    def delete_provisioning_request(self, key: str) -> None: ...


class ClusterPort(NodeGroupPort, WorkloadPort, QueuePort, Protocol):
    """Everything the control loops read and change."""
