"""One FGD-protocol replay (the FGD paper's, ``gpufleet.replay.fgd_protocol``) of the default openb
trace per policy: about 10,800 pods on 1,213 GPU nodes, wall time and pods per second. The authors'
Go simulator needs over 10 minutes for one such run on 2 vCPUs. Reads the trace from
``../shared/traces`` (not copied into the repository); prints a line saying so when it is absent.
"""

from __future__ import annotations

from pathlib import Path

from gpufleet.replay.fgd_protocol import POLICIES, replay
from gpufleet.traces.openb import read_nodes, read_pods

TRACE = Path(__file__).resolve().parents[2] / "shared" / "traces" / "alibaba-gpu-v2023"


def describe_replays(seed: int = 42) -> list[str]:
    if not TRACE.is_dir():
        return [f"FGD-protocol replays: skipped, no trace at {TRACE}"]
    nodes = read_nodes(TRACE / "openb_node_list_gpu_node.csv")
    pods = [p.pod for p in read_pods(TRACE / "openb_pod_list_default.csv")]
    lines = []
    for policy in POLICIES:
        r = replay(nodes, pods, policy, seed)
        lines.append(
            f"FGD-protocol replay, default trace, {policy}, seed {seed}: {r.pods_total:,} pods on "
            f"{len(nodes):,} nodes in {r.seconds:.2f} s = {r.pods_total / r.seconds:,.0f} pods/s; "
            f"unallocated GPUs at 100 % arrived {r.unallocated_gpu_pct_at_100} %"
        )
    return lines
