"""cluster-autoscaler's scale-down decision: which nodes are unneeded, and what blocks them.

Mirrors ``core/scaledown`` and ``simulator/``: a node is *unneeded* when its utilisation is
below ``--scale-down-utilization-threshold`` (0.5) — on a GPU node GPU requests over GPU
allocatable only (``utilization.Calculate`` with a GPU config), elsewhere the larger of the
cpu and memory shares, DaemonSet pods included — and every other pod on it can be placed
on the remaining nodes by the scheduler's filters. Blockers (cluster-autoscaler FAQ): a pod
annotated ``cluster-autoscaler.kubernetes.io/safe-to-evict: "false"``, a pod without a
controller (unless annotated ``"true"``), a PodDisruptionBudget with no disruption left.
gpufleet's GPU-aware option (``gpuAwareScaleDown``) also refuses nodes where a GPU pod is
computing: upstream drains a half-used GPU node under a training job, which loses the work
since its last checkpoint (and restarts a whole gang).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY
from gpufleet.scheduling.cluster_state import ClusterState
from gpufleet.scheduling.profile import Profile

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"


def utilization(state: ClusterState, i: int) -> float:
    """GPU share on a node with GPUs, else the larger of the cpu and memory shares."""
    alloc, req = state.alloc[i], state.requested[i]
    col = state.res_index.get(GPU)
    if col is not None and alloc[col] > 0:
        return float(req[col] / alloc[col])
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


def find_home(
    state: ClusterState, profile: Profile, pod: Pod, exclude: set[int], extra: dict[int, list[int]]
) -> int | None:
    """A node other than ``exclude`` where the pod passes the filters, counting tentative moves.

    The pod is tried as a fresh copy would be, without its ``spec.nodeName`` (as the drain
    simulation does)."""
    pod = replace(pod, node_name=None) if pod.node_name else pod
    want = state.pod_vectors(pod)[0].tolist()
    for i in state.active_indices().tolist():
        if i in exclude or any(f.reject(pod, state.nodes[i]) for f in profile.static_filters):
            continue
        moved = extra.get(i)
        free = (state.alloc[i] - state.requested[i]).tolist()
        if moved is not None:
            free = [f - m for f, m in zip(free, moved, strict=True)]
        if all(w <= f for w, f in zip(want, free, strict=True) if w > 0):
            extra[i] = [m + w for m, w in zip(moved or [0] * len(want), want, strict=True)]
            return int(i)
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
) -> NodeVerdict:
    """Whether node ``i`` could be removed now (its pods moved to nodes outside ``exclude``)."""
    name = state.nodes[i].name
    used = utilization(state, i)
    if used >= threshold:
        return NodeVerdict(name, False, f"utilization {used:.2f} >= {threshold}")
    moved: dict[int, list[int]] = {}
    for a in sorted(state.pods_on[i].values(), key=lambda a: a.pod.key):
        if a.pod.key in is_daemon:
            continue
        blocker = eviction_blocker(a.pod, budgets, allowed)
        if blocker is None and protected is not None and protected(a.pod.key):
            blocker = f"pod {a.pod.key} is computing on GPUs (gpuAwareScaleDown)"
        if blocker is not None:
            return NodeVerdict(name, False, blocker)
        if find_home(state, profile, a.pod, exclude | {i}, moved) is None:
            return NodeVerdict(name, False, f"pod {a.pod.key} fits on no other node")
    return NodeVerdict(name, True)
