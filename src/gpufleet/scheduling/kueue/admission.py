"""One Kueue scheduling cycle: the head of each ClusterQueue is admitted, preempts, or waits.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/scheduler.go`` (``schedule``, ``nominate``,
``entryOrdering``) and ``pkg/queue/cluster_queue.go`` (heads, inadmissible workloads):

* each ClusterQueue offers its head: the first pending workload in queue order (priority,
  then creation). With ``BestEffortFIFO`` a workload found inadmissible is set aside until
  quota is released, so the next one can be the head; with ``StrictFIFO`` the head blocks
  the queue, except one whose namespace the queue does not select, which is set aside
  (``pkg/cache/queue/cluster_queue.go`` ``RequeueIfNotPresent``). A ``BestEffortFIFO`` head that went on
  to preempt stays its queue's head, ahead of any workload that comes back or arrives with a higher
  priority, until it is admitted (the sticky ``preemptorWorkload``);
* a workload whose ClusterQueue does not exist, is inactive (names a missing flavor) or does
  not select its namespace is inadmissible with Kueue's messages (``ClusterQueue cq doesn't
  exist``, ``ClusterQueue cq is inactive``, ``workload namespace doesn't match ClusterQueue
  selector``);
* heads are nominated against the cycle's first snapshot (``nominate``: ``flavors.assign_flavors``,
  and for one that needs preemption its targets, ``preemption.preemption_targets``; one whose whole
  counts do neither, with pod sets that have a ``minCount``, at the largest counts that do, their TAS pod
  sets' placement on the cycle's nodes included: ``partial_admission``, the ``PartialAdmission`` gate on;
  a pod set that asks for no TAS in a queue of TAS flavors only asks for it implicitly:
  ``flavors.implied_tas``), then taken in
  order: the lower borrowing level of the assignment first (``Assignment.Borrowing``: 0 without
  borrowing, else the height of the cohort subtree it borrows from), then higher priority, then older;
  with fair sharing on (the manager Configuration's ``fairSharing``), in each cohort tree by the shares
  of its nodes instead (``tournament.fair_order``), and preemption is fair sharing's;
* (``processEntry``) a head that needs preemption but found no candidates is set aside and, unless its
  queue can always reclaim what it lends (``reclaimWithinCohort: Any``), keeps the quota it could take
  from the cycle's later heads (``reserveCapacityForUnreclaimablePreempt``); one whose targets another
  head of the cycle already preempts waits (``Workload has overlapping preemption targets with another
  workload``); otherwise its nominated assignment (its flavors are not chosen again) must still fit after
  this cycle's earlier admissions and preemptors, with this cycle's victims and its own gone (``fits``;
  else ``Workload no longer fits after processing another workload``, and it stays the head);
* one that fits and needs preemption evicts its targets, takes its quota for the rest of the cycle and
  stays the head until they are gone (its message ends ``. Pending the preemption of N workload(s)``);
  one that fits outright is admitted if, when it asks for Topology-Aware Scheduling, its TAS pod sets
  find their topology domains, each on the nodes of its TAS flavor (``topology.place``; the nodes this
  cycle's earlier TAS admissions took are taken); one that cannot fit gets the reasons as its message;
* with ``waitForPodsReady.blockAdmission`` (``waitForPodsReadyIfNeeded``), one that fits outright is held
  while an admitted workload is not PodsReady (``not_ready``), this cycle's earlier admissions included:
  it keeps its quota for the rest of the cycle, is not set aside, and waits (``waiting for all admitted
  workloads to be in PodsReady condition``); preemptors are not held.

The caller runs cycles until one changes nothing (Kueue's scheduler loops the same way).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from gpufleet.model.kueue import (
    ANY,
    BEST_EFFORT_FIFO,
    ClusterQueue,
    Cohort,
    FairSharing,
    FlavorResource,
    ResourceFlavor,
    ResourceQuota,
    Topology,
)
from gpufleet.scheduling.kueue.flavors import Assignment, Mode, assign_flavors, implied_tas
from gpufleet.scheduling.kueue.oracle import preemption_oracle
from gpufleet.scheduling.kueue.partial_admission import search
from gpufleet.scheduling.kueue.pods_ready import WAITING_FOR_PODS_READY
from gpufleet.scheduling.kueue.preemption import Target, preemption_targets
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.topology import NodeRoom, TopologyRequest, place
from gpufleet.scheduling.kueue.tournament import fair_order
from gpufleet.scheduling.kueue.workload import Admitted, Workload

CLUSTER_QUEUE_MISSING = "ClusterQueue {} doesn't exist"
CLUSTER_QUEUE_INACTIVE = "ClusterQueue {} is inactive"
NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"  # ``ErrNamespaceMismatch``
NO_LONGER_FITS = "Workload no longer fits after processing another workload"
OVERLAPPING_TARGETS = "Workload has overlapping preemption targets with another workload"
PENDING_PREEMPTION = ". Pending the preemption of {} workload(s)"


@dataclass
class CycleResult:
    admitted: list[tuple[Workload, Assignment]] = field(default_factory=list)
    placements: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # TAS: key -> pod set -> nodes
    preemptions: list[tuple[Workload, Target]] = field(default_factory=list)  # (preemptor, victim)
    inadmissible: list[str] = field(default_factory=list)  # set aside (``_set_aside``)
    messages: dict[str, str] = field(default_factory=dict)  # why a pending workload waits
    #: each ``BestEffortFIFO`` ClusterQueue's head that went on to preempt
    #: (``RequeueReasonPendingPreemption``): the queue keeps it as its head until it is admitted
    #: (``preemptorWorkload``, sticky)
    preemptors: dict[str, str] = field(default_factory=dict)

    def changed(self) -> bool:
        return bool(self.admitted or self.preemptions or self.inadmissible)


def usage_of(admitted: Sequence[Admitted]) -> dict[str, dict[tuple[str, str], int]]:
    usage: dict[str, dict[tuple[str, str], int]] = {}
    for a in admitted:
        queue = usage.setdefault(a.workload.cluster_queue, {})
        for fr, amount in a.usage.items():
            queue[fr] = queue.get(fr, 0) + amount
    return usage


def _heads(pending: Sequence[Workload], set_aside: set[str], sticky: Collection[str] = ()) -> list[Workload]:
    """Each ClusterQueue's first workload in queue order that is not set aside (only a ``BestEffortFIFO``
    queue sets one aside, except for a namespace it does not select: ``_set_aside``); a ``sticky`` workload
    (``CycleResult.preemptors``) comes before the others of its queue (``baseCompareFunc`` in
    ``pkg/cache/queue/cluster_queue.go``: the sticky preemptor first, then priority, then time)."""
    by_queue: dict[str, list[Workload]] = {}
    for w in sorted(pending, key=lambda w: (w.key not in sticky, *w.queue_order())):
        by_queue.setdefault(w.cluster_queue, []).append(w)
    heads = []
    for name in sorted(by_queue):
        head = next((w for w in by_queue[name] if w.key not in set_aside), None)
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
    sticky: Collection[str] = (),
    block_admission: bool = False,
    not_ready: bool = False,
) -> CycleResult:
    """One cycle over the heads of ``pending``; ``set_aside``: BestEffortFIFO workloads found
    inadmissible since quota was last released; ``nodes``: each node's labels and free capacity,
    for Topology-Aware Scheduling; ``fair_sharing``: the manager Configuration's (None: off); ``sticky``:
    the preemptors earlier cycles kept at their queues' heads (``CycleResult.preemptors``) not yet
    admitted; ``block_admission``: ``waitForPodsReady.blockAdmission`` is on, ``not_ready``: an admitted
    workload is not PodsReady."""
    result = CycleResult()
    snapshot = QuotaSnapshot(queues, usage_of(admitted), cohorts)
    topologies = topologies or {}
    room = {name: replace(n, free=dict(n.free)) for name, n in (nodes or {}).items()}

    def attempt(workload: Workload, cq: ClusterQueue) -> tuple[Assignment, _Nomination | None]:
        """The workload's assignment, and its nomination where it fits or finds preemption targets (on the
        cycle's first snapshot)."""
        oracle = preemption_oracle(workload, cq, admitted, snapshot, fair_sharing)
        fair = fair_sharing is not None
        assignment = assign_flavors(workload, cq, flavors, snapshot, oracle, fair, topologies)
        if assignment.mode is Mode.FIT:
            return assignment, _Nomination(workload, assignment, [])
        if assignment.mode is Mode.PREEMPT:
            targets = preemption_targets(workload, cq, assignment.usage, admitted, snapshot, fair_sharing)
            if targets:
                return assignment, _Nomination(workload, assignment, targets)
        return assignment, None

    def placeable(nomination: _Nomination | None) -> _Nomination | None:
        """The nomination, unless it fits quota but its TAS pod sets do not fit their topologies on the
        cycle's nodes (upstream's flavor assigner places TAS pod sets, so such an assignment is
        ``NoFit``)."""
        if nomination is None or nomination.assignment.mode is not Mode.FIT:
            return nomination
        placed = _topology(nomination.workload, nomination.assignment, flavors, topologies, dict(room))
        return None if isinstance(placed, str) else nomination

    def nominate(workload: Workload, cq: ClusterQueue) -> _Nomination:
        """``getInitialAssignments``: its whole counts' assignment if it fits or finds targets; else, for a
        workload that may be partially admitted, the largest counts that do, its TAS pod sets' placement
        included (``partial_admission``: ``PodSetReducer`` over the flavor assigner, which places them);
        else its whole counts' assignment, without targets."""
        whole, nomination = attempt(workload, cq)
        found = nomination
        if workload.can_be_partially_admitted() and placeable(nomination) is None:
            full = [ps.count for ps in workload.pod_sets]
            least = [ps.count if ps.min_count is None else ps.min_count for ps in workload.pod_sets]
            found = search(
                full, least, lambda counts: placeable(attempt(workload.with_counts(counts), cq)[1])
            )
        return found or nomination or _Nomination(workload, whole, [])

    entries: list[tuple[Workload, Assignment]] = []
    targets_of: dict[str, list[Target]] = {}
    for head in _heads(pending, set_aside, sticky):
        cq = queues.get(head.cluster_queue)
        refusal = _refusal(head, cq, flavors, topologies)
        if refusal is not None:
            result.messages[head.key] = refusal
            _set_aside(result, head, cq, refusal == NAMESPACE_MISMATCH)
            continue
        assert cq is not None  # _refusal answers for a missing queue
        nomination = nominate(implied_tas(head, cq, flavors), cq)
        entries.append((nomination.workload, nomination.assignment))
        targets_of[head.key] = nomination.targets
    entries.sort(key=lambda e: (e[1].borrowing, *e[0].queue_order()))
    cycle = _Cycle(result, snapshot, {a.workload.key: a for a in admitted}, targets_of)
    for workload, nominated in entries if fair_sharing is None else fair_order(entries, snapshot):
        cq = queues[workload.cluster_queue]
        if cycle.waits(workload, cq, nominated):
            continue
        if nominated.mode is Mode.PREEMPT:
            cycle.preempt(workload, cq, nominated)
            continue
        if block_admission and (not_ready or result.admitted):
            snapshot.add(cq.name, nominated.usage)
            result.messages[workload.key] = WAITING_FOR_PODS_READY
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
    return result


