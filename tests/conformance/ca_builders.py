"""Builders for cluster-autoscaler 1.34's own tables (``expander/*_test.go``,
``core/scaledown/eligibility/eligibility_test.go``, ``core/scaledown/unremovable/nodes_test.go``,
``core/scaledown/unneeded/nodes_test.go``, ``simulator/drain_test.go``,
``estimator/binpacking_estimator_test.go``, ``core/podlistprocessor/filter_out_schedulable_test.go``,
``core/scaleup/orchestrator/orchestrator_test.go``, ``simulator/cluster_test.go``,
``core/scaledown/planner/planner_test.go``, ``core/podlistprocessor/filter_out_expendable_test.go``,
``core/utils/expendable_test.go``):
expansion options as gpufleet's ``Estimate`` (upstream's ``expander.Option``: node group, node count, pods),
named by upstream's ``Debug``; nodes and pods as ``BuildTestNode``/``BuildTestPod``; the unremovable nodes a
scan keeps; the unneeded nodes, since when, and which are removable; a drain; a binpacking estimate; the
pending pods filtered out as schedulable; one scale-up of the orchestrator; node removal simulations, the
planner's unneeded and unremovable nodes, and the nodes it would delete; the expendable pods filtered out."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gpufleet.autoscaling.cluster_autoscaler import (
    Candidate,
    ScaleDownRequest,
    ScaleUpRequest,
    has_movable_pods,
    scale_down,
    scale_up,
)
from gpufleet.autoscaling.drainability import daemon_set_pod, drainable
from gpufleet.autoscaling.expanders import FILTERS, pool_priority
from gpufleet.autoscaling.expendable import expendable_on, split_pending
from gpufleet.autoscaling.node_group_balancing import Balancing
from gpufleet.autoscaling.resource_limits import cluster_maxima, delta_for_node, exceeded, resources_left
from gpufleet.autoscaling.scale_down import (
    PlacementBase,
    UnremovableReason,
    UtilizationRule,
    simulate_removal,
    unremovable_reason,
)
from gpufleet.autoscaling.scale_up import Estimate, PoolOption, ScaleUpSnapshot, estimate, waste
from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.dra.state import DraState
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.dra import DraObjects, ResourceSlice
from gpufleet.model.host_ports import HostPort
from gpufleet.model.node import Node
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.resources import GPU
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.model.simulation import AutoscalerSettings
from gpufleet.scheduling.profile import build_profile


def option(
    name: str,
    nodes: int = 1,
    pods: int = 0,
    priority: int | None = None,
    template: Node | None = None,
    requests: dict[str, int] | None = None,
) -> Estimate:
    """``expander.Option{Debug: name, NodeCount: nodes, Pods: <pods pods of requests>}``; with a
    ``template``, its waste as ``expander/waste`` computes it."""
    placed = [Pod(f"{name}-{k}", requests=dict(requests or {})) for k in range(pods)]
    wasted = waste(template, nodes, placed) if template is not None else {}
    return Estimate(name, nodes, tuple(p.key for p in placed), wasted, 0.0, priority)


def prioritised(names: Sequence[str], priorities: Sequence[tuple[int, str]]) -> list[Estimate]:
    """One-node options for node groups of these names, ranked by a priority-expander ConfigMap."""
    return [option(n, priority=pool_priority(n, priorities)) for n in names]


def best_options(expander: str, options: list[Estimate]) -> list[str]:
    """``Filter.BestOptions``: the names of the options the expander keeps, in their order."""
    return [e.pool for e in FILTERS[expander](options)]


def build_test_node(name: str, millicpu: int, mem: int, scale_down_disabled: bool = False) -> Node:
    """``BuildTestNode(name, millicpu, mem)``: that capacity (and allocatable), 100 pods."""
    capacity = {"cpu": millicpu, "memory": mem, "pods": 100}
    return Node(name, capacity=capacity, scale_down_disabled=scale_down_disabled)


def build_test_pod(
    name: str,
    millicpu: int,
    mem: int,
    daemon_set: bool = False,
    namespace: str = "default",
    labels: dict[str, str] | None = None,
    host_port: int = 0,
    priority: int = 0,
) -> Pod:
    """``BuildTestPod(name, millicpu, mem)`` (``mem`` in bytes; ``WithDSController()``: owned by a
    DaemonSet; ``WithNamespace``, ``WithLabels``; ``WithHostPort``: the first container's one port
    binds ``host_port`` on every IP, TCP, when positive; ``priority``: ``Spec.Priority``)."""
    owner = OwnerRef("DaemonSet", "ds") if daemon_set else None
    ports = (HostPort.of("", "", host_port),) if host_port > 0 else ()
    requests = {"cpu": millicpu, "memory": mem}
    return Pod(
        name,
        namespace,
        dict(labels or {}),
        requests=requests,
        owner=owner,
        host_ports=ports,
        priority=priority,
    )


def unneeded_and_unremovable(
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    threshold: float = 0.5,
    slices: Sequence[ResourceSlice] = (),
    ignore_daemonsets: bool = False,
    unready: Sequence[str] = (),
    scale_down_unready: bool = True,
) -> tuple[list[str], list[tuple[str, UnremovableReason]]]:
    """``Checker.FilterOutUnremovable``: the eligible nodes, and the others with their reasons; every pod on
    ``nodes[0]``, as upstream's cases have it (``threshold`` for GPU nodes and the others alike);
    the nodes named in ``unready`` not Ready (``SetNodeReadyState(node, false, ...)``), and
    ``scale_down_unready`` as ``--scale-down-unready-enabled``."""
    state = ClusterState(list(nodes))
    if slices:
        state.dra = DraState(DraObjects(slices=list(slices)))
    for p in pods:
        state.assign(p, 0, 0.0)
    rule = UtilizationRule(threshold, threshold, ignore_daemonsets)
    disabled = [not scale_down_unready and n.name in unready for n in nodes]
    reasons = [unremovable_reason(state, i, rule, disabled[i]) for i in range(len(nodes))]
    return (
        [n.name for n, r in zip(nodes, reasons, strict=True) if r is None],
        [(n.name, r.reason) for n, r in zip(nodes, reasons, strict=True) if r is not None],
    )


def unremovable_after_update(nodes: Sequence[str], timeouts: Mapping[str, float], now: float) -> list[str]:
    """``unremovable.Nodes.Update(nodeInfos, now)`` after ``AddTimeout`` of each node in ``timeouts``: the
    nodes it still holds (``ttls``), in name order. The cluster has a 1-cpu node of each name in ``nodes``;
    the scan has no candidates, so it finds no node unremovable."""
    state = ClusterState([build_test_node(name, 1000, 10) for name in nodes])
    profile = build_profile(ProfileConfig())
    request = ScaleDownRequest(
        now, state, profile, [], UtilizationRule(), 0.0, 0.0, -math.inf, {}, frozenset(), [], {}, frozenset(),
        None, unremovable_until=timeouts,
    )  # fmt: skip
    return sorted(scale_down(request).unremovable_until)


def unneeded_since(scans: Sequence[tuple[float, Sequence[str]]]) -> dict[str, float]:
    """``unneeded.Nodes.Update(nodes, ts)`` at each of ``scans`` (``ts``, the names of the nodes found
    unneeded then): each node still unneeded with the time it was first found so. The cluster has an empty
    1-cpu node of each name; a scan's candidates are the nodes it finds unneeded."""
    names = sorted({n for _, found in scans for n in found})
    state = ClusterState([build_test_node(name, 1000, 10) for name in names])
    profile, since = build_profile(ProfileConfig()), dict[str, float]()
    for ts, found in scans:
        request = ScaleDownRequest(
            ts, state, profile, [Candidate(n, "ng", len(names), 0) for n in found], UtilizationRule(), 3600.0,
            0.0, -math.inf, since, frozenset(), [], {}, frozenset(), None,
        )  # fmt: skip
        since = scale_down(request).unneeded_since
    return since


