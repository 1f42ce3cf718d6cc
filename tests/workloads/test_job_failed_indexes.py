"""An Indexed Job's ``backoffLimitPerIndex`` and ``maxFailedIndexes`` (``pkg/controller/job``, GA in 1.33):
each index retried up to its own limit (its pods' ``batch.kubernetes.io/job-index-failure-count``), a failed
index in ``status.failedIndexes`` and not created again, the Job ``Failed`` with ``FailedIndexes`` once its
other indexes are done, or at once with ``MaxFailedIndexesExceeded``; a ``FailIndex`` rule of
``podFailurePolicy`` fails the pod's index at its first failure."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.model.failed_indexes import INDEX_FAILURE_COUNT, INDEX_IGNORED_FAILURE_COUNT
from gpufleet.model.pod import Pod
from gpufleet.model.pod_failure_policy import (
    FAIL_INDEX,
    IGNORE,
    OnPodCondition,
    PodFailurePolicy,
    PodFailurePolicyRule,
)
from gpufleet.model.workloads import Job
from gpufleet.report import validate_summary
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.job import JobController

SCENARIO = """
apiVersion: v1
kind: Node
metadata: {{name: gpu-0, labels: {{nvidia.com/gpu.memory: "24576"}}}}  # an A10's 24 GiB
status:
  capacity: {{cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: per-index}}
