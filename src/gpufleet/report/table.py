"""A short terminal table of a summary: end time, GPUs, pod counts, and why pods are pending."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpufleet.report._format import fmt_num, pending_pods, truncate

PENDING_SHOWN = 5
MESSAGE_CHARS = 160
GPU_FIGURES = (("gpus_total", "total"), ("gpus_allocated", "allocated"), ("gpus_working", "working"))
POD_FIGURES = (
    ("pods_pending", "pending"),
    ("pods_running", "running"),
    ("pods_succeeded", "succeeded"),
    ("pods_failed", "failed"),
)


def summary_table(summary: dict[str, Any]) -> Table:
    """One table: end time, GPU totals, pod counts, and the first pending pods with their message."""
    totals = summary["totals"]
    table = Table(title="gpufleet summary", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")
    table.add_row("end time", Text(f"{fmt_num(summary['end_time_s'])} s"))
    table.add_row("GPUs", Text(_figures(totals, GPU_FIGURES)))
    table.add_row("pods", Text(_figures(totals, POD_FIGURES)))
    _add_pending_rows(table, summary["pods"])
    return table


def print_summary(summary: dict[str, Any], console: Console | None = None) -> None:
    """Print `summary_table` to ``console`` (a new one on stdout when none is given)."""
    (console or Console()).print(summary_table(summary))


def _figures(totals: Mapping[str, Any], keys: tuple[tuple[str, str], ...]) -> str:
    return " · ".join(f"{label} {fmt_num(totals[key])}" for key, label in keys)


def _add_pending_rows(table: Table, pods: list[Mapping[str, Any]]) -> None:
    pending = pending_pods(pods)
    for pod in pending[:PENDING_SHOWN]:
        message = truncate(str(pod.get("message") or "no message"), MESSAGE_CHARS)
        table.add_row(Text("pending", style="yellow"), Text(f"{pod['name']}: {message}"))
    if len(pending) > PENDING_SHOWN:
        table.add_row("", Text(f"… and {len(pending) - PENDING_SHOWN} more pending pods", style="dim"))
