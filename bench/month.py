"""A simulated month of a 1,000-node, 8,000-GPU cluster with autoscaling and random faults: CPU time,
events per second, peak memory, the faults and the goodput of the whole run (issues 17 and 18).

Modelled on ``bench.day`` at twice its cluster and for 30 days: static 8-GPU nodes and an H100 pool
that cluster-autoscaler grows through the GPU start chain (200 + up to 800 nodes at ``scale=1``).
Training jobs of 1, 2, 4 or 8 GPUs arrive as a Poisson stream (3,000 a day), run for a lognormal time
(median 4 h) and checkpoint every 30 minutes; pre-training gangs (PodGroup, 4 x 8 GPUs, 2 days; two a
week, at least one) arrive through the span; ``bench.day``'s inference Deployment follows a day-shaped
request rate under an HPA on ``DCGM_FI_DEV_GPU_UTIL``. Every GPU node fails at the default rates of
``docs/faults.md`` (the Llama 3 paper's interruption table), from the run's seed. ``scale`` multiplies
the cluster and the training load alike; ``days`` is the span (``make bench``: a week; the whole
month with ``python -m bench --month-days 30``).
"""

from __future__ import annotations

import resource
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context

import numpy as np

from bench.day import scenario as day_scenario
from bench.day import training_jobs
from gpufleet.model.faults import DEFAULT_RATES, FaultModel, FaultRates
from gpufleet.model.pod import POD_GROUP_LABEL, Behavior, Pod
from gpufleet.model.resources import GPU
from gpufleet.model.scenario import Scenario
from gpufleet.model.workloads import Created, Job, PodGroup
from gpufleet.report.run_summary import finished_summary
from gpufleet.sim.invariants import InvariantChecks
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

GI = 2**30
#: at ``scale=1``: static nodes, the pool's ``max``, training jobs a day, pre-training gangs a week
NODES_STATIC, POOL_MAX, JOBS_PER_DAY, GANGS_PER_WEEK = 200, 800, 3_000, 2
TRAINING_MEDIAN_S = 4 * 3600.0
CHECKPOINT_S = 1800.0
#: days ``make bench`` simulates by default: the whole month takes about 5x as long (docs/performance.md)
WEEK_DAYS = 7.0
GANG_PODS, GANG_HOURS = 4, 48.0


@dataclass(frozen=True)
class MonthResult:
    nodes: int
    days: float
    jobs: int
    fault_factor: float
    cpu_s: float
    summary_cpu_s: float
    events: int
    peak_rss_mib: float
    faults: int
    goodput: float | None
    succeeded: int
    nodes_launched: int

    @property
    def events_per_s(self) -> float:
        return self.events / self.cpu_s


def default_faults(factor: float = 1.0) -> FaultModel:
    """Every GPU node at the default rates (``model.faults.DEFAULT_RATES``) times ``factor``, the default
    response."""
    rates = {name: rate * factor for name, (rate, _) in DEFAULT_RATES.items()}
    return FaultModel("defaults" if factor == 1 else f"defaults-x{factor:g}", (FaultRates("*", rates),))


def pretraining_gangs(count: int, hours: float, first: int, seed: int) -> tuple[list[Job], list[PodGroup]]:
    """``count`` 32-GPU gangs (``GANG_PODS`` ranks of 8 GPUs) arriving uniformly over ``hours``, each
    computing ``GANG_HOURS`` with a checkpoint every ``CHECKPOINT_S``; ``first`` orders their creation
    after the other workloads'."""
    rng = np.random.default_rng([seed, 1])
    jobs, groups = [], []
    for k, at in enumerate(np.sort(rng.uniform(0, hours * 3600, count))):
        name = f"pretrain-{k}"
        rank = Pod(
            "",
            labels={POD_GROUP_LABEL: name},
            requests={"cpu": 64_000, "memory": 512 * GI, GPU: 8},
            restart_policy="Never",
            behavior=Behavior(duration_s=GANG_HOURS * 3600, checkpoint_interval_s=CHECKPOINT_S),
        )
        created = Created(float(at), first + k)
        jobs.append(Job(name, "research", rank, GANG_PODS, GANG_PODS, backoff_limit=1_000, created=created))
        groups.append(PodGroup(name, "research", GANG_PODS, created=created))
    return jobs, groups


