"""cluster-autoscaler's scale-down decision: which nodes are unneeded, and what blocks them.

Mirrors ``core/scaledown`` and ``simulator/``: a node is *unneeded* when it is eligible
(``eligibility.Checker``: not annotated ``cluster-autoscaler.kubernetes.io/scale-down-disabled:
"true"``, its utilisation computable and at or below ``--scale-down-gpu-utilization-threshold`` (0.5)
on a GPU node, ``--scale-down-utilization-threshold`` (0.5) elsewhere — on a GPU node GPU requests
over GPU allocatable only (``utilization.Calculate`` with a GPU config), on a node that publishes DRA
ResourceSlices the most allocated share of one of its device pools, elsewhere the larger of the cpu
and memory shares; DaemonSet pods count, but under ``--ignore-daemonsets-utilization``, which takes
their requests out of both the pods' and the node's (``CalculateUtilizationOfResource``); a node
with an incomplete DRA pool, or without cpu or memory allocatable, has none, and stays; a node that is
not Ready stays when ``--scale-down-unready-enabled`` is false) and every other pod on it can be
placed on the remaining nodes by the scheduler's filters (a pod with ResourceClaims only where they
can be allocated: the drain simulation first releases the claims of the node's pods). The pending pods
``filterOutSchedulable`` put on a node count as its pods (``PendingOn``): cluster-autoscaler's scale-down
reads the ``ClusterSnapshot`` that processor packed them into (``StaticAutoscaler.RunOnce``), so they add to
the node's utilisation, must move like its other pods when its removal is simulated (the drainability
rules judging them, as just created) and take their room on the nodes the others would move to; their
ResourceClaims are not allocated there (gpufleet cannot judge a drain that depends on them). How long a node
must have been unneeded before it goes (``--scale-down-unneeded-time``, or
``--scale-down-unready-time`` for a node that is not Ready) is ``cluster_autoscaler.scale_down``'s.
What blocks a drain, and which pods move, is ``drainability`` (upstream's drainability rules).
gpufleet's GPU-aware option (``gpuAwareScaleDown``) also refuses nodes where a GPU pod is
computing: upstream drains a half-used GPU node under a training job, which loses the work
since its last checkpoint (and restarts a whole gang).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from enum import IntEnum
from functools import cached_property
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from gpufleet.autoscaling.drainability import (
    DEFAULT_DELETE_OPTIONS,
    SYSTEM_NAMESPACE,
    DeleteOptions,
    Drain,
    daemon_set_pod,
    drainable,
    long_terminating,
)
from gpufleet.autoscaling.expendable import Expendable
from gpufleet.autoscaling.free_rows import FreeRows, free_rows
from gpufleet.cluster.snapshot import ClusterSnapshot
from gpufleet.cluster.state import Assignment, ClusterState, IntArray
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.node import NO_SCHEDULE, Taint
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.pod_aware import Placed, PodCycle, PodFilterState
from gpufleet.scheduling.profile import Profile

Int8Array = npt.NDArray[np.int8]

#: the pending pods ``filterOutSchedulable`` put on nodes of the cluster, by node row (upstream's
#: ``TrySchedulePods`` into ``AutoscalingContext.ClusterSnapshot``, which scale-down then reads)
PendingOn = Mapping[int, Sequence[Pod]]
#: a placed pod's ``creationTimestamp`` on the run's clock, by its key (None: not known)
CreatedAt = Callable[[str], float | None]
NO_PENDING: PendingOn = {}


@dataclass(frozen=True)
class SnapshotPods:
    """How the ``ClusterSnapshot`` scale-down reads differs from the cluster, node row by node row: the
    ``pending`` pods put on nodes (``filterOutSchedulable``, ``addPreemptingPodsToSnapshot``) are among their
    pods, the ``expendable`` ones (``autoscaling.expendable``: ``RunOnce`` builds the snapshot without them)
    are not."""

    pending: PendingOn = field(default_factory=dict)
    expendable: Expendable = field(default_factory=dict)
    #: the pods long terminating (``long_terminating_on``), by node row: in the snapshot, not counted in
    #: utilisation (``utilization.Calculate``) and skipped by a drain (``_drains``)
    long_terminating: Expendable = field(default_factory=dict)

    def moves(self, i: int) -> list[tuple[Pod, int]]:
        """How node ``i``'s pods as utilisation counts them differ from the cluster's: the pending pods put
        there (+1), the expendable and long-terminating ones left out (-1)."""
        return [(pod, 1) for pod in self.pending.get(i, ())] + [(a.pod, -1) for a in self.left_out(i)]

    def left_out(self, i: int) -> tuple[Assignment, ...]:
        """Node ``i``'s pods scale-down neither counts nor moves: the expendable and long-terminating ones."""
        return (*self.expendable.get(i, ()), *self.long_terminating.get(i, ()))

    def placed(self, state: ClusterState, i: int) -> list[Assignment]:
        """Node ``i``'s placed pods in the snapshot that scale-down counts and moves, by key: its pods but the
        expendable and long-terminating ones."""
        gone = {a.pod.key for a in self.left_out(i)}
        pods = state.pods_on[i].values()
        return sorted((a for a in pods if a.pod.key not in gone) if gone else pods, key=lambda a: a.pod.key)


