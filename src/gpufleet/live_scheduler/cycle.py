"""One scheduling cycle over the live cluster's state: objects and time in, decisions out.

The cluster state is built afresh from the informers' objects, as kube-scheduler's cache holds it:
every pod bound to a node by any scheduler counts against it (terminating pods too, until they are
gone), and so do the pods this scheduler bound whose binding the watch has not shown yet (its
*assumed* pods). Which GPUs of its node a bound pod holds is not in the API (the kubelet's device
manager chose them): the device ledger picks them as the device plugin would (``gpus.ledger``), in
the pods' order, and fractional shares are put back fullest GPU first; the NVLink-aware scores read
that. The pending pods of this scheduler's profiles are queued and each is tried once by
the engine's ``Scheduler`` (the same plugins, profiles and messages as in simulation), with the
preemptors' nominations read back from ``status.nominatedNodeName``.

A gang never binds in part: Coscheduling's Permit lets its members go only when enough of them are
placed, and only then are they bound, together. Members placed in a cycle whose gang is not complete
hold nothing once the cycle is over (what Coscheduling's Permit timeout ends up doing), so nothing
is reserved between cycles and a restart loses nothing. A gang found partly bound (a crash between
two of its bindings, a binding refused) is completed when its other members fit, and reported
(``GangStatus``) while they do not.

A pod that fits nowhere fails as a FitError does (reason ``Unschedulable``); one whose attempt a plugin's
Error status aborted (``framework.PluginError``) fails as ``handleSchedulingFailure`` reports any other
error: reason ``SchedulerError``, the error's text, its nomination cleared (``newFailureNominatingInfo``).

What gpufleet cannot judge is never placed: a pod whose fields the reader refused or does not model,
or that claims DRA devices (the live scheduler does not write ResourceClaim allocations), gets a
message that says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.devices import Unit
from gpufleet.gpus.ledger import DeviceLedger
from gpufleet.live_scheduler.models import LivePod
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.node import Node
from gpufleet.model.resources import GPU
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.model.scheduler_records import UNSCHEDULABLE
from gpufleet.model.workloads import PodGroup
from gpufleet.scheduling.gangs import GangView, group_key
from gpufleet.scheduling.host_draws import HostDraws
from gpufleet.scheduling.queue import QueuedPod
from gpufleet.scheduling.scheduler import SCHEDULER_ERROR, Outcome, Scheduler

DRA_NOT_WRITTEN = (
    "gpufleet cannot schedule this pod: it claims DRA devices (spec.resourceClaims), and gpufleet's live "
    "scheduler does not write ResourceClaim allocations"
)


@dataclass(frozen=True)
class Placed:
    pod: LivePod
    node: str
    devices: tuple[Unit, ...] = ()


@dataclass(frozen=True)
class Binding:
    """Pods bound together: one pod, or the members of a gang its Permit released."""

    members: tuple[Placed, ...]
    gang: str | None = None


@dataclass(frozen=True)
class Failure:
    """A pod not placed, as ``handleSchedulingFailure`` reports it: the PodScheduled condition's reason
    (``Unschedulable`` after a FitError; ``SchedulerError`` after an attempt a plugin's Error status
    aborted, its message the error's text) and message."""

    pod: LivePod
    message: str
    #: DefaultPreemption nominated this node; "": the nomination cleared (``newFailureNominatingInfo``
    #: after an error; preemption that found no candidate); None: left as it is
    nominated: str | None = None
    reason: str = UNSCHEDULABLE


@dataclass(frozen=True)
class Preemption:
    preemptor: LivePod
    node: str
    victims: tuple[LivePod, ...]


@dataclass(frozen=True)
class GangStatus:
    """A PodGroup whose members are bound in part (fewer than ``minMember``), and why the rest are not."""

    key: str
    min_member: int
    members: int
    bound: int
    message: str


@dataclass(frozen=True)
class Attempt:
    profile: str
    result: str  # "scheduled" | "unschedulable" | "error", as kube-scheduler's metrics label it
    seconds: float
    pod: LivePod


@dataclass
class Decisions:
    bindings: list[Binding] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    preemptions: list[Preemption] = field(default_factory=list)
    waiting: list[Placed] = field(default_factory=list)  # placed at Permit, their gang incomplete
    gangs: list[GangStatus] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    pending: int = 0  # pods of this scheduler not bound
    gated: int = 0  # of them, held by a PreEnqueue plugin (scheduling gates)
    gangs_waiting: int = 0  # PodGroups with pending members
    fragmented_gpus: int = 0  # free GPUs on nodes where no whole pending GPU request fits


@dataclass(frozen=True)
class _Budgets:
    """The PodDisruptionBudgets as the API's status gives them (``cluster.disruption_view``)."""

    budgets: list[tuple[DisruptionBudget, int]]

    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]:
        return self.budgets


