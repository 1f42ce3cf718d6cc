"""A Job's outcome where a user reads it (``summary.json``'s ``workload_status``, ``gpufleet.sim.
workload_status``), as ``kubectl get job -o yaml`` shows its ``status`` (``pkg/controller/job``): the
interim ``SuccessCriteriaMet`` / ``FailureTarget`` condition when it succeeded or failed, then ``Complete``
/ ``Failed`` with the same reason and message once none of its pods is terminating (``enactJobFinished``
under JobManagedBy and JobPodReplacementPolicy, GA); ``completionTime`` is ``Complete``'s time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpufleet.kube import load_scenario
from gpufleet.model.pod_selection import PodSelection, pod_selection
from gpufleet.report import validate_summary
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.job import JobController

NODE = """
apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {nvidia.com/gpu.memory: "24576"}}  # an A10's 24 GiB
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: status}
spec: {duration: 1h}
"""


def job(name: str, spec: str, duration: str, gpus: int = 1, labels: str = "{}") -> str:
    return f"""
---
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:{spec}
  template:
    metadata:
      labels: {labels}
      annotations: {{gpufleet.io/duration: {duration}}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 30
      containers:
      - {{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""


def summary(tmp_path: Path, *jobs: str, selection: PodSelection | None = None) -> dict[str, Any]:
    path = tmp_path / "scenario.yaml"
    path.write_text(NODE + "".join(jobs))
    sim = Simulation(load_scenario([path]), seed=0)
    sim.run()
    out = build_summary(sim, selection)
    validate_summary(out)
    return out


def conditions(status: dict[str, Any]) -> list[tuple[str, str, float]]:
    return [(c["type"], c["reason"], c["time_s"]) for c in status["conditions"]]


def test_a_job_that_completed_has_success_criteria_met_then_complete_and_its_completion_time(
    tmp_path: Path,
) -> None:
    out = summary(tmp_path, job("ok", "\n  parallelism: 2\n  completions: 2", "10m"))
    status = out["workload_status"]["Job/default/ok"]
    assert conditions(status) == [
        ("SuccessCriteriaMet", "CompletionsReached", 600.0),
        ("Complete", "CompletionsReached", 600.0),
    ]
    assert status["conditions"][1]["message"] == "Reached expected number of succeeded pods"
    assert status["conditions"][1]["status"] == "True"
    assert (status["active"], status["succeeded"], status["failed"], status["terminating"]) == (0, 2, 0, 0)
    assert (status["start_time_s"], status["completion_time_s"]) == (0.0, 600.0)
    assert {p["workload"] for p in out["pods"]} == {"Job/default/ok"}


def test_a_job_past_its_deadline_is_failed_once_its_deleted_pods_are_gone(tmp_path: Path) -> None:
    """``FailureTarget`` (DeadlineExceeded) at the deadline; its pods get their 30 s grace period, and
    the Job is ``Failed`` when the last is gone. A failed Job has no ``completionTime``."""
    out = summary(tmp_path, job("late", "\n  activeDeadlineSeconds: 300\n  parallelism: 2", "2h"))
    status = out["workload_status"]["Job/default/late"]
    message = "Job was active longer than specified deadline"
    assert conditions(status) == [
        ("FailureTarget", "DeadlineExceeded", 300.0),
        ("Failed", "DeadlineExceeded", 330.0),
    ]
    assert {c["message"] for c in status["conditions"]} == {message}
    assert (status["active"], status["succeeded"], status["failed"], status["terminating"]) == (0, 0, 2, 0)
    assert status["completion_time_s"] is None


def test_a_job_past_its_backoff_limit_says_backoff_limit_exceeded(tmp_path: Path) -> None:
    """A pod that fails (CUDA out of memory as it starts: ``OOMKilled``) past ``backoffLimit: 0`` fails the
    Job at once, with no pod left to terminate."""
    text = job("crash", "\n  backoffLimit: 0", "10m").replace(
        "gpufleet.io/duration: 10m", "gpufleet.io/duration: 10m, gpufleet.io/gpu-memory: 40GB"
    )
    out = summary(tmp_path, text)
    status = out["workload_status"]["Job/default/crash"]
    assert [c[:2] for c in conditions(status)] == [
        ("FailureTarget", "BackoffLimitExceeded"),
        ("Failed", "BackoffLimitExceeded"),
    ]
    assert status["conditions"][1]["message"] == "Job has reached the specified backoff limit"
    assert status["failed"] == 1 and status["completion_time_s"] is None


def test_a_job_still_running_has_no_condition_and_counts_its_active_pods(tmp_path: Path) -> None:
    out = summary(tmp_path, job("long", "\n  parallelism: 3\n  completions: 6", "2h"))
    status = out["workload_status"]["Job/default/long"]
    assert status["conditions"] == []
    assert (status["active"], status["succeeded"], status["failed"]) == (3, 0, 0)


def test_a_selection_keeps_the_status_of_the_jobs_of_the_selected_pods(tmp_path: Path) -> None:
    out = summary(
        tmp_path,
        job("a", "", "1m", labels="{team: a}"),
        job("b", "", "1m", labels="{team: b}"),
        selection=pod_selection("team=a", None),
    )
    assert list(out["workload_status"]) == ["Job/default/a"]


def test_a_run_without_jobs_has_no_workload_status(tmp_path: Path) -> None:
    assert "workload_status" not in summary(tmp_path)


def test_a_success_policy_completes_an_indexed_job_and_deletes_its_other_pods(tmp_path: Path) -> None:
    """``spec.successPolicy`` (``matchSuccessPolicy``): index 0 succeeded at 10 min meets the rule, the Job
    has ``SuccessCriteriaMet`` (reason ``SuccessPolicy``, "Matched rules at index 1"), deletes index 1
    (pending: the node has one GPU for two 1-GPU pods) and creates no more; ``Complete`` follows once
    it is gone. The deleted pod counts as failed."""
    rules = """
  completionMode: Indexed
  successPolicy:
    rules:
    - {succeededIndexes: "2"}
    - {succeededIndexes: "0-1", succeededCount: 1}"""
    text = job("leader", "\n  parallelism: 2\n  completions: 4" + rules, "10m")
    path_text = NODE.replace('nvidia.com/gpu: "8"', 'nvidia.com/gpu: "1"')
    path = tmp_path / "scenario.yaml"
    path.write_text(path_text + text)
    sim = Simulation(load_scenario([path]), seed=0)
    sim.run()
    out = build_summary(sim)
    validate_summary(out)
    status = out["workload_status"]["Job/default/leader"]
    assert conditions(status) == [
        ("SuccessCriteriaMet", "SuccessPolicy", 600.0),
        ("Complete", "SuccessPolicy", 600.0),
    ]
    assert {c["message"] for c in status["conditions"]} == {"Matched rules at index 1"}
    assert (status["succeeded"], status["failed"], status["completion_time_s"]) == (1, 1, 600.0)
    pods = {p["name"]: p for p in out["pods"]}
    assert pods["default/leader-1"]["reason"] == "Deleted"
    assert set(pods) == {"default/leader-0", "default/leader-1"}


def test_a_pod_that_succeeds_as_the_success_policy_is_met_has_its_index_counted(tmp_path: Path) -> None:
    """``trackJobStatusAndRemoveFinalizers`` counts a succeeded pod's completion index below ``completions``
    even once the Job has its finished condition: two pods ending together at 10 min, the first meeting
    ``succeededCount: 1``, both count (``status.succeeded`` 2, succeeded indexes 0 and 1)."""
    rules = """
  completionMode: Indexed
  successPolicy:
    rules:
    - {succeededCount: 1}"""
    path = tmp_path / "scenario.yaml"
    path.write_text(NODE + job("pair", "\n  parallelism: 2\n  completions: 4" + rules, "10m"))
    sim = Simulation(load_scenario([path]), seed=0)
    sim.run()
    status = build_summary(sim)["workload_status"]["Job/default/pair"]
    assert conditions(status)[0] == ("SuccessCriteriaMet", "SuccessPolicy", 600.0)
    assert status["succeeded"] == 2
    controller = sim.controllers["Job/default/pair"]
    assert isinstance(controller, JobController) and controller.succeeded_indexes == {0, 1}


def test_a_job_of_no_completions_completes_at_once_without_a_pod(tmp_path: Path) -> None:
    """``syncJob``: 0 succeeded pods reach ``completions: 0`` with none active: ``SuccessCriteriaMet`` then
    ``Complete`` (``CompletionsReached``) at its start, no pod created."""
    out = summary(tmp_path, job("none", "\n  completions: 0", "10m"))
    status = out["workload_status"]["Job/default/none"]
    assert conditions(status) == [
        ("SuccessCriteriaMet", "CompletionsReached", 0.0),
        ("Complete", "CompletionsReached", 0.0),
    ]
    assert not out["pods"]


def test_a_finished_job_is_deleted_ttl_seconds_after_it_finished(tmp_path: Path) -> None:
    """``spec.ttlSecondsAfterFinished`` (the TTL-after-finished controller, ``processTTL``): the Job that
    completed at 600 s is deleted at 660 s, its pods (ended) with it (foreground cascading deletion); the one
    that failed at 300 s (``backoffLimit`` 0, exit code 1) at 300 s with a TTL of 0; one without a TTL
    stays."""
    failing = job("bad", "\n  backoffLimit: 0\n  ttlSecondsAfterFinished: 0", "5m").replace(
        "gpufleet.io/duration: 5m", "gpufleet.io/duration: 5m, gpufleet.io/exit-code: '1'"
    )
    out = summary(
        tmp_path, job("ok", "\n  ttlSecondsAfterFinished: 60", "10m"), failing, job("kept", "", "10m")
    )
    statuses = out["workload_status"]
    assert statuses["Job/default/ok"]["completion_time_s"] == 600.0
    assert statuses["Job/default/ok"]["deleted_s"] == 660.0
    assert statuses["Job/default/bad"]["conditions"][-1]["type"] == "Failed"
    assert statuses["Job/default/bad"]["deleted_s"] == 300.0
    assert "deleted_s" not in statuses["Job/default/kept"]
    pods = {p["name"]: p for p in out["pods"]}
    assert (pods["default/ok-0"]["phase"], pods["default/ok-0"]["deleted_s"]) == ("Succeeded", 660.0)
    assert (pods["default/bad-0"]["phase"], pods["default/bad-0"]["deleted_s"]) == ("Failed", 300.0)
    assert pods["default/kept-0"]["deleted_s"] is None