#: the snapshot as the cluster is: no pending pod put anywhere, no pod left out
AS_IS = SnapshotPods()


def long_terminating_on(state: ClusterState, now: float) -> Expendable:
    """The pods deleted longer ago than their grace period and 30 s (``drain.IsPodLongTerminating``: on a
    node whose kubelet is down nobody confirms their end), by node row."""
    out: dict[int, list[Assignment]] = {}
    for a in state.deleting.values():
        if long_terminating(a.pod, a.deleted_s, now):
            out.setdefault(a.node, []).append(a)
    return out


#: the taint cluster-autoscaler puts on a node it deletes (``taints.ToBeDeletedTaint``, NoSchedule; its value
#: the time it was put, in Unix seconds)
TO_BE_DELETED = Taint("ToBeDeletedByClusterAutoscaler", "", NO_SCHEDULE)


class UnremovableReason(IntEnum):
    """Why a node may not go, as cluster-autoscaler names it (``simulator.UnremovableReason``), with
    upstream's numbers: the type is an ``int`` counted from ``NoReason`` (0) in the order of its constants
    (1.34.5 ``simulator/cluster.go``) and has no ``String`` method, so ``metrics.UpdateUnremovableNodesCount``
    writes it as its number (``fmt.Sprintf("%v", reason)``). Only the reasons gpufleet finds are listed."""

    SCALE_DOWN_DISABLED_ANNOTATION = 1  # ScaleDownDisabledAnnotation
    SCALE_DOWN_UNREADY_DISABLED = 2  # ScaleDownUnreadyDisabled
    NOT_UNNEEDED_LONG_ENOUGH = 4  # NotUnneededLongEnough
    NOT_UNREADY_LONG_ENOUGH = 5  # NotUnreadyLongEnough
    NODE_GROUP_MIN_SIZE_REACHED = 6  # NodeGroupMinSizeReached
    ATOMIC_SCALE_DOWN_FAILED = 8  # AtomicScaleDownFailed
    NOT_UNDERUTILIZED = 11  # NotUnderutilized
    RECENTLY_UNREMOVABLE = 13  # RecentlyUnremovable
    NO_PLACE_TO_MOVE_PODS = 14  # NoPlaceToMovePods
    BLOCKED_BY_POD = 15  # BlockedByPod
    UNEXPECTED_ERROR = 16  # UnexpectedError


#: The reasons ``RemovalSimulator.SimulateNodeRemoval`` gives: ``Planner.categorizeNodes`` keeps a node it
#: found so in ``unremovable.Nodes`` (``AddTimeout``), not checked again for
#: ``--unremovable-node-recheck-timeout``.
SIMULATION_REASONS = frozenset({UnremovableReason.NO_PLACE_TO_MOVE_PODS, UnremovableReason.BLOCKED_BY_POD})


class Unremovable(NamedTuple):
    """Why a node may not go: upstream's reason, and gpufleet's words for it."""

    reason: UnremovableReason
    message: str


