"""cluster-autoscaler's decisions as pure functions: a request in, a reply out.

One ``RunOnce`` of cluster-autoscaler (``core/static_autoscaler.go``) decides, from the cluster as
it is: which node group grows and by how many nodes for the pods the scheduler could not place
(``scale_up``), which nodes are unneeded and which of them go (``scale_down``), and how many
warm nodes each group must start to keep its warm pool full (``keep_warm``). The control loop
(``control.cluster_autoscaler_loop``, later the live side) only keeps the timer, asks these in that
order and acts on each reply before asking the next, since a launch may fail on the cloud's side
(a stock-out) and what the next decision sees depends on it.

- ``scale_up``: over one snapshot of the cluster with a template copy for every upcoming node of every group
  (``scale_up.ScaleUpSnapshot``), pods that fit on an existing or upcoming node (one after another, highest
  priority first: ``filterOutSchedulable``) are put there and need no node; for the others each group with
  room, not in backoff and within the cluster-wide resource limits is estimated in a fork of that snapshot
  (``scale_up.estimate``) and the expander picks one, its new nodes cut to the limits
  (``resource_limits``) and, under ``--balance-similar-node-groups``, split with its similar groups
  (``node_group_balancing``); the pods too young for scale-up are left out first (``filterOutYoungPods``:
  ``young_pods``, ``ScaleUpRequest.young``); unless ``--max-nodes-total`` is reached, when the pods left are
  all very new nothing is estimated this loop and scale-down waits too (``allPodsAreNew``: ``new_pods``,
  ``ScaleUpReply.new_until``, ``ScaleDownRequest.disabled_for_loop``); when none grows, each pod left gets
  its ``NotTriggerScaleUp`` message (in the reply only when it changed since the pod's last one).
- ``scale_down``: nodes below the utilisation threshold whose pods fit elsewhere are unneeded
  (``scale_down.assess``; the pending pods ``scale_up``'s ``filterOutSchedulable`` put on nodes count among
  their pods: ``ScaleUpReply.placed``, ``ScaleDownRequest.placed``), from the first scan that finds them so
  (a node whose removal simulation failed is not assessed again for ``unremovableNodeRecheckTimeout``,
  ``RecentlyUnremovable`` until then:
  ``Planner.categorizeNodes``, ``Checker.FilterOutUnremovable``, ``unremovable.Nodes``); they go once unneeded
  for more than ``scaleDownUnneededTime`` (``unremovableReason``: not while ``!since.Add(time).Before(now)``,
  so with 10 s scans at the scan after the one at exactly that time; a node that is not Ready once unneeded
  for more than ``scaleDownUnreadyTime``, and never while ``scaleDownUnreadyEnabled`` is false), not within
  ``scaleDownDelayAfterAdd`` of a scale-up nor ``scaleDownDelayAfterDelete`` of a scan that started deletions
  (``in_cooldown``), never below a group's ``min`` (the nodes it is deleting counted:
  ``verifyMinSize``), within the deletion budgets (``budgets.ScaleDownBudgetProcessor.CropNodes``: at most
  ``--max-scale-down-parallelism`` deletions at once, ``--max-drain-parallelism`` of them drains, those in
  progress counted; empty nodes first, each kind taken a node group at a time: ``crop_to_budgets``). A scan
  simulates the removal of eligible candidates only until it has found ``unneededNodesLimit`` unneeded nodes
  (``unneeded_nodes_limit``), the empty candidates first, then those unneeded at the last scan
  (``EmptySorting``, ``PreviousCandidates``). Each node that may not go has upstream's ``UnremovableReason``.
- ``keep_warm``: a group with ``warm`` keeps that many empty GPU-ready nodes beyond what pods
  need (within ``max``).

Both read the snapshot upstream builds without the expendable pods (priority below
``--expendable-pods-priority-cutoff``: ``autoscaling.expendable``): an expendable pending pod triggers no
scale-up, an expendable pod's room is free, and a node running only expendable pods is empty. A pending pod
nominated to a node (``status.nominatedNodeName``: it waits for its victims there) triggers no scale-up
either, and takes its room on that node for both (``filterOutExpendable``).

A ``ZeroOrMaxNodeScaling`` group (a NodePool's ``zeroOrMaxNodeScaling``: a slice of hosts useful only whole)
grows to its max in one scale-up, whatever the estimate (``ComputeExpansionOption``), is never balanced
(``ComputeSimilarNodeGroups``), and is skipped when those nodes would pass a resource limit or
``--max-nodes-total`` (``filterValidScaleUpNodeGroups``); its nodes do not count against
``unneededNodesLimit`` (``atomicScaleDownNodesCount``), go only all together
(``AtomicResizeFilteringProcessor``: else ``AtomicScaleDownFailed``) and are taken whole, first, within the
deletion budgets (``CropNodes``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from gpufleet.autoscaling.drainability import DEFAULT_DELETE_OPTIONS, DeleteOptions, moved
from gpufleet.autoscaling.expanders import choose
from gpufleet.autoscaling.expendable import (
    DEFAULT_CUTOFF,
    expendable_on,
    split_pending,
)
from gpufleet.autoscaling.new_pods import new_until
from gpufleet.autoscaling.node_group_balancing import Balancing, balance, find_similar
from gpufleet.autoscaling.removal_memo import Kept, RemovalMemo
from gpufleet.autoscaling.resource_limits import apply_limits, delta_for_node, exceeded, limit_reason
from gpufleet.autoscaling.scale_down import (
    AS_IS,
    SIMULATION_REASONS,
    CreatedAt,
    Int8Array,
    PlacementBase,
    SnapshotPods,
    Unremovable,
    UnremovableReason,
    UtilizationRule,
    long_terminating_on,
    removable_together,
    simulate_removal,
    unremovable_reasons,
)
from gpufleet.autoscaling.scale_up import (
    ALL_OR_NOTHING,
    ATOMIC_TOTAL_EXCEEDED,
    MAX_TOTAL_REACHED,
    Estimate,
    PoolOption,
    ScaleUpSnapshot,
    estimate,
    not_triggered,
    rejections,
)
from gpufleet.cluster.state import ClusterState
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.pod import Pod
from gpufleet.scheduling.profile import Profile


def has_movable_pods(state: ClusterState, name: str, snapshot: SnapshotPods = AS_IS) -> bool:
    """Whether the node has a pod a drain would move (any but DaemonSet and mirror pods) in the ``snapshot``:
    the pending pods put on it among its pods, the expendable and long-terminating ones not (upstream's
    ``NodeToBeRemoved.PodsToReschedule``)."""
    i = state.index.get(name)
    if i is None:
        return False
    left_out = i in snapshot.expendable or i in snapshot.long_terminating
    on_node = snapshot.placed(state, i) if left_out else state.pods_on[i].values()
    return any(moved(a.pod) for a in on_node) or any(map(moved, snapshot.pending.get(i, ())))


def pending_on(state: ClusterState, placed: Sequence[tuple[Pod, str]]) -> dict[int, list[Pod]]:
    """The pending pods ``filterOutSchedulable`` put on the cluster's nodes (``ScaleUpReply.placed``) by
    node row, those on nodes gone since left out."""
    out: dict[int, list[Pod]] = {}
    for pod, name in placed:
        i = state.index.get(name)
        if i is not None:
            out.setdefault(i, []).append(pod)
    return out


@dataclass(frozen=True)
class ScaleUpRequest:
    now: float
    state: ClusterState
    profile: Profile
    pending: Sequence[Pod]  # pods the scheduler marked unschedulable
    options: Sequence[PoolOption]  # every autoscaled group, room and upcoming nodes counted
    backed_off: frozenset[str]  # groups in backoff after a failed scale-up
    expander: str
    rng: np.random.Generator  # the random expander's draws
    #: nodes no pod goes to (filterOutSchedulable, the estimates): being deleted, or upcoming and registered
    exclude: frozenset[int]
    total_reached: bool  # --max-nodes-total reached
    said: Mapping[str, str] = field(default_factory=dict)  # each pod's last NotTriggerScaleUp reason
    #: what is left below each cluster-wide resource limit (``resource_limits.resources_left``)
    resources_left: Mapping[str, int] = field(default_factory=dict)
    balancing: Balancing | None = None  # --balance-similar-node-groups (None: off)
    #: groups ``IsNodeGroupHealthy`` finds unhealthy (``autoscaling.cluster_state``): not ready for scale-up
    unhealthy: frozenset[str] = frozenset()
    #: the nodes --max-nodes-total still lets the cluster add (None: no limit); a ZeroOrMaxNodeScaling group
    #: that would pass it is skipped
    nodes_left: int | None = None
    #: ``allOrNothing`` (a ProvisioningRequest's best-effort-atomic scale-up): enough nodes for every
    #: pending pod left, or none
    all_or_nothing: bool = False
    #: pods put on the snapshot before the pending ones are filtered (where they fit): the pods of the
    #: ProvisioningRequests whose capacity is booked (``provReqProcessor.bookCapacity``)
    placed_first: Sequence[Pod] = ()
    #: the pending pods are those ``filterOutSchedulable`` left (those it put there: in ``placed_first``), or
    #: pods no pod list processor filters (a ProvisioningRequest's, injected after them): none is dropped as
    #: expendable or waits for a preemption
    filtered: bool = False
    #: --expendable-pods-priority-cutoff: pods of a lower priority are expendable (``autoscaling.expendable``)
    expendable_cutoff: int = DEFAULT_CUTOFF
    #: the pending pods' ``status.nominatedNodeName``, by pod key (those DefaultPreemption nominated)
    nominated: Mapping[str, str] = field(default_factory=dict)
    #: the pending pods too young to trigger a scale-up (``autoscaling.young_pods``): ``filterOutYoungPods``
    #: leaves them out of those ``filterOutSchedulable`` left (put on a node, they are placed all the same)
    young: AbstractSet[str] = frozenset()
    #: each pending pod's ``creationTimestamp``, by key: with the pods left all very new, no scale-up this
    #: loop (``allPodsAreNew``: ``autoscaling.new_pods``); None: no wait (``--bypassed-scheduler-names`` set,
    #: or a ProvisioningRequest's pods, whose ``ScaleUpEnforcer`` forces the scale-up)
    created_s: Mapping[str, float] | None = None


@dataclass(frozen=True)
class ScaleUp:
    group: str  # the expander's choice
    nodes: int  # in all
    pods: tuple[str, ...]
    #: each group's share of the nodes (``balanceScaleUps``): the chosen group alone, or with
    #: --balance-similar-node-groups split with its similar groups
    split: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ScaleUpReply:
    scale_up: ScaleUp | None = None
    #: pods no group grows for, with their new NotTriggerScaleUp reason (only where it changed)
    not_triggered: tuple[tuple[str, str], ...] = ()
    #: the pending pods put on the cluster's nodes, each with its node, in that order: those waiting for a
    #: preemption on the node they are nominated to (``addPreemptingPodsToSnapshot``), then those
    #: ``filterOutSchedulable`` put there: they stay in ``RunOnce``'s ``ClusterSnapshot``, which scale-down
    #: reads next (``ScaleDownRequest.placed``); those put on upcoming nodes are not listed (no upcoming node
    #: is a scale-down candidate or a destination of a drain)
    placed: tuple[tuple[Pod, str], ...] = ()
    #: the pods left were all very new (``allPodsAreNew``): the orchestrator was not asked, scale-down is in
    #: cooldown for this loop (``DisableScaleDownForLoop``); the time from which they are no longer new, and
    #: those pods
    new_until: float | None = None
    new_pods: tuple[str, ...] = ()
    #: no group grows, no pod was put on the cluster's nodes and no pod-aware filter judged a pending pod
    #: (the pods went to upcoming nodes or nowhere; the estimates read only the groups' templates): the same
    #: ask gets the same answer while the cluster only loses room (pods placed, none gone, no node changed)
    room_only: bool = False

    @property
    def acted(self) -> bool:
        return self.scale_up is not None


def _over_limits(
    options: Sequence[PoolOption], left: Mapping[str, int], nodes_left: int | None = None
) -> dict[str, str]:
    """The groups skipped for a cluster-wide limit, with their skip reason (``filterValidScaleUpNodeGroups``):
    a ``ZeroOrMaxNodeScaling`` group whose growth to its max would pass ``--max-nodes-total``
    (``atomic scale-up exceeds cluster node count limit``), else a group the nodes one scale-up of which
    (one, or the atomic group's all: ``numNodes``) would exceed a resource limit
    (``IsNodeGroupResourceExceeded``). A group with no room left is skipped before (max size reached)."""
    out: dict[str, str] = {}
    for o in options:
        count = o.nodes_at_once()
        if o.room <= 0:
            continue
        if o.atomic and nodes_left is not None and count > nodes_left:
            out[o.name] = ATOMIC_TOTAL_EXCEEDED
            continue
        resources = exceeded(left, {r: v * count for r, v in delta_for_node(o.template).items()})
        if resources:
            out[o.name] = limit_reason(resources)
    return out


def _similar_groups(
    valid: Sequence[PoolOption], pods: Sequence[Pod], snapshot: ScaleUpSnapshot, balancing: Balancing | None
) -> dict[str, list[PoolOption]]:
    """``ComputeSimilarNodeGroups`` for each group: none without balancing, nor for a ``ZeroOrMaxNodeScaling``
    group, nor for a group no pod fits; else its similar groups among those valid for scale-up whose template
    takes every pod its own takes (``matchingSchedulablePodGroups``)."""
    if balancing is None:
        return {}
    takes = {o.name: {p.key for p in pods if not rejections(p, o, snapshot)} for o in valid}
    return {
        o.name: [
            s for s in find_similar(o, valid, balancing.ignored_labels) if takes[o.name] <= takes[s.name]
        ]
        for o in valid
        if takes[o.name] and not o.atomic
    }


def _with_similar_room(
    option: PoolOption, similar: Sequence[PoolOption], balancing: Balancing | None
) -> PoolOption:
    """The group as its estimate sees it: with similar groups, its room the room they all have below their
    max, within the cluster's (``SngCapacityThreshold``)."""
    if balancing is None or not similar:
        return option
    room = sum(max(g.max_size - g.size, 0) for g in (option, *similar))
    return replace(option, room=min(room, balancing.room))


def _split(
    option: PoolOption, similar: Sequence[PoolOption], nodes: int, balanced: bool
) -> tuple[tuple[str, int], ...]:
    """``balanceScaleUps``: the nodes split between the group and its similar groups, or the group alone."""
    if not balanced:
        return ((option.name, nodes),)
    return tuple(balance([(g.name, g.size, g.max_size) for g in (option, *similar)], nodes))


def _at_max(option: Estimate, nodes: int) -> Estimate:
    """``ComputeExpansionOption`` for a ``ZeroOrMaxNodeScaling`` group: the option's node count is the group's
    max size (here what is left below it), whatever the estimate packed the pods on; each resource's waste is
    the share of those nodes the pods leave unused."""
    if nodes <= 0 or nodes == option.nodes:
        return option
    wasted = {r: 1 - (1 - w) * option.nodes / nodes for r, w in option.waste.items()}
    return replace(option, nodes=nodes, waste=wasted)


def scale_up(request: ScaleUpRequest) -> ScaleUpReply:
    """``filterOutExpendable`` (``autoscaling.expendable``: the expendable pods dropped, those waiting for a
    preemption put on their nodes), ``filterOutSchedulable``, then ``ScaleUpOrchestrator.ScaleUp`` over the
    snapshot, built without the cluster's expendable pods."""
    if not request.pending:
        return ScaleUpReply()
    state, cutoff = request.state, request.expendable_cutoff
    pending, waiting = (
        (list(request.pending), [])
        if request.filtered
        else split_pending(request.pending, state, cutoff, request.nominated)
    )
    names = tuple((pod, state.nodes[row].name) for pod, row in waiting)
    if not pending:
        return ScaleUpReply(placed=names)
    options, first = list(request.options), request.placed_first
    snapshot = ScaleUpSnapshot(
        state, request.profile, [*first, *(p for p, _ in waiting), *pending], options, request.exclude,
        expendable_on(state, cutoff),
    )  # fmt: skip
    for pod, row in waiting:
        snapshot.force_put(pod, row)
    snapshot.filter_out_schedulable(first)
    booked = len(snapshot.placed)
    remaining = list(pending) if request.filtered else snapshot.filter_out_schedulable(pending)
    placed = names + tuple((pod, state.nodes[row].name) for pod, row in snapshot.placed[booked:])
    room_only = not placed and not first and all(not snapshot.states(pod) for pod in pending)
    remaining = [pod for pod in remaining if pod.key not in request.young]
    if not remaining:
        return ScaleUpReply(placed=placed, room_only=room_only)
    # RunOnce: --max-nodes-total reached is checked first, then allPodsAreNew
    if request.created_s is not None and not request.total_reached:
        until = new_until(remaining, request.created_s, request.now)
        if until is not None:
            return ScaleUpReply(placed=placed, new_until=until, new_pods=tuple(p.key for p in remaining))
    limited = _over_limits(options, request.resources_left, request.nodes_left)
    skipped = request.unhealthy | request.backed_off | limited.keys()
    valid = [o for o in options if o.name not in skipped and o.room > 0]
    similar = _similar_groups(valid, remaining, snapshot, request.balancing)
    estimates = [
        e
        for o in valid
        if (
            e := estimate(
                remaining, _with_similar_room(o, similar.get(o.name, []), request.balancing), snapshot
            )
        )
    ]
    atomic = {o.name: o.nodes_at_once() for o in valid if o.atomic}
    estimates = [_at_max(e, atomic[e.pool]) if e.pool in atomic else e for e in estimates]
    if request.all_or_nothing:
        estimates = [e for e in estimates if len(e.pods) == len(remaining)]
    best = choose(estimates, request.expander, request.rng)
    reasons: dict[str, str] = {}
    if best is not None:
        option = next(o for o in valid if o.name == best.pool)
        nodes = apply_limits(best.nodes, request.resources_left, delta_for_node(option.template))
        split = _split(option, similar.get(best.pool, []), nodes, request.balancing is not None)
        if not (request.all_or_nothing and sum(n for _, n in split) < best.nodes):
            return ScaleUpReply(ScaleUp(best.pool, sum(n for _, n in split), best.pods, split), placed=placed)
        reasons = {pod.key: ALL_OR_NOTHING for pod in remaining}
    if not reasons and request.total_reached:
        reasons = {pod.key: MAX_TOTAL_REACHED for pod in remaining}
    elif not reasons:
        reasons = not_triggered(
            remaining, options, set(request.backed_off), snapshot, limited, request.unhealthy
        )
    changed = tuple(
        (pod.key, reasons[pod.key])
        for pod in remaining
        if reasons[pod.key] and request.said.get(pod.key) != reasons[pod.key]
    )
    return ScaleUpReply(None, changed, placed, room_only=room_only)


class Candidate(NamedTuple):
    """A node scale-down may remove: its group's name and its group's size (its target size: launched, not
    deleted) and ``min``, and whether the node is Ready (a tuple: every scan lists them afresh); for a
    ``ZeroOrMaxNodeScaling`` group (``atomic``), also how many of its nodes are registered in the cluster."""

    node: str
    group: str
    group_size: int
    group_min: int
    ready: bool = True
    atomic: bool = False
    registered: int = 0


@dataclass
class ScaleDownRequest:
    now: float
    state: ClusterState
    profile: Profile
    #: nodes of autoscaled groups above their min, not starting, not warm, not being deleted
    candidates: Sequence[Candidate]
    utilization: UtilizationRule  # the thresholds, and whether DaemonSet pods count
    unneeded_time_s: float
    delay_after_add_s: float  # --scale-down-delay-after-add
    last_scale_up_s: float
    unneeded_since: Mapping[str, float]  # what the previous scans found
    deleting: frozenset[str]
    budgets: Sequence[DisruptionBudget]
    allowed: Mapping[str, int]  # each budget's disruptionsAllowed, by namespace/name
    daemon_pods: frozenset[str]
    computing: Callable[[str], bool] | None  # gpuAwareScaleDown: whether a pod computes on GPUs (None: off)
    #: static-filter verdicts shared by the assessments of one scan (the loop keeps none across scans)
    verdicts: dict[tuple[object, ...], Int8Array] = field(default_factory=dict)
    #: False when nothing changed since the last scan: the verdicts stand, no node is assessed
    assess: bool = True
    #: the verdicts of the last scan that assessed nodes, and what they were made of (kept by the loop;
    #: None: every node is assessed afresh)
    memo: RemovalMemo | None = None
    #: --scale-down-unready-enabled: a node that is not Ready may be unneeded (else it never is) ...
    unready_enabled: bool = True
    #: ... and goes once unneeded for --scale-down-unready-time, not --scale-down-unneeded-time
    unready_time_s: float = 20 * 60.0
    #: each group's nodes this autoscaler is deleting (``ActuationStatus.DeletionsCount``: drained, or
    #: deleted, and not gone yet); they count against its ``min``
    deletions: Mapping[str, int] = field(default_factory=dict)
    #: the nodes earlier scans' removal simulations found unremovable, each with the time until which it is
    #: not checked again (``unremovable.Nodes``' timeouts) ...
    unremovable_until: Mapping[str, float] = field(default_factory=dict)
    #: ... found now, for --unremovable-node-recheck-timeout
    recheck_timeout_s: float = 5 * 60.0
    #: --max-scale-down-parallelism: nodes (empty and drained) deleted at once ...
    max_parallelism: int = 10
    #: ... --max-drain-parallelism: of them, nodes drained
    max_drain_parallelism: int = 1
    #: the deletions this autoscaler has in progress, empty nodes and drained ones
    #: (``ActuationStatus.DeletionsInProgress``: started, the node not gone yet)
    in_progress: tuple[int, int] = (0, 0)
    #: the nodes the last scan found unneeded, those it removed included (``len(unneededNodes.AsList())``
    #: before this scan's ``Update``; None: ``len(unneeded_since)``) ...
    unneeded_before: int | None = None
    #: ... and the planner's smallest update interval (``minUpdateInterval``): both bound the unneeded nodes
    #: a scan looks for (``unneeded_nodes_limit``)
    update_interval_s: float = 10.0
    #: the pending pods this scan's ``filterOutSchedulable`` put on the cluster's nodes, each with its node
    #: (``ScaleUpReply.placed``): scale-down sees them there, as upstream's planner reads the snapshot they
    #: were packed into (``scale_down.PendingOn``)
    placed: Sequence[tuple[Pod, str]] = ()
    #: --expendable-pods-priority-cutoff: the snapshot scale-down reads has no pod of a lower priority
    #: (``autoscaling.expendable``): not counted in utilisation, not moved, their room free
    expendable_cutoff: int = DEFAULT_CUTOFF
    #: each placed pod's ``creationTimestamp``, by key, which a ``kube-system`` pod's age counts from for
    #: ``--blocking-system-pod-distruption-timeout`` (None, or where it says None: its placement)
    created: CreatedAt | None = None
    #: --scale-down-delay-after-delete, and the last scan that started deleting nodes
    #: (``lastScaleDownDeleteTime``)
    delay_after_delete_s: float = 0.0
    last_delete_s: float = -math.inf
    #: --skip-nodes-with-system-pods, --skip-nodes-with-custom-controller-pods: the drainability rules kept
    delete_options: DeleteOptions = DEFAULT_DELETE_OPTIONS
    #: this loop's scale-up waited for very new pods (``DisableScaleDownForLoop``: ``ScaleUpReply.new_until``)
    disabled_for_loop: bool = False


@dataclass(frozen=True)
class ScaleDownReply:
    unneeded_since: dict[str, float]
    remove: tuple[Candidate, ...] = ()  # in this order; a node with movable pods is drained first
    #: the unneeded nodes that may not go yet, and why (``RemovableAt``'s unremovable nodes: not unneeded,
    #: or not unready, long enough; their group at its min; then ``FilterUnremovableNodes``': not all of
    #: their ZeroOrMaxNodeScaling group); none asked in cooldown
    unremovable: tuple[tuple[str, Unremovable], ...] = ()
    #: the candidates this scan assessed that are not unneeded, and why (``categorizeNodes``:
    #: ``FilterOutUnremovable``'s and the removal simulation's unremovable nodes); none when it assessed none
    not_unneeded: tuple[tuple[str, Unremovable], ...] = ()
    #: within ``scaleDownDelayAfterAdd`` of a scale-up, or ``scaleDownDelayAfterDelete`` of a scan that
    #: started deleting nodes (``isScaleDownInCooldown``): no node was asked to go
    cooldown: bool = False
    #: the nodes not checked again until then, this scan's finds included (the next ``unremovable_until``)
    unremovable_until: dict[str, float] = field(default_factory=dict)
    #: the scan stopped simulating removals at ``unneededNodesLimit``: some eligible candidates were not
    #: looked at (the next scan looks again, its limit higher, though nothing changed)
    cut: bool = False
    #: out of cooldown, the least of the unneeded nodes' times plus their wait (infinite: none, or in
    #: cooldown): until a scan past it, one with nothing to assess finds no node ripe
    ripens_at: float = math.inf

    @property
    def acted(self) -> bool:
        return bool(self.remove)

    @property
    def unneeded_count(self) -> int:
        """The nodes this scan found unneeded, those it removes included (``UpdateUnneededNodesCount``
        counts them before ``NodesToDelete``)."""
        return len(self.unneeded_since) + len(self.remove)


def in_cooldown(request: ScaleDownRequest) -> bool:
    """``isScaleDownInCooldown``: scale-down disabled for this loop (its scale-up waited for very new pods),
    or a scale-up, or a scan that started deleting nodes, more recent than its delay
    (``last.Add(delay).After(now)``; a failed scale-down's delay never starts in gpufleet:
    ``AutoscalerSettings.scale_down_delay_after_failure_s``)."""
    return cooling(
        request.now,
        request.disabled_for_loop,
        (request.last_scale_up_s, request.delay_after_add_s),
        (request.last_delete_s, request.delay_after_delete_s),
    )


def cooling(now: float, disabled: bool, *last_and_delay: tuple[float, float]) -> bool:
    """``in_cooldown`` at ``now``: disabled for this loop, or a (last time, delay) pair whose delay has not
    passed since (``now - last < delay``)."""
    return disabled or any(now - last < delay for last, delay in last_and_delay)


def recently_unremovable(until: float) -> Unremovable:
    """Why a node the removal simulation found unremovable is not checked again yet (``FilterOutUnremovable``:
    ``RecentlyUnremovable`` while ``unremovableNodes.IsRecent``)."""
    message = f"found unremovable by the removal simulation, not checked again before {until:g}s"
    return Unremovable(UnremovableReason.RECENTLY_UNREMOVABLE, f"{message} (unremovableNodeRecheckTimeout)")


def unneeded_nodes_limit(
    parallelism: int, unneeded_before: int, unneeded_time_s: float, update_interval_s: float
) -> int:
    """``Planner.unneededNodesLimit``: with N ``--max-scale-down-parallelism``, the nodes found unneeded
    before plus N and a buffer of N more, but never above N times the scans within ``ScaleDownUnneededTime``
    (at least one; counted in whole nanoseconds, as upstream's durations) plus the buffer."""
    n = parallelism
    interval = max(round(update_interval_s * 1e9), 1)
    unneeded_time = max(round(unneeded_time_s * 1e9), interval)
    return min(unneeded_before + 2 * n, n * (unneeded_time // interval) + n)


def recalls(state: ClusterState, placed: Sequence[tuple[Pod, str]]) -> bool:
    """Whether a scan's verdicts may come from the removal memo (``autoscaling.removal_memo``): not with DRA
    (a pool's utilisation moves with claims anywhere), nor while a placed pod (or a pending one put on a
    node, ``placed``) has inter-pod affinity terms (its anti-affinity may repel a moved pod from a whole
    domain)."""
    if state.dra is not None or state.placed_with_affinity:
        return False
    return all(p.pod_affinity is None for p, _ in placed)


def _assess(
    request: ScaleDownRequest,
    candidates: Sequence[Candidate],
    limit: int,
    snapshot: SnapshotPods,
) -> dict[str, Unremovable | None]:
    """Why each candidate is not unneeded (None: it is): ``unremovable_reasons``, then the removal simulation,
    each verdict recalled from the memo while it stands. ``categorizeNodes`` simulates the eligible
    candidates (``FilterOutUnremovable``'s) in turn until ``limit`` are found unneeded (the nodes of
    ``ZeroOrMaxNodeScaling`` groups not counted: ``atomicScaleDownNodesCount``): the others are left
    out. When that may cut, they are taken empty ones first, then those unneeded at the last scan, else in
    the candidates' order (the sort of ``ScaleDownCandidatesSortingProcessor``: ``EmptySorting``,
    ``PreviousCandidates``)."""
    state = request.state
    exclude = {state.index[n] for n in request.deleting if n in state.index}
    # verdicts earlier scans found that still stand (removal_memo); the others are made afresh
    memo = request.memo if recalls(state, request.placed) else None
    if memo is not None and candidates:
        memo.begin(state, frozenset(exclude), snapshot, request.expendable_cutoff)
        again = memo.again(candidates, limit)  # (every verdict of the last scan standing: the usual scan)
        if again is not None:
            return again
    rows = [state.index[c.node] for c in candidates]
    # ScaleDownUnreadyDisabled: a verdict that depends on the node's readiness is neither recalled nor kept
    unready = (
        set()
        if request.unready_enabled
        else {i for c, i in zip(candidates, rows, strict=True) if not c.ready}
    )
    recalled = (
        memo.recall(state, zip((c.node for c in candidates), rows, strict=True), unready)
        if memo is not None
        else [None] * len(rows)
    )
    fresh = [i for i, known in zip(rows, recalled, strict=True) if known is None]
    judged = unremovable_reasons(state, fresh, request.utilization, unready, snapshot) if fresh else []
    reasons = dict(zip(fresh, judged, strict=True))
    out: dict[str, Unremovable | None] = {}
    eligible: list[tuple[Candidate, int, Kept | None]] = []
    for c, i, known in zip(candidates, rows, recalled, strict=True):
        why = known.why if known is not None else reasons[i]
        if why is None or (known is not None and why.reason in SIMULATION_REASONS):
            eligible.append((c, i, known))
            continue
        out[c.node] = why  # not eligible
        if known is None and memo is not None and i not in unready:
            memo.keep(state, c.node, i, -1, why)
    if len(eligible) > limit:  # stable: the candidates' order within each rank
        before = request.unneeded_since
        eligible.sort(key=lambda e: (has_movable_pods(state, e[0].node, snapshot), e[0].node not in before))
    # what the removal simulations share (a scan whose verdicts all stand returned above)
    base = PlacementBase(state, exclude, snapshot)
    budgets, allowed, daemon_pods = list(request.budgets), dict(request.allowed), set(request.daemon_pods)
    found = 0
    for c, i, known in eligible:
        if found >= limit:
            break
        if known is not None:
            why = known.why
        else:
            verdict = simulate_removal(
                state, i, request.profile, budgets, allowed, daemon_pods, base, request.computing,
                request.verdicts, request.now, request.delete_options, request.created,
            )  # fmt: skip
            why = verdict.why
            if memo is not None and i not in unready:
                memo.keep(state, c.node, i, verdict.examined, why)
        found += why is None and not c.atomic  # a ZeroOrMaxNodeScaling group's nodes are not counted
        out[c.node] = why
    if memo is not None and candidates:
        memo.settle(candidates, rows, out, len(eligible))
    return out


def _above_min(
    ripe: Sequence[Candidate], movable: Mapping[str, bool], deletions: Mapping[str, int]
) -> tuple[list[Candidate], list[tuple[str, Unremovable]]]:
    """``Nodes.RemovableAt``'s min-size rule (``core/scaledown/unneeded/nodes.go``, ``verifyMinSize``): empty
    nodes first, then those to drain, each removable only while its group's size less the deletions in
    progress there (``ActuationStatus.DeletionsCount``) is above its ``min``, the size counting down with each
    node found removable; the others ``NodeGroupMinSizeReached``."""
    sizes = {c.group: c.group_size - deletions.get(c.group, 0) for c in ripe}
    removable: list[Candidate] = []
    at_min: list[tuple[str, Unremovable]] = []
    for c in sorted(ripe, key=lambda c: movable[c.node]):  # stable: by name within each kind
        if sizes[c.group] <= c.group_min:
            going = deletions.get(c.group, 0)
            message = f"node group {c.group} is at its min size ({c.group_min})" + (
                f" with {going} of its nodes being deleted" if going else ""
            )
            at_min.append((c.node, Unremovable(UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED, message)))
        else:
            sizes[c.group] -= 1
            removable.append(c)
    return removable, at_min


def _whole(nodes: Sequence[Candidate]) -> bool:
    """Whether the nodes are all of their ``ZeroOrMaxNodeScaling`` group: as many as its target size, or as
    its registered nodes (instances that never registered do not hold its scale-down back)."""
    return len(nodes) in (nodes[0].group_size, nodes[0].registered)


def _atomic_whole(
    removable: Sequence[Candidate],
) -> tuple[list[Candidate], list[tuple[str, Unremovable]]]:
    """``AtomicResizeFilteringProcessor.FilterUnremovableNodes``
    (``processors/nodes/scale_down_set_processor.go``): the removable nodes of a ``ZeroOrMaxNodeScaling``
    group go only all together: when they are not the whole group (``_whole``), each is
    ``AtomicScaleDownFailed``; the others pass."""
    atomic = {g[0].group: g for g in _by_group([c for c in removable if c.atomic])}
    failed = [name for name, nodes in atomic.items() if not _whole(nodes)]
    kept = [c for c in removable if c.group not in failed]
    why: list[tuple[str, Unremovable]] = []
    for name in failed:
        nodes = atomic[name]
        message = (
            f"node group {name} scales down only whole (ZeroOrMaxNodeScaling): {len(nodes)} of its nodes are "
            f"removable, all {nodes[0].registered} have to be scaled down atomically"
        )
        why += [(c.node, Unremovable(UnremovableReason.ATOMIC_SCALE_DOWN_FAILED, message)) for c in nodes]
    return kept, why


def _by_group(nodes: Sequence[Candidate]) -> list[list[Candidate]]:
    """``ScaleDownBudgetProcessor.group``: the nodes by node group, the groups in the order of their first
    node, each group's nodes in order."""
    groups: dict[str, list[Candidate]] = {}
    for c in nodes:
        groups.setdefault(c.group, []).append(c)
    return list(groups.values())


def _crop(groups: Sequence[list[Candidate]], budget: int) -> list[Candidate]:
    """``cropIndividualNodes``: whole groups in order, the last one cut to what is left of ``budget``."""
    out: list[Candidate] = []
    for nodes in groups:
        left = budget - len(out)
        if left < 1:
            break
        out += nodes[:left]
    return out


def crop_to_budgets(
    empty: Sequence[Candidate],
    drain: Sequence[Candidate],
    max_parallelism: int,
    max_drain_parallelism: int,
    in_progress: tuple[int, int] = (0, 0),
) -> tuple[list[Candidate], list[Candidate]]:
    """``ScaleDownBudgetProcessor.CropNodes``: of ``max_parallelism`` less the deletions in progress
    (``in_progress``: empty, drained), and of ``max_drain_parallelism`` less the drains in progress, the
    ``ZeroOrMaxNodeScaling`` groups go first, each whole or not at all: those with empty nodes (with their
    nodes to drain), then those with nodes to drain only, in order, until one does not fit what is left (the
    first one taken may overflow it, unless nothing is left of it: single nodes must not starve slices); a
    group whose nodes are not all of it (``_whole``) is passed over. Then the empty nodes of the other groups
    take what is left, and their nodes to drain the rest, within the drain budget. Each kind is grouped by
    node group and taken a group at a time."""
    empty_groups, drain_groups = _by_group(empty), _by_group(drain)
    empty_going, drains_going = in_progress
    parallelism = max_parallelism - empty_going - drains_going
    drain_budget = max_drain_parallelism - drains_going
    atomic_drains = {g[0].group: g for g in drain_groups if g[0].atomic}
    emptied: list[Candidate] = []
    drained: list[Candidate] = []
    can_overflow = True
    for nodes in (g for g in empty_groups if g[0].atomic):
        drains = atomic_drains.get(nodes[0].group, [])
        over = parallelism < len(nodes) + len(drains) or drain_budget < len(drains)
        if over and (parallelism == 0 or (drains and drain_budget == 0) or not can_overflow):
            break
        if not _whole([*nodes, *drains]):
            continue
        emptied += nodes
        drained += drains
        parallelism -= len(nodes) + len(drains)
        drain_budget -= len(drains)
        can_overflow = False
    drain_budget = min(parallelism, drain_budget)
    with_empty = {c.group for c in empty if c.atomic}
    for nodes in (g for g in drain_groups if g[0].atomic and g[0].group not in with_empty):
        if drain_budget < len(nodes) and (drain_budget == 0 or not can_overflow):
            break
        if not _whole(nodes):
            continue
        drained += nodes
        parallelism -= len(nodes)
        drain_budget -= len(nodes)
        can_overflow = False
    single = _crop([g for g in empty_groups if not g[0].atomic], parallelism)
    emptied += single
    parallelism -= len(single)
    drained += _crop([g for g in drain_groups if not g[0].atomic], min(parallelism, drain_budget))
    return emptied, drained


def _drains_that_fit(
    request: ScaleDownRequest,
    emptied: Sequence[Candidate],
    drained: Sequence[Candidate],
    snapshot: SnapshotPods,
) -> list[Candidate]:
    """The nodes to drain that can go together with the empty nodes deleted beside them (and the deletions
    in progress): upstream's planner keeps each removal it found possible in the snapshot the next
    candidate is simulated on (``persistSuccessfulSimulations``), so the nodes it deletes in one scan can
    go together; gpufleet simulates each candidate on the cluster as it is, and checks the scan's
    deletions together here (``removable_together``), in order: a drain whose pods would no longer all
    fit is left for a later scan. One drain alone, with no empty node beside it, needs no second look."""
    if not drained or (len(drained) == 1 and not emptied):
        return list(drained)
    state = request.state
    gone = {state.index[n] for n in request.deleting if n in state.index}
    gone |= {state.index[c.node] for c in emptied}
    kept: list[Candidate] = []
    for c in drained:
        rows = [state.index[k.node] for k in (*kept, c)]
        budgets, allowed, daemons = list(request.budgets), dict(request.allowed), set(request.daemon_pods)
        if removable_together(
            state, rows, request.profile, budgets, allowed, daemons, gone, request.now, snapshot,
            request.delete_options, request.created,
        ):  # fmt: skip
            kept.append(c)
    return kept


def _snapshot_pods(request: ScaleDownRequest) -> SnapshotPods:
    """How the snapshot the scan reads differs from the cluster: the pending pods put on nodes, the
    expendable and the long-terminating pods left out."""
    state = request.state
    return SnapshotPods(
        pending_on(state, request.placed),
        expendable_on(state, request.expendable_cutoff),
        long_terminating_on(state, request.now),
    )


def scale_down(request: ScaleDownRequest) -> ScaleDownReply:
    state, now = request.state, request.now
    # unremovable.Nodes.Update: a node stays recently unremovable while in the cluster and its time after now
    recheck = {n: t for n, t in request.unremovable_until.items() if t > now and n in state.index}
    unneeded = dict(request.unneeded_since)
    candidates = list(request.candidates) if request.assess else []
    if not candidates and not unneeded:  # nothing to assess and nothing unneeded: nothing found, none goes
        return ScaleDownReply({}, cooldown=in_cooldown(request), unremovable_until=recheck)
    # FilterOutUnremovable: a recently unremovable node is not assessed (IsRecent comes before every check)
    assessed = [c for c in candidates if c.node not in recheck]
    snapshot: SnapshotPods | None = None  # (made where a verdict or a removal reads it)
    verdicts: dict[str, Unremovable | None] = {}
    if assessed:
        before = len(unneeded) if request.unneeded_before is None else request.unneeded_before
        limit = unneeded_nodes_limit(
            request.max_parallelism, before, request.unneeded_time_s, request.update_interval_s
        )
        snapshot = _snapshot_pods(request)
        verdicts = _assess(request, assessed, limit, snapshot)
    cut = len(verdicts) < len(assessed)
    not_unneeded: list[tuple[str, Unremovable]] = []
    for c in candidates:
        if c.node in verdicts:
            why = verdicts[c.node]
        elif c.node in recheck:
            why = recently_unremovable(recheck[c.node])
        else:  # past unneededNodesLimit: neither unneeded nor unremovable
            unneeded.pop(c.node, None)
            continue
        if why is None:
            unneeded.setdefault(c.node, now)
            continue
        unneeded.pop(c.node, None)
        not_unneeded.append((c.node, why))
        if c.node in verdicts and why.reason in SIMULATION_REASONS:  # categorizeNodes: AddTimeout
            recheck[c.node] = now + request.recheck_timeout_s
    if request.assess:  # Nodes.Update: the unneeded nodes are those this scan found
        for name in unneeded.keys() - {c.node for c in candidates}:
            del unneeded[name]
    if in_cooldown(request):
        return ScaleDownReply(
            unneeded, not_unneeded=tuple(not_unneeded), cooldown=True, unremovable_until=recheck, cut=cut
        )
    by_node = {c.node: c for c in request.candidates}
    ripe: list[Candidate] = []
    unremovable: list[tuple[str, Unremovable]] = []
    ripens_at = math.inf
    for name, since in sorted(unneeded.items()):
        found = by_node.get(name)
        if found is None:
            continue
        # RemovableAt: unneeded for more than ScaleDownUnneededTime, an unready node for more than
        # ScaleDownUnreadyTime (unremovableReason: NotUnneededLongEnough while !since.Add(time).Before(now))
        wait, flag, code = (
            (request.unneeded_time_s, "scaleDownUnneededTime", UnremovableReason.NOT_UNNEEDED_LONG_ENOUGH)
            if found.ready
            else (request.unready_time_s, "scaleDownUnreadyTime", UnremovableReason.NOT_UNREADY_LONG_ENOUGH)
        )
        ripens_at = min(ripens_at, since + wait)
        if since + wait < now:
            ripe.append(found)
        else:
            said = "" if found.ready else "unready and "
            message = f"{said}unneeded for {now - since:g}s, not more than {flag} ({wait:g}s)"
            unremovable.append((name, Unremovable(code, message)))
    if not ripe:  # none may go yet: nothing to crop to the budgets, nothing drained
        return ScaleDownReply(
            unneeded,
            (),
            tuple(unremovable),
            tuple(not_unneeded),
            unremovable_until=recheck,
            cut=cut,
            ripens_at=ripens_at,
        )
    if snapshot is None:
        snapshot = _snapshot_pods(request)
    movable = {c.node: has_movable_pods(state, c.node, snapshot) for c in ripe}
    removable, at_min = _above_min(ripe, movable, request.deletions)
    removable, partial = _atomic_whole(removable)
    unremovable += at_min + partial
    emptied, drained = crop_to_budgets(
        [c for c in removable if not movable[c.node]],
        [c for c in removable if movable[c.node]],
        request.max_parallelism,
        request.max_drain_parallelism,
        request.in_progress,
    )
    fit = _drains_that_fit(request, emptied, drained, snapshot)
    # a ZeroOrMaxNodeScaling group one of whose drains cannot go with the others waits, whole
    waits = {c.group for c in drained if c.atomic and c not in fit}
    removed = [c for c in (*emptied, *fit) if c.group not in waits]
    for c in removed:
        unneeded.pop(c.node, None)
    return ScaleDownReply(
        unneeded,
        tuple(removed),
        tuple(unremovable),
        tuple(not_unneeded),
        unremovable_until=recheck,
        cut=cut,
        ripens_at=ripens_at,
    )


@dataclass(frozen=True)
class WarmGroup:
    name: str
    warm: int  # how many empty GPU-ready nodes it keeps
    limit: int  # the group's max (or its size plus warm, without one)
    nodes: int  # launched, not deleted
    warm_nodes: tuple[str, ...]  # its warm nodes now
    coming: int  # warm nodes still starting


@dataclass(frozen=True)
class WarmReply:
    used: tuple[str, ...]  # warm nodes no longer warm: gone, or a pod took them
    launch: tuple[tuple[str, int], ...]  # (group, warm nodes to start), until one launch fails


def keep_warm(groups: Sequence[WarmGroup], state: ClusterState) -> WarmReply:
    used = tuple(
        name
        for g in groups
        for name in sorted(g.warm_nodes)
        if name not in state.index or has_movable_pods(state, name)
    )
    launch = []
    for g in groups:
        left = len([n for n in g.warm_nodes if n not in used])
        room = max(g.limit - g.nodes, 0)
        launch.append((g.name, min(max(g.warm - left - g.coming, 0), room)))
    return WarmReply(used, tuple(launch))
