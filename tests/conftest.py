"""Shared builders for tests: nodes and pods in canonical units, and scenarios run to their summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gpufleet.kube import load_scenario
from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import Pod
from gpufleet.report import simulation_summary
from gpufleet.sim.simulation import Simulation

GPU = "nvidia.com/gpu"
GI = 2**30


def gpu_node(
    name: str,
    gpus: int = 8,
    cpu: int = 96,
    mem_gi: int = 768,
    taints: tuple[Taint, ...] = (),
    labels: dict[str, str] | None = None,
) -> Node:
    return Node(
        name,
        labels=dict(labels or {}),
        taints=taints,
        capacity={"cpu": cpu * 1000, "memory": mem_gi * GI, "pods": 110, GPU: gpus},
    )


def gpu_pod(name: str, gpus: int, cpu: int | None = None, mem_gi: int | None = None, **kw: object) -> Pod:
    cpu = gpus * 8 if cpu is None else cpu
    mem_gi = gpus * 64 if mem_gi is None else mem_gi
    requests = {"cpu": cpu * 1000, "memory": mem_gi * GI}
    if gpus:
        requests[GPU] = gpus
    return Pod(name, requests=requests, **kw)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def no_ray_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sweeps run where a test tells them (processes, or ``--ray local``), never on a Ray cluster
    that ``RAY_ADDRESS`` in the caller's environment names."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


def simulated(
    paths: Sequence[Path], seed: int | None = None, duration_s: float | None = None
) -> dict[str, Any]:
    """The scenario run to its end (or ``duration_s``) with ``seed`` (else its own): ``summary.json``'s
    content as ``gpufleet simulate`` writes it (with ``latency`` and ``jobs``, checked against the
    schema)."""
    scenario = load_scenario(list(paths))
    if duration_s is not None:
        scenario = replace(scenario, simulation=replace(scenario.simulation, duration_s=duration_s))
    sim = Simulation(scenario, seed=seed)
    sim.run()
    return simulation_summary(sim)


def pods_by_name(summary: dict[str, Any], namespaced: bool = False) -> dict[str, dict[str, Any]]:
    """The summary's pod records by name (``namespace/name`` with ``namespaced``)."""
    return {(p["name"] if namespaced else p["name"].split("/", 1)[1]): p for p in summary["pods"]}
