"""The test control plane itself: the components built from their Go modules at the pinned release,
the API server's authentication and RBAC, kube-controller-manager's controllers, kwok's Stages
(``e2e/kwok/stages.yaml``) and kube-state-metrics."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e.components import KUBERNETES_VERSION
from e2e.controlplane import KWOK_NODE_ANNOTATION, ControlPlane, free_ports
from e2e.fidelity.job_times import TOLERANCE_S

from conftest import pods_by_name, simulated, wait_until
from gpufleet.kube.manifests import node_manifest
from gpufleet.model.node import Node

GPU_NODE = Node(
    "gpu-node",
    labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"},
    capacity={"cpu": 96_000, "memory": 768 * 2**30, "pods": 110, "nvidia.com/gpu": 8},
)


@pytest.fixture
def clean(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    yield control_plane
    for kind in ("jobs", "deployments", "pods"):
        control_plane.kubectl(
            "delete", kind, "--all", "-n", "default", "--grace-period=0", "--force", "--wait=false"
        )
    control_plane.kubectl("delete", "nodes", "--all", "--wait=true")


def fake_gpu_node(cp: ControlPlane, ready_after: str = "") -> None:
    annotations = {KWOK_NODE_ANNOTATION: "fake"}
    if ready_after:
        annotations["gpufleet.io/ready-after"] = ready_after
    import json

    cp.kubectl("create", "-f", "-", stdin=json.dumps(node_manifest(GPU_NODE, annotations)))


def node_ready(cp: ControlPlane, name: str) -> bool:
    node = cp.get(f"/api/v1/nodes/{name}") or {}
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in node.get("status", {}).get("conditions", [])
    )


def test_every_component_reports_the_pinned_kubernetes_release(control_plane: ControlPlane) -> None:
    """The version is stamped with ``-ldflags -X k8s.io/component-base/version.gitVersion=...``:
    unstamped, the components say v0.0.0."""
    assert (control_plane.get("/version") or {})["gitVersion"] == KUBERNETES_VERSION
    for binary in ("kube-scheduler", "kube-controller-manager", "kubectl"):
        args = ["version", "--client"] if binary == "kubectl" else ["--version"]
        out = subprocess.run([str(control_plane.bins / binary), *args], capture_output=True, text=True).stdout
        assert KUBERNETES_VERSION in out, (binary, out)
    etcd = subprocess.run(
        [str(control_plane.bins / "etcd"), "--version"], capture_output=True, text=True
    ).stdout
    assert "etcd Version: 3.6." in etcd


def test_the_api_server_wants_a_token_and_enforces_rbac(control_plane: ControlPlane) -> None:
    """Token authentication and RBAC: anonymous requests are refused; the scheduler's identity
    (system:kube-scheduler, bound by upstream's bootstrap policy) may bind pods but not delete nodes."""
    request = urllib.request.Request(control_plane.server + "/api/v1/nodes")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, context=control_plane._ssl, timeout=5)
    assert refused.value.code in (401, 403)
    scheduler = control_plane.workdir / "scheduler.kubeconfig"
    kubectl = [str(control_plane.bins / "kubectl"), "--kubeconfig", str(scheduler), "auth", "can-i"]
    assert (
        subprocess.run(
            [*kubectl, "create", "pods", "--subresource=binding"], capture_output=True, text=True
        ).stdout.strip()
        == "yes"
    )
    assert (
        subprocess.run([*kubectl, "delete", "nodes"], capture_output=True, text=True).stdout.strip() == "no"
    )


def test_a_fake_gpu_node_is_ready_after_its_delay_with_its_gpus_allocatable(clean: ControlPlane) -> None:
    fake_gpu_node(clean, ready_after="2s")
    created = time.monotonic()
    assert not node_ready(clean, "gpu-node")
    wait_until("gpu-node Ready", lambda: node_ready(clean, "gpu-node"))
    assert time.monotonic() - created >= 1.5
    node = clean.get("/api/v1/nodes/gpu-node") or {}
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"


