"""The Traffic fluid queue: waits, a client/gateway timeout (``timeoutSeconds``), a bounded queue
(``maxQueue``), every request counted once, and the simulated DCGM_FI_DEV_GPU_UTIL."""

from __future__ import annotations

import pytest

from gpufleet.model.load import Traffic
from gpufleet.sim.traffic import TrafficState, mean_gpu_util_pct


def state(
    rps: tuple[tuple[float, float], ...] = ((0.0, 10.0),),
    per_replica: float = 10.0,
    timeout_s: float | None = None,
    max_queue: int | None = None,
) -> TrafficState:
    return TrafficState(
        Traffic("chat", "serving", "vllm", rps, per_replica, timeout_s=timeout_s, max_queue=max_queue)
    )


def conserved(t: TrafficState) -> bool:
    return t.requests == pytest.approx(t.served + t.timed_out + t.dropped + t.backlog)


def test_under_capacity_nothing_waits_and_the_gpus_are_as_busy_as_the_load() -> None:
    t = state(rps=((0.0, 15.0),))
    t.advance(0.0, 2, 2.0)  # 20 requests/s of capacity
    t.advance(100.0, 2, 2.0)
    assert (t.requests, t.served, t.timed_out, t.dropped, t.backlog) == (1500.0, 1500.0, 0.0, 0.0, 0.0)
    assert t.percentile_wait(99) == 0.0
    assert t.figures()["dcgm_gpu_util_pct"] == 75.0


def test_without_bounds_an_overload_queues_and_every_request_is_eventually_served() -> None:
    t = state(rps=((0.0, 20.0), (60.0, 0.0)))
    t.advance(0.0, 1, 1.0)
    t.advance(60.0, 1, 1.0)  # 10/s beyond capacity for 60 s: 600 wait
    assert t.backlog == 600.0
    t.advance(200.0, 1, 1.0)
    assert (t.served, t.timed_out, t.dropped, t.backlog) == (1200.0, 0.0, 0.0, 0.0)
    assert t.percentile_wait(99) == pytest.approx(30.0)  # mean backlog 300 over 10/s of capacity


def test_a_timeout_caps_the_wait_and_what_would_wait_longer_times_out() -> None:
    t = state(rps=((0.0, 20.0),), timeout_s=30.0)
    t.advance(0.0, 1, 1.0)
    t.advance(600.0, 1, 1.0)
    # the backlog grows by 10/s to 10/s x 30 s = 300 after 30 s; then 10/s of arrivals time out
    assert t.backlog == pytest.approx(300.0)
    assert t.timed_out == pytest.approx(10.0 * 570)
    assert t.dropped == 0.0 and conserved(t)
    assert t.percentile_wait(99) == 30.0  # a timed-out request counts the timeout as its wait
    assert t.figures()["dcgm_gpu_util_pct"] == 100.0


def test_a_bounded_queue_drops_what_arrives_while_it_is_full() -> None:
    t = state(rps=((0.0, 20.0),), timeout_s=60.0, max_queue=100)
    t.advance(0.0, 1, 1.0)
    t.advance(110.0, 1, 1.0)
    # full after 10 s (100 waiting at 10/s growth, below the timeout's 600): then 10/s are refused
    assert t.backlog == pytest.approx(100.0)
    assert t.dropped == pytest.approx(1000.0)
    assert t.timed_out == 0.0 and conserved(t)
    assert t.percentile_wait(100) == pytest.approx(10.0)  # 100 ahead, 10/s served


def test_with_no_replica_working_requests_time_out_after_the_timeout() -> None:
    t = state(rps=((0.0, 10.0),), timeout_s=30.0)
    t.advance(0.0, 0, 0.0)
    t.advance(100.0, 0, 0.0)
    # only the last 30 s of arrivals can still be waiting
    assert t.backlog == pytest.approx(300.0) and t.timed_out == pytest.approx(700.0)
    assert t.served == 0.0 and conserved(t)
    assert t.figures()["dcgm_gpu_util_pct"] is None  # no GPU worked


def test_when_capacity_falls_the_backlog_beyond_the_new_bound_times_out() -> None:
    t = state(rps=((0.0, 40.0),), timeout_s=30.0)
    t.advance(0.0, 2, 2.0)
    t.advance(100.0, 2, 2.0)
    assert t.backlog == pytest.approx(600.0)  # 20/s x 30 s
    t.advance(100.0, 1, 1.0)  # a replica goes: 10/s x 30 s can still make it
    t.advance(101.0, 1, 1.0)
    assert t.backlog == pytest.approx(300.0)
    assert conserved(t)


def test_the_timeline_has_a_row_per_sample_with_null_wait_while_nobody_serves() -> None:
    t = state(rps=((0.0, 5.0),))
    t.advance(0.0, 0, 0.0)
    t.sample(0.0)
    t.sample(10.0)
    t.advance(10.0, 1, 1.0)
    t.sample(20.0)
    assert t.timeline == [
        [0.0, 5.0, 0.0, None, 0.0, None],
        [10.0, 5.0, 50.0, None, 0.0, None],
        [20.0, 5.0, 0.0, 0.0, 1.0, 50.0],  # 50 waiting drained at 5/s net within the 10 s
    ]


def test_the_mean_gpu_util_weighs_each_traffic_by_its_gpu_seconds() -> None:
    busy, idle = state(rps=((0.0, 10.0),)), state(rps=((0.0, 0.0),))
    busy.advance(0.0, 1, 1.0)
    busy.advance(100.0, 1, 1.0)
    idle.advance(0.0, 3, 3.0)
    idle.advance(100.0, 3, 3.0)
    assert mean_gpu_util_pct([busy, idle]) == 25.0  # 100 % of 1 GPU, 0 % of 3
    assert mean_gpu_util_pct([]) is None
