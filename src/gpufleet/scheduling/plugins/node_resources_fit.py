"""NodeResourcesFit (``pkg/scheduler/framework/plugins/noderesources``), Kubernetes 1.34.

Filter (``fitsRequest``): a node fails for every resource the pod requests (> 0) beyond
what is free, each a separate reason: ``Too many pods``, ``Insufficient cpu``,
``Insufficient memory``, ``Insufficient nvidia.com/gpu``... The rejection is unresolvable
(``UnschedulableAndUnresolvable``: preemption is not tried there) when a resource other than
``pods`` is requested beyond the node's whole allocatable (``InsufficientResource.Unresolvable``).
``ignoredResources`` (extended resource names) and ``ignoredResourceGroups`` (the part of an
extended resource's name before ``/``) are left out of the filter, as ``fitsRequest`` skips them;
scoring still counts them, as upstream's ``resourceAllocationScorer`` never reads those args.

Score (``resource_allocation.go``), per resource in ``scoringStrategy.resources``:
requested = the node's requested (non-zero values for cpu and memory) plus the pod's;
a resource with zero allocatable is skipped, and so is a scalar resource (extended, hugepages,
``*kubernetes.io/``, attachable volumes: ``IsScalarResourceName``) the pod does not request.
Strategies:

- ``LeastAllocated``: ``(allocatable - requested) * 100 / allocatable``, 0 when over;
- ``MostAllocated``: ``min(requested, allocatable) * 100 / allocatable``;
- ``RequestedToCapacityRatio``: a piecewise-linear ``shape`` of (utilisation 0..100,
  score 0..10) points, scores scaled by 10; only positive scores enter the average, which
  is rounded.

The node score is the weighted mean, integer division (rounded for
RequestedToCapacityRatio). Default: LeastAllocated over cpu and memory, weight 1 each.

Queueing hints (``EventsToRegister``, with InPlacePodVerticalScaling on as in 1.34): a pod deleted
from a node (or nominated to one), or scaled down in a resource the pod requests
(``isSchedulableAfterPodEvent``); a node added, or its allocatable grown in a resource the pod
requests, where the pod fits the node's whole allocatable (``isSchedulableAfterNodeChange``,
``isFit``, ``haveAnyRequestedResourcesIncreased``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpufleet.cluster.state import BoolArray, IntArray, NodeRow
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, MEMORY, PODS, is_extended, is_scalar
from gpufleet.scheduling.events import (
    ActionType,
    ClusterEvent,
    EventPod,
    EventWithHint,
    HintError,
    QueueingHint,
    Resource,
    as_new,
    as_objects,
)
from gpufleet.scheduling.framework import (
    MAX_NODE_SCORE,
    ArgsError,
    DynamicFilter,
    DynamicScore,
    PodContext,
)
from gpufleet.scheduling.registry import register

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))
#: ``MaxCustomPriorityScore``: shape scores are 0..10 and scaled to 0..100.
SHAPE_SCALE = MAX_NODE_SCORE // 10


def insufficient_reason(resource: str) -> str:
    return "Too many pods" if resource == PODS else f"Insufficient {resource}"


@dataclass(frozen=True)
class ScoringStrategy:
    """NodeResourcesFit's ``scoringStrategy``: its type, the resources it weighs, and for
    ``RequestedToCapacityRatio`` the shape of utilisation to score."""

    type: str = LEAST_ALLOCATED
    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] = ((0, 10), (100, 0))


@dataclass(frozen=True)
class ResourcePlan:
    """Which columns a resource score reads for one pod shape, worked out once per shape."""

    columns: tuple[tuple[int, int, bool, int], ...]  # (column, weight, use non-zero, pod's request)
    cols: IntArray
    weights: IntArray
    use_nonzero: BoolArray
    pod: IntArray
    requests_any: bool  # the pod requests some of these resources


def resource_plan(
    ctx: PodContext, resources: tuple[tuple[str, int], ...], use_requested: bool, owner: object
) -> ResourcePlan:
    """Resources absent from the cluster, and extended resources the pod does not request, are left out.
    Kept in ``ctx.memo`` under ``owner``, the plugin asking (whose resources never change): a node's
    score finds it by identity, without building a key."""
    plan = ctx.memo.get(owner)
    if isinstance(plan, ResourcePlan):
        return plan
    cols, weights, nonzero, pod = [], [], [], []
    for name, weight in resources:
        col = ctx.state.res_index.get(name)
        if col is None:
            continue
        use_nonzero = not use_requested and name in (CPU, MEMORY)
        value = int((ctx.nonzero if use_nonzero else ctx.req)[col])
        if value == 0 and is_scalar(name):
            continue
        cols.append(col)
        weights.append(weight)
        nonzero.append(use_nonzero)
        pod.append(value)
    plan = ResourcePlan(
        tuple(zip(cols, weights, nonzero, pod, strict=True)),
        np.array(cols, dtype=np.int64),
        np.array(weights, dtype=np.int64),
        np.array(nonzero, dtype=bool),
        np.array(pod, dtype=np.int64),
        any(pod),
    )
    ctx.memo[owner] = plan
    return plan


def ignored_by_filter(name: str, ignored: frozenset[str], groups: frozenset[str]) -> bool:
    """``fitsRequest``: an extended resource named in ``ignoredResources``, or whose name before
    ``/`` is in ``ignoredResourceGroups``, is not checked."""
    return is_extended(name) and (name in ignored or name.split("/")[0] in groups)


def row_columns(plan: ResourcePlan, row: NodeRow) -> list[tuple[int, int, int]]:
    """(allocatable, requested with the pod, weight) of one node for a plan's columns with allocatable > 0."""
    alloc, requested, nonzero = row
    return [
        (alloc[c], (nonzero if nz else requested)[c] + pod, w)
        for c, w, nz, pod in plan.columns
        if alloc[c] > 0
    ]


