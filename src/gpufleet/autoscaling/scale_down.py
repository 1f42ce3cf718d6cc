"""cluster-autoscaler's scale-down decision: which nodes are unneeded, and what blocks them.

Mirrors ``core/scaledown`` and ``simulator/``: a node is *unneeded* when its utilisation is
below ``--scale-down-utilization-threshold`` (0.5) — on a GPU node GPU requests over GPU
allocatable only (``utilization.Calculate`` with a GPU config), on a node that publishes DRA
ResourceSlices the most allocated share of one of its device pools, elsewhere the larger of the
cpu and memory shares, DaemonSet pods included — and every other pod on it can be placed
on the remaining nodes by the scheduler's filters (a pod with ResourceClaims only where they
can be allocated: the drain simulation first releases the claims of the node's pods).
Blockers (cluster-autoscaler FAQ): a pod annotated
``cluster-autoscaler.kubernetes.io/safe-to-evict: "false"``, a pod without a controller (unless
annotated ``"true"``), a PodDisruptionBudget with no disruption left.
gpufleet's GPU-aware option (``gpuAwareScaleDown``) also refuses nodes where a GPU pod is
computing: upstream drains a half-used GPU node under a training job, which loses the work
since its last checkpoint (and restarts a whole gang).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from gpufleet.cluster.snapshot import ClusterSnapshot
from gpufleet.cluster.state import ClusterState
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY
from gpufleet.scheduling.profile import Profile

Int8Array = npt.NDArray[np.int8]

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"


def utilization(state: ClusterState, i: int) -> float:
    """GPU share on a node with GPUs, else its busiest DRA device pool, else the larger of the cpu
    and memory shares."""
    alloc, req = state.alloc[i], state.requested[i]
    col = state.res_index.get(GPU)
    if col is not None and alloc[col] > 0:
        return float(req[col] / alloc[col])
    devices = state.dra.pool_utilization(state.nodes[i].name) if state.dra is not None else None
    if devices is not None:
        return devices
    shares = [
        req[c] / alloc[c] for r in (CPU, MEMORY) if (c := state.res_index.get(r)) is not None and alloc[c] > 0
    ]
    return float(max(shares, default=0.0))


def eviction_blocker(pod: Pod, budgets: list[DisruptionBudget], allowed: dict[str, int]) -> str | None:
    """Why cluster-autoscaler would not evict this pod, or None."""
    annotation = pod.annotations.get(SAFE_TO_EVICT)
    if annotation == "false":
        return f'pod {pod.key} is annotated {SAFE_TO_EVICT}: "false"'
    if pod.owner is None and annotation != "true":
        return f"pod {pod.key} has no controller"
    for budget in budgets:
        if budget.covers(pod) and allowed.get(f"{budget.namespace}/{budget.name}", 0) < 1:
            return f"pod {pod.key} is protected by PodDisruptionBudget {budget.namespace}/{budget.name}"
    return None


class TrialPlacement:
    """Pods placed one after another, first fit in node order, on the active nodes outside
    ``exclude`` of a ``ClusterSnapshot``: the scheduler simulation cluster-autoscaler runs on a
    forked snapshot (``filterOutSchedulable``, and the drain simulation of scale-down), which
    never touches the real state. Each pod is tried as a fresh copy, without ``spec.nodeName``.
    GPUs are also counted in thousandths (whole free GPUs and what shared ones have left), so a
    fractional request (KAI, HAMi) fits where enough of a node's GPU capacity is left; its split
    over single GPUs is not simulated.
    ``verdicts`` caches, per pod shape and state row, whether the profile's static filters admit
    the pod there (-1: not yet asked); it may be shared by trials over the same state (one scan).
    A pod with ResourceClaims also needs them allocated there (DynamicResources), in a fork of the
    cluster's DRA state (cluster-autoscaler's DRA snapshot).
    """

    def __init__(
        self,
        state: ClusterState,
        profile: Profile,
        exclude: set[int],
        verdicts: dict[tuple[object, ...], Int8Array] | None = None,
    ):
        self.state, self.filters = state, profile.static_filters
        self.snapshot = ClusterSnapshot(state)
        self.idx = np.array([i for i in state.active_indices().tolist() if i not in exclude], dtype=np.int64)
        self.free, self.free_milli = self.snapshot.free(self.idx)
        self.verdicts = verdicts if verdicts is not None else {}

    def unschedule(self, pods: list[Pod]) -> None:
        """The pods leave their node in the simulation: their claims lose them as consumers, and a
        claim left without one is deallocated (``UnreservePodClaims``)."""
        dra = self.snapshot.dra() if any(p.resource_claims for p in pods) else None
        if dra is not None:
            for pod in pods:
                dra.release(pod)

    def _claimed(self, pod: Pod, row: int) -> bool:
        dra = self.snapshot.dra() if pod.resource_claims else None
        return dra is None or dra.place(pod, self.state.nodes[row].name) is None

    def place(self, pod: Pod) -> int | None:
        """The node the pod would take (its room is then taken), or None when none has room.

        Capacity is compared on all nodes at once; the filters run only on nodes with room, in
        order, until one admits the pod."""
        fresh = replace(pod, node_name=None) if pod.node_name else pod
        want = self.state.pod_vectors(fresh)[0]
        share = fresh.gpu_share
        milli = (
            self.state.gpu_shares().milli_needed(share, self.idx)
            if share is not None
            else np.full(len(self.idx), MILLI * fresh.gpus, dtype=np.int64)
        )
        admits = self.verdicts.setdefault(fresh.shape(), np.full(len(self.state.nodes), -1, dtype=np.int8))
        room = np.flatnonzero((self.free >= want).all(axis=1) & (self.free_milli >= milli))
        for j in room[admits[self.idx[room]] != 0].tolist():
            row = int(self.idx[j])
            if admits[row] < 0:
                node = self.state.nodes[row]
                admits[row] = all(f.reject(fresh, node) is None for f in self.filters)
            if admits[row] and self._claimed(fresh, row):
                self.snapshot.put(fresh, row, int(milli[j]))
                self.free[j] -= want  # the snapshot's free rows, kept in step for the next pod
                self.free_milli[j] -= milli[j]
                return row
        return None


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    unneeded: bool
    reason: str = ""


def assess(
    state: ClusterState,
    i: int,
    profile: Profile,
    threshold: float,
    budgets: list[DisruptionBudget],
    allowed: dict[str, int],
    is_daemon: set[str],
    exclude: set[int],
    protected: Callable[[str], bool] | None = None,
    verdicts: dict[tuple[object, ...], Int8Array] | None = None,
) -> NodeVerdict:
    """Whether node ``i`` could be removed now (its pods moved to nodes outside ``exclude``)."""
    name = state.nodes[i].name
    used = utilization(state, i)
    if used >= threshold:
        return NodeVerdict(name, False, f"utilization {used:.2f} >= {threshold}")
    trial = TrialPlacement(state, profile, exclude | {i}, verdicts)
    trial.unschedule([a.pod for a in state.pods_on[i].values()])
    for a in sorted(state.pods_on[i].values(), key=lambda a: a.pod.key):
        if a.pod.key in is_daemon:
            continue
        blocker = eviction_blocker(a.pod, budgets, allowed)
        if blocker is None and protected is not None and protected(a.pod.key):
            blocker = f"pod {a.pod.key} is computing on GPUs (gpuAwareScaleDown)"
        if blocker is not None:
            return NodeVerdict(name, False, blocker)
        if trial.place(a.pod) is None:
            return NodeVerdict(name, False, f"pod {a.pod.key} fits on no other node")
    return NodeVerdict(name, True)
