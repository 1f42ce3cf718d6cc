"""Kueue topology-aware admission of a gang (``kueue.x-k8s.io/podset-required-topology``): a gang that
requires one rack waits rather than spread; one that only prefers a rack falls back to spreading."""

from __future__ import annotations

from typing import Any

from conftest import gpu_node
from gpufleet.model.pod import Behavior, OwnerRef, Pod
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.simulation import SimulationSettings
from gpufleet.model.workloads import Created, PodGroup
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

GPU = "nvidia.com/gpu"
RACK = "topology.kubernetes.io/rack"


def run(annotation: str | None) -> dict[str, Any]:
    nodes = [
        gpu_node(n, 8, labels={RACK: rack})
        for n, rack in (("a", "r1"), ("b", "r1"), ("c", "r2"), ("d", "r2"))
    ]
    busy = [
        BarePod(
            Pod(
                f"busy-{n}",
                requests={"cpu": 1000, GPU: 4},
                owner=OwnerRef("Job", "x"),
                behavior=Behavior(duration_s=7200.0),
            ),
            Created(0.0, k),
            bound_node=n,
            phase="Running",
        )
        for k, n in enumerate(("a", "c"))
    ]
    notes = {annotation: RACK} if annotation else {}
    gang = [
        BarePod(
            Pod(
                f"rank-{i}",
                labels={"scheduling.x-k8s.io/pod-group": "g"},
                annotations=dict(notes),
                requests={"cpu": 8000, GPU: 8},
                behavior=Behavior(duration_s=3600.0),
            ),
            Created(1.0, 10 + i),
        )
        for i in range(2)
    ]
    scenario = Scenario(
        nodes=nodes,
        pods=busy + gang,
        pod_groups={"default/g": PodGroup("g", "default", 2)},
        simulation=SimulationSettings(duration_s=1800.0),
    )
    sim = Simulation(scenario)
    sim.run()
    return {p["name"].split("/")[1]: p for p in build_summary(sim)["pods"]}


def test_gang_requiring_one_rack_waits_rather_than_spread() -> None:
    pods = run("kueue.x-k8s.io/podset-required-topology")
    for rank in ("rank-0", "rank-1"):
        assert pods[rank]["phase"] == "Pending" and pods[rank]["node"] is None
        assert pods[rank]["message"].startswith(f"waiting for topology admission: no {RACK} domain has room")


def test_gang_preferring_one_rack_spreads_when_no_rack_fits() -> None:
    pods = run("kueue.x-k8s.io/podset-preferred-topology")
    assert {pods["rank-0"]["node"], pods["rank-1"]["node"]} == {"b", "d"}
    assert pods["rank-0"]["working"] and pods["rank-1"]["working"]
