"""A pod's life in the simulator, as a state machine over its ``PodRecord``.

Pending -> bound -> Running -> (working) -> Succeeded, or Failed. A pod with ``spec.nodeName`` skips
the scheduler and is admitted by the kubelet if it fits (otherwise it fails with ``OutOf<resource>``,
as the kubelet's admission does); a bound pod whose node's device plugin cannot cover it fails with
``UnexpectedAdmissionError``. A bound pod goes through its start chain: image pull (per node,
one at a time, cached), the container starts (and may find too little GPU memory: CUDA out of
memory, then CrashLoopBackOff or OOMKilled), reads its model from shared storage (a fair share of
the bandwidth), warms up, and is ready. It then computes for ``gpufleet.io/duration`` (forever if
unset), or takes items from its work list; its container then exits (``gpufleet.io/exit-code``) and
is restarted in place where its ``restartPolicy`` says so (``Always``: whatever the code), or the pod
ends Succeeded or Failed. A member of a PodGroup works only while at least
``minMember`` members of its group are Running past their start chain or have Succeeded:
distributed training waits for every rank, whatever the scheduler knows (so does a pod of a
training job's rendezvous, ``Behavior.rendezvous``, with no PodGroup); a gang that falls below
it stops whole and restarts from its last checkpoint. A deleted pod gets SIGTERM and its grace
period; work since its last checkpoint is lost.

Every change goes through the record's log; what the rest of the simulator must learn (the
cluster changed, a pod's owner should reconcile, the schedulers should forget a pod) goes to its
``LifecycleHost``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from gpufleet.control.clock import Clock, Priority
from gpufleet.gpus.devices import Unit, out_of_memory
from gpufleet.lifecycle.distributions import parse_duration_spec
from gpufleet.lifecycle.image_pull import ImagePuller
from gpufleet.lifecycle.liveness import restarts_container
from gpufleet.lifecycle.shared_bandwidth import SharedBandwidth
from gpufleet.model.final_states import CRASH_LOOP_BACK_OFF, REJECTED
from gpufleet.model.images import normalized_image_name
from gpufleet.model.node import NO_EXECUTE, tolerated
from gpufleet.model.pod import Pod
from gpufleet.model.pod_failure_policy import (
    COMPLETED,
    CONTAINER_STATUS_UNKNOWN,
    ERROR,
    OOM_KILLED,
    SIGKILL_EXIT_CODE,
    ContainerExit,
)
from gpufleet.model.resources import GPU
from gpufleet.model.simulation import SimulationSettings
from gpufleet.model.taint_eviction import TAINT_EVICTION
from gpufleet.scheduling.events import ClusterChange, assigned_pod_deleted
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.node_ports import REASON as NODE_PORTS_REASON
from gpufleet.scheduling.plugins.node_ports import fits_ports
from gpufleet.sim.cluster import InMemoryCluster
from gpufleet.sim.metering import Meter
from gpufleet.sim.placement_quality import ring_placement
from gpufleet.sim.pod_gc_terminating import TerminatingPodGC
from gpufleet.sim.records import ImagePull, PodRecord
from gpufleet.sim.status_watch import StatusWatch, WatchedPodRecord
from gpufleet.sim.taint_eviction import TaintEviction
from gpufleet.sim.work_queues import WorkList

#: the kubelet's ``Admit`` of a ``PredicateFailureError``: the predicate's name as reason, "Predicate <name>
#: failed: <its reason>" as message (``nodeaffinity.ErrReasonPod``, ``tainttoleration.ErrReasonNotMatch``)
KUBELET_NODE_AFFINITY = (
    "NodeAffinity",
    "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
)
KUBELET_NODE_PORTS = ("NodePorts", f"Predicate NodePorts failed: {NODE_PORTS_REASON}")
KUBELET_TAINT_TOLERATION = (
    "TaintToleration",
    "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
)

#: the reason of a pod deleted by a user or a controller that gives none (gpufleet's, ``final_states``)
DELETED = "Deleted"


class LifecycleHost(Protocol):
    def cluster_changed(self, changes: Sequence[ClusterChange], material: bool = True) -> None:
        """A pod left or its resources were freed (``changes``): pending pods it may help are retried."""
        ...

    def owner_finished(self, pod: Pod, succeeded: bool) -> None:
        """The pod ended: its owner's controller (and Kueue) learn it."""
        ...

    def pod_terminating(self, pod: Pod) -> None:
        """The bound pod is being deleted (its ``deletionTimestamp`` set): its grace period begins."""
        ...

    def forget(self, key: str) -> None:
        """The pod is gone: the schedulers drop it."""
        ...

    def pod_bound(self, pod: Pod, node: str) -> None:
        """A pod was bound to ``node`` (a warm node it landed on is used up)."""
        ...

    def pod_ready(self, pod: Pod) -> None:
        """The pod turned Ready (its start chain done): a controller that waits for it learns it."""
        ...

    def pod_not_ready(self, pod: Pod) -> None:
        """The pod, Ready, stopped being so while it stays Running (``PodLifecycle.not_ready``): a controller
        whose syncs wait for it learns it."""
        ...

    def working_changed(self, pod: Pod) -> None:
        """The pod started or stopped working (what a Traffic's serving replicas are counted from)."""
        ...

    def container_restarted(self, pod: Pod) -> None:
        """The kubelet restarted the pod's container once more (what a Job under ``restartPolicy:
        OnFailure`` counts toward its ``backoffLimit``)."""
        ...


