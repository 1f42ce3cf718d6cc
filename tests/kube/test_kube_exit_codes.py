"""Container exit codes read from manifests: the ``gpufleet.io/exit-code`` annotation (the exit code of a
pod's first container once its work is done; ``ContainerStateTerminated.exitCode`` is an int32, negative
codes included: Windows, as upstream's ``pod_failure_policy_test.go`` "ignore rule matched on negative exit
codes" case has it), and a cluster snapshot's failed pods' ``status.containerStatuses[].state.terminated``
and ``initContainerStatuses``, which an adopted Job's ``podFailurePolicy`` reads as upstream's Job
controller does (``trackJobStatusAndRemoveFinalizers``, ``getFailJobMessage``, ``matchOnExitCodes``: only
``state.terminated``, never ``lastState``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kube_manifests import load, pod, problems, warnings

from gpufleet.kube import load_scenario
from gpufleet.workloads.job import JobController

LABEL = "scenario.yaml: document 1 (Pod/default/p)"
AT = f"{LABEL}: metadata.annotations.gpufleet.io/exit-code"


@pytest.mark.parametrize("text, code", [("42", 42), ("0", 0), ("-1", -1), ("2147483647", 2**31 - 1)])
def test_the_exit_code_annotation_is_an_int32(tmp_path: Path, text: str, code: int) -> None:
    scenario = load(
        tmp_path, pod("restartPolicy: Never", f'annotations: {{gpufleet.io/exit-code: "{text}"}}')
    )
    assert scenario.pods[0].pod.behavior.exit_code == code


@pytest.mark.parametrize(
    "text, problem",
    [
        ("abc", 'Invalid value: "abc": must be an integer (the container\'s exit code)'),
        ("4.2", 'Invalid value: "4.2": must be an integer (the container\'s exit code)'),
        ("+42", 'Invalid value: "+42": must be an integer (the container\'s exit code)'),
        (" 42", 'Invalid value: " 42": must be an integer (the container\'s exit code)'),
        ("", 'Invalid value: "": must be an integer (the container\'s exit code)'),
        ("2147483648", 'Invalid value: "2147483648": must be between -2147483648 and 2147483647, inclusive'),
    ],
)
def test_an_exit_code_annotation_that_is_not_an_int32_is_an_error(
    tmp_path: Path, text: str, problem: str
) -> None:
    text_pod = pod("restartPolicy: Never", f'annotations: {{gpufleet.io/exit-code: "{text}"}}')
    assert problems(tmp_path, text_pod) == [f"{AT}: {problem}"]


def test_an_exit_code_under_any_restart_policy_is_modelled_with_no_warning(tmp_path: Path) -> None:
    """The kubelet restarts a container that exits non-zero under ``OnFailure`` or ``Always``, and one that
    exits 0 under ``Always`` too (``ShouldContainerBeRestarted``): all modelled, no warning about the exit
    code (a bare pod under ``Always`` is told it never completes, below)."""
    for policy in ("OnFailure", "Always"):
        for code in ("0", "1"):
            annotations = f'annotations: {{gpufleet.io/exit-code: "{code}", gpufleet.io/duration: 1h}}'
            found = warnings(tmp_path, pod(f"restartPolicy: {policy}", annotations))
            assert [w for w in found if "exit-code" in w] == []


def test_a_bare_pod_with_a_duration_under_always_is_told_it_never_completes(tmp_path: Path) -> None:
    """Under ``restartPolicy: Always``, the Pod default, the kubelet restarts the container after every exit
    (``ShouldContainerBeRestarted``): a bare pod given a ``gpufleet.io/duration`` runs again and again, so
    gpufleet says so; not under ``Never`` or ``OnFailure``."""
    duration = "annotations: {gpufleet.io/duration: 1h}"
    (told,) = warnings(tmp_path, pod("", duration))
    assert told.endswith(
        "spec.restartPolicy: Always (the default): the kubelet restarts the container each time it exits"
        " after its gpufleet.io/duration, so the pod never completes; give a pod that runs to completion"
        " restartPolicy Never or OnFailure"
    )
    assert (
        "spec.restartPolicy: Always: the kubelet"
        in warnings(tmp_path, pod("restartPolicy: Always", duration))[0]
    )
    for policy in ("Never", "OnFailure"):
        assert warnings(tmp_path, pod(f"restartPolicy: {policy}", duration)) == []


# -- a snapshot's failed pods -------------------------------------------------------------------------

NS = "ml"
TRACKED = ["batch.kubernetes.io/job-tracking"]


def snapshot(
    tmp_path: Path, rule: dict[str, Any], status: dict[str, Any], finalizers: list[str] | None = None
) -> list[Path]:
    """A Job (parallelism 1, completions 2, backoffLimit 0) with one ``podFailurePolicy`` rule, its
    status counting nothing yet, and its failed pod ``train-abcde`` with ``status`` (phase Failed)."""
    containers = [{"name": "main", "image": "i"}]
    spec = {
        "restartPolicy": "Never",
        "initContainers": [{"name": "init", "image": "i"}],
        "containers": containers,
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": NS, "uid": "uid-job"},
        "spec": {
            "parallelism": 1,
            "completions": 2,
            "backoffLimit": 0,
            "podFailurePolicy": {"rules": [rule]},
            "template": {"metadata": {"annotations": {"gpufleet.io/duration": "1h"}}, "spec": spec},
        },
        "status": {"active": 0},
    }
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "uid-job", "controller": True}
    failed = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "train-abcde",
            "namespace": NS,
            "uid": "uid-train-abcde",
            "ownerReferences": [owner],
            "finalizers": TRACKED if finalizers is None else finalizers,
        },
        "spec": {**spec, "nodeName": "gpu-0"},
        "status": {"phase": "Failed", **status},
    }
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "gpu-0"},
        "status": {"capacity": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}},
    }
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, job, failed]}))
    return [path]


def adopted(paths: list[Path]) -> JobController:
    scenario = load_scenario(paths)
    (job,) = scenario.jobs
    controller = JobController(job)
    controller.adopt(scenario.owned["Job/ml/train"])
    return controller


def container_status(name: str, state: dict[str, Any], last: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``ContainerStatus`` with its required fields."""
    status = {"name": name, "ready": False, "restartCount": 0, "image": "i", "imageID": "", "state": state}
    return status if last is None else {**status, "lastState": last}


