"""cluster-autoscaler's scale-up: which pool to grow, and by how many nodes, for pending pods.

Mirrors ``core/static_autoscaler.go``'s ``RunOnce``, ``core/podlistprocessor/filter_out_schedulable.go``,
``core/scaleup`` and ``estimator/binpacking_estimator.go`` over one ``ClusterSnapshot``
(``ScaleUpSnapshot``): it holds the cluster's nodes and pods and, for every upcoming node of every
pool (launched, not yet registered or not yet GPU-ready: a node with the GPU label but no GPU
allocatable counts as upcoming, ``FilterOutNodesWithUnreadyResources``), a copy of the pool's template
with its DaemonSet pods (``addUpcomingNodesToClusterSnapshot``). ``filterOutSchedulable`` tries each pending
pod, highest priority first, on the cluster's nodes and then on the upcoming ones, first fit; a pod that fits
is put there (its resources taken, its labels, terms and host ports counted by the pod-aware filters of the
pods after it and of the estimates) and triggers no scale-up. For each pool with room
the others are packed First-Fit Decreasing (the largest share of the template's cpu plus memory first,
``DecreasingPodOrderer``; equal ones by the share of everything they ask for, GPUs included, where
upstream sets no order) onto fresh copies of the pool's template node (DaemonSet pods that would run
there take their share first) added to a fork of that snapshot, using the scheduler profile's own node
filters, its resources and its pod-aware filters (NodePorts, PodTopologySpread, InterPodAffinity).
Upstream's ``SchedulePod`` runs every filter on the copy, over a snapshot holding the cluster's nodes,
the upcoming nodes, the copies added so far (each named ``template-node-for-<pool>-<k>``, its
``kubernetes.io/hostname`` label that name) with their DaemonSet pods, the pods the filtering put and
the pods the estimate put: here each pod's PreFilter states over the cluster ``absorb`` those nodes and
pods (``scheduling.pod_aware.WhatIf``), so a hostname spread limits the pods per copy, a zonal one
counts the pods of the cluster's zones against the copies' zone, a required anti-affinity keeps pods
apart and a required affinity finds the pods on the copies. A pod that a copy's PodTopologySpread
turns away (``node(s) didn't match pod topology spread constraints``) while it has a
``kubernetes.io/hostname`` constraint is then tried on any other node, the cluster's and the upcoming
ones included, which the new domains may have opened to it (``tryToScheduleOnNewNodes``), and a node
already there that it goes to is counted among the nodes the option adds (``newNodesWithPods``), as
upstream counts it. GPUs are also counted in thousandths, so fractional requests (KAI, HAMi) pack
several to a GPU (their split over single GPUs is not simulated); a gang (pods of one PodGroup) counts
in an estimate only if all its pending members are placed. An expander then picks one option
(``expanders``).

Dynamic Resource Allocation (cluster-autoscaler >= 1.32): a pool's template node carries the
ResourceSlices its nodes will publish, and every copy of the template gets its own copy of them
(``SanitizedNodeResourceSlices``: slice and pool names suffixed, ``nodeName`` the copy's), so the
DynamicResources filter allocates the pods' claims on the copies, in the estimate's
``ClusterSnapshot`` (its fork of the DRA state). A pod whose claims no fresh copy can satisfy
does not make the pool grow.

When no pool grows, each pod left out gets cluster-autoscaler's ``NotTriggerScaleUp`` message
(``processors/status/eventing_scale_up_processor.go``, ``ReasonsMessage``): per pool, why it was
skipped (``not ready for scale-up``, ``max node group size reached``, ``in backoff after failed
scale-up``) or why the
template rejects the pod (the failing filter's reasons), counted over the pools; a pool one more node
of which would exceed a cluster-wide resource limit gives ``max cluster <resources> limit reached``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

import numpy as np

from gpufleet.autoscaling.expendable import NO_EXPENDABLE, Expendable
from gpufleet.autoscaling.scale_down import PlacementBase, SnapshotPods, held_milli
from gpufleet.cluster.shares import gpu_memory_bytes, shareable
from gpufleet.cluster.snapshot import ClusterSnapshot
from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.dra.allocator import filter_reason
from gpufleet.model.dra import ResourceSlice
from gpufleet.model.dra_slices import node_gpus
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY, PODS, Resources, native_first
from gpufleet.scheduling.gangs import group_key
from gpufleet.scheduling.plugins.node_resources_fit import NodeResourcesFit, insufficient_reason
from gpufleet.scheduling.plugins.pod_topology_spread import CONSTRAINTS_NOT_MATCH, HOSTNAME
from gpufleet.scheduling.pod_aware import PodAwareFilter, PodFilterState, WhatIf, pre_filter_reads
from gpufleet.scheduling.profile import Profile

#: Pseudo-resource of the estimate: thousandths of a template node's GPUs.
GPU_MILLI = "gpufleet.io/gpu-milli"
#: ``NotTriggerScaleUp`` reasons for a skipped pool (``core/scaleup/orchestrator/skippedreasons.go``).
MAX_SIZE_REACHED = "max node group size reached"
IN_BACKOFF = "in backoff after failed scale-up"
NOT_READY = "not ready for scale-up"  # an unhealthy group (``NotReadyReason``)
#: ... and for every pod when the cluster has ``--max-nodes-total`` nodes (``ReasonsMessage``).
MAX_TOTAL_REACHED = "max total nodes in cluster reached"
#: ... and for a ``ZeroOrMaxNodeScaling`` pool whose growth to its max would pass ``--max-nodes-total``
#: (``filterValidScaleUpNodeGroups``)
ATOMIC_TOTAL_EXCEEDED = "atomic scale-up exceeds cluster node count limit"
#: Why a template copy does not take a pod, besides a pod-aware filter's reason (the estimate's own).
#: ``AllOrNothingReason``: the best option's nodes cut by a limit under ``allOrNothing``
ALL_OR_NOTHING = "not all pods would fit and scale-up is using all-or-nothing strategy"
NO_ROOM = "no room on the copy"
NO_CLAIMS = "its claims cannot be allocated on the copy"
REFUSED = "the template's static filters refuse it"


@dataclass(frozen=True)
class PoolOption:
    """One pool as the autoscaler sees it during a scan."""

    name: str
    template: Node  # GPU-ready: allocatable as the node will have it once its devices register
    daemons: tuple[Pod, ...] = ()  # the DaemonSet pods that would run on the template, already there
    room: int = 0  # nodes it may still add (pool max and cluster total applied)
    upcoming: int = 0  # launched, not yet GPU-ready
    price_per_hour: float = 0.0
    priority: int | None = None  # the priority expander's for the pool's name; None: not named
    slices: tuple[ResourceSlice, ...] = ()  # what the template node publishes for DRA
    size: int = 0  # its target size: launched, not deleted (--balance-similar-node-groups splits by it) ...
    max_size: int = 0  # ... up to its max
    #: ``ZeroOrMaxNodeScaling``: it grows only to its max, all at once (``nodes_at_once``)
    atomic: bool = False

    def nodes_at_once(self) -> int:
        """The nodes one scale-up of the group adds (``filterValidScaleUpNodeGroups``' ``numNodes``): for a
        ``ZeroOrMaxNodeScaling`` group the room below its max (``MaxSize() - TargetSize()``), else one."""
        return max(self.max_size - self.size, 0) if self.atomic else 1


@dataclass(frozen=True)
class Estimate:
    pool: str
    nodes: int
    pods: tuple[str, ...]
    waste: dict[str, float]  # resource -> wasted share of what the new nodes add
    price_per_hour: float
    priority: int | None


def waste(template: Node, nodes: int, pods: Sequence[Pod]) -> dict[str, float]:
    """``expander/waste``: per resource, the share of ``nodes`` new nodes' capacity (the template's
    ``status.capacity``, else its allocatable) that ``pods`` do not request. Only the pods the
    option helps count, as upstream's ``option.Pods`` (not the DaemonSet pods the nodes also run)."""
    out: dict[str, float] = {}
    for name, per_node in {**template.allocatable, **template.capacity}.items():
        if name == PODS or per_node <= 0:
            continue
        offered = per_node * nodes
        out[name] = (offered - sum(p.requests.get(name, 0) for p in pods)) / offered
    return out


