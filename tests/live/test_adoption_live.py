"""Adoption on a snapshot of the real control plane (kube-apiserver, kube-controller-manager,
kube-scheduler, kwok's nodes): the Deployment, ReplicaSet, Job and DaemonSet controllers made their
pods there; ``gpufleet snapshot`` writes them with their ``ownerReferences`` and the Jobs' status,
and the simulation of that snapshot adopts them (``PodControllerRefManager.ClaimPods``) instead of
creating any pod again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from conftest import kwok_node, pods_by_name, simulated, wait_until
from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.model.node import Taint

NS = "live-adopt"
NODES = ("adopt-a", "adopt-b")
LABEL = {"gpufleet-test": NS}
TAINT = Taint("gpufleet-test", NS, "NoSchedule")


def _template(app_label: str, duration: str, restart: str = "Always") -> dict[str, Any]:
    """A pod template kept on this test's tainted nodes; kwok ends its pod after ``duration``
    (e2e/kwok/stages.yaml ``pod-complete``), as the simulator does (``gpufleet.io/duration``)."""
    return {
        "metadata": {"labels": {"app": app_label}, "annotations": {"gpufleet.io/duration": duration}},
        "spec": {
            "restartPolicy": restart,
            "nodeSelector": LABEL,
            "tolerations": [
                {"key": "gpufleet-test", "operator": "Equal", "value": NS, "effect": "NoSchedule"}
            ],
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}],
        },
    }


def _workload(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": NS}, "spec": spec}


def _items(cp: Any, path: str) -> list[dict[str, Any]]:
    return list((cp.get(path) or {}).get("items") or [])


def _running(cp: Any) -> int:
    pods = _items(cp, f"/api/v1/namespaces/{NS}/pods")
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")


def _succeeded(cp: Any, job: str) -> int:
    found = cp.get(f"/apis/batch/v1/namespaces/{NS}/jobs/{job}") or {}
    return int((found.get("status") or {}).get("succeeded") or 0)


@pytest.fixture(scope="module")
def snapshot(control_plane: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Two tainted kwok nodes; a Deployment of 3 replicas, a Job of parallelism 2 (completions 4), a
    Job whose one pod completed after 1 s, and a DaemonSet on both nodes, all run by the real
    controllers; then ``gpufleet snapshot -n live-adopt``."""
    cp = control_plane
    docs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        *(kwok_node(n, 0, labels=LABEL, taints=(TAINT,)) for n in NODES),
        _workload(
            "Deployment",
            "web",
            {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": _template("web", "1h")},
        ),
        _workload(
            "Job",
            "train",
            {"parallelism": 2, "completions": 4, "template": _template("train", "1h", "Never")},
        ),
        _workload("Job", "quick", {"completions": 1, "template": _template("quick", "1s", "Never")}),
        _workload(
            "DaemonSet",
            "agent",
            {"selector": {"matchLabels": {"app": "agent"}}, "template": _template("agent", "1h")},
        ),
    ]
    cp.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))
    try:
        wait_until("3 web, 2 train and 2 agent pods Running", lambda: _running(cp) == 7)
        wait_until("the quick Job counted as succeeded", lambda: _succeeded(cp, "quick") == 1)
        out = tmp_path_factory.mktemp("adopt-snapshot")
        result = CliRunner().invoke(
            app, ["snapshot", "--kubeconfig", str(cp.kubeconfig), "-n", NS, "--out", str(out)]
        )
        assert result.exit_code == 0, result.output
        yield out
    finally:
        cp.kubectl("delete", "namespace", NS, "--wait=false")
        cp.kubectl("delete", "node", *NODES, "--ignore-not-found")


def test_each_controller_of_a_live_snapshot_adopts_the_pods_it_made(
    control_plane: Any, snapshot: Path
) -> None:
    """``getReplicaSetsForDeployment`` and ``FindNewReplicaSet``: the Deployment's ReplicaSet (the one
    kube-controller-manager made, its template equal but for ``pod-template-hash``) is folded into the
    Deployment and names its new pods; each controller holds the pods the real one made; the quick
    Job's status counts its pod (finalizer removed: ``trackJobStatusAndRemoveFinalizers``)."""
    scenario = load_scenario([snapshot])
    (replica_set,) = _items(control_plane, f"/apis/apps/v1/namespaces/{NS}/replicasets")
    assert scenario.other_workloads == []
    owned = {key: len(o.pods) for key, o in scenario.owned.items()}
    assert owned == {
        f"Deployment/{NS}/web": 3,
        f"Job/{NS}/train": 2,
        f"Job/{NS}/quick": 1,
        f"DaemonSet/{NS}/agent": 2,
    }
    assert scenario.owned[f"Deployment/{NS}/web"].replica_set == replica_set["metadata"]["name"]
    assert scenario.owned[f"Job/{NS}/quick"].succeeded == 1


def test_the_simulation_of_a_live_snapshot_creates_no_pod_again(control_plane: Any, snapshot: Path) -> None:
    """Every controller has what it wants (3 replicas, 2 active of parallelism 2, 1 of 1 completion,
    a pod on each node): simulated for a minute, the namespace holds exactly the real pods."""
    real = {f"{NS}/{p['metadata']['name']}" for p in _items(control_plane, f"/api/v1/namespaces/{NS}/pods")}
    simulated_pods = pods_by_name(simulated([snapshot], duration_s=60.0), namespaced=True)
    assert {name for name in simulated_pods if name.startswith(f"{NS}/")} == real
    assert len(real) == 8
