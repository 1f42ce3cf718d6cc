"""Per-(profile, pod shape) cache of filter masks and scores over every node.

Pods of one shape (same requests, selectors, affinity, tolerations) see the same static filter results and
the same resource scores. The cache keeps, per node: whether the static filters pass (and the first static
reason when not), the static score plugins' raw values, whether the dynamic filters pass (asked only where
the static filters do), and the weighted sum of dynamic scores of each feasible node (0 elsewhere: only
those scores are read, and a node becomes feasible only through a change of its own, which has it scored
then; a volatile score is asked for every node). Dynamic filters whose PreFilter Skips the pod are left
out. It re-evaluates only the nodes changed since it last looked (``ClusterState.changes_since``); a change
of the node set (``static_version``) re-evaluates the rows that ``ClusterState.static_rows`` names (nodes
added, removed, cordoned, relabelled: each row's verdicts read only that node), one of the images on the
nodes (``images_version``) or a new resource column rebuilds it. ``masked`` holds each node's dynamic
score where it is feasible and -1 where not, so when every node is scored the choice is one maximum over
one array.

The static filters read no request amounts: shapes with the same placement constraints share one
static pass over the nodes (kept in ``ClusterState.memo``, patched row by row as the nodes change). A volatile
score (Random) is asked for every node whenever anything changed, the filters only for the nodes
that changed.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from dataclasses import dataclass

import numpy as np

from gpufleet.cluster.state import SHORT_LOG, BoolArray, ClusterState, IntArray, NodeRow
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    DynamicFilter,
    DynamicScore,
    PodContext,
    StaticFilter,
    StaticScore,
    check_score_range,
)
from gpufleet.scheduling.plugins.per_node_score import PerNodeScore
from gpufleet.scheduling.profile import Profile


@dataclass(frozen=True)
class StaticVerdicts:
    """The static filters' and node PreFilters' verdicts on every node row, as the nodes stood at
    ``static_version`` (``static_pos`` entries of ``ClusterState.static_rows``, ``columns`` resources)."""

    reasons: list[str | None]  # each node's first reason, None where it passes or is not active
    flags: list[bool]  # whether each node is considered
    considered: IntArray  # the active nodes the PreFilters leave, ascending
    passing: BoolArray  # which of them pass
    passing_list: list[bool]  # ``passing`` as a list (read by the caches of every shape sharing it)
    static_version: int
    static_pos: int
    columns: int
    #: each reason given, and the plugins that give it (the failure's ``UnschedulablePlugins``)
    plugins: dict[str, tuple[str, ...]]
    #: the node PreFilters' node names left no node at all: their PreFilter message and the plugins that
    #: narrowed (``node_names_conflict``); None otherwise
    conflict: tuple[str, tuple[str, ...]] | None = None


def node_names_conflict(narrowing: list[str]) -> tuple[str, tuple[str, ...]]:
    """``RunPreFilterPlugins`` when the intersection of the PreFilter results' node names is empty: the
    pod is rejected at PreFilter (UnschedulableAndUnresolvable), with ``node(s) didn't satisfy plugin X``
    for one narrowing plugin, else ``node(s) didn't satisfy plugin(s) [X Y] simultaneously`` (sorted),
    and those plugins are its ``UnschedulablePlugins``."""
    plugins = tuple(sorted(narrowing))
    if len(plugins) == 1:
        return f"node(s) didn't satisfy plugin {plugins[0]}", plugins
    return f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}] simultaneously", plugins


#: Per profile's static filters and pod placement constraints: their verdicts.
StaticMemo = dict[tuple[object, ...], StaticVerdicts]


def static_rows_since(state: ClusterState, static_pos: int, columns: int) -> list[int] | None:
    """The rows whose static facts changed since ``ClusterState.static_rows`` held ``static_pos`` entries,
    ascending; None where a resource column was added since (the only move of ``static_version`` that
    names no row)."""
    if len(state.resources) != columns:
        return None
    return sorted(set(state.static_rows[static_pos:]))


#: Up to this many changed nodes are re-evaluated one by one in Python integers.
SCALAR_NODES = 8
#: Up to this many rows are re-evaluated one by one after nodes joined, left or changed labels (most rows
#: are ones the cache has seen: ``_by_row`` answers them).
PATCH_SCALAR_NODES = 64
#: Up to this many nodes judged over arrays have their verdicts written into a cache's list of ``ok`` (past
#: this the list is made again when next read).
PATCH_LIST_NODES = 64
#: Distinct resource rows whose answer a cache keeps (it starts over past this).
ROWS_KEPT = 4096
#: Placement constraint sets whose static verdicts a cluster keeps (it starts over past this: a month's
#: DaemonSet pods, pinned each to a node that autoscaling made, would otherwise add one a node for good).
VERDICTS_KEPT = 256


class ShapeCache:
    # (slots: more than 30 attributes would not fit CPython 3.11's shared-key instance layout, and every
    # read of them would look up a dictionary of the object's own; these are read for every node judged)
    __slots__ = (
        "_by_row",
        "_every_static",
        "_feasible",
        "_feasible_list",
        "_feasible_pos",
        "_monotone",
        "_node_filters",
        "_ok_list",
        "_raw_all",
        "_row_filters",
        "_rows_all",
        "_scalar",
        "_scores_by_row",
        "_static_filters",
        "_static_histogram",
        "_static_key",
        "_static_list",
        "_top",
        "_top_score",
        "all_rows",
        "columns",
        "considered",
        "ctx",
        "diagnosis",
        "dyn",
        "dynamic_filters",
        "images_version",
        "masked",
        "ok",
        "pre_filter_conflict",
        "profile",
        "seen",
        "state",
        "static_pass",
        "static_plugins",
        "static_pos",
        "static_raw",
        "static_reason",
        "static_version",
        "volatile",
    )

    def __init__(self, profile: Profile, ctx: PodContext):
        self.profile = profile
        #: the dynamic filters, less those whose PreFilter Skips this pod (they pass every node)
        self.dynamic_filters = [f for f in profile.dynamic_filters if not f.skips(ctx.pod)]
        #: a node they reject stays rejected while pods only join it: not judged again until something
        #: may have freed room there (``ClusterState.freed_at``)
        self._monotone = all(f.monotone for f in self.dynamic_filters)
        self.volatile = any(plugin.volatile for plugin, _ in profile.dynamic_scores)
        #: a changed node is re-evaluated alone, in Python integers (no volatile score, no ResourceClaim)
        self._scalar = not self.volatile and not ctx.pod.resource_claims
        #: a node's (fit by the filters that read only the row, dynamic score) by its resource row: the
        #: scores read nothing else (none reads arrays only)
        self._by_row: dict[tuple[int, ...], tuple[bool, int]] = {}
        self._scores_by_row = not any(p.array_only for p, _ in profile.dynamic_scores)
        #: the dynamic filters that read only the row for this pod (their verdict is kept by row), the others
        self._row_filters = [f for f in self.dynamic_filters if f.row_only(ctx.pod)]
        self._node_filters = [f for f in self.dynamic_filters if not f.row_only(ctx.pod)]
        self.state = ctx.state
        self.ctx = ctx
        self.all_rows = False  # every row of the state is an active, considered node
        self.static_version = -1
        self.images_version = -1  # the nodes' images (ImageLocality's raw scores) it was built with
        self.static_pos = 0  # how far ``ClusterState.static_rows`` went then
        self.columns = 0  # the resource columns then
        self.seen = 0
        self.considered: IntArray = np.zeros(0, dtype=np.int64)  # active nodes after PreFilter narrowing
        self.static_reason: list[str | None] = []
        self.static_plugins: dict[str, tuple[str, ...]] = {}  # ``StaticVerdicts.plugins``
        self.pre_filter_conflict: tuple[str, tuple[str, ...]] | None = None  # ``StaticVerdicts.conflict``
        #: a failed cycle's diagnosis (``Scheduler._failure``) and the cluster's (change_pos, static_version)
        #: it was made on
        self.diagnosis: tuple[tuple[int, int], Counter[str], frozenset[str], IntArray] | None = None
        self._static_histogram: Counter[str] | None = None  # ``static_histogram``'s, until a rebuild
        self.static_pass: BoolArray = np.zeros(0, dtype=bool)
        self._every_static = False  # every row passes the static filters (``static_pass`` all True)
        self.static_raw: list[tuple[StaticScore, int, IntArray]] = []
        self._raw_all: list[tuple[StaticScore, int, IntArray]] = []  # every applying plugin's, zero or not
        self.dyn: IntArray = np.zeros(0, dtype=np.int64)  # feasible nodes' dynamic scores, 0 elsewhere
        self.ok: BoolArray = np.zeros(0, dtype=bool)
        self.masked: IntArray = np.zeros(0, dtype=np.int64)
        # Kept across one-node re-evaluations, recomputed after a wider change:
        self._top: list[int] | None = None  # nodes at ``_top_score`` (the highest of ``masked``), ascending
        self._top_score = -1
        self._feasible: IntArray | None = None  # ``flatnonzero(ok)``
        self._feasible_pos: IntArray | None = None  # ``flatnonzero(ok[considered])``
        self._feasible_list: list[int] | None = None  # the same as a list, kept through one-node changes
        self._ok_list: list[bool] | None = None  # ``ok`` as a list, kept through one-node changes
        self._static_list: list[bool] = []  # ``static_pass`` as a list
        self._rows_all: IntArray = np.zeros(0, dtype=np.int64)  # ``_every_row``'s
        #: the static filters, and the key of their verdicts on the cache's pod (``_static_filtered``): the
        #: filters, the node PreFilters and what each reads of the pod
        self._static_filters = tuple(f for f in profile.filters if isinstance(f, StaticFilter))
        prefilters = tuple(profile.node_prefilters)
        self._static_key = (
            self._static_filters,
            prefilters,
            *(f.reads(ctx.pod) for f in self._static_filters),
            *(p.reads(ctx.pod) for p in prefilters),
        )
        self._build_static()

    def _build_static(self, rows: list[int] | None = None) -> None:
        """The static part afresh, or where ``rows`` names the only rows whose static facts changed since it
        was built, only those rows' verdicts, raw static scores (a score whose raw value weighs the other
        nodes, ImageLocality's, the whole column) and dynamic evaluation, with the rows changed since by
        allocation."""
        state = self.state
        ctx = self.ctx = PodContext(self.ctx.pod, state)
        pod = ctx.pod
        verdicts = self._static_filtered(pod)
        reasons, self.considered, self.static_pass = verdicts.reasons, verdicts.considered, verdicts.passing
        self._every_static = bool(np.logical_and.reduce(self.static_pass)) if state.size else False
        self._static_list = verdicts.passing_list
        self.static_reason, self._static_histogram = reasons, None
        self.static_plugins = verdicts.plugins
        self.pre_filter_conflict = verdicts.conflict
        self.all_rows = len(self.considered) == state.size
        grown = state.size - len(self.ok)
        if rows is None:
            self._raw_all = [
                (plugin, weight, np.zeros(state.size, dtype=np.int64))
                for plugin, weight in self.profile.static_scores
                if plugin.applies(pod)
            ]
        elif grown:  # (else the rows are written in place: the arrays are this cache's own)
            self._raw_all = [
                (p, w, np.concatenate([raw, np.zeros(grown, dtype=np.int64)])) for p, w, raw in self._raw_all
            ]
        considered: list[int] | None = None
        for plugin, _, raw in self._raw_all:
            if rows is None or type(plugin).raw_column is not StaticScore.raw_column:
                if considered is None:
                    considered = self.considered.tolist()
                raw[:] = 0
                raw[self.considered] = plugin.raw_column(pod, state, considered)
            else:
                for i in rows:
                    raw[i] = plugin.raw(pod, state.nodes[i]) if verdicts.flags[i] else 0
        # all zero normalises to one constant for every node: no effect on the choice (that constant is
        # still checked in range, as ``RunScorePlugins`` checks every score)
        self.static_raw = []
        for kept in self._raw_all:
            if kept[2].any():
                self.static_raw.append(kept)
            else:
                check_score_range(kept[0].name, kept[0].normalize(np.zeros(1, dtype=np.int64)))
        self._top = self._feasible = self._feasible_pos = self._feasible_list = self._ok_list = None
        if rows is None:
            self._by_row.clear()
            self.dyn = np.zeros(state.size, dtype=np.int64)
            self.ok = np.zeros(state.size, dtype=bool)
            self.masked = np.full(state.size, -1, dtype=np.int64)
            self._evaluate(np.arange(state.size, dtype=np.int64))
        else:
            if grown:  # (else the rows are judged again in place, as a refresh does)
                self.dyn = np.concatenate([self.dyn, np.zeros(grown, dtype=np.int64)])
                self.ok = np.concatenate([self.ok, np.zeros(grown, dtype=bool)])
                self.masked = np.concatenate([self.masked, np.full(grown, -1, dtype=np.int64)])
            # the rows and those changed since by allocation, ascending (a set of Python integers: few)
            changed = sorted(set(rows).union(state.changes_since(self.seen).tolist()))
            if self._scalar and len(changed) <= PATCH_SCALAR_NODES:
                for i in changed:
                    self._evaluate_node(i)
            else:
                self._evaluate(np.array(changed, dtype=np.int64), score_all=self.volatile)
        self.static_version = state.static_version
        self.images_version = state.images_version
        self.static_pos = len(state.static_rows)
        self.columns = len(state.resources)
        self.seen = state.change_pos

    def _static_filtered(self, pod: Pod) -> StaticVerdicts:
        """The static filters' and node PreFilters' verdicts on every node. Those filters read the node
        object and of the pod only what each says it reads (``reads``: placement constraints, never request
        amounts), so pods equal in that (the shapes of one trace's pods, whatever their amounts or GPU
        shares) share one evaluation, patched in the rows whose node changed when the nodes do (made afresh
        after a new resource column)."""
        state = self.state
        memo: StaticMemo = state.memo.setdefault("static-filters", {})  # type: ignore[assignment]
        key = self._static_key
        got = memo.get(key)
        if got is None and len(memo) >= VERDICTS_KEPT:
            memo.clear()
        if got is None or got.static_version != state.static_version:
            rows = static_rows_since(state, got.static_pos, got.columns) if got is not None else None
            got = memo[key] = self._run_static_filters(pod, self._static_filters, got, rows)
        return got

    def _run_static_filters(
        self,
        pod: Pod,
        static_filters: tuple[StaticFilter, ...],
        base: StaticVerdicts | None,
        rows: list[int] | None,
    ) -> StaticVerdicts:
        """The verdicts on every node, or ``base``'s with the nodes ``rows`` judged again (None: all)."""
        state = self.state
        pinned: set[str] | None = None  # PreFilterResult.NodeNames: the plugins' node sets intersected
        narrowing: list[str] = []
        conflict: tuple[str, tuple[str, ...]] | None = None
        for prefilter in self.profile.node_prefilters:
            names = prefilter.nodes(pod)
            if names is not None:
                pinned = names if pinned is None else pinned & names
                narrowing.append(prefilter.name)
                if not pinned:  # no node left: the later PreFilters do not run
                    conflict = node_names_conflict(narrowing)
                    break
        absent = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]"
        plugins: dict[str, tuple[str, ...]] = {absent: tuple(sorted(narrowing))}
        if base is not None and rows is not None:  # (copied, grown: the new rows are among ``rows``)
            reasons, flags = list(base.reasons), list(base.flags)
            reasons += [None] * (state.size - len(reasons))
            flags += [False] * (state.size - len(flags))
            plugins.update(base.plugins)
            before = [flags[i] for i in rows if i < len(base.flags)]
        else:
            reasons, flags = [None] * state.size, [False] * state.size
        active = state.active.tolist() if rows is None else state.active
        undecided: list[int] = []  # the nodes considered, no filter has rejected yet
        for i in range(state.size) if rows is None else rows:
            reasons[i], flags[i] = None, False
            if not active[i]:
                continue
            if pinned is not None and state.nodes[i].name not in pinned:
                reasons[i] = absent
                continue
            flags[i] = True
            undecided.append(i)
        nodes = [state.nodes[i] for i in undecided]
        for f in static_filters:  # in order: the first filter that rejects a node gives its reason
            if not undecided:
                break
            verdicts = f.reject_each(pod, nodes)
            if verdicts.count(None) == len(verdicts):
                continue
            kept = [k for k, reason in enumerate(verdicts) if reason is None]
            for reason in set(verdicts):
                if reason is not None and f.name not in plugins.get(reason, ()):
                    plugins[reason] = (*plugins.get(reason, ()), f.name)
            for i, reason in zip(undecided, verdicts, strict=True):
                reasons[i] = reason
            undecided, nodes = [undecided[k] for k in kept], [nodes[k] for k in kept]
        if base is not None and rows is not None:  # only ``rows`` moved: ``base``'s arrays patched there
            old = len(base.flags)
            if [flags[i] for i in rows if i < old] == before:
                considered = base.considered  # the same nodes considered, new ones (past ``old``) after them
                if state.size > old:
                    joined = np.array([i for i in rows if i >= old and flags[i]], dtype=np.int64)
                    considered = np.concatenate([considered, joined])
            else:
                considered = np.flatnonzero(flags).astype(np.int64)
            passing = np.zeros(state.size, dtype=bool)
            passing[:old] = base.passing
            passing_list = list(base.passing_list)
            passing_list += [False] * (state.size - old)
            for i in rows:
                passing[i] = passing_list[i] = flags[i] and reasons[i] is None
        else:
            considered = np.flatnonzero(flags).astype(np.int64)
            passing = np.zeros(state.size, dtype=bool)
            passing[considered] = [reasons[i] is None for i in considered.tolist()]
            passing_list = passing.tolist()
        considered.flags.writeable = passing.flags.writeable = False
        return StaticVerdicts(
            reasons,
            flags,
            considered,
            passing,
            passing_list,
            state.static_version,
            len(state.static_rows),
            len(state.resources),
            plugins,
            conflict,
        )

    def _evaluate(self, idx: IntArray, score_all: bool = False) -> None:
        """Dynamic filters for the nodes in ``idx``, and scores for those nodes or, with ``score_all`` (a
        volatile score: its scores move with anything, the filters only where a node changed), for every
        node."""
        few = len(idx) <= SCALAR_NODES and not self.ctx.pod.resource_claims
        if few and not score_all and self._scalar:
            for i in idx.tolist():
                self._evaluate_node(i)
            return
        ctx = self.ctx
        passing = None if self._every_static else self.static_pass[idx]
        # (the dynamic filters only where the static pass)
        judged = idx if passing is None or np.count_nonzero(passing) == len(idx) else idx[passing]
        if few:  # a volatile score: the changed nodes' filters in Python integers, the scores over arrays
            fit = np.array([self._fits(i, self._row(i)) for i in judged.tolist()], dtype=bool)
        elif len(judged):
            filters = self.dynamic_filters
            fit = filters[0].passes(ctx, judged) if filters else np.ones(len(judged), dtype=bool)
            for f in filters[1:]:
                fit = fit & f.passes(ctx, judged)
        else:
            fit = np.zeros(0, dtype=bool)
        if passing is not None and len(judged) < len(idx):
            fit, judged_fit = np.zeros(len(idx), dtype=bool), fit
            fit[passing] = judged_fit
        self.ok[idx] = ok = fit  # (False wherever a static filter fails)
        if score_all:  # every node's score anew (new arrays: no write through an index)
            self.dyn = total = self._total(self._every_row(), self.ok)
            self.masked = np.where(self.ok, total, -1)
        else:
            if self.volatile:  # (a volatile score, such as Random's draws, is asked for every node)
                total = self._total(idx, ok)
            else:  # only feasible nodes' scores are read: the others' are 0 until a change of theirs
                total = np.zeros(len(idx), dtype=np.int64)
                if np.count_nonzero(ok):
                    total[ok] = self._total(idx[ok])
            self.dyn[idx] = total
            self.masked[idx] = np.where(ok, total, -1)
        self._top = None
        self._patch_lists(idx, ok)

    def _patch_lists(self, idx: IntArray, ok: BoolArray) -> None:
        """``ok`` of the nodes ``idx`` written into ``ok``'s list where few changed; the feasible nodes'
        array and list are kept where none of them flipped (else made again when next asked for)."""
        oks = self._ok_list
        if oks is None or len(idx) > PATCH_LIST_NODES:
            self._feasible = self._feasible_pos = self._feasible_list = self._ok_list = None
            return
        flipped = False
        for i, fits in zip(idx.tolist(), ok.tolist(), strict=True):
            if oks[i] != fits:
                oks[i], flipped = fits, True
        if flipped:
            self._feasible = self._feasible_pos = self._feasible_list = None

    def _total(self, idx: IntArray, scored: BoolArray | None = None) -> IntArray:
        """The weighted sum of the dynamic scores of the nodes ``idx`` (a new array); each plugin's scores of
        the feasible nodes among them (``scored``, all by default) checked (``check_score_range``)."""
        total: IntArray | None = None
        for plugin, weight in self.profile.dynamic_scores:
            raw = plugin.score(self.ctx, idx)
            if not plugin.unbounded:
                check_score_range(plugin.name, raw if scored is None else raw[scored])
            part = weight * raw
            total = part if total is None else total + part
        return np.zeros(len(idx), dtype=np.int64) if total is None else np.asarray(total, dtype=np.int64)

    def _every_row(self) -> IntArray:
        """``arange(state.size)``, kept while the size stands (a volatile score asks for every row)."""
        every = self._rows_all
        if len(every) != self.state.size:
            every = self._rows_all = np.arange(self.state.size, dtype=np.int64)
            every.flags.writeable = False
        return every

    def _evaluate_node(self, i: int) -> None:
        """The same as ``_evaluate`` for one node, in Python integers (the node a binding changed)."""
        ok, total = self._judge_node(i) if self._static_list[i] else (False, 0)
        oks = self._ok_list
        if oks is None:
            oks = self._ok_list = self.ok.tolist()
        if ok != oks[i]:
            self._feasible = self._feasible_pos = None
            feasible = self._feasible_list
            if feasible is not None:
                if ok:
                    insort(feasible, i)
                else:
                    del feasible[bisect_left(feasible, i)]
            oks[i] = self.ok[i] = ok
        self.dyn[i] = total if ok else 0
        self.masked[i] = score = total if ok else -1
        top = self._top
        if top is None:
            return
        k = bisect_left(top, i)
        listed = k < len(top) and top[k] == i
        if score >= 0 and score > self._top_score:
            self._top, self._top_score = [i], score
        elif score >= 0 and score == self._top_score:
            if not listed:
                top.insert(k, i)
        elif listed:
            del top[k]
            if not top:
                self._top = None  # the next best may be anywhere: rescan

    def _judge_node(self, i: int) -> tuple[bool, int]:
        """Whether node ``i``, which the static filters pass, passes the dynamic ones, and its dynamic
        score (kept by its resource row where the scores read only that)."""
        row = self._row(i)
        key = (*row[0], *row[1], *row[2]) if self._scores_by_row else None
        known = self._by_row.get(key) if key is not None else None
        if known is None:
            fit = self._fits(i, row, self._row_filters)
            total = 0
            if fit:  # (a node that does not fit keeps 0)
                for plugin, weight in self.profile.dynamic_scores:
                    score = self._score_node(plugin, row, i)
                    if not MIN_NODE_SCORE <= score <= MAX_NODE_SCORE and not plugin.unbounded:
                        check_score_range(plugin.name, [score])
                    total += weight * score
            if key is not None:
                if len(self._by_row) >= ROWS_KEPT:
                    self._by_row.clear()
                self._by_row[key] = fit, total
        else:
            fit, total = known
        if fit and self._node_filters:  # (the filters in another order: the verdict is the same)
            fit = self._fits(i, row, self._node_filters)
        return fit, total

    def _row(self, i: int) -> NodeRow:
        state = self.state
        return state.alloc[i].tolist(), state.requested[i].tolist(), state.nonzero[i].tolist()

    def _fits(self, i: int, row: NodeRow, filters: list[DynamicFilter] | None = None) -> bool:
        """Whether node ``i`` (its ``row``) passes ``filters`` (every dynamic filter by default)."""
        ctx, fits = self.ctx, True
        for f in self.dynamic_filters if filters is None else filters:  # (a loop: no generator per node)
            fits = f.passes_node(ctx, row, i)
            if not fits:
                break
        return fits

    def _score_node(self, plugin: DynamicScore, row: NodeRow, i: int) -> int:
        if isinstance(plugin, PerNodeScore):  # reads the node's GPUs: asked for the node alone
            return plugin.score_alone(self.ctx, i)
        if plugin.array_only:  # its score reads more than the row: asked over a one-node array
            return int(plugin.score(self.ctx, np.array([i], dtype=np.int64))[0])
        return plugin.score_node(self.ctx, row)

    def refresh(self) -> None:
        state = self.state
        same_nodes = state.static_version == self.static_version
        same_nodes = same_nodes and state.images_version == self.images_version
        if self.seen == state.change_pos and same_nodes:
            return
        if not same_nodes:
            rows = None
            if state.images_version == self.images_version:  # (new images move ImageLocality's raw scores)
                rows = static_rows_since(state, self.static_pos, self.columns)
            self._build_static(rows)
            return
        recent = state.logged_since(self.seen)
        if self._scalar and recent is not None and len(recent) <= SHORT_LOG:  # a few changes (the usual)
            nodes = sorted(set(recent))
            if self._monotone:  # the unsettled (``_changed_unsettled``), in Python integers
                oks = self._ok_list
                ok, freed_at, seen = self.ok if oks is None else oks, state.freed_at, self.seen
                nodes = [i for i in nodes if ok[i] or freed_at[i] >= seen]
            if len(nodes) <= SCALAR_NODES:
                for i in nodes:
                    self._evaluate_node(i)
            else:
                self._evaluate(np.array(nodes, dtype=np.int64))
        else:
            changed = self._changed_unsettled(recent)
            self._evaluate(changed, score_all=self.volatile)
        self.seen = state.change_pos

    def _changed_unsettled(self, recent: list[int] | None) -> IntArray:
        """The nodes changed since the cache last looked (``recent``: the log since, or None) that are
        unsettled, ascending: that may have another verdict, so not, in a monotone cache, where the filters
        rejected the node for lack of room and pods only joined it since (nothing it held may have left,
        ``ClusterState.freed_at``). Where nothing was freed since (``ClusterState.last_freed``), those are
        the changed nodes it found feasible, found in one pass over a long gap."""
        state, seen = self.state, self.seen
        if not self._monotone:
            return state.changes_since(seen)
        none_freed = state.last_freed < seen
        if none_freed and (recent is None or len(recent) > SHORT_LOG):
            return ((state.changed_at >= seen) & self.ok).nonzero()[0]
        changed = state.changes_since(seen)
        return changed[
            self.ok[changed] if none_freed else self.ok[changed] | (state.freed_at[changed] >= seen)
        ]

    def top_nodes(self) -> list[int]:
        """The feasible nodes with the highest dynamic score, ascending (none when nothing is feasible)."""
        if self._top is None:  # (the ufunc and the method: not NumPy's Python wrappers, asked per cycle)
            masked = self.masked
            best = self._top_score = int(np.maximum.reduce(masked)) if len(masked) else -1
            self._top = (masked == best).nonzero()[0].tolist() if best >= 0 else []
        return self._top

    def first_top(self) -> int | None:
        """``top_nodes()[0]``, None where that is empty: the kept list's first, else the first highest of
        ``masked`` found in one pass, no list made (a tie broken by the lowest node asks for no other)."""
        top = self._top
        if top is not None:
            return top[0] if top else None
        masked = self.masked
        if not len(masked):
            return None
        j = int(masked.argmax())
        return j if masked.item(j) >= 0 else None

    def static_histogram(self) -> Counter[str]:
        """The static filters' and node PreFilters' reasons on the active nodes, counted (a new Counter
        each time): a failed cycle's diagnosis starts from it. Counted once per build of the static part."""
        if self._static_histogram is None:
            reasons = self.static_reason
            self._static_histogram = Counter(
                r for i in self.state.active_indices().tolist() if (r := reasons[i])
            )
        return Counter(self._static_histogram)

    def feasible_nodes(self) -> IntArray:
        """``flatnonzero(ok)``, recomputed only after some node's feasibility flipped."""
        if self._feasible is None:
            self._feasible = self.ok.nonzero()[0]
            self._feasible.flags.writeable = False
        return self._feasible

    def feasible_positions(self) -> IntArray:
        """The positions in ``considered`` of the feasible nodes (``feasible_nodes`` where every row is
        considered), recomputed only after some node's feasibility flipped or the nodes changed."""
        if self.all_rows:
            return self.feasible_nodes()
        if self._feasible_pos is None:
            self._feasible_pos = self.ok[self.considered].nonzero()[0]
            self._feasible_pos.flags.writeable = False
        return self._feasible_pos

    def feasible_list(self) -> list[int]:
        """``feasible_nodes`` as a list, kept up to date through one-node re-evaluations (what a window of
        ``percentageOfNodesToScore`` counts, without NumPy)."""
        if self._feasible_list is None:
            self._feasible_list = self.ok.nonzero()[0].tolist()
        return self._feasible_list

    def total_scores(self, idx: IntArray) -> IntArray:
        total = self.dyn[idx]  # (a new array: ``idx`` indexes by position)
        for plugin, weight, raw in self.static_raw:
            normalized = plugin.normalize(raw[idx])
            check_score_range(plugin.name, normalized)
            total += weight * normalized
        return total
