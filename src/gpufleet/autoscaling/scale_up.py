"""cluster-autoscaler's scale-up: which pool to grow, and by how many nodes, for pending pods.

Mirrors ``core/scaleup`` and ``estimator/binpacking_estimator.go``: pending pods that fit on
upcoming nodes (launched, not yet registered or not yet GPU-ready: a node with the GPU label
but no GPU allocatable counts as upcoming, ``FilterOutNodesWithUnreadyResources``) are left
out; for each pool with room, pods are packed First-Fit Decreasing onto fresh copies of the
pool's template node (DaemonSet pods that would run there take their share first), using
the scheduler profile's own filters; a gang (pods of one PodGroup) counts only if all its
pending members are placed. An expander then picks one option (``expanders``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import PODS, Resources
from gpufleet.scheduling.gangs import group_key
from gpufleet.scheduling.profile import Profile


@dataclass(frozen=True)
class PoolOption:
    """One pool as the autoscaler sees it during a scan."""

    name: str
    template: Node  # GPU-ready: allocatable as the node will have it once its devices register
    daemon_requests: Resources = field(default_factory=dict)
    room: int = 0  # nodes it may still add (pool max and cluster total applied)
    upcoming: int = 0  # launched, not yet GPU-ready
    price_per_hour: float = 0.0
    priority: int = 0


@dataclass(frozen=True)
class Estimate:
    pool: str
    nodes: int
    pods: tuple[str, ...]
    waste: dict[str, float]  # resource -> wasted share of what the new nodes add
    price_per_hour: float
    priority: int


def _free(option: PoolOption) -> Resources:
    free = dict(option.template.allocatable)
    for name, value in option.daemon_requests.items():
        free[name] = free.get(name, 0) - value
    free[PODS] = free.get(PODS, 110) - (1 if option.daemon_requests else 0)
    return free


def _fits(want: Resources, free: Resources) -> bool:
    return all(v <= free.get(r, 0) for r, v in want.items() if v > 0)


def _take(want: Resources, free: Resources) -> None:
    for r, v in want.items():
        free[r] = free.get(r, 0) - v


def _wants(pod: Pod) -> Resources:
    return {**pod.requests, PODS: 1}


def _admits(profile: Profile, pod: Pod, template: Node) -> bool:
    return all(f.reject(pod, template) is None for f in profile.static_filters)


def _units(pods: list[Pod]) -> list[list[Pod]]:
    """Pods grouped so that a gang's pending members are placed together or not at all."""
    gangs: dict[str, list[Pod]] = defaultdict(list)
    units: list[list[Pod]] = []
    for pod in pods:
        key = group_key(pod)
        if key is None:
            units.append([pod])
        else:
            if key not in gangs:
                units.append(gangs[key])
            gangs[key].append(pod)
    return units


def _size(unit: list[Pod], template: Node) -> float:
    """FFD order: the share of the template the unit asks for, largest first."""
    return sum(
        v / template.allocatable[r]
        for p in unit
        for r, v in p.requests.items()
        if template.allocatable.get(r)
    )


def pack(
    pods: list[Pod], option: PoolOption, profile: Profile, nodes: int, limit: int
) -> tuple[int, list[Pod]]:
    """Place pods on ``nodes`` existing template copies, adding up to ``limit`` more.

    Returns (nodes added, pods placed). A unit (a gang) that does not fit whole is skipped.
    """
    frees = [_free(option) for _ in range(nodes)]
    added = 0
    placed: list[Pod] = []
    admitted = [u for u in _units(pods) if all(_admits(profile, p, option.template) for p in u)]
    for unit in sorted(admitted, key=lambda u: -_size(u, option.template)):
        trial = [dict(f) for f in frees]
        trial_added = added
        ok = True
        for pod in sorted(unit, key=lambda p: -_size([p], option.template)):
            want = _wants(pod)
            slot = next((f for f in trial if _fits(want, f)), None)
            if slot is None and trial_added < limit and _fits(want, _free(option)):
                slot = _free(option)
                trial.append(slot)
                trial_added += 1
            if slot is None:
                ok = False
                break
            _take(want, slot)
        if ok:
            frees, added = trial, trial_added
            placed.extend(unit)
    return added, placed


def still_pending(pods: list[Pod], options: list[PoolOption], profile: Profile) -> list[Pod]:
    """Pods that do not fit on the upcoming nodes of any pool."""
    remaining = list(pods)
    for option in options:
        if option.upcoming and remaining:
            _, placed = pack(remaining, option, profile, option.upcoming, 0)
            keys = {p.key for p in placed}
            remaining = [p for p in remaining if p.key not in keys]
    return remaining


def estimate(pods: list[Pod], option: PoolOption, profile: Profile) -> Estimate | None:
    if option.room <= 0 or not pods:
        return None
    added, placed = pack(pods, option, profile, 0, option.room)
    if added == 0 or not placed:
        return None
    waste: dict[str, float] = {}
    for name, per_node in option.template.allocatable.items():
        if name == PODS or per_node <= 0:
            continue
        offered = per_node * added
        used = sum(p.requests.get(name, 0) for p in placed) + option.daemon_requests.get(name, 0) * added
        waste[name] = (offered - used) / offered
    return Estimate(
        option.name, added, tuple(p.key for p in placed), waste, option.price_per_hour, option.priority
    )
