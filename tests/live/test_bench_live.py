"""Smoke test of the live bench (``bench/live.py``) at a small size on the session's control plane:
outcomes and printed figures, never times."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = str(Path(__file__).resolve().parents[2])  # bench/ lives beside src/, outside the package
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.live import LiveFigures, describe_live, run_live  # noqa: E402


def test_the_live_bench_snapshots_every_object_explains_every_pending_pod_and_runs_a_whatif(
    control_plane: Any,
) -> None:
    figures = run_live(nodes=10, pods=100, pending=3, cp=control_plane)
    assert isinstance(figures, LiveFigures)
    assert figures.explained == 3
    assert re.search(r"wrote .* \d+ nodes, .*\d+ pods", figures.snapshot.output)
    assert '"pending_in_snapshot": 3' in figures.whatif.output
    assert '"state": "started"' in figures.whatif.output  # the urgent pod preempts room for itself
    for run in (figures.snapshot, figures.kubectl_get, figures.explain, figures.whatif):
        assert run.cpu_s > 0 and run.peak_rss_mib > 0
    lines = describe_live(figures).splitlines()
    assert lines[0].startswith("live cluster, 10 nodes and 100 pods (3 pending)")
    assert "snapshot/kubectl CPU" in lines[1] and "3 pending pods explained" in lines[2]
    assert lines[3].startswith("  whatif on the snapshot (one pending pod made urgent, 10 minutes): ")
