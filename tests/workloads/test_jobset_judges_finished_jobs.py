"""A JobSet judges a child Job by its ``Failed`` or ``Complete`` condition, whichever way the Job ended.

jobset v0.12.0 ``getChildJobs`` sorts the child Jobs by ``JobFinished`` (their ``Failed`` or ``Complete``
condition); ``executeFailurePolicy`` runs once a Job is failed, the Jobs in the order of their ``Failed``
condition's ``lastTransitionTime`` (``findFirstFailedPolicyRuleAndJob``, ``findFirstFailedJob``), and
``executeSuccessPolicy`` once one is complete. The Job controller (Kubernetes v1.34.10
``pkg/controller/job/job_controller.go``) first gives a Job that failed ``FailureTarget``
(``newFailureCondition``) or one that succeeded ``SuccessCriteriaMet`` (``newSuccessCondition``), deletes its
active pods (``deleteActivePods``), and sets ``Failed`` or ``Complete`` only once none of its pods is
terminating (``enactJobFinished``, ``delayTerminalCondition``).

So whatever failed the Job (its ``backoffLimit`` by a failed pod or, under ``OnFailure``, by its containers'
restarts; a ``FailJob`` rule; ``maxFailedIndexes``; ``activeDeadlineSeconds``), the JobSet acts only after the
pods the Job deleted are gone (30 s, their grace period): then it fails, deleting its other Jobs, or restarts.

Two 8-GPU nodes: ``gpu-0`` of 24 GiB GPUs, on which a worker that needs 40 GB runs out of memory as it
starts (``OOMKilled``, exit code 137), and ``gpu-1`` of 80 GiB GPUs, where the other worker runs; the JobSet's
``driver`` Job is one CPU pod of 2 h beside them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import A10_NODE, URGENT_JOB_AT_10M_IN_KUEUE, URGENT_POD, simulated_controller, write
from gpufleet.workloads.jobset import JobSetController

SIMULATION = "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {duration: 2h}\n"
#: a 24 GiB node and an 80 GiB one
NODES = "---".join(
    A10_NODE.format(i=i, labels=f'nvidia.com/gpu.memory: "{memory}", pool: {pool}')
    for i, (memory, pool) in enumerate([(24576, "a"), (81920, "b")])
)
OOM = ", gpufleet.io/gpu-memory: 40GB"
DRIVER = """
  - name: driver
    template:
      spec:
        completions: 1
        template:
          metadata: {annotations: {gpufleet.io/duration: 2h}}
          spec:
            restartPolicy: Never
            containers: [{name: main, image: t, resources: {limits: {cpu: "1"}}}]"""
#: the workers' Job: two 8-GPU pods, one on each node
TWO_WORKERS = """
        parallelism: 2
        completions: 2"""
NEVER = "\n            restartPolicy: Never"
FAILED_JOBS = "jobset failed due to one or more job failures (first failed job: {})"


def jobset(
    workers_spec: str, pod_spec: str = NEVER, annotations: str = OOM, spec: str = "", duration: str = "2h"
) -> str:
    """The JobSet ``train``: its ``workers`` Job (``workers_spec``: its Job spec's fields; ``pod_spec``: its
    pod spec's; ``annotations``: more of its pods') of 8-GPU pods of ``duration``, then the ``driver`` Job;
    ``spec``: more of the JobSet's spec."""
    return f"""
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: train, namespace: ml}}
spec:{spec}
  replicatedJobs:
  - name: workers
    template:
      spec:{workers_spec}
        template:
          metadata: {{annotations: {{gpufleet.io/duration: {duration}{annotations}}}}}
          spec:{pod_spec}
            containers: [{{name: main, image: t, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]{DRIVER}
"""


def run(
    tmp_path: Path, *texts: str, duration_s: float | None = None
) -> tuple[dict[str, Any], JobSetController]:
    """The scenario simulated (for ``duration_s``, else the Simulation's 2 h): its pods by name and the
    JobSet's controller as it ended."""
    pods, controller, _ = simulated_controller(
        write(tmp_path, NODES, SIMULATION, *texts), "JobSet/ml/train", JobSetController, duration_s
    )
    return pods, controller


def timeline(pods: dict[str, Any]) -> list[tuple[str, float, str | None, list[float], float | None]]:
    """Each pod (its name less its random suffix): created, its end's reason, when it was deleted, its end."""
    return sorted(
        (n.rsplit("-", 1)[0], p["created_s"], p["reason"], p["disruptions"], p["finished_s"])
        for n, p in pods.items()
        if n.startswith("train-")
    )


