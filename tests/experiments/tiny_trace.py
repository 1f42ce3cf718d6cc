"""A tiny openb trace (three 2-GPU T4 nodes, six pods) for the compare and sweep tests."""

from __future__ import annotations

from pathlib import Path

NODES_CSV = """sn,cpu_milli,memory_mib,gpu,model
n0,32000,131072,2,T4
n1,32000,131072,2,T4
n2,32000,131072,2,T4
"""

PODS_CSV = """name,cpu_milli,memory_mib,num_gpu,gpu_milli
p0,4000,8192,1,500
p1,4000,8192,1,250
p2,4000,8192,1,1000
p3,8000,16384,2,1000
p4,2000,4096,1,700
p5,1000,2048,0,0
"""

#: A second pod list: small fractions only, so every arrived percent near 100 has a record.
SHARES_CSV = """name,cpu_milli,memory_mib,num_gpu,gpu_milli
s0,500,1024,1,100
s1,500,1024,1,150
s2,500,1024,1,120
"""


def write_trace(folder: Path) -> tuple[Path, Path, Path]:
    """nodes.csv, pods.csv and shares.csv in ``folder``."""
    paths = folder / "nodes.csv", folder / "pods.csv", folder / "shares.csv"
    for path, text in zip(paths, (NODES_CSV, PODS_CSV, SHARES_CSV), strict=True):
        path.write_text(text)
    return paths
