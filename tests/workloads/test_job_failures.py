"""A Job's ``spec.podFailurePolicy``, ``activeDeadlineSeconds`` and its failure in the simulation
(``pkg/controller/job``: ``matchPodFailurePolicy``, ``pastActiveDeadline``, ``syncJob``'s
``deleteActivePods``): a pod a kube-scheduler preempts carries ``DisruptionTarget``, which an ``Ignore``
rule keeps off ``backoffLimit`` and a ``FailJob`` rule turns into the Job's failure; a Job active longer
than its deadline fails; a Job that failed deletes its active pods."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpufleet.kube import load_scenario
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.pod_failure_policy import (
    OnPodCondition,
    PodFailurePolicy,
    PodFailurePolicyRule,
)
from gpufleet.model.workloads import Job
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.job import JobController
from gpufleet.workloads.job_backoff import MAX_POD_FAILURE_BACKOFF_S

IGNORE_DISRUPTION = """
  podFailurePolicy:
    rules:
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]"""
FAIL_ON_DISRUPTION = """
  podFailurePolicy:
    rules:
    - action: FailJob
      onPodConditions: [{type: DisruptionTarget}]"""


def scenario(
    tmp_path: Path, batch_spec: str, pods: int = 1, annotations: str = "gpufleet.io/duration: 2h"
) -> Path:
    """One 8-GPU node; the Job ``batch`` of ``pods`` pods sharing it (2 h each, 8 GPUs between them; its pod
    template's ``annotations``), and at 60 s an urgent, higher-priority Job that needs 8 / ``pods`` GPUs: it
    preempts one pod."""
    gpus = 8 // pods
    text = f"""
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: high}}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {{name: gpu-0}}
status:
  capacity: {{cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: batch}}
spec:
  parallelism: {pods}
  completions: {pods}{batch_spec}
  template:
    metadata:
      annotations: {{{annotations}}}
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: trainer
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: urgent
  annotations: {{gpufleet.io/submit-at: 60s}}
