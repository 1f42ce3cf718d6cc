"""What is free on each active node outside an excluded set (``ClusterSnapshot.free``), kept from one
cluster-autoscaler scan to the next in ``ClusterState.memo`` and brought up to date row by row.

Every scan that simulates a placement (``filterOutSchedulable``, a drain) reads what is free on every
node (``scale_down.PlacementBase``); most nodes' allocations are as the last scan read them. The kept
arrays stand while no node joined or left (``ClusterState.membership``: a taint, a label or a cordon
frees nothing), the resource columns and
the excluded nodes are as they were and no GPU is shared by fractional requests
(a node's room for those is read from the shares' ledger, not from its row). The rows of the nodes
whose allocation changed since (``ClusterState.changes``) are read again by the same
``ClusterSnapshot.free``, into copies: the arrays are those a fresh read gives, and an array once
handed out never changes.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace

import numpy as np

from gpufleet.cluster.snapshot import ClusterSnapshot
from gpufleet.cluster.state import ClusterState, IntArray

MEMO_KEY = "autoscaling.free-rows"


@dataclass(frozen=True)
class FreeRows:
    """The active nodes outside ``exclude`` (``idx``, and as a list ``rows``), what is free on each of
    them (``free``: each resource column; ``milli``: GPU thousandths), and where the cluster stood."""

    membership: tuple[int, int]  # ``ClusterState.membership`` then
    columns: int
    exclude: frozenset[int]
    change_pos: int
    idx: IntArray
    rows: list[int]
    free: IntArray
    milli: IntArray


def free_rows(state: ClusterState, exclude: frozenset[int]) -> FreeRows:
    """What is free now on the active nodes outside ``exclude``: the kept arrays, their changed rows
    read again, or a fresh read."""
    kept = state.memo.get(MEMO_KEY)
    if (
        isinstance(kept, FreeRows)
        and state.shares is None
        and kept.membership == state.membership
        and kept.columns == len(state.resources)
        and kept.exclude == exclude
        and kept.change_pos >= state.change_base
    ):
        if kept.change_pos == state.change_pos:
            return kept
        fresh = _patched(state, kept)
    else:
        keep = state.active.copy()
        keep[[i for i in exclude if i < len(keep)]] = False
        idx = keep.nonzero()[0].astype(np.int64)
        free, milli = _read(state, idx)  # may add the GPU column: the versions are read after it
        columns, at = len(state.resources), state.change_pos
        fresh = FreeRows(state.membership, columns, exclude, at, idx, idx.tolist(), free, milli)
    state.memo[MEMO_KEY] = fresh
    return fresh


def _patched(state: ClusterState, kept: FreeRows) -> FreeRows:
    """``kept`` with the rows of the nodes touched since it was read read again."""
    rows = kept.rows
    changed = sorted(set(state.changes[kept.change_pos - state.change_base :]))
    at = [(j, i) for i in changed if (j := bisect.bisect_left(rows, i)) < len(rows) and rows[j] == i]
    free, milli = kept.free, kept.milli
    if at:
        positions = np.array([j for j, _ in at], dtype=np.int64)  # (an array indexes faster than a list)
        new_free, new_milli = _read(state, np.array([i for _, i in at], dtype=np.int64))
        free, milli = free.copy(), milli.copy()
        free[positions], milli[positions] = new_free, new_milli
        free.flags.writeable = milli.flags.writeable = False
    return replace(kept, change_pos=state.change_pos, free=free, milli=milli)


def _read(state: ClusterState, idx: IntArray) -> tuple[IntArray, IntArray]:
    free, milli = ClusterSnapshot(state).free(idx)
    free.flags.writeable = milli.flags.writeable = False
    return free, milli
