"""A Job with ``spec.suspend: true`` that Kueue does not manage (``pkg/controller/job``, Kubernetes v1.34):
``manageJob`` creates none of its pods and deletes its active ones, ``syncJob`` sets no ``status.startTime``
while it is suspended and gives it the condition ``Suspended`` (reason ``JobSuspended``, message "Job
suspended"), ``pastActiveDeadline`` is false while it is suspended, and a pod it deleted is not counted once
gone: ``deleteJobPods`` removes its ``batch.kubernetes.io/job-tracking`` finalizer before deleting it and
``trackJobStatusAndRemoveFinalizers`` skips a pod without it (integration test ``TestSuspendJob``: 0 active,
0 failed, 0 terminating). A Job that finished deletes its pods with ``deleteActivePods``, which keeps the
finalizer: those count as failed. Nothing in a simulation resumes it; Kueue resumes a Job it manages when it
admits it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import NODE_N0, kueue_queues, pods_by_name, queued_job, simulated, write
from gpufleet.kube import load_scenario
from gpufleet.kube.explain import explain_scenario
from gpufleet.model.owned import Owned, OwnedPod
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import Job
from gpufleet.workloads.job import BACKOFF_LIMIT_EXCEEDED, JOB_SUSPENDED, JobController

SUSPENDED = JOB_SUSPENDED  # ("Suspended", "JobSuspended", "Job suspended")


def job(name: str, spec: str = "", labels: str = "{}") -> str:
    """A Job ``default/name`` (``labels``: its metadata's, flow style) of one 1-GPU pod computing 1 h;
    ``spec``: more lines of its spec, indented two spaces."""
    return f"""
---
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, labels: {labels}}}
spec:
{spec}  template:
    metadata: {{annotations: {{gpufleet.io/duration: 1h}}}}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: trainer
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def conditions(status: dict[str, Any]) -> list[tuple[str, str, str, float]]:
    return [(c["type"], c["reason"], c["message"], c["time_s"]) for c in status["conditions"]]


def test_a_job_created_suspended_creates_no_pods_has_no_start_time_and_is_reported_suspended(
    tmp_path: Path,
) -> None:
    paths = write(tmp_path, NODE_N0, job("held", "  suspend: true\n"), job("runs"))
    assert load_scenario(paths).warnings == []
    summary = simulated(paths)
    assert sorted(pods_by_name(summary)) == ["runs-0"]
    status = summary["workload_status"]["Job/default/held"]
    assert conditions(status) == [(*SUSPENDED, 0.0)]
    assert (status["start_time_s"], status["active"], status["failed"], status["completion_time_s"]) == (
        None,
        0,
        0,
        None,
    )


def test_a_suspended_job_with_a_queue_label_but_no_kueue_stays_suspended(tmp_path: Path) -> None:
    """Without Kueue objects the queue label is just a label: nothing admits the Job, nothing resumes it."""
    paths = write(tmp_path, NODE_N0, job("held", "  suspend: true\n", "{kueue.x-k8s.io/queue-name: queue}"))
    summary = simulated(paths)
    assert summary["pods"] == []
    assert conditions(summary["workload_status"]["Job/default/held"]) == [(*SUSPENDED, 0.0)]


def test_a_suspended_job_that_kueue_manages_runs_once_admitted(tmp_path: Path) -> None:
    """Kueue admits a Job it manages by unsuspending it (``spec.suspend: true`` is how such a Job is
    created)."""
    queues = kueue_queues("default-flavor", 8, "queue", "default")
    paths = write(tmp_path, NODE_N0, queues, queued_job("train", "0s", gpus=1, spec="  suspend: true\n"))
    summary = simulated(paths)
    assert pods_by_name(summary)["train-0"]["phase"] == "Succeeded"
    status = summary["workload_status"]["Job/default/train"]
    assert [c[0] for c in conditions(status)] == ["SuccessCriteriaMet", "Complete"]


def test_a_suspended_jobs_active_deadline_does_not_run(tmp_path: Path) -> None:
    """``pastActiveDeadline`` is false while the Job is suspended: 10 s pass, it does not fail."""
    paths = write(tmp_path, NODE_N0, job("held", "  suspend: true\n  activeDeadlineSeconds: 10\n"))
    summary = simulated(paths, duration_s=600)
    assert conditions(summary["workload_status"]["Job/default/held"]) == [(*SUSPENDED, 0.0)]


NS = "ml"


