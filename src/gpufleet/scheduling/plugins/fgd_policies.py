"""The baseline policies of the FGD paper (Weng et al., USENIX ATC '23, section 6.1), as the authors'
simulator scores them (``pkg/simulator/plugin/*_score.go``; ``docs/fgd-protocol.md`` section 3).

With a node's cpu left ``C``, GPU thousandths left ``G`` (all its GPUs), and a pod asking cpu ``c``,
``k`` GPUs of ``m`` thousandths each:

* ``BestFit`` (``best_fit_score.go``): ``int((1 - (0.5 (C - c) / 128000 + 0.5 (G - m k) / 8000)) * 100)``:
  the node left fullest wins.
* ``DotProd`` (``dot_product_score.go``, dimension "merge", norm "max"): 0 if ``C < c``, else
  ``int(100 (1 - d))`` with ``d`` half the dot product of ``(C/128000, G/8000)`` and
  ``(c/128000, m k/8000)``: the node whose free vector is least aligned with the pod's.
* ``GpuPacking`` (``gpu_packing_score.go``): prefer GPUs already in use, then nodes already in use:
  all GPUs free ``max(33 - F, F)`` (``F`` GPUs); the pod would take a free GPU ``max(50 - n, 33)``
  (``n`` free GPUs taken); only partly used GPUs ``max(100 - S // 10, 50)`` (``S`` the sum of their
  percent left); CPU-only pods 0.
* ``GpuClustering`` (``gpu_clustering_score.go``): put pods of one GPU kind (no GPU, a share,
  ``k`` whole GPUs) together: with ``b = 25 (8000 - G) // 8000``, ``75 + b`` where only that kind
  runs, ``50 + b`` where it runs among others, ``25 + b`` on a node with no GPU pod, ``b`` else;
  CPU-only pods 0.
* ``Random`` (``random_score.go``): a random node among those that fit, and a random GPU with room.

Inside a node a share goes to the fullest GPU with room (the authors' "best" GPU selection), except
under Random (a random GPU) and FGD (its own choice, ``plugins.fgd``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpufleet.cluster.state import IntArray
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.pod import Pod
from gpufleet.scheduling.fragmentation import NodeLeft
from gpufleet.scheduling.framework import MAX_NODE_SCORE, PodContext
from gpufleet.scheduling.host_draws import HostDraws
from gpufleet.scheduling.plugins.per_node_score import PerNodeScore, PodAsk
from gpufleet.scheduling.registry import register

MAX_SPEC_CPU = 128_000  # millicores: the authors' normalisation of cpu (MaxSpecCpu)
MAX_SPEC_GPU = 8_000  # thousandths: eight whole GPUs (MaxSpecGpu)
#: Random's raw 64-bit words fetched at a time: a draw for every node of a cycle is then a view of them
DRAWS_BLOCK = 16_384


@register
class BestFit(PerNodeScore):
    name = "BestFit"

    def node_key(self, ctx: PodContext, i: int, left: NodeLeft) -> tuple[int, int]:
        return left.cpu, left.total

    def node_score(self, ctx: PodContext, i: int, left: NodeLeft, ask: PodAsk) -> int:
        return int(self.fit(left.cpu, left.total, ask))

    def class_scores(self, ctx: PodContext, idx: IntArray, ask: PodAsk) -> IntArray:
        """``node_score`` over node arrays (the same floating-point operations, element by element)."""
        scores: IntArray = self.fit(*self.cpu_and_gpus_left(ctx, idx, ask), ask).astype(np.int64)
        return scores

    @staticmethod
    def fit(cpu: Any, total: Any, ask: PodAsk) -> Any:
        """The score before truncation, of numbers or, element by element, of arrays."""
        raw = 0.5 * (cpu - ask.cpu) / MAX_SPEC_CPU + 0.5 * (total - ask.gpu_total) / MAX_SPEC_GPU
        return (1 - raw) * MAX_NODE_SCORE


@register
class DotProd(PerNodeScore):
    name = "DotProd"

    def node_key(self, ctx: PodContext, i: int, left: NodeLeft) -> tuple[int, int]:
        return left.cpu, left.total

    def node_score(self, ctx: PodContext, i: int, left: NodeLeft, ask: PodAsk) -> int:
        return 0 if left.cpu < ask.cpu else int(self.alignment(left.cpu, left.total, ask))

    def class_scores(self, ctx: PodContext, idx: IntArray, ask: PodAsk) -> IntArray:
        """``node_score`` over node arrays (the same floating-point operations, element by element)."""
        cpu, total = self.cpu_and_gpus_left(ctx, idx, ask)
        scores: IntArray = np.where(cpu < ask.cpu, 0, self.alignment(cpu, total, ask).astype(np.int64))
        return scores

    @staticmethod
    def alignment(cpu: Any, total: Any, ask: PodAsk) -> Any:
        """The score before truncation where the cpu fits, of numbers or, element by element, of arrays."""
        dot = (cpu / MAX_SPEC_CPU) * (ask.cpu / MAX_SPEC_CPU) + (total / MAX_SPEC_GPU) * (
            ask.gpu_total / MAX_SPEC_GPU
        )
        return MAX_NODE_SCORE * (1 - dot / 2)


@register
class GpuPacking(PerNodeScore):
    name = "GpuPacking"

    def node_key(self, ctx: PodContext, i: int, left: NodeLeft) -> tuple[int, ...]:
        return left.gpus

    def node_score(self, ctx: PodContext, i: int, left: NodeLeft, ask: PodAsk) -> int:
        if ask.milli == 0:
            return 0
        gpus = left.gpus  # ascending
        if all(g == MILLI for g in gpus):
            return max(MAX_NODE_SCORE // 3 - len(gpus), len(gpus))
        taken = [g for g in gpus if g >= ask.milli][: ask.gpus]
        fresh = sum(1 for g in taken if g == MILLI)
        if fresh:
            return max(MAX_NODE_SCORE // 2 - fresh, MAX_NODE_SCORE // 3)
        percent_left = sum(g * 100 // MILLI for g in taken)
        return max(MAX_NODE_SCORE - percent_left // 10, MAX_NODE_SCORE // 2)


def gpu_kind(pod: Pod) -> str:
    """The authors' GPU affinity tag: ``no-gpu``, ``share-gpu`` or ``<k>-gpu``."""
    if pod.gpu_share is not None and pod.gpu_share.count == 1:
        return "share-gpu"
    gpus = pod.gpu_share.count if pod.gpu_share is not None else pod.gpus
    return f"{gpus}-gpu" if gpus else "no-gpu"


