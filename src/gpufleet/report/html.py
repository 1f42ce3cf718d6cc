"""A self-contained HTML page for one summary: totals, charts, per-node allocation, pods, warnings.

The page opens offline: no scripts, no external stylesheets or fonts; the charts are
inline SVG drawn here. Every figure on it is read from the summary. Long series are
downsampled for drawing (first and last samples kept, and the maximum of each bucket so
spikes stay visible) and the pod table is capped, so big runs still render quickly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np
import numpy.typing as npt

from gpufleet.report._format import MISSING, fmt_num, is_pending, truncate

FloatArray = npt.NDArray[np.float64]

MAX_POINTS = 600
MAX_POD_ROWS = 500
FREE_NODES_SHOWN = 5
KNOWN_STAGES = ("scheduling", "node_provisioning", "gang_wait", "image_pull", "model_load", "warmup", "other")
TOTAL_CARDS = (
    ("gpus_total", "GPUs total"),
    ("gpus_allocated", "GPUs allocated"),
    ("gpus_working", "GPUs working"),
    ("pods_pending", "pods pending"),
    ("pods_running", "pods running"),
    ("pods_succeeded", "pods succeeded"),
    ("pods_failed", "pods failed"),
)

CHART_W, CHART_H = 860, 260
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 60, 20, 30, 40
BAR_ROW, BAR_LABEL_W, BAR_VALUE_W = 18, 220, 90

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;
  background:#f6f8fa;margin:0}
main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:16px;margin:0 0 12px}
section{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px 20px;margin:16px 0}
.muted{color:#656d76}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-top:12px}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:8px 14px;min-width:110px}
.card .v{font-size:20px;font-weight:600}
.card .k{color:#656d76;font-size:12px}
svg{width:100%;height:auto;display:block}
svg text{font:11px system-ui,sans-serif;fill:#57606a}
.scroll{max-height:520px;overflow:auto}
table{border-collapse:collapse;width:100%;font-size:12px}
th,td{border-bottom:1px solid #eaeef2;padding:4px 6px;text-align:left;vertical-align:top}
th{position:sticky;top:0;background:#f6f8fa}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.msg{min-width:240px;max-width:420px}
.phase-Pending{color:#9a6700;font-weight:600}
.phase-Failed{color:#cf222e;font-weight:600}
.phase-Running{color:#1a7f37}
footer{color:#656d76;font-size:12px;margin:24px 0}
""".strip()


def render_html(summary: dict[str, Any]) -> str:
    """Render ``summary`` (a valid `gpufleet.summary/v1` dict) as one self-contained HTML page."""
    scenario = summary.get("scenario")
    title = "gpufleet report" + (f" — {scenario}" if scenario else "")
    sections = [
        _header(summary, title),
        _section("GPUs over time", _gpu_chart(summary)),
        _section("Pending pods over time", _pending_chart(summary)),
        _section("GPU allocation per node", _node_bars(summary["nodes"])),
        _section("Pods", _pod_table(summary["pods"])),
        _section("Warnings", _warnings(summary["warnings"])),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(sections)
        + f"\n<footer>Every figure comes from the summary ({escape(str(summary['schema']))}).</footer>"
        + "\n</main>\n</body>\n</html>\n"
    )


def _section(heading: str, content: str) -> str:
    return f"<section>\n<h2>{escape(heading)}</h2>\n{content}\n</section>"


def _muted(text: str) -> str:
    return f'<p class="muted">{escape(text)}</p>'


# --- header -------------------------------------------------------------------------------------


def _header(summary: Mapping[str, Any], title: str) -> str:
    facts = [f"end time {fmt_num(summary['end_time_s'])} s"]
    if "seed" in summary:
        facts.append(f"seed {summary['seed']}")
    if summary.get("schedulers"):
        facts.append("schedulers: " + ", ".join(summary["schedulers"]))
    cards = "".join(_card(label, value) for label, value in _total_figures(summary["totals"]))
    return (
        f'<header>\n<h1>{escape(title)}</h1>\n<div class="muted">{escape(" · ".join(facts))}</div>\n'
        f'<div class="cards">{cards}</div>\n</header>'
    )