@dataclass(frozen=True)
class UtilizationRule:
    """When cluster-autoscaler finds a node underutilized (``isNodeAtOrBelowUtilizationThreshold``):
    at or below the GPU threshold on a node with GPUs, the other elsewhere; DaemonSet pods counted or
    not."""

    threshold: float = 0.5  # --scale-down-utilization-threshold
    gpu_threshold: float = 0.5  # --scale-down-gpu-utilization-threshold
    ignore_daemonsets: bool = False  # --ignore-daemonsets-utilization


def utilizations(
    state: ClusterState,
    rows: Sequence[int],
    ignore_daemonsets: bool = False,
    snapshot: SnapshotPods = AS_IS,
) -> list[float | None]:
    """Each node's utilisation: its GPU share on a node with GPUs, else its busiest DRA device pool,
    else the larger of its cpu and memory shares; None where cluster-autoscaler gets an error: one of
    the node's DRA pools is incomplete, or cpu or memory allocatable is missing or zero
    (``CalculateUtilizationOfResource``). With ``ignore_daemonsets``, the DaemonSet pods' requests are
    taken out of the pods' and out of the node's allocatable (a node that DaemonSet pods fill has an
    infinite share, or none: Go's float division). The node's pods are the ``snapshot``'s: the pending pods
    put on it count (``utilization.Calculate`` sums the requests of the snapshot's ``NodeInfo``), the
    expendable ones do not. A scan reads the few nodes
    whose verdict it makes afresh, one by one (the quotients of whole numbers below 2**53, as the columns
    would give them)."""
    col = state.res_index.get(GPU)
    cpu, memory = state.res_index.get(CPU), state.res_index.get(MEMORY)
    dra = state.dra
    out: list[float | None] = []
    for i in rows:
        alloc, req = state.alloc[i].tolist(), state.requested[i].tolist()
        for pod, sign in snapshot.moves(i):
            req = [r + sign * int(v) for r, v in zip(req, state.pod_vectors(pod)[0], strict=False)]
        daemons = _daemon_requests(state, i, snapshot) if ignore_daemonsets else {}
        if col is not None and alloc[col] > 0:
            out.append(_share(req[col], alloc[col], daemons.get(GPU, 0)))
        elif dra is not None and (devices := dra.pool_utilization(state.nodes[i].name)) is not None:
            out.append(None if dra.incomplete_pool(state.nodes[i].name) else devices)
        elif cpu is not None and memory is not None and alloc[cpu] > 0 and alloc[memory] > 0:
            shares = [
                _share(req[c], alloc[c], daemons.get(name, 0)) for c, name in ((cpu, CPU), (memory, MEMORY))
            ]
            out.append(max(shares))
        else:
            out.append(None)
    return out


def _daemon_requests(state: ClusterState, i: int, snapshot: SnapshotPods) -> dict[str, int]:
    """What the DaemonSet pods on node ``i`` in the ``snapshot`` request, summed."""
    total: dict[str, int] = {}
    for pod in (*(a.pod for a in snapshot.placed(state, i)), *snapshot.pending.get(i, ())):
        if daemon_set_pod(pod):
            for name, value in pod.requests.items():
                total[name] = total.get(name, 0) + value
    return total


def _share(requested: int, allocatable: int, daemons: int) -> float:
    """``(requested - daemons) / (allocatable - daemons)`` as Go divides float64: nothing left over
    nothing is NaN, some over nothing infinite."""
    used, room = requested - daemons, allocatable - daemons
    if room:
        return used / room
    return math.nan if used == 0 else math.copysign(math.inf, used)


