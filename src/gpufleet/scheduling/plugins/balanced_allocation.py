"""NodeResourcesBalancedAllocation (``noderesources/balanced_allocation.go``), Kubernetes 1.34.

For the resources in its list (default cpu and memory) with non-zero allocatable, the
fraction requested (actual requests plus the pod's, capped at 1); score
``(1 - std) * 100`` truncated, where std is ``|f1 - f2| / 2`` for two resources and the
population standard deviation for more. PreScore skips best-effort pods (no request for
any of the resources), so they get 0 here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gpufleet.cluster.state import IntArray, NodeRow
from gpufleet.scheduling.framework import MAX_NODE_SCORE, DynamicScore, PodContext
from gpufleet.scheduling.plugins.node_resources_fit import (
    DEFAULT_RESOURCES,
    resource_columns,
    resource_plan,
)
from gpufleet.scheduling.registry import register


@register
class NodeResourcesBalancedAllocation(DynamicScore):
    name = "NodeResourcesBalancedAllocation"
    origin = "kube-scheduler"

    def __init__(self, resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES):
        self.resources = resources

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> NodeResourcesBalancedAllocation:
        resources = tuple((r["name"], int(r.get("weight") or 1)) for r in args.get("resources") or ())
        return cls(resources or DEFAULT_RESOURCES)

    def score(self, ctx: PodContext, idx: IntArray) -> IntArray:
        plan = resource_plan(ctx, self.resources, True, self)
        if not plan.pod.any():
            return np.zeros(len(idx), dtype=np.int64)
        alloc, req, w = resource_columns(ctx, idx, plan)
        valid = w > 0
        frac = np.minimum(req / np.maximum(alloc, 1), 1.0) * valid
        if frac.shape[1] == 2:
            # the common case, exactly as upstream: |f1 - f2| / 2 when both count, else 0
            std = np.abs(frac[:, 0] - frac[:, 1]) * (valid[:, 0] & valid[:, 1]) / 2
        else:
            count = np.maximum(valid.sum(axis=1), 1)
            mean = frac.sum(axis=1) / count
            std = np.sqrt((((frac - mean[:, None]) * valid) ** 2).sum(axis=1) / count)
        score: IntArray = ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
        return score

    def score_node(self, ctx: PodContext, row: NodeRow) -> int:
        plan = resource_plan(ctx, self.resources, True, self)
        if not plan.requests_any:
            return 0
        alloc, requested, _ = row  # the plan reads actual requests (``use_requested``), never non-zero ones
        fractions = [
            min((requested[c] + pod) / alloc[c], 1.0) for c, _, _, pod in plan.columns if alloc[c] > 0
        ]
        if len(fractions) == 2:
            std = abs(fractions[0] - fractions[1]) / 2
        elif len(fractions) > 2:
            mean = sum(fractions) / len(fractions)
            std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
        else:
            std = 0.0
        return int((1 - std) * MAX_NODE_SCORE)
