"""One Kueue scheduling cycle: the head of each ClusterQueue is admitted, preempts, or waits.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/scheduler.go`` (``schedule``, ``nominate``,
``entryOrdering``) and ``pkg/queue/cluster_queue.go`` (heads, inadmissible workloads):

* each ClusterQueue offers its head: the first pending workload in queue order (priority,
  then creation). With ``BestEffortFIFO`` a workload found inadmissible is set aside until
  quota is released, so the next one can be the head; with ``StrictFIFO`` the head blocks
  the queue;
* a workload whose ClusterQueue does not exist, is inactive (names a missing flavor) or does
  not select its namespace is inadmissible with Kueue's messages (``ClusterQueue cq doesn't
  exist``, ``ClusterQueue cq is inactive``, ``Workload namespace doesn't match ClusterQueue
  selector``);
* heads are nominated against a snapshot (``flavors.assign_flavors``), then taken in order:
  those that do not borrow first, then higher priority, then older; with fair sharing on (the manager
  Configuration's ``fairSharing``), in each cohort tree by the shares of its nodes instead
  (``tournament.fair_order``), and preemption is fair sharing's (``preemption.preemption_targets``);
* a head that fits is admitted if its nominated assignment (its flavors are not chosen again) still
  fits after this cycle's earlier admissions (else ``Workload no longer fits after processing another
  workload``, and it stays the head) and, when
  it asks for Topology-Aware Scheduling, if its TAS pod sets find their topology domains, each on
  the nodes of its TAS flavor (``topology.place``; the nodes this cycle's earlier TAS admissions took
  are taken); one
  that can fit by preemption evicts its targets (``preemption.preemption_targets``) and stays
  the head until they are gone; one that cannot fit gets the reasons as its message.

The caller runs cycles until one changes nothing (Kueue's scheduler loops the same way).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gpufleet.model.kueue import BEST_EFFORT_FIFO, ClusterQueue, Cohort, FairSharing, ResourceFlavor, Topology
from gpufleet.scheduling.kueue.flavors import Assignment, Mode, assign_flavors
from gpufleet.scheduling.kueue.oracle import preemption_oracle
from gpufleet.scheduling.kueue.preemption import Target, preemption_targets
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.topology import NodeRoom, TopologyRequest, place
from gpufleet.scheduling.kueue.tournament import fair_order
from gpufleet.scheduling.kueue.workload import Admitted, Workload

CLUSTER_QUEUE_MISSING = "ClusterQueue {} doesn't exist"
CLUSTER_QUEUE_INACTIVE = "ClusterQueue {} is inactive"
NAMESPACE_MISMATCH = "Workload namespace doesn't match ClusterQueue selector"
NO_LONGER_FITS = "Workload no longer fits after processing another workload"


@dataclass
class CycleResult:
    admitted: list[tuple[Workload, Assignment]] = field(default_factory=list)
    placements: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # TAS: key -> pod set -> nodes
    preemptions: list[tuple[Workload, Target]] = field(default_factory=list)  # (preemptor, victim)
    inadmissible: list[str] = field(default_factory=list)  # set aside (BestEffortFIFO)
    messages: dict[str, str] = field(default_factory=dict)  # why a pending workload waits

    def changed(self) -> bool:
        return bool(self.admitted or self.preemptions or self.inadmissible)


def usage_of(admitted: Sequence[Admitted]) -> dict[str, dict[tuple[str, str], int]]:
    usage: dict[str, dict[tuple[str, str], int]] = {}
    for a in admitted:
        queue = usage.setdefault(a.workload.cluster_queue, {})
        for fr, amount in a.usage.items():
            queue[fr] = queue.get(fr, 0) + amount
    return usage


def _heads(
    pending: Sequence[Workload], queues: Mapping[str, ClusterQueue], set_aside: set[str]
) -> list[Workload]:
    by_queue: dict[str, list[Workload]] = {}
    for w in sorted(pending, key=Workload.queue_order):
        by_queue.setdefault(w.cluster_queue, []).append(w)
    heads = []
    for name in sorted(by_queue):
        strict = name in queues and queues[name].queueing_strategy != BEST_EFFORT_FIFO
        head = next((w for w in by_queue[name] if strict or w.key not in set_aside), None)
        if head is not None:
            heads.append(head)
    return heads


def schedule(
    pending: Sequence[Workload],
    admitted: Sequence[Admitted],
    queues: Mapping[str, ClusterQueue],
    flavors: Mapping[str, ResourceFlavor],
    set_aside: set[str],
    cohorts: Mapping[str, Cohort] | None = None,
    topologies: Mapping[str, Topology] | None = None,
    nodes: Mapping[str, NodeRoom] | None = None,
    fair_sharing: FairSharing | None = None,
) -> CycleResult:
    """One cycle over the heads of ``pending``; ``set_aside``: BestEffortFIFO workloads found
    inadmissible since quota was last released; ``nodes``: each node's labels and free capacity,
    for Topology-Aware Scheduling; ``fair_sharing``: the manager Configuration's (None: off)."""
    result = CycleResult()
    snapshot = QuotaSnapshot(queues, usage_of(admitted), cohorts)
    topologies = topologies or {}
    room = {name: NodeRoom(n.labels, dict(n.free)) for name, n in (nodes or {}).items()}

    def assign(workload: Workload, cq: ClusterQueue) -> Assignment:
        oracle = preemption_oracle(workload, cq, admitted, snapshot, fair_sharing)
        return assign_flavors(workload, cq, flavors, snapshot, oracle, fair_sharing is not None)

    entries: list[tuple[Workload, Assignment]] = []
    for head in _heads(pending, queues, set_aside):
        cq = queues.get(head.cluster_queue)
        refusal = _refusal(head, cq, flavors, topologies)
        if refusal is not None:
            result.messages[head.key] = refusal
            _set_aside(result, head, cq)
            continue
        assert cq is not None  # _refusal answers for a missing queue
        entries.append((head, assign(head, cq)))
    entries.sort(key=lambda e: (e[1].borrows, *e[0].queue_order()))
    targeted: set[str] = set()
    for workload, nominated in entries if fair_sharing is None else fair_order(entries, snapshot):
        cq = queues[workload.cluster_queue]
        if nominated.mode is Mode.FIT:
            # the nominated assignment, kept (``updateAssignmentIfNeeded``: no recompute), must still fit
            # after this cycle's earlier admissions (``fits``: ``ClusterQueueSnapshot.Fits``)
            if any(v > snapshot.available(cq.name, fr) for fr, v in nominated.usage.items()):
                result.messages[workload.key] = NO_LONGER_FITS
                continue
            placed = _topology(workload, nominated, flavors, topologies, room)
            if isinstance(placed, str):
                result.messages[workload.key] = placed
                _set_aside(result, workload, cq)
                continue
            snapshot.add(cq.name, nominated.usage)
            result.admitted.append((workload, nominated))
            if placed:
                result.placements[workload.key] = placed
            continue
        result.messages[workload.key] = nominated.message()
        targets = (
            preemption_targets(workload, cq, nominated.usage, admitted, snapshot, fair_sharing)
            if nominated.mode is Mode.PREEMPT
            else []
        )
        if not targets:
            _set_aside(result, workload, cq)
        elif not targeted & {t.key for t in targets}:  # each victim serves one preemptor per cycle
            targeted.update(t.key for t in targets)
            evicting = {a.workload.key for a in admitted if a.evicting}
            result.preemptions.extend((workload, t) for t in targets if t.key not in evicting)
    return result


