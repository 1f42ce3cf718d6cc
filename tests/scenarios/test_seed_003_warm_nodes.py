"""Seed 003: an HPA on DCGM_FI_DEV_GPU_UTIL against inference traffic, with and without warm nodes.

Warm nodes (started, GPU-ready, empty) let a scale-up land at once instead of waiting for a
node's start chain: the request p95 wait falls, the bill rises (idle nodes are paid for).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "seed-003"


def simulate(name: str) -> dict[str, Any]:
    sim = Simulation(load_scenario([EXAMPLES / name]))
    sim.run()
    return build_summary(sim)


def test_warm_nodes_buy_p95_latency_for_a_price() -> None:
    cold, warm = simulate("hpa-cold-nodes.yaml"), simulate("hpa-warm-nodes.yaml")
    p95_cold = cold["traffic"]["default/ai-inference"]["p95_wait_s"]
    p95_warm = warm["traffic"]["default/ai-inference"]["p95_wait_s"]
    assert p95_warm < p95_cold / 5
    assert warm["totals"]["cost"] > cold["totals"]["cost"]
    for summary in (cold, warm):
        replicas = summary["timeline"]["replicas"]["Deployment/default/ai-inference"]
        assert min(replicas) >= 2 and max(replicas) <= 20  # minReplicas / maxReplicas
        assert max(replicas) >= 10  # 100 rps at 10 rps per replica and a 70 % target