spec:
  template:
    metadata:
      annotations: {{gpufleet.io/duration: 30m}}
    spec:
      priorityClassName: high
      restartPolicy: Never
      containers:
      - name: train
        image: trainer
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: policy}}
spec: {{duration: 1h}}
"""
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return path


def run(path: Path) -> tuple[dict[str, dict[str, Any]], JobController]:
    sim = Simulation(load_scenario([path]), seed=0)
    sim.run()
    pods = {p["name"].split("/", 1)[1]: p for p in build_summary(sim)["pods"]}
    controller = sim.controllers["Job/default/batch"]
    assert isinstance(controller, JobController)
    return pods, controller


def test_a_preempted_pod_counts_toward_backoff_limit_without_a_policy(tmp_path: Path) -> None:
    pods, batch = run(scenario(tmp_path, "\n  backoffLimit: 0"))
    assert pods["batch-0"]["reason"] == "Preempted"
    assert batch.failed == 1 and batch.failure == (
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    assert "batch-0-r1" not in pods


def test_an_ignore_rule_on_disruption_target_keeps_a_preempted_pod_off_backoff_limit(tmp_path: Path) -> None:
    """The preempted pod is not counted (``status.failed`` 0) and is created again after the pod failure
    backoff, which counts ignored failures too (``newBackoffRecord``): deleted at 90 s, again at 100 s."""
    pods, batch = run(scenario(tmp_path, "\n  backoffLimit: 0" + IGNORE_DISRUPTION))
    assert pods["batch-0"]["reason"] == "Preempted" and pods["batch-0"]["deleted_s"] == 90.0
    assert batch.failed == 0 and batch.failure is None
    assert pods["batch-0-r1"]["created_s"] == 100.0


def test_a_fail_job_rule_fails_the_job_and_deletes_its_active_pods(tmp_path: Path) -> None:
    pods, batch = run(scenario(tmp_path, FAIL_ON_DISRUPTION, pods=2))
    preempted = [name for name, p in pods.items() if p["reason"] == "Preempted"]
    assert preempted and preempted[0].startswith("batch-")
    assert batch.failure == (
        "PodFailurePolicy",
        f"Pod default/{preempted[0]} has condition DisruptionTarget matching FailJob rule at index 0",
    )
    other = next(n for n in ("batch-0", "batch-1") if n != preempted[0])
    assert pods[other]["reason"] == "Deleted" and pods[other]["phase"] == "Failed"
    assert batch.failed == 2 and not batch.active  # the deleted pod counts as failed too
    assert not any(name.endswith("-r1") for name in pods)


def test_a_job_past_its_backoff_limit_deletes_its_active_pods(tmp_path: Path) -> None:
    """``syncJob``: once the Job has its Failed condition (``BackoffLimitExceeded``), ``deleteActivePods``
    deletes the pods still running; they count as failed."""
    pods, batch = run(scenario(tmp_path, "\n  backoffLimit: 0", pods=2))
    preempted = [name for name, p in pods.items() if p["reason"] == "Preempted"]
    assert len(preempted) == 1
    other = next(n for n in ("batch-0", "batch-1") if n != preempted[0])
    assert pods[other]["phase"] == "Failed" and pods[other]["reason"] == "Deleted"
    assert batch.failure is not None and batch.failure[0] == "BackoffLimitExceeded"
    assert batch.failed == 2


def policy_job(backoff_limit: int = 0) -> JobController:
    template = Pod("", requests={})
    rule = PodFailurePolicyRule("Ignore", on_pod_conditions=(OnPodCondition("DisruptionTarget"),))
    job = Job(
        "j", "default", template, backoff_limit=backoff_limit, pod_failure_policy=PodFailurePolicy((rule,))
    )
    return JobController(job)


def failing(controller: JobController, reason: str | None) -> None:
    controller.tick(controller.now_s + MAX_POD_FAILURE_BACKOFF_S)  # the pod failure backoff has passed
    (pod,) = controller.wanted() or [Pod("j-0", namespace="default", owner=OwnerRef("Job", "j"))]
    controller.failed_with(pod, reason)
    assert controller.finished(pod, succeeded=False)


def test_evicted_and_orphaned_pods_carry_disruption_target_and_a_fault_does_not() -> None:
    """``Evicted`` (the Eviction API: a drain) and ``NodeDeleted`` (the pod garbage collector) carry
    ``DisruptionTarget``; a process killed by a GPU fault (``Error``) does not, and counts."""
    controller = policy_job(backoff_limit=0)
    failing(controller, "Evicted")
    failing(controller, "NodeDeleted")
    assert controller.failed == 0 and controller.failure is None
    failing(controller, "Error")
    assert controller.failed == 1 and controller.failure is not None
    assert controller.failure[0] == "BackoffLimitExceeded"


def deadline_scenario(tmp_path: Path, deadline: int, duration: str = "2h") -> Path:
    text = f"""
apiVersion: v1
kind: Node
metadata: {{name: gpu-0}}
status:
  capacity: {{cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: batch}}
spec:
  activeDeadlineSeconds: {deadline}
  template:
    metadata:
      annotations: {{gpufleet.io/duration: {duration}}}
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: trainer
        resources: {{limits: {{nvidia.com/gpu: 8}}}}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: deadline}}
spec: {{duration: 1h}}
"""
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return path


def test_a_job_past_its_active_deadline_fails_and_deletes_its_pods(tmp_path: Path) -> None:
    """``pastActiveDeadline``: 600 s after it started the Job fails (``DeadlineExceeded``) and its running
    pod is deleted (SIGTERM, then its grace period: 30 s)."""
    pods, batch = run(deadline_scenario(tmp_path, 600))
    assert batch.failure == ("DeadlineExceeded", "Job was active longer than specified deadline")
    assert pods["batch-0"]["reason"] == "Deleted" and pods["batch-0"]["deleted_s"] == 630.0
    assert batch.failed == 1 and sorted(pods) == ["batch-0"]


def test_a_job_of_active_deadline_zero_creates_no_pod(tmp_path: Path) -> None:
    pods, batch = run(deadline_scenario(tmp_path, 0))
    assert pods == {} and batch.failure is not None and batch.failure[0] == "DeadlineExceeded"


def test_a_job_that_completes_before_its_deadline_succeeds(tmp_path: Path) -> None:
    pods, batch = run(deadline_scenario(tmp_path, 3600, duration="10m"))
    assert pods["batch-0"]["phase"] == "Succeeded"
    assert batch.done and batch.failure is None
