"""FGDSupply: FGD (``plugins.fgd``; Weng et al., "Beware of Fragmentation", USENIX ATC '23, section 4,
the authors' ``pkg/simulator/plugin/fgd_score.go``) with a fragmentation measure that weighs two
supplies against the typical workload's demand. gpufleet's own policy, not an upstream one.

FGD scores a node by ``int(100 sigmoid((F(n) - F(n')) / 1000))``, ``F`` the expected free GPU capacity
the next typical pod cannot use (``scheduling.fragmentation``, the authors' ``NodeGpuShareFragAmount``).
Two things it does not see:

* **cpu per GPU.** A typical shape either fits a node or not; FGD does not ask whether the node's
  cpu can feed its free GPUs. A CPU-only pod, or a pod asking much cpu for one GPU, can drain a node
  whose GPUs stay free and then strand them. ``FGDSupply`` adds the GPU capacity beyond what the
  node's free cpu feeds at the workload's rate, ``rho`` = the GPU shapes' cpu over their GPU
  thousandths (both summed with the shapes' popularity as weights):

      F'(n) = F(n) + w_gpu * max(0, free GPU thousandths - free cpu / rho)

  with ``w_gpu`` the popularity of the GPU shapes (so the term is an expectation over the next pod,
  like ``F``).
* **scarce GPU models.** A shape that only some GPU models admit (``gpuProducts``) finds its GPUs
  only there; whatever else lands on them is lost to it. ``FGDSupply`` scales each shape's popularity
  by ``(G / G_t) ** 2`` (``G`` the cluster's GPUs, ``G_t`` the GPUs on nodes whose labels admit the
  shape) and renormalises: the fragmentation a scarce model's shapes see weighs more, so a pod that
  could go anywhere keeps off the scarce models. (The exponent was chosen on the replay, seeds 42 and
  43: on ``gpuspec33`` 1 leaves about 7.2 % of GPUs unallocated, 2 about 5.2 %, FGD 12.1 %.)

Everything else is FGD's: the typical pods (``args.typicalPods``, configured as for FGD), the sigmoid
and its integer truncation, each share tried on every GPU with room, the node order that breaks
ties. Only what an online scheduler knows is used: the cluster, the pod and the declared typical
workload. On the FGD paper's replay (``replay.fgd_protocol``) it leaves fewer GPUs unallocated than
FGD (README, "Traces and the FGD paper's replay; priority, quotas and backfill").
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from gpufleet.cluster.state import ClusterState, IntArray
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU
from gpufleet.scheduling.fragmentation import NodeFragmentation, NodeLeft, Task
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.plugins.fgd import FragmentationGradient, sigmoid_score
from gpufleet.scheduling.plugins.per_node_score import PerNodeScore, PodAsk
from gpufleet.scheduling.registry import register

SCARCITY_EXPONENT = 2
KEY_BYTES = np.dtype((np.void, 24))  # a class code and two float64 columns of one node
#: FGD's measure of a node before the pod, after it (per GPU a share may take) and the GPU thousandths
#: left after it
Parts = tuple[float, list[tuple[int | None, float]], int]


@dataclass
class SupplyFragmentation(NodeFragmentation):
    """``F'`` in thousandths for the nodes of one cluster (its node set, ``built_for``)."""

    built_for: int = -1
    gpu_weight: float = 0.0  # w_gpu: the GPU shapes' share of the workload
    cpu_per_milli: float = 0.0  # rho; 0: the GPU shapes ask no cpu, so no GPU is ever short of it

    def __post_init__(self) -> None:
        super().__post_init__()  # (the tasks' constraints and thresholds: reweighting keeps the same pods)
        self.built_for = self.state.static_version
        self.tasks = self._by_scarcity()
        gpu_tasks = [(t.weight, t.gpus * t.milli(None), t.pod.requests.get(CPU, 0)) for t in self.tasks]
        gpu_tasks = [g for g in gpu_tasks if g[1] > 0]
        self.gpu_weight = sum(w for w, _, _ in gpu_tasks)
        milli = sum(w * m for w, m, _ in gpu_tasks)
        self.cpu_per_milli = sum(w * c for w, _, c in gpu_tasks) / milli if milli else 0.0

    def _by_scarcity(self) -> list[Task]:
        """Each shape's popularity times ``(G / G_t) ** SCARCITY_EXPONENT``, renormalised (a shape no node
        admits keeps its own)."""
        if not any(t.pod.node_selector or t.pod.required_terms for t in self.tasks):
            return self.tasks  # every node admits every shape: all scale alike
        column = self.state.resource_column(GPU)
        reachable = [0] * len(self.tasks)
        total = 0
        for i in self.state.active_indices().tolist():
            gpus = int(self.state.alloc[i, column])
            total += gpus
            for t, admitted in enumerate(self.node_facts(i)[0]):
                reachable[t] += gpus if admitted else 0
        weights = [
            task.weight * (total / gpus if gpus else 1.0) ** SCARCITY_EXPONENT
            for task, gpus in zip(self.tasks, reachable, strict=True)
        ]
        norm = sum(weights)
        return (
            [Task(t.pod, w / norm) for t, w in zip(self.tasks, weights, strict=True)] if norm else self.tasks
        )

    def fed_column(self, cpu: IntArray, totals: IntArray) -> np.ndarray:
        """What the supply term reads of the free ``cpu`` of nodes with ``totals`` GPU thousandths left
        (``cpu_per_milli`` > 0): the GPU thousandths the cpu feeds (``cpu / cpu_per_milli``, as
        ``shortfall`` computes it) where that is less than ``totals``, else infinity (no shortfall)."""
        fed = cpu / self.cpu_per_milli
        return np.where(fed >= totals, np.inf, fed)

    def of(self, i: int, left: NodeLeft) -> float:
        frag = super().of(i, left)
        if self.cpu_per_milli:
            frag += self.gpu_weight * self.shortfall(left.total, left.cpu)
        return frag

    def shortfall(self, total: int, cpu: int) -> float:
        """The GPU thousandths beyond what ``cpu`` feeds at the workload's rate (``cpu_per_milli`` > 0)."""
        return max(0.0, total - cpu / self.cpu_per_milli)


