"""cluster-autoscaler's scale-up: which pool to grow, and by how many nodes, for pending pods.

Mirrors ``core/scaleup`` and ``estimator/binpacking_estimator.go`` (the template's copies added to
a ``ClusterSnapshot``, each gang tried in a fork of it): pending pods that fit on
upcoming nodes (launched, not yet registered or not yet GPU-ready: a node with the GPU label
but no GPU allocatable counts as upcoming, ``FilterOutNodesWithUnreadyResources``) are left
out; for each pool with room, pods are packed First-Fit Decreasing (the largest share of the
template's cpu plus memory first, ``DecreasingPodOrderer``; equal ones by the share of everything they
ask for, GPUs included, where upstream sets no order) onto fresh copies of the
pool's template node (DaemonSet pods that would run there take their share first), using the
scheduler profile's own node filters, its resources and its pod-aware filters (NodePorts,
PodTopologySpread, InterPodAffinity). Upstream's ``SchedulePod`` runs every filter on the copy, over
a snapshot holding the cluster's nodes, the copies added so far (each named
``template-node-for-<pool>-<k>``, its ``kubernetes.io/hostname`` label that name) with their DaemonSet
pods, and the pods the estimate put: here each pod's PreFilter states over the cluster ``absorb``
those copies and pods (``scheduling.pod_aware``), so a hostname spread limits the pods per copy, a
zonal one counts the pods of the cluster's zones against the copies' zone, a required anti-affinity
keeps pods apart and a required affinity finds the pods on the copies. A pod that a copy's
PodTopologySpread turns away (``node(s) didn't match pod topology spread constraints``) while it
has a ``kubernetes.io/hostname`` constraint is then tried on the cluster's own nodes, which the new
domains may have opened to it (``tryToScheduleOnNewNodes``), and a node of the cluster it goes to is
counted among the nodes the option adds (``newNodesWithPods``), as upstream counts it. GPUs are also
counted in thousandths, so fractional requests (KAI, HAMi) pack several to a GPU (their split over
single GPUs is not simulated); a gang (pods of one PodGroup) counts only if all its pending members
are placed. An expander then picks one option (``expanders``).

Dynamic Resource Allocation (cluster-autoscaler >= 1.32): a pool's template node carries the
ResourceSlices its nodes will publish, and every copy of the template gets its own copy of them
(``SanitizedNodeResourceSlices``: slice and pool names suffixed, ``nodeName`` the copy's), so the
DynamicResources filter allocates the pods' claims on the copies, in the estimate's
``ClusterSnapshot`` (its fork of the DRA state). A pod whose claims no fresh copy can satisfy
does not make the pool grow.

When no pool grows, each pod left out gets cluster-autoscaler's ``NotTriggerScaleUp`` message
(``processors/status/eventing_scale_up_processor.go``, ``ReasonsMessage``): per pool, why it was
skipped (``max node group size reached``, ``in backoff after failed scale-up``) or why the
template rejects the pod (the failing filter's reasons), counted over the pools.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

import numpy as np

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
#: ... and for every pod when the cluster has ``--max-nodes-total`` nodes (``ReasonsMessage``).
MAX_TOTAL_REACHED = "max total nodes in cluster reached"
#: Why a template copy does not take a pod, besides a pod-aware filter's reason (the estimate's own).
NO_ROOM = "no room on the copy"
NO_CLAIMS = "its claims cannot be allocated on the copy"


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


def copy_name(option: PoolOption, k: int) -> str:
    """The ``k``-th copy of the pool's template in one simulation (upstream names it
    ``template-node-for-<node group>-<random suffix>``; gpufleet counts, so runs repeat)."""
    return f"template-node-for-{option.name}-{k}"


def copy_node(option: PoolOption, k: int) -> Node:
    """The ``k``-th copy of the pool's template as a node (``SanitizedNodeInfo``'s
    ``createSanitizedNode``): named ``copy_name``, its ``kubernetes.io/hostname`` label that name, so
    that each copy is a hostname domain of its own."""
    name = copy_name(option, k)
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


def _claimed(
    snapshot: ClusterSnapshot, option: PoolOption, pod: Pod, k: int, reserve: bool = True
) -> str | None:
    """Allocate the pod's ResourceClaims on template copy ``k`` in the snapshot's DRA state (copy
    ``k`` publishes its slices the first time a pod is tried there) and reserve them (or, not
    ``reserve``, only see whether they could be); None when they fit (or it has none)."""
    dra = snapshot.dra() if pod.resource_claims else None
    if dra is None:
        return None
    while snapshot.published <= k:
        dra.publish(copy_slices(option.slices, copy_name(option, snapshot.published)))
        snapshot.published += 1
    if reserve:
        return dra.place(pod, copy_name(option, k))
    outcome = dra.try_node(pod, copy_name(option, k))
    return outcome if isinstance(outcome, str) else None


def _gpus_used(snapshot: ClusterSnapshot, option: PoolOption) -> int:
    """Whole GPUs allocated to claims on the template copies of the snapshot."""
    dra = snapshot.dra()
    if dra is None:
        return 0
    pools = {f"{s.pool}-{copy_name(option, k)}" for k in range(snapshot.published) for s in option.slices}
    gpus = node_gpus(s for s in dra.objects.slices if s.pool in pools)
    return sum(1 for d in dra.allocated_devices() if d in gpus)


def _hostname_spread(pod: Pod) -> bool:
    """``isPodUsingHostNameTopologyKey``: one of the pod's own spread constraints is on hostname."""
    return any(c.topology_key == HOSTNAME for c in pod.spread_constraints)