def test_kube_controller_manager_gives_every_job_a_worker_and_its_clients_no_rate_limit(
    control_plane: ControlPlane,
) -> None:
    """Its defaults (``--concurrent-job-syncs`` 5, ``--kube-api-qps`` 20, ``--kube-api-burst`` 30) would queue
    two dozen Jobs started at once behind each other; the running process has the harness's pacing."""
    args = control_plane.processes["kube-controller-manager"].args
    assert isinstance(args, list)
    assert {"--concurrent-job-syncs=50", "--kube-api-qps=5000", "--kube-api-burst=10000"} <= set(args)


def test_a_job_pod_runs_on_kwok_and_succeeds_after_its_duration(clean: ControlPlane) -> None:
    """kube-controller-manager's Job controller makes the pod, kube-scheduler binds it, kwok runs it
    and ends it after ``gpufleet.io/duration``; the Job completes."""
    fake_gpu_node(clean)
    wait_until("gpu-node Ready", lambda: node_ready(clean, "gpu-node"))
    clean.kubectl(
        "create",
        "-f",
        "-",
        stdin="""
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: default}
spec:
  template:
    metadata: {annotations: {gpufleet.io/duration: 2s}}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: registry.example.com/train:v1
        resources: {limits: {nvidia.com/gpu: "4"}}
""",
    )
    job = wait_until(
        "Job train succeeded",
        lambda: (
            (j := clean.get("/apis/batch/v1/namespaces/default/jobs/train") or {})
            .get("status", {})
            .get("succeeded")
            and j
        ),
        timeout_s=60,
    )
    assert job["status"]["succeeded"] == 1
    pods = (clean.get("/api/v1/namespaces/default/pods?labelSelector=job-name%3Dtrain") or {})["items"]
    assert [p["spec"]["nodeName"] for p in pods] == ["gpu-node"]
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]


def test_a_deployment_gets_its_replicas_and_garbage_collection_removes_them(clean: ControlPlane) -> None:
    fake_gpu_node(clean)
    wait_until("gpu-node Ready", lambda: node_ready(clean, "gpu-node"))
    clean.kubectl("create", "deployment", "serve", "--image=registry.example.com/serve:v1", "--replicas=3")

    def running() -> int:
        pods = (clean.get("/api/v1/namespaces/default/pods?labelSelector=app%3Dserve") or {}).get("items", [])
        return sum(1 for p in pods if p.get("status", {}).get("phase") == "Running")

    assert wait_until("3 serve pods Running", lambda: running() == 3)
    clean.kubectl("delete", "deployment", "serve", "--wait=false")
    wait_until(
        "the serve pods gone",
        lambda: (
            not (clean.get("/api/v1/namespaces/default/pods?labelSelector=app%3Dserve") or {}).get("items")
        ),
    )


