"""DefaultPreemption's PostFilter (``pkg/scheduler/framework/preemption``), Kubernetes 1.34.

When no node fits, preemption is tried: nodes that failed with an unresolvable status
are ``Preemption is not helpful for scheduling``; on the others, every pod of lower
priority is removed in a dry run: none -> ``No preemption victims found for incoming
pod``; still no fit -> the filter's reasons after removal; a fit -> the node is a
candidate. Without candidates the message is
``preemption: 0/N nodes are available: <histogram>.``; a pod with
``preemptionPolicy: Never`` gets ``preemption: not eligible due to preemptionPolicy=Never.``.

This module reports candidates; evicting the victims and nominating the node is not
modelled yet (README, "Not modelled").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from gpufleet.scheduling.cluster_state import IntArray
from gpufleet.scheduling.framework import Code, DynamicFilter, Plugin, PodContext, Status
from gpufleet.scheduling.messages import fit_error

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


@dataclass(frozen=True)
class PreemptionOutcome:
    status: Status
    candidates: tuple[str, ...] = ()


class DefaultPreemption(Plugin):
    name = "DefaultPreemption"
    points = frozenset({"postFilter"})

    def post_filter(
        self, ctx: PodContext, resolvable: IntArray, num_nodes: int, filters: list[DynamicFilter]
    ) -> PreemptionOutcome:
        """``resolvable``: the nodes whose filter status was Unschedulable (not unresolvable)."""
        if ctx.pod.preemption_policy == "Never":
            return PreemptionOutcome(
                Status(
                    Code.UNSCHEDULABLE,
                    ("preemption: not eligible due to preemptionPolicy=Never.",),
                    self.name,
                )
            )
        state = ctx.state
        histogram: Counter[str] = Counter({NOT_HELPFUL: num_nodes - len(resolvable)})
        candidates: list[str] = []
        for i in resolvable:
            victims = [a for a in state.pods_on[i].values() if a.pod.priority < ctx.pod.priority]
            if not victims:
                histogram[NO_VICTIMS] += 1
                continue
            freed = np.zeros(len(state.resources), dtype=np.int64)
            for victim in victims:
                freed += state.pod_vectors(victim.pod)[0]
            state.requested[i] -= freed
            try:
                one = np.array([i], dtype=np.int64)
                failing = [
                    (reason, mask) for f in filters for reason, mask in f.reason_masks(ctx, one) if mask[0]
                ]
            finally:
                state.requested[i] += freed
            if failing:
                histogram.update(reason for reason, _ in failing)
            else:
                candidates.append(state.nodes[i].name)
        if candidates:
            return PreemptionOutcome(Status(Code.UNSCHEDULABLE, (), self.name), tuple(candidates))
        message = "preemption: " + fit_error(num_nodes, histogram)
        return PreemptionOutcome(Status(Code.UNSCHEDULABLE, (message,), self.name))
