"""cluster-autoscaler's scale-up: which pool to grow, and by how many nodes, for pending pods.

Mirrors ``core/scaleup`` and ``estimator/binpacking_estimator.go`` (the template's copies added to
a ``ClusterSnapshot``, each gang tried in a fork of it): pending pods that fit on
upcoming nodes (launched, not yet registered or not yet GPU-ready: a node with the GPU label
but no GPU allocatable counts as upcoming, ``FilterOutNodesWithUnreadyResources``) are left
out; for each pool with room, pods are packed First-Fit Decreasing (the largest share of the
template's cpu plus memory first, ``DecreasingPodOrderer``; equal ones by the share of everything they
ask for, GPUs included, where upstream sets no order) onto fresh copies of the
pool's template node (DaemonSet pods that would run there take their share first), using the
scheduler profile's own node filters, its resources and its NodePorts (upstream's ``SchedulePod``
runs the profile's filters on the copy: a pod does not go on a copy where a pod the estimate put
there binds a conflicting host port); InterPodAffinity and PodTopologySpread are left out. GPUs
are also counted in thousandths, so fractional requests (KAI, HAMi) pack several to a GPU (their
split over single GPUs is not simulated); a gang (pods of one PodGroup) counts only if all its
pending members are placed. An expander then picks one option (``expanders``).

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
from dataclasses import dataclass, replace

from gpufleet.cluster.shares import gpu_memory_bytes, shareable
from gpufleet.cluster.snapshot import ClusterSnapshot
from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.dra.allocator import filter_reason
from gpufleet.model.dra import ResourceSlice
from gpufleet.model.dra_slices import node_gpus
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.host_ports import HostPort
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY, PODS, Resources, native_first
from gpufleet.scheduling.gangs import group_key
from gpufleet.scheduling.plugins.node_ports import REASON as PORTS_TAKEN
from gpufleet.scheduling.plugins.node_ports import NodePorts, fits_ports
from gpufleet.scheduling.plugins.node_resources_fit import insufficient_reason
from gpufleet.scheduling.profile import Profile

#: Pseudo-resource of the estimate: thousandths of a template node's GPUs.
GPU_MILLI = "gpufleet.io/gpu-milli"
#: ``NotTriggerScaleUp`` reasons for a skipped pool (``core/scaleup/orchestrator/skippedreasons.go``).
MAX_SIZE_REACHED = "max node group size reached"
IN_BACKOFF = "in backoff after failed scale-up"
#: ... and for every pod when the cluster has ``--max-nodes-total`` nodes (``ReasonsMessage``).
MAX_TOTAL_REACHED = "max total nodes in cluster reached"


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


def _judges_ports(profile: Profile) -> bool:
    """Whether the profile runs NodePorts (the estimate then keeps each copy's host ports)."""
    return any(f.name == NodePorts.name for f in profile.pod_filters)


def _daemon_ports(option: PoolOption) -> list[HostPort]:
    """The host ports a fresh copy's DaemonSet pods bind."""
    return [port for daemon in option.daemons for port in daemon.host_ports]


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


def pack(
    pods: list[Pod],
    option: PoolOption,
    profile: Profile,
    nodes: int,
    limit: int,
    snapshot: ClusterSnapshot,
) -> tuple[int, list[Pod]]:
    """Place pods on ``nodes`` template copies added to ``snapshot``, adding up to ``limit`` more.

    Returns (nodes added, pods placed). A unit (a gang) that does not fit whole is skipped: it is
    tried in a fork of the snapshot, committed only when all of it fits. A pod's ResourceClaims
    must be allocatable on its copy too (kept there), and with NodePorts in the profile its host
    ports free there (``fitsPorts`` against the ports the pods put on that copy bind).
    """
    fresh, daemon_ports = _free(option), _daemon_ports(option)  # a new copy's room and ports in use
    for _ in range(nodes):
        snapshot.add_copy(fresh, daemon_ports)
    added = 0
    placed: list[Pod] = []
    admitted = [u for u in _units(pods) if all(_admits(profile, p, option.template) for p in u)]
    ports = _judges_ports(profile)
    for unit in sorted(admitted, key=lambda u: _order(u, option.template)):
        snapshot.fork()
        trial_added = added
        ok = True
        for pod in sorted(unit, key=lambda p: _order([p], option.template)):
            want = _wants(pod, option.template)
            slot = next(
                (
                    k
                    for k in range(snapshot.copies())
                    if _fits(want, snapshot.copy_free(k))
                    and (not ports or fits_ports(pod.host_ports, snapshot.copy_ports(k)))
                    and _claimed(snapshot, option, pod, k) is None
                ),
                None,
            )
            if (
                slot is None
                and trial_added < limit
                and _fits(want, fresh)
                and (not ports or fits_ports(pod.host_ports, daemon_ports))
                and _claimed(snapshot, option, pod, snapshot.copies()) is None
            ):
                slot = snapshot.add_copy(fresh, daemon_ports)
                trial_added += 1
            if slot is None:
                ok = False
                break
            snapshot.take_from_copy(slot, want, pod.host_ports)
        if ok:
            snapshot.commit()
            added = trial_added
            placed.extend(unit)
        else:
            snapshot.revert()
    return added, placed


def still_pending(
    pods: list[Pod], options: list[PoolOption], profile: Profile, state: ClusterState
) -> list[Pod]:
    """Pods that do not fit on the upcoming nodes of any pool."""
    remaining = list(pods)
    for option in options:
        if option.upcoming and remaining:
            _, placed = pack(remaining, option, profile, option.upcoming, 0, ClusterSnapshot(state))
            keys = {p.key for p in placed}
            remaining = [p for p in remaining if p.key not in keys]
    return remaining


def estimate(pods: list[Pod], option: PoolOption, profile: Profile, state: ClusterState) -> Estimate | None:
    """How many nodes of the pool the pods need, packed on copies of its template in a snapshot of
    ``state`` (``binpacking_estimator.go``), and the waste they leave."""
    if option.room <= 0 or not pods:
        return None
    snapshot = ClusterSnapshot(state)
    added, placed = pack(pods, option, profile, 0, option.room, snapshot)
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
    (static filters, then NodeResourcesFit, then DynamicResources on copy 0 in ``snapshot``); empty
    when it takes it."""
    for f in profile.static_filters:
        reason = f.reject(pod, option.template)
        if reason is not None:
            return [reason]
    free, want = _free(option), {**pod.requests, PODS: 1}
    short = [insufficient_reason(r) for r in native_first(want) if want[r] > free.get(r, 0)]
    if short:
        return short
    if _judges_ports(profile) and not fits_ports(pod.host_ports, _daemon_ports(option)):
        return [PORTS_TAKEN]
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