@register
class GpuClustering(PerNodeScore):
    name = "GpuClustering"

    def node_key(self, ctx: PodContext, i: int, left: NodeLeft) -> tuple[int, frozenset[str]]:
        return left.total, self._kinds(ctx, i)

    @staticmethod
    def _kinds(ctx: PodContext, i: int) -> frozenset[str]:
        """The GPU kinds of the pods on the node (kept per node until its allocation changes)."""
        state = ctx.state
        cache: dict[int, tuple[int, frozenset[str]]] = state.memo.setdefault("gpu-kinds", {})  # type: ignore[assignment]
        version = state.node_version[i]
        hit = cache.get(i)
        if hit is None or hit[0] != version:
            kinds = frozenset(gpu_kind(a.pod) for a in state.pods_on[i].values()) - {"no-gpu"}
            hit = cache[i] = (version, kinds)
        return hit[1]

    def node_score(self, ctx: PodContext, i: int, left: NodeLeft, ask: PodAsk) -> int:
        if ask.milli == 0:
            return 0
        bonus = 25 * (MAX_SPEC_GPU - left.total) // MAX_SPEC_GPU
        kinds = self._kinds(ctx, i)
        kind = gpu_kind(ctx.pod)
        if kind in kinds:
            return (75 if len(kinds) == 1 else 50) + bonus
        return (25 if not kinds else 0) + bonus


@register
class Random(PerNodeScore):
    """Every node a random score each cycle (so the best is a random node that fits), and a random
    GPU with room for a share."""

    name = "Random"
    volatile = True

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> Random:
        return cls(int(args.get("seed", 0)))

    def __init__(self, seed: int = 0):
        self.draws = HostDraws(np.random.default_rng(seed), block=DRAWS_BLOCK)  # (mostly ``words``)

    def score(self, ctx: PodContext, idx: IntArray) -> IntArray:
        """``rng.integers(0, 2**31, size=len(idx))`` of a generator seeded with ``seed``, drawn as the
        top 31 bits of 32-bit words: the same numbers (Lemire's reduction of a word to a power-of-two
        range is its top bits) at a fraction of the cost (``HostDraws.words``)."""
        self.state = ctx.state
        scores: IntArray = np.right_shift(self.draws.words(len(idx)), 1, dtype=np.int64)
        return scores

    def choose_gpu(self, pod: Pod, i: int, room: list[tuple[int, int, int]], whole: int) -> int | None:
        pick = self.draws.integers(len(room) + whole)
        return room[pick][2] if pick < len(room) else None
