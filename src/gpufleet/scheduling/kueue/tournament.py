"""With fair sharing, the order in which a cycle's heads are considered: a tournament in each cohort tree.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/fair_sharing_iterator.go`` (``fairSharingIterator``,
``runTournament``, ``entryComparer``). Each time the next head is wanted, on the quota snapshot as the
cycle has changed it so far:

* a head of a ClusterQueue without a cohort comes as it is; otherwise its cohort tree runs a
  tournament. For each head in the tree, its usage is added to its queue and, for each cohort on the
  queue's way to the root, the share (``QuotaSnapshot.dominant_resource_share``) of the cohort's child
  on that way is taken (``computeDRS``);
* each cohort, from the leaves up, nominates one head among its child cohorts' winners and its
  ClusterQueues' heads: one whose node below the cohort borrows none of the (flavor, resource) pairs its
  assignment asks for before one whose node does (``FairSharingPrioritizeNonBorrowing``, on by
  default), then the lower share (``compare_drs``), the higher priority (``PrioritySortingWithinCohort``,
  on by default), then the older. The root's winner comes next, and its queue offers no more heads this
  cycle.

Upstream takes the trees in no particular order (a map's); here the tree of the first remaining head in
the classical order (not borrowing first, then priority, then age) goes first, and heads equal in all
upstream compares go by creation order, then key.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpufleet.scheduling.kueue.fair_sharing import DRS, compare_drs
from gpufleet.scheduling.kueue.flavors import Assignment
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.workload import Workload

Entry = tuple[Workload, Assignment]


def fair_order(entries: list[Entry], snapshot: QuotaSnapshot) -> Iterator[Entry]:
    """The entries (one head per ClusterQueue, in the classical order) in fair sharing's order; each is
    chosen when asked for, on ``snapshot`` as it is then."""
    remaining = {e[0].cluster_queue: e for e in entries}
    while remaining:
        first = next(iter(remaining.values()))
        root = snapshot.root(first[0].cluster_queue)
        winner = first if root.startswith("cq:") else _Tournament(snapshot, remaining, root).run(root)
        assert winner is not None  # the tree holds the first remaining head
        del remaining[winner[0].cluster_queue]
        yield winner


class _Tournament:
    """One pop of ``fairSharingIterator`` in the tree of ``root``: the shares, then the matches."""

    def __init__(self, snapshot: QuotaSnapshot, remaining: dict[str, Entry], root: str):
        self.snapshot = snapshot
        self.remaining = remaining
        self.shares: dict[tuple[str, str], DRS] = {}  # (cohort, workload key) -> its child's share there
        for queue, (workload, assignment) in remaining.items():  # ``computeDRS``
            if snapshot.root(queue) != root:
                continue
            snapshot.add(queue, assignment.usage)
            share = snapshot.dominant_resource_share(f"cq:{queue}")
            for ancestor in snapshot.ancestors(queue):
                self.shares[(ancestor, workload.key)] = share
                share = snapshot.dominant_resource_share(ancestor)
            snapshot.add(queue, assignment.usage, -1)

    def run(self, cohort: str) -> Entry | None:
        """``runTournament``: the head the cohort nominates, None where its subtree has none left."""
        candidates: list[Entry] = []
        children = self.snapshot.children.get(cohort, [])
        for child in (c for c in children if c.startswith("cohort:")):
            winner = self.run(child)
            if winner is not None:
                candidates.append(winner)
        candidates.extend(
            self.remaining[c[3:]] for c in children if c.startswith("cq:") and c[3:] in self.remaining
        )
        if not candidates:
            return None
        best = candidates[0]
        for current in candidates[1:]:
            if self._less(current, best, cohort):
                best = current
        return best

    def _less(self, a: Entry, b: Entry, cohort: str) -> bool:
        """``entryComparer.less``: whether ``a`` goes before ``b`` at ``cohort``."""
        a_share, b_share = self.shares[(cohort, a[0].key)], self.shares[(cohort, b[0].key)]
        a_borrows, b_borrows = a_share.borrowing_on(a[1].usage), b_share.borrowing_on(b[1].usage)
        if a_borrows != b_borrows:
            return not a_borrows
        order = compare_drs(a_share, b_share)
        if order != 0:
            return order < 0
        return a[0].queue_order() < b[0].queue_order()
