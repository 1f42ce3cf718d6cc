"""Container exit codes in the simulation, for a Job's ``podFailurePolicy`` ``onExitCodes`` rules
(``pkg/controller/job/pod_failure_policy.go``: ``matchOnExitCodes`` reads the first terminated container,
app containers then init containers, of a non-zero exit code; ``isOnExitCodesOperatorMatching``).

The codes are the ones the kubelet would report (``model.pod_failure_policy``): 137 (128 + SIGKILL) for a
container killed once its grace period was over (a preemption, an eviction, a deletion: ``killContainer``),
137 with reason ``OOMKilled`` for an OOM kill, ``gpufleet.io/exit-code``'s for a container whose work ends
with it; none for a process a GPU or node fault killed, or a pod whose node is gone."""

from __future__ import annotations

from pathlib import Path

from tests.workloads.test_job_failures import run
from tests.workloads.test_job_failures import scenario as failures_scenario

from conftest import pods_by_name, simulated
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.pod_failure_policy import (
    ContainerExit,
    OnExitCodes,
    PodFailurePolicy,
    PodFailurePolicyRule,
)
from gpufleet.model.workloads import Job
from gpufleet.workloads.job import DEADLINE_EXCEEDED, JobController
from gpufleet.workloads.job_backoff import MAX_POD_FAILURE_BACKOFF_S

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
IGNORE_137 = """
  podFailurePolicy:
    rules:
    - action: Ignore
      onExitCodes: {operator: In, values: [137]}"""
FAIL_ON_42 = """
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: train, operator: In, values: [42]}"""


def scenario(tmp_path: Path, batch_spec: str, annotations: str = "gpufleet.io/duration: 2h") -> Path:
    """One 8-GPU node; the Job ``batch`` (one 8-GPU pod, ``backoffLimit: 0``, its template's
    ``annotations``) and at 60 s an urgent, higher-priority Job that preempts it."""
    return failures_scenario(tmp_path, "\n  backoffLimit: 0" + batch_spec, annotations=annotations)


def test_a_preempted_pods_container_exits_137_and_an_ignore_rule_on_137_keeps_it_off_backoff_limit(
    tmp_path: Path,
) -> None:
    """The preemption victim's container is killed after its grace period (SIGKILL: 137, reason Error); the
    ``Ignore`` rule on 137 matches it, so ``backoffLimit: 0`` is not exceeded and the pod is made again."""
    pods, batch = run(scenario(tmp_path, IGNORE_137))
    assert pods["batch-0"]["reason"] == "Preempted"
    assert pods["batch-0"]["terminated"] == {"container": "train", "exit_code": 137, "reason": "Error"}
    assert batch.failed == 0 and batch.failure is None
    assert "batch-0-r1" in pods


def test_a_running_pod_deleted_as_its_job_fails_counts_failed_though_an_ignore_rule_matches_its_137(
    tmp_path: Path,
) -> None:
    """``trackJobStatusAndRemoveFinalizers``: once the Job has failed (here past ``activeDeadlineSeconds``,
    at 30 s), every non-terminated pod is counted failed, matched by ``podFailurePolicy`` as it is then,
    running with no terminated container (``TestSyncJobWithJobPodFailurePolicy``, "fail job with multiple
    pods": the running pod counted, failed 2); the 137 its container is killed with afterwards is not what
    the ``Ignore`` rule is matched on. The real Job controller does so (``e2e/fidelity/job_cases.py``,
    ``deadline-deletes-running-pod``)."""
    pods, batch = run(scenario(tmp_path, "\n  activeDeadlineSeconds: 30" + IGNORE_137))
    assert batch.failure == DEADLINE_EXCEEDED
    assert pods["batch-0"]["terminated"] == {"container": "train", "exit_code": 137, "reason": "Error"}
    assert batch.failed == 1


def test_an_exit_code_annotation_fails_the_pod_and_a_fail_job_rule_on_it_fails_the_job(
    tmp_path: Path,
) -> None:
    """``gpufleet.io/exit-code: "42"``: after its 30 s of work (before the preemption) the container exits
    42; under ``restartPolicy: Never`` the pod fails (reason Error) and the ``FailJob`` rule names the
    container."""
    pods, batch = run(
        scenario(tmp_path, FAIL_ON_42, 'gpufleet.io/duration: 30s, gpufleet.io/exit-code: "42"')
    )
    pod = pods["batch-0"]
    assert (pod["phase"], pod["reason"], pod["final_state"], pod["finished_s"]) == (
        "Failed",
        "Error",
        "Failed",
        30.0,
    )
    assert pod["terminated"] == {"container": "train", "exit_code": 42, "reason": "Error"}
    assert batch.failure == (
        "PodFailurePolicy",
        "Container train for pod default/batch-0 failed with exit code 42 matching FailJob rule at index 0",
    )


