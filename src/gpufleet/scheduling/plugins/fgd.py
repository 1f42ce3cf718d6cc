"""FGD, fragmentation gradient descent (the score of Weng et al., "Beware of Fragmentation", USENIX
ATC '23, section 4; the authors' ``pkg/simulator/plugin/fgd_score.go``): place a pod where it
increases GPU fragmentation (``scheduling.fragmentation``) the least.

For a node ``n`` and the node ``n'`` it would be with the pod on it, the score is
``int(100 * sigmoid((F(n) - F(n')) / 1000))`` (F in thousandths of a GPU): 50 for no change, more
when the pod removes fragmentation. A fractional request is tried on every GPU with room and the
node scores its best GPU, which is also where the pod goes (``choose_gpu``, the plugin's Reserve;
among GPUs that score alike, the fullest); whole GPUs come off unshared ones.

The target workload is what the profile's ``pluginConfig`` declares (``args.typicalPods``: shapes
with their percentage of pods, as the authors take the most popular shapes of their trace)::

    pluginConfig:
    - name: FGD
      args:
        typicalPods:
        - {gpus: 1, percentage: 40}                  # whole GPUs
        - {gpuMilli: 500, cpu: "4", percentage: 60}  # half a GPU, 4 cpu
        - {gpus: 2, gpuProducts: [Tesla-T4], percentage: 5}  # only on T4 nodes
        - {gpus: 0, cpu: "8", percentage: 5}         # CPU-only: all free GPU is fragment to it

Without it, the GPU pods the cluster runs now plus the pod being placed, by shape popularity. That
changes with every binding, so the shape cache re-scores every node each cycle for such profiles.
Enable it in a profile (``multiPoint: {enabled: [{name: FGD, weight: 10}]}``) and, to rank nodes by
it alone as the paper does, disable the other score plugins.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from gpufleet.cluster.state import ClusterState, IntArray
from gpufleet.model.gpu_share import MILLI, GpuShare
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.model.quantity import QuantityError, parse_quantity
from gpufleet.model.resources import CPU, GPU, MEMORY, to_units
from gpufleet.scheduling.fragmentation import NodeFragmentation, NodeLeft, tasks_of
from gpufleet.scheduling.framework import ArgsError, PodContext
from gpufleet.scheduling.plugins.per_node_score import PerNodeScore, PodAsk
from gpufleet.scheduling.registry import register

PRODUCT = "nvidia.com/gpu.product"
#: ``_kept_gpu``'s answer where no GPU is kept (a GPU never has negative thousandths left)
NOT_KEPT = -1
_TYPICAL_FIELDS = frozenset({"gpus", "gpuMilli", CPU, MEMORY, "percentage", "gpuProducts"})


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
        if gpus < 0 or not 0 < milli <= MILLI or (milli < MILLI and gpus != 1) or percentage <= 0:
            raise ValueError(
                f"{where}: gpus >= 0, 0 < gpuMilli <= 1000 (below 1000 only with gpus 1), percentage > 0"
            )
        products = entry.get("gpuProducts") or ()
        if not isinstance(products, list | tuple) or not all(isinstance(p, str) for p in products):
            raise ValueError(f"{where}: gpuProducts: a list of nvidia.com/gpu.product values")
        terms = (SelectorTerm((Requirement(PRODUCT, "In", tuple(products)),)),) if products else None
        share = GpuShare(1, compute_milli=milli) if milli < MILLI else None
        pod = Pod(
            f"typical-{n}",
            requests={**requests, **({GPU: gpus} if gpus and share is None else {})},
            gpu_share=share,
            required_terms=terms,
        )
        pods.extend([pod] * max(1, round(percentage * 100)))
    return pods


def sigmoid_score(before: float, after: float) -> int:
    """``int(100 * sigmoid((before - after) / 1000))`` (``plugin_utils.go::sigmoid``; truncated)."""
    x = (before - after) / MILLI
    return int(100 / (1 + math.exp(-x))) if x > -700 else 0


@register
class FragmentationGradient(PerNodeScore):
    name = "FGD"
    #: the fragmentation measure ``F`` (``plugins.fgd_supply`` swaps in its own)
    fragmentation: type[NodeFragmentation] = NodeFragmentation

    def __init__(self, typical: list[Pod] | None = None):
        self.typical = typical or []  # declared: CPU-only shapes count too (their GPUs are all fragment)
        self.volatile = (
            not self.typical
        )  # without declared typical pods, the workload moves with every binding
        self._measure: NodeFragmentation | None = None
        self._memo: dict[tuple[object, ...], tuple[int, int | None]] = {}
        self._memo_for: NodeFragmentation | None = None

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> FragmentationGradient:
        try:
            return cls(typical_pods(args))
        except ValueError as exc:
            raise ArgsError(f"args.{exc}") from None

    def measure(self, state: ClusterState, pod: Pod) -> NodeFragmentation:
        if self.typical:
            if self._measure is None or self._measure.state is not state:
                measure = self.fragmentation(state, tasks_of(self.typical, include_cpu_pods=True))
                self._measure = measure.shared()
            return self._measure
        return self.fragmentation(state, tasks_of([a.pod for a in state.assignments.values()] + [pod]))

    def node_key(self, ctx: PodContext, i: int, left: NodeLeft) -> Hashable:
        """Which typical pods the node's labels admit, its GPUs' memory, its GPUs' thousandths left, and
        whether it has room for one pod and for two (before and after the pod); the cpu and memory
        left count by the thresholds ``class_scores`` adds."""
        return self.measure(ctx.state, ctx.pod).node_facts(i), left.gpus, left.pods >= 1, left.pods >= 2

    def class_scores(self, ctx: PodContext, idx: IntArray, ask: PodAsk) -> IntArray:
        """Nodes keyed by ``node_key``'s class and what the measure reads of their cpu and memory left,
        before and after the pod; each key's score kept for the pods asking for the same GPUs (one dict
        look-up per node, a score computed only for a key not seen before)."""
        measure, _, _, code_column = self.class_codes(ctx, idx, ask)
        # a key not kept: the score worked out, not looked up in ``_best``'s memo (its key holds what the
        # code does, so it would seldom be there)
        state, codes = ctx.state, code_column.tolist()
        return self.kept_scores(
            idx,
            self.kept_for(ask),
            codes,
            lambda n, i: self._class_score(measure, i, NodeLeft.of(state, i), ask, codes[n]),
        )

    def class_codes(
        self, ctx: PodContext, idx: IntArray, ask: PodAsk
    ) -> tuple[NodeFragmentation, IntArray, IntArray, IntArray]:
        """The measure, and per node of ``idx`` its cpu left, its GPU thousandths left and one number for
        its ``node_key`` class and what the measure reads of its cpu and memory before and after the pod
        (``NodeFragmentation.codes``: equal numbers, equal ``_key`` for this ask)."""
        state = ctx.state
        measure = self.measure(state, ctx.pod)
        free = state.free_of(idx)
        col = state.res_index
        cpu = free[:, col[CPU]] if CPU in col else np.zeros(len(idx), dtype=np.int64)
        memory = free[:, col[MEMORY]] if MEMORY in col else np.zeros(len(idx), dtype=np.int64)
        ids = self.classes(ctx, idx, ask)
        assert self._classes is not None  # made by ``classes``
        totals = self._classes.totals[idx]
        return measure, cpu, totals, measure.codes(ids, cpu, memory, ask.cpu, ask.memory)

    def score_alone(self, ctx: PodContext, i: int) -> int:
        """The score ``class_scores`` gives node ``i``, without arrays: its class code in Python integers,
        the score kept for it (shared with ``class_scores``) or worked out and kept."""
        pod = ctx.pod
        if self.volatile or (pod.gpu_share is not None and pod.gpu_share.memory_bytes is not None):
            return super().score_alone(ctx, i)  # (the measure, or the ask, moves: nothing kept by class)
        self.state = state = ctx.state
        ask = self._ask(ctx)
        measure = self.measure(state, pod)
        left = NodeLeft.of(state, i)
        class_id = self.node_classes().id_of(self, ctx, i, left)
        code = measure.code(class_id, left.cpu, left.memory, ask.cpu, ask.memory)
        kept = self.kept_for(ask)
        score = kept.get(code)
        if score is None:
            score = kept[code] = self._class_score(measure, i, left, ask, code)
        return score

    def _class_score(self, measure: NodeFragmentation, i: int, left: NodeLeft, ask: PodAsk, code: int) -> int:
        """The score of node ``i``, whose class ``code`` has none kept yet; for a share, the GPU it takes
        there kept by the code too (``choose_gpu`` reads it)."""
        score, gpu = self._compute_best(measure, i, left, ask, (), ())
        if ask.shared:
            self.gpus_for(ask)[code] = gpu
        return score

    def kept_for(self, ask: PodAsk) -> dict[Hashable, int]:
        """The scores kept for pods asking for these GPUs, by ``class_scores``' keys (dropped with the
        classes)."""
        assert self._classes is not None  # made by ``classes``
        return self._classes.memo.setdefault((ask.gpus, ask.milli, ask.shared), {})

    def gpus_for(self, ask: PodAsk) -> dict[Hashable, int | None]:
        """For a share, the GPU (its thousandths left) the best score takes, by class code as ``kept_for``."""
        assert self._classes is not None  # made by ``classes``
        return self._classes.memo.setdefault(("gpu", ask.gpus, ask.milli, ask.shared), {})

    def _kept_gpu(self, state: ClusterState, pod: Pod, i: int, left: NodeLeft, ask: PodAsk) -> int | None:
        """The GPU ``_best`` would give the share on node ``i``, where its class code has one kept (the node
        unchanged since its class was read); ``NOT_KEPT`` where none is."""
        classes = self._classes
        if (
            self.volatile
            or classes is None
            or (pod.gpu_share is not None and pod.gpu_share.memory_bytes is not None)
        ):
            return NOT_KEPT
        class_id = classes.kept_id(state, i)
        if class_id is None:
            return NOT_KEPT
        code = self.measure(state, pod).code(class_id, left.cpu, left.memory, ask.cpu, ask.memory)
        return self.gpus_for(ask).get(code, NOT_KEPT)

    def node_score(self, ctx: PodContext, i: int, left: NodeLeft, ask: PodAsk) -> int:
        return self._best(ctx.state, ctx.pod, i, left, ask)[0]

    def _best(
        self, state: ClusterState, pod: Pod, i: int, left: NodeLeft, ask: PodAsk
    ) -> tuple[int, int | None]:
        """(score, the GPU's milli left before placing a fractional pod there; None otherwise), kept per
        node state and GPU ask: nodes alike (same labels, same GPUs left, the same cpu, memory and pod room
        as far as the measure reads them, before and after the pod) score alike for pods asking for the
        same GPUs, whatever cpu and memory they ask for."""
        measure = self.measure(state, pod)
        if measure is not self._memo_for:
            self._memo, self._memo_for = {}, measure
        base = self._key(measure, i, left, ask)
        extra = self._extra(measure, left, ask)
        key = (*base, *extra) if extra else base
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._compute_best(measure, i, left, ask, base, extra)
        return hit

    @staticmethod
    def _key(measure: NodeFragmentation, i: int, left: NodeLeft, ask: PodAsk) -> tuple[Hashable, ...]:
        """What FGD's measure reads of node ``i`` before and after the pod, and the pod's GPU ask:
        ``ask_keys``' facts number, the GPUs, ``cpu_key`` before and after, ``memory_key`` before and
        after, ..."""
        facts, cpu_before, cpu_after, memory_before, memory_after = measure.ask_keys(
            i, left, ask.cpu, ask.memory
        )
        return (
            facts,
            left.gpus,
            cpu_before,
            cpu_after,
            memory_before,
            memory_after,
            left.pods >= 1,
            left.pods >= 2,
            ask.gpus,
            ask.milli,
            ask.shared,
        )

    def _extra(self, measure: NodeFragmentation, left: NodeLeft, ask: PodAsk) -> tuple[float, ...]:
        """What else a variant's measure reads (none for FGD)."""
        return ()

    def _compute_best(
        self,
        measure: NodeFragmentation,
        i: int,
        left: NodeLeft,
        ask: PodAsk,
        key: tuple[Hashable, ...],
        extra: tuple[float, ...],
    ) -> tuple[int, int | None]:
        """``_best`` for a new ``key`` (``_key``) and ``extra`` (``_extra``)."""
        return self._choose(*self._fragmentation(measure, i, left, ask))

    @staticmethod
    def _fragmentation(
        measure: NodeFragmentation, i: int, left: NodeLeft, ask: PodAsk
    ) -> tuple[float, list[tuple[int | None, float]]]:
        """FGD's measure (``NodeFragmentation.of``, a variant's term left out) of node ``i`` before the pod
        and after it, per GPU a share may take (fullest first: it wins ties; None for whole GPUs)."""
        taken: list[int | None] = [None]
        if ask.shared:
            taken = [g for g in sorted(set(left.gpus)) if g >= ask.milli]
        before, after = NodeFragmentation.before_after(
            measure, i, left, ask.cpu, ask.memory, [ask.gpus_after(left, g) for g in taken]
        )
        return before, list(zip(taken, after, strict=True))

    @staticmethod
    def _choose(before: float, after: list[tuple[int | None, float]]) -> tuple[int, int | None]:
        """The best score and its GPU (the first of the best)."""
        best: tuple[int, int | None] = (-1, None)
        for g, frag in after:
            score = sigmoid_score(before, frag)
            if score > best[0]:
                best = (score, g)
        return best

    def choose_gpu(self, pod: Pod, i: int, room: list[tuple[int, int, int]], whole: int) -> int | None:
        """Reserve: the GPU its score chose (an open GPU with that much left, else an unshared one)."""
        state = self.state
        if state is None:
            return room[0][2] if room else None
        left = NodeLeft.of(state, i)
        ask = PodAsk.of(state, pod, i)
        g = self._kept_gpu(state, pod, i, left, ask)
        if g == NOT_KEPT:
            _, g = self._best(state, pod, i, left, ask)
        shares = state.gpu_shares()
        for _, _, slot in room:
            if g == min(int(shares.free_compute[i, slot]), int(shares.free_memory[i, slot])):
                return slot
        return None if whole else (room[0][2] if room else None)
