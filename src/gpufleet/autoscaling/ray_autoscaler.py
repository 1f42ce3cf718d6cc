"""The Ray autoscaler's decision (autoscaler v2, ``python/ray/autoscaler/v2/scheduler.py``
``ResourceDemandScheduler.schedule`` and ``instance_manager/reconciler.py``), pure: the cluster's
node types, its Ray nodes and the resource requests Ray could not place go in, the workers to
launch per node type and the workers to terminate come out. On Kubernetes the node types are a
RayCluster's worker groups (``_private/kuberay/autoscaling_config.py``) and a launch or termination
is a change of the group's ``replicas`` plus, for a termination, the pod named in
``scaleStrategy.workersToDelete`` (``_private/kuberay/node_provider.py``).

What it does, in the scheduler's order:

1. each node type is brought up to its ``min_workers`` (``_enforce_min_workers_per_type``);
2. the pending requests, largest first (``_sort_resource_request``: most resource kinds, then the
   largest amounts), are placed first-fit on the existing nodes' free resources (a pod not yet
   running counts with all of its resources, as an allocated instance does), then on new nodes: for
   each request that still does not fit, the node type with the best score among those below
   ``max_workers`` whose resources hold it (``_compute_score``: a GPU node is not used for a request
   that needs no GPU while another type fits, then the most resource kinds the requests use, then
   the highest minimum and mean utilisation once the requests it can take are placed on it), ties by
   name; a request no node type can hold is infeasible;
3. idle workers are terminated (``_enforce_idle_termination``): a worker idle for at least its
   type's idle timeout (the cluster's ``idleTimeoutSeconds``, 60 s by default, or its group's), the
   longest idle first, while its type keeps ``min_workers``; a worker that got a request in step 2
   is not idle;
4. launches are rate-limited as the reconciler's ``_compute_to_launch`` does: per node type at most
   ``max(1, ceil(upscaling_speed * existing workers of the type))`` a round, and at most
   ``max_concurrent_launches`` (``AUTOSCALER_MAX_CONCURRENT_LAUNCHES``, 10) in all. KubeRay's
   ``upscalingMode`` sets the speed: ``Conservative`` 1, ``Default`` and ``Aggressive`` 1000.

A worker group of ``numOfHosts`` > 1 launches and terminates whole replicas (``numOfHosts`` pods).
Not modelled: placement groups (gang requests), ``request_resources`` constraints, node labels.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

#: ``AUTOSCALER_MAX_CONCURRENT_LAUNCHES`` (ray/autoscaler/_private/constants.py)
MAX_CONCURRENT_LAUNCHES = 10
#: the upscaling speed of each ``upscalingMode`` (autoscaling_config.py)
UPSCALING_SPEED = {"Conservative": 1.0, "Default": 1000.0, "Aggressive": 1000.0}
#: ``idleTimeoutSeconds`` when the RayCluster does not set it (autoscaling_config.py: 1 minute)
DEFAULT_IDLE_TIMEOUT_S = 60.0

RayResources = Mapping[str, float]


@dataclass(frozen=True)
class NodeType:
    """A worker group as the autoscaler sees it: counts in workers (pods), ``replicas x numOfHosts``."""

    name: str
    resources: RayResources
    min_workers: int
    max_workers: int
    num_of_hosts: int = 1
    idle_timeout_s: float | None = None  # the group's own, else the request's


@dataclass(frozen=True)
class RayNode:
    """One Ray pod: its type (``headgroup`` for the head, never launched or terminated), the
    resources it has free, and how long it has been idle (0 while it runs a request or is not up)."""

    name: str
    node_type: str
    available: RayResources
    idle_s: float = 0.0


@dataclass(frozen=True)
class SchedulingRequest:
    node_types: Sequence[NodeType]
    nodes: Sequence[RayNode]
    pending: Sequence[RayResources]  # requests Ray could not place
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    upscaling_speed: float = UPSCALING_SPEED["Default"]
    max_concurrent_launches: int = MAX_CONCURRENT_LAUNCHES


@dataclass
class SchedulingReply:
    to_launch: dict[str, int] = field(default_factory=dict)  # node type -> workers to add
    to_terminate: list[str] = field(default_factory=list)  # worker names, in order
    infeasible: list[RayResources] = field(default_factory=list)


def fits(request: RayResources, available: RayResources) -> bool:
    return all(available.get(r, 0.0) >= amount for r, amount in request.items() if amount > 0)


def take(request: RayResources, available: dict[str, float]) -> None:
    for r, amount in request.items():
        available[r] = available.get(r, 0.0) - amount


def _size(request: RayResources) -> tuple[int, tuple[float, ...]]:
    return len([a for a in request.values() if a > 0]), tuple(sorted(request.values(), reverse=True))


def _score(node: RayResources, placed: Sequence[RayResources]) -> tuple[bool, int, float, float]:
    """``_compute_score`` for a new node of resources ``node`` holding ``placed``."""
    used: dict[str, float] = {}
    for request in placed:
        for r, a in request.items():
            used[r] = used.get(r, 0.0) + a
    gpu_ok = node.get("GPU", 0.0) <= 0 or used.get("GPU", 0.0) > 0
    utils = [used.get(r, 0.0) / total for r, total in node.items() if total > 0 and r in used]
    matching = len(utils)
    if not utils:
        return gpu_ok, 0, 0.0, 0.0
    return gpu_ok, matching, min(utils), sum(utils) / len(utils)


def _pack(requests: list[RayResources], available: dict[str, float]) -> list[RayResources]:
    """First-fit: the requests placed on ``available`` (changed), in order; the rest stay in ``requests``."""
    placed = []
    for request in list(requests):
        if fits(request, available):
            take(request, available)
            placed.append(request)
            requests.remove(request)
    return placed


def schedule(request: SchedulingRequest) -> SchedulingReply:
    reply = SchedulingReply()
    types = {t.name: t for t in request.node_types}
    count = {name: 0 for name in types}
    for node in request.nodes:
        if node.node_type in count:
            count[node.node_type] += 1
    new_nodes: list[tuple[str, dict[str, float]]] = []  # (type, free resources) of workers to add
    for t in request.node_types:  # 1. min_workers
        new_nodes += [(t.name, dict(t.resources)) for _ in range(max(0, t.min_workers - count[t.name]))]

    pending = sorted(request.pending, key=_size, reverse=True)  # 2. place the requests
    busy: set[str] = set()
    for node in request.nodes:
        free = dict(node.available)
        if _pack(pending, free):
            busy.add(node.name)
    for _, free in new_nodes:
        _pack(pending, free)
    while pending:
        first = pending[0]
        candidates = []
        for t in sorted(types.values(), key=lambda t: t.name):
            if count[t.name] + sum(1 for n, _ in new_nodes if n == t.name) + t.num_of_hosts > t.max_workers:
                continue
            if not fits(first, t.resources):
                continue
            free = dict(t.resources)
            candidates.append((_score(t.resources, _pack(list(pending), free)), t))
        if not candidates:
            reply.infeasible.append(pending.pop(0))
            continue
        best = max(candidates, key=lambda c: c[0])[1]
        for _ in range(best.num_of_hosts):
            free = dict(best.resources)
            _pack(pending, free)
            new_nodes.append((best.name, free))

    expired: dict[str, list[str]] = {}  # 3. idle workers, the longest idle first
    for node in sorted(request.nodes, key=lambda n: (-n.idle_s, n.name)):
        of = types.get(node.node_type)
        if of is None or node.name in busy or node.idle_s <= 0:
            continue
        if node.idle_s >= (of.idle_timeout_s if of.idle_timeout_s is not None else request.idle_timeout_s):
            expired.setdefault(of.name, []).append(node.name)
    for t in request.node_types:
        names = expired.get(t.name, [])
        n = min(len(names), count[t.name] - t.min_workers)
        n -= n % t.num_of_hosts  # whole replicas
        reply.to_terminate += names[: max(0, n)]

    launched = 0  # 4. the launch rate
    for t in request.node_types:
        wanted = sum(1 for n, _ in new_nodes if n == t.name)
        if not wanted:
            continue
        allowed = max(1, math.ceil(request.upscaling_speed * count[t.name]))
        n = min(wanted, allowed, request.max_concurrent_launches - launched)
        n -= n % t.num_of_hosts
        if n > 0:
            reply.to_launch[t.name] = n
            launched += n
    return reply