def unremovable_reasons(
    state: ClusterState,
    rows: Sequence[int],
    rule: UtilizationRule,
    unready_disabled: AbstractSet[int] = frozenset(),
    snapshot: SnapshotPods = AS_IS,
) -> list[Unremovable | None]:
    """Why each node is not even a scale-down candidate (``unremovableReasonAndNodeUtilization``:
    ``ScaleDownDisabledAnnotation``, ``UnexpectedError``, ``ScaleDownUnreadyDisabled``,
    ``NotUnderutilized``, in that order), or None. ``unready_disabled``: the rows of nodes that are not
    Ready while ``--scale-down-unready-enabled`` is false; ``snapshot``: the pods as the snapshot has
    them."""
    out: list[Unremovable | None] = []
    gpus = state.res_index.get(GPU)
    used_by = utilizations(state, rows, rule.ignore_daemonsets, snapshot)
    for i, used in zip(rows, used_by, strict=True):
        node = state.nodes[i]
        gpu_node = gpus is not None and int(state.alloc[i, gpus]) > 0
        threshold = rule.gpu_threshold if gpu_node else rule.threshold
        if node.scale_down_disabled:
            annotation = 'cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"'
            reason = UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION
            message = f"node {node.name} is annotated {annotation}"
        elif used is None:
            reason = UnremovableReason.UNEXPECTED_ERROR
            message = (
                f"utilization of node {node.name} cannot be computed "
                "(no cpu or memory allocatable, or an incomplete DRA pool)"
            )
        elif i in unready_disabled:
            reason = UnremovableReason.SCALE_DOWN_UNREADY_DISABLED
            message = f"node {node.name} is unready and scale-down of unready nodes is disabled"
        elif used > threshold:  # isNodeAtOrBelowUtilizationThreshold: at it is underutilized, NaN too
            reason, message = UnremovableReason.NOT_UNDERUTILIZED, f"utilization {used:.2f} > {threshold}"
        else:
            out.append(None)
            continue
        out.append(Unremovable(reason, message))
    return out


def unremovable_reason(
    state: ClusterState, i: int, rule: UtilizationRule, unready_disabled: bool = False
) -> Unremovable | None:
    """``unremovable_reasons`` of one node (``unready_disabled``: it is not Ready, and
    ``--scale-down-unready-enabled`` is false)."""
    return unremovable_reasons(state, [i], rule, {i} if unready_disabled else frozenset())[0]


def held_milli(state: ClusterState, pod: Pod, idx: IntArray) -> int:
    """The GPU thousandths the pod takes on the node ``idx`` (one row): its whole GPUs', or what its
    fractional share needs there (at most its GPUs whole)."""
    share = pod.gpu_share
    if share is None:
        return MILLI * pod.gpus
    return min(int(state.gpu_shares().milli_needed(share, idx)[0]), MILLI * share.count)