def _topology(
    workload: Workload,
    assignment: Assignment,
    flavors: Mapping[str, ResourceFlavor],
    topologies: Mapping[str, Topology],
    room: dict[str, NodeRoom],
) -> dict[str, list[str]] | str:
    """The TAS pod sets' nodes, each in its assigned TAS flavor's topology (taken from ``room``), or
    why none (upstream's ``onlyTASFlavor``: a pod set's TAS flavor; one asking for nothing has none)."""
    asks: dict[str, list[TopologyRequest]] = {}
    for ps in workload.pod_sets:
        tas = sorted(f for f in set(assignment.flavors[ps.name].values()) if flavors[f].topology is not None)
        if ps.topology is not None and tas:
            asks.setdefault(tas[0], []).append(ps.topology)
    if not asks:
        return {}
    trial = {n: NodeRoom(r.labels, dict(r.free)) for n, r in room.items()}  # room, once all are placed
    out: dict[str, list[str]] = {}
    for name, flavor_asks in sorted(asks.items()):
        flavor = flavors[name]
        labels = flavor.node_labels
        nodes = {n: r for n, r in trial.items() if all(r.labels.get(k) == v for k, v in labels.items())}
        placed = place(flavor_asks, topologies[str(flavor.topology)], nodes)
        if isinstance(placed, str):
            return placed
        for ask in flavor_asks:
            for node in placed[ask.pod_set]:
                free = trial[node].free
                for r, v in ask.requests.items():
                    free[r] = free.get(r, 0) - v
        out.update(placed)
    room.update(trial)
    return out


def _refusal(
    workload: Workload,
    cq: ClusterQueue | None,
    flavors: Mapping[str, ResourceFlavor],
    topologies: Mapping[str, Topology],
) -> str | None:
    """Why the workload cannot be considered at all: no such queue, an inactive one (a flavor it
    names does not exist, or a TAS flavor whose Topology does not), or a namespace its selector
    does not admit."""
    if cq is None:
        return CLUSTER_QUEUE_MISSING.format(workload.cluster_queue)
    names = [f.flavor for g in cq.resource_groups for f in g.flavors]
    if any(f not in flavors for f in names) or any(
        flavors[f].topology is not None and flavors[f].topology not in topologies for f in names
    ):
        return CLUSTER_QUEUE_INACTIVE.format(cq.name)
    if not cq.admits_namespace(workload.namespace):
        return NAMESPACE_MISMATCH
    return None


def _set_aside(result: CycleResult, workload: Workload, cq: ClusterQueue | None) -> None:
    if cq is None or cq.queueing_strategy == BEST_EFFORT_FIFO:
        result.inadmissible.append(workload.key)
