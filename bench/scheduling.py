"""Cases that time ``Scheduler.run`` on uniform clusters of 8-GPU nodes.

Only scheduling is timed: nodes, pods, the queue and the scheduler are built first. Peak
memory is the process's maximum resident set (``ru_maxrss``); each case runs in a fresh
process unless asked otherwise, so the figure is that case's own.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import resource
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from multiprocessing import get_context

from gpufleet.cluster.state import ClusterState
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.node import Node
from gpufleet.model.pod import POD_GROUP_LABEL, OwnerRef, Pod
from gpufleet.model.resources import CPU, GPU, MEMORY, PODS
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.model.workloads import PodGroup
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.scheduler import Scheduler

GI = 2**30
DEFAULT_SCHEDULER = "default-scheduler"
GANG_SCHEDULER = "gang-scheduler"
SINGLE = "place single-GPU pods on clusters of 8-GPU nodes"
GANGS = "place 16-pod gangs of 8 GPUs"
SHARES = "place half-GPU shares, each on a GPU of the scheduler's choosing (device level)"
BARE = "place single-GPU pods on zoned 8-GPU nodes"
SPREAD = "place Deployment pods with the default topology spreading"
HOSTNAME, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
COLUMNS = ("case", "nodes", "pods", "score%", "bound", "wall s", "cpu s", "pods/s", "ms/gang", "gangs", "MiB")


@dataclass(frozen=True)
class Case:
    title: str
    nodes: int
    pods: int = 0  # single-GPU pods
    gangs: int = 0  # gangs of ``gang_size`` 8-GPU pods
    gang_size: int = 16
    percentage: int | None = None  # percentageOfNodesToScore; None is upstream's adaptive default
    share_milli: int | None = None  # the single pods ask for this share of one GPU instead of a GPU
    zones: int = 0  # the nodes carry hostname and zone labels, spread over this many zones
    owner: str | None = None  # the single pods' controller kind (a Deployment: default spreading)

    @property
    def total_pods(self) -> int:
        return self.pods + self.gangs * self.gang_size

    @property
    def setting(self) -> str:
        return "adaptive" if self.percentage is None else f"{self.percentage}%"


@dataclass(frozen=True)
class Result:
    case: Case
    seconds: float  # wall-clock, in Scheduler.run only
    cpu_seconds: float  # this process's CPU time in Scheduler.run (steadier on a shared machine)
    bound: int
    gangs_bound: int
    peak_rss_mib: float
    profile: str = ""

    @property
    def pods_per_s(self) -> float:
        return self.bound / self.seconds

    @property
    def pods_per_cpu_s(self) -> float:
        """Pods bound per second of this process's CPU time (the figure to compare on a shared machine)."""
        return self.bound / self.cpu_seconds

    @property
    def ms_per_gang(self) -> float:
        return 1000 * self.seconds / self.case.gangs if self.case.gangs else 0.0


def cases(quick: bool = False) -> list[Case]:
    sizes = [200] if quick else [1_000, 5_000, 20_000]
    single = [Case(SINGLE, n, pods=8 * n, percentage=pct) for n in sizes for pct in (100, None)]
    shares = [
        Case(SHARES, n, pods=16 * n, percentage=pct, share_milli=500) for n in sizes for pct in (100, None)
    ]
    n, pods = (200, 1_200) if quick else (500, 3_000)
    spread = [
        Case(title, n, pods=pods, percentage=pct, zones=4, owner=owner)
        for pct in (100, None)
        for title, owner in ((BARE, None), (SPREAD, "Deployment"))
    ]
    return [*single, *shares, *spread, Case(GANGS, 200 if quick else 1_000, gangs=10 if quick else 50)]


def gpu_node(i: int, zones: int = 0) -> Node:
    labels = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory": "81559"}
    if zones:
        labels |= {HOSTNAME: f"node-{i:05d}", ZONE: f"zone-{i % zones}"}
    return Node(f"node-{i:05d}", labels=labels, capacity={CPU: 96_000, MEMORY: 768 * GI, PODS: 110, GPU: 8})