def test_kube_state_metrics_reports_the_gpus_of_a_fake_node(clean: ControlPlane) -> None:
    """kube-state-metrics, built from its module like the rest, reads the same API server."""
    fake_gpu_node(clean)
    wait_until("gpu-node Ready", lambda: node_ready(clean, "gpu-node"))
    port, telemetry = free_ports(2)
    ksm = subprocess.Popen(
        [
            str(clean.bins / "kube-state-metrics"),
            f"--kubeconfig={clean.kubeconfig}",
            "--host=127.0.0.1",
            f"--port={port}",
            f"--telemetry-port={telemetry}",
            "--telemetry-host=127.0.0.1",
            "--resources=nodes",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def scrape() -> str:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text = str(r.read().decode())
            except (urllib.error.URLError, OSError):
                return ""
            return text if "kube_node_status_allocatable" in text else ""

        metrics = wait_until("kube-state-metrics answers", scrape)
        line = next(
            m
            for m in metrics.splitlines()
            if m.startswith("kube_node_status_allocatable{") and "nvidia_com_gpu" in m
        )
        assert 'node="gpu-node"' in line and line.endswith(" 8")
    finally:
        ksm.terminate()
        ksm.wait(timeout=10)


def _restart_pod(name: str, policy: str, code: str) -> str:
    """A Pod ``default/<name>`` on gpu-node whose container runs 1 s (``gpufleet.io/duration``) and exits
    ``code``, under ``restartPolicy`` ``policy``."""
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  annotations: {{gpufleet.io/duration: 1s, gpufleet.io/exit-code: "{code}"}}
spec:
  restartPolicy: {policy}
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.example.com/serve:v1
    resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def _container(cp: ControlPlane, name: str) -> dict[str, Any]:
    pod = cp.get(f"/api/v1/namespaces/default/pods/{name}") or {}
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return {"phase": (pod.get("status") or {}).get("phase"), **statuses[0]}


def test_kwok_restarts_a_container_under_always_with_the_kubelets_back_off_as_gpufleet_does(
    clean: ControlPlane, tmp_path: Path
) -> None:
    """``ShouldContainerBeRestarted``: under ``Always`` a container that exits 0 restarts (kwok's
    ``pod-container-exit`` and ``pod-container-restart`` Stages), at once the first time, then after the
    kubelet's back-off (``doBackOff``: 10 s), waiting in ``CrashLoopBackOff`` meanwhile with the count of the
    container that exited; the pod stays Running (``getPhase``). gpufleet's simulator restarts the same pod
    at the same times (1 s and 12 s after it started) with the same counts."""
    fake_gpu_node(clean)
    wait_until("gpu-node Ready", lambda: node_ready(clean, "gpu-node"))
    clean.kubectl("create", "-f", "-", stdin=_restart_pod("serve", "Always", "0"))
    started = wait_until(
        "serve running",
        lambda: time.monotonic() if "running" in _container(clean, "serve").get("state", {}) else None,
    )
    waiting = wait_until(
        "serve in CrashLoopBackOff",
        lambda: (c := _container(clean, "serve")).get("state", {}).get("waiting") and c,
    )
    assert waiting["phase"] == "Running" and waiting["restartCount"] == 1
    assert waiting["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert waiting["state"]["waiting"]["message"].startswith(
        "back-off 10s restarting failed container=main pod=serve_default("
    )
    assert waiting["lastState"]["terminated"]["exitCode"] == 0
    assert waiting["lastState"]["terminated"]["reason"] == "Completed"
    restarted = wait_until(
        "serve restarted twice",
        lambda: time.monotonic() if _container(clean, "serve").get("restartCount") == 2 else None,
    )
    gpufleet = tmp_path / "pod.yaml"
    gpufleet.write_text(
        yaml.safe_dump_all(
            [node_manifest(GPU_NODE, {}), yaml.safe_load(_restart_pod("serve", "Always", "0"))]
        )
    )
    before = pods_by_name(simulated([gpufleet], duration_s=11.5))["serve"]
    after = pods_by_name(simulated([gpufleet], duration_s=12.5))["serve"]
    assert (before["reason"], before["restarts"], after["restarts"], after["running_s"]) == (
        "CrashLoopBackOff",
        1,
        2,
        12.0,
    )
    assert abs((restarted - started) - after["running_s"]) < TOLERANCE_S


def test_kwok_ends_a_pod_under_on_failure_that_exits_0_and_restarts_one_that_fails(
    clean: ControlPlane,
) -> None:
    """``ShouldContainerBeRestarted`` under ``OnFailure``: exit 0 ends the pod Succeeded (``pod-complete``),
    a non-zero exit restarts the container (at once: ``restartCount`` 1, its exit in ``lastState``)."""
    fake_gpu_node(clean)
    wait_until("gpu-node Ready", lambda: node_ready(clean, "gpu-node"))
    clean.kubectl("create", "-f", "-", stdin=_restart_pod("done", "OnFailure", "0"))
    clean.kubectl("create", "-f", "-", stdin=_restart_pod("crash", "OnFailure", "3"))
    wait_until("done Succeeded", lambda: _container(clean, "done")["phase"] == "Succeeded")
    crash = wait_until("crash restarted", lambda: (c := _container(clean, "crash")).get("restartCount") and c)
    assert crash["phase"] == "Running"
    assert crash["lastState"]["terminated"]["exitCode"] == 3
    assert crash["lastState"]["terminated"]["reason"] == "Error"
    assert _container(clean, "done")["state"]["terminated"]["exitCode"] == 0
