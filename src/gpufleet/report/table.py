"""A short terminal table of a summary: end time, GPUs, pod counts, and why pods are pending.

Optional figures (cost, GPU-hours, pending-to-working percentiles, wait per job size class, GPU
utilisation, disruptions, work items) get a row each only when the summary has them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpufleet.report._format import fmt_num, pending_pods, truncate
from gpufleet.report.job_waits import job_wait_figures
from gpufleet.report.latency import latency_figures
from gpufleet.report.serving_rows import request_rows, selection_rows, workload_rows

PENDING_SHOWN = 5
MESSAGE_CHARS = 160
GPU_FIGURES = (("gpus_total", "total"), ("gpus_allocated", "allocated"), ("gpus_working", "working"))
POD_FIGURES = (
    ("pods_pending", "pending"),
    ("pods_running", "running"),
    ("pods_succeeded", "succeeded"),
    ("pods_failed", "failed"),
)
GPU_HOUR_FIGURES = (
    ("gpu_hours_provisioned", "provisioned"),
    ("gpu_hours_allocated", "allocated"),
    ("gpu_hours_working", "working"),
)
WORK_ITEM_FIGURES = (
    ("fed", "fed"),
    ("started", "started"),
    ("completed", "completed"),
    ("lost", "lost"),
    ("requeued", "requeued"),
    ("queued", "queued"),
    ("in_progress", "in progress"),
)


def summary_table(summary: dict[str, Any]) -> Table:
    """One table: end time, GPU totals, pod counts, optional figures, and the first pending pods."""
    totals = summary["totals"]
    table = Table(title="gpufleet summary", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")
    table.add_row("end time", Text(f"{fmt_num(summary['end_time_s'])} s"))
    table.add_row("GPUs", Text(_figures(totals, GPU_FIGURES)))
    table.add_row("pods", Text(_figures(totals, POD_FIGURES)))
    for what, value in _optional_rows(summary):
        table.add_row(what, Text(value))
    _add_pending_rows(table, summary["pods"])
    return table


def print_summary(summary: dict[str, Any], console: Console | None = None) -> None:
    """Print `summary_table` to ``console`` (a new one on stdout when none is given)."""
    (console or Console()).print(summary_table(summary))


def _figures(totals: Mapping[str, Any], keys: tuple[tuple[str, str], ...]) -> str:
    return " · ".join(f"{label} {fmt_num(totals[key])}" for key, label in keys)


def _present(totals: Mapping[str, Any], key: str) -> bool:
    value = totals.get(key)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _optional_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(what, value) rows for the figures the summary may or may not have, in a fixed order."""
    totals = summary["totals"]
    rows = []
    if _present(totals, "cost"):
        rows.append(("cost", f"{float(totals['cost']):,.2f}"))
    hours = [(key, label) for key, label in GPU_HOUR_FIGURES if _present(totals, key)]
    if hours:
        rows.append(("GPU-hours", _figures(totals, tuple(hours))))
    latency = summary.get("latency") or latency_figures(summary)
    overall = latency["pending_to_working_s"]
    if overall.get("count"):
        percentiles = " · ".join(f"{key} {fmt_num(overall.get(key))} s" for key in ("p50", "p95", "p99"))
        rows.append(("pending → working", f"{percentiles} ({overall['count']} pods)"))
    jobs = summary.get("jobs") or job_wait_figures(summary)
    for c in jobs["by_gpus"]:
        figures = " · ".join(f"{key} {fmt_num(c[f'{key}_wait_s'])}" for key in ("mean", "p50", "p95", "max"))
        still = f", {c['waiting']} still waiting" if c["waiting"] else ""
        rows.append((f"wait, {c['gpus']} GPU", f"{figures} s (jobs: {c['count']}{still})"))
    if jobs["gpu_utilization"] is not None:
        rows.append(("GPU utilisation", f"{jobs['gpu_utilization']:.1%} of provisioned GPU-hours allocated"))
    disruption = []
    if _present(totals, "pods_disrupted"):
        disruption.append(f"{fmt_num(totals['pods_disrupted'])} pods disrupted")
    if _present(totals, "work_lost_s"):
        disruption.append(f"{fmt_num(totals['work_lost_s'])} GPU-seconds of work lost")
    if disruption:
        rows.append(("disruptions", " · ".join(disruption)))
    for name, counts in sorted((summary.get("work_items") or {}).items()):
        rows.append((f"work items {name}", _figures(counts, WORK_ITEM_FIGURES)))
    frag = summary.get("fragmentation")
    if frag and frag.get("free_gpus"):
        rows.append(
            (
                "fragmentation",
                f"{fmt_num(frag['fragmented_gpus'])} of {fmt_num(frag['free_gpus'])} free GPUs "
                f"unusable by the pending work ({float(frag['ratio']):.0%})",
            )
        )
    return rows + workload_rows(summary) + request_rows(summary) + selection_rows(summary)


def _add_pending_rows(table: Table, pods: list[Mapping[str, Any]]) -> None:
    pending = pending_pods(pods)
    for pod in pending[:PENDING_SHOWN]:
        message = truncate(str(pod.get("message") or "no message"), MESSAGE_CHARS)
        table.add_row(Text("pending", style="yellow"), Text(f"{pod['name']}: {message}"))
    if len(pending) > PENDING_SHOWN:
        table.add_row("", Text(f"… and {len(pending) - PENDING_SHOWN} more pending pods", style="dim"))
