"""One FGD-protocol replay (the FGD paper's, ``gpufleet.replay.fgd_protocol``) of the default openb
trace per policy: about 10,800 pods on 1,213 GPU nodes. Per policy: the replay's CPU seconds in this
process (``time.process_time``; the cores are shared, so CPU time, not wall time) and pods per CPU
second, then the whole process (``python -m gpufleet replay``: start, imports, reading the trace, the
replay, writing ``replay.json``) in CPU seconds of the child, and what the paper's grid (17 traces x 6
policies x 10 seeds = 1,020 runs) would take on two cores at that rate. The authors' Go simulator needs
over 10 minutes for one such run on 2 vCPUs. Then a real slice of the grid: every trace, the six
policies, one seed (102 runs), run by ``gpufleet sweep --jobs 2`` as the grid is, its CPU seconds (the
sweep and its workers) and wall time, and the whole grid projected from that slice's wall time. Reads
the traces where ``bench.shared_files`` finds them (not copied into the repository); prints a line
saying so when they are absent.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.shared_files import TRACES
from gpufleet.replay.fgd_protocol import POLICIES, replay
from gpufleet.traces.openb import read_nodes, read_pods

TRACE = TRACES
NODES = TRACE / "openb_node_list_gpu_node.csv"
PODS = TRACE / "openb_pod_list_default.csv"
GRID_RUNS = 1_020  # the paper's grid: 17 traces x 6 policies x 10 seeds
CORES = 2
#: The paper's traces (``openb_pod_list_<name>.csv``) and policies, as its grid runs them.
GRID_TRACES = (
    *("default", "cpu050", "cpu100", "cpu200", "cpu250"),
    *("gpushare100", "gpushare40", "gpushare60", "gpushare80"),
    *("gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33"),
    *("multigpu20", "multigpu30", "multigpu40", "multigpu50"),
)
GRID_POLICIES = tuple(p for p in POLICIES if p != "FGDSupply")  # gpufleet's own is not the paper's


def whole_process_cpu(policy: str, seed: int) -> float:
    """CPU seconds (user + system) of one ``gpufleet replay`` process, start to exit."""
    before = children_cpu()
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "gpufleet", "replay", "--nodes", str(NODES), "--pods", str(PODS)]
        command += ["--policy", policy, "--seed", str(seed), "--out", out]
        subprocess.run(command, check=True, capture_output=True)
    return children_cpu() - before


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def grid_slice(seeds: str = "42") -> tuple[int, float, float]:
    """Runs, CPU seconds and wall seconds of ``gpufleet sweep --jobs 2`` over every trace and policy of
    the paper's grid with ``seeds``."""
    traces = ", ".join(f"{TRACE / f'openb_pod_list_{name}.csv'}" for name in GRID_TRACES)
    with tempfile.TemporaryDirectory() as folder:
        grid = Path(folder) / "grid.yaml"
        grid.write_text(
            f"nodes: {NODES}\ntraces: [{traces}]\npolicies: [{', '.join(GRID_POLICIES)}]\nseeds: {seeds!r}\n"
        )
        command = [sys.executable, "-m", "gpufleet", "sweep", "--grid", str(grid), "--jobs", str(CORES)]
        command += ["--out", str(Path(folder) / "out"), "--no-progress"]
        cpu, wall = children_cpu(), time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        cpu, wall = children_cpu() - cpu, time.perf_counter() - wall
        runs = len((Path(folder) / "out" / "results.jsonl").read_text().splitlines())
    return runs, cpu, wall


def describe_grid_slice() -> str:
    if not TRACE.is_dir():
        return f"FGD-protocol grid slice: skipped, no traces at {TRACE}"
    runs, cpu, wall = grid_slice()
    whole = GRID_RUNS * wall / runs / 60
    return (
        f"FGD-protocol grid slice (gpufleet sweep --jobs {CORES}: {len(GRID_TRACES)} traces x "
        f"{len(GRID_POLICIES)} policies x seed 42): {runs} runs, {cpu:.1f} CPU s ({cpu / runs:.2f} per run), "
        f"{wall:.1f} s wall; the paper's grid ({GRID_RUNS:,} runs) at that rate: {whole:.1f} min"
    )


def describe_replays(seed: int = 42) -> list[str]:
    if not TRACE.is_dir():
        return [f"FGD-protocol replays: skipped, no trace at {TRACE}"]
    nodes = read_nodes(NODES)
    pods = [p.pod for p in read_pods(PODS)]
    lines = []
    whole: list[float] = []
    for policy in POLICIES:
        start = time.process_time()
        r = replay(nodes, pods, policy, seed)
        cpu = time.process_time() - start
        whole.append(whole_process_cpu(policy, seed))
        lines.append(
            f"FGD-protocol replay, default trace, {policy}, seed {seed}: {r.pods_total:,} pods on "
            f"{len(nodes):,} nodes in {cpu:.2f} CPU s = {r.pods_total / cpu:,.0f} pods/CPU s; whole "
            f"process {whole[-1]:.2f} CPU s; unallocated GPUs at 100 % arrived "
            f"{r.unallocated_gpu_pct_at_100} %"
        )
    paper = [w for policy, w in zip(POLICIES, whole, strict=True) if policy in GRID_POLICIES]
    grid = GRID_RUNS * sum(paper) / len(paper) / CORES
    lines.append(
        f"FGD-protocol replay, whole process: {min(whole):.2f}-{max(whole):.2f} CPU s per run; the paper's "
        f"grid ({GRID_RUNS:,} runs) at the mean of its six policies on {CORES} cores: {grid / 60:.1f} min"
    )
    return lines