def _free(option: PoolOption) -> Resources:
    """What a fresh copy of the template has for pods, its DaemonSet pods there (each one pod)."""
    free = dict(option.template.allocatable)
    free[GPU_MILLI] = MILLI * free.get(GPU, 0)
    for daemon in option.daemons:
        for name, value in daemon.requests.items():
            free[name] = free.get(name, 0) - value
    free[PODS] = free.get(PODS, 110) - len(option.daemons)
    return free


def _fits(want: Resources, free: Resources) -> bool:
    return all(v <= free.get(r, 0) for r, v in want.items() if v > 0)


def _take(want: Resources, free: Resources) -> None:
    for r, v in want.items():
        free[r] = free.get(r, 0) - v


def _wants(pod: Pod, template: Node) -> Resources:
    """What the pod takes from a template node, with its GPUs also in thousandths (``GPU_MILLI``)."""
    want = {**pod.requests, PODS: 1}
    share = pod.gpu_share
    if share is not None:
        per = share.per_gpu(gpu_memory_bytes(template))
        want[GPU_MILLI] = share.count * (max(per) if per is not None else MILLI)
    elif pod.gpus:
        want[GPU_MILLI] = MILLI * pod.gpus
    return want


def _admits(profile: Profile, pod: Pod, template: Node) -> bool:
    if pod.gpu_share is not None and (
        not shareable(template) or _wants(pod, template)[GPU_MILLI] > _free_milli(template)
    ):
        return False
    return all(f.reject(pod, template) is None for f in profile.static_filters)


