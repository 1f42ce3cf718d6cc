"""A container whose work exits restarts in place, as the kubelet restarts it
(``ShouldContainerBeRestarted``, ``pkg/kubelet/container/helpers.go``: ``Never`` never, ``OnFailure`` on a
non-zero exit, ``Always`` on any, 0 too), after its back-off whatever the code (``doBackOff`` over
``flowcontrol.Backoff``: the first restart at once, then 10 s doubling to 300 s, reset once the container
ran more than 600 s, ``hasExpired``): the pod stays Running (``getPhase``, ``pkg/kubelet/kubelet_pods.go``:
``Always`` keeps a pod whose containers stopped Running), ``restartCount`` grows and
``lastState.terminated`` holds the code. A Job under
``restartPolicy: OnFailure`` fails once its active pods' restarts reach ``backoffLimit``
(``pastBackoffLimitOnFailure``, ``pkg/controller/job/job_controller.go``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from conftest import NODE_N0, pods_by_name, simulated, write
from gpufleet.cli import app
from gpufleet.workloads.job import BACKOFF_LIMIT_EXCEEDED

EXITED_3 = {"container": "main", "exit_code": 3, "reason": "Error"}


EXITED_0 = {"container": "main", "exit_code": 0, "reason": "Completed"}


def pod(policy: str, duration: str, code: str = "3") -> str:
    """A Pod ``default/p`` (1 GPU, ``restartPolicy`` ``policy``) whose work of ``duration`` exits ``code``."""
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: p, annotations: {{gpufleet.io/duration: {duration}, gpufleet.io/exit-code: "{code}"}}}}
spec:
  restartPolicy: {policy}
  containers: [{{name: main, image: trainer, resources: {{limits: {{nvidia.com/gpu: "1"}}}}}}]
"""


def deployment(duration: str) -> str:
    """A Deployment ``default/web`` of one replica (1 GPU, ``restartPolicy: Always``, the only one allowed)
    whose process exits 0 after ``duration``."""
    return f"""
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}, annotations: {{gpufleet.io/duration: {duration}}}}}
    spec:
      containers: [{{name: main, image: server, resources: {{limits: {{nvidia.com/gpu: "1"}}}}}}]
"""


def job(spec: str, duration: str = "60s") -> str:
    """A Job ``default/train`` under ``restartPolicy: OnFailure`` whose pods' work of ``duration`` exits 3;
    ``spec``: more lines of its spec, indented two spaces."""
    return f"""
---
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
{spec}  template:
    metadata: {{annotations: {{gpufleet.io/duration: {duration}, gpufleet.io/exit-code: "3"}}}}
    spec:
      restartPolicy: OnFailure
      containers: [{{name: main, image: trainer, resources: {{limits: {{nvidia.com/gpu: "1"}}}}}}]
"""


def conditions(status: dict[str, Any]) -> list[tuple[str, str, str, float]]:
    return [(c["type"], c["reason"], c["message"], c["time_s"]) for c in status["conditions"]]


def test_a_container_that_exits_non_zero_under_on_failure_restarts_in_place_with_the_kubelets_back_off(
    tmp_path: Path,
) -> None:
    """60 s of work, then exit 3: restarted at once (60 s), then after 10 s (exit at 120 s), 20 s (190 s),
    40, 80, 160 s and 300 s (capped: 730 s, 1090 s, 1450 s): its ninth exit, at 1450 s, waits in
    ``CrashLoopBackOff`` at 1500 s, the pod still Running, its last state exit code 3, and its
    ``restartCount`` 8: the count of the container that exited (``startContainer`` raises it as it
    creates the next one)."""
    summary = simulated(write(tmp_path, NODE_N0, pod("OnFailure", "60s")), duration_s=1500.0)
    p = pods_by_name(summary)["p"]
    assert (p["phase"], p["reason"], p["restarts"]) == ("Running", "CrashLoopBackOff", 8)
    assert (p["last_terminated"], p["terminated"], p["finished_s"]) == (EXITED_3, None, None)


