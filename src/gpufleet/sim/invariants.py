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
``minReplicas``/``maxReplicas`` (``pkg/controller/podautoscaler``), and every controller keeps its counts
within the bounds its upstream keeps (``kind.BoundsReplicas``: a ReplicaSet's pods within ``replicas``,
``manageReplicas``; a LeaderWorkerSet's groups within ``replicas``; a RayCluster worker group's
workers within its ``replicas`` clamped to ``minReplicas``/``maxReplicas`` (KubeRay's
``GetWorkerGroupDesiredReplicas``); a
ScaledJob's Jobs within ``maxReplicaCount``, KEDA's ``GetEffectiveMaxScale``); and the cost and GPU-hours
metered from the event log (``sim.metering``) equal those added up over the nodes (cost, provisioned)
and over the pod records (allocated, working). Kueue's admitted workloads hold no more quota than their
ClusterQueues and cohort trees allow (``kueue_within_quota``, reclaimable pods and fair sharing
included), and each admitted pod runs on nodes of its own pod set's flavors (``kueue_pods_on_flavors``).

A violation raises :class:`InvariantViolation` naming the invariant, the object and the simulated time;
``Simulation.run`` calls :meth:`InvariantChecks.after_event` only when it is given checks, so a run
without them pays one comparison per event. After the first event each check looks only at what the
event touched (``EventWatch``), the end of the run at everything.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from gpufleet.gpus.devices import NodeDevices
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.kueue import ClusterQueue, Cohort
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU
from gpufleet.scheduling.gangs import group_key
from gpufleet.sim.records import PodRecord
from gpufleet.workloads.kind import BoundsReplicas, ReplicaBound, controller_key, implements

if TYPE_CHECKING:
    from gpufleet.sim.simulation import Simulation

#: Rounding allowed in sums of floats (GPU shares, seconds, dollars), relative to the figure.
TOLERANCE = 1e-6
#: the phases the run counts its pods in (``PodLifecycle.pending``/``running``)
COUNTED = ("Pending", "Running")


class InvariantViolation(Exception):
    """An invariant does not hold: which one, of what object, at what simulated time."""

    def __init__(self, invariant: str, subject: str, at_s: float, detail: str):
        super().__init__(f"invariant {invariant} violated by {subject} at {at_s:g} s: {detail}")
        self.invariant, self.subject, self.at_s, self.detail = invariant, subject, at_s, detail


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def _nodes(sim: Simulation, nodes: Collection[int] | None) -> list[int]:
    """The active nodes among ``nodes`` (all active ones for None), in index order."""
    state = sim.state
    if nodes is None:
        return [int(i) for i in state.active_indices().tolist()]
    return sorted(i for i in nodes if i < state.size and state.active[i])


def resources_within_allocatable(sim: Simulation, nodes: Collection[int] | None = None) -> None:
    """No node's requests (cpu, memory, pods, extended resources: GPUs, MIG instances) exceed its
    allocatable (``nodes``: only those node indices). The requests are the kubelet's: of the pods bound
    there. A pod only assumed there (waiting at Permit) is the scheduler's, with the GPUs its fractional
    shares alone opened, and may exceed an allocatable that shrank after it was assumed (a GPU reported
    Unhealthy): its kubelet refuses it if it is bound (``UnexpectedAdmissionError``)."""
    state = sim.state
    rows = np.asarray(_nodes(sim, nodes), dtype=np.int64)
    if not len(rows):
        return
    over = state.requested[rows] > state.alloc[rows]
    for i in rows[np.flatnonzero(over.any(axis=1))].tolist():
        bound = state.requested[i].copy()
        assumed = [a.pod for a in state.pods_on[i].values() if _assumed(sim, a.pod.key)]
        for pod in assumed:
            bound -= state.pod_vectors(pod)[0]
        gpu = state.res_index.get(GPU)
        if assumed and state.shares is not None and gpu is not None:  # (GPUs only their shares opened)
            bound[gpu] -= state.shares.gpus_freed(i, [p.key for p in assumed])
        past = np.flatnonzero(bound > state.alloc[i])
        if len(past):
            col = int(past[0])
            raise InvariantViolation(
                "resources-within-allocatable",
                f"node {state.nodes[i].name}",
                sim.loop.now,
                f"{state.resources[col]} requested {bound[col]} > allocatable {state.alloc[i, col]}",
            )


