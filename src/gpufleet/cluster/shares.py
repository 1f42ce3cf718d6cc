"""Shared GPUs in the scheduler's cache: which GPUs of each node hold fractional pods, and how much
compute and memory each has left.

Fractional requests (``model.gpu_share``) are placed the way KAI Scheduler and HAMi place them:
on one GPU per share, a GPU shared only by fractional pods. A GPU that holds any share is no
longer free for whole-GPU pods, so opening one adds 1 to the node's requested ``nvidia.com/gpu``
and closing it (its last share gone) gives it back: NodeResourcesFit keeps counting whole GPUs
unchanged. Per node the open GPUs are "slots" in two NumPy matrices (free compute, free memory,
in thousandths of one GPU; -1 where no GPU is open), so a share's fit is decided for every node
at once. Which physical GPU a slot is, is the device level's business (``gpus.devices``).

Within a node a share goes to the open GPU it fills best (least compute, then memory, left over:
KAI's and HAMi's default binpack), and to a fresh GPU only when no open one has room. Shares go on
nodes whose GPUs are whole devices: MIG instances and time-slicing replicas are not split further.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpufleet.cluster.state import BoolArray, ClusterState, IntArray
from gpufleet.model.gpu_share import MILLI, GpuShare
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU

FloatArray = npt.NDArray[np.float64]

#: FitError reasons of a share that does not fit.
NOT_SHAREABLE = "node(s) didn't have GPUs that fractional requests can share"
MEMORY_UNKNOWN = "node(s) didn't report their GPU memory (nvidia.com/gpu.memory)"
MEMORY_PER_DEVICE = "node(s) didn't have enough GPU memory per device"
INSUFFICIENT = f"Insufficient {GPU}"


def gpu_memory_bytes(node: Node) -> float | None:
    """One GPU's memory from GPU Feature Discovery's ``nvidia.com/gpu.memory`` (MiB)."""
    mib = node.labels.get("nvidia.com/gpu.memory", "")
    return float(mib) * 2**20 if mib.isdigit() else None


def shareable(node: Node) -> bool:
    """Whether the node's GPUs (once registered) are whole devices a fraction can go on: not MIG
    instances, not time-slicing or MPS replicas (GPU Feature Discovery's labels say)."""
    labels = node.labels
    return int(labels.get("nvidia.com/gpu.replicas", "1") or 1) <= 1 and "-MIG-" not in labels.get(
        "nvidia.com/gpu.product", ""
    )


#: A plugin's choice of GPU for a one-GPU share on node ``i``: one of ``room`` (open GPUs with room, as
#: (compute left after, memory left after, slot), fullest first) by slot, or None for one of the
#: ``whole`` unshared GPUs.
GpuChoice = Callable[[Pod, int, list[tuple[int, int, int]], int], int | None]


@dataclass(slots=True)
class SharePlacement:
    """One share of a pod on one GPU slot. (Not frozen, though nothing changes one: a frozen dataclass's
    ``__init__`` sets each field through ``object.__setattr__``, a third of a microsecond per share.)"""

    node: int
    slot: int
    compute: int
    memory: int


@dataclass
class GpuShares:
    """The GPUs fractional requests share: per node and GPU slot, the compute and memory left and how many
    pods hold it (-1 left: no share on it), and each pod's shares."""

    state: ClusterState
    free_compute: IntArray = field(default_factory=lambda: np.full((0, 1), -1, dtype=np.int64))
    free_memory: IntArray = field(default_factory=lambda: np.full((0, 1), -1, dtype=np.int64))
    holders: IntArray = field(default_factory=lambda: np.zeros((0, 1), dtype=np.int64))
    placed: dict[str, list[SharePlacement]] = field(default_factory=dict)
    _nodes_version: int = -1
    _memory: FloatArray = field(default_factory=lambda: np.zeros(0))  # per node, NaN: not known
    _shareable: BoolArray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    #: per node, its GPU memory when its GPUs are shareable (None: not known), or False when they are
    #: not: the same facts as Python objects, for one node at a time
    _facts: list[float | bool | None] = field(default_factory=list)

    # -- node facts, refreshed when the node set or labels change ---------------------------
    def sync(self) -> None:
        """Size the ledger to the node set, re-reading node facts after label changes (cheap otherwise)."""
        state = self.state
        if self._nodes_version == state.static_version and len(self._memory) == len(state.nodes):
            return
        grow = state.size - self.free_compute.shape[0]
        if grow > 0:
            width = self.free_compute.shape[1]
            self.free_compute = np.vstack([self.free_compute, np.full((grow, width), -1, dtype=np.int64)])
            self.free_memory = np.vstack([self.free_memory, np.full((grow, width), -1, dtype=np.int64)])
            self.holders = np.vstack([self.holders, np.zeros((grow, width), dtype=np.int64)])
        memory = [gpu_memory_bytes(n) for n in state.nodes]
        self._memory = np.array([np.nan if m is None else m for m in memory], dtype=np.float64)
        self._shareable = np.array([shareable(n) for n in state.nodes], dtype=bool)
        self._facts = [m if ok else False for m, ok in zip(memory, self._shareable.tolist(), strict=True)]
        self._nodes_version = state.static_version

    def gpu_memory(self, i: int) -> float | None:
        self.sync()
        m = float(self._memory[i])
        return None if np.isnan(m) else m

    @staticmethod
    def _fixed_need(share: GpuShare) -> tuple[int, int] | None:
        """(compute, memory) milli of one GPU where the share needs the same on every node; None where its
        memory is in bytes (a share of each node's own GPU memory)."""
        if share.memory_milli is None and share.memory_bytes is not None:
            return None
        memory = share.memory_milli if share.memory_milli is not None else share.compute_milli or 0
        return (share.compute_milli if share.compute_milli is not None else memory), memory

    def _need(self, share: GpuShare, idx: IntArray) -> tuple[IntArray, IntArray, BoolArray]:
        """(compute, memory) milli per node in ``idx``, and where the GPU memory was needed but unknown."""
        fixed = self._fixed_need(share)
        if fixed is not None:
            compute, memory = fixed
            full = np.full(len(idx), compute, dtype=np.int64), np.full(len(idx), memory, dtype=np.int64)
            return *full, np.zeros(len(idx), dtype=bool)
        assert share.memory_bytes is not None  # (``_fixed_need``'s None)
        gpu_memory = self._memory[idx]
        unknown = np.isnan(gpu_memory)
        mem = np.ceil(MILLI * share.memory_bytes / np.where(unknown, 1.0, gpu_memory)).astype(np.int64)
        if share.compute_milli is None:
            return mem, mem, unknown
        return np.full(len(idx), share.compute_milli, dtype=np.int64), mem, unknown

    # -- the filter --------------------------------------------------------------------------
    def _judged(self, share: GpuShare, idx: IntArray) -> tuple[BoolArray, BoolArray, BoolArray, BoolArray]:
        """For the nodes in ``idx``: whether they are not shareable, whether the GPU memory the share needs
        is unknown, whether its compute or memory is more than one GPU's, and whether fewer GPUs than it
        asks have room (open ones) or are unshared (each of the last two whatever the first ones say)."""
        self.sync()
        compute, memory, unknown = self._need(share, idx)
        big = (compute > MILLI) | (memory > MILLI)
        few = self._too_few(idx, compute[:, None], memory[:, None], share.count)
        return ~self._shareable[idx], unknown, big, few

    def _too_few(
        self, idx: IntArray, compute: IntArray | int, memory: IntArray | int, count: int
    ) -> BoolArray:
        """Where fewer than ``count`` GPUs of the nodes ``idx`` have ``compute`` and ``memory`` milli left
        (open ones; a node's column of needs, or one need for all) or are unshared."""
        state = self.state
        # (``take`` and a column's rows: NumPy's fancy indexing of a two-dimensional array costs more)
        room = (self.free_compute.take(idx, axis=0) >= compute) & (
            self.free_memory.take(idx, axis=0) >= memory
        )
        col = state.resource_column(GPU)
        whole = state.column_free_of(col, idx)
        few: BoolArray = np.add.reduce(room, axis=1) + whole < count  # (the ufunc: not NumPy's wrapper)
        return few

    def reasons(self, share: GpuShare, idx: IntArray) -> list[tuple[str, BoolArray]]:
        """For the nodes in ``idx``, each reason the share does not fit and the nodes it applies to."""
        not_shareable, unknown, big, few = self._judged(share, idx)
        has_gpus = self.state.alloc[idx, self.state.resource_column(GPU)] > 0
        too_big = ~not_shareable & ~unknown & big
        short = ~not_shareable & ~unknown & ~too_big & few
        return [
            (reason, mask)
            for reason, mask in (
                (NOT_SHAREABLE, not_shareable & has_gpus),
                (INSUFFICIENT, not_shareable & ~has_gpus),
                (MEMORY_UNKNOWN, ~not_shareable & unknown),
                (MEMORY_PER_DEVICE, too_big),
                (INSUFFICIENT, short),
            )
            if np.any(mask)
        ]

    def fits(self, share: GpuShare, idx: IntArray) -> BoolArray:
        """Where ``reasons`` names none (the union of its masks, without telling them apart); a share whose
        need is the same on every node (none in bytes) judged with that need as two numbers."""
        fixed = self._fixed_need(share)
        if fixed is None:
            not_shareable, unknown, big, few = self._judged(share, idx)
            fit: BoolArray = ~(not_shareable | unknown | big | few)
            return fit
        self.sync()
        compute, memory = fixed
        if compute > MILLI or memory > MILLI:
            return np.zeros(len(idx), dtype=bool)
        return ~self._too_few(idx, compute, memory, share.count) & self._shareable[idx]

    def milli_needed(self, share: GpuShare, idx: IntArray) -> IntArray:
        """Thousandths of a GPU the share takes on each node of ``idx`` (count x the larger of compute
        and memory); more than any node has where it cannot go at all."""
        self.sync()
        compute, memory, unknown = self._need(share, idx)
        per = np.maximum(compute, memory)
        nowhere = unknown | ~self._shareable[idx] | (per > MILLI)
        needed: IntArray = np.where(nowhere, np.iinfo(np.int64).max, share.count * per)
        return needed

    def fits_node(self, share: GpuShare, i: int, whole: int) -> bool:
        """``fits`` for node ``i`` with ``whole`` unshared GPUs free, in Python integers (the open GPUs
        looked at only when the unshared ones are too few)."""
        per = self._per_gpu(share, i)
        if per is None:
            return False
        return whole >= share.count or len(self._open_with_room(i, *per)) + whole >= share.count

    def _per_gpu(self, share: GpuShare, i: int) -> tuple[int, int] | None:
        """(compute, memory) milli of one GPU of node ``i``, or None when the share cannot go there."""
        state = self.state
        if self._nodes_version != state.static_version or len(self._memory) != len(state.nodes):
            self.sync()  # (asked here first: this runs for every share placed or judged alone)
        memory = self._facts[i]
        if memory is False:
            return None
        per = share.per_gpu(memory)
        return None if per is None or per[0] > MILLI or per[1] > MILLI else per

    def _open_with_room(self, i: int, compute: int, memory: int) -> list[tuple[int, int, int]]:
        """Node ``i``'s open GPUs with room, as (compute, memory left after, slot), fullest first."""
        mem: list[int] = self.free_memory[i].tolist()
        room = [
            (c - compute, mem[slot] - memory, slot)
            for slot, c in enumerate(self.free_compute[i].tolist())
            if c >= compute and mem[slot] >= memory
        ]
        room.sort()
        return room

    # -- placing and releasing ---------------------------------------------------------------
    def place(self, pod: Pod, i: int, choose: GpuChoice | None = None) -> list[SharePlacement]:
        """Put the pod's shares on node ``i``: best-filled open GPUs first, then fresh ones, unless a
        plugin's ``choose`` picks the GPU of a one-GPU share (FGD, Random). Where they do not fit (a
        profile without GpuShare placed the pod anyway) the pod holds no GPU, as for kube-scheduler
        a fractional request is no resource at all."""
        key, share = pod.key, pod.gpu_share
        if share is None:
            return []
        gpu_col = self.state.resource_column(GPU)
        per = self._per_gpu(share, i)
        whole = int(self.state.alloc[i, gpu_col] - self.state.requested[i, gpu_col])
        room = self._open_with_room(i, *per) if per is not None else []
        if per is None or len(room) + whole < share.count:
            return []
        compute, memory = per
        taken = room[: share.count]  # (compute, memory) each slot has left after, and the slot
        if choose is not None and share.count == 1:
            pick = choose(pod, i, room, whole)
            taken = [r for r in room if r[2] == pick]
            if pick is not None and not taken:  # (a GPU not offered: what it has left, read)
                left = int(self.free_compute[i, pick]) - compute, int(self.free_memory[i, pick]) - memory
                taken = [(*left, pick)]
        slots = [slot for _, _, slot in taken]
        while len(slots) < share.count:
            closed = [s for s, h in enumerate(self.holders[i].tolist()) if h == 0 and s not in slots]
            if not closed:
                self._widen()
                continue
            self.state.requested[i, gpu_col] += 1
            taken.append((MILLI - compute, MILLI - memory, closed[0]))
            slots.append(closed[0])
        for compute_left, memory_left, slot in taken:  # (written, not read and written back)
            self.free_compute[i, slot] = compute_left
            self.free_memory[i, slot] = memory_left
            self.holders[i, slot] += 1
        placements = [SharePlacement(i, slot, compute, memory) for slot in slots]
        self.placed[key] = placements
        return placements

    def release(self, key: str) -> None:
        gpu_col = self.state.resource_column(GPU)
        for p in self.placed.pop(key, ()):
            self.holders[p.node, p.slot] -= 1
            if self.holders[p.node, p.slot] == 0:
                self.free_compute[p.node, p.slot] = self.free_memory[p.node, p.slot] = -1
                self.state.requested[p.node, gpu_col] -= 1
            else:
                self.free_compute[p.node, p.slot] += p.compute
                self.free_memory[p.node, p.slot] += p.memory

    def gpus_freed(self, i: int, keys: Iterable[str]) -> int:
        """How many of node ``i``'s shared GPUs would be unshared again without the pods ``keys``
        (every holder of the GPU among them): what preemption's victim search gives back."""
        gone: Counter[int] = Counter(p.slot for k in keys for p in self.placed.get(k, ()) if p.node == i)
        return sum(1 for slot, n in gone.items() if n == self.holders[i, slot])

    def _widen(self) -> None:
        rows = self.free_compute.shape[0]
        self.free_compute = np.hstack([self.free_compute, np.full((rows, 1), -1, dtype=np.int64)])
        self.free_memory = np.hstack([self.free_memory, np.full((rows, 1), -1, dtype=np.int64)])
        self.holders = np.hstack([self.holders, np.zeros((rows, 1), dtype=np.int64)])

    # -- figures -------------------------------------------------------------------------------
    def unused_per_node(self) -> FloatArray:
        """Per node, the GPU-equivalents its shared GPUs still have free (each counts whole in the
        requested ``nvidia.com/gpu``; its use is the larger of its compute and memory used)."""
        self.sync()
        open_ = self.holders > 0
        free = np.minimum(self.free_compute, self.free_memory)
        unused: FloatArray = np.where(open_, free, 0).sum(axis=1).astype(np.float64) / MILLI
        return unused
