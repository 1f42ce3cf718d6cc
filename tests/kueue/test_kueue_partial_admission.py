"""Kueue's partial admission through the simulator: a Job annotated ``kueue.x-k8s.io/job-min-parallelism`` is
admitted with the most pods its ClusterQueue's quota allows, down to that minimum
(``kubernetes-sigs/kueue: pkg/scheduler/scheduler.go`` ``getInitialAssignments``, ``PodSetReducer``), and runs
with its ``parallelism`` set to the count admitted (``pkg/controller/jobs/job/job_controller.go``
``RunWithPodSetsInfo``; ``completions`` too with ``kueue.x-k8s.io/job-completions-equal-parallelism``), asking
for its spec's count again when evicted (``RestorePodSetsInfo``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import a10_nodes, kueue_queues, pods_by_name, simulated, write
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import Job
from gpufleet.workloads.job import JobController

JOB = """
---
apiVersion: batch/v1
kind: Job
metadata:
  name: a
  labels: {{kueue.x-k8s.io/queue-name: queue}}
  annotations: {{{annotations}}}
spec:
  parallelism: 8
  completions: 8
{more}  template:
    metadata:
      annotations: {{gpufleet.io/duration: 1h}}
    spec:
      restartPolicy: Never
      containers:
      - {{name: main, image: trainer, resources: {{limits: {{nvidia.com/gpu: "1"}}}}}}
"""
MIN = "kueue.x-k8s.io/job-min-parallelism"


def run(tmp_path: Path, quota: int, annotations: str, more: str = "") -> dict[str, Any]:
    job = JOB.format(annotations=annotations, more=more)
    return simulated(write(tmp_path, a10_nodes(2), kueue_queues("default", quota, "queue", "default"), job))


def workload(summary: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = next(w for w in summary["kueue"]["workloads"] if w["name"] == "Job/default/a")
    return found


def test_a_job_is_admitted_with_the_most_pods_the_quota_allows(tmp_path: Path) -> None:
    """8 one-GPU pods, at least 4, in a queue of 6 GPUs: admitted with 6 at once; the 2 gated pods beyond
    them are deleted; its other 2 completions run when the first 6 end (the 4 pods they no longer need
    reclaimed)."""
    summary = run(tmp_path, 6, f'{MIN}: "4"')
    pods = pods_by_name(summary)
    first = [pods[f"a-{i}"] for i in range(6)]
    assert {(p["bound_s"], p["finished_s"]) for p in first} == {(0.0, 3600.0)}
    assert [pods[f"a-{i}"]["final_state"] for i in (6, 7)] == ["Deleted", "Deleted"]
    assert [(pods[f"a-{i}"]["bound_s"], pods[f"a-{i}"]["phase"]) for i in (8, 9)] == [
        (3600.0, "Succeeded")
    ] * 2
    assert workload(summary)["admitted_counts"] == [{"main": 6}]
    steps = summary["kueue"]["cluster_queues"]["cq"]["usage"]["default/nvidia.com/gpu"]["steps"]
    assert steps == [[0.0, 6.0], [3600.0, 2.0], [7200.0, 0.0]]


def test_completions_follow_the_admitted_parallelism_when_annotated(tmp_path: Path) -> None:
    """With ``job-completions-equal-parallelism`` (an Indexed Job), the Job admitted with 6 pods needs 6
    completions: it is done when they end."""
    follow = f'{MIN}: "4", kueue.x-k8s.io/job-completions-equal-parallelism: "true"'
    summary = run(tmp_path, 6, follow, more="  completionMode: Indexed\n")
    pods = pods_by_name(summary)
    assert sorted(name for name, p in pods.items() if p["phase"] == "Succeeded") == [
        f"a-{i}" for i in range(6)
    ]
    assert workload(summary)["finished_s"] == 3600.0


def test_a_job_whose_whole_count_fits_is_admitted_whole(tmp_path: Path) -> None:
    summary = run(tmp_path, 8, f'{MIN}: "4"')
    assert workload(summary)["admitted_counts"] == [{"main": 8}]
    assert {p["bound_s"] for p in pods_by_name(summary).values()} == {0.0}


def test_a_quota_below_the_minimum_admits_nothing(tmp_path: Path) -> None:
    """3 GPUs of quota, at least 4 pods: the Job waits, with its whole count's message."""
    summary = run(tmp_path, 3, f'{MIN}: "4"')
    assert workload(summary)["admissions"] == []
    assert workload(summary)["message"] == (
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor default, "
        "previously considered podsets requests (0) + current podset request (8) > maximum capacity (3)"
    )


def test_an_evicted_job_asks_for_its_specs_count_again() -> None:
    """``RestorePodSetsInfo``: the Job admitted with 5 of its 8 pods drops the 3 beyond them; evicted, its
    pod set counts 8 again, and it creates the pods it dropped."""
    controller = JobController(Job("a", "default", Pod("a", namespace="default"), 8, 8, min_parallelism=4))
    created = controller.wanted()
    assert [s.count for s in controller.pod_sets()] == [8]
    dropped = controller.run_with_counts({"main": 5})
    assert dropped == [p.key for p in created[5:]]
    assert ([s.count for s in controller.pod_sets()], controller.wanted()) == ([5], [])
    controller.restore_counts()
    assert [s.count for s in controller.pod_sets()] == [8]
    assert len(controller.wanted()) == 3


def test_a_job_without_the_annotation_runs_as_it_is() -> None:
    controller = JobController(Job("a", "default", Pod("a", namespace="default"), 8, 8))
    controller.wanted()
    assert controller.run_with_counts({"main": 5}) == []
    assert [s.count for s in controller.pod_sets()] == [8]


def test_the_example_starts_the_training_job_with_ten_workers_at_once() -> None:
    """``examples/kueue/partial-admission.yaml``: 16 GPUs, 6 held for an hour; the training Job (16 workers,
    at least 8) is admitted at 1 min with 10, needs 10 completions, and is done at 1 h 1 min."""
    summary = simulated([Path(__file__).parents[2] / "examples" / "kueue" / "partial-admission.yaml"])
    training = next(w for w in summary["kueue"]["workloads"] if w["name"] == "Job/ml/training")
    assert (training["admissions"], training["admitted_counts"]) == ([60.0], [{"main": 10}])
    assert training["finished_s"] == 3660.0
    states = [p["final_state"] for p in summary["pods"] if p["name"].startswith("ml/training-")]
    assert (states.count("Succeeded"), states.count("Deleted")) == (10, 6)
