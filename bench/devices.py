"""The single-GPU placement case again, through the whole simulator: device-level allocation on.

Each bound pod gets a device unit (a GPU index) and counts in GPU-equivalents; the figure is
pods placed per second of simulation (one instant: every pod is created at 0 and bound then),
to set beside the scheduler-only figure of ``bench.scheduling``.
"""

from __future__ import annotations

import time

from gpufleet.model.node import Node
from gpufleet.model.pod import Behavior, Pod
from gpufleet.model.resources import CPU, GPU, MEMORY, PODS
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.simulation import SimulationSettings
from gpufleet.model.workloads import Created
from gpufleet.sim.simulation import Simulation

GI = 2**30


def run_devices(nodes: int, pods: int) -> tuple[float, int]:
    """(seconds, pods bound) for ``pods`` 1-GPU pods on ``nodes`` 8-GPU nodes, devices allocated."""
    labels = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory": "81559"}
    cluster = [
        Node(
            f"node-{i:05d}", labels=dict(labels), capacity={CPU: 96_000, MEMORY: 768 * GI, PODS: 110, GPU: 8}
        )
        for i in range(nodes)
    ]
    bare = [
        BarePod(
            Pod(
                f"pod-{k:06d}",
                requests={CPU: 8000, MEMORY: 64 * GI, GPU: 1},
                behavior=Behavior(duration_s=60.0),
            ),
            Created(0.0, k),
        )
        for k in range(pods)
    ]
    sim = Simulation(Scenario(nodes=cluster, pods=bare, simulation=SimulationSettings(duration_s=1.0)))
    start = time.perf_counter()
    sim.run()
    seconds = time.perf_counter() - start
    return seconds, sum(1 for r in sim.records.values() if r.devices)


def describe_devices(nodes: int, pods: int) -> str:
    seconds, bound = run_devices(nodes, pods)
    return (
        f"place single-GPU pods with device-level allocation (whole simulator): {nodes:,} nodes, "
        f"{bound:,}/{pods:,} bound with a device in {seconds:.2f} s = {bound / seconds:,.0f} pods/s"
    )
