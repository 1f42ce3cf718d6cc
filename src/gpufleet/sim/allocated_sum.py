"""The GPU-equivalents allocated over the whole cluster, kept as the allocations change: the sum over
nodes of what each one's pods request times each resource's weight (``InMemoryCluster._gpu_weights``),
without shared GPUs or DRA.

The meter reads it on every event that moved the allocations. Each read works out again only the
nodes touched since the last one (``ClusterState.changes``), and the nodes whose weights changed (new
weights with the same values, as after a cordon, are no change): all of them when the log was trimmed
past the last read, or when new weights leave the whole numbers or the weighted columns. The figure
is the float NumPy's sums give:

- in general each node's sum is a NumPy row sum (``(requested * weights).sum(axis=1)``) and the
  total their NumPy sum, as a fresh read makes them;
- where every weight is a whole number (whole GPUs, the common case) and every request on a weighted
  column is not negative, each node's sum and the total are kept as Python integers, a node's worked
  out in Python. Every product and partial sum NumPy would make is then a whole number no larger
  than the total, so while the total is below 2**53 NumPy's floating-point sums are exact in any
  order and equal it; a larger total, or a negative request, is summed by NumPy.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gpufleet.cluster.state import ClusterState

FloatArray = npt.NDArray[np.float64]
EXACT = 2**53  # below it every whole number is a float, and sums of them are exact


class AllocatedSum:
    """``read`` gives the total; what it keeps is as of the cluster's change log position ``pos``."""

    def __init__(self) -> None:
        self.weights: FloatArray | None = None  # the weights the kept sums were made with
        self.pos = 0
        self.per_node: FloatArray = np.zeros(0)  # each node's sum, where the weights are not whole
        #: where they are: the weighted columns, each node's weights there, each node's sum, the total
        self.columns: list[int] | None = None
        self.terms: list[list[int]] = []
        self.exact: list[int] = []
        self.total = 0

    def read(self, state: ClusterState, weights: FloatArray) -> float:
        since = self.pos - state.change_base
        if since < 0 or (
            self.weights is not weights and not self._same(weights) and not self._reweigh(state, weights)
        ):
            self._rebuild(state, weights)
        elif since < len(state.changes):
            rows = list(set(state.changes[since:]))
            if self.columns is None:
                self.per_node[rows] = (state.requested[rows] * weights[rows]).sum(axis=1)
            elif not self._patch(state, rows):
                self._rebuild(state, weights, whole=False)
        self.weights, self.pos = weights, state.change_pos
        if self.columns is not None and self.total < EXACT:
            return float(self.total)
        return float(self._per_node(state, weights).sum())

    def _same(self, weights: FloatArray) -> bool:
        """New weights with the values of the last (only nodes cordoned, say): the sums stand."""
        kept = self.weights
        return kept is not None and kept.shape == weights.shape and bool(np.array_equal(kept, weights))

    def _reweigh(self, state: ClusterState, weights: FloatArray) -> bool:
        """New weights on some rows (nodes that joined, left or had their devices described anew), the
        others' as before: where the sums are kept in integers and those rows' weights are whole, not
        negative and on the weighted columns only, those rows worked out again; else False (the caller
        works every row out again)."""
        kept = self.weights
        if self.columns is None or kept is None or kept.shape[1] != weights.shape[1]:
            return False  # (a new resource column: every row)
        n = len(kept)
        if n > len(weights):
            return False
        moved = np.flatnonzero((weights[:n] != kept).any(axis=1)).tolist() + list(range(n, len(weights)))
        rows = weights[moved]
        elsewhere = np.ones(weights.shape[1], dtype=bool)
        elsewhere[self.columns] = False
        if rows[:, elsewhere].any() or not _whole(rows):
            return False
        grown = len(weights) - n
        self.terms += [[] for _ in range(grown)]
        self.exact += [0] * grown
        for i, terms in zip(moved, rows[:, self.columns].astype(np.int64).tolist(), strict=True):
            self.terms[i] = terms
        return self._patch(state, moved)

    def _per_node(self, state: ClusterState, weights: FloatArray) -> FloatArray:
        if self.columns is not None:  # kept as integers: NumPy's own sums, for a total past EXACT
            per_node: FloatArray = (state.requested * weights).sum(axis=1)
            return per_node
        return self.per_node

    def _rebuild(self, state: ClusterState, weights: FloatArray, whole: bool = True) -> None:
        self.columns = None
        if whole and _whole(weights):
            columns = np.flatnonzero(weights.any(axis=0))
            asked, ints = state.requested[:, columns], weights[:, columns].astype(np.int64)
            low, high = int(asked.min(initial=0)), int(asked.max(initial=0)) * int(ints.max(initial=0))
            if low >= 0 and high * len(columns) < EXACT:  # no int64 product or row sum overflows
                self.columns, self.terms = columns.tolist(), ints.tolist()
                self.exact = (asked * ints).sum(axis=1).tolist()
                self.total = sum(self.exact)
                return
        self.per_node = (state.requested * weights).sum(axis=1)

    def _patch(self, state: ClusterState, rows: list[int]) -> bool:
        """The nodes ``rows`` worked out again in integers; False (nothing changed) on a negative request."""
        columns, requested, exact = self.columns, state.requested, self.exact
        assert columns is not None
        for i in rows:
            asked, value = requested[i].tolist(), 0
            for c, w in zip(columns, self.terms[i], strict=True):
                term = asked[c] * w
                if term < 0:
                    return False  # (the caller works every row out again: what was patched is dropped)
                value += term
            self.total += value - exact[i]
            exact[i] = value
        return True


def _whole(weights: FloatArray) -> bool:
    """Every weight a whole number, not negative (the sums kept in integers)."""
    return bool(((weights >= 0) & np.isfinite(weights) & (weights == np.trunc(weights))).all())
