"""A multi-GPU pod gets the best-connected free GPUs of its node (issue 4's acceptance)."""

from __future__ import annotations

from conftest import gpu_node
from gpufleet.model.pod import Behavior, Pod
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
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


def place_four(extra_config: list[ProfileConfig] | None, seed: int) -> str:
    """Node a: NVLink islands of 4 with GPUs 0-1 used (island 4-7 whole); node b: islands of 2 with
    GPUs 0-1 used (no free island of 4). Both have 6 GPUs free and the same cpu and memory used."""
    nodes = [
        gpu_node("a", 8, labels={"gpufleet.io/gpu-topology": "nvlink-islands-4"}),
        gpu_node("b", 8, labels={"gpufleet.io/gpu-topology": "nvlink-islands-2"}),
    ]
    pinned = [
        BarePod(
            Pod(
                f"used-{n}", requests={"cpu": 1000, GPU: 2}, node_name=n, behavior=Behavior(duration_s=3600.0)
            ),
            Created(0.0, k),
        )
        for k, n in enumerate(("a", "b"))
    ]
    four = BarePod(
        Pod("four", requests={"cpu": 1000, GPU: 4}, behavior=Behavior(duration_s=3600.0)), Created(1.0, 2)
    )
    config = SchedulerConfig("default-scheduler", profiles=extra_config) if extra_config else None
    scenario = Scenario(
        nodes=nodes,
        pods=[*pinned, four],
        schedulers=[config] if config else [],
        simulation=SimulationSettings(duration_s=60.0, seed=seed),
    )
    sim = Simulation(scenario)
    sim.run()
    pods = {p["name"].split("/")[1]: p for p in build_summary(sim)["pods"]}
    return f"{pods['four']['node']}:{','.join(pods['four']['devices'])}"


def test_gpu_topology_score_prefers_the_node_with_a_whole_free_island() -> None:
    """GpuTopology: on a, the 4-GPU pod gets NVLink island 4-7 (100 points); on b the best set spans
    two islands (worst link SYS: 40 points). Without it the two nodes tie on every default score."""
    profile = ProfileConfig(plugins={"multiPoint": PluginSet((PluginRef("GpuTopology", 5),))})
    assert {place_four([profile], seed) for seed in range(8)} == {"a:4,5,6,7"}
    assert {place_four(None, seed) for seed in range(8)} == {"a:4,5,6,7", "b:2,3,4,5"}  # selectHost's coin
