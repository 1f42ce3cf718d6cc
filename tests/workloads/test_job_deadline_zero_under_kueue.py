"""A Job of ``activeDeadlineSeconds: 0`` under Kueue (``pkg/controller/job/job_controller.go`` v1.34.10):
Kueue's webhook creates it suspended, and a suspended Job has no pod (``manageJob``); Kueue's admission
unsuspends it (``RunWithPodSetsInfo``), the Job controller's ``syncJob`` sets ``status.startTime`` as it
resumes and checks ``pastActiveDeadline`` before ``manageJob``: the Job fails ``DeadlineExceeded`` with no
pod created, failed 0. gpufleet creates a held Job's pods gated so that Kueue sees the workload; those
stand-ins are dropped as Kueue admits it and never count. Kueue finishes the Workload on the Job's ``Failed``
condition (kueue v0.19.2 ``pkg/controller/jobs/job`` ``Job.Finished``), at the admission: its quota is
released then."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import NODE_N0, URGENT_JOB_AT_10M_IN_KUEUE, simulated_controller, write
from gpufleet.workloads.job import JobController
from gpufleet.workloads.jobset import JobSetController

SIMULATION = "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {duration: 1h}\n"
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")
JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  activeDeadlineSeconds: 0
  template:
    metadata: {annotations: {gpufleet.io/duration: 2h}}
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
"""
JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        parallelism: 1
        completions: 1
        activeDeadlineSeconds: 0
        template:
          metadata: {annotations: {gpufleet.io/duration: 2h}}
          spec:
            restartPolicy: Never
            containers:
            - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
"""


def workload(summary: dict[str, Any], key: str) -> dict[str, Any]:
    """Kueue's record of the workload ``key`` in ``summary.json``."""
    return next(w for w in summary["kueue"]["workloads"] if w["name"] == key)


def gpu_usage(summary: dict[str, Any]) -> list[list[float]]:
    """The ClusterQueue ``cq``'s GPU usage steps, ``[time, GPUs]``."""
    return summary["kueue"]["cluster_queues"]["cq"]["usage"]["default/nvidia.com/gpu"]["steps"]


def test_a_queued_job_of_deadline_0_fails_at_admission_with_no_pod_counted_failed_pastActiveDeadline(
    tmp_path: Path,
) -> None:
    """``syncJob``: resumed at its admission (0 s), the Job is past its deadline before ``manageJob``: failed
    0 (its gated pod, upstream none, is not counted), active 0, terminating 0, ``FailureTarget`` then
    ``Failed`` ``DeadlineExceeded`` at 0 s, ``startTime`` 0 s."""
    paths = write(tmp_path, NODE_N0, URGENT_JOB_AT_10M_IN_KUEUE, SIMULATION, JOB)
    pods, controller, summary = simulated_controller(paths, "Job/ml/batch", JobController)
    assert (pods["batch-0"]["phase"], pods["batch-0"]["reason"], pods["batch-0"]["node"]) == (
        "Pending",
        "Deleted",
        None,
    )
    assert controller.failure == DEADLINE_EXCEEDED
    status = summary["workload_status"]["Job/ml/batch"]
    counts = (status["active"], status["failed"], status["terminating"], status["start_time_s"])
    assert counts == (0, 0, 0, 0.0)
    assert [(c["type"], c["reason"], c["time_s"]) for c in status["conditions"]] == [
        ("FailureTarget", "DeadlineExceeded", 0.0),
        ("Failed", "DeadlineExceeded", 0.0),
    ]


def test_a_queued_job_of_deadline_0_releases_its_quota_at_admission_Job_Finished(tmp_path: Path) -> None:
    """kueue ``Job.Finished``: the Workload finishes on the Job's ``Failed`` condition, set at its admission
    (0 s): its 8 GPUs are released at once, so the urgent Job admitted at 600 s brings the usage to 8, not
    16."""
    paths = write(tmp_path, NODE_N0, URGENT_JOB_AT_10M_IN_KUEUE, SIMULATION, JOB)
    _, _, summary = simulated_controller(paths, "Job/ml/batch", JobController)
    batch = workload(summary, "Job/ml/batch")
    assert (batch["admissions"], batch["finished_s"]) == ([0.0], 0.0)
    assert gpu_usage(summary) == [[0.0, 0.0], [600.0, 8.0], [1200.0, 0.0]]


def test_a_queued_jobsets_job_of_deadline_0_fails_at_admission_with_no_pod_counted_failed(
    tmp_path: Path,
) -> None:
    """The JobSet's child Job, suspended with it until Kueue admits the JobSet (0 s), is past its deadline as
    it resumes (``syncJob``, ``pastActiveDeadline`` before ``manageJob``): ``DeadlineExceeded``, failed 0, no
    pod of its own (its gated one dropped uncounted); the JobSet fails (``FailedJobs``) at 0 s."""
    paths = write(tmp_path, NODE_N0, URGENT_JOB_AT_10M_IN_KUEUE, SIMULATION, JOBSET)
    pods, controller, _ = simulated_controller(paths, "JobSet/ml/train", JobSetController)
    (name,) = [n for n in pods if n.startswith("train-workers-0-0-")]
    assert (pods[name]["reason"], pods[name]["node"], pods[name]["deleted_s"]) == ("Deleted", None, 0.0)
    child = controller.children["train-workers-0"]
    assert (child.failure, child.failed, child.status_counts()["terminating"]) == (DEADLINE_EXCEEDED, 0, 0)
    assert (controller.finished_as, controller.message) == (
        "Failed",
        "jobset failed due to one or more job failures (first failed job: train-workers-0)",
    )