def test_a_container_that_succeeds_exits_0_completed(tmp_path: Path) -> None:
    """A pod whose work ends without ``gpufleet.io/exit-code``, or with ``"0"``, succeeds: exit code 0,
    reason Completed (the runtime's reason for exit code 0)."""
    for marks in ("gpufleet.io/duration: 10s", 'gpufleet.io/duration: 10s, gpufleet.io/exit-code: "0"'):
        pods, batch = run(scenario(tmp_path, "", marks))
        assert pods["batch-0"]["phase"] == "Succeeded"
        assert pods["batch-0"]["terminated"] == {"container": "train", "exit_code": 0, "reason": "Completed"}
        assert batch.succeeded == 1


def test_a_cuda_out_of_memory_pod_under_never_exits_137_oom_killed() -> None:
    pods = pods_by_name(simulated([EXAMPLES / "gpu-sharing" / "time-slicing-oom.yaml"]))
    assert pods["infer-b"]["final_state"] == "OOMKilled"
    assert pods["infer-b"]["terminated"] == {"container": "server", "exit_code": 137, "reason": "OOMKilled"}
    assert pods["infer-b"]["last_terminated"] is None
    assert pods["infer-a"]["terminated"] == {"container": "server", "exit_code": 0, "reason": "Completed"}


def test_a_container_the_kubelet_restarts_after_cuda_out_of_memory_shows_it_as_its_last_state(
    tmp_path: Path,
) -> None:
    """Under ``restartPolicy: OnFailure`` the kubelet restarts the OOM-killed container (CrashLoopBackOff):
    the pod is still there, its ``lastState.terminated`` 137 OOMKilled, its ``state`` not terminated."""
    text = (EXAMPLES / "gpu-sharing" / "time-slicing-oom.yaml").read_text()
    path = tmp_path / "oom.yaml"
    path.write_text(text.replace("restartPolicy: Never", "restartPolicy: OnFailure"))
    pods = pods_by_name(simulated([path], duration_s=600.0))
    assert pods["infer-b"]["reason"] == "CrashLoopBackOff"
    assert pods["infer-b"]["last_terminated"] == {
        "container": "server",
        "exit_code": 137,
        "reason": "OOMKilled",
    }
    assert pods["infer-b"]["terminated"] is None


def controller(*rules: PodFailurePolicyRule) -> JobController:
    return JobController(
        Job("j", "default", Pod("", requests={}), backoff_limit=6, pod_failure_policy=PodFailurePolicy(rules))
    )


def fail(job: JobController, reason: str, terminated: ContainerExit | None) -> None:
    job.tick(job.now_s + MAX_POD_FAILURE_BACKOFF_S)  # the pod failure backoff has passed
    (pod,) = job.wanted() or [Pod("j-0", namespace="default", owner=OwnerRef("Job", "j"))]
    job.failed_with(pod, reason, terminated)
    assert job.finished(pod, succeeded=False)


def test_a_not_in_rule_fails_the_job_on_a_code_it_does_not_list_and_not_on_one_it_lists() -> None:
    """``NotIn``: exit code 42 is listed (counted as without a policy), exit code 1 is not (``FailJob``)."""
    job = controller(PodFailurePolicyRule("FailJob", OnExitCodes("NotIn", (42,))))
    fail(job, "Error", ContainerExit("train", 42, "Error"))
    assert job.failed == 1 and job.failure is None
    fail(job, "Error", ContainerExit("train", 1, "Error"))
    assert job.failure == (
        "PodFailurePolicy",
        "Container train for pod default/j-0-r1 failed with exit code 1 matching FailJob rule at index 0",
    )


def test_a_rule_on_another_container_name_does_not_match_the_first_containers_code() -> None:
    job = controller(PodFailurePolicyRule("Ignore", OnExitCodes("In", (137,), container_name="sidecar")))
    fail(job, "Evicted", ContainerExit("train", 137, "Error"))
    assert job.failed == 1


def test_a_gpu_fault_or_a_node_gone_gives_no_exit_code_so_no_exit_code_rule_matches() -> None:
    """A process an XID killed (reason Error) and a pod PodGC marked Failed (NodeDeleted) have no exit
    code: a ``NotIn`` rule, which matches any non-zero code, does not match them; they count."""
    job = controller(PodFailurePolicyRule("Ignore", OnExitCodes("NotIn", (1,))))
    fail(job, "Error", None)
    fail(job, "NodeDeleted", None)
    assert job.failed == 2


def test_a_pod_deleted_before_its_container_started_has_no_exit_code(tmp_path: Path) -> None:
    """A preemption victim still pulling its image has no container to kill: no exit code (its
    ``DisruptionTarget`` condition still tells of it)."""
    path = scenario(tmp_path, IGNORE_137)
    path.write_text(
        path.read_text().replace(
            "annotations: {gpufleet.io/duration: 2h}",
            "annotations: {gpufleet.io/duration: 2h, gpufleet.io/image-size: 1000GB}",
        )
    )
    pods, batch = run(path)
    assert pods["batch-0"]["reason"] == "Preempted" and pods["batch-0"]["running_s"] is None
    assert pods["batch-0"]["terminated"] is None
    assert batch.failure is not None and batch.failure[0] == "BackoffLimitExceeded"
