"""Plotly figure builders shared by gpufleet's pages: the look, time axes, step lines and stacked bars.

Each builder returns a plain Plotly figure dict (``{"data": [...], "layout": {...}}``), JSON-able,
built without importing Plotly (`chart_divs` draws it). Times are seconds in the summary; an axis
shows them in the unit that suits the span (s, min, h) and hovers show them in human form
(``2h 5m``). Long series are downsampled for drawing (first and last samples kept, and the maximum
of each bucket so spikes stay visible).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpufleet.report._format import human_duration

FloatArray = npt.NDArray[np.float64]
Figure = dict[str, Any]

MAX_POINTS = 600
CHART_HEIGHT = 300
BAR_ROW_PX = 22
PALETTE = (
    "#0550ae", "#bc4c00", "#1a7f37", "#8250df", "#cf222e",
    "#1b7c83", "#9a6700", "#bf3989", "#57606a", "#218bff",
)  # fmt: skip
GRID = "#eaeef2"
AXIS_LINE = "#8c959f"
#: The legend: one line above the plot, from its left edge.
LEGEND = {"orientation": "h", "x": 0, "y": 1.02, "xanchor": "left", "yanchor": "bottom"}
#: The legend of stacked bars, in the order of their segments (Plotly reverses it by default).
STACKED_LEGEND = {**LEGEND, "traceorder": "normal"}
TIME_UNITS = ((600.0, 1.0, "s"), (36_000.0, 60.0, "min"), (float("inf"), 3600.0, "h"))


def palette_color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def axis(title: str, **more: Any) -> dict[str, Any]:
    """An axis with its title, grid lines and a base line; ticks and labels stay inside the plot's margins."""
    return {
        "title": {"text": title},
        "gridcolor": GRID,
        "linecolor": AXIS_LINE,
        "showline": True,
        "zeroline": False,
        "automargin": True,
        "ticks": "outside",
        "tickcolor": AXIS_LINE,
        **more,
    }


def layout(height: int, x_axis: dict[str, Any], y_axis: dict[str, Any], **more: Any) -> dict[str, Any]:
    """The look of every chart: white, the page's font, the legend above the plot, hover near the mark."""
    return {
        "template": {},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 36, "b": 10},
        "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "showlegend": True,
        "legend": LEGEND,
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "xaxis": x_axis,
        "yaxis": y_axis,
        **more,
    }


def time_unit(span_s: float) -> tuple[float, str]:
    """Seconds per unit and its name for an axis spanning ``span_s`` seconds: s, min or h."""
    return next((size, name) for limit, size, name in TIME_UNITS if span_s <= limit)


def downsample(
    times: FloatArray, columns: Sequence[FloatArray], max_points: int
) -> tuple[FloatArray, list[FloatArray]]:
    """At most ``max_points`` samples: the first, the last, and between them the maximum of each bucket.

    Buckets split the interior samples into equal counts; a bucket is drawn at its first
    sample's time, so a spike anywhere in it still shows.
    """
    n = times.size
    if n <= max_points:
        return times, list(columns)
    starts = np.unique(np.linspace(1, n - 1, max_points - 2, endpoint=False).astype(np.intp))
    picked_times = np.concatenate([times[:1], times[starts], times[-1:]])
    picked = [
        np.concatenate([column[:1], np.maximum.reduceat(column[1 : n - 1], starts - 1), column[-1:]])
        for column in columns
    ]
    return picked_times, picked


@dataclass(frozen=True)
class Series:
    """A line: its legend label, its values (one per time) and its colour."""

    label: str
    values: Sequence[float | None]
    color: str


def step_lines(
    times: Sequence[float], series: Sequence[Series], x_end: float, y_title: str, unit_of_y: str = ""
) -> Figure:
    """Step lines over time: each value holds until the next sample, the last one until ``x_end``.

    Series are downsampled together to `MAX_POINTS`; a hover shows the series, its value (with
    ``unit_of_y``) and the time in human form. ``times`` must not be empty.
    """
    t = np.asarray(times, dtype=np.float64)
    columns = [np.asarray([np.nan if v is None else v for v in s.values], dtype=np.float64) for s in series]
    t, columns = downsample(t, columns, MAX_POINTS)
    end = max(float(t[-1]), x_end)
    t = np.append(t, end)
    size, name = time_unit(end - float(t[0]))
    moments = [human_duration(float(v)) for v in t]
    traces = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": s.label,
            "x": (t / size).tolist(),
            "y": [None if np.isnan(v) else float(v) for v in np.append(column, column[-1])],
            "line": {"shape": "hv", "color": s.color, "width": 2},
            "customdata": moments,
            "hovertemplate": f"%{{y}}{unit_of_y} at %{{customdata}}<extra>{s.label}</extra>",
        }
        for s, column in zip(series, columns, strict=True)
    ]
    y_axis = axis(y_title, rangemode="tozero")
    return {"data": traces, "layout": layout(CHART_HEIGHT, axis(f"time ({name})"), y_axis)}


@dataclass(frozen=True)
class Segment:
    """A part of a bar: which series it belongs to, and its length in seconds."""

    key: str
    length: float


@dataclass(frozen=True)
class Bar:
    """A horizontal bar of consecutive segments from 0, with what a hover on it says."""

    label: str
    hover: str
    segments: tuple[Segment, ...]


def segment_bars(bars: Sequence[Bar], keys: Sequence[tuple[str, str, str]], x_title: str) -> Figure:
    """Horizontal bars of consecutive segments, one row per bar (the first on top), one trace per
    segment key (``keys``: key, legend label, colour, in the order segments follow each other) so
    the legend toggles each; a hover on any segment names it and says the bar's ``hover``."""
    longest = max([1e-9, *(sum(s.length for s in bar.segments) for bar in bars)])
    size, name = time_unit(longest)
    labels = [bar.label for bar in bars]
    traces = []
    for key, label, color in keys:
        lengths = [sum(s.length for s in bar.segments if s.key == key) for bar in bars]
        if not any(lengths):
            continue
        traces.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": label,
                "y": labels,
                "x": [length / size for length in lengths],
                "marker": {"color": color},
                "hovertext": [
                    f"{label}: {human_duration(length)}<br>{bar.hover}"
                    for bar, length in zip(bars, lengths, strict=True)
                ],
                "hovertemplate": "%{hovertext}<extra></extra>",
            }
        )
    y_axis = axis("", autorange="reversed", type="category", showgrid=False, ticks="")
    height = BAR_ROW_PX * len(bars) + 110
    return {
        "data": traces,
        "layout": layout(height, axis(f"{x_title} ({name})"), y_axis, barmode="stack", legend=STACKED_LEGEND),
    }


def seconds_text(stages: Sequence[tuple[str, float]]) -> str:
    """``scheduling 1 s, image_pull 2m 5s``: the named durations in human form."""
    return ", ".join(f"{name} {human_duration(seconds)}" for name, seconds in stages)
