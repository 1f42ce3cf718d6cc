"""The simulator: a scenario driven through the scheduling engine on a virtual clock.

A pod goes Pending -> bound -> Running -> (working) -> Succeeded. It is created at its
``gpufleet.io/submit-at`` time (bare pods) or by its controller; a pod with
``spec.nodeName`` skips the scheduler and is admitted by the kubelet if it fits (otherwise
it fails with ``OutOf<resource>``, as the kubelet's admission does). A bound pod computes
for ``gpufleet.io/duration`` (forever if unset). A member of a PodGroup works only while
at least ``minMember`` members of its group are Running past their start chain or have
Succeeded: distributed training waits for every rank, whatever the scheduler knows.

Scheduler processes come from the scenario's ``KubeSchedulerConfiguration`` documents
(``gpufleet.scheduling.processes``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import numpy as np
import numpy.typing as npt

from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.devices import NodeDevices, Unit, out_of_memory
from gpufleet.gpus.dra.state import DraState
from gpufleet.gpus.ledger import DeviceLedger
from gpufleet.lifecycle.distributions import parse_duration_spec
from gpufleet.lifecycle.image_pull import ImagePuller
from gpufleet.lifecycle.shared_bandwidth import SharedBandwidth
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.dra import DeviceID, ResourceSlice
from gpufleet.model.dra_slices import node_gpus
from gpufleet.model.node import Node
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.resources import GPU
from gpufleet.model.scenario import Scenario
from gpufleet.model.simulation import MAX_DURATION_S
from gpufleet.model.workloads import Created, Job
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.messages import no_scheduler
from gpufleet.scheduling.processes import scheduler_processes
from gpufleet.scheduling.scheduler import Outcome, Scheduler, TieBreak
from gpufleet.sim.cluster_autoscaler_loop import ClusterAutoscalerLoop
from gpufleet.sim.events import EventLoop, Priority
from gpufleet.sim.kueue_queues import KueueQueues
from gpufleet.sim.mig_manager import MigManagers
from gpufleet.sim.node_pools import PoolRuntime
from gpufleet.sim.placement_quality import ring_placement
from gpufleet.sim.records import NodeRecord, PodRecord
from gpufleet.sim.topology_admission import HOSTNAME, admit, topology_request
from gpufleet.sim.traffic import TrafficState
from gpufleet.sim.work_queues import WorkList
from gpufleet.sim.workload_autoscalers import WorkloadAutoscalers
from gpufleet.workloads import controller_for
from gpufleet.workloads.daemonset import DaemonSetController
from gpufleet.workloads.deployment import DeploymentController
from gpufleet.workloads.job import JobController
from gpufleet.workloads.kind import Workload, WorkloadController


class Simulation:
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
        self.state = ClusterState(nodes)
        self.ledger = DeviceLedger(self.state)  # which device units each pod holds (gpus.ledger)
        self.state.disruptions = self  # PodDisruptionBudgets for preemption (scheduling.disruption_view)
        dra = scenario.dra
        publishing = any(rt.pool.dra_gpus for rt in self.pools.values())
        if dra.slices or dra.classes or dra.claims or dra.templates or publishing:
            self.state.dra = DraState(replace(dra, slices=list(dra.slices)))
        for node in nodes:
            self._publish_slices(node)
        self.gangs = GangView(self.state, scenario.pod_groups)
        seeds = np.random.SeedSequence(self.seed).spawn(len(scheduler_processes(scenario.schedulers)))
        self.schedulers = [
            Scheduler(
                c, self.state, self.gangs, seed=int(s.generate_state(1)[0]), tie_break=tie_break or "random"
            )
            for c, s in zip(scheduler_processes(scenario.schedulers), seeds, strict=True)
        ]
        self.records: dict[str, PodRecord] = {}
        self.nodes = {n.name: NodeRecord(n.name, n.pool, 0.0, 0.0, 0.0) for n in nodes}
        self.pools_timeline: dict[str, list[float]] = {name: [] for name in self.pools}
        self.nodes_by_state: dict[str, list[float]] = {}
        self.controllers: dict[str, WorkloadController] = {}  # "<kind>/<ns>/<name>": its pods' owner
        self.pending = 0
        self.running = 0
        self.arrivals_left = 0
        self._scheduling_at: set[float] = set()
        self._last_pass: tuple[int, int, int] | None = None
        self.samples: dict[str, list[float]] = {
            k: [] for k in ("t_s", "gpus_total", "gpus_allocated", "gpus_working", "pods_pending", "nodes")
        }
        self._next_sample = 0.0
        self.end_time = 0.0
        self.work_lost_gpu_s = 0.0
        self.material_changes = 0
        self.storage: SharedBandwidth[str] = SharedBandwidth(self.settings.storage_bandwidth)
        self._storage_token = 0
        self.pullers: dict[str, ImagePuller] = {}
        self.work_lists: dict[str, WorkList] = {}
        self._weights_key: tuple[int, int, int, int] | None = None
        self._weights: npt.NDArray[np.float64] = np.zeros((0, 0))
        self._physical: npt.NDArray[np.float64] = np.zeros(0)
        self._dra_gpus_key: tuple[list[ResourceSlice], int] | None = None
        self._dra_gpus_index: dict[DeviceID, str] = {}
        self.daemon_pods: set[str] = set()
        self.topology_held: dict[str, list[str]] = {}  # PodGroup -> pods gated for topology admission
        self.pending_keys: set[str] = set()  # pods in phase Pending, not deleted
        self.start_rng = np.random.default_rng([self.seed, 3])
        self.gpu_seconds = {"provisioned": 0.0, "allocated": 0.0, "working": 0.0}
        self._integrated_to = 0.0
        self.cost = 0.0
        self.billed_price_per_hour = 0.0
        self.provisioned_gpus = 0
        self._pool_gpus: dict[str, int] = {}
        self._sampled_key: tuple[int, int, int] | None = None
        self._sampled = (0.0, 0.0)
        self.working_gpus = 0.0
        self._working_units: Counter[tuple[str, str, str]] = Counter()  # device -> pods working on it
        self.node_billing_changed()
        self.autoscaler = ClusterAutoscalerLoop(self)
        self.traffic = {f"{t.namespace}/{t.target}": TrafficState(t) for t in scenario.traffic}
        self.workload_autoscalers = WorkloadAutoscalers(self)
        self.mig_managers = MigManagers(self)  # pools' nvidia.com/mig.config changes (sim/mig_manager.py)
        self.replicas_timeline: dict[str, list[float]] = {}
        self.kueue = KueueQueues(self)  # Kueue's tenant queues (sim/kueue_queues.py)

    # -- set-up ----------------------------------------------------------------------------
    def _schedule_arrivals(self) -> None:
        sc = self.scenario
        arrivals: list[tuple[Created, Callable[[], None]]] = [
            *((b.created, partial(self._arrive_pod, b.pod, b.bound_node, b.phase)) for b in sc.pods),
            *((w.created, partial(self._start, w)) for w in sc.workloads()),
        ]
        feed_rng = np.random.default_rng([self.seed, 4])
        for feed in sc.queue_feeds:
            for batch in feed.items:
                arrivals.append(
                    (Created(batch.at_s, -1), partial(self.feed, feed.list, batch.count, batch.work_s))
                )
            rate = feed.rate
            if rate is not None and rate.per_hour > 0:
                t = rate.from_s
                end = rate.until_s if rate.until_s is not None else self.settings.duration_s or MAX_DURATION_S
                while (t := t + feed_rng.exponential(3600 / rate.per_hour)) < end:
                    arrivals.append((Created(t, -1), partial(self.feed, feed.list, 1, rate.work_s)))
        for created, action in sorted(arrivals, key=lambda a: (a[0].submit_at_s, a[0].order)):
            self.arrivals_left += 1
            self.loop.at(created.submit_at_s, Priority.ARRIVAL, self._arrival(action))

    def _arrival(self, action: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            self.arrivals_left -= 1
            action()

        return run

    def _start(self, workload: Workload) -> None:
        controller = controller_for(workload)
        self.controllers[f"{controller.kind}/{controller.key}"] = controller
        self._reconcile(controller)

    def _reconcile(self, controller: WorkloadController) -> None:
        nodes = [self.state.nodes[i] for i in self.state.active_indices()]
        for pod in controller.wanted(nodes):
            self._create(pod)

    @property
    def daemonsets(self) -> list[DaemonSetController]:
        return [c for c in self.controllers.values() if isinstance(c, DaemonSetController)]

    # -- pods ------------------------------------------------------------------------------
    def _arrive_pod(self, pod: Pod, bound_node: str | None, phase: str) -> None:
        if phase in ("Succeeded", "Failed"):
            rec = self._record(pod)
            self._set_phase(rec, phase)
            rec.finished_s, rec.node = self.loop.now, bound_node
            return
        if bound_node is not None:
            self._create(replace(pod, node_name=bound_node))
        else:
            self._create(pod)

    def _set_phase(self, rec: PodRecord, phase: str) -> None:
        """Change a pod's phase, keeping the Pending and Running counts in step."""
        self.pending -= rec.phase == "Pending"
        self.running -= rec.phase == "Running"
        self.pending_keys.discard(rec.pod.key)
        rec.phase = phase
        self.pending += phase == "Pending"
        self.running += phase == "Running"
        if phase == "Pending":
            self.pending_keys.add(rec.pod.key)

    def _record(self, pod: Pod) -> PodRecord:
        scheduler = next(
            (s.name for s in self.schedulers if s.serves(pod.scheduler_name)), pod.scheduler_name
        )
        rec = PodRecord(pod, scheduler, self.loop.now)
        self.records[pod.key] = rec
        self.pending += 1
        self.pending_keys.add(pod.key)
        return rec

    def _create(self, pod: Pod) -> None:
        rec = self._record(pod)
        if pod.behavior.delete_at_s is not None:  # as a trace's deletion_time: pending or running, it goes
            at = max(pod.behavior.delete_at_s, self.loop.now)
            self.loop.at(at, Priority.ARRIVAL, partial(self._delete_if_present, rec))
        if pod.owner is not None and pod.owner.kind == "DaemonSet":
            self.daemon_pods.add(pod.key)
        self.gangs.add_pod(pod)
        if pod.node_name is not None:
            self._kubelet_admit(rec)
            return
        if self.kueue.gate(rec):  # held until its Kueue workload is admitted (sim/kueue_queues.py)
            return
        self.enqueue(rec)

    def enqueue(self, rec: PodRecord) -> None:
        """The pod goes to its scheduler's queue (or waits for topology admission, or stays Pending
        when no scheduler serves it)."""
        pod = rec.pod
        owner = next((s for s in self.schedulers if s.serves(pod.scheduler_name)), None)
        if owner is None:
            rec.message = no_scheduler(pod.scheduler_name)
            return
        group = self.gangs.group_of(pod)
        if group is not None and any(topology_request(pod)):
            self.topology_held.setdefault(group.key, []).append(pod.key)
            self._admit_by_topology(group.key)
            return
        owner.add(pod, self.loop.now)
        if pod.pod_group is not None:  # a new member may complete its gang
            for s in self.schedulers:
                s.cluster_changed(self.loop.now)
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
        verdict = admit([self.records[k].pod for k in keys], free_by_node, labels)
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

    def _kubelet_admit(self, rec: PodRecord) -> None:
        """A pod with ``spec.nodeName`` is admitted by that node's kubelet if it fits."""
        pod = rec.pod
        name = pod.node_name or ""
        if name not in self.state.index:
            rec.message = f"node {name} does not exist; the pod stays Pending"
            return
        i = self.state.index[name]
        short = self.state.shortfall(pod, i)
        if short:
            r = next(iter(short))
            col = self.state.res_index.get(r)
            used = int(self.state.requested[i, col]) if col is not None else 0
            capacity = int(self.state.alloc[i, col]) if col is not None else 0
            self._set_phase(rec, "Failed")
            rec.reason, rec.finished_s, rec.node = f"OutOf{r}", self.loop.now, name
            rec.message = (
                f"Pod was rejected: Node didn't have enough resource: {r}, requested: "
                f"{pod.requests.get(r, 1)}, used: {used}, capacity: {capacity}"
            )
            rec.enter(self.loop.now, "failed")
            return
        self.state.assign(pod, i, self.loop.now)
        self._bound(rec, name, self.ledger.allocate(pod, name))  # the kubelet's device plugin

    def _bound(self, rec: PodRecord, node: str, devices: list[Unit]) -> None:
        """The pod is bound with its device units (``devices``), then its start chain: image pull
        (per node, one at a time, cached), then the container runs, reads its model from shared
        storage (fair share of the bandwidth), warms up, and is ready."""
        now = self.loop.now
        rec.node, rec.bound_s, rec.message = node, now, None
        rec.devices = devices
        if rec.devices:
            rec.gpu_share = sum(u.share for u in rec.devices)
        if self.autoscaler.keeps_warm:  # a pod on a warm node uses it up: the pool refills
            self.autoscaler.arm()
        b = rec.pod.behavior
        if b.image_size_bytes:
            puller = self.pullers.setdefault(node, ImagePuller(self.settings.registry_bandwidth))
            done = puller.request(now, b.image or rec.pod.key, b.image_size_bytes)
            if done > now:
                rec.enter(now, "image_pull")
                token = rec.token
                self.loop.at(done, Priority.COMPLETION, lambda: self._container_started(rec, token))
                return
        self._container_started(rec, rec.token)

    def _container_started(self, rec: PodRecord, token: int) -> None:
        if token != rec.token or rec.terminating:
            return
        now = self.loop.now
        rec.running_s = now
        if rec.phase != "Running":
            self._set_phase(rec, "Running")
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
        container with CrashLoopBackOff's delay (10 s doubling to 5 min) and it tries again."""
        devices = self.ledger.nodes.get(rec.node or "")
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
        rec.enter(self.loop.now, "crashed")
        if rec.pod.restart_policy == "Never":
            rec.running_s = None
            self._set_phase(rec, "Failed")
            rec.reason, rec.finished_s = "OOMKilled", self.loop.now
            self._release(rec)
            self._owner_finished(rec.pod, succeeded=False)
            self.cluster_changed()
            return True
        rec.reason = "CrashLoopBackOff"
        rec.restarts += 1
        delay = min(10.0 * 2 ** (rec.restarts - 1), 300.0)
        token = rec.token
        rec.running_s = None
        self.loop.at(self.loop.now + delay, Priority.COMPLETION, lambda: self._container_started(rec, token))
        return True

    def _release(self, rec: PodRecord) -> None:
        self.state.unassign(rec.pod.key)  # its device units go back with it (gpus.ledger)

    def _storage_reschedule(self) -> None:
        self._storage_token += 1
        token = self._storage_token
        nxt = self.storage.next_completion()
        if nxt is not None:
            self.loop.at(nxt.time_s, Priority.COMPLETION, lambda: self._storage_tick(token))

    def _storage_tick(self, token: int) -> None:
        if token != self._storage_token:
            return
        for done in self.storage.advance(self.loop.now):
            self._model_loaded(self.records[done.key])
        self._storage_reschedule()

    def _model_loaded(self, rec: PodRecord) -> None:
        now = self.loop.now
        spec = rec.pod.behavior.warmup
        if spec is not None:
            seconds = parse_duration_spec(spec).sample(self.start_rng)
            if seconds > 0:
                rec.enter(now, "warmup")
                token = rec.token
                self.loop.at(now + seconds, Priority.COMPLETION, lambda: self._warm(rec, token))
                return
        rec.enter(now, "starting")
        self._ready(rec)

    def _warm(self, rec: PodRecord, token: int) -> None:
        if token == rec.token and not rec.terminating:
            self._ready(rec)

    def _gang(self, rec: PodRecord) -> tuple[int, list[PodRecord]] | None:
        """(minMember, members) of the pod's gang, or None for a pod without a PodGroup."""
        group = self.gangs.group_of(rec.pod)
        if group is None:
            return None
        return group.min_member, [self.records[k] for k in sorted(self.gangs.members.get(group.key, ()))]

    def _ready(self, rec: PodRecord) -> None:
        rec.ready = True
        gang = self._gang(rec)
        if gang is None:
            self._work(rec)
            return
        rec.enter(self.loop.now, "gang_wait")
        min_member, members = gang
        if sum(1 for m in members if m.counts_for_gang) >= min_member:
            starting = [
                m for m in members if m.ready and m.phase == "Running" and not m.working and not m.terminating
            ]
            self._stretch_for_placement(members)
            for m in starting:
                self._work(m)

    def _stretch_for_placement(self, members: list[PodRecord]) -> None:
        """The ring over the gang's members stretches their compute (``placement_quality``)."""
        placed = [m for m in members if m.node is not None and m.phase == "Running" and m.pod.gpus > 0]
        if len(placed) < 2:
            return
        first = (
            self.state.nodes[self.state.index[placed[0].node or ""]]
            if placed[0].node in self.state.index
            else None
        )
        gpus_per_node = first.allocatable.get(GPU, 0) if first is not None else 0
        product = first.labels.get("nvidia.com/gpu.product") if first is not None else None
        ring = ring_placement([(m.node or "", m.pod.gpus) for m in placed], gpus_per_node, product)
        for m in placed:
            m.ring = ring
            duration = m.pod.behavior.duration_s
            if duration is not None and m.pod.behavior.consumes is None and not m.working:
                m.task_s = duration * ring.stretch

    def _work(self, rec: PodRecord) -> None:
        now = self.loop.now
        if rec.pod.behavior.consumes is not None and not self._take_item(rec):
            return
        if not rec.working:
            self.working_gpus += self._working_change(rec, +1)
        rec.working = True
        if rec.working_s is None:
            rec.working_s = now
        rec.enter(now, "working")
        rec.work_started_at = now
        remaining = rec.remaining_s
        if remaining is not None:
            rec.token += 1
            token = rec.token
            self.loop.at(now + remaining, Priority.COMPLETION, lambda: self._complete(rec, token))

    # -- what workload autoscalers read and change -------------------------------------------
    def deployment(self, key: str) -> DeploymentController | None:
        controller = self.controllers.get(f"Deployment/{key}")
        return controller if isinstance(controller, DeploymentController) else None

    def job(self, key: str) -> JobController | None:
        controller = self.controllers.get(f"Job/{key}")
        return controller if isinstance(controller, JobController) else None

    def start_job(self, job: Job) -> None:
        self._start(job)

    def list_length(self, name: str) -> int:
        """What a ``redis`` trigger reads: items queued on the list (popped ones are gone)."""
        work_list = self.work_lists.get(name)
        return len(work_list.queued) if work_list is not None else 0

    def traffic_metric(self, rec: PodRecord, name: str) -> float | None:
        traffic = self.traffic.get(f"{rec.pod.namespace}/{rec.pod.owner.name}") if rec.pod.owner else None
        return traffic.metric(name) if traffic is not None else None

    def scale_deployment(self, key: str, replicas: int) -> None:
        """Change ``spec.replicas``; on scale-down the ReplicaSet deletes unscheduled pods first, then
        pods not yet ready, then the newest (``controller.ActivePodsWithRanks``), with reason ScaledDown."""
        controller = self.deployment(key)
        if controller is None:
            return
        controller.replicas = replicas
        surplus = len(controller.active) - replicas
        if surplus > 0:
            ranked = sorted(
                (self.records[k] for k in controller.active),
                key=lambda r: (r.bound_s is not None, r.ready, -(r.created_s), r.pod.name),
            )
            for rec in ranked[:surplus]:
                controller.active.discard(rec.pod.key)
                self._delete(rec, "ScaledDown")
        self._reconcile(controller)

    def _delete_if_present(self, rec: PodRecord) -> None:
        if rec.deleted_s is None and rec.finished_s is None and self.records.get(rec.pod.key) is rec:
            self._delete(rec, "Deleted")

    def _delete(self, rec: PodRecord, reason: str) -> None:
        """Delete a pod: an unscheduled one goes at once, a bound one gets SIGTERM and its grace period."""
        if rec.pod.key in self.state.assignments:
            self._evict(rec.pod.key, reason)
            return
        now = self.loop.now
        for s in self.schedulers:
            s.forget(rec.pod.key)
        self.gangs.remove_pod(rec.pod)
        self.pending -= 1
        self.pending_keys.discard(rec.pod.key)
        rec.reason, rec.deleted_s = reason, now
        rec.enter(now, "deleted")

    # -- queue consumers ---------------------------------------------------------------------
    def _list(self, name: str) -> WorkList:
        return self.work_lists.setdefault(name, WorkList(name))

    def _take_item(self, rec: PodRecord) -> bool:
        """A consumer pops an item to work on; with none, a Deployment's worker idles and a Job's
        pod exits at once. Returns whether it has an item."""
        work_list = self._list(rec.pod.behavior.consumes or "")
        item = work_list.pop(rec.pod.key)
        if item is not None:
            rec.consumer_idle = False
            rec.task_s, rec.done_s = item.work_s, item.done_s
            return True
        if rec.pod.owner is not None and rec.pod.owner.kind == "Deployment":
            if not rec.consumer_idle:
                rec.consumer_idle = True
                work_list.idle.append(rec.pod.key)
                rec.enter(self.loop.now, "idle")
        else:
            self._succeed(rec)
        return False

    def feed(self, list_name: str, count: int, work_s: float) -> None:
        """Items arrive on a list; idle workers take them at once."""
        work_list = self._list(list_name)
        for _ in range(count):
            work_list.push(work_s)
        while work_list.queued and work_list.idle:
            rec = self.records[work_list.idle.pop(0)]
            if rec.consumer_idle and rec.phase == "Running" and not rec.terminating:
                self._work(rec)

    def _stop_work(self, rec: PodRecord, terminated: bool) -> None:
        """The pod stops computing; work since its last checkpoint is lost (DESIGN, Gangs)."""
        now = self.loop.now
        if rec.consumer_idle and terminated:
            rec.consumer_idle = False
            self._list(rec.pod.behavior.consumes or "").idle.remove(rec.pod.key)
        if rec.working:
            rec.token += 1
            self.working_gpus -= self._working_change(rec, -1)
            lost = rec.stop_working(now, sigterm=terminated)
            self.work_lost_gpu_s += lost * rec.gpu_share
            consumes = rec.pod.behavior.consumes
            if terminated and consumes is not None and rec.pod.key in self._list(consumes).in_progress:
                self._list(consumes).interrupt(rec.pod.key, rec.done_s, rec.pod.behavior.requeue_on_sigterm)
            if terminated:
                rec.disruptions.append(now)
        rec.ready = False
        rec.enter(now, "terminating" if terminated else "gang_wait")

    def _gang_member_gone(self, rec: PodRecord) -> None:
        """A working gang below minMember stops whole and restarts from its last checkpoint."""
        gang = self._gang(rec)
        if gang is None:
            return
        min_member, members = gang
        if sum(1 for m in members if m.counts_for_gang) < min_member:
            for m in members:
                if m.working:
                    self._stop_work(m, terminated=False)
                    m.ready = m.phase == "Running" and not m.terminating

    def _evict(self, key: str, reason: str) -> None:
        """Delete a running pod: SIGTERM, then its resources are freed after the grace period."""
        rec = self.records.get(key)
        assignment = self.state.assignments.get(key)
        if rec is None or assignment is None or rec.terminating:
            return
        assignment.terminating = True
        rec.terminating = True
        if rec.bound_s is None:  # assumed (waiting at Permit): nothing runs yet
            return
        if rec.pod.key in self.storage:
            self.storage.remove(self.loop.now, rec.pod.key)
            self._storage_reschedule()
        self._stop_work(rec, terminated=True)
        self._gang_member_gone(rec)
        grace = rec.pod.termination_grace_s
        self.loop.at(self.loop.now + grace, Priority.COMPLETION, lambda: self._terminated(rec, reason))

    def _preempt(self, key: str) -> None:
        """``prepareCandidate``: a victim waiting at Permit is rejected back to the queue (its gang's
        other waiting members with it); any other victim is deleted with its grace period."""
        rejected = [o for s in self.schedulers for o in s.reject_waiting(key, self.loop.now)]
        for outcome in rejected:
            self._apply(outcome)
        if rejected:  # their GPUs are free for the preemptor: unlike a gang letting go, a material
            # change, made known once this scheduling pass is over (as a victim's deletion would be)
            self.loop.at(self.loop.now, Priority.COMPLETION, self.cluster_changed)
        else:
            self._evict(key, "Preempted")

    def _terminated(self, rec: PodRecord, reason: str) -> None:
        if rec.deleted_s is not None:  # already gone with its node
            return
        now = self.loop.now
        self._set_phase(rec, "Failed")
        rec.reason, rec.finished_s, rec.deleted_s = reason, now, now
        rec.enter(now, "deleted")
        self.state.unassign(rec.pod.key)
        self.gangs.remove_pod(rec.pod)
        for s in self.schedulers:
            s.forget(rec.pod.key)
        self._owner_finished(rec.pod, succeeded=False)
        self.cluster_changed()

    def _working_change(self, rec: PodRecord, sign: int) -> float:
        """GPU-equivalents that start (``sign`` +1) or stop (-1) working with this pod: a device of a
        ResourceClaim shared by several working pods counts once."""
        if not rec.devices:
            return rec.gpu_share
        change = 0.0
        for unit in rec.devices:
            key = (rec.node or "", unit.id, "" if rec.pod.resource_claims else rec.pod.key)
            before = self._working_units[key]
            self._working_units[key] = before + sign
            if not self._working_units[key]:
                del self._working_units[key]
            if (before == 0) != (before + sign == 0):
                change += unit.share
        return change

    def _complete(self, rec: PodRecord, token: int) -> None:
        if token != rec.token or not rec.working:
            return
        self.working_gpus -= self._working_change(rec, -1)
        rec.stop_working(self.loop.now)
        consumes = rec.pod.behavior.consumes
        if consumes is not None:
            self._list(consumes).finish(rec.pod.key)
            if rec.pod.owner is not None and rec.pod.owner.kind == "Deployment":
                rec.done_s = 0.0
                self._work(rec)  # the worker takes the next item, or idles
                return
        self._succeed(rec)

    def _succeed(self, rec: PodRecord) -> None:
        now = self.loop.now
        if rec.working:
            self.working_gpus -= self._working_change(rec, -1)
        rec.working = False
        self._set_phase(rec, "Succeeded")
        rec.reason, rec.finished_s = "Completed", now
        rec.enter(now, "succeeded")
        self.state.unassign(rec.pod.key)
        self._owner_finished(rec.pod, succeeded=True)
        self.cluster_changed()

    def _owner_finished(self, pod: Pod, succeeded: bool) -> None:
        suspended = self.kueue.pod_finished(pod)  # Kueue evicted its Job: suspended, not failed
        owner: OwnerRef | None = pod.owner
        if owner is None:
            return
        controller = self.controllers.get(f"{owner.kind}/{pod.namespace}/{owner.name}")
        if controller is None:
            return
        if suspended:
            controller.suspended(pod)
        elif not controller.finished(pod, succeeded):
            return
        self.loop.at(self.loop.now, Priority.CONTROLLER, lambda: self._reconcile(controller))

    # -- GPUs as devices -------------------------------------------------------------------
    def devices_of(self, node: str) -> NodeDevices:
        return self.ledger.of(node)

    def _gpu_weights(self) -> npt.NDArray[np.float64]:
        """GPU-equivalents of one unit of each resource on each node (DESIGN: a MIG instance counts
        its compute share, a time-slicing replica 1/replicas), and each node's physical GPUs."""
        key = (self.state.size, len(self.state.resources), self.state.static_version, self.ledger.version)
        if key != self._weights_key:
            weights = np.zeros(self.state.alloc.shape, dtype=np.float64)
            physical = np.zeros(self.state.size, dtype=np.float64)
            for i in self.state.active_indices().tolist():
                devices = self.devices_of(self.state.nodes[i].name)
                for resource, units in devices.units.items():
                    col = self.state.res_index.get(resource)
                    if col is not None and units:
                        weights[i, col] = units[0].share
                physical[i] = devices.gpus
            self._weights, self._physical, self._weights_key = weights, physical, key
        return self._weights

    def gpus_allocated_per_node(self) -> npt.NDArray[np.float64]:
        """GPU-equivalents requested on each node (fractional shares by their size), and the GPUs
        allocated to ResourceClaims there."""
        held: npt.NDArray[np.float64] = (self.state.requested * self._gpu_weights()).sum(axis=1)
        if self.state.shares is not None:
            held = held - self.state.shares.unused_per_node()
        if self.state.dra is not None:
            held = held + self.dra_gpus_per_node(allocated=True)
        return held

    def gpus_allocated(self) -> float:
        return float(self.gpus_allocated_per_node().sum())

    def gpus_total(self) -> float:
        """Physical GPUs on nodes whose devices have registered (GPU allocatable non-zero, or GPUs
        published as DRA ResourceSlices)."""
        registered = (self.state.alloc * (self._gpu_weights() > 0)).sum(axis=1) > 0
        dra = self.dra_gpus_per_node()
        return float(((self._physical * registered + dra) * self.state.active).sum())

    def _dra_gpus(self) -> dict[DeviceID, str]:
        """Whole GPUs published as DRA devices, each with its node (kept while the slices stand)."""
        dra = self.state.dra
        if dra is None:
            return {}
        slices, seen = dra.objects.slices, self._dra_gpus_key
        if seen is None or seen[0] is not slices or seen[1] != len(slices):
            self._dra_gpus_index, self._dra_gpus_key = node_gpus(slices), (slices, len(slices))
        return self._dra_gpus_index

    def dra_gpus_per_node(self, allocated: bool = False) -> npt.NDArray[np.float64]:
        """Whole GPUs each node publishes as DRA devices; ``allocated``: those allocated to claims
        (a claim shared by several pods counts its devices once)."""
        out = np.zeros(self.state.size, dtype=np.float64)
        index = self._dra_gpus()
        if index and self.state.dra is not None:
            for device in self.state.dra.allocated_devices() if allocated else index:
                i = self.state.index.get(index.get(device, ""))
                if i is not None:
                    out[i] += 1
        return out

    # -- nodes -----------------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        """A launched node joins (kubelet Ready); DaemonSets put their pods on it."""
        self.state.add_node(node)
        self.nodes[node.name].ready_s = self.loop.now
        for controller in list(self.controllers.values()):
            for pod in controller.node_added(node):
                self._create(pod)
        self.cluster_changed()

    def node_gpus_ready(self, node: Node) -> None:
        """The device plugin registered: the node's GPUs become allocatable."""
        self.state.set_allocatable(node.name, dict(node.allocatable))
        self._publish_slices(node)
        self.ledger.registered(node)
        self.nodes[node.name].gpu_ready_s = self.loop.now
        self.cluster_changed()

    def _publish_slices(self, node: Node) -> None:
        """A node of a pool with ``publishResourceSlices`` publishes its GPUs for DRA."""
        pool = self.pools.get(node.pool or "")
        if pool is not None and pool.pool.dra_gpus is not None and self.state.dra is not None:
            self.state.dra.publish(pool.slices_for(node.name))

    def delete_node(self, name: str) -> None:
        """The node goes away; whatever still runs there ends with it."""
        now = self.loop.now
        if self.state.dra is not None:
            self.state.dra.withdraw(name)
        for key in (
            sorted(a.pod.key for a in self.state.pods_on[self.state.index[name]].values())
            if name in self.state.index
            else []
        ):
            rec = self.records[key]
            self._stop_work(rec, terminated=True)
            self._gang_member_gone(rec)
            self._terminated(rec, "NodeDeleted")
        if name in self.state.index:
            self.state.remove_node(name)
        self.nodes[name].deleted_s = now
        pool = self.pools.get(self.nodes[name].pool or "")
        if pool is not None:
            pool.nodes.discard(name)
            pool.warm.discard(name)
        self.node_billing_changed()
        self.cluster_changed()

    def kueue_evict(self, rec: PodRecord) -> None:
        """Kueue evicted the pod's workload: a bound pod gets SIGTERM, any other goes at once."""
        bound = rec.pod.key in self.state.assignments
        self._delete(rec, "Preempted")
        if not bound:
            self._owner_finished(rec.pod, succeeded=False)

    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]:
        """Each PodDisruptionBudget with its ``disruptionsAllowed``, as the disruption controller
        (``pkg/controller/disruption``) computes it: healthy (Running, ready, not terminating)
        covered pods beyond what it requires of the covered pods that exist."""
        budgets = self.scenario.budgets
        if not budgets:
            return []
        live = [r for r in self.records.values() if r.deleted_s is None and r.phase in ("Pending", "Running")]
        out = []
        for budget in budgets:
            covered = [r for r in live if budget.covers(r.pod)]
            healthy = sum(1 for r in covered if r.phase == "Running" and r.ready and not r.terminating)
            out.append((budget, budget.allowed(healthy, len(covered))))
        return out

    def computes_on_gpus(self, pod_key: str) -> bool:
        rec = self.records.get(pod_key)
        return rec is not None and rec.working and (rec.pod.gpus > 0 or rec.gpu_share > 0)

    def daemon_pod_keys(self) -> set[str]:
        return self.daemon_pods

    def drain(self, name: str) -> float:
        """Cordon the node and evict its pods (not DaemonSet pods); returns the longest grace period."""
        self.state.cordon(name)
        grace = 0.0
        for a in sorted(self.state.pods_on[self.state.index[name]].values(), key=lambda a: a.pod.key):
            if a.pod.owner is not None and a.pod.owner.kind == "DaemonSet":
                continue
            grace = max(grace, a.pod.termination_grace_s)
            self._evict(a.pod.key, "Evicted")
        return grace

    def pod_waits_for_node(self, key: str, provisioning: bool) -> None:
        """Attribute a pending pod's wait to node provisioning (a node was launched for it) or not."""
        rec = self.records.get(key)
        if rec is None or rec.bound_s is not None or rec.deleted_s is not None:
            return
        state = "provisioning" if provisioning else "pending"
        if rec.log[-1][1] != state:
            rec.enter(self.loop.now, state)

    def node_billing_changed(self) -> None:
        self._integrate(self.loop.now)
        """A node was launched or deleted: what is billed, and the GPUs provisioned, change."""
        alive = [r for r in self.nodes.values() if r.deleted_s is None]
        self.billed_price_per_hour = sum(
            self.pools[r.pool].pool.price_per_hour for r in alive if r.pool in self.pools
        )
        self.provisioned_gpus = sum(
            self._template_gpus(r.pool) if r.pool in self.pools else self.devices_of(r.name).gpus
            for r in alive
        )
        dra_gpus = self.dra_gpus_per_node()  # a pool's DRA GPUs count from the launch, as its template's
        for r in alive:
            pool = self.pools[r.pool].pool if r.pool in self.pools else None
            if pool is not None and pool.dra_gpus is not None:
                self.provisioned_gpus += pool.dra_gpus[1]
            elif r.name in self.state.index:
                self.provisioned_gpus += int(dra_gpus[self.state.index[r.name]])

    def _template_gpus(self, pool: str) -> int:
        """Physical GPUs of one node of the pool (not time-slicing replicas; MIG GPUs counted whole)."""
        gpus = self._pool_gpus.get(pool)
        if gpus is None:
            gpus = self._pool_gpus[pool] = NodeDevices.of(self.pools[pool].pool.template).gpus
        return gpus

    def _integrate(self, t: float) -> None:
        """GPU-seconds and cost accumulate between events from the state in force."""
        dt = t - self._integrated_to
        if dt <= 0:
            return
        self._integrated_to = t
        self.gpu_seconds["provisioned"] += dt * self.provisioned_gpus
        self.gpu_seconds["allocated"] += dt * self.gpus_allocated()
        self.gpu_seconds["working"] += dt * self.working_gpus
        self.cost += dt / 3600 * self.billed_price_per_hour

    def cluster_changed(self, material: bool = True) -> None:
        """A node came or went, or a pod left: pending pods are retried and the autoscaler looks.

        A gang's own assume-and-release (Coscheduling rejecting its waiting pods) is not
        *material*: it cannot make another attempt succeed, so it does not keep a stuck
        run going (``_futile``)."""
        now = self.loop.now
        self.material_changes += material
        self.kueue.settle()
        for group_key in sorted(self.topology_held):
            self._admit_by_topology(group_key)
        for s in self.schedulers:
            s.cluster_changed(now)
        self._request_scheduling(now)
        self.autoscaler.arm()

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
                self._apply(outcome)
        self._last_pass = (self.material_changes, self.state.static_version, len(self.records))
        times = [nt for s in self.schedulers if (nt := s.next_time()) is not None]
        if times:
            self._request_scheduling(max(min(times), now))

    def _apply(self, outcome: Outcome) -> None:
        rec = self.records[outcome.pod.key]
        if outcome.kind == "bound" and outcome.node is not None:
            self._bound(rec, outcome.node, list(outcome.devices))
        elif outcome.kind == "preempting":
            for victim in outcome.victims:
                self._preempt(victim)
        elif outcome.kind in ("unschedulable", "rejected"):
            rec.message = outcome.message
            self.autoscaler.arm()
            if outcome.kind == "rejected":
                self.cluster_changed(material=False)

    def _futile(self) -> bool:
        """Only scheduler retries remain and nothing changed since the last pass: they would fail alike."""
        if self.loop.pending(Priority.SCHEDULING) or any(s.waiting or s.has_work() for s in self.schedulers):
            return False
        if self.workload_autoscalers.active():  # KEDA cooldowns and HPA windows act on time alone
            return False
        if self.autoscaler.armed_at is not None:  # cluster-autoscaler still has something to look at
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
            self._sampled_key, self._sampled = version, (self.gpus_total(), self.gpus_allocated())
        s["gpus_total"].append(float(self._sampled[0]))
        s["gpus_allocated"].append(float(self._sampled[1]))
        s["gpus_working"].append(float(self.working_gpus))
        s["pods_pending"].append(float(self.pending))
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
        for key in self._scaled_workloads():
            series = self.replicas_timeline.setdefault(key, [])
            kind, rest = key.split("/", 1)
            if kind == "Deployment":
                controller = self.deployment(rest)
                series.append(float(controller.replicas if controller is not None else 0))
            else:
                series.append(float(self.workload_autoscalers.active_jobs(rest)))

    def _scaled_workloads(self) -> list[str]:
        wa = self.workload_autoscalers
        return (
            [f"Deployment/{r.target}" for r in wa.hpas]
            + [f"Deployment/{r.target}" for _, _, r in wa.scaled_objects]
            + [f"ScaledJob/{key}" for key in wa.jobs_of]
        )

    def _advance_traffic(self, t: float) -> None:
        for key, traffic in self.traffic.items():
            controller = self.deployment(key)
            serving = (
                0 if controller is None else sum(1 for k in controller.active if self.records[k].working)
            )
            traffic.advance(t, serving)

    def _idle(self) -> bool:
        """Nothing left to do: no pending or running pods, and no completion, arrival or controller event."""
        return self.pending == 0 and self.running == 0 and not self.loop.pending(Priority.SCHEDULING)

    def run(self, progress: Callable[[float, float], None] | None = None) -> None:
        limit = self.settings.duration_s if self.settings.duration_s is not None else MAX_DURATION_S
        self._schedule_arrivals()
        self.autoscaler.arm(0.0)
        for rt in self.pools.values():
            for name in sorted(rt.nodes):
                self.autoscaler.expect_reclaim(rt, name)
        self.workload_autoscalers.start()
        self.mig_managers.start()
        for traffic in self.traffic.values():
            for at, _ in traffic.spec.rps:
                self.loop.at(at, Priority.ARRIVAL, lambda: None)  # a change of load is an event
        while (t := self.loop.peek_time()) is not None and t <= limit:
            if self.settings.duration_s is None and self._idle():
                break
            if self._futile():
                break
            self._sample_until(t)
            self._integrate(t)
            self._advance_traffic(t)
            self.loop.step()
            if progress is not None:
                progress(self.loop.now, limit)
        self.end_time = self.loop.now if self.settings.duration_s is None and self._idle() else limit
        self._sample_until(self.end_time)
        self._sample(self.end_time)
        self._integrate(self.end_time)
