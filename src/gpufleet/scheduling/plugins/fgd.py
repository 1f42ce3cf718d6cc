"""FGD, fragmentation gradient descent (gpufleet's port of the score of Weng et al., "Beware of
Fragmentation", USENIX ATC '23, section 4; the authors' ``pkg/simulator/plugin/fgd_score.go``):
place a pod where it increases GPU fragmentation (``scheduling.fragmentation``) the least.

For every feasible node the plugin computes the node's fragmentation ``F_n`` for the target
workload before and after the pod lands there, and scores the difference: less added
fragmentation, higher score. Inside a node the pod's shares go where ``scheduling.gpu_shares``
would put them (best fit); whole GPUs come off the unshared ones.

The target workload is what the profile's ``pluginConfig`` declares (``args.typicalPods``: shapes
with their percentage of pods, as the authors take the most popular shapes of their trace)::

    pluginConfig:
    - name: FGD
      args:
        typicalPods:
        - {gpus: 1, percentage: 40}                  # whole GPUs
        - {gpuMilli: 500, cpu: "4", percentage: 60}  # half a GPU, 4 cpu

Without it, the GPU pods the cluster runs now plus the pod being placed, by shape popularity. That
changes with every binding, so the shape cache re-scores every node each cycle for such profiles.

kube-scheduler sums plugin scores per node without comparing nodes first, so the difference is
mapped to 0..100 on a fixed scale: 50 for no change, 1 point per 20 thousandths of a GPU of
fragmentation removed or added, clipped at 0 and 100 (a change of one whole GPU spans 50 points).
Enable it in a profile (``multiPoint: {enabled: [{name: FGD, weight: 10}]}``) and, to rank nodes by
it alone as the paper does, disable the other score plugins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gpufleet.model.gpu_share import MILLI, GpuShare
from gpufleet.model.pod import Pod
from gpufleet.model.quantity import QuantityError, parse_quantity
from gpufleet.model.resources import CPU, GPU, MEMORY, to_units
from gpufleet.scheduling.cluster_state import IntArray
from gpufleet.scheduling.fragmentation import (
    FreeCapacity,
    TaskShape,
    node_fragmentation,
    task_shape,
    workload_tasks,
)
from gpufleet.scheduling.framework import MAX_NODE_SCORE, DynamicScore, PodContext

NEUTRAL_SCORE = MAX_NODE_SCORE // 2
_TYPICAL_FIELDS = frozenset({"gpus", "gpuMilli", CPU, MEMORY, "percentage"})
MILLI_PER_POINT = 20


def after_placing(free: FreeCapacity, task: TaskShape, req: IntArray, gpu_col: int) -> FreeCapacity:
    """The free capacity of each node had the pod landed there (where it does not fit, some goes negative)."""
    columns = free.columns - req
    if not task.shared:  # whole GPUs: off the unshared ones
        columns[:, gpu_col] = free.whole - task.gpus
        return FreeCapacity(columns, free.whole - task.gpus, free.slots)
    nodes, width = free.slots.shape
    slots = np.hstack([free.slots, np.full((nodes, task.gpus), -1, dtype=np.int64)])
    used = np.zeros(slots.shape, dtype=bool)
    whole = free.whole.copy()
    rows = np.arange(nodes)
    for k in range(task.gpus):  # each share on another GPU: the fullest open one with room, else a fresh one
        room = np.where((slots >= task.milli[:, None]) & ~used, slots, MILLI + 1)
        best = room.argmin(axis=1)
        has = room[rows, best] <= MILLI
        slots[rows[has], best[has]] -= task.milli[has]
        used[rows[has], best[has]] = True
        fresh = rows[~has]
        slots[fresh, width + k] = MILLI - task.milli[fresh]
        used[fresh, width + k] = True
        whole[fresh] -= 1
    columns[:, gpu_col] = whole
    return FreeCapacity(columns, whole, slots)


def typical_pods(args: Mapping[str, Any]) -> list[Pod]:
    """``args.typicalPods`` as pods, each repeated by its percentage (ValueError on a bad entry)."""
    pods: list[Pod] = []
    for n, entry in enumerate(args.get("typicalPods") or ()):
        where = f"typicalPods[{n}]"
        if not isinstance(entry, Mapping) or set(entry) - _TYPICAL_FIELDS:
            raise ValueError(f"{where}: a mapping of {', '.join(sorted(_TYPICAL_FIELDS))}")
        try:
            gpus, milli = int(entry.get("gpus", 1)), int(entry.get("gpuMilli", MILLI))
            percentage = float(entry.get("percentage", 1))
            requests = {r: to_units(r, parse_quantity(entry[r])) for r in (CPU, MEMORY) if r in entry}
        except (TypeError, ValueError, QuantityError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        if gpus < 1 or not 0 < milli <= MILLI or (milli < MILLI and gpus != 1) or percentage <= 0:
            raise ValueError(
                f"{where}: gpus >= 1, 0 < gpuMilli <= 1000 (below 1000 only with gpus 1), percentage > 0"
            )
        share = GpuShare(1, compute_milli=milli) if milli < MILLI else None
        pod = Pod(f"typical-{n}", requests={**requests, **({} if share else {GPU: gpus})}, gpu_share=share)
        pods.extend([pod] * max(1, round(percentage * 100)))
    return pods


class FragmentationGradient(DynamicScore):
    name = "FGD"
    points = frozenset({"preScore", "score"})
    array_only = True

    def __init__(self, typical: list[Pod] | None = None):
        self.typical = typical or []
        self.volatile = (
            not self.typical
        )  # without declared typical pods, the workload moves with every binding

    def score(self, ctx: PodContext, idx: IntArray) -> IntArray:
        state = ctx.state
        pod = ctx.pod
        if (pod.gpus == 0 and pod.gpu_share is None) or len(idx) == 0:
            return np.full(len(idx), NEUTRAL_SCORE, dtype=np.int64)
        workload = self.typical or [a.pod for a in state.assignments.values()] + [pod]
        tasks = workload_tasks(state, workload, idx)
        free = FreeCapacity.of(state, idx)
        req = ctx.req.copy()
        gpu_col = state.resource_column(GPU)
        req[gpu_col] = 0
        after = after_placing(free, task_shape(state, pod, idx), req, gpu_col)
        delta = node_fragmentation(after, tasks) - node_fragmentation(free, tasks)
        points = np.rint(delta / MILLI_PER_POINT).astype(np.int64)
        return np.clip(NEUTRAL_SCORE - points, 0, MAX_NODE_SCORE)