def test_a_container_that_exits_0_under_always_restarts_in_place_with_the_same_back_off(
    tmp_path: Path,
) -> None:
    """``ShouldContainerBeRestarted``: ``Always`` restarts a container that exited 0, and ``doBackOff``
    waits as after a failure: 60 s of work, then exit 0, restarted at once, then after 10, 20, 40, 80, 160
    and 300 s: 8 restarts by 1500 s, its ninth exit waiting in ``CrashLoopBackOff`` then. ``getPhase``: the
    pod stays Running (never Succeeded), its last state exit code 0, reason ``Completed``."""
    summary = simulated(write(tmp_path, NODE_N0, pod("Always", "60s", "0")), duration_s=1500.0)
    p = pods_by_name(summary)["p"]
    assert (p["phase"], p["reason"], p["restarts"]) == ("Running", "CrashLoopBackOff", 8)
    assert (p["last_terminated"], p["terminated"], p["finished_s"]) == (EXITED_0, None, None)


def test_a_container_that_exits_0_under_on_failure_is_not_restarted_and_the_pod_succeeds(
    tmp_path: Path,
) -> None:
    """``ShouldContainerBeRestarted``: ``OnFailure`` does not restart a container that exited 0; ``getPhase``:
    every container stopped with 0, the pod Succeeded."""
    p = pods_by_name(simulated(write(tmp_path, NODE_N0, pod("OnFailure", "60s", "0"))))["p"]
    assert (p["phase"], p["restarts"], p["terminated"], p["finished_s"]) == ("Succeeded", 0, EXITED_0, 60.0)


def test_a_deployment_pod_with_a_duration_restarts_in_place_and_is_not_replaced(tmp_path: Path) -> None:
    """A Deployment's pods run under ``restartPolicy: Always``: a process that exits 0 after 10 min is
    restarted in place by the kubelet, the pod never ends, so its ReplicaSet has nothing to replace: one
    pod, restarted at once at 600 s, then at 1210 s after a 10 s back-off (it ran 10 min, not more:
    ``hasExpired`` keeps the back-off)."""
    summary = simulated(write(tmp_path, NODE_N0, deployment("10m")), duration_s=1500.0)
    (p,) = summary["pods"]
    assert (p["phase"], p["reason"], p["created_s"], p["restarts"]) == ("Running", None, 0.0, 2)
    assert (p["last_terminated"], p["running_s"]) == (EXITED_0, 1210.0)


