"""``gpufleet compare``'s ``report.html``: one self-contained page, its charts drawn by Plotly.

A table of the statistics over seeds per trace and policy, then per trace the median GPU
allocation against arrived workload (0..130 % of the cluster's GPUs) of each policy, with the
"Ideal" line (every arrived GPU allocated, up to 100 %), as Fig. 9 of the FGD paper draws them,
and the same from 80 % arrived, where they part (drag on a chart to zoom further, click a legend
entry to hide a policy). Every figure is read from the ``compare.json`` document. The page's look
is the summary report's (`report.page`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from gpufleet.experiments.stats import METRICS, fmt, mean_sd, trace_labels
from gpufleet.report.chart_divs import ChartDivs
from gpufleet.report.charts import CHART_HEIGHT, Figure, axis, layout, palette_color
from gpufleet.report.page import page, section

X_MAX, Y_MAX = 130.0, 100.0
ZOOM_FROM = 80.0
IDEAL_COLOR = "#8c959f"
Cell = str | tuple[str, str]
"""A table cell: its text, or its text and a smaller line under it."""


def render_compare_html(document: Mapping[str, Any]) -> str:
    """The page for a ``gpufleet.compare/v1`` document."""
    labels = trace_labels(document["traces"])
    runs = len(document["runs"])
    facts = (
        f"{runs} runs of the FGD paper's protocol: {len(document['policies'])} policies, "
        f"seeds {seed_text(document['seeds'])}, "
        f"nodes {', '.join(document['nodes'])}. Statistics over seeds (sd: sample standard deviation)."
    )
    charts = ChartDivs()
    sections = [section("Figures at 100 % arrived", _stats_table(document))]
    for trace in document["traces"]:
        groups = [g for g in document["stats"] if g["trace"] == trace]
        sections.append(
            section(
                f"GPU allocation against arrived workload: {labels[trace]}",
                _allocation_charts(groups, document["arrived_pct"], charts),
            )
        )
    return compare_page("gpufleet compare", facts, sections, document["schema"], "compare.json")


def compare_page(title: str, facts: str, sections: Sequence[str], schema: str, source: str) -> str:
    """A page of compare's or whatif's: ``facts`` under the title, the sections, the source named."""
    return page(title, f'<div class="muted">{escape(facts)}</div>', sections, f"{source} ({schema})")


def seed_text(seeds: Sequence[int]) -> str:
    """``42..51`` for a run of seeds, else the list."""
    return (
        f"{seeds[0]}..{seeds[-1]}"
        if list(seeds) == list(range(seeds[0], seeds[-1] + 1))
        else str(list(seeds))
    )


def _stats_table(document: Mapping[str, Any]) -> str:
    """Per trace and policy: runs, and per metric mean ± sd over median and min–max."""
    labels = trace_labels(document["traces"])
    head = ["trace", "policy", "runs", *(title for _, title in METRICS)]
    rows: list[list[Cell]] = [
        [
            labels[g["trace"]],
            g["policy"],
            str(g["runs"]),
            *(
                (
                    mean_sd(g[key]),
                    f"median {fmt(g[key]['median'])}, {fmt(g[key]['min'])}–{fmt(g[key]['max'])}",
                )
                for key, _ in METRICS
            ),
        ]
        for g in document["stats"]
    ]
    return stats_table(head, rows, 2)


def stats_table(
    head: Sequence[str], rows: Sequence[Sequence[Cell]], numbers_from: int, widths: Sequence[str] = ()
) -> str:
    """A table as wide as the page, long names wrapped; columns from ``numbers_from`` on are
    right-aligned figures, the first columns as wide as ``widths`` says (CSS widths), the others
    share the rest. A cell given as (text, under) shows ``under`` as a smaller second line."""
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    columns = "".join(f'<col style="width:{escape(width)}">' for width in widths)
    body = [
        "<tr>" + "".join(_cell(c, i >= numbers_from) for i, c in enumerate(row)) + "</tr>" for row in rows
    ]
    return (
        f'<table class="stats fit">\n<colgroup>{columns}</colgroup>\n'
        f"<thead><tr>{cells}</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody></table>"
    )


def _cell(cell: Cell, number: bool) -> str:
    text, under = (cell, "") if isinstance(cell, str) else cell
    sub = f'<span class="sub">{escape(under)}</span>' if under else ""
    return f"<td{' class=num' if number else ''}>{escape(text)}{sub}</td>"


def _zoom_floor(curves: Sequence[Sequence[tuple[float, float | None]]]) -> float:
    """Just below the lowest curve from 80 % arrived on, a multiple of 5."""
    lows = [y for curve in curves for x, y in curve if y is not None and x >= ZOOM_FROM]
    return max(0.0, 5 * math.floor(min([*lows, ZOOM_FROM]) / 5 - 0.2))


def _allocation_charts(
    groups: Sequence[Mapping[str, Any]], arrived: Sequence[float], charts: ChartDivs
) -> str:
    curves = [list(zip(arrived, group["median_gpu_alloc_pct"], strict=True)) for group in groups]
    ideal = {
        "type": "scatter",
        "mode": "lines",
        "name": "Ideal",
        "x": list(arrived),
        "y": [min(a, Y_MAX) for a in arrived],
        "line": {"color": IDEAL_COLOR, "dash": "dash", "width": 2},
        "hovertemplate": "Ideal: %{y:.1f} % at %{x:.1f} % arrived<extra></extra>",
    }
    traces = [ideal] + [
        {
            "type": "scatter",
            "mode": "lines",
            "name": group["policy"],
            "x": [x for x, _ in curve],
            "y": [y for _, y in curve],
            "line": {"color": palette_color(i), "width": 2},
            "hovertemplate": f"{group['policy']}: %{{y:.2f}} % allocated"
            f" at %{{x:.1f}} % arrived<extra></extra>",
        }
        for i, (group, curve) in enumerate(zip(groups, curves, strict=True))
    ]
    views = ((0.0, 0.0), (ZOOM_FROM, _zoom_floor(curves)))
    figures: list[Figure] = [
        {
            "data": traces,
            "layout": layout(
                CHART_HEIGHT,
                axis("arrived workload (% of the cluster's GPUs)", range=[x0, X_MAX]),
                axis("GPU allocation (%)", range=[y0, Y_MAX]),
            ),
        }
        for x0, y0 in views
    ]
    note = '<div class="muted">Median over the seeds at each arrived percent; below, from 80 % arrived.</div>'
    return note + "\n".join(charts.div(figure) for figure in figures)
