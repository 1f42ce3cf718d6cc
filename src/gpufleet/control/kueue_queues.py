"""Kueue: workloads held until admitted, admission cycles, eviction and requeue.

What Kueue's controllers do around its scheduler (``kubernetes-sigs/kueue: pkg/controller/jobs``,
``pkg/controller/jobframework/reconciler.go``), driving the pure cycle in
``gpufleet.scheduling.kueue.admission``:

* a workload is a Job labelled ``kueue.x-k8s.io/queue-name`` (its pod set: ``parallelism`` --
  at most ``completions`` -- pods of the template), any other kind of Kueue's integrations so
  labelled (a PyTorchJob, a JobSet, ...: its controller's ``pod_sets``, admitted together, each
  assigned flavors of its own; a kind admitted part by part, ``QueuedInParts``, as one workload per
  part: a LeaderWorkerSet's groups), the pods of a PodGroup labelled with it (once ``minMember`` pods
  exist: one pod set ``main``, their requests summed), or a single labelled pod. Kueue
  installed means the scenario has Kueue objects; without any, the label is just a label;
* its pods stay Pending, gated (as Kueue's ``kueue.x-k8s.io/admission`` scheduling gate holds a
  plain pod; a suspended Job has no pods, gpufleet shows them gated so that they carry the
  reason), with the Workload's ``QuotaReserved`` message; the wait is the ``queueing`` stage;
* its priority for Kueue's ordering and preemption is its WorkloadPriorityClass's value (label
  ``kueue.x-k8s.io/priority-class`` on the workload, or on the pod), else its pods' priority;
* its queue-order time (``Ordering.GetQueueOrderTimestamp``: the Workload's ``creationTimestamp``) is
  when it is created in the run, a dump's workload's its ``creationTimestamp`` on the run's clock
  (``port.queue_created``: its Job's or other kind's, a plain pod's own; a pod group's, its latest pod's,
  as Kueue makes the group's Workload once its pods exist);
* a dump's Workload admitted before the run (``model.kueue_dumped.DumpedAdmission``) holds its admission's
  quota from the run's start, on the flavors it was admitted with (``AddOrUpdateWorkload``); its job is not
  suspended, its bound pods are its own (``bound``, as they arrive, before or after its controller starts),
  and a pod it creates later is released at once with its flavors' labels;
* a Job with ``kueue.x-k8s.io/job-min-parallelism`` may be admitted with fewer pods (partial admission,
  ``scheduling.kueue.partial_admission``): it runs with ``parallelism`` set to the count admitted, its gated
  pods beyond it are deleted (final state ``Deleted``: a suspended Job has none), and it asks for its
  spec's count again when evicted;
* when admitted, each pod gets its pod set's assigned flavors' ``nodeLabels`` as nodeSelector and
  their ``tolerations`` (a pod's set: the first whose ``PodSet.selector`` its labels match, as
  upstream's ``kueue.x-k8s.io/podset`` label marks it), and goes to its scheduler. A pod created later
  (a Job's retry) joins at once.
  A pod set admitted by Topology-Aware Scheduling (``scheduling.kueue.topology``) also gets its
  pods' nodes (``kubernetes.io/hostname``), as Kueue's TopologyUngater does; a pod created later
  takes a node of its set's assignment that none of the set's live pods holds;
* an evicted workload's pods are deleted (bound ones get SIGTERM and their grace period); it
  holds its quota until they are gone. A Job is suspended, not failed: its pods do not count
  towards ``backoffLimit``, it is requeued with its creation time and its pods are created
  again (gated) -- Kueue's requeue; its deleted pods end with reason ``Suspended``. A Job's
  ``status.startTime`` is cleared when it is evicted (``Job.Stop``) and set again when it is admitted,
  so its ``activeDeadlineSeconds`` counts from its latest admission (``port.workload_resumed``). Evicted
  pods and PodGroups have nothing to recreate them and end (reason ``Preempted``);
* quota is released when the workload finishes (a Job: once its ``Complete`` or ``Failed`` condition is set,
  which waits for its terminating pods; another kind: once done with no pod left; pods: all terminated), and
  as its controller reports pods it will not create again (``reclaimablePods``: a Job once fewer
  completions remain than its parallelism, a JobSet's or TrainJob's completed Jobs): an admitted
  workload's usage drops by theirs (``scheduling.kueue.workload``); a pending one asks only for the
  pods left. Then workloads set aside as inadmissible are tried again.

It reads the pods and acts on them through a ``control.port.QueuePort`` (gate, release with the
flavors' labels and tolerations, delete); the driver tells it of each new pod (``gate``), each
pod that ended (``pod_finished``) and each change (``settle``).

Its parts, each a module of ``gpufleet.control``:

* ``kueue_workload``: the record of each workload (upstream's Workload object) that the parts share;
* ``kueue_pods_ready``: ``waitForPodsReady`` (``scheduling.kueue.pods_ready``): PodsReady, its timeouts,
  the requeue backoff and deactivation;
* ``kueue_admission_checks``: admission checks (``scheduling.kueue.admission_checks``) and the
  ProvisioningRequest admission check controller;
* ``kueue_summary``: the ``kueue`` section of ``summary.json``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from gpufleet.control.clock import Clock, Priority
from gpufleet.control.kueue_admission_checks import AdmissionChecks, pod_set_annotations
from gpufleet.control.kueue_pods_ready import PodsReadyTimeouts
from gpufleet.control.kueue_summary import QueueStats, summarize
from gpufleet.control.kueue_workload import KueueWorkload, flavored, gone
from gpufleet.control.port import (
    AdmitsPartially,
    ProvisioningRequests,
    QueuedInParts,
    QueuedWorkload,
    QueuePort,
    ReclaimsPods,
)
from gpufleet.model.kueue import QUEUE_NAME_LABEL, FlavorResource, KueueObjects
from gpufleet.model.kueue_dumped import DumpedAdmission, DumpedOnClock, on_clock
from gpufleet.model.pod import Pod
from gpufleet.model.resources import PODS, Resources, add
from gpufleet.model.workloads import PodSet
from gpufleet.scheduling.kueue.admission import schedule
from gpufleet.scheduling.kueue.flavors import Assignment, implied_tas
from gpufleet.scheduling.kueue.pods_ready import backoff_expired, queue_order_time
from gpufleet.scheduling.kueue.topology import NodeRoom, group_of, request_for, request_of
from gpufleet.scheduling.kueue.workload import Admitted, PodSetResources, Workload
from gpufleet.workloads.job import COMPLETE, FAILED
from gpufleet.workloads.kind import ReportsStatus, implements

HOSTNAME = "kubernetes.io/hostname"

LOCAL_QUEUE_MISSING = "LocalQueue {} doesn't exist"
#: a dump's Workload deactivated (``spec.active: false``), or waiting out its requeue backoff
DUMPED_DEACTIVATED = "The workload is deactivated"
DUMPED_BACKOFF = "waiting for the requeue backoff (requeue {}) until {:g}s"


class KueueQueues:
    def __init__(
        self,
        port: QueuePort,
        clock: Clock,
        objects: KueueObjects,
        provisioning: ProvisioningRequests | None = None,
        clock_zero_unix: float | None = None,
    ):
        """``provisioning``: cluster-autoscaler's ProvisioningRequests, which the ProvisioningRequest
        admission check controller creates and reads (None: no ProvisioningRequest API; its checks stay
        Pending); ``clock_zero_unix``: the run's time 0 (``model.node_readiness.clock_zero``), which a dump's
        Workloads' times count from."""
        self.port = port
        self.clock = clock
        self.objects = objects
        self.dumped = {k: on_clock(d, clock_zero_unix) for k, d in objects.dumped.items()}
        #: a dump's bound pods that arrived before the controller of their workload, which a dump's Workload
        #: admitted, started: by that workload's key, claimed as it starts
        self._arrived_first: dict[str, list[str]] = {}
        self.installed = bool(self.objects.cluster_queues or self.objects.local_queues)
        self.workloads: dict[str, KueueWorkload] = {}
        self.of_pod: dict[str, str] = {}  # pod key -> workload key
        self.set_aside: set[str] = set()  # workloads set aside as inadmissible until quota is released
        #: each BestEffortFIFO ClusterQueue's sticky preemptor: its head until admitted
        #: (``CycleResult.preemptors``)
        self.preemptors: dict[str, str] = {}
        self.stats = {name: QueueStats() for name in sorted(self.objects.cluster_queues)}
        for name in self.stats:
            self._usage_changed(name)
        self._dirty: set[str] = set()
        self._cycle_requested = False
        self.pods_ready = PodsReadyTimeouts(
            objects.wait_for_pods_ready, clock, port, self._evict, self._request_cycle
        )
        self.checks = AdmissionChecks(
            objects,
            clock,
            port,
            provisioning,
            self.workloads,
            evict=self._evict,
            tell=self._tell,
            start=self._start,
            request_cycle=self._request_cycle,
        )

    # -- what the driver tells it ------------------------------------------------------------
    def gate(self, pod: Pod) -> bool:
        """Whether Kueue takes the new pod: held until its workload is admitted, or released at
        once into an admitted one (through the port's ``hold`` and ``release``)."""
        if not self.installed:
            return False
        found = self._workload_of(pod)
        if found is None:
            return False
        key, queue, controller = found
        created = self.port.queue_created(pod)
        wl = self.workloads.get(key)
        if wl is None:
            wl = self._record(key, queue, controller, created, pod.key)
        else:
            if controller is None and created is not None and key not in self.dumped:
                # a group's Workload: once its pods exist
                wl.created_s = max(wl.created_s, created)
            self._add_pod(wl, pod.key)
        if wl.admitted is not None and not wl.admitted.evicting and wl.started:
            self._release(pod, wl.admitted)
            return True
        self.port.hold(pod.key, wl.message)
        self._request_cycle()
        return True

    def started(self, key: str, controller: QueuedWorkload) -> None:
        """The workload ``key``'s controller started: where a dump's Workload admitted it
        (``DumpedOnClock.admission``), it holds that quota from now on, before any of its pods arrives."""
        dumped = self.dumped.get(key)
        queue = self.objects.workload_queues.get(key)
        if not self.installed or dumped is None or dumped.admission is None or queue is None:
            return
        if key not in self.workloads:
            wl = self._record(key, queue, controller, None)
            for pod_key in self._arrived_first.pop(key, []):
                self._add_pod(wl, pod_key)

    def bound(self, pod: Pod) -> None:
        """A pod bound to its node as it arrives (a dump's): one of a workload a dump's Workload admitted is
        that workload's (its eviction deletes it, its end may release the quota), its Workload's record made
        where it is the first (a plain pod's, a pod group's), or kept for its controller's start where that is
        still to come. Any other bound pod is not Kueue's to hold."""
        found = self._workload_of(pod) if self.installed else None
        owner = pod.owner
        if found is None and owner is not None:  # its controller is still to start
            key = f"{owner.kind}/{pod.namespace}/{owner.name}"
            dumped = self.dumped.get(key)
            if dumped is not None and dumped.admission is not None:
                self._arrived_first.setdefault(key, []).append(pod.key)
        if found is None:
            return
        key, queue, controller = found
        wl = self.workloads.get(key)
        if wl is None:
            dumped = self.dumped.get(key)
            if dumped is not None and dumped.admission is not None:
                self._record(key, queue, controller, self.port.queue_created(pod), pod.key)
        elif wl.admitted is not None and not wl.admitted.evicting:
            self._add_pod(wl, pod.key)

    def _record(
        self,
        key: str,
        queue: str,
        controller: QueuedWorkload | None,
        created: float | None,
        pod_key: str | None = None,
    ) -> KueueWorkload:
        """The workload's record (upstream's Workload), made as its first pod ``pod_key`` arrives (or its
        controller starts), a dump's Workload's restored."""
        at = self.clock.now if created is None else created
        wl = KueueWorkload(key, queue, at, len(self.workloads), controller)
        self.workloads[key] = wl
        if pod_key is not None:
            self._add_pod(wl, pod_key)
        dumped = self.dumped.get(key)
        if dumped is not None:
            self._restore(wl, dumped)
        return wl

    def _add_pod(self, wl: KueueWorkload, pod_key: str) -> None:
        wl.pods.append(pod_key)
        self.of_pod[pod_key] = wl.key

    def _restore(self, wl: KueueWorkload, dumped: DumpedOnClock) -> None:
        """A dump's Workload as it stands (``model.kueue_dumped``): created at its ``creationTimestamp``,
        ordered by its eviction, deactivated (``spec.active: false``: never admitted; its requeue state
        cleared, as the workload controller clears a deactivated one's) or waiting out its backoff until
        ``requeueAt`` (``backoffWaitingTimeExpired``; the workload controller requeues it then), its next
        backoff counting on from ``count`` (``UpdateRequeueState``)."""
        if dumped.created_s is not None:
            wl.created_s = dumped.created_s
        wl.dumped_eviction = dumped.evicted
        wl.priority = dumped.priority
        if dumped.admission is not None:
            self._admitted_before(wl, dumped.admission, dumped.admitted_s)
            return
        if not dumped.active:
            wl.active = False
            wl.message = DUMPED_DEACTIVATED
            return
        wl.requeue_count, wl.requeue_at = dumped.requeue_count, dumped.requeue_at_s
        at = wl.requeue_at
        if at is not None and at > self.clock.now:
            wl.message = DUMPED_BACKOFF.format(dumped.requeue_count, at)
            self.clock.at(at, Priority.CONTROLLER, self._request_cycle, background=True)

    def _admitted_before(self, wl: KueueWorkload, admission: DumpedAdmission, admitted_s: float) -> None:
        """A dump's Workload admitted at ``admitted_s`` (no later than time 0) holds its admission's quota
        as Kueue's cache counts it (``AddOrUpdateWorkload``, ``workload.NewInfo``:
        ``totalRequestsFromAdmission``): each pod set's ``resourceUsage`` on its assigned flavors, its
        ``count`` (unset: its pod set's), not admitted again by gpufleet (which might choose other flavors).
        It is ``Admitted``: its pods run where they are, a pod created later is released at once with the
        flavors' labels, and ``waitForPodsReady`` times it from its admission. Its ClusterQueue's admissions
        in the run do not count it."""
        pod_sets = {s.name: s for s in wl.pod_sets(self.port.pods)}
        first = next(iter(pod_sets.values()))
        entries = []
        for assigned in admission.pod_sets:
            pod_set = pod_sets.get(assigned.name, first)
            count = pod_set.count if assigned.count is None else assigned.count
            entries.append(PodSetResources(assigned.name, count, dict(assigned.usage), pod_set.template))
        template = first.template
        priority = wl.priority
        if priority is None:
            priority = self.objects.priority(wl.key, template.labels, template.priority)
        workload = Workload(wl.key, admission.cluster_queue, priority, wl.created_s, wl.order, tuple(entries))
        flavors = {a.name: dict(a.flavors) for a in admission.pod_sets}
        wl.admitted = Admitted(workload, flavors, dict(admission.usage), admitted_s)
        wl.started = True
        wl.reservations.append(admitted_s)
        wl.admissions.append(admitted_s)
        wl.admitted_counts.append({ps.name: ps.count for ps in workload.pod_sets})
        self._usage_changed(admission.cluster_queue)
        self.pods_ready.arm(wl)

    def suspends(self, key: str) -> bool:
        """Whether the workload ``key`` (``<kind>/<ns>/<name>``) starts suspended until Kueue admits it: one
        labelled with a LocalQueue while Kueue is installed (Kueue's webhook sets a Job's ``spec.suspend``;
        the Job controller sets no ``status.startTime`` while it is suspended), unless a dump's Workload
        admitted it (``KueueObjects.holds``)."""
        return self.objects.holds(key)

    def pod_finished(self, pod: Pod) -> bool:
        """A pod of a workload ended; True if it went because Kueue evicted a Job (suspension,
        not a failure)."""
        key = self.of_pod.get(pod.key)
        if key is None:
            return False
        self._dirty.add(key)
        return self.evicting(pod)

    def workload_changed(self, key: str) -> None:
        """The workload ``key``'s controller changed it by time alone (a Job's deadline passed): Kueue's
        reconciler, which watches the Job, reads it again (``settle``: finished once its ``Failed``
        condition is set)."""
        if key in self.workloads:
            self._dirty.add(key)
            self.settle()

    def owner_deleted(self, key: str, now_s: float) -> None:
        """The workload ``key`` (a Job whose ``ttlSecondsAfterFinished`` expired) was deleted: Kueue's
        Workload, which it owns, goes with it (the garbage collector's)."""
        wl = self.workloads.get(key)
        if wl is not None:
            wl.deleted_s = now_s

    def evicting(self, pod: Pod) -> bool:
        """Whether the pod is being deleted because Kueue evicted its Job (suspended, not failed)."""
        key = self.of_pod.get(pod.key)
        if key is None:
            return False
        wl = self.workloads[key]
        return pod.key in wl.leaving and wl.controller is not None

    def settle(self) -> None:
        """After a change: release the quota of finished workloads, of evicted ones whose pods are gone,
        and of the pods that became reclaimable (Kueue's workload controller requeues the inadmissible
        workloads when an admitted one's ``reclaimablePods`` change)."""
        released = False
        for key in sorted(self._dirty):
            wl = self.workloads[key]
            admitted = wl.admitted
            if admitted is None:
                continue
            if admitted.evicting:
                if all(gone(self.port.pods, k) for k in wl.leaving):
                    wl.leaving = set()
                    self._unadmit(wl)
                    if wl.controller is None:
                        wl.finished_s = self.clock.now
                    released = True
            elif self._finished(wl):
                self._unadmit(wl)
                wl.finished_s = self.clock.now
                self.stats[admitted.workload.cluster_queue].finished += 1
                released = True
            else:
                if (reclaim := self._reclaimable(wl.controller)) is not None:
                    wl.admitted = admitted.reclaimed(*reclaim)
                    if wl.admitted is not admitted:
                        self._usage_changed(admitted.workload.cluster_queue)
                        released = True
                self.pods_ready.changed(wl)
        self._dirty.clear()
        if released:
            self.set_aside.clear()
            self._request_cycle()

    def pod_ready(self, pod: Pod) -> None:
        """A pod turned Ready: its workload may now be PodsReady."""
        key = self.of_pod.get(pod.key)
        wl = None if key is None else self.workloads[key]
        if wl is not None and wl.admitted is not None and not wl.admitted.evicting and wl.started:
            self.pods_ready.changed(wl)

    def active(self) -> bool:
        """Whether Kueue has something to do in time alone: an admitted workload not PodsReady whose
        ``waitForPodsReady`` deadline is to come, or one waiting out its requeue backoff
        (``waitForPodsReady``'s or an admission check's)."""
        now = self.clock.now
        for wl in self.workloads.values():
            if (
                wl.active
                and wl.admitted is None
                and wl.finished_s is None
                and not backoff_expired(wl.requeue_at, now)
            ):
                return True
            if self.pods_ready.due(wl):
                return True
        return False

    def provisioning_changed(self) -> None:
        """cluster-autoscaler set conditions on ProvisioningRequests: the admission check controller
        reconciles the workloads holding a reservation with checks."""
        self.checks.provisioning_changed()

    # -- workloads ---------------------------------------------------------------------------
    def _workload_of(self, pod: Pod) -> tuple[str, str, QueuedWorkload | None] | None:
        found = self.port.queued_workload(pod)
        if found is not None:
            key, controller = found
            queue = self.objects.workload_queues.get(key)
            part = controller.queued_part(pod) if isinstance(controller, QueuedInParts) else (key, controller)
            return None if queue is None or part is None else (part[0], queue, part[1])
        queue = pod.labels.get(QUEUE_NAME_LABEL)
        if queue is None or pod.owner is not None:
            return None
        if pod.pod_group is not None:
            return f"PodGroup/{pod.namespace}/{pod.pod_group}", queue, None
        return f"Pod/{pod.key}", queue, None

    def _finished(self, wl: KueueWorkload) -> bool:
        """``GenericJob.Finished``: a Job once its ``Complete`` or ``Failed`` condition is set (kueue
        ``pkg/controller/jobs/job`` ``Job.Finished``; the Job controller sets it only once none of its pods
        is terminating, ``delayTerminalCondition``); another kind once done with no pod left; pods once all
        gone."""
        controller = wl.controller
        if implements(controller, ReportsStatus):
            conditions = cast(ReportsStatus, controller).status_conditions()
            return any(c.type in (COMPLETE, FAILED) for c in conditions)
        if controller is not None:
            return controller.done and not controller.active
        return all(gone(self.port.pods, k) for k in wl.pods)

    def _reclaimable(self, controller: QueuedWorkload | None) -> tuple[dict[str, int], dict[str, int]] | None:
        """Its pod sets' counts and the pods of each its controller reports reclaimable; None for a kind
        that reports none (pods and PodGroups too)."""
        if controller is None or not implements(controller, ReclaimsPods):
            return None
        counts = {s.name: s.count for s in controller.pod_sets()}
        return counts, cast(ReclaimsPods, controller).reclaimable_pods()

    def _spec(self, wl: KueueWorkload) -> Workload | str:
        """The workload as admission sees it, or why it cannot be considered yet."""
        lq = self.objects.local_queues.get(f"{wl.namespace}/{wl.queue}")
        if lq is None:
            return LOCAL_QUEUE_MISSING.format(wl.queue)
        pod_sets = wl.pod_sets(self.port.pods)
        template = pod_sets[0].template
        totals = [{r: v * s.count for r, v in s.template.requests.items()} for s in pod_sets]
        if wl.controller is None:  # pods, which may ask for different amounts: theirs summed
            group = self.port.pod_group_of(template)
            if group is not None and pod_sets[0].count < group.min_member:
                return f"waiting for the PodGroup's pods: {pod_sets[0].count}/{group.min_member} exist"
            requests: Resources = {}
            for pod in wl.live_pods(self.port.pods):
                requests = add(requests, pod.requests)
            totals = [requests]
        entries = []
        for s, total in zip(pod_sets, totals, strict=True):
            annotations = s.template.annotations
            asked = request_of(annotations)
            each = dict(s.template.requests)
            topology = None if asked is None else request_for(s.name, s.count, each, s.template, *asked)
            named = group_of(annotations)
            entries.append(PodSetResources(s.name, s.count, total, s.template, topology, named, s.min_count))
        priority = wl.priority
        if priority is None:
            priority = self.objects.priority(wl.key, template.labels, template.priority)
        if self.checks.inactive(lq.cluster_queue):
            return f"ClusterQueue {lq.cluster_queue} is inactive"
        last = (wl.evictions[-1]["t_s"], wl.evictions[-1]["reason"]) if wl.evictions else wl.dumped_eviction
        created = queue_order_time(self.objects.wait_for_pods_ready, wl.created_s, last)
        workload = Workload(wl.key, lq.cluster_queue, priority, created, wl.order, tuple(entries))
        cq = self.objects.cluster_queues.get(lq.cluster_queue)
        if cq is not None:  # a TAS-only queue's pod sets ask for TAS implicitly (``isTASImplied``)
            workload = implied_tas(workload, cq, self.objects.flavors)
        reclaim = self._reclaimable(wl.controller)
        return workload if reclaim is None else workload.reclaimed(*reclaim)

    def _rooms(self, pending: list[Workload]) -> dict[str, NodeRoom]:
        """Each node's labels and what it has free of the resources TAS pod sets ask and of ``pods``
        (upstream's ``fillLeafCounts`` counts one ``pods`` per pod: ``resources.OnePodRequest``), less
        what the pods admitted onto it by TAS but not yet bound will take."""
        asks = [s.topology for w in pending for s in w.pod_sets if s.topology is not None]
        if not asks:
            return {}
        resources = sorted({r for t in asks for r in t.requests} | {PODS})
        state = self.port.state
        rooms = {}
        for i in state.active_indices().tolist():
            node = state.nodes[i]
            rooms[node.name] = NodeRoom(node.labels, {r: state.free_on(i, r) for r in resources}, node.taints)
        for wl in self.workloads.values():
            for key, node in wl.host_of.items():
                rec = self.port.pods[key]
                if node in rooms and rec.bound_s is None and not gone(self.port.pods, key):
                    free = rooms[node].free
                    for r, v in {**rec.pod.requests, PODS: 1}.items():
                        if r in free:
                            free[r] -= v
        return rooms

    # -- the cycle ---------------------------------------------------------------------------
    def _request_cycle(self) -> None:
        if not self._cycle_requested:
            self._cycle_requested = True
            self.clock.at(self.clock.now, Priority.CONTROLLER, self._cycles)

    def _cycles(self) -> None:
        """Kueue's scheduler loops: cycles until one changes nothing."""
        self._cycle_requested = False
        config = self.objects.wait_for_pods_ready
        block = config is not None and config.block_admission
        while True:
            pending: list[Workload] = []
            for key in sorted(self.workloads):
                wl = self.workloads[key]
                if (
                    wl.admitted is not None
                    or wl.finished_s is not None
                    or all(gone(self.port.pods, k) for k in wl.pods)
                ):
                    continue
                if not wl.active or not backoff_expired(wl.requeue_at, self.clock.now):
                    self._tell(wl, wl.message)  # deactivated, or waiting out its backoff
                    continue
                spec = self._spec(wl)
                if isinstance(spec, str):
                    self._tell(wl, spec)
                else:
                    pending.append(spec)
            admitted_wls = [wl for wl in self.workloads.values() if wl.admitted is not None]
            admitted = [wl.admitted for wl in admitted_wls if wl.admitted is not None]
            admitted.sort(key=lambda a: a.workload.key)
            objects = self.objects
            result = schedule(
                pending,
                admitted,
                objects.cluster_queues,
                objects.flavors,
                self.set_aside,
                objects.cohorts,
                objects.topologies,
                self._rooms(pending),
                objects.fair_sharing,
                {w.key for w in pending} & set(self.preemptors.values()),
                block,
                block and any(not w.ready for w in admitted_wls),
            )
            for key, message in sorted(result.messages.items()):
                self._tell(self.workloads[key], message)
            for workload, assignment in result.admitted:
                placement = result.placements.get(workload.key, {})
                self._admit(self.workloads[workload.key], workload, assignment, placement)
            for preemptor, target in result.preemptions:
                self._evict(self.workloads[target.key], target.reason, preemptor=preemptor)
            self.set_aside.update(result.inadmissible)
            self.preemptors.update(result.preemptors)
            if not result.changed():
                return

    def _tell(self, wl: KueueWorkload, message: str) -> None:
        wl.message = message
        for k in wl.pods:
            if self.port.pods[k].bound_s is None and not gone(self.port.pods, k):
                self.port.set_message(k, message)

    def _admit(
        self, wl: KueueWorkload, workload: Workload, assignment: Assignment, placement: dict[str, list[str]]
    ) -> None:
        """Quota reserved (``QuotaReserved``): admitted at once without admission checks, else once they are
        all Ready (``SyncAdmittedCondition``, ``control.kueue_admission_checks``)."""
        now = self.clock.now
        if self.preemptors.get(workload.cluster_queue) == wl.key:  # admitted: no longer the sticky head
            del self.preemptors[workload.cluster_queue]
        wl.admitted = admitted = Admitted(
            workload, assignment.flavors, dict(assignment.usage), now, placement=placement
        )
        wl.host_of = {}
        wl.ready, wl.ready_lost_s, wl.requeue_at = False, None, None
        wl.started = False
        self._usage_changed(workload.cluster_queue)
        if not self.checks.reserved(wl, admitted):
            self._start(wl)

    def _start(self, wl: KueueWorkload) -> None:
        """``Admitted``: its pods are released (with their checks' ``podSetUpdates``) and ``waitForPodsReady``
        times it from now; one with checks gets the workload controller's ``Admitted`` event."""
        admitted = wl.admitted
        if admitted is None:
            return
        now = self.clock.now
        workload = admitted.workload
        admitted = self.checks.admitted(wl, admitted)
        wl.started = True
        wl.admissions.append(now)
        wl.admitted_counts.append({ps.name: ps.count for ps in workload.pod_sets})
        self.stats[workload.cluster_queue].admitted += 1
        controller = wl.controller
        if implements(controller, AdmitsPartially):
            surplus = cast(AdmitsPartially, controller).run_with_counts(
                {ps.name: ps.count for ps in workload.pod_sets}
            )
            wl.pods = [k for k in wl.pods if k not in surplus]
            for k in surplus:
                self.port.delete_pod(k, "Deleted")
        if controller is not None:  # RunWithPodSetsInfo unsuspends it: a Job's startTime is now
            self.port.workload_resumed(wl.key)
        for k in list(wl.pods):
            if not gone(self.port.pods, k):
                self._release(self.port.pods[k].pod, admitted)
        self.pods_ready.arm(wl)

    def _release(self, pod: Pod, admitted: Admitted) -> None:
        """The pod gets its pod set's flavors' node labels and tolerations (``podset.Merge`` of the
        set's ``PodSetInfo``) and goes to its scheduler."""
        wl = self.workloads[admitted.workload.key]
        pod_set = next((s for s in wl.pod_sets(self.port.pods) if s.holds(pod)), None)
        assigned = {} if pod_set is None else admitted.flavors.get(pod_set.name, {})
        selector, tolerations = flavored(pod, assigned, self.objects.flavors)
        host = (
            None
            if pod_set is None
            else self._host(wl, pod, pod_set, admitted.placement.get(pod_set.name, []))
        )
        if host is not None:
            selector[HOSTNAME] = host
        annotations = {} if pod_set is None else pod_set_annotations(wl.checks.values(), pod_set.name)
        if annotations:
            self.port.release(pod.key, selector, tolerations, annotations)
        else:
            self.port.release(pod.key, selector, tolerations)

    def _host(self, wl: KueueWorkload, pod: Pod, pod_set: PodSet, placement: list[str]) -> str | None:
        """The pod's node in its pod set's TAS assignment (none for a set without one): one that no
        live pod of the set holds."""
        left = list(placement)
        for key, node in wl.host_of.items():
            if node in left and not gone(self.port.pods, key) and pod_set.holds(self.port.pods[key].pod):
                left.remove(node)
        if not left:
            return None
        wl.host_of[pod.key] = left[0]
        return left[0]

    def _evict(
        self, wl: KueueWorkload, reason: str, cause: str | None = None, preemptor: Workload | None = None
    ) -> None:
        """Evict an admitted workload: preempted by ``preemptor``, or (None) by ``waitForPodsReady`` or its
        admission checks, with the eviction's underlying ``cause``."""
        admitted = wl.admitted
        if admitted is None or admitted.evicting:
            return
        now = self.clock.now
        wl.admitted = replace(admitted, evicting=True)
        queue = self.stats[admitted.workload.cluster_queue]
        if preemptor is None:
            wl.evictions.append({"t_s": now, "reason": reason, "by": None, "underlying_cause": cause})
            queue.evicted[reason] = queue.evicted.get(reason, 0) + 1
        else:
            wl.evictions.append({"t_s": now, "reason": reason, "by": preemptor.key})
            queue.preempted[reason] = queue.preempted.get(reason, 0) + 1
            self.stats[preemptor.cluster_queue].preempting += 1
        self.checks.evicted(wl)
        if not wl.started:  # quota reserved only: its pods are still gated (a Job still suspended)
            self._unadmit(wl)
            self.set_aside.clear()
            self._request_cycle()
            return
        wl.leaving = {k for k in wl.pods if not gone(self.port.pods, k)}
        wl.succeeded_before += [k for k in wl.pods if self.port.pods[k].phase == "Succeeded"]
        wl.pods = []
        self._dirty.add(wl.key)
        # a Job (or another integrated kind) is suspended and runs again; pods and PodGroups end
        if wl.controller is not None:
            reason = "Suspended"
            self.port.workload_suspended(wl.key)  # Job.Stop: suspended, its startTime cleared
        else:
            reason = "Preempted" if preemptor is not None else "Evicted"
        for k in sorted(wl.leaving):
            self.port.delete_pod(k, reason)
        if implements(wl.controller, AdmitsPartially):
            cast(AdmitsPartially, wl.controller).restore_counts()
        self.settle()

    def _unadmit(self, wl: KueueWorkload) -> None:
        admitted = wl.admitted
        if admitted is not None:
            wl.admitted = None
            wl.started = False
            self._usage_changed(admitted.workload.cluster_queue)

    def _usage_changed(self, queue: str) -> None:
        used: dict[FlavorResource, int] = {}
        for wl in self.workloads.values():
            if wl.admitted is not None and wl.admitted.workload.cluster_queue == queue:
                for fr, v in wl.admitted.usage.items():
                    used[fr] = used.get(fr, 0) + v
        self.stats[queue].usage_changed(self.objects.cluster_queues[queue], used, self.clock.now)

    # -- summary -----------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """The ``kueue`` section of ``summary.json`` (``control.kueue_summary``)."""
        return summarize(self.objects, self.stats, self.workloads.values(), self.port.pods)