def unneeded_after_update(
    previously_unneeded: int,
    nodes: int,
    max_parallelism: int,
    unneeded_time_s: float,
    update_interval_s: float,
    atomic: bool = False,
) -> int:
    """``Planner.UpdateClusterState(nodes, nodes, ...)`` of ``nodes`` empty 1-cpu nodes ``n<i>`` of group
    ``ng1``, all eligible, the first ``previously_unneeded`` of them unneeded before
    (``unneededNodes.Update``), with ``MaxScaleDownParallelism`` ``max_parallelism``,
    ``ScaleDownUnneededTime`` ``unneeded_time_s`` and the planner's ``minUpdateInterval``
    ``update_interval_s``: how many nodes ``unneededNodes`` holds after. ``atomic``: ``ng1`` is
    ``ZeroOrMaxNodeScaling``."""
    names = [f"n{i}" for i in range(nodes)]
    state = ClusterState([build_test_node(name, 1000, 10) for name in names])
    candidates = [Candidate(n, "ng1", nodes, 0, True, atomic, nodes) for n in names]
    request = ScaleDownRequest(
        0.0, state, build_profile(ProfileConfig()), candidates,
        UtilizationRule(math.inf, math.inf), unneeded_time_s, 0.0, -math.inf,
        dict.fromkeys(names[:previously_unneeded], 0.0), frozenset(), [], {}, frozenset(), None,
        max_parallelism=max_parallelism, update_interval_s=update_interval_s,
    )  # fmt: skip
    return scale_down(request).unneeded_count