def scenario(scale: float = 1.0, days: float = 30.0, seed: int = 0, fault_factor: float = 1.0) -> Scenario:
    """The month: ``bench.day``'s cluster, pool and inference at ``scale`` times ``NODES_STATIC`` and
    ``POOL_MAX`` nodes, training jobs and gangs instead of its short jobs, and faults at the default
    rates times ``fault_factor``; ``days`` long."""
    hours = days * 24
    sc = day_scenario(round(NODES_STATIC * scale), round(POOL_MAX * scale), 0, hours, seed)
    count = round(JOBS_PER_DAY * scale * days)
    jobs = training_jobs(count, hours, seed, TRAINING_MEDIAN_S, CHECKPOINT_S, backoff_limit=1_000, first=1)
    gang_count = max(1, round(GANGS_PER_WEEK * scale * days / 7))
    gangs, groups = pretraining_gangs(gang_count, hours, len(jobs) + 2, seed)
    sc.jobs = [*jobs, *gangs]
    sc.pod_groups = {g.key: g for g in groups}
    sc.fault_model = default_faults(fault_factor)
    return sc


def run_month(
    scale: float = 1.0, days: float = 30.0, fault_factor: float = 1.0, check_invariants: bool = False
) -> MonthResult:
    """Run the month and build its summary (validated as ``gpufleet simulate`` writes it); with
    ``check_invariants``, every invariant of ``sim.invariants`` after every event (a violation raises
    ``InvariantViolation``), as ``gpufleet simulate --check-invariants`` does."""
    sc = scenario(scale, days, fault_factor=fault_factor)
    sim = Simulation(sc)
    if check_invariants:
        sim.invariants = InvariantChecks()
    start = time.process_time()
    sim.run()
    cpu = time.process_time() - start
    start = time.process_time()
    summary = finished_summary(build_summary(sim))
    summary_cpu = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return MonthResult(
        nodes=round(NODES_STATIC * scale) + round(POOL_MAX * scale),
        days=days,
        jobs=len(sc.jobs),
        fault_factor=fault_factor,
        cpu_s=cpu,
        summary_cpu_s=summary_cpu,
        events=sim.loop.steps,
        peak_rss_mib=peak,
        faults=summary["faults"]["totals"]["faults"],
        goodput=summary["faults"]["totals"]["goodput"],
        succeeded=summary["totals"]["pods_succeeded"],
        nodes_launched=sum(rt.next_index for rt in sim.pools.values()),
    )


def run_month_isolated(scale: float = 1.0, days: float = 30.0) -> MonthResult:
    """``run_month`` in a fresh interpreter, so that its peak memory is the month's own."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(run_month, scale, days).result()


def describe_month(r: MonthResult) -> str:
    goodput = "n/a" if r.goodput is None else f"{100 * r.goodput:.2f} %"
    rates = "default fault rates" if r.fault_factor == 1 else f"{r.fault_factor:g}x the default fault rates"
    return (
        f"simulate {r.days:g} d of up to {r.nodes:,} 8-GPU nodes (autoscaled), {r.jobs:,} training jobs "
        f"+ inference traffic, {rates}: {r.cpu_s:.1f} s CPU, {r.events:,} events = "
        f"{r.events_per_s:,.0f} events/s, peak RSS {r.peak_rss_mib:.0f} MiB; {r.faults} faults, goodput "
        f"{goodput}; {r.succeeded:,} pods succeeded, {r.nodes_launched} nodes launched; summary.json "
        f"built and validated in {r.summary_cpu_s:.1f} s CPU"
    )
