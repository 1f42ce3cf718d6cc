"""One simulated day of a 500-node, 4,000-GPU cluster with autoscaling, ~5,000 training jobs
and inference traffic: wall time, events per second and peak memory of the whole run.

The cluster: 150 static 8-GPU nodes, and an H100 pool of 8-GPU nodes that cluster-autoscaler
grows up to 350 more (500 nodes, 4,000 GPUs in all) through the GPU start chain. Training
jobs of 1, 2, 4 or 8 GPUs arrive as a Poisson stream through the day and run for a lognormal
time (median 40 min). An inference Deployment of 1-GPU replicas follows a day-shaped
request rate under an HPA on ``DCGM_FI_DEV_GPU_UTIL``.
"""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass

import numpy as np

from gpufleet.autoscaling.hpa_controller import HorizontalAutoscaler  # noqa: F401  (import cost outside the timing)
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    HorizontalPodAutoscalerSpec,
    MetricIdentifier,
    MetricTarget,
    PodsMetricSource,
)
from gpufleet.model.load import Traffic
from gpufleet.model.node import Node
from gpufleet.model.pod import Behavior, Pod
from gpufleet.model.resources import GPU
from gpufleet.model.scenario import Scenario
from gpufleet.model.simulation import NodePool, SimulationSettings
from gpufleet.model.workloads import Created, Deployment, Job
from gpufleet.sim.simulation import Simulation

GI = 2**30
DAY_S = 24 * 3600.0


@dataclass(frozen=True)
class DayResult:
    nodes_static: int
    pool_max: int
    jobs: int
    hours: float
    wall_s: float
    events: int
    peak_rss_mib: float
    succeeded: int
    nodes_launched: int

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s


def gpu_node(name: str, pool: str | None = None) -> Node:
    return Node(
        name,
        labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        pool=pool,
        capacity={"cpu": 96_000, "memory": 768 * GI, "pods": 110, GPU: 8},
    )


def scenario(nodes_static: int, pool_max: int, jobs: int, hours: float, seed: int = 0) -> Scenario:
    rng = np.random.default_rng(seed)
    duration = hours * 3600
    arrivals = np.sort(rng.uniform(0, duration, jobs))
    sizes = rng.choice([1, 2, 4, 8], size=jobs, p=[0.4, 0.25, 0.2, 0.15])
    runtimes = rng.lognormal(np.log(2400), 0.8, size=jobs)
    job_list = []
    for k, (at, gpus, run) in enumerate(zip(arrivals, sizes, runtimes, strict=True)):
        template = Pod(
            "",
            requests={"cpu": 8000 * int(gpus), "memory": 64 * GI * int(gpus), GPU: int(gpus)},
            restart_policy="Never",
            behavior=Behavior(duration_s=float(run)),
        )
        job_list.append(Job(f"train-{k}", "research", template, created=Created(float(at), k)))
    server = Pod(
        "",
        labels={"app": "inference"},
        requests={"cpu": 4000, "memory": 32 * GI, GPU: 1},
        behavior=Behavior(model_size_bytes=16e9),
    )
    inference = Deployment("inference", "serving", server, replicas=8, created=Created(0.0, jobs))
    hpa = HorizontalPodAutoscalerSpec(
        CrossVersionObjectReference("Deployment", "inference", "apps/v1"),
        max_replicas=120,
        min_replicas=4,
        metrics=(
            PodsMetricSource(
                MetricIdentifier("DCGM_FI_DEV_GPU_UTIL"), MetricTarget("AverageValue", average_value=70_000)
            ),
        ),
    )
    hourly = [
        (h * 3600.0, 200 + 600 * max(0.0, np.sin(np.pi * (h - 6) / 14))) for h in range(int(np.ceil(hours)))
    ]
    traffic = Traffic("day", "serving", "inference", tuple(hourly), per_replica_rps=10)
    pool = NodePool(
        "h100",
        gpu_node("template"),
        min=0,
        max=pool_max,
        price_per_hour=30.0,
        provisioning=(
            ("boot", {"median": "90s", "p95": "180s"}),
            ("driver", "120s"),
            ("join", "20s"),
            ("devicePlugin", "15s"),
        ),
    )
    return Scenario(
        nodes=[gpu_node(f"static-{i}") for i in range(nodes_static)],
        jobs=job_list,
        deployments=[inference],
        node_pools=[pool],
        hpas=[("serving/inference", hpa)],
        traffic=[traffic],
        simulation=SimulationSettings(duration_s=duration, seed=seed, sample_interval_s=60.0),
    )


def run_day(nodes_static: int = 150, pool_max: int = 350, jobs: int = 5000, hours: float = 24.0) -> DayResult:
    sc = scenario(nodes_static, pool_max, jobs, hours)
    sim = Simulation(sc)
    start = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    succeeded = sum(1 for r in sim.records.values() if r.phase == "Succeeded")
    launched = sum(rt.next_index for rt in sim.pools.values())
    return DayResult(nodes_static, pool_max, jobs, hours, wall, sim.loop.steps, peak, succeeded, launched)


def describe_day(r: DayResult) -> str:
    return (
        f"simulate {r.hours:g} h of {r.nodes_static} static + up to {r.pool_max} autoscaled 8-GPU nodes, "
        f"{r.jobs:,} training jobs + inference traffic: {r.wall_s:.2f} s wall, {r.events:,} events = "
        f"{r.events_per_s:,.0f} events/s, peak RSS {r.peak_rss_mib:.0f} MiB; {r.succeeded:,} pods succeeded, "
        f"{r.nodes_launched} nodes launched"
    )