def least_allocated_node(plan: ResourcePlan, row: NodeRow) -> int:
    """The default strategy's score of one node (``score_node``'s hot case, without ``row_columns``'
    list): the weighted mean of ``(allocatable - requested) * 100 // allocatable``, 0 where over."""
    alloc, requested, nonzero = row
    total = wsum = 0
    for c, w, nz, pod in plan.columns:
        a = alloc[c]
        if a > 0:
            req = (nonzero[c] if nz else requested[c]) + pod
            if req <= a:
                total += (a - req) * MAX_NODE_SCORE // a * w
            wsum += w
    return total // wsum if wsum else 0


def broken_linear_point(shape: tuple[tuple[int, int], ...], p: int, scale: int = SHAPE_SCALE) -> int:
    """``helper.BuildBrokenLinearFunction`` at one point, shape scores multiplied by ``scale`` first
    (as ``requestedToCapacityRatioScorer`` does); Go's integer division truncates toward zero."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s * scale
            u0, s0 = shape[i - 1]
            rise = (s - s0) * scale * (p - u0)
            step = rise // (u - u0) if rise >= 0 else -(-rise // (u - u0))
            return s0 * scale + step
    return shape[-1][1] * scale


def resource_columns(
    ctx: PodContext, idx: IntArray, plan: ResourcePlan
) -> tuple[IntArray, IntArray, IntArray]:
    """Allocatable, requested-with-the-pod and weights (0 where allocatable is 0), as (nodes, resources)."""
    state, cols = ctx.state, plan.cols
    # (``take``, as ``ClusterState.free_of``)
    alloc = state.alloc.take(idx, axis=0).take(cols, axis=1)
    nonzero = state.nonzero.take(idx, axis=0).take(cols, axis=1)
    requested = np.where(plan.use_nonzero, nonzero, state.requested.take(idx, axis=0).take(cols, axis=1))
    w = np.where(alloc > 0, plan.weights, 0)
    return alloc, requested + plan.pod, w


def broken_linear(shape: tuple[tuple[int, int], ...], utilization: IntArray) -> IntArray:
    """``broken_linear_point`` for many points at once."""
    out = np.full_like(utilization, shape[-1][1] * SHAPE_SCALE)
    done = np.zeros(utilization.shape, dtype=bool)
    for i, (u, s) in enumerate(shape):
        hit = ~done & (utilization <= u)
        if i == 0:
            value = np.full_like(utilization, s * SHAPE_SCALE)
        else:
            u0, s0 = shape[i - 1]
            rise = (s - s0) * SHAPE_SCALE * (utilization - u0)
            value = s0 * SHAPE_SCALE + np.sign(rise) * (np.abs(rise) // (u - u0))
        out = np.where(hit, value, out)
        done |= hit
    return out


def strategy_of(args: dict[str, Any]) -> ScoringStrategy:
    """``NodeResourcesFitArgs.scoringStrategy`` (defaults: LeastAllocated over cpu and memory)."""
    raw = args.get("scoringStrategy") or {}
    kind = raw.get("type") or LEAST_ALLOCATED
    if kind not in STRATEGIES:
        raise ArgsError(f"scoringStrategy.type: unsupported value {kind!r}")
    resources = (
        tuple((r["name"], int(r.get("weight") or 1)) for r in raw.get("resources") or ()) or DEFAULT_RESOURCES
    )
    shape_raw = (raw.get("requestedToCapacityRatio") or {}).get("shape") or ()
    shape = tuple((int(p.get("utilization", 0)), int(p.get("score", 0))) for p in shape_raw)
    if kind == REQUESTED_TO_CAPACITY_RATIO and not shape:
        raise ArgsError("requestedToCapacityRatio.shape: at least one point required")
    return ScoringStrategy(kind, resources, shape or ((0, 10), (100, 0)))


def after_pod_event(pod: Pod, old: object, new: object) -> QueueingHint:
    """``isSchedulableAfterPodEvent``: a pod deleted that held (or was nominated to) a node, or one scaled
    down (``isSchedulableAfterPodScaleDown``): the pod itself, or a pod on a node whose request of a
    resource the pod requests went down."""
    before, after = as_objects(EventPod, old, new)
    if before is None:
        raise HintError("expected the Pod before the event, got None")
    if after is None:
        return (
            QueueingHint.SKIP
            if not before.node_name and not before.nominated_node_name
            else QueueingHint.QUEUE
        )
    if after.pod.key == pod.key:
        return QueueingHint.QUEUE
    if not after.node_name:
        return QueueingHint.SKIP
    was, now = before.pod.requests, after.pod.requests
    down = any(amount and was.get(r, 0) > now.get(r, 0) for r, amount in pod.requests.items())
    return QueueingHint.QUEUE if down else QueueingHint.SKIP


def fits_empty(pod: Pod, node: Node) -> bool:
    """``isFit``: the pod's requests, and one pod, within the node's whole allocatable."""
    allocatable = node.allocatable
    return allocatable.get(PODS, 0) >= 1 and all(
        amount <= allocatable.get(r, 0) for r, amount in pod.requests.items() if amount > 0 and r != PODS
    )


def requested_increased(pod: Pod, before: Node, after: Node) -> bool:
    """``haveAnyRequestedResourcesIncreased``: more pods allowed, or more of a resource the pod requests."""
    was, now = before.allocatable, after.allocatable
    if now.get(PODS, 0) > was.get(PODS, 0):
        return True
    return any(amount > 0 and now.get(r, 0) > was.get(r, 0) for r, amount in pod.requests.items())


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """``isSchedulableAfterNodeChange``: a node added that the pod fits empty, or one whose allocatable
    grew in a resource the pod requests and that it now fits empty."""
    before, after = as_new(Node, old, new)
    if not fits_empty(pod, after):
        return QueueingHint.SKIP
    if before is None or requested_increased(pod, before, after):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


#: ``EventsToRegister``'s events (shared by the GPU plugins that count what is free the same way)
POD_FREES_ROOM = EventWithHint(
    ClusterEvent(Resource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN), after_pod_event
)
NODE_GROWS = EventWithHint(
    ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE), after_node_change
)


@register
class NodeResourcesFit(DynamicFilter, DynamicScore):
    name = "NodeResourcesFit"
    origin = "kube-scheduler"
    monotone = True

    def __init__(
        self,
        strategy: ScoringStrategy | None = None,
        ignored: frozenset[str] = frozenset(),
        ignored_groups: frozenset[str] = frozenset(),
    ):
        self.strategy = strategy or ScoringStrategy()
        self.ignored = ignored
        self.ignored_groups = ignored_groups
        self._filter_key = ("fit-requested", ignored, ignored_groups)

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> NodeResourcesFit:
        return cls(
            strategy_of(args),
            frozenset(args.get("ignoredResources") or ()),
            frozenset(args.get("ignoredResourceGroups") or ()),
        )

    def events_to_register(self) -> Sequence[EventWithHint]:
        return (POD_FREES_ROOM, NODE_GROWS)

    # -- filter ----------------------------------------------------------------------------
    def _req(self, ctx: PodContext) -> IntArray:
        """The pod's requests as the filter checks them: the ignored resources left out."""
        if not self.ignored and not self.ignored_groups:
            return ctx.req
        key = ("fit-req", self.ignored, self.ignored_groups)
        req = ctx.memo.get(key)
        if not isinstance(req, np.ndarray):
            names = ctx.state.resources[: len(ctx.req)]
            keep = [not ignored_by_filter(n, self.ignored, self.ignored_groups) for n in names]
            req = ctx.memo[key] = np.where(keep, ctx.req, 0)
        return req

    def _requested_columns(self, ctx: PodContext) -> list[tuple[int, int]]:
        """(column, amount) of every resource the filter checks, ``pods`` included (kept in ``ctx.memo``
        under the plugin's filter key, built once)."""
        cols = ctx.memo.get(self._filter_key)
        if not isinstance(cols, list):
            cols = ctx.memo[self._filter_key] = [
                (c, int(v)) for c, v in enumerate(self._req(ctx).tolist()) if v > 0
            ]
        return cols

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        return self._fits(ctx, ctx.state.free_of(idx))

    def _fits(self, ctx: PodContext, free: IntArray) -> BoolArray:
        fits: BoolArray = np.logical_and.reduce(free >= self._need(ctx), axis=1)  # (``all``, no wrapper)
        return fits

    def _need(self, ctx: PodContext) -> IntArray:
        """``_req`` where the pod asks for a resource, the least int64 where not (every node has that
        much free): a node fits where it has at least this much free of every resource."""
        key = ("fit-need", self.ignored, self.ignored_groups)
        need = ctx.memo.get(key)
        if not isinstance(need, np.ndarray):
            req = self._req(ctx)
            need = ctx.memo[key] = np.where(req > 0, req, np.iinfo(np.int64).min)
        return need

    def unresolvable_on(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        return self._beyond(ctx, ctx.state.alloc.take(idx, axis=0))

    def _beyond(self, ctx: PodContext, alloc: IntArray) -> BoolArray:
        req = self._req(ctx)
        beyond = (req > 0) & (req > alloc)
        beyond[:, ctx.state.resource_column(PODS)] = False
        return np.asarray(beyond.any(axis=1), dtype=bool)

    def reason_masks(self, ctx: PodContext, idx: IntArray) -> list[tuple[str, BoolArray]]:
        return self._masks(ctx, ctx.state.free_of(idx))

    def _masks(self, ctx: PodContext, free: IntArray) -> list[tuple[str, BoolArray]]:
        req = self._req(ctx)
        short = (req > 0) & (req > free)
        some: list[bool] = np.asarray(short.any(axis=0), dtype=bool).tolist()
        return [
            (insufficient_reason(ctx.state.resources[col]), short[:, col])
            for col in range(len(some))
            if some[col]
        ]

    def diagnose(
        self, ctx: PodContext, idx: IntArray
    ) -> tuple[BoolArray, list[tuple[str, BoolArray]], BoolArray]:
        alloc = ctx.state.alloc.take(idx, axis=0)
        free = alloc - ctx.state.requested.take(idx, axis=0)
        return self._fits(ctx, free), self._masks(ctx, free), self._beyond(ctx, alloc)

    # -- score -----------------------------------------------------------------------------
    def score(self, ctx: PodContext, idx: IntArray) -> IntArray:
        plan = resource_plan(ctx, self.strategy.resources, False, self)
        if len(plan.cols) == 0:
            return np.zeros(len(idx), dtype=np.int64)
        alloc, req, w = resource_columns(ctx, idx, plan)
        safe = np.maximum(alloc, 1)
        kind = self.strategy.type
        if kind == LEAST_ALLOCATED:
            per = np.where(req > alloc, 0, (alloc - req) * MAX_NODE_SCORE // safe)
        elif kind == MOST_ALLOCATED:
            per = np.minimum(req, alloc) * MAX_NODE_SCORE // safe
        else:
            util = np.where(req > alloc, MAX_NODE_SCORE, req * MAX_NODE_SCORE // safe)
            per = broken_linear(self.strategy.shape, util)
            w = np.where(per > 0, w, 0)
        total = (per * w).sum(axis=1)
        wsum = w.sum(axis=1)
        if kind == REQUESTED_TO_CAPACITY_RATIO:  # Go's math.Round: halves away from zero
            mean = np.floor(total / np.maximum(wsum, 1) + 0.5).astype(np.int64)
        else:
            mean = total // np.maximum(wsum, 1)
        return np.where(wsum > 0, mean, 0)

    # -- one node, in Python integers (the node a binding just changed) ---------------------
    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        alloc, requested, _ = row
        for c, want in self._requested_columns(ctx):  # noqa: SIM110  (a loop: no generator per node)
            if want > alloc[c] - requested[c]:
                return False
        return True

    def row_only(self, pod: Pod) -> bool:
        return True

    def score_node(self, ctx: PodContext, row: NodeRow) -> int:
        plan = resource_plan(ctx, self.strategy.resources, False, self)
        kind = self.strategy.type
        if kind == LEAST_ALLOCATED:
            return least_allocated_node(plan, row)
        total = wsum = 0
        for alloc, req, weight in row_columns(plan, row):
            if kind == LEAST_ALLOCATED:
                per = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc
            elif kind == MOST_ALLOCATED:
                per = min(req, alloc) * MAX_NODE_SCORE // alloc
            else:
                util = MAX_NODE_SCORE if req > alloc else req * MAX_NODE_SCORE // alloc
                per = broken_linear_point(self.strategy.shape, util)
                if per <= 0:
                    continue
            total += per * weight
            wsum += weight
        if wsum == 0:
            return 0
        return math.floor(total / wsum + 0.5) if kind == REQUESTED_TO_CAPACITY_RATIO else total // wsum
