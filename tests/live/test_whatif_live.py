"""``gpufleet whatif`` on a snapshot of the real control plane (kube-apiserver, kube-scheduler, kwok's
nodes): the pod kube-scheduler could not place is pending on the unchanged side with the same
verdict, and starts on the changed side once one more node like the full one is added."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from conftest import kwok_node, wait_until
from gpufleet.cli import app

NS = "live-whatif"
NODES = ("whatif-gpu-a", "whatif-gpu-b")


def _pod(name: str, gpus: int, node: str | None = None) -> dict[str, Any]:
    """A pod kept on this test's nodes (required node affinity), bound by name when ``node`` is given."""
    term = {"matchExpressions": [{"key": "gpufleet-test", "operator": "In", "values": [NS]}]}
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
        ],
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        },
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def _status(cp: Any, name: str) -> dict[str, Any]:
    return dict((cp.get(f"/api/v1/namespaces/{NS}/pods/{name}") or {}).get("status") or {})


def _unschedulable(cp: Any, name: str) -> bool:
    conditions = _status(cp, name).get("conditions") or []
    return any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable" for c in conditions)


def test_whatif_on_a_live_snapshot_starts_the_pending_pod_with_one_more_node_like_a_full_one(
    control_plane: Any, tmp_path: Path
) -> None:
    cp = control_plane

    def apply(*docs: dict[str, Any]) -> None:
        cp.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))

    apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    try:
        apply(*(kwok_node(n, labels={"gpufleet-test": NS}) for n in NODES))
        apply(_pod("serve-a", 6, NODES[0]), _pod("serve-b", 6, NODES[1]))
        wait_until(
            "the bound pods",
            lambda: all(_status(cp, p).get("phase") == "Running" for p in ("serve-a", "serve-b")),
        )
        apply(_pod("big", 4))  # 4 GPUs free in all, 2 per node: kube-scheduler cannot place it
        wait_until("kube-scheduler's verdict on big", lambda: _unschedulable(cp, "big"))
        runner = CliRunner()
        snap = tmp_path / "snap"
        taken = runner.invoke(
            app, ["snapshot", "--kubeconfig", str(cp.kubeconfig), "-n", NS, "--out", str(snap)]
        )
        assert taken.exit_code == 0, taken.output
        change = tmp_path / "one-more.yaml"
        change.write_text(
            "apiVersion: gpufleet.io/v1alpha1\nkind: Change\nmetadata: {name: one-more}\n"
            f"spec:\n  addNodes:\n  - {{like: {NODES[0]}, count: 1, pricePerHour: 98.32}}\n"
        )
        out = tmp_path / "out"
        result = runner.invoke(app, ["whatif", str(snap), str(change), "--for", "10m", "--out", str(out)])
        assert result.exit_code == 0, result.output
        document = json.loads((out / "whatif.json").read_text())
        row = {r["pod"]: r for r in document["pods"]}[f"{NS}/big"]
        recorded = next(c for c in _status(cp, "big")["conditions"] if c["type"] == "PodScheduled")
        assert row["baseline"]["state"] == "pending"
        # the simulated verdict names the same reason kube-scheduler recorded for this pod
        assert "Insufficient nvidia.com/gpu" in recorded["message"]
        assert "2 Insufficient nvidia.com/gpu" in row["baseline"]["message"]
        assert row["changed"]["state"] == "started"
        assert row["changed"]["node"] == f"{NODES[0]}-whatif-0"
        assert document["changed"]["nodes_added"] == 1
        assert document["changed"]["cost"] == pytest.approx(98.32 / 6, rel=1e-3)  # one node, 10 minutes
    finally:
        cp.kubectl("delete", "namespace", NS, "--wait=false")
        cp.kubectl("delete", "node", *NODES, "--ignore-not-found")
