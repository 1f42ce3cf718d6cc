"""Plugins whose Filter and Score depend on the other pods placed (InterPodAffinity, PodTopologySpread,
NodePorts).

Their verdict for a node changes when a pod anywhere in the same topology domain comes or goes, and
depends on the incoming pod's labels and namespace, so it is not kept in the per-shape caches
(``shape_cache``): each scheduling cycle runs their PreFilter once over the cluster's pods
(``cluster.pod_index``) and then judges nodes from the counts it made, as upstream's
``preFilterState`` does. A pod without affinity terms or spread constraints, in a cluster where no
placed pod has anti-affinity, makes every one of them Skip, and the cycle stays on the cached fast
path. Otherwise the counts and verdicts are made over columns, never pod by pod or node by node: a
topology key's value on every node as a code (``domain_column``, built once per node set), the pods of
each label group per node (kept by the pod index on every assign, unassign and termination), summed
per domain with ``np.bincount``; a PreFilter state keeps its counts per domain in Python (what
``changed`` updates) and looks them up for all the nodes at once (``passes``).

Preemption's dry run asks with the victims gone, cluster-autoscaler's trial placements with the
pods they put and the nodes they drain, and a cycle with the pods DefaultPreemption nominated held
on their nodes (``changed``: upstream's ``PreFilterExtensions.AddPod`` / ``RemovePod`` applied to a
copy of the PreFilter state; ``WithAndWithout``). cluster-autoscaler's scale-up also adds nodes: a
copy of a node group's template for each upcoming node, and the copies its estimate packs pods onto,
which upstream adds to its ``ClusterSnapshot`` before running the filters there. A state of one's
own (a ``changed`` copy) ``absorb``s them, at rows past the cluster's (``state.size + k``), and the
pods put there, and then judges those rows too (``judge``; ``passes`` covers the cluster's rows
only).

A what-if that tries pod after pod, each judged over all the what-if did before it, keeps its pods'
states in a ``WhatIf``: the nodes it added, the pods it put and took away as events, which each kind
of pod's states absorb as far as they have read. cluster-autoscaler's scale-up (the upcoming nodes'
template copies and the pods ``filterOutSchedulable`` put, then each estimate's copies and the pods
packed on them) and DefaultPreemption's gang dry run (each member judged as its own scheduling
cycle would judge it once the members before it were bound and their victims gone) use it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Self, cast

import numpy as np

from gpufleet.cluster.state import Assignment, BoolArray, ClusterState, IntArray
from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import Code, Plugin, PodContext

#: A Filter's rejection: its reason and status code (UNSCHEDULABLE or UNSCHEDULABLE_AND_UNRESOLVABLE).
Rejection = tuple[str, Code]


#: A pod put on a node (by index) in a what-if.
Placed = tuple[Pod, int]


@dataclass(frozen=True)
class DomainColumn:
    """A topology key over every node row: whether the node carries it, and its value as a code
    (``values[code]``; a node without the key has the code of ``""``, as upstream's pair)."""

    has: BoolArray
    codes: IntArray
    values: list[str]
    code_of: dict[str, int]


def domain_column(state: ClusterState, key: str) -> DomainColumn:
    """The column of ``key``, built once per node set (``static_version``)."""
    memo = cast(dict[str, tuple[int, DomainColumn]], state.memo.setdefault("topology-domains", {}))
    kept = memo.get(key)
    if kept is not None and kept[0] == state.static_version:
        return kept[1]
    code_of: dict[str, int] = {}
    codes = [code_of.setdefault(n.labels.get(key, ""), len(code_of)) for n in state.nodes]
    column = DomainColumn(
        np.array([key in n.labels for n in state.nodes], dtype=bool),
        np.array(codes, dtype=np.int64),
        list(code_of),
        code_of,
    )
    memo[key] = (state.static_version, column)
    return column


def domain_sums(state: ClusterState, key: str, per_node: IntArray) -> IntArray | None:
    """``per_node`` (pods per node index) summed per value code of ``key`` over the nodes carrying it;
    None when no such node has any."""
    column = domain_column(state, key)
    rows = (column.has & (per_node > 0)).nonzero()[0]
    if not len(rows):
        return None
    sums = np.bincount(column.codes[rows], weights=per_node[rows], minlength=len(column.values))
    return sums.astype(np.int64)


def pre_filter_reads(pod: Pod) -> tuple[object, ...]:
    """All that the pod-aware PreFilters read of a pod, so pods equal in it (their names aside) get
    equal states: its namespace and labels (the selectors, a pod matching its own), its owner
    (PodTopologySpread's default selector), its inter-pod terms and spread constraints, and its shape
    (the node selector, affinity and tolerations of the node inclusion policies; its host ports)."""
    labels = tuple(sorted(pod.labels.items()))
    return pod.namespace, labels, pod.owner, pod.pod_affinity, pod.spread_constraints, pod.shape()


class PodFilterState:
    """One pod's PreFilter result: judges nodes, optionally with some placed pods gone."""

    def changed(self, added: Sequence[Placed], removed: Sequence[Assignment]) -> PodFilterState:
        """A copy with pods put and taken away (upstream's ``AddPod`` / ``RemovePod`` on a clone)."""
        raise NotImplementedError

    def absorb(
        self, nodes: Sequence[Node], added: Sequence[Placed], removed: Sequence[Assignment] = ()
    ) -> None:
        """In place, on a state of one's own (a ``changed`` copy): ``nodes`` join the what-if past the
        cluster's rows (the ``k``-th node ever absorbed at row ``state.size + k``: the template copies
        cluster-autoscaler's estimate adds to its snapshot, upstream's PreFilter then counting them
        among the nodes), then the pods ``added`` are put, on the cluster's rows or on those
        (``AddPod``), and the cluster's pods ``removed`` taken away (``RemovePod``)."""
        raise NotImplementedError

    def judge(self, node: int) -> Rejection | None:
        """Filter for one node (a cluster row, or a row of a node ``absorb`` added)."""
        raise NotImplementedError

    def drained(self, rows: Sequence[int], taint: Taint) -> PodFilterState:
        """This state with the nodes ``rows`` replaced by pod-less ghosts carrying ``taint``
        (cluster-autoscaler's ``RemovalSimulator.replaceWithTaintedGhostNode``; their pods taken away
        by ``changed`` first): itself unless the plugin reads the nodes' taints outside Filter."""
        return self

    def reject(self, node: int, without: Sequence[Assignment] = ()) -> Rejection | None:
        """Filter for ``node`` with the pods ``without`` gone."""
        return (self.changed((), without) if without else self).judge(node)

    def passes(self, nodes: IntArray) -> BoolArray:
        """Which of ``nodes`` ``judge`` lets through (a state that can judge columns overrides it)."""
        return np.array([self.judge(i) is None for i in nodes.tolist()], dtype=bool)


class CountingState(PodFilterState):
    """A PreFilter state kept as counts that each placed pod adds to (upstream's ``updateWithPod``):
    a what-if is a clone with the pods put added and the pods taken away subtracted."""

    state: ClusterState
    #: the nodes a what-if added past the cluster's rows (``absorb``), row ``state.size + k`` being
    #: ``beyond[k]`` (a plain attribute: the subclasses' dataclass fields leave it out)
    beyond: tuple[Node, ...] = ()

    def clone(self) -> Self:
        """A copy whose counts can change without changing these."""
        raise NotImplementedError

    def update_with_pod(self, placed: Pod, node: Node, delta: int) -> None:
        """Count ``placed`` on ``node`` ``delta`` times (1: AddPod, -1: RemovePod)."""
        raise NotImplementedError

    def update_with_node(self, node: Node) -> None:
        """``node`` joins the what-if, its pods counted apart (``update_with_pod``): nothing to count,
        unless the plugin counts the nodes themselves (PodTopologySpread's domains)."""

    def reject(self, node: int, without: Sequence[Assignment] = ()) -> Rejection | None:
        """``judge`` with the pods ``without`` counted out of these counts for the call and back in
        after it (``RemovePod`` and ``AddPod`` undo each other), not on a clone: preemption asks it
        for every node it looks at."""
        if not without:
            return self.judge(node)
        nodes = self.state.nodes
        for a in without:
            self.update_with_pod(a.pod, nodes[a.node], -1)
        try:
            return self.judge(node)
        finally:
            for a in without:
                self.update_with_pod(a.pod, nodes[a.node], 1)

    def node_at(self, row: int) -> Node:
        """The node of a row: the cluster's, or one ``absorb`` added."""
        nodes = self.state.nodes
        return nodes[row] if row < len(nodes) else self.beyond[row - len(nodes)]

    def changed(self, added: Sequence[Placed], removed: Sequence[Assignment]) -> Self:
        copy = self.clone()
        copy.beyond = self.beyond
        copy.absorb((), added, removed)
        return copy

    def absorb(
        self, nodes: Sequence[Node], added: Sequence[Placed], removed: Sequence[Assignment] = ()
    ) -> None:
        if nodes:
            self.beyond = (*self.beyond, *nodes)
            for node in nodes:
                self.update_with_node(node)
        for pod, row in added:
            self.update_with_pod(pod, self.node_at(row), 1)
        for a in removed:
            self.update_with_pod(a.pod, self.state.nodes[a.node], -1)


class PodAwareFilter(Plugin):
    extension_points = frozenset({"preFilter", "filter"})

    def pre_filter_pods(self, ctx: PodContext) -> PodFilterState | None:
        """PreFilter over the placed pods; None when it returns Skip (the pod passes everywhere)."""
        raise NotImplementedError

    def pre_filter_what_if(self, ctx: PodContext) -> PodFilterState | None:
        """PreFilter for a what-if that will put pods with inter-pod terms of their own (``absorb``):
        a state even where the cluster's pods alone make it Skip, when such pods could make the Filter
        reject (those pods' required anti-affinity); ``pre_filter_pods`` unless the plugin says so."""
        return self.pre_filter_pods(ctx)


class PodAwareScore(Plugin):
    extension_points = frozenset({"preScore", "score"})

    def scores_pod(self, ctx: PodContext) -> bool:
        """False when PreScore surely returns Skip for this pod (checked before filtering, cheaply)."""
        raise NotImplementedError

    def pod_scores(self, ctx: PodContext, nodes: IntArray) -> IntArray | None:
        """PreScore, Score and NormalizeScore over the filtered ``nodes``: 0..100 each, or None (Skip)."""
        raise NotImplementedError


class WithAndWithout(PodFilterState):
    """A PreFilter state judged twice, as ``RunFilterPluginsWithNominatedPods`` runs the filters: with
    the nominated pods added, then (where that passes) without them; a node passes only both ways, and
    the first rejection gives the reason. (Adding pods can only reject more with NodePorts; it may
    satisfy an affinity term that the pods really placed do not.)"""

    def __init__(self, held: PodFilterState, alone: PodFilterState) -> None:
        self.held = held
        self.alone = alone

    def changed(self, added: Sequence[Placed], removed: Sequence[Assignment]) -> WithAndWithout:
        return WithAndWithout(self.held.changed(added, removed), self.alone.changed(added, removed))

    def absorb(
        self, nodes: Sequence[Node], added: Sequence[Placed], removed: Sequence[Assignment] = ()
    ) -> None:
        self.held.absorb(nodes, added, removed)
        self.alone.absorb(nodes, added, removed)

    def judge(self, node: int) -> Rejection | None:
        return self.held.judge(node) or self.alone.judge(node)

    def passes(self, nodes: IntArray) -> BoolArray:
        return self.held.passes(nodes) & self.alone.passes(nodes)


@dataclass
class PodCycle:
    """The pod-aware plugins of one profile in one cycle for one pod (those that did not Skip)."""

    filters: list[tuple[PodAwareFilter, PodFilterState]]
    scorers: list[tuple[PodAwareScore, int]]

    @classmethod
    def start(
        cls,
        filters: Sequence[PodAwareFilter],
        scorers: Sequence[tuple[PodAwareScore, int]],
        ctx: PodContext,
        what_if: bool = False,
    ) -> PodCycle | None:
        """None when every plugin skips this pod: nothing pod-aware to do. ``what_if``: for a what-if
        that will put pods with inter-pod terms of their own (``pre_filter_what_if``). (Loops, not
        comprehensions: this runs for every pod, and usually finds nothing.)"""
        states: list[tuple[PodAwareFilter, PodFilterState]] = []
        for f in filters:
            if (s := f.pre_filter_what_if(ctx) if what_if else f.pre_filter_pods(ctx)) is not None:
                states.append((f, s))
        scoring: list[tuple[PodAwareScore, int]] = []
        for p, w in scorers:
            if p.scores_pod(ctx):
                scoring.append((p, w))
        return cls(states, scoring) if states or scoring else None

    def holding(self, nominated: Sequence[Placed]) -> PodCycle:
        """This cycle with the ``nominated`` pods held on their nodes for its filters (``addNominatedPods``
        runs each plugin's ``AddPod`` on the state, and adds the pod to the node's ports); its scores
        do not see them."""
        held: list[tuple[PodAwareFilter, PodFilterState]] = [
            (f, WithAndWithout(s.changed(nominated, ()), s)) for f, s in self.filters
        ]
        return PodCycle(held, self.scorers)

    def state_of(self, plugin: PodAwareFilter) -> PodFilterState | None:
        return next((s for f, s in self.filters if f is plugin), None)

    def reject(self, node: int, without: Sequence[Assignment] = ()) -> Rejection | None:
        """The first rejection of ``node`` (the filters in profile order)."""
        for _, state in self.filters:
            rejection = state.reject(node, without)
            if rejection is not None:
                return rejection
        return None

    def passes(self, nodes: IntArray) -> BoolArray:
        ok = np.ones(len(nodes), dtype=bool)
        for _, state in self.filters:
            ok &= state.passes(nodes)
        return ok

    def scores(self, ctx: PodContext, nodes: IntArray) -> IntArray:
        """The weighted sum of the pod-aware scores of ``nodes`` (the filtered nodes being scored)."""
        total = np.zeros(len(nodes), dtype=np.int64)
        for plugin, weight in self.scorers:
            scores = plugin.pod_scores(ctx, nodes)
            if scores is not None:
                total += weight * scores
        return total


@dataclass
class _Kind:
    """The pod-aware PreFilter states of one kind of pod (pods alike in ``pre_filter_reads``): as the
    cluster gives them (``base``; empty: every filter Skips), and with the first ``absorbed`` events of
    the what-if counted (``states``, the last of those events' serial ``last``)."""

    of: list[PodAwareFilter]  # the filter of each state
    base: list[PodFilterState]
    states: list[PodFilterState]
    absorbed: int = 0
    last: int = 0


class WhatIf:
    """The profile's pod-aware filters over a what-if that tries pod after pod, each judged over the
    cluster as all the what-if did before it leaves it (upstream runs every filter over its forked
    snapshot, or over the scheduler's cache with the earlier pods assumed): nodes added past the
    cluster's rows (cluster-autoscaler's template copies; ``node_at`` gives a row's node), pods put
    there or on the cluster's nodes, the cluster's pods taken away (preemption's victims).

    Those are kept as events in order; each kind of pod keeps its states (``_Kind``), which count the
    events as far as they have read (``absorb``), and read the rest when next asked. ``mark`` and
    ``back_to`` follow the what-if's fork and revert: the events past the mark are taken back, and
    states that counted them start again from the cluster's. ``with_terms``: the what-if may put pods
    with inter-pod terms, whose required anti-affinity a pod's InterPodAffinity must see even where
    the cluster's pods make it Skip (``pre_filter_what_if``). ``held``: pods nominated to nodes, held
    there for every pod's filters as ``PodCycle.holding`` holds them."""

    def __init__(
        self,
        state: ClusterState,
        filters: Sequence[PodAwareFilter],
        with_terms: bool,
        node_at: Callable[[int], Node] | None = None,
        held: Sequence[Placed] = (),
    ) -> None:
        self.state, self.filters, self.with_terms = state, list(filters), with_terms
        self.node_at, self.held = node_at, held
        #: (serial, row, the pod put there, the assignment taken away); neither: the row's node added
        self.events: list[tuple[int, int, Pod | None, Assignment | None]] = []
        self.serial = 0
        self.kinds: dict[tuple[object, ...], _Kind] = {}

    def _event(self, row: int, pod: Pod | None, gone: Assignment | None) -> None:
        self.serial += 1
        self.events.append((self.serial, row, pod, gone))

    def add_node(self, row: int) -> None:
        """A node joins at ``row``, past the cluster's (``node_at`` gives it)."""
        assert self.node_at is not None
        self._event(row, None, None)

    def put(self, pod: Pod, row: int) -> None:
        self._event(row, pod, None)

    def remove(self, gone: Sequence[Assignment]) -> None:
        """The cluster's pods ``gone`` leave their nodes."""
        for a in gone:
            self._event(a.node, None, a)

    def mark(self) -> int:
        return len(self.events)

    def back_to(self, mark: int) -> None:
        """The events since ``mark`` are taken back."""
        del self.events[mark:]

    def judged_by(
        self, pod: Pod, key: tuple[object, ...] | None = None
    ) -> list[tuple[PodAwareFilter, PodFilterState]]:
        """``states``, each with its filter."""
        if not self.filters:
            return []
        kind = self._kind(pod, key)
        return list(zip(kind.of, kind.states, strict=True))

    def states(self, pod: Pod, key: tuple[object, ...] | None = None) -> list[PodFilterState]:
        """The pod's pod-aware PreFilter states over the cluster and all the what-if did to it (empty:
        every filter Skips); ``key``: its ``pre_filter_reads``, where the caller has it."""
        return self._kind(pod, key).states if self.filters else []

    def _kind(self, pod: Pod, key: tuple[object, ...] | None) -> _Kind:
        key = pre_filter_reads(pod) if key is None else key
        kind = self.kinds.get(key)
        if kind is None:
            cycle = PodCycle.start(self.filters, (), PodContext(pod, self.state), self.with_terms)
            if cycle is not None and self.held:
                cycle = cycle.holding(self.held)
            judged = [] if cycle is None else cycle.filters
            base = [s for _, s in judged]
            kind = self.kinds[key] = _Kind([f for f, _ in judged], base, base)
        if not kind.base:
            return kind
        events = self.events
        if kind.absorbed > len(events) or (kind.absorbed and events[kind.absorbed - 1][0] != kind.last):
            kind.states, kind.absorbed = kind.base, 0  # it counted events taken back since
        if kind.absorbed < len(events):
            if kind.states is kind.base:
                kind.states = [s.changed((), ()) for s in kind.base]
            new = events[kind.absorbed :]
            node_at = self.node_at
            nodes = [node_at(row) for _, row, p, g in new if p is None and g is None] if node_at else []
            added = [(p, row) for _, row, p, _ in new if p is not None]
            gone = [g for _, _, _, g in new if g is not None]
            for s in kind.states:
                s.absorb(nodes, added, gone)
            kind.absorbed, kind.last = len(events), events[-1][0]
        return kind