@register
class SupplyAwareFragmentationGradient(FragmentationGradient):
    name = "FGDSupply"
    fragmentation = SupplyFragmentation

    def __init__(self, typical: list[Pod] | None = None):
        super().__init__(typical)
        #: FGD's measure before and after the pod (``_fragmentation``, without the supply term) by its key
        self._parts: dict[tuple[Hashable, ...], tuple[float, list[tuple[int | None, float]]]] = {}
        self._parts_for: NodeFragmentation | None = None

    def _extra(self, measure: NodeFragmentation, left: NodeLeft, ask: PodAsk) -> tuple[float, ...]:
        """The supply term's GPU thousandths short of cpu (``SupplyFragmentation.shortfall``) before and
        after the pod."""
        if not isinstance(measure, SupplyFragmentation) or not measure.cpu_per_milli:
            return ()
        after = measure.shortfall(ask.total_after(left), left.cpu - ask.cpu)
        return measure.shortfall(left.total, left.cpu), after

    def class_scores(self, ctx: PodContext, idx: IntArray, ask: PodAsk) -> IntArray:
        """FGD's, keyed by FGD's class code and the supply term's columns. A node state not kept yet is
        scored from FGD's measure before and after the pod kept by the class code (nodes and pods with
        other cpu share it), plus the supply term of the node's own cpu, added as ``_compute_best`` adds it: a
        ``_key`` built only for a class code not kept."""
        measure = self.measure(ctx.state, ctx.pod)
        if not isinstance(measure, SupplyFragmentation) or not measure.cpu_per_milli:
            return super().class_scores(ctx, idx, ask)
        _, cpu, totals, code_column = self.class_codes(ctx, idx, ask)
        fed_before = measure.fed_column(cpu, totals)
        fed_after = measure.fed_column(cpu - ask.cpu, totals)
        # a node's key: its code and the two columns' floats, as their 24 bytes (made and hashed in C; equal
        # bytes, equal values, so a score kept is the node's)
        rows = np.column_stack((code_column, fed_before.view(np.int64), fed_after.view(np.int64)))
        keys = rows.view(KEY_BYTES).ravel().tolist()
        assert self._classes is not None  # made by ``class_codes``
        # the parts by class code for pods asking for these GPUs (the code holds what the measure reads of
        # their cpu and memory), kept with the classes' scores: dropped with the ids, as is the measure
        coded: dict[Hashable, Parts] = self._classes.memo.setdefault(
            ("parts", ask.gpus, ask.milli, ask.shared), {}
        )
        state, weight, rho, ask_cpu = ctx.state, measure.gpu_weight, measure.cpu_per_milli, ask.cpu
        cpus, gpus = cpu.tolist(), totals.tolist()

        def coded_score(n: int, i: int) -> int:
            """``_compute_best``'s score from the parts, with ``SupplyFragmentation.shortfall`` and
            ``_choose`` (its best score; the GPU is not asked for) inline: the same float operations, and a
            call of each per node was 6 % of a replay's instructions."""
            code = code_column.item(n)
            parts = coded.get(code)
            if parts is None:
                parts = coded[code] = self._parts_of(measure, i, NodeLeft.of(state, i), ask)
            before, after, total_after = parts
            cpu_n = cpus[n]
            x = gpus[n] - cpu_n / rho
            before += weight * (x if x > 0.0 else 0.0)
            x = total_after - (cpu_n - ask_cpu) / rho
            short = weight * (x if x > 0.0 else 0.0)
            best = -1
            for _, frag in after:
                score = sigmoid_score(before, frag + short)
                if score > best:
                    best = score
            return best

        return self.kept_scores(idx, self.kept_for(ask), keys, coded_score)

    def score_alone(self, ctx: PodContext, i: int) -> int:
        """``PerNodeScore``'s where the supply term counts (its keys hold the node's cpu), else FGD's."""
        measure = self.measure(ctx.state, ctx.pod)
        if isinstance(measure, SupplyFragmentation) and measure.cpu_per_milli:
            return PerNodeScore.score_alone(self, ctx, i)
        return super().score_alone(ctx, i)

    def _parts_of(self, measure: SupplyFragmentation, i: int, left: NodeLeft, ask: PodAsk) -> Parts:
        """FGD's measure of node ``i`` before and after the pod, kept by FGD's ``_key`` (shared with
        ``_compute_best``), and the GPU thousandths it has left after the pod."""
        if measure is not self._parts_for:
            self._parts, self._parts_for = {}, measure
        key = self._key(measure, i, left, ask)
        parts = self._parts.get(key)
        if parts is None:
            parts = self._parts[key] = self._fragmentation(measure, i, left, ask)
        return (*parts, ask.total_after(left))

    def _compute_best(
        self,
        measure: NodeFragmentation,
        i: int,
        left: NodeLeft,
        ask: PodAsk,
        key: tuple[Hashable, ...],
        extra: tuple[float, ...],
    ) -> tuple[int, int | None]:
        """FGD's measure before and after (kept by FGD's ``key``: nodes with other cpu share it) plus
        the supply term, added as ``SupplyFragmentation.of`` adds it."""
        if not extra:
            return super()._compute_best(measure, i, left, ask, key, extra)
        assert isinstance(measure, SupplyFragmentation)  # ``extra`` is its
        if measure is not self._parts_for:
            self._parts, self._parts_for = {}, measure
        parts = self._parts.get(key)
        if parts is None:
            parts = self._parts[key] = self._fragmentation(measure, i, left, ask)
        before, after = parts
        before += measure.gpu_weight * extra[0]
        short = measure.gpu_weight * extra[1]
        return self._choose(before, [(g, frag + short) for g, frag in after])

    def measure(self, state: ClusterState, pod: Pod) -> NodeFragmentation:
        current = self._measure
        if isinstance(current, SupplyFragmentation) and current.state is state:
            if current.built_for == state.static_version:
                return current
            self._measure = None  # nodes came or went: the GPU models' scarcity with them
        return super().measure(state, pod)