@dataclass
class Memory:
    """What lasts from one cycle to the next: the tie-breaking generator and the nodes' rotation."""

    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    next_start: dict[str, int] = field(default_factory=dict)
    draws: HostDraws = field(init=False)  # the only draws from ``rng``

    def __post_init__(self) -> None:
        self.draws = HostDraws(self.rng)


def run_cycle(
    config: SchedulerConfig,
    nodes: list[Node],
    pods: Mapping[str, LivePod],
    groups: Mapping[str, PodGroup],
    namespace_labels: Mapping[str, dict[str, str]],
    budgets: list[tuple[DisruptionBudget, int]],
    assumed: Mapping[str, str],
    now: float,
    memory: Memory,
) -> Decisions:
    served = {p.scheduler_name for p in config.profiles}
    waits = any(
        not live.ended and not live.deleting and live.node is None and key not in assumed
        for key, live in pods.items()
        if live.pod.scheduler_name in served
    )
    if not waits and not _partial_gangs(groups, pods, assumed, Decisions()):
        return Decisions()  # nothing to decide: the cluster state is not built (each binding's watch
        # event would otherwise cost a whole rebuild)
    state = ClusterState(nodes)
    state.namespace_labels = dict(namespace_labels)
    state.disruptions = _Budgets(budgets)
    ledger = DeviceLedger(state)  # the GPUs each bound pod holds, as the device plugin would pick them
    gangs = GangView(state, dict(groups))
    scheduler = Scheduler(config, state, gangs)
    scheduler.draws, scheduler.next_start = memory.draws, memory.next_start
    decisions = Decisions()
    queued: dict[str, LivePod] = {}
    for key, live in pods.items():
        if live.ended:
            continue
        gangs.add_pod(live.pod)
        node = live.node or assumed.get(key)
        if node is not None:
            if node in state.index and key not in state.assignments:
                assignment = state.assign(live.pod, node, now)
                ledger.allocate(live.pod, node)
                # terminating: holds its resources; a preemption victim makes its preemptor wait for it
                # (``podTerminatingByPreemption`` in ``PodEligibleToPreemptOthers``)
                state.set_terminating(assignment, live.deleting)
                assignment.preempted = live.preempted
            continue
        if live.deleting or not scheduler.serves(live.pod.scheduler_name):
            continue
        decisions.pending += 1
        refused = _cannot_judge(live)
        if refused is not None:
            decisions.failures.append(Failure(live, refused))
            continue
        if live.nominated is not None:
            scheduler.arrive_nominated(key, live.nominated)
        if scheduler.add(live.pod, now) is None:
            queued[key] = live
        else:
            decisions.gated += 1

    timed: list[tuple[QueuedPod, float, bool]] = []
    outcomes = scheduler.run(
        now, lambda qp, outs, seconds: timed.append((qp, seconds, any(o.error for o in outs)))
    )
    _sort(outcomes, queued, pods, decisions)
    bound = {p.pod.pod.key for b in decisions.bindings for p in b.members}
    # a pod that waited at Permit is scheduled only if its gang was released
    for qp, seconds, errored in timed:
        result = "error" if errored else "scheduled" if qp.pod.key in bound else "unschedulable"
        decisions.attempts.append(Attempt(qp.pod.scheduler_name, result, seconds, queued[qp.pod.key]))
    decisions.gangs = _partial_gangs(groups, pods, assumed, decisions)
    decisions.fragmented_gpus = _fragmented(state, [live.pod.gpus for live in queued.values()])
    decisions.gangs_waiting = len(
        {g for key in queued if (g := group_key(pods[key].pod)) is not None}
        - {b.gang for b in decisions.bindings}
    )
    return decisions


