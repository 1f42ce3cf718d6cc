"""The simulator: a scenario driven through the engine on a virtual clock.

It puts together the simulated world -- the event loop (``sim.event_loop``), the in-memory cluster
(``sim.cluster``), each pod's life (``sim.pod_lifecycle``), the cloud behind the node pools
(``sim.cloud``), the MIG Manager (``sim.mig_manager``), metering (``sim.metering``) -- with the
engine's decisions and loops: the workload controllers (``gpufleet.workloads``), the scheduler
processes of the scenario's ``KubeSchedulerConfiguration`` documents, and the control loops
(``gpufleet.control``: cluster-autoscaler, the HPA and KEDA, Kueue), which run on the event loop
and reach the cluster through this class as their ``ClusterPort``.

A pod is created at its ``gpufleet.io/submit-at`` time (bare pods) or by its controller, goes
through Kueue's gate where Kueue is installed, then to the scheduler that serves it; the outcomes
are applied (bound, preempting, unschedulable). A run ends at ``duration`` or, without one, when
nothing is left to do, or when only retries that must fail remain.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, cast

import numpy as np

from gpufleet.cluster.state import ClusterState
from gpufleet.collector import collector_spaced
from gpufleet.control import kai
from gpufleet.control.clock import Priority
from gpufleet.control.cluster_autoscaler_loop import ClusterAutoscalerLoop, ScaleEvent
from gpufleet.control.kuberay import KubeRayLoops
from gpufleet.control.kueue_queues import KueueQueues
from gpufleet.control.port import PodStatus, QueuedWorkload
from gpufleet.control.workload_autoscalers import WorkloadAutoscalers
from gpufleet.gpus.ledger import DeviceLedger
from gpufleet.model.disruption_budget import DisruptionBudget, expected_pod_count
from gpufleet.model.kai import KAI_SCHEDULER
from gpufleet.model.node import Node, Taint, Toleration
from gpufleet.model.node_readiness import clock_zero, created_on_clock, not_ready_at_start
from gpufleet.model.pod import ALL_GATES, OwnerRef, Pod
from gpufleet.model.promql import CPU_USAGE_COUNTER
from gpufleet.model.resources import GPU
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.scheduler_records import Recorded
from gpufleet.model.simulation import MAX_DURATION_S
from gpufleet.model.workloads import Created, Job, PodGroup, Workload
from gpufleet.scheduling.events import (
    NODE_ADD,
    NODE_DELETE,
    RESOURCE_SLICE_ADD,
    UNSCHEDULED_POD_ADD,
    UNSCHEDULED_POD_UNGATED,
    ClusterChange,
    EventPod,
    assigned_pod_deleted,
    node_before,
    node_updated,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.messages import no_scheduler, not_simulated
from gpufleet.scheduling.plugins import scheduling_gates as gates
from gpufleet.scheduling.processes import scheduler_processes
from gpufleet.scheduling.scheduler import SCHEDULER_ERROR, Outcome, Scheduler, TieBreak
from gpufleet.sim import pod_scheduled
from gpufleet.sim.cloud import SimulatedCloud
from gpufleet.sim.cluster import InMemoryCluster
from gpufleet.sim.event_loop import EventLoop
from gpufleet.sim.faults import FaultInjector
from gpufleet.sim.metering import Meter
from gpufleet.sim.mig_manager import MigManagers
from gpufleet.sim.node_pools import PoolRuntime
from gpufleet.sim.pod_lifecycle import PodLifecycle
from gpufleet.sim.records import NodeRecord, PodRecord
from gpufleet.sim.rollouts import Rollouts
from gpufleet.sim.run_progress import EVERY_EVENTS, RunProgress
from gpufleet.sim.status_watch import StatusWatch
from gpufleet.sim.topology_admission import HOSTNAME, admit, topology_request
from gpufleet.sim.traffic import TrafficState
from gpufleet.sim.unreachable_nodes import UnreachableNodes
from gpufleet.sim.workload_status import WorkloadStatus
from gpufleet.workloads import controller_for
from gpufleet.workloads.daemonset import DaemonSetController
from gpufleet.workloads.deployment import DeploymentController
from gpufleet.workloads.job import JobController, kueue_held
from gpufleet.workloads.kind import (
    Adopts,
    BacksOff,
    CountsRestarts,
    DeletesPods,
    EndsProcesses,
    HasDeadline,
    HearsDeletions,
    HearsNotReady,
    HearsTerminating,
    HoldsAdopted,
    KeepsTime,
    ReadsFailedPods,
    ReportsStatus,
    Scalable,
    SyncsAgain,
    WatchesPods,
    WorkloadController,
    controller_key,
    implements,
)
from gpufleet.workloads.leaderworkerset import LeaderWorkerSetController
from gpufleet.workloads.raycluster import RayCluster
from gpufleet.workloads.rayjob import RayJob
from gpufleet.workloads.replicas import KeepsReplicas
from gpufleet.workloads.replicaset import ActivePod, ReplicaSetController, pods_to_delete
from gpufleet.workloads.ttl_after_finished import job_finish_time, time_left

if TYPE_CHECKING:
    from gpufleet.sim.exporter_scrapes import ExporterScrapes
    from gpufleet.sim.invariants import InvariantChecks

#: the Eviction API's errors (``pkg/registry/core/pod/storage/eviction.go``)
BUDGET_REFUSAL = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_BUDGETS = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
)


class Simulation:
    #: what ``__init__`` sets, in slots: with more than 30 attributes an instance does not fit CPython 3.11's
    #: shared-key layout, and every attribute read (and every method call, which then is not specialised)
    #: would look up a dictionary of its own. ``__dict__`` takes what a test patches in, and stays empty
    #: (unmade) otherwise.
    __slots__ = (
        "__dict__",
        "_armed",
        "_arrivals",
        "_deadline_runs",
        "_flips",
        "_last_pass",
        "_next_sample",
        "_nodes",
        "_nodes_key",
        "_sampled",
        "_sampled_key",
        "_scheduling_at",
        "_served",
        "_traffic_by_pod",
        "_watches",
        "arrivals_left",
        "autoscaler",
        "clock_zero_unix",
        "cloud",
        "cluster",
        "controllers",
        "created_by",
        "daemon_pods",
        "daemonsets",
        "dump_created",
        "dump_nominations",
        "end_time",
        "faults",
        "gangs",
        "invariants",
        "kai_installed",
        "kuberay",
        "kueue",
        "lifecycle",
        "loop",
        "material_changes",
        "meter",
        "metrics",
        "mig_managers",
        "nodes_by_state",
        "per_node",
        "pools",
        "pools_timeline",
        "records",
        "replicas_timeline",
        "rollouts",
        "samples",
        "scenario",
        "schedulers",
        "seed",
        "settings",
        "state",
        "topology_held",
        "traffic",
        "unreachable",
        "workload_autoscalers",
        "workload_status",
    )

    def __init__(self, scenario: Scenario, seed: int | None = None, tie_break: TieBreak | None = None):
        """``tie_break`` decides every choice among equally good nodes (else a seeded random one, as
        kube-scheduler's ``selectHost``): a replay can follow the choices a real cluster made."""
        self.scenario = scenario
        self.settings = scenario.simulation
        self.seed = self.settings.seed if seed is None else seed
        self.loop = EventLoop()
        pool_seeds = np.random.SeedSequence([self.seed, 1]).spawn(len(scenario.node_pools))
        self.pools = {
            p.name: PoolRuntime.of(p, np.random.default_rng(s))
            for p, s in zip(scenario.node_pools, pool_seeds, strict=True)
        }
        nodes = [replace(n, labels=dict(n.labels)) for n in scenario.nodes]
        for rt in self.pools.values():
            for k in range(rt.pool.replicas + rt.pool.warm):
                node = rt.stamp()
                rt.nodes.add(node.name)
                if k >= rt.pool.replicas:
                    rt.warm.add(node.name)
                nodes.append(node)
        scale_events: list[ScaleEvent] = []
        self.cloud = SimulatedCloud(self.pools, self.loop, self, scale_events)
        dra = scenario.dra
        in_use = dra.slices or dra.classes or dra.claims or dra.templates
        publishing = any(rt.pool.dra_gpus for rt in self.pools.values())
        self.cluster = InMemoryCluster(nodes, dra if in_use or publishing else None, self.cloud.slices_of)
        start = self.settings.start_time_s if self.settings.start_time_set else None
        not_ready = not_ready_at_start(scenario.nodes, start)
        self.cluster.not_ready_from_start(not_ready)
        #: the wall-clock time of time 0 (``clock_zero``), where the scenario says: a dump's pods' creation
        self.clock_zero_unix = clock_zero(scenario.nodes, start)
        self.state: ClusterState = self.cluster.state  # the nodes and pods as the decisions read them
        self.state.namespace_labels = dict(scenario.namespace_labels)
        self.state.disruptions = self  # PodDisruptionBudgets for preemption (cluster.disruption_view)
        self.gangs = GangView(
            self.state, {k: self._group_on_clock(g) for k, g in scenario.pod_groups.items()}
        )
        configs = list(scenario.schedulers)
        #: KAI Scheduler installed: a KAI Queue in the scenario (control/kai.py)
        self.kai_installed = bool(scenario.kai_queues)
        if self.kai_installed and not any(
            p.scheduler_name == KAI_SCHEDULER for c in configs for p in c.profiles
        ):
            configs.append(kai.scheduler_config(scenario.kai_queues))
        processes = scheduler_processes(configs)
        seeds = np.random.SeedSequence(self.seed).spawn(len(processes))
        self.schedulers = [
            Scheduler(
                c, self.state, self.gangs, seed=int(s.generate_state(1)[0]), tie_break=tie_break or "random"
            )
            for c, s in zip(processes, seeds, strict=True)
        ]
        self.meter = Meter()
        self.lifecycle = PodLifecycle(
            self.loop,
            self.settings,
            self.cluster,
            self.gangs,
            self.meter,
            self,
            np.random.default_rng([self.seed, 3]),
        )
        self.records: dict[str, PodRecord] = self.lifecycle.records  # every pod by namespace/name
        self.pools_timeline: dict[str, list[float]] = {name: [] for name in self.pools}
        self.nodes_by_state: dict[str, list[float]] = {}
        self.controllers: dict[str, WorkloadController] = {}  # "<kind>/<ns>/<name>": its pods' owner
        #: a dump's workloads created before the run: their ``creationTimestamp`` on the run's clock, by key
        self.dump_created: dict[str, float] = {}
        #: a ``ReportsStatus`` controller's status on this clock, by the key of ``controllers``
        self.workload_status: dict[str, WorkloadStatus] = {}
        #: per controller key, its suspensions so far: a deadline armed before the latest one is void
        self._deadline_runs: dict[str, int] = {}
        #: per controller key, the names of the deadlines armed since its start or last resume (absent while
        #: it is suspended: none runs then)
        self._armed: dict[str, set[str]] = {}
        #: each Deployment's and ReplicaSet's watch on its pods' records (``sim.status_watch``)
        self._watches: dict[str, tuple[KeepsReplicas, StatusWatch]] = {}
        #: pod key -> the controller that created it (a JobSet's pods name their child Job as owner)
        self.created_by: dict[str, WorkloadController] = {}
        self.daemonsets: list[DaemonSetController] = []  # what cluster-autoscaler adds to a template node
        self.per_node: list[WorkloadController] = []  # kinds that place pods on each node that joins
        self._nodes: list[Node] = []
        self._nodes_key: tuple[int, int] | None = None
        self.arrivals_left = 0
        #: the arrivals not yet scheduled, each with its sequence number (``_next_arrival``)
        self._arrivals: Iterator[tuple[int, tuple[Created, Callable[[], None]]]] = iter(())
        self._scheduling_at: set[float] = set()
        self._last_pass: tuple[int, int, int] | None = None
        self.samples: dict[str, list[float]] = {
            k: [] for k in ("t_s", "gpus_total", "gpus_allocated", "gpus_working", "pods_pending", "nodes")
        }
        self._next_sample = 0.0
        self.end_time = 0.0
        self.material_changes = 0
        self.daemon_pods: set[str] = set()
        self.topology_held: dict[str, list[str]] = {}  # PodGroup -> pods gated for topology admission
        #: the dump's ``status.nominatedNodeName`` of each pending pod no scheduler of the run serves (nothing
        #: in the run changes it), with the pod's record
        self.dump_nominations: dict[str, tuple[PodRecord, str]] = {}
        self._sampled_key: tuple[int, int, int] | None = None
        self._sampled = (0.0, 0.0)
        self.node_billing_changed()
        self.autoscaler = ClusterAutoscalerLoop(
            self,
            self.loop,
            self.settings.autoscaler,
            scenario.expander_priorities,
            self.seed,
            scale_events,
            self.settings.start_time_s,
            scenario.provisioning_requests,
        )
        # by "<kind>/<ns>/<name>" of the Deployment or ReplicaSet it aims at
        self.traffic = {
            f"{t.target_kind}/{t.namespace}/{t.target}": TrafficState(t) for t in scenario.traffic
        }
        #: each Traffic's (serving replicas, their GPUs), with what it was worked out from (``_serving``)
        self._served: dict[str, tuple[object, int, int, tuple[int, float]]] = {}
        self._traffic_by_pod: dict[str, TrafficState | None] = {}  # ``traffic_of`` a created pod
        self._flips = dict.fromkeys(self.traffic, 0)  # per Traffic: its pods that started or stopped working
        self.workload_autoscalers = WorkloadAutoscalers(
            self,
            self.loop,
            scenario.hpas,
            scenario.scaled_objects,
            scenario.scaled_jobs,
            wall_clock_start_s=self.settings.start_time_s,
        )
        self.mig_managers = MigManagers(
            self.loop, self.pools, self.cluster, self
        )  # pools' nvidia.com/mig.config
        self.replicas_timeline: dict[str, list[float]] = {}
        #: Kueue's tenant queues (control/kueue_queues.py); its ProvisioningRequest admission checks create
        #: and read cluster-autoscaler's requests
        self.kueue = KueueQueues(self, self.loop, scenario.kueue, self.autoscaler, self.clock_zero_unix)
        self.autoscaler.provisioning_listeners.append(self.kueue.provisioning_changed)
        #: the RayJob controller's requeue, Ray and its autoscaler (control/kuberay.py)
        self.kuberay = KubeRayLoops(self, self.loop)
        self.rollouts = Rollouts(self.loop, self.records, self._reconcile, self._delete_surplus)
        #: the node lifecycle controller's NotReady nodes, their taints and PodGC of their pods
        #: (``sim.unreachable_nodes``): a dump's NotReady nodes from the start, a kubelet stopped by a fault
        self.unreachable = UnreachableNodes(
            self.loop,
            self.cluster,
            self.lifecycle,
            self,
            self._cloud_deletes,
            self.settings.node_lifecycle,
        )
        self.unreachable.not_ready_from_start(not_ready)
        #: GPU and node faults and the response to them (``sim.faults``), None without a FaultModel
        self.faults = (
            None
            if scenario.fault_model is None
            else FaultInjector(
                scenario.fault_model,
                self.loop,
                self.cluster,
                self.lifecycle,
                self,
                np.random.default_rng([self.seed, 7]),
                frozenset(name for name, rt in self.pools.items() if rt.pool.max is None),
                self.unreachable,
            )
        )
        #: the exporters scraped as the run goes (``gpufleet simulate --metrics-out``), None: not scraped
        self.metrics: ExporterScrapes | None = None
        #: the invariants checked after every event (``gpufleet simulate --check-invariants``), None: none
        self.invariants: InvariantChecks | None = None

    # -- what the parts hold ---------------------------------------------------------------
    @property
    def ledger(self) -> DeviceLedger:
        return self.cluster.ledger

    @property
    def nodes(self) -> dict[str, NodeRecord]:
        return self.cluster.nodes

    @property
    def all_records(self) -> tuple[PodRecord, ...]:
        """Every pod of the run: those a pod of the same name replaced (in the order they were replaced),
        then the pods by name now."""
        return (*self.lifecycle.replaced, *self.records.values())

    @property
    def work_lost_gpu_s(self) -> float:
        return sum((r.work_lost_gpu_s for r in self.all_records), 0.0)

    @property
    def checkpoint_save_gpu_s(self) -> float:
        return sum((r.checkpoint_save_gpu_s for r in self.all_records), 0.0)

    # -- set-up ----------------------------------------------------------------------------
    def _schedule_arrivals(self) -> None:
        sc = self.scenario
        arrivals: list[tuple[Created, Callable[[], None]]] = [
            *((b.created, partial(self._arrive_pod, b)) for b in sc.pods),
            *((w.created, partial(self._start, w)) for w in sc.workloads()),
        ]
        feed_rng = np.random.default_rng([self.seed, 4])
        feed = self.lifecycle.feed
        for queue_feed in sc.queue_feeds:
            for batch in queue_feed.items:
                arrivals.append(
                    (Created(batch.at_s, -1), partial(feed, queue_feed.list, batch.count, batch.work_s))
                )
            rate = queue_feed.rate
            if rate is not None and rate.per_hour > 0:
                t = rate.from_s
                end = rate.until_s if rate.until_s is not None else self.settings.duration_s or MAX_DURATION_S
                while (t := t + feed_rng.exponential(3600 / rate.per_hour)) < end:
                    arrivals.append((Created(t, -1), partial(feed, queue_feed.list, 1, rate.work_s)))
        ordered = sorted(arrivals, key=lambda a: (a[0].submit_at_s, a[0].order))
        self.arrivals_left += len(ordered)
        self._arrivals = enumerate(ordered, self.loop.reserve(len(ordered)))
        self._next_arrival()

    def _next_arrival(self) -> None:
        """The next arrival scheduled, as the one before it runs (the loop's heap holds one at a time), with
        the sequence number kept for it at the start: events at one instant run in the order they would
        have with every arrival scheduled then (``EventLoop.reserve``)."""
        following = next(self._arrivals, None)
        if following is not None:
            seq, (created, action) = following
            self.loop.at(created.submit_at_s, Priority.ARRIVAL, self._arrival(action), seq=seq)

    def _arrival(self, action: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            self.arrivals_left -= 1
            self._next_arrival()
            action()

        return run

    # -- workload controllers --------------------------------------------------------------
    def _group_on_clock(self, group: PodGroup) -> PodGroup:
        """A dump's PodGroup created at its ``creationTimestamp`` on the run's clock, what the queue orders
        of Coscheduling (``GetCreationTimestamp``) and Volcano (``JobOrderFn``) read."""
        arrival = group.created.submit_at_s
        at = created_on_clock(self.scenario.creation_timestamp(group), self.clock_zero_unix, arrival)
        if at == arrival:
            return group
        return replace(group, created=replace(group.created, submit_at_s=at))

    def _start(self, workload: Workload) -> None:
        controller = controller_for(kueue_held(workload, self.scenario.kueue))
        key = controller_key(controller)
        self.controllers[key] = controller
        created = created_on_clock(
            self.scenario.creation_timestamp(workload), self.clock_zero_unix, self.loop.now
        )
        if created < self.loop.now:
            self.dump_created[key] = created
        # held suspended until Kueue admits it, or for good (``spec.suspend`` of a Job Kueue does not manage)
        suspended = self.kueue.suspends(key) or (isinstance(workload, Job) and workload.suspend)
        if implements(controller, ReportsStatus):
            self.workload_status[key] = WorkloadStatus(None if suspended else self.loop.now)
        self._tick(controller)
        owned = self.scenario.owned.get(key)
        if owned is not None and implements(controller, Adopts):
            zero = self.clock_zero_unix  # its pods' finish times count on the run's clock
            cast(Adopts, controller).adopt(
                replace(owned, adopted_unix=None if zero is None else zero + self.loop.now)
            )
            self._arm_holds(controller)
        if isinstance(controller, DaemonSetController):
            self.daemonsets.append(controller)
        if isinstance(controller, KeepsReplicas):
            self._watches[key] = (controller, StatusWatch())
        if isinstance(controller, DeploymentController):
            self.rollouts.arm(controller)
        if controller.per_node:
            self.per_node.append(controller)
        for group in controller.pod_groups():  # the gangs its pods form
            self.gangs.add_group(group)
        if not suspended:
            self._armed[key] = set()
            self._arm_deadlines(controller)
        if implements(controller, QueuedWorkload):  # a dump's Workload may have admitted it already
            self.kueue.started(key, cast(QueuedWorkload, controller))
        self._reconcile(controller)

    def _arm_holds(self, controller: WorkloadController) -> None:
        """A controller that holds creations back after its adoption (``HoldsAdopted``: a Job's pod failure
        backoff carried over from its snapshot's failed pods) is told as each hold ends, and reconciled."""
        if not implements(controller, HoldsAdopted):
            return
        held = cast(HoldsAdopted, controller)
        for wait in held.held_s():
            self.loop.at(self.loop.now + wait, Priority.CONTROLLER, partial(self._release, controller, wait))

    def _release(self, controller: WorkloadController, elapsed_s: float) -> None:
        """A hold of ``controller``'s ends ``elapsed_s`` after its adoption: it may create again."""
        cast(HoldsAdopted, controller).release_held(elapsed_s)
        self._reconcile(controller)

    def _arm_deadlines(self, controller: WorkloadController, at_once: bool = True) -> None:
        """Arm each deadline of a ``HasDeadline`` controller not armed yet since its start or last resume, to
        pass that many seconds from now (``at_once`` for 0: before it creates anything, as ``syncJob`` fails a
        Job past its deadline before ``manageJob``; else at its next reconcile; a child Job's, found after the
        reconcile that created it, at once after it). A suspension since (``workload_suspended``) voids
        them."""
        if not implements(controller, HasDeadline):
            return
        key = controller_key(controller)
        armed = self._armed.get(key)
        if armed is None:  # suspended: its deadlines do not run
            return
        timed = cast(HasDeadline, controller)
        for name, deadline in timed.deadlines().items():
            if name in armed:
                continue
            armed.add(name)
            if deadline <= 0 and at_once:
                timed.deadline_passed(name)
                continue
            self.loop.at(
                self.loop.now + max(deadline, 0.0),
                Priority.CONTROLLER,
                self._deadline_passed(controller, key, name),
                background=True,
            )

    def _deadline_passed(self, controller: WorkloadController, key: str, name: str) -> Callable[[], None]:
        """What a deadline armed now does when it passes: tell the controller and reconcile it, unless the
        workload was suspended since (a later resume arms it again)."""
        run = self._deadline_runs.get(key, 0)

        def passed() -> None:
            if self._deadline_runs.get(key, 0) == run:
                cast(HasDeadline, controller).deadline_passed(name)
                self._reconcile(controller)
                self.kueue.workload_changed(key)

        return passed

    def workload_resumed(self, key: str) -> None:
        """Kueue admitted the workload: a Job's ``status.startTime`` is now (``syncJob``: "Resumed jobs will
        always reset StartTime"), and its ``activeDeadlineSeconds`` counts from it."""
        controller = self.controllers.get(key)
        if controller is None:
            return
        status = self.workload_status.get(key)
        if status is not None:
            status.start_s = self.loop.now
        self._armed[key] = set()
        self._arm_deadlines(controller, at_once=False)

    def workload_suspended(self, key: str) -> None:
        """Kueue evicted the workload (``Job.Stop``: suspended, ``status.startTime`` cleared): the deadline
        armed at its start or last resume no longer counts (``pastActiveDeadline`` is false while
        suspended)."""
        if key not in self.controllers:
            return
        self._deadline_runs[key] = self._deadline_runs.get(key, 0) + 1
        self._armed.pop(key, None)
        status = self.workload_status.get(key)
        if status is not None:
            status.start_s = None

    def reconcile(self, controller: WorkloadController) -> None:
        """Create the pods a controller wants now (a loop changed it: ``control.kuberay``)."""
        self._reconcile(controller)

    def _tick(self, controller: WorkloadController) -> None:
        """A ``KeepsTime`` controller is told the run's time before it is asked or told anything."""
        if implements(controller, KeepsTime):
            cast(KeepsTime, controller).tick(self.loop.now)

    def _reconcile(self, controller: WorkloadController) -> None:
        self._tick(controller)
        self._delete_doomed(controller)
        for pod in controller.wanted(self._active_nodes()):
            self.created_by[pod.key] = controller
            self._create(pod)
        self._delete_doomed(controller)  # what deciding its wanted pods doomed (a JobSet's restart)
        self._arm_next_sync(controller)
        self._arm_deadlines(controller, at_once=False)  # a child Job created now: its deadline runs from now
        if implements(controller, EndsProcesses):
            for key, code in cast(EndsProcesses, controller).exiting():
                rec = self.records.get(key)
                if rec is not None:
                    self.lifecycle.exit_container(rec, code)
        self._note_status(controller)

    def _arm_next_sync(self, controller: WorkloadController) -> None:
        """A ``SyncsAgain`` controller whose sync left work (a Job's creations past
        ``MaxPodCreateDeletePerSync``, a held failed pod to count) is synced again when it says."""
        if not implements(controller, SyncsAgain):
            return
        delay = cast(SyncsAgain, controller).sync_again_s()
        if delay is not None:
            self.loop.at(self.loop.now + delay, Priority.CONTROLLER, partial(self._next_sync, controller))

    def _next_sync(self, controller: WorkloadController) -> None:
        cast(SyncsAgain, controller).next_sync()
        self._reconcile(controller)

    def _note_status(self, controller: WorkloadController) -> None:
        """The conditions a ``ReportsStatus`` controller's workload has now, noted at this time."""
        if implements(controller, ReportsStatus):
            status = self.workload_status.get(controller_key(controller))
            if status is not None:
                status.note(cast(ReportsStatus, controller), self.loop.now)
                self._arm_ttl(controller, status)
                self._collected(controller, status)

    def _collected(self, controller: WorkloadController, status: WorkloadStatus) -> None:
        """A snapshot's Job being deleted is gone once the garbage collector let it go
        (``model.job_deletion``: at once, or under ``Foreground`` once its pods are)."""
        if isinstance(controller, JobController) and status.deleted_s is None and controller.gone():
            status.deleted_s = self.loop.now
            self.kueue.owner_deleted(controller_key(controller), self.loop.now)

    def _arm_ttl(self, controller: WorkloadController, status: WorkloadStatus) -> None:
        """The TTL-after-finished controller (``workloads.ttl_after_finished``): a Job with
        ``ttlSecondsAfterFinished`` that finished is deleted once that time has passed since."""
        ttl = controller.job.ttl_after_finished_s if isinstance(controller, JobController) else None
        if ttl is None or status.expires_s is not None:
            return
        finished = job_finish_time(status.conditions)
        if finished is None:
            return
        left, status.expires_s = time_left(ttl, finished, self.loop.now)
        self.loop.at(self.loop.now + max(left, 0.0), Priority.CONTROLLER, partial(self._expired, controller))

    def _expired(self, controller: WorkloadController) -> None:
        """The Job's TTL expired: foreground cascading deletion (its pods, all ended, go first; then the Job,
        and Kueue's Workload, which the Job owns)."""
        now = self.loop.now
        for rec in self.records.values():
            if rec.deleted_s is None and self._owner_controller(rec.pod) is controller:
                rec.deleted_s = now
        key = controller_key(controller)
        self.workload_status[key].deleted_s = now
        self.kueue.owner_deleted(key, now)

    def _delete_doomed(self, controller: WorkloadController) -> None:
        if not implements(controller, DeletesPods):
            return
        for key, reason in cast(DeletesPods, controller).doomed():
            rec = self.records.get(key)
            if rec is not None and rec.deleted_s is None and rec.phase in ("Pending", "Running"):
                self.delete_pod(key, reason)
            elif rec is not None:  # already gone, and nothing else will say so
                controller.finished(rec.pod, succeeded=False)

    def _watched(self, pod: Pod, changed: Callable[[WatchesPods], bool]) -> None:
        """A pod progressed: a controller that watches its pods (the one that made it, or adopted it from a
        snapshot: a StatefulSet's) may want more."""
        controller = self._owner_controller(pod)
        if controller is None or not implements(controller, WatchesPods):
            return
        self._tick(controller)
        if changed(cast(WatchesPods, controller)):
            self.loop.at(self.loop.now, Priority.CONTROLLER, lambda: self._reconcile(controller))

    def _active_nodes(self) -> list[Node]:
        """The nodes in the cluster, kept while no node joins or leaves (``ClusterState.membership``: a
        node's labels, taints and cordon change on its object in place)."""
        key = self.state.membership
        if key != self._nodes_key:
            self._nodes = [self.state.nodes[i] for i in self.state.active_indices()]
            self._nodes_key = key
        return self._nodes

    def owner_finished(self, pod: Pod, succeeded: bool) -> None:
        suspended = self.kueue.pod_finished(pod)  # Kueue evicted its Job: suspended, not failed
        controller = self._owner_controller(pod)
        if controller is None:
            return
        self._tick(controller)
        delay = 0.0
        if suspended:
            controller.suspended(pod)
        else:
            rec = self.records.get(pod.key)
            deleted = rec is not None and rec.deleted_s is not None
            deletion = not succeeded and deleted
            if deletion and implements(controller, HearsDeletions):
                cast(HearsDeletions, controller).deleted(pod)
            if not succeeded and implements(controller, ReadsFailedPods):
                cast(ReadsFailedPods, controller).failed_with(
                    pod, rec.reason if rec is not None else None, rec.terminated if rec is not None else None
                )
            finished = controller.finished(pod, succeeded)
            self._note_status(controller)  # its last pod gone: a Job's Failed or Complete
            if not finished:
                return
            if not succeeded and implements(controller, BacksOff):
                delay = cast(BacksOff, controller).retry_delay_s()
        self.loop.at(self.loop.now + delay, Priority.CONTROLLER, lambda: self._reconcile(controller))
        if isinstance(controller, DeploymentController):  # its rollout may go on
            self.rollouts.changed(controller)

    def pod_terminating(self, pod: Pod) -> None:
        """A bound pod is being deleted: a controller that hears it (a Job: ``podReplacementPolicy``) may
        replace it now, after its pod failure backoff."""
        controller = self._owner_controller(pod)
        if controller is None or not implements(controller, HearsTerminating):
            return
        self._tick(controller)
        wants = cast(HearsTerminating, controller).pod_terminating(pod, self.kueue.evicting(pod))
        self._note_status(controller)
        if wants:
            delay = cast(BacksOff, controller).retry_delay_s() if implements(controller, BacksOff) else 0.0
            self.loop.at(self.loop.now + delay, Priority.CONTROLLER, lambda: self._reconcile(controller))

    # -- pods: created, gated, queued ------------------------------------------------------
    def _scheduled_here(self, pod: Pod) -> bool:
        """Whether a scheduler of the run serves the pod (its ``schedulerName``)."""
        return any(s.serves(pod.scheduler_name) for s in self.schedulers)

    def _scheduler_of(self, pod: Pod) -> str:
        return next((s.name for s in self.schedulers if s.serves(pod.scheduler_name)), pod.scheduler_name)

    def _arrive_pod(self, bare: BarePod) -> None:
        """A snapshot's pod (or a bare one) arrives, a pending or running one created at its
        ``creationTimestamp`` (``created_unix``) on the run's clock where it has one, a pending one with its
        ``PodScheduled=False`` condition (``scheduled``), whatever its reason, and its ``nominatedNodeName``:
        its scheduler's nomination (``Scheduler.arrive_nominated``), or, where no scheduler of the run serves
        it, the dump's (``dump_nominations``); one being deleted
        (``deleting``) is deleted at once, to end after what remains of its grace period (its
        ``termination_grace_s``: ``kube.pod_deletion``)."""
        pod, bound_node, phase = bare.pod, bare.bound_node, bare.phase
        created = created_on_clock(bare.created_unix, self.clock_zero_unix, self.loop.now)
        if phase in ("Succeeded", "Failed"):
            rec = self.lifecycle.record(pod, self._scheduler_of(pod))
            self.lifecycle.set_phase(rec, phase)
            if created < rec.created_s:
                rec.dump_created_s = created
            rec.finished_s, rec.node = self._on_clock(bare.finished_unix, rec), bound_node
            if bound_node is not None and bare.bound_unix is not None:
                rec.bound_s = min(self._on_clock(bare.bound_unix, rec), rec.finished_s)
            return
        nominated = bare.nominated_node if bound_node is None else None
        owner = next((s for s in self.schedulers if s.serves(pod.scheduler_name)), None)
        if owner is not None and nominated is not None:
            owner.arrive_nominated(pod.key, nominated)
        if bound_node is not None:  # a Running one: the kubelet admitted it already
            self._create(replace(pod, node_name=bound_node), running=phase == "Running", created_s=created)
            bound = self.records.get(pod.key)
            if bound is not None and bound.bound_s is not None and bare.bound_unix is not None:
                bound.bound_s = self._on_clock(bare.bound_unix, bound)
        else:
            self._create(pod, created_s=created, scheduled=bare.scheduled)
        self._adopted_arrived(pod)
        arrived = self.records.get(pod.key)
        if arrived is not None and nominated is not None and owner is None:
            self.dump_nominations[pod.key] = arrived, nominated
        if (
            bare.deleting
            and arrived is not None
            and arrived.deleted_s is None
            and arrived.phase in ("Pending", "Running")
        ):
            self.delete_pod(pod.key, "Deleted")

    def _on_clock(self, at_unix: float | None, rec: PodRecord) -> float:
        """A dump's pod's time ``at_unix`` (bound, finished) on the run's clock: no earlier than its
        creation (``creation_timestamp_s``), no later than its arrival (now); its arrival where the dump has
        no time 0 or the pod no such time."""
        return max(created_on_clock(at_unix, self.clock_zero_unix, self.loop.now), rec.creation_timestamp_s)

    def _adopted_arrived(self, pod: Pod) -> None:
        """A snapshot's pod arrived after the controller that adopted it started: what that controller
        deletes (a Job that failed on adoption deletes its active pods) may name it now."""
        owner = pod.owner
        controller = (
            None if owner is None else self.controllers.get(f"{owner.kind}/{pod.namespace}/{owner.name}")
        )
        if controller is not None and implements(controller, Adopts) and implements(controller, DeletesPods):
            self._tick(controller)
            self._delete_doomed(controller)

    def _create(
        self,
        pod: Pod,
        running: bool = False,
        created_s: float | None = None,
        scheduled: Recorded | None = None,
    ) -> None:
        """A pod created (``running``: a snapshot's, already running on its ``spec.nodeName``; ``created_s``:
        a snapshot's, its ``creationTimestamp`` on the run's clock; ``scheduled``: a snapshot's pending pod's
        ``PodScheduled=False`` condition, the pod's until its scheduler in the run writes its own, to the end
        where the run does not simulate that scheduler: a reason ``Unschedulable`` makes cluster-autoscaler
        list the pod from its first loop, as upstream's ``isUnschedulable`` does, any other reason keeps it
        out: ``sim.pod_scheduled``)."""
        if self.kai_installed and pod.scheduler_name == KAI_SCHEDULER and pod.pod_group is None:
            at = self.loop.now if created_s is None else created_s  # KAI's pod grouper, as it sees the pod
            pod, group = kai.group(pod, self.created_by.get(pod.key), at)
            if group.key not in self.gangs.groups:
                self.gangs.add_group(group)
        if pod.scheduling_gates:  # gates whose removal time has come are gone before the pod is looked at
            pod = replace(pod, scheduling_gates=self._gates_left(pod, pod.scheduling_gates, self.loop.now))
        rec = self.lifecycle.record(pod, self._scheduler_of(pod), self._watch_of(pod))
        if created_s is not None and created_s < rec.created_s:
            rec.dump_created_s, rec.running_at_start = created_s, running
        if scheduled is not None:
            rec.dump_condition = scheduled
            if scheduled.reason is not None:  # (the record's reason None stands for Unschedulable)
                rec.reason = None if scheduled.unschedulable else scheduled.reason
                rec.message = scheduled.message
        later = {t for _, t in pod.behavior.ungate_at if t > self.loop.now} if pod.scheduling_gates else set()
        for at in sorted(later):
            self.loop.at(at, Priority.ARRIVAL, partial(self._ungate, rec))
        if pod.behavior.delete_at_s is not None:  # as a trace's deletion_time: pending or running, it goes
            at = max(pod.behavior.delete_at_s, self.loop.now)
            self.loop.at(at, Priority.ARRIVAL, partial(self.lifecycle.delete_if_present, rec))
        if pod.owner is not None and pod.owner.kind == "DaemonSet":
            self.daemon_pods.add(pod.key)
        self.gangs.add_pod(pod)
        if pod.node_name is not None:
            self.kueue.bound(pod)  # a pod of a workload a dump's Workload admitted is that workload's
            self.lifecycle.kubelet_admit(rec, running)
            return
        if self.kueue.gate(pod):  # held until its Kueue workload is admitted (control/kueue_queues.py)
            return
        self.enqueue(rec)

    def _watch_of(self, pod: Pod) -> StatusWatch | None:
        """The watch on the records of the Deployment's or ReplicaSet's pods, for a pod it made."""
        controller = self.created_by.get(pod.key)
        if not isinstance(controller, KeepsReplicas):
            return None
        kept = self._watches.get(controller_key(controller))
        return kept[1] if kept is not None and kept[0] is controller else None

    def enqueue(self, rec: PodRecord) -> None:
        """The pod goes to its scheduler's queue (or waits for topology admission, or stays Pending
        when no scheduler serves it: gpufleet's note says so, ``no_scheduler``, or, for a dump's pod with a
        ``PodScheduled=False`` condition, that its scheduler is not simulated, ``not_simulated``)."""
        pod = rec.pod
        owner = next((s for s in self.schedulers if s.serves(pod.scheduler_name)), None)
        if owner is None:  # a dump's condition stays the pod's: nothing in the run writes it
            dumped, name = rec.dump_condition, pod.scheduler_name
            rec.message = no_scheduler(name) if dumped is None else not_simulated(name, dumped)
            return
        group = self.gangs.group_of(pod)
        if group is not None and any(topology_request(pod)) and HOSTNAME not in pod.node_selector:
            self.topology_held.setdefault(group.key, []).append(pod.key)
            self._admit_by_topology(group.key)
            return
        if owner.add(pod, self.loop.now) is not None:  # SchedulingGates' PreEnqueue keeps it out of the queue
            rec.reason, rec.message = gates.REASON, gates.CONDITION_MESSAGE
            rec.enter(self.loop.now, "gated")
            return
        if pod.pod_group is not None:  # a new member may complete its gang
            for s in self.schedulers:
                s.cluster_event((ClusterChange(UNSCHEDULED_POD_ADD, None, EventPod(pod)),), self.loop.now)
        self._request_scheduling(self.loop.now)

    @staticmethod
    def _gates_left(pod: Pod, gated: tuple[str, ...], now: float) -> tuple[str, ...]:
        """The scheduling gates not yet removed at ``now`` (``gpufleet.io/ungate-at``)."""
        gone = {gate for gate, t in pod.behavior.ungate_at if t <= now}
        return () if ALL_GATES in gone else tuple(g for g in gated if g not in gone)

    def _ungate(self, rec: PodRecord) -> None:
        """Some of the pod's scheduling gates are removed (a pod update); with none left, a pod that
        SchedulingGates kept out of the queue enters it."""
        left = self._gates_left(rec.pod, rec.pod.scheduling_gates, self.loop.now)
        if rec.deleted_s is not None or left == rec.pod.scheduling_gates:
            return
        rec.pod = replace(rec.pod, scheduling_gates=left)
        if rec.pod.key in self.gangs.pods:
            self.gangs.pods[rec.pod.key] = rec.pod
        owner = next((s for s in self.schedulers if rec.pod.key in s.gated), None)
        if owner is not None and owner.add(rec.pod, self.loop.now) is None:
            rec.reason = rec.message = None
            rec.enter(self.loop.now, "pending")
            if rec.pod.pod_group is not None:
                ungated = ClusterChange(UNSCHEDULED_POD_UNGATED, None, EventPod(rec.pod))
                for s in self.schedulers:
                    s.cluster_event((ungated,), self.loop.now)
            self._request_scheduling(self.loop.now)

    def _admit_by_topology(self, group_key: str) -> None:
        """Kueue admits the whole gang into one topology domain, or holds it (``topology_admission``)."""
        group = self.gangs.groups[group_key]
        keys = [k for k in self.topology_held.get(group_key, []) if self.records[k].deleted_s is None]
        if len(keys) < group.min_member:
            for k in keys:
                self.records[
                    k
                ].message = f"waiting for topology admission: {len(keys)}/{group.min_member} pods exist"
            return
        free = self.state.free(GPU)
        free_by_node = {self.state.nodes[i].name: int(free[i]) for i in self.state.active_indices().tolist()}
        labels = {n.name: n.labels for n in self.state.nodes if n.name in self.state.index}
        topologies = [t.levels for _, t in sorted(self.scenario.kueue.topologies.items())]
        verdict = admit([self.records[k].pod for k in keys], free_by_node, labels, topologies)
        if isinstance(verdict, str):
            for k in keys:
                self.records[k].message = verdict
            return
        del self.topology_held[group_key]
        for k in keys:
            rec = self.records[k]
            rec.pod = replace(rec.pod, node_selector={**rec.pod.node_selector, HOSTNAME: verdict[k]})
            self.gangs.pods[k] = rec.pod
            owner = next(s for s in self.schedulers if s.serves(rec.pod.scheduler_name))
            owner.add(rec.pod, self.loop.now)
        self._request_scheduling(self.loop.now)

    # -- what the pod lifecycle tells (sim.pod_lifecycle.LifecycleHost) --------------------
    def forget(self, key: str) -> None:
        """The pod is gone: every scheduler drops it. One waiting at Permit is rejected first
        (``deletePodFromSchedulingQueue``: ``RejectWaitingPod``, "removed"), and Coscheduling's Unreserve
        sends its gang's other waiting members back to the queue."""
        rejected = [o for s in self.schedulers for o in s.reject_waiting(key, self.loop.now, "removed")]
        for s in self.schedulers:
            s.forget(key)
        for outcome in rejected:
            if outcome.pod.key != key:
                self._apply(outcome)

    def pod_bound(self, pod: Pod, node: str) -> None:
        if self.autoscaler.keeps_warm:  # a pod on a warm node uses it up: the pool refills
            self.autoscaler.arm()
        if node in self.state.index:
            bound_to = self.state.nodes[self.state.index[node]]
            self._watched(pod, lambda c: c.pod_bound(pod, bound_to))

    def working_changed(self, pod: Pod) -> None:
        for key in self.traffic:
            controller = self.scale_target(key)
            if controller is not None and pod.key in controller.active:
                self._flips[key] += 1

    def _owner_controller(self, pod: Pod) -> WorkloadController | None:
        """The controller that made the pod, or that adopted it (a snapshot's: its owner's)."""
        owner: OwnerRef | None = pod.owner
        if owner is None:
            return None
        return self.created_by.get(pod.key) or self.controllers.get(
            f"{owner.kind}/{pod.namespace}/{owner.name}"
        )

    def container_restarted(self, pod: Pod) -> None:
        controller = self._owner_controller(pod)
        if controller is not None and implements(controller, CountsRestarts):
            cast(CountsRestarts, controller).restarted(pod)
            self.loop.at(self.loop.now, Priority.CONTROLLER, lambda: self._reconcile(controller))

    def pod_ready(self, pod: Pod) -> None:
        self._watched(pod, lambda c: c.pod_ready(pod))
        controller = self._owner_controller(pod)
        if isinstance(controller, DeploymentController):  # its rollout may go on once the pod is available
            self.rollouts.pod_ready(controller)
        self.kueue.pod_ready(pod)  # its Kueue workload may now be PodsReady (waitForPodsReady)

    def pod_not_ready(self, pod: Pod) -> None:
        self._watched(
            pod, lambda c: implements(c, HearsNotReady) and cast(HearsNotReady, c).pod_not_ready(pod)
        )

    def cluster_changed(self, changes: Sequence[ClusterChange], material: bool = True) -> None:
        """A node came or went, or a pod left (``changes``): the pending pods they may help are retried
        (their queueing hints) and the autoscaler looks.

        A gang's own assume-and-release (Coscheduling rejecting its waiting pods) is not
        *material*: it cannot make another attempt succeed, so it does not keep a stuck
        run going (``_futile``)."""
        now = self.loop.now
        self.material_changes += material
        self.kueue.settle()
        for group_key in sorted(self.topology_held):
            self._admit_by_topology(group_key)
        for s in self.schedulers:
            s.cluster_event(changes, now, material)
        self._request_scheduling(now)
        self.autoscaler.arm()

    # -- the ClusterPort: what the control loops read (control.port) -----------------------
    @property
    def pods(self) -> Mapping[str, PodRecord]:
        return self.records

    @property
    def node_groups(self) -> Mapping[str, PoolRuntime]:
        return self.pools

    @property
    def disruption_budgets(self) -> list[DisruptionBudget]:
        return self.scenario.budgets

    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]:
        """Each PodDisruptionBudget with its ``disruptionsAllowed``, as the disruption controller
        (``pkg/controller/disruption``) computes it: healthy (Running, ready, not terminating)
        covered pods beyond what it requires of the expected count (``expected_pod_count``)."""
        budgets = self.scenario.budgets
        if not budgets:
            return []
        live = [r for r in self.records.values() if r.deleted_s is None and r.phase in ("Pending", "Running")]
        out = []
        for budget in budgets:
            covered = [r for r in live if budget.covers(r.pod)]
            healthy = sum(1 for r in covered if r.phase == "Running" and r.ready and not r.terminating)
            expected = expected_pod_count(budget, [r.pod for r in covered], self.scale_of)
            out.append((budget, 0 if expected is None else budget.allowed(healthy, expected)))
        return out

    def scale_of(self, pod: Pod) -> int | None:
        """``spec.replicas`` of the controller of ``pod`` (the disruption controller's finders): a
        Deployment's, a ReplicaSet's, a LeaderWorkerSet's StatefulSets' (the leaders': the groups; a
        group's workers': ``size`` - 1); None for a kind without a scale subresource (a Job)."""
        owner = pod.owner
        if owner is None:
            return None
        created = self.created_by.get(pod.key)
        if isinstance(created, LeaderWorkerSetController):
            lws = created.lws
            return created.replicas if owner.name == lws.name else lws.size - 1
        controller = self.scale_target(f"{owner.kind}/{pod.namespace}/{owner.name}")
        return None if controller is None else controller.replicas

    def unschedulable_pods(self) -> list[Pod]:
        """``UnschedulablePods``: the pending pods, of any scheduler, whose ``PodScheduled`` condition is
        False with reason ``Unschedulable`` (``pod_scheduled.unschedulable``)."""
        return self._pending_by_condition(pod_scheduled.unschedulable)

    def scheduler_unprocessed_pods(self, schedulers: AbstractSet[str]) -> list[Pod]:
        """``SchedulerUnprocessedPods``: the pending pods of these schedulers without a ``PodScheduled``
        condition, or one without a reason (``pod_scheduled.unprocessed``): not tried yet by their scheduler,
        or of one that no scheduler serves."""
        return [
            p for p in self._pending_by_condition(pod_scheduled.unprocessed) if p.scheduler_name in schedulers
        ]

    def _pending_by_condition(self, test: Callable[[PodRecord, bool], bool]) -> list[Pod]:
        """The pending pods, not bound nor deleted, not waiting at Permit nor held by Kueue (gated, or of a
        suspended Job), whose condition passes ``test`` (given whether a scheduler of the run serves the
        pod)."""
        waiting = {k for s in self.schedulers for k in s.waiting}
        records = self.records
        return [
            r.pod
            for r in (records[k] for k in sorted(self.lifecycle.pending_keys))
            if r.phase == "Pending"
            and r.deleted_s is None
            and r.pod.node_name is None
            and r.pod.key not in waiting
            and not (r.log and r.log[-1][1] == "queued")
            and test(r, self._scheduled_here(r.pod))
        ]

    def nominated_nodes(self) -> dict[str, str]:
        """Each scheduler's nominated pods (DefaultPreemption's ``status.nominatedNodeName``), and the dump's
        nominations of the pending pods of schedulers the run does not simulate (``dump_nominations``)."""
        nominated = {key: node for s in self.schedulers for key, node in s.nominated.items()}
        for key, (rec, node) in self.dump_nominations.items():
            if self.records.get(key) is rec and rec.phase == "Pending" and rec.deleted_s is None:
                nominated[key] = node
        return nominated

    def daemonset_templates(self) -> list[Pod]:
        return [ds.daemonset.template for ds in self.daemonsets]

    def daemon_pod_keys(self) -> set[str]:
        return self.daemon_pods

    def computes_on_gpus(self, pod_key: str) -> bool:
        rec = self.records.get(pod_key)
        return rec is not None and rec.working and (rec.pod.gpus > 0 or rec.gpu_share > 0)

    def nodes_going_away(self) -> AbstractSet[str]:
        return self.cloud.going_away

    def unready_nodes(self) -> dict[str, float]:
        """The nodes down (``InMemoryCluster.not_ready``), each with when it joined (a node NotReady from
        the start: when it registered, ``InMemoryCluster.registered_s``)."""
        nodes, registered = self.cluster.nodes, self.cluster.registered_s
        return {name: registered.get(name, nodes[name].ready_s or 0.0) for name in self.cluster.not_ready}

    def pods_version(self) -> Hashable:
        lc = self.lifecycle
        return (lc.pending, lc.running, self.meter.working_gpus, len(lc.records))

    def scale_target(self, target: str) -> DeploymentController | ReplicaSetController | Scalable | None:
        """The Deployment, ReplicaSet or other ``Scalable`` kind (a StatefulSet, a LeaderWorkerSet) ``target``
        (``<kind>/<ns>/<name>``) names: the kinds with a scale subresource that gpufleet runs."""
        controller = self.controllers.get(target)
        if isinstance(controller, DeploymentController | ReplicaSetController | Scalable):
            return controller
        return None

    def target_pods_version(self, target: str) -> Hashable:
        """For a Deployment or ReplicaSet whose every pod's record it watches (``sim.status_watch``): its
        pods (``KeepsReplicas.version``), the records replaced (a pod made again under the same name) and
        its watch's count of writes. Whether every pod is watched is asked again when the pods or the
        records replaced change; a pod it adopted is not watched (None: each sync reads every pod)."""
        kept = self._watches.get(target)
        if kept is None or self.scale_target(target) is not kept[0]:
            return None
        controller, watch = kept
        members = (controller.version, len(self.lifecycle.replaced))
        if watch.members != members:
            records = self.records
            watch.members = members
            watch.complete = all(getattr(records.get(k), "watch", None) is watch for k in controller.active)
        return (members, watch.version) if watch.complete else None

    def job(self, key: str) -> JobController | None:
        controller = self.controllers.get(f"Job/{key}")
        return controller if isinstance(controller, JobController) else None

    def queued_workload(self, pod: Pod) -> tuple[str, QueuedWorkload] | None:
        controller = self.created_by.get(pod.key)
        if controller is None and pod.owner is not None:  # a pod of a snapshot, adopted
            controller = self.controllers.get(f"{pod.owner.kind}/{pod.namespace}/{pod.owner.name}")
        if controller is None or not implements(controller, QueuedWorkload):
            return None
        return controller_key(controller), cast(QueuedWorkload, controller)

    def pod_group_of(self, pod: Pod) -> PodGroup | None:
        return self.gangs.group_of(pod)

    def queue_created(self, pod: Pod) -> float | None:
        found = self.queued_workload(pod)
        if found is not None:
            return self.dump_created.get(found[0])
        rec = self.records.get(pod.key)
        return None if rec is None else rec.dump_created_s

    def list_length(self, name: str) -> int:
        """What a ``redis`` trigger reads: items queued on the list (popped ones are gone)."""
        work_list = self.lifecycle.work_lists.get(name)
        return len(work_list.queued) if work_list is not None else 0

    def traffic_of(self, pod: Pod) -> TrafficState | None:
        """The Traffic aimed at the Deployment or ReplicaSet that owns ``pod``, or at the ``Scalable``
        kind whose scale subresource selects it (a LeaderWorkerSet's leaders). The first answers
        follow from the pod's creator and owner alone, and are kept per pod."""
        if not self.traffic:
            return None
        key = pod.key
        if key in self._traffic_by_pod:
            return self._traffic_by_pod[key]
        controller = self.created_by.get(key)
        if implements(controller, Scalable):
            scalable = cast(Scalable, controller)
            aimed = self.traffic.get(f"{scalable.kind}/{scalable.key}")
            return aimed if key in scalable.active else None
        owner = pod.owner
        aimed = self.traffic.get(f"{owner.kind}/{pod.namespace}/{owner.name}") if owner is not None else None
        if controller is not None:
            self._traffic_by_pod[key] = aimed
        return aimed

    def pod_metric(self, pod: PodStatus, name: str) -> float | None:
        traffic = self.traffic_of(pod.pod)
        return traffic.metric(name) if traffic is not None else None

    def pod_metric_source(self, pod: PodStatus) -> Hashable:
        """The Traffic the pod's metrics come from (its target's key), or None: it has no metrics."""
        traffic = self.traffic_of(pod.pod)
        return (
            None
            if traffic is None
            else f"{traffic.spec.target_kind}/{traffic.spec.namespace}/{traffic.spec.target}"
        )

    def pod_resource_usage(self, pod: PodStatus, resource: str) -> float | None:
        """A running pod's usage: its ``gpufleet.io/cpu-usage`` / ``memory-usage`` annotation, else its
        Traffic's (``TrafficState.usage``; a pod serves while it is Ready), else None."""
        if pod.phase != "Running":
            return None
        behavior = pod.pod.behavior
        given = behavior.cpu_usage if resource == "cpu" else behavior.memory_usage_bytes
        if given is not None and resource in ("cpu", "memory"):
            return given
        traffic = self.traffic_of(pod.pod)
        return traffic.usage(resource, pod.ready) if traffic is not None else None

    def pod_counter_rate(self, pod: PodStatus, name: str, window_s: float) -> float | None:
        """``http_requests_total``'s rate from the pod's Traffic; ``container_cpu_usage_seconds_total``'s
        (a running pod's): its ``gpufleet.io/cpu-usage``, else its Traffic's (``TrafficState.cpu_rate``)."""
        traffic = self.traffic_of(pod.pod)
        if name == CPU_USAGE_COUNTER:
            if pod.phase != "Running":
                return None
            given = pod.pod.behavior.cpu_usage
            if given is not None:
                return given
            if traffic is None:
                return None
            running = pod.running_s if pod.running_s is not None else self.loop.now
            return traffic.cpu_rate(window_s, running, pod.ready)
        return traffic.counter_rate(name, window_s) if traffic is not None else None

    # -- the ClusterPort: what the control loops change ------------------------------------
    def launch(self, group: str, for_pods: tuple[str, ...], warm: bool) -> str | None:
        return self.cloud.launch(group, for_pods, warm)

    def drain(self, name: str) -> float:
        """A spot interruption's drain: cordon the node and evict its pods but the DaemonSet pods, each with
        its own grace period; returns the longest."""
        self.state.cordon(name)
        longest = 0.0
        for a in sorted(self.state.pods_on[self.state.index[name]].values(), key=lambda a: a.pod.key):
            if a.pod.owner is not None and a.pod.owner.kind == "DaemonSet":
                continue
            longest = max(longest, a.pod.termination_grace_s)
            self.lifecycle.evict(a.pod.key, "Evicted")
        return longest

    def cordon(self, name: str, unschedulable: bool) -> None:
        """cluster-autoscaler's ToBeDeleted mark, as a cordon; taken off, a node update its schedulers see
        (it may take pods again). A node already gone stays so."""
        state = self.state
        if name not in state.index:
            return
        if unschedulable:
            state.cordon(name)
            return
        self._update_node(name, partial(state.cordon, name, False))

    def evict_pod(self, key: str, grace_s: float) -> str | None:
        """The Eviction API (``pkg/registry/core/pod/storage/eviction.go``): a pod gone, not bound, ended or
        already terminating is no refusal (``canIgnorePDB``); else a pod two PodDisruptionBudgets cover is
        refused (500), and one whose budget allows no disruption now (429; gpufleet has no
        ``unhealthyPodEvictionPolicy``: an unready pod is refused alike). Evicted, it leaves after
        ``grace_s``."""
        rec = self.records.get(key)
        if rec is not None and rec.deleted_s is None and not rec.terminating and rec.phase == "Running":
            covering = [n for b, n in self.pod_disruption_budgets() if b.covers(rec.pod)]
            if len(covering) > 1:
                return MULTIPLE_BUDGETS
            if covering and covering[0] <= 0:
                return BUDGET_REFUSAL
        if rec is not None:
            self.lifecycle.evict(key, "Evicted", grace_s=grace_s)
        return None

    def set_node_taints(self, name: str, taints: tuple[Taint, ...]) -> None:
        """The node's taints replaced (cluster-autoscaler's soft DeletionCandidate taint): a node update its
        schedulers see (``UpdateNodeTaint``: their queueing hints, and the shape caches re-evaluate its row
        through ``static_version``). Not armed again is the autoscaler that made it, scanning now. The
        taint eviction controller sees its ``NoExecute`` taints change (``sim.taint_eviction``), PodGC its
        out-of-service taint (``sim.pod_gc_terminating``)."""
        before = self.state.nodes[self.state.index[name]].taints
        self._update_node(name, partial(self.state.set_taints, name, taints))
        self.lifecycle.taint_eviction.node_taints_changed(name, before)
        self.lifecycle.pod_gc.look(name)

    def _update_node(self, name: str, change: Callable[[], None]) -> None:
        """``change`` made to the node ``name``, which its schedulers then see as a node update (their
        queueing hints), and a scheduling cycle asked for."""
        node = self.state.nodes[self.state.index[name]]
        before = node_before(node)
        change()
        now = self.loop.now
        for s in self.schedulers:
            s.cluster_event(node_updated(before, node), now)
        self._request_scheduling(now)

    def evict(self, key: str, reason: str) -> None:
        self.lifecycle.evict(key, reason)

    def pod_waits_for_node(
        self, key: str, provisioning: bool, stages: dict[str, float] | None = None
    ) -> None:
        """Attribute a pending pod's wait to node provisioning (a node was launched for it) or not;
        ``stages``: the start chain of the node that came up for it."""
        rec = self.records.get(key)
        if stages is not None and rec is not None and rec.bound_s is None and not rec.node_stages:
            rec.node_stages = dict(stages)
        if rec is None or rec.bound_s is not None or rec.deleted_s is not None:
            return
        state = "provisioning" if provisioning else "pending"
        if rec.log[-1][1] != state:
            rec.enter(self.loop.now, state)

    def scale(self, target: str, replicas: int) -> None:
        """Change a Deployment's or ReplicaSet's ``spec.replicas``; on scale-down the ReplicaSet deletes
        the surplus in ``ActivePodsWithRanks`` order (``workloads.replicaset.pods_to_delete``), with reason
        ScaledDown."""
        controller = self.scale_target(target)
        if controller is None:
            return
        if isinstance(controller, Scalable):  # it removes what it removes itself (DeletesPods)
            controller.scale(replicas)
            self._reconcile(self.controllers[target])
            return
        controller.replicas = replicas
        if isinstance(controller, DeploymentController) and controller.sets:  # its ReplicaSets scale
            self.rollouts.sync(controller)
            return
        surplus = len(controller.active) - replicas
        if surplus > 0:
            self._delete_surplus(controller, sorted(controller.active), surplus)
        self._reconcile(controller)

    def _active_pods(self, keys: Iterable[str]) -> list[ActivePod]:
        """What ``ActivePodsWithRanks`` reads of those of the pods ``keys`` that arrived (not all adopted ones
        have)."""
        active = []
        for key in keys:
            rec = self.records.get(key)
            if rec is None:
                continue
            ready_s = rec.ready_s if rec.ready else None
            annotations = rec.pod.annotations
            active.append(
                ActivePod(
                    key, rec.node, rec.phase, ready_s, rec.creation_timestamp_s, rec.restarts, annotations
                )
            )
        return active

    def _delete_surplus(self, controller: KeepsReplicas, keys: list[str], surplus: int) -> None:
        """Delete ``surplus`` of the pods ``keys`` (sorted), as a ReplicaSet scaled down deletes them
        (``workloads.replicaset.pods_to_delete``), ranked by all the controller's active pods on their node;
        reason ScaledDown."""
        pods = self._active_pods(keys)
        related = (
            pods if len(keys) == len(controller.active) else self._active_pods(sorted(controller.active))
        )
        for key in pods_to_delete(pods, surplus, self.loop.now, controller.ranks_by_node, related):
            controller.retire(key)
            self.lifecycle.delete(self.records[key], "ScaledDown")

    def create_job(self, job: Job) -> None:
        self._start(job)

    def set_message(self, key: str, message: str) -> None:
        self.records[key].message = message

    def hold(self, key: str, message: str) -> None:
        rec = self.records[key]
        rec.message = message
        rec.enter(self.loop.now, "queued")

    def release(
        self,
        key: str,
        node_selector: dict[str, str],
        tolerations: tuple[Toleration, ...],
        annotations: Mapping[str, str] | None = None,
    ) -> None:
        rec = self.records[key]
        rec.pod = replace(rec.pod, node_selector=node_selector, tolerations=tolerations)
        if annotations:
            rec.pod = replace(rec.pod, annotations={**rec.pod.annotations, **annotations})
        if key in self.gangs.pods:
            self.gangs.pods[key] = rec.pod
        rec.message = None
        rec.enter(self.loop.now, "pending")
        self.enqueue(rec)

    def delete_pod(self, key: str, reason: str) -> None:
        """A bound pod gets SIGTERM, any other goes at once and its owner learns it."""
        rec = self.records[key]
        bound = key in self.state.assignments
        self.lifecycle.delete(rec, reason)
        if not bound:
            self.owner_finished(rec.pod, succeeded=False)

    # -- nodes (sim.cloud.CloudHost) -------------------------------------------------------
    def node_launched(self, name: str, pool: str) -> None:
        self.cluster.launched(name, pool, self.loop.now)
        self.node_billing_changed()

    def add_node(self, node: Node) -> None:
        """A launched node joins (kubelet Ready); DaemonSets put their pods on it."""
        self.cluster.add_node(node, self.loop.now)
        for controller in list(self.per_node):
            for pod in controller.node_added(node):
                self.created_by[pod.key] = controller
                self._create(pod)
        self.unreachable.node_added_or_deleted()
        self.cluster_changed((ClusterChange(NODE_ADD, None, node),))

    def node_gpus_ready(self, node: Node) -> None:
        state = self.state
        joined = state.nodes[state.index[node.name]]
        old = node_before(joined)
        self.cluster.node_gpus_ready(node, self.loop.now)
        if self.faults is not None:
            self.faults.node_joined(node.name)
        published = (ClusterChange(RESOURCE_SLICE_ADD),) if state.dra is not None else ()
        self.cluster_changed((*node_updated(old, joined), *published))

    def reclaimable(self, name: str) -> bool:
        return (
            name in self.state.index
            and name not in self.autoscaler.deleting
            and name not in self.cloud.going_away
        )

    def delete_node(self, name: str) -> None:
        """The node goes away; whatever still runs there ends with it. A node already gone stays as it
        went: a second deletion (cluster-autoscaler's of a node that a repair drain deleted first, the
        cloud's instance already terminated) finds nothing to delete, and its billing ended then."""
        if self.nodes[name].deleted_s is not None:
            return
        pool = self.nodes[name].pool
        state = self.state
        node = state.nodes[state.index[name]] if name in state.index else None
        lost = self.cluster.delete_node(name, self.loop.now)
        for a in lost:
            self.lifecycle.lost_with_node(self.records[a.pod.key])
        # the pods of a kubelet down stay, bound to no Node, until PodGC
        self.unreachable.orphaned(name, [a.pod.key for a in lost if self.records[a.pod.key].kubelet_down])
        self.unreachable.node_added_or_deleted()
        self.cloud.deleted(name, pool)
        self.node_billing_changed()
        gone = [assigned_pod_deleted(a.pod, name) for a in lost]
        self.cluster_changed(gone if node is None else [ClusterChange(NODE_DELETE, node, None), *gone])

    def _cloud_deletes(self, name: str) -> None:
        """The cloud node lifecycle controller deletes a lost node's Node (``sim.unreachable_nodes``): a
        fault's node, replaced as its response says (``FaultInjector.node_deleted``)."""
        if self.faults is not None:
            self.faults.node_deleted(name)
        else:
            self.delete_node(name)

    def devices_changed(self, name: str) -> None:
        if self.faults is not None:
            self.faults.devices_changed(name)

    def node_billing_changed(self) -> None:
        """A node was launched or deleted (or a pool's template changed): what is billed, and the
        GPUs provisioned, change."""
        price, gpus = self.cloud.billing(self.cluster)
        self.meter.billing(self.loop.now, self.cluster.gpus_allocated, price, gpus)

    # -- scheduling ------------------------------------------------------------------------
    def _request_scheduling(self, t: float) -> None:
        if t not in self._scheduling_at:
            self._scheduling_at.add(t)
            self.loop.at(t, Priority.SCHEDULING, lambda: self._schedule_pass(t))

    def _schedule_pass(self, t: float) -> None:
        self._scheduling_at.discard(t)
        now = self.loop.now
        for s in self.schedulers:
            for outcome in s.run(now):
                if self.metrics is not None:
                    self.metrics.attempted(s.name, outcome)
                self._apply(outcome)
        self._last_pass = (self.material_changes, self.state.static_version, len(self.records))
        times = [nt for s in self.schedulers if (nt := s.next_time()) is not None]
        if times:
            self._request_scheduling(max(min(times), now))

    def _apply(self, outcome: Outcome) -> None:
        rec = self.records[outcome.pod.key]
        if outcome.kind == "bound" and outcome.node is not None:
            if outcome.message is not None:  # its kubelet refuses it: its device plugin cannot cover it
                self.lifecycle.admission_refused(rec, outcome.node, outcome.message)
            else:
                self.lifecycle.bound(rec, outcome.node, list(outcome.devices))
        elif outcome.kind == "preempting":
            for victim in outcome.victims:
                self._preempt(victim)
        elif outcome.kind in ("unschedulable", "rejected"):
            rec.message = outcome.message
            # ``handleSchedulingFailure``: the PodScheduled condition's reason (None stands for Unschedulable)
            rec.reason = SCHEDULER_ERROR if outcome.error else None
            self.autoscaler.arm()
            if outcome.kind == "rejected":  # (its scheduler told itself already, ``_reject_group``)
                self.cluster_changed((assigned_pod_deleted(outcome.pod, outcome.node or ""),), material=False)

    def _preempt(self, key: str) -> None:
        """``prepareCandidate``: a victim waiting at Permit is rejected back to the queue (its gang's
        other waiting members with it); any other victim is deleted with its grace period."""
        rejected = [o for s in self.schedulers for o in s.reject_waiting(key, self.loop.now)]
        for outcome in rejected:
            self._apply(outcome)
        if rejected:  # their GPUs are free for the preemptor: unlike a gang letting go, a material
            # change, made known once this scheduling pass is over (as a victim's deletion would be)
            freed = [assigned_pod_deleted(o.pod, o.node or "") for o in rejected]
            self.loop.at(self.loop.now, Priority.COMPLETION, lambda: self.cluster_changed(freed))
        else:
            self.lifecycle.evict(key, "Preempted", by_scheduler=True)

    def _futile(self) -> bool:
        """Only scheduler retries remain and nothing changed since the last pass: they would fail alike.
        (Asked after every event: the cheapest questions first.)"""
        if self.workload_autoscalers.active():  # KEDA cooldowns and HPA windows act on time alone
            return False
        if self.autoscaler.armed_at is not None:  # cluster-autoscaler still has something to look at
            return False
        if self.faults is not None and self.lifecycle.running:  # faults to come may hit what runs
            return False
        if self.loop.pending(Priority.SCHEDULING) or any(s.waiting or s.has_work() for s in self.schedulers):
            return False
        if self.kueue.active():  # waitForPodsReady's timeouts and requeue backoffs act on time
            return False
        if self.kuberay.active():  # Ray demand, idle workers, RayJob deadlines and TTLs act on time
            return False
        return self._last_pass == (self.material_changes, self.state.static_version, len(self.records))

    # -- sampling and the run --------------------------------------------------------------
    def _sample_until(self, t: float) -> None:
        interval = self.settings.sample_interval_s
        while self._next_sample < t:
            self._sample(self._next_sample)
            self._next_sample += interval

    def _sample(self, t: float) -> None:
        s = self.samples
        s["t_s"].append(round(t, 6))
        version = (self.state.change_pos, self.state.static_version, self.ledger.version)
        if version != self._sampled_key:  # the per-node sums only move when the cluster changed
            self._sampled_key, self._sampled = (
                version,
                (self.cluster.gpus_total(), self.cluster.gpus_allocated()),
            )
        s["gpus_total"].append(float(self._sampled[0]))
        s["gpus_allocated"].append(float(self._sampled[1]))
        s["gpus_working"].append(float(self.meter.working_gpus))
        s["pods_pending"].append(float(self.lifecycle.pending))
        s["nodes"].append(float(len(self.state.index)))
        for name, rt in self.pools.items():
            self.pools_timeline[name].append(float(len(rt.nodes)))
        if self.pools:
            launching = [launch for rt in self.pools.values() for launch in rt.launching.values()]
            joined = sum(1 for launch in launching if launch.joined)
            counts = {
                "starting": len(launching) - joined,
                "ready, GPUs not registered": joined,
                "GPU-ready": self.state.size_active - joined,
            }
            for state, count in counts.items():
                self.nodes_by_state.setdefault(state, []).append(float(count))
        for traffic in self.traffic.values():
            traffic.sample(t)
        for key in self._scaled_workloads():
            series = self.replicas_timeline.setdefault(key, [])
            kind, rest = key.split("/", 1)
            if kind == "ScaledJob":
                series.append(float(self.workload_autoscalers.active_jobs(rest)))
            else:
                controller = self.scale_target(key)
                series.append(float(controller.replicas if controller is not None else 0))

    def _scaled_workloads(self) -> list[str]:
        wa = self.workload_autoscalers
        targets = [r.target for r in wa.hpas] + [r.target for _, _, r in wa.scaled_objects]
        return list(dict.fromkeys(targets)) + [f"ScaledJob/{key}" for key in wa.jobs_of]  # each target once

    def _advance_traffic(self, t: float) -> None:
        """Each Traffic's replicas from ``t`` on: its target's working now (``TrafficState.advance``). The run
        calls it after each event, at the event's time, so that the replicas the event left serve from then
        (integrated up to the next event, or sample, with them)."""
        for key, traffic in self.traffic.items():
            serving, gpus = self._serving(key)
            if serving != traffic.serving or gpus != traffic.gpus:  # (else the event left them as they were)
                traffic.advance(t, serving, gpus)

    def _serving(self, key: str) -> tuple[int, float]:
        """The replicas of the Traffic's target that serve now, and their GPUs. For a Deployment or a
        ReplicaSet, kept while none of its pods started or stopped working and its pods are as they were
        (a pod that joins or leaves them moves ``KeepsReplicas.version``)."""
        kept = self._served.get(key)
        if kept is not None:  # (the same controller, none of its pods flipped, its pods as they were)
            controller, flips, version, served = kept
            if (
                self.controllers.get(key) is controller
                and flips == self._flips[key]
                and version == cast(KeepsReplicas, controller).version
            ):
                return served
        records = self.lifecycle.records
        target = self.scale_target(key)
        working = [] if target is None else [records[k] for k in target.active if records[k].working]
        if implements(target, Scalable):
            serving = cast(Scalable, target).serving(lambda k: records[k].working)
        else:
            serving = len(working)
        served = (serving, sum(r.gpu_share for r in working))
        if isinstance(target, KeepsReplicas):
            self._served[key] = (target, self._flips[key], target.version, served)
        return served

    def _idle(self) -> bool:
        """Nothing left to do: no pending or running pods, and no completion, arrival or controller event."""
        lc = self.lifecycle
        return lc.pending == 0 and lc.running == 0 and not self.loop.pending(Priority.SCHEDULING)

    def run(self, progress: RunProgress | None = None) -> None:
        """Run to the end; ``progress`` hears how far the run got every ``EVERY_EVENTS`` events. The
        garbage collector's young collections are spaced out meanwhile (``collector_spaced``): the
        run's objects mostly live to its end."""
        with collector_spaced():
            self._run(progress)

    def _run(self, progress: RunProgress | None) -> None:
        horizon = self.settings.duration_s
        limit = horizon if horizon is not None else MAX_DURATION_S
        report_at = EVERY_EVENTS if progress is not None else math.inf
        self._schedule_arrivals()
        self.autoscaler.arm(0.0)
        for rt in self.pools.values():
            for name in sorted(rt.nodes):
                self.cloud.expect_reclaim(rt, name)
        self.workload_autoscalers.start()
        if any(isinstance(w, RayCluster | RayJob) for w in self.scenario.other_workloads):
            self.kuberay.start()
        self.mig_managers.start()
        if self.faults is not None:
            self.faults.start()
        for traffic in self.traffic.values():
            for at, _ in traffic.spec.rps:
                self.loop.at(at, Priority.ARRIVAL, lambda: None)  # a change of load is an event
        allocated = self.cluster.gpus_allocated
        checks = self.invariants
        while (t := self.loop.peek_time()) is not None and t <= limit:
            if self.settings.duration_s is None and self._idle():
                break
            if self._futile():
                break
            self._sample_until(t)
            if self.metrics is not None:
                self.metrics.until(self, t)
            self.meter.advance(t, allocated)
            for traffic in self.traffic.values():  # up to the event, with the replicas the last one left
                traffic.until(t)
            self.loop.step()
            self._advance_traffic(t)
            if checks is not None:
                checks.after_event(self)
            if self.loop.steps >= report_at and progress is not None:
                progress.advanced(self.loop.now, horizon, self.loop.steps)
                report_at += EVERY_EVENTS
        self.end_time = self.loop.now if self.settings.duration_s is None and self._idle() else limit
        self._sample_until(self.end_time)
        self._sample(self.end_time)
        self.meter.advance(self.end_time, allocated)
        if progress is not None:
            progress.advanced(self.end_time, horizon, self.loop.steps)
        if self.metrics is not None:
            self.metrics.finish(self, self.end_time)
        if checks is not None:
            checks.at_end(self)
