"""A snapshot's Job carries its pod failure backoff over from its failed pods' finish times
(``pkg/controller/job`` v1.34.10): the record its controller's store holds (``newBackoffRecord``: the
failures after the last success, the last one's ``getFinishedTime``: its containers'
``state.terminated.finishedAt``, else its ``Ready=False`` condition's ``lastTransitionTime``, else
``deletionTimestamp`` less ``deletionGracePeriodSeconds``, else its ``creationTimestamp``) holds its next pod
back until ``getRemainingTime`` has passed (``manageJob``): 10 s doubling per failure, counted on the run's
clock (time 0: the Simulation's ``spec.startTime``). With ``backoffLimitPerIndex`` each index waits its own
backoff from its last failed pod (``getPodsWithDelayedDeletionPerIndex``, ``getRemainingTimePerIndex``),
which stays uncounted until its replacement is created, while the other indexes run. A finish time that is
no RFC 3339 time is an error."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_adoption import JOB_POD, dump, job, node, pod

from conftest import pods_by_name, run_simulation
from gpufleet.kube import load_scenario
from gpufleet.kube.problems import ScenarioError
from gpufleet.model.failed_indexes import INDEX_FAILURE_COUNT
from gpufleet.model.owned import JOB_COMPLETION_INDEX
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.job import JobController

START = "2026-01-01T00:00:00Z"  # the run's time 0
TRACKING = ("batch.kubernetes.io/job-tracking",)


def at(seconds: int) -> str:
    """The time ``seconds`` (negative: before) from the run's start, as RFC 3339."""
    return (datetime.fromisoformat(START) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def simulation(start: str | None = START) -> dict[str, Any]:
    spec: dict[str, Any] = {"duration": "1h"}
    if start is not None:
        spec["startTime"] = start
    return {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "Simulation",
        "metadata": {"name": "s"},
        "spec": spec,
    }


def ended(
    name: str,
    phase: str = "Failed",
    finished: int | None = None,
    ready_false: int | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The Job's pod ``name`` that ended (``phase``), its tracking finalizer kept (not yet counted), its
    container terminated at ``finished`` (seconds from the start; None: no ``finishedAt``), its ``Ready``
    condition ``False`` since ``ready_false`` where given."""
    body = pod(name, JOB_POD, phase=phase, finalizers=TRACKING, restart="Never", annotations=annotations)
    terminated: dict[str, Any] = {"exitCode": 0 if phase == "Succeeded" else 1}
    if finished is not None:
        terminated["finishedAt"] = at(finished)
    status = {"name": "c", "image": "i", "imageID": "", "ready": False, "restartCount": 0}
    body["status"]["containerStatuses"] = [{**status, "state": {"terminated": terminated}}]
    if ready_false is not None:
        condition = {"type": "Ready", "status": "False", "lastTransitionTime": at(ready_false)}
        body["status"]["conditions"] = [condition]
    return body


def created(tmp_path: Path, *objects: dict[str, Any], start: str | None = START) -> dict[str, float]:
    """Each pod the run created (not the snapshot's), by name: when."""
    sim = run_simulation(dump(tmp_path, node("gpu-0"), *objects, simulation(start)))
    snapshot = {o["metadata"]["name"] for o in objects if o["kind"] == "Pod"}
    return {
        name: p["created_s"] for name, p in pods_by_name(build_summary(sim)).items() if name not in snapshot
    }


def test_a_pod_failed_4_s_before_the_snapshot_is_replaced_6_s_in(tmp_path: Path) -> None:
    """One failure, its container's ``finishedAt`` 4 s before the run: the 10 s backoff leaves 6 s."""
    got = created(tmp_path, job(1, 1), ended("train-aaaaa", finished=-4))
    assert got == {"train-0": 6.0}


def test_two_failures_since_the_last_success_back_off_20_s_from_the_last(tmp_path: Path) -> None:
    """Two failures (30 s and 4 s before the run) after the last success (40 s before): 10 s doubled once,
    20 s from the last failure: its replacement comes 16 s in."""
    got = created(
        tmp_path,
        job(1, 3),
        ended("train-sssss", "Succeeded", finished=-40),
        ended("train-aaaaa", finished=-30),
        ended("train-bbbbb", finished=-4),
    )
    assert got == {"train-0": 16.0}


def test_a_success_after_the_failures_ends_the_backoff(tmp_path: Path) -> None:
    """A pod that succeeded after the last failure (``newBackoffRecord``: only the failures after the last
    success count): none left, the next pod comes at once."""
    got = created(
        tmp_path,
        job(1, 3),
        ended("train-aaaaa", finished=-4),
        ended("train-sssss", "Succeeded", finished=-2),
    )
    assert got["train-0"] == 0.0


def test_without_finished_at_the_ready_false_transition_is_the_finish_time(tmp_path: Path) -> None:
    """No ``finishedAt`` (``getFinishedTime``'s fallback): the ``Ready=False`` condition's
    ``lastTransitionTime``, 4 s before the run: replaced 6 s in."""
    got = created(tmp_path, job(1, 1), ended("train-aaaaa", ready_false=-4))
    assert got == {"train-0": 6.0}


def test_without_any_finish_time_the_failure_is_long_past(tmp_path: Path) -> None:
    """Neither ``finishedAt``, ``Ready=False``, ``deletionTimestamp`` nor ``creationTimestamp``: upstream's
    zero time, long before, so no backoff is left: replaced at once."""
    got = created(tmp_path, job(1, 1), ended("train-aaaaa"))
    assert got == {"train-0": 0.0}


def test_the_creation_timestamp_is_the_last_fallback(tmp_path: Path) -> None:
    """No ``finishedAt`` nor ``Ready=False`` nor deletion: its ``creationTimestamp`` (2 s before) counts as
    its finish time: replaced 8 s in."""
    failed = ended("train-aaaaa")
    failed["metadata"]["creationTimestamp"] = at(-2)
    assert created(tmp_path, job(1, 1), failed) == {"train-0": 8.0}


def test_without_the_runs_time_0_no_backoff_is_carried_over(tmp_path: Path) -> None:
    """Without ``spec.startTime`` and no Node time, the run has no time 0 to put the finish time on: the
    replacement comes at once."""
    got = created(tmp_path, job(1, 1), ended("train-aaaaa", finished=-4), start=None)
    assert got == {"train-0": 0.0}


def per_index_job() -> dict[str, Any]:
    body = job(2, 2, mode="Indexed")
    body["spec"]["backoffLimitPerIndex"] = 1
    return body


def indexed(index: int, count: int) -> dict[str, str]:
    return {JOB_COMPLETION_INDEX: str(index), INDEX_FAILURE_COUNT: str(count)}


def test_an_index_backs_off_from_its_last_failed_pod_while_another_index_runs(tmp_path: Path) -> None:
    """``backoffLimitPerIndex``: index 1's pod failed 4 s before the run while index 0 runs; index 1 is
    created again 6 s in (``getRemainingTimePerIndex``), with its failure count 1."""
    running = pod("train-0-xxxxx", JOB_POD, finalizers=TRACKING, restart="Never", annotations=indexed(0, 0))
    failed = ended("train-1-yyyyy", finished=-4, annotations=indexed(1, 0))
    paths = dump(tmp_path, node("gpu-0"), per_index_job(), running, failed, simulation())
    sim = run_simulation(paths)
    pods = pods_by_name(build_summary(sim))
    new = {name: p["created_s"] for name, p in pods.items() if name not in ("train-0-xxxxx", "train-1-yyyyy")}
    assert new == {"train-1-r1": 6.0}
    controller = sim.controllers["Job/ml/train"]
    assert isinstance(controller, JobController)
    assert controller.failed == 1


def test_an_index_in_backoff_keeps_its_failed_pod_uncounted_until_the_sync_after_its_replacement(
    tmp_path: Path,
) -> None:
    """``getPodsWithDelayedDeletionPerIndex``: the index's last failed pod is not counted while its
    replacement waits (``status.failed`` 0, nothing created, held 6 s); once the backoff ends the index is
    created, its ``job-index-failure-count`` 1 (``getNewIndexFailureCounts``), and the failed pod counts at
    the next sync (``SyncJobBatchPeriod`` later: the index is active, the pod no longer held)."""
    running = pod("train-0-xxxxx", JOB_POD, finalizers=TRACKING, restart="Never", annotations=indexed(0, 0))
    failed = ended("train-1-yyyyy", finished=-4, annotations=indexed(1, 0))
    scenario = load_scenario(dump(tmp_path, node("gpu-0"), per_index_job(), running, failed, simulation()))
    (workload,) = scenario.jobs
    controller = JobController(workload)
    owned = scenario.owned["Job/ml/train"]
    owned.adopted_unix = scenario.simulation.start_time_s
    controller.adopt(owned)
    assert (controller.failed, controller.wanted(), controller.held_s()) == (0, [], [6.0])
    controller.release_held(6.0)
    (replacement,) = controller.wanted()
    assert (controller.failed, controller.sync_again_s()) == (0, 1.0)
    controller.next_sync()
    assert controller.failed == 1
    assert replacement.annotations[INDEX_FAILURE_COUNT] == "1"
    assert replacement.annotations[JOB_COMPLETION_INDEX] == "1"


def test_a_finish_time_that_is_no_time_is_an_error(tmp_path: Path) -> None:
    """A ``finishedAt`` that is no RFC 3339 time: an error at its field, as a Node's times are."""
    failed = ended("train-aaaaa", finished=-4)
    failed["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"] = "yesterday"
    with pytest.raises(ScenarioError, match=r"status\.containerStatuses\[0\]\.state\.terminated\.finishedAt"):
        load_scenario(dump(tmp_path, node("gpu-0"), job(1, 1), failed, simulation()))


def test_the_snapshots_failures_count_on_in_the_run(tmp_path: Path) -> None:
    """The record carried over keeps counting (``newBackoffRecord`` on the store's record): a pod failed 100 s
    before the run (its backoff over: created at once), its replacement fails in the run: two failures since
    the last success, 20 s before the next pod."""
    failed = ended("train-aaaaa", finished=-100)
    scenario = load_scenario(dump(tmp_path, node("gpu-0"), job(1, 1), failed, simulation()))
    (workload,) = scenario.jobs
    controller = JobController(workload)
    owned = scenario.owned["Job/ml/train"]
    owned.adopted_unix = scenario.simulation.start_time_s
    controller.adopt(owned)
    assert controller.held_s() == []
    (replacement,) = controller.wanted()
    assert controller.finished(replacement, succeeded=False)
    assert controller.retry_delay_s() == 20.0


def test_a_pod_failing_during_an_adopted_hold_waits_its_own_index_backoff(tmp_path: Path) -> None:
    """``getPodCreationInfoForIndependentIndexes``: index 1's pod failed 4 s before the run (held 6 s, from
    the snapshot); index 0's running pod fails 2 s in (its process exits 1): index 0 waits its own 10 s
    (``getRemainingTimePerIndex``), created 12 s in, not with index 1 as its hold ends at 6 s."""
    crash = indexed(0, 0) | {"gpufleet.io/duration": "2s", "gpufleet.io/exit-code": "1"}
    running = pod("train-0-xxxxx", JOB_POD, finalizers=TRACKING, restart="Never", annotations=crash)
    failed = ended("train-1-yyyyy", finished=-4, annotations=indexed(1, 0))
    got = created(tmp_path, per_index_job(), running, failed)
    assert got == {"train-1-r1": 6.0, "train-0-r1": 12.0}


def test_a_job_wide_backoff_holds_a_replacement_until_the_last_failures_backoff_ends(tmp_path: Path) -> None:
    """``manageJob``'s ``getRemainingTime`` holds every creation of the Job: a pod failed 4 s before the run
    (held 6 s); the running pod fails 2 s in: two failures since the last success, 20 s from the last (2 s),
    so both replacements come 22 s in, none as the adopted hold ends."""
    crash = {"gpufleet.io/duration": "2s", "gpufleet.io/exit-code": "1"}
    running = pod("train-xxxxx", JOB_POD, finalizers=TRACKING, restart="Never", annotations=crash)
    got = created(tmp_path, job(2, 4), running, ended("train-aaaaa", finished=-4))
    assert got == {"train-0-r1": 22.0, "train-1": 22.0}  # (the running pod held index 0)
