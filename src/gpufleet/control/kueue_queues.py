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
* quota is released when the workload finishes (a Job: once done; pods: all terminated), and
  as its controller reports pods it will not create again (``reclaimablePods``: a Job once fewer
  completions remain than its parallelism, a JobSet's or TrainJob's completed Jobs): an admitted
  workload's usage drops by theirs (``scheduling.kueue.workload``); a pending one asks only for the
  pods left. Then workloads set aside as inadmissible are tried again;
* with the manager Configuration's ``waitForPodsReady`` (``scheduling.kueue.pods_ready``), an admitted
  workload is PodsReady once as many of its pods are Ready or Succeeded as it was admitted with (a Job's
  ``ready + succeeded >= parallelism``, ``Job.PodsReady``). One not PodsReady ``timeout`` after its
  admission, or ``recoveryTimeout`` after it lost PodsReady (one of its pods ended), is evicted with reason
  ``PodsReadyTimeout`` (a Job suspended and requeued, pods end ``Evicted``), its ``requeueState`` count
  incremented, and waits out its backoff (its pods say so) before its queue sees it again, ordered by its
  eviction time (``requeuingStrategy.timestamp: Eviction``). Past ``backoffLimitCount`` it is deactivated
  instead (``spec.active: false``: evicted with reason ``Deactivated``, ``RequeuingLimitExceeded``) and
  never admitted again. With ``blockAdmission`` no workload is admitted while one that holds quota is not
  PodsReady (an evicted one holds it until its pods are gone: upstream's cache keeps it among its
  ``WorkloadsNotReady`` until its quota reservation goes).

