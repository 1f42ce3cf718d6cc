"""cluster-autoscaler's default scale-down against gpufleet's gpuAwareScaleDown, from examples/scale-down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scale-down"


def totals(name: str) -> dict[str, Any]:
    sim = Simulation(load_scenario([EXAMPLES / name]))
    sim.run()
    return dict(build_summary(sim)["totals"])


def test_upstream_defaults_drain_under_training_and_gpu_aware_option_does_not() -> None:
    upstream, aware = totals("upstream-defaults.yaml"), totals("gpu-aware.yaml")
    # upstream: one node scaled down at the first scan after 10 minutes unneeded (610 s, unneeded since the
    # scan at 0 s) and drained --node-delete-delay-after-taint (5 s) later (deleteNodesAsync); 3 GPUs x 615 s
    # since the checkpoint lost
    assert upstream["pods_disrupted"] == 1 and upstream["work_lost_s"] == 3 * 615
    assert aware["pods_disrupted"] == 0 and aware["work_lost_s"] == 0
    assert upstream["pods_succeeded"] == aware["pods_succeeded"] == 2
    assert upstream["cost"] < aware["cost"]  # the protection is paid for in node-hours
