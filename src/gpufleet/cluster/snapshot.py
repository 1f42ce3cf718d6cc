"""What-if over the cluster: pods put, pods taken away and claims allocated, in layers that can be
forked, reverted and committed, never touching the cluster state underneath.

cluster-autoscaler runs every what-if on a ``ClusterSnapshot`` (``simulator/clustersnapshot``:
``Fork``, ``Revert``, ``Commit``) and kube-scheduler's preemption on cloned ``NodeInfo``s; gpufleet
keeps one such snapshot type for all of them: DefaultPreemption's dry run (victims taken away,
a gang's members put as the dry run places them), cluster-autoscaler's trial placements
(``filterOutSchedulable``, the drain simulation of scale-down), the nominated pods a cycle must
respect, and the ResourceClaims those what-ifs allocate (a fork of the DRA state).

A layer holds, per node, how much its requested and non-zero requested rows (and its GPU
capacity in thousandths, where fractional shares count) have moved, the pods it took away, what
the PodDisruptionBudgets still allow, its fork of the DRA state, and the copies of a node group's
template it added (what each has free). Reads combine the cluster
with the top layer (``row``, ``free``); ``fork`` starts a layer from the current one, ``revert``
drops it and ``commit`` keeps it. ``applied`` puts the top layer's rows into the cluster's own
columns for the length of a block (what the scheduler's cached filters and scores then see), and
takes them out again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gpufleet.cluster.state import Assignment, ClusterState, IntArray, NodeRow
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU, Resources

if TYPE_CHECKING:
    from gpufleet.gpus.dra.state import DraState


@dataclass
class _Layer:
    """One layer of a ``ClusterSnapshot``: what its what-if changed over the layer below."""

    delta: dict[int, tuple[list[int], list[int]]] = field(
        default_factory=dict
    )  # node -> (requested, non-zero)
    milli: dict[int, int] = field(default_factory=dict)  # node -> GPU thousandths taken
    gone: set[str] = field(default_factory=set)  # pods taken away
    budgets: list[tuple[DisruptionBudget, int]] | None = None  # what the budgets still allow
    #: this layer's fork of the DRA state (None: the layer below's, forked when first written)
    dra: DraState | None = None
    #: copies of a node group's template the what-if added, as what is free on each
    copies: list[Resources] = field(default_factory=list)
    published: int = 0  # template copies whose ResourceSlices this layer's DRA state holds
    #: pods put (+1) or taken away (-1) not yet added into ``delta`` (a trial that only places pods
    #: never reads it back)
    shifts: list[tuple[Pod, int, int]] = field(default_factory=list)

    def copy(self) -> _Layer:
        return _Layer(
            dict(self.delta),
            dict(self.milli),
            set(self.gone),
            None if self.budgets is None else list(self.budgets),
            None,
            [dict(c) for c in self.copies],
            self.published,
            list(self.shifts),
        )

    def settled(self, state: ClusterState) -> dict[int, tuple[list[int], list[int]]]:
        """``delta`` with the pending shifts added in."""
        for pod, i, sign in self.shifts:
            req, nonzero = (v.tolist() for v in state.pod_vectors(pod))
            old_req, old_nonzero = self.delta.get(i, ([], []))
            self.delta[i] = (_add(req, old_req, sign), _add(nonzero, old_nonzero, sign))
        self.shifts.clear()
        return self.delta


class ClusterSnapshot:
    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self._layers = [_Layer()]

    @property
    def _top(self) -> _Layer:
        return self._layers[-1]

    # -- fork, revert, commit ----------------------------------------------------------------
    def fork(self) -> None:
        self._layers.append(self._top.copy())

    def revert(self) -> None:
        if len(self._layers) == 1:
            raise RuntimeError("nothing forked to revert")
        self._layers.pop()

    def commit(self) -> None:
        if len(self._layers) == 1:
            raise RuntimeError("nothing forked to commit")
        top = self._layers.pop()
        if top.dra is None:
            top.dra = self._layers[-1].dra
        self._layers[-1] = top

    @contextmanager
    def applied(self) -> Iterator[None]:
        """The top layer's request rows added to the cluster's own columns for the block (the
        nodes touched, so the scheduler's caches see them), then taken out again."""
        state = self.state
        rows = [(i, np.array(req), np.array(nonzero)) for i, (req, nonzero) in sorted(self._delta().items())]
        for i, req, nonzero in rows:
            state.requested[i] += req
            state.nonzero[i] += nonzero
            state.touched(i)
        try:
            yield
        finally:
            for i, req, nonzero in rows:
                state.requested[i] -= req
                state.nonzero[i] -= nonzero
                state.touched(i)

    # -- reads -------------------------------------------------------------------------------
    def gone(self, pod_key: str) -> bool:
        return pod_key in self._top.gone

    def budgets(self) -> list[tuple[DisruptionBudget, int]]:
        """The PodDisruptionBudgets with what they still allow here (asked of the driver once, lazily:
        it counts healthy pods to answer)."""
        top = self._top
        if top.budgets is None:
            view = self.state.disruptions
            top.budgets = view.pod_disruption_budgets() if view is not None else []
        return top.budgets

    def row(self, i: int, without: Sequence[Assignment] = ()) -> NodeRow:
        """Node ``i``'s (allocatable, requested, non-zero requested) here, and with the pods
        ``without`` gone from it too. A shared GPU whose holders are all gone counts as unshared
        again (``gpus_freed``)."""
        state = self.state
        requested, nonzero = state.requested[i].tolist(), state.nonzero[i].tolist()
        change = self._delta().get(i)
        if change is not None:
            requested, nonzero = _add(requested, change[0]), _add(nonzero, change[1])
        for a in without:
            requested = _add(state.pod_vectors(a.pod)[0].tolist(), requested, -1)
        freed = self.gpus_freed(i, [a.pod.key for a in without], with_gone=True)
        if freed:
            requested[state.resource_column(GPU)] -= freed
        return state.alloc[i].tolist(), requested, nonzero

    def free(self, idx: IntArray) -> tuple[IntArray, IntArray]:
        """For the nodes ``idx``: what is free of each resource column here, and of GPU capacity in
        thousandths (whole free GPUs and what shared ones have left)."""
        state = self.state
        free = state.free_of(idx)
        milli = (
            MILLI * free[:, state.resource_column(GPU)]
        )  # the thousandths a pod put here took come off below
        if state.shares is not None:
            milli += np.rint(MILLI * state.shares.unused_per_node()[idx]).astype(np.int64)
        top, delta = self._top, self._delta()
        if delta or top.milli:
            where = {int(i): j for j, i in enumerate(idx.tolist())}
            for i, (req, _) in delta.items():
                j = where.get(i)
                if j is not None:
                    free[j] -= np.array(req + [0] * (free.shape[1] - len(req)), dtype=np.int64)
            for i, taken in top.milli.items():
                j = where.get(i)
                if j is not None:
                    milli[j] -= taken
        return free, milli

    def gpus_freed(self, i: int, keys: Sequence[str], with_gone: bool = False) -> int:
        """Shared GPUs of node ``i`` left without holders when the pods ``keys`` go too (counting
        those the pods taken away here emptied already, ``with_gone``): ``GpuShares.gpus_freed``."""
        shares = self.state.shares
        if shares is None:
            return 0
        on_node = self.state.pods_on[i]
        gone = [key for key in self._top.gone if key in on_node]
        return shares.gpus_freed(i, [*gone, *keys]) - (0 if with_gone else shares.gpus_freed(i, gone))

    def dra(self) -> DraState | None:
        """This layer's DRA state: the layer below's (at the bottom, the cluster's), forked the first
        time a what-if needs it."""
        top = self._top
        if top.dra is None:
            below = next((layer.dra for layer in reversed(self._layers[:-1]) if layer.dra is not None), None)
            source = below if below is not None else self.state.dra
            top.dra = source.fork() if source is not None else None
        return top.dra

    @property
    def published(self) -> int:
        """How many template copies have their ResourceSlices in ``dra()``."""
        return self._top.published

    @published.setter
    def published(self, copies: int) -> None:
        self._top.published = copies

    # -- copies of a node group's template ----------------------------------------------------
    def add_copy(self, free: Resources) -> int:
        """A fresh copy of a node group's template joins the what-if (cluster-autoscaler's
        estimator adds them to its snapshot), ``free`` being what it has for pods; its index."""
        self._top.copies.append(dict(free))
        return len(self._top.copies) - 1

    def copies(self) -> int:
        return len(self._top.copies)

    def copy_free(self, k: int) -> Resources:
        return self._top.copies[k]

    def take_from_copy(self, k: int, want: Resources) -> None:
        """A pod put on copy ``k`` takes ``want`` of what is free there."""
        free = self._top.copies[k]
        for r, v in want.items():
            free[r] = free.get(r, 0) - v

    # -- writes ------------------------------------------------------------------------------
    def put(self, pod: Pod, i: int, milli: int = 0) -> None:
        """The pod is placed on node ``i`` here (taking ``milli`` thousandths of its GPU capacity)."""
        self._shift(pod, i, +1)
        if milli:
            self._top.milli[i] = self._top.milli.get(i, 0) + milli

    def evict(self, victims: Sequence[Assignment]) -> None:
        """The victims leave their nodes, and each PodDisruptionBudget covering one allows one
        disruption less."""
        top = self._top
        for a in victims:
            if a.pod.key not in top.gone:
                top.gone.add(a.pod.key)
                self._shift(a.pod, a.node, -1)
        budgets = self.budgets()
        if budgets:
            top.budgets = [
                (b, allowed - sum(1 for a in victims if covers_for_preemption(b, a.pod)))
                for b, allowed in budgets
            ]

    def take_away(self, pods: Sequence[tuple[Assignment, int]]) -> None:
        """The pods are not in this what-if at all (cluster-autoscaler's snapshot is built without its
        expendable pods): their rows, and the GPU thousandths each holds (with it), are free here."""
        top = self._top
        for a, milli in pods:
            if a.pod.key not in top.gone:
                top.gone.add(a.pod.key)
                self._shift(a.pod, a.node, -1)
                if milli:
                    top.milli[a.node] = top.milli.get(a.node, 0) - milli

    def _shift(self, pod: Pod, i: int, sign: int) -> None:
        self._top.shifts.append((pod, i, sign))

    def _delta(self) -> dict[int, tuple[list[int], list[int]]]:
        return self._top.settled(self.state)


def _add(base: list[int], change: list[int], sign: int = 1) -> list[int]:
    """``sign * base + change`` element by element; ``change`` may be shorter (a resource column
    added since it was taken)."""
    return [sign * b + (change[k] if k < len(change) else 0) for k, b in enumerate(base)]


def covers_for_preemption(budget: DisruptionBudget, pod: Pod) -> bool:
    """``filterPodsWithPDBViolation``'s match: a pod without labels, or a budget with an empty
    selector, matches nothing."""
    return bool(pod.labels) and bool(budget.selector) and budget.covers(pod)
