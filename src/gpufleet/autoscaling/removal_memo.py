"""Scale-down verdicts carried from one scan to the next while what they were made of stays as it was.

cluster-autoscaler simulates the removal of every candidate node on every scan
(``planner.categorizeNodes``, ``RemovalSimulator.SimulateNodeRemoval``); on a large cluster most scans
find most nodes as the previous scan did. gpufleet keeps a node's verdict while everything it was made
of holds, so the decisions are those of a fresh simulation:

- the node itself: its allocation and pods (``ClusterState.node_version``; its utilisation and its
  pods' drainability follow from them);
- the nodes the drain simulation looked at: it places pods first fit in node order, so it never looks
  past the last node it chose (a pod that fits nowhere looked at every node). A change on a node after
  that one cannot change the verdict; one on that node or before it can;
- the nodes' static facts (nodes added or removed, labels, taints, cordons: ``ClusterState.static_rows``
  names the node of each change) and the nodes being deleted, which no pod may move to. A change of
  these on a node counts as a change on that node's row (a node added takes a row after every other:
  only a verdict that looked at every node, a pod fitting nowhere, looked there); a new resource
  column starts afresh;
- the pending pods ``filterOutSchedulable`` put on nodes (``scale_down.PendingOn``) and the pods long
  terminating (``scale_down.long_terminating_on``: neither counted nor moved on their node, which a pod
  becomes with time alone): a node whose pending or long-terminating pods are not those of the last scan
  counts as a change of its static facts;
- the expendable pods left out of the snapshot (``autoscaling.expendable``): which pods they are follows
  from the nodes' pods and the cutoff; a new cutoff starts afresh.

A verdict that depended on more than that is not kept: the pod-aware filters (inter-pod affinity and
spread count pods on every node of a domain), ResourceClaims (DRA allocations anywhere), pod age
(a ``kube-system`` pod blocks for its first hour), PodDisruptionBudgets (what they allow moves with
pods elsewhere), gpufleet's ``gpuAwareScaleDown`` (whether a pod computes) and, under
``--scale-down-unready-enabled=false``, the node's readiness (an unready node's verdict is neither
recalled nor kept). None is kept while
the cluster uses DRA or a placed pod (or a pending one put on a node) has inter-pod affinity terms (its
anti-affinity can turn a moved pod away from every node of its domain, however far from the nodes a verdict
looked at).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from gpufleet.autoscaling.expendable import DEFAULT_CUTOFF
from gpufleet.autoscaling.scale_down import AS_IS, SnapshotPods, Unremovable
from gpufleet.cluster.state import ClusterState

#: each candidate's verdict by name: why it may not go (None: unneeded)
Verdicts = dict[str, Unremovable | None]


@dataclass(frozen=True)
class Kept:
    version: int  # the node's ``node_version`` when it was assessed
    examined: int  # the last node row its verdict depended on (-1: the node's own row only)
    why: Unremovable | None  # why it may not go (None: unneeded)


@dataclass
class RemovalMemo:
    """What the last scan that assessed nodes found, and where it stood in the cluster's change logs."""

    columns: int | None = None  # the resource columns then
    cutoff: int | None = None  # --expendable-pods-priority-cutoff then
    exclude: frozenset[int] = frozenset()  # the rows being deleted then
    pending: dict[int, tuple[str, ...]] = field(default_factory=dict)  # the pending pods put on each row then
    long: dict[int, tuple[str, ...]] = field(default_factory=dict)  # the pods long terminating on each then
    change_pos: int = 0
    static_pos: int = 0  # how far ``ClusterState.static_rows`` went then
    kept: dict[str, Kept] = field(default_factory=dict)
    _standing: dict[str, Kept] = field(default_factory=dict)
    _changed: list[int] = field(default_factory=list)  # the two lowest rows changed since then
    _static: set[int] = field(default_factory=set)  # the rows whose static facts changed since then
    _since: set[int] = field(default_factory=set)  # every row changed since then, static facts or allocation
    _held: int = 0  # the change log position up to which ``holds`` found the settled verdicts standing
    #: the last scan's candidates and verdicts where each was kept (``settle``): with their rows, how many
    #: were eligible for the removal simulation and the last row any verdict looked at
    _settled: tuple[list[object], Verdicts, frozenset[int], int, int] | None = None

    def begin(
        self,
        state: ClusterState,
        exclude: frozenset[int],
        snapshot: SnapshotPods = AS_IS,
        cutoff: int = DEFAULT_CUTOFF,
    ) -> None:
        """A scan starts: the verdicts of the last one may stand; this scan's replace them. ``snapshot``:
        the pending pods this scan put on nodes and the pods long terminating; ``cutoff``: its expendable
        pods' priority cutoff."""
        columns = len(state.resources)
        standing = self.columns == columns and self.cutoff == cutoff and self.change_pos >= state.change_base
        self._standing = self.kept if standing else {}
        if not standing:
            self._settled = None
        keys = {i: tuple(pod.key for pod in pods) for i, pods in snapshot.pending.items() if pods}
        long = {i: tuple(sorted(a.pod.key for a in on)) for i, on in snapshot.long_terminating.items() if on}
        if standing:
            moved = _rows_differing(keys, self.pending) | _rows_differing(long, self.long)
            self._static = set(state.static_rows[self.static_pos :]) | (exclude ^ self.exclude) | moved
            since = self._since = self._static.union(state.changes[self.change_pos - state.change_base :])
            self._changed = []  # the two lowest (no sort of every row changed)
            if since:
                low = min(since)
                since.discard(low)
                self._changed = [low] if not since else [low, min(since)]
                since.add(low)
        self.columns, self.cutoff, self.exclude, self.kept = columns, cutoff, exclude, {}
        self.pending, self.long = keys, long
        self.change_pos = self._held = state.change_pos
        self.static_pos = len(state.static_rows)

    def recall(
        self, state: ClusterState, nodes: Iterable[tuple[str, int]], unready: set[int]
    ) -> list[Kept | None]:
        """Each node's (name, row) verdict if it still stands, else None (always None for a row in
        ``unready``)."""
        standing, versions, static, kept_now = self._standing, state.node_version, self._static, self.kept
        changed = self._changed  # the lowest row changed but the node's: the first, else the second, of two
        low = changed[0] if changed else None
        second = changed[1] if len(changed) > 1 else None
        out: list[Kept | None] = []
        for name, i in nodes:
            kept = standing.get(name)
            if kept is None or i in unready or versions[i] != kept.version or i in static:
                out.append(None)
                continue
            first = low if low != i else second
            if first is not None and first <= kept.examined:
                out.append(None)
                continue
            kept_now[name] = kept
            out.append(kept)
        return out

    def again(self, candidates: Sequence[object], limit: int) -> Verdicts | None:
        """The last scan's verdicts, where every one stands for the same ``candidates`` as ``recall`` would
        find each (none of their rows changed since, nor any row up to the last one a verdict looked at), and
        the removal simulation took every eligible one (no more than ``limit``): recalled all at once. Else
        None (ask ``recall``)."""
        lowest = self._changed[0] if self._changed else None
        verdicts = self._settled_for(candidates, limit, self._since, lowest)
        if verdicts is not None:
            self.kept = self._standing
        return verdicts

    def holds(self, state: ClusterState, candidates: Sequence[object], limit: int) -> bool:
        """Whether a scan now would get the verdicts of the last ``begin``'s scan whole from ``again``, for
        these ``candidates`` and ``limit``, where the nodes being deleted, the pending pods put on nodes, the
        pods long terminating and the cutoff are that scan's (the caller knows them unchanged). Asked without
        moving the memo: a later ``begin`` still counts every change since that scan. The changes found not to
        matter are not looked at again."""
        if self.columns != len(state.resources) or self.static_pos != len(state.static_rows):
            return False
        if self._held < state.change_base:  # (the log no longer holds them)
            return False
        new = set(state.changes[self._held - state.change_base :])
        if self._settled_for(candidates, limit, new, min(new) if new else None) is None:
            return False
        self._held = state.change_pos
        return True

    def _settled_for(
        self, candidates: Sequence[object], limit: int, changed: AbstractSet[int], lowest: int | None
    ) -> Verdicts | None:
        """The settled verdicts, where they were made for ``candidates``, the simulation took no more than
        ``limit`` of them, and the rows ``changed`` (``lowest`` the lowest) are none of theirs nor any up to
        the last row a verdict looked at."""
        settled = self._settled
        if settled is None or settled[3] > limit or settled[0] != candidates:
            return None
        _, verdicts, rows, _, examined = settled
        if not changed.isdisjoint(rows) or (lowest is not None and lowest <= examined):
            return None
        return verdicts

    def settle(
        self, candidates: Sequence[object], rows: Sequence[int], verdicts: Verdicts, eligible: int
    ) -> None:
        """This scan's ``verdicts`` of its ``candidates`` (at ``rows``), ``eligible`` of them taken by the
        removal simulation: kept whole for the next scan (``again``) where each was kept (recalled, or made
        and kept) and none was left out."""
        kept = self.kept
        if len(verdicts) == len(candidates) == len(kept):
            examined = max((k.examined for k in kept.values()), default=-1)
            self._settled = list(candidates), verdicts, frozenset(rows), eligible, examined
        else:
            self._settled = None

    def keep(
        self, state: ClusterState, name: str, i: int, examined: int | None, why: Unremovable | None
    ) -> None:
        """Node ``i``'s fresh verdict (``why`` it may not go, None: unneeded), kept unless it depended on
        more than the rows up to ``examined`` (None)."""
        if examined is not None:
            self.kept[name] = Kept(state.node_version[i], examined, why)


def _rows_differing(now: dict[int, tuple[str, ...]], then: dict[int, tuple[str, ...]]) -> set[int]:
    """The rows whose pods (by key) differ between two scans' ``now`` and ``then``."""
    if now == then:
        return set()
    return {i for i in now.keys() | then.keys() if now.get(i) != then.get(i)}
