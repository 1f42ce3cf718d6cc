"""DefaultPreemption's PostFilter (``pkg/scheduler/framework/preemption``), Kubernetes 1.34,
PodDisruptionBudget-aware as upstream and gang-aware as Volcano and KAI are.

When no node fits, preemption is tried: nodes that failed with an unresolvable status
are ``Preemption is not helpful for scheduling``; on the others, every pod of lower
priority is removed in a dry run: none -> ``No preemption victims found for incoming
pod``; still no fit -> the filter's reasons after removal; a fit -> the node is a
candidate. Without candidates the message is
``preemption: 0/N nodes are available: <histogram>.``, and a node the pod was nominated to
before is no longer its (``Preempt`` returns ``NewPostFilterResultWithNominatedNode("")``).

Eligibility (``PodEligibleToPreemptOthers``): a pod with ``preemptionPolicy: Never`` gets
``preemption: not eligible due to preemptionPolicy=Never.``; a pod nominated to a node where a
lower-priority pod is terminating as a preemption victim (``podTerminatingByPreemption``: the
``DisruptionTarget`` condition, reason ``PreemptionByScheduler``; a pod deleted for another
reason does not count) gets ``not eligible due to a terminating pod on the nominated node.``,
unless that node is now unresolvable for the pod.

Victims on a node (``default_preemption.go`` ``SelectVictimsOnNode``): the lower-priority pods,
most important first (``MoreImportantPod``: higher priority, then earlier start), are split by
``filterPodsWithPDBViolation``: in that order each pod takes one disruption from every
PodDisruptionBudget selecting it (a budget with an empty selector, or a pod without labels,
matches nothing), and the pod *violates* if one of them falls below zero. Violating pods are
reprieved first, then the others, each kept if the preemptor still fits with it back; the
violating pods that must go are the node's ``numViolatingVictims``. Budgets are best effort: a
node whose victims violate one is still a candidate. A node without a lower-priority pod finds no
victims: gpufleet keeps each node's lowest priority and passes over such nodes at once.

The node (``preemption.go`` ``pickOneNodeForPreemption``): fewest PDB violations, then the
lowest highest-victim priority, then the smallest sum of victim priorities (each plus 2^31),
then the fewest victims, then the latest start among the highest-priority victims (start times in
whole seconds, as ``status.startTime`` carries them), then the first candidate (gpufleet: the
lowest node index; upstream: map order, so any of the equally ranked). The preemptor is
nominated to that node and its victims are evicted with their grace period. A pod nominated to
a node where its victims are still terminating is not eligible again (above).

Gangs (pods of a ``PodGroup``), as Volcano's ``preempt`` action and KAI's reclaim/preempt treat
jobs, not as kube-scheduler does:
- a victim in a gang goes whole: reprieving or evicting it reprieves or evicts every bound member
  of its gang, on any node; those members count in the node's ranking (priorities, number, PDB
  violations). A gang with a member of the preemptor's priority or above is not a victim, and
  members of the preemptor's own gang never preempt each other.
- a preemptor in a gang preempts only if its whole gang then fits. Once the preemptor has a
  candidate at all, its gang's not-yet-placed members (itself among them), in name order so that
  every member's attempt makes the same plan, each take the first node where it fits as the dry
  run leaves the cluster, else preempt as above there, victims accumulating over members. Each
  member is judged as its own cycle would judge it with the members before it bound and their
  victims gone: the pod-aware filters (InterPodAffinity, PodTopologySpread, NodePorts) count the
  members the dry run put and leave out the victims it evicted (``pod_aware.WhatIf``), so members
  with required anti-affinity to each other take a node each, a hostname spread spreads them, and
  members with required affinity to each other go where the first went. If one member finds no
  place, nothing is evicted:
  ``preemption: gang <namespace>/<name> would not fit whole after preemption.``. Otherwise every
  victim of the gang is evicted at once and each member is nominated to its node.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import TYPE_CHECKING, cast

import numpy as np

from gpufleet.cluster.snapshot import ClusterSnapshot, covers_for_preemption
from gpufleet.cluster.state import Assignment, ClusterState, IntArray
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU
from gpufleet.scheduling.framework import (
    Code,
    DynamicFilter,
    PodContext,
    PostFilter,
    PostFilterRequest,
    PostFilterResult,
    StaticFilter,
    Status,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.messages import fit_error
from gpufleet.scheduling.pod_aware import PodCycle, WhatIf
from gpufleet.scheduling.registry import register

if TYPE_CHECKING:
    from gpufleet.model.workloads import PodGroup

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


@dataclass(frozen=True)
class Candidate:
    """A node preemption could free for the pod: the victims it would evict there and the
    PodDisruptionBudgets that would break."""

    node: int
    victims: tuple[Assignment, ...]  # most important first
    violations: int = 0  # numPDBViolations

    def rank(self) -> tuple[int, int, int, int, int]:
        """``pickOneNodeForPreemption``'s criteria in order: the smallest wins."""
        top = self.victims[0].pod.priority
        total = sum(v.pod.priority + 2**31 for v in self.victims)
        earliest_top = min(start_second(v) for v in self.victims if v.pod.priority == top)
        return (self.violations, top, total, len(self.victims), -earliest_top)


