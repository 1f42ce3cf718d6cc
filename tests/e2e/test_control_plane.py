"""The test control plane itself: the components built from their Go modules at the pinned release,
the API server's authentication and RBAC, kube-controller-manager's controllers, kwok's Stages
(``e2e/kwok/stages.yaml``) and kube-state-metrics."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from e2e.components import KUBERNETES_VERSION
from e2e.controlplane import KWOK_NODE_ANNOTATION, ControlPlane, free_port

from conftest import wait_until
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
    port = free_port()
    ksm = subprocess.Popen(
        [
            str(clean.bins / "kube-state-metrics"),
            f"--kubeconfig={clean.kubeconfig}",
            "--host=127.0.0.1",
            f"--port={port}",
            f"--telemetry-port={free_port()}",
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
