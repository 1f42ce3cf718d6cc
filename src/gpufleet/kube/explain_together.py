"""Pending pods that one controller places together, judged together for ``explain``.

kube-scheduler takes pending pods one at a time, each cycle seeing the pods assumed before it
(``schedule_one.go``: Reserve assumes the pod in the cache). So the pods of one controller are
judged one after another, in queue order (``PrioritySort``: higher priority first, then the order
they were created), each on the cluster as the members before it left it: four 4-GPU workers do
not each "fit" on a node with room for one. The members are assumed on explain's own copy of the
cluster (``ClusterState.assign``, with their fractional GPU shares and ResourceClaims, as the
scheduler's Reserve does) and taken away again once the group is judged.

What places pods together: a scheduler-plugins PodGroup (label ``scheduling.x-k8s.io/pod-group``),
a Volcano PodGroup (annotation ``scheduling.k8s.io/group-name`` or
``scheduling.volcano.sh/group-name``), a Kueue pod group (label ``kueue.x-k8s.io/pod-group-name``),
a JobSet (label ``jobset.sigs.k8s.io/jobset-name``), else the pod's controller (its owner: a Job,
a ReplicaSet, ...). Where the pod's profile runs Coscheduling and its PodGroup is known, the gang
is all or nothing (Permit): unless its bound members and those that fit reach ``minMember``,
none is placed; the members that found a node would wait at Permit until the member that finds none
rejects them in PostFilter (``optimistic rejection in PostFilter``, the message they then carry; in
the volcano scheduler's profile, the PodGroup's ``x/y tasks in gang unschedulable`` condition).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import POD_GROUP_LABEL, Pod
from gpufleet.model.workloads import PodGroup
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.messages import no_scheduler
from gpufleet.scheduling.plugins import scheduling_gates as gates
from gpufleet.scheduling.scheduler import Decision, Scheduler

VOLCANO_GROUP_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
KUEUE_POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
#: scheduler-plugins ``coscheduling.go`` PostFilter: ``waitingPod.Reject(pluginName, ...)`` of every
#: waiting member of a gang one of whose members cannot be placed
OPTIMISTIC_REJECTION = "optimistic rejection in PostFilter"


@dataclass(frozen=True)
class Judged:
    """One pending pod's evaluation, on the cluster as the members judged before it left it."""

    pod: Pod
    decision: Decision  # its nodes (where it fits, equally scored) or kube-scheduler's message
    together: str | None = None  # what places it with others ("Job ml/train"), if anything
    earlier: tuple[tuple[str, str], ...] = ()  # the members placed before it: (pod, node)
    members: int = 1  # how many pending pods were judged together
    gang: PodGroup | None = None  # all or nothing (Coscheduling)
    gang_placed: bool = True  # False: its gang does not reach minMember, so nobody is placed
    fitted: int = 1  # how many of the pods judged together were placed, one after another
    bound: int = 0  # how many members of its gang are bound already
    #: what ``observe`` saw of the cluster as this pod's attempt saw it
    observed: dict[str, Any] = field(default_factory=dict)
    waits_on: str | None = None  # the node where it would wait at Permit until its gang is rejected

    @property
    def placed(self) -> tuple[str, ...]:
        """The nodes where it would be placed now (empty: none)."""
        return self.decision.nodes


def placed_with(pod: Pod) -> str | None:
    """What places ``pod`` together with other pods (``PodGroup ml/train``), or None."""
    ns = pod.namespace
    if (group := pod.labels.get(POD_GROUP_LABEL)) is not None:
        return f"PodGroup {ns}/{group}"
    kai = pod.annotations.get("pod-group-name") if pod.scheduler_name == "kai-scheduler" else None
    if kai is not None and not kai.startswith(f"pg-{pod.name}-"):  # KAI's one group per pod: none
        return f"PodGroup {ns}/{kai}"
    volcano = next((v for k in VOLCANO_GROUP_ANNOTATIONS if (v := pod.annotations.get(k))), None)
    if volcano is not None:
        return f"Volcano PodGroup {ns}/{volcano}"
    for label, what in ((KUEUE_POD_GROUP_LABEL, "Kueue pod group"), (JOBSET_LABEL, "JobSet")):
        if (value := pod.labels.get(label)) is not None:
            return f"{what} {ns}/{value}"
    return None if pod.owner is None else f"{pod.owner.kind} {ns}/{pod.owner.name}"