def _free_milli(template: Node) -> int:
    return MILLI * template.allocatable.get(GPU, 0)


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


def _order(unit: list[Pod], template: Node) -> tuple[float, float]:
    """FFD order, largest first (sort ascending by this key). First ``DecreasingPodOrderer``'s score:
    the share of the template's cpu plus the share of its memory the unit asks for, GPUs not counted.
    Upstream leaves equal scores in no set order (its pending pods come from an informer's cache, and
    pods that ask only for GPUs all score 0); here they are broken by the share of everything the unit
    asks for, GPUs (and GPU shares) included, then kept in the pods' order. (Upstream sums the app
    containers' requests; here each pod's effective request.)"""
    score = sum(
        p.requests.get(r, 0) / template.allocatable[r]
        for p in unit
        for r in (CPU, MEMORY)
        if template.allocatable.get(r)
    )
    everything = sum(
        v / template.allocatable[r]
        for p in unit
        for r, v in p.requests.items()
        if template.allocatable.get(r)
    ) + sum(_wants(p, template)[GPU_MILLI] / _free_milli(template) for p in unit if p.gpu_share is not None)
    return -score, -everything


def copy_name(option: PoolOption, suffix: int | str) -> str:
    """A copy of the pool's template in one simulation: the estimate's ``k``-th, or an upcoming node
    (``upcoming-<i>``). Upstream names them ``<template node>-e-<k>`` and ``<template node>-upcoming-<i>``,
    its template node being ``template-node-for-<node group>-<random suffix>``; gpufleet counts, so runs
    repeat."""
    return f"template-node-for-{option.name}-{suffix}"


def copy_node(option: PoolOption, name: str) -> Node:
    """A copy of the pool's template as a node named ``name`` (``SanitizedNodeInfo``'s
    ``createSanitizedNode``): its ``kubernetes.io/hostname`` label that name, so that each copy is a
    hostname domain of its own."""
    return replace(option.template, name=name, labels={**option.template.labels, HOSTNAME: name})


def copy_slices(slices: Sequence[ResourceSlice], node: str) -> list[ResourceSlice]:
    """``SanitizedNodeResourceSlices`` (``simulator/dynamicresources/utils/sanitize.go``): the
    template's node-local slices for one copy, on the copy's node, slice and pool names suffixed so
    that no device ID is one of a real node's (upstream's suffix is random; here the copy's name)."""
    return [
        replace(s, name=f"{s.name}-{node}", pool=f"{s.pool}-{node}", node_name=node)
        for s in slices
        if s.node_name is not None
    ]


def _hostname_spread(pod: Pod) -> bool:
    """``isPodUsingHostNameTopologyKey``: one of the pod's own spread constraints is on hostname."""
    return any(c.topology_key == HOSTNAME for c in pod.spread_constraints)


