"""A JobSet's child Jobs under their ``podFailurePolicy`` (``pkg/controller/job``'s ``matchPodFailurePolicy``,
as for a plain Job), and the JobSet's ``failurePolicy`` rules judging the Job's real ``Failed`` reason and
message (kubernetes-sigs/jobset v0.12.0 ``pkg/controllers/failure_policy.go``:
``findFirstFailedPolicyRuleAndJob``, ``ruleIsApplicable``): the patterns of the JobSet docs'
``site/static/examples/failure-policy`` (fail at once on a crash, restart without counting on a
preemption); and their ``backoffLimitPerIndex`` (``FailedIndexes``, ``MaxFailedIndexesExceeded``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.workloads.test_jobset import jobset, rjob, run, stem

from conftest import only_controller, write
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.workloads.jobset import JobSetController

NODE = """
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
"""
URGENT_AT_60S = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: batch/v1
kind: Job
metadata:
  name: urgent
  annotations: {gpufleet.io/submit-at: 60s}
spec:
  template:
    metadata:
      annotations: {gpufleet.io/duration: 30m}
    spec:
      priorityClassName: high
      restartPolicy: Never
      containers:
      - name: train
        image: trainer
        resources: {limits: {nvidia.com/gpu: 8}}
"""
CRASH_WITH_1 = {"gpufleet.io/exit-code": "1"}  # the container exits 1 once its work (duration) is done


