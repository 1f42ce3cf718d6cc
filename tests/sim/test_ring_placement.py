"""Seed 004's ring arithmetic in the simulator: placement quality shows in completion time.

A 16-rank job on 2 whole 8-GPU nodes has 2 cross-node edges and runs for its
``gpufleet.io/duration``; spread over 3 nodes (4 + 4 + 8 ranks) it has 3, its ring's slowest
edges share fewer NICs, and it takes longer (``sim.placement_quality``: stretch 1.3 with the
documented 30 % exposed communication).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.sim.test_faults import job

from conftest import coscheduling, gpu_node, write
from gpufleet.kube import load_scenario
from gpufleet.model.pod import Behavior, OwnerRef, Pod
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.simulation import SimulationSettings
from gpufleet.model.workloads import Created, PodGroup
from gpufleet.sim.invariants import InvariantChecks
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


# Two autoscaled nodes of 4 A100s, each time-sliced 4 ways.
TIME_SLICED_POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: pool0}
spec:
  min: 0
  max: 3
  replicas: 2
  gpu: {model: A100-80GB, count: 4, timeSlicingReplicas: 4}
  provisioning: {boot: 30s, devicePlugin: 30s}
  template:
    status:
      capacity: {cpu: "64", memory: 512Gi, pods: "110"}
"""


def test_a_gang_resumed_on_another_ring_keeps_its_progress_as_a_share_of_its_task(tmp_path: Path) -> None:
    """Two ranks on time-sliced GPUs of two nodes: their ring stretches 5 min of compute to 17,490 s. At
    610 s (the first scan after 10 min unneeded) cluster-autoscaler scales one node down and drains it
    ``--node-delete-delay-after-taint`` (5 s) later (``deleteNodesAsync``); the gang stops at 615 s with
    600 s checkpointed, 3.4 % of its task.
    The rank made again (at 625 s, after the pod failure backoff: the Job's default ``podReplacementPolicy``,
    ``TerminatingOrFailed``, replaces the drained rank while it terminates, and a terminating rank is in no
    ring) joins the other on one node, a ring of stretch 1: the rank that waited resumes
    3.4 % of the way through 300 s, not past its end (it finished at once, its progress falling from 600 s
    to 300 s: the checkpoint-kept invariant's random scenario)."""
    gang = job("train", 2, 1, "5m", checkpoint="2m", gang=True).replace(  # (cpu requests spread the ranks)
        "limits: {nvidia.com/gpu: 1}", 'requests: {cpu: "4"}\n          limits: {nvidia.com/gpu: 1}'
    )
    sim = Simulation(load_scenario(write(tmp_path, TIME_SLICED_POOL, gang, coscheduling())))
    sim.invariants = InvariantChecks()
    sim.run()
    rank = sim.records["default/train-1"]
    assert rank.ring is not None and rank.ring.stretch == 1.0
    assert rank.finished_s == pytest.approx(625.0 + 300.0 * (1 - 600.0 / 17490.0))