def coscheduling_profile(percentage: int | None) -> ProfileConfig:
    """examples/seed-004/coscheduling.yaml's profile."""
    coscheduling = (PluginRef("Coscheduling"),)
    plugins = {
        "multiPoint": PluginSet(enabled=coscheduling),
        "queueSort": PluginSet(enabled=coscheduling, disabled=("*",)),
    }
    return ProfileConfig(GANG_SCHEDULER, plugins=plugins, percentage_of_nodes_to_score=percentage)


def build(case: Case) -> Scheduler:
    """A scheduler over ``case.nodes`` empty nodes with every pod of the case queued."""
    state = ClusterState([gpu_node(i, case.zones) for i in range(case.nodes)])
    gangs = GangView(state)
    if case.share_milli is None:
        owner = None if case.owner is None else OwnerRef(case.owner, "web")
        labels = {"app": "web"} if owner is not None else {}
        requests = {GPU: 1, CPU: 8_000, MEMORY: 64 * GI}
        pods = [
            Pod(f"single-{j:06d}", labels=dict(labels), requests=dict(requests), owner=owner)
            for j in range(case.pods)
        ]
    else:
        share = GpuShare(compute_milli=case.share_milli)
        requests = {CPU: 4_000, MEMORY: 32 * GI}
        pods = [Pod(f"share-{j:06d}", requests=dict(requests), gpu_share=share) for j in range(case.pods)]
    for g in range(case.gangs):
        group = PodGroup(f"gang-{g:03d}", "default", min_member=case.gang_size)
        gangs.add_group(group)
        for k in range(case.gang_size):
            labels = {POD_GROUP_LABEL: group.name}
            requests = {GPU: 8, CPU: 64_000, MEMORY: 512 * GI}
            pod = Pod(f"{group.name}-{k:02d}", labels=labels, requests=requests)
            pod.scheduler_name = GANG_SCHEDULER
            gangs.add_pod(pod)
            pods.append(pod)
    if case.gangs:
        config = SchedulerConfig(GANG_SCHEDULER, profiles=[coscheduling_profile(case.percentage)])
    else:
        profile = ProfileConfig(DEFAULT_SCHEDULER, percentage_of_nodes_to_score=case.percentage)
        config = SchedulerConfig(DEFAULT_SCHEDULER, profiles=[profile])
    scheduler = Scheduler(config, state, gangs, seed=0)
    for pod in pods:
        scheduler.add(pod, 0.0)
    return scheduler


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / (2**20 if sys.platform == "darwin" else 2**10)


def run_case(case: Case, profile: bool = False) -> Result:
    scheduler = build(case)
    profiler = cProfile.Profile() if profile else None
    start, cpu_start = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    outcomes = scheduler.run(0.0)
    if profiler is not None:
        profiler.disable()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    bound = [o.pod for o in outcomes if o.kind == "bound"]
    per_gang = Counter(p.pod_group for p in bound if p.pod_group is not None)
    text = ""
    if profiler is not None:
        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).strip_dirs().sort_stats("tottime").print_stats(20)
        text = buf.getvalue()
    return Result(
        case,
        seconds,
        cpu_seconds,
        bound=len({p.key for p in bound} & scheduler.state.assignments.keys()),
        gangs_bound=sum(1 for n in per_gang.values() if n == case.gang_size),
        peak_rss_mib=peak_rss_mib(),
        profile=text,
    )


