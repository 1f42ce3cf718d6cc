"""DefaultPreemption's PostFilter (``pkg/scheduler/framework/preemption``), Kubernetes 1.34.

When no node fits, preemption is tried: nodes that failed with an unresolvable status
are ``Preemption is not helpful for scheduling``; on the others, every pod of lower
priority is removed in a dry run: none -> ``No preemption victims found for incoming
pod``; still no fit -> the filter's reasons after removal; a fit -> the node is a
candidate. Without candidates the message is
``preemption: 0/N nodes are available: <histogram>.``; a pod with
``preemptionPolicy: Never`` gets ``preemption: not eligible due to preemptionPolicy=Never.``.

With candidates, the node is chosen as ``pickOneNodeForPreemption`` does (lowest
highest-victim priority, then smallest sum of priorities, then fewest victims, then the
latest start of the most important victims; PodDisruptionBudgets are not modelled yet),
its victims are the lower-priority pods that must go after the most important ones are
reprieved, and the preemptor is nominated to that node. A pod nominated to a node where
lower-priority pods are still terminating is ``not eligible due to a terminating pod on
the nominated node.``
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from gpufleet.scheduling.cluster_state import Assignment, IntArray
from gpufleet.scheduling.framework import Code, DynamicFilter, Plugin, PodContext, Status
from gpufleet.scheduling.messages import fit_error

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


@dataclass(frozen=True)
class PreemptionOutcome:
    status: Status
    node: str | None = None
    victims: tuple[str, ...] = ()


@dataclass(frozen=True)
class Candidate:
    node: int
    victims: tuple[Assignment, ...]  # most important first

    def rank(self) -> tuple[int, int, int, float]:
        """``pickOneNodeForPreemption``: the smallest wins (no PDBs modelled yet)."""
        top = self.victims[0].pod.priority
        total = sum(v.pod.priority + 2**31 for v in self.victims)
        earliest_top = min(v.start_s for v in self.victims if v.pod.priority == top)
        return (top, total, len(self.victims), -earliest_top)


def more_important_first(a: Assignment) -> tuple[int, float]:
    """``util.MoreImportantPod``: higher priority, then earlier start."""
    return (-a.pod.priority, a.start_s)


class DefaultPreemption(Plugin):
    name = "DefaultPreemption"
    points = frozenset({"postFilter"})

    def select_victims(
        self, ctx: PodContext, i: int, filters: list[DynamicFilter]
    ) -> tuple[tuple[Assignment, ...], list[str]]:
        """``selectVictimsOnNode``: remove every lower-priority pod; if the pod then fits, add them
        back most important first while it still fits. Returns (victims, reasons if it never fits)."""
        state = ctx.state
        lower = sorted(
            (a for a in state.pods_on[i].values() if a.pod.priority < ctx.pod.priority),
            key=more_important_first,
        )
        if not lower:
            return (), [NO_VICTIMS]
        alloc, requested, nonzero = (
            state.alloc[i].tolist(),
            state.requested[i].tolist(),
            state.nonzero[i].tolist(),
        )
        for a in lower:
            requested = [r - v for r, v in zip(requested, state.pod_vectors(a.pod)[0].tolist(), strict=True)]
        if not all(f.passes_node(ctx, (alloc, requested, nonzero), i) for f in filters):
            freed = np.array(state.requested[i]) - np.array(requested)
            state.requested[i] -= freed
            try:
                one = np.array([i], dtype=np.int64)
                reasons = [r for f in filters for r, mask in f.reason_masks(ctx, one) if mask[0]]
            finally:
                state.requested[i] += freed
            return (), reasons
        victims = []
        for a in lower:
            back = [r + v for r, v in zip(requested, state.pod_vectors(a.pod)[0].tolist(), strict=True)]
            if all(f.passes_node(ctx, (alloc, back, nonzero), i) for f in filters):
                requested = back
            else:
                victims.append(a)
        return tuple(victims), []

    def post_filter(
        self,
        ctx: PodContext,
        resolvable: IntArray,
        num_nodes: int,
        filters: list[DynamicFilter],
        waiting_on_terminating: bool = False,
    ) -> PreemptionOutcome:
        """``resolvable``: the nodes whose filter status was Unschedulable (not unresolvable)."""
        if ctx.pod.preemption_policy == "Never":
            return self._refuse("not eligible due to preemptionPolicy=Never.")
        if waiting_on_terminating:
            return self._refuse("not eligible due to a terminating pod on the nominated node.")
        histogram: Counter[str] = Counter({NOT_HELPFUL: num_nodes - len(resolvable)})
        candidates: list[Candidate] = []
        for i in resolvable.tolist():
            victims, reasons = self.select_victims(ctx, i, filters)
            if victims:
                candidates.append(Candidate(i, victims))
            else:
                histogram.update(reasons)
        if candidates:
            best = min(candidates, key=Candidate.rank)
            return PreemptionOutcome(
                Status(Code.SUCCESS, (), self.name),
                ctx.state.nodes[best.node].name,
                tuple(v.pod.key for v in best.victims),
            )
        return self._refuse(fit_error(num_nodes, histogram))

    def _refuse(self, message: str) -> PreemptionOutcome:
        return PreemptionOutcome(Status(Code.UNSCHEDULABLE, ("preemption: " + message,), self.name))
