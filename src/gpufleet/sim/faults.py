"""Faults and the cluster's response to them, as the NVIDIA device plugin, a health checker and
Kubernetes give it (``model.faults`` says which response each fault class gets).

A fault happens at a scenario's given time or at random: each GPU node draws its next fault from the
rates of its GPU model (an exponential time, the sum of the class rates times its GPUs; the class by
its share of that sum; the GPU, or MIG instance, uniformly), from the run's seed. What follows:

- ``gpu`` (an XID a GPU reset clears): the processes on that GPU die at once (their pods fail, reason
  ``Error``; their controllers make new ones; a gang below ``minMember`` stops whole). When the health
  check notices (``response.detection``; NVML XID events reach the device plugin at once,
  k8s-device-plugin ``internal/rm/health.go``) the device plugin reports the GPU Unhealthy: the kubelet's
  allocatable drops by its units and nothing is placed on it until the GPU reset (``response.gpuReset``).
  On a MIG node the fault takes one MIG instance (``gpu`` counts the instances in resource order).
  A GPU published as a DRA device (``gpu`` counts the node's whole GPUs in its ResourceSlices) is tainted
  NoSchedule by the NVIDIA DRA driver's health check instead (``gpus.dra.state``); the pods whose claims
  hold it fail.
- ``reboot`` (XID 79, a driver crash, a NIC): the node goes down with its kubelet: its pods' containers
  die, and the control plane learns of it as ``sim.unreachable_nodes`` says (NotReady after the node
  monitor grace period, tainted unreachable, its pods deleted after what they tolerate, Terminating until
  the kubelet is back; a scheduled fault's ``outOfService``: a user taints it
  ``node.kubernetes.io/out-of-service`` that long after, ``model.out_of_service``); once noticed a health
  checker (NPD, the GPU Operator's health monitor, DCGM) cordons it (cluster-autoscaler removes an
  unready node unneeded for ``--scale-down-unready-time``);
  after ``response.reboot`` its kubelet is back, Ready, uncordoned, with healthy GPUs: the pods still
  there start again or fail by their ``restartPolicy``.
- ``replace`` (a row-remap failure, a GPU to be replaced): the pods on that GPU fail; once noticed the
  node is cordoned and drained for repair as ``kubectl drain`` does (evictions that PodDisruptionBudgets
  may refuse, retried every 5 s; SIGTERM and the grace period), then deleted.
- ``lost`` (the node is gone): its kubelet stops as for ``reboot``, and a pool's node (its instance gone)
  has its Node deleted by the cloud node lifecycle controller once NotReady; PodGC then deletes its pods
  (``sim.unreachable_nodes``). A node of no pool stays NotReady.
- ``hang`` (an NCCL hang, a GPU hang with no XID): the processes on the GPU stop computing and keep their
  GPUs; only their livenessProbe notices and has the kubelet restart them (``sim.hung_processes``).
  After ``replace`` or ``lost``, a pool with ``max`` grows again through cluster-autoscaler when pods are
  pending; a pool without it gets a new node (for a drain, at once, so that the pods have somewhere to
  go), as a managed node group replaces an unhealthy instance.

Each fault is recorded (``FaultRecord``): when it was noticed, the pods hit, the GPUs out of service
and until when, and the work lost since the checkpoints (of the pods hit and of their gangs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import numpy as np

from gpufleet.control.clock import Clock, Priority
from gpufleet.gpus.devices import NodeDevices, Unit
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.dra import DeviceID
from gpufleet.model.dra_slices import node_gpus
from gpufleet.model.faults import CLASSES, FaultModel, ScheduledFault
from gpufleet.model.node import Taint
from gpufleet.scheduling.events import RESOURCE_SLICE_UPDATE, ClusterChange, node_before, node_updated
from gpufleet.sim.cluster import InMemoryCluster
from gpufleet.sim.hung_processes import HungProcesses
from gpufleet.sim.pod_lifecycle import PodLifecycle
from gpufleet.sim.unreachable_nodes import NodeDown, UnreachableNodes

PRODUCT_LABEL = "nvidia.com/gpu.product"
#: kubectl drain waits this long before evicting again a pod a PodDisruptionBudget protects
#: (``k8s.io/kubectl/pkg/drain``: ``evictPods`` retries after 5 seconds on 429 TooManyRequests)
EVICTION_RETRY_S = 5.0


class FaultHost(Protocol):
    @property
    def work_lost_gpu_s(self) -> float: ...

    def cluster_changed(self, changes: Sequence[ClusterChange], material: bool = True) -> None: ...

    def delete_node(self, name: str) -> None: ...

    def launch(self, group: str, for_pods: tuple[str, ...], warm: bool) -> str | None: ...

    def reclaimable(self, name: str) -> bool: ...

    def evict(self, key: str, reason: str) -> None: ...

    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]: ...

    def set_node_taints(self, name: str, taints: tuple[Taint, ...]) -> None: ...


@dataclass
class FaultRecord:
    at_s: float
    node: str
    kind: str
    origin: str  # "scheduled" or "random"
    gpu: int | None = None
    xid: int | None = None
    pool: str | None = None
    detected_s: float | None = None
    pods_hit: list[str] = field(default_factory=list)
    gpus_out: float = 0.0  # GPU-equivalents out of service until recovery
    work_lost_gpu_s: float = 0.0
    recovered_s: float | None = None
    drained_s: float | None = None  # a node drained for repair: when its last pod left
    note: str | None = None  # why nothing happened (no such node, no such GPU)
    down: NodeDown | None = None  # a node down (reboot, lost): what the control plane did about it

    def as_dict(self, end_s: float) -> dict[str, Any]:
        until = self.recovered_s if self.recovered_s is not None else end_s
        down = self.down or NodeDown(False)
        return {
            "at_s": self.at_s,
            "node": self.node,
            "kind": self.kind,
            "response": CLASSES[self.kind][0],
            "origin": self.origin,
            "gpu": self.gpu,
            "xid": self.xid,
            "detection_s": None if self.detected_s is None else round(self.detected_s - self.at_s, 6),
            "pods_hit": list(self.pods_hit),
            "gpus_out": round(self.gpus_out, 6),
            "gpu_hours_lost": round(self.gpus_out * max(until - self.at_s, 0.0) / 3600, 6),
            "work_lost_gpu_hours": round(self.work_lost_gpu_s / 3600, 6),
            "time_to_recovery_s": None
            if self.recovered_s is None
            else round(self.recovered_s - self.at_s, 6),
            "drain_s": None
            if self.drained_s is None or self.detected_s is None
            else round(self.drained_s - self.detected_s, 6),
            "note": self.note,
            "not_ready_s": self._after(down.not_ready_s),
            "tainted_s": self._after(down.tainted_s),
            "pods_evicted_s": self._after(down.evicted_s),
            "node_deleted_s": self._after(down.node_deleted_s),
            "pods_collected_s": self._after(down.collected_s),
            "pods_ended_s": self._after(down.pods_ended_s),
            "out_of_service_s": self._after(down.out_of_service_s),
        }

    def _after(self, t: float | None) -> float | None:
        return None if t is None else round(t - self.at_s, 6)


class FaultInjector:
    def __init__(
        self,
        model: FaultModel,
        clock: Clock,
        cluster: InMemoryCluster,
        lifecycle: PodLifecycle,
        host: FaultHost,
        rng: np.random.Generator,
        fixed_pools: frozenset[str],
        unreachable: UnreachableNodes,
    ):
        """``fixed_pools``: the pools without ``max``, whose lost nodes are replaced at once;
        ``unreachable``: the node lifecycle controller and PodGC, which learn of a kubelet stopped."""
        self.model = model
        self.clock = clock
        self.cluster = cluster
        self.lifecycle = lifecycle
        self.host = host
        self.rng = rng
        self.fixed_pools = fixed_pools
        self.records: list[FaultRecord] = []
        self._epoch: dict[str, int] = {}  # moves when a node goes down: what was armed for it is void
        self._healthy: dict[str, dict[str, int]] = {}  # a node's allocatable with every device healthy
        self._down: dict[str, FaultRecord] = {}  # nodes rebooting or about to be deleted
        self._cordoned: set[str] = set()  # nodes this health checker cordoned
        self._awaiting: dict[str, list[FaultRecord]] = {}  # pool -> replacements not yet GPU-ready
        #: node -> the physical GPUs the device plugin reports Unhealthy, awaiting their reset (by fault)
        self._out: dict[str, dict[int, int]] = {}
        self.hung = HungProcesses(clock, lifecycle)
        self.unreachable = unreachable

    # -- arming --------------------------------------------------------------------------------
    def start(self) -> None:
        for fault in self.model.faults:
            self.clock.at(fault.at_s, Priority.COMPLETION, partial(self._fault, fault, "scheduled"), True)
        state = self.cluster.state
        for i in state.active_indices().tolist():
            self.node_joined(state.nodes[i].name)

    def node_joined(self, name: str) -> None:
        """A node's GPUs registered as it joined: a replacement awaited in its pool has come, and its
        random faults start."""
        pool = self.cluster.nodes[name].pool if name in self.cluster.nodes else None
        waiting = self._awaiting.get(pool or "")
        if waiting:
            waiting.pop(0).recovered_s = self.clock.now
        self._arm(name, self._epoch.setdefault(name, 0))

    def _arm(self, name: str, epoch: int) -> None:
        """The node's next random fault (void if the node goes down or away before: its epoch moves)."""
        state = self.cluster.state
        node = state.nodes[state.index[name]]
        gpus = self.cluster.devices_of(name).gpus or len(self._dra_gpus(name))
        rates = self.model.rates_for(node.labels.get(PRODUCT_LABEL))
        total = sum(rates.values()) * gpus
        if total > 0:
            at = self.clock.now + self.rng.exponential(3600 / total)
            self.clock.at(at, Priority.COMPLETION, partial(self._random, name, epoch, rates, gpus), True)

    def _random(self, name: str, epoch: int, rates: dict[str, float], gpus: int) -> None:
        if self._epoch.get(name) != epoch or name not in self.cluster.state.index:
            return
        kinds = sorted(rates)
        weights = np.array([rates[k] for k in kinds])
        kind = kinds[int(self.rng.choice(len(kinds), p=weights / weights.sum()))]
        devices = self.cluster.devices_of(name)
        mig = devices.sharing == "mig"  # the fault takes one MIG instance, any of them
        gpu = int(self.rng.integers(sum(map(len, devices.units.values())) if mig else gpus))
        self._fault(ScheduledFault(self.clock.now, name, kind, gpu), "random")
        if self._epoch.get(name) == epoch and name in self.cluster.state.index:  # still up: its next one
            self._arm(name, epoch)

    # -- a fault -------------------------------------------------------------------------------
    def _fault(self, fault: ScheduledFault, origin: str) -> None:
        now, name = self.clock.now, fault.node
        pool = self.cluster.nodes[name].pool if name in self.cluster.nodes else None
        rec = FaultRecord(now, name, fault.kind, origin, fault.gpu, fault.xid, pool)
        self.records.append(rec)
        if name not in self.cluster.state.index or name in self._down or not self.host.reclaimable(name):
            rec.note = f"node {name} is not in the cluster (or already going away) at this time"
            return
        response = CLASSES[fault.kind][0]
        if response == "hang":
            self._hang(rec, name, fault.gpu or 0)
            return
        self._epoch[name] = self._epoch.get(name, 0) + (response != "gpu")  # down: its armed faults void
        detect = now + self.model.response.detection_s
        if response == "gpu":
            units = self._units(name, fault.gpu or 0)
            gpus = [] if units else self._dra_gpus(name)
            if (fault.gpu or 0) < len(gpus):  # published as a DRA device
                rec.gpus_out = 1.0
                device = gpus[fault.gpu or 0]
                self._fail(rec, self._dra_holders(device))
                epoch = self._epoch.get(name, 0)
                self.clock.at(detect, Priority.COMPLETION, partial(self._dra_unhealthy, rec, device, epoch))
                return
            if not units:
                rec.note = f"node {name} has no GPU {fault.gpu or 0}"
                return
            rec.gpus_out = sum(u.share for u in units)
            self._fail(rec, self._holders(name, units))
            gpu, epoch = self._physical(name, units[0]), self._epoch.get(name, 0)
            unhealthy = partial(self._unhealthy, rec, units, gpu, epoch)
            self.clock.at(detect, Priority.COMPLETION, unhealthy)
            return
        rec.gpus_out = float(self.cluster.devices_of(name).gpus + len(self._dra_gpus(name)))
        self._down[name] = rec
        if response == "replace":  # the node still runs: the pods on the failed GPU die
            self._fail(rec, self._gpu_holders(name, fault.gpu or 0))
        else:  # the node is down (reboot) or gone (lost): its kubelet with it
            before = self.host.work_lost_gpu_s
            rec.pods_hit.extend(self._pods_on(name))
            rec.down = down = self.unreachable.stopped(name, response == "lost" and pool is not None)
            rec.work_lost_gpu_s += self.host.work_lost_gpu_s - before
            self.host.cluster_changed(())
            if fault.out_of_service_s is not None:  # a user taints it out-of-service
                taint = partial(self.unreachable.out_of_service, name, down)
                self.clock.at(now + fault.out_of_service_s, Priority.COMPLETION, taint)
        self.clock.at(detect, Priority.COMPLETION, partial(self._node_detected, rec, response))

    def _hang(self, rec: FaultRecord, name: str, gpu: int) -> None:
        """The processes on the GPU hang (no XID: the device plugin sees nothing); only a livenessProbe
        notices (``sim.hung_processes``): detection is the probe's."""
        records = self.lifecycle.records
        running = [k for k in self._gpu_holders(name, gpu) if records[k].running_s is not None]
        keys = [k for k in running if not records[k].hung]
        if not keys:
            rec.note = f"no process runs on GPU {gpu} of {name} at this time"
            return
        before = self.host.work_lost_gpu_s
        for key in keys:
            rec.pods_hit.append(key)
            rec.gpus_out += records[key].gpu_share
            self.hung.hang(records[key], rec)
        rec.work_lost_gpu_s += self.host.work_lost_gpu_s - before

    def _fail(self, rec: FaultRecord, keys: list[str]) -> None:
        """The processes of these pods die with the fault: work since their checkpoints is lost."""
        before = self.host.work_lost_gpu_s
        for key in keys:
            pod = self.lifecycle.records[key]
            where = f"GPU {rec.gpu} of {rec.node}" if CLASSES[rec.kind][0] == "gpu" else rec.node
            pod.message = f"{rec.kind}{f' (XID {rec.xid})' if rec.xid else ''} on {where}"
            self.lifecycle.failed(pod, "Error")
            rec.pods_hit.append(key)
        rec.work_lost_gpu_s += self.host.work_lost_gpu_s - before
        if keys:  # (their nodes given back, each told to the schedulers as it ended)
            self.host.cluster_changed(())

    def _units(self, name: str, index: int) -> list[Unit]:
        """The units of GPU ``index`` (a MIG node: its ``index``-th instance, in resource order)."""
        devices = self.cluster.devices_of(name)
        every = [u for resource in sorted(devices.units) for u in devices.units[resource]]
        if devices.sharing == "mig":
            return every[index : index + 1]
        return [u for u in every if u.gpu == index]

    def _holders(self, name: str, units: list[Unit]) -> list[str]:
        devices = self.cluster.devices_of(name)
        ids = {u.id for u in units}
        gpus = {u.gpu for u in units if u.gpu >= 0}
        holders = {p for u, p in devices.taken.items() if u in ids}
        holders |= {p for p, shares in devices.shared.items() if any(u.gpu in gpus for u in shares)}
        return sorted(k for k in holders if self.lifecycle.records[k].deleted_s is None)

    def _gpu_holders(self, name: str, index: int) -> list[str]:
        """The pods on GPU ``index`` of the node, through the device plugin or a DRA claim."""
        units = self._units(name, index)
        gpus = [] if units else self._dra_gpus(name)
        return self._dra_holders(gpus[index]) if index < len(gpus) else self._holders(name, units)

    def _dra_gpus(self, name: str) -> list[DeviceID]:
        """The whole GPUs the node publishes as DRA devices, in the order of its slices."""
        dra = self.cluster.state.dra
        if dra is None:
            return []
        return [d for d, node in node_gpus(dra.slices_on(name)).items() if node == name]

    def _dra_holders(self, device: DeviceID) -> list[str]:
        dra = self.cluster.state.dra
        records = self.lifecycle.records
        held = dra.holders(device) if dra is not None else set()
        return sorted(k for k in held if k in records and records[k].deleted_s is None)

    def _pods_on(self, name: str) -> list[str]:
        """The pods on the node, but DaemonSet pods (the kubelet restarts them with the node)."""
        state = self.cluster.state
        on = state.pods_on[state.index[name]].values()
        return sorted(a.pod.key for a in on if a.pod.owner is None or a.pod.owner.kind != "DaemonSet")

    # -- the response --------------------------------------------------------------------------
    def _physical(self, name: str, unit: Unit) -> int:
        """The physical GPU of a unit. A MIG instance's is taken as MIG Manager lays a configuration out
        (the same instances on every GPU, ``model.mig_configs``): a resource's instances GPU by GPU."""
        if unit.gpu >= 0:
            return unit.gpu
        devices = self.cluster.devices_of(name)
        for units in devices.units.values():
            if unit in units:
                per_gpu = max(len(units) // devices.gpus, 1) if devices.gpus else len(units)
                return units.index(unit) // per_gpu
        return 0

    def _unhealthy(self, rec: FaultRecord, units: list[Unit], gpu: int, epoch: int) -> None:
        """The device plugin reports the GPU Unhealthy: allocatable drops until a GPU reset."""
        name = rec.node
        if self._epoch.get(name) != epoch or name not in self.cluster.state.index:
            return
        rec.detected_s = self.clock.now
        self._fail(rec, self._holders(name, units))  # placed on it before it was noticed
        out = self._out.setdefault(name, {})
        out[gpu] = out.get(gpu, 0) + 1
        devices = self.cluster.devices_of(name)
        devices.unhealthy |= {u.id for u in units}
        self._sync_allocatable(name, devices)
        reset = self.clock.now + self.model.response.gpu_reset_s
        self.clock.at(reset, Priority.COMPLETION, partial(self._reset, rec, units, gpu, epoch))

    def _dra_unhealthy(self, rec: FaultRecord, device: DeviceID, epoch: int) -> None:
        """The DRA driver's health check taints the device NoSchedule in its ResourceSlice: nothing is
        allocated it until the GPU reset (after which the driver publishes it healthy again)."""
        dra = self.cluster.state.dra
        if self._epoch.get(rec.node) != epoch or rec.node not in self.cluster.state.index or dra is None:
            return
        rec.detected_s = self.clock.now
        self._fail(rec, self._dra_holders(device))  # allocated it before it was noticed
        self._taint(rec.node, {device}, tainted=True)
        reset = self.clock.now + self.model.response.gpu_reset_s
        self.clock.at(reset, Priority.COMPLETION, partial(self._dra_reset, rec, device))

    def _dra_reset(self, rec: FaultRecord, device: DeviceID) -> None:
        rec.recovered_s = self.clock.now
        self._taint(rec.node, {device}, tainted=False)

    def _taint(self, name: str, devices: set[DeviceID], tainted: bool) -> None:
        """The DRA driver republishes the node's slice with these devices tainted, or healthy again."""
        state = self.cluster.state
        dra = state.dra
        if dra is None or (devices <= dra.tainted if tainted else not devices & dra.tainted):
            return
        if tainted:
            dra.tainted |= devices
        else:
            dra.tainted -= devices
        if name in state.index:
            state.touched(state.index[name])  # the node's DynamicResources verdicts change
        self.host.cluster_changed((ClusterChange(RESOURCE_SLICE_UPDATE),))

    def _reset(self, rec: FaultRecord, units: list[Unit], gpu: int, epoch: int) -> None:
        name = rec.node
        rec.recovered_s = self.clock.now
        if self._epoch.get(name) != epoch or name not in self.cluster.state.index:
            return  # rebooted or gone meanwhile: its devices were described anew
        out = self._out.get(name, {})
        out[gpu] = out.get(gpu, 1) - 1
        devices = self.cluster.devices_of(name)
        devices.unhealthy -= {u.id for u in units}
        if out[gpu] <= 0:  # no other fault awaits a reset there: a new layout's instances on it too
            del out[gpu]
            every = [u for resource in sorted(devices.units) for u in devices.units[resource]]
            devices.unhealthy -= {u.id for u in every if self._physical(name, u) == gpu}
        self._sync_allocatable(name, devices)

    def devices_changed(self, name: str) -> None:
        """MIG Manager changed the node's devices (stopped the device plugin, or registered another
        layout): what it advertises now is the healthy allocatable, and a GPU awaiting its reset stays
        Unhealthy, every instance of the new layout on it (an assumption: the GPU still needs its reset,
        whatever instances it is cut into)."""
        state = self.cluster.state
        if name not in state.index:
            return
        self._healthy[name] = dict(state.nodes[state.index[name]].allocatable)
        out = self._out.get(name)
        if not out:
            return
        devices = self.cluster.devices_of(name)
        every = [u for resource in sorted(devices.units) for u in devices.units[resource]]
        devices.unhealthy |= {u.id for u in every if self._physical(name, u) in out}
        self._sync_allocatable(name, devices)

    def _sync_allocatable(self, name: str, devices: NodeDevices) -> None:
        """Allocatable as the kubelet counts it: the healthy devices only."""
        state = self.cluster.state
        node = state.nodes[state.index[name]]
        healthy = self._healthy.setdefault(name, dict(node.allocatable))
        allocatable = dict(healthy)
        for resource, units in devices.units.items():
            if resource in allocatable:
                allocatable[resource] -= sum(1 for u in units if u.id in devices.unhealthy)
        old = node_before(node)
        state.set_allocatable(name, allocatable)
        self.host.cluster_changed(node_updated(old, node))

    def _node_detected(self, rec: FaultRecord, response: str) -> None:
        name = rec.node
        if name not in self.cluster.state.index or not self.host.reclaimable(name):
            self._down.pop(name, None)
            return
        rec.detected_s = self.clock.now
        state = self.cluster.state
        if not state.nodes[state.index[name]].unschedulable:
            state.cordon(name)
            self._cordoned.add(name)
        if response == "replace":
            self._fail(rec, self._gpu_holders(name, rec.gpu or 0))
            if rec.pool is not None and rec.pool in self.fixed_pools:  # the new node first: the drain
                self._awaiting.setdefault(rec.pool, []).append(rec)  # may wait for room elsewhere
                self.host.launch(rec.pool, (), False)
            self._drain(rec)
            return
        if response == "lost":  # the cloud node lifecycle controller deletes it (``_node_deleted``)
            return
        reboot = self.clock.now + self.model.response.reboot_s
        self.clock.at(reboot, Priority.COMPLETION, partial(self._rebooted, rec))

    def _drain(self, rec: FaultRecord) -> None:
        """``kubectl drain`` for repair: each pod is evicted through the Eviction API, which a
        PodDisruptionBudget refuses while it allows no disruption (kubectl retries every 5 s); once the
        node is empty (its DaemonSet pods aside) it is deleted."""
        name = rec.node
        if name not in self.cluster.state.index:
            self._down.pop(name, None)
            return
        budgets = self.host.pod_disruption_budgets()
        allowed = [n for _, n in budgets]
        left = self._pods_on(name)
        for key in left:
            pod = self.lifecycle.records[key]
            if pod.terminating:
                continue
            covering = [i for i, (budget, _) in enumerate(budgets) if budget.covers(pod.pod)]
            if all(allowed[i] > 0 for i in covering):
                for i in covering:
                    allowed[i] -= 1
                self.host.evict(key, "Evicted")
        if left:
            retry = partial(self._drain, rec)  # as long as a budget refuses (kubectl's default: no timeout)
            self.clock.at(self.clock.now + EVICTION_RETRY_S, Priority.COMPLETION, retry, background=True)
            return
        rec.drained_s = self.clock.now
        self._replace(rec)

    def node_deleted(self, name: str) -> None:
        """The cloud node lifecycle controller deletes a lost node's Node (and a new one takes its place,
        unless the fault's response was given up: cluster-autoscaler was deleting the node already)."""
        rec = self._down.get(name)
        if rec is not None:
            self._replace(rec)
        else:
            self.host.delete_node(name)

    def _replace(self, rec: FaultRecord) -> None:
        """The node is deleted; a new one takes its place: a fixed pool's at once (or already, for a
        drain), an autoscaled pool's through cluster-autoscaler."""
        self._down.pop(rec.node, None)
        launched = rec.drained_s is not None and rec.pool in self.fixed_pools
        if rec.pool is not None and not launched:
            self._awaiting.setdefault(rec.pool, []).append(rec)
        self.host.delete_node(rec.node)
        if rec.pool is not None and rec.pool in self.fixed_pools and not launched:
            self.host.launch(rec.pool, (), False)

    def _rebooted(self, rec: FaultRecord) -> None:
        """The node is back: healthy devices, uncordoned if the health checker cordoned it."""
        name = rec.node
        self._down.pop(name, None)
        rec.recovered_s = self.clock.now
        self.unreachable.restarted(name)
        if name not in self.cluster.state.index:
            return
        state = self.cluster.state
        node = state.nodes[state.index[name]]
        old = node_before(node)
        if name in self._healthy:
            state.set_allocatable(name, self._healthy[name])
        self._out.pop(name, None)
        self.cluster.ledger.restarted(node)
        self._taint(name, set(self._dra_gpus(name)), tainted=False)  # its DRA driver starts again
        if name in self._cordoned:
            self._cordoned.discard(name)
            state.cordon(name, unschedulable=False)
        self.host.cluster_changed(node_updated(old, node))
        self._arm(name, self._epoch.get(name, 0))