def run_isolated(case: Case, profile: bool = False) -> Result:
    """``run_case`` in a fresh interpreter, so peak memory and timing are the case's own."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(run_case, case, profile).result()


def describe(r: Result) -> str:
    c = r.case
    head = f"{c.title}: {c.nodes:,} nodes, {c.total_pods:,} pods, percentageOfNodesToScore {c.setting}"
    figures = f"{r.bound:,}/{c.total_pods:,} bound in {r.seconds:.3f} s ({r.cpu_seconds:.3f} s CPU)"
    figures += f" = {r.pods_per_s:,.0f} pods/s, {r.pods_per_cpu_s:,.0f} pods per CPU-second"
    if c.gangs:
        figures += f", {r.ms_per_gang:.2f} ms/gang, {r.gangs_bound}/{c.gangs} gangs bound"
    return f"{head}\n  {figures}, peak RSS {r.peak_rss_mib:,.0f} MiB"


def table(results: list[Result]) -> str:
    rows = [COLUMNS]
    for r in results:
        c = r.case
        rows.append(
            (
                "gangs"
                if c.gangs
                else "half-GPU"
                if c.share_milli is not None
                else "spread"
                if c.owner is not None
                else "zoned"
                if c.zones
                else "single-GPU",
                f"{c.nodes}",
                f"{c.total_pods}",
                c.setting,
                f"{r.bound}/{c.total_pods}",
                f"{r.seconds:.3f}",
                f"{r.cpu_seconds:.3f}",
                f"{r.pods_per_s:.0f}",
                f"{r.ms_per_gang:.2f}" if c.gangs else "-",
                f"{r.gangs_bound}/{c.gangs}" if c.gangs else "-",
                f"{r.peak_rss_mib:.0f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows)


def device_level_cost(results: list[Result]) -> list[str]:
    """For each share case, how much longer a pod takes than a whole-GPU pod on the same cluster."""
    whole = {(r.case.nodes, r.case.setting): r for r in results if r.case.title == SINGLE}
    lines = []
    for r in results:
        base = whole.get((r.case.nodes, r.case.setting))
        if r.case.share_milli is not None and base is not None:
            lines.append(
                f"device level: {r.case.nodes:,} nodes, percentageOfNodesToScore {r.case.setting}: "
                f"{r.pods_per_s:,.0f} vs {base.pods_per_s:,.0f} pods/s, "
                f"{base.pods_per_s / r.pods_per_s:.2f}x the time per pod of whole GPUs"
            )
    return lines


def spreading_cost(results: list[Result]) -> list[str]:
    """For each spreading case, its CPU time against the bare-pod case run just before it."""
    lines = []
    for before, r in pairwise(results):
        if r.case.title == SPREAD and before.case.title == BARE and before.case.setting == r.case.setting:
            lines.append(
                f"default topology spreading: {r.case.nodes:,} nodes, {r.case.pods:,} pods, "
                f"percentageOfNodesToScore {r.case.setting}: "
                f"{r.cpu_seconds:.3f} vs {before.cpu_seconds:.3f} s CPU, "
                f"{r.cpu_seconds / before.cpu_seconds:.2f}x the bare pods' time"
            )
    return lines


def adaptive_cost(results: list[Result]) -> list[str]:
    """For each adaptive ``percentageOfNodesToScore`` case, its CPU time against the same case at 100%
    (upstream's adaptive default scores fewer nodes: it is meant to cost no more)."""
    full = {(r.case.title, r.case.nodes): r for r in results if r.case.percentage == 100}
    lines = []
    for r in results:
        base = full.get((r.case.title, r.case.nodes))
        if r.case.percentage is None and base is not None:
            lines.append(
                f"adaptive percentageOfNodesToScore: {r.case.title}, {r.case.nodes:,} nodes: "
                f"{r.pods_per_cpu_s:,.0f} vs {base.pods_per_cpu_s:,.0f} pods per CPU-second at 100%, "
                f"{r.cpu_seconds / base.cpu_seconds:.2f}x the CPU time"
            )
    return lines


def size_cost(results: list[Result]) -> list[str]:
    """For each case run at more than one cluster size (the pods in proportion to the nodes), its CPU time
    per pod at each size against the smallest: 1.00x at every size is a cost linear in cluster size."""
    runs: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        if r.bound and not r.case.gangs:
            runs.setdefault((r.case.title, r.case.setting), []).append(r)
    lines = []
    for (title, setting), same in runs.items():
        if len({r.case.nodes for r in same}) < 2:
            continue
        same.sort(key=lambda r: r.case.nodes)
        per_pod = [r.cpu_seconds / r.bound for r in same]
        parts = [
            f"{r.case.nodes:,} nodes {1e6 * cpu:.1f} us" + (f" ({cpu / per_pod[0]:.2f}x)" if k else "")
            for k, (r, cpu) in enumerate(zip(same, per_pod, strict=True))
        ]
        lines.append(
            f"cluster size: {title}, percentageOfNodesToScore {setting}: CPU a pod " + ", ".join(parts)
        )
    return lines


def complete(r: Result) -> bool:
    return r.bound == r.case.total_pods and r.gangs_bound == r.case.gangs
