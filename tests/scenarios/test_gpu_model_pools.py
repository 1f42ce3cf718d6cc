"""Node pools declared by GPU model: capacity and GPU Feature Discovery labels from the catalog."""

from __future__ import annotations

from pathlib import Path

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gpu-models" / "h100-mig-pool.yaml"


def test_h100_in_mixed_mig_with_seven_1g10gb_advertises_them() -> None:
    """GPU Operator MIG docs: mixed strategy exposes nvidia.com/mig-1g.10gb: 7 for one H100 80GB."""
    pools = {p.name: p for p in load_scenario([EXAMPLE]).node_pools}
    mig = pools["h100-mig"].template
    assert mig.allocatable["nvidia.com/mig-1g.10gb"] == 7 and "nvidia.com/gpu" not in mig.allocatable
    assert mig.labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert mig.labels["nvidia.com/mig.strategy"] == "mixed"
    assert pools["l4"].template.allocatable["nvidia.com/gpu"] == 1
    assert pools["h100-mig"].price_per_hour > 0  # the catalog's default price


def test_seven_notebooks_share_one_h100_by_mig_instances() -> None:
    sim = Simulation(load_scenario([EXAMPLE]))
    sim.run()
    summary = build_summary(sim)
    notebooks = [p for p in summary["pods"] if p["name"].startswith("default/notebooks")]
    assert len(notebooks) == 7 and all(p["node"] == "h100-mig-0" for p in notebooks)
    assert sorted(p["devices"][0] for p in notebooks) == [f"1g.10gb-{i}" for i in range(7)]
    assert {n["name"]: n["gpus"] for n in summary["nodes"]} == {"h100-mig-0": 1.0, "l4-0": 1.0}


def test_a_new_mig_node_advertises_its_instances_only_once_its_device_plugin_runs(tmp_path: Path) -> None:
    """The GPU start chain: the node joins without device-plugin resources (MIG instances included)
    and a pod asking for ``nvidia.com/mig-1g.10gb`` binds only when the device plugin registers them."""
    (tmp_path / "s.yaml").write_text(
        """apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: mig}
spec:
  min: 0
  max: 1
  gpu: {model: H100-80GB, count: 1, migStrategy: mixed, migConfig: all-1g.10gb}
  template:
    status:
      capacity: {cpu: "32", memory: 256Gi, pods: "110"}
  provisioning: {boot: 60s, driver: 90s, join: 20s, devicePlugin: 15s}
---
apiVersion: v1
kind: Pod
metadata: {name: notebook}
spec:
  containers:
  - name: nb
    image: jupyter:v1
    resources: {requests: {cpu: "1", memory: 4Gi}, limits: {nvidia.com/mig-1g.10gb: 1}}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: mig-start}
spec: {duration: 30m}
"""
    )
    sim = Simulation(load_scenario([tmp_path / "s.yaml"]))
    sim.run()
    summary = build_summary(sim)
    node = summary["nodes"][0]
    pod = summary["pods"][0]
    assert node["gpu_ready_s"] > node["ready_s"]
    assert pod["bound_s"] == node["gpu_ready_s"] and pod["devices"] == ["1g.10gb-0"]
