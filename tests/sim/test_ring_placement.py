"""Seed 004's ring arithmetic in the simulator: placement quality shows in completion time.

A 16-rank job on 2 whole 8-GPU nodes has 2 cross-node edges and runs for its
``gpufleet.io/duration``; spread over 3 nodes (4 + 4 + 8 ranks) it has 3, its ring's slowest
edges share fewer NICs, and it takes longer (``sim.placement_quality``: stretch 1.3 with the
documented 30 % exposed communication).
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import gpu_node
from gpufleet.model.pod import Behavior, OwnerRef, Pod
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.simulation import SimulationSettings
from gpufleet.model.workloads import Created, PodGroup
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

GPU = "nvidia.com/gpu"
GI = 2**30


def gang(size: int, gpus: int) -> list[BarePod]:
    return [
        BarePod(
            Pod(
                f"rank-{i}",
                labels={"scheduling.x-k8s.io/pod-group": "t16"},
                requests={"cpu": 4000 * gpus, "memory": 32 * GI * gpus, GPU: gpus},
                restart_policy="Never",
                behavior=Behavior(duration_s=3600.0),
            ),
            Created(1.0, 10 + i),
        )
        for i in range(size)
    ]


def run(pods: list[BarePod]) -> dict[str, Any]:
    nodes = [
        gpu_node(n, 8, labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}) for n in ("a", "b", "c")
    ]
    scenario = Scenario(
        nodes=nodes,
        pods=pods,
        pod_groups={"default/t16": PodGroup("t16", "default", len([p for p in pods if p.pod.pod_group]))},
        simulation=SimulationSettings(duration_s=3 * 3600.0),
    )
    sim = Simulation(scenario)
    sim.run()
    return {p["name"]: p for p in build_summary(sim)["pods"]}


def test_two_whole_nodes_have_two_cross_node_edges_and_no_stretch() -> None:
    pods = run(gang(2, 8))
    for name in ("default/rank-0", "default/rank-1"):
        assert pods[name]["ring"] == {"ranks_per_node": [8, 8], "cross_node_edges": 2, "stretch": 1.0}
        assert pods[name]["finished_s"] - pods[name]["working_s"] == pytest.approx(3600.0)


def test_spread_over_three_nodes_has_three_edges_and_runs_longer() -> None:
    blockers = [
        BarePod(
            Pod(
                f"busy-{n}",
                requests={"cpu": 1000, GPU: 4},
                owner=OwnerRef("Job", "x"),
                behavior=Behavior(duration_s=4 * 3600.0),
            ),
            Created(0.0, k),
            bound_node=n,
            phase="Running",
        )
        for k, n in enumerate(("a", "b"))
    ]
    pods = run(blockers + gang(4, 4))
    ring = pods["default/rank-0"]["ring"]
    assert sorted(ring["ranks_per_node"]) == [4, 4, 8] and ring["cross_node_edges"] == 3
    assert ring["stretch"] == pytest.approx(1.3)
    rank = pods["default/rank-0"]
    assert rank["finished_s"] - rank["working_s"] == pytest.approx(3600.0 * 1.3)
