"""gpufleet's Job controller held against kube-controller-manager's (the control plane of ``e2e/``,
Kubernetes 1.34.10, its pods played by kwok): backoffLimit and the pod failure backoff, podFailurePolicy's
actions on exit codes and pod conditions, backoffLimitPerIndex and maxFailedIndexes, successPolicy,
completions and parallelism, suspend and resume with activeDeadlineSeconds, restartPolicy OnFailure's
container restarts counted toward backoffLimit; see
``e2e/fidelity/job_cases.py`` for the cases and ``e2e/fidelity/job_run.py`` for both sides.

The cases run side by side on the session's control plane (about a minute in all with their nodes' start
and cleanup, the longest case's pod failure backoffs about 40 s of it); without a control plane the tests
that need one are skipped (under ``CI=true`` they fail, as every control-plane test does). What is compared
is how each Job ended and, for the cases that say so, when (each pod's creation and when its end was
decided, step by step, within ``e2e.fidelity.job_times.TOLERANCE_S``). A case whose ``differs`` names a
known disagreement of gpufleet's is expected to fail (strictly: once gpufleet is mended, the mark must go).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e.fidelity import report
from e2e.fidelity.job_cases import JOB_CASES, JobCase
from e2e.fidelity.job_report import JOB_CONTROLLER_NOT_RUN, job_summary
from e2e.fidelity.job_run import JobResult, run_gpufleet
from e2e.fidelity.job_times import TOLERANCE_S, Times, times_disagree

CASES = {c.name: c for c in JOB_CASES}


def _params(cases: list[JobCase]) -> list[object]:
    """The cases by name, each known disagreement (``JobCase.differs``) expected to fail."""
    return [
        pytest.param(c.name, id=c.name, marks=pytest.mark.xfail(strict=True, reason=c.differs))
        if c.differs
        else pytest.param(c.name, id=c.name)
        for c in cases
    ]


@pytest.fixture(scope="module")
def results(controller_sets: dict[str, dict[str, JobResult]]) -> dict[str, JobResult]:
    """This set's results, from the controller sets run at once (``controller_sets``)."""
    return controller_sets["jobs"]


def test_there_are_26_cases_each_run_in_a_namespace_of_its_own() -> None:
    assert len(CASES) == len(JOB_CASES) == 26
    assert len({c.namespace for c in JOB_CASES}) == 26


@pytest.mark.parametrize("name", _params(list(JOB_CASES)))
def test_gpufleet_ends_each_case_as_upstreams_rules_say(name: str) -> None:
    """No control plane needed: gpufleet's simulator on its own, without a warning that it does not model
    part of the case."""
    outcome, _, warnings = run_gpufleet(CASES[name])
    assert not warnings
    assert outcome == CASES[name].expected, CASES[name].note


def test_gpufleet_retries_a_failing_pod_after_10_then_20_seconds() -> None:
    """``backoffRecord.getRemainingTime``: 10 s after the first failure, doubled for each failure since the
    last success; the pods run 2 s, so they are created at 0, 12 and 34 s and the Job fails at 36 s."""
    _, times, _ = run_gpufleet(CASES["backoff-doubling"])
    assert times == Times((0.0, 12.0, 34.0), 36.0)


def test_gpufleet_counts_a_deadline_from_the_latest_resume() -> None:
    """``syncJob`` resets ``status.startTime`` on resume: suspended at 2 s and resumed at 8 s, the Job of
    ``activeDeadlineSeconds`` 20 fails at 28 s, its second pod created at the resume."""
    _, times, _ = run_gpufleet(CASES["resume-resets-deadline"])
    assert times == Times((0.0, 8.0), 28.0)


def test_gpufleet_counts_a_container_restart_as_the_new_container_starts() -> None:
    """``pastBackoffLimitOnFailure`` reads ``restartCount``, which the runtime raises as it creates the next
    container (``startContainer``), not as the last one exits: the pod's container exits at 2 s (restarted at
    once: 1) and at 4 s, and its second restart waits the kubelet's 10 s back-off, so ``backoffLimit`` 2 is
    reached at 14 s, not at 4 s."""
    _, times, _ = run_gpufleet(CASES["on-failure-restart-count"])
    assert times == Times((0.0,), 14.0)


def test_times_are_compared_step_by_step_a_backoff_doubling_apart_disagrees() -> None:
    """Each step (the time since the event before) within ``TOLERANCE_S``: a real side 4 s late from its
    first pod on agrees; a retry that waited 40 s rather than 20 s does not, and only that step is told."""
    gpufleet = Times((0.0, 12.0, 34.0), 36.0)
    assert times_disagree(Times((4.0, 16.5, 38.1), 41.2), gpufleet) == ""
    assert times_disagree(Times((0.3, 12.9, 55.1), 57.2), gpufleet) == (
        "pod 2 created at 55.10 s (42.20 s after the event before), gpufleet 34.00 s (22.00 s)"
    )
    assert times_disagree(Times((0.0,), None), Times((0.0,), 2.0)) == "end decided at None s, gpufleet 2.0 s"
    assert times_disagree(Times((TOLERANCE_S + 0.01,), 7.0), Times((0.0,), 2.0)).startswith("pod 0")