class PlacementBase:
    """What is free on the active nodes outside ``exclude``, read once from the cluster: the snapshot
    a scan forks a trial from for each node it considers (cluster-autoscaler's ``RemovalSimulator``
    forks its ``ClusterSnapshot`` per candidate and reverts it after). A trial only records the rows
    its own pods took, so it costs what its pods do, not what the cluster holds.

    Per pod shape it lists, once, the nodes (their positions in ``rows``) with room here: a trial's
    pods only take room, so no node outside that list can take a pod in any trial. Nodes the profile's
    static filters refuse the shape are dropped from its list as they are found (``drop``). The
    pod-aware PreFilter states of each pod, which depend only on the cluster, are kept too. The ``pending``
    pods put on nodes (``PendingOn``) take their room there, and the pod-aware filters count them; the
    ``expendable`` pods (``autoscaling.expendable``) are not in the snapshot: their room is free, and the
    pod-aware filters do not count them."""

    def __init__(
        self,
        state: ClusterState,
        exclude: AbstractSet[int],
        snapshot: SnapshotPods = AS_IS,
    ):
        self.state = state
        self.exclude = frozenset(exclude)
        self.snapshot = snapshot
        self._rooms: dict[tuple[object, ...], list[int]] = {}
        self._milli: dict[tuple[object, ...], IntArray] = {}
        self.cycles: dict[str, list[PodFilterState]] = {}

    # read when a trial first needs them (a scan may fork none), from what the last scan read
    @cached_property
    def _read(self) -> FreeRows:
        read = free_rows(self.state, self.exclude)
        pending, expendable = self.snapshot.pending, self.snapshot.expendable
        if not pending and not expendable:
            return read
        free, milli, width = read.free.copy(), read.milli.copy(), read.free.shape[1]
        moves = [(row, pods, 1) for row, pods in pending.items()]
        moves += [(row, [a.pod for a in gone], -1) for row, gone in expendable.items()]
        for row, pods, sign in moves:
            j = bisect.bisect_left(read.rows, row)
            if j == len(read.rows) or read.rows[j] != row:
                continue
            for pod in pods:
                free[j] -= sign * self.state.pod_vectors(pod)[0][:width]
                milli[j] -= sign * held_milli(self.state, pod, read.idx[j : j + 1])
        free.flags.writeable = milli.flags.writeable = False
        return replace(read, free=free, milli=milli)

    @property
    def idx(self) -> IntArray:
        return self._read.idx

    @property
    def rows(self) -> list[int]:
        return self._read.rows

    @property
    def free(self) -> tuple[IntArray, IntArray]:
        """What is free on each node of ``rows``: each resource column, and GPU thousandths (read-only)."""
        return self._read.free, self._read.milli

    def position(self, row: int) -> int | None:
        """Where node ``row`` is in ``rows`` (None: excluded here, or not active)."""
        j = bisect.bisect_left(self.rows, row)
        return j if j < len(self.rows) and self.rows[j] == row else None

    def milli(self, pod: Pod, shape: tuple[object, ...]) -> IntArray | int:
        """The GPU thousandths the pod needs on each node (a fractional share's differ by node)."""
        share = pod.gpu_share
        if share is None:
            return MILLI * pod.gpus
        needed = self._milli.get(shape)
        if needed is None:
            needed = self._milli[shape] = self.state.gpu_shares().milli_needed(share, self.idx)
        return needed

    def room(self, shape: tuple[object, ...], want: IntArray, milli: IntArray | int) -> list[int]:
        """The positions, in order, of the nodes with room here for a pod of ``shape``."""
        rows = self._rooms.get(shape)
        if rows is None:
            free, free_milli = self.free
            fits = (free >= want).all(axis=1) & (free_milli >= milli)
            rows = self._rooms[shape] = fits.nonzero()[0].tolist()
        return rows

    def drop(self, shape: tuple[object, ...], refused: set[int]) -> None:
        """The static filters refuse the shape on the nodes at positions ``refused``."""
        self._rooms[shape] = [j for j in self._rooms[shape] if j not in refused]