spec: {{duration: 1h}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  completions: 8
  parallelism: 8
  completionMode: Indexed
  backoffLimitPerIndex: 1{extra}
  template:
    metadata:
      annotations: {{gpufleet.io/duration: 10m}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 30
      containers:
      - {{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
"""


@pytest.fixture
def index_3_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pod of index 3 asks for more GPU memory than the node's GPU has: CUDA out of memory as it
    starts (``OOMKilled``)."""
    stamp = JobController.pod

    def pod(self: JobController, index: int, attempt: int) -> Pod:
        made = stamp(self, index, attempt)
        if index != 3:
            return made
        return replace(made, behavior=replace(made.behavior, gpu_memory_bytes=40e9))

    monkeypatch.setattr(JobController, "pod", pod)


def run(tmp_path: Path, extra: str = "") -> tuple[dict[str, Any], dict[str, Any]]:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO.format(extra=extra))
    sim = Simulation(load_scenario([path]), seed=0)
    sim.run()
    out = build_summary(sim, None)
    validate_summary(out)
    return out["workload_status"]["Job/default/train"], {p["name"]: p for p in out["pods"]}


@pytest.mark.usefixtures("index_3_fails")
def test_an_index_whose_pods_always_fail_fails_after_its_backoff_limit_and_the_job_fails_with_failed_indexes(
    tmp_path: Path,
) -> None:
    """``backoffLimitPerIndex: 1``: index 3 fails after 2 tries (its second pod's failure count is 1), the
    other 7 indexes succeed, and then the Job fails (``FailedIndexes``), ``failedIndexes: "3"``."""
    status, pods = run(tmp_path)
    assert status["failedIndexes"] == "3"
    assert [(c["type"], c["reason"], c["time_s"]) for c in status["conditions"]] == [
        ("FailureTarget", "FailedIndexes", 600.0),
        ("Failed", "FailedIndexes", 600.0),
    ]
    assert {c["message"] for c in status["conditions"]} == {"Job has failed indexes"}
    assert (status["active"], status["succeeded"], status["failed"], status["terminating"]) == (0, 7, 2, 0)
    assert status["completion_time_s"] is None
    tries = sorted(n for n in pods if n.startswith("default/train-3"))
    assert tries == ["default/train-3", "default/train-3-r1"]
    assert {pods[n]["phase"] for n in tries} == {"Failed"}


@pytest.mark.usefixtures("index_3_fails")
def test_more_failed_indexes_than_max_failed_indexes_fail_the_job_at_once(tmp_path: Path) -> None:
    """``maxFailedIndexes: 0``: the first failed index fails the Job (``MaxFailedIndexesExceeded``), which
    deletes its running pods (30 s grace period) and is ``Failed`` once they are gone."""
    status, _ = run(tmp_path, extra="\n  maxFailedIndexes: 0")
    assert status["failedIndexes"] == "3"
    reasons = [(c["type"], c["reason"]) for c in status["conditions"]]
    assert reasons == [("FailureTarget", "MaxFailedIndexesExceeded"), ("Failed", "MaxFailedIndexesExceeded")]
    failed_at, gone_at = (c["time_s"] for c in status["conditions"])
    assert failed_at < 600.0 and gone_at == pytest.approx(failed_at + 30.0)
    assert (
        status["conditions"][0]["message"]
        == "Job has exceeded the specified maximal number of failed indexes"
    )
    assert (status["active"], status["succeeded"], status["failed"]) == (0, 0, 9)


def test_a_job_without_failed_indexes_reports_an_empty_list(tmp_path: Path) -> None:
    status, _ = run(tmp_path)
    assert status["failedIndexes"] == ""
    assert [c["reason"] for c in status["conditions"]] == ["CompletionsReached", "CompletionsReached"]


@pytest.mark.usefixtures("index_3_fails")
def test_describe_pod_shows_the_jobs_failed_indexes(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO.format(extra=""))
    result = CliRunner().invoke(app, ["describe", "pod", "train-3-r1", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert next(line for line in lines if line.startswith("Job Failed Indexes:")).split(":")[1].strip() == "3"
    assert any(line.split()[:3] == ["Failed", "True", "FailedIndexes"] for line in lines)


def indexed_job(rules: tuple[PodFailurePolicyRule, ...] = (), limit: int = 1) -> JobController:
    policy = PodFailurePolicy(rules) if rules else None
    job = Job(
        "j",
        "default",
        Pod("", requests={}),
        parallelism=2,
        completions=2,
        backoff_limit=2**31 - 1,
        pod_failure_policy=policy,
        indexed=True,
        backoff_limit_per_index=limit,
    )
    return JobController(job)


def fail(controller: JobController, pod: Pod, reason: str | None = None) -> None:
    controller.failed_with(pod, reason)
    assert controller.finished(pod, succeeded=False)


def test_each_pod_carries_its_index_failure_count_and_each_index_backs_off_on_its_own() -> None:
    """``addIndexFailureCountAnnotation``: 0 on an index's first pod, one more on each replacement;
    ``getRemainingTimePerIndex``: 10 s, then 20 s, for that index's failures only."""
    controller = indexed_job(limit=3)
    first, _ = controller.wanted()
    assert (
        first.annotations[INDEX_FAILURE_COUNT] == "0" and INDEX_IGNORED_FAILURE_COUNT not in first.annotations
    )
    fail(controller, first)
    assert controller.retry_delay_s() == 10.0
    assert controller.wanted() == []  # index 0 waits its backoff
    controller.tick(10.0)
    (second,) = controller.wanted()
    assert (second.name, second.annotations[INDEX_FAILURE_COUNT]) == ("j-0-r1", "1")
    fail(controller, second)
    assert controller.retry_delay_s() == 20.0
    assert controller.status_indexes() == {"failedIndexes": ""}


def test_an_ignored_failure_counts_on_the_ignored_annotation_not_toward_the_limit() -> None:
    """``getNewIndexFailureCounts``: a failure an ``Ignore`` rule matches adds to
    ``job-index-ignored-failure-count``; the index does not fail, even with ``backoffLimitPerIndex: 0``."""
    ignore = PodFailurePolicyRule(IGNORE, on_pod_conditions=(OnPodCondition("DisruptionTarget"),))
    controller = indexed_job((ignore,), limit=0)
    first, _ = controller.wanted()
    fail(controller, first, "Evicted")
    controller.tick(10.0)  # after index 0's backoff
    (second,) = controller.wanted()
    assert second.annotations[INDEX_FAILURE_COUNT] == "0"
    assert second.annotations[INDEX_IGNORED_FAILURE_COUNT] == "1"
    assert controller.failed_indexes == set() and controller.failure is None
    assert controller.retry_delay_s() == 10.0


def test_a_fail_index_rule_fails_the_index_at_its_first_failure() -> None:
    """``FailIndex`` (``isIndexFailed``): the evicted pod's index fails although ``backoffLimitPerIndex`` is
    5; no pod of it is created again, and once the other index succeeds the Job fails (``FailedIndexes``)."""
    rule = PodFailurePolicyRule(FAIL_INDEX, on_pod_conditions=(OnPodCondition("DisruptionTarget"),))
    controller = indexed_job((rule,), limit=5)
    first, other = controller.wanted()
    fail(controller, first, "Evicted")
    assert controller.failed_indexes == {0} and controller.wanted() == []
    assert controller.failure is None
    assert controller.finished(other, succeeded=True)
    assert controller.failure == ("FailedIndexes", "Job has failed indexes")
    assert controller.status_indexes() == {"completedIndexes": "1", "failedIndexes": "0"}