def workers(
    policy: list[dict[str, Any]], duration: str, backoff: int = 6, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    """The replicated Job ``workers``: one Job of one 8-GPU pod (``restartPolicy: Never``) of ``duration``
    under ``podFailurePolicy.rules`` ``policy``."""
    out = rjob(
        "workers", gpus=8, restart="Never", backoff=backoff, duration=duration, annotations=annotations
    )
    out["template"]["spec"]["podFailurePolicy"] = {"rules": policy}
    return out


def on_exit_codes(action: str, *codes: int) -> dict[str, Any]:
    return {
        "action": action,
        "onExitCodes": {"containerName": "main", "operator": "In", "values": list(codes)},
    }


def on_disruption(action: str) -> dict[str, Any]:
    return {"action": action, "onPodConditions": [{"type": "DisruptionTarget"}]}


def preempted(
    tmp_path: Path, rjobs: dict[str, Any], failure_policy: dict[str, Any]
) -> tuple[dict[str, Any], JobSetController]:
    """The JobSet on one 8-GPU node, its worker preempted at 60 s by a higher-priority 8-GPU Job."""
    text = jobset(rjobs, failurePolicy=failure_policy)
    return run(write(tmp_path, NODE, URGENT_AT_60S, text), duration_s=3600)


def test_a_fail_job_rule_on_exit_code_1_and_a_fail_jobset_rule_on_pod_failure_policy_fail_at_once(
    tmp_path: Path,
) -> None:
    """The worker exits 1 after 10 min: its Job fails at once (``PodFailurePolicy``, upstream's message),
    though its ``backoffLimit`` is 6, and the ``FailJobSet`` rule on ``PodFailurePolicy`` fails the JobSet:
    no retry, no restart."""
    rules = [{"action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]}]
    text = jobset(
        workers([on_exit_codes("FailJob", 1)], duration="10m", annotations=CRASH_WITH_1),
        failurePolicy={"maxRestarts": 3, "rules": rules},
    )
    pods, controller = run(write(tmp_path, NODE, text), duration_s=3600)
    ((name, pod),) = pods.items()
    assert (pod["phase"], pod["reason"], pod["finished_s"]) == ("Failed", "Error", 600.0)
    assert controller.restarts == 0 and controller.finished_as == "Failed"
    assert (
        controller.message == "applying FailJobSet failure policy action (first failed job: train-workers-0)"
    )
    assert controller.failed_order == ["train-workers-0"]
    (child,) = controller.children.values()
    assert child.failed == 1 and child.failure == (
        "PodFailurePolicy",
        f"Container main for pod ml/{name} failed with exit code 1 matching FailJob rule at index 0",
    )


def test_an_ignore_rule_on_disruption_target_replaces_a_preempted_worker_without_failing_its_job(
    tmp_path: Path,
) -> None:
    """``Ignore`` on ``DisruptionTarget``: the preempted worker (deleted at 90 s, after its grace period) is
    not counted toward ``backoffLimit: 0``; its Job creates it again after the pod failure backoff (10 s)
    and the JobSet does not restart."""
    pods, controller = preempted(
        tmp_path, workers([on_disruption("Ignore")], backoff=0, duration="2h"), {"maxRestarts": 3}
    )
    by_stem = sorted((p["created_s"], p["reason"]) for n, p in pods.items() if stem(n) == "train-workers-0-0")
    assert by_stem[0] == (0.0, "Preempted") and by_stem[1][0] == 100.0
    (child,) = controller.children.values()
    assert child.failed == 0 and child.failure is None
    assert controller.restarts == 0 and controller.finished_as is None


def test_a_fail_job_rule_on_disruption_target_restarts_the_jobset_without_counting(tmp_path: Path) -> None:
    """The JobSet docs' host-maintenance model: ``FailJob`` on ``DisruptionTarget`` and
    ``RestartJobSetAndIgnoreMaxRestarts`` on ``PodFailurePolicy``: under ``maxRestarts: 0`` the preempted
    worker's Job fails and the JobSet restarts once, not counted; the new attempt's worker waits for the
    urgent Job's node."""
    rules = [{"action": "RestartJobSetAndIgnoreMaxRestarts", "onJobFailureReasons": ["PodFailurePolicy"]}]
    pods, controller = preempted(
        tmp_path,
        workers([on_disruption("FailJob")], duration="2h"),
        {"maxRestarts": 0, "rules": rules},
    )
    assert (controller.restarts, controller.restarts_toward_max, controller.finished_as) == (1, 0, None)
    reasons = sorted((p["created_s"], p["reason"]) for n, p in pods.items() if n.startswith("train-"))
    assert reasons[0] == (0.0, "Preempted") and len(reasons) == 2
    assert reasons[1][0] == pytest.approx(90.005)  # created again once the old pod is gone (Recreate)


def test_a_137_restarts_the_jobset_without_counting_and_a_crash_fails_it(tmp_path: Path) -> None:
    """Restart on 137, fail on a code-1 crash: ``FailJob`` on exit codes 1 and 137, then the JobSet's rules
    read the Job's message: ``exit code 137`` restarts it without counting (the preempted worker's container
    is killed after its grace period: 137); any other ``PodFailurePolicy`` failure fails it. The new
    attempt's worker runs once the urgent Job is done, and exits 1."""
    rules = [
        {"action": "RestartJobSetAndIgnoreMaxRestarts", "onJobFailureMessagePatterns": ["exit code 137 "]},
        {"action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]},
    ]
    pods, controller = preempted(
        tmp_path,
        workers([on_exit_codes("FailJob", 1, 137)], duration="10m", annotations=CRASH_WITH_1),
        {"maxRestarts": 0, "rules": rules},
    )
    assert (controller.restarts, controller.restarts_toward_max, controller.finished_as) == (1, 0, "Failed")
    assert (
        controller.message == "applying FailJobSet failure policy action (first failed job: train-workers-0)"
    )
    ended = sorted(
        (p["created_s"], p["reason"], p["terminated"]["exit_code"])
        for n, p in pods.items()
        if n.startswith("train-")
    )
    assert ended == [(0.0, "Preempted", 137), (pytest.approx(90.005), "Error", 1)]


# -- the reader ---------------------------------------------------------------------------------------


def test_a_child_jobs_pod_failure_policy_is_read_without_a_warning(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, jobset(workers([on_exit_codes("FailJob", 1)], "1h"))))
    assert not [w for w in scenario.warnings if "podFailurePolicy" in w]


@pytest.mark.parametrize(
    ("rules", "restart", "expected"),
    [
        (
            [on_exit_codes("FailJob", 0)],
            "Never",
            "spec.replicatedJobs[0].template.spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid "
            "value: 0: must not be 0 for the In operator",
        ),
        (
            [on_disruption("FailIndex")],
            "Never",
            "spec.replicatedJobs[0].template.spec.podFailurePolicy.rules[0].action: Invalid value: "
            '"FailIndex": requires the backoffLimitPerIndex to be set',
        ),
        (
            [on_disruption("Ignore")],
            None,  # the webhook's default, OnFailure: the child Job is refused
            "spec.replicatedJobs[0].template.spec.template.spec.restartPolicy: Invalid value: "
            '"OnFailure": only "Never" is supported when podFailurePolicy is specified',
        ),
    ],
)
def test_a_child_jobs_pod_failure_policy_is_checked_as_a_jobs(
    tmp_path: Path, rules: list[dict[str, Any]], restart: str | None, expected: str
) -> None:
    spec = workers(rules, "1h")
    pod_spec = spec["template"]["spec"]["template"]["spec"]
    if restart is None:
        del pod_spec["restartPolicy"]
    with pytest.raises(ScenarioError) as raised:
        load_scenario(write(tmp_path, jobset(spec)))
    assert expected in str(raised.value)


# -- backoffLimitPerIndex ----------------------------------------------------------------------------


def indexed_workers(policy: list[dict[str, Any]], **per_index: int) -> dict[str, Any]:
    """``workers``: one Job of two 4-GPU pods (indexes 0 and 1) that exit 1 after 10 min."""
    out = rjob(
        "workers",
        parallelism=2,
        completions=2,
        gpus=4,
        restart="Never",
        duration="10m",
        annotations=CRASH_WITH_1,
    )
    out["template"]["spec"].update(per_index, podFailurePolicy={"rules": policy})
    del out["template"]["spec"]["backoffLimit"]  # SetDefaults_Job: MaxInt32 with backoffLimitPerIndex
    return out


def test_indexes_past_backoff_limit_per_index_fail_the_job_with_failed_indexes(tmp_path: Path) -> None:
    """``backoffLimitPerIndex: 1``: each index is created once more (its pod annotated with its failure
    count), then fails; both failed, the Job fails (``FailedIndexes``) and the rule on that reason fails the
    JobSet."""
    rules = [{"action": "FailJobSet", "onJobFailureReasons": ["FailedIndexes"]}]
    text = jobset(
        indexed_workers([on_exit_codes("Count", 1)], backoffLimitPerIndex=1),
        failurePolicy={"maxRestarts": 3, "rules": rules},
    )
    pods, controller = run(write(tmp_path, NODE, text), duration_s=3600)
    assert sorted((stem(n), p["created_s"]) for n, p in pods.items()) == [
        ("train-workers-0-0", 0.0),
        ("train-workers-0-0", 610.0),
        ("train-workers-0-1", 0.0),
        ("train-workers-0-1", 610.0),
    ]
    (child,) = controller.children.values()
    assert child.failed_indexes == {0, 1}
    assert child.failure == ("FailedIndexes", "Job has failed indexes")
    assert controller.restarts == 0 and controller.finished_as == "Failed"
    assert (
        controller.message == "applying FailJobSet failure policy action (first failed job: train-workers-0)"
    )


def test_a_fail_index_rule_past_max_failed_indexes_fails_the_job_at_once(tmp_path: Path) -> None:
    """``FailIndex`` on exit code 1 under ``maxFailedIndexes: 0``: the first failed index fails the Job
    (``MaxFailedIndexesExceeded``); a rule on that reason restarts the JobSet without counting."""
    rules = [
        {"action": "RestartJobSetAndIgnoreMaxRestarts", "onJobFailureReasons": ["MaxFailedIndexesExceeded"]}
    ]
    text = jobset(
        indexed_workers([on_exit_codes("FailIndex", 1)], backoffLimitPerIndex=3, maxFailedIndexes=0),
        failurePolicy={"maxRestarts": 0, "rules": rules},
    )
    _, controller = run(write(tmp_path, NODE, text), duration_s=900)
    assert (controller.restarts, controller.restarts_toward_max, controller.finished_as) == (1, 0, None)


def test_index_failure_counts_are_annotated_on_the_pods(tmp_path: Path) -> None:
    """``addIndexFailureCountAnnotation``: a child Job's pods carry their index's failure count."""
    text = jobset(indexed_workers([on_exit_codes("Count", 1)], backoffLimitPerIndex=1))
    pods = only_controller(write(tmp_path, NODE, text), JobSetController).wanted([])
    assert [p.annotations.get("batch.kubernetes.io/job-index-failure-count") for p in pods] == ["0", "0"]