def _assumed(sim: Simulation, key: str) -> bool:
    """Assigned to a node by a scheduler and not bound yet (waiting at Permit)."""
    rec = sim.records.get(key)
    return rec is not None and rec.bound_s is None and rec.phase == "Pending"


def devices_held_once(sim: Simulation, nodes: Collection[int] | None = None) -> None:
    """Each device unit is held by a pod assigned to that node; a physical GPU's whole, replica and MIG
    units add up to at most one GPU, and none is both whole and shared; a shared GPU's fractions add up
    to at most its compute and memory; a DRA device is allocated to one claim at most (``nodes``: only
    the devices of those node indices)."""
    state = sim.state
    if nodes is None:
        names = sorted(sim.ledger.nodes)
    else:
        names = sorted({state.nodes[i].name for i in nodes if i < state.size} & sim.ledger.nodes.keys())
    for name in names:
        _node_devices_once(sim, name, sim.ledger.nodes[name])
    _shares_fit(sim, nodes)
    _dra_devices_once(sim)


def _node_devices_once(sim: Simulation, name: str, devices: NodeDevices) -> None:
    state = sim.state
    subject = f"node {name}"
    known = {u.id: u for units in devices.units.values() for u in units}
    shares = {u.id for units in devices.shared.values() for u in units}
    per_gpu: dict[int, float] = {}  # GPU index -> GPU-equivalents held
    for unit_id, pod_key in sorted(devices.taken.items()):
        a = state.assignments.get(pod_key)
        if a is None or state.nodes[a.node].name != name:
            raise InvariantViolation(
                "devices-held-once", subject, sim.loop.now, f"device {unit_id} held by {pod_key}, not on it"
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
            "devices-held-once", subject, sim.loop.now, f"MIG instances make {mig:g} GPUs of {devices.gpus}"
        )


