"""GPU fragmentation: free GPU capacity that the current mix of work cannot use.

The measure of the FGD paper (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
Workloads with Fragmentation Gradient Descent", USENIX ATC '23, section 3; the authors' simulator,
``pkg/utils/frag.go``, ``NodeGpuShareFragAmount``): for a target workload of task shapes ``m`` with
popularity ``p_m``, a node's fragmentation is ``F_n = sum_m p_m * F_n(m)``, where ``F_n(m)`` is

* all of the node's free GPU capacity when task ``m`` cannot run there: too few GPUs with enough
  left (``CanNodeHostPodOnGpuMemory``), too little cpu, memory or pod room, or a filter such as a
  node selector refuses it (the paper's Q-I, Q-II, Q-IV and "no access" cases);
* otherwise (Q-III) the free capacity of the GPUs that each have less left than the task asks of
  one GPU (``GetGpuFragMilliByNodeResAndPodRes``): a whole-GPU task cannot use half-free GPUs.

Capacity is counted in thousandths of a GPU ("milli"): an unshared free GPU has 1000 left, a GPU
holding fractional requests (``scheduling.gpu_shares``) what its shares leave (the lesser of
compute and memory). gpufleet also checks memory and pods where the authors check only cpu.
The target workload here is a list of pods weighted by count (the pending pods for the report).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpufleet.model.gpu_share import MILLI
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU
from gpufleet.scheduling.cluster_state import BoolArray, ClusterState, IntArray

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Fragmentation:
    free_gpus: float
    fragmented_gpus: float  # expected free GPUs the workload mix cannot use
    per_node: dict[str, float]

    @property
    def ratio(self) -> float:
        return self.fragmented_gpus / self.free_gpus if self.free_gpus else 0.0


@dataclass
class FreeCapacity:
    """Free capacity of some nodes: resource columns, unshared GPUs, and the shared GPUs' milli left."""

    columns: IntArray  # (nodes, resources): allocatable - requested
    whole: IntArray  # (nodes,): GPUs with nothing on them
    slots: IntArray  # (nodes, open shared GPUs): milli left, -1 where no GPU is open

    @classmethod
    def of(cls, state: ClusterState, idx: IntArray) -> FreeCapacity:
        columns = state.alloc[idx] - state.requested[idx]
        col = state.resource_column(GPU)
        whole = columns[:, col].copy()
        if state.shares is None:
            return cls(columns, whole, np.full((len(idx), 0), -1, dtype=np.int64))
        shares = state.gpu_shares()
        shares.unused_per_node()  # sizes the ledger to the node set
        open_ = shares.holders[idx] > 0
        left = np.minimum(shares.free_compute[idx], shares.free_memory[idx])
        return cls(columns, whole, np.where(open_, left, -1))

    @property
    def total_milli(self) -> IntArray:
        total: IntArray = MILLI * self.whole + np.where(self.slots > 0, self.slots, 0).sum(axis=1)
        return total


@dataclass(frozen=True)
class TaskShape:
    """One task of the target workload as the measure sees it, on each node of ``idx``."""

    gpus: int  # GPUs it needs
    milli: IntArray  # (nodes,): what it asks of each GPU (1000 for whole GPUs)
    other: IntArray  # its request vector without the GPU column
    admitted: BoolArray  # (nodes,): the node's labels let it run there
    shared: bool = False  # a fractional request (on GPUs shared with others), else whole GPUs


def task_shape(state: ClusterState, pod: Pod, idx: IntArray) -> TaskShape:
    req = state.pod_vectors(pod)[0].copy()
    req[state.resource_column(GPU)] = 0
    admitted = np.array([pod.matches_node_selector(state.nodes[i]) for i in idx.tolist()], dtype=bool)
    share = pod.gpu_share
    if share is None:
        return TaskShape(pod.gpus, np.full(len(idx), MILLI, dtype=np.int64), req, admitted)
    milli = np.full(len(idx), MILLI + 1, dtype=np.int64)  # more than any GPU: nowhere, unless resolved
    for j, i in enumerate(idx.tolist()):
        per = share.per_gpu(state.gpu_shares().gpu_memory(i))
        if per is not None:
            milli[j] = max(per)
    return TaskShape(share.count, milli, req, admitted, shared=True)


def node_fragmentation(free: FreeCapacity, tasks: list[tuple[TaskShape, float]]) -> FloatArray:
    """``F_n`` in milli for every node of ``free``, for tasks with popularities summing to 1."""
    total = free.total_milli.astype(np.float64)
    out = np.zeros(len(total), dtype=np.float64)
    for task, weight in tasks:
        milli = task.milli[:, None]
        enough = (free.slots >= milli).sum(axis=1) + np.where(task.milli <= MILLI, free.whole, 0)
        runs = task.admitted & (enough >= task.gpus) & (free.columns >= task.other).all(axis=1)
        stranded = np.where((free.slots >= 0) & (free.slots < milli), free.slots, 0).sum(axis=1)
        out += weight * np.where(runs, stranded, total)
    return out


def workload_tasks(state: ClusterState, workload: list[Pod], idx: IntArray) -> list[tuple[TaskShape, float]]:
    """The GPU pods of ``workload`` as task shapes with their popularity (count over all of them)."""
    gpu_pods = [p for p in workload if p.gpus > 0 or p.gpu_share is not None]
    shapes = Counter(p.shape() for p in gpu_pods)
    first = {p.shape(): p for p in reversed(gpu_pods)}
    total = sum(shapes.values())
    return [(task_shape(state, first[s], idx), count / total) for s, count in shapes.items()]


def fragmentation(state: ClusterState, workload: list[Pod]) -> Fragmentation:
    """The fragmentation of every active node for the given workload (its pods weighted by count)."""
    idx = state.active_indices()
    free = FreeCapacity.of(state, idx)
    per_node = node_fragmentation(free, workload_tasks(state, workload, idx)) / MILLI
    names = [state.nodes[i].name for i in idx.tolist()]
    return Fragmentation(
        float(free.total_milli.sum()) / MILLI,
        float(per_node.sum()),
        {n: round(float(f), 6) for n, f in zip(names, per_node, strict=True) if f > 0},
    )