def removable_at(empty: int, drain: int, min_size: int, target_size: int, deletions: int) -> tuple[int, int]:
    """``Nodes.RemovableAt`` of ``empty`` empty nodes (``empty-<i>``) and ``drain`` nodes with a pod each
    (``drain-<i>``, ``pod-<i>``) of group ``ng`` (``MinSize`` ``min_size``, ``TargetSize`` ``target_size``),
    all unneeded long enough, ``deletions`` of the group's nodes being deleted: how many of each are
    removable. gpufleet crops them to its budgets in the same scan; RemovableAt's removable nodes are those it
    does not give a reason (removed now, or left unneeded for a later scan)."""
    nodes = [f"empty-{i}" for i in range(empty)] + [f"drain-{i}" for i in range(drain)]
    state = ClusterState([build_test_node(name, 10, 100) for name in nodes])
    for i in range(drain):
        state.assign(build_test_pod(f"pod-{i}", 1, 1), f"drain-{i}", 0.0)
    candidates = [Candidate(n, "ng", target_size, min_size) for n in nodes]
    request = ScaleDownRequest(
        1.0, state, build_profile(ProfileConfig()), candidates, UtilizationRule(), 0.0, 0.0, -math.inf,
        dict.fromkeys(nodes, 0.0), frozenset(), [], {}, frozenset(), None, assess=False,
        deletions={"ng": deletions},
    )  # fmt: skip
    kept = {name for name, _ in scale_down(request).unremovable}
    removable = [n for n in nodes if n not in kept]
    return sum(n.startswith("empty") for n in removable), sum(n.startswith("drain") for n in removable)


def pods_to_move(
    pods: Sequence[tuple[Pod, float]], pdbs: Sequence[tuple[DisruptionBudget, int]] = ()
) -> tuple[list[str], list[str], str | None]:
    """``GetPodsToMove`` over (pod, seconds since its creation): the pods moved, the DaemonSet pods,
    and the first blocking pod's reason (then both lists empty)."""
    budgets = [b for b, _ in pdbs]
    allowed = {f"{b.namespace}/{b.name}": n for b, n in pdbs}
    move: list[str] = []
    daemons: list[str] = []
    for pod, age in pods:
        drain = drainable(pod, budgets, allowed, age)
        if drain.blocker is not None:
            return [], [], drain.blocker
        if drain.moved:
            move.append(pod.name)
        elif daemon_set_pod(pod):
            daemons.append(pod.name)
    return move, daemons, None


