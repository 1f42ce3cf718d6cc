"""Fair sharing's order of the ClusterQueues to preempt from, and the shares a strategy compares.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/preemption/fairsharing`` (``ordering.go``
``TargetClusterQueueOrdering``, ``target.go`` ``TargetClusterQueue``, ``least_common_ancestor.go``):

* from the root of the preemptor's cohort tree down, each step takes the child with the highest share
  (``compare_drs``): a ClusterQueue with candidates that borrows (the preemptor's own queue too, while
  it has candidates), or a Cohort that borrows or lies on the preemptor's way to the root; a Cohort
  wins a tie against a ClusterQueue, and two ClusterQueues of equal share go by their first
  candidates' order. Nodes that can give no more are pruned; the walk ends once the root is. A
  ClusterQueue without a cohort offers only itself. The same queue may come again while its share
  stays the highest;
* the shares compared are those of the *almost least common ancestors*: the nodes just below the
  lowest cohort shared by the preemptor's and the target's ClusterQueue, on each one's way up.

Upstream's children are sets (no order); here ClusterQueues and Cohorts are each taken by name, so
that of Cohorts of equal share the last by name is entered, and of ClusterQueues of equal share and
equally ranked candidates the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from gpufleet.scheduling.kueue.fair_sharing import DRS, NEGATIVE_DRS, compare_drs
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.workload import Admitted


class TargetOrdering:
    """``TargetClusterQueueOrdering`` over ``candidates`` (in preemption order), for the preemptor's
    ClusterQueue ``queue``; ``rank`` orders two candidates as upstream's ``CandidatesOrdering``."""

    def __init__(
        self,
        snapshot: QuotaSnapshot,
        queue: str,
        candidates: Sequence[Admitted],
        rank: Callable[[Admitted], tuple[object, ...]],
    ):
        self.snapshot = snapshot
        self.queue = queue
        self.rank = rank
        self.ancestors = snapshot.ancestors(queue)
        self.targets: dict[str, list[Admitted]] = {}
        for a in candidates:
            self.targets.setdefault(a.workload.cluster_queue, []).append(a)
        self.pruned: set[str] = set()  # nodes that give no more candidates

    def __iter__(self) -> Iterator[str]:
        """The ClusterQueue to take a candidate from next (``Iter``); the caller pops one, or drops it."""
        if not self.ancestors:
            while f"cq:{self.queue}" not in self.pruned and self.has_workload(self.queue):
                yield self.queue
            return
        root = self.ancestors[-1]
        while root not in self.pruned:
            target = self._next(root)
            if target is not None:
                yield target

    def has_workload(self, queue: str) -> bool:
        return bool(self.targets.get(queue))

    def pop(self, queue: str) -> Admitted:
        """``PopWorkload``: the queue's next candidate."""
        return self.targets[queue].pop(0)

    def drop(self, queue: str) -> None:
        """``DropQueue``: take no more candidates from the queue."""
        self.pruned.add(f"cq:{queue}")

    def _next(self, cohort: str) -> str | None:
        """``nextTarget``: the ClusterQueue under ``cohort`` whose way down has the highest shares; None
        where this step only pruned nodes."""
        snapshot = self.snapshot
        children = snapshot.children.get(cohort, [])
        best_queue: str | None = None
        best_queue_drs = NEGATIVE_DRS
        for child in (c for c in children if c.startswith("cq:") and c not in self.pruned):
            name = child[3:]
            drs = snapshot.dominant_resource_share(child)
            if (not drs.borrowing and name != self.queue) or not self.has_workload(name):
                self.pruned.add(child)
                continue
            order = compare_drs(drs, best_queue_drs)
            if order == 0:
                assert best_queue is not None  # no share equals the negative one it starts from
                if self.rank(self.targets[name][0]) < self.rank(self.targets[best_queue][0]):
                    best_queue = name
            elif order == 1:
                best_queue, best_queue_drs = name, drs
        best_cohort: str | None = None
        best_cohort_drs = NEGATIVE_DRS
        for child in (c for c in children if c.startswith("cohort:") and c not in self.pruned):
            drs = snapshot.dominant_resource_share(child)
            if not drs.borrowing and child not in self.ancestors:
                self.pruned.add(child)
            elif compare_drs(drs, best_cohort_drs) >= 0:
                best_cohort, best_cohort_drs = child, drs
        if best_cohort is None and best_queue is None:
            self.pruned.add(cohort)
            return None
        if best_cohort is not None and compare_drs(best_cohort_drs, best_queue_drs) >= 0:
            return self._next(best_cohort)
        return best_queue

    # -- the shares a strategy compares (``TargetClusterQueue``) ------------------------------------
    def _almost_lcas(self, target: str) -> tuple[str, str]:
        """``getAlmostLCAs``: below the lowest cohort that holds both queues, the preemptor's node and the
        target's."""
        lca = next(c for c in self.snapshot.ancestors(target) if c in self.ancestors)
        return self._almost_lca(self.queue, lca), self._almost_lca(target, lca)

    def _almost_lca(self, queue: str, lca: str) -> str:
        node = f"cq:{queue}"
        while (parent := self.snapshot.parent(node)) != lca:
            assert parent is not None  # the lca is on the queue's way up
            node = parent
        return node

    def shares(self, target: str) -> tuple[DRS, DRS]:
        """``ComputeShares``: the preemptor's share (with the incoming workload) and the target's now."""
        preemptor, other = self._almost_lcas(target)
        return self.snapshot.dominant_resource_share(preemptor), self.snapshot.dominant_resource_share(other)

    def share_without(self, target: str, candidate: Admitted) -> DRS:
        """``ComputeTargetShareAfterRemoval``: the target's share once ``candidate``'s usage is gone."""
        self.snapshot.add(target, candidate.usage, -1)
        share = self.snapshot.dominant_resource_share(self._almost_lcas(target)[1])
        self.snapshot.add(target, candidate.usage)
        return share