class ScaleUpSnapshot:
    """The ``ClusterSnapshot`` one ``RunOnce`` scales up from (``core/static_autoscaler.go``): the
    cluster's nodes and pods; for every upcoming node of every group a copy of the group's template
    with its DaemonSet pods (``addUpcomingNodesToClusterSnapshot``, each named
    ``copy_name(option, "upcoming-<i>")``); the pending pods ``filterOutSchedulable`` put on those nodes
    (``schedule``). Each estimate and each ``NotTriggerScaleUp`` check forks it, adds copies of its
    group's template and reverts (``estimate``, ``rejections``), so every group's estimate sees the same
    upcoming nodes and pods, and none sees another's copies.

    The copies are rows past the cluster's (``size + k``: the upcoming nodes first, then an estimate's),
    each with its room in the ``ClusterSnapshot``. The profile's pod-aware filters judge each pod over
    all of it (``pod_aware.WhatIf``: the copies added and the pods put, in order), so a pod the filtering
    put counts for a spread, an affinity term or a host port, and its resources are taken. ``pods`` and
    ``options``: the pods and groups it will be asked about (whether a pod with inter-pod terms may be
    put). ``exclude``: nodes of the cluster no pod goes to (being deleted). ``expendable``: the cluster's
    expendable pods, which the snapshot is built without (``autoscaling.expendable``): their room is free
    and the pod-aware filters do not count them."""

    def __init__(
        self,
        state: ClusterState,
        profile: Profile,
        pods: Sequence[Pod],
        options: Sequence[PoolOption] = (),
        exclude: AbstractSet[int] = frozenset(),
        expendable: Expendable = NO_EXPENDABLE,
    ) -> None:
        self.state, self.profile = state, profile
        self.size = len(state.nodes)
        self.snapshot = ClusterSnapshot(state)
        #: what is free on the cluster's nodes, read once
        self.base = PlacementBase(state, exclude, SnapshotPods(expendable=expendable))
        #: each copy's group and name, and the copy as a node (made when a pod-aware state first needs it)
        self.copies: list[tuple[PoolOption, str]] = []
        self.nodes: list[Node | None] = []
        self.saved: list[tuple[int, int]] = []
        daemons = [d for o in options for d in o.daemons]
        with_terms = any(p.pod_affinity is not None for p in (*pods, *daemons))
        self.aware = WhatIf(state, profile.pod_filters, with_terms, self.node)
        gone = [a for pods_on in expendable.values() for a in pods_on]
        if gone:
            self.snapshot.take_away([(a, held_milli(state, a.pod, np.array([a.node]))) for a in gone])
            self.aware.remove(gone)
        self.admits: dict[tuple[tuple[object, ...], int], bool] = {}  # static filters, per shape and row
        self.admitted: dict[tuple[tuple[object, ...], str], bool] = {}  # ... per shape and group's template
        self.rooms: dict[str, Resources] = {}  # a new copy's room, per group
        #: the pods ``filter_out_schedulable`` put on the cluster's nodes, each with its row, in that order
        self.placed: list[tuple[Pod, int]] = []
        for option in options:
            for i in range(option.upcoming):
                self.add_copy(option, copy_name(option, f"upcoming-{i}"))
        self.upcoming = len(self.copies)

    # -- the snapshot's fork, commit, revert, with the events ------------------------------
    def fork(self) -> None:
        self.snapshot.fork()
        self.saved.append((self.aware.mark(), len(self.copies)))

    def commit(self) -> None:
        self.snapshot.commit()
        self.saved.pop()

    def revert(self) -> None:
        self.snapshot.revert()
        events, copies = self.saved.pop()
        self.aware.back_to(events)
        del self.copies[copies:]
        del self.nodes[copies:]

    def node(self, row: int) -> Node:
        """The copy of ``row`` as a node."""
        k = row - self.size
        node = self.nodes[k]
        if node is None:
            node = self.nodes[k] = copy_node(*self.copies[k])
        return node

    # -- what is added -------------------------------------------------------------------------
    def fresh(self, option: PoolOption) -> Resources:
        """What a fresh copy of the group's template has for pods (``_free``; read-only)."""
        room = self.rooms.get(option.name)
        if room is None:
            room = self.rooms[option.name] = _free(option)
        return room

    def add_copy(self, option: PoolOption, name: str) -> int:
        """A fresh copy of the group's template joins, with its DaemonSet pods; its row."""
        row = self.size + self.snapshot.add_copy(self.fresh(option))
        self.copies.append((option, name))
        self.nodes.append(None)
        self.aware.add_node(row)
        for daemon in option.daemons:
            self.aware.put(daemon, row)
        return row

    def put(self, pod: Pod, row: int, want: Resources, milli: int = 0) -> None:
        """The pod goes on ``row`` (a copy: ``want`` of its room; a node of the cluster: its columns
        and ``milli`` of its GPU thousandths)."""
        if row >= self.size:
            self.snapshot.take_from_copy(row - self.size, want)
        else:
            self.snapshot.put(pod, row, milli)
        self.aware.put(pod, row)

    # -- the filters -----------------------------------------------------------------------
    def states(self, pod: Pod, key: tuple[object, ...] | None = None) -> list[PodFilterState]:
        """The pod's pod-aware PreFilter states over the cluster and all that was added to it
        (``key``: its ``pre_filter_reads``, where the caller has it)."""
        return self.aware.states(pod, key)

    def judged_by(self, pod: Pod) -> list[tuple[PodAwareFilter, PodFilterState]]:
        """``states``, each with its filter."""
        return self.aware.judged_by(pod)

    @staticmethod
    def rejection(states: Sequence[PodFilterState], row: int) -> str | None:
        """The first pod-aware filter's reason for turning the pod away from ``row`` (None: none does)."""
        for s in states:
            rejected = s.judge(row)
            if rejected is not None:
                return rejected[0]
        return None

    def fresh_rejection(self, states: Sequence[PodFilterState], option: PoolOption, name: str) -> str | None:
        """``rejection`` on the copy of the group's template that would be added next, named ``name``,
        its DaemonSet pods there (judged on copies of the states: the copy is added only if the pod goes
        there)."""
        if not states:
            return None
        row = self.size + len(self.copies)
        node, daemons = copy_node(option, name), [(d, row) for d in option.daemons]
        for s in states:
            trial = s.changed((), ())
            trial.absorb([node], daemons)
            rejected = trial.judge(row)
            if rejected is not None:
                return rejected[0]
        return None

    def admitted_by(self, pod: Pod, option: PoolOption) -> bool:
        """Whether the profile's static filters let the pod onto a copy of the group's template."""
        key = (pod.shape(), option.name)
        admits = self.admitted.get(key)
        if admits is None:
            admits = self.admitted[key] = _admits(self.profile, pod, option.template)
        return admits

    def claims(
        self, pod: Pod, k: int, reserve: bool = True, coming: tuple[PoolOption, str] | None = None
    ) -> str | None:
        """Allocate the pod's ResourceClaims on copy ``k`` in the snapshot's DRA state (a copy publishes
        its slices the first time a pod is tried there or past it; ``coming``: the copy to be added at
        ``k``) and reserve them (or, not ``reserve``, only see whether they could be); None when they fit
        (or it has none)."""
        dra = self.snapshot.dra() if pod.resource_claims else None
        if dra is None:
            return None
        copies = [*self.copies, coming] if coming is not None else self.copies
        while self.snapshot.published <= k:
            option, name = copies[self.snapshot.published]
            dra.publish(copy_slices(option.slices, name))
            self.snapshot.published += 1
        node = copy_node(*copies[k])  # its labels select the network-attached devices it reaches
        if reserve:
            return dra.place(pod, node)
        outcome = dra.try_node(pod, node)
        return outcome if isinstance(outcome, str) else None

    # -- placing a pod ---------------------------------------------------------------------
    def try_copy(self, pod: Pod, states: Sequence[PodFilterState], k: int) -> str | None:
        """Put the pod on copy ``k`` if it takes it (its template's static filters, its room, the
        pod-aware filters, its claims, reserved there); else why not."""
        option = self.copies[k][0]
        if not self.admitted_by(pod, option):
            return REFUSED
        want = _wants(pod, option.template)
        if not _fits(want, self.snapshot.copy_free(k)):
            return NO_ROOM
        row = self.size + k
        reason = self.rejection(states, row) if states else None
        if reason is None:
            if self.claims(pod, k) is not None:
                return NO_CLAIMS
            self.put(pod, row, want)
        return reason

    def on_cluster(self, pod: Pod, states: Sequence[PodFilterState]) -> int | None:
        """Put the pod on the first node of the cluster, in node order, that takes it here (upstream's
        ``SchedulePodOnAnyNodeMatching``): room for it (GPU thousandths too), the static filters, the
        pod-aware states, its claims; that node's row, or None when none does."""
        base, state = self.base, self.state
        want = state.pod_vectors(pod)[0]
        width = base.free[0].shape[1]
        if len(want) > width:  # it asks for a resource no node had yet: none is free anywhere
            if (want[width:] > 0).any():
                return None
            want = want[:width]
        shape = pod.shape()
        milli = base.milli(pod, shape)
        room = base.room(shape, want, milli)  # the nodes with room before anything was put
        if not room:
            return None
        free, free_milli = self.snapshot.free(base.idx[room])
        refused: set[int] = set()
        chosen = None
        for n, j in enumerate(room):
            need = milli if isinstance(milli, int) else int(milli[j])
            if free_milli[n] < need or not (free[n, : len(want)] >= want).all():
                continue
            row = base.rows[j]
            admits = self.admits.get((shape, row))
            if admits is None:
                node = state.nodes[row]
                admits = self.admits[shape, row] = all(
                    f.reject(pod, node) is None for f in self.profile.static_filters
                )
            if not admits:
                refused.add(j)
                continue
            if self.rejection(states, row) is not None:
                continue
            dra = self.snapshot.dra() if pod.resource_claims else None
            if dra is not None and dra.place(pod, state.nodes[row]) is not None:
                continue
            self.put(pod, row, {}, need)
            chosen = row
            break
        if refused:
            base.drop(shape, refused)
        return chosen

    def force_put(self, pod: Pod, row: int) -> None:
        """``ForceAddPod``: the pod goes on the cluster's node ``row`` whether it fits there or not (a pod
        waiting for a preemption on the node it is nominated to: ``addPreemptingPodsToSnapshot``)."""
        self.put(pod, row, {}, held_milli(self.state, pod, np.array([row])))

    def filter_out_schedulable(self, pods: Sequence[Pod]) -> list[Pod]:
        """``filterOutSchedulableByPacking`` (``core/podlistprocessor/filter_out_schedulable.go``): the
        pending pods, highest priority first (``sort.Slice`` by ``PodPriority``, descending; upstream's sort
        is not stable, pods of equal priority keep their order here), each put on the first node that takes it
        (``schedule``); those no node takes, in that order. Those put on the cluster's nodes are listed in
        ``placed``, with their rows (they stay in the snapshot: ``Process`` leaves them there)."""
        left = []
        for pod in sorted(pods, key=lambda pod: -pod.priority):
            row = self.place(pod)
            if row is None:
                left.append(pod)
            elif row < self.size:
                self.placed.append((pod, row))
        return left

    def schedule(self, pod: Pod) -> bool:
        """``place``: False when no node takes the pod (it may trigger a scale-up)."""
        return self.place(pod) is not None

    def place(self, pod: Pod) -> int | None:
        """``filterOutSchedulable`` for one pending pod (``TrySchedulePods``): put it on the first node
        that takes it, the cluster's, then the upcoming ones; its row, or None when none takes it."""
        states = self.states(pod)
        row = self.on_cluster(pod, states)
        if row is not None:
            return row
        return next(
            (self.size + k for k in range(self.upcoming) if self.try_copy(pod, states, k) is None), None
        )


