"""Dynamic Resource Allocation end to end (examples/dra): CEL selectors over ResourceSlice devices,
claims stamped from templates, and kube-scheduler's DynamicResources reasons (no preemption)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dra" / "claim-h100.yaml"


def test_claim_lands_on_the_node_whose_device_matches_and_an_impossible_one_waits() -> None:
    sim = Simulation(load_scenario([EXAMPLE]))
    sim.run()
    pods = {p["name"]: p for p in build_summary(sim)["pods"]}
    assert pods["default/trainer"]["node"] == "h100-0" and pods["default/trainer"]["working"]
    assert sim.state.dra is not None and set(sim.state.dra.allocated) == {"default/trainer-gpu"}
    assert pods["default/too-big"]["message"] == (
        "0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )


def test_a_finished_pod_frees_its_claims_devices() -> None:
    scenario = load_scenario([EXAMPLE])
    scenario.simulation = replace(scenario.simulation, duration_s=2 * 3600.0)  # past the trainer's hour
    sim = Simulation(scenario)
    sim.run()
    assert sim.state.dra is not None and sim.state.dra.allocated == {}


def test_pool_declared_by_gpu_model_publishes_slices_that_claims_allocate() -> None:
    """Each 8-GPU node's ResourceSlice holds two 4-GPU claims; the pool advertises no device-plugin GPUs."""
    scenario = load_scenario([EXAMPLE.parent / "pool-publishes-slices.yaml"])
    assert "nvidia.com/gpu" not in scenario.node_pools[0].template.allocatable
    sim = Simulation(scenario)
    sim.run()
    pods = build_summary(sim)["pods"]
    assert all(p["working"] for p in pods)
    assert sorted(p["node"] for p in pods) == ["h100-0", "h100-0", "h100-1", "h100-1"]
    assert sim.state.dra is not None and len(sim.state.dra.objects.slices) == 2