@pytest.mark.parametrize(
    ("workers_spec", "pod_spec", "annotations", "failure", "failed_s"),
    [
        pytest.param(
            TWO_WORKERS + "\n        backoffLimit: 0",
            NEVER,
            OOM,
            ("BackoffLimitExceeded", "Job has reached the specified backoff limit"),
            0.0,
            id="a-failed-pod-past-backofflimit",
        ),
        pytest.param(
            TWO_WORKERS + "\n        backoffLimit: 0",
            "",  # the webhook's default, OnFailure: the kubelet restarts the OOM-killed container
            OOM,
            ("BackoffLimitExceeded", "Job has reached the specified backoff limit"),
            0.0,
            id="container-restarts-past-backofflimit-under-onfailure",
        ),
        pytest.param(
            TWO_WORKERS
            + """
        podFailurePolicy:
          rules:
          - {action: FailJob, onExitCodes: {operator: In, values: [137]}}""",
            NEVER,
            OOM,
            (
                "PodFailurePolicy",
                "Container main for pod ml/{oom} failed with exit code 137 matching FailJob rule at index 0",
            ),
            0.0,
            id="a-failjob-rule",
        ),
        pytest.param(
            TWO_WORKERS
            + """
        backoffLimitPerIndex: 1
        maxFailedIndexes: 0
        podFailurePolicy:
          rules:
          - {action: FailIndex, onExitCodes: {operator: In, values: [137]}}""",
            NEVER,
            OOM,
            ("MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes"),
            0.0,
            id="a-failindex-rule-past-maxfailedindexes",
        ),
        pytest.param(
            "\n        completions: 1\n        activeDeadlineSeconds: 600",
            "",
            "",
            ("DeadlineExceeded", "Job was active longer than specified deadline"),
            600.0,
            id="activedeadlineseconds",
        ),
    ],
)
def test_a_failed_job_is_judged_once_the_pods_it_deleted_are_gone(
    tmp_path: Path,
    workers_spec: str,
    pod_spec: str,
    annotations: str,
    failure: tuple[str, str],
    failed_s: float,
) -> None:
    """The workers' Job fails at ``failed_s`` (``FailureTarget``) and deletes its running worker then
    (``deleteActivePods``); it is ``Failed`` once that pod is gone, 30 s later (``delayTerminalCondition``):
    only then does the JobSet, without a ``failurePolicy``, fail (``executeFailurePolicy``: ``FailedJobs``)
    and delete the driver's Job, whose pod is gone 30 s after that."""
    pods, controller = run(tmp_path, jobset(workers_spec, pod_spec, annotations))
    oom = next((n for n, p in pods.items() if p["reason"] == "OOMKilled"), "")
    reason, message = failure
    assert controller.children["train-workers-0"].failure == (reason, message.format(oom=oom))
    assert (controller.finished_as, controller.message) == ("Failed", FAILED_JOBS.format("train-workers-0"))
    deleted = [(n, d, end) for n, _, why, d, end in timeline(pods) if why == "Deleted"]
    assert deleted[0] == ("train-driver-0-0", [failed_s + 30.0], failed_s + 60.0)
    assert {end for *_, end in deleted[1:]} == {failed_s + 30.0}  # the workers the Job deleted


def test_a_restart_comes_once_the_failed_jobs_deleted_pods_are_gone(tmp_path: Path) -> None:
    """``failurePolicy`` ``maxRestarts: 1`` (``RestartJobSet``): the workers' Job fails at 0 s as its worker
    on ``gpu-0`` is OOM-killed (``backoffLimit: 0``); it is ``Failed`` at 30 s, once its other worker is gone,
    and the JobSet restarts then (``restartJobSetActionApplier``): the reconcile after the work queue's 5 ms
    deletes the driver's Job (its pod gone 30 s later) and creates the workers' Job again, its old pods gone
    (``Recreate``). That attempt fails so too, ``Failed`` once its deleted worker is gone (60.005 s); with no
    restart left the JobSet fails, before the driver's Job is created again."""
    text = jobset(TWO_WORKERS + "\n        backoffLimit: 0", spec="\n  failurePolicy: {maxRestarts: 1}")
    pods, controller = run(tmp_path, text)
    assert (controller.finished_as, controller.restarts) == ("Failed", 1)
    restart, gone = pytest.approx(30.005), pytest.approx(60.005)
    assert timeline(pods) == [
        ("train-driver-0-0", 0.0, "Deleted", [restart], gone),
        ("train-workers-0-0", 0.0, "OOMKilled", [], 0.0),
        ("train-workers-0-0", restart, "Deleted", [restart], gone),
        ("train-workers-0-1", 0.0, "Deleted", [0.0], 30.0),
        ("train-workers-0-1", restart, "OOMKilled", [], restart),
    ]


