"""A Job's ``spec.podReplacementPolicy`` and ``status.terminating`` (``pkg/controller/job/job_controller.go``
v1.34.10: ``onlyReplaceFailedPods``, ``isPodFailed``, ``manageJob``'s ``wantActive - terminating - active``,
``controller.CountTerminatingPods``; the default, ``pkg/apis/batch/v1/defaults.go``: ``Failed`` with a
``podFailurePolicy``, else ``TerminatingOrFailed``; ``validatePodReplacementPolicy``; integration tests
``TestJobPodReplacementPolicy`` and ``TestJobPodReplacementPolicyFeatureToggling``).

``TerminatingOrFailed``: a pod being deleted counts as failed as soon as its ``deletionTimestamp`` is set
and is replaced (after the pod failure backoff) while it still terminates; ``Failed``: it is counted and
replaced only once it reached the Failed phase. Either way it is ``terminating`` until it ends, and a
finished Job's terminal condition waits for it (``delayTerminalCondition``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_job_failures import run, scenario

from gpufleet.model.pod import Pod
from gpufleet.model.pod_failure_policy import OnPodCondition, PodFailurePolicy, PodFailurePolicyRule
from gpufleet.model.workloads import REPLACE_FAILED, REPLACE_TERMINATING_OR_FAILED, Job
from gpufleet.workloads.job import JobController

COUNT_DISRUPTION = PodFailurePolicy(
    (PodFailurePolicyRule("Count", on_pod_conditions=(OnPodCondition("DisruptionTarget"),)),)
)


def job(
    policy: str | None = None, failure_policy: PodFailurePolicy | None = None, backoff_limit: int = 6
) -> tuple[JobController, list[Pod]]:
    """A Job of 2 pods (parallelism and completions 2) with ``podReplacementPolicy`` ``policy`` and its
    ``podFailurePolicy``, and the pods it created."""
    spec = Job(
        "j",
        "default",
        Pod("", requests={}),
        2,
        2,
        backoff_limit,
        pod_failure_policy=failure_policy,
        pod_replacement_policy=policy,
    )
    controller = JobController(spec)
    return controller, controller.wanted()


def counts(active: int, failed: int, terminating: int) -> dict[str, int]:
    return {"active": active, "succeeded": 0, "failed": failed, "terminating": terminating}


@pytest.mark.parametrize("policy", [None, REPLACE_TERMINATING_OR_FAILED])
def test_terminating_or_failed_counts_a_terminating_pod_failed_and_replaces_it_while_it_terminates(
    policy: str | None,
) -> None:
    """``isPodFailed``: without ``onlyReplaceFailedPods`` a deleted pod not Succeeded is failed; ``manageJob``
    creates ``wantActive - active`` (the terminating pod is not active): its replacement comes after the pod
    failure backoff (10 s), while it still terminates; once it ended it is not counted again."""
    controller, (first, _) = job(policy)
    assert controller.pod_terminating(first)
    assert controller.status_counts() == counts(active=1, failed=1, terminating=1)
    controller.tick(10.0)
    assert [p.name for p in controller.wanted()] == ["j-0-r1"]
    assert controller.finished(first, succeeded=False)
    assert controller.status_counts() == counts(active=2, failed=1, terminating=0)
    assert controller.wanted() == []


@pytest.mark.parametrize(
    ("policy", "failure_policy"),
    [(REPLACE_FAILED, None), (None, COUNT_DISRUPTION), (REPLACE_FAILED, COUNT_DISRUPTION)],
)
def test_failed_holds_the_replacement_until_the_terminating_pod_is_failed(
    policy: str | None, failure_policy: PodFailurePolicy | None
) -> None:
    """``onlyReplaceFailedPods`` (``Failed``, the default with a ``podFailurePolicy``): the terminating pod is
    neither counted nor replaced (``wantActive - terminating - active`` is 0) until it ended Failed."""
    controller, (first, _) = job(policy, failure_policy)
    assert not controller.pod_terminating(first)
    assert controller.status_counts() == counts(active=1, failed=0, terminating=1)
    assert controller.wanted() == []
    controller.failed_with(first, "Preempted")
    assert controller.finished(first, succeeded=False)
    assert controller.status_counts() == counts(active=1, failed=1, terminating=0)
    controller.tick(10.0)  # after the pod failure backoff
    assert [p.name for p in controller.wanted()] == ["j-0-r1"]


def test_a_failed_jobs_terminal_condition_waits_for_its_terminating_pods() -> None:
    """``delayTerminalCondition``: the Job whose terminating pod passed ``backoffLimit`` 0 has
    ``FailureTarget`` while its pods terminate (the one deleted, the one it deletes: ``deleteActivePods``),
    ``Failed`` once none is left; each counted once."""
    controller, (first, second) = job(backoff_limit=0)
    controller.pod_terminating(first)
    assert controller.failure is not None and controller.failure[0] == "BackoffLimitExceeded"
    assert controller.doomed() == [(second.key, "Deleted")]
    controller.pod_terminating(second)
    assert [c.type for c in controller.status_conditions()] == ["FailureTarget"]
    assert controller.status_counts() == counts(active=0, failed=2, terminating=2)
    for pod in (first, second):
        controller.finished(pod, succeeded=False)
    assert [c.type for c in controller.status_conditions()] == ["FailureTarget", "Failed"]
    assert controller.status_counts() == counts(active=0, failed=2, terminating=0)


def test_a_pod_kueue_evicts_is_terminating_and_not_counted() -> None:
    """Kueue's eviction suspends the Job (``deleteJobPods`` removes the tracking finalizer first): the pod
    is terminating, not failed, whatever the policy, and its index is created again once it is gone."""
    controller, (first, _) = job(REPLACE_TERMINATING_OR_FAILED)
    assert not controller.pod_terminating(first, suspended=True)
    assert controller.status_counts() == counts(active=1, failed=0, terminating=1)
    controller.suspended(first)
    assert controller.status_counts() == counts(active=1, failed=0, terminating=0)
    assert [p.name for p in controller.wanted()] == ["j-0-r1"]


def test_a_preempted_pod_is_replaced_as_it_begins_terminating_by_default(tmp_path: Path) -> None:
    """The urgent Job preempts ``batch-0`` at 60 s (its grace period ends at 90 s): without a
    ``podFailurePolicy`` it counts failed then and its replacement comes after the pod failure backoff, at
    70 s, while it still terminates."""
    pods, batch = run(scenario(tmp_path, ""))
    assert pods["batch-0"]["reason"] == "Preempted" and pods["batch-0"]["deleted_s"] == 90.0
    assert pods["batch-0-r1"]["created_s"] == 70.0
    assert batch.failed == 1


def test_a_preempted_pod_is_replaced_once_failed_under_the_failed_policy(tmp_path: Path) -> None:
    """``podReplacementPolicy: Failed``: the replacement waits for the preempted pod to end (90 s), then the
    pod failure backoff (100 s)."""
    pods, batch = run(scenario(tmp_path, "\n  podReplacementPolicy: Failed"))
    assert pods["batch-0"]["deleted_s"] == 90.0
    assert pods["batch-0-r1"]["created_s"] == 100.0
    assert batch.failed == 1
