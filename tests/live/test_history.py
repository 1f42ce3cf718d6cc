"""``gpufleet history`` against a real Prometheus (Debian's package) scraping a real kube-state-metrics
(v2.18.0) on the test control plane: a workload really runs there (two Jobs, one a two-pod gang, a
bare pod, a server still running), and the scenario built from the metrics replays it.

kube-state-metrics reports ``kube_pod_created`` (``metadata.creationTimestamp``),
``kube_pod_start_time`` (``status.startTime``) and ``kube_pod_completion_time`` (the latest
container ``finishedAt``) in whole seconds (``internal/store/pod.go``), so the replayed submit times
and durations equal the real ones within a second.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e.controlplane import KWOK_NODE_ANNOTATION, ControlPlane, free_port
from typer.testing import CliRunner

from conftest import pods_by_name, simulated, wait_until
from gpufleet.cli import app
from gpufleet.kube.manifests import node_manifest
from gpufleet.model.node import Node, Taint
from gpufleet.model.quantity import parse_duration

GPU = "nvidia.com/gpu"
TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")
TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
GANG = "scheduling.x-k8s.io/pod-group"
#: the scrape interval and kube-state-metrics' whole seconds
TOLERANCE_S = 1.0 + 1.0


def _node(name: str) -> dict[str, Any]:
    node = Node(
        name,
        labels={
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            "node.kubernetes.io/instance-type": "p5.48xlarge",
            "gpufleet.io/node-pool": "history",
        },
        taints=(TAINT,),
        capacity={"cpu": 32_000, "memory": 256 * 2**30, "pods": 110, GPU: 4},
    )
    return node_manifest(node, {KWOK_NODE_ANNOTATION: "fake"})


def _pod_spec(gpus: int, duration: str | None, cpu: str = "1") -> dict[str, Any]:
    resources = {"requests": {"cpu": cpu, "memory": "2Gi", GPU: str(gpus)}, "limits": {GPU: str(gpus)}}
    return {
        "restartPolicy": "Never",
        "tolerations": [TOLERATION],
        "containers": [{"name": "main", "image": "registry.example.com/train:v1", "resources": resources}],
    }


def _template(gpus: int, duration: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"annotations": {"gpufleet.io/duration": duration}}
    if labels:
        metadata["labels"] = labels
    return {"metadata": metadata, "spec": _pod_spec(gpus, duration)}


def _job(
    ns: str,
    name: str,
    pods: int,
    gpus: int,
    duration: str,
    labels: dict[str, str] | None = None,
    node_selector: dict[str, str] | None = None,
) -> Any:
    template = _template(gpus, duration, labels)
    if node_selector:
        template["spec"]["nodeSelector"] = node_selector
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"parallelism": pods, "completions": pods, "template": template},
    }


def _bare(ns: str, name: str, gpus: int, duration: str | None) -> Any:
    annotations = {"gpufleet.io/duration": duration} if duration else {}
    spec = _pod_spec(gpus, duration)
    if duration is None:
        spec["restartPolicy"] = "Always"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations},
        "spec": spec,
    }


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


@pytest.fixture
def workload(control_plane: ControlPlane) -> Iterator[tuple[str, list[str]]]:
    """A namespace and two kwok GPU nodes, deleted afterwards."""
    ns = f"history-{uuid.uuid4().hex[:6]}"
    nodes = [f"{ns}-gpu-{i}" for i in range(2)]
    control_plane.kubectl("create", "namespace", ns)
    for name in nodes:
        control_plane.kubectl("create", "-f", "-", stdin=json.dumps(_node(name)))
    yield ns, nodes
    control_plane.kubectl("delete", "namespace", ns, "--wait=false")
    control_plane.kubectl("delete", "pods", "--all", "-n", ns, "--grace-period=0", "--force", "--wait=false")
    control_plane.kubectl("delete", "nodes", *nodes, "--wait=true")


def test_history_replays_the_pods_kube_state_metrics_recorded(
    control_plane: ControlPlane, prometheus: Any, workload: tuple[str, list[str]], tmp_path: Path
) -> None:
    """Each real pod is in the scenario with its real submit time and duration (kube_pod_created,
    kube_pod_start_time, kube_pod_completion_time), its requests, its Job (ownerReferences from the
    Job controller's batch.kubernetes.io/controller-uid label) and its gang (a PodGroup); the
    scenario simulates, its pods computing for those durations, and compare --scenario takes it."""
    ns, nodes = workload
    window_start = float(int(time.time()))
    documents = [
        _job(ns, "train", 1, 2, "4s"),
        _job(ns, "gang", 2, 1, "3s", {GANG: "gang"}, {"kubernetes.io/hostname": nodes[1]}),
        _bare(ns, "solo", 1, "2s"),
        _bare(ns, "serve", 1, None),
    ]
    control_plane.kubectl(
        "create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": documents})
    )

    def pods() -> dict[str, dict[str, Any]]:
        items = (control_plane.get(f"/api/v1/namespaces/{ns}/pods") or {}).get("items", [])
        return {p["metadata"]["name"]: p for p in items}

    def finished() -> dict[str, dict[str, Any]] | None:
        now = pods()
        done = [p for p in now.values() if p["status"].get("phase") == "Succeeded"]
        running = now.get("serve", {}).get("status", {}).get("phase") == "Running"
        return now if len(done) == 4 and running else None

    real = wait_until("the workload to finish", finished, 60)
    prometheus.wait_scraped(f'count(kube_pod_completion_time{{namespace="{ns}"}}) == 4')
    until = time.time()
    out = tmp_path / "history"
    result = CliRunner().invoke(
        app,
        [
            "history",
            "--prometheus", prometheus.url,
            "--since", f"{until - window_start:.3f}s",
            "--until", f"{until:.3f}",
            "--namespace", ns,
            "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {out}: 5 pods (2 Jobs, 1 gang), ")

    written = {d["metadata"]["name"]: d for d in yaml.safe_load_all((out / "pods.yaml").read_text())}
    assert sorted(written) == sorted(real)
    for name, pod in real.items():
        annotations = written[name]["metadata"]["annotations"]
        created = _ts(pod["metadata"]["creationTimestamp"]) - window_start
        assert abs(parse_duration(annotations["gpufleet.io/submit-at"]) - created) <= TOLERANCE_S, name
        if name == "serve":
            assert "gpufleet.io/duration" not in annotations
            assert annotations["history.gpufleet.io/ended"] == "still Running at the window's end (runs on)"
            continue
        ran = _ts(pod["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"]) - _ts(
            pod["status"]["startTime"]
        )
        assert abs(parse_duration(annotations["gpufleet.io/duration"]) - ran) <= TOLERANCE_S, name
        assert annotations["history.gpufleet.io/node"] in nodes
        container = written[name]["spec"]["containers"][0]
        assert container["resources"] == {
            "requests": {"cpu": "1", "memory": "2Gi", GPU: "2" if name.startswith("train") else "1"},
            "limits": {GPU: "2" if name.startswith("train") else "1"},
        }
        assert sorted(written[name]["spec"]["tolerations"], key=str) == sorted(
            pod["spec"]["tolerations"], key=str
        )
        assert TOLERATION in written[name]["spec"]["tolerations"]
        owner = pod["metadata"].get("ownerReferences")
        if owner:
            assert written[name]["metadata"]["ownerReferences"] == [
                {k: owner[0][k] for k in ("apiVersion", "kind", "name", "uid")} | {"controller": True}
            ]
    gang = [n for n, d in written.items() if d["metadata"].get("labels", {}).get(GANG) == "gang"]
    assert len(gang) == 2 and all(n.startswith("gang-") for n in gang)
    assert all(written[n]["spec"]["nodeSelector"] == {"kubernetes.io/hostname": nodes[1]} for n in gang)
    (group,) = yaml.safe_load_all((out / "podgroups.yaml").read_text())
    assert group["metadata"] == {"name": "gang", "namespace": ns} and group["spec"] == {"minMember": 2}
    node_docs = {d["metadata"]["name"]: d for d in yaml.safe_load_all((out / "nodes.yaml").read_text())}
    for name in nodes:
        assert node_docs[name]["status"]["allocatable"][GPU] == "4"
        assert node_docs[name]["spec"]["taints"] == [
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
        ]
        assert node_docs[name]["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "p5.48xlarge"

    result = CliRunner().invoke(app, ["simulate", str(out), "--out", str(tmp_path / "simulated")])
    assert result.exit_code == 0, result.output
    # run past the window, in case the simulated queue placed a pod later than the real one was
    by_name = pods_by_name(simulated([out], duration_s=600.0))
    for name, doc in written.items():
        duration = doc["metadata"]["annotations"].get("gpufleet.io/duration")
        if duration is None:
            assert by_name[name]["phase"] == "Running"
            continue
        record = by_name[name]
        assert record["phase"] == "Succeeded", name
        assert record["finished_s"] - record["working_s"] == pytest.approx(parse_duration(duration)), name

    compared = tmp_path / "compared"
    result = CliRunner().invoke(
        app, ["compare", "--scenario", str(out), "--seeds", "1", "--jobs", "1", "--out", str(compared)]
    )
    assert result.exit_code == 0, result.output


def test_history_says_in_one_line_that_prometheus_is_unreachable(tmp_path: Path) -> None:
    """A closed port: one line naming the URL and the reason, exit status 2, after the retries."""
    url = f"http://127.0.0.1:{free_port()}"
    result = CliRunner().invoke(
        app, ["history", "--prometheus", url, "--since", "1h", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert result.output == f"--prometheus {url}: cannot connect: Connection refused (after 3 attempts)\n"


def test_history_says_in_one_line_that_the_window_has_no_kube_state_metrics_series(
    prometheus: Any, tmp_path: Path
) -> None:
    """A window before Prometheus started: no pod or node series, one line, exit status 2."""
    until = "2001-09-09T01:46:40Z"
    args = ["--prometheus", prometheus.url, "--since", "1h", "--until", until, "--out", str(tmp_path / "x")]
    result = CliRunner().invoke(app, ["history", *args])
    assert result.exit_code == 2
    assert result.output == (
        f"{prometheus.url}: no kube_pod_created or kube_node_created series between 2001-09-09T00:46:40Z "
        "and 2001-09-09T01:46:40Z: is Prometheus scraping kube-state-metrics?\n"
    )
    assert not (tmp_path / "x").exists()
