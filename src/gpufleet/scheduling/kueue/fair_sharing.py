"""Fair sharing's share of a ClusterQueue or Cohort, how two shares compare, and the preemption strategies.

Mirrors ``kubernetes-sigs/kueue: pkg/cache/scheduler/fair_sharing.go`` (``DRS``, ``CompareDRS``; the
share itself is computed on the quota tree: ``QuotaSnapshot.dominant_resource_share``) and
``pkg/scheduler/preemption/fairsharing/strategy.go``:

* a node's *dominant resource share* is, over the resources it borrows (its usage above its subtree
  quota, summed over flavors per resource), the largest of ``borrowed x 1000 / lendable``, where
  ``lendable`` is what its parent could ever lend of that resource (``potentialAvailable`` of the parent,
  summed over the flavors of the tree); the resource giving it is the *dominant resource* (on a tie, the
  first by name). A node without a parent, or borrowing nothing, has share 0. The share is divided by
  the node's ``fairSharing.weight``; a weight of 0 makes the share of a node that borrows infinite;
* ``compare_drs``: lower shares first; two nodes with weight 0 that borrow compare by their unweighted
  ratios, and rank after every other;
* preemption strategies (``LessThanOrEqualToFinalShare``, rule S2-a: the preemptor's share with the
  incoming workload is at most the target's once the candidate is gone; ``LessThanInitialShare``, rule
  S2-b: it is below the target's share as it is).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpufleet.model.kueue import (
    DEFAULT_FAIR_WEIGHT,
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    FlavorResource,
)


@dataclass(frozen=True)
class DRS:
    """A node's dominant resource share, before its weight divides it."""

    weight: float = DEFAULT_FAIR_WEIGHT
    ratio: float = 0.0  # ``unweightedRatio``: the dominant resource's borrowed x 1000 / lendable
    dominant: str = ""
    borrowing: bool = False  # its usage exceeds its quota in some (flavor, resource)
    borrowed: frozenset[FlavorResource] = frozenset()  # ``borrowedFRs``

    @property
    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and self.ratio != 0

    def weighted(self) -> float:
        """``PreciseWeightedShare``: infinite for a weight of 0 while borrowing."""
        if self.ratio == 0:
            return 0.0
        return math.inf if self.weight == 0 else self.ratio / self.weight

    def borrowing_on(self, requests: Mapping[FlavorResource, int]) -> bool:
        """``IsBorrowingOn``: whether it borrows a (flavor, resource) that ``requests`` ask for."""
        return any(requests.get(fr, 0) > 0 for fr in self.borrowed)


#: ``NegativeDRS``: below every share, where a search for the highest starts.
NEGATIVE_DRS = DRS(ratio=-1.0)


def compare_drs(a: DRS, b: DRS) -> int:
    """``CompareDRS``: -1, 0 or 1 as ``a``'s share is lower than, equal to or higher than ``b``'s."""
    if a.zero_weight_borrows and b.zero_weight_borrows:
        x, y = a.ratio, b.ratio
    elif a.zero_weight_borrows or b.zero_weight_borrows:
        return 1 if a.zero_weight_borrows else -1
    else:
        x, y = a.weighted(), b.weighted()
    return (x > y) - (x < y)


#: A strategy: (the preemptor's share with the incoming workload, the target's share now, the target's
#: share without the candidate) -> may the candidate be preempted.
Strategy = Callable[[DRS, DRS, DRS], bool]


def less_than_or_equal_to_final_share(preemptor_new: DRS, target_old: DRS, target_new: DRS) -> bool:
    """Rule S2-a (``LessThanOrEqualToFinalShare``)."""
    return compare_drs(preemptor_new, target_new) <= 0


def less_than_initial_share(preemptor_new: DRS, target_old: DRS, target_new: DRS) -> bool:
    """Rule S2-b (``LessThanInitialShare``)."""
    return compare_drs(preemptor_new, target_old) < 0


STRATEGIES: dict[str, Strategy] = {
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE: less_than_or_equal_to_final_share,
    LESS_THAN_INITIAL_SHARE: less_than_initial_share,
}
