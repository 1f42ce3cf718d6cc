"""What a long run keeps (``bench/month.py``'s bounded memory): nothing per event, and no more than it must
per Job. A Traffic's waits are kept per distinct wait, not per interval the fluid queue integrates (every
event advances it); the steps of the served requests only where ``cpu_rate`` reads them; a Job's
controller, kept for the run's report after its Job ends, holds its state in slots, makes its containers on
first write and lets go of its pods' state once it finished with none left; a pod's record makes what most
pods never have (a restart back-off, disruptions, back-offs, a node's start chain) only when it has it."""

from __future__ import annotations

from gpufleet.model.load import Traffic, TrafficUsage
from gpufleet.model.pod import Behavior, Pod
from gpufleet.model.workloads import Job
from gpufleet.sim.records import PodRecord
from gpufleet.sim.traffic import TrafficState
from gpufleet.workloads.job import JobController
from gpufleet.workloads.kind import StatusCondition

MUTABLE = (set, dict, list)


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


def _made_containers(controller: JobController) -> dict[str, object]:
    """The containers ``controller`` made and holds (sets, dictionaries, lists), by attribute."""
    slots = [name for cls in type(controller).__mro__ for name in getattr(cls, "__slots__", ())]
    values = {name: getattr(controller, name, None) for name in slots if name != "__dict__"}
    return {name: value for name, value in values.items() if isinstance(value, MUTABLE)}


def _job(name: str, completions: int = 1, indexed: bool = False) -> JobController:
    template = Pod("", restart_policy="Never", behavior=Behavior(duration_s=10.0))
    return JobController(Job(name, "research", template, completions, completions, indexed=indexed))


def test_a_new_jobs_controller_makes_none_of_its_containers() -> None:
    """Its sets, dictionaries and lists (adopted pods, pods being deleted, per-index backoffs...) read empty
    and are made on first write: a new controller holds none (1.5 KB a Job before)."""
    controller = _job("train")
    assert _made_containers(controller) == {}
    assert not controller.active and not controller.terminating and not controller.succeeded_indexes


def test_a_finished_job_without_pods_lets_go_of_its_pods_state_and_reports_as_before() -> None:
    """A Job whose pod failed once, then succeeded (``backoffLimit`` 6): finished with no pod left, it holds
    no container, and its status is what a user reads of it (``trackJobStatusAndRemoveFinalizers``: 1
    succeeded, 1 failed; ``enactJobFinished``: ``SuccessCriteriaMet`` then ``Complete``)."""
    controller = _job("train")
    first = controller.wanted()
    controller.failed_with(first[0], None)
    controller.finished(first[0], succeeded=False)
    controller.tick(60.0)  # past the 10 s pod failure backoff
    retry = controller.wanted()
    assert [p.name for p in retry] == ["train-0-r1"]
    assert _made_containers(controller)  # running: its active pod, its retry's attempts
    controller.finished(retry[0], succeeded=True)
    assert _made_containers(controller) == {}
    assert controller.status_counts() == {"active": 0, "succeeded": 1, "failed": 1, "terminating": 0}
    reason, message = "CompletionsReached", "Reached expected number of succeeded pods"
    assert controller.status_conditions() == [
        StatusCondition("SuccessCriteriaMet", reason, message),
        StatusCondition("Complete", reason, message),
    ]
    assert controller.wanted() == [] and controller.doomed() == []


def test_a_nonindexed_job_keeps_no_completion_indexes() -> None:
    """``trackJobStatusAndRemoveFinalizers`` and ``syncJob`` count succeeded indexes only for an Indexed Job
    (``isIndexed``, ``isIndexedJob``): a NonIndexed Job's succeeded pod adds none."""
    controller = _job("train")
    controller.finished(controller.wanted()[0], succeeded=True)
    assert controller.succeeded == 1 and not controller.succeeded_indexes


def test_an_indexed_job_keeps_its_completed_indexes_once_it_finished() -> None:
    """An Indexed Job's ``status.completedIndexes`` is read after it finished (``kind.ReportsStatus``): it is
    kept when the Job lets go of its pods' state."""
    controller = _job("ranks", completions=3, indexed=True)
    for pod in controller.wanted():
        controller.finished(pod, succeeded=True)
    assert controller.done and set(_made_containers(controller)) == {"succeeded_indexes"}
    assert controller.status_indexes() == {"completedIndexes": "0-2"}


def test_finished_jobs_share_one_record_of_no_failures() -> None:
    """After a success the pod failure backoff counts no failure (``newBackoffRecord``): every Job's record
    of it is one shared, immutable object."""
    jobs = [_job("a"), _job("b")]
    for controller in jobs:
        controller.finished(controller.wanted()[0], succeeded=True)
    assert jobs[0].backoff is jobs[1].backoff
    assert jobs[0].backoff.failures_after_last_success == 0


def test_a_pods_record_makes_no_restart_back_off_nor_empty_lists_it_never_fills() -> None:
    """A pod that never restarts, is never disrupted and had no node launched for it holds no restart
    back-off (the kubelet's ``doBackOff`` state, made at the first restart: ``restart_back_off``) and no
    container for disruptions, back-offs or a node's start chain (shared empty ones)."""
    records = [PodRecord(Pod(f"p-{k}"), "default-scheduler", 0.0) for k in range(2)]
    for rec in records:
        assert rec.back_off is None
        assert not isinstance(rec.disruptions, MUTABLE) and not rec.disruptions
        assert not isinstance(rec.back_offs, MUTABLE) and not rec.back_offs
        assert not isinstance(rec.node_stages, MUTABLE) and not rec.node_stages
    assert records[0].node_stages is records[1].node_stages
    back_off = records[0].restart_back_off()
    assert records[0].back_off is back_off and records[0].restart_back_off() is back_off
    assert back_off.wait_s(5.0) == 0.0  # the first restart waits nothing (``doBackOff``), the next 10 s
    assert back_off.wait_s(6.0) == 10.0