class _Estimation:
    """One estimate (``BinpackingNodeEstimator.Estimate``) in a fork of the scan's snapshot: copies of
    the group's template added, up to ``limit``, and the pods put on them or elsewhere. ``fork``,
    ``commit`` and ``revert`` follow the snapshot's, with the estimate's own bookkeeping."""

    def __init__(self, snapshot: ScaleUpSnapshot, option: PoolOption) -> None:
        self.snapshot, self.option, self.limit = snapshot, option, option.room
        self.first = len(snapshot.copies)  # the estimate's copies come after those already there
        self.used: list[int] = []  # nodes already there (the cluster's, upcoming) the estimate put pods on
        self.added = 0  # copies added
        #: the pods tried last (their ``pre_filter_reads``), and whether one of them fitted no copy
        self.group: tuple[object, ...] | None = None
        self.past_copies = False
        self.saved: list[tuple[int, int, tuple[object, ...] | None, bool]] = []

    def fork(self) -> None:
        self.snapshot.fork()
        self.saved.append((len(self.used), self.added, self.group, self.past_copies))

    def commit(self) -> None:
        self.snapshot.commit()
        self.saved.pop()

    def revert(self) -> None:
        self.snapshot.revert()
        used, self.added, self.group, self.past_copies = self.saved.pop()
        del self.used[used:]

    def place(self, pod: Pod) -> bool:
        """Put the pod as ``Estimate`` does; False when it goes nowhere.

        Pods alike (``pre_filter_reads``, their requests among it) that come one after another are an
        equivalence group: until one of them fits none of the estimate's copies, each goes on the first
        of them that takes it (``tryToScheduleOnExistingNodes``: resources, the pod-aware filters, its
        claims). From then on (``tryToScheduleOnNewNodes``) one is tried on the last copy added; turned
        away from it by PodTopologySpread while it has a hostname constraint, on the first other node
        that takes it (the cluster's, then the upcoming ones and the other copies), which counts among
        the nodes the option adds (``newNodesWithPods``); else on a fresh copy, while fewer than
        ``limit`` were added."""
        snapshot, option, first = self.snapshot, self.option, self.first
        key = pre_filter_reads(pod)
        if key != self.group:
            self.group, self.past_copies = key, False
        states = snapshot.states(pod, key)
        copies = len(snapshot.copies)
        last: str | None = None  # why the last copy turned it away
        others = range(first)  # the copies but the last still to be tried: the upcoming nodes, ...
        if not self.past_copies:
            for k in range(first, copies):
                last = snapshot.try_copy(pod, states, k)
                if last is None:
                    return True
            self.past_copies = True
        elif copies > first:
            last = snapshot.try_copy(pod, states, copies - 1)
            if last is None:
                return True
            others = range(copies - 1)  # ... and the estimate's other copies
        if last == CONSTRAINTS_NOT_MATCH and _hostname_spread(pod):
            row = snapshot.on_cluster(pod, states)
            if row is None:
                row = next(
                    (snapshot.size + k for k in others if snapshot.try_copy(pod, states, k) is None), None
                )
            if row is not None:
                if row < snapshot.size + first and row not in self.used:
                    self.used.append(row)
                return True
        want, name = _wants(pod, option.template), copy_name(option, copies - first)
        if (
            self.added < self.limit
            and _fits(want, snapshot.fresh(option))
            and snapshot.fresh_rejection(states, option, name) is None
            and snapshot.claims(pod, copies, coming=(option, name)) is None
        ):
            row = snapshot.add_copy(option, name)
            self.added += 1
            snapshot.put(pod, row, want)
            return True
        return False

    def pack(self, pods: list[Pod]) -> list[Pod]:
        """Place the pods First-Fit Decreasing; the pods placed. A unit (a gang) that does not fit whole
        is skipped: it is tried in a fork, committed only when all of it fits. A pod's ResourceClaims
        must be allocatable on its node too (kept there), and the profile's pod-aware filters must let
        it go there."""
        option, snapshot = self.option, self.snapshot
        placed: list[Pod] = []
        admitted = [u for u in _units(pods) if all(snapshot.admitted_by(p, option) for p in u)]
        for unit in sorted(admitted, key=lambda u: _order(u, option.template)):
            self.fork()
            members = sorted(unit, key=lambda p: _order([p], option.template)) if len(unit) > 1 else unit
            if all(self.place(pod) for pod in members):
                self.commit()
                placed.extend(unit)
            else:
                self.revert()
        return placed

    def nodes(self) -> int:
        """The nodes the pods placed need: the copies added, and the nodes already there that the
        estimate put pods on."""
        return self.added + len(self.used)

    def gpus_used(self) -> int:
        """Whole GPUs allocated to claims on the estimate's copies."""
        dra = self.snapshot.snapshot.dra()
        if dra is None:
            return 0
        copies = self.snapshot.copies[self.first :]
        pools = {f"{s.pool}-{name}" for option, name in copies for s in option.slices}
        gpus = node_gpus(s for s in dra.objects.slices if s.pool in pools)
        return sum(1 for d in dra.allocated_devices() if d in gpus)


