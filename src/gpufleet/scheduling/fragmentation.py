"""GPU fragmentation: free GPU capacity that the current mix of work cannot use.

The measure of the FGD paper (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
Workloads with Fragmentation Gradient Descent", USENIX ATC '23, section 3; the authors'
``pkg/utils/frag.go``): for a target workload of task shapes ``m`` with popularity ``p_m``, a
node's fragmentation is ``F_n = sum_m p_m * F_n(m)`` where ``F_n(m)`` is the free GPU capacity of
``n`` that task ``m`` cannot use: all of it when ``m`` cannot run on ``n`` at all (too few free
GPUs, or cpu/memory/pods short, or a filter such as a node selector refuses it), none otherwise.
Here GPUs are whole devices (fractional sharing refines ``F_n(m)`` per GPU); the target workload
is the pending pods, by shape.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU
from gpufleet.scheduling.cluster_state import ClusterState


@dataclass(frozen=True)
class Fragmentation:
    free_gpus: float
    fragmented_gpus: float  # expected free GPUs the workload mix cannot use
    per_node: dict[str, float]

    @property
    def ratio(self) -> float:
        return self.fragmented_gpus / self.free_gpus if self.free_gpus else 0.0


def fragmentation(state: ClusterState, workload: list[Pod]) -> Fragmentation:
    """The fragmentation of every active node for the given workload (its pods weighted by count)."""
    idx = state.active_indices()
    free = state.free(GPU)[idx].astype(np.float64)
    per_node = np.zeros(len(idx), dtype=np.float64)
    gpu_pods = [p for p in workload if p.gpus > 0]
    shapes = Counter(p.shape() for p in gpu_pods)
    by_shape = {p.shape(): p for p in gpu_pods}
    total = sum(shapes.values())
    for shape, count in shapes.items():
        pod = by_shape[shape]
        req = state.pod_vectors(pod)[0]
        fits = ((state.alloc[idx] - state.requested[idx]) >= req).all(axis=1)
        fits &= np.array([pod.matches_node_selector(state.nodes[i]) for i in idx.tolist()], dtype=bool)
        per_node += (count / total) * np.where(fits, 0.0, free)
    names = [state.nodes[i].name for i in idx.tolist()]
    return Fragmentation(
        float(free.sum()),
        float(per_node.sum()),
        {n: round(float(f), 6) for n, f in zip(names, per_node, strict=True) if f > 0},
    )