@dataclass(frozen=True)
class _Nomination:
    """A head as the cycle takes it: the workload (its counts cut where partially admitted), its assignment
    and, where that needs preemption, the targets found (``getAssignments``)."""

    workload: Workload
    assignment: Assignment
    targets: list[Target]


@dataclass
class _Cycle:
    """What the cycle's nominated heads are taken with (``processEntry``'s state): the snapshot, the
    admitted workloads by key, each head's preemption targets (found at nomination) and this cycle's
    victims so far (``preemptedWorkloads``)."""

    result: CycleResult
    snapshot: QuotaSnapshot
    admitted: dict[str, Admitted]
    targets: dict[str, list[Target]]
    preempted: dict[str, Admitted] = field(default_factory=dict)

    def waits(self, workload: Workload, cq: ClusterQueue, nominated: Assignment) -> bool:
        """Whether the head waits, with its message: it fits nowhere, or needs preemption without
        candidates (set aside, having kept what it could take: ``_unreclaimable``), or another head of the
        cycle preempts one of its targets, or its nominated assignment (kept: ``updateAssignmentIfNeeded``
        does not recompute) no longer fits after this cycle's earlier heads, with this cycle's victims and
        its own gone (``fits``)."""
        victims = [self.admitted[t.key] for t in self.targets.get(workload.key, [])]
        if nominated.mode is Mode.NO_FIT or (nominated.mode is Mode.PREEMPT and not victims):
            if nominated.mode is Mode.PREEMPT:
                self.snapshot.add(cq.name, _unreclaimable(self.snapshot, cq, nominated))
            _set_aside(self.result, workload, cq)
            message = nominated.message()
        elif any(v.workload.key in self.preempted for v in victims):
            message = OVERLAPPING_TARGETS
        elif not _fits(self.snapshot, cq, nominated.usage, [*self.preempted.values(), *victims]):
            message = NO_LONGER_FITS
        else:
            return False
        self.result.messages[workload.key] = message
        return True

    def preempt(self, workload: Workload, cq: ClusterQueue, nominated: Assignment) -> None:
        """The head evicts its targets (those not being evicted already) and takes its quota for the rest
        of the cycle (``cq.AddUsage``, ``issuePreemptions``, ``markPreemptionOutcome``)."""
        targets = self.targets[workload.key]
        victims = [self.admitted[t.key] for t in targets]
        self.preempted.update((v.workload.key, v) for v in victims)
        self.snapshot.add(cq.name, nominated.usage)
        self.result.messages[workload.key] = nominated.message() + PENDING_PREEMPTION.format(len(targets))
        self.result.preemptions.extend(
            (workload, t) for t, v in zip(targets, victims, strict=True) if not v.evicting
        )
        if cq.queueing_strategy == BEST_EFFORT_FIFO:
            self.result.preemptors[cq.name] = workload.key


