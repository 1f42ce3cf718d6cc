"""What a long run keeps (``bench/month.py``'s bounded memory): nothing per event, and no more than it must
per Job. A Traffic's waits are kept per distinct wait, not per interval the fluid queue integrates (every
event advances it); the steps of the served requests only where ``cpu_rate`` reads them; a Job's
controller, kept for the run's report after its Job ends, holds its state in slots."""

from __future__ import annotations

from gpufleet.model.load import Traffic, TrafficUsage
from gpufleet.model.pod import Behavior, Pod
from gpufleet.model.workloads import Job
from gpufleet.sim.traffic import TrafficState
from gpufleet.workloads.job import JobController


def _under_capacity(usage: TrafficUsage | None = None) -> TrafficState:
    spec = Traffic("chat", "serving", "vllm", ((0.0, 15.0),), 10.0)
    if usage is not None:
        spec = Traffic("chat", "serving", "vllm", ((0.0, 15.0),), 10.0, usage=usage)
    state = TrafficState(spec)
    state.advance(0.0, 2, 2.0)
    return state


def test_a_traffic_that_never_queues_keeps_one_wait_however_many_events_advance_it() -> None:
    """1,000 events a second apart, 20 requests/s of capacity for 15 arriving: every request waited 0 s.
    The waits hold one entry (0 s: 15,000 requests), and the percentiles read them as before."""
    state = _under_capacity()
    for k in range(1, 1001):
        state.advance(float(k), 2, 2.0)
    assert state.waits == {0.0: 15_000.0}
    assert state.waited == 15_000.0
    assert state.percentile_wait(99) == 0.0


def test_a_backlog_that_times_out_keeps_one_entry_for_the_timeout() -> None:
    """Twice the capacity arrives with a 30 s timeout: the backlog reaches its bound (300 requests) 30 s in,
    each of those seconds' arrivals waiting a little longer (30 entries); then, for 570 s, each second's
    10 served waited the bound's 30 s and its 10 more timed out at 30 s: one entry for all 11,400. p99 is
    the timeout."""
    state = TrafficState(Traffic("chat", "serving", "vllm", ((0.0, 20.0),), 10.0, timeout_s=30.0))
    state.advance(0.0, 1, 1.0)
    for k in range(1, 601):
        state.advance(float(k), 1, 1.0)
    assert state.waits[30.0] == 570 * 20.0
    assert len(state.waits) == 31
    assert state.percentile_wait(99) == 30.0
    assert state.waited == sum(state.waits.values())


def test_the_served_steps_are_kept_only_where_the_traffic_models_cpu_usage() -> None:
    """``cpu_rate`` alone reads the steps of the served requests, and only for a Traffic whose ``usage``
    models cpu: without it, 1,000 events leave the first step alone; with it, one a step."""
    plain = _under_capacity()
    modelled = _under_capacity(TrafficUsage(cpu_per_request=0.01, idle_cpu=0.1))
    for k in range(1, 1001):
        plain.advance(float(k), 2, 2.0)
        modelled.advance(float(k), 2, 2.0)
    assert plain._served_steps == [(0.0, 0.0)]
    assert len(modelled._served_steps) == 1001
    assert plain.cpu_rate(60.0, 0.0, True) is None
    assert modelled.cpu_rate(60.0, 0.0, True) == 0.1 + 0.01 * 15 / 2


def test_a_finished_jobs_controller_keeps_no_dictionary_of_its_own() -> None:
    """A Job's controller lives to the run's end (its status is the report's); with more than 30 attributes
    it would not share CPython 3.11's keys and would keep a 1.5 KiB dictionary per Job: its state is in
    slots, and its ``__dict__`` is never made."""
    template = Pod("", restart_policy="Never", behavior=Behavior(duration_s=10.0))
    controller = JobController(Job("train", "research", template, 1, 1))
    pods = controller.wanted()
    assert [p.name for p in pods] == ["train-0"]
    controller.finished(pods[0], succeeded=True)
    assert controller.done and controller.succeeded == 1
    assert vars(controller) == {}