class TrialPlacement:
    """Pods placed one after another, first fit in node order, on the active nodes outside
    ``exclude``: the scheduler simulation cluster-autoscaler runs on a forked snapshot
    (``filterOutSchedulable``, and the drain simulation of scale-down), which never touches the real
    state. It starts from ``base`` (the scan's ``PlacementBase``, read once for all its trials, which
    may exclude fewer nodes) or from the cluster as it is. Each pod is tried as a fresh copy, without
    ``spec.nodeName``. GPUs are also counted in thousandths (whole free GPUs and what shared ones have
    left), so a fractional request (KAI, HAMi) fits where enough of a node's GPU capacity is left; its
    split over single GPUs is not simulated.
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
        exclude: AbstractSet[int],
        verdicts: dict[tuple[object, ...], Int8Array] | None = None,
        base: PlacementBase | None = None,
    ):
        self.state, self.filters = state, profile.static_filters
        self.snapshot = ClusterSnapshot(state)
        self.base = base if base is not None else PlacementBase(state, exclude)
        self.skip = {j for i in exclude - self.base.exclude if (j := self.base.position(i)) is not None}
        #: position -> what is left there (each resource, GPU thousandths) once this trial's pods took room
        self.left: dict[int, tuple[IntArray, int]] = {}
        self.verdicts = verdicts if verdicts is not None else {}
        self.pod_filters = profile.pod_filters
        #: the nodes drained in this trial, each left as a ghost tainted ``drained_taint``, which the
        #: pod-aware filters' domains see (``replaceWithTaintedGhostNode``)
        self.drained: list[int] = []
        self.drained_taint = TO_BE_DELETED
        #: pods this trial put (and the pending pods put on the nodes it keeps), for the pod-aware filters
        self.added: list[Placed] = [
            (pod, row)
            for row, pods in self.base.snapshot.pending.items()
            if row not in exclude
            for pod in pods
        ]
        #: ... and the pods it took away (the expendable ones from the start: not in the snapshot)
        self.removed: list[Assignment] = [a for gone in self.base.snapshot.expendable.values() for a in gone]
        #: the last row the placements so far looked at (first fit: none past the one chosen; a pod
        #: placed nowhere looked at all), and whether they depended on those rows alone (no pod-aware
        #: filter judged, no ResourceClaim allocated)
        self.examined = -1
        self.rows_alone = True

    def unschedule(self, pods: list[Pod]) -> None:
        """The pods leave their node in the simulation: their claims lose them as consumers, and a
        claim left without one is deallocated (``UnreservePodClaims``)."""
        self.removed += [a for p in pods if (a := self.state.assignments.get(p.key)) is not None]
        claims = any(p.resource_claims for p in pods)
        self.rows_alone &= not claims
        dra = self.snapshot.dra() if claims else None
        if dra is not None:
            for pod in pods:
                dra.release(pod)

    def _pod_aware(self, pod: Pod) -> list[PodFilterState]:
        """The pod's pod-aware PreFilter states as this trial leaves the cluster (none: they all Skip)."""
        if not self.pod_filters:
            return []
        states = self.base.cycles.get(pod.key)
        if states is None:
            cycle = PodCycle.start(self.pod_filters, (), PodContext(pod, self.state))
            states = self.base.cycles[pod.key] = [] if cycle is None else [s for _, s in cycle.filters]
        moved = bool(self.added or self.removed)
        changed = [s.changed(self.added, self.removed) if moved else s for s in states]
        if self.drained:
            return [s.drained(self.drained, self.drained_taint) for s in changed]
        return changed

    def _claimed(self, pod: Pod, row: int) -> bool:
        dra = self.snapshot.dra() if pod.resource_claims else None
        return dra is None or dra.place(pod, self.state.nodes[row]) is None

    def place(self, pod: Pod) -> int | None:
        """The node the pod would take (its room is then taken), or None when none has room.

        The nodes with room are the base's for the pod's shape, less what this trial took; the
        filters run on them in order until one admits the pod."""
        fresh = replace(pod, node_name=None) if pod.node_name else pod
        base = self.base
        want = self.state.pod_vectors(fresh)[0]
        free, free_milli = base.free
        width = free.shape[1]
        if len(want) > width:  # it asks for a resource no node had yet: none is free anywhere
            if (want[width:] > 0).any():
                return None
            want = want[:width]
        shape = fresh.shape()
        milli = base.milli(fresh, shape)
        admits = self.verdicts.get(shape)
        if admits is None:
            admits = self.verdicts[shape] = np.full(len(self.state.nodes), -1, dtype=np.int8)
        pod_aware = self._pod_aware(fresh)
        self.rows_alone &= not pod_aware and not fresh.resource_claims
        refused: set[int] = set()
        chosen = None
        for j in base.room(shape, want, milli):
            need = milli if isinstance(milli, int) else int(milli[j])
            left = self.left.get(j)
            if j in self.skip or (left is not None and not (left[1] >= need and (left[0] >= want).all())):
                continue
            row = base.rows[j]
            if admits[row] < 0:
                node = self.state.nodes[row]
                admits[row] = all(f.reject(fresh, node) is None for f in self.filters)
            if not admits[row]:
                refused.add(j)
            elif all(s.judge(row) is None for s in pod_aware) and self._claimed(fresh, row):
                self.snapshot.put(fresh, row, need)
                self.added.append((fresh, row))
                row_free, row_milli = left if left is not None else (free[j], int(free_milli[j]))
                self.left[j] = (row_free - want, row_milli - need)
                chosen = row
                break
        if refused:
            base.drop(shape, refused)
        self.examined = max(self.examined, len(self.state.nodes) if chosen is None else chosen)
        return chosen


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    why: Unremovable | None = None  # None: unneeded
    #: the last node row the verdict depended on besides the node's own (-1: none), or None when it
    #: also depended on more (pod-aware filters, claims, pod age, budgets, GPU work): ``removal_memo``
    examined: int | None = None

    @property
    def unneeded(self) -> bool:
        return self.why is None