def _cannot_judge(live: LivePod) -> str | None:
    if live.errors:
        return "gpufleet cannot read this pod: " + "; ".join(live.errors)
    if live.pod.not_modelled:
        return (
            "gpufleet cannot judge this pod: it uses "
            + ", ".join(live.pod.not_modelled)
            + ", which gpufleet does not model"
        )
    if live.pod.resource_claims:
        return DRA_NOT_WRITTEN
    return None


def _sort(
    outcomes: list[Outcome], queued: dict[str, LivePod], pods: Mapping[str, LivePod], decisions: Decisions
) -> None:
    """The engine's outcomes as the writes they call for; the members a gang's Permit released in one
    step are bound together."""
    bound: dict[str, list[Placed]] = defaultdict(list)
    order: list[str] = []
    last: dict[str, Outcome] = {}
    for outcome in outcomes:
        last[outcome.pod.key] = outcome
        if outcome.kind == "preempting" and outcome.node is not None:
            victims = tuple(pods[v] for v in outcome.victims if v in pods)
            decisions.preemptions.append(Preemption(queued[outcome.pod.key], outcome.node, victims))
    for key, outcome in last.items():
        live = queued[key]
        if outcome.kind == "bound" and outcome.node is not None:
            gang = group_key(live.pod) or key
            if gang not in bound:
                order.append(gang)
            bound[gang].append(Placed(live, outcome.node, outcome.devices))
        elif outcome.kind == "waiting" and outcome.node is not None:
            decisions.waiting.append(Placed(live, outcome.node))
        elif outcome.kind == "preempting":
            failed = next(o for o in outcomes if o.pod.key == key and o.kind == "unschedulable")
            decisions.failures.append(Failure(live, failed.message or "", outcome.node))
        elif outcome.error:  # a plugin's Error status: not a FitError (``handleSchedulingFailure``)
            decisions.failures.append(Failure(live, outcome.message or "", "", SCHEDULER_ERROR))
        else:  # preemption found no candidate: a nomination from before is cleared
            cleared = "" if outcome.unnominated else None
            decisions.failures.append(Failure(live, outcome.message or "", cleared))
    for gang in order:
        members = tuple(bound[gang])
        decisions.bindings.append(Binding(members, gang if group_key(members[0].pod.pod) else None))


def _partial_gangs(
    groups: Mapping[str, PodGroup],
    pods: Mapping[str, LivePod],
    assumed: Mapping[str, str],
    decisions: Decisions,
) -> list[GangStatus]:
    """The PodGroups with fewer than ``minMember`` of their (not ended) pods bound, assumed or being
    bound by ``decisions``, but some, and why the others are not."""
    binding = {p.pod.pod.key for b in decisions.bindings for p in b.members}
    why = {f.pod.pod.key: f.message for f in decisions.failures}
    members: dict[str, list[str]] = defaultdict(list)
    for key, live in pods.items():
        if not live.ended and (name := group_key(live.pod)) is not None and name in groups:
            members[name].append(key)
    out = []
    for key, group in sorted(groups.items()):
        keys = members.get(key, [])
        bound = sum(1 for m in keys if pods[m].node is not None or m in assumed or m in binding)
        if 0 < bound < group.min_member:
            reasons = sorted({why[m] for m in keys if m in why})
            message = reasons[0] if reasons else "its other members are not placed yet"
            out.append(GangStatus(key, group.min_member, len(keys), bound, message))
    return out


def _fragmented(state: ClusterState, requests: list[int]) -> int:
    """Free GPUs on nodes where none of the pending pods' whole-GPU requests fits: free, yet of no use
    to the work waiting (0 when nothing waits for GPUs)."""
    wanted = [int(g) for g in requests if g >= 1]
    if not wanted or GPU not in state.res_index:
        return 0
    free = state.free(GPU)[state.active_indices()]
    smallest = min(wanted)
    return int(free[(free > 0) & (free < smallest)].sum())
