"""What must hold after every event of a simulation (``gpufleet simulate --check-invariants``): a
debug mode that proves nothing is lost, one function per invariant.

Each invariant restates a guarantee of the system the simulator mirrors: the kubelet's admission and
the scheduler's NodeResourcesFit never let a node's requests exceed its allocatable
(``pkg/kubelet/lifecycle/predicate.go``); the NVIDIA device plugin hands each device (a GPU, a
time-slicing replica, a MIG instance) to one container at a time (``Allocate``), a physical GPU is never
more than itself, and the DRA allocator gives a device to one claim (``structured.Allocator``);
a pod has one phase and one final state (``model.final_states``) and a work item is always fed =
completed + lost + queued + in progress (``sim.work_queues``); scheduler-plugins' Coscheduling lets a
PodGroup's members run only while ``minMember`` of them do (``pkg/coscheduling``); a training job's
progress at its last checkpoint is never lost (DESIGN, Gangs); the HPA and KEDA keep replicas within
``minReplicas``/``maxReplicas`` (``pkg/controller/podautoscaler``) and a ReplicaSet never keeps more pods
than ``replicas`` (``manageReplicas``); and the cost and GPU-hours metered from the event log
(``sim.metering``) equal those added up over the nodes and pods.

A violation raises :class:`InvariantViolation` naming the invariant, the object and the simulated time;
``Simulation.run`` calls :meth:`InvariantChecks.after_event` only when it is given checks, so a run
without them pays one comparison per event.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpufleet.gpus.devices import NodeDevices
from gpufleet.model.gpu_share import MILLI
from gpufleet.workloads.replicas import KeepsReplicas

if TYPE_CHECKING:
    from gpufleet.sim.simulation import Simulation

#: Rounding allowed in sums of floats (GPU shares, seconds, dollars), relative to the figure.
TOLERANCE = 1e-6


class InvariantViolation(Exception):
    """An invariant does not hold: which one, of what object, at what simulated time."""

    def __init__(self, invariant: str, subject: str, at_s: float, detail: str):
        super().__init__(f"invariant {invariant} violated by {subject} at {at_s:g} s: {detail}")
        self.invariant, self.subject, self.at_s, self.detail = invariant, subject, at_s, detail


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def resources_within_allocatable(sim: Simulation) -> None:
    """No node's requests (cpu, memory, pods, extended resources: GPUs, MIG instances) exceed its
    allocatable."""
    state = sim.state
    for i in state.active_indices().tolist():
        over = state.requested[i] > state.alloc[i]
        if over.any():
            col = int(over.argmax())
            asked, has = int(state.requested[i, col]), int(state.alloc[i, col])
            raise InvariantViolation(
                "resources-within-allocatable",
                f"node {state.nodes[i].name}",
                sim.loop.now,
                f"{state.resources[col]} requested {asked} > allocatable {has}",
            )


def devices_held_once(sim: Simulation) -> None:
    """Each device unit is held by a pod assigned to that node; a physical GPU's whole, replica and MIG
    units add up to at most one GPU, and none is both whole and shared; a shared GPU's fractions add up
    to at most its compute and memory; a DRA device is allocated to one claim at most."""
    state = sim.state
    for name, devices in sorted(sim.ledger.nodes.items()):
        subject = f"node {name}"
        known = {u.id: u for units in devices.units.values() for u in units}
        shares = {u.id for units in devices.shared.values() for u in units}
        per_gpu: dict[int, float] = {}  # GPU index -> GPU-equivalents held
        for unit_id, pod_key in sorted(devices.taken.items()):
            a = state.assignments.get(pod_key)
            if a is None or state.nodes[a.node].name != name:
                raise InvariantViolation(
                    "devices-held-once",
                    subject,
                    sim.loop.now,
                    f"device {unit_id} held by {pod_key}, not on it",
                )
            unit = known.get(unit_id)
            if unit is None and unit_id not in shares:
                raise InvariantViolation(
                    "devices-held-once", subject, sim.loop.now, f"{pod_key} holds unknown device {unit_id}"
                )
            if unit is not None and unit.gpu >= 0:
                per_gpu[unit.gpu] = per_gpu.get(unit.gpu, 0.0) + unit.share
        clash = set(devices.slot_gpu.values()) & set(per_gpu)
        if clash:
            raise InvariantViolation(
                "devices-held-once",
                subject,
                sim.loop.now,
                f"GPU {min(clash)} holds fractional shares and a whole device at once",
            )
        for gpu, share in sorted(per_gpu.items()):
            if share > 1 + TOLERANCE:
                raise InvariantViolation(
                    "devices-held-once", subject, sim.loop.now, f"GPU {gpu} handed out {share:g} times over"
                )
        mig = sum(u.share for units in devices.units.values() for u in units if u.gpu < 0)
        if devices.sharing == "mig" and devices.gpus and mig > devices.gpus + TOLERANCE:
            raise InvariantViolation(
                "devices-held-once",
                subject,
                sim.loop.now,
                f"MIG instances make {mig:g} GPUs of {devices.gpus}",
            )
    _shares_fit(sim)
    _dra_devices_once(sim)


def _shares_fit(sim: Simulation) -> None:
    """The fractions placed on each shared GPU add up to at most its compute and its memory."""
    shares = sim.state.shares
    if shares is None:
        return
    compute: Counter[tuple[int, int]] = Counter()
    memory: Counter[tuple[int, int]] = Counter()
    for placements in shares.placed.values():
        for p in placements:
            compute[p.node, p.slot] += p.compute
            memory[p.node, p.slot] += p.memory
    for node, slot in sorted(compute | memory):
        held = compute[node, slot], memory[node, slot]
        if max(held) > MILLI:
            raise InvariantViolation(
                "devices-held-once",
                f"node {sim.state.nodes[node].name}",
                sim.loop.now,
                f"shared GPU slot {slot} holds {held[0]}m compute and {held[1]}m memory",
            )


def _dra_devices_once(sim: Simulation) -> None:
    dra = sim.state.dra
    if dra is None:
        return
    owners: dict[object, str] = {}
    for claim, result in sorted(dra.allocated.items()):
        for device in result.devices:
            if device in owners:
                raise InvariantViolation(
                    "devices-held-once",
                    f"ResourceClaim {claim}",
                    sim.loop.now,
                    f"device {device} also allocated to {owners[device]}",
                )
            owners[device] = claim


def one_state_per_pod(sim: Simulation) -> None:
    """Every pod is in one state: a pod assigned to a node is Pending or Running there; one that ended
    (Succeeded, or Failed with the reason that gives its final state) holds nothing, and a pod
    replaced by one of the same name had ended; the Pending and Running counts the run keeps (its
    timeline, when it is idle) are those of the pods; work items are all accounted for."""
    state, lifecycle, now = sim.state, sim.lifecycle, sim.loop.now
    for key, a in state.assignments.items():
        rec = sim.records.get(key)
        if rec is None or rec.phase not in ("Pending", "Running") or rec.finished_s is not None:
            phase = "unknown" if rec is None else f"ended {rec.phase}"
            raise InvariantViolation(
                "one-state-per-pod", f"pod {key}", now, f"{phase} but holds node {state.nodes[a.node].name}"
            )
    counts = {"Pending": 0, "Running": 0}
    for key, rec in sim.records.items():
        ended = rec.phase in ("Succeeded", "Failed")
        if ended != (rec.finished_s is not None) or (rec.phase == "Failed" and not rec.reason):
            raise InvariantViolation(
                "one-state-per-pod",
                f"pod {key}",
                now,
                f"phase {rec.phase}, reason {rec.reason}, finished at {rec.finished_s}",
            )
        if rec.working and (rec.phase != "Running" or key not in state.assignments):
            raise InvariantViolation(
                "one-state-per-pod", f"pod {key}", now, f"computes while {rec.phase} and holding no node"
            )
        if rec.phase in counts and rec.deleted_s is None:
            counts[rec.phase] += 1
    for rec in lifecycle.replaced:
        if rec.phase not in ("Succeeded", "Failed") and rec.deleted_s is None:
            raise InvariantViolation(
                "one-state-per-pod",
                f"pod {rec.pod.key}",
                now,
                f"replaced by a pod of its name while {rec.phase}",
            )
    if (lifecycle.pending, lifecycle.running) != (counts["Pending"], counts["Running"]):
        raise InvariantViolation(
            "one-state-per-pod",
            "the run's pods",
            now,
            f"counted {lifecycle.pending} Pending and {lifecycle.running} Running, but {counts['Pending']} "
            f"and {counts['Running']} are",
        )
    for name, work in sorted(lifecycle.work_lists.items()):
        held = work.completed + work.lost + len(work.queued) + len(work.in_progress)
        if held != work.fed:
            raise InvariantViolation(
                "one-state-per-pod",
                f"work list {name}",
                now,
                f"{work.fed} items fed but {held} completed, lost, queued or in progress",
            )


def gangs_whole(sim: Simulation) -> None:
    """A PodGroup's members compute only while at least ``minMember`` of them are running and ready (or
    have succeeded)."""
    records = sim.records
    for key, members in sorted(sim.gangs.members.items()):
        group = sim.gangs.groups.get(key)
        if group is None:
            continue
        recs = [records[k] for k in sorted(members) if k in records]
        working = [r.pod.key for r in recs if r.working]
        if not working:
            continue
        counted = sum(1 for r in recs if r.counts_for_gang)
        if counted < group.min_member:
            raise InvariantViolation(
                "gang-whole",
                f"PodGroup {key}",
                sim.loop.now,
                f"{counted} of minMember {group.min_member} run while these compute: "
                f"{', '.join(working[:3])}{', ...' if len(working) > 3 else ''}",
            )


@dataclass
class Progress:
    """What a pod had done and lost when last looked at: its checkpointed work, the work it lost, and
    the work item it works on (a queue consumer)."""

    done_s: float
    lost_gpu_s: float
    item: int | None


def checkpoints_kept(sim: Simulation, seen: dict[str, Progress]) -> None:
    """A pod's checkpointed progress never falls while it works on the same task, and the work it lost
    never shrinks (``seen``: each pod as last looked at, updated here)."""
    lists = sim.lifecycle.work_lists
    for key, rec in sim.records.items():
        consumes = rec.pod.behavior.consumes
        in_progress = lists[consumes].in_progress.get(key) if consumes in lists else None
        now = Progress(rec.done_s, rec.work_lost_gpu_s, in_progress.id if in_progress else None)
        before = seen.get(key)
        seen[key] = now
        if before is None:
            continue
        if now.lost_gpu_s < before.lost_gpu_s - TOLERANCE:
            raise InvariantViolation(
                "checkpoint-kept",
                f"pod {key}",
                sim.loop.now,
                f"work lost fell from {before.lost_gpu_s:g} to {now.lost_gpu_s:g} GPU-seconds",
            )
        same_task = consumes is None or (now.item is not None and now.item == before.item)
        if same_task and now.done_s < before.done_s - TOLERANCE:
            raise InvariantViolation(
                "checkpoint-kept",
                f"pod {key}",
                sim.loop.now,
                f"checkpointed progress fell from {before.done_s:g} s to {now.done_s:g} s",
            )


def items_keep_progress(sim: Simulation, seen: dict[tuple[str, int], float]) -> None:
    """A work item's checkpointed progress never falls, queued again or taken by another worker
    (``seen``: each item's progress when last looked at, by list and item number)."""
    records = sim.records
    for name, work in sorted(sim.lifecycle.work_lists.items()):
        now = [(item.id, item.done_s) for item in work.queued]
        now += [(item.id, records[pod].done_s) for pod, item in work.in_progress.items()]
        for number, done_s in now:
            before = seen.get((name, number), 0.0)
            if done_s < before - TOLERANCE:
                raise InvariantViolation(
                    "checkpoint-kept",
                    f"work item {number} of list {name}",
                    sim.loop.now,
                    f"checkpointed progress fell from {before:g} s to {done_s:g} s",
                )
            seen[name, number] = done_s


def replicas_within_bounds(sim: Simulation, seen: dict[str, int]) -> None:
    """A replica count an autoscaler set lies within its ``minReplicas``/``maxReplicas`` (KEDA's
    ``minReplicaCount``/``maxReplicaCount``), and a ReplicaSet keeps at most ``replicas`` pods
    (``seen``: each target's replicas when last looked at)."""
    wa = sim.workload_autoscalers
    bounds: dict[str, tuple[int, int]] = {}
    for rt in wa.hpas:
        bounds[rt.target] = (rt.hpa.spec.min_replicas, rt.hpa.spec.max_replicas)
    for so, _, rt in wa.scaled_objects:
        bounds[rt.target] = (so.min_replica_count, so.max_replica_count)
    for target, (low, high) in sorted(bounds.items()):
        controller = sim.scale_target(target)
        if not isinstance(controller, KeepsReplicas):
            continue
        replicas = controller.replicas
        changed = seen.get(target, replicas) != replicas
        seen[target] = replicas
        if changed and not low <= replicas <= high:
            raise InvariantViolation(
                "replicas-within-bounds",
                target,
                sim.loop.now,
                f"scaled to {replicas} replicas, outside [{low}, {high}]",
            )
    for key, kept in sorted(sim.controllers.items()):
        if isinstance(kept, KeepsReplicas) and len(kept.active) > max(kept.replicas, 0):
            raise InvariantViolation(
                "replicas-within-bounds",
                key,
                sim.loop.now,
                f"{len(kept.active)} active pods for {kept.replicas} replicas",
            )


def metering_adds_up(sim: Simulation) -> None:
    """The meter's readings keep working <= allocated <= provisioned GPUs; at the end its cost equals each
    launched node's price over its lifetime, and its provisioned GPU-hours each node's GPUs over its
    lifetime (a pool's node by its template, from its launch; another by its devices)."""
    meter = sim.meter
    for reading in meter.readings:
        working, allocated, provisioned = (
            reading.working_gpus,
            reading.allocated_gpus,
            reading.provisioned_gpus,
        )
        if working > allocated + TOLERANCE or allocated > provisioned + TOLERANCE:
            raise InvariantViolation(
                "metering-adds-up",
                "the meter",
                reading.since_s,
                f"{working:g} GPUs working, {allocated:g} allocated, {provisioned:g} provisioned",
            )
    totals = meter.totals()
    end = meter.until_s
    cost = gpu_s = 0.0
    dra = sim.cluster.dra_gpus_per_node()
    for rec in sim.nodes.values():
        lifetime = max((end if rec.deleted_s is None else min(rec.deleted_s, end)) - rec.created_s, 0.0)
        rt = sim.pools.get(rec.pool or "")
        if rt is not None:
            cost += lifetime / 3600 * rt.pool.price_per_hour
            gpus = NodeDevices.of(rt.pool.template).gpus + (rt.pool.dra_gpus[1] if rt.pool.dra_gpus else 0)
        elif rec.name in sim.state.index:
            gpus = sim.cluster.devices_of(rec.name).gpus + int(dra[sim.state.index[rec.name]])
        else:  # a node of no pool that is gone: its devices are no longer known
            gpu_s = math.nan
            continue
        gpu_s += lifetime * gpus
    if not _close(cost, totals.cost):
        raise InvariantViolation(
            "metering-adds-up",
            "the run's cost",
            end,
            f"metered ${totals.cost:.6f} but the nodes' prices over their lifetimes make ${cost:.6f}",
        )
    metered = totals.gpu_seconds["provisioned"]
    if not math.isnan(gpu_s) and not _close(gpu_s, metered):
        raise InvariantViolation(
            "metering-adds-up",
            "the run's provisioned GPU-hours",
            end,
            f"metered {metered / 3600:.6f} but the nodes' GPUs over their lifetimes make {gpu_s / 3600:.6f}",
        )


@dataclass
class InvariantChecks:
    """The invariants checked after every event, and at the end of the run."""

    events: int = 0
    progress: dict[str, Progress] = field(default_factory=dict)
    items: dict[tuple[str, int], float] = field(default_factory=dict)
    replicas: dict[str, int] = field(default_factory=dict)

    def after_event(self, sim: Simulation) -> None:
        self.events += 1
        self._check(sim)

    def at_end(self, sim: Simulation) -> None:
        self._check(sim)
        metering_adds_up(sim)

    def _check(self, sim: Simulation) -> None:
        resources_within_allocatable(sim)
        devices_held_once(sim)
        one_state_per_pod(sim)
        gangs_whole(sim)
        checkpoints_kept(sim, self.progress)
        items_keep_progress(sim, self.items)
        replicas_within_bounds(sim, self.replicas)
