"""Shared builders for tests: nodes and pods in canonical units."""

from __future__ import annotations

import pytest

from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import Pod

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
