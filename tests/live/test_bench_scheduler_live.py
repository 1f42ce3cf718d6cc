"""Smoke test of the live scheduler bench (``bench/scheduler_live.py``) at a small size on the session's
control plane: every pod is bound by each scheduler, and the figures are printed; never times."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = str(Path(__file__).resolve().parents[2])  # bench/ lives beside src/, outside the package
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.scheduler_live import (  # noqa: E402
    SchedulerLiveFigures,
    complete,
    describe_scheduler_live,
    run_scheduler_live,
)


def test_the_scheduler_bench_has_every_pod_bound_by_gpufleet_and_by_kube_scheduler(
    control_plane: Any,
) -> None:
    figures = run_scheduler_live(nodes=10, pods=40, gangs=5, gang_size=4, cp=control_plane)
    assert isinstance(figures, SchedulerLiveFigures)
    runs = {(r.scheduler, r.workload): r for r in figures.runs}
    assert set(runs) == {(s, w) for s in ("kube-scheduler", "gpufleet") for w in ("pods", "gangs")}
    assert {w: runs["gpufleet", w].pods for w in ("pods", "gangs")} == {"pods": 40, "gangs": 20}
    for run in figures.runs:
        assert run.bound == run.pods, run
        assert run.cpu_s > 0
    assert complete(figures)
    lines = describe_scheduler_live(figures).splitlines()
    assert "10 kwok nodes" in lines[0] and "qps 100 burst 200" in lines[0]
    assert lines[1] == "  40 one-GPU pods:"
    assert lines[2].startswith("    kube-scheduler: 40/40 bound in ")
    assert lines[3].startswith("    gpufleet: 40/40 bound in ")
    assert lines[4].startswith("    gpufleet/kube-scheduler: pods/s ")
    assert lines[5] == "  5 gangs of 4 two-GPU pods (20 pods):"
    assert "without gang semantics" in lines[8]
    # the bench's objects are gone (the namespace and nodes on their way out)
    pods = control_plane.get("/api/v1/namespaces/bench-scheduler/pods") or {"items": []}
    assert pods["items"] == []