def _total_figures(totals: Mapping[str, Any]) -> list[tuple[str, float]]:
    """The contract's totals in a fixed order, then any further numeric totals by key."""
    known = {key for key, _ in TOTAL_CARDS}
    figures = [(label, totals[key]) for key, label in TOTAL_CARDS]
    extra = sorted(
        (key.replace("_", " "), value)
        for key, value in totals.items()
        if key not in known and isinstance(value, int | float) and not isinstance(value, bool)
    )
    return figures + extra


def _card(label: str, value: float) -> str:
    return (
        f'<div class="card"><div class="v">{fmt_num(value)}</div><div class="k">{escape(label)}</div></div>'
    )


# --- line charts --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Series:
    label: str
    values: FloatArray
    color: str


@dataclass(frozen=True)
class _Frame:
    """Data ranges of a chart and their mapping onto the SVG canvas (y always starts at 0)."""

    x0: float
    x1: float
    y1: float

    def px(self, x: float) -> float:
        return PAD_LEFT + (x - self.x0) / (self.x1 - self.x0) * (CHART_W - PAD_LEFT - PAD_RIGHT)

    def py(self, y: float) -> float:
        return CHART_H - PAD_BOTTOM - y / self.y1 * (CHART_H - PAD_TOP - PAD_BOTTOM)


def _gpu_chart(summary: Mapping[str, Any]) -> str:
    timeline = summary["timeline"]
    specs = (
        ("gpus_total", "total", "#8c959f"),
        ("gpus_allocated", "allocated", "#0969da"),
        ("gpus_working", "working", "#1a7f37"),
    )
    return _timeline_chart(summary, [(timeline[key], label, color) for key, label, color in specs], "GPUs")


def _pending_chart(summary: Mapping[str, Any]) -> str:
    return _timeline_chart(summary, [(summary["timeline"]["pods_pending"], "pending", "#bc4c00")], "pods")


def _timeline_chart(
    summary: Mapping[str, Any], specs: Sequence[tuple[Sequence[float], str, str]], y_label: str
) -> str:
    times = np.asarray(summary["timeline"]["t_s"], dtype=np.float64)
    if times.size == 0:
        return _muted("No timeline samples.")
    columns = [np.asarray(values, dtype=np.float64) for values, _, _ in specs]
    times, columns = downsample(times, columns, MAX_POINTS)
    series = [_Series(label, column, color) for (_, label, color), column in zip(specs, columns, strict=True)]
    x1 = max(float(times[-1]), float(summary["end_time_s"]))
    return _line_chart(times, series, x1, y_label)


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


def _line_chart(times: FloatArray, series: Sequence[_Series], x_end: float, y_label: str) -> str:
    x0 = float(times[0])
    y_max = max([1.0, *(float(np.nanmax(s.values)) for s in series)])
    y_ticks = nice_ticks(0.0, y_max)
    frame = _Frame(x0, x_end if x_end > x0 else x0 + 1.0, y_ticks[-1])
    parts = [
        f'<svg viewBox="0 0 {CHART_W} {CHART_H}" role="img" aria-label="{escape(y_label)} over time">',
        _y_axis(frame, y_ticks, y_label),
        _x_axis(frame),
        *(_step_path(frame, times, s) for s in series),
        _legend(series),
        "</svg>",
    ]
    return "\n".join(parts)


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten) covering ``lo``..``hi``."""
    span = hi - lo if hi > lo else 1.0
    raw = span / target
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * magnitude >= raw)
    first = math.floor(lo / step)
    last = math.ceil(hi / step - 1e-9)
    return [round(i * step, 12) for i in range(first, max(last, first + 1) + 1)]


def _time_unit(span_s: float) -> tuple[float, str]:
    if span_s <= 600:
        return 1.0, "s"
    if span_s <= 36_000:
        return 60.0, "min"
    return 3600.0, "h"


def _y_axis(frame: _Frame, ticks: Sequence[float], label: str) -> str:
    left, right = PAD_LEFT, CHART_W - PAD_RIGHT
    lines = []
    for tick in ticks:
        y = frame.py(tick)
        lines.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eaeef2"/>')
        lines.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt_num(tick)}</text>')
    mid = (PAD_TOP + CHART_H - PAD_BOTTOM) / 2
    lines.append(
        f'<text x="14" y="{mid:.1f}" text-anchor="middle" transform="rotate(-90 14 {mid:.1f})">'
        f"{escape(label)}</text>"
    )
    return "\n".join(lines)


def _x_axis(frame: _Frame) -> str:
    unit, unit_label = _time_unit(frame.x1 - frame.x0)
    base = CHART_H - PAD_BOTTOM
    lines = [f'<line x1="{PAD_LEFT}" y1="{base}" x2="{CHART_W - PAD_RIGHT}" y2="{base}" stroke="#8c959f"/>']
    for tick in nice_ticks(frame.x0 / unit, frame.x1 / unit, target=8):
        x = frame.px(tick * unit)
        if x < PAD_LEFT - 0.5 or x > CHART_W - PAD_RIGHT + 0.5:
            continue
        lines.append(f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" stroke="#8c959f"/>')
        lines.append(f'<text x="{x:.1f}" y="{base + 16}" text-anchor="middle">{fmt_num(tick)}</text>')
    centre = (PAD_LEFT + CHART_W - PAD_RIGHT) / 2
    lines.append(f'<text x="{centre:.1f}" y="{CHART_H - 6}" text-anchor="middle">time ({unit_label})</text>')
    return "\n".join(lines)


def _step_path(frame: _Frame, times: FloatArray, series: _Series) -> str:
    """A step line: each value holds until the next sample, the last one until the chart's end."""
    xs = [frame.px(float(t)) for t in times]
    ys = [frame.py(float(v)) for v in series.values]
    commands = [f"M{xs[0]:.1f} {ys[0]:.1f}"]
    commands.extend(f"H{x:.1f}V{y:.1f}" for x, y in zip(xs[1:], ys[1:], strict=True))
    commands.append(f"H{frame.px(frame.x1):.1f}")
    return (
        f'<path d="{"".join(commands)}" fill="none" stroke="{series.color}" stroke-width="1.8">'
        f"<title>{escape(series.label)}</title></path>"
    )