* admission checks (``scheduling.kueue.admission_checks``): a workload whose ClusterQueue has checks for the
  flavors it was assigned gets its quota reserved (``QuotaReserved``; its pods stay gated, saying which checks
  are not Ready) and is admitted -- its pods released, ``waitForPodsReady`` timed from then -- only once every
  check is Ready. Kueue's ProvisioningRequest controller (``kueue.x-k8s.io/provisioning-request``) creates a
  ProvisioningRequest ``<workload>-<check>-<attempt>`` (the workload named ``<kind>-<name>``: upstream adds
  a hash of the owner's UID, which a simulation has none of) with a PodTemplate per pod set (the set's
  template with its flavors' labels and tolerations) and its config's class and parameters, which
  cluster-autoscaler's loop handles; Provisioned makes the check Ready and the pods get
  ``autoscaling.x-k8s.io/consume-provisioning-request`` and the class annotation. A request that Failed (or
  whose booking expired before admission) makes the check Retry: the workload is evicted (reason
  ``AdmissionCheck``), releases its quota, its requests are deleted
  (``CleanupProvisioningRequestsOnEviction``)
  and it waits out the check's backoff; past ``backoffLimitCount`` the check is Rejected and the workload
  deactivated. A check of another controller is not modelled: it stays Pending, the workload never admitted.

It reads the pods and acts on them through a ``control.port.QueuePort`` (gate, release with the
flavors' labels and tolerations, delete); the driver tells it of each new pod (``gate``), each
pod that ended (``pod_finished``) and each change (``settle``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from gpufleet.control.clock import Clock, Priority
from gpufleet.control.port import (
    AdmitsPartially,
    ProvisioningRequests,
    QueuedInParts,
    QueuedWorkload,
    QueuePort,
    ReclaimsPods,
)
from gpufleet.model.kueue import (
    DEACTIVATED,
    PODS_READY_TIMEOUT,
    PROVISIONING_REQUEST_CONTROLLER,
    QUEUE_NAME_LABEL,
    REQUEUING_LIMIT_EXCEEDED,
    FlavorResource,
    KueueObjects,
    ProvisioningRequestConfig,
)
from gpufleet.model.node import Toleration
from gpufleet.model.pod import Pod
from gpufleet.model.provisioning_request import PodSet as RequestPodSet
from gpufleet.model.provisioning_request import ProvisioningRequest
from gpufleet.model.resources import PODS, Resources, add
from gpufleet.model.workloads import PodSet
from gpufleet.scheduling.kueue.admission import schedule
from gpufleet.scheduling.kueue.admission_checks import (
    ADMITTED,
    ADMITTED_EVENT,
    NOT_ALL_CHECKS_READY,
    NOT_MODELLED_MESSAGE,
    CheckState,
    InconsistentAssignments,
    PodSetNeed,
    active_or_last,
    admitted_condition,
    check_based_eviction,
    checks_for_workload,
    merged_pod_sets,
    next_attempt,
    pod_template_name,
    provisioning_request_name,
    request_needed,
    request_parameters,
    requeue_at_update,
    reset_on_eviction,
    sync_check,
    sync_check_list,
    update_event,
)
from gpufleet.scheduling.kueue.flavors import Assignment, implied_tas
from gpufleet.scheduling.kueue.pods_ready import (
    DEACTIVATED_MESSAGE,
    TIMEOUT_MESSAGE,
    Deactivate,
    backoff_expired,
    on_timeout,
    pods_ready_deadline,
    queue_order_time,
)
from gpufleet.scheduling.kueue.topology import NodeRoom, group_of, request_for, request_of
from gpufleet.scheduling.kueue.workload import POD_SET, Admitted, PodSetResources, Workload
from gpufleet.workloads.kind import implements

HOSTNAME = "kubernetes.io/hostname"

LOCAL_QUEUE_MISSING = "LocalQueue {} doesn't exist"
#: gpufleet's word for a workload waiting out its requeue backoff (upstream's Requeued=False condition)
IN_BACKOFF = "{}; waiting for the requeue backoff (requeue {}) until {:g}s"


@dataclass
class _Workload:
    key: str
    queue: str  # the LocalQueue's name, in the workload's namespace
    created_s: float
    order: int
    #: the controller of a Job or another integrated kind (suspended, not failed, when evicted);
    #: None for pods and PodGroups
    controller: QueuedWorkload | None = None
    pods: list[str] = field(default_factory=list)  # pods of the current run, gated or admitted
    leaving: set[str] = field(default_factory=set)  # pods of an evicted run, until they are gone
    #: pods of earlier runs that succeeded: they count toward PodsReady while they exist, as the workload's
    #: status counts them (a Job's ``status.succeeded``, an MPIJob's replica statuses)
    succeeded_before: list[str] = field(default_factory=list)
    admitted: Admitted | None = None
    host_of: dict[str, str] = field(default_factory=dict)  # TAS: pod key -> its node
    message: str = "Workload is waiting to be considered by Kueue"
    admissions: list[float] = field(default_factory=list)
    admitted_counts: list[dict[str, int]] = field(default_factory=list)  # each admission's pods per pod set
    evictions: list[dict[str, Any]] = field(default_factory=list)
    finished_s: float | None = None
    # waitForPodsReady
    ready: bool = False  # PodsReady in its current admission
    ready_lost_s: float | None = None  # when it last lost PodsReady in its current admission
    requeue_count: int = 0  # ``requeueState.count``
    requeue_at: float | None = None  # ``requeueState.requeueAt``
    active: bool = True  # ``spec.active``: false once deactivated
    # admission checks
    started: bool = False  # Admitted: quota reserved and every check Ready (its pods released)
    reservations: list[float] = field(default_factory=list)  # each QuotaReserved
    checks: dict[str, CheckState] = field(default_factory=dict)  # ``status.admissionChecks``, by name
    #: each check's ProvisioningRequests (keys ``<ns>/<name>``), in the order they were created
    requests: dict[str, list[str]] = field(default_factory=dict)
    created_requests: dict[str, list[str]] = field(default_factory=dict)  # each check's requests, by name
    check_events: list[dict[str, Any]] = field(default_factory=list)  # the events about its checks
    #: each check's history: [time, state, message] at each change
    check_history: dict[str, list[list[Any]]] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        return self.key.split("/")[1]


@dataclass
class _QueueStats:
    admitted: int = 0
    finished: int = 0
    preempted: dict[str, int] = field(default_factory=dict)  # reason -> workloads of this queue evicted
    evicted: dict[str, int] = field(default_factory=dict)  # reason -> evictions by waitForPodsReady
    preempting: int = 0  # evictions its workloads caused
    steps: dict[str, list[list[float]]] = field(default_factory=dict)  # "flavor/resource" -> [[t, used]]


class KueueQueues:
    def __init__(
        self,
        port: QueuePort,
        clock: Clock,
        objects: KueueObjects,
        provisioning: ProvisioningRequests | None = None,
    ):
        """``provisioning``: cluster-autoscaler's ProvisioningRequests, which the ProvisioningRequest
        admission check controller creates and reads (None: no ProvisioningRequest API; its checks stay
        Pending)."""
        self.port = port
        self.provisioning = provisioning
        self.clock = clock
        self.objects = objects
        self.installed = bool(self.objects.cluster_queues or self.objects.local_queues)
        self.workloads: dict[str, _Workload] = {}
        self.of_pod: dict[str, str] = {}  # pod key -> workload key
        self.set_aside: set[str] = set()  # workloads set aside as inadmissible until quota is released
        #: each BestEffortFIFO ClusterQueue's sticky preemptor: its head until admitted
        #: (``CycleResult.preemptors``)
        self.preemptors: dict[str, str] = {}
        self.stats = {name: _QueueStats() for name in sorted(self.objects.cluster_queues)}
        for name in self.stats:
            self._usage_changed(name)
        self._dirty: set[str] = set()
        self._cycle_requested = False

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
        wl = self.workloads.get(key)
        if wl is None:
            wl = _Workload(key, queue, self.clock.now, len(self.workloads), controller)
            self.workloads[key] = wl
        wl.pods.append(pod.key)
        self.of_pod[pod.key] = key
        if wl.admitted is not None and not wl.admitted.evicting and wl.started:
            self._release(pod, wl.admitted)
            return True
        self.port.hold(pod.key, wl.message)
        self._request_cycle()
        return True

    def suspends(self, key: str) -> bool:
        """Whether the workload ``key`` (``<kind>/<ns>/<name>``) starts suspended until Kueue admits it: one
        labelled with a LocalQueue while Kueue is installed (Kueue's webhook sets a Job's ``spec.suspend``;
        the Job controller sets no ``status.startTime`` while it is suspended)."""
        return self.installed and key in self.objects.workload_queues

    def pod_finished(self, pod: Pod) -> bool:
        """A pod of a workload ended; True if it went because Kueue evicted a Job (suspension,
        not a failure)."""
        key = self.of_pod.get(pod.key)
        if key is None:
            return False
        self._dirty.add(key)
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
                if all(self._gone(k) for k in wl.leaving):
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
                self._ready_changed(wl)
        self._dirty.clear()
        if released:
            self.set_aside.clear()
            self._request_cycle()

    def pod_ready(self, pod: Pod) -> None:
        """A pod turned Ready: its workload may now be PodsReady."""
        key = self.of_pod.get(pod.key)
        wl = None if key is None else self.workloads[key]
        if wl is not None and wl.admitted is not None and not wl.admitted.evicting and wl.started:
            self._ready_changed(wl)

    def active(self) -> bool:
        """Whether ``waitForPodsReady`` has something to do in time alone: an admitted workload not PodsReady
        whose deadline is to come, or one waiting out its requeue backoff."""
        config = self.objects.wait_for_pods_ready
        now = self.clock.now
        for wl in self.workloads.values():
            if (
                wl.active
                and wl.admitted is None
                and wl.finished_s is None
                and not backoff_expired(wl.requeue_at, now)
            ):
                return True
            if config is not None and wl.admitted is not None and not wl.admitted.evicting and wl.started:
                due = pods_ready_deadline(config, wl.admitted.admitted_s, wl.ready, wl.ready_lost_s)
                if due is not None:
                    return True
        return False

    # -- waitForPodsReady --------------------------------------------------------------------
    def _pods_ready(self, wl: _Workload) -> bool:
        """``PodsReady``: as many of its pods Ready or Succeeded as it was admitted with (Kueue's
        ``PodsReady`` of each integration: a Job's ``ready + succeeded``), its pods of earlier runs that
        succeeded and still exist counted (a suspended MPIJob keeps its succeeded workers under
        ``cleanPodPolicy: Running`` and does not make them again)."""
        admitted = wl.admitted
        if admitted is None:
            return False
        wanted = sum(ps.count for ps in admitted.workload.pod_sets)
        ready = 0
        for k in (*wl.succeeded_before, *wl.pods):
            rec = self.port.pods[k]
            if rec.deleted_s is None and (rec.phase == "Succeeded" or (rec.ready and rec.phase == "Running")):
                ready += 1
        return ready >= wanted

    def _ready_changed(self, wl: _Workload) -> None:
        """Its PodsReady condition follows its pods: when it turns true, a held admission may go on
        (``blockAdmission``); when it turns false, the recovery timeout starts."""
        config = self.objects.wait_for_pods_ready
        if config is None or wl.admitted is None or not wl.started:
            return
        ready = self._pods_ready(wl)
        if ready == wl.ready:
            return
        wl.ready = ready
        if ready:
            if config.block_admission:
                self._request_cycle()
        else:
            wl.ready_lost_s = self.clock.now
            self._arm(wl)

    def _arm(self, wl: _Workload) -> None:
        """Check the workload at its PodsReady deadline (if it has one)."""
        config = self.objects.wait_for_pods_ready
        admitted = wl.admitted
        if config is None or admitted is None or not wl.started:
            return
        due = pods_ready_deadline(config, admitted.admitted_s, wl.ready, wl.ready_lost_s)
        if due is not None:
            key = wl.key
            self.clock.at(due[1], Priority.CONTROLLER, lambda: self._check_pods_ready(key), background=True)

    def _check_pods_ready(self, key: str) -> None:
        """``reconcileNotReadyTimeout``: past its deadline and still not PodsReady, the workload is evicted
        and requeued after its backoff, or deactivated past ``backoffLimitCount``."""
        config = self.objects.wait_for_pods_ready
        wl = self.workloads[key]
        admitted = wl.admitted
        if config is None or admitted is None or admitted.evicting or not wl.active or not wl.started:
            return
        wl.ready = self._pods_ready(wl)
        due = pods_ready_deadline(config, admitted.admitted_s, wl.ready, wl.ready_lost_s)
        now = self.clock.now
        if due is None or due[1] > now:
            return
        outcome = on_timeout(config, wl.requeue_count, now)
        if isinstance(outcome, Deactivate):
            wl.active, wl.requeue_count, wl.requeue_at = False, 0, None
            wl.message = DEACTIVATED_MESSAGE
            self._evict(wl, None, DEACTIVATED, REQUEUING_LIMIT_EXCEEDED)
            return
        wl.requeue_count, wl.requeue_at = outcome.count, outcome.requeue_at_s
        name = wl.key.split("/", 1)[1]
        wl.message = IN_BACKOFF.format(TIMEOUT_MESSAGE.format(name), outcome.count, outcome.requeue_at_s)
        self._evict(wl, None, PODS_READY_TIMEOUT, due[0])
        self.clock.at(outcome.requeue_at_s, Priority.CONTROLLER, self._request_cycle, background=True)

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

    def _gone(self, pod_key: str) -> bool:
        rec = self.port.pods[pod_key]
        return rec.deleted_s is not None or rec.phase in ("Succeeded", "Failed")

    def _pending(self, wl: _Workload) -> bool:
        """Whether the workload waits in its queue: not admitted, not finished, and not one of pods (or a
        PodGroup's) whose pods were all deleted while it waited -- nothing creates those again, and its
        Workload goes with them, leaving the queue (``Manager.DeleteWorkload``, ``pkg/cache/queue/
        manager.go``). A Job's gated pods are created again by its controller; its workload stays."""
        if wl.admitted is not None or wl.finished_s is not None or not wl.active:
            return False
        return wl.controller is not None or not wl.pods or not all(map(self._gone, wl.pods))

    def _finished(self, wl: _Workload) -> bool:
        controller = wl.controller
        if controller is not None:
            return controller.done and not controller.active
        return all(self._gone(k) for k in wl.pods)

    def _live_pods(self, wl: _Workload) -> list[Pod]:
        return [self.port.pods[k].pod for k in wl.pods if not self._gone(k)]

    def _pod_sets(self, wl: _Workload) -> list[PodSet]:
        """Its controller's pod sets; pods and a PodGroup's are one pod set ``main`` of their live
        pods, the first the template."""
        if wl.controller is not None:
            return wl.controller.pod_sets()
        pods = self._live_pods(wl)
        return [PodSet(POD_SET, len(pods), pods[0])]

    def _reclaimable(self, controller: QueuedWorkload | None) -> tuple[dict[str, int], dict[str, int]] | None:
        """Its pod sets' counts and the pods of each its controller reports reclaimable; None for a kind
        that reports none (pods and PodGroups too)."""
        if not (implements(controller, ReclaimsPods) and isinstance(controller, ReclaimsPods)):
            return None
        return {s.name: s.count for s in controller.pod_sets()}, controller.reclaimable_pods()

    def _spec(self, wl: _Workload) -> Workload | str:
        """The workload as admission sees it, or why it cannot be considered yet."""
        lq = self.objects.local_queues.get(f"{wl.namespace}/{wl.queue}")
        if lq is None:
            return LOCAL_QUEUE_MISSING.format(wl.queue)
        pod_sets = self._pod_sets(wl)
        template = pod_sets[0].template
        totals = [{r: v * s.count for r, v in s.template.requests.items()} for s in pod_sets]
        if wl.controller is None:  # pods, which may ask for different amounts: theirs summed
            group = self.port.pod_group_of(template)
            if group is not None and pod_sets[0].count < group.min_member:
                return f"waiting for the PodGroup's pods: {pod_sets[0].count}/{group.min_member} exist"
            requests: Resources = {}
            for pod in self._live_pods(wl):
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
        priority = self.objects.priority(wl.key, template.labels, template.priority)
        if self._checks_inactive(lq.cluster_queue):
            return f"ClusterQueue {lq.cluster_queue} is inactive"
        last = (wl.evictions[-1]["t_s"], wl.evictions[-1]["reason"]) if wl.evictions else None
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
                if node in rooms and rec.bound_s is None and not self._gone(key):
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
                if wl.admitted is not None or wl.finished_s is not None or all(map(self._gone, wl.pods)):
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
                self._evict(self.workloads[target.key], preemptor, target.reason)
            self.set_aside.update(result.inadmissible)
            self.preemptors.update(result.preemptors)
            if not result.changed():
                return

    def _tell(self, wl: _Workload, message: str) -> None:
        wl.message = message
        for k in wl.pods:
            if self.port.pods[k].bound_s is None and not self._gone(k):
                self.port.set_message(k, message)

    def _admit(
        self, wl: _Workload, workload: Workload, assignment: Assignment, placement: dict[str, list[str]]
    ) -> None:
        """Quota reserved (``QuotaReserved``): admitted at once without checks, else once they are all Ready
        (``SyncAdmittedCondition``); the checks it gets are those for the flavors assigned
        (``AdmissionChecksForWorkload``), each keeping its state from an earlier reservation
        (``syncAdmissionCheckConditions``)."""
        now = self.clock.now
        if self.preemptors.get(workload.cluster_queue) == wl.key:  # admitted: no longer the sticky head
            del self.preemptors[workload.cluster_queue]
        wl.admitted = Admitted(workload, assignment.flavors, dict(assignment.usage), now, placement=placement)
        wl.host_of = {}
        wl.ready, wl.ready_lost_s, wl.requeue_at = False, None, None
        wl.started = False
        self._usage_changed(workload.cluster_queue)
        cq = self.objects.cluster_queues[workload.cluster_queue]
        names = checks_for_workload(cq, {f for fs in assignment.flavors.values() for f in fs.values()})
        checks, _ = sync_check_list(tuple(wl.checks.values()), names, now)
        wl.checks = {c.name: c for c in checks}
        if not wl.checks:
            self._start(wl)
            return
        wl.reservations.append(now)
        for check in wl.checks.values():
            self._history(wl, check)
        self._sync_checks(wl)

    def _start(self, wl: _Workload) -> None:
        """``Admitted``: its pods are released (with their checks' ``podSetUpdates``) and ``waitForPodsReady``
        times it from now; one with checks gets the workload controller's ``Admitted`` event."""
        admitted = wl.admitted
        if admitted is None:
            return
        now = self.clock.now
        workload = admitted.workload
        if wl.checks:  # admitted by the workload controller, its checks Ready
            wl.admitted = admitted = replace(admitted, admitted_s=now)
            waited = now - wl.reservations[-1]
            self._event(wl, "Admitted", ADMITTED_EVENT.format(workload.cluster_queue, waited))
        wl.started = True
        wl.admissions.append(now)
        wl.admitted_counts.append({ps.name: ps.count for ps in workload.pod_sets})
        self.stats[workload.cluster_queue].admitted += 1
        controller = wl.controller
        if implements(controller, AdmitsPartially) and isinstance(controller, AdmitsPartially):
            surplus = controller.run_with_counts({ps.name: ps.count for ps in workload.pod_sets})
            wl.pods = [k for k in wl.pods if k not in surplus]
            for k in surplus:
                self.port.delete_pod(k, "Deleted")
        if controller is not None:  # RunWithPodSetsInfo unsuspends it: a Job's startTime is now
            self.port.workload_resumed(wl.key)
        for k in list(wl.pods):
            if not self._gone(k):
                self._release(self.port.pods[k].pod, admitted)
        self._arm(wl)

    def _release(self, pod: Pod, admitted: Admitted) -> None:
        """The pod gets its pod set's flavors' node labels and tolerations (``podset.Merge`` of the
        set's ``PodSetInfo``) and goes to its scheduler."""
        wl = self.workloads[admitted.workload.key]
        pod_set = next((s for s in self._pod_sets(wl) if s.holds(pod)), None)
        assigned = {} if pod_set is None else admitted.flavors.get(pod_set.name, {})
        selector, tolerations = self._flavored(pod, assigned)
        host = (
            None
            if pod_set is None
            else self._host(wl, pod, pod_set, admitted.placement.get(pod_set.name, []))
        )
        if host is not None:
            selector[HOSTNAME] = host
        annotations: dict[str, str] = {}
        for check in wl.checks.values():  # a Ready check's ``podSetUpdates`` (``podset.Merge``)
            for update in check.pod_set_updates:
                if pod_set is not None and update.name == pod_set.name:
                    annotations.update(update.annotations)
        if annotations:
            self.port.release(pod.key, selector, tolerations, annotations)
        else:
            self.port.release(pod.key, selector, tolerations)

    def _host(self, wl: _Workload, pod: Pod, pod_set: PodSet, placement: list[str]) -> str | None:
        """The pod's node in its pod set's TAS assignment (none for a set without one): one that no
        live pod of the set holds."""
        left = list(placement)
        for key, node in wl.host_of.items():
            if node in left and not self._gone(key) and pod_set.holds(self.port.pods[key].pod):
                left.remove(node)
        if not left:
            return None
        wl.host_of[pod.key] = left[0]
        return left[0]

    def _evict(
        self, wl: _Workload, preemptor: Workload | None, reason: str, cause: str | None = None
    ) -> None:
        """Evict an admitted workload: preempted by ``preemptor``, or (None) by ``waitForPodsReady``, with the
        eviction's underlying ``cause``."""
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
        # ``resetChecksOnEviction``; its requests go (``CleanupProvisioningRequestsOnEviction``)
        if wl.checks:
            states = list(wl.checks.values())
            for old, new in zip(states, reset_on_eviction(states, now), strict=True):
                if new != old:
                    wl.checks[new.name] = new
                    self._history(wl, new)
            self._delete_requests(wl)
        if not wl.started:  # quota reserved only: its pods are still gated (a Job still suspended)
            self._unadmit(wl)
            self.set_aside.clear()
            self._request_cycle()
            return
        wl.leaving = {k for k in wl.pods if not self._gone(k)}
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
        if implements(wl.controller, AdmitsPartially) and isinstance(wl.controller, AdmitsPartially):
            wl.controller.restore_counts()
        self.settle()

    # -- admission checks (scheduling.kueue.admission_checks) ---------------------------------
    def provisioning_changed(self) -> None:
        """cluster-autoscaler set conditions on ProvisioningRequests: the controller reconciles the workloads
        holding a reservation with checks (at once, as a controller's next pass)."""
        if any(wl.checks and wl.admitted is not None for wl in self.workloads.values()):
            self.clock.at(self.clock.now, Priority.CONTROLLER, self._sync_all)

    def _sync_all(self) -> None:
        for key in sorted(self.workloads):
            wl = self.workloads[key]
            if wl.checks and wl.admitted is not None and not wl.admitted.evicting:
                self._sync_checks(wl)

    def _checks_inactive(self, queue: str) -> bool:
        """A ClusterQueue naming a check that does not exist, or a ProvisioningRequest check without its
        config, is inactive (``AdmissionCheckNotFound``, ``AdmissionCheckInactive``)."""
        cq = self.objects.cluster_queues.get(queue)
        if cq is None:
            return False
        for name, _ in cq.admission_checks:
            check = self.objects.admission_checks.get(name)
            if check is None:
                return True
            if check.controller_name == PROVISIONING_REQUEST_CONTROLLER and (
                check.config not in self.objects.provisioning_configs
            ):
                return True
        return False

    @staticmethod
    def _workload_name(wl: _Workload) -> str:
        """The Workload's name: ``<kind>-<name>`` (``GenerateWorkloadNamePrefix``, without the hash of the
        owner's UID upstream appends)."""
        kind, _, name = wl.key.split("/", 2)
        return f"{kind.lower()}-{name}"

    def _needs(self, wl: _Workload, admitted: Admitted) -> list[PodSetNeed]:
        """Its pod sets as the controller reads them: spec count, assigned count, resources used."""
        assigned = {ps.name: ps.count for ps in admitted.workload.pod_sets}
        return [
            PodSetNeed(
                s.name,
                s.count,
                assigned.get(s.name),
                frozenset(r for r, v in s.template.requests.items() if v > 0),
            )
            for s in self._pod_sets(wl)
        ]

    def _history(self, wl: _Workload, check: CheckState) -> None:
        series = wl.check_history.setdefault(check.name, [])
        row = [check.last_transition_s, check.state, check.message]
        if not series or series[-1][1:] != row[1:]:
            series.append(row)

    def _event(self, wl: _Workload, reason: str, message: str) -> None:
        wl.check_events.append({"t_s": self.clock.now, "reason": reason, "message": message})

    def _request_of(
        self, wl: _Workload, check: str, config: ProvisioningRequestConfig
    ) -> ProvisioningRequest | None:
        """``activeOrLastPRForChecks`` over the check's requests still there."""
        if self.provisioning is None:
            return None
        found = (self.provisioning.provisioning_request(k) for k in wl.requests.get(check, []))
        return active_or_last([r for r in found if r is not None], self._workload_name(wl), check, config)

    def _delete_requests(self, wl: _Workload, keep: set[str] | None = None) -> None:
        """``deleteUnusedProvisioningRequests``: its requests other than ``keep`` go."""
        for check, keys in wl.requests.items():
            for key in list(keys):
                if keep is not None and key in keep:
                    continue
                if self.provisioning is not None and self.provisioning.provisioning_request(key) is not None:
                    self.provisioning.delete_provisioning_request(key)
                keys.remove(key)
            wl.requests[check] = keys

    def _create_request(
        self, wl: _Workload, admitted: Admitted, check: str, config: ProvisioningRequestConfig, attempt: int
    ) -> None:
        """``syncOwnedProvisionRequest``: the request ``<workload>-<check>-<attempt>``, a PodTemplate
        ``ppt-<request>-<podset>`` per pod set it covers (the set's template with its flavors' labels and
        tolerations: ``createPodTemplate``), the config's class and parameters."""
        if self.provisioning is None:
            return
        request_name = provisioning_request_name(self._workload_name(wl), check, attempt)
        templates = {s.name: s.template for s in self._pod_sets(wl)}
        try:
            merged = merged_pod_sets(self._needs(wl, admitted), config.managed_resources)
        except InconsistentAssignments:
            return
        pod_sets = []
        for pod_set, count in merged:
            selector, tolerations = self._flavored(templates[pod_set], admitted.flavors.get(pod_set, {}))
            template = pod_template_name(request_name, pod_set)
            pod = replace(
                templates[pod_set].renamed(template), node_selector=selector, tolerations=tolerations
            )
            pod_sets.append(RequestPodSet(template, count, pod))
        parameters = request_parameters(config, {})
        request = ProvisioningRequest(
            request_name, wl.namespace, config.class_name, tuple(pod_sets), parameters, created=self.clock.now
        )
        self.provisioning.create_provisioning_request(request)
        wl.requests.setdefault(check, []).append(request.key)
        wl.created_requests.setdefault(check, []).append(request_name)
        self._event(wl, "ProvisioningRequestCreated", f'Created ProvisioningRequest: "{request_name}"')

    def _sync_checks(self, wl: _Workload) -> None:
        """The admission check controllers' reconcile of a workload holding a reservation: each
        ProvisioningRequest check's state from its request (``syncCheckStates``), the requests no longer
        used deleted, the next one created (``syncOwnedProvisionRequest``); a check of a controller gpufleet
        does not run stays Pending, saying so. Then the workload controller's: evicted for a Retry check,
        deactivated for a Rejected one (``reconcileCheckBasedEviction``), admitted when all are Ready."""
        admitted = wl.admitted
        if admitted is None or admitted.evicting or not wl.checks:
            return
        now = self.clock.now
        name = self._workload_name(wl)
        in_use: set[str] = set()
        for check_name in list(wl.checks):
            state = wl.checks[check_name]
            check = self.objects.admission_checks.get(check_name)
            if check is None or check.controller_name != PROVISIONING_REQUEST_CONTROLLER:
                controller = "" if check is None else check.controller_name
                new: CheckState | None = replace(state, message=NOT_MODELLED_MESSAGE.format(controller))
            else:
                config = None if check.config is None else self.objects.provisioning_configs.get(check.config)
                request = None if config is None else self._request_of(wl, check_name, config)
                try:
                    needed = config is not None and request_needed(
                        self._needs(wl, admitted), config.managed_resources
                    )
                except InconsistentAssignments:
                    continue
                new = sync_check(state, config, needed, request, name, wl.started, active=wl.active)
                if request is not None:
                    in_use.add(request.key)
            if new is not None and new != state:
                if new.state != state.state:
                    new = replace(new, last_transition_s=now)
                    event = update_event(state, new)
                    if event is not None:
                        self._event(wl, "AdmissionCheckUpdated", event)
                wl.checks[check_name] = new
                self._history(wl, new)
        self._delete_requests(wl, in_use)
        for check_name, state in wl.checks.items():
            check = self.objects.admission_checks.get(check_name)
            if (
                check is None
                or check.controller_name != PROVISIONING_REQUEST_CONTROLLER
                or check.config is None
            ):
                continue
            config = self.objects.provisioning_configs.get(check.config)
            if config is None:
                continue
            try:
                if not request_needed(self._needs(wl, admitted), config.managed_resources):
                    continue
            except InconsistentAssignments:
                continue
            attempt = next_attempt(state, self._request_of(wl, check_name, config), name, wl.started)
            if attempt is not None:
                self._create_request(wl, admitted, check_name, config, attempt)
        self._after_checks(wl)

    def _after_checks(self, wl: _Workload) -> None:
        """``reconcileCheckBasedEviction`` and ``SyncAdmittedCondition``."""
        checks = list(wl.checks.values())
        admitted = wl.admitted
        if admitted is None:
            return
        queue = admitted.workload.cluster_queue
        eviction = check_based_eviction(checks)
        if eviction is not None and eviction.deactivated:
            self._event(wl, *eviction.event)
            wl.active, wl.requeue_at = False, None
            wl.message = eviction.evicted[1]
            self._evict(wl, None, *eviction.scheduling_stats)
            self._tell(wl, wl.message)
            return
        if eviction is not None:
            message = eviction.condition_message
            self._event(wl, *eviction.event)
            at = requeue_at_update(checks, wl.requeue_at, self.clock.now)
            if at is not None:
                wl.requeue_at = at
            at = wl.requeue_at
            wl.message = (
                message if at is None else f"{message}; waiting for the requeue backoff until {at:g}s"
            )
            self._evict(wl, None, *eviction.scheduling_stats)
            self._tell(wl, wl.message)
            if at is not None:
                self.clock.at(at, Priority.CONTROLLER, self._request_cycle, background=True)
            return
        if admitted_condition(True, checks) == ADMITTED:
            if not wl.started:
                self._start(wl)
            return
        waiting = "; ".join(
            f'"{c.name}" {c.state}' + (f" ({c.message})" if c.message else "") for c in checks
        )
        self._tell(wl, f"Quota reserved in ClusterQueue {queue}; {NOT_ALL_CHECKS_READY}: {waiting}")

    def _flavored(self, pod: Pod, assigned: dict[str, str]) -> tuple[dict[str, str], tuple[Toleration, ...]]:
        """The pod's node selector and tolerations with its assigned flavors' ``nodeLabels`` and
        ``tolerations`` merged in (``podset.Merge``)."""
        selector = dict(pod.node_selector)
        tolerations = pod.tolerations
        for flavor in (self.objects.flavors[f] for f in sorted(set(assigned.values()))):
            selector = {**flavor.node_labels, **selector}
            tolerations += tuple(t for t in flavor.tolerations if t not in tolerations)
        return selector, tolerations

    def _unadmit(self, wl: _Workload) -> None:
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
        steps = self.stats[queue].steps
        cq = self.objects.cluster_queues[queue]
        frs = {(q.flavor, r) for g in cq.resource_groups for q in g.flavors for r in q.resources}
        now = self.clock.now
        for fr in sorted(frs):
            series = steps.setdefault(f"{fr[0]}/{fr[1]}", [[0.0, 0.0]])
            value = float(used.get(fr, 0))
            if series[-1][0] == now:
                series[-1][1] = value
            elif series[-1][1] != value:
                series.append([now, value])

    # -- summary -----------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """Per ClusterQueue and per workload; where ``waitForPodsReady`` evicted any, also the queue's
        evictions by it (``evicted``, by reason), a workload's ``requeue_state`` (while it has one) and
        ``active: false`` (once deactivated)."""
        queues: dict[str, Any] = {}
        for name, stats in self.stats.items():
            cq = self.objects.cluster_queues[name]
            resources: dict[str, Any] = {}
            for key, steps in sorted(stats.steps.items()):
                flavor, resource = key.split("/", 1)
                quota = cq.quota(flavor, resource)
                nominal = quota.nominal if quota is not None else 0
                peak = max(v for _, v in steps)
                resources[key] = {
                    "nominal": float(nominal),
                    "peak": peak,
                    "borrowed_peak": max(peak - nominal, 0.0),
                    "steps": steps,
                }
            mine = [wl for wl in self.workloads.values() if self._queue_of(wl) == name]
            queues[name] = {
                "cohort": cq.cohort,
                "admitted": stats.admitted,
                "finished": stats.finished,
                "pending": sum(1 for wl in mine if self._pending(wl)),
                "preempted": dict(sorted(stats.preempted.items())),
                "preempting": stats.preempting,
                "usage": resources,
            }
            if stats.evicted:  # evictions by waitForPodsReady and admission checks, by reason
                queues[name]["evicted"] = dict(sorted(stats.evicted.items()))
            if cq.admission_checks:
                queues[name]["admission_checks"] = [
                    {"name": n, "on_flavors": list(on)} for n, on in cq.admission_checks
                ]
        workloads = []
        for wl in sorted(self.workloads.values(), key=lambda w: w.key):
            row: dict[str, Any] = {
                "name": wl.key,
                "cluster_queue": self._queue_of(wl),
                "admissions": wl.admissions,
                "admitted_counts": wl.admitted_counts,
                "evictions": wl.evictions,
                "finished_s": wl.finished_s,
                "message": wl.message
                if self._pending(wl) or not wl.active or self._reserved_only(wl)
                else None,
            }
            if not wl.active:
                row["active"] = False
            if wl.requeue_count or wl.requeue_at is not None:
                row["requeue_state"] = {"count": wl.requeue_count, "requeue_at_s": wl.requeue_at}
            if wl.check_history:
                row["quota_reservations"] = wl.reservations
                row["admission_checks"] = [
                    {
                        "name": c.name,
                        "state": c.state,
                        "message": c.message,
                        "retry_count": c.retry_count,
                        "requeue_after_s": c.requeue_after_s,
                        "provisioning_requests": wl.created_requests.get(c.name, []),
                        "history": wl.check_history.get(c.name, []),
                    }
                    for c in wl.checks.values()
                ]
                row["events"] = wl.check_events
            workloads.append(row)
        return {"cluster_queues": queues, "workloads": workloads}

    @staticmethod
    def _reserved_only(wl: _Workload) -> bool:
        """Quota reserved, waiting for its admission checks."""
        return wl.admitted is not None and not wl.admitted.evicting and not wl.started

    def _queue_of(self, wl: _Workload) -> str | None:
        lq = self.objects.local_queues.get(f"{wl.namespace}/{wl.queue}")
        return None if lq is None else lq.cluster_queue
