"""The workload-kind protocol: how a kind of workload expands into pods and gangs, how its
controller reacts when one of its pods ends, and how its manifest is read, so that the simulator,
explain, the manifest reader (and later the live side) handle every kind the same way.

A kind is one module of ``gpufleet.workloads`` that defines its controller and registers it with
``@register_kind(<model class>)``. The controller is made from the workload object, says which pods it wants
now (``wanted``, given the nodes that exist, for kinds that place a pod per node) and which PodGroups
(gangs) they form (``pod_groups``), and learns when one of its pods ended (``finished``; a ``BacksOff``
controller then says how long it waits before it creates again; a ``HearsTerminating`` one also learns when
a pod's deletion begins) or was taken away by a queueing system to be created again later (``suspended``),
and which pods it wants on a node that joins (``node_added``). A controller of a kind a cluster snapshot
holds also adopts the pods it already made there (``Adopts``), and a ``HoldsAdopted`` one holds some
creations back for a while after (a Job's pod failure backoff carried over from its failed pods); a
``SyncsAgain`` one leaves what a sync may not do to its next one (a Job's cap on creations a sync); a
``KeepsTime`` one is told the run's time before each call (a Job's backoffs read it). A
``WatchesPods`` controller also hears when its pods are bound and start, a ``DeletesPods`` one deletes pods
it made (``doomed``: a JobSet's restart, a group recreated whole), and an ``EndsProcesses`` one ends its pods'
processes (``exiting``: ``mpirun`` aborting an MPIJob that lost a rank).

A kind the manifest reader does not know already (anything but Jobs, Deployments and DaemonSets)
brings its reader too: ``@register_kind(<model class>, api=(group, version, kind), read=...)``.
``read`` builds the workload object from a ``ManifestReader``, which reads pod templates and
counts as for every workload and reports problems at a field path (errors end the run with exit
status 2; unmodelled fields are warnings).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from gpufleet.model.node import Node
from gpufleet.model.owned import Owned
from gpufleet.model.pod import Pod
from gpufleet.model.pod_failure_policy import ContainerExit, PodFailurePolicy
from gpufleet.model.workloads import Created, PodGroup, Workload

#: a kind's ``apiVersion`` group, version and ``kind``
GVK = tuple[str, str, str]

#: the pod restart policies a controller that replaces its pods accepts, and one whose pods complete
CONTROLLER_RESTART_POLICIES = ("Always",)
COMPLETING_RESTART_POLICIES = ("OnFailure", "Never")


class WorkloadController(Protocol):
    #: the ``ownerReferences`` kind its pods carry
    kind: ClassVar[str]
    #: whether it places pods on each node that joins (a DaemonSet): only then is ``node_added`` asked
    per_node: ClassVar[bool]

    @property
    def key(self) -> str:
        """``namespace/name`` of the workload."""
        ...

    def wanted(self, nodes: Sequence[Node]) -> list[Pod]:
        """The pods to create now (named as the controller names them)."""
        ...

    def pod_groups(self) -> list[PodGroup]:
        """The gangs its pods form (each labelled ``scheduling.x-k8s.io/pod-group``); none for most kinds."""
        ...

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        """One of its pods ended (Succeeded, or Failed and gone); True when it may want pods again
        (the driver then reconciles it)."""
        ...

    def node_added(self, node: Node) -> list[Pod]:
        """A node joined: the pods it wants there (asked of a ``per_node`` kind only)."""
        ...

    def suspended(self, pod: Pod) -> None:
        """One of its pods was deleted by a queueing system that will admit the workload again
        (Kueue's eviction): it is created again later, not counted as failed."""
        ...


@runtime_checkable
class BacksOff(Protocol):
    """A controller that waits before it creates a failed pod's replacement: asked right after
    ``finished`` returned True for a pod that failed. Without it the replacement is created at once."""

    def retry_delay_s(self) -> float:
        """Seconds until it reconciles again."""
        ...


@runtime_checkable
class HoldsAdopted(Protocol):
    """A controller that, having adopted a snapshot's pods (``Adopts``), holds some creations back for a while
    (a Job's pod failure backoff, carried over from its failed pods' finish times): asked right after
    ``adopt`` when each hold ends; told then (``release_held``) and reconciled."""

    def held_s(self) -> list[float]:
        """The seconds after its adoption at which a hold ends (none: it holds nothing back)."""
        ...

    def release_held(self, elapsed_s: float) -> None:
        """``elapsed_s`` seconds have passed since its adoption: the holds that end by then end."""
        ...


@runtime_checkable
class KeepsTime(Protocol):
    """A controller whose decisions read the time (a Job's pod failure backoff: when its failed pods ended,
    whether a backoff has passed): told the run's time before the driver asks or tells it anything."""

    def tick(self, now_s: float) -> None:
        """The run's time is ``now_s``."""
        ...


@runtime_checkable
class SyncsAgain(Protocol):
    """A controller whose sync leaves work to the next one (a Job's creations and deletions, at most
    ``MaxPodCreateDeletePerSync`` a sync; a failed pod it counts once its replacement is active): asked after
    each reconcile how long until that sync; told then (``next_sync``) and reconciled. It creates and deletes
    nothing of what is left until then."""

    def sync_again_s(self) -> float | None:
        """Seconds until its next sync, where the last one left work to it and it is not due already; else
        None."""
        ...

    def next_sync(self) -> None:
        """Its next sync is now: what the last one left may be created or deleted."""
        ...


@runtime_checkable
class HearsDeletions(Protocol):
    """A controller whose policies tell a pod that failed in place from one that was deleted (evicted,
    preempted, its node gone): Volcano's ``PodFailed`` and ``PodEvicted`` events. Told right before
    ``finished`` of a pod that was deleted."""

    def deleted(self, pod: Pod) -> None:
        """The pod about to be reported ``finished`` was deleted, not failed in place."""
        ...


@runtime_checkable
class HearsTerminating(Protocol):
    """A controller that learns of its pod's deletion when it begins (its ``deletionTimestamp`` set, its
    grace period running), not only when the pod ends: a Job's ``podReplacementPolicy``."""

    def pod_terminating(self, pod: Pod, suspended: bool = False) -> bool:
        """The pod is being deleted (``suspended``: as Kueue suspends its workload); ``finished`` follows
        once it ended. Returns whether the controller may want a pod now (after ``BacksOff``'s delay)."""
        ...


@runtime_checkable
class ReadsFailedPods(Protocol):
    """A controller whose policy reads how a pod failed (a Job's ``podFailurePolicy``: its
    ``DisruptionTarget`` condition, its container's exit code). Told right before ``finished`` of a pod
    that ended Failed."""

    def failed_with(self, pod: Pod, reason: str | None, terminated: ContainerExit | None = None) -> None:
        """The pod about to be reported ``finished`` ended Failed with ``reason`` (the simulation's:
        ``Preempted``, ``Evicted``, ``NodeDeleted``, ``Error``...; None when unknown) and its first
        container's terminated state ``terminated`` (its exit code; None: none)."""
        ...


@runtime_checkable
class CountsRestarts(Protocol):
    """A controller whose policy reads its pods' container restarts (a Job under ``restartPolicy:
    OnFailure``, ``pastBackoffLimitOnFailure``, and the kinds that drive Jobs: JobSet, TrainJob, MPIJob's
    launcher; a PyTorchJob, the training operator's ``PastBackoffLimit``): told each time the kubelet restarts
    the container of one of its pods, then reconciled (what it deletes, ``DeletesPods.doomed``)."""

    def restarted(self, pod: Pod) -> None:
        """The kubelet restarted ``pod``'s container once more."""
        ...


@runtime_checkable
class HasDeadline(Protocol):
    """A controller whose workload, or each of its parts, fails once it has been active a given time (a
    Job's ``activeDeadlineSeconds``; a JobSet's child Jobs', each from its own start; a TrainJob's own and
    its Jobs'): the driver arms each deadline from when it first holds (the workload's start, or its last
    resume once Kueue admitted it again, ``QueuePort.workload_resumed``; a child Job's creation), tells the
    controller when it has passed, then reconciles it."""

    def deadlines(self) -> Mapping[str, float]:
        """Its deadlines now, by a name unique to what each times (``""``: the workload itself; a child Job of
        one restart attempt): the seconds it may be active from when the driver first sees the name, or
        from the last resume (which restarts every clock, as it resets a Job's ``status.startTime``)."""
        ...

    def deadline_passed(self, name: str) -> None:
        """The deadline ``name`` passed (the driver then reconciles it: what it deletes,
        ``DeletesPods.doomed``)."""
        ...


def controller_key(controller: WorkloadController) -> str:
    """``<kind>/<ns>/<name>``, the key a driver files a controller under; a kind whose
    ``ownerReferences`` kind is a built-in kind's too (Volcano's ``Job``, with its ``api_group``) names
    its API group: ``Job.batch.volcano.sh/<ns>/<name>``."""
    group = getattr(controller, "api_group", "")
    return f"{controller.kind}.{group}/{controller.key}" if group else f"{controller.kind}/{controller.key}"


class EndsWithCondition:
    """A controller whose workload ends in one of its final conditions (a training job's
    ``Succeeded``/``Failed``, a JobSet's ``Completed``/``Failed``): ``status`` holds the last one."""

    #: the final conditions, the successful one first
    ENDED: ClassVar[tuple[str, str]] = ("Succeeded", "Failed")
    status: str

    @property
    def finished_as(self) -> str | None:
        """The final condition once the workload ended, else None."""
        return self.status if self.status in self.ENDED else None

    @property
    def done(self) -> bool:
        return self.finished_as is not None


@dataclass(frozen=True)
class StatusCondition:
    """One condition of a workload's status (``type`` holds, ``status: "True"``), its ``reason`` and
    ``message`` as the controller writes them (a Job's ``Failed``, ``BackoffLimitExceeded``, "Job has
    reached the specified backoff limit")."""

    type: str
    reason: str
    message: str


@runtime_checkable
class ReportsStatus(Protocol):
    """A controller whose workload's status a user reads (a Job's conditions and pod counts, a StatefulSet's
    replica counts): the driver notes, on its clock, when each condition first holds
    (``sim.workload_status``), and ``summary.json`` says it."""

    #: whether its status has ``startTime`` and ``completionTime`` (a Job's; a StatefulSet's has neither)
    status_times: ClassVar[bool]

    def status_conditions(self) -> list[StatusCondition]:
        """The conditions that hold now, in the order the controller adds them."""
        ...

    def status_counts(self) -> dict[str, int]:
        """Its status's pod counts (a Job's ``active``, ``succeeded``, ``failed``, ``terminating``; a
        StatefulSet's ``replicas``, ``readyReplicas``, ``availableReplicas``, ``currentReplicas``,
        ``updatedReplicas``)."""
        ...

    def status_indexes(self) -> dict[str, str]:
        """Its status's index lists (an Indexed Job's ``completedIndexes``, its ``failedIndexes`` with
        ``backoffLimitPerIndex``), if any."""
        ...


_IMPLEMENTS: dict[tuple[type, type], bool] = {}


def implements(obj: object, protocol: type) -> bool:
    """Whether ``obj``'s class implements a runtime-checkable protocol, remembered per class: typing's
    ``isinstance`` walks the protocol's members on every call (tens of microseconds), which a driver
    asking for each pod cannot afford. Write ``implements(c, P)``, then ``cast(P, c)`` to use it as one
    (``isinstance`` there would walk the members again for every kind that does)."""
    key = (type(obj), protocol)
    found = _IMPLEMENTS.get(key)
    if found is None:
        found = _IMPLEMENTS[key] = isinstance(obj, protocol)
    return found


#: client-go's ``DefaultControllerRateLimiter``: a failed item waits 5 ms doubling to 1000 s
#: (``ItemExponentialFailureRateLimiter``), the wait of an operator's work queue (controller-runtime's too)
WORK_QUEUE_BASE_S, WORK_QUEUE_MAX_S = 0.005, 1000.0


def work_queue_delay_s(requeues: int) -> float:
    """The work queue's wait before the ``requeues``-th retry of one item (0 for the first try)."""
    return min(WORK_QUEUE_BASE_S * 2.0 ** min(requeues, 64), WORK_QUEUE_MAX_S)


@runtime_checkable
class Adopts(Protocol):
    """A controller that adopts the pods a cluster snapshot holds of it (Jobs, ReplicaSets,
    Deployments, DaemonSets): asked before its first ``wanted``."""

    def adopt(self, owned: Owned) -> None:
        """Its pods of the snapshot (``PodControllerRefManager.ClaimPods``) count as its own, so that
        it creates only what is missing."""
        ...


@runtime_checkable
class WatchesPods(Protocol):
    """A controller that acts on its pods' progress, not only on their end (a LeaderWorkerSet creates
    a group's workers once its leader is scheduled or ready). Each returns True when it may want pods
    again (the driver then reconciles it)."""

    def pod_bound(self, pod: Pod, node: Node) -> bool:
        """One of its pods was bound to ``node``."""
        ...

    def pod_ready(self, pod: Pod) -> bool:
        """One of its pods became Ready."""
        ...


@runtime_checkable
class HearsNotReady(WatchesPods, Protocol):
    """A ``WatchesPods`` controller that also learns when a pod of its that was Ready stops being so while it
    stays Running and not deleted (the node lifecycle controller's ``MarkPodsNotReady`` on a NotReady node,
    its container restarted after a failed liveness probe or an exit): a StatefulSet's ``OrderedReady`` syncs
    halt at it. ``pod_ready`` follows once it is Ready again."""

    def pod_not_ready(self, pod: Pod) -> bool:
        """One of its pods stopped being Ready; True when it may want pods again."""
        ...


@runtime_checkable
class DeletesPods(Protocol):
    """A controller that deletes pods of its own (a group recreated whole, a group scaled away):
    asked before each ``wanted``; the driver deletes them (a bound pod gets its grace period) and
    tells ``finished`` when each is gone."""

    def doomed(self) -> list[tuple[str, str]]:
        """``(pod key, reason)`` of the pods to delete now."""
        ...


@runtime_checkable
class EndsProcesses(Protocol):
    """A controller whose workload's processes end one another (``mpirun`` aborting an MPI job when it loses
    a rank): asked after each reconcile; the driver ends the main container of each pod it names that runs,
    with that exit code, and the kubelet restarts it or the pod ends, as its ``restartPolicy`` says."""

    def exiting(self) -> list[tuple[str, int]]:
        """``(pod key, exit code)`` of the pods whose main process exits now."""
        ...


@dataclass(frozen=True)
class ReplicaBound:
    """A count a controller keeps within bounds: what it counts (``"active pods"``, ``"groups"``, ``"worker
    group gpu replicas"``), how many there are now, and the least and most there may be."""

    what: str
    count: int
    low: int
    high: int


@runtime_checkable
class BoundsReplicas(Protocol):
    """A controller (or autoscaler) whose counts stay within bounds its upstream keeps: a ReplicaSet's
    pods within ``replicas``, a StatefulSet's ordinals within its range, a LeaderWorkerSet's groups within
    ``replicas``, a RayCluster worker group's workers within its ``replicas`` clamped to
    ``minReplicas``/``maxReplicas``, a ScaledJob's Jobs within ``maxReplicaCount``. ``gpufleet simulate
    --check-invariants`` asks it after every event that touched its pods."""

    def replica_bounds(self) -> list[ReplicaBound]:
        """Each count it keeps, with its bounds now."""
        ...


@runtime_checkable
class Scalable(Protocol):
    """A kind with a scale subresource whose controller decides itself what a change of ``replicas``
    removes (a StatefulSet: its highest ordinals; a LeaderWorkerSet: whole groups, highest index first),
    as an HPA or KEDA reads and changes it. (Deployments and ReplicaSets have their own,
    ``workloads.replicas.KeepsReplicas``.)"""

    kind: ClassVar[str]
    #: the ``apiVersion`` a ``scaleTargetRef`` names it by
    api_version: ClassVar[str]

    @property
    def key(self) -> str: ...
    @property
    def replicas(self) -> int:
        """``spec.replicas``."""
        ...

    @property
    def active(self) -> Collection[str]:
        """The pods its scale subresource's selector selects, not yet ended (whose metrics an HPA
        averages)."""
        ...

    def scale(self, replicas: int) -> None:
        """Set ``spec.replicas``; what goes is then ``DeletesPods.doomed``."""
        ...

    def serving(self, working: Callable[[str], bool]) -> int:
        """Its replicas that serve requests now, given which pods are working."""
        ...


class ManifestReader(Protocol):
    """One manifest of a registered kind, as its ``read`` sees it (``kube.load`` implements it)."""

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def annotations(self) -> Mapping[str, str]:
        """``metadata.annotations`` (string values)."""
        ...

    def metadata_error(self, path: str, message: str) -> None:
        """A problem at ``metadata.<path>``: the manifest is rejected."""
        ...

    @property
    def labels(self) -> Mapping[str, str]:
        """The workload's ``metadata.labels``."""
        ...

    def unmodelled_label(self, key: str, note: str = "") -> None:
        """A label of the workload's metadata that asks for something not modelled: a warning."""
        ...

    def annotation(self, key: str) -> object:
        """The parsed value of a ``gpufleet.io/`` annotation on the workload's own metadata (one its
        kind registered), None when absent or invalid (an invalid one is already an error)."""
        ...

    def value(self, path: str) -> object:
        """The value at ``spec.<path>`` (dotted; a part may index a list: ``tasks[0].name``), None when
        absent; a field read is no warning."""
        ...

    def template(
        self,
        path: str,
        restart_policies: tuple[str, ...],
        defaults: Mapping[str, object] | None = None,
        restart_policy: str | None = None,
    ) -> tuple[Pod, Created]:
        """The pod template at ``spec.<path>`` (``template``, ``replicaSpecs.Worker.template``,
        ``tasks[0].template``), read and checked as every workload's, and when the workload is created.
        ``defaults``: pod spec fields the controller sets where the template leaves them unset
        (Volcano's ``schedulerName`` and ``priorityClassName``). ``restart_policy``: the pod
        ``restartPolicy`` the controller sets over the template's (a training operator's replica
        ``restartPolicy``, ``setRestartPolicy``): the pods are read with it (what a
        ``gpufleet.io/exit-code`` does under it)."""
        ...

    def count(self, path: str, default: int) -> int:
        """A count at ``spec.<path>`` that must not be negative; ``default`` when absent."""
        ...

    def pod_failure_policy(self, path: str, restart_policy: str | None = None) -> PodFailurePolicy | None:
        """``podFailurePolicy`` of the JobSpec at ``spec.<path>`` (a JobSet's child Job template), read and
        checked as a Job's (``kube.pod_failure_policy``), None when absent. ``restart_policy``: the pod
        ``restartPolicy`` the controller sets where the template leaves it unset (the JobSet webhook's
        ``OnFailure``), which the check sees."""
        ...

    def per_index(self, path: str, indexed: bool, completions: int | None) -> tuple[int | None, int | None]:
        """``backoffLimitPerIndex`` and ``maxFailedIndexes`` of the JobSpec at ``spec.<path>`` (None: unset),
        checked as a Job's (``validateJobSpec``) for its completion mode and ``completions``."""
        ...

    def pod_replacement_policy(self, path: str, failure_policy: PodFailurePolicy | None) -> str | None:
        """``podReplacementPolicy`` of the JobSpec at ``spec.<path>`` (None: unset), checked as a Job's
        (``validatePodReplacementPolicy``: only ``Failed`` with its ``podFailurePolicy``,
        ``failure_policy``)."""
        ...

    def unmodelled(self, fields: Sequence[str], note: str = "") -> None:
        """Those of ``spec``'s fields that are given are not modelled: a warning each (as is any
        field of ``spec`` the reader did not read), ``note`` saying what that leaves out. A dotted field
        (``runPolicy.suspend``) is looked up below ``spec``."""
        ...

    def selector(self, what: str) -> None:
        """Check ``spec.selector`` as an ``apps/v1`` controller's (not empty, matches the template's
        labels: pkg/apis/apps/validation); ``what`` names the kind in the message (``replicaset``)."""
        ...

    def error(self, path: str, message: str) -> None:
        """A problem at ``spec.<path>``: the manifest is rejected."""
        ...

    def warn(self, path: str, message: str) -> None:
        """A warning at ``spec.<path>``: what gpufleet reads there but cannot judge as upstream would."""
        ...


Factory = Callable[[Any], WorkloadController]
Reader = Callable[[ManifestReader], Workload]