def _legend(series: Sequence[_Series]) -> str:
    items = []
    x = PAD_LEFT
    for s in series:
        items.append(f'<line x1="{x}" y1="12" x2="{x + 18}" y2="12" stroke="{s.color}" stroke-width="3"/>')
        items.append(f'<text x="{x + 24}" y="16">{escape(s.label)}</text>')
        x += 40 + 7 * len(s.label)
    return "\n".join(items)


# --- per-node allocation ------------------------------------------------------------------------


def _node_bars(nodes: Sequence[Mapping[str, Any]]) -> str:
    live = sorted((node for node in nodes if node.get("deleted_s") is None), key=lambda n: str(n["name"]))
    deleted = len(nodes) - len(live)
    note = _muted(f"{deleted} deleted nodes not shown.") if deleted else ""
    if not live:
        return _muted("No nodes at the end of the run.") + note
    scale = max([1.0, *(float(node["gpus"]) for node in live)])
    height = BAR_ROW * len(live) + 4
    rows = [_node_bar(index, node, scale) for index, node in enumerate(live)]
    svg = f'<svg viewBox="0 0 {CHART_W} {height}" role="img" aria-label="GPU allocation per node">\n'
    legend = _muted("Grey: GPUs on the node; blue: GPUs allocated to pods (at the end of the run).")
    return legend + f'<div class="scroll">{svg}' + "\n".join(rows) + "\n</svg></div>" + note


def _node_bar(index: int, node: Mapping[str, Any], scale: float) -> str:
    width = CHART_W - BAR_LABEL_W - BAR_VALUE_W
    top = index * BAR_ROW + 2
    total, allocated = float(node["gpus"]), float(node["gpus_allocated"])
    name = str(node["name"])
    pool = node.get("pool")
    in_pool = f" (pool {pool})" if pool else ""
    tooltip = f"{name}{in_pool}: {fmt_num(allocated)} of {fmt_num(total)} GPUs"
    return (
        f"<g><title>{escape(tooltip)}</title>"
        f'<text x="{BAR_LABEL_W - 8}" y="{top + 11}" text-anchor="end">{escape(truncate(name, 32))}</text>'
        f'<rect x="{BAR_LABEL_W}" y="{top}" width="{total / scale * width:.1f}" height="{BAR_ROW - 5}" '
        'fill="#d0d7de"/>'
        f'<rect x="{BAR_LABEL_W}" y="{top}" width="{min(allocated, total) / scale * width:.1f}" '
        f'height="{BAR_ROW - 5}" fill="#0969da"/>'
        f'<text x="{CHART_W - BAR_VALUE_W + 8}" y="{top + 11}">'
        f"{fmt_num(allocated)} / {fmt_num(total)}</text></g>"
    )


