"""``gpufleet compare``'s ``report.html``: one self-contained page (no scripts, inline SVG).

A table of the statistics over seeds per trace and policy, then per trace the median GPU
allocation against arrived workload (0..130 % of the cluster's GPUs) of each policy, with the
"Ideal" line (every arrived GPU allocated, up to 100 %), as Fig. 9 of the FGD paper draws them,
and the same from 80 % arrived, where they part.
Every figure is read from the ``compare.json`` document. The page's look is the summary report's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from gpufleet.experiments.chart_view import ChartView
from gpufleet.experiments.stats import metric_cells, metric_head, trace_labels
from gpufleet.report.html import CHART_H, CHART_W, CSS, PALETTE

X_MAX, Y_MAX = 130.0, 100.0
ZOOM_FROM = 80.0
IDEAL_COLOR = "#8c959f"


def render_compare_html(document: Mapping[str, Any]) -> str:
    """The page for a ``gpufleet.compare/v1`` document."""
    labels = trace_labels(document["traces"])
    runs = len(document["runs"])
    facts = (
        f"{runs} runs of the FGD paper's protocol: {len(document['policies'])} policies, "
        f"seeds {seed_text(document['seeds'])}, "
        f"nodes {', '.join(document['nodes'])}. Statistics over seeds (sd: sample standard deviation)."
    )
    sections = [
        section("Figures at 100 % arrived", _stats_table(document["stats"], labels)),
    ]
    for trace in document["traces"]:
        groups = [g for g in document["stats"] if g["trace"] == trace]
        sections.append(
            section(
                f"GPU allocation against arrived workload: {labels[trace]}",
                _allocation_chart(groups, document["arrived_pct"]),
            )
        )
    return page(facts, sections, document["schema"])


def page(
    facts: str,
    sections: Sequence[str],
    schema: str,
    title: str = "gpufleet compare",
    source: str = "compare.json",
) -> str:
    """The whole page: a heading with ``facts`` under it, the sections, a footer naming the schema."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n<main>\n"
        f'<section><h1>{escape(title)}</h1><div class="muted">{escape(facts)}</div></section>\n'
        + "\n".join(sections)
        + f"\n<footer>Every figure comes from {escape(source)} ({escape(schema)}).</footer>"
        + "\n</main>\n</body>\n</html>\n"
    )


def section(heading: str, content: str) -> str:
    return f"<section>\n<h2>{escape(heading)}</h2>\n{content}\n</section>"


def seed_text(seeds: Sequence[int]) -> str:
    """``42..51`` for a run of seeds, else the list."""
    return (
        f"{seeds[0]}..{seeds[-1]}"
        if list(seeds) == list(range(seeds[0], seeds[-1] + 1))
        else str(list(seeds))
    )


def _stats_table(stats: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> str:
    """Per trace and policy: runs, and mean ± sd, median and min–max of each metric."""
    head = ["trace", "policy", "runs", *metric_head(spread=True)]
    rows = [[labels[g["trace"]], g["policy"], str(g["runs"]), *metric_cells(g, spread=True)] for g in stats]
    return stats_table(head, rows, 2)


def stats_table(head: Sequence[str], rows: Sequence[Sequence[str]], numbers_from: int) -> str:
    """A table of statistics; columns from ``numbers_from`` on are right-aligned figures."""
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = [
        "<tr>"
        + "".join(
            f"<td{' class=num' if i >= numbers_from else ''}>{escape(c)}</td>" for i, c in enumerate(row)
        )
        for row in rows
    ]
    return (
        f'<table class="stats">\n<thead><tr>{cells}</tr></thead>\n<tbody>\n'
        + "\n".join(body)
        + ("\n</tbody></table>")
    )


def _zoom(curves: Sequence[Sequence[tuple[float, float | None]]]) -> ChartView:
    """Arrived 80..130 %, allocation from just below the lowest curve there up to 100 %."""
    lows = [y for curve in curves for x, y in curve if y is not None and x >= ZOOM_FROM]
    low = min([*lows, ZOOM_FROM])
    return ChartView(ZOOM_FROM, X_MAX, max(0.0, 5 * math.floor(low / 5 - 0.2)), Y_MAX)


def _allocation_chart(groups: Sequence[Mapping[str, Any]], arrived: Sequence[float]) -> str:
    curves = [list(zip(arrived, group["median_gpu_alloc_pct"], strict=True)) for group in groups]
    lines = [("Ideal", IDEAL_COLOR, [(a, min(a, Y_MAX)) for a in arrived], ' stroke-dasharray="6 4"')]
    for i, (group, curve) in enumerate(zip(groups, curves, strict=True)):
        lines.append((group["policy"], PALETTE[i % len(PALETTE)], curve, ""))
    legend = "".join(
        f'<span><span class="sw" style="background:{color}"></span>{escape(name)}</span>'
        for name, color, _, _ in lines
    )
    charts = []
    for view, aria in ((ChartView(0.0, X_MAX, 0.0, Y_MAX), "whole"), (_zoom(curves), "from 80 % arrived")):
        paths = [
            f'<path d="{view.path(points)}" fill="none" stroke="{color}" stroke-width="1.8"{dash}>'
            f"<title>{escape(name)}</title></path>"
            for name, color, points, dash in lines
        ]
        charts.append(
            f'<svg viewBox="0 0 {CHART_W} {CHART_H}" role="img" '
            f'aria-label="median GPU allocation against arrived workload, {aria}">\n'
            + "\n".join(view.axes("arrived workload (% of the cluster's GPUs)", "GPU allocation (%)") + paths)
            + "\n</svg>"
        )
    note = '<div class="muted">Median over the seeds at each arrived percent; below, from 80 % arrived.</div>'
    return f'{note}<div class="legend">{legend}</div>' + "\n".join(charts)
