"""When and where the job at the head of the queue can start: a backfill reservation, computed.

Mirrors Slurm's backfill scheduler (``src/plugins/sched/backfill/backfill.c``,
``_attempt_backfill``): every running job is expected to end at its start plus its declared
time limit (``sbatch --time``; here ``gpufleet.io/time-limit``, never the true duration). A job
without a limit is planned as ending 365 days after it started, as Slurm plans an ``INFINITE``
limit (``YEAR_MINUTES`` in ``job_mgr.c``, ``365 * 24 * 60 * 60`` in ``backfill.c``). Walking those
ends in order on a what-if copy of the node columns, freeing each job's resources, the first
time the whole pending job (every member of a gang) fits is its expected start, and the nodes
it would use there are reserved for it. A running pod already past its declared end (it overran
its limit: Slurm would kill it, gpufleet lets it run) is planned to end at once.

Pure: node columns, the running pods' requests and planned ends, and the job's requests in; a
``Reservation`` (or None) out. Members are placed greedily, largest request of ``fit_column``
first, each on the eligible node that leaves the least of that column free (lowest index on a
tie); a packing the greedy pass misses is not searched for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gpufleet.cluster.state import BoolArray, IntArray

#: What Slurm plans for a job whose time limit is ``INFINITE``: one year.
NO_LIMIT_PLAN_S = 365 * 24 * 3600.0


def planned_end(start_s: float, time_limit_s: float | None) -> float:
    """When a pod that started at ``start_s`` is expected to end, by its declared limit."""
    return start_s + (NO_LIMIT_PLAN_S if time_limit_s is None else time_limit_s)


@dataclass(frozen=True)
class Running:
    """A pod holding resources: its node, its request vector and its planned end."""

    node: int
    req: IntArray
    end_s: float


@dataclass(frozen=True, eq=False)
class Reservation:
    """A pending job's reservation: the nodes its members will start on, from when, and what it takes on
    each of them."""

    job: str  # the gang's PodGroup key, or the pod's key
    start_s: float
    members: tuple[int, ...]  # the node of each pending member, in the order given
    need: dict[int, IntArray]  # per reserved node, what the job takes there

    @property
    def nodes(self) -> tuple[int, ...]:
        return tuple(sorted(self.need))


def plan(
    job: str,
    alloc: IntArray,
    requested: IntArray,
    running: Sequence[Running],
    members: Sequence[IntArray],
    eligible: Sequence[BoolArray],
    now: float,
    fit_column: int,
    reserve_now: bool = False,
) -> Reservation | None:
    """The job's reservation: the earliest planned end after which all ``members`` fit.

    ``eligible[k]``: the nodes member ``k`` may use at all (active, static filters pass). None
    when the job never fits, or when it fits now without any pod ending and not ``reserve_now``
    (its failure is about something this what-if does not model).
    """
    free = alloc - requested
    placed = _fit(free, members, eligible, fit_column)
    if placed is not None:
        return _reservation(job, now, placed, members) if reserve_now else None
    ends = sorted(running, key=lambda r: (max(r.end_s, now), r.node))
    i = 0
    while i < len(ends):
        t = max(ends[i].end_s, now)
        while i < len(ends) and max(ends[i].end_s, now) <= t:
            free[ends[i].node] += ends[i].req
            i += 1
        placed = _fit(free, members, eligible, fit_column)
        if placed is not None:
            return _reservation(job, t, placed, members)
    return None


def _reservation(job: str, start_s: float, placed: list[int], members: Sequence[IntArray]) -> Reservation:
    need: dict[int, IntArray] = {}
    for node, req in zip(placed, members, strict=True):
        need[node] = need[node] + req if node in need else req.copy()
    return Reservation(job, start_s, tuple(placed), need)


def _fit(
    free: IntArray, members: Sequence[IntArray], eligible: Sequence[BoolArray], col: int
) -> list[int] | None:
    """A node per member on a copy of ``free`` (greedy best fit), or None if one does not fit."""
    left = free.copy()
    placed = [0] * len(members)
    for k in sorted(range(len(members)), key=lambda k: (-int(members[k][col]), k)):
        req = members[k]
        idx = np.flatnonzero(eligible[k] & ((left >= req) | (req == 0)).all(axis=1))
        if len(idx) == 0:
            return None
        node = int(idx[int(np.argmin(left[idx, col] - req[col]))])
        left[node] -= req
        placed[k] = node
    return placed
