"""``gpufleet startup`` on the real control plane: a GPU node's start chain and the kubelet's image
events played by kwok's Stages (``e2e/kwok/stages.yaml``: the node Ready after
``gpufleet.io/ready-after``, its GPUs allocatable ``gpufleet.io/gpu-after`` later, the pod's
``Pulling``/``Pulled`` events ``gpufleet.io/pull-after`` apart in the kubelet's words, Ready
``gpufleet.io/ready-delay`` after its containers started), and the real cluster-autoscaler
launching the node for a pending GPU pod. The measured stages must equal what the Stages and the
autoscaler did, within a second (the API's timestamps have 1 s resolution; the watch's moments are
taken as they arrive).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e.components import cluster_autoscaler
from e2e.controlplane import KWOK_NODE_ANNOTATION, ControlPlane
from e2e.fidelity.autoscaler_cases import UNUSED_SCHEDULER
from e2e.fidelity.autoscaler_real import (
    CA_NAMESPACE,
    CONFIG_MAPS,
    DESIRED_ANNOTATION,
    GPU_LABEL,
    GROUP_LABEL,
    MAX_ANNOTATION,
    MIN_ANNOTATION,
    _config_map,
    _node_list,
    _provider_config,
)
from e2e.kubelet_images import image_pull_stages, pulled_message, pulling_message
from typer.testing import CliRunner

from conftest import wait_until
from gpufleet.cli import app
from gpufleet.kube.manifests import node_manifest
from gpufleet.model.node import Node, Taint

NS = "live-startup"
GPU = "nvidia.com/gpu"
IMAGE = "registry.example.com/llm-server:v1"
IMAGE_SIZE = "10GB"
READY_AFTER_S, GPU_AFTER_S, PULL_AFTER_S, READY_DELAY_S = 2.0, 3.0, 2.0, 2.0
TAINT = Taint("gpufleet.io/startup-test", "true", "NoSchedule")
POOL = "startup-pool"
TOLERANCE_S = 1.0
GPUFLEET = str(Path(sys.executable).with_name("gpufleet"))


def _gpu_node(name: str, annotations: dict[str, str], labels: dict[str, str] | None = None) -> dict[str, Any]:
    node = Node(
        name,
        labels={GPU_LABEL: "NVIDIA-H100-80GB-HBM3", **(labels or {})},
        taints=(TAINT,),
        capacity={"cpu": 32_000, "memory": 256 * 2**30, "pods": 110, GPU: 8},
    )
    chain = {"gpufleet.io/ready-after": f"{READY_AFTER_S:g}s", "gpufleet.io/gpu-after": f"{GPU_AFTER_S:g}s"}
    manifest = node_manifest(node, {**chain, **annotations})
    # as a kubelet registers its node (its first status, pkg/kubelet/nodestatus ReadyCondition)
    manifest["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]
    return manifest


def _gpu_pod(name: str, node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "annotations": {
                "gpufleet.io/pull-after": f"{PULL_AFTER_S:g}s",
                "gpufleet.io/image-size": IMAGE_SIZE,
                "gpufleet.io/ready-delay": f"{READY_DELAY_S:g}s",
            },
        },
        "spec": {
            "nodeSelector": node_selector or {},
            "tolerations": [{"key": TAINT.key, "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [
                {
                    "name": "server",
                    "image": IMAGE,
                    "resources": {"requests": {"cpu": "4", "memory": "16Gi"}, "limits": {GPU: "1"}},
                }
            ],
        },
    }


def _create(cp: ControlPlane, *objects: dict[str, Any]) -> float:
    """Create the objects through the API (kubectl would take a second to start); the moment just
    before, on this machine's clock."""
    from lightkube import codecs

    client, before = cp.client(), time.time()
    for obj in objects:
        client.create(codecs.from_dict(obj))
    return before


def _pod_ready(cp: ControlPlane, name: str) -> bool:
    pod = cp.get(f"/api/v1/namespaces/{NS}/pods/{name}") or {}
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (pod.get("status") or {}).get("conditions", [])
    )


