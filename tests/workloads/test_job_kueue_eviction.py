"""A Job Kueue evicts does not count the pods its suspension deletes (``pkg/controller/job``, Kubernetes
v1.34): Kueue's ``Job.Stop`` sets ``spec.suspend`` and ``manageJob`` deletes the active pods with
``deleteJobPods``, which removes each pod's ``batch.kubernetes.io/job-tracking`` finalizer before deleting it;
``trackJobStatusAndRemoveFinalizers`` skips a pod without the finalizer, so a deleted pod counts neither in
``status.failed`` nor toward ``backoffLimit`` (``exceedsBackoffLimit``), ``backoffLimitPerIndex``
(``isIndexFailed``) or a ``podFailurePolicy`` rule, and records no pod failure backoff. The integration test
``TestSuspendJob`` (``test/integration/job/job_test.go``) checks it: suspended, a Job of 2 active pods has 0
active, 0 failed, 0 terminating.

A ClusterQueue of 1 GPU that preempts within itself (``LowerPriority``); ``low`` (1 GPU, 1 h) from 0 s, the
urgent Jobs (1 GPU, 10 min) from 10 min and 30 min: ``low`` is evicted at 600 s (its pod gone at 630 s, after
its 30 s grace period), admitted again at 1230 s, evicted again at 1800 s (gone at 1830 s), admitted again at
2430 s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import a10_nodes, kueue_queues, pods_by_name, queued_job, simulated, write
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import Job
from gpufleet.workloads.job import JobController

PREEMPTING = "  preemption: {withinClusterQueue: LowerPriority}\n"
URGENT = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 1000
"""
FAIL_ON_137 = """  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {operator: In, values: [137]}
"""


def preempted(tmp_path: Path, spec: str) -> dict[str, Any]:
    """``low`` (``spec``: more lines of its spec) preempted at 600 s and at 1800 s, simulated:
    ``summary.json``."""
    urgent = ", kueue.x-k8s.io/priority-class: urgent"
    texts = [
        a10_nodes(1),
        kueue_queues("default", 1, "queue", "default", queue_spec=PREEMPTING),
        URGENT,
        queued_job("low", "0s", 1, spec=spec),
        queued_job("urgent-a", "10m", 1, urgent, "gpufleet.io/duration: 10m"),
        queued_job("urgent-b", "30m", 1, urgent, "gpufleet.io/duration: 10m"),
    ]
    return simulated(write(tmp_path, *texts))


def conditions(status: dict[str, Any]) -> list[tuple[str, str, float]]:
    return [(c["type"], c["reason"], c["time_s"]) for c in status["conditions"]]


def test_evictions_never_fail_a_job_by_its_backoff_limit_and_leave_status_failed_0(tmp_path: Path) -> None:
    """``deleteJobPods``: ``backoffLimit: 0``, evicted twice, the Job's deleted pods count nothing; each
    index is created again at once (no pod failure backoff: when the pod is gone) and the third pod
    succeeds."""
    summary = preempted(tmp_path, "  backoffLimit: 0\n")
    pods = pods_by_name(summary)
    assert [(p["reason"], p["created_s"], p["finished_s"]) for p in (pods["low-0"], pods["low-0-r1"])] == [
        ("Suspended", 0.0, 630.0),
        ("Suspended", 630.0, 1830.0),
    ]
    assert (pods["low-0-r2"]["created_s"], pods["low-0-r2"]["phase"]) == (1830.0, "Succeeded")
    status = summary["workload_status"]["Job/default/low"]
    assert [c[0] for c in conditions(status)] == ["SuccessCriteriaMet", "Complete"]
    assert (status["failed"], status["succeeded"], status["active"]) == (0, 1, 0)


def test_an_evicted_pod_is_not_matched_by_a_pod_failure_policy(tmp_path: Path) -> None:
    """``deleteJobPods``: the evicted pod's container is killed after its grace period (137), but the pod,
    its finalizer removed, is not counted, so the ``FailJob`` rule on 137 never reads it."""
    summary = preempted(tmp_path, FAIL_ON_137)
    status = summary["workload_status"]["Job/default/low"]
    assert [c[0] for c in conditions(status)] == ["SuccessCriteriaMet", "Complete"]
    assert status["failed"] == 0
    assert pods_by_name(summary)["low-0-r2"]["phase"] == "Succeeded"


def test_an_evicted_pod_does_not_fail_its_index_under_backoff_limit_per_index_0(tmp_path: Path) -> None:
    """``deleteJobPods``: the deleted pod is not counted toward its index (``isIndexFailed``): with
    ``backoffLimitPerIndex: 0`` index 0 does not fail and its third pod succeeds."""
    spec = "  completionMode: Indexed\n  completions: 1\n  backoffLimitPerIndex: 0\n"
    summary = preempted(tmp_path, spec)
    status = summary["workload_status"]["Job/default/low"]
    assert [c[0] for c in conditions(status)] == ["SuccessCriteriaMet", "Complete"]
    assert (status["failed"], status["failedIndexes"]) == (0, "")
    assert pods_by_name(summary)["low-0-r2"]["phase"] == "Succeeded"


def test_an_evicted_pods_container_restarts_no_longer_count_toward_past_backoff_limit_on_failure() -> None:
    """``pastBackoffLimitOnFailure`` sums the restarts of the Job's active pods only: under ``restartPolicy:
    OnFailure`` with ``backoffLimit: 2``, the pod Kueue evicted after one restart is gone, so one restart of
    its replacement (``-r1``) is 1, not 2: the Job does not fail."""
    controller = JobController(Job("low", "default", Pod("", restart_policy="OnFailure"), 1, 1, 2))
    (first,) = controller.wanted()
    controller.restarted(first)
    controller.suspended(first)
    (again,) = controller.wanted()
    controller.restarted(again)
    assert (again.name, controller.failure, controller.failed) == ("low-0-r1", None, 0)


def test_kueues_workload_goes_with_its_job_when_its_ttl_expires(tmp_path: Path) -> None:
    """``ttlSecondsAfterFinished`` (the TTL-after-finished controller deletes the Job, foreground): Kueue's
    Workload, which the Job owns, goes with it; ``summary.json`` says when, for both."""
    texts = [
        a10_nodes(1),
        kueue_queues("default", 1, "queue", "default"),
        queued_job(
            "short", "0s", 1, annotations="gpufleet.io/duration: 10m", spec="  ttlSecondsAfterFinished: 30\n"
        ),
    ]
    out = simulated(write(tmp_path, *texts))
    status = out["workload_status"]["Job/default/short"]
    assert (status["completion_time_s"], status["deleted_s"]) == (600.0, 630.0)
    (workload,) = out["kueue"]["workloads"]
    assert (workload["finished_s"], workload["deleted_s"]) == (600.0, 630.0)
