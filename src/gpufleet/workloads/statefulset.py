"""StatefulSet (``apps/v1``; Kubernetes 1.34's ``pkg/controller/statefulset``): ``replicas`` pods of stable
names, ``<set>-<ordinal>`` for the ordinals ``spec.ordinals.start`` to ``start + replicas - 1``, each made
again under its name once the pod before it is gone (``stateful_set_control.go``, ``updateStatefulSet``).
Its pods are named and labelled as ``workloads.stateful_pods`` says.

Read as ``ValidateStatefulSetSpec`` (pkg/apis/apps/validation) reads it: the template restarts ``Always``;
the selector is not empty and matches the template's labels; ``replicas`` (default 1), ``minReadySeconds``
and ``ordinals.start`` are not negative; ``podManagementPolicy`` (default ``OrderedReady``) is
``OrderedReady`` or ``Parallel``. ``volumeClaimTemplates`` and ``persistentVolumeClaimRetentionPolicy`` are
not modelled: a warning each saying what that leaves out (no PersistentVolumeClaim is made, kept or deleted,
and a pod made again under its name may go to any node, where upstream's bound claim would hold it to the
node or zone of its volume). ``updateStrategy`` (gpufleet rolls no template, a Deployment's neither),
``serviceName`` and ``revisionHistoryLimit`` are not modelled: a warning each; so is a
``kueue.x-k8s.io/queue-name`` label (Kueue's StatefulSet integration, ``pkg/controller/jobs/statefulset``,
is not modelled).

One sync (``updateStatefulSet``), as ``wanted`` runs it:

1. the replicas, by ascending ordinal (``processReplica``): a missing one is created; under ``OrderedReady``
   (``monotonic``) the sync stops there, and stops at a pod that is being deleted or is not Running, Ready
   and available (Ready for ``minReadySeconds``): ordinal *i* is created only once every lower one is. A pod
   that ended or was deleted is made again under its name only once it is gone (a pod being deleted holds
   its name, unlike a ReplicaSet's). ``Parallel`` (``allowsBurst``) creates every missing one at once and
   waits for none (``MaxUnavailableStatefulSet``, alpha in 1.34, is off);
2. then the pods past the range, by descending ordinal (``processCondemned``): ``Parallel`` deletes them all;
   ``OrderedReady`` deletes the highest, one a sync, only once every replica is available, waiting while it
   is being deleted, and while one is not available unless it is the first such (``firstUnavailablePod``),
   reason ``ScaledDown``.

With ``minReadySeconds``, a pod's turning Ready requeues the set after that long (``updatePod``,
``enqueueSSAfter``): here a sync at the moment a pod it waits for becomes available (``SyncsAgain``).

A pod that was Ready and stops being so while it runs (``kind.HearsNotReady``: its node NotReady, the node
lifecycle controller's ``MarkPodsNotReady``; its container restarted after a failed liveness probe, an exit
or its node's kubelet coming back) is unhealthy again (``isHealthy``): the set is synced again (``updatePod``
enqueues it) and, under ``OrderedReady``, that sync and every later one halt at it, creating no higher
ordinal ("waiting for Pod ... to be Running and Ready") and deleting none past the range unless it is the
first unhealthy pod ("... prior to scale down", ``processCondemned``), until it is Ready again (``pod_ready``)
and, with ``minReadySeconds``, available again, counted from that new Ready time. ``Parallel`` is not
halted. (gpufleet models no readinessProbe: a hung process with no liveness probe stays Ready.)

Its status (``kind.ReportsStatus``; ``updateStatus``, ``computeReplicaStatus``): ``replicas`` (the pods it
holds, being deleted too), ``readyReplicas`` (Running and Ready, ``isRunningAndReady``),
``availableReplicas`` (Ready for ``minReadySeconds``, ``isRunningAndAvailable``), ``currentReplicas`` and
``updatedReplicas`` (the pods not being deleted: gpufleet has one revision, both the current and the update
one); no conditions (1.34's controller sets none).

Scale subresource (``kind.Scalable``): an HPA or a KEDA ScaledObject aimed at ``StatefulSet/<name>`` sets
``replicas``; the selector selects every pod not being deleted. Of a cluster snapshot it adopts the pods
its ownerReferences name that are members by name (``isMemberOf``, ``getPodsForStatefulSet``'s filter);
an ended one is not kept: upstream deletes it and creates it again once it is gone.

Not modelled: ``controller-revision-hash`` and rolling updates; a readinessProbe."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar

from gpufleet.model.kueue import QUEUE_NAME_LABEL
from gpufleet.model.node import Node
from gpufleet.model.owned import FINISHED_PHASES, Owned, OwnedPod
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import Created, PodGroup
from gpufleet.workloads import register_kind
from gpufleet.workloads.kind import CONTROLLER_RESTART_POLICIES, ManifestReader, ReplicaBound, StatusCondition
from gpufleet.workloads.pytorchjob import invalid
from gpufleet.workloads.stateful_pods import Replica, parent_and_ordinal, running_and_ready, stateful_pod

API = ("apps", "v1", "StatefulSet")
ORDERED_READY, PARALLEL = "OrderedReady", "Parallel"
#: the spec fields gpufleet does not model
UNMODELLED = ("updateStrategy", "serviceName", "revisionHistoryLimit")
#: the claims' fields, and what leaving them out leaves out
CLAIMS = ("volumeClaimTemplates", "persistentVolumeClaimRetentionPolicy")
CLAIMS_NOTE = (
    "no PersistentVolumeClaim is made, kept or deleted, and a pod made again under its name may go to any "
    "node, where upstream its bound claim holds it to its volume's node or zone"
)


@dataclass
class StatefulSet:
    name: str
    namespace: str
    template: Pod
    replicas: int = 1
    created: Created = field(default_factory=Created)
    start: int = 0  # spec.ordinals.start
    pod_management_policy: str = ORDERED_READY
    min_ready_s: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def read_stateful_set(manifest: ManifestReader) -> StatefulSet:
    """An ``apps/v1`` StatefulSet, defaulted and validated as ``ValidateStatefulSetSpec`` does."""
    manifest.unmodelled(UNMODELLED)
    manifest.unmodelled(CLAIMS, note=CLAIMS_NOTE)
    if QUEUE_NAME_LABEL in manifest.labels:
        manifest.unmodelled_label(QUEUE_NAME_LABEL, note="Kueue's StatefulSet integration is not modelled")
    policy = manifest.value("podManagementPolicy")
    if policy is None:
        policy = ORDERED_READY
    elif policy not in (ORDERED_READY, PARALLEL):
        manifest.error("podManagementPolicy", invalid(policy, f"must be '{ORDERED_READY}' or '{PARALLEL}'"))
        policy = ORDERED_READY
    replicas = manifest.count("replicas", 1)
    min_ready = manifest.count("minReadySeconds", 0)
    start = manifest.count("ordinals.start", 0)
    template, created = manifest.template("template", CONTROLLER_RESTART_POLICIES)
    manifest.selector("statefulset")
    return StatefulSet(
        manifest.name, manifest.namespace, template, replicas, created, start, str(policy), float(min_ready)
    )


def _ready_s(pod: OwnedPod, now: float, adopted_unix: float | None) -> float | None:
    """When a snapshot's pod turned Running and Ready, on the run's clock: its Ready condition's
    ``lastTransitionTime`` (None: not Running and Ready; ``inf``: no time, which ``IsPodAvailable`` never
    counts available under ``minReadySeconds``; long ago where the run has no time 0)."""
    if not running_and_ready(pod.phase, pod.ready_since is not None):
        return None
    if not pod.ready_since:
        return math.inf
    if adopted_unix is None:
        return -math.inf
    try:
        at = datetime.fromisoformat(pod.ready_since)
    except ValueError:
        return math.inf
    at = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return now - (adopted_unix - at.timestamp())


@register_kind(StatefulSet, api=API, read=read_stateful_set)
class StatefulSetController:
    """The StatefulSet controller for one StatefulSet: its pods by ordinal, created and deleted in order
    (``OrderedReady``) or all at once (``Parallel``)."""

    kind: ClassVar[str] = "StatefulSet"
    api_version: ClassVar[str] = "/".join(API[:2])
    per_node: ClassVar[bool] = False
    status_times: ClassVar[bool] = False  # kind.ReportsStatus: no startTime, no completionTime

    def __init__(self, stateful_set: StatefulSet) -> None:
        self.stateful_set = stateful_set
        self._replicas = stateful_set.replicas
        self.pods: dict[int, Replica] = {}  # by ordinal: the pods that exist (being deleted too)
        self.ordinal_of: dict[str, int] = {}
        self._doomed: list[tuple[str, str]] = []
        self.now = 0.0
        self._due: float | None = None  # when a pod the last sync waited for becomes available
        self._armed: set[float] = set()
        self.scaled_down: set[str] = set()  # the pods its scale-down deletes, until they are gone

    @property
    def key(self) -> str:
        return self.stateful_set.key

    @property
    def monotonic(self) -> bool:
        """``!allowsBurst``: ``OrderedReady``."""
        return self.stateful_set.pod_management_policy == ORDERED_READY

    def _range(self) -> range:
        start = self.stateful_set.start
        return range(start, start + self._replicas)

    def _available(self, replica: Replica) -> bool:
        return replica.available(self.stateful_set.min_ready_s, self.now)

    def _wait_for(self, replica: Replica) -> None:
        """The sync stops at a pod not yet available: one Ready but not yet for ``minReadySeconds`` is due
        then."""
        if replica.ready_s is not None and not replica.terminating:
            due = replica.ready_s + self.stateful_set.min_ready_s
            self._due = due if math.isfinite(due) and due > self.now else None

    # -- one sync (updateStatefulSet) --------------------------------------------------------------
    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        self._due = None
        out: list[Pod] = []
        if not self._process_replicas(out):
            self._process_condemned()
        return out

    def _process_replicas(self, out: list[Pod]) -> bool:
        """``processReplica`` over the ordinals in range; True where the sync stops (``monotonic``)."""
        sts = self.stateful_set
        for ordinal in self._range():
            replica = self.pods.get(ordinal)
            if replica is None:
                pod = stateful_pod(sts.template, sts.name, sts.namespace, ordinal)
                self.pods[ordinal] = Replica(pod.key)
                self.ordinal_of[pod.key] = ordinal
                out.append(pod)
                if self.monotonic:
                    return True
            elif self.monotonic and (replica.terminating or not self._available(replica)):
                self._wait_for(replica)
                return True
        return False

    def _process_condemned(self) -> None:
        """``processCondemned`` over the pods past the range, highest ordinal first."""
        in_range = self._range()
        condemned = sorted((o for o in self.pods if o not in in_range), reverse=True)
        first_unavailable = next(
            (o for o in reversed(condemned) if not self._available(self.pods[o]) or self.pods[o].terminating),
            None,
        )
        for ordinal in condemned:
            replica = self.pods[ordinal]
            if replica.terminating:
                if self.monotonic:
                    return
                continue
            if self.monotonic and not self._available(replica) and ordinal != first_unavailable:
                self._wait_for(replica)
                return
            replica.terminating = True
            self.scaled_down.add(replica.key)
            self._doomed.append((replica.key, "ScaledDown"))
            if self.monotonic:
                return

    # -- what the driver tells it --------------------------------------------------------------------
    def tick(self, now_s: float) -> None:
        """``kind.KeepsTime``: availability reads the time."""
        self.now = now_s

    def doomed(self) -> list[tuple[str, str]]:
        out, self._doomed = self._doomed, []
        return out

    def pod_groups(self) -> list[PodGroup]:
        return []

    def _replica(self, pod: Pod) -> Replica | None:
        ordinal = self.ordinal_of.get(pod.key)
        return None if ordinal is None else self.pods.get(ordinal)

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        """The pod is gone: its ordinal is free, and made again by the next sync if still in range."""
        ordinal = self.ordinal_of.pop(pod.key, None)
        if ordinal is None:
            return False
        del self.pods[ordinal]
        self.scaled_down.discard(pod.key)
        return True

    def pod_terminating(self, pod: Pod, suspended: bool = False) -> bool:
        """``kind.HearsTerminating``: a pod being deleted (``isTerminating``) holds its name and, under
        ``OrderedReady``, stops the syncs at its ordinal until it is gone; nothing to create now."""
        replica = self._replica(pod)
        if replica is not None:
            replica.terminating = True
        return False

    def suspended(self, pod: Pod) -> None:
        self.finished(pod, succeeded=False)

    def node_added(self, node: Node) -> list[Pod]:
        return []

    def pod_bound(self, pod: Pod, node: Node) -> bool:
        return False

    def pod_ready(self, pod: Pod) -> bool:
        """``kind.WatchesPods``: the pod turned Running and Ready (a snapshot's keeps its dump's time):
        under ``OrderedReady`` the next ordinal may come, or the next scale-down."""
        replica = self._replica(pod)
        if replica is None or replica.ready_s is not None:
            return False
        replica.ready_s = self.now
        return self.monotonic

    def pod_not_ready(self, pod: Pod) -> bool:
        """``kind.HearsNotReady``: the pod is not Ready any more (``isHealthy`` false): ``OrderedReady``'s
        syncs halt at it until ``pod_ready`` says it is again (``updatePod`` enqueues the set; its sync
        creates and deletes nothing past it)."""
        replica = self._replica(pod)
        if replica is None or replica.ready_s is None:
            return False
        replica.ready_s = None
        return self.monotonic

    def sync_again_s(self) -> float | None:
        """``kind.SyncsAgain``: the sync that finds the pod it waited for available."""
        due = self._due
        if due is None or due in self._armed:
            return None
        self._armed.add(due)
        return due - self.now

    def next_sync(self) -> None:
        self._armed = {t for t in self._armed if t > self.now}

    def adopt(self, owned: Owned) -> None:
        """``kind.Adopts``: its snapshot's pods that are members by name, by ordinal; an ended one is gone
        for it (deleted, then made again)."""
        name = self.stateful_set.name
        for owned_pod in owned.pods:
            parent, ordinal = parent_and_ordinal(owned_pod.pod.name)
            if parent != name or ordinal < 0 or owned_pod.phase in FINISHED_PHASES:
                continue
            ready_s = _ready_s(owned_pod, self.now, owned.adopted_unix)
            self.pods[ordinal] = Replica(owned_pod.pod.key, ready_s, owned_pod.terminating)
            self.ordinal_of[owned_pod.pod.key] = ordinal

    # -- its status (kind.ReportsStatus) -------------------------------------------------------------
    def status_conditions(self) -> list[StatusCondition]:
        """None: 1.34's StatefulSet controller sets no condition."""
        return []

    def status_counts(self) -> dict[str, int]:
        """``updateStatus`` over the replicas and the condemned (``computeReplicaStatus``): every pod it holds
        is created; Ready ones count whether or not being deleted; current and updated are those not being
        deleted (one revision)."""
        held = self.pods.values()
        kept = sum(1 for r in held if not r.terminating)
        return {
            "replicas": len(self.pods),
            "readyReplicas": sum(1 for r in held if r.ready_s is not None),
            "availableReplicas": sum(1 for r in held if self._available(r)),
            "currentReplicas": kept,
            "updatedReplicas": kept,
        }

    def status_indexes(self) -> dict[str, str]:
        return {}

    # -- the scale subresource (kind.Scalable) --------------------------------------------------------
    @property
    def replicas(self) -> int:
        return self._replicas

    @property
    def active(self) -> Collection[str]:
        """Its pods not being deleted, by ordinal."""
        return [r.key for _, r in sorted(self.pods.items()) if not r.terminating]

    def scale(self, replicas: int) -> None:
        """``spec.replicas``; the next sync creates or deletes (``_process_condemned``)."""
        self._replicas = replicas

    def serving(self, working: Callable[[str], bool]) -> int:
        return sum(1 for r in self.pods.values() if not r.terminating and working(r.key))

    def replica_bounds(self) -> list[ReplicaBound]:
        """``kind.BoundsReplicas``: pods only of the ordinals ``start`` to ``start + replicas - 1`` and
        those past it not yet deleted, none below ``start``; under ``OrderedReady`` one scaled down at a
        time (``processCondemned`` waits for it to be gone)."""
        in_range = self._range()
        below = sum(1 for o in self.pods if o < self.stateful_set.start)
        out = [
            ReplicaBound(
                "pods of an ordinal in range", sum(o in in_range for o in self.pods), 0, len(in_range)
            ),
            ReplicaBound("pods of an ordinal below ordinals.start", below, 0, 0),
        ]
        if self.monotonic:
            out.append(ReplicaBound("pods its scale-down is deleting", len(self.scaled_down), 0, 1))
        return out
