"""gpufleet's Job controller held against kube-controller-manager's (the control plane of ``e2e/``,
Kubernetes 1.34.10, its pods played by kwok): backoffLimit, podFailurePolicy's actions on exit codes,
backoffLimitPerIndex and maxFailedIndexes, successPolicy, completions and parallelism, suspend and
resume; see ``e2e/fidelity/job_cases.py`` for the cases and ``e2e/fidelity/job_run.py`` for both sides.

The cases run side by side on the session's control plane (about 30 s in all, the longest case's pod
failure backoffs); without a control plane the tests that need one are skipped (under ``CI=true`` they
fail, as every control-plane test does). What is compared is how each Job ended, not when.
"""

from __future__ import annotations

import pytest
from e2e.controlplane import ControlPlane
from e2e.fidelity.job_cases import JOB_CASES, JobCase
from e2e.fidelity.job_run import JobResult, run_gpufleet, run_job_cases

CASES = {c.name: c for c in JOB_CASES}


@pytest.fixture(scope="module")
def results(control_plane: ControlPlane) -> dict[str, JobResult]:
    return {r.name: r for r in run_job_cases(control_plane, JOB_CASES)}


@pytest.mark.parametrize("case", JOB_CASES, ids=lambda c: c.name)
def test_gpufleet_ends_each_case_as_upstreams_rules_say(case: JobCase) -> None:
    """No control plane needed: gpufleet's simulator on its own, without a warning that it does not model
    part of the case."""
    outcome, warnings = run_gpufleet(case)
    assert not warnings
    assert outcome == case.expected, case.note


@pytest.mark.parametrize("name", list(CASES))
def test_the_real_job_controller_ends_each_case_as_upstreams_rules_say(
    results: dict[str, JobResult], name: str
) -> None:
    """The case shows on the real side what it was written for (kwok's Stages and the harness work)."""
    result = results[name]
    assert not result.error, result.error
    assert result.real == CASES[name].expected, CASES[name].note


@pytest.mark.parametrize("name", list(CASES))
def test_gpufleet_ends_each_job_as_the_real_job_controller_does(
    results: dict[str, JobResult], name: str
) -> None:
    result = results[name]
    assert not result.error, result.error
    assert result.gpufleet == result.real, (
        f"{CASES[name].note}\n  real {result.real}\n  gpufleet {result.gpufleet}"
    )


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