@dataclass
class Watch:
    """``gpufleet startup --watch`` running in its own process, stopped with Ctrl-C (SIGINT)."""

    process: subprocess.Popen[str]
    out: Path

    def stop(self) -> dict[str, Any]:
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=60)
        assert self.process.returncode == 0, err
        return dict(json.loads((self.out / "summary.json").read_text()))

    def until(self, what: str, check: Callable[[], Any], timeout: float) -> dict[str, Any]:
        """Stop once ``check`` holds; kill the watch if it does not in time."""
        try:
            wait_until(what, check, timeout)
        except BaseException:
            self.process.kill()
            self.process.communicate()
            raise
        return self.stop()


def _watch(cp: ControlPlane, out: Path) -> Watch:
    process = subprocess.Popen(
        [
            GPUFLEET,
            "startup",
            "--kubeconfig",
            str(cp.kubeconfig),
            "-n",
            NS,
            "--watch",
            "--for",
            "2m",
            "--out",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert process.stderr is not None
    line = process.stderr.readline()  # the watch has begun
    assert line.startswith("watching"), line + process.stderr.read()
    return Watch(process, out)


def _just_after_a_whole_second() -> None:
    """The API keeps creation, binding and container start in whole seconds (``metav1.Time``):
    objects created just after a second begins have their chain's moments just after one too, so
    the stages measured from those fields are not off by up to a second of truncation."""
    time.sleep(1.05 - time.time() % 1.0)


@pytest.fixture(scope="module")
def kubelet(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    """kwok with the kubelet's image messages for IMAGE, then as before; the test namespace."""
    control_plane.restart_kwok(image_pull_stages(IMAGE, f"{PULL_AFTER_S:g}s", IMAGE_SIZE))
    control_plane.kubectl("create", "namespace", NS)
    yield control_plane
    control_plane.stop_cluster_autoscaler()
    control_plane.kubectl("delete", "namespace", NS, "--wait=false")
    control_plane.kubectl("delete", "nodes", "-l", f"{GROUP_LABEL}={POOL}", "--wait=false")
    control_plane.kubectl("delete", "node", "startup-gpu-a", "--ignore-not-found", "--wait=false")
    control_plane.kubectl("delete", "configmap", "-n", CA_NAMESPACE, "--ignore-not-found", *CONFIG_MAPS)
    control_plane.restart_kwok()


@pytest.fixture(scope="module")
def watched(kubelet: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A GPU node and a pod for it created while ``gpufleet startup --watch`` watches; stopped once
    the pod is Ready. The node and pod stay for the dump test."""
    watch = _watch(kubelet, tmp_path_factory.mktemp("startup-watch"))
    _just_after_a_whole_second()
    created = _create(
        kubelet, _gpu_node("startup-gpu-a", {KWOK_NODE_ANNOTATION: "fake"}), _gpu_pod("server-a")
    )
    summary = watch.until("server-a Ready", lambda: _pod_ready(kubelet, "server-a"), 30)
    return {**summary, "created by the test": created}


def _by_name(records: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(r for r in records if r["name"] == name)


def test_watch_measures_the_node_chain_image_pull_and_readiness_the_stages_played(
    watched: dict[str, Any],
) -> None:
    """kwok's node-register/node-initialize (Ready after ready-after) and node-gpu-register (GPUs
    allocatable gpu-after after Ready), the kubelet's Pulled event (image_manager.go: the pull's
    duration in its message) and the pod Ready ready-delay after its containers started."""
    node = _by_name(watched["nodes"], "startup-gpu-a")
    assert node["gpus"] == 8
    origin = datetime.fromisoformat(watched["startup"]["origin"]).timestamp()
    # the API keeps the node's creation in whole seconds: Ready is compared with the moment it was made
    assert origin + node["ready_s"] - watched["created by the test"] == pytest.approx(
        READY_AFTER_S, abs=TOLERANCE_S
    )
    assert node["gpu_ready_s"] - node["ready_s"] == pytest.approx(GPU_AFTER_S, abs=TOLERANCE_S)
    pod = _by_name(watched["pods"], f"{NS}/server-a")
    assert pod["node"] == "startup-gpu-a" and pod["working"] is True
    assert pod["image_pulls"] == [
        {
            "image": IMAGE,
            "t_s": pytest.approx(pod["bound_s"] + PULL_AFTER_S, abs=TOLERANCE_S),
            "pull_s": PULL_AFTER_S,
            "including_waiting_s": PULL_AFTER_S,
            "size_bytes": 10**10,
            "already_present": False,
        }
    ]
    # the watch saw the binding and the containers start (the objects keep whole seconds)
    assert pod["running_s"] - pod["bound_s"] == pytest.approx(PULL_AFTER_S, abs=0.5)
    stages = pod["stages"]
    assert stages["image_pull"] == PULL_AFTER_S
    assert stages["readiness"] == pytest.approx(READY_DELAY_S, abs=TOLERANCE_S)
    # pending until the node's GPUs were allocatable: no scale-up, so it is all scheduling
    assert stages["scheduling"] == pytest.approx(node["gpu_ready_s"] - pod["created_s"], abs=TOLERANCE_S)
    assert "node_provisioning" not in stages
    # each figure is rounded to the microsecond on its own: the sum and the difference may part by a few
    assert sum(stages.values()) == pytest.approx(pod["working_s"] - pod["created_s"], abs=5e-6)
    chain = watched["startup"]["node_chain"]["(no group)"]
    assert chain["devicePlugin"]["p50"] == pytest.approx(GPU_AFTER_S, abs=TOLERANCE_S)
    assert watched["startup"]["source"] == "watch"


def test_the_kwok_stages_write_the_kubelets_image_events_word_for_word(
    kubelet: ControlPlane, watched: Any
) -> None:
    """k8s.io/kubernetes v1.34.10 pkg/kubelet/images/image_manager.go: ``Pulling image %q``, then
    ``Successfully pulled image %q in %v (%v including waiting). Image size: %v bytes.``"""
    events = json.loads(kubelet.kubectl("get", "events", "-n", NS, "-o", "json"))["items"]
    said = {(e["reason"], e["message"]) for e in events if e["involvedObject"]["name"] == "server-a"}
    assert ("Pulling", pulling_message(IMAGE)) in said
    assert ("Pulled", pulled_message(IMAGE, PULL_AFTER_S, PULL_AFTER_S, 10**10)) in said
    assert (
        "Pulled",
        f'Successfully pulled image "{IMAGE}" in 2s (2s including waiting). Image size: 10000000000 bytes.',
    ) in said


def test_a_dump_gives_the_same_stages_except_what_only_the_watch_sees(
    kubelet: ControlPlane, watched: dict[str, Any], tmp_path: Path
) -> None:
    """``kubectl get pods,nodes,events -A -o json`` read by ``gpufleet startup DUMP``: the image pull
    and the pending time as the watch measured them; the moment the GPUs became allocatable is not
    in the objects, and the measurement says so."""
    dump = tmp_path / "state.json"
    dump.write_text(kubelet.kubectl("get", "pods,nodes,events", "-A", "-o", "json"))
    result = CliRunner().invoke(app, ["startup", str(dump), "-n", NS, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    pod, live = _by_name(summary["pods"], f"{NS}/server-a"), _by_name(watched["pods"], f"{NS}/server-a")
    assert pod["stages"]["image_pull"] == live["stages"]["image_pull"] == PULL_AFTER_S
    assert pod["stages"]["readiness"] == pytest.approx(live["stages"]["readiness"], abs=TOLERANCE_S)
    waited = pod["stages"]["scheduling"] + pod["stages"].get("other", 0.0) - live["stages"].get("other", 0.0)
    assert waited == pytest.approx(live["stages"]["scheduling"], abs=TOLERANCE_S)
    node = _by_name(summary["nodes"], "startup-gpu-a")
    assert node["gpu_ready_s"] is None
    assert summary["startup"]["source"] == "dump"
    assert any("gpu allocatable time not recorded in a dump" in note for note in summary["warnings"])


def test_a_watch_for_a_while_does_not_claim_moments_that_came_before_it(
    kubelet: ControlPlane, watched: dict[str, Any], tmp_path: Path
) -> None:
    """``--watch --for 1s`` on the started node and pod: their Ready and GPUs came before the watch,
    so nothing is observed; the node's Ready comes from its condition, with a note, and the moment
    its GPUs became allocatable is unknown (null), never the watch's start."""
    args = ["startup", "--kubeconfig", str(kubelet.kubeconfig), "-n", NS, "--watch", "--for", "1s"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["startup"]["source"] == "watch"
    node = _by_name(summary["nodes"], "startup-gpu-a")
    assert node["gpu_ready_s"] is None
    assert "Ready before the watch began: its time is the Ready condition's last transition" in node["notes"]
    assert any(note.startswith("GPUs allocatable before the watch began") for note in node["notes"])
    before = _by_name(watched["nodes"], "startup-gpu-a")
    assert node["ready_s"] == pytest.approx(before["ready_s"], abs=TOLERANCE_S)


# --- the real cluster-autoscaler ------------------------------------------------------------------

SCALE_UP_LINE = re.compile(r"^I(\d{4} \d\d:\d\d:\d\d\.\d{6}) .*Scale-up: setting group (\S+) size to (\d+)")


def _scale_up_time(log: Path) -> float | None:
    """When cluster-autoscaler logged its scale-up of POOL (klog's header, this machine's clock)."""
    for line in log.read_text(errors="replace").splitlines() if log.exists() else []:
        m = SCALE_UP_LINE.match(line)
        if m and m.group(2) == POOL:
            year = datetime.now().year
            return datetime.strptime(f"{year}{m.group(1)}", "%Y%m%d %H:%M:%S.%f").timestamp()
    return None


def _template() -> dict[str, Any]:
    sizes = {MIN_ANNOTATION: "0", MAX_ANNOTATION: "2", DESIRED_ANNOTATION: "0"}
    template = _gpu_node(POOL, sizes, labels={GROUP_LABEL: POOL})
    return template


def test_cluster_autoscaler_launches_the_node_and_waiting_for_it_is_measured(
    kubelet: ControlPlane, tmp_path: Path
) -> None:
    """cluster-autoscaler 1.34.5 (kwok provider, its template carrying the start-chain annotations,
    which it copies to the nodes it creates: ``kwok_nodegroups.go`` IncreaseSize) scales the pool from
    zero for a pending GPU pod; the pod's ``node_provisioning`` runs from its ``TriggeredScaleUp``
    event to the node's GPUs allocatable; the node is counted upcoming meanwhile (its GPU label
    without allocatable GPUs: ``GpuCustomResourcesProcessor``), so exactly one node is launched."""
    binary = cluster_autoscaler()
    if binary is None:
        pytest.skip("no cluster-autoscaler binary (GPUFLEET_CLUSTER_AUTOSCALER)")
    template = _template()
    _create(
        kubelet,
        _config_map("kwok-provider-config", {"config": yaml.safe_dump(_provider_config([template]))}),
        _config_map("kwok-provider-templates", {"templates": yaml.safe_dump(_node_list([template]))}),
    )
    watch = _watch(kubelet, tmp_path / "out")
    _create(kubelet, _gpu_pod("server-b", {GROUP_LABEL: POOL}))  # not on startup-gpu-a
    flags = [
        "--scan-interval=1s",
        "--expander=least-waste",
        "--scale-down-enabled=false",
        "--max-node-provision-time=5m",
        "--write-status-configmap=false",
        f"--bypassed-scheduler-names={UNUSED_SCHEDULER}",
        "--v=2",
    ]
    kubelet.start_cluster_autoscaler(binary, flags, CA_NAMESPACE)
    try:
        summary = watch.until("server-b Ready", lambda: _pod_ready(kubelet, "server-b"), 40)
    finally:
        kubelet.stop_cluster_autoscaler()
    launched = _scale_up_time(kubelet.logs / "cluster-autoscaler.log")
    assert launched is not None
    nodes = [n for n in summary["nodes"] if n["name"].startswith(f"{POOL}-")]
    assert len(nodes) == 1, nodes
    node = nodes[0]
    origin = datetime.fromisoformat(summary["startup"]["origin"]).timestamp()
    # the provider creates the node as it sets the size; the API keeps its creation in whole seconds
    assert origin + node["ready_s"] - launched == pytest.approx(READY_AFTER_S, abs=TOLERANCE_S)
    assert node["gpu_ready_s"] - node["ready_s"] == pytest.approx(GPU_AFTER_S, abs=TOLERANCE_S)
    pod = _by_name(summary["pods"], f"{NS}/server-b")
    assert pod["node"] == node["name"]
    assert pod["scale_up"]["groups"] == [f"{POOL} 0->1 (max: 2)"]
    assert pod["stages"]["node_provisioning"] == pytest.approx(
        origin + node["gpu_ready_s"] - launched, abs=TOLERANCE_S
    )
    assert pod["stages"]["image_pull"] == PULL_AFTER_S
    assert pod["stages"]["readiness"] == pytest.approx(READY_DELAY_S, abs=TOLERANCE_S)
    assert pod["notes"] == []
