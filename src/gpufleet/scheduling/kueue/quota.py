"""Quota usage of ClusterQueues and what each may still take, alone or from its cohort.

Mirrors ``kubernetes-sigs/kueue: pkg/cache/scheduler/resource_node.go`` (``available``,
``potentialAvailable``) for a flat cohort (a cohort is a name shared by ClusterQueues, the
parent of all of them):

* a queue's *guaranteed* quota is ``nominalQuota - lendingLimit`` (0 without a lendingLimit),
  never lent; the rest of its nominal quota is lent to the cohort's pool;
* the cohort's pool is the sum of its members' lendable quota, and its usage the sum of
  what each member uses beyond its guaranteed quota;
* ``available`` = unused guaranteed quota + what is unused in the pool, the latter capped by
  ``borrowingLimit`` (``nominal - guaranteed - used beyond guaranteed + borrowingLimit``);
* ``potentialAvailable`` (the most the queue could ever hold) = guaranteed + the whole pool,
  capped by ``nominalQuota + borrowingLimit``.

A queue without a cohort has just its nominal quota. Amounts are in canonical units
(``gpufleet.model.resources``).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpufleet.model.kueue import ClusterQueue, FlavorResource

Usage = dict[FlavorResource, int]


class QuotaSnapshot:
    """Usage per ClusterQueue, changed by adding and removing workloads' usage."""

    def __init__(self, queues: Mapping[str, ClusterQueue], usage: Mapping[str, Mapping[FlavorResource, int]]):
        self.queues = queues
        self.usage: dict[str, Usage] = {name: dict(usage.get(name, {})) for name in queues}
        self.cohorts: dict[str, list[str]] = {}
        for name in sorted(queues):
            cohort = queues[name].cohort
            if cohort is not None:
                self.cohorts.setdefault(cohort, []).append(name)

    def used(self, queue: str, fr: FlavorResource) -> int:
        return self.usage.get(queue, {}).get(fr, 0)

    def add(self, queue: str, amounts: Mapping[FlavorResource, int], sign: int = 1) -> None:
        used = self.usage.setdefault(queue, {})
        for fr, amount in amounts.items():
            used[fr] = used.get(fr, 0) + sign * amount

    def _pool(self, cohort: str, fr: FlavorResource) -> tuple[int, int]:
        """(lendable quota, usage of it) of the cohort's members for ``fr``."""
        lendable = used = 0
        for member in self.cohorts.get(cohort, ()):
            quota = self.queues[member].quota(*fr)
            if quota is not None:
                lendable += quota.nominal - quota.guaranteed
                used += max(self.used(member, fr) - quota.guaranteed, 0)
        return lendable, used

    def available(self, queue: str, fr: FlavorResource) -> int:
        cq = self.queues[queue]
        quota = cq.quota(*fr)
        if quota is None:
            return 0
        used = self.used(queue, fr)
        if cq.cohort is None:
            return max(quota.nominal - used, 0)
        local = max(quota.guaranteed - used, 0)
        lendable, pool_used = self._pool(cq.cohort, fr)
        from_pool = max(lendable - pool_used, 0)
        if quota.borrowing_limit is not None:
            stored = quota.nominal - quota.guaranteed
            used_in_pool = max(used - quota.guaranteed, 0)
            from_pool = min(stored - used_in_pool + quota.borrowing_limit, from_pool)
        return max(local + from_pool, 0)

    def potential_available(self, queue: str, fr: FlavorResource) -> int:
        cq = self.queues[queue]
        quota = cq.quota(*fr)
        if quota is None:
            return 0
        if cq.cohort is None:
            return quota.nominal
        most = quota.guaranteed + self._pool(cq.cohort, fr)[0]
        if quota.borrowing_limit is not None:
            most = min(quota.nominal + quota.borrowing_limit, most)
        return most

    def borrowing(self, queue: str, frs: Mapping[FlavorResource, int] | None = None) -> bool:
        """Whether the queue uses more than its nominal quota (of any of ``frs``; of anything)."""
        cq = self.queues[queue]
        for fr, used in self.usage.get(queue, {}).items():
            quota = cq.quota(*fr)
            if (frs is None or fr in frs) and quota is not None and used > quota.nominal:
                return True
        return False
