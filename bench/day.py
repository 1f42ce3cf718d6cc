"""One simulated day of a 500-node, 4,000-GPU cluster with autoscaling, ~5,000 training jobs
and inference traffic: CPU time, events per CPU-second and peak memory of the whole run, and the same
day at 2x and 4x the cluster and the jobs (each in a fresh interpreter), with their CPU time as a ratio
to the 1x day's: a simulation whose cost grows faster than its size shows it there.

The cluster: 150 static 8-GPU nodes, and an H100 pool of 8-GPU nodes that cluster-autoscaler
grows up to 350 more (500 nodes, 4,000 GPUs in all) through the GPU start chain. Training
jobs of 1, 2, 4 or 8 GPUs arrive as a Poisson stream through the day and run for a lognormal
time (median 40 min). An inference Deployment of 1-GPU replicas follows a day-shaped
request rate under an HPA on ``DCGM_FI_DEV_GPU_UTIL``.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context

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
#: the day: 150 static nodes, a pool of up to 350, 5,000 jobs over 24 hours; and a 2-hour CI smoke size
FULL = (150, 350, 5000, 24.0)
QUICK = (50, 20, 300, 2.0)
#: the sizes ``make bench`` runs, as multiples of the day: cost should grow with size, no faster
SCALES = (1, 2, 4)


@dataclass(frozen=True)
class DayResult:
    nodes_static: int
    pool_max: int
    jobs: int
    hours: float
    wall_s: float
    cpu_s: float
    events: int
    peak_rss_mib: float
    succeeded: int
    nodes_launched: int

    @property
    def events_per_s(self) -> float:
        return self.events / self.cpu_s


def gpu_node(name: str, pool: str | None = None) -> Node:
    return Node(
        name,
        labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        pool=pool,
        capacity={"cpu": 96_000, "memory": 768 * GI, "pods": 110, GPU: 8},
    )


def training_jobs(
    count: int,
    hours: float,
    seed: int,
    median_s: float = 2400.0,
    checkpoint_s: float | None = None,
    backoff_limit: int = 6,
    first: int = 0,
) -> list[Job]:
    """``count`` jobs of 1, 2, 4 or 8 GPUs arriving uniformly over ``hours`` (sorted), each computing a
    lognormal time of median ``median_s`` (a checkpoint every ``checkpoint_s``); creation order from
    ``first``."""
    rng = np.random.default_rng(seed)
    arrivals = np.sort(rng.uniform(0, hours * 3600, count))
    sizes = rng.choice([1, 2, 4, 8], size=count, p=[0.4, 0.25, 0.2, 0.15])
    runtimes = rng.lognormal(np.log(median_s), 0.8, size=count)
    jobs = []
    for k, (at, gpus, run) in enumerate(zip(arrivals, sizes, runtimes, strict=True)):
        template = Pod(
            "",
            requests={"cpu": 8000 * int(gpus), "memory": 64 * GI * int(gpus), GPU: int(gpus)},
            restart_policy="Never",
            behavior=Behavior(duration_s=float(run), checkpoint_interval_s=checkpoint_s),
        )
        created = Created(float(at), first + k)
        jobs.append(Job(f"train-{k}", "research", template, backoff_limit=backoff_limit, created=created))
    return jobs


def scenario(nodes_static: int, pool_max: int, jobs: int, hours: float, seed: int = 0) -> Scenario:
    duration = hours * 3600
    job_list = training_jobs(jobs, hours, seed)
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
    start, cpu = time.perf_counter(), time.process_time()
    sim.run()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    succeeded = sum(1 for r in sim.records.values() if r.phase == "Succeeded")
    launched = sum(rt.next_index for rt in sim.pools.values())
    steps = sim.loop.steps
    return DayResult(nodes_static, pool_max, jobs, hours, wall, cpu, steps, peak, succeeded, launched)


def run_isolated(nodes_static: int, pool_max: int, jobs: int, hours: float) -> DayResult:
    """``run_day`` in a fresh interpreter, so peak memory is the day's own."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(run_day, nodes_static, pool_max, jobs, hours).result()


def run_sizes(scales: Sequence[int] = SCALES, base: tuple[int, int, int, float] = FULL) -> list[DayResult]:
    """The same day at each scale: the cluster (static nodes, pool) and the jobs times the scale."""
    nodes_static, pool_max, jobs, hours = base
    return [run_isolated(nodes_static * k, pool_max * k, jobs * k, hours) for k in scales]


def describe_day(r: DayResult, first: DayResult | None = None) -> str:
    """One line; with ``first`` (the smallest size), the CPU time as a ratio to it."""
    nodes = first.nodes_static + first.pool_max if first else 0
    ratio = f" ({r.cpu_s / first.cpu_s:.2f}x the {nodes}-node day)" if first else ""
    return (
        f"simulate {r.hours:g} h of {r.nodes_static} static + up to {r.pool_max} autoscaled 8-GPU nodes, "
        f"{r.jobs:,} training jobs + inference traffic: {r.cpu_s:.2f} s CPU{ratio}, {r.wall_s:.2f} s wall, "
        f"{r.events:,} events = {r.events_per_s:,.0f} events/CPU-s, peak RSS {r.peak_rss_mib:.0f} MiB; "
        f"{r.succeeded:,} pods succeeded, {r.nodes_launched} nodes launched"
    )


def describe_sizes(results: list[DayResult]) -> list[str]:
    return [describe_day(r, results[0] if k else None) for k, r in enumerate(results)]
