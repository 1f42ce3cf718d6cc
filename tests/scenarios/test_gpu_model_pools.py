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
