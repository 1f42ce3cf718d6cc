"""Score plugins that judge one node at a time by what it has left (``fragmentation.NodeLeft``):
the FGD paper's policies (FGD, BestFit, DotProd, GpuPacking, GpuClustering, Random).

They look at each GPU's free thousandths, which the node's resource row does not hold, so they are
evaluated over node arrays (``array_only``), one node after another in Python: the shape cache
asks only for the nodes a binding changed. Over many nodes (a shape's first look at the cluster, a
rare shape catching up) a policy judges one node per class of nodes it cannot tell apart
(``NodeClasses``, by what the policy reads of a node: its ``node_key``), and keeps that score per class
and ask until the class ids are dropped: a node then costs one dict look-up. BestFit and DotProd,
which read only a node's cpu and GPU thousandths left, score many nodes over arrays instead
(``cpu_and_gpus_left``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Hashable, Sequence
from itertools import compress, count, repeat
from operator import is_
from typing import Any, NamedTuple

import numpy as np

from gpufleet.cluster.state import ClusterState, IntArray, non_zero_requests
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, MEMORY
from gpufleet.scheduling.fragmentation import NodeLeft, gpu_ask
from gpufleet.scheduling.framework import DynamicScore, PodContext

#: Up to this many nodes are scored one by one, without grouping them into classes.
FEW_NODES = 8


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

    def total_after(self, left: NodeLeft) -> int:
        """``after(left).total`` (for a share, on any GPU with room)."""
        taken = 1 if self.shared else min(self.gpus, len(left.gpus) - bisect_left(left.gpus, self.milli))
        return left.total - self.milli * taken

    def gpus_after(self, left: NodeLeft, gpu: int | None = None) -> tuple[int, ...]:
        """Each GPU's thousandths left, ascending, once the pod is on the node: a share on a GPU with ``gpu``
        left, else (``NodeResource.Sub``) the first GPUs in ascending order that have room."""
        gpus = list(left.gpus)
        if self.shared and gpu is not None:
            gpus[gpus.index(gpu)] = gpu - self.milli
        else:
            need = self.gpus
            for j, g in enumerate(gpus):
                if need and g >= self.milli:
                    gpus[j], need = g - self.milli, need - 1
        gpus.sort()
        return tuple(gpus)


class NodeClasses:
    """Per node, the id of what a ``PerNodeScore`` reads there for any pod (its ``node_key``): nodes
    with one id score alike for a pod. Kept per node until a change of its allocation (the nodes
    ``ClusterState.changes`` names since, ``dirty``); reset when the nodes change (``static_version``)."""

    def __init__(self) -> None:
        self.state: ClusterState | None = None
        self.static_version = -1
        self.ids: IntArray = np.zeros(0, dtype=np.int64)
        self.totals: IntArray = np.zeros(0, dtype=np.int64)  # each node's GPU thousandths left
        self.dirty: set[int] = set()  # the nodes whose id may be out of date
        self.seen = 0  # how far ``ClusterState.changes`` went when ``dirty`` was last brought up to date
        self.interned: dict[Hashable, int] = {}
        #: what a plugin keeps by these ids (dropped with them), per what the pod asks: scores, or what
        #: it works them out from
        self.memo: dict[Hashable, dict[Hashable, Any]] = {}

    def _current(self, state: ClusterState) -> None:
        """Dropped when the cluster or its nodes are not those the ids were made for; else the nodes
        changed since the last look marked out of date."""
        if state is not self.state or state.static_version != self.static_version:
            self.state, self.static_version, self.interned, self.memo = state, state.static_version, {}, {}
            self.ids, self.totals = np.zeros(state.size, dtype=np.int64), np.zeros(state.size, dtype=np.int64)
            self.dirty, self.seen = set(range(state.size)), state.change_pos
        elif self.seen != state.change_pos:
            changed = state.logged_since(self.seen)  # (None: the log lost what it held then)
            self.dirty.update(state.changes_since(self.seen).tolist() if changed is None else changed)
            self.seen = state.change_pos

    def _intern(self, plugin: PerNodeScore, ctx: PodContext, i: int, left: NodeLeft) -> None:
        self.ids[i] = self.interned.setdefault(plugin.node_key(ctx, i, left), len(self.interned))
        self.totals[i] = left.total

    def id_of(self, plugin: PerNodeScore, ctx: PodContext, i: int, left: NodeLeft) -> int:
        """The id of node ``i`` (``left``: what it has left now), without arrays."""
        self._current(ctx.state)
        if i in self.dirty:
            self._intern(plugin, ctx, i, left)
            self.dirty.discard(i)
        return int(self.ids[i])

    def kept_id(self, state: ClusterState, i: int) -> int | None:
        """The id of node ``i`` where it is up to date (None where the node changed since it was read)."""
        self._current(state)
        return None if i in self.dirty else int(self.ids[i])

    def of(self, plugin: PerNodeScore, ctx: PodContext, idx: IntArray) -> IntArray:
        """The ids of the nodes ``idx``."""
        state = ctx.state
        self._current(state)
        if self.dirty:
            stale = self.dirty.intersection(idx.tolist())
            for i in stale:
                self._intern(plugin, ctx, i, NodeLeft.of(state, i))
            self.dirty -= stale
        return self.ids[idx]  # (an array indexes many times faster than a list of its numbers)


class PerNodeScore(DynamicScore):
    array_only = True
    #: the FGD paper's policies score as the authors' simulator does, not within 0..100 (FGD's -1 where no
    #: GPU of the node takes the pod, BestFit's below 0 on a node larger than its normalisation, Random's
    #: 31-bit draws): ``check_score_range`` is not applied to them
    unbounded = True
    state: ClusterState | None = None  # the cluster last scored (for Reserve's choice of GPU)
    _classes: NodeClasses | None = None

    def score(self, ctx: PodContext, idx: IntArray) -> IntArray:
        """``node_score`` of every node in ``idx``; over many nodes, once per class of nodes alike
        (``classes``) and ask, on the first node of the class seen."""
        self.state = state = ctx.state
        pod = ctx.pod
        nodes = idx.tolist()
        if pod.gpu_share is not None and pod.gpu_share.memory_bytes is not None:  # an ask per node
            return np.array(
                [self.node_score(ctx, i, NodeLeft.of(state, i), PodAsk.of(state, pod, i)) for i in nodes],
                dtype=np.int64,
            )
        if len(nodes) <= FEW_NODES or self.volatile:
            return np.array([self.score_alone(ctx, i) for i in nodes], dtype=np.int64)
        return self.class_scores(ctx, idx, self._ask(ctx))

    def score_alone(self, ctx: PodContext, i: int) -> int:
        """``score`` of node ``i`` alone, without arrays (the shape cache's re-check of the node a
        binding changed)."""
        self.state = state = ctx.state
        pod = ctx.pod
        if pod.gpu_share is not None and pod.gpu_share.memory_bytes is not None:  # an ask per node
            return self.node_score(ctx, i, NodeLeft.of(state, i), PodAsk.of(state, pod, i))
        return self.node_score(ctx, i, NodeLeft.of(state, i), self._ask(ctx))

    @staticmethod
    def _ask(ctx: PodContext) -> PodAsk:
        """The pod's ask where it is the same on every node, kept for the pod's shape."""
        state = ctx.state
        kept = ctx.memo.get(PodAsk)
        if isinstance(kept, tuple) and kept[0] == state.static_version:
            ask: PodAsk = kept[1]
            return ask
        ask = PodAsk.of(state, ctx.pod, 0)
        ctx.memo[PodAsk] = (state.static_version, ask)
        return ask

    def class_scores(self, ctx: PodContext, idx: IntArray, ask: PodAsk) -> IntArray:
        """``node_score`` of each class among ``idx`` (kept per class and ask), for all of the class."""
        ids = self.classes(ctx, idx, ask)
        assert self._classes is not None  # made by ``classes``
        memo = self._classes.memo.setdefault(ask, {})
        state = ctx.state
        return self.kept_scores(
            idx, memo, ids.tolist(), lambda n, i: self.node_score(ctx, i, NodeLeft.of(state, i), ask)
        )

    def kept_scores(
        self,
        idx: IntArray,
        memo: dict[Hashable, int],
        keys: Sequence[Hashable],
        judge: Callable[[int, int], int],
    ) -> IntArray:
        """Per node of ``idx``, the score ``memo`` keeps for its key (one dict look-up per node); for a key
        not kept, ``judge`` of its first node (its position in ``idx`` and its index), kept."""
        scores = list(map(memo.get, keys))
        missing = list(compress(count(), map(is_, scores, repeat(None))))  # (no Python loop over all)
        if missing:
            nodes = idx.tolist()
            for n in missing:
                key = keys[n]
                score = memo.get(key)
                if score is None:
                    score = memo[key] = judge(n, nodes[n])
                scores[n] = score
        by_node: IntArray = np.array(scores, dtype=np.int64)
        return by_node

    def cpu_and_gpus_left(self, ctx: PodContext, idx: IntArray, ask: PodAsk) -> tuple[IntArray, IntArray]:
        """Per node of ``idx``, ``NodeLeft``'s ``cpu`` and ``total`` (GPU thousandths left)."""
        self.classes(ctx, idx, ask)
        assert self._classes is not None  # made by ``classes``
        state = ctx.state
        column = state.res_index.get(CPU)
        cpu = state.column_free_of(column, idx) if column is not None else np.zeros(len(idx), dtype=np.int64)
        return cpu, self._classes.totals[idx]

    def classes(self, ctx: PodContext, idx: IntArray, ask: PodAsk) -> IntArray:
        """Per node of ``idx``, a number equal for nodes the pod's score cannot tell apart."""
        return self.node_classes().of(self, ctx, idx)

    def node_classes(self) -> NodeClasses:
        """The classes of nodes alike (made on first use)."""
        if self._classes is None:
            self._classes = NodeClasses()
        return self._classes

    def node_key(self, ctx: PodContext, i: int, left: NodeLeft) -> Hashable:
        """What node ``i``'s score reads for any pod: all that the node has left (a plugin that reads
        less says so, more nodes then share a class)."""
        return left

    def node_score(self, ctx: PodContext, i: int, left: NodeLeft, ask: PodAsk) -> int:
        """The score of node ``i``: it reads of the node only its ``node_key`` and of the pod only its
        ``ask`` (scores are kept by class and ask)."""
        raise NotImplementedError
