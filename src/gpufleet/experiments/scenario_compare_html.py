"""``gpufleet compare``'s ``report.html`` for scenarios: one self-contained page (inline SVG).

A table of the statistics over seeds per variant (mean ± sd and min–max of cost, pending-to-working
p50 and p95, GPU-hours working as a share of those provisioned, pods pending at the end, request
p95 wait where there is Traffic), then, where the runs had node pools (autoscaling), cost against
p95 pending-to-working time: one point per variant at the means over the seeds, with whiskers from
the lowest to the highest seed's figure on each axis, the trade-off a warm pool or a longer
scale-down cooldown buys. Every figure is read from the ``gpufleet.compare-scenarios/v1`` document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from gpufleet.experiments.chart_view import ChartView
from gpufleet.experiments.compare_html import page, section, seed_text, stats_table
from gpufleet.experiments.scenario_runs import SCENARIO_METRICS
from gpufleet.experiments.stats import measured, metric_cells, metric_head
from gpufleet.report.html import CHART_H, CHART_W, PALETTE, nice_ticks

X_KEY, Y_KEY = "cost", "pending_to_working_p95_s"


def render_scenario_compare_html(document: Mapping[str, Any]) -> str:
    """The page for a ``gpufleet.compare-scenarios/v1`` document."""
    stats = document["stats"]
    facts = (
        f"{len(document['runs'])} simulations: {len(document['variants'])} variants, seeds "
        f"{seed_text(document['seeds'])}. Statistics over seeds (sd: sample standard deviation). "
        "Pending→working: from a pod's creation until it computes, over the pods that began computing."
    )
    metrics = measured(stats, SCENARIO_METRICS)
    head = ["variant", "runs", *metric_head(spread=True, metrics=metrics, median=False)]
    rows = [[g["variant"], str(g["runs"]), *metric_cells(g, True, metrics, median=False)] for g in stats]
    sections = [section("Figures over seeds", f'<div class="scroll">{stats_table(head, rows, 1)}</div>')]
    if document["autoscaling"]:
        sections.append(section("Cost against p95 pending→working time", cost_latency_chart(stats)))
    return page(facts, sections, document["schema"])


def _span(lows: Sequence[float], highs: Sequence[float], ticks: int) -> tuple[float, float]:
    """A range of round ticks around the values, with a margin, never below 0."""
    lo, hi = min(lows), max(highs)
    margin = (hi - lo) * 0.15 or abs(hi) * 0.05 or 1.0
    marks = nice_ticks(max(0.0, lo - margin), hi + margin, target=ticks)
    return marks[0], marks[-1]


def cost_latency_chart(stats: Sequence[Mapping[str, Any]]) -> str:
    """One point per variant (means) with min–max whiskers; variants without a p95 are left out."""
    shown = [
        (i, g) for i, g in enumerate(stats) if g[X_KEY]["mean"] is not None and g[Y_KEY]["mean"] is not None
    ]
    if not shown:
        return '<div class="muted">No variant had a pod that began computing.</div>'
    x0, x1 = _span([g[X_KEY]["min"] for _, g in shown], [g[X_KEY]["max"] for _, g in shown], 8)
    y0, y1 = _span([g[Y_KEY]["min"] for _, g in shown], [g[Y_KEY]["max"] for _, g in shown], 5)
    view = ChartView(x0, x1, y0, y1)
    marks = []
    legend = []
    for i, group in shown:
        color = PALETTE[i % len(PALETTE)]
        x, y = group[X_KEY], group[Y_KEY]
        cx, cy = view.px(x["mean"]), view.py(y["mean"])
        tip = escape(
            f"{group['variant']}: cost {x['mean']:.2f} ({x['min']:.2f}–{x['max']:.2f}), "
            f"p95 {y['mean']:.1f} s ({y['min']:.1f}–{y['max']:.1f}), {group['runs']} runs"
        )
        marks.append(
            f'<g stroke="{color}" stroke-width="1.5"><title>{tip}</title>'
            f'<line x1="{view.px(x["min"]):.1f}" y1="{cy:.1f}" x2="{view.px(x["max"]):.1f}" y2="{cy:.1f}"/>'
            f'<line x1="{cx:.1f}" y1="{view.py(y["min"]):.1f}" x2="{cx:.1f}" y2="{view.py(y["max"]):.1f}"/>'
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{color}"/></g>'
        )
        legend.append(
            f'<span><span class="sw" style="background:{color}"></span>{escape(group["variant"])}</span>'
        )
    note = (
        '<div class="muted">Each point: the means over the seeds; whiskers: lowest to highest seed. '
        "Lower left is cheaper and faster.</div>"
    )
    svg = (
        f'<svg viewBox="0 0 {CHART_W} {CHART_H}" role="img" '
        'aria-label="cost against p95 pending to working">\n'
        + "\n".join(view.axes("cost (pricePerHour × hours)", "p95 pending→working (s)", x_ticks=8) + marks)
        + "\n</svg>"
    )
    return f'{note}<div class="legend">{"".join(legend)}</div>{svg}'