def filter_out_schedulable(
    existing: Sequence[Pod], candidates: Sequence[Pod], any_node: bool = True
) -> tuple[list[str], list[str]]:
    """``filterOutSchedulableByPacking`` of ``candidates`` over one node (``buildReadyTestNode("node", 2000,
    100)``) running ``existing``: the pods in the snapshot afterwards (the node's, and the candidates it put
    there: ``ScaleUpSnapshot.placed``) and the candidates left unschedulable, by name, sorted (upstream
    compares them with ``ElementsMatch``). ``any_node`` False: the node filter matches no node
    (``matchesNoNodes``), as gpufleet excludes a node no pod may go to."""
    state = ClusterState([build_test_node("node", 2000, 100)])
    for pod in existing:
        state.assign(pod, 0, 0.0)
    exclude = frozenset() if any_node else frozenset({0})
    snapshot = ScaleUpSnapshot(state, build_profile(ProfileConfig()), candidates, exclude=exclude)
    left = [pod.name for pod in snapshot.filter_out_schedulable(candidates)]
    placed = [pod.name for pod in existing] + [pod.name for pod, row in snapshot.placed if row == 0]
    return sorted(placed), sorted(left)


def binpacking_estimate(
    groups: Sequence[tuple[Pod, int]], template: Node, max_nodes: int, existing: Sequence[Node] = ()
) -> tuple[int, list[str]]:
    """``BinpackingNodeEstimator.Estimate`` of pod equivalence groups (``makePodEquivalenceGroup``:
    ``(pod, count)``, the ``k``-th copy of the ``g``-th group's pod named ``<name>-<g>-<k>``) on
    copies of ``template`` added to a snapshot of the ``existing`` nodes, by the default scheduler
    profile: the new nodes and the pods placed on them, by name, in the order they were placed.
    ``max_nodes`` is the limiter's node threshold (``NewStaticThreshold``; 0: no limit), given as
    the pool's room, gpufleet's limiter."""
    pods = [pod.renamed(f"{pod.name}-{g}-{k}") for g, (pod, count) in enumerate(groups) for k in range(count)]
    pool = PoolOption(template.name, template, room=max_nodes if max_nodes > 0 else 1 << 30)
    snapshot = ScaleUpSnapshot(ClusterState(list(existing)), build_profile(ProfileConfig()), pods, [pool])
    found = estimate(pods, pool, snapshot)
    if found is None:
        return 0, []
    names = {p.key: p.name for p in pods}
    return found.nodes, [names[key] for key in found.pods]


@dataclass(frozen=True)
class Orchestrated:
    """What ``ScaleUpOrchestrator.ScaleUp`` left: the expansion options (group, new nodes), the group grown
    and by how many nodes (None: none grew), and the pods by ``ScaleUpStatus`` list (``triggered``: the
    chosen option's pods; ``remaining``: those no option takes; ``awaiting``: those only another option
    takes), each in the pods' order; ``reasons``: each pod's ``NotTriggerScaleUp`` message when none grew;
    ``split``: the nodes each group grows by (``balanceScaleUps``)."""

    options: list[tuple[str, int]]
    chosen: tuple[str, int] | None
    split: dict[str, int]
    triggered: list[str]
    remaining: list[str]
    awaiting: list[str]
    reasons: dict[str, str]


def build_gpu_node(name: str, millicpu: int, mem: int, gpus: int) -> Node:
    """``BuildTestNode(name, millicpu, mem)`` with ``AddGpusToNode(node, gpus)`` when ``gpus`` > 0."""
    node = build_test_node(name, millicpu, mem)
    if gpus > 0:
        node.capacity[GPU] = node.allocatable[GPU] = gpus
    return node


