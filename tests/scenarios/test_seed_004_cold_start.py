"""Seed 004's cold-start arithmetic: model load over shared storage, shared fairly."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "seed-004-cold-start"


@pytest.mark.parametrize(
    ("name", "replicas", "load_s"), [("one-replica.yaml", 1, 14.0), ("eight-replicas.yaml", 8, 112.0)]
)
def test_model_load_shares_storage_bandwidth_fairly(name: str, replicas: int, load_s: float) -> None:
    """140 GB at 10 GB/s: 14 s alone; eight replicas at once read 1,120 GB, 112 s each."""
    sim = Simulation(load_scenario([EXAMPLES / name]))
    sim.run()
    pods = build_summary(sim)["pods"]
    assert len(pods) == replicas
    for pod in pods:
        assert pod["stages"] == {"model_load": load_s}
        assert pod["working_s"] - pod["running_s"] == pytest.approx(load_s)
