"""A short terminal table of a summary: end time, GPUs, pods by final state, and why pods are pending.

Optional figures (cost, GPU-hours, the share of them allocated and working, the simulated
DCGM_FI_DEV_GPU_UTIL, pending-to-working percentiles, wait per job size class, disruptions, faults,
rollouts, work items, fragmentation) get a row each only when the summary has them. Durations read as
people read them (``2d 21h 38m``, ``42 s``); summary.json keeps the seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpufleet.report._format import counted, fmt_num, human_duration, pending_pods, truncate
from gpufleet.report.fault_rows import fault_rows
from gpufleet.report.job_waits import job_wait_figures
from gpufleet.report.latency import latency_figures
from gpufleet.report.pod_states import final_state_counts, final_states_text
from gpufleet.report.rollouts import rollout_rows
from gpufleet.report.serving_rows import request_rows, selection_rows, workload_rows

PENDING_SHOWN = 5
MESSAGE_CHARS = 160
GPU_FIGURES = (("gpus_total", "total"), ("gpus_allocated", "allocated"), ("gpus_working", "working"))
GPU_HOUR_FIGURES = (
    ("gpu_hours_provisioned", "provisioned"),
    ("gpu_hours_allocated", "allocated"),
    ("gpu_hours_working", "working"),
)
#: (key in totals, label, what the percent is of)
PERCENT_FIGURES = (
    ("gpu_allocated_pct", "GPUs allocated %", "of the provisioned GPU-hours allocated to pods"),
    ("gpu_working_pct", "GPUs working %", "of the provisioned GPU-hours with pods computing"),
    ("dcgm_gpu_util_pct", "DCGM_FI_DEV_GPU_UTIL (simulated) %", "mean over the GPUs of traffic-driven pods"),
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
    table.add_row("end time", Text(human_duration(summary["end_time_s"])))
    table.add_row("GPUs", Text(_figures(totals, GPU_FIGURES)))
    table.add_row("pods", Text(final_states_text(final_state_counts(summary))))
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
    for key, label, of in PERCENT_FIGURES:
        if _present(totals, key):
            rows.append((label, f"{float(totals[key]):.1f} % {of}"))
    latency = summary.get("latency") or latency_figures(summary)
    overall = latency["pending_to_working_s"]
    if overall.get("count"):
        percentiles = " · ".join(f"{key} {human_duration(overall.get(key))}" for key in ("p50", "p95", "p99"))
        rows.append(("pending → working", f"{percentiles} ({counted(overall['count'], 'pod')})"))
    jobs = summary.get("jobs") or job_wait_figures(summary)
    for c in jobs["by_gpus"]:
        figures = " · ".join(
            f"{key} {human_duration(c[f'{key}_wait_s'])}" for key in ("mean", "p50", "p95", "max")
        )
        still = f", {c['waiting']} still waiting" if c["waiting"] else ""
        rows.append((f"wait, {c['gpus']} GPU", f"{figures} ({counted(c['count'], 'job')}{still})"))
    disruption = []
    if _present(totals, "pods_disrupted"):
        disruption.append(f"{counted(totals['pods_disrupted'], 'pod')} disrupted")
    if _present(totals, "work_lost_s"):
        disruption.append(f"{human_duration(totals['work_lost_s'])} of GPU time lost")
    if disruption:
        rows.append(("disruptions", " · ".join(disruption)))
    rows += fault_rows(summary)
    rows += rollout_rows(summary)
    for name, counts in sorted((summary.get("work_items") or {}).items()):
        rows.append((f"work items {name}", _figures(counts, WORK_ITEM_FIGURES)))
    frag = summary.get("fragmentation")
    if frag and frag.get("free_gpus"):
        rows.append(("fragmentation", _fragmentation_text(frag)))
    return rows + workload_rows(summary) + request_rows(summary) + selection_rows(summary)


def _fragmentation_text(frag: Mapping[str, Any]) -> str:
    """Fragmented GPUs of the free ones, then those out of the pending work's reach (when known)."""
    text = (
        f"{fmt_num(frag['fragmented_gpus'])} of {fmt_num(frag['free_gpus'])} free GPUs fragmented "
        f"({float(frag['ratio']):.0%}): on nodes the pending work may use but cannot fit on"
    )
    out_of_reach = frag.get("out_of_reach_gpus")
    if out_of_reach:
        text += f" · {fmt_num(out_of_reach)} free GPUs on nodes it may not use (selector, affinity, taints)"
    return text


def _add_pending_rows(table: Table, pods: list[Mapping[str, Any]]) -> None:
    pending = pending_pods(pods)
    for pod in pending[:PENDING_SHOWN]:
        message = truncate(str(pod.get("message") or "no message"), MESSAGE_CHARS)
        table.add_row(Text("pending", style="yellow"), Text(f"{pod['name']}: {message}"))
    if len(pending) > PENDING_SHOWN:
        table.add_row("", Text(f"… and {len(pending) - PENDING_SHOWN} more pending pods", style="dim"))