class _Packing:
    """One estimate's what-if over ``snapshot`` (upstream's forked ``ClusterSnapshot``): copies of the
    pool's template added, each with its room in the snapshot and its DaemonSet pods, and the pods put
    on them or on the cluster's nodes; the profile's pod-aware filters judge the pods over all of it.

    The copies are rows past the cluster's (``size + k``). The pod-aware states count the copies
    added and the pods put, in order (``pod_aware.WhatIf``, ``aware``). ``fork``, ``commit`` and
    ``revert`` follow the snapshot's: a trial reverted takes its copies and pods back there too."""

    def __init__(
        self,
        option: PoolOption,
        profile: Profile,
        snapshot: ClusterSnapshot,
        pods: Sequence[Pod],
        exclude: AbstractSet[int],
    ) -> None:
        self.option, self.profile, self.snapshot, self.exclude = option, profile, snapshot, exclude
        self.state = snapshot.state
        self.size = len(self.state.nodes)
        self.fresh = _free(option)  # a new copy's room, its DaemonSet pods there
        #: the copies as nodes, made when a pod-aware state first needs one (the snapshot keeps their room)
        self.nodes: list[Node | None] = []
        self.used: list[int] = []  # the cluster's rows the estimate put pods on
        self.added = 0  # copies added beyond the first ones (the upcoming nodes)
        #: the pods tried last (their ``pre_filter_reads``), and whether one of them fitted no copy
        self.group: tuple[object, ...] | None = None
        self.past_copies = False
        self.saved: list[tuple[int, int, int, int, tuple[object, ...] | None, bool]] = []
        #: pods with inter-pod terms may be put: a pod's InterPodAffinity must see their anti-affinity
        with_terms = any(p.pod_affinity is not None for p in (*pods, *option.daemons))
        self.aware = WhatIf(self.state, profile.pod_filters, with_terms, self.node)
        self.admits: dict[tuple[tuple[object, ...], int], bool] = {}  # static filters, per shape and row

    # -- the snapshot's fork, commit, revert, with the events ------------------------------
    def fork(self) -> None:
        self.snapshot.fork()
        self.saved.append(
            (self.aware.mark(), len(self.nodes), len(self.used), self.added, self.group, self.past_copies)
        )

    def commit(self) -> None:
        self.snapshot.commit()
        self.saved.pop()

    def revert(self) -> None:
        self.snapshot.revert()
        events, nodes, used, self.added, self.group, self.past_copies = self.saved.pop()
        self.aware.back_to(events)
        del self.nodes[nodes:]
        del self.used[used:]

    def node(self, row: int) -> Node:
        """The copy of ``row`` as a node."""
        k = row - self.size
        node = self.nodes[k]
        if node is None:
            node = self.nodes[k] = copy_node(self.option, k)
        return node

    # -- what the estimate adds ------------------------------------------------------------
    def add_copy(self) -> int:
        """A fresh copy joins, with its DaemonSet pods; its row."""
        k = self.snapshot.add_copy(self.fresh)
        self.nodes.append(None)
        row = self.size + k
        self.aware.add_node(row)
        for daemon in self.option.daemons:
            self.aware.put(daemon, row)
        return row

    def put(self, pod: Pod, row: int, want: Resources, milli: int = 0) -> None:
        """The pod goes on ``row`` (a copy: ``want`` of its room; a node of the cluster: its columns
        and ``milli`` of its GPU thousandths)."""
        if row >= self.size:
            self.snapshot.take_from_copy(row - self.size, want)
        else:
            self.snapshot.put(pod, row, milli)
            if row not in self.used:
                self.used.append(row)
        self.aware.put(pod, row)

    # -- the filters -----------------------------------------------------------------------
    def states(self, pod: Pod, key: tuple[object, ...] | None = None) -> list[PodFilterState]:
        """The pod's pod-aware PreFilter states over the cluster and all the estimate added to it
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

    def fresh_rejection(self, states: Sequence[PodFilterState]) -> str | None:
        """``rejection`` on the copy that would be added next, its DaemonSet pods there (judged on
        copies of the states: the copy is added only if the pod goes there)."""
        if not states:
            return None
        row = self.size + len(self.nodes)
        node, daemons = copy_node(self.option, len(self.nodes)), [(d, row) for d in self.option.daemons]
        for s in states:
            trial = s.changed((), ())
            trial.absorb([node], daemons)
            rejected = trial.judge(row)
            if rejected is not None:
                return rejected[0]
        return None

    def on_cluster(self, pod: Pod, states: Sequence[PodFilterState]) -> bool:
        """The pod put on the first node of the cluster that takes it here (part of upstream's
        ``SchedulePodOnAnyNodeMatching`` on any node but the last copy): room for it (GPU thousandths
        too), the static filters, the pod-aware states, its claims. False when none does."""
        state, snapshot = self.state, self.snapshot
        rows = np.flatnonzero(state.active)
        if self.exclude:
            rows = rows[~np.isin(rows, sorted(self.exclude))]
        if not len(rows):
            return False
        want = state.pod_vectors(pod)[0]
        free, free_milli = snapshot.free(rows)
        if len(want) > free.shape[1]:
            return False  # a resource no node has
        share = pod.gpu_share
        milli = MILLI * pod.gpus if share is None else state.gpu_shares().milli_needed(share, rows)
        shape = pod.shape()
        room = np.flatnonzero((free >= want).all(axis=1) & (free_milli >= milli))
        if states and len(room):  # the pod-aware filters over node columns (``passes``)
            ok = np.ones(len(room), dtype=bool)
            for s in states:
                ok &= s.passes(rows[room])
            room = room[ok]
        for j in room.tolist():
            row = int(rows[j])
            admits = self.admits.get((shape, row))
            if admits is None:
                node = state.nodes[row]
                admits = all(f.reject(pod, node) is None for f in self.profile.static_filters)
                self.admits[shape, row] = admits
            if not admits:
                continue
            dra = snapshot.dra() if pod.resource_claims else None
            if dra is not None and dra.place(pod, state.nodes[row].name) is not None:
                continue
            self.put(pod, row, {}, milli if isinstance(milli, int) else int(milli[j]))
            return True
        return False

    def _on_copy(self, pod: Pod, want: Resources, states: Sequence[PodFilterState], k: int) -> str | None:
        """Why copy ``k`` does not take the pod (its room, a pod-aware filter's reason, its claims); None
        when it does (its claims then reserved there)."""
        if not _fits(want, self.snapshot.copy_free(k)):
            return NO_ROOM
        reason = self.rejection(states, self.size + k) if states else None
        if reason is None and _claimed(self.snapshot, self.option, pod, k) is not None:
            return NO_CLAIMS
        return reason

    def place(self, pod: Pod, limit: int) -> bool:
        """Put the pod as ``Estimate`` does; False when it goes nowhere.

        Pods alike (``pre_filter_reads``, their requests among it) that come one after another are an
        equivalence group: until one of them fits none of the copies, each goes on the first copy that
        takes it (``tryToScheduleOnExistingNodes``; resources, the pod-aware filters, its claims).
        From then on (``tryToScheduleOnNewNodes``) one is tried on the last copy added; turned away
        from it by PodTopologySpread while it has a hostname constraint, on the first other node that
        takes it (the cluster's, then the copies); else on a fresh copy, while fewer than ``limit``
        were added."""
        option, snapshot = self.option, self.snapshot
        key = pre_filter_reads(pod)
        if key != self.group:
            self.group, self.past_copies = key, False
        want = _wants(pod, option.template)
        states = self.states(pod, key)
        copies = snapshot.copies()
        last: str | None = None  # why the last copy turned it away
        others = range(0)  # the other copies, where they are still to be tried
        if not self.past_copies:
            for k in range(copies):
                last = self._on_copy(pod, want, states, k)
                if last is None:
                    self.put(pod, self.size + k, want)
                    return True
            self.past_copies = True
        elif copies:
            last = self._on_copy(pod, want, states, copies - 1)
            if last is None:
                self.put(pod, self.size + copies - 1, want)
                return True
            others = range(copies - 1)
        if last == CONSTRAINTS_NOT_MATCH and _hostname_spread(pod):
            # any node but the last copy: the cluster's, then the other copies
            if self.on_cluster(pod, states):
                return True
            for k in others:
                if self._on_copy(pod, want, states, k) is None:
                    self.put(pod, self.size + k, want)
                    return True
        if (
            self.added < limit
            and _fits(want, self.fresh)
            and self.fresh_rejection(states) is None
            and _claimed(snapshot, option, pod, copies) is None
        ):
            row = self.add_copy()
            self.added += 1
            self.put(pod, row, want)
            return True
        return False


def pack(
    pods: list[Pod],
    option: PoolOption,
    profile: Profile,
    nodes: int,
    limit: int,
    snapshot: ClusterSnapshot,
    exclude: AbstractSet[int] = frozenset(),
) -> tuple[int, list[Pod]]:
    """Place pods on ``nodes`` template copies added to ``snapshot``, adding up to ``limit`` more.

    Returns (the nodes the pods placed need beyond the first ``nodes`` copies: the copies added, and
    the nodes of the cluster outside ``exclude`` that the estimate put pods on; the pods placed). A
    unit (a gang) that does not fit whole is skipped: it is tried in a fork of the snapshot,
    committed only when all of it fits. A pod's ResourceClaims must be allocatable on its copy too
    (kept there), and the profile's pod-aware filters must let it go there (``_Packing``).
    """
    packing = _Packing(option, profile, snapshot, pods, exclude)
    for _ in range(nodes):
        packing.add_copy()
    placed: list[Pod] = []
    admitted = [u for u in _units(pods) if all(_admits(profile, p, option.template) for p in u)]
    for unit in sorted(admitted, key=lambda u: _order(u, option.template)):
        packing.fork()
        if all(packing.place(pod, limit) for pod in sorted(unit, key=lambda p: _order([p], option.template))):
            packing.commit()
            placed.extend(unit)
        else:
            packing.revert()
    return packing.added + len(packing.used), placed


def still_pending(
    pods: list[Pod],
    options: list[PoolOption],
    profile: Profile,
    state: ClusterState,
    exclude: AbstractSet[int] = frozenset(),
) -> list[Pod]:
    """Pods that do not fit on the upcoming nodes of any pool."""
    remaining = list(pods)
    for option in options:
        if option.upcoming and remaining:
            snapshot = ClusterSnapshot(state)
            _, placed = pack(remaining, option, profile, option.upcoming, 0, snapshot, exclude)
            keys = {p.key for p in placed}
            remaining = [p for p in remaining if p.key not in keys]
    return remaining


def estimate(
    pods: list[Pod],
    option: PoolOption,
    profile: Profile,
    state: ClusterState,
    exclude: AbstractSet[int] = frozenset(),
) -> Estimate | None:
    """How many nodes of the pool the pods need, packed on copies of its template in a snapshot of
    ``state`` (``binpacking_estimator.go``), and the waste they leave; ``exclude``: nodes of the
    cluster no pod goes to (being deleted)."""
    if option.room <= 0 or not pods:
        return None
    snapshot = ClusterSnapshot(state)
    added, placed = pack(pods, option, profile, 0, option.room, snapshot, exclude)
    if added == 0 or not placed:
        return None
    wasted = waste(option.template, added, placed)
    dra_gpus = len(node_gpus(option.slices)) * added
    if dra_gpus and GPU not in wasted:  # GPUs published for DRA waste like device-plugin GPUs
        used = _gpus_used(snapshot, option) if any(p.resource_claims for p in pods) else 0
        wasted[GPU] = (dra_gpus - used) / dra_gpus
    return Estimate(
        option.name, added, tuple(p.key for p in placed), wasted, option.price_per_hour, option.priority
    )


def rejections(pod: Pod, option: PoolOption, profile: Profile, snapshot: ClusterSnapshot) -> list[str]:
    """Why a fresh copy of the template does not take the pod: the first failing filter's reasons
    (static filters, then the pod-aware filters and NodeResourcesFit in the profile's order, then
    DynamicResources on copy 0 in ``snapshot``); empty when it takes it. The pod-aware filters judge
    copy 0 with its DaemonSet pods, beside the cluster's nodes and pods."""
    for f in profile.static_filters:
        reason = f.reject(pod, option.template)
        if reason is not None:
            return [reason]
    judged: list[tuple[PodAwareFilter, PodFilterState]] = []
    if profile.pod_filters:
        packing = _Packing(option, profile, ClusterSnapshot(snapshot.state), [pod], frozenset())
        packing.add_copy()
        judged = packing.judged_by(pod)
    names = [f.name for f in profile.filters]
    fit_at = names.index(NodeResourcesFit.name) if NodeResourcesFit.name in names else len(names)
    row = len(snapshot.state.nodes)  # copy 0
    reason = _Packing.rejection([s for f, s in judged if names.index(f.name) < fit_at], row)
    if reason is not None:
        return [reason]
    free, want = _free(option), {**pod.requests, PODS: 1}
    short = [insufficient_reason(r) for r in native_first(want) if want[r] > free.get(r, 0)]
    if short:
        return short
    reason = _Packing.rejection([s for f, s in judged if names.index(f.name) >= fit_at], row)
    if reason is not None:
        return [reason]
    refused = _claimed(snapshot, option, pod, 0, reserve=False)
    return [filter_reason(refused)] if refused is not None else []


def not_triggered(
    pods: list[Pod],
    options: list[PoolOption],
    profile: Profile,
    backed_off: set[str],
    state: ClusterState,
) -> dict[str, str]:
    """``ReasonsMessage`` for each pod no pool grows for: each reason with the number of pools that
    gave it, sorted (upstream's order is a map's); empty when no pool gave one."""
    snapshots = {o.name: ClusterSnapshot(state) for o in options if o.room > 0 and o.name not in backed_off}
    out = {}
    for pod in pods:
        counts: Counter[str] = Counter()
        for option in options:
            if option.room <= 0:
                counts[MAX_SIZE_REACHED] += 1
            elif option.name in backed_off:
                counts[IN_BACKOFF] += 1
            else:
                counts.update(rejections(pod, option, profile, snapshots[option.name]))
        out[pod.key] = ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))
    return out