# --- pods ---------------------------------------------------------------------------------------

POD_COLUMNS = (
    "Pod",
    "Phase",
    "Reason",
    "Node",
    "GPUs",
    "Created (s)",
    "Bound (s)",
    "Working (s)",
    "Finished (s)",
    "Scheduler message",
    "Diagnosis",
    "Stages (s)",
)


def _interest(pod: Mapping[str, Any]) -> tuple[int, str]:
    """Sort key: pending pods first, then failed ones, then the rest; by name within each."""
    rank = 0 if is_pending(pod) else 1 if pod.get("phase") == "Failed" else 2
    return rank, str(pod["name"])


def _pod_table(pods: Sequence[Mapping[str, Any]]) -> str:
    if not pods:
        return _muted("No pods.")
    shown = sorted(pods, key=_interest)[:MAX_POD_ROWS]
    left_out = len(pods) - len(shown)
    note = (
        _muted(
            f"Showing {len(shown)} of {len(pods)} pods (pending first, then failed, then by name); "
            f"{left_out} pods left out."
        )
        if left_out
        else ""
    )
    head = "".join(f"<th>{escape(column)}</th>" for column in POD_COLUMNS)
    body = "\n".join(_pod_row(pod) for pod in shown)
    table = f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"
    return f'{note}<div class="scroll">{table}</div>'


def _pod_row(pod: Mapping[str, Any]) -> str:
    phase = str(pod["phase"])
    cells = [
        _td(str(pod["name"])),
        f'<td class="phase-{escape(phase)}">{escape(phase)}</td>',
        _td(pod.get("reason") or MISSING),
        _td(pod.get("node") or MISSING),
        *(_num_td(pod.get(key)) for key in ("gpus", "created_s", "bound_s", "working_s", "finished_s")),
        f'<td class="msg">{escape(pod.get("message") or "")}</td>',
        _lines_td(_diagnosis_lines(pod.get("diagnosis"))),
        _lines_td(_stage_lines(pod.get("stages") or {})),
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _td(text: str) -> str:
    return f"<td>{escape(text)}</td>"


def _num_td(value: float | None) -> str:
    return f'<td class="num">{fmt_num(value)}</td>'


def _lines_td(lines: Sequence[str]) -> str:
    return "<td>" + "<br>".join(escape(line) for line in lines) + "</td>"


def _diagnosis_lines(diagnosis: Mapping[str, Any] | None) -> list[str]:
    """A pod's diagnosis in a few short lines: request vs largest free block, free GPUs, gang, hints."""
    if not diagnosis:
        return []
    lines = [
        f"requests {fmt_num(diagnosis['gpus_requested'])} GPUs; "
        f"largest free block {fmt_num(diagnosis['largest_free_gpus'])}"
    ]
    free = diagnosis.get("free_gpus") or {}
    if free:
        lines.append("free: " + _top_free(free))
    gang = diagnosis.get("gang")
    if gang:
        lines.append(
            f"gang {gang['name']}: {gang['members_bound']}/{gang['members']} bound, "
            f"{gang['members_that_fit']} fit, min {gang['min_member']}, "
            f"needs {fmt_num(gang['gpus_needed'])} GPUs"
        )
    lines.extend(diagnosis.get("hints") or [])
    return lines


def _top_free(free: Mapping[str, float]) -> str:
    ranked = sorted(free.items(), key=lambda item: (-item[1], item[0]))
    text = ", ".join(f"{node} {fmt_num(gpus)}" for node, gpus in ranked[:FREE_NODES_SHOWN])
    more = len(ranked) - FREE_NODES_SHOWN
    return text + (f", +{more} more nodes" if more > 0 else "")


def _stage_lines(stages: Mapping[str, float]) -> list[str]:
    """Non-zero stages, the contract's names in their order first, then any others by name."""
    extra = sorted(key for key in stages if key not in KNOWN_STAGES)
    return [f"{key} {fmt_num(stages[key])}" for key in (*KNOWN_STAGES, *extra) if stages.get(key)]


# --- warnings -----------------------------------------------------------------------------------


def _warnings(warnings: Sequence[str]) -> str:
    if not warnings:
        return _muted("No warnings.")
    return "<ul>\n" + "\n".join(f"<li>{escape(str(warning))}</li>" for warning in warnings) + "\n</ul>"
