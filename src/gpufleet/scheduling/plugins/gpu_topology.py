"""GpuTopology (gpufleet's, not upstream): prefer nodes where a multi-GPU pod gets well-linked GPUs
without breaking up a larger free island (``gpus.topology.device_choice.island_score``: 60
points for the worst link of the set it would get, 40 for how fully it fills the island that set
lies in).

kube-scheduler counts GPUs; the device plugin then picks which ones (``GetPreferredAllocation``,
NVIDIA's ``besteffort`` policy), too late to choose a better node. This score looks at the free
GPU indices the device level reports (``scheduling.device_view``). Nodes whose links are all alike
(NVSwitch) score as one island; pods of one GPU or none, and nodes the device level does not
describe, score 0 everywhere (no preference). Enable it in a profile:
``multiPoint: {enabled: [{name: GpuTopology, weight: 5}]}``.
"""

from __future__ import annotations

import numpy as np

from gpufleet.cluster.state import IntArray
from gpufleet.gpus.topology.device_choice import island_score
from gpufleet.gpus.topology.link_graph import nvswitch
from gpufleet.scheduling.framework import DynamicScore, PodContext
from gpufleet.scheduling.registry import register


@register
class GpuTopology(DynamicScore):
    name = "GpuTopology"
    array_only = True  # reads the device level, not the node's resource row

    def score(self, ctx: PodContext, idx: IntArray) -> IntArray:
        view, k = ctx.state.devices, ctx.pod.gpus
        out = np.zeros(len(idx), dtype=np.int64)
        if view is None or k < 2:
            return out
        for j, i in enumerate(idx.tolist()):
            known = view.free_gpus(i)
            if known is not None:
                free, graph = known
                out[j] = island_score(graph or nvswitch(max(free, default=0) + 1), free, k)
        return out