def simulate_removal(
    state: ClusterState,
    i: int,
    profile: Profile,
    budgets: list[DisruptionBudget],
    allowed: dict[str, int],
    is_daemon: set[str],
    base: PlacementBase,
    protected: Callable[[str], bool] | None = None,
    verdicts: dict[tuple[object, ...], Int8Array] | None = None,
    now: float = 0.0,
    options: DeleteOptions = DEFAULT_DELETE_OPTIONS,
    created: CreatedAt | None = None,
) -> NodeVerdict:
    """Whether eligible node ``i`` could be removed at ``now`` (``RemovalSimulator.SimulateNodeRemoval``):
    no pod blocks the drain (``GetPodsToMove``, else ``BlockedByPod``; gpuAwareScaleDown's computing pod
    blocks it alike), then every moved pod placed on the nodes of ``base`` but ``i`` (else
    ``NoPlaceToMovePods``), node ``i`` left to the pod-aware filters as a pod-less ghost tainted
    ``ToBeDeletedByClusterAutoscaler:NoSchedule`` (``replaceWithTaintedGhostNode``). The pending pods the
    base puts on node ``i`` are among its pods, its expendable ones are not (``GetPodsToMove`` reads the
    snapshot's ``NodeInfo``). ``created``: each placed pod's ``creationTimestamp``, by key, which its age
    counts from (None, or where it says None: its placement)."""
    name = state.nodes[i].name
    pods = base.snapshot.placed(state, i)
    drains = _drains([i], pods, base.snapshot, budgets, allowed, is_daemon, now, options, created)
    # a kube-system pod's drainability changes with its age, a budget's with pods elsewhere
    own_rows = not budgets and protected is None and all(p.namespace != SYSTEM_NAMESPACE for p, _ in drains)
    for pod, drain in drains:
        blocker = drain.blocker
        if blocker is None and drain.moved and protected is not None and protected(pod.key):
            blocker = f"pod {pod.key} is computing on GPUs (gpuAwareScaleDown)"
        if blocker is not None:
            return NodeVerdict(
                name, Unremovable(UnremovableReason.BLOCKED_BY_POD, blocker), -1 if own_rows else None
            )
    trial = _drain_trial(state, profile, [i], pods, base, verdicts, now)
    verdict = NodeVerdict(name)
    for pod, drain in drains:
        if drain.moved and trial.place(pod) is None:
            why = Unremovable(UnremovableReason.NO_PLACE_TO_MOVE_PODS, f"pod {pod.key} fits on no other node")
            verdict = NodeVerdict(name, why)
            break
    return replace(verdict, examined=trial.examined if own_rows and trial.rows_alone else None)


@dataclass(frozen=True)
class PodsToMove:
    """``simulator.GetPodsToMove``'s answer for one node: the pods a drain moves (``pods``), or, where a pod
    blocks the drain, the first such pod's reason (``blocker``; then no pod)."""

    pods: tuple[Pod, ...] = ()
    blocker: str | None = None


def pods_to_move(
    state: ClusterState,
    i: int,
    snapshot: SnapshotPods,
    budgets: Sequence[DisruptionBudget],
    allowed: Mapping[str, int],
    is_daemon: AbstractSet[str],
    now: float,
    options: DeleteOptions = DEFAULT_DELETE_OPTIONS,
    created: CreatedAt | None = None,
) -> PodsToMove:
    """``GetPodsToMove`` of node ``i`` at ``now`` as the ``snapshot`` has its pods (the scale-down
    actuator's second look, ``deleteNodesAsync``): its pods judged in key order by the drainability rules
    ``options`` keep, with the PodDisruptionBudgets ``budgets`` and their ``disruptionsAllowed`` (``allowed``;
    none: ``GetPodsToMove`` with no ``remainingPdbTracker``, which no budget selects a pod of), each aged from
    its ``creationTimestamp`` (``created``); the DaemonSet pods (``is_daemon``) never among them."""
    pods = snapshot.placed(state, i)
    drains = _drains([i], pods, snapshot, budgets, allowed, is_daemon, now, options, created)
    blocker = next((drain.blocker for _, drain in drains if drain.blocker is not None), None)
    if blocker is not None:
        return PodsToMove(blocker=blocker)
    return PodsToMove(tuple(pod for pod, drain in drains if drain.moved))


