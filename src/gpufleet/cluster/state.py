"""The cluster as the scheduler's cache sees it: per-node columns in NumPy arrays.

Like kube-scheduler's ``NodeInfo`` cache, each node keeps its allocatable resources, the sum
of requests of the pods assigned (bound or assumed) to it, and the "non-zero" requests used
for scoring (pods without cpu/memory requests count 100m and 200Mi,
``pkg/scheduler/util/pod_resources.go``). Columns let one cycle filter and score every node
at once. Every change appends the node's index to ``changes`` so cached per-shape masks
and scores re-evaluate only the nodes that changed; ``static_version`` moves when a node's
labels, taints or schedulability change, or a node is added or removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from weakref import proxy

import numpy as np
import numpy.typing as npt

from gpufleet.cluster.pod_index import PodIndex
from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY, PODS, native_first

if TYPE_CHECKING:
    from gpufleet.cluster.device_view import DeviceView
    from gpufleet.cluster.disruption_view import DisruptionView
    from gpufleet.cluster.shares import GpuChoice, GpuShares
    from gpufleet.gpus.dra.state import DraState
    from gpufleet.gpus.ledger import DeviceLedger

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
#: Up to this many log entries ``changes_since`` reads the log; past it, ``changed_at`` (one pass).
SHORT_LOG = 32
#: One node's (allocatable, requested, non-zero requested) rows as Python integers.
NodeRow = tuple[list[int], list[int], list[int]]


class Part(Protocol):
    """Something that keeps per-pod state beside the columns (the device ledger): told when a pod
    leaves its node."""

    def unassigned(self, pod: Pod, node: int) -> None: ...


@dataclass
class Assignment:
    """A pod assigned to a node, bound or only assumed (reserved by a scheduler)."""

    pod: Pod
    node: int
    start_s: float
    #: terminating as a scheduler's preemption victim (the ``DisruptionTarget`` condition with
    #: reason ``PreemptionByScheduler``, which ``podTerminatingByPreemption`` looks for)
    preempted: bool = False
    #: when it was deleted (its ``deletionTimestamp``, on the run's clock), None where it was not or is
    #: not known
    deleted_s: float | None = None
    _terminating: bool = False

    @property
    def terminating(self) -> bool:
        """Deleted, still holding its resources during graceful termination (set through
        ``ClusterState.set_terminating``, which tells the pod index)."""
        return self._terminating


def non_zero_requests(pod: Pod) -> dict[str, int]:
    """What scoring counts of a pod's requests (``resource_allocation.go``'s ``NonMissingContainerRequests``,
    worked out per container when the pod was read); a pod made without containers is one container
    whose cpu and memory requests, where missing, count 100m and 200Mi."""
    if pod.nonzero_requests is not None:
        return pod.nonzero_requests
    req = dict(pod.requests)
    req[CPU] = req.get(CPU, 0) or DEFAULT_MILLI_CPU_REQUEST
    req[MEMORY] = req.get(MEMORY, 0) or DEFAULT_MEMORY_REQUEST
    return req


#: ``ClusterState.lowest_priority`` before any pod is assigned: above every pod priority (an int32)
NO_PRIORITY_YET = 2**31


class ClusterState:
    """Nodes and the pods assigned to them, in columns indexed by node position."""

    def __init__(
        self, nodes: list[Node] | None = None, resources: tuple[str, ...] = (PODS, CPU, MEMORY, GPU)
    ):
        self.resources: list[str] = list(resources)
        self.res_index: dict[str, int] = {r: i for i, r in enumerate(self.resources)}
        self.nodes: list[Node] = []
        self.index: dict[str, int] = {}
        self.active: BoolArray = np.zeros(0, dtype=bool)
        self.alloc: IntArray = np.zeros((0, len(self.resources)), dtype=np.int64)
        self.requested: IntArray = np.zeros((0, len(self.resources)), dtype=np.int64)
        self.nonzero: IntArray = np.zeros((0, len(self.resources)), dtype=np.int64)
        self.pods_on: list[dict[str, Assignment]] = []
        self.assignments: dict[str, Assignment] = {}
        #: the assignments of the pods being deleted (terminating), by pod key
        self.deleting: dict[str, Assignment] = {}
        self._placed: PodIndex | None = None  # ``placed``'s, once asked for
        #: how many assigned pods carry inter-pod (anti-)affinity terms (known without ``placed``)
        self.placed_with_affinity = 0
        #: no assigned pod ever had a lower priority (a bound that only falls: what may be expendable)
        self.lowest_priority = NO_PRIORITY_YET
        self.namespace_labels: dict[str, dict[str, str]] = {}  # Namespace objects' labels, where known
        self.changes: list[int] = []
        self.node_version: list[int] = []  # per node, moves with every change of its allocation
        #: per node, the log position of its last change (-1: none), which tells the nodes changed since any
        #: position, whatever part of the log is still kept
        self.changed_at: IntArray = np.zeros(0, dtype=np.int64)
        #: per node, the log position of its last change that may have freed something (any but ``assign``)
        self.freed_at: IntArray = np.zeros(0, dtype=np.int64)
        #: the largest ``freed_at`` (-1: nothing freed yet): no node freed anything since a later position
        self.last_freed = -1
        self.memo: dict[str, object] = {}  # derived per-node facts kept by their users, keyed by node_version
        self.change_base = 0  # absolute position of changes[0]
        #: the absolute position the next change takes (``change_base + len(changes)``; asked for every cycle)
        self.change_pos = 0
        self.static_version = 0
        self.static_rows: list[int] = []  # the node behind each move of static_version but a new column
        self.images_version = 0  # moves when an image lands on a node (what ImageLocality scores)
        self.allocatable_version = 0  # moves when a node's allocatable changes in place (``set_allocatable``)
        self.dra: DraState | None = None  # ResourceClaims and their allocations, when the cluster uses DRA
        self.shares: GpuShares | None = None  # GPUs shared by fractional requests, once one is placed
        self.devices: DeviceView | None = None  # the device level's view of free GPUs, where there is one
        self.disruptions: DisruptionView | None = None  # PodDisruptionBudgets and what they allow now
        self.ledger: DeviceLedger | None = None  # which device units each pod holds (``gpus.ledger``)
        self.parts: list[Part] = []  # what keeps per-pod state beside the columns, told when a pod leaves
        self._vectors: dict[tuple[object, object, int], tuple[IntArray, IntArray]] = {}
        self._add_nodes(nodes or [])

    # -- resources -------------------------------------------------------------------------
    def resource_column(self, name: str) -> int:
        """The column of a resource, adding one (zero everywhere) the first time it is seen."""
        col = self.res_index.get(name)
        if col is not None:
            return col
        col = len(self.resources)
        self.resources.append(name)
        self.res_index[name] = col
        pad = np.zeros((len(self.nodes), 1), dtype=np.int64)
        self.alloc = np.hstack([self.alloc, pad])
        self.requested = np.hstack([self.requested, pad])
        self.nonzero = np.hstack([self.nonzero, pad])
        self.static_version += 1
        return col

    def vector(self, requests: dict[str, int]) -> IntArray:
        cols = [self.resource_column(name) for name in requests]
        vec = np.zeros(len(self.resources), dtype=np.int64)
        for col, value in zip(cols, requests.values(), strict=True):
            vec[col] = value
        return vec

    def pod_vectors(self, pod: Pod) -> tuple[IntArray, IntArray]:
        """(requests, non-zero requests) of a pod, including one ``pods`` slot (memoised per request list)."""
        scored = tuple(pod.nonzero_requests.items()) if pod.nonzero_requests is not None else None
        key = (tuple(pod.requests.items()), scored, len(self.resources))
        hit = self._vectors.get(key)
        if hit is None:
            req = self.vector({**pod.requests, PODS: 1})
            nonzero = self.vector({**non_zero_requests(pod), PODS: 1})
            hit = self._vectors[(tuple(pod.requests.items()), scored, len(self.resources))] = (req, nonzero)
        return hit

    def gpu_shares(self) -> GpuShares:
        """The ledger of GPUs shared by fractional requests (created the first time it is needed)."""
        if self.shares is None:
            from gpufleet.cluster.shares import GpuShares  # the same layer, imported when first needed

            self.shares = GpuShares(proxy(self))  # (no cycle: the state is freed once dropped)
        return self.shares

    # -- nodes -----------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self.nodes)

    def add_node(self, node: Node) -> int:
        """Add a node (its pods arrive separately); returns its column index."""
        self._add_nodes([node])
        return self.index[node.name]

    def _add_nodes(self, nodes: list[Node]) -> None:
        names: set[str] = set()
        for node in nodes:
            if node.name in self.index or node.name in names:
                raise ValueError(f"node {node.name} already exists")
            names.add(node.name)
            for name in node.allocatable:
                self.resource_column(name)
        rows = np.zeros((len(nodes), len(self.resources)), dtype=np.int64)
        for r, node in enumerate(nodes):
            for name, value in node.allocatable.items():
                rows[r, self.res_index[name]] = value
            self.index[node.name] = len(self.nodes)
            self.static_rows.append(len(self.nodes))
            self.nodes.append(node)
            self.pods_on.append({})
            self.node_version.append(0)
        self.active = np.concatenate([self.active, np.ones(len(nodes), dtype=bool)])
        self.changed_at = np.concatenate([self.changed_at, np.full(len(nodes), -1, dtype=np.int64)])
        self.freed_at = np.concatenate([self.freed_at, np.full(len(nodes), -1, dtype=np.int64)])
        self.alloc = np.vstack([self.alloc, rows])
        self.requested = np.vstack([self.requested, np.zeros_like(rows)])
        self.nonzero = np.vstack([self.nonzero, np.zeros_like(rows)])
        self.static_version += 1

    def set_allocatable(self, name: str, allocatable: dict[str, int]) -> None:
        """Change a node's allocatable (a device plugin registering its GPUs, for example)."""
        i = self.index[name]
        self.nodes[i].allocatable = dict(allocatable)
        for res in allocatable:
            self.resource_column(res)
        self.alloc[i, :] = 0
        for res, value in allocatable.items():
            self.alloc[i, self.res_index[res]] = value
        self.allocatable_version += 1
        self.touched(i)

    def cordon(self, name: str, unschedulable: bool = True) -> None:
        """``spec.unschedulable = true`` (kubectl cordon, or a drain); ``False``: kubectl uncordon."""
        self.nodes[self.index[name]].unschedulable = unschedulable
        self.static_rows.append(self.index[name])
        self.static_version += 1

    def set_labels(self, name: str, labels: dict[str, str]) -> None:
        """Replace a node's labels (GPU Feature Discovery relabelling it, for example)."""
        self.nodes[self.index[name]].labels = dict(labels)
        self.static_rows.append(self.index[name])
        self.static_version += 1

    def set_taints(self, name: str, taints: tuple[Taint, ...]) -> None:
        """Replace a node's taints (cluster-autoscaler's soft ``DeletionCandidateOfClusterAutoscaler`` taint
        put on or taken off, for example): a static fact, so the row is re-evaluated by the shape caches."""
        self.nodes[self.index[name]].taints = taints
        self.static_rows.append(self.index[name])
        self.static_version += 1

    def add_images(self, name: str, images: dict[str, int]) -> None:
        """Images land on a node (the kubelet pulled them): what ImageLocality scores moves."""
        node = self.nodes[self.index[name]]
        if images.keys() - node.images.keys():
            node.images = {**node.images, **images}  # a new dict: templates and scenario nodes share theirs
            self.images_version += 1

    def remove_node(self, name: str) -> list[Assignment]:
        """Remove a node; returns the pods that were assigned to it (the caller deletes them)."""
        i = self.index[name]
        evicted = list(self.pods_on[i].values())
        for a in evicted:
            self.unassign(a.pod.key)
        self.active[i] = False
        del self.index[name]
        self.static_rows.append(i)
        self.static_version += 1
        return evicted

    def touched(self, i: int, freed: bool = True) -> None:
        """Node ``i``'s allocation changed: logged for the shape caches, its version moves and its position
        is its ``changed_at``; unless the change only took more of the node (``freed`` False: a pod placed),
        it is its ``freed_at`` too. A long log loses its older half (``changes_since`` still answers from
        ``changed_at``)."""
        changes = self.changes
        pos = self.change_pos
        self.change_pos = pos + 1
        self.changed_at[i] = pos
        if freed:
            self.freed_at[i] = self.last_freed = pos
        changes.append(i)
        self.node_version[i] += 1
        if len(changes) > 4 * max(len(self.nodes), 256):
            keep = len(changes) // 2
            self.change_base += len(changes) - keep
            del changes[:-keep]

    def logged_since(self, pos: int) -> list[int] | None:
        """The log's node indices from absolute position ``pos`` on, repeats included; None if the log
        was trimmed past it."""
        return None if pos < self.change_base else self.changes[pos - self.change_base :]

    def changes_since(self, pos: int) -> IntArray:
        """Node indices changed since absolute position ``pos``, ascending: from the log where its part since
        then is short, else (a long gap, or one the log no longer holds) from ``changed_at``."""
        recent = self.logged_since(pos)
        if recent is None or len(recent) > SHORT_LOG:
            return (self.changed_at >= pos).nonzero()[0]
        # ``np.unique``'s answer; a set of Python integers sorts the few of a cycle in a fraction of its time
        return np.array(recent if len(recent) == 1 else sorted(set(recent)), dtype=np.int64)

    @property
    def membership(self) -> tuple[int, int]:
        """Moves exactly when a node joins or leaves: the rows and the active nodes (rows are never reused,
        so a node joining adds a row and one leaving takes one from the active). A node's labels, taints
        and cordon change on its object in place and move nothing here."""
        return len(self.nodes), len(self.index)

    @property
    def size_active(self) -> int:
        return len(self.index)  # (a node is in the index exactly while it is active)

    def active_indices(self) -> IntArray:
        return self.active.nonzero()[0].astype(np.int64)

    def node_names(self) -> list[str]:
        return [self.nodes[i].name for i in self.active_indices()]

    # -- pods ------------------------------------------------------------------------------
    def assign(
        self,
        pod: Pod,
        node: str | int,
        now: float,
        choose: GpuChoice | None = None,
        vectors: tuple[IntArray, IntArray] | None = None,
    ) -> Assignment:
        """Assign (assume or bind) the pod; ``choose``: the profile's pick of GPU for a fractional request;
        ``vectors``: its ``pod_vectors`` where the caller has them (a scheduling cycle's)."""
        i = node if isinstance(node, int) else self.index[node]
        key = pod.key
        if key in self.assignments:
            held = self.nodes[self.assignments[key].node].name
            raise ValueError(f"pod {key} is already assigned to {held}")
        if vectors is None or len(vectors[0]) != len(self.resources):  # (none, or from before a new column)
            vectors = self.pod_vectors(pod)
        req, nonzero = vectors
        row = self.requested[i]  # (a view added to in place: ``requested[i] += req`` writes the row back too)
        row += req
        row = self.nonzero[i]
        row += nonzero
        if pod.gpu_share is not None:
            self.gpu_shares().place(pod, i, choose)
        a = Assignment(pod, i, now)
        self.pods_on[i][key] = a
        self.assignments[key] = a
        if pod.pod_affinity is not None:
            self.placed_with_affinity += 1
        if pod.priority < self.lowest_priority:
            self.lowest_priority = pod.priority
        if self._placed is not None:
            self._placed.add(a, key)
        self.touched(i, freed=False)
        return a

    @property
    def placed(self) -> PodIndex:
        """The assigned pods by namespace and labels, for the plugins that look at other pods: made from
        the assignments when first asked for, then kept current by every assign, unassign and change of
        terminating (a cluster no such plugin looks at never keeps one)."""
        index = self._placed
        if index is None:
            index = self._placed = PodIndex()
            for key, a in self.assignments.items():
                index.add(a, key)
        return index

    def set_terminating(self, a: Assignment, terminating: bool = True) -> None:
        """``a`` deleted (or its deletion undone): while it is the pod's assignment here, the pod index
        counts it among the live pods or not. (An assignment holds no reference back to the index: a
        finished run's cluster is then free of reference cycles, and freed at once when dropped.)"""
        if a._terminating != terminating:
            a._terminating = terminating
            if terminating and self.assignments.get(a.pod.key) is a:
                self.deleting[a.pod.key] = a
            elif not terminating:
                self.deleting.pop(a.pod.key, None)
            if self._placed is not None and self.assignments.get(a.pod.key) is a:
                self._placed.terminating_changed(a)

    def unassign(self, pod_key: str) -> Assignment | None:
        a = self.assignments.pop(pod_key, None)
        if a is None:
            return None
        self.deleting.pop(pod_key, None)
        req, nonzero = self.pod_vectors(a.pod)
        if self.dra is not None and a.pod.resource_claims:
            self.dra.release(a.pod)
        if self.shares is not None and a.pod.gpu_share is not None:
            self.shares.release(pod_key)
        row = self.requested[a.node]  # (views changed in place, as in ``assign``)
        row -= req
        row = self.nonzero[a.node]
        row -= nonzero
        del self.pods_on[a.node][pod_key]
        if a.pod.pod_affinity is not None:
            self.placed_with_affinity -= 1
        if self._placed is not None:
            self._placed.remove(a)
        for part in self.parts:
            part.unassigned(a.pod, a.node)
        self.touched(a.node)
        return a

    # -- derived figures -------------------------------------------------------------------
    def free_on(self, i: int, resource: str) -> int:
        """What node ``i`` has free of a resource (0 of one no node has)."""
        col = self.res_index.get(resource)
        return 0 if col is None else int(self.alloc[i, col] - self.requested[i, col])

    def shortfall(self, pod: Pod, i: int) -> dict[str, int]:
        """What the pod asks of node ``i`` beyond what is free there (one ``pods`` slot included),
        resource by resource in NodeResourcesFit's order; empty when it fits."""
        want = {**pod.requests, PODS: 1}
        return {r: want[r] - free for r in native_first(want) if want[r] > (free := self.free_on(i, r))}

    def free_of(self, idx: IntArray) -> IntArray:
        """What the nodes ``idx`` have free of every resource column, one row each: allocatable less
        requested, gathered with ``take`` (NumPy's fancy indexing of a 2-D array's rows costs several times as
        much: 1.2 against 0.4 microseconds for 35 rows)."""
        free: IntArray = self.alloc.take(idx, axis=0) - self.requested.take(idx, axis=0)
        return free

    def column_free_of(self, col: int, idx: IntArray) -> IntArray:
        """What the nodes ``idx`` have free of the resource column ``col``: the column, then its rows (cheaper
        than NumPy's fancy indexing of both at once)."""
        free: IntArray = self.alloc[:, col][idx] - self.requested[:, col][idx]
        return free

    def free(self, resource: str) -> IntArray:
        col = self.res_index.get(resource)
        if col is None:
            return np.zeros(self.size, dtype=np.int64)
        return np.where(self.active, self.alloc[:, col] - self.requested[:, col], 0)

    def total(self, resource: str) -> int:
        col = self.res_index.get(resource)
        return 0 if col is None else int(self.alloc[self.active, col].sum())

    def allocated(self, resource: str) -> int:
        col = self.res_index.get(resource)
        return 0 if col is None else int(self.requested[self.active, col].sum())