def estimate(pods: list[Pod], option: PoolOption, snapshot: ScaleUpSnapshot) -> Estimate | None:
    """How many nodes of the pool the pods need, packed on copies of its template added to a fork of
    ``snapshot`` (``binpacking_estimator.go``: the orchestrator's ``ClusterSnapshot``, with the upcoming
    nodes and the pods ``filterOutSchedulable`` put), and the waste they leave."""
    if option.room <= 0 or not pods:
        return None
    snapshot.fork()
    try:
        estimation = _Estimation(snapshot, option)
        placed = estimation.pack(pods)
        added = estimation.nodes()
        if added == 0 or not placed:
            return None
        wasted = waste(option.template, added, placed)
        dra_gpus = len(node_gpus(option.slices)) * added
        if dra_gpus and GPU not in wasted:  # GPUs published for DRA waste like device-plugin GPUs
            used = estimation.gpus_used() if any(p.resource_claims for p in pods) else 0
            wasted[GPU] = (dra_gpus - used) / dra_gpus
    finally:
        snapshot.revert()
    return Estimate(
        option.name, added, tuple(p.key for p in placed), wasted, option.price_per_hour, option.priority
    )


def rejections(pod: Pod, option: PoolOption, snapshot: ScaleUpSnapshot) -> list[str]:
    """Why a fresh copy of the template does not take the pod (``SchedulablePodGroups``: the copy added
    to a fork of ``snapshot``, ``CheckPredicates`` there): the first failing filter's reasons (static
    filters, then the pod-aware filters and NodeResourcesFit in the profile's order, then
    DynamicResources); empty when it takes it. The pod-aware filters judge the copy with its DaemonSet
    pods, beside the cluster's nodes and pods, the upcoming nodes and the pods put there."""
    profile = snapshot.profile
    for f in profile.static_filters:
        reason = f.reject(pod, option.template)
        if reason is not None:
            return [reason]
    snapshot.fork()
    try:
        row = snapshot.add_copy(option, copy_name(option, 0))
        judged = snapshot.judged_by(pod)
        names = [f.name for f in profile.filters]
        fit_at = names.index(NodeResourcesFit.name) if NodeResourcesFit.name in names else len(names)
        reason = snapshot.rejection([s for f, s in judged if names.index(f.name) < fit_at], row)
        if reason is not None:
            return [reason]
        free, want = snapshot.fresh(option), {**pod.requests, PODS: 1}
        short = [insufficient_reason(r) for r in native_first(want) if want[r] > free.get(r, 0)]
        if short:
            return short
        reason = snapshot.rejection([s for f, s in judged if names.index(f.name) >= fit_at], row)
        if reason is not None:
            return [reason]
        refused = snapshot.claims(pod, row - snapshot.size, reserve=False)
        return [filter_reason(refused)] if refused is not None else []
    finally:
        snapshot.revert()


def not_triggered(
    pods: list[Pod],
    options: list[PoolOption],
    backed_off: set[str],
    snapshot: ScaleUpSnapshot,
    limited: Mapping[str, str],
    unhealthy: AbstractSet[str] = frozenset(),
) -> dict[str, str]:
    """``ReasonsMessage`` for each pod no pool grows for: each reason with the number of pools that
    gave it, sorted (upstream's order is a map's); empty when no pool gave one. ``limited``: the pools
    skipped for a cluster-wide resource limit, with their reason (``max cluster cpu limit reached``);
    ``unhealthy``: the groups not ready for scale-up (``NodeGroupScaleUpSafety`` says so before
    backoff)."""
    out = {}
    for pod in pods:
        counts: Counter[str] = Counter()
        for option in options:  # (filterValidScaleUpNodeGroups' order: safety, max size, resources)
            if option.name in unhealthy:
                counts[NOT_READY] += 1
            elif option.name in backed_off:
                counts[IN_BACKOFF] += 1
            elif option.room <= 0:
                counts[MAX_SIZE_REACHED] += 1
            elif option.name in limited:
                counts[limited[option.name]] += 1
            else:
                counts.update(rejections(pod, option, snapshot))
        out[pod.key] = ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))
    return out
