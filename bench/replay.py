"""One FGD-protocol replay (the FGD paper's, ``gpufleet.replay.fgd_protocol``) of the default openb
trace per policy: about 10,800 pods on 1,213 GPU nodes. Per policy: the replay's CPU seconds in this
process (``time.process_time``; the cores are shared, so CPU time, not wall time) and pods per CPU
second, then the whole process (``python -m gpufleet replay``: start, imports, reading the trace, the
replay, writing ``replay.json``) in CPU seconds of the child, and what the paper's grid (17 traces x 6
policies x 10 seeds = 1,020 runs) would take on two cores at that rate. The authors' Go simulator needs
over 10 minutes for one such run on 2 vCPUs. Reads the trace from ``../shared/traces`` (not copied into
the repository); prints a line saying so when it is absent.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpufleet.replay.fgd_protocol import POLICIES, replay
from gpufleet.traces.openb import read_nodes, read_pods

TRACE = Path(__file__).resolve().parents[2] / "shared" / "traces" / "alibaba-gpu-v2023"
NODES = TRACE / "openb_node_list_gpu_node.csv"
PODS = TRACE / "openb_pod_list_default.csv"
GRID_RUNS = 1_020  # the paper's grid: 17 traces x 6 policies x 10 seeds
CORES = 2


def whole_process_cpu(policy: str, seed: int) -> float:
    """CPU seconds (user + system) of one ``gpufleet replay`` process, start to exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "gpufleet", "replay", "--nodes", str(NODES), "--pods", str(PODS)]
        command += ["--policy", policy, "--seed", str(seed), "--out", out]
        subprocess.run(command, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


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
    paper = [w for policy, w in zip(POLICIES, whole, strict=True) if policy != "FGDSupply"]
    grid = GRID_RUNS * sum(paper) / len(paper) / CORES
    lines.append(
        f"FGD-protocol replay, whole process: {min(whole):.2f}-{max(whole):.2f} CPU s per run; the paper's "
        f"grid ({GRID_RUNS:,} runs) at the mean of its six policies on {CORES} cores: {grid / 60:.1f} min"
    )
    return lines
