"""Quota usage of ClusterQueues and what each may still take, alone or from its cohort tree.

Mirrors ``kubernetes-sigs/kueue: pkg/cache/scheduler/resource_node.go``: ClusterQueues and
Cohorts are nodes of a tree (a ClusterQueue's parent is its cohort, a Cohort's its
``parentName``; a cohort that only ClusterQueues name is a root without quota of its own):

* a node's *subtree quota* is its own ``nominalQuota`` plus what each child lends it (the
  child's subtree quota minus its *local* quota); a node's local quota is
  ``subtreeQuota - lendingLimit`` (0 without a lendingLimit), never lent;
* a cohort's usage is the sum of what its children use beyond their local quota
  (``accumulateFromChild``);
* ``available`` = unused local quota + what the parent has available, the latter capped by
  ``borrowingLimit`` (``subtreeQuota - localQuota - usedInParent + borrowingLimit``); at a root,
  ``subtreeQuota - usage``;
* ``potentialAvailable`` (the most the queue could ever hold) = local quota + the parent's
  potential, capped by ``subtreeQuota + borrowingLimit``; at a root, its subtree quota;
* for preemption: a node is *within quota* of a (flavor, resource) when it uses no more than its
  subtree quota (``IsWithinNominalInResources``; a ClusterQueue's is its nominal quota), and requests
  *fit in* a node's quota when its usage plus them stays within it (``QuantitiesFitInQuota``);
* for fair sharing (``fair_sharing.go``: ``dominantResourceShare``, ``calculateLendable``): a node's
  dominant resource share (``fair_sharing.DRS``), from what it uses above its subtree quota of each
  (flavor, resource) of that quota and what its parent could ever lend of each resource.

A queue without a cohort has just its nominal quota. Amounts are in canonical units
(``gpufleet.model.resources``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpufleet.model.kueue import ClusterQueue, Cohort, FlavorResource, ResourceQuota
from gpufleet.scheduling.kueue.fair_sharing import DRS

Usage = dict[FlavorResource, int]


class QuotaSnapshot:
    """Usage per ClusterQueue (and so per cohort), changed by adding and removing workloads' usage."""

    def __init__(
        self,
        queues: Mapping[str, ClusterQueue],
        usage: Mapping[str, Mapping[FlavorResource, int]],
        cohorts: Mapping[str, Cohort] | None = None,
    ):
        self.queues = queues
        self.cohorts: dict[str, Cohort] = dict(cohorts or {})
        for cq in queues.values():  # a cohort only ClusterQueues name: a root without quota
            if cq.cohort is not None and cq.cohort not in self.cohorts:
                self.cohorts[cq.cohort] = Cohort(cq.cohort)
        for cohort in list(self.cohorts.values()):  # a parent no Cohort object defines: implicit
            if cohort.parent is not None and cohort.parent not in self.cohorts:
                self.cohorts[cohort.parent] = Cohort(cohort.parent)
        self.children: dict[str, list[str]] = {}  # node -> child nodes ("cq:<name>" / "cohort:<name>")
        for name in sorted(queues):
            if queues[name].cohort is not None:
                self.children.setdefault(f"cohort:{queues[name].cohort}", []).append(f"cq:{name}")
        for name in sorted(self.cohorts):
            parent = self.cohorts[name].parent
            if parent is not None:
                self.children.setdefault(f"cohort:{parent}", []).append(f"cohort:{name}")
        self.usage: dict[str, Usage] = {name: dict(usage.get(name, {})) for name in queues}
        self._subtree: dict[tuple[str, FlavorResource], int] = {}
        self._resources: dict[str, frozenset[FlavorResource]] = {}

    # -- the tree ---------------------------------------------------------------------------
    def parent(self, node: str) -> str | None:
        kind, name = node.split(":", 1)
        parent = self.queues[name].cohort if kind == "cq" else self.cohorts[name].parent
        return None if parent is None else f"cohort:{parent}"

    def _object(self, node: str) -> ClusterQueue | Cohort:
        kind, name = node.split(":", 1)
        return self.queues[name] if kind == "cq" else self.cohorts[name]

    def _quota(self, node: str, fr: FlavorResource) -> ResourceQuota | None:
        return self._object(node).quota(*fr)

    def root(self, queue: str) -> str:
        """The root of the queue's tree (the queue itself without a cohort)."""
        return self.root_of(f"cq:{queue}")

    def root_of(self, node: str) -> str:
        while (parent := self.parent(node)) is not None:
            node = parent
        return node

    def _flavor_resources(self, node: str) -> frozenset[FlavorResource]:
        """The (flavor, resource) pairs of the node's subtree quota: its own and its children's."""
        if node not in self._resources:
            own = {
                (q.flavor, r)
                for g in self._object(node).resource_groups
                for q in g.flavors
                for r in q.resources
            }
            below = (self._flavor_resources(child) for child in self.children.get(node, ()))
            self._resources[node] = frozenset(own.union(*below))
        return self._resources[node]

    def subtree_quota(self, node: str, fr: FlavorResource) -> int:
        key = (node, fr)
        if key not in self._subtree:
            quota = self._quota(node, fr)
            total = 0 if quota is None else quota.nominal
            for child in self.children.get(node, ()):
                total += self.subtree_quota(child, fr) - self._local(child, fr)
            self._subtree[key] = total
        return self._subtree[key]

    def _local(self, node: str, fr: FlavorResource) -> int:
        quota = self._quota(node, fr)
        if quota is None or quota.lending_limit is None:
            return 0
        return max(self.subtree_quota(node, fr) - quota.lending_limit, 0)

    def _usage(self, node: str, fr: FlavorResource) -> int:
        kind, name = node.split(":", 1)
        if kind == "cq":
            return self.used(name, fr)
        return sum(
            max(self._usage(child, fr) - self._local(child, fr), 0) for child in self.children.get(node, ())
        )

    def _available(self, node: str, fr: FlavorResource) -> int:
        parent = self.parent(node)
        used = self._usage(node, fr)
        if parent is None:
            return self.subtree_quota(node, fr) - used
        local = self._local(node, fr)
        from_parent = self._available(parent, fr)
        quota = self._quota(node, fr)
        if quota is not None and quota.borrowing_limit is not None:
            stored = self.subtree_quota(node, fr) - local
            used_in_parent = max(used - local, 0)
            from_parent = min(stored - used_in_parent + quota.borrowing_limit, from_parent)
        return max(local - used, 0) + from_parent

    def _potential(self, node: str, fr: FlavorResource) -> int:
        parent = self.parent(node)
        if parent is None:
            return self.subtree_quota(node, fr)
        most = self._local(node, fr) + self._potential(parent, fr)
        quota = self._quota(node, fr)
        if quota is not None and quota.borrowing_limit is not None:
            most = min(self.subtree_quota(node, fr) + quota.borrowing_limit, most)
        return most

    # -- queues -----------------------------------------------------------------------------
    def used(self, queue: str, fr: FlavorResource) -> int:
        return self.usage.get(queue, {}).get(fr, 0)

    def add(self, queue: str, amounts: Mapping[FlavorResource, int], sign: int = 1) -> None:
        used = self.usage.setdefault(queue, {})
        for fr, amount in amounts.items():
            used[fr] = used.get(fr, 0) + sign * amount

    def available(self, queue: str, fr: FlavorResource) -> int:
        if self.queues[queue].quota(*fr) is None:
            return 0
        return max(self._available(f"cq:{queue}", fr), 0)

    def potential_available(self, queue: str, fr: FlavorResource) -> int:
        if self.queues[queue].quota(*fr) is None:
            return 0
        return self._potential(f"cq:{queue}", fr)

    # -- nodes, for preemption (``cq:<name>``, ``cohort:<name>``) --------------------------------
    def ancestors(self, queue: str) -> list[str]:
        """The cohorts above the queue, its own first and the root last (``PathParentToRoot``)."""
        out: list[str] = []
        node = self.parent(f"cq:{queue}")
        while node is not None:
            out.append(node)
            node = self.parent(node)
        return out

    def within_quota(self, node: str, frs: Iterable[FlavorResource]) -> bool:
        """``IsWithinNominalInResources``: the node uses no more than its subtree quota (a ClusterQueue:
        its nominal quota) of each of ``frs``."""
        return all(self._usage(node, fr) <= self.subtree_quota(node, fr) for fr in frs)

    def lowest_subtree_that_fits(self, queue: str, fr: FlavorResource, val: int) -> tuple[int, bool]:
        """``FindHeightOfLowestSubtreeThatFits``: the height of the lowest subtree of the cohort tree that
        holds ``val`` more of ``fr`` for the queue (0: the queue itself, where it need not borrow; a
        cohort's height is its distance to its furthest leaf), the whole tree's where none does; and
        whether that subtree is smaller than the whole tree (the flavor assigner's
        ``mayReclaimInHierarchy``: preemption may reclaim there). The borrowing level a flavor
        assignment ranks by: the lower, the nearer the quota."""
        node = f"cq:{queue}"
        parent = self.parent(node)
        if parent is None or self._usage(node, fr) + val <= self.subtree_quota(node, fr):
            return 0, parent is not None
        remaining = val - max(self._local(node, fr) - self._usage(node, fr), 0)
        while parent is not None:
            if self._usage(parent, fr) + remaining <= self.subtree_quota(parent, fr):
                return self._height(parent), self.parent(parent) is not None
            remaining -= max(self._local(parent, fr) - self._usage(parent, fr), 0)
            parent = self.parent(parent)
        return self._height(self.root(queue)), False

    def dominant_resource_share(self, node: str) -> DRS:
        """``DominantResourceShare``: the node's share of what its parent could lend, as it now uses
        quota (a node without a parent: 0)."""
        weight = self._object(node).fair_weight
        parent = self.parent(node)
        if parent is None:
            return DRS(weight)
        borrowed: dict[str, int] = {}
        frs = []
        for fr in sorted(self._flavor_resources(node)):
            over = self._usage(node, fr) - self.subtree_quota(node, fr)
            if over > 0:
                borrowed[fr[1]] = borrowed.get(fr[1], 0) + over
                frs.append(fr)
        if not borrowed:
            return DRS(weight)
        lendable: dict[str, int] = {}  # ``calculateLendable``: over every (flavor, resource) of the tree
        for fr in self._flavor_resources(self.root_of(parent)):
            lendable[fr[1]] = lendable.get(fr[1], 0) + self._potential(parent, fr)
        ratio, dominant = 0.0, ""
        for resource in sorted(borrowed):  # by name: the first of equal ratios is dominant
            if lendable.get(resource, 0) > 0:
                share = borrowed[resource] * 1000.0 / lendable[resource]
                if share > ratio:
                    ratio, dominant = share, resource
        return DRS(weight, ratio, dominant, True, frozenset(frs))

    def _height(self, node: str) -> int:
        """``getNodeHeight``: a cohort's distance to its furthest leaf (1 with only ClusterQueues)."""
        children = self.children.get(node, [])
        height = min(len(children), 1)
        for child in children:
            if child.startswith("cohort:"):
                height = max(height, self._height(child) + 1)
        return height

    def fit_in_quota(self, node: str, requests: Mapping[FlavorResource, int]) -> tuple[bool, Usage]:
        """``QuantitiesFitInQuota``: whether ``requests`` fit the node's subtree quota on top of its
        usage, and what of them its unused local quota does not cover (to ask of its parent)."""
        fits = all(self._usage(node, fr) + v <= self.subtree_quota(node, fr) for fr, v in requests.items())
        local = {fr: max(self._local(node, fr) - self._usage(node, fr), 0) for fr in requests}
        return fits, {fr: max(v - local[fr], 0) for fr, v in requests.items()}
