"""Score plugins that judge one node at a time by what it has left (``fragmentation.NodeLeft``):
the FGD paper's policies (FGD, BestFit, DotProd, GpuPacking, GpuClustering, Random).

They look at each GPU's free thousandths, which the node's resource row does not hold, so they are
evaluated over node arrays (``array_only``), one node after another in Python: the shape cache
asks only for the nodes a binding changed.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from gpufleet.cluster.state import ClusterState, IntArray, non_zero_requests
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, MEMORY
from gpufleet.scheduling.fragmentation import NodeLeft, gpu_ask
from gpufleet.scheduling.framework import DynamicScore, PodContext


class PodAsk(NamedTuple):
    """A pod as the FGD authors' ``PodResource`` sees it on one node: cpu (non-zero request), GPUs,
    thousandths of each (0: no GPU), and whether it shares a GPU."""

    cpu: int
    memory: int
    gpus: int
    milli: int
    shared: bool

    @classmethod
    def of(cls, state: ClusterState, pod: Pod, i: int) -> PodAsk:
        share = pod.gpu_share
        gpus, milli = gpu_ask(pod, state.gpu_shares().gpu_memory(i) if share is not None else None)
        shared = share is not None and share.count == 1
        return cls(non_zero_requests(pod)[CPU], pod.requests.get(MEMORY, 0), gpus, milli, shared)

    @property
    def gpu_total(self) -> int:
        return self.gpus * self.milli

    def after(self, left: NodeLeft, gpu: int | None = None) -> NodeLeft:
        """The node with the pod on it: a share on a GPU with ``gpu`` left, else (``NodeResource.Sub``)
        the first GPUs in ascending order that have room."""
        gpus = list(left.gpus)
        if self.shared and gpu is not None:
            gpus[gpus.index(gpu)] = gpu - self.milli
        else:
            need = self.gpus
            for j, g in enumerate(gpus):
                if need and g >= self.milli:
                    gpus[j], need = g - self.milli, need - 1
        return NodeLeft(left.cpu - self.cpu, left.memory - self.memory, left.pods - 1, tuple(sorted(gpus)))


class PerNodeScore(DynamicScore):
    array_only = True
    state: ClusterState | None = None  # the cluster last scored (for Reserve's choice of GPU)

    def score(self, ctx: PodContext, idx: IntArray) -> IntArray:
        self.state = state = ctx.state
        pod = ctx.pod
        if pod.gpu_share is None or pod.gpu_share.memory_bytes is None:  # the same ask on every node
            ask = PodAsk.of(state, pod, 0)
            return np.array(
                [self.node_score(ctx, i, NodeLeft.of(state, i), ask) for i in idx.tolist()], dtype=np.int64
            )
        return np.array(
            [self.node_score(ctx, i, NodeLeft.of(state, i), PodAsk.of(state, pod, i)) for i in idx.tolist()],
            dtype=np.int64,
        )

    def node_score(self, ctx: PodContext, i: int, left: NodeLeft, ask: PodAsk) -> int:
        raise NotImplementedError