def serving(pod: Pod, schedulers: Sequence[Scheduler]) -> Scheduler | None:
    """The scheduler with a profile named as the pod's ``schedulerName``, if any."""
    return next((s for s in schedulers if s.serves(pod.scheduler_name)), None)


#: Called with each pod and its decision while the cluster is as the attempt saw it.
Observe = Callable[[Pod, Decision], dict[str, Any]]


def judge(
    pending: Sequence[Pod],
    schedulers: Sequence[Scheduler],
    state: ClusterState,
    gangs: GangView,
    observe: Observe,
) -> list[Judged]:
    """Every pending pod's evaluation, in the order given; the pods placed together judged one
    after another. ``observe`` records more of each pod's view (a diagnosis) beside its decision."""
    groups: dict[str, list[Pod]] = {}
    for pod in pending:
        key = placed_with(pod)
        if key is not None:
            groups.setdefault(key, []).append(pod)
    judged: dict[str, Judged] = {}
    for pod in pending:
        if pod.key in judged:
            continue
        key = placed_with(pod)
        members = groups[key] if key is not None else [pod]
        for j in _judge_group(key, members, schedulers, state, gangs, observe):
            judged[j.pod.key] = j
    return [judged[p.key] for p in pending]


def _judge_group(
    key: str | None,
    members: list[Pod],
    schedulers: Sequence[Scheduler],
    state: ClusterState,
    gangs: GangView,
    observe: Observe,
) -> list[Judged]:
    queue = sorted(members, key=lambda p: -p.priority)  # stable: then the order they were created
    placed: list[tuple[str, str]] = []
    out: list[tuple[Pod, Decision, tuple[tuple[str, str], ...], dict[str, Any]]] = []
    try:
        for pod in queue:
            decision = _decide(pod, schedulers)
            observed = observe(pod, decision)
            owner = serving(pod, schedulers)
            if owner is not None and decision.nodes:
                refused = _assume(owner, pod, decision.nodes[0])
                if refused is None:
                    placed.append((pod.key, decision.nodes[0]))
                else:
                    decision = Decision(message=f'running PreBind plugin "DynamicResources": {refused}')
            out.append((pod, decision, tuple(p for p in placed if p[0] != pod.key), observed))
    finally:
        for pod_key, _ in placed:
            state.unassign(pod_key)
    gang = _gang(queue[0], schedulers, gangs)
    bound = 0 if gang is None else gangs.assigned(gang)
    complete = gang is None or bound + len(placed) >= gang.min_member
    judged = [
        Judged(pod, decision, key, earlier, len(members), gang, complete, len(placed), bound, observed)
        for pod, decision, earlier, observed in out
    ]
    if complete:
        return judged
    owner = serving(queue[0], schedulers)
    wording = owner.profiles[queue[0].scheduler_name].wording if owner is not None else None
    failing = next((j.decision.message for j in judged if not j.placed), "")
    rejected = Decision(message=OPTIMISTIC_REJECTION if wording is None else wording.gang_rejected(failing))
    return [replace(j, decision=rejected, waits_on=j.placed[0]) if j.placed else j for j in judged]


def _decide(pod: Pod, schedulers: Sequence[Scheduler]) -> Decision:
    """One attempt that changes nothing; a pod that no scheduler serves, or that a PreEnqueue plugin
    keeps out of the queue (scheduling gates), is never tried."""
    owner = serving(pod, schedulers)
    if owner is None:
        return Decision(message=no_scheduler(pod.scheduler_name))
    refused = owner.pre_enqueue(pod)
    if refused is not None:
        return Decision(message=gates.explained(pod.scheduling_gates) if pod.scheduling_gates else refused)
    return owner.decide(pod)


def _assume(scheduler: Scheduler, pod: Pod, node: str) -> str | None:
    """Reserve: the pod is assumed on ``node`` with its GPU share and its ResourceClaims' devices;
    else (nothing assumed) why a claim cannot be reserved there."""
    state = scheduler.state
    state.assign(pod, node, 0.0, scheduler.profiles[pod.scheduler_name].gpu_choice)
    dra = state.dra if pod.resource_claims else None
    refused = dra.place(pod, state.nodes[state.index[node]]) if dra is not None else None
    if refused is not None:
        state.unassign(pod.key)
    return refused


def _gang(pod: Pod, schedulers: Sequence[Scheduler], gangs: GangView) -> PodGroup | None:
    """The pod's PodGroup when its profile places the group all or nothing (a Permit plugin)."""
    owner = serving(pod, schedulers)
    if owner is None or owner.profiles[pod.scheduler_name].permit is None:
        return None
    return gangs.group_of(pod)
