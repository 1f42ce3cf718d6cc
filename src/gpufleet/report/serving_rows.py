"""Terminal-table rows for what a serving team reads: request waits, timeouts and drops per Traffic,
the simulated DCGM_FI_DEV_GPU_UTIL, the slowest workloads' pending-to-working time, and which pods
the figures cover (``--select``).

Durations are shown as people read them (``report._format.human_duration``); request counts of the
fluid model are rounded to whole requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.report._format import counted, human_duration
from gpufleet.report.latency import latency_figures

#: How many workloads the table lists, slowest p95 first.
WORKLOADS_SHOWN = 3


def count_text(value: float) -> str:
    """A request count of the fluid model as whole requests: ``4,210``."""
    return f"{round(value):,}"


def request_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``requests <ns/name>``: wait p50/p95/p99, timed out, dropped of arrived; then the simulated
    DCGM_FI_DEV_GPU_UTIL of the serving replicas."""
    rows = []
    for name, figures in sorted((summary.get("traffic") or {}).items()):
        waits = " · ".join(f"p{p} {human_duration(figures.get(f'p{p}_wait_s'))}" for p in (50, 95, 99))
        counts = (
            f"timed out {count_text(figures.get('timed_out', 0.0))} · "
            f"dropped {count_text(figures.get('dropped', 0.0))} of {count_text(figures.get('requests', 0.0))}"
        )
        rows.append((f"requests {name}", f"wait {waits} · {counts}"))
    util = summary["totals"].get("dcgm_gpu_util_pct")
    if util is not None:
        rows.append(("DCGM_FI_DEV_GPU_UTIL (simulated)", f"{util:.1f} % (mean over the serving GPUs)"))
    return rows


def workload_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The slowest few workloads' pending → working p50/p95 (when there are several workloads)."""
    latency = summary.get("latency") or latency_figures(summary)
    workloads = latency.get("by_workload") or []
    if len(workloads) < 2:
        return []
    slowest = sorted(workloads, key=lambda w: (-(w["p95"] or 0.0), w["workload"]))[:WORKLOADS_SHOWN]
    return [
        (
            f"pending → working {w['workload']}",
            f"p50 {human_duration(w['p50'])} · p95 {human_duration(w['p95'])} ({counted(w['count'], 'pod')})",
        )
        for w in slowest
    ]


def selection_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Which pods the pod figures cover, when a selection was applied."""
    selection = summary.get("selection")
    return [("selected pods", f"{selection} (GPUs, nodes and cost: the whole cluster)")] if selection else []
