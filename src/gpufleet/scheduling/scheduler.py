"""One scheduler process: its profiles, one queue, its waiting (Permit) pods, and cycles.

``Scheduler.run(now)`` is a pure step: it takes the shared ``ClusterState`` and a clock
value and returns what happened (pods bound, waiting, unschedulable with kube-scheduler's
message). It assumes pods on the state as kube-scheduler's cache does (Reserve), so two
schedulers see each other's placements. The node choice follows ``schedule_one.go``:
PreFilter, Filter over the nodes starting where the last cycle stopped until
``numFeasibleNodesToFind`` feasible nodes are found (``percentageOfNodesToScore``:
all nodes below 100, else the configured percentage or ``50 - nodes/125`` floored at 5, and
never fewer than 100), Score and NormalizeScore, then a uniformly random choice among the
top-scoring nodes (``selectHost``), drawn from a seeded generator (``host_draws``). A pod that
preemption nominated to a node has that node filtered first (``evaluateNominatedNode``): when it
passes, it is the pod's node, unscored.

Filter results and scores come from per-shape caches (``shape_cache``) that re-evaluate only the
nodes a binding changed and keep the top-scoring nodes. When only those cached scores differ, a cycle
that scores every node takes the cache's top nodes, and one that scores a window takes the top nodes
inside the window, found by bisection (when it holds none, the window is scored): the same nodes
kube-scheduler would score best, at a cost that does not grow with the window.
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from gpufleet.cluster.snapshot import ClusterSnapshot
from gpufleet.cluster.state import ClusterState, IntArray
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.events import (
    ASSIGNED_POD_ADD,
    RESOURCE_CLAIM_UPDATE,
    ClusterChange,
    ClusterEvent,
    EventPod,
    assigned_pod_deleted,
)
from gpufleet.scheduling.framework import (
    SUCCESS,
    Code,
    DynamicFilter,
    PluginError,
    PodContext,
    PostFilterRequest,
    StaticFilter,
    Status,
)
from gpufleet.scheduling.gangs import GangView, group_key
from gpufleet.scheduling.host_draws import HostDraws
from gpufleet.scheduling.messages import NO_NODES_AVAILABLE, fit_error
from gpufleet.scheduling.plugins.backfill import Backfill, Backfiller
from gpufleet.scheduling.pod_aware import Placed, PodAwareFilter, PodCycle
from gpufleet.scheduling.profile import Profile, build_profiles
from gpufleet.scheduling.queue import QueuedPod, SchedulingQueue
from gpufleet.scheduling.queueing_hints import interested, worth_requeuing
from gpufleet.scheduling.shape_cache import ShapeCache

if TYPE_CHECKING:
    from gpufleet.gpus.devices import Unit
    from gpufleet.gpus.dra.state import DraState
    from gpufleet.model.workloads import PodGroup

#: ``v1.PodReasonSchedulerError``: the PodScheduled condition's reason after an attempt a plugin's Error
#: status aborted (cluster-autoscaler looks only at pods whose reason is ``Unschedulable``)
SCHEDULER_ERROR = "SchedulerError"
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int | None, num_nodes: int) -> int:
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(slots=True)
class Outcome:
    """What one scheduling step did to one pod. (Not frozen, though nothing changes one: a frozen
    dataclass's ``__init__`` sets each field through ``object.__setattr__``, a third of a microsecond
    per pod bound.)"""

    pod: Pod
    kind: str  # "bound" | "waiting" | "unschedulable" | "rejected" | "preempting"
    node: str | None = None
    #: why it is unschedulable or rejected; "bound": the kubelet's admission error where its device plugin
    #: cannot cover it (``UnexpectedAdmissionError``)
    message: str | None = None
    victims: tuple[str, ...] = ()  # "preempting": the pods to evict from ``node``
    devices: tuple[Unit, ...] = ()  # "bound": the device units it got there (``gpus.ledger``)
    #: "unschedulable" by a plugin's Error status (``framework.PluginError``), not a FitError: the
    #: PodScheduled condition's reason is ``SchedulerError``, not ``Unschedulable``
    error: bool = False
    #: "unschedulable": preemption found no candidate and cleared the node the pod was nominated to
    #: (``NewPostFilterResultWithNominatedNode("")``: ``status.nominatedNodeName`` is cleared)
    unnominated: bool = False


#: Chooses among equally good nodes (their names, ascending by node index): the index of the choice.
TieBreak = Callable[[Pod, list[str]], int]


class Ties:
    """Equally best node indices without copying them: ``nodes[lo:hi]``, then ``nodes[:tail]`` (the
    part of a window that runs round the end of the node list)."""

    __slots__ = ("hi", "lo", "nodes", "tail")

    def __init__(self, nodes: list[int], lo: int, hi: int, tail: int = 0):
        self.nodes, self.lo, self.hi, self.tail = nodes, lo, hi, tail

    def __len__(self) -> int:
        return self.hi - self.lo + self.tail

    def __getitem__(self, k: int) -> int:
        j = self.lo + k
        return self.nodes[j] if j < self.hi else self.nodes[j - self.hi]

    def __iter__(self) -> Iterator[int]:
        yield from self.nodes[self.lo : self.hi]
        yield from self.nodes[: self.tail]


#: The equally best nodes of one attempt, by node index.
Best = list[int] | Ties | IntArray


@dataclass(frozen=True)
class Decision:
    """One attempt's whole answer, every tie included: what kube-scheduler could have done where its
    own choice is random (``selectHost`` among the top-scoring nodes; the first of the equally ranked
    preemption candidates, in map order)."""

    nodes: tuple[str, ...] = ()  # bound: the top-scoring feasible nodes (one when determined)
    message: str = ""  # otherwise: the FailedScheduling message
    #: DefaultPreemption nominated one of these equally ranked (node, victims)
    nominations: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Placement:
    """One attempt's answer: a node, or kube-scheduler's message and what PostFilter decided."""

    node: str | None
    message: str = ""
    nominated: str | None = None  # DefaultPreemption chose this node ...
    victims: tuple[str, ...] = ()  # ... and these pods must go
    #: every equally ranked preemption candidate, the chosen one among them, as (node, victims)
    nominations: tuple[tuple[str, tuple[str, ...]], ...] = ()
    release_group: PodGroup | None = None  # Coscheduling rejects this gang's waiting pods
    gang_nominated: tuple[tuple[str, str], ...] = ()  # the preemptor's gang: other members -> nodes
    deallocate: tuple[str, ...] = ()  # ResourceClaims PostFilter deallocates (DynamicResources)
    #: the attempt failed with a plugin's Error status (``message`` is the error's), not a FitError
    error: bool = False
    #: PostFilter found no candidate: the pod's nomination is cleared (``ModeOverride`` with no node)
    clears_nomination: bool = False


@dataclass
class Waiting:
    """A pod waiting at Permit for its gang (``waitingPod``): the node it holds, since when, until when."""

    qp: QueuedPod
    node: str
    since: float  # when Permit told it to wait
    deadline: float
    group: PodGroup


@dataclass
class Scheduler:
    """kube-scheduler over a ``ClusterState``: its profiles, its queue, and each cycle's filters, scores,
    PostFilter and binding."""

    config: SchedulerConfig
    state: ClusterState
    gangs: GangView
    seed: int = 0
    #: among the best-scoring nodes: "random" (kube-scheduler's selectHost, seeded), "first" (the
    #: lowest node index: the FGD authors' simulator picks the smallest node name), or a TieBreak
    #: (which also picks among equally ranked preemption candidates: "random" takes the first)
    tie_break: str | TieBreak = "random"
    profiles: dict[str, Profile] = field(init=False)
    queue: SchedulingQueue = field(init=False)

    def __post_init__(self) -> None:
        built = build_profiles(self.config)
        self.profiles = {p.scheduler_name: p for p in built}
        sorter, gangs = built[0].queue_sort, self.gangs  # (not ``self``: no cycle through the queue)
        self.queue = SchedulingQueue(
            lambda qp: sorter.sort_key(qp, gangs),
            self.config.pod_initial_backoff_s,
            self.config.pod_max_backoff_s,
        )
        self.draws = HostDraws(np.random.default_rng(self.seed))  # selectHost's seeded choices
        self.caches: dict[tuple[object, ...], ShapeCache] = {}
        #: the last cycle's cache key (scheduler name, shape, cache mode) and cache
        self._last: tuple[str, tuple[object, ...], object, ShapeCache] | None = None
        self.waiting: dict[str, Waiting] = {}
        self.next_start: dict[str, int] = {}
        #: ``num_feasible_nodes_to_find`` by (percentageOfNodesToScore, nodes), worked out once
        self.wants: dict[tuple[int | None, int], int] = {}
        self.nominated: dict[str, str] = {}  # pod -> node chosen by preemption
        self.nominees: dict[str, Pod] = {}  # the nominated pods themselves
        #: the nominations pods arrived with (``status.nominatedNodeName``), until they enter the queue
        self.arrived_nominated: dict[str, str] = {}
        #: the nominated pods ``_nominated_held`` holds on their nodes for the pod being filtered
        self.held: list[Placed] = []
        backfills = [f for p in built for f in p.filters if isinstance(f, Backfill)]
        self.backfill = (
            Backfiller(self.state, self.gangs, backfills, self._static_filters) if backfills else None
        )
        self.cache_mode: object = None  # Backfill: whether the pod being scheduled ignores the reservation
        self.gated: dict[str, Pod] = {}  # pods a PreEnqueue plugin keeps out of the queue (scheduling gates)
        #: the plugins that rejected the pod of the last failed attempt (``Diagnosis.UnschedulablePlugins``)
        self.rejectors: set[str] = set()
        #: by event: the plugins of any profile registered for it (``isEventOfInterest``)
        self._interested: dict[ClusterEvent, frozenset[str]] = {}

    @property
    def name(self) -> str:
        return self.config.name

    def serves(self, scheduler_name: str) -> bool:
        return scheduler_name in self.profiles

    # -- the outside world -----------------------------------------------------------------
    def arrive_nominated(self, pod_key: str, node: str) -> None:
        """The pod exists with ``status.nominatedNodeName`` ``node`` (a dump's or the API's pod that an
        earlier preemption nominated): it is nominated there once it enters the queue (``add``)."""
        self.arrived_nominated[pod_key] = node

    def add(self, pod: Pod, now: float) -> str | None:
        """The pod enters the queue, unless a PreEnqueue plugin turns it away: then it is kept aside,
        never tried, and that plugin's message is returned. Entering the queue, a pod that arrived
        nominated is nominated (``moveToActiveQ``'s ``AddNominatedPod`` with the pod's own
        ``status.nominatedNodeName``; a gated pod is not, until its gates are gone)."""
        refused = self.pre_enqueue(pod)
        if refused is not None:
            self.gated[pod.key] = pod
            return refused
        self.gated.pop(pod.key, None)
        node = self.arrived_nominated.pop(pod.key, None)
        if node is not None:
            self.nominated[pod.key], self.nominees[pod.key] = node, pod
        self.queue.add(pod, now)
        return None

    def pre_enqueue(self, pod: Pod) -> str | None:
        """``runPreEnqueuePlugins``: the first rejecting plugin's message, or None (changes nothing)."""
        for plugin in self.profiles[pod.scheduler_name].pre_enqueues:
            status = plugin.pre_enqueue(pod)
            if not status.ok:
                return status.message
        return None

    def forget(self, pod_key: str) -> None:
        """A pod was deleted: drop it from the queue and from Permit."""
        self.queue.remove(pod_key)
        self.gated.pop(pod_key, None)
        self.waiting.pop(pod_key, None)
        self.nominated.pop(pod_key, None)
        self.nominees.pop(pod_key, None)
        self.arrived_nominated.pop(pod_key, None)
        if self.backfill is not None:
            self.backfill.forget(pod_key)

    def cluster_event(self, changes: Iterable[ClusterChange], now: float, material: bool = True) -> None:
        """The cluster changed: each change moves the unschedulable pods its queueing hints say it may help
        (``MoveAllToActiveOrBackoffQueue``); a ``material`` one (not a gang's own assume-and-release) may
        also help the pods backing off after an error (``SchedulingQueue.note_change``)."""
        if material:
            self.queue.note_change()
        for change in changes:
            self._requeue_for(change, now)
        if self.backfill is not None:
            self.backfill.stale = True

    def _requeue_for(self, change: ClusterChange, now: float) -> None:
        queue = self.queue
        if not queue.unschedulable:
            return
        event = change.event
        plugins: frozenset[str] | None = None
        if not event.is_wildcard:
            plugins = self._interested.get(event)
            if plugins is None:
                plugins = self._interested[event] = frozenset().union(
                    *(interested(p.hints, event) for p in self.profiles.values())
                )
            if not plugins:
                return
        queue.move(change, now, self._worth, plugins)

    def _worth(self, qp: QueuedPod, change: ClusterChange) -> bool:
        return worth_requeuing(self.profiles[qp.pod.scheduler_name].hints, qp.pod, qp.rejectors, change)

    def next_time(self) -> float | None:
        times = [w.deadline for w in self.waiting.values()]
        queue_time = self.queue.next_time()
        if queue_time is not None:
            times.append(queue_time)
        return min(times) if times else None

    def has_work(self) -> bool:
        """Pods to try now, or backing off after a cluster change they have not yet been tried on."""
        return self.queue.has_active() or self.queue.has_backoff()

    # -- cycles ----------------------------------------------------------------------------
    def run(
        self, now: float, attempted: Callable[[QueuedPod, list[Outcome], float], None] | None = None
    ) -> list[Outcome]:
        """Every pod due in the queue tried once; ``attempted`` (a live scheduler's metrics) hears each
        attempt with its outcomes and the seconds it took."""
        out: list[Outcome] = []
        for key, w in sorted(self.waiting.items(), key=lambda kv: (kv[1].deadline, kv[0])):
            if w.deadline <= now and key in self.waiting:
                waited = w.deadline - w.since
                out += self._reject_group(
                    w.group, now, f"rejected due to timeout after waiting {waited:g}s at plugin Coscheduling"
                )
        self.queue.advance(now)
        if self.backfill is not None:
            self.backfill.refresh(now)
        while (qp := self.queue.pop()) is not None:
            if attempted is None:
                out += self.schedule_one(qp, now)
                continue
            started = time.perf_counter()
            outcomes = self.schedule_one(qp, now)
            if attempted is not None:
                attempted(qp, outcomes, time.perf_counter() - started)
            out += outcomes
        return out

    def schedule_one(self, qp: QueuedPod, now: float) -> list[Outcome]:
        pod = qp.pod
        key = pod.key
        profile = self.profiles[pod.scheduler_name]
        ctx = PodContext(pod, self.state, now=now)
        if self.backfill is not None:
            self.cache_mode = self.backfill.prepare(pod, now)
        if self.nominated:
            with self._nominated_held(pod):
                found = self._best_nodes(profile, qp.shape, ctx, choose=True)
        else:  # nothing to hold (the common case, without the context manager's cost)
            found = self._best_nodes(profile, qp.shape, ctx, choose=True)
        if isinstance(found, Placement):  # no node: the failure's message and what PostFilter decided
            placement = found
            if placement.error:
                return self._errored(qp, placement.message, now)
            out = [Outcome(pod, "unschedulable", message=placement.message)]
            if placement.clears_nomination and self.nominees.pop(key, None) is not None:
                del self.nominated[key]
                out[0].unnominated = True
            if placement.nominated is not None:
                self.nominated[key] = placement.nominated
                self.nominated.update(placement.gang_nominated)
                self.nominees[key] = pod
                self.nominees.update((k, self.gangs.pods[k]) for k, _ in placement.gang_nominated)
                out.append(Outcome(pod, "preempting", node=placement.nominated, victims=placement.victims))
            if placement.release_group is not None:
                let_go = "optimistic rejection in PostFilter"
                if profile.wording is not None:
                    let_go = profile.wording.gang_rejected(placement.message)
                out += self._reject_group(placement.release_group, now, let_go)
            if self.backfill is not None:  # the reserved job's pods say so after kube-scheduler's message
                self.backfill.failed(pod, qp.initial_timestamp, now)
                note = self.backfill.note
                out = [
                    replace(o, message=f"{o.message}; {n}") if o.message and (n := note(o.pod)) else o
                    for o in out
                ]
            self.queue.mark_unschedulable(qp, now, frozenset(self.rejectors))
            if placement.deallocate and self.state.dra is not None:
                self._deallocate(self.state.dra, placement.deallocate, now)
            return out
        state = self.state
        i = found[0] if found.__class__ is list and len(found) == 1 else self._chosen_index(pod, found)
        node = state.nodes[i].name
        self.nominated.pop(key, None)
        self.nominees.pop(key, None)
        if state.dra is not None and pod.resource_claims:
            refused = self._reserve_claims(state.dra, pod, node)
            if refused is not None:
                self.queue.mark_unschedulable(qp, now)
                return [Outcome(pod, "unschedulable", message=refused)]
        state.assign(pod, i, now, profile.gpu_choice, (ctx.req, ctx.nonzero))
        if self.queue.unschedulable:  # the pods a pod placed may help (InterPodAffinity, PodTopologySpread)
            self._requeue_for(ClusterChange(ASSIGNED_POD_ADD, None, EventPod(pod, node)), now)
        if self.backfill is not None:
            self.backfill.placed(pod)
        if profile.permit is not None:
            permitted, group = profile.permit.permit(ctx, self.gangs)
            code = permitted.code
            if code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):  # ``Status.IsRejected``
                return self._rejected_at_permit(qp, permitted, now)
            if code == Code.WAIT and group is not None:
                deadline = now + profile.permit.wait_time(group)
                self.waiting[key] = Waiting(qp, node, now, deadline, group)
                if self.gangs.assigned(group, exclude=key) == 0:
                    self._activate_siblings(group, now)
                return [Outcome(pod, "waiting", node=node)]
            if group is not None:
                released = [w for k, w in sorted(self.waiting.items()) if w.group.key == group.key]
                for w in released:
                    del self.waiting[w.qp.pod.key]
                    self.queue.remove(w.qp.pod.key)
                self.queue.remove(key)
                return [self._bind(w.qp.pod, w.node, waited=True) for w in released] + [self._bind(pod, node)]
        self.queue.remove(key)
        return [self._bind(pod, node)]

    def _errored(self, qp: QueuedPod, message: str, now: float) -> list[Outcome]:
        """``handleSchedulingFailure`` for an attempt a plugin's Error status aborted (``schedulingCycle``
        returns ``clearNominatedNode`` with it): the pod is no longer nominated, ``FailedScheduling`` says
        the error, and, rejected by no plugin, it goes back through the backoff queue (its consecutive
        errors counted) with no cluster event needed."""
        key = qp.pod.key
        self.nominated.pop(key, None)
        self.nominees.pop(key, None)
        self.queue.mark_unschedulable(qp, now)
        return [Outcome(qp.pod, "unschedulable", message=message, error=True)]

    def _rejected_at_permit(self, qp: QueuedPod, status: Status, now: float) -> list[Outcome]:
        """``schedulingCycle``: a Permit plugin rejected the pod: it is unreserved and forgotten (its room
        given back) and fails with a FitError of the one node it was to go to, the plugin named as its
        rejector (``0/1 nodes are available: 1 PodGroup not found.``)."""
        self.state.unassign(qp.pod.key)
        self.queue.mark_unschedulable(qp, now, frozenset({status.plugin}))
        message = fit_error(1, Counter({status.message: 1}))
        return [Outcome(qp.pod, "unschedulable", message=message)]

    def _bind(self, pod: Pod, node: str, waited: bool = False) -> Outcome:
        """The pod is bound: the device level gives it its units (``gpus.ledger``), where there is one.
        A pod that ``waited`` at Permit may find the node's free devices no longer cover it (a GPU
        reported Unhealthy meanwhile): it gets none, and the outcome's message is the kubelet's admission
        error, as the topology manager's admit handler words it ("Allocate failed due to ..., which is
        unexpected"). (A pod bound in the cycle that assumed it finds the devices that were counted.)"""
        ledger = self.state.ledger
        if ledger is None:
            return Outcome(pod, "bound", node=node)
        refused = ledger.unavailable(pod, node) if waited else None
        if refused is not None:
            message = f"Allocate failed due to {refused}, which is unexpected"
            return Outcome(pod, "bound", node=node, message=message)
        return Outcome(pod, "bound", node=node, devices=tuple(ledger.allocate(pod, node)))

    def _reserve_claims(self, dra: DraState, pod: Pod, node: str) -> str | None:
        """Reserve and PreBind of DynamicResources: the pod's ResourceClaims get their devices on the
        chosen node and the pod joins each claim's ``reservedFor``. A claim with 256 consumers makes
        PreBind fail with the API server's refusal; no plugin is named for it, so the pod is tried again
        after a backoff (``AddUnschedulableIfNotPresent`` with no rejector plugins)."""
        refused = dra.place(pod, self.state.nodes[self.state.index[node]])
        return None if refused is None else f'running PreBind plugin "DynamicResources": {refused}'

    def _deallocate(self, dra: DraState, keys: tuple[str, ...], now: float) -> None:
        """DynamicResources' PostFilter deallocates claims (``UpdateStatus`` without ``allocation`` and
        ``reservedFor``): the claim update event that follows moves the pods it may help, the pod that
        failed among them (``isSchedulableAfterClaimChange``: a claim deallocated, Queue)."""
        for key in keys:
            changed = dra.deallocate(key)
            if changed is not None:
                for i in self.state.index.values():  # every node's DynamicResources verdict may change
                    self.state.touched(i)
                self._requeue_for(ClusterChange(RESOURCE_CLAIM_UPDATE, *changed), now)

    def place_once(self, pod: Pod, now: float, shape: tuple[object, ...] | None = None) -> str | None:
        """One scheduling attempt with no queue and no retry: the pod is assigned where it fits
        (its fractional request on the GPU its profile picks), else nothing changes (and no FitError
        message is composed). ``shape``: ``pod.shape()``, where the caller kept it."""
        profile = self.profiles[pod.scheduler_name]
        ctx = PodContext(pod, self.state)
        found = self._best_nodes(
            profile, pod.shape() if shape is None else shape, ctx, explain=False, choose=True
        )
        if isinstance(found, Placement):
            return None
        i = self._chosen_index(pod, found)
        self.state.assign(pod, i, now, profile.gpu_choice, (ctx.req, ctx.nonzero))
        return self.state.nodes[i].name

    def decide(self, pod: Pod) -> Decision:
        """One scheduling attempt that changes nothing, with every tie: the equally best nodes, or
        the message and, where DefaultPreemption would nominate, each equally ranked candidate."""
        profile = self.profiles[pod.scheduler_name]
        rotation = dict(self.next_start)
        try:
            with self._nominated_held(pod):
                found = self._best_nodes(profile, pod.shape(), PodContext(pod, self.state))
        finally:
            self.next_start = rotation
        if not isinstance(found, Placement):
            return Decision(nodes=tuple(sorted(self.state.nodes[int(i)].name for i in found)))
        return Decision(message=found.message, nominations=found.nominations)

    def try_schedule(self, pod: Pod, explain: bool = True) -> tuple[str | None, str]:
        """One scheduling attempt that changes nothing: the node it would pick, or the message."""
        profile = self.profiles[pod.scheduler_name]
        placement = self._find_node(profile, pod.shape(), PodContext(pod, self.state), explain)
        return placement.node, placement.message

    @contextmanager
    def _nominated_held(self, pod: Pod) -> Iterator[None]:
        """``RunFilterPluginsWithNominatedPods`` (``addNominatedPods``): while ``pod`` is filtered (and
        preemption's dry run looks for victims), the pods preemption nominated to a node, of at least
        its priority and not yet placed, count on that node, so a lower or equal pod cannot take what
        their preemption freed: their requests, and for the pod-aware filters their host ports, labels
        and terms (``held``; ``PodCycle.holding``). Their devices are not held. (The members of the
        pod's own gang are left out: gang-aware preemption plans the whole gang at once.)"""
        if not self.nominated:
            yield
            return
        state, gang = self.state, group_key(pod)
        held = ClusterSnapshot(state)
        placed: list[Placed] = []
        for key, node in sorted(self.nominated.items()):
            if (
                key != pod.key
                and node in state.index
                and key not in state.assignments
                and (nominee := self.nominees[key]).priority >= pod.priority
                and (gang is None or group_key(nominee) != gang)  # its gang's dry run places them itself
            ):
                held.put(nominee, state.index[node])
                placed.append((nominee, state.index[node]))
        self.held = placed
        try:
            with held.applied():
                yield
        finally:
            self.held = []

    def _static_filters(self, pod: Pod) -> list[StaticFilter]:
        return self.profiles[pod.scheduler_name].static_filters

    def reject_waiting(self, pod_key: str, now: float, message: str = "preempted") -> list[Outcome]:
        """A pod waiting at Permit is rejected, and its room given back: a preemption victim
        (``prepareCandidate``: ``waitingPod.Reject(pluginName, "preempted")``, instead of deleting it, so
        it goes back to the queue), or a pod deleted ("removed"); Coscheduling's Unreserve then rejects
        its gang's other waiting members."""
        w = self.waiting.get(pod_key)
        return [] if w is None else self._reject_group(w.group, now, message)

    def _activate_siblings(self, group: PodGroup, now: float) -> None:
        """Coscheduling's ``ActivateSiblings``: the gang's unschedulable pods go back to the queue."""
        self.queue.requeue_where(now, lambda q: group_key(q.pod) == group.key)

    def _reject_group(self, group: PodGroup, now: float, message: str) -> list[Outcome]:
        """The gang's pods waiting at Permit are rejected: each goes back to the queue as unschedulable by
        its Permit plugin (``WaitOnPermit``'s FitError) and its room is given back
        (``handleBindingCycleError``: ``EventAssignedPodDelete`` of the assumed pod)."""
        out = []
        for key, w in sorted(self.waiting.items()):
            if w.group.key != group.key:
                continue
            del self.waiting[key]
            self.state.unassign(key)
            permit = self.profiles[w.qp.pod.scheduler_name].permit
            if permit is not None:
                permit.unreserve(w.group, now)
            self.queue.mark_unschedulable(w.qp, now, frozenset({permit.name}) if permit else frozenset())
            self._requeue_for(assigned_pod_deleted(w.qp.pod, w.node), now)
            out.append(Outcome(w.qp.pod, "rejected", node=w.node, message=message))
        return out

    def _cache(self, profile: Profile, shape: tuple[object, ...], ctx: PodContext) -> ShapeCache:
        name, mode = profile.scheduler_name, self.cache_mode
        last = self._last
        if last is not None and last[1] == shape and last[0] == name and last[2] == mode:
            cache = last[3]  # the last cycle's (comparing the shape costs less than hashing it)
        else:
            got = self.caches.get((name, shape, mode))
            if got is None:  # a new cache is current
                got = self.caches[name, shape, mode] = ShapeCache(profile, ctx)
                self._last = (name, shape, mode, got)
                return got
            cache = got
            self._last = (name, shape, mode, cache)
        cache.refresh()
        return cache

    def _find_node(
        self, profile: Profile, shape: tuple[object, ...], ctx: PodContext, explain: bool = True
    ) -> Placement:
        found = self._best_nodes(profile, shape, ctx, explain, choose=True)
        return found if isinstance(found, Placement) else Placement(self._chosen(ctx.pod, found))

    def _chosen(self, pod: Pod, best: Best) -> str:
        """The node the pod gets among the equally best (``selectHost``)."""
        return self.state.nodes[self._chosen_index(pod, best)].name

    def _chosen_index(self, pod: Pod, best: Best) -> int:
        """``_chosen``'s node index."""
        count = len(best)
        if count == 1:
            return int(best[0])
        return int(best[self.draws.integers(count) if self.tie_break == "random" else self._pick(pod, best)])

    def _pick(self, pod: Pod, best: Best) -> int:
        """``selectHost`` by another rule than kube-scheduler's random one: which of the equally best nodes
        (more than one) the pod gets."""
        if callable(self.tie_break):
            return self.tie_break(pod, [self.state.nodes[int(i)].name for i in best])
        return 0

    def _best_nodes(
        self,
        profile: Profile,
        shape: tuple[object, ...],
        ctx: PodContext,
        explain: bool = True,
        choose: bool = False,
    ) -> Best | Placement:
        """The feasible nodes with the highest score for the pod of ``ctx`` (``shape``: its ``Pod.shape``),
        one when the choice is determined (with ``choose``, the caller takes ``_chosen_index`` of them,
        which a window may draw already), or the failure's Placement (kube-scheduler's message and what
        PostFilter decided; or, where a plugin returned an Error status, the error: ``schedulePod`` returns
        it, no other node is filtered and no PostFilter runs)."""
        try:
            return self._best_or_failure(profile, shape, ctx, explain, choose)
        except PluginError as err:
            # the pod's shape cache may be half-evaluated: the next attempt builds it afresh
            self.caches.pop((profile.scheduler_name, shape, self.cache_mode), None)
            self._last = None
            self.rejectors = set()
            return Placement(None, err.message, error=True)

    def _best_or_failure(
        self,
        profile: Profile,
        shape: tuple[object, ...],
        ctx: PodContext,
        explain: bool,
        choose: bool,
    ) -> Best | Placement:
        """``_best_nodes`` where no plugin errs (a plugin's Error status raised as ``PluginError``)."""
        self.rejectors = set()
        if not self.state.index:  # no active node (schedulePod's ErrNoNodesAvailable, before any plugin)
            return Placement(None, NO_NODES_AVAILABLE)
        if profile.pre_filters:
            refusal = self._pre_filter(profile, ctx)
            if refusal is not None:
                return refusal
        cache = self._cache(profile, shape, ctx)
        # the filters and scores that look at the pods placed, when they do not all Skip this pod
        pods = PodCycle.start(profile.pod_filters, profile.pod_scores, ctx)
        if pods is not None and self.held:
            pods = pods.holding(self.held)
        if self.nominated:
            i = self.state.index.get(self.nominated.get(ctx.pod.key, ""))
            # ``evaluateNominatedNode``: the node preemption nominated the pod to is filtered first, and
            # is the pod's node when it passes (so a gang's members go where its dry run planned them)
            if i is not None and cache.ok[i]:
                one = np.array([i], dtype=np.int64)
                if pods is None or not pods.filters or pods.passes(one)[0]:
                    return one
        considered = cache.considered
        n = len(considered)
        pct = profile.percentage_of_nodes_to_score
        want = self.wants.get((pct, n))
        if want is None:
            want = self.wants[pct, n] = num_feasible_nodes_to_find(pct, n)
        if pods is None and cache.all_rows and not cache.static_raw:
            # only dynamic scores differ, and the cache keeps the top-scoring nodes (none: no node is
            # feasible, or the best score is negative; the general path below)
            if choose and want >= n and self.tie_break == "first":  # the lowest of them: no list of them
                first = cache.first_top()
                if first is not None:
                    return [first]
            elif top := cache.top_nodes():
                if want >= n:
                    return top
                return self._window_top(profile.scheduler_name, cache, top, want, n, choose)
        feasible_pos = cache.feasible_positions()
        if pods is not None and pods.filters and len(feasible_pos):
            nodes = feasible_pos if cache.all_rows else considered[feasible_pos]
            feasible_pos = feasible_pos[pods.passes(nodes)]
        if len(feasible_pos) == 0:
            return self._failure(profile, ctx, cache, pods) if explain else Placement(None)
        idx = self._window(profile.scheduler_name, feasible_pos, n, want)
        if not cache.all_rows:
            idx = considered[idx]
        if len(idx) == 1:
            return idx
        scores = cache.masked[idx] if not cache.static_raw else cache.total_scores(idx)
        if pods is not None and pods.scorers:
            scores = scores + pods.scores(ctx, idx)
        best: IntArray = idx[(scores == scores.max()).nonzero()[0]]
        return best

    def _pre_filter(self, profile: Profile, ctx: PodContext) -> Placement | None:
        """``RunPreFilterPlugins``: the PreFilters in order. An UnschedulableAndUnresolvable status
        stops the rest and no node is worth preempting on; an Unschedulable one is kept while the others
        still run (kubernetes#119770), the last one kept is the pod's, and preemption may help on every
        node. The plugin of the status returned is the one that rejected the pod. None: all passed. An
        Error status is the attempt's error (``running PreFilter plugin "<name>": <error>``), raised."""
        kept: tuple[str, Status] | None = None
        for plugin in profile.pre_filters:
            status = plugin.pre_filter(ctx, self.gangs)
            if status is SUCCESS or status.ok:
                continue
            if status.code == Code.ERROR:
                words = f'running PreFilter plugin "{plugin.name}": {status.message}'
                raise PluginError(Status(Code.ERROR, (words,), plugin.name))
            if status.code != Code.UNSCHEDULABLE:
                self.rejectors.add(plugin.name)
                return self._post_filter(profile, ctx, np.zeros(0, dtype=np.int64), Counter(), status.message)
            kept = plugin.name, status
        if kept is None:
            return None
        self.rejectors.add(kept[0])
        every = np.array(sorted(self.state.index.values()), dtype=np.int64)
        return self._post_filter(profile, ctx, every, Counter(), kept[1].message)

    def _window(self, name: str, feasible_pos: IntArray, n: int, want: int) -> IntArray:
        """``findNodesThatPassFilters`` with ``numFeasibleNodesToFind``: the first ``want`` feasible
        positions (of ``n``) from where the last cycle of scheduler profile ``name`` stopped, round the
        end; the next cycle starts after the last position looked at (``nextStartNodeIndex``)."""
        start = self.next_start.get(name, 0) % max(n, 1)
        count = len(feasible_pos)
        if want >= count:  # every node looked at: the next cycle starts where this one did
            self.next_start[name] = start
            return feasible_pos
        split = int(feasible_pos.searchsorted(start))
        end = split + want
        if end <= count:
            window = feasible_pos[split:end]
        else:
            window = np.concatenate([feasible_pos[split:], feasible_pos[: end - count]])
        self.next_start[name] = (int(window[-1]) + 1) % n
        return window

    def _window_top(
        self, name: str, cache: ShapeCache, top: list[int], want: int, n: int, choose: bool = False
    ) -> Best:
        """``_window`` where every node row (``n``) is considered, no pod-aware plugin takes part and only
        dynamic scores differ (they are the cache's ``masked``): the window's best are the cache's top-scoring
        nodes inside it, when it holds any, found by bisection (the window scores no higher than the
        whole cluster). Else the window is scored. With ``choose``, the window's top nodes are drawn from
        here as ``_chosen_index`` would (``selectHost``) and the one chosen is returned: no view of them is
        built."""
        feasible = cache.feasible_list()
        count = len(feasible)
        rotation = self.next_start
        start = rotation.get(name, 0)
        if start >= n:
            start %= n
        if count == n:  # every node feasible (and more than ``want``): ``want`` nodes from ``start``
            last = start + want - 1
            if last >= n:
                last -= n
        elif want >= count:
            rotation[name] = start
            return top
        else:
            end = bisect_left(feasible, start) + want
            last = feasible[end - 1 if end <= count else end - count - 1]
        lo = bisect_left(top, start)
        if last >= start:
            hi = bisect_right(top, last, lo)
            if hi == lo:
                return self._window_scored(name, cache, want)
            rotation[name] = last + 1 if last + 1 < n else 0
            if choose and self.tie_break == "random":
                return [top[lo + self.draws.integers(hi - lo)]]
            return Ties(top, lo, hi)
        hi, tail = len(top), bisect_right(top, last)
        if hi == lo and not tail:
            return self._window_scored(name, cache, want)
        rotation[name] = last + 1
        if choose and self.tie_break == "random":
            j = lo + self.draws.integers(hi - lo + tail)
            return [top[j] if j < hi else top[j - hi]]
        return Ties(top, lo, hi, tail)

    def _window_scored(self, name: str, cache: ShapeCache, want: int) -> IntArray:
        """``_window_top``'s answer the long way: the window's scores (the cache's ``masked``) and their
        maximum."""
        window = self._window(name, cache.feasible_nodes(), len(cache.considered), want)
        scores = cache.masked[window]
        best: IntArray = window[(scores == scores.max()).nonzero()[0]]
        return best

    def _failure(
        self, profile: Profile, ctx: PodContext, cache: ShapeCache, pods: PodCycle | None = None
    ) -> Placement:
        """Every node's reasons, in filter order (the first failing plugin decides), as a histogram; or,
        where the node PreFilters' node names left no node, their PreFilter rejection
        (``node_names_conflict``). Then the PostFilters."""
        conflict = cache.pre_filter_conflict
        if conflict is not None:
            message, plugins = conflict
            self.rejectors.update(plugins)
            return self._post_filter(profile, ctx, np.zeros(0, dtype=np.int64), Counter(), message)
        # the diagnosis reads the nodes and the pod's shape only, where no pod-aware filter and no
        # ResourceClaim takes part: another pod of the shape failing on the cluster as it is has the same
        key, kept = (self.state.change_pos, self.state.static_version), cache.diagnosis
        memo = pods is None and self.state.dra is None
        if not memo or kept is None or kept[0] != key:
            kept = (key, *self._diagnosis(profile, ctx, cache, pods))
            cache.diagnosis = kept if memo else None
        _, histogram, rejectors, resolvable = kept
        self.rejectors.update(rejectors)
        return self._post_filter(profile, ctx, resolvable, Counter(histogram), pods=pods)

    def _diagnosis(
        self, profile: Profile, ctx: PodContext, cache: ShapeCache, pods: PodCycle | None
    ) -> tuple[Counter[str], frozenset[str], IntArray]:
        """``_failure``'s histogram of reasons, the plugins that rejected some node, and the nodes where
        only an Unschedulable status (not an unresolvable one) turned the pod away."""
        histogram = cache.static_histogram()
        named = cache.static_plugins
        rejectors = {name for reason in histogram for name in named[reason]}
        static_ok = cache.considered[cache.static_pass[cache.considered]]
        resolvable: IntArray = np.zeros(0, dtype=np.int64)
        if len(static_ok):
            undecided = np.ones(len(static_ok), dtype=bool)
            unresolvable = np.zeros(len(static_ok), dtype=bool)
            for f in profile.filters:
                if isinstance(f, PodAwareFilter):
                    state = pods.state_of(f) if pods is not None else None
                    if state is not None:
                        for k in undecided.nonzero()[0].tolist():
                            rejection = state.reject(int(static_ok[k]))
                            if rejection is not None:
                                rejectors.add(f.name)
                                histogram[rejection[0]] += 1
                                undecided[k] = False
                                unresolvable[k] = rejection[1] == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                    continue
                if not isinstance(f, DynamicFilter) or f.skips(ctx.pod):  # (a Skip at PreFilter: not run)
                    continue
                passing, masks, beyond = f.diagnose(ctx, static_ok)
                failing = ~passing & undecided
                if failing.any():
                    rejectors.add(f.name)
                for reason, mask in masks:
                    histogram[reason] += int((mask & failing).sum())
                undecided &= ~failing
                unresolvable |= failing & beyond
            resolvable = static_ok[~undecided & ~unresolvable]
        resolvable.flags.writeable = False  # (kept for the next pod of the shape: read only)
        return histogram, frozenset(rejectors), resolvable

    def _post_filter(
        self,
        profile: Profile,
        ctx: PodContext,
        resolvable: IntArray,
        histogram: Counter[str],
        pre_filter_msg: str = "",
        pods: PodCycle | None = None,
    ) -> Placement:
        """PostFilter plugins in order until one succeeds or one returns UnschedulableAndUnresolvable
        (``RunPostFilterPlugins``); the Unschedulable ones' messages join the FitError's, or the unresolvable
        one's alone."""
        request = PostFilterRequest(
            ctx,
            resolvable,
            self.state.size_active,
            profile.dynamic_filters,
            profile.static_filters,
            self.gangs,
            self.state.index.get(self.nominated.get(ctx.pod.key, "")),
            pods=pods,
            pod_filters=profile.pod_filters,
            held=self.held,
        )
        messages: list[str] = []
        release: PodGroup | None = None
        deallocate: tuple[str, ...] = ()
        clears = False
        words = fit_error if profile.wording is None else profile.wording.fit_error
        for plugin in profile.post_filters:
            result = plugin.post_filter(request)
            deallocate += result.deallocate
            if result.nominated is not None:
                message = words(self.state.size_active, histogram, pre_filter_msg, "")
                node, victims = result.nominated, result.victims
                if callable(self.tie_break) and len(result.ties) > 1:
                    node, victims = result.ties[self.tie_break(ctx.pod, [t[0] for t in result.ties])]
                return Placement(
                    None,
                    message,
                    node,
                    victims,
                    result.ties or ((node, victims),),
                    gang_nominated=result.gang_nominations,
                    deallocate=deallocate,
                )
            release = release or result.release_group
            clears = clears or result.clears_nomination
            if result.status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                # ``RunPostFilterPlugins``: an unresolvable status is the attempt's, the rest not run
                messages = list(result.status.reasons)
                break
            messages.extend(result.status.reasons)
        message = words(self.state.size_active, histogram, pre_filter_msg, ", ".join(messages))
        return Placement(
            None, message, release_group=release, deallocate=deallocate, clears_nomination=clears
        )