def test_describe_shows_a_container_that_keeps_exiting_0_waiting_in_crash_loop_back_off(
    tmp_path: Path,
) -> None:
    """kubectl describe of a pod under ``Always`` whose process exits 0 each minute, at 200 s (exited at 60 s,
    restarted at once, at 120 s, restarted at 130 s, and at 190 s, its 20 s back-off running: ``restartCount``
    2): Running, its container Waiting in ``CrashLoopBackOff`` (any back-off wait is, whatever the exit
    code), its last state Completed with exit code 0, and not ready."""
    scenario = tmp_path / "scenario.yaml"
    simulation = "---\napiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
    simulation += "spec: {duration: 200s}\n"
    scenario.write_text(NODE_N0 + pod("Always", "60s", "0") + simulation)
    result = CliRunner().invoke(app, ["describe", "pod", "p", str(scenario)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "Status:         Running" in lines and not [line for line in lines if line.startswith("Reason:")]
    start = lines.index("  main:")
    assert lines[start + 1 : start + 7] == [
        "    State:          Waiting",
        "      Reason:       CrashLoopBackOff",
        "    Last State:     Terminated",
        "      Reason:       Completed",
        "      Exit Code:    0",
        "    Restart Count:  2",
    ]
    conditions = lines[lines.index("Conditions:") + 2 : lines.index("Conditions:") + 6]
    assert [line.split() for line in conditions] == [
        ["PodScheduled", "True"],
        ["Initialized", "True"],
        ["ContainersReady", "False"],
        ["Ready", "False"],
    ]


def test_a_container_that_ran_more_than_ten_minutes_restarts_at_once_each_time_under_always(
    tmp_path: Path,
) -> None:
    """``hasExpired``: 660 s since its last start (over twice the 300 s maximum) resets the back-off, so
    each exit (660 s, 1320 s) restarts it at once, never in ``CrashLoopBackOff``; ``Always`` restarts a
    non-zero exit as ``OnFailure`` does."""
    summary = simulated(write(tmp_path, NODE_N0, pod("Always", "11m")), duration_s=1500.0)
    p = pods_by_name(summary)["p"]
    assert (p["phase"], p["reason"], p["restarts"], p["running_s"]) == ("Running", None, 2, 1320.0)
    assert p["last_terminated"] == EXITED_3


def test_describe_shows_the_restart_count_and_the_last_state_of_a_restarted_container(tmp_path: Path) -> None:
    """200 s: exited at 60 s, 120 s and 190 s, restarted at 60 s and 130 s (``restartCount`` 2: the count of
    the container that exited, raised as the next one starts), its last exit code 3, waiting out its 20 s
    back-off (kubectl's ``State: Waiting``, reason ``CrashLoopBackOff``)."""
    scenario = tmp_path / "scenario.yaml"
    simulation = "---\napiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
    simulation += "spec: {duration: 200s}\n"
    scenario.write_text(NODE_N0 + pod("OnFailure", "60s") + simulation)
    result = CliRunner().invoke(app, ["describe", "pod", "p", str(scenario)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = lines.index("  main:")
    assert lines[start + 1 : start + 7] == [
        "    State:          Waiting",
        "      Reason:       CrashLoopBackOff",
        "    Last State:     Terminated",
        "      Reason:       Error",
        "      Exit Code:    3",
        "    Restart Count:  2",
    ]


def test_a_job_under_on_failure_fails_once_its_pods_restarts_reach_the_backoff_limit(tmp_path: Path) -> None:
    """``pastBackoffLimitOnFailure``: ``backoffLimit: 2``; its pod's container exits at 60 s and restarts at
    once (``restartCount`` 1), exits again at 120 s and restarts after its 10 s back-off, at 130 s (2 >= 2:
    the count is raised as the new container starts): the Job fails (``BackoffLimitExceeded``) and deletes
    its pod, which counts failed once gone (30 s grace period)."""
    summary = simulated(write(tmp_path, NODE_N0, job("  backoffLimit: 2\n")))
    p = pods_by_name(summary)["train-0"]
    assert (p["restarts"], p["reason"], p["deleted_s"]) == (2, "Deleted", 160.0)
    status = summary["workload_status"]["Job/default/train"]
    assert conditions(status) == [
        ("FailureTarget", *BACKOFF_LIMIT_EXCEEDED, 130.0),
        ("Failed", *BACKOFF_LIMIT_EXCEEDED, 160.0),
    ]
    assert (status["failed"], status["succeeded"], status["active"]) == (1, 0, 0)


def test_a_job_with_backoff_limit_0_fails_at_its_first_restart_and_restarts_of_all_its_pods_add_up(
    tmp_path: Path,
) -> None:
    """``pastBackoffLimitOnFailure``: a ``backoffLimit`` of 0 fails the Job once any restart happened (> 0);
    otherwise the restarts of its active pods are summed: 2 pods restarting at once at 60 s reach 2."""
    zero = simulated(write(tmp_path, NODE_N0, job("  backoffLimit: 0\n")))
    assert conditions(zero["workload_status"]["Job/default/train"])[0] == (
        "FailureTarget",
        *BACKOFF_LIMIT_EXCEEDED,
        60.0,
    )
    spec = "  backoffLimit: 2\n  parallelism: 2\n  completions: 2\n"
    two = simulated(write(tmp_path, NODE_N0, job(spec)))
    status = two["workload_status"]["Job/default/train"]
    assert conditions(status)[0] == ("FailureTarget", *BACKOFF_LIMIT_EXCEEDED, 60.0)
    assert {p["restarts"] for p in two["pods"]} == {1}
    assert status["failed"] == 2


def test_a_job_whose_pods_restarts_stay_below_the_backoff_limit_keeps_running(tmp_path: Path) -> None:
    """``backoffLimit: 6`` (the default): restarts at 60, 130, 210 and 310 s, 4 by 400 s (the fifth exit, at
    370 s, waits its 80 s back-off), the Job still running, nothing failed."""
    summary = simulated(write(tmp_path, NODE_N0, job("")), duration_s=400.0)
    status = summary["workload_status"]["Job/default/train"]
    assert (conditions(status), status["failed"], status["active"]) == ([], 0, 1)
    assert pods_by_name(summary)["train-0"]["restarts"] == 4


def snapshot(tmp_path: Path, restarts: int, init_restarts: int) -> list[Path]:
    """A dump: node ``gpu-0``, a Job ``ml/train`` (``restartPolicy: OnFailure``, ``backoffLimit: 2``) and its
    Running pod whose container and init container have restarted ``restarts`` and ``init_restarts``
    times; its work of 60 s exits 3."""
    spec = {
        "restartPolicy": "OnFailure",
        "containers": [{"name": "main", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
    }
    annotations = {"gpufleet.io/duration": "60s", "gpufleet.io/exit-code": "3"}
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "uid-job", "controller": True}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml", "uid": "uid-job"},
        "spec": {"backoffLimit": 2, "template": {"metadata": {"annotations": annotations}, "spec": spec}},
        "status": {"active": 1},
    }

    def status(name: str, count: int) -> dict[str, Any]:
        return {"name": name, "ready": True, "restartCount": count, "image": "i", "imageID": "", "state": {}}

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "train-abcde",
            "namespace": "ml",
            "uid": "uid-pod",
            "ownerReferences": [owner],
            "annotations": annotations,
        },
        "spec": {**spec, "nodeName": "gpu-0"},
        "status": {
            "phase": "Running",
            "containerStatuses": [status("main", restarts)],
            "initContainerStatuses": [status("init", init_restarts)],
        },
    }
    capacity = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "gpu-0"},
        "status": {"capacity": capacity},
    }
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, job, pod]}))
    return [path]


