"""The reservation a backfill scheduler computes for the job at the head of its queue.

Slurm's ``_attempt_backfill`` (``src/plugins/sched/backfill/backfill.c``): running jobs end at
start + time limit (an ``INFINITE`` limit is planned as one year); the pending job's expected
start is the first of those ends after which all of it fits, on the nodes it would use then.
"""

from __future__ import annotations

import numpy as np

from gpufleet.cluster.state import BoolArray, IntArray
from gpufleet.scheduling.reservation import NO_LIMIT_PLAN_S, Reservation, Running, plan, planned_end

GPU_COL = 0
ALLOC: IntArray = np.array([[8], [8], [8]], dtype=np.int64)  # three 8-GPU nodes, one column: GPUs
ALL: BoolArray = np.ones(3, dtype=bool)


def gpus(n: int) -> IntArray:
    return np.array([n], dtype=np.int64)


def requested(running: list[Running]) -> IntArray:
    out = np.zeros_like(ALLOC)
    for r in running:
        out[r.node] += r.req
    return out


def gang(members: int = 2, size: int = 8) -> list[IntArray]:
    return [gpus(size) for _ in range(members)]


def reserve(
    running: list[Running],
    members: list[IntArray],
    now: float = 0.0,
    eligible: list[BoolArray] | None = None,
    reserve_now: bool = False,
) -> Reservation | None:
    masks = eligible or [ALL] * len(members)
    return plan("default/t16", ALLOC, requested(running), running, members, masks, now, GPU_COL, reserve_now)


def test_gang_reserves_the_two_nodes_that_free_up_first_by_declared_limits() -> None:
    running = [Running(0, gpus(8), 3600.0), Running(1, gpus(4), 7200.0), Running(2, gpus(4), 1800.0)]
    r = reserve(running, gang())
    assert r is not None
    assert (r.start_s, r.nodes) == (3600.0, (0, 2))  # node 2 frees at 1800, node 0 at 3600; node 1 at 7200
    assert {node: int(need[0]) for node, need in r.need.items()} == {0: 8, 2: 8}


def test_pods_ending_at_the_same_time_are_released_together() -> None:
    running = [Running(0, gpus(4), 600.0), Running(0, gpus(4), 600.0), Running(1, gpus(8), 600.0)]
    r = reserve(running, gang())
    assert r is not None and (r.start_s, r.nodes) == (600.0, (0, 1))  # all free: lowest indices


def test_a_pod_without_a_time_limit_is_planned_to_run_a_year_as_slurm_plans_infinite() -> None:
    assert planned_end(100.0, None) == 100.0 + NO_LIMIT_PLAN_S == 100.0 + 365 * 24 * 3600
    running = [
        Running(0, gpus(8), planned_end(100.0, None)),
        Running(1, gpus(8), planned_end(0.0, 3600.0)),
        Running(2, gpus(8), planned_end(0.0, 7200.0)),
    ]
    r = reserve(running, gang())
    assert r is not None and (r.start_s, r.nodes) == (7200.0, (1, 2))
    r = reserve(running, gang(3))
    assert r is not None and r.start_s == 100.0 + NO_LIMIT_PLAN_S


def test_a_pod_past_its_declared_end_is_planned_to_end_now() -> None:
    """It overran its limit (Slurm would kill it; gpufleet lets it run): the start moves to now."""
    running = [Running(0, gpus(8), 3600.0), Running(1, gpus(8), 3600.0), Running(2, gpus(8), 9000.0)]
    r = reserve(running, gang(), now=5000.0)
    assert r is not None and (r.start_s, r.nodes) == (5000.0, (0, 1))


def test_a_job_that_fits_now_gets_no_reservation_unless_asked_to_keep_one() -> None:
    running = [Running(0, gpus(8), 3600.0)]
    assert reserve(running, gang()) is None  # its failure is about something the what-if does not model
    r = reserve(running, gang(), now=10.0, reserve_now=True)
    assert r is not None and (r.start_s, r.nodes) == (10.0, (1, 2))


def test_a_job_larger_than_the_cluster_gets_no_reservation() -> None:
    assert reserve([Running(0, gpus(8), 60.0)], gang(4)) is None


def test_members_only_use_nodes_their_static_filters_admit() -> None:
    running = [Running(0, gpus(8), 600.0), Running(1, gpus(8), 1200.0), Running(2, gpus(8), 1800.0)]
    not_node_0 = np.array([False, True, True])
    r = reserve(running, gang(), eligible=[not_node_0, not_node_0])
    assert r is not None and (r.start_s, r.nodes) == (1800.0, (1, 2))


def test_members_go_to_the_node_they_fill_best() -> None:
    """Greedy best fit, largest member first: 8-GPU members take the empty nodes, the 4-GPU one the half."""
    running = [Running(0, gpus(4), 10_000.0), Running(2, gpus(8), 600.0)]
    r = reserve(running, [gpus(4), gpus(8), gpus(8)])
    assert r is not None
    assert (r.start_s, r.members) == (600.0, (0, 1, 2))