def terminated(name: str, code: int, reason: str = "Error") -> dict[str, Any]:
    return container_status(name, {"terminated": {"exitCode": code, "reason": reason}})


def rule(action: str, codes: list[int], container: str | None = None) -> dict[str, Any]:
    on_exit_codes: dict[str, Any] = {"operator": "In", "values": codes}
    if container is not None:
        on_exit_codes["containerName"] = container
    return {"action": action, "onExitCodes": on_exit_codes}


def test_a_snapshot_pods_exit_code_a_fail_job_rule_matches_fails_the_adopted_job(tmp_path: Path) -> None:
    """``getFailJobMessage``: the failed pod's container exited 42; the Job fails (``PodFailurePolicy``),
    before its ``backoffLimit`` is looked at, and creates nothing."""
    paths = snapshot(tmp_path, rule("FailJob", [42], "main"), {"containerStatuses": [terminated("main", 42)]})
    job = adopted(paths)
    assert job.failure == (
        "PodFailurePolicy",
        "Container main for pod ml/train-abcde failed with exit code 42 matching FailJob rule at index 0",
    )
    assert job.failed == 1 and job.wanted() == []


def test_a_snapshot_pod_an_ignore_rule_matches_is_not_counted_and_its_job_goes_on(tmp_path: Path) -> None:
    """``trackJobStatusAndRemoveFinalizers``: an uncounted failed pod that an ``Ignore`` rule matches (137,
    OOMKilled) is not counted; ``backoffLimit: 0`` is not exceeded and the Job creates its pod."""
    status = {"containerStatuses": [terminated("main", 137, "OOMKilled")]}
    job = adopted(snapshot(tmp_path, rule("Ignore", [137]), status))
    assert job.failed == 0 and job.failure is None
    assert [p.name for p in job.wanted()] == ["train-0"]


def test_a_failed_pod_the_job_status_counted_already_still_fails_the_job_by_a_fail_job_rule(
    tmp_path: Path,
) -> None:
    """``getFailJobMessage`` looks at every failed pod, counted or not (no job-tracking finalizer)."""
    paths = snapshot(
        tmp_path, rule("FailJob", [42]), {"containerStatuses": [terminated("main", 42)]}, finalizers=[]
    )
    job = adopted(paths)
    assert job.failure is not None and job.failure[0] == "PodFailurePolicy"


def test_an_init_containers_exit_code_matches_after_the_app_containers(tmp_path: Path) -> None:
    """``matchOnExitCodes``: app containers first, then init containers."""
    status = {
        "containerStatuses": [container_status("main", {"waiting": {"reason": "PodInitializing"}})],
        "initContainerStatuses": [terminated("init", 3)],
    }
    job = adopted(snapshot(tmp_path, rule("FailJob", [3], "init"), status))
    assert job.failure == (
        "PodFailurePolicy",
        "Container init for pod ml/train-abcde failed with exit code 3 matching FailJob rule at index 0",
    )


def test_a_last_state_exit_code_is_not_matched(tmp_path: Path) -> None:
    """``getMatchingContainerFromList`` reads ``state.terminated`` only: a code in ``lastState`` with the
    container still running (not terminated) matches nothing; the failure counts (backoffLimit 0)."""
    status = {
        "containerStatuses": [
            container_status(
                "main",
                {"running": {"startedAt": "2025-01-01T00:00:00Z"}},
                {"terminated": {"exitCode": 42, "reason": "Error"}},
            )
        ]
    }
    job = adopted(snapshot(tmp_path, rule("Ignore", [42]), status))
    assert job.failed == 1
    assert job.failure is not None and job.failure[0] == "BackoffLimitExceeded"
