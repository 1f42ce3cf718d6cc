"""The table of a measured start-up: per stage, and per node group's start chain, the nearest-rank
p50, p90, p95, p99 and max the summary's ``startup`` field holds (its rows are the terminal's and the
HTML report's); then the pods not serving yet, each with its stages so far and the scheduler's
message. Durations read as people read them (``1m 30s``, ``42 s``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from gpufleet.report._format import human_duration, truncate

SPREAD_KEYS = ("p50", "p90", "p95", "p99", "max")
SPREAD_HEAD = ("stage", "count", *SPREAD_KEYS)
NODE_CHAIN_STAGES = ("boot", "join", "devicePlugin")
NOT_SERVING_SHOWN = 5
MESSAGE_CHARS = 200


def startup_table(summary: Mapping[str, Any]) -> Table:
    """`stage_rows` then `chain_rows`."""
    startup = summary["startup"]
    table = Table(title=f"start-up, measured from a {startup['source']}", title_justify="left")
    for column in SPREAD_HEAD:
        table.add_column(column, justify="left" if column == "stage" else "right")
    stages = stage_rows(startup)
    for index, row in enumerate(stages):
        table.add_row(*row, end_section=index == len(stages) - 1)
    for row in chain_rows(startup):
        table.add_row(*row)
    return table


def stage_rows(startup: Mapping[str, Any]) -> list[list[str]]:
    """Each stage over the pods that began serving, then the pending-to-serving total: the stage,
    the count and the spread (the terminal table and the HTML report show the same rows)."""
    rows = [[stage, *_cells(figures)] for stage, figures in startup["stages"].items()]
    return [*rows, ["pending to serving", *_cells(startup["pending_to_working_s"])]]


def chain_rows(startup: Mapping[str, Any]) -> list[list[str]]:
    """Each node group's ``boot``, ``join`` and ``devicePlugin``, those measured."""
    return [
        [f"node group {group}: {stage}", *_cells(chain[stage])]
        for group, chain in startup["node_chain"].items()
        for stage in NODE_CHAIN_STAGES
        if chain[stage]["count"]
    ]


def _cells(figures: Mapping[str, Any]) -> list[str]:
    return [str(figures["count"]), *(human_duration(figures[key]) for key in SPREAD_KEYS)]


def not_serving_lines(summary: Mapping[str, Any]) -> list[str]:
    """One line per pod (the first few by name) that has not begun serving and is not gone: how long
    it has waited by the reading, in which stages, and the scheduler's message if it has one."""
    waiting = [
        pod
        for pod in summary["pods"]
        if pod["working_s"] is None and pod["finished_s"] is None and pod["deleted_s"] is None
    ]
    lines = []
    for pod in waiting[:NOT_SERVING_SHOWN]:
        so_far = ", ".join(f"{stage} {human_duration(seconds)}" for stage, seconds in pod["stages"].items())
        waited = human_duration(summary["end_time_s"] - pod["created_s"])
        message = f": {truncate(pod['message'], MESSAGE_CHARS)}" if pod["message"] else ""
        lines.append(f"{pod['name']} not serving after {waited} ({so_far}){message}")
    if len(waiting) > NOT_SERVING_SHOWN:
        left = len(waiting) - NOT_SERVING_SHOWN
        lines.append(f"... and {left} more pods not serving (summary.json lists them)")
    return lines
