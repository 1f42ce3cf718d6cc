"""``gpufleet compare``'s ``report.html`` for scenarios: one self-contained page, its chart drawn by Plotly.

A table with a row per variant (long names wrap) and a column per figure the runs carry (cost,
pending-to-working p50 and p95, GPU shares, pods, request p95 wait where there is Traffic, waits by
job size, the end of the run...): mean ± sd over the seeds, min–max under it, durations in human
form. Then, where the runs had node pools (autoscaling), cost against p95 pending-to-working time:
one point per variant at the means over the seeds, with whiskers from the lowest to the highest
seed's figure on each axis, the trade-off a warm pool or a longer scale-down cooldown buys. Every
figure is read from the ``gpufleet.compare-scenarios/v1`` document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gpufleet.experiments.compare_html import Cell, compare_page, seed_text, stats_table
from gpufleet.experiments.scenario_runs import SCENARIO_GROUP, SCENARIO_METRICS
from gpufleet.experiments.stats import group_stats
from gpufleet.report._format import MISSING, fmt_num, human_bytes, human_duration, human_percent
from gpufleet.report.chart_divs import ChartDivs
from gpufleet.report.charts import CHART_HEIGHT, Figure, axis, layout, palette_color, time_unit
from gpufleet.report.page import muted, section

X_KEY, Y_KEY = "cost", "pending_to_working_p95_s"
#: Run fields that are not figures of the scenario: the seed and overrides that made it, and how
#: long the machine took.
NOT_FIGURES = frozenset({"seed", "parameters", "wall_seconds"})
#: The variant's column takes a sixth of the table, the runs' the width of a small count.
VARIANT_WIDTHS = ("16%", "3.5em")
UNIT_WORDS = {"s": "", "bytes": "", "pct": "%"}
TITLES = {
    **{key: title.removesuffix(" s") for key, title in SCENARIO_METRICS},
    "pods_started": "pods started",
    "pods_failed": "pods failed",
    "gpu_hours_provisioned": "GPU-hours provisioned",
    "gpu_working_pct": "GPUs working %",
    "end_time_s": "end of the run",
}


def render_scenario_compare_html(document: Mapping[str, Any]) -> str:
    """The page for a ``gpufleet.compare-scenarios/v1`` document."""
    facts = (
        f"{len(document['runs'])} simulations: {len(document['variants'])} variants, seeds "
        f"{seed_text(document['seeds'])}. Per figure: mean ± sd over the seeds (sd: sample standard "
        "deviation), min–max under it. Pending→working: from a pod's creation until it computes, over "
        "the pods that began computing."
    )
    sections = [section("Figures over seeds", figures_table(document["runs"]))]
    if document["autoscaling"]:
        charts = ChartDivs()
        sections.append(
            section("Cost against p95 pending→working time", cost_latency_chart(document["stats"], charts))
        )
    return compare_page("gpufleet compare", facts, sections, document["schema"], "compare.json")


def run_figures(run: Mapping[str, Any]) -> dict[str, float | None]:
    """A run's figures: its numeric fields (``None`` kept), and those of a field holding numbers by
    key (per job size, say) as ``field.key``."""
    figures: dict[str, float | None] = {}
    for key, value in run.items():
        if key in NOT_FIGURES or isinstance(value, bool):
            continue
        if value is None or isinstance(value, int | float):
            figures[key] = value
        elif isinstance(value, Mapping):
            for inner, number in value.items():
                if number is None or (isinstance(number, int | float) and not isinstance(number, bool)):
                    figures[f"{key}.{inner}"] = number
    return figures


def _title(key: str) -> str:
    """The heading of a figure: its known title, or its key in words without the unit (which the
    figures show), ``%`` for a percentage; ``field.key`` as ``field: key``."""
    field, _, inner = key.partition(".")
    words = [UNIT_WORDS.get(word, word) for word in field.split("_")]
    base = TITLES.get(field) or " ".join(word for word in words if word)
    return f"{base}: {inner}" if inner else base


def _formatter(key: str) -> Callable[[float], str]:
    """How a figure reads: durations and sizes in human form, percentages, money to two places."""
    field = key.partition(".")[0]
    if field.endswith("_s") or "_s_" in field:
        return human_duration
    if field.endswith("_bytes"):
        return human_bytes
    if field.endswith("_pct") or "_pct_" in field:
        return human_percent
    if field == "cost":
        return lambda value: f"{value:,.2f}"
    return lambda value: fmt_num(round(value, 2))


def figures_table(runs: Sequence[Mapping[str, Any]]) -> str:
    """Per variant, a column per figure some run has: mean ± sd over min–max."""
    lines = [{"variant": run["variant"], "seed": run["seed"], **run_figures(run)} for run in runs]
    keys = list(dict.fromkeys(key for line in lines for key in line if key not in ("variant", "seed")))
    first = [key for key, _ in SCENARIO_METRICS if key in keys]
    order = first + [key for key in keys if key not in first]
    metrics = [(key, _title(key)) for key in order]
    stats = group_stats(lines, SCENARIO_GROUP, metrics)
    shown = [(key, title) for key, title in metrics if any(group[key]["n"] for group in stats)]
    rows: list[list[Cell]] = [
        [group["variant"], str(group["runs"]), *(_spread(group[key], _formatter(key)) for key, _ in shown)]
        for group in stats
    ]
    return stats_table(["variant", "runs", *(title for _, title in shown)], rows, 1, VARIANT_WIDTHS)


def _spread(figures: Mapping[str, Any], text: Callable[[float], str]) -> Cell:
    if figures["mean"] is None:
        return MISSING
    return (
        f"{text(figures['mean'])} ± {text(figures['sd'])}",
        f"{text(figures['min'])}–{text(figures['max'])}",
    )


def cost_latency_chart(stats: Sequence[Mapping[str, Any]], charts: ChartDivs) -> str:
    """One point per variant (means) with min–max whiskers; variants without a p95 are left out."""
    shown = [
        (i, g) for i, g in enumerate(stats) if g[X_KEY]["mean"] is not None and g[Y_KEY]["mean"] is not None
    ]
    if not shown:
        return muted("No variant had a pod that began computing.")
    size, unit = time_unit(max(g[Y_KEY]["max"] for _, g in shown))
    traces = []
    for i, group in shown:
        x, y = group[X_KEY], group[Y_KEY]
        hover = (
            f"<b>{group['variant']}</b>: cost {x['mean']:.2f} ({x['min']:.2f}–{x['max']:.2f}), "
            f"p95 {human_duration(y['mean'])} ({human_duration(y['min'])}–{human_duration(y['max'])}), "
            f"{group['runs']} runs"
        )
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": group["variant"],
                "x": [x["mean"]],
                "y": [y["mean"] / size],
                "error_x": _whisker(x["mean"], x["min"], x["max"], 1.0),
                "error_y": _whisker(y["mean"], y["min"], y["max"], size),
                "marker": {"color": palette_color(i), "size": 11},
                "hovertext": [hover],
                "hovertemplate": "%{hovertext}<extra></extra>",
            }
        )
    figure: Figure = {
        "data": traces,
        "layout": layout(
            CHART_HEIGHT + 60,
            axis("cost (pricePerHour × hours)"),
            axis(f"p95 pending→working ({unit})", rangemode="tozero"),
        ),
    }
    note = muted(
        "Each point: the means over the seeds; whiskers: lowest to highest seed. "
        "Lower left is cheaper and faster."
    )
    return note + charts.div(figure)


def _whisker(mean: float, low: float, high: float, size: float) -> dict[str, Any]:
    return {
        "type": "data",
        "symmetric": False,
        "array": [(high - mean) / size],
        "arrayminus": [(mean - low) / size],
        "thickness": 1.5,
        "width": 0,
    }
