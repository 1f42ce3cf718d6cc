"""Seed 004's gang-scheduling table, reproduced end to end from the YAML in examples/seed-004.

Three 8-GPU nodes; S4a and S4b (4 GPUs), T16 (a gang of two 8-GPU pods) and T8 arrive in
that order; state after one hour. Checked for several seeds: no outcome rests on a tie.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "seed-004"
SEEDS = [0, 1, 2, 3, 42]
T16_1_MESSAGE = (
    "0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 3 Insufficient nvidia.com/gpu. "
    "no new claims to deallocate, preemption: 0/3 nodes are available: "
    "3 No preemption victims found for incoming pod."
)


def simulate(name: str, seed: int) -> dict[str, Any]:
    sim = Simulation(load_scenario([EXAMPLES / name]), seed=seed)
    sim.run()
    return build_summary(sim)


def pods(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"].split("/")[1]: p for p in summary["pods"]}


@pytest.mark.parametrize("seed", SEEDS)
def test_default_scheduler_binds_half_the_gang_and_t8_waits(seed: int) -> None:
    summary = simulate("default-scheduler.yaml", seed)
    assert summary["totals"]["gpus_allocated"] == 16
    assert summary["totals"]["gpus_working"] == 8
    p = pods(summary)
    assert p["t8-0"]["phase"] == "Pending"
    assert p["t16-0"]["phase"] == "Running" and not p["t16-0"]["working"]
    assert p["t16-1"]["phase"] == "Pending"
    assert p["t16-1"]["message"] == T16_1_MESSAGE
    assert p["s4a-0"]["node"] != p["s4b-0"]["node"]  # LeastAllocated on cpu and memory spreads them
    assert {p["s4a-0"]["node"], p["s4b-0"]["node"], p["t16-0"]["node"]} == {"node-a", "node-b", "node-c"}
    gang = p["t16-1"]["diagnosis"]["gang"]
    assert gang == {
        "name": "default/t16",
        "min_member": 2,
        "members": 2,
        "members_bound": 1,
        "members_that_fit": 0,
        "gpus_needed": 8,
    }
    assert any(
        "8 GPUs are free in total but no node has 8 free" in h for h in p["t8-0"]["diagnosis"]["hints"]
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_coscheduling_holds_nothing_for_the_gang_and_t8_runs(seed: int) -> None:
    summary = simulate("coscheduling.yaml", seed)
    assert summary["totals"]["gpus_working"] == 16
    assert summary["totals"]["gpus_allocated"] == 16
    p = pods(summary)
    assert p["t8-0"]["working"]
    for member in ("t16-0", "t16-1"):
        assert p[member]["phase"] == "Pending" and p[member]["node"] is None
    assert p["t16-1"]["message"] == (
        T16_1_MESSAGE
        + ", PodGroup default/t16 gets rejected due to Pod t16-1 is unschedulable even after PostFilter"
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_most_allocated_with_gpu_weight_packs_small_jobs_and_runs_the_gang(seed: int) -> None:
    summary = simulate("most-allocated.yaml", seed)
    assert summary["totals"]["gpus_working"] == 24
    p = pods(summary)
    assert p["s4a-0"]["node"] == p["s4b-0"]["node"]
    assert p["t16-0"]["working"] and p["t16-1"]["working"]
    assert p["t8-0"]["phase"] == "Pending"


@pytest.mark.parametrize("seed", SEEDS)
def test_interleaved_gangs_deadlock_under_the_default_scheduler(seed: int) -> None:
    summary = simulate("deadlock-default-scheduler.yaml", seed)
    assert summary["totals"]["gpus_allocated"] == 16
    assert summary["totals"]["gpus_working"] == 0
    bound = [q for q in summary["pods"] if q["node"]]
    assert sorted(q["name"] for q in bound) in (["default/train-a-0", "default/train-b-0"],)


@pytest.mark.parametrize("seed", SEEDS)
def test_coscheduling_breaks_the_deadlock(seed: int) -> None:
    summary = simulate("deadlock-coscheduling.yaml", seed)
    assert summary["totals"]["gpus_working"] == 16
    p = pods(summary)
    assert p["train-a-0"]["working"] and p["train-a-1"]["working"]
    assert p["train-b-0"]["node"] is None and p["train-b-1"]["node"] is None


def test_stages_add_up_to_pending_to_working() -> None:
    """DESIGN: stages add up to working_s - created_s; the gang wait is its own stage."""
    summary = simulate("most-allocated.yaml", 0)
    for pod in summary["pods"]:
        if pod["working_s"] is not None:
            assert sum(pod["stages"].values()) == pytest.approx(pod["working_s"] - pod["created_s"])
