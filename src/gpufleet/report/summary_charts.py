"""The charts of the summary report, as Plotly figure dicts read from a summary (`gpufleet.summary/v1`).

GPUs and pending pods over time, series keyed by pool / node state / workload, the per-pod
pending-to-working waterfall (one stacked bar per pod, a trace per stage), the node start chain
per node, GPUs allocated per node, and per Traffic target its serving over time (requests per
second, backlog, request wait, working replicas, simulated DCGM_FI_DEV_GPU_UTIL). Charts that
show part of their data return, beside the figure, a sentence saying what was left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gpufleet.report._format import fmt_num, human_duration
from gpufleet.report.charts import (
    BAR_ROW_PX,
    MAX_POINTS,
    Bar,
    Figure,
    Segment,
    Series,
    axis,
    downsample,
    layout,
    palette_color,
    seconds_text,
    segment_bars,
    step_lines,
    time_unit,
)
from gpufleet.report.latency import STAGE_ORDER, pending_to_working

MAX_SERIES = 10
MAX_WATERFALL_PODS = 60
MAX_CHAIN_NODES = 40
MAX_NODE_BARS = 100
STAGE_COLORS = {
    "before_snapshot": "#6e7781",
    "scheduling": "#d4a72c",
    "node_provisioning": "#8250df",
    "gang_wait": "#cf222e",
    "image_pull": "#218bff",
    "model_load": "#1a7f37",
    "warmup": "#bc4c00",
    "other": "#8c959f",
    "readiness": "#116329",  # measured: model load and warm-up together (gpufleet startup)
}
EXTRA_STAGE_COLOR = "#424a53"
CHAIN_SEGMENTS = (
    ("ready", "launch request → kubelet Ready", "#57606a"),
    ("gpu", "Ready → GPUs allocatable", "#1b7c83"),
)
#: The columns of a Traffic target's ``timeline`` rows, in order.
TRAFFIC_COLUMNS = ("t_s", "rps", "backlog", "wait_s", "replicas_working", "gpu_util_pct")
Chain = tuple[Mapping[str, Any], tuple[float, float | None, float | None]]


def gpu_figure(summary: Mapping[str, Any]) -> Figure:
    timeline = summary["timeline"]
    series = [
        Series("total", timeline["gpus_total"], "#8c959f"),
        Series("allocated", timeline["gpus_allocated"], "#0969da"),
        Series("working", timeline["gpus_working"], "#1a7f37"),
    ]
    return step_lines(timeline["t_s"], series, float(summary["end_time_s"]), "GPUs", " GPUs")


def pending_figure(summary: Mapping[str, Any]) -> Figure:
    timeline = summary["timeline"]
    series = [Series("pending", timeline["pods_pending"], "#bc4c00")]
    return step_lines(timeline["t_s"], series, float(summary["end_time_s"]), "pods", " pods pending")


def keyed_figure(
    summary: Mapping[str, Any], by_key: Mapping[str, Sequence[float]], y_title: str, what: str
) -> tuple[Figure, str]:
    """A step line per key (at most `MAX_SERIES`, the highest peaks), and what was left out."""
    ranked = sorted(by_key, key=lambda key: (-max([0.0, *by_key[key]]), key))
    keys = sorted(ranked[:MAX_SERIES])
    series = [Series(key, by_key[key], palette_color(i)) for i, key in enumerate(keys)]
    figure = step_lines(summary["timeline"]["t_s"], series, float(summary["end_time_s"]), y_title)
    note = (
        f"Showing the {len(keys)} of {len(by_key)} {what} with the highest peaks."
        if ranked[len(keys) :]
        else ""
    )
    return figure, note


def stage_color(stage: str) -> str:
    return STAGE_COLORS.get(stage, EXTRA_STAGE_COLOR)


def waterfall_figure(pods: Sequence[Mapping[str, Any]]) -> tuple[Figure, str]:
    """One bar per pod that waited (the slowest `MAX_WATERFALL_PODS`), its stages in order."""
    ranked = sorted(pods, key=lambda pod: (-(pending_to_working(pod) or 0.0), str(pod["name"])))
    shown = ranked[:MAX_WATERFALL_PODS]
    extras = sorted({key for pod in shown for key in pod.get("stages") or {}}.difference(STAGE_ORDER))
    order = (*STAGE_ORDER, *extras)
    bars = []
    for pod in shown:
        stages: Mapping[str, float] = pod.get("stages") or {}
        segments = tuple(Segment(s, float(stages[s])) for s in order if (stages.get(s) or 0) > 0)
        total = human_duration(pending_to_working(pod))
        parts = seconds_text([(s.key, s.length) for s in segments])
        hover = f"<b>{pod['name']}</b>: {total} pending to working" + (f"<br>{parts}" if parts else "")
        bars.append(Bar(str(pod["name"]), hover, segments))
    keys = [(stage, stage, stage_color(stage)) for stage in order]
    figure = segment_bars(bars, keys, "time from the pod's creation")
    if len(shown) < len(pods):
        note = (
            f"Showing the {len(shown)} slowest of the {len(pods)} pods that waited before computing "
            "(by pending to working); the rest are left out."
        )
    else:
        note = f"All {len(pods)} pods that waited before computing, slowest first."
    return figure, note


def chain_figure(chains: Sequence[Chain]) -> tuple[Figure, str]:
    """One bar per launched node (the slowest `MAX_CHAIN_NODES`): launch → Ready, then → GPUs allocatable."""

    def duration(item: Chain) -> float:
        created, ready, gpu_ready = item[1]
        return max(t for t in (ready, gpu_ready, created) if t is not None) - created

    ranked = sorted(chains, key=lambda item: (-duration(item), str(item[0]["name"])))
    shown = ranked[:MAX_CHAIN_NODES]
    bars = []
    for node, (created, ready, gpu_ready) in shown:
        to_ready = None if ready is None else ready - created
        to_gpus = None if gpu_ready is None else gpu_ready - created
        segments = [Segment("ready", to_ready or 0.0)]
        if to_gpus is not None:
            segments.append(Segment("gpu", to_gpus - (to_ready or 0.0)))
        pool = f" (pool {node['pool']})" if node.get("pool") else ""
        hover = (
            f"<b>{node['name']}</b>{pool}: Ready after {human_duration(to_ready)}, "
            f"GPUs allocatable after {human_duration(to_gpus)}"
        )
        bars.append(Bar(str(node["name"]), hover, tuple(segments)))
    figure = segment_bars(bars, CHAIN_SEGMENTS, "time from the launch request")
    if len(shown) < len(chains):
        note = f"Showing the {len(shown)} slowest of {len(chains)} nodes; the rest are left out."
    else:
        note = f"All {len(chains)} nodes with a start chain, slowest first."
    return figure, note


def node_allocation_figure(nodes: Sequence[Mapping[str, Any]]) -> tuple[Figure, str]:
    """Per node (by name, at most `MAX_NODE_BARS`): its GPUs and, over them, those allocated at the end."""
    shown = nodes[:MAX_NODE_BARS]
    names = [str(node["name"]) for node in shown]
    hover = [
        f"<b>{node['name']}</b>"
        + (f" (pool {node['pool']})" if node.get("pool") else "")
        + f": {fmt_num(node['gpus_allocated'])} of {fmt_num(node['gpus'])} GPUs allocated"
        for node in shown
    ]
    traces = [
        {
            "type": "bar",
            "orientation": "h",
            "name": name,
            "y": names,
            "x": [float(node[key]) for node in shown],
            "marker": {"color": color},
            "hovertext": hover,
            "hovertemplate": "%{hovertext}<extra></extra>",
        }
        for key, name, color in (
            ("gpus", "GPUs on the node", "#d0d7de"),
            ("gpus_allocated", "allocated", "#0969da"),
        )
    ]
    y_axis = axis("", autorange="reversed", type="category", showgrid=False, ticks="")
    height = BAR_ROW_PX * len(shown) + 110
    most = max(float(node["gpus"]) for node in shown)
    x_axis = axis("GPUs", rangemode="tozero", dtick=max(1, math.ceil(most / 8)))  # whole GPUs
    figure = {"data": traces, "layout": layout(height, x_axis, y_axis, barmode="overlay")}
    note = f"Showing the first {len(shown)} of {len(nodes)} nodes by name." if len(shown) < len(nodes) else ""
    return figure, note


#: Panels of the serving chart, top first: (row column, legend label, short axis title, hover unit).
SERVING_PANELS = (
    ("rps", "requests per second", "req/s", " req/s"),
    ("backlog", "backlog (requests queued)", "backlog", " requests"),
    ("wait_s", "request wait", "wait (s)", " s"),
    ("replicas_working", "replicas working", "replicas", " replicas"),
    ("gpu_util_pct", "DCGM_FI_DEV_GPU_UTIL (simulated) %", "GPU util %", " %"),
)
SERVING_PANEL_PX = 120


def serving_figure(rows: Sequence[Sequence[float | None]], end_time_s: float) -> Figure:
    """A Traffic target's ``timeline`` rows as stacked panels over one time axis (zooming one zooms
    all): requests per second, backlog, request wait, working replicas, GPU utilisation. ``rows``
    must not be empty."""
    t = np.asarray([row[0] for row in rows], dtype=np.float64)
    index = {name: i for i, name in enumerate(TRAFFIC_COLUMNS)}
    values = [
        np.asarray(
            [np.nan if row[index[name]] is None else row[index[name]] for row in rows], dtype=np.float64
        )
        for name, *_ in SERVING_PANELS
    ]
    t, values = downsample(t, values, MAX_POINTS)
    size, unit = time_unit(max(float(t[-1]), end_time_s) - float(t[0]))
    moments = [human_duration(float(v)) for v in t]
    share = 1.0 / len(SERVING_PANELS)
    traces: list[dict[str, Any]] = []
    axes: dict[str, Any] = {}
    for i, ((_, label, title, unit_of_y), column) in enumerate(zip(SERVING_PANELS, values, strict=True)):
        top = 1.0 - i * share
        axes[f"yaxis{i + 1}"] = axis(title, domain=[top - share + 0.05, top], anchor="x", rangemode="tozero")
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": label,
                "x": (t / size).tolist(),
                "y": [None if np.isnan(v) else float(v) for v in column],
                "yaxis": f"y{i + 1}",
                "line": {"shape": "hv", "color": palette_color(i), "width": 2},
                "customdata": moments,
                "hovertemplate": f"%{{y:.3~f}}{unit_of_y} at %{{customdata}}<extra>{label}</extra>",
            }
        )
    x_axis = axis(f"time ({unit})", anchor=f"y{len(SERVING_PANELS)}")
    height = SERVING_PANEL_PX * len(SERVING_PANELS) + 110
    return {"data": traces, "layout": layout(height, x_axis, axes.pop("yaxis1"), **axes)}