def test_the_job_that_got_its_failed_condition_first_is_the_first_failed_job(tmp_path: Path) -> None:
    """``findFirstFailedJob`` orders the failed Jobs by their ``Failed`` condition's time. The workers' Job
    fails first (0 s, ``FailureTarget``) but is ``Failed`` only at 30 s, its other worker gone; the driver's
    Job, its one pod exiting 1 at 10 s (``backoffLimit: 0``), is ``Failed`` at once: the JobSet fails at 10 s
    naming the driver's Job, and deletes the workers' Job (its pod already terminating)."""
    driver = DRIVER.replace("completions: 1", "completions: 1\n        backoffLimit: 0").replace(
        "{gpufleet.io/duration: 2h}", '{gpufleet.io/duration: 10s, gpufleet.io/exit-code: "1"}'
    )
    text = jobset(TWO_WORKERS + "\n        backoffLimit: 0").replace(DRIVER, driver)
    pods, controller = run(tmp_path, text)
    assert (controller.finished_as, controller.message) == ("Failed", FAILED_JOBS.format("train-driver-0"))
    assert controller.failed_order == ["train-driver-0"]
    assert next(t for t in timeline(pods) if t[0] == "train-driver-0-0") == (
        "train-driver-0-0",
        0.0,
        "Error",
        [],
        10.0,
    )


#: the urgent pod, pinned to ``gpu-0`` (``pool: a``): it preempts what runs there at 300 s
URGENT_ON_GPU_0 = URGENT_POD.replace(
    "  priorityClassName: urgent", "  priorityClassName: urgent\n  nodeSelector: {pool: a}"
)


def test_a_job_complete_with_a_pod_still_terminating_completes_the_jobset_once_it_is_gone(
    tmp_path: Path,
) -> None:
    """``successPolicy`` ``Any`` of the workers' Job (one 8-minute pod of a 600 s grace period, the default
    ``TerminatingOrFailed``): the urgent pod preempts the worker on ``gpu-0`` at 300 s; counted failed then
    (``isPodFailed``), it is replaced at 310 s on ``gpu-1``, where its replacement succeeds at 790 s. The Job
    reached its completions then (``SuccessCriteriaMet``, ``newSuccessCondition``), but is ``Complete`` only
    once the preempted pod is gone at 900 s (``delayTerminalCondition``): the JobSet completes then
    (``executeSuccessPolicy``) and deletes the driver's Job."""
    text = jobset(
        "\n        completions: 1",
        "\n            terminationGracePeriodSeconds: 600" + NEVER,
        "",
        spec="\n  successPolicy: {operator: Any, targetReplicatedJobs: [workers]}",
        duration="8m",
    )
    pods, controller = run(tmp_path, URGENT_ON_GPU_0, text)
    assert (controller.finished_as, controller.message) == ("Completed", "jobset completed successfully")
    assert timeline(pods) == [
        ("train-driver-0-0", 0.0, "Deleted", [900.0], 930.0),
        ("train-workers-0-0", 0.0, "Preempted", [300.0], 900.0),
        ("train-workers-0-0", 310.0, "Completed", [], 790.0),
    ]


def test_a_job_failed_before_kueue_evicts_the_jobset_is_judged_once_its_deleted_pod_is_gone(
    tmp_path: Path,
) -> None:
    """The JobSet under Kueue; its workers (a 1200 s grace period) fail their Job at 0 s, whose other worker
    terminates until 1200 s. At 600 s Kueue evicts the JobSet for the urgent Job (``Stop``: suspended). The
    JobSet's ``reconcile`` runs ``executeFailurePolicy`` before it suspends its Jobs, so once the Job is
    ``Failed`` at 1200 s (``delayTerminalCondition``) the suspended JobSet fails: not before, nor never."""
    text = jobset(
        TWO_WORKERS + "\n        backoffLimit: 0", "\n            terminationGracePeriodSeconds: 1200" + NEVER
    )
    text = text.replace("namespace: ml}", "namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}")
    _, before = run(tmp_path, text, URGENT_JOB_AT_10M_IN_KUEUE, duration_s=1199.0)
    assert before.finished_as is None
    pods, controller = run(tmp_path, text, URGENT_JOB_AT_10M_IN_KUEUE)
    assert (controller.finished_as, controller.message) == ("Failed", FAILED_JOBS.format("train-workers-0"))
    workers = [(why, d, end) for n, _, why, d, end in timeline(pods) if n.startswith("train-workers")]
    assert sorted(workers, key=str) == [("Deleted", [0.0], 1200.0), ("OOMKilled", [], 0.0)]
    assert next(t for t in timeline(pods) if t[0] == "train-driver-0-0")[2:] == ("Suspended", [600.0], 630.0)