def snapshot_job(backoff_limit: int) -> list[dict[str, Any]]:
    """A snapshot's suspended Job (parallelism 2, completions 4) with its two running pods."""
    containers = [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]
    annotations = {"gpufleet.io/duration": "1h"}
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "uid-job", "controller": True}
    spec = {
        "suspend": True,
        "parallelism": 2,
        "completions": 4,
        "backoffLimit": backoff_limit,
        "template": {
            "metadata": {"annotations": annotations},
            "spec": {"restartPolicy": "Never", "containers": containers},
        },
    }
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"train-{i}",
                "namespace": NS,
                "uid": f"uid-train-{i}",
                "annotations": annotations,
                "ownerReferences": [owner],
                "finalizers": ["batch.kubernetes.io/job-tracking"],
            },
            "spec": {"restartPolicy": "Never", "containers": containers, "nodeName": "gpu-0"},
            "status": {"phase": "Running"},
        }
        for i in range(2)
    ]
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "gpu-0"},
        "status": {"capacity": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}},
    }
    job_object = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": NS, "uid": "uid-job"},
        "spec": spec,
    }
    return [node, job_object, *pods]


def dump(tmp_path: Path, objects: list[dict[str, Any]]) -> list[Path]:
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    return [path]


def test_a_suspended_snapshot_job_deletes_its_active_pods_which_are_not_counted_nor_replaced(
    tmp_path: Path,
) -> None:
    """``manageJob`` deletes a suspended Job's active pods with ``deleteJobPods`` (their tracking finalizer
    removed): once gone they are not counted (``TestSuspendJob``: 0 active, 0 failed, 0 terminating), and
    none is created again; with a ``backoffLimit`` of 0 the Job does not fail."""
    summary = simulated(dump(tmp_path, snapshot_job(backoff_limit=0)))
    pods = pods_by_name(summary)
    assert sorted(pods) == ["train-0", "train-1"]
    # deleted at once, gone after their 30 s grace period
    assert {(p["reason"], p["deleted_s"]) for p in pods.values()} == {("Deleted", 30.0)}
    status = summary["workload_status"][f"Job/{NS}/train"]
    assert conditions(status) == [(*SUSPENDED, 0.0)]
    counts = (status["active"], status["terminating"], status["failed"], status["start_time_s"])
    assert counts == (0, 0, 0, None)


def test_a_suspended_jobs_deleted_pods_never_pass_its_backoff_limit() -> None:
    """``deleteJobPods``: the two pods a suspended Job deletes are not counted once gone (neither failed nor
    succeeded, whichever way they ended), so they never pass its ``backoffLimit`` of 0; no pod failure
    backoff either."""
    controller = JobController(Job("train", NS, Pod(""), 2, 4, 0, suspend=True))
    pods = [Pod(f"train-{i}", namespace=NS) for i in range(2)]
    controller.adopt(Owned([OwnedPod(pod, "Running") for pod in pods]))
    assert controller.wanted() == []
    assert controller.doomed() == [(f"{NS}/train-0", "Deleted"), (f"{NS}/train-1", "Deleted")]
    assert controller.status_counts() == {"active": 0, "succeeded": 0, "failed": 0, "terminating": 2}
    assert controller.finished(pods[0], succeeded=False)
    assert controller.finished(pods[1], succeeded=True)  # it ended during its grace period
    assert controller.status_counts() == {"active": 0, "succeeded": 0, "failed": 0, "terminating": 0}
    assert (controller.failure, controller.retry_delay_s()) == (None, 0.0)
    assert [c.reason for c in controller.status_conditions()] == [SUSPENDED[1]]
    assert controller.wanted() == []


def test_a_suspended_job_that_failed_counts_the_pods_it_deletes_as_failed() -> None:
    """A finished Job deletes its active pods with ``deleteActivePods``, which keeps their tracking finalizer,
    suspended or not (``syncJob`` handles the finished Job before ``manageJob``): its ``status.failed`` (2)
    already past its ``backoffLimit`` of 1, it fails, and its two deleted pods count failed once gone."""
    controller = JobController(Job("train", NS, Pod(""), 2, 4, 1, suspend=True))
    pods = [Pod(f"train-{i}", namespace=NS) for i in range(2)]
    controller.adopt(Owned([OwnedPod(pod, "Running") for pod in pods], failed=2))
    assert controller.failure == BACKOFF_LIMIT_EXCEEDED
    assert [key for key, _ in controller.doomed()] == [f"{NS}/train-0", f"{NS}/train-1"]
    for pod in pods:
        controller.finished(pod, succeeded=False)
    assert controller.status_counts() == {"active": 0, "succeeded": 0, "failed": 4, "terminating": 0}


def test_explain_has_no_pod_of_a_suspended_job_but_has_those_of_one_kueue_holds(tmp_path: Path) -> None:
    """``gpufleet explain`` of manifests explains the pods the workloads would create first: none for a
    suspended Job; a suspended Job Kueue manages creates its pods once admitted, so they are explained."""
    queues = kueue_queues("default-flavor", 8, "queue", "default")
    held = job("held", "  suspend: true\n")
    queued = queued_job("queued", "0s", gpus=1, spec="  suspend: true\n")
    records = explain_scenario(load_scenario(write(tmp_path, NODE_N0, queues, held, queued)))
    assert [r["pod"] for r in records] == ["default/queued-0"]