def _shares_fit(sim: Simulation, nodes: Collection[int] | None) -> None:
    """The fractions placed on each shared GPU add up to at most its compute and its memory."""
    shares, state = sim.state.shares, sim.state
    if shares is None:
        return
    if nodes is None:
        placements = [p for placed in shares.placed.values() for p in placed]
    else:
        on = [key for i in nodes if i < state.size for key in state.pods_on[i]]
        placements = [p for key in on for p in shares.placed.get(key, ())]
    compute: Counter[tuple[int, int]] = Counter()
    memory: Counter[tuple[int, int]] = Counter()
    for p in placements:
        compute[p.node, p.slot] += p.compute
        memory[p.node, p.slot] += p.memory
    for node, slot in sorted(compute | memory):
        held = compute[node, slot], memory[node, slot]
        if max(held) > MILLI:
            raise InvariantViolation(
                "devices-held-once",
                f"node {state.nodes[node].name}",
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


def counted_phase(rec: PodRecord) -> str | None:
    """The phase the run counts the pod in (``PodLifecycle.pending``/``running``), None: neither."""
    return rec.phase if rec.phase in COUNTED and rec.deleted_s is None else None


def one_state_per_pod(
    sim: Simulation,
    pods: Collection[str] | None = None,
    counts: Counter[str] | None = None,
    replaced_from: int = 0,
) -> None:
    """Every pod is in one state: a pod assigned to a node is Pending or Running there; one that ended
    (Succeeded, or Failed with the reason that gives its final state) holds nothing, and a pod
    replaced by one of the same name had ended; the Pending and Running counts the run keeps (its
    timeline, when it is idle) are those of the pods; work items are all accounted for. ``pods``: only
    those pods (then ``counts``: the pods in each counted phase, kept by the caller), and only the
    replaced pods from ``replaced_from`` on."""
    state, lifecycle, now = sim.state, sim.lifecycle, sim.loop.now
    if pods is None:
        for key, a in state.assignments.items():
            if key not in sim.records:
                raise InvariantViolation(
                    "one-state-per-pod",
                    f"pod {key}",
                    now,
                    f"unknown but holds node {state.nodes[a.node].name}",
                )
        counts = Counter(p for rec in sim.records.values() if (p := counted_phase(rec)) is not None)
    for key in sim.records if pods is None else sorted(pods):
        _one_pod_state(sim, key, sim.records[key])
    for rec in lifecycle.replaced[replaced_from:]:
        if rec.phase not in ("Succeeded", "Failed") and rec.deleted_s is None:
            raise InvariantViolation(
                "one-state-per-pod",
                f"pod {rec.pod.key}",
                now,
                f"replaced by a pod of its name while {rec.phase}",
            )
    assert counts is not None
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


def _one_pod_state(sim: Simulation, key: str, rec: PodRecord) -> None:
    now = sim.loop.now
    a = sim.state.assignments.get(key)
    if a is not None and (rec.phase not in COUNTED or rec.finished_s is not None):
        raise InvariantViolation(
            "one-state-per-pod",
            f"pod {key}",
            now,
            f"ended {rec.phase} but holds node {sim.state.nodes[a.node].name}",
        )
    ended = rec.phase in ("Succeeded", "Failed")
    if ended != (rec.finished_s is not None) or (rec.phase == "Failed" and not rec.reason):
        raise InvariantViolation(
            "one-state-per-pod",
            f"pod {key}",
            now,
            f"phase {rec.phase}, reason {rec.reason}, finished at {rec.finished_s}",
        )
    if rec.working and (rec.phase != "Running" or a is None):
        raise InvariantViolation(
            "one-state-per-pod", f"pod {key}", now, f"computes while {rec.phase} and holding no node"
        )


def gangs_whole(sim: Simulation, groups: Collection[str] | None = None) -> None:
    """A PodGroup's members compute only while at least ``minMember`` of them are running and ready (or
    have succeeded) (``groups``: only those PodGroups, by key)."""
    records = sim.records
    for key in sorted(sim.gangs.members if groups is None else groups):
        group = sim.gangs.groups.get(key)
        if group is None:
            continue
        recs = [records[k] for k in sorted(sim.gangs.members.get(key, ())) if k in records]
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
    the work item it works on (a queue consumer); ``record``: which pod of its name it was (an operator
    makes a pod again under the name of one it replaced)."""

    done_s: float
    lost_gpu_s: float
    item: int | None
    task_s: float | None = None  # its task's length then (a gang's ring may stretch it anew)
    record: PodRecord | None = None

    def share(self) -> float:
        """The checkpointed progress as a share of the task (its seconds where the task is unknown)."""
        return self.done_s / self.task_s if self.task_s else self.done_s


def checkpoints_kept(sim: Simulation, seen: dict[str, Progress], pods: Collection[str] | None = None) -> None:
    """A pod's checkpointed progress, as a share of its task, never falls while it works on the same task,
    not even when a pod made again under its name (a training operator's, a LeaderWorkerSet's) takes its
    place, and the work it lost never shrinks: the work a pod of that name lost before stays with that
    pod (``PodLifecycle.replaced``), so the count starts again for the new one (``seen``: each pod as last
    looked at, updated here; ``pods``: only those)."""
    lists = sim.lifecycle.work_lists
    for key in sim.records if pods is None else sorted(pods):
        rec = sim.records[key]
        consumes = rec.pod.behavior.consumes
        in_progress = lists[consumes].in_progress.get(key) if consumes in lists else None
        now = Progress(
            rec.done_s, rec.work_lost_gpu_s, in_progress.id if in_progress else None, rec.task_s, rec
        )
        before = seen.get(key)
        seen[key] = now
        if before is None:
            continue
        if before.record is rec and now.lost_gpu_s < before.lost_gpu_s - TOLERANCE:
            raise InvariantViolation(
                "checkpoint-kept",
                f"pod {key}",
                sim.loop.now,
                f"work lost fell from {before.lost_gpu_s:g} to {now.lost_gpu_s:g} GPU-seconds",
            )
        same_task = consumes is None or (now.item is not None and now.item == before.item)
        if same_task and now.share() < before.share() - TOLERANCE * max(1.0, before.share()):
            raise InvariantViolation(
                "checkpoint-kept",
                f"pod {key}",
                sim.loop.now,
                f"checkpointed progress fell from {before.done_s:g} s to {now.done_s:g} s",
            )


#: a work item's progress now: (list, item number, checkpointed seconds)
ItemProgress = tuple[str, int, float]


def items_keep_progress(
    sim: Simulation, seen: dict[tuple[str, int], float], items: Iterable[ItemProgress] | None = None
) -> None:
    """A work item's checkpointed progress never falls, queued again or taken by another worker
    (``seen``: each item's progress when last looked at, by list and item number; ``items``: only
    those, else every queued and in-progress item)."""
    if items is None:
        records = sim.records
        items = [
            *(
                (name, item.id, item.done_s)
                for name, work in sorted(sim.lifecycle.work_lists.items())
                for item in work.queued
            ),
            *(
                (name, item.id, records[pod].done_s)
                for name, work in sorted(sim.lifecycle.work_lists.items())
                for pod, item in work.in_progress.items()
            ),
        ]
    for name, number, done_s in items:
        before = seen.get((name, number), 0.0)
        if done_s < before - TOLERANCE:
            raise InvariantViolation(
                "checkpoint-kept",
                f"work item {number} of list {name}",
                sim.loop.now,
                f"checkpointed progress fell from {before:g} s to {done_s:g} s",
            )
        seen[name, number] = done_s


def replicas_within_bounds(
    sim: Simulation,
    seen: dict[str, int],
    controllers: Collection[str] | None = None,
    scaled_jobs: bool = True,
) -> None:
    """A replica count an autoscaler set lies within its ``minReplicas``/``maxReplicas`` (KEDA's
    ``minReplicaCount``/``maxReplicaCount``), and every count a controller keeps lies within its bounds
    (``kind.BoundsReplicas``: a ReplicaSet's pods, a LeaderWorkerSet's groups, a RayCluster worker
    group's workers, a ScaledJob's Jobs). ``seen``: each target's replicas when last looked at;
    ``controllers``: only those (by key), and the ScaledJobs' only if ``scaled_jobs``."""
    wa = sim.workload_autoscalers
    bounds: dict[str, tuple[int, int]] = {}
    for rt in wa.hpas:
        bounds[rt.target] = (rt.hpa.spec.min_replicas, rt.hpa.spec.max_replicas)
    for so, _, rt in wa.scaled_objects:
        bounds[rt.target] = (so.min_replica_count, so.max_replica_count)
    for target, (low, high) in sorted(bounds.items()):
        controller = sim.scale_target(target)
        if controller is None:
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
    for key in sorted(sim.controllers if controllers is None else controllers):
        kept = sim.controllers.get(key)
        if implements(kept, BoundsReplicas):
            _within(sim, key, cast(BoundsReplicas, kept).replica_bounds())
    if scaled_jobs:
        _within(sim, "the ScaledJobs", wa.replica_bounds())


def _within(sim: Simulation, subject: str, bounds: list[ReplicaBound]) -> None:
    for b in bounds:
        if not b.low <= b.count <= b.high:
            raise InvariantViolation(
                "replicas-within-bounds",
                subject,
                sim.loop.now,
                f"{b.count} {b.what}, outside [{b.low}, {b.high}]",
            )


def kueue_within_quota(sim: Simulation) -> None:
    """What Kueue's admitted workloads hold (their usage, those being evicted included: they hold it until
    their pods are gone) stays within what the ClusterQueues allow (``pkg/cache/scheduler``: a workload
    is admitted only where it fits ``available``): each queue uses only the (flavor, resource) pairs of
    its quota, never less than none, at most its ``nominalQuota`` plus its ``borrowingLimit`` where one is
    set (its nominal quota alone without a cohort), and the queues of a cohort tree use together at most
    the nominal quotas of the tree's ClusterQueues and Cohorts. Fair sharing orders and preempts within
    the same bounds. The usage steps of the Kueue summary (``kueue.cluster_queues[*].usage``) end at that
    usage."""
    kueue = sim.kueue
    if not kueue.installed:
        return
    now, objects = sim.loop.now, kueue.objects
    used: dict[str, Counter[tuple[str, str]]] = {name: Counter() for name in objects.cluster_queues}
    for wl in kueue.workloads.values():
        if wl.admitted is not None:
            used.setdefault(wl.admitted.workload.cluster_queue, Counter()).update(wl.admitted.usage)
    roots: dict[str, Counter[tuple[str, str]]] = {}
    for name, usage in sorted(used.items()):
        cq = objects.cluster_queues.get(name)
        subject = f"ClusterQueue {name}"
        for (flavor, resource), amount in sorted(usage.items()):
            quota = None if cq is None else cq.quota(flavor, resource)
            if quota is None or amount < 0:
                raise InvariantViolation(
                    "kueue-within-quota",
                    subject,
                    now,
                    f"uses {amount} of {resource} in flavor {flavor}"
                    f"{'' if quota is not None else ', which it has no quota of'}",
                )
            most: int | None = quota.nominal
            if cq is not None and cq.cohort is not None:
                most = None if quota.borrowing_limit is None else quota.nominal + quota.borrowing_limit
            if most is not None and amount > most:
                raise InvariantViolation(
                    "kueue-within-quota",
                    subject,
                    now,
                    f"uses {amount} of {resource} in flavor {flavor}, above {most} (nominal {quota.nominal}, "
                    f"borrowingLimit {quota.borrowing_limit}, cohort {cq.cohort if cq else None})",
                )
        if cq is not None and cq.cohort is not None:
            roots.setdefault(_cohort_root(objects.cohorts, cq.cohort), Counter()).update(usage)
        steps = kueue.stats[name].steps if name in kueue.stats else {}
        for key, series in sorted(steps.items()):
            flavor, resource = key.split("/", 1)
            if series[-1][1] != usage.get((flavor, resource), 0):
                raise InvariantViolation(
                    "kueue-within-quota",
                    subject,
                    now,
                    f"the summary's usage of {key} is {series[-1][1]:g} but its workloads hold "
                    f"{usage.get((flavor, resource), 0)}",
                )
    for root, usage in sorted(roots.items()):
        quota_of: Counter[tuple[str, str]] = Counter()
        members = [cq for cq in objects.cluster_queues.values() if cq.cohort is not None]
        nodes: list[ClusterQueue | Cohort] = [
            cq for cq in members if _cohort_root(objects.cohorts, str(cq.cohort)) == root
        ]
        nodes += [c for c in objects.cohorts.values() if _cohort_root(objects.cohorts, c.name) == root]
        for node in nodes:
            for group in node.resource_groups:
                for fq in group.flavors:
                    for resource, q in fq.resources.items():
                        quota_of[(fq.flavor, resource)] += q.nominal
        for fr, amount in sorted(usage.items()):
            if amount > quota_of[fr]:
                raise InvariantViolation(
                    "kueue-within-quota",
                    f"cohort {root}",
                    now,
                    f"its ClusterQueues use {amount} of {fr[1]} in flavor {fr[0]}, above the tree's nominal "
                    f"quota {quota_of[fr]}",
                )


def _cohort_root(cohorts: Mapping[str, Cohort], name: str) -> str:
    seen = {name}
    while (
        (cohort := cohorts.get(name)) is not None and cohort.parent is not None and cohort.parent not in seen
    ):
        name = cohort.parent
        seen.add(name)
    return name


def kueue_pods_on_flavors(sim: Simulation, pods: Collection[str] | None = None) -> None:
    """A pod of a workload Kueue admitted (not being evicted) that is on a node is on one with the
    ``nodeLabels`` of every flavor its own pod set was assigned (``podSetAssignments``: each pod set its
    flavors; the pod's set the first whose selector its labels match) (``pods``: only those pods)."""
    kueue = sim.kueue
    if not kueue.installed:
        return
    state, now = sim.state, sim.loop.now
    keys = kueue.of_pod if pods is None else [k for k in pods if k in kueue.of_pod]
    for key in sorted(keys):
        wl = kueue.workloads.get(kueue.of_pod[key])
        a = state.assignments.get(key)
        if wl is None or a is None or wl.admitted is None or wl.admitted.evicting or key not in wl.pods:
            continue
        rec = sim.records[key]
        pod_sets = wl.controller.pod_sets() if wl.controller is not None else []
        pod_set = next((s.name for s in pod_sets if s.holds(rec.pod)), "main" if not pod_sets else None)
        if pod_set is None:
            continue
        labels = state.nodes[a.node].labels
        for flavor in sorted(set(wl.admitted.flavors.get(pod_set, {}).values())):
            wanted = kueue.objects.flavors[flavor].node_labels
            if any(labels.get(k) != v for k, v in wanted.items()):
                raise InvariantViolation(
                    "kueue-pods-on-flavors",
                    f"pod {key}",
                    now,
                    f"of pod set {pod_set} of {wl.key}, assigned flavor {flavor} ({wanted}), is on node "
                    f"{state.nodes[a.node].name} without those labels",
                )


@dataclass(frozen=True)
class PodGpuSeconds:
    """GPU-seconds added up over the pod records: allocated (each pod's GPU-equivalents from its binding
    to its end) and working (over the intervals its log shows it working)."""

    allocated: float
    working: float


#: a pod's interval on a shared GPU with its share's size: (start, stop, compute, memory), in thousandths
ShareSpan = tuple[float, float, int, int]


def _clipped(start: float, stop: float, end: float) -> tuple[float, float]:
    return max(start, 0.0), max(min(stop, end), max(start, 0.0))


def _working_intervals(rec: PodRecord, end: float) -> list[tuple[float, float]]:
    """When the pod worked, from its log: each ``working`` entry until the next entry (or ``end``)."""
    log = rec.log
    return [
        _clipped(t, log[n + 1][0] if n + 1 < len(log) else end, end)
        for n, (t, state) in enumerate(log)
        if state == "working"
    ]


def _union_length(intervals: list[tuple[float, float]]) -> float:
    total, reach = 0.0, -math.inf
    for start, stop in sorted(intervals):
        if stop > reach:
            total += stop - max(start, reach)
            reach = stop
    return total


def _shared_gpu_seconds(spans: list[ShareSpan]) -> float:
    """One shared GPU over time: the larger of its shares' summed compute and summed memory."""
    steps = sorted(
        [(start, c, m) for start, stop, c, m in spans if stop > start]
        + [(stop, -c, -m) for start, stop, c, m in spans if stop > start]
    )
    total, compute, memory, last = 0.0, 0, 0, 0.0
    for t, dc, dm in steps:
        total += (t - last) * max(compute, memory) / MILLI
        compute, memory, last = compute + dc, memory + dm, t
    return total


def pod_gpu_seconds(sim: Simulation) -> PodGpuSeconds:
    """The GPU-seconds the pod records add up to over the meter's span: each pod's GPU-equivalents
    (``PodRecord.gpu_share``: whole GPUs, replicas and MIG instances by their size) from its binding until
    it ended (or its node was deleted: a pod of a kubelet down outlives its Node until PodGC), and while its
    log shows it working; a GPU shared by fractional requests by the larger of its
    pods' summed compute and summed memory; a device of a ResourceClaim shared by several pods once (the
    union of its pods' intervals)."""
    end = sim.meter.until_s
    allocated = working = 0.0
    claimed: dict[tuple[str, str], tuple[float, list[tuple[float, float]], list[tuple[float, float]]]] = {}
    shared: dict[tuple[str, int], tuple[list[ShareSpan], list[ShareSpan]]] = {}
    for rec in sim.all_records:
        if rec.bound_s is None:
            continue
        node = rec.node or ""
        gone = sim.nodes[node].deleted_s if node in sim.nodes else None
        until = min(t for t in (rec.finished_s, gone, end) if t is not None)
        held = _clipped(rec.bound_s, until, end)
        worked = _working_intervals(rec, end)
        share = rec.gpu_share
        for u in rec.devices:
            if u.milli is not None:
                helds, works = shared.setdefault((node, u.gpu), ([], []))
                helds.append((*held, *u.milli))
                works.extend((*w, *u.milli) for w in worked)
            elif rec.pod.resource_claims:
                _, helds_, works_ = claimed.setdefault((node, u.id), (u.share, [], []))
                helds_.append(held)
                works_.extend(worked)
            else:
                continue
            share -= u.share
        allocated += share * (held[1] - held[0])
        working += share * sum(stop - start for start, stop in worked)
    for size, helds_, works_ in claimed.values():
        allocated += size * _union_length(helds_)
        working += size * _union_length(works_)
    for helds, works in shared.values():
        allocated += _shared_gpu_seconds(helds)
        working += _shared_gpu_seconds(works)
    return PodGpuSeconds(allocated, working)


def metering_adds_up(sim: Simulation, waited_gpu_s: float | None = None) -> None:
    """The meter's readings keep working <= allocated <= provisioned GPUs; at the end its cost equals each
    launched node's price over its lifetime, and its provisioned GPU-hours each node's GPUs over its
    lifetime (a pool's node by its template, from its launch; another by its devices); its working
    GPU-hours equal the pods' GPU-equivalents over the intervals they worked, and its allocated GPU-hours
    those over the intervals they were bound plus ``waited_gpu_s``, what pods held while a scheduler kept
    them waiting at Permit before binding them (None: not known, the allocated GPU-hours not compared)."""
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
    pods = pod_gpu_seconds(sim)
    _adds_up("working", totals.gpu_seconds["working"], pods.working, end)
    if waited_gpu_s is not None:
        _adds_up("allocated", totals.gpu_seconds["allocated"], pods.allocated + waited_gpu_s, end)


def _adds_up(figure: str, metered: float, pods: float, end: float) -> None:
    if not _close(metered, pods):
        raise InvariantViolation(
            "metering-adds-up",
            f"the run's {figure} GPU-hours",
            end,
            f"metered {metered / 3600:.6f} but the pods' GPUs over their {figure} intervals make "
            f"{pods / 3600:.6f}",
        )


class WatchedLog(list[tuple[float, str]]):
    """A pod's log (``PodRecord.log``) that notes the pod in ``changed`` whenever an entry is added: every
    change of a pod's state goes through its log, so the checks after an event look only at the pods
    whose log moved."""

    __slots__ = ("changed", "key")

    def __init__(self, entries: Iterable[tuple[float, str]], key: str, changed: set[str]):
        super().__init__(entries)
        self.key, self.changed = key, changed

    def append(self, entry: tuple[float, str], /) -> None:
        super().append(entry)
        self.changed.add(self.key)


@dataclass
class Touched:
    """What the events since the last look touched: pods by key, nodes by index (None: every node),
    and whether a node's devices were described anew."""

    pods: set[str]
    nodes: set[int] | None
    devices: bool
    replaced_from: int  # the first of ``PodLifecycle.replaced`` not looked at before


@dataclass
class EventWatch:
    """Follows what each event touches without changing the run: the pods whose log moved (their logs
    watched from their creation), the nodes in the cluster's change log (``ClusterState.changes``,
    read, never trimmed) and the pods on them, and the device ledger's version."""

    changed: set[str] = field(default_factory=set)
    records_seen: int = 0
    replaced_seen: int = 0
    change_pos: int = 0
    ledger_version: int = -1

    def touched(self, sim: Simulation) -> Touched:
        records, replaced = sim.records, sim.lifecycle.replaced
        fresh = [k for k, _ in zip(reversed(records), range(len(records) - self.records_seen), strict=False)]
        fresh += [rec.pod.key for rec in replaced[self.replaced_seen :]]
        for key in fresh:
            rec = records[key]
            if not isinstance(rec.log, WatchedLog):
                rec.log = WatchedLog(rec.log, key, self.changed)
        replaced_from = self.replaced_seen
        self.records_seen, self.replaced_seen = len(records), len(replaced)
        state = sim.state
        nodes: set[int] | None = None
        if self.change_pos >= state.change_base:
            nodes = set(state.changes[self.change_pos - state.change_base :])
        self.change_pos = state.change_pos
        pods = self.changed | set(fresh)
        for i in range(state.size) if nodes is None else nodes:
            pods.update(state.pods_on[i])
        self.changed.clear()
        devices = sim.ledger.version != self.ledger_version
        self.ledger_version = sim.ledger.version
        return Touched(pods, nodes, devices, replaced_from)


@dataclass
class PermitWaits:
    """GPU-equivalents held by pods a scheduler assumed but keeps waiting at Permit (a gang gathering),
    which the meter counts as allocated before the pods are bound: ``gpu_s`` so far, ``open`` the pods
    waiting now (since, GPU-equivalents); ``exact``: False once a waiting pod held what the pods cannot
    tell (a fractional share, a ResourceClaim)."""

    gpu_s: float = 0.0
    open: dict[str, tuple[float, float]] = field(default_factory=dict)
    exact: bool = True

    def follow(self, sim: Simulation, pods: Iterable[str]) -> None:
        state, now = sim.state, sim.loop.now
        for key in sorted(set(pods) | self.open.keys()):
            a, rec = state.assignments.get(key), sim.records.get(key)
            waiting = a is not None and rec is not None and rec.bound_s is None
            since = self.open.get(key)
            if since is not None and (not waiting or a is None or a.start_s != since[0]):
                stop = rec.bound_s if rec is not None and rec.bound_s is not None else now
                self.gpu_s += since[1] * max(stop - since[0], 0.0)
                del self.open[key]
            if waiting and a is not None and key not in self.open:
                self.open[key] = (a.start_s, self._held(sim, a.pod, a.node))

    def _held(self, sim: Simulation, pod: Pod, node: int) -> float:
        if pod.gpu_share is not None or pod.resource_claims:
            self.exact = False
        units = sim.cluster.devices_of(sim.state.nodes[node].name).units
        return sum(n * units[r][0].share for r, n in pod.requests.items() if units.get(r))

    def total(self, end: float) -> float | None:
        """The GPU-seconds held waiting up to ``end`` (None: not exact)."""
        still = sum(held * max(end - since, 0.0) for since, held in self.open.values())
        return self.gpu_s + still if self.exact else None


@dataclass
class InvariantChecks:
    """The invariants checked after every event, and at the end of the run. After the first event each
    check looks only at what the event touched (``EventWatch``): the nodes whose allocation changed and
    their devices, the pods whose log moved or that sit on those nodes, their gangs, work items and
    controllers; the end of the run checks everything."""

    events: int = 0
    progress: dict[str, Progress] = field(default_factory=dict)
    items: dict[tuple[str, int], float] = field(default_factory=dict)
    replicas: dict[str, int] = field(default_factory=dict)
    watch: EventWatch = field(default_factory=EventWatch)
    waits: PermitWaits = field(default_factory=PermitWaits)
    #: the pods counted in each phase (``counted_phase``), by pod and in all
    phases: dict[str, str] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    requeued: dict[str, int] = field(default_factory=dict)  # each work list's requeued items, last looked at
    scaled_jobs: int = -1  # Jobs the ScaledJobs made, last looked at

    def after_event(self, sim: Simulation) -> None:
        self.events += 1
        touched = self.watch.touched(sim)
        self.waits.follow(sim, touched.pods)
        if self.events == 1 or touched.nodes is None:
            self._check(sim)
            self._recount(sim, sim.records)
            return
        for key in touched.pods:
            self._recount(sim, (key,))
        nodes = touched.nodes
        resources_within_allocatable(sim, nodes)
        devices_held_once(sim, None if touched.devices else nodes)
        one_state_per_pod(sim, touched.pods, self.counts, touched.replaced_from)
        groups = {k for key in touched.pods if (k := group_key(sim.records[key].pod)) is not None}
        gangs_whole(sim, groups)
        checkpoints_kept(sim, self.progress, touched.pods)
        items_keep_progress(sim, self.items, self._items(sim, touched.pods))
        controllers = {
            controller_key(c) for key in touched.pods if (c := sim.created_by.get(key)) is not None
        }
        made = sum(len(jobs) for jobs in sim.workload_autoscalers.jobs_of.values())
        replicas_within_bounds(sim, self.replicas, controllers, made != self.scaled_jobs)
        self.scaled_jobs = made
        kueue_within_quota(sim)
        kueue_pods_on_flavors(sim, touched.pods)

    def at_end(self, sim: Simulation) -> None:
        self._check(sim)
        metering_adds_up(sim, self.waits.total(sim.meter.until_s))

    def _check(self, sim: Simulation) -> None:
        resources_within_allocatable(sim)
        devices_held_once(sim)
        one_state_per_pod(sim)
        gangs_whole(sim)
        checkpoints_kept(sim, self.progress)
        items_keep_progress(sim, self.items)
        replicas_within_bounds(sim, self.replicas)
        kueue_within_quota(sim)
        kueue_pods_on_flavors(sim)
        for name, work in sim.lifecycle.work_lists.items():
            self.requeued[name] = work.requeued

    def _recount(self, sim: Simulation, keys: Iterable[str]) -> None:
        for key in keys:
            before = self.phases.pop(key, None)
            if before is not None:
                self.counts[before] -= 1
            phase = counted_phase(sim.records[key])
            if phase is not None:
                self.phases[key] = phase
                self.counts[phase] += 1

    def _items(self, sim: Simulation, pods: set[str]) -> list[ItemProgress]:
        """The work items an event may have moved: those its pods work on, and those pushed back."""
        out: list[ItemProgress] = []
        for name, work in sorted(sim.lifecycle.work_lists.items()):
            back = work.requeued - self.requeued.get(name, 0)
            self.requeued[name] = work.requeued
            out += [(name, item.id, item.done_s) for item in itertools.islice(work.queued, max(back, 0))]
            out += [
                (name, item.id, sim.records[pod].done_s)
                for pod, item in work.in_progress.items()
                if pod in pods
            ]
        return out