@pytest.mark.parametrize("name", list(CASES))
def test_the_real_job_controller_ends_each_case_as_upstreams_rules_say(
    results: dict[str, JobResult], name: str
) -> None:
    """The case shows on the real side what it was written for (kwok's Stages and the harness work)."""
    result = results[name]
    assert not result.error, result.error
    assert result.real == CASES[name].expected, CASES[name].note


@pytest.mark.parametrize("name", _params(list(JOB_CASES)))
def test_gpufleet_ends_each_job_as_the_real_job_controller_does(
    results: dict[str, JobResult], name: str
) -> None:
    result = results[name]
    assert not result.error, result.error
    assert result.gpufleet == result.real, (
        f"{CASES[name].note}\n  real {result.real}\n  gpufleet {result.gpufleet}"
    )


@pytest.mark.parametrize("name", _params([c for c in JOB_CASES if not c.untimed]))
def test_gpufleet_creates_each_pod_and_finishes_each_job_when_the_real_job_controller_does(
    results: dict[str, JobResult], name: str
) -> None:
    """Each pod's creation and the Job's finish, in seconds after the Job's creation, within
    ``TOLERANCE_S`` (``e2e.fidelity.job_times``)."""
    result = results[name]
    assert not result.error, result.error
    assert result.real_times is not None
    assert not result.times_why(True), f"{CASES[name].note}\n  {result.times_why(True)}"


def test_the_report_has_a_job_controller_section_with_every_case(
    results: dict[str, JobResult], tmp_path: Path
) -> None:
    ordered = [results[c.name] for c in JOB_CASES]
    summary = report.write([], tmp_path, 0.0, 0.0, jobs=job_summary(ordered, 42.0))
    jobs = json.loads((tmp_path / "fidelity.json").read_text())["job_controller"]
    assert jobs == json.loads(json.dumps(summary["job_controller"]))
    assert jobs["status"].startswith("run: kube-controller-manager v1.34.10's Job controller")
    assert jobs["cases_compared"] == 26 and jobs["cases_failed"] == 0
    assert jobs["times_compared"] == sum(1 for c in JOB_CASES if not c.untimed)
    differing = {c.name for c in JOB_CASES if c.differs}
    assert {c["name"] for c in jobs["cases"] if not c["agrees"]} == differing
    assert jobs["cases_agreeing"] == 26 - len(differing)
    row = next(c for c in jobs["cases"] if c["name"] == "backoff-doubling")
    assert row["kube_controller_manager"]["condition"] == "Failed/BackoffLimitExceeded"
    assert row["gpufleet"]["pods_created_s"] == [0.0, 12.0, 34.0] and row["gpufleet"]["finished_s"] == 36.0
    text = (tmp_path / "fidelity.md").read_text()
    assert "## Job controller (kube-controller-manager)" in text
    assert f"**{26 - len(differing)} of 26 cases agree**" in text
    assert "| backoff-doubling | the pod failure backoff doubles" in text


def test_a_report_without_the_job_cases_says_they_did_not_run(tmp_path: Path) -> None:
    report.write([], tmp_path, 0.0, 0.0)
    jobs = json.loads((tmp_path / "fidelity.json").read_text())["job_controller"]
    assert jobs == {"cases_compared": 0, "cases_agreeing": 0, "status": JOB_CONTROLLER_NOT_RUN}
    assert f"{JOB_CONTROLLER_NOT_RUN}." in (tmp_path / "fidelity.md").read_text()


def test_kwok_fails_a_pod_with_its_exit_code_as_the_kubelet_reports_it(results: dict[str, JobResult]) -> None:
    """``gpufleet.io/exit-code: "42"``: phase Failed, the container terminated with exit code 42 (reason
    Error), Ready and ContainersReady False with reason PodFailed (``pkg/kubelet/status/generate.go``)."""
    (pod,) = results["fail-job"].real_pods
    status = pod["status"]
    assert status["phase"] == "Failed"
    (container,) = status["containerStatuses"]
    assert container["state"]["terminated"]["exitCode"] == 42
    assert container["state"]["terminated"]["reason"] == "Error"
    ready = {c["type"]: (c["status"], c.get("reason")) for c in status["conditions"]}
    assert ready["Ready"] == ready["ContainersReady"] == ("False", "PodFailed")


def test_a_pod_without_an_exit_code_still_succeeds_on_kwok(results: dict[str, JobResult]) -> None:
    pods = results["completions"].real_pods
    assert len(pods) == 3
    for pod in pods:
        assert pod["status"]["phase"] == "Succeeded"
        assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


def test_a_job_suspended_while_running_does_not_count_its_deleted_pod_failed(
    results: dict[str, JobResult],
) -> None:
    """``deleteJobPods`` removes the pod's tracking finalizer before it deletes it: the pod is not counted
    (the rule gpufleet's ``JobController.finished`` follows for a suspended Job); backoffLimit 0 would
    otherwise have failed the Job."""
    result = results["suspended-while-running"]
    assert result.real is not None and result.real.failed == 0 and result.real.pods == 2
    assert result.gpufleet.failed == 0