def orchestrate(
    nodes: Sequence[tuple[Node, str]],
    pods: Sequence[tuple[Pod, str]],
    extra: Sequence[Pod],
    choose: str | None = None,
    max_nodes_total: int | None = None,
    maxima: Mapping[str, int] | None = None,
    max_sizes: Mapping[str, int] | None = None,
    balance: bool = False,
    templates: Mapping[str, Node] | None = None,
    atomic: bool = False,
    all_or_nothing: bool = False,
) -> Orchestrated:
    """``runSimpleScaleUpTest``: the nodes, each of its group (``""``: none; each group ``MinSize`` 1,
    ``MaxSize`` 10, its template its first node, ``NewDefaultTemplateNodeInfoProvider``), the pods on their
    nodes, and the ``extra`` pods pending; the expander takes the option of group ``choose`` (the priority
    expander ranking that group alone; ``MockReportingStrategy``), ``max_nodes_total`` as
    ``--max-nodes-total`` (each group's room then capped to the nodes the cluster may still add, as the
    loop's ``_room``), ``maxima`` the cluster-wide resource limits (``ResourceLimiter``'s maxima; default
    ``defaultOptions``'), ``max_sizes`` the groups' ``MaxSize`` where not 10, ``balance``
    ``--balance-similar-node-groups``, ``templates`` the groups with no node yet, after the others
    (``NodeTemplateConfigs``), ``atomic`` every group ``ZeroOrMaxNodeScaling`` (``NodeGroupDefaults``), and
    ``all_or_nothing`` ``ScaleUp``'s ``allOrNothing``.
    The orchestrator gets the pods ``filterOutSchedulable`` left: here no pending pod may go to a node
    already there (every node excluded). The options are gpufleet's estimates of the groups within the
    limits (their own room, not their similar groups'), over a snapshot of their own."""
    state = ClusterState([n for n, _ in nodes])
    for pod, on in pods:
        state.assign(pod, on, 0.0)
    groups = {g: [n for n, group in nodes if group == g] for _, g in nodes if g}
    room = 1 << 30 if max_nodes_total is None else max(max_nodes_total - len(nodes), 0)
    shapes = {g: members[0] for g, members in groups.items()} | dict(templates or {})
    highest = {g: (max_sizes or {}).get(g, 10) for g in shapes}
    sizes = {g: len(groups.get(g, [])) for g in shapes}
    options = [
        PoolOption(
            g, template, room=min(highest[g] - sizes[g], room), priority=10 if g == choose else None,
            size=sizes[g], max_size=highest[g], atomic=atomic,
        )
        for g, template in shapes.items()
    ]  # fmt: skip
    counted = [(shapes[g], len(members)) for g, members in groups.items()] + [
        (n, 1) for n, g in nodes if not g
    ]
    left = resources_left(maxima if maxima is not None else cluster_maxima(AutoscalerSettings()), counted)
    profile, exclude = build_profile(ProfileConfig()), frozenset(range(len(nodes)))
    snapshot = ScaleUpSnapshot(state, profile, extra, options, exclude)
    nodes_left = None if max_nodes_total is None else room
    estimates = [
        e
        for o in options
        if not exceeded(left, {r: v * o.nodes_at_once() for r, v in delta_for_node(o.template).items()})
        and not (o.atomic and nodes_left is not None and o.nodes_at_once() > nodes_left)
        and (e := estimate(list(extra), o, snapshot))
    ]
    request = ScaleUpRequest(
        0.0, state, profile, extra, options, frozenset(), "priority", np.random.default_rng(0), exclude,
        room == 0, resources_left=left, balancing=Balancing(room=room) if balance else None,
        nodes_left=nodes_left, all_or_nothing=all_or_nothing,
    )  # fmt: skip
    reply = scale_up(request)
    up = reply.scale_up
    names = {p.key: p.name for p in extra}
    taken = {key for e in estimates for key in e.pods}
    chosen = set(up.pods) if up is not None else set()
    return Orchestrated(
        [(e.pool, e.nodes) for e in estimates],
        (up.group, up.nodes) if up is not None else None,
        dict(up.split) if up is not None else {},
        [p.name for p in extra if p.key in chosen],
        [p.name for p in extra if p.key not in taken],
        [p.name for p in extra if p.key in taken and up is not None and p.key not in chosen],
        {names[key]: reason for key, reason in reply.not_triggered},
    )