class PodLifecycle:
    def __init__(
        self,
        clock: Clock,
        settings: SimulationSettings,
        cluster: InMemoryCluster,
        gangs: GangView,
        meter: Meter,
        host: LifecycleHost,
        start_rng: np.random.Generator,
    ):
        self.clock = clock
        self.settings = settings
        self.cluster = cluster
        self.gangs = gangs
        self.meter = meter
        self.host = host
        self.start_rng = start_rng  # warm-up times
        self.records: dict[str, PodRecord] = {}
        #: a distributed job's ranks by its rendezvous (``Behavior.rendezvous``): pod keys
        self.rendezvous: dict[str, set[str]] = {}
        #: earlier pods of a name created again (a training operator re-creates a replica under its
        #: name): kept for the summary and the work lost, in the order they were replaced
        self.replaced: list[PodRecord] = []
        self.pending = 0
        self.running = 0
        self.pending_keys: set[str] = set()  # pods in phase Pending, not deleted
        self.storage: SharedBandwidth[str] = SharedBandwidth(settings.storage_bandwidth)
        self._storage_token = 0
        self.pullers: dict[str, ImagePuller] = {}
        self.work_lists: dict[str, WorkList] = {}
        #: progress checkpointed by a pod that ended Failed, as a share of its task, by its slot (``_slot``):
        #: the pod its controller makes again in that slot resumes from it, as a training job reloads its
        #: last checkpoint (the same share of a task its ring may stretch otherwise)
        self.checkpoints: dict[str, float] = {}
        #: the taint eviction controller, which reads the pods bound to each node
        self.taint_eviction = TaintEviction(
            clock, cluster, self.records, self._taint_delete, settings.default_tolerations
        )
        #: PodGC's ``gcTerminating``, which force-deletes the pods being deleted on out-of-service nodes
        self.pod_gc = TerminatingPodGC(clock, cluster, self.records, self._force_delete)

    def lost_with_node(self, rec: PodRecord) -> None:
        """Its node went away (its resources already freed with it): it ends, reason NodeDeleted. A pod
        whose kubelet had stopped stays as the API server holds it, bound to a Node that no longer exists,
        until PodGC deletes it (``sim.unreachable_nodes``)."""
        if rec.kubelet_down:
            return
        self.stop_work(rec, terminated=True)
        self.gang_member_gone(rec)
        self.terminated(rec, "NodeDeleted")

    def set_phase(self, rec: PodRecord, phase: str) -> None:
        """Change a pod's phase, keeping the Pending and Running counts in step."""
        self.pending -= rec.phase == "Pending"
        self.running -= rec.phase == "Running"
        self.pending_keys.discard(rec.pod.key)
        rec.phase = phase
        self.pending += phase == "Pending"
        self.running += phase == "Running"
        if phase == "Pending":
            self.pending_keys.add(rec.pod.key)

    def record(self, pod: Pod, scheduler: str, watch: StatusWatch | None = None) -> PodRecord:
        """A pod was created: recorded, Pending (an ended pod of the same name is kept in ``replaced``);
        ``watch`` counts the writes to what the HPA controller reads of it (``sim.status_watch``)."""
        if watch is None:
            rec = PodRecord(pod, scheduler, self.clock.now)
        else:
            rec = WatchedPodRecord(pod, scheduler, self.clock.now)
            rec.watch = watch
        earlier = self.records.get(pod.key)
        if earlier is not None:
            self.replaced.append(earlier)
        self.records[pod.key] = rec
        saved = self.checkpoints.pop(_slot(pod), None)
        if saved is not None and rec.task_s is not None:
            rec.done_s = min(saved, 1.0) * rec.task_s
        if pod.behavior.rendezvous is not None:
            self.rendezvous.setdefault(pod.behavior.rendezvous[0], set()).add(pod.key)
        self.pending += 1
        self.pending_keys.add(pod.key)
        return rec

    def kubelet_admit(self, rec: PodRecord, running: bool = False) -> None:
        """A pod with ``spec.nodeName`` (which bypasses the scheduler) is admitted by that node's kubelet if
        it passes the kubelet's ``generalFilter`` (``pkg/kubelet/lifecycle/predicate.go``); else it is
        rejected as ``rejectPod`` does: Failed with the first failure's reason and "Pod was rejected: " and
        its message, never having run, not deleted, its gang and its controller told as of any failed pod (a
        Job counts it toward ``backoffLimit``, as upstream counts a Failed pod). A snapshot's pod already
        ``running`` there is checked for room only: its node's labels and taints may have changed since the
        kubelet admitted it (node affinity is ``IgnoredDuringExecution``; a ``NoExecute`` taint it does not
        tolerate has the taint eviction controller delete it once bound, ``sim.taint_eviction``). A pod
        rejected keeps its ``nodeName``: the taint eviction controller looks at it all the same, and deletes
        it at once where a ``NoExecute`` taint of the node is one it does not tolerate (``handlePodUpdate``,
        ``processPodOnNode``: the kubelet's rejection and the controller's deletion both follow)."""
        pod = rec.pod
        name = pod.node_name or ""
        if name not in self.cluster.state.index:
            rec.message = f"node {name} does not exist; the pod stays Pending"
            return
        i = self.cluster.state.index[name]
        rejected = self._kubelet_rejects(pod, i, running)
        if rejected is not None:
            reason, message = rejected
            rec.node, rec.message = name, REJECTED + message
            self.terminated(rec, reason, deleted=False)
            self.taint_eviction.pod_on_node(rec, name)  # (its nodeName is set all the same)
            return
        self.cluster.state.assign(pod, i, self.clock.now)
        self.bound(rec, name, self.cluster.ledger.allocate(pod, name), running)  # the kubelet's device plugin

    def _kubelet_rejects(self, pod: Pod, i: int, room_only: bool = False) -> tuple[str, str] | None:
        """The kubelet's ``generalFilter`` on node ``i``, its first failure as ``Admit`` reports it
        (``reason``, ``message``), or None: resources (``AdmissionCheck``'s ``noderesources.Fits``:
        ``OutOf<resource>``, "Node didn't have enough resource: ..."), then the required node affinity and
        ``nodeSelector`` (``NodeAffinity``), then a host port a pod already on the node uses (``NodePorts``:
        ``AdmissionCheck``'s ``nodeports.Fits``), then an untolerated ``NoExecute`` taint
        (``TaintToleration``). ``room_only``: resources alone."""
        state = self.cluster.state
        short = state.shortfall(pod, i)
        if short:
            r = next(iter(short))
            col = state.res_index.get(r)
            used = int(state.requested[i, col]) if col is not None else 0
            capacity = int(state.alloc[i, col]) if col is not None else 0
            return f"OutOf{r}", (
                f"Node didn't have enough resource: {r}, requested: "
                f"{pod.requests.get(r, 1)}, used: {used}, capacity: {capacity}"
            )
        if room_only:
            return None
        node = state.nodes[i]
        if not pod.matches_node_selector(node):
            return KUBELET_NODE_AFFINITY
        if pod.host_ports and not fits_ports(
            pod.host_ports, [p for a in state.pods_on[i].values() for p in a.pod.host_ports]
        ):
            return KUBELET_NODE_PORTS
        if any(t.effect == NO_EXECUTE and not tolerated(t, pod.tolerations) for t in node.taints):
            return KUBELET_TAINT_TOLERATION
        return None

    def admission_refused(self, rec: PodRecord, node: str, message: str) -> None:
        """The pod was bound to ``node`` and its kubelet refused it at admission: its device plugin could
        not allocate what it asks (a GPU reported Unhealthy after the pod was assumed, while it waited at
        Permit). As the kubelet's ``rejectPod``: Failed with the admit handler's reason,
        ``UnexpectedAdmissionError``, "Pod was rejected: " and its message, never having run, and not
        deleted (it was bound: its PodScheduled condition holds); its gang and its controller learn it
        as of any failed pod."""
        rec.node, rec.bound_s, rec.message = node, self.clock.now, REJECTED + message
        self.terminated(rec, "UnexpectedAdmissionError", deleted=False)

    def bound(self, rec: PodRecord, node: str, devices: list[Unit], running: bool = False) -> None:
        """The pod is bound with its device units (``devices``), then its start chain: image pull
        (per node, one at a time, cached), then the container runs, reads its model from shared
        storage (fair share of the bandwidth), warms up, and is ready. A node whose kubelet stopped
        starts nothing until it is back (``kubelet_restarted``): a snapshot's pod ``running`` there stays
        Running as the API server last heard, no container of it known to run. A node with ``NoExecute``
        taints has the taint eviction controller look at it (``sim.taint_eviction``)."""
        now = self.clock.now  # (its PodScheduled condition True now: no reason, no message)
        rec.node, rec.bound_s, rec.reason, rec.message = node, now, None, None
        rec.devices = devices
        if rec.devices:
            rec.gpu_share = sum(u.share for u in rec.devices)
        dra = self.cluster.state.dra
        if dra is not None and rec.pod.resource_claims:
            rec.claims = dra.allocations_of(rec.pod)
        self.host.pod_bound(rec.pod, node)
        self.taint_eviction.pod_on_node(rec, node)
        if node in self.cluster.kubelet_stopped:
            rec.kubelet_down = True
            rec.enter(now, "node_down")
            if running:  # (running since the run's start, as a snapshot's pod whose kubelet is up)
                rec.running_s = now
                self.set_phase(rec, "Running")
            return
        b = rec.pod.behavior
        if b.image_size_bytes:
            puller = self.pullers.get(node)
            if puller is None:  # what the node has from the start: its status.images, its pool's pre-pulled
                state = self.cluster.state
                on_node = state.nodes[state.index[node]].images
                puller = self.pullers[node] = ImagePuller(self.settings.registry_bandwidth, on_node)
            image = normalized_image_name(b.image) if b.image else rec.pod.key
            joined = puller.pulling(now, image)
            done = puller.request(now, image, b.image_size_bytes)
            if done > now:
                rec.enter(now, "image_pull")
                own_s = 0.0 if joined else b.image_size_bytes / puller.bandwidth
                rec.image_pull = ImagePull(now, own_s, done)
                token = rec.token
                if b.image:
                    size = int(b.image_size_bytes)
                    self.clock.at(done, Priority.COMPLETION, lambda: self._image_landed(node, image, size))
                self.clock.at(done, Priority.COMPLETION, lambda: self._container_started(rec, token))
                return
        self._container_started(rec, rec.token)

    def _taint_delete(self, rec: PodRecord) -> None:
        """The taint eviction controller deletes the pod (``sim.taint_eviction``): a bound one is evicted
        (SIGTERM, its grace period); one its kubelet rejected, Failed, is gone at once."""
        if rec.finished_s is None:
            self.evict(rec.pod.key, TAINT_EVICTION)
            return
        rec.deleted_s = self.clock.now
        rec.enter(rec.deleted_s, "deleted")

    def _image_landed(self, node: str, image: str, size: int) -> None:
        """A pull finished: the image is on the node (its status.images), for ImageLocality to score."""
        if node in self.cluster.state.index:
            self.cluster.state.add_images(node, {image: size})

    def _container_started(self, rec: PodRecord, token: int) -> None:
        if token != rec.token or rec.terminating:
            return
        now = self.clock.now
        rec.running_s = now
        rec.container_starts.append(now)
        if rec.reason == CRASH_LOOP_BACK_OFF:  # its back-off is over
            rec.reason = None
        if rec.phase != "Running":
            self.set_phase(rec, "Running")
        if rec.node is not None and self._cuda_out_of_memory(rec):
            return
        if rec.pod.behavior.model_size_bytes:
            rec.enter(now, "model_load")
            self.storage.add(now, rec.pod.key, rec.pod.behavior.model_size_bytes)
            self._storage_reschedule()
            return
        self._model_loaded(rec)

    def _cuda_out_of_memory(self, rec: PodRecord) -> bool:
        """The process allocates its GPU memory as it starts; too little -> CUDA out of memory.
        ``restartPolicy: Never`` ends the pod Failed (OOMKilled); otherwise the kubelet restarts the
        container (``restart_container``) and it tries again."""
        devices = self.cluster.ledger.nodes.get(rec.node or "")
        if devices is None or rec.pod.behavior.gpu_memory_bytes is None or not rec.devices:
            return False
        holders = {p for u in rec.devices for p in devices.holders_of_gpu(u.gpu)}
        used = {
            k: self.records[k].pod.behavior.gpu_memory_bytes or 0.0
            for k in holders
            if self.records[k].running_s is not None
        }
        if not out_of_memory(rec.pod, rec.devices, devices, used):
            return False
        need = (rec.pod.behavior.gpu_memory_bytes or 0) / 1e9
        rec.message = (
            f"CUDA out of memory: the process needs {need:g} GB of GPU memory and its device cannot give it"
        )
        oom_killed = ContainerExit(rec.pod.behavior.container, SIGKILL_EXIT_CODE, OOM_KILLED)
        if rec.pod.restart_policy == "Never":
            rec.enter(self.clock.now, "crashed")
            rec.running_s = None
            self.set_phase(rec, "Failed")
            rec.reason, rec.finished_s = "OOMKilled", self.clock.now
            rec.terminated = oom_killed
            freed = self._release(rec)
            self.host.owner_finished(rec.pod, succeeded=False)
            self.host.cluster_changed(freed)
            return True
        self.restart_container(rec, oom_killed)
        return True

    def _release(self, rec: PodRecord) -> tuple[ClusterChange, ...]:
        """The pod gives its node back (its device units with it, ``gpus.ledger``): the event that tells
        the schedulers, none where it held no node."""
        state = self.cluster.state
        gone = state.unassign(rec.pod.key)
        return () if gone is None else (assigned_pod_deleted(gone.pod, state.nodes[gone.node].name),)

    def _storage_reschedule(self) -> None:
        self._storage_token += 1
        token = self._storage_token
        nxt = self.storage.next_completion()
        if nxt is not None:
            self.clock.at(nxt.time_s, Priority.COMPLETION, lambda: self._storage_tick(token))

    def _storage_tick(self, token: int) -> None:
        if token != self._storage_token:
            return
        for done in self.storage.advance(self.clock.now):
            self._model_loaded(self.records[done.key])
        self._storage_reschedule()

    def _model_loaded(self, rec: PodRecord) -> None:
        now = self.clock.now
        spec = rec.pod.behavior.warmup
        if spec is not None:
            seconds = parse_duration_spec(spec).sample(self.start_rng)
            if seconds > 0:
                rec.enter(now, "warmup")
                token = rec.token
                self.clock.at(now + seconds, Priority.COMPLETION, lambda: self._warm(rec, token))
                return
        rec.enter(now, "starting")
        self._ready(rec)

    def _warm(self, rec: PodRecord, token: int) -> None:
        if token == rec.token and not rec.terminating:
            self._ready(rec)

    def _gang(self, rec: PodRecord) -> tuple[int, list[PodRecord]] | None:
        """(minMember, members) of the pod's gang, or None for a pod without one: its PodGroup, or the
        ranks of its rendezvous (a distributed job computes only when its world has gathered, whether or
        not a PodGroup gangs their scheduling), whichever asks for more."""
        group = self.gangs.group_of(rec.pod)
        world = rec.pod.behavior.rendezvous
        if world is not None and (group is None or world[1] > group.min_member):
            return world[1], [self.records[k] for k in sorted(self.rendezvous[world[0]])]
        if group is None:
            return None
        return group.min_member, [self.records[k] for k in sorted(self.gangs.members.get(group.key, ()))]

    def _ready(self, rec: PodRecord) -> None:
        if rec.hung:  # a hung process neither computes nor gathers with its gang
            return
        rec.ready, rec.ready_s = True, self.clock.now
        self.host.pod_ready(rec.pod)
        gang = self._gang(rec)
        if gang is None:
            self._work(rec)
            return
        rec.enter(self.clock.now, "gang_wait")
        min_member, members = gang
        if sum(1 for m in members if m.counts_for_gang) >= min_member:
            starting = [m for m in members if m.counts_for_gang and m.phase == "Running" and not m.working]
            self._stretch_for_placement(members)
            for m in starting:
                self._work(m)

    def _stretch_for_placement(self, members: list[PodRecord]) -> None:
        """The ring over the gang's members stretches their compute (``placement_quality``). A member that
        resumes on another ring keeps its checkpointed progress as a share of its task: the seconds of a
        task stretched one way are not the seconds of another. A member being deleted is in no ring (its
        replacement may have joined while it terminates: a Job's ``podReplacementPolicy``)."""
        placed = [
            m
            for m in members
            if m.node is not None and m.phase == "Running" and not m.terminating and m.pod.gpus > 0
        ]
        if len(placed) < 2:
            return
        first = (
            self.cluster.state.nodes[self.cluster.state.index[placed[0].node or ""]]
            if placed[0].node in self.cluster.state.index
            else None
        )
        gpus_per_node = first.allocatable.get(GPU, 0) if first is not None else 0
        product = first.labels.get("nvidia.com/gpu.product") if first is not None else None
        ring = ring_placement([(m.node or "", m.pod.gpus) for m in placed], gpus_per_node, product)
        for m in placed:
            m.ring = ring
            duration = m.pod.behavior.duration_s
            if duration is not None and m.pod.behavior.consumes is None and not m.working:
                task = duration * ring.stretch
                if m.task_s:
                    m.done_s = m.done_s * task / m.task_s
                m.task_s = task

    def _work(self, rec: PodRecord) -> None:
        now = self.clock.now
        if rec.pod.behavior.consumes is not None and not self._take_item(rec):
            return
        if not rec.working:
            self._working(rec, +1)
        rec.working = True
        if rec.working_s is None:
            rec.working_s = now
        rec.enter(now, "working")
        rec.work_started_at = now
        remaining = rec.remaining_s
        if remaining is not None:
            rec.token += 1
            token = rec.token
            self.clock.at(now + remaining, Priority.COMPLETION, lambda: self._complete(rec, token))

    def kubelet_stopped(self, rec: PodRecord) -> None:
        """Its node's kubelet stopped with the node: its containers died (no SIGTERM: the work since its
        last checkpoint is lost, its gang stops), what its start chain had scheduled is void, and its phase
        and Ready condition stay what the API server last heard (nobody reports them; the node lifecycle
        controller marks it not ready once the node is NotReady: ``UnreachableNodes``)."""
        if rec.kubelet_down or rec.deleted_s is not None or rec.phase not in ("Pending", "Running"):
            return
        if rec.pod.key in self.storage:
            self.storage.remove(self.clock.now, rec.pod.key)
            self._storage_reschedule()
        ready = rec.ready
        self.stop_work(rec, terminated=True, sigterm=False)
        rec.hung, rec.kubelet_down, rec.token, rec.ready = False, True, rec.token + 1, ready
        rec.enter(self.clock.now, "node_down")
        self.gang_member_gone(rec)

    def kubelet_restarted(self, rec: PodRecord) -> None:
        """Its node's kubelet is back and finds the pod, its containers gone with the node
        (``kuberuntime_manager.go`` ``computePodActions``: the sandbox is created again): a pod being deleted
        is confirmed gone; otherwise ``restartPolicy`` Always or OnFailure starts its containers again (its
        start chain, from its checkpoint), and ``Never`` fails it, its container's state
        ``ContainerStatusUnknown`` (exit code 137: ``kubecontainer.ContainerReasonStatusUnknown``)."""
        if not rec.kubelet_down:
            return
        rec.kubelet_down = False
        if rec.deleted_s is not None or rec.phase not in ("Pending", "Running"):
            return
        if rec.terminating:
            self.terminated(rec, rec.reason or "Deleted", checkpointed=True)
            return
        lost = ContainerExit(rec.pod.behavior.container, SIGKILL_EXIT_CODE, CONTAINER_STATUS_UNKNOWN)
        if rec.pod.restart_policy == "Never":
            rec.terminating = True
            self.terminated(rec, ERROR, deleted=False, container_exit=lost)
            return
        self.restart_container(rec, lost)

    def delete_if_present(self, rec: PodRecord) -> None:
        if rec.deleted_s is None and rec.finished_s is None and self.records.get(rec.pod.key) is rec:
            self.delete(rec, DELETED)

    def delete(self, rec: PodRecord, reason: str) -> None:
        """Delete a pod: a bound one gets SIGTERM and its grace period; one no node runs goes at once (the
        API server removes a pod without ``nodeName`` at once), an unscheduled one or one only assumed,
        waiting at Permit, which the schedulers reject and whose room they give back, and one whose node
        was deleted while its kubelet was down (nothing left to confirm its end)."""
        key = rec.pod.key
        if key in self.cluster.state.assignments and rec.bound_s is not None:
            self.evict(key, reason)
            return
        now = self.clock.now
        self.host.forget(key)
        freed = self._release(rec)  # (assumed, where no scheduler held it at Permit)
        if freed:
            self.host.cluster_changed(freed)
        self.gangs.remove_pod(rec.pod)
        self.pending -= rec.phase == "Pending"  # (Running: its node deleted while its kubelet was down)
        self.running -= rec.phase == "Running"
        self.pending_keys.discard(rec.pod.key)
        rec.reason, rec.deleted_s = reason, now
        rec.enter(now, "deleted")

    # -- queue consumers ---------------------------------------------------------------------
    def work_list(self, name: str) -> WorkList:
        return self.work_lists.setdefault(name, WorkList(name))

    def _take_item(self, rec: PodRecord) -> bool:
        """A consumer pops an item to work on; with none, a Deployment's worker idles and a Job's
        pod exits at once. Returns whether it has an item."""
        work_list = self.work_list(rec.pod.behavior.consumes or "")
        item = work_list.pop(rec.pod.key)
        if item is not None:
            rec.consumer_idle = False
            rec.task_s, rec.done_s = item.work_s, item.done_s
            return True
        if rec.pod.owner is not None and rec.pod.owner.kind == "Deployment":
            if not rec.consumer_idle:
                rec.consumer_idle = True
                work_list.idle.append(rec.pod.key)
                rec.enter(self.clock.now, "idle")
        else:
            self._succeed(rec)
        return False

    def feed(self, list_name: str, count: int, work_s: float) -> None:
        """Items arrive on a list; idle workers take them at once."""
        work_list = self.work_list(list_name)
        for _ in range(count):
            work_list.push(work_s)
        while work_list.queued and work_list.idle:
            rec = self.records[work_list.idle.pop(0)]
            if rec.consumer_idle and rec.phase == "Running" and not rec.terminating:
                self._work(rec)

    def _working(self, rec: PodRecord, sign: int) -> None:
        """The pod starts (``sign`` +1) or stops (-1) working: the meter and the host learn it."""
        self.meter.working(rec, sign)
        self.host.working_changed(rec.pod)

    def stop_work(self, rec: PodRecord, terminated: bool, sigterm: bool | None = None) -> None:
        """The pod stops computing; work since its last checkpoint is lost (DESIGN, Gangs). ``sigterm``
        (default: ``terminated``): it was told, and may checkpoint (``gpufleet.io/checkpoint-on-sigterm``)."""
        now = self.clock.now
        if rec.consumer_idle and terminated:
            rec.consumer_idle = False
            self.work_list(rec.pod.behavior.consumes or "").idle.remove(rec.pod.key)
        if rec.working:
            rec.token += 1
            self._working(rec, -1)
            lost = rec.stop_working(now, sigterm=terminated if sigterm is None else sigterm)
            rec.work_lost_gpu_s += lost * rec.gpu_share
            consumes = rec.pod.behavior.consumes
            if terminated and consumes is not None and rec.pod.key in self.work_list(consumes).in_progress:
                self.work_list(consumes).interrupt(
                    rec.pod.key, rec.done_s, rec.pod.behavior.requeue_on_sigterm
                )
            if terminated:
                rec.disruptions += (now,)
        rec.ready = False
        rec.enter(now, "terminating" if terminated else "gang_wait")

    def gang_member_gone(self, rec: PodRecord) -> None:
        """A working gang below minMember stops whole and restarts from its last checkpoint."""
        gang = self._gang(rec)
        if gang is None:
            return
        min_member, members = gang
        if sum(1 for m in members if m.counts_for_gang) < min_member:
            for m in members:
                if m.working:
                    self.stop_work(m, terminated=False)
                    m.ready = m.phase == "Running" and not m.terminating

    def hang(self, rec: PodRecord) -> None:
        """Its process hangs (an NCCL hang, a GPU hang with no XID): it keeps its GPUs and computes nothing,
        its gang stops with it (the other ranks wait in a collective); the work since the checkpoint is
        lost when it is restarted, so it counts as lost now."""
        ready = rec.ready  # its Ready condition stays as it was
        self.stop_work(rec, terminated=False, sigterm=False)
        rec.hung, rec.ready = True, ready
        rec.enter(self.clock.now, "hung")
        self.gang_member_gone(rec)

    def not_ready(self, rec: PodRecord) -> None:
        """Its Ready condition turns False while it stays Running (its container restarting:
        ``restart_container``; the node lifecycle controller's ``MarkPodsNotReady``): its owner learns it
        where it was Ready, and ``_ready`` tells it again once the pod is."""
        if rec.ready:
            rec.ready = False
            self.host.pod_not_ready(rec.pod)

    def restart_container(self, rec: PodRecord, exited: ContainerExit) -> float:
        """Its container ended (its livenessProbe failed, CUDA out of memory, its work exited: non-zero, or 0
        under ``Always``) and the kubelet starts it again (``restartPolicy`` Always or OnFailure,
        ``liveness.restarts_container``) after its back-off, whatever the exit code (``doBackOff``,
        ``RestartBackOff``: at once, then 10 s doubling to 5 min, reset once it ran 10 min), waiting in
        ``CrashLoopBackOff``: its start chain again (model load, warm-up), then it
        resumes from its checkpoint. The pod stays Running, ``exited`` its ``lastState.terminated``;
        ``restartCount`` + 1 once the new container starts (``_container_restarted``). Returns the
        back-off."""
        now = self.clock.now
        if rec.pod.key in self.storage:
            self.storage.remove(now, rec.pod.key)
            self._storage_reschedule()
        self.not_ready(rec)
        rec.hung, rec.running_s = False, None
        rec.last_terminated = exited
        rec.token += 1
        token = rec.token
        wait = rec.restart_back_off().wait_s(now)
        if wait > 0:
            rec.reason = CRASH_LOOP_BACK_OFF
            rec.back_offs += ((now, wait),)
        rec.enter(now, "crashed")
        self.gang_member_gone(rec)
        self.clock.at(now + wait, Priority.COMPLETION, lambda: self._container_restarted(rec, token))
        return wait

    def _container_restarted(self, rec: PodRecord, token: int) -> None:
        """The new container created after the back-off: ``restartCount`` + 1, the count the runtime gives
        the container it creates (``kuberuntime_container.go`` ``startContainer``: the last one's + 1; the
        kubelet reports the latest container's, so a container waiting in ``CrashLoopBackOff`` still shows
        the count of the one that exited), and its owner learns it (a Job under ``OnFailure`` counts it
        toward ``backoffLimit``, ``pastBackoffLimitOnFailure``); then it starts."""
        if token != rec.token or rec.terminating:
            return
        rec.restarts += 1
        self.host.container_restarted(rec.pod)
        self._container_started(rec, token)

    def evict(self, key: str, reason: str, by_scheduler: bool = False, grace_s: float | None = None) -> None:
        """Delete a pod bound to its node: SIGTERM, then its resources are freed after the grace period (its
        own, or ``grace_s``: the eviction's ``DeleteOptions.GracePeriodSeconds``); ``by_scheduler``: a
        preemption victim of a kube-scheduler. A pod only assumed (waiting at Permit)
        is on no node yet: a drain, which evicts the pods whose ``nodeName`` is the node, does not reach it
        (a deletion takes it at once, ``delete``; a preemption rejects it at Permit)."""
        rec = self.records.get(key)
        assignment = self.cluster.state.assignments.get(key)
        if rec is None or assignment is None or rec.terminating or rec.bound_s is None:
            return
        self.cluster.state.set_terminating(assignment)
        assignment.preempted, assignment.deleted_s = by_scheduler, self.clock.now
        rec.terminating = True
        if rec.pod.key in self.storage:
            self.storage.remove(self.clock.now, rec.pod.key)
            self._storage_reschedule()
        self.stop_work(rec, terminated=True)
        self._keep_checkpoint(rec)  # (its replacement may come while it terminates: podReplacementPolicy)
        self.gang_member_gone(rec)
        self.host.pod_terminating(rec.pod)
        if rec.kubelet_down:  # no kubelet confirms its end: Terminating until it is back, or PodGC
            rec.reason = reason
        else:
            grace = rec.pod.termination_grace_s if grace_s is None else grace_s
            self.clock.at(
                self.clock.now + grace,
                Priority.COMPLETION,
                lambda: self.terminated(rec, reason, container_exit=_killed(rec), checkpointed=True),
            )
        self.pod_gc.look(rec.node)  # (its node NotReady and out-of-service: PodGC force-deletes it)

    def _force_delete(self, rec: PodRecord) -> None:
        """PodGC's ``markFailedAndDeletePod`` of a pod being deleted (``sim.pod_gc_terminating``): Failed
        (with the reason of its deletion, where one is known yet), gone at once; its kubelet, down, is
        past waiting for."""
        rec.kubelet_down = False
        self.terminated(rec, rec.reason or DELETED, checkpointed=True)

    def failed(self, rec: PodRecord, reason: str) -> None:
        """Its process died with its GPU or node (no SIGTERM, no grace period, as after an XID that kills
        the CUDA context): work since its last checkpoint is lost and it ends Failed with ``reason``; its
        gang stops, its controller replaces it."""
        if rec.deleted_s is not None or rec.phase not in ("Pending", "Running"):
            return
        if rec.pod.key in self.storage:
            self.storage.remove(self.clock.now, rec.pod.key)
            self._storage_reschedule()
        self.stop_work(rec, terminated=True, sigterm=False)
        rec.terminating, rec.token = True, rec.token + 1  # what its start chain had scheduled is void
        self.gang_member_gone(rec)
        self.terminated(rec, reason)

    def terminated(
        self,
        rec: PodRecord,
        reason: str,
        deleted: bool = True,
        container_exit: ContainerExit | None = None,
        checkpointed: bool = False,
    ) -> None:
        """It ends Failed with ``reason`` and gives its node back (``deleted``: and is gone), its first
        container's terminated state ``container_exit`` (None: no exit code). The progress it checkpointed
        is kept for its slot (``_keep_checkpoint``; ``checkpointed``: kept already, as its deletion began)."""
        if rec.deleted_s is not None:  # already gone with its node
            return
        rec.terminated = container_exit
        if not checkpointed:
            self._keep_checkpoint(rec)
        now = self.clock.now
        self.set_phase(rec, "Failed")
        rec.reason, rec.finished_s = reason, now
        if deleted:
            rec.deleted_s = now
        rec.enter(now, "deleted" if deleted else "failed")
        freed = self._release(rec)
        self.gangs.remove_pod(rec.pod)
        self.host.forget(rec.pod.key)
        self.host.owner_finished(rec.pod, succeeded=False)
        self.host.cluster_changed(freed)

    def _keep_checkpoint(self, rec: PodRecord) -> None:
        """The progress the pod checkpointed, kept for its slot: the pod its controller makes again there
        resumes from it, whatever ended this one (a fault, a preemption, an eviction, a deletion, its job
        restarted whole)."""
        if rec.done_s > 0 and rec.task_s and rec.pod.behavior.consumes is None:
            self.checkpoints[_slot(rec.pod)] = rec.done_s / rec.task_s  # (a share: its ring stretched it)

    def _complete(self, rec: PodRecord, token: int) -> None:
        if token != rec.token or not rec.working:
            return
        self._working(rec, -1)
        rec.stop_working(self.clock.now)
        consumes = rec.pod.behavior.consumes
        if consumes is not None:
            self.work_list(consumes).finish(rec.pod.key)
            if rec.pod.owner is not None and rec.pod.owner.kind == "Deployment":
                rec.done_s = 0.0
                self._work(rec)  # the worker takes the next item, or idles
                return
        self._succeed(rec)

    def _succeed(self, rec: PodRecord) -> None:
        """Its container's work is done: it exits with ``gpufleet.io/exit-code`` (default 0)."""
        if rec.working:
            self._working(rec, -1)
        rec.working = False
        self._exited(rec, rec.pod.behavior.exit_code or 0)

    def exit_container(self, rec: PodRecord, code: int) -> None:
        """Its main process exits with ``code`` before its work is done, ended by another (``mpirun``
        aborting the job when it loses a rank): it stops computing, then the kubelet restarts it or the pod
        ends, as at the end of its work (``_exited``: its work not kept). Nothing happens to a pod whose
        container is not running (starting, waiting to restart, or terminating)."""
        if rec.phase != "Running" or rec.terminating or rec.running_s is None or rec.deleted_s is not None:
            return
        if rec.pod.key in self.storage:
            self.storage.remove(self.clock.now, rec.pod.key)
            self._storage_reschedule()
        self.stop_work(rec, terminated=False, sigterm=False)
        self._exited(rec, code)

    def _exited(self, rec: PodRecord, code: int) -> None:
        """Its container exited with ``code`` (reason ``Completed`` for 0, else ``Error``, as the runtime
        words a non-zero exit). The kubelet restarts it in place where ``ShouldContainerBeRestarted`` says
        so (``restart_container``): under ``Always`` whatever the code, 0 too, under ``OnFailure`` a
        non-zero one; the pod then stays Running, as ``getPhase`` keeps a pod Running while its containers
        restart (``pkg/kubelet/kubelet_pods.go``). Otherwise a non-zero code fails the pod (``Never``) and
        0 succeeds it. Its work is not kept once it exited: the next run starts afresh."""
        now = self.clock.now
        exited = ContainerExit(rec.pod.behavior.container, code, COMPLETED if code == 0 else ERROR)
        if restarts_container(rec.pod.restart_policy, code):
            rec.done_s = 0.0
            self.restart_container(rec, exited)
            return
        if code != 0:
            rec.done_s = 0.0
            self.terminated(rec, ERROR, deleted=False, container_exit=exited)
            return
        rec.terminated = exited
        self.set_phase(rec, "Succeeded")
        rec.reason, rec.finished_s = "Completed", now
        rec.enter(now, "succeeded")
        freed = self._release(rec)
        self.host.owner_finished(rec.pod, succeeded=True)
        self.host.cluster_changed(freed)


def _killed(rec: PodRecord) -> ContainerExit | None:
    """The terminated state of a container the kubelet stopped as its pod was deleted (``killContainer``):
    SIGTERM and, once the grace period is over, SIGKILL: exit code 137 (128 + 9), reason ``Error``. None
    where its container was not running (still starting, or waiting to restart): no exit code."""
    if rec.running_s is None:
        return None
    return ContainerExit(rec.pod.behavior.container, SIGKILL_EXIT_CODE, ERROR)


_RETRY_SUFFIX = re.compile(r"-r\d+$")


def _slot(pod: Pod) -> str:
    """A pod's place in its workload: its key without a Job's retry suffix (``<job>-<index>-r<n>``)."""
    return _RETRY_SUFFIX.sub("", pod.key)