def start_second(a: Assignment) -> int:
    """A pod's start time as the scheduler reads it: ``status.startTime`` is a ``metav1.Time``,
    whole seconds on the wire, so pods started within one second tie."""
    return math.floor(a.start_s)


def more_important_first(a: Assignment) -> tuple[int, int, str]:
    """``util.MoreImportantPod``: higher priority, then earlier start (then the pod's key, so that
    equals keep one order)."""
    return (-a.pod.priority, start_second(a), a.pod.key)


NO_PODS = np.iinfo(np.int64).max  # the lowest priority on a node without pods: above every pod's


_PRIORITY = attrgetter("pod.priority")  # an assignment's pod's priority


def with_lower_priority(state: ClusterState, nodes: Sequence[int], priority: int) -> list[int]:
    """The nodes among ``nodes`` (in their order) that hold a pod of lower priority than ``priority``: on
    the others ``SelectVictimsOnNode`` finds no victims. Each node's lowest priority is kept in
    ``ClusterState.memo`` and worked out again for the nodes whose pods changed since (its change log)."""
    pos, lowest = cast(tuple[int, IntArray], state.memo.get("lowest-priority", (-1, np.zeros(0, np.int64))))
    if pos < 0:  # (first asked)
        lowest = np.full(state.size, NO_PODS, dtype=np.int64)
        changed = np.arange(state.size, dtype=np.int64)
    else:
        changed = state.changes_since(pos)
        if len(lowest) < state.size:  # nodes added since: without pods until they are logged as changed
            lowest = np.concatenate([lowest, np.full(state.size - len(lowest), NO_PODS, dtype=np.int64)])
    pods_on = state.pods_on
    for i in changed.tolist():
        lowest[i] = min(map(_PRIORITY, pods_on[i].values()), default=NO_PODS)
    state.memo["lowest-priority"] = (state.change_pos, lowest)
    idx = np.asarray(nodes, dtype=np.int64)
    return idx[lowest[idx] < priority].tolist()  # type: ignore[no-any-return]


def pdb_violations(pods: Sequence[Pod], snapshot: ClusterSnapshot) -> list[bool]:
    """``filterPodsWithPDBViolation``: in the given order, each pod takes one disruption from every
    budget selecting it; it violates if one of them falls below zero."""
    budgets = snapshot.budgets()
    allowed = [n for _, n in budgets]
    out = []
    for pod in pods:
        violated = False
        for k, (budget, _) in enumerate(budgets):
            if covers_for_preemption(budget, pod):
                allowed[k] -= 1
                violated |= allowed[k] < 0
        out.append(violated)
    return out