def _cluster(nodes: Sequence[Node], pods: Sequence[tuple[Pod, str]]) -> ClusterState:
    state = ClusterState(list(nodes))
    for pod, on in pods:
        state.assign(pod, on, 0.0)
    return state


def empty_nodes(nodes: Sequence[Node], pods: Sequence[tuple[Pod, str]]) -> list[str]:
    """``RemovalSimulator.FindEmptyNodesToRemove`` over every node: those running no pod a drain moves
    (gpufleet's empty nodes, deleted without a drain), in the nodes' order."""
    state = _cluster(nodes, pods)
    return [n.name for n in nodes if not has_movable_pods(state, n.name)]


@dataclass(frozen=True)
class Removal:
    """``SimulateNodeRemoval``'s answer for one node: removable with the pods it reschedules (by name, in
    the node's pod order: those ``drainable`` moves, as gpufleet's verdict does not list them), or
    unremovable for ``reason`` (with the blocking pod's words)."""

    node: str
    moved: tuple[str, ...] = ()
    reason: UnremovableReason | None = None
    message: str = ""


def simulate_removals(
    nodes: Sequence[Node], pods: Sequence[tuple[Pod, str]], candidates: Sequence[str]
) -> list[Removal]:
    """``RemovalSimulator.FindNodesToRemove(candidates, <every node>, ...)`` with
    ``persistSuccessfulSimulations`` false (each candidate simulated on the cluster as it is), the default
    scheduler profile and no PDB: each candidate's ``simulate_removal`` verdict, in the candidates' order."""
    state = _cluster(nodes, pods)
    profile = build_profile(ProfileConfig())
    daemons = {p.key for p, _ in pods if daemon_set_pod(p)}
    base = PlacementBase(state, frozenset())
    out = []
    for name in candidates:
        i = state.index[name]
        verdict = simulate_removal(state, i, profile, [], {}, daemons, base)
        if verdict.why is None:
            on = [p for p, node in pods if node == name]
            moved = tuple(p.name for p in on if drainable(p, [], {}, 0.0).moved)
            out.append(Removal(name, moved))
        else:
            out.append(Removal(name, (), verdict.why.reason, verdict.why.message))
    return out


def update_cluster_state(
    nodes: Sequence[Node],
    pods: Sequence[tuple[Pod, str]],
    eligible: Sequence[str],
    being_deleted: Sequence[str] = (),
) -> tuple[list[str], list[str]]:
    """``Planner.UpdateClusterState(nodes, nodes, ...)`` with a ``fakeEligibilityChecker`` of ``eligible``:
    the unneeded nodes and the unremovable ones, by name, sorted. Every node is a candidate of group ``ng1``;
    a node not eligible is annotated scale-down-disabled (the fake's ``unremovableNodes.AddReason``), and the
    eligible ones pass any utilisation (the fake checks none). ``being_deleted``: nodes this autoscaler is
    deleting (upstream's ``nodeUndergoingDeletion``, tainted ToBeDeletedByClusterAutoscaler), where no pod
    may move."""
    marked = [replace(n, scale_down_disabled=n.name not in eligible) for n in nodes]
    state = _cluster(marked, pods)
    request = ScaleDownRequest(
        0.0, state, build_profile(ProfileConfig()), [Candidate(n.name, "ng1", len(nodes), 0) for n in nodes],
        UtilizationRule(math.inf, math.inf), 600.0, 0.0, -math.inf, {}, frozenset(being_deleted), [], {},
        frozenset(p.key for p, _ in pods if daemon_set_pod(p)), None,
    )  # fmt: skip
    reply = scale_down(request)
    return sorted(reply.unneeded_since), sorted(name for name, _ in reply.not_unneeded)


