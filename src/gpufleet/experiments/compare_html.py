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
from dataclasses import dataclass
from html import escape
from typing import Any

from gpufleet.experiments.stats import metric_cells, metric_head, trace_labels
from gpufleet.report.html import (
    CHART_H,
    CHART_W,
    CSS,
    PAD_BOTTOM,
    PAD_LEFT,
    PAD_RIGHT,
    PAD_TOP,
    PALETTE,
    nice_ticks,
)

X_MAX, Y_MAX = 130.0, 100.0
ZOOM_FROM = 80.0
IDEAL_COLOR = "#8c959f"


def render_compare_html(document: Mapping[str, Any]) -> str:
    """The page for a ``gpufleet.compare/v1`` document."""
    labels = trace_labels(document["traces"])
    runs = len(document["runs"])
    seeds = document["seeds"]
    seed_text = f"{seeds[0]}..{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else str(seeds)
    facts = (
        f"{runs} runs of the FGD paper's protocol: {len(document['policies'])} policies, seeds {seed_text}, "
        f"nodes {', '.join(document['nodes'])}. Statistics over seeds (sd: sample standard deviation)."
    )
    sections = [
        f'<section><h1>gpufleet compare</h1><div class="muted">{escape(facts)}</div></section>',
        _section("Figures at 100 % arrived", _stats_table(document["stats"], labels)),
    ]
    for trace in document["traces"]:
        groups = [g for g in document["stats"] if g["trace"] == trace]
        sections.append(
            _section(
                f"GPU allocation against arrived workload: {labels[trace]}",
                _allocation_chart(groups, document["arrived_pct"]),
            )
        )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>gpufleet compare</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(sections)
        + "\n<footer>Every figure comes from compare.json (gpufleet.compare/v1).</footer>"
        + "\n</main>\n</body>\n</html>\n"
    )


def _section(heading: str, content: str) -> str:
    return f"<section>\n<h2>{escape(heading)}</h2>\n{content}\n</section>"


def _stats_table(stats: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> str:
    """Per trace and policy: runs, and mean ± sd, median and min–max of each metric."""
    head = ["trace", "policy", "runs", *metric_head(spread=True)]
    rows = [[labels[g["trace"]], g["policy"], str(g["runs"]), *metric_cells(g, spread=True)] for g in stats]
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = [
        "<tr>" + "".join(f"<td{' class=num' if i >= 2 else ''}>{escape(c)}</td>" for i, c in enumerate(row))
        for row in rows
    ]
    return (
        f'<table class="stats">\n<thead><tr>{cells}</tr></thead>\n<tbody>\n'
        + "\n".join(body)
        + ("\n</tbody></table>")
    )


@dataclass(frozen=True)
class _View:
    """The data ranges a chart shows, mapped onto the SVG canvas; points outside are clipped."""

    x0: float
    x1: float
    y0: float
    y1: float

    def px(self, x: float) -> float:
        return PAD_LEFT + (x - self.x0) / (self.x1 - self.x0) * (CHART_W - PAD_LEFT - PAD_RIGHT)

    def py(self, y: float) -> float:
        return CHART_H - PAD_BOTTOM - (y - self.y0) / (self.y1 - self.y0) * (CHART_H - PAD_TOP - PAD_BOTTOM)

    def path(self, points: Sequence[tuple[float, float | None]]) -> str:
        """SVG path commands through the points in view, broken where a value is missing."""
        commands: list[str] = []
        pen_down = False
        for x, y in points:
            if y is None or x < self.x0 or x > self.x1:
                pen_down = False
                continue
            y = min(max(y, self.y0), self.y1)
            commands.append(f"{'L' if pen_down else 'M'}{self.px(x):.1f} {self.py(y):.1f}")
            pen_down = True
        return "".join(commands)

    def axes(self) -> list[str]:
        left, right, base = PAD_LEFT, CHART_W - PAD_RIGHT, CHART_H - PAD_BOTTOM
        parts = []
        for tick in nice_ticks(self.y0, self.y1):
            y = self.py(tick)
            parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eaeef2"/>')
            parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
        parts.append(f'<line x1="{left}" y1="{base}" x2="{right}" y2="{base}" stroke="#8c959f"/>')
        for tick in nice_ticks(self.x0, self.x1, target=12):
            x = self.px(tick)
            parts.append(f'<text x="{x:.1f}" y="{base + 16}" text-anchor="middle">{tick:g}</text>')
        mid_y, mid_x = (PAD_TOP + base) / 2, (left + right) / 2
        parts.append(
            f'<text x="14" y="{mid_y:.1f}" text-anchor="middle" transform="rotate(-90 14 {mid_y:.1f})">'
            "GPU allocation (%)</text>"
        )
        parts.append(
            f'<text x="{mid_x:.1f}" y="{CHART_H - 6}" text-anchor="middle">'
            "arrived workload (% of the cluster's GPUs)</text>"
        )
        return parts


def _zoom(curves: Sequence[Sequence[tuple[float, float | None]]]) -> _View:
    """Arrived 80..130 %, allocation from just below the lowest curve there up to 100 %."""
    lows = [y for curve in curves for x, y in curve if y is not None and x >= ZOOM_FROM]
    low = min([*lows, ZOOM_FROM])
    return _View(ZOOM_FROM, X_MAX, max(0.0, 5 * math.floor(low / 5 - 0.2)), Y_MAX)


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
    for view, aria in ((_View(0.0, X_MAX, 0.0, Y_MAX), "whole"), (_zoom(curves), "from 80 % arrived")):
        paths = [
            f'<path d="{view.path(points)}" fill="none" stroke="{color}" stroke-width="1.8"{dash}>'
            f"<title>{escape(name)}</title></path>"
            for name, color, points, dash in lines
        ]
        charts.append(
            f'<svg viewBox="0 0 {CHART_W} {CHART_H}" role="img" '
            f'aria-label="median GPU allocation against arrived workload, {aria}">\n'
            + "\n".join(view.axes() + paths)
            + "\n</svg>"
        )
    note = '<div class="muted">Median over the seeds at each arrived percent; below, from 80 % arrived.</div>'
    return f'{note}<div class="legend">{legend}</div>' + "\n".join(charts)
