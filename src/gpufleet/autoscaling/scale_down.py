"""cluster-autoscaler's scale-down decision: which nodes are unneeded, and what blocks them.

Mirrors ``core/scaledown`` and ``simulator/``: a node is *unneeded* when it is eligible
(``eligibility.Checker``: not annotated ``cluster-autoscaler.kubernetes.io/scale-down-disabled:
"true"``, its utilisation computable and at or below ``--scale-down-utilization-threshold``
(0.5) — on a GPU node GPU requests over GPU allocatable only (``utilization.Calculate`` with a
GPU config), on a node that publishes DRA ResourceSlices the most allocated share of one of its
device pools, elsewhere the larger of the cpu and memory shares, DaemonSet pods included; a node
with an incomplete DRA pool, or without cpu or memory allocatable, has none, and stays) and every
other pod on it can be placed on the remaining nodes by the scheduler's filters (a pod with
ResourceClaims only where they can be allocated: the drain simulation first releases the claims
of the node's pods).
What blocks a drain, and which pods move, is ``drainability`` (upstream's drainability rules).
gpufleet's GPU-aware option (``gpuAwareScaleDown``) also refuses nodes where a GPU pod is
computing: upstream drains a half-used GPU node under a training job, which loses the work
since its last checkpoint (and restarts a whole gang).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from gpufleet.autoscaling.drainability import drainable
from gpufleet.cluster.snapshot import ClusterSnapshot
from gpufleet.cluster.state import Assignment, ClusterState
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.pod_aware import Placed, PodCycle, PodFilterState
from gpufleet.scheduling.profile import Profile

Int8Array = npt.NDArray[np.int8]


def utilization(state: ClusterState, i: int) -> float | None:
    """GPU share on a node with GPUs, else its busiest DRA device pool, else the larger of the cpu
    and memory shares; None where cluster-autoscaler gets an error: one of the node's DRA pools is
    incomplete, or cpu or memory allocatable is missing or zero (``CalculateUtilizationOfResource``)."""
    alloc, req, name = state.alloc[i], state.requested[i], state.nodes[i].name
    col = state.res_index.get(GPU)
    if col is not None and alloc[col] > 0:
        return float(req[col] / alloc[col])
    if state.dra is not None and (devices := state.dra.pool_utilization(name)) is not None:
        return None if state.dra.incomplete_pool(name) else devices
    shares = []
    for r in (CPU, MEMORY):
        c = state.res_index.get(r)
        if c is None or alloc[c] <= 0:
            return None
        shares.append(req[c] / alloc[c])
    return float(max(shares))


def unremovable_reason(state: ClusterState, i: int, threshold: float) -> str | None:
    """Why node ``i`` is not even a scale-down candidate (``unremovableReasonAndNodeUtilization``:
    ``ScaleDownDisabledAnnotation``, ``UnexpectedError``, ``NotUnderutilized``), or None."""
    node = state.nodes[i]
    if node.scale_down_disabled:
        return f'node {node.name} is annotated cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"'
    used = utilization(state, i)
    if used is None:
        return (
            f"utilization of node {node.name} cannot be computed "
            "(no cpu or memory allocatable, or an incomplete DRA pool)"
        )
    if used > threshold:  # isNodeAtOrBelowUtilizationThreshold: at the threshold is underutilized
        return f"utilization {used:.2f} > {threshold}"
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
    cluster's DRA state (cluster-autoscaler's DRA snapshot). A pod with inter-pod affinity or spread
    constraints (or one a placed pod's anti-affinity names) also passes the profile's pod-aware
    filters, which count the pods this trial put and took away (``PodFilterState.changed``).
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
        self.pod_filters = profile.pod_filters
        self.added: list[Placed] = []  # pods this trial put, for the pod-aware filters
        self.removed: list[Assignment] = []  # ... and the pods it took away

    def unschedule(self, pods: list[Pod]) -> None:
        """The pods leave their node in the simulation: their claims lose them as consumers, and a
        claim left without one is deallocated (``UnreservePodClaims``)."""
        self.removed += [a for p in pods if (a := self.state.assignments.get(p.key)) is not None]
        dra = self.snapshot.dra() if any(p.resource_claims for p in pods) else None
        if dra is not None:
            for pod in pods:
                dra.release(pod)

    def _pod_aware(self, pod: Pod) -> list[PodFilterState]:
        """The pod's pod-aware PreFilter states as this trial leaves the cluster (none: they all Skip)."""
        if not self.pod_filters:
            return []
        cycle = PodCycle.start(self.pod_filters, (), PodContext(pod, self.state))
        if cycle is None:
            return []
        moved = bool(self.added or self.removed)
        return [s.changed(self.added, self.removed) if moved else s for _, s in cycle.filters]

    def _claimed(self, pod: Pod, row: int) -> bool:
        dra = self.snapshot.dra() if pod.resource_claims else None
        return dra is None or dra.place(pod, self.state.nodes[row].name) is None

    def place(self, pod: Pod) -> int | None:
        """The node the pod would take (its room is then taken), or None when none has room.

        Capacity is compared on all nodes at once; the filters run only on nodes with room, in
        order, until one admits the pod."""
        fresh = replace(pod, node_name=None) if pod.node_name else pod
        want = self.state.pod_vectors(fresh)[0]
        if len(want) > self.free.shape[1]:  # it asks for a resource no node had yet: none is free anywhere
            self.free = np.pad(self.free, ((0, 0), (0, len(want) - self.free.shape[1])))
        share = fresh.gpu_share
        milli = (
            self.state.gpu_shares().milli_needed(share, self.idx)
            if share is not None
            else np.full(len(self.idx), MILLI * fresh.gpus, dtype=np.int64)
        )
        admits = self.verdicts.setdefault(fresh.shape(), np.full(len(self.state.nodes), -1, dtype=np.int8))
        pod_aware = self._pod_aware(fresh)
        room = np.flatnonzero((self.free >= want).all(axis=1) & (self.free_milli >= milli))
        for j in room[admits[self.idx[room]] != 0].tolist():
            row = int(self.idx[j])
            if admits[row] < 0:
                node = self.state.nodes[row]
                admits[row] = all(f.reject(fresh, node) is None for f in self.filters)
            if admits[row] and all(s.judge(row) is None for s in pod_aware) and self._claimed(fresh, row):
                self.snapshot.put(fresh, row, int(milli[j]))
                self.added.append((fresh, row))
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
    now: float = 0.0,
) -> NodeVerdict:
    """Whether node ``i`` could be removed at ``now`` (its pods moved to nodes outside ``exclude``):
    eligible, no pod blocks the drain (``GetPodsToMove``), then every moved pod placed."""
    name = state.nodes[i].name
    reason = unremovable_reason(state, i, threshold)
    if reason is not None:
        return NodeVerdict(name, False, reason)
    pods = sorted(state.pods_on[i].values(), key=lambda a: a.pod.key)
    drains = [
        (a.pod, drainable(a.pod, budgets, allowed, now - a.start_s))
        for a in pods
        if a.pod.key not in is_daemon
    ]
    for pod, drain in drains:
        blocker = drain.blocker
        if blocker is None and drain.moved and protected is not None and protected(pod.key):
            blocker = f"pod {pod.key} is computing on GPUs (gpuAwareScaleDown)"
        if blocker is not None:
            return NodeVerdict(name, False, blocker)
    trial = TrialPlacement(state, profile, exclude | {i}, verdicts)
    trial.unschedule([a.pod for a in pods])
    for pod, drain in drains:
        if drain.moved and trial.place(pod) is None:
            return NodeVerdict(name, False, f"pod {pod.key} fits on no other node")
    return NodeVerdict(name, True)