def nodes_to_delete(
    groups: Mapping[str, tuple[Any, ...]],
) -> tuple[list[str], list[str]]:
    """``Planner.NodesToDelete`` with every node of ``groups`` (name -> (target size, [(node, pods to
    reschedule)]) or, for a ``ZeroOrMaxNodeScaling`` group, (target size, [(node, pods)], True, other
    registered nodes); ``MinSize`` 0: ``sizedNodeGroup``) unneeded for an hour (``ScaleDownUnneededTime``
    10 minutes): the empty nodes and those to drain that ``RemovableAt`` (and ``FilterUnremovableNodes``) find
    removable, by name, sorted (upstream compares them with ``ElementsMatch``). gpufleet crops them to its
    deletion budgets in the same scan; the removable nodes are those it gives no reason (removed now, or left
    unneeded for a later scan)."""
    now = 3600.0
    built: list[tuple[Node, str, int, int, bool, int]] = []
    others: list[Node] = []
    for group, (size, ns, *more) in groups.items():
        atomic, extra = (bool(more[0]), tuple(more[1])) if more else (False, ())
        registered = len(ns) + len(extra)
        built += [
            (build_test_node(name, 1000, 10), group, size, pods, atomic, registered) for name, pods in ns
        ]
        others += [build_test_node(name, 1000, 10) for name in extra]
    state = ClusterState([n for n, *_ in built] + others)
    for node, _, _, count, _, _ in built:
        for k in range(count):
            pod = replace(build_test_pod(f"{node.name}-pod-{k}", 1, 1), owner=OwnerRef("ReplicaSet", "rs"))
            state.assign(pod, node.name, 0.0)
    candidates = [Candidate(n.name, g, size, 0, True, a, r) for n, g, size, _, a, r in built]
    request = ScaleDownRequest(
        now, state, build_profile(ProfileConfig()), candidates, UtilizationRule(), 600.0, 0.0, -math.inf,
        {n.name: 0.0 for n, *_ in built}, frozenset(), [], {}, frozenset(), None, assess=False,
        unready_time_s=0.0,
    )  # fmt: skip
    kept = {name for name, _ in scale_down(request).unremovable}
    removable = [(n.name, count) for n, _, _, count, _, _ in built if n.name not in kept]
    return sorted(n for n, c in removable if c == 0), sorted(n for n, c in removable if c > 0)


def filter_out_expendable(
    pods: Sequence[Pod], nodes: Sequence[Node], cutoff: int, nominated: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """``filterOutExpendable.Process`` over a snapshot of ``nodes`` with no pod: the pods it returns (those
    that may trigger a scale-up), and the pods the snapshot's nodes hold afterwards (the pods waiting for a
    preemption, force-added to their nominated nodes), by name. The second is ``scale_up``'s
    ``ScaleUpReply.placed`` with no node group and every node excluded (``filterOutSchedulable`` puts no pod
    there; ``ForceAddPod`` ignores it)."""
    state = ClusterState(list(nodes))
    remaining, _ = split_pending(pods, state, cutoff, nominated)
    request = ScaleUpRequest(
        0.0, state, build_profile(ProfileConfig()), pods, [], frozenset(), "random", np.random.default_rng(0),
        frozenset(range(len(nodes))), False, expendable_cutoff=cutoff, nominated=nominated,
    )  # fmt: skip
    return [p.name for p in remaining], [p.name for p, _ in scale_up(request).placed]


def non_expendable_scheduled(pods: Sequence[Pod], cutoff: int) -> list[str]:
    """``FilterOutExpendablePods`` of scheduled pods: ``pods`` on one node, those not ``expendable_on`` it, by
    name, in order."""
    state = ClusterState([build_test_node("node1", 100_000, 100 << 30)])
    for pod in pods:
        state.assign(pod, 0, 0.0)
    gone = {a.pod.key for on_node in expendable_on(state, cutoff).values() for a in on_node}
    return [p.name for p in pods if p.key not in gone]