def _drains(
    rows: Sequence[int],
    pods: Sequence[Assignment],
    snapshot: SnapshotPods,
    budgets: Sequence[DisruptionBudget],
    allowed: Mapping[str, int],
    is_daemon: AbstractSet[str],
    now: float,
    options: DeleteOptions,
    created: CreatedAt | None = None,
) -> list[tuple[Pod, Drain]]:
    """What a drain of the nodes ``rows`` does with each of their pods but the DaemonSet ones: those placed
    (``pods``), aged from their ``creationTimestamp`` (``created``) or else their placement, then the pending
    ones the ``snapshot`` puts there, judged as just created, by the drainability rules ``options`` keep (a
    long terminating pod, which ``longterminating`` skips before every other rule, is not among ``pods``)."""
    placed = [(a.pod, now - _created_at(a, created)) for a in pods]
    pending = [(pod, 0.0) for i in rows for pod in snapshot.pending.get(i, ())]
    return [
        (pod, drainable(pod, budgets, allowed, age, options))
        for pod, age in (*placed, *pending)
        if pod.key not in is_daemon
    ]


def _created_at(placed: Assignment, created: CreatedAt | None) -> float:
    """When the placed pod was created (``pod.CreationTimestamp``): as ``created`` says, else placed."""
    at = None if created is None else created(placed.pod.key)
    return placed.start_s if at is None else at


def _drain_trial(
    state: ClusterState,
    profile: Profile,
    rows: Sequence[int],
    pods: Sequence[Assignment],
    base: PlacementBase,
    verdicts: dict[tuple[object, ...], Int8Array] | None,
    now: float,
) -> TrialPlacement:
    """A trial with the nodes ``rows`` drained: their ``pods`` taken away and the nodes left as pod-less
    ghosts tainted ``ToBeDeletedByClusterAutoscaler:NoSchedule`` (``replaceWithTaintedGhostNode``)."""
    trial = TrialPlacement(state, profile, base.exclude | set(rows), verdicts, base)
    trial.unschedule([a.pod for a in pods])
    trial.drained, trial.drained_taint = list(rows), Taint(TO_BE_DELETED.key, f"{int(now)}", NO_SCHEDULE)
    return trial


def removable_together(
    state: ClusterState,
    rows: Sequence[int],
    profile: Profile,
    budgets: list[DisruptionBudget],
    allowed: dict[str, int],
    is_daemon: set[str],
    gone: AbstractSet[int],
    now: float = 0.0,
    snapshot: SnapshotPods = AS_IS,
    options: DeleteOptions = DEFAULT_DELETE_OPTIONS,
    created: CreatedAt | None = None,
) -> bool:
    """Whether the nodes ``rows`` can all go at once, with the nodes ``gone`` gone too: every pod a drain
    would move from them placed, in turn, on the other nodes, each placement taking its room before the
    next (what cluster-autoscaler's planner leaves in its snapshot with ``persistSuccessfulSimulations``:
    each removal found possible kept for the next candidate's simulation, the node gone, its pods on
    their new nodes), the drained nodes ghosts tainted ``ToBeDeletedByClusterAutoscaler``; the nodes' pods
    the ``snapshot``'s, as ``simulate_removal`` takes them (and ``created``)."""
    pods = [a for i in rows for a in snapshot.placed(state, i)]
    base = PlacementBase(state, frozenset(gone) | frozenset(rows), snapshot)
    trial = _drain_trial(state, profile, rows, pods, base, None, now)
    for pod, drain in _drains(rows, pods, snapshot, budgets, allowed, is_daemon, now, options, created):
        if drain.blocker is not None or (drain.moved and trial.place(pod) is None):
            return False
    return True