def test_a_snapshot_jobs_pod_restarts_count_toward_its_backoff_limit_on_failure(tmp_path: Path) -> None:
    """``pastBackoffLimitOnFailure`` sums the ``restartCount`` of the Running pod's containers and init
    containers: 1 + 1 reaches ``backoffLimit: 2`` at adoption (the Job fails at 0 s and deletes its pod);
    1 alone does not, and the kubelet's first restart in the simulation (at 60 s, at once) makes 2."""
    at_once = simulated(snapshot(tmp_path, 1, 1))["workload_status"]["Job/ml/train"]
    assert conditions(at_once)[0] == ("FailureTarget", *BACKOFF_LIMIT_EXCEEDED, 0.0)
    later = simulated(snapshot(tmp_path, 1, 0))["workload_status"]["Job/ml/train"]
    assert conditions(later)[0] == ("FailureTarget", *BACKOFF_LIMIT_EXCEEDED, 60.0)
    assert later["failed"] == 1


def test_describe_counts_the_kubelets_back_off_warnings_as_client_go_writes_them(tmp_path: Path) -> None:
    """``doBackOff`` (``pkg/kubelet/kuberuntime/kuberuntime_manager.go``): each sync of the pod while its
    container waits out a back-off records Warning BackOff "Back-off restarting failed container main in
    pod p_default(UID)" (``format.Pod``; a simulated pod has no UID), the pod worker syncing again every
    10 s (``backOffPeriod``): 97 syncs in the back-offs of 10, 20, 40, 80, 160, 300, 300 s and the one
    running at 1500 s. client-go's correlator (``events_cache.go``) writes the first 25 (to 600 s), then
    one per 300 s per object and type (610, 730, 1020, 1320 s), each with every occurrence counted: x85,
    first at 120 s, last written at 1320 s; ``summary.json`` keeps each back-off (its start and length)."""
    scenario = tmp_path / "scenario.yaml"
    simulation = "---\napiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
    scenario.write_text(NODE_N0 + pod("OnFailure", "60s") + simulation + "spec: {duration: 1500s}\n")
    result = CliRunner().invoke(app, ["describe", "pod", "p", str(scenario), "-o", "json"])
    assert result.exit_code == 0, result.output
    events = json.loads(result.output)["events"]
    back_off = [
        (e["type"], e["age_s"], e["first_age_s"], e["count"], e["from"], e["message"])
        for e in events
        if e["reason"] == "BackOff"
    ]
    assert back_off == [
        (
            "Warning",
            180.0,
            1380.0,
            85,
            "kubelet",
            "Back-off restarting failed container main in pod p_default(<not modelled>)",
        )
    ]
    summary = simulated(write(tmp_path, NODE_N0, pod("OnFailure", "60s")), duration_s=1500.0)
    assert pods_by_name(summary)["p"]["back_offs"] == [
        [120.0, 10.0],
        [190.0, 20.0],
        [270.0, 40.0],
        [370.0, 80.0],
        [510.0, 160.0],
        [730.0, 300.0],
        [1090.0, 300.0],
        [1450.0, 300.0],
    ]