def _fits(
    snapshot: QuotaSnapshot, cq: ClusterQueue, usage: Mapping[FlavorResource, int], gone: list[Admitted]
) -> bool:
    """``fits`` (``scheduler.go``): ``usage`` is available to the queue once the ``gone`` workloads' usage
    is removed (``SimulateWorkloadUsageRemoval``, ``ClusterQueueSnapshot.Fits``); the snapshot is left as it
    was."""
    for a in gone:
        snapshot.add(a.workload.cluster_queue, a.usage, -1)
    fits = all(v <= snapshot.available(cq.name, fr) for fr, v in usage.items())
    for a in gone:
        snapshot.add(a.workload.cluster_queue, a.usage)
    return fits


def _unreclaimable(
    snapshot: QuotaSnapshot, cq: ClusterQueue, nominated: Assignment
) -> dict[FlavorResource, int]:
    """What a head that needs preemption but found no candidates keeps from the cycle's later heads
    (``reserveCapacityForUnreclaimablePreempt``, ``quotaResourcesToReserve`` in ``scheduler.go``): nothing
    where its queue can always reclaim what it lends (``CanAlwaysReclaim``: ``reclaimWithinCohort: Any``);
    else, where its assignment borrows, its request up to what its borrowing limit leaves (all of it without
    one), and where it does not, its request up to what its nominal quota leaves."""
    if cq.reclaim_within_cohort == ANY:
        return {}
    reserved: dict[FlavorResource, int] = {}
    for fr, v in nominated.usage.items():
        quota = cq.quota(*fr) or ResourceQuota(0)
        used = snapshot.used(cq.name, fr)
        if not nominated.borrows:
            reserved[fr] = max(0, min(v, quota.nominal - used))
        elif quota.borrowing_limit is None:
            reserved[fr] = v
        else:
            reserved[fr] = min(v, quota.nominal + quota.borrowing_limit - used)
    return reserved


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
            tolerations = ps.topology.tolerations + flavors[tas[0]].tolerations  # ``s.tolerations``
            asks.setdefault(tas[0], []).append(replace(ps.topology, tolerations=tolerations))
    if not asks:
        return {}
    trial = {n: replace(r, free=dict(r.free)) for n, r in room.items()}  # room, once all are placed
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


def _set_aside(
    result: CycleResult, workload: Workload, cq: ClusterQueue | None, mismatch: bool = False
) -> None:
    """``RequeueIfNotPresent`` (``pkg/cache/queue/cluster_queue.go``): a ``BestEffortFIFO`` queue sets the
    workload aside; a ``StrictFIFO`` one keeps it as its head, unless its namespace does not match the
    queue's selector (``mismatch``: ``RequeueReasonNamespaceMismatch``)."""
    if cq is None or cq.queueing_strategy == BEST_EFFORT_FIFO or mismatch:
        result.inadmissible.append(workload.key)
