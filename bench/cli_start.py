"""The CLI's start: CPU seconds of ``gpufleet --help`` and ``gpufleet simulate --help`` in a fresh
process (user + system, from ``getrusage`` of the children), the median of a few runs; issue 18's
target is under 0.3 s. Nothing but the imports a command needs may run before it starts
(``tests/test_cli_start.py`` checks which)."""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys

COMMANDS = (("--help",), ("simulate", "--help"))
RUNS = 5


def _cpu_s(args: tuple[str, ...]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "gpufleet", *args], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def describe_cli_start(runs: int = RUNS) -> str:
    figures = [
        f"gpufleet {' '.join(args)}: {statistics.median(_cpu_s(args) for _ in range(runs)):.2f} s CPU"
        for args in COMMANDS
    ]
    return f"CLI start (median of {runs}): " + "; ".join(figures)
