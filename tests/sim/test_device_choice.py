"""A multi-GPU pod gets the best-connected free GPUs of its node (issue 4's acceptance)."""

from __future__ import annotations

from conftest import gpu_node
from gpufleet.model.pod import Behavior, Pod
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.simulation import SimulationSettings
from gpufleet.model.workloads import Created
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

GPU = "nvidia.com/gpu"


def devices_of(pods: list[tuple[str, int]], topology: str) -> dict[str, list[str]]:
    node = gpu_node("n", 8, labels={"gpufleet.io/gpu-topology": topology})
    bare = [
        BarePod(
            Pod(name, requests={"cpu": 1000, GPU: gpus}, behavior=Behavior(duration_s=3600.0)),
            Created(float(k), k),
        )
        for k, (name, gpus) in enumerate(pods)
    ]
    sim = Simulation(Scenario(nodes=[node], pods=bare, simulation=SimulationSettings(duration_s=600.0)))
    sim.run()
    return {p["name"].split("/")[1]: p["devices"] for p in build_summary(sim)["pods"]}


def test_four_gpu_pod_gets_one_nvlink_island_of_four() -> None:
    """Two NVLink islands of 4 (GPUs 0-3 and 4-7), GPU 0 already taken: the 4-GPU pod gets 4-7,
    not three GPUs of one island and one of the other."""
    got = devices_of([("one", 1), ("four", 4)], "nvlink-islands-4")
    assert got["one"] == ["0"]
    assert got["four"] == ["4", "5", "6", "7"]


def test_two_gpu_pod_keeps_the_whole_island_free() -> None:
    got = devices_of([("one", 1), ("two", 2)], "nvlink-islands-4")
    assert got["two"] == ["1", "2"]  # inside the broken island; 4-7 stay whole for a 4-GPU pod