@register
class DefaultPreemption(PostFilter):
    name = "DefaultPreemption"
    origin = "kube-scheduler"

    def not_eligible(self, request: PostFilterRequest) -> str | None:
        """Why the pod may not preempt (``PodEligibleToPreemptOthers``), or None."""
        pod, i = request.ctx.pod, request.nominated
        if pod.preemption_policy == "Never":
            return "not eligible due to preemptionPolicy=Never."
        if i is None or i not in request.resolvable:  # no nomination, or nominated where it never fits
            return None
        if any(a.preempted and a.pod.priority < pod.priority for a in request.ctx.state.pods_on[i].values()):
            return "not eligible due to a terminating pod on the nominated node."
        return None

    def victim_units(
        self, ctx: PodContext, i: int, gangs: GangView | None, snapshot: ClusterSnapshot
    ) -> list[tuple[Assignment, ...]]:
        """The lower-priority pods on node ``i`` as what is evicted together: a pod alone, or every
        bound member of its gang; most important (local member) first."""
        state, pod = ctx.state, ctx.pod
        own = gangs.group_of(pod) if gangs is not None else None
        units: dict[str, tuple[Assignment, ...]] = {}
        # only lower-priority pods can be victims: filtered before they are sorted (a node's pods are
        # mostly not, on a failed cycle of a pod of the common priority)
        lower = [a for a in state.pods_on[i].values() if a.pod.priority < pod.priority]
        for a in sorted(lower, key=more_important_first):
            if snapshot.gone(a.pod.key):
                continue
            group = gangs.group_of(a.pod) if gangs is not None else None
            if gangs is None or group is None:
                units[a.pod.key] = (a,)
                continue
            if (own is not None and group.key == own.key) or group.key in units:
                continue
            members = sorted(
                (
                    state.assignments[k]
                    for k in gangs.members.get(group.key, ())
                    if k in state.assignments and not snapshot.gone(k)
                ),
                key=more_important_first,
            )
            if all(m.pod.priority < pod.priority for m in members):
                units[group.key] = tuple(members)
        return list(units.values())

    def select_victims(
        self,
        ctx: PodContext,
        i: int,
        filters: list[DynamicFilter],
        gangs: GangView | None = None,
        snapshot: ClusterSnapshot | None = None,
        pods: PodCycle | None = None,
    ) -> tuple[Candidate | None, list[str]]:
        """``SelectVictimsOnNode``: remove every lower-priority pod (gang); if the pod then fits, add
        them back, PDB-violating ones first, most important first, while it still fits. Returns the
        candidate, or the reasons it never fits. ``pods``: the pod-aware filters, asked with the
        removed pods gone (their PreFilter state's ``RemovePod``)."""
        state = ctx.state
        snapshot = snapshot or ClusterSnapshot(state)
        units = self.victim_units(ctx, i, gangs, snapshot)
        if not units:
            return None, [NO_VICTIMS]
        local = [tuple(a for a in unit if a.node == i) for unit in units]
        removed = {a.pod.key: a for unit in local for a in unit}
        alloc, requested, nonzero = snapshot.row(i, list(removed.values()))
        freed = snapshot.gpus_freed(i, list(removed))  # shared GPUs all of whose shares are victims

        def fits(row: list[int]) -> bool:
            if not all(f.passes_node(ctx, (alloc, row, nonzero), i) for f in filters):
                return False
            return pods is None or pods.reject(i, list(removed.values())) is None

        if not fits(requested):
            lifted = np.array(state.requested[i]) - np.array(requested)
            state.requested[i] -= lifted
            try:
                one = np.array([i], dtype=np.int64)
                reasons = [r for f in filters for r, mask in f.reason_masks(ctx, one) if mask[0]]
            finally:
                state.requested[i] += lifted
            rejection = pods.reject(i, list(removed.values())) if pods is not None and not reasons else None
            return None, reasons if rejection is None else [rejection[0]]
        flags = iter(pdb_violations([a.pod for unit in units for a in unit], snapshot))
        violating = [sum(next(flags) for _ in unit) for unit in units]
        victims: list[Assignment] = []
        violations = 0
        order = [k for k in range(len(units)) if violating[k]] + [
            k for k in range(len(units)) if not violating[k]
        ]
        for k in order:
            back = requested
            for a in local[k]:
                del removed[a.pod.key]
                back = [r + v for r, v in zip(back, state.pod_vectors(a.pod)[0].tolist(), strict=True)]
            # a shared GPU the unit held is shared again (the others stay free)
            still = snapshot.gpus_freed(i, list(removed)) if freed else 0
            if still != freed:
                back[state.resource_column(GPU)] += freed - still
            if fits(back):
                requested, freed = back, still
            else:
                removed.update((a.pod.key, a) for a in local[k])
                victims.extend(units[k])
                violations += violating[k]
        return Candidate(i, tuple(sorted(victims, key=more_important_first)), violations), []

    def best_candidates(
        self,
        ctx: PodContext,
        nodes: Sequence[int],
        filters: list[DynamicFilter],
        gangs: GangView | None,
        snapshot: ClusterSnapshot,
        histogram: Counter[str],
        pods: PodCycle | None = None,
    ) -> list[Candidate]:
        """Every candidate that ``pickOneNodeForPreemption``'s criteria rank best, in node order
        (upstream takes the first of them in map order, so any may be its choice)."""
        candidates: list[Candidate] = []
        visit = with_lower_priority(ctx.state, nodes, ctx.pod.priority)
        if len(visit) < len(nodes):  # what select_victims finds on the others
            histogram[NO_VICTIMS] += len(nodes) - len(visit)
        for i in visit:
            candidate, reasons = self.select_victims(ctx, i, filters, gangs, snapshot, pods)
            if candidate is not None and candidate.victims:
                candidates.append(candidate)
            else:
                histogram.update(reasons)
        if not candidates:
            return []
        best = min(c.rank() for c in candidates)
        return [c for c in candidates if c.rank() == best]

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        """``request.resolvable``: the nodes whose filter status was Unschedulable (not
        unresolvable); its static filters place the other members of a gang."""
        ctx, gangs = request.ctx, request.gangs
        not_eligible = self.not_eligible(request)
        if not_eligible is not None:
            return self._refuse(not_eligible)
        histogram: Counter[str] = Counter({NOT_HELPFUL: request.num_nodes - len(request.resolvable)})
        best = self.best_candidates(
            ctx,
            request.resolvable.tolist(),
            request.filters,
            gangs,
            ClusterSnapshot(ctx.state),
            histogram,
            request.pods,
        )
        if not best:  # ``Preempt``: no candidate clears the nomination (a node where it might go is gone)
            return replace(self._refuse(fit_error(request.num_nodes, histogram)), clears_nomination=True)
        group = gangs.group_of(ctx.pod)
        if group is None:
            names = ctx.state.nodes
            ties = tuple(
                (names[c.node].name, tuple(dict.fromkeys(v.pod.key for v in c.victims))) for c in best
            )
            return replace(self._nominate(ctx, best[0].node, best[0].victims), ties=ties)
        return self._preempt_for_gang(request, group)

    def _preempt_for_gang(self, request: PostFilterRequest, group: PodGroup) -> PostFilterResult:
        """The whole gang's dry run: its not-yet-placed members in name order (so every member's
        attempt makes the same plan), each where it fits, else preempting, victims accumulating.

        Each member is judged as its own scheduling cycle would judge it once the members before it
        were bound and their victims gone (upstream's gang schedulers run each member through the
        whole framework, Filter included, with the members before it assumed): the filters on the
        dry run's snapshot, and the profile's pod-aware filters (InterPodAffinity, PodTopologySpread,
        NodePorts) over the cluster with the pods nominated elsewhere held, the members already put
        counted and the victims already evicted gone (``WhatIf``)."""
        ctx, gangs = request.ctx, request.gangs
        state = ctx.state
        snapshot = ClusterSnapshot(state)
        keys = sorted(set(gangs.members.get(group.key, ())) | {ctx.pod.key})
        members = [gangs.pods.get(key, ctx.pod) for key in keys if key not in state.assignments]
        with_terms = any(m.pod_affinity is not None for m in members)
        pods = WhatIf(state, request.pod_filters, with_terms, held=request.held)
        victims: list[Assignment] = []
        nodes: dict[str, int] = {}
        for member in members:
            placed = self._place_member(
                member, ctx, request.filters, request.static_filters, gangs, snapshot, pods
            )
            if placed is None:
                return self._refuse(f"gang {group.key} would not fit whole after preemption.")
            nodes[member.key], more = placed
            victims.extend(more)
        others = tuple((k, state.nodes[i].name) for k, i in nodes.items() if k != ctx.pod.key)
        return self._nominate(ctx, nodes[ctx.pod.key], tuple(victims), others)

    def _nominate(
        self,
        ctx: PodContext,
        node: int,
        victims: tuple[Assignment, ...],
        nominations: tuple[tuple[str, str], ...] = (),
    ) -> PostFilterResult:
        return PostFilterResult(
            Status(Code.SUCCESS, (), self.name),
            ctx.state.nodes[node].name,
            tuple(dict.fromkeys(v.pod.key for v in victims)),
            gang_nominations=nominations,
        )

    def _place_member(
        self,
        member: Pod,
        ctx: PodContext,
        filters: list[DynamicFilter],
        static_filters: Sequence[StaticFilter],
        gangs: GangView,
        snapshot: ClusterSnapshot,
        pods: WhatIf,
    ) -> tuple[int, tuple[Assignment, ...]] | None:
        """A gang member's node in the dry run: the first where it fits as the dry run leaves the
        cluster, else the best preemption candidate (its victims then leave); None if neither.
        ``pods``: the pod-aware filters over the dry run so far, which the member then joins.

        Preemption passes over the nodes with room where a pod-aware filter turns the member away
        unresolvably (a missing topology label, required affinity no pod meets): that filter is then
        the first to fail there, and the cycle's PostFilter leaves such nodes out."""
        state = ctx.state
        mctx = PodContext(member, state)
        nodes = [
            i
            for i in state.active_indices().tolist()
            if all(f.reject(member, state.nodes[i]) is None for f in static_filters)
        ]
        judged = pods.judged_by(member)
        cycle = PodCycle(judged, []) if judged else None
        fitting, turned_away = nodes, []
        if cycle is not None and nodes:
            rows = np.asarray(nodes, dtype=np.int64)
            ok = cycle.passes(rows)
            fitting, turned_away = rows[ok].tolist(), rows[~ok].tolist()
        for i in fitting:
            if all(f.passes_node(mctx, snapshot.row(i), i) for f in filters):
                snapshot.put(member, i)
                pods.put(member, i)
                return i, ()
        if member.preemption_policy == "Never":
            return None
        if cycle is not None and turned_away:
            unresolvable = {
                i
                for i in turned_away
                if (rejection := cycle.reject(i)) is not None
                and rejection[1] == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                and all(f.passes_node(mctx, snapshot.row(i), i) for f in filters)
            }
            nodes = [i for i in nodes if i not in unresolvable]
        tied = self.best_candidates(mctx, nodes, filters, gangs, snapshot, Counter(), cycle)
        if not tied:
            return None
        snapshot.evict(tied[0].victims)
        snapshot.put(member, tied[0].node)
        pods.remove(tied[0].victims)
        pods.put(member, tied[0].node)
        return tied[0].node, tied[0].victims

    def _refuse(self, message: str) -> PostFilterResult:
        return PostFilterResult(Status(Code.UNSCHEDULABLE, ("preemption: " + message,), self.name))
