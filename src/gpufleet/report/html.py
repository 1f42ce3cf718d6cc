"""A self-contained HTML page for one summary: totals, charts, per-node allocation, pods, warnings.

The page opens offline: no scripts, no external stylesheets or fonts; the charts are
inline SVG drawn here. Every figure on it is read from the summary. Long series are
downsampled for drawing (first and last samples kept, and the maximum of each bucket so
spikes stay visible) and the pod table is capped, so big runs still render quickly.

Sections that need optional fields (cost and GPU-hours, work items, pending-to-working
latency, the node start chain, nodes per pool, replicas, autoscaler events) appear only
when the summary has those fields. The latency table uses the summary's ``latency`` field
and, when it is absent, computes the same figures with `latency_figures`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np
import numpy.typing as npt

from gpufleet.report._format import MISSING, fmt_num, is_pending, truncate
from gpufleet.report.job_waits import job_wait_figures
from gpufleet.report.latency import (
    STAGE_ORDER,
    latency_figures,
    nearest_rank,
    pending_to_working,
    percentiles,
    working_pods,
)
from gpufleet.report.startup_table import SPREAD_HEAD, chain_rows, stage_rows

FloatArray = npt.NDArray[np.float64]

MAX_POINTS = 600
MAX_POD_ROWS = 500
FREE_NODES_SHOWN = 5
KNOWN_STAGES = STAGE_ORDER
MAX_WATERFALL_PODS = 60
MAX_CHAIN_NODES = 40
MAX_EVENT_ROWS = 200
MAX_SERIES = 10
STAGE_COLORS = {
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
NODE_STAGE_ORDER = ("capacityWait", "boot", "driver", "join", "devicePlugin")
CHAIN_SEGMENTS = (
    ("ready", "launch request → kubelet Ready", "#57606a"),
    ("gpu", "Ready → GPUs allocatable", "#1b7c83"),
)
PALETTE = (
    "#0550ae", "#bc4c00", "#1a7f37", "#8250df", "#cf222e",
    "#1b7c83", "#9a6700", "#bf3989", "#57606a", "#218bff",
)  # fmt: skip
COST_KEYS = (
    "cost",
    "gpu_hours_provisioned",
    "gpu_hours_allocated",
    "gpu_hours_working",
    "pods_disrupted",
    "work_lost_s",
)
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
h3{font-size:14px;margin:16px 0 8px}
table.narrow{width:auto}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0 10px;font-size:12px}
.legend .sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;
  vertical-align:-2px}
""".strip()


def render_html(summary: dict[str, Any]) -> str:
    """Render ``summary`` (a valid `gpufleet.summary/v1` dict) as one self-contained HTML page."""
    scenario = summary.get("scenario")
    title = "gpufleet report" + (f" — {scenario}" if scenario else "")
    sections = [
        _header(summary, title),
        _section("GPUs over time", _gpu_chart(summary)),
        _section("Pending pods over time", _pending_chart(summary)),
        *_optional_sections(summary),
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
    """The contract's totals in a fixed order, then further numeric totals (not cost and GPU-hours) by key."""
    known = {key for key, _ in TOTAL_CARDS}.union(COST_KEYS)
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


def _line_chart(
    times: FloatArray, series: Sequence[_Series], x_end: float, y_label: str, svg_legend: bool = True
) -> str:
    x0 = float(times[0])
    y_max = max([1.0, *(float(np.nanmax(s.values)) for s in series)])
    y_ticks = nice_ticks(0.0, y_max)
    frame = _Frame(x0, x_end if x_end > x0 else x0 + 1.0, y_ticks[-1])
    parts = [
        f'<svg viewBox="0 0 {CHART_W} {CHART_H}" role="img" aria-label="{escape(y_label)} over time">',
        _y_axis(frame, y_ticks, y_label),
        _x_axis(frame),
        *(_step_path(frame, times, s) for s in series),
        _legend(series) if svg_legend else "",
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
        _lines_td(_stage_lines(pod.get("stages") or {}) + _node_stage_lines(pod.get("node_stages") or {})),
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


def _node_stage_lines(node_stages: Mapping[str, float]) -> list[str]:
    """The start chain of the node launched for the pod, on one line, when the pod has one."""
    parts = [f"{key} {fmt_num(node_stages[key])}" for key in _node_stage_names([node_stages])]
    return ["node: " + ", ".join(parts)] if parts else []


# --- warnings -----------------------------------------------------------------------------------


def _warnings(warnings: Sequence[str]) -> str:
    if not warnings:
        return _muted("No warnings.")
    return "<ul>\n" + "\n".join(f"<li>{escape(str(warning))}</li>" for warning in warnings) + "\n</ul>"


# --- optional sections --------------------------------------------------------------------------


def _optional_sections(summary: Mapping[str, Any]) -> list[str]:
    """The sections whose data is optional in the contract, each only when its data is present."""
    sections = []
    cost = _cost_and_work(summary)
    if cost:
        sections.append(_section("Cost, GPU-hours and work", cost))
    latency = _latency_section(summary)
    if latency:
        sections.append(_section("Pending to working", latency))
    waits = _job_waits_section(summary)
    if waits:
        sections.append(_section("Wait per job size", waits))
    chain = _node_chain_section(summary)
    if chain:
        sections.append(_section("Node start chain", chain))
    if summary.get("startup"):
        sections.append(_section("Start-up, measured", _startup_section(summary["startup"])))
    scaling = _autoscaling_section(summary)
    if scaling:
        sections.append(_section("Autoscaling", scaling))
    return sections


def _swatch_legend(items: Sequence[tuple[str, str]]) -> str:
    """An HTML legend: a coloured square and a label per item."""
    spans = "".join(
        f'<span><span class="sw" style="background:{color}"></span>{escape(label)}</span>'
        for label, color in items
    )
    return f'<div class="legend">{spans}</div>'


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], css: str = "", numeric_from: int = 1) -> str:
    """A table of already formatted cells; cells from column ``numeric_from`` on are right-aligned."""
    head_html = "".join(f"<th>{escape(column)}</th>" for column in head)
    body = "\n".join(
        "<tr>"
        + "".join(
            f'<td class="num">{escape(cell)}</td>' if i >= numeric_from else f"<td>{escape(cell)}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    klass = f' class="{css}"' if css else ""
    return f"<table{klass}>\n<thead><tr>{head_html}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"


def _percentile_cells(figures: Mapping[str, Any]) -> list[str]:
    return [fmt_num(figures.get(key)) for key in ("p50", "p95", "p99")]


# --- cost, GPU-hours and work items -------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _cost_and_work(summary: Mapping[str, Any]) -> str:
    totals = summary["totals"]
    cards: list[str] = []
    cost = _number(totals.get("cost"))
    if cost is not None:
        cards.append(_text_card("cost (currency units)", f"{cost:,.2f}"))
    provisioned = _number(totals.get("gpu_hours_provisioned"))
    for key in ("provisioned", "allocated", "working"):
        hours = _number(totals.get(f"gpu_hours_{key}"))
        if hours is None:
            continue
        cards.append(_text_card(f"GPU-hours {key}", fmt_num(hours)))
        if key != "provisioned" and provisioned:
            cards.append(_text_card(f"{key} / provisioned", f"{hours / provisioned:.0%}"))
    disrupted = _number(totals.get("pods_disrupted"))
    if disrupted is not None:
        cards.append(_text_card("pods disrupted", fmt_num(disrupted)))
    lost = _number(totals.get("work_lost_s"))
    if lost is not None:
        cards.append(_text_card("work lost (GPU-seconds)", fmt_num(lost)))
        cards.append(_text_card("work lost (GPU-hours)", fmt_num(lost / 3600)))
    work_items = summary.get("work_items") or {}
    parts = [f'<div class="cards">{"".join(cards)}</div>'] if cards else []
    if work_items:
        parts.append("<h3>Work items</h3>" + _work_items_table(work_items))
    return "\n".join(parts)


def _text_card(label: str, value: str) -> str:
    return f'<div class="card"><div class="v">{escape(value)}</div><div class="k">{escape(label)}</div></div>'


WORK_ITEM_COLUMNS = ("fed", "started", "completed", "lost", "requeued", "queued", "in_progress")


def _work_items_table(work_items: Mapping[str, Mapping[str, Any]]) -> str:
    head = ["list", *(column.replace("_", " ") for column in WORK_ITEM_COLUMNS)]
    rows = [
        [name, *(fmt_num(counts.get(column)) for column in WORK_ITEM_COLUMNS)]
        for name, counts in sorted(work_items.items())
    ]
    return _table(head, rows, css="narrow")


# --- horizontal segmented bars (waterfall, node start chain) -----------------------------------


@dataclass(frozen=True)
class _Segment:
    key: str
    start: float
    length: float
    color: str


@dataclass(frozen=True)
class _Bar:
    label: str
    tooltip: str
    total: float
    segments: tuple[_Segment, ...]


AXIS_H = 38


def _segment_chart(bars: Sequence[_Bar], css: str, aria: str, axis_label: str) -> str:
    """One row per bar: a grey track of the bar's total, its coloured segments, the total at the right.

    Every bar is a ``<g class="{css}">``; the x axis is in seconds from each bar's own start.
    """
    ticks = nice_ticks(0.0, max([1e-9, *(max(bar.total, _segments_end(bar)) for bar in bars)]), target=8)
    scale = ticks[-1] if ticks[-1] > 0 else 1.0
    width = CHART_W - BAR_LABEL_W - BAR_VALUE_W
    height = BAR_ROW * len(bars) + AXIS_H

    def px(seconds: float) -> float:
        return BAR_LABEL_W + seconds / scale * width

    rows = []
    for index, bar in enumerate(bars):
        top = index * BAR_ROW + 2
        rects = "".join(
            f'<rect class="seg seg-{escape(s.key)}" x="{px(s.start):.1f}" y="{top}" '
            f'width="{max(s.length / scale * width, 0.5):.1f}" height="{BAR_ROW - 5}" fill="{s.color}"/>'
            for s in bar.segments
            if s.length > 0
        )
        rows.append(
            f'<g class="{css}"><title>{escape(bar.tooltip)}</title>'
            f'<text x="{BAR_LABEL_W - 8}" y="{top + 11}" text-anchor="end">'
            f"{escape(truncate(bar.label, 32))}</text>"
            f'<rect x="{BAR_LABEL_W}" y="{top}" width="{bar.total / scale * width:.1f}" '
            f'height="{BAR_ROW - 5}" fill="#eaeef2"/>{rects}'
            f'<text x="{CHART_W - BAR_VALUE_W + 8}" y="{top + 11}">{fmt_num(bar.total)} s</text></g>'
        )
    base = BAR_ROW * len(bars) + 4
    axis = [f'<line x1="{BAR_LABEL_W}" y1="{base}" x2="{px(scale):.1f}" y2="{base}" stroke="#8c959f"/>']
    for tick in ticks:
        x = px(tick)
        axis.append(f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" stroke="#8c959f"/>')
        axis.append(f'<text x="{x:.1f}" y="{base + 15}" text-anchor="middle">{fmt_num(tick)}</text>')
    centre = BAR_LABEL_W + width / 2
    axis.append(f'<text x="{centre:.1f}" y="{base + 29}" text-anchor="middle">{escape(axis_label)}</text>')
    svg = f'<svg viewBox="0 0 {CHART_W} {height}" role="img" aria-label="{escape(aria)}">\n'
    return f'<div class="scroll">{svg}' + "\n".join(rows + axis) + "\n</svg></div>"


def _segments_end(bar: _Bar) -> float:
    return max([0.0, *(s.start + s.length for s in bar.segments)])


# --- pending to working -------------------------------------------------------------------------


def _stage_color(stage: str) -> str:
    return STAGE_COLORS.get(stage, EXTRA_STAGE_COLOR)


def _latency_section(summary: Mapping[str, Any]) -> str:
    figures = summary.get("latency") or latency_figures(summary)
    overall = figures["pending_to_working_s"]
    pods = working_pods(summary["pods"])
    if not overall.get("count") and not pods:
        return ""
    stages: Mapping[str, Mapping[str, Any]] = figures.get("stages") or {}
    rows = [[stage, *_percentile_cells(stages[stage])] for stage in _ordered_stages(stages)]
    rows.append(["pending to working (total)", *_percentile_cells(overall)])
    note = _muted(
        f"Over the {overall.get('count', 0)} pods that began computing, in seconds; nearest-rank "
        "percentiles (each one a pod's value), a pod without a stage counting 0 for it, so stage "
        "percentiles need not add up to the total's."
    )
    parts = [note, _table(["stage", "p50", "p95", "p99"], rows, css="narrow")]
    waited = [p for p in pods if (p.get("working_s") or 0) > (p.get("created_s") or 0)]
    if waited:
        parts.append("<h3>Waterfall</h3>" + _waterfall(waited))
    return "\n".join(parts)


def _job_waits_section(summary: Mapping[str, Any]) -> str:
    jobs = summary.get("jobs") or job_wait_figures(summary)
    if not jobs["by_gpus"]:
        return ""
    rows = [
        [c["gpus"], str(c["count"]), str(c["waiting"])]
        + [fmt_num(c[f"{key}_wait_s"]) for key in ("mean", "p50", "p95", "max")]
        for c in jobs["by_gpus"]
    ]
    allocated = summary["totals"].get("gpu_allocated_pct")
    note = _muted(
        "Seconds from a job's first pod created to its last pod bound (a gang is one job, its pods' "
        "GPUs summed; a job still waiting counts its wait so far)."
        + ("" if allocated is None else f" GPUs allocated: {allocated:.1f} % of the provisioned GPU-hours.")
    )
    head = ["GPUs per job", "jobs", "still waiting", "mean", "p50", "p95", "max"]
    return "\n".join([note, _table(head, rows, css="narrow")])


def _ordered_stages(stages: Iterable[str]) -> list[str]:
    names = set(stages)
    return [name for name in STAGE_ORDER if name in names] + sorted(names.difference(STAGE_ORDER))


def _waterfall(pods: Sequence[Mapping[str, Any]]) -> str:
    ranked = sorted(pods, key=lambda pod: (-(pending_to_working(pod) or 0.0), str(pod["name"])))
    shown = ranked[:MAX_WATERFALL_PODS]
    extras = sorted({key for pod in shown for key in pod.get("stages") or {}}.difference(STAGE_ORDER))
    bars = [_pod_bar(pod, extras) for pod in shown]
    if len(shown) < len(pods):
        note = _muted(
            f"Showing the {len(shown)} slowest of {len(pods)} pods that began computing "
            "(by pending to working); the rest are left out."
        )
    else:
        note = _muted(f"All {len(pods)} pods that began computing, slowest first.")
    legend = _swatch_legend([(stage, _stage_color(stage)) for stage in (*STAGE_ORDER, *extras)])
    chart = _segment_chart(
        bars, "waterfall-bar", "pending to working per pod", "seconds from the pod's creation"
    )
    return note + legend + chart


def _pod_bar(pod: Mapping[str, Any], extras: Sequence[str]) -> _Bar:
    stages: Mapping[str, float] = pod.get("stages") or {}
    total = pending_to_working(pod) or 0.0
    segments = []
    start = 0.0
    for stage in (*STAGE_ORDER, *extras):
        length = float(stages.get(stage) or 0.0)
        if length > 0:
            segments.append(_Segment(stage, start, length, _stage_color(stage)))
            start += length
    parts = ", ".join(f"{s.key} {fmt_num(s.length)} s" for s in segments)
    tooltip = f"{pod['name']}: {fmt_num(total)} s pending to working" + (f" ({parts})" if parts else "")
    return _Bar(str(pod["name"]), tooltip, total, tuple(segments))


# --- node start chain ---------------------------------------------------------------------------


def _chain_times(node: Mapping[str, Any]) -> tuple[float, float | None, float | None] | None:
    """(created, ready, gpu_ready) of a node with a launch time and at least one of the others."""
    created, ready, gpu_ready = (_number(node.get(key)) for key in ("created_s", "ready_s", "gpu_ready_s"))
    if created is None or (ready is None and gpu_ready is None):
        return None
    if (ready is None or ready == created) and (gpu_ready is None or gpu_ready == created):
        return None  # a node present from the start, or started instantly: no chain to draw
    return created, ready, gpu_ready


def _node_chain_section(summary: Mapping[str, Any]) -> str:
    chains = [(node, times) for node in summary["nodes"] if (times := _chain_times(node)) is not None]
    parts = []
    if chains:
        parts.append(_chain_table(chains))
        parts.append("<h3>Per node</h3>" + _chain_chart(chains))
    with_stages = [pod["node_stages"] for pod in summary["pods"] if pod.get("node_stages")]
    if with_stages:
        parts.append(
            "<h3>Start-chain stages of nodes launched for pods</h3>" + _node_stage_table(with_stages)
        )
    return "\n".join(parts)


def _chain_table(chains: Sequence[tuple[Mapping[str, Any], tuple[float, float | None, float | None]]]) -> str:
    spans = {
        "launch request → kubelet Ready": [r - c for _, (c, r, _g) in chains if r is not None],
        "Ready → GPUs allocatable": [g - r for _, (_c, r, g) in chains if r is not None and g is not None],
        "launch request → GPUs allocatable": [g - c for _, (c, _r, g) in chains if g is not None],
    }
    rows = [
        [label, str(len(values)), *_percentile_cells(percentiles(values))] for label, values in spans.items()
    ]
    note = _muted("Seconds, over the nodes that reached each point; nearest-rank percentiles.")
    return note + _table(["span", "nodes", "p50", "p95", "p99"], rows, css="narrow")


def _chain_chart(chains: Sequence[tuple[Mapping[str, Any], tuple[float, float | None, float | None]]]) -> str:
    def duration(item: tuple[Mapping[str, Any], tuple[float, float | None, float | None]]) -> float:
        created, ready, gpu_ready = item[1]
        return max(t for t in (ready, gpu_ready, created) if t is not None) - created

    ranked = sorted(chains, key=lambda item: (-duration(item), str(item[0]["name"])))
    shown = ranked[:MAX_CHAIN_NODES]
    bars = []
    for node, (created, ready, gpu_ready) in shown:
        segments = []
        if ready is not None:
            segments.append(_Segment("ready", 0.0, ready - created, CHAIN_SEGMENTS[0][2]))
        if gpu_ready is not None:
            start = (ready if ready is not None else created) - created
            segments.append(_Segment("gpu", start, gpu_ready - created - start, CHAIN_SEGMENTS[1][2]))
        pool = f" (pool {node['pool']})" if node.get("pool") else ""
        tooltip = (
            f"{node['name']}{pool}: Ready after {fmt_num(None if ready is None else ready - created)} s, "
            f"GPUs allocatable after {fmt_num(None if gpu_ready is None else gpu_ready - created)} s"
        )
        bars.append(
            _Bar(str(node["name"]), tooltip, duration((node, (created, ready, gpu_ready))), tuple(segments))
        )
    if len(shown) < len(chains):
        note = _muted(f"Showing the {len(shown)} slowest of {len(chains)} nodes; the rest are left out.")
    else:
        note = _muted(f"All {len(chains)} nodes with a start chain, slowest first.")
    legend = _swatch_legend([(label, color) for _, label, color in CHAIN_SEGMENTS])
    chart = _segment_chart(bars, "chain-bar", "node start chain per node", "seconds from the launch request")
    return note + legend + chart


def _node_stage_names(node_stages: Iterable[Mapping[str, float]]) -> list[str]:
    names: set[str] = set()
    for stages in node_stages:
        names.update(stages)
    return [n for n in NODE_STAGE_ORDER if n in names] + sorted(names.difference(NODE_STAGE_ORDER))


def _node_stage_table(node_stages: Sequence[Mapping[str, float]]) -> str:
    rows = []
    for name in _node_stage_names(node_stages):
        values = [float(stages.get(name) or 0.0) for stages in node_stages]
        rows.append([name, *(fmt_num(nearest_rank(values, p)) for p in (50, 95, 99))])
    note = _muted(
        f"Seconds, over the {len(node_stages)} pods a node was launched for (a node launched for "
        "several pods counts once per pod); a pod whose node lacks a stage counts 0 for it."
    )
    return note + _table(["stage", "p50", "p95", "p99"], rows, css="narrow")


# --- a measured start-up (gpufleet startup) ------------------------------------------------------


def _startup_section(startup: Mapping[str, Any]) -> str:
    """Per stage and per node group's start chain, the measured spread; then what the input lacks."""
    note = _muted(
        f"Measured from a {startup['source']}, time 0 at {startup['origin']}; seconds, nearest-rank. "
        "Stages over the pods that began serving (a pod without a stage counts 0); a node's boot is its "
        "launch request to its Node object, join that to Ready, devicePlugin Ready to GPUs allocatable."
    )
    rows = stage_rows(startup) + chain_rows(startup)
    parts = [note, _table(SPREAD_HEAD, rows, css="narrow")]
    if startup["notes"]:
        items = "".join(f"<li>{escape(str(text))}</li>" for text in startup["notes"])
        parts.append(f"<h3>Not recorded</h3><ul>{items}</ul>")
    return "\n".join(parts)


# --- autoscaling --------------------------------------------------------------------------------


def _autoscaling_section(summary: Mapping[str, Any]) -> str:
    timeline = summary["timeline"]
    parts = []
    by_pool = timeline.get("nodes_by_pool") or {}
    if by_pool:
        parts.append("<h3>Nodes per pool</h3>" + _keyed_chart(summary, by_pool, "nodes", "pools"))
    by_state = timeline.get("nodes_by_state") or {}
    if by_state:
        parts.append("<h3>Nodes by state</h3>" + _keyed_chart(summary, by_state, "nodes", "states"))
    replicas = timeline.get("replicas") or {}
    if replicas:
        parts.append(
            "<h3>Replicas per scaled workload</h3>" + _keyed_chart(summary, replicas, "replicas", "workloads")
        )
    events = summary.get("autoscaler_events")
    if events is not None:
        parts.append("<h3>Autoscaler events</h3>" + _events_table(events))
    return "\n".join(parts)


def _keyed_chart(
    summary: Mapping[str, Any], by_key: Mapping[str, Sequence[float]], y_label: str, what: str
) -> str:
    """Step lines, one per key (at most `MAX_SERIES`, the largest peaks first), with an HTML legend."""
    times = np.asarray(summary["timeline"]["t_s"], dtype=np.float64)
    if times.size == 0:
        return _muted("No timeline samples.")
    ranked = sorted(by_key, key=lambda key: (-max([0.0, *by_key[key]]), key))
    keys = sorted(ranked[:MAX_SERIES])
    columns = [np.asarray(by_key[key], dtype=np.float64) for key in keys]
    times, columns = downsample(times, columns, MAX_POINTS)
    series = [
        _Series(key, column, PALETTE[i % len(PALETTE)])
        for i, (key, column) in enumerate(zip(keys, columns, strict=True))
    ]
    x1 = max(float(times[-1]), float(summary["end_time_s"]))
    note = (
        _muted(f"Showing the {len(keys)} of {len(by_key)} {what} with the highest peaks.")
        if len(keys) < len(by_key)
        else ""
    )
    legend = _swatch_legend([(s.label, s.color) for s in series])
    return note + legend + _line_chart(times, series, x1, y_label, svg_legend=False)


EVENT_COLUMNS = ("time (s)", "kind", "pool", "nodes", "pods", "reason")


def _events_table(events: Sequence[Mapping[str, Any]]) -> str:
    if not events:
        return _muted("No autoscaler events.")
    kinds: dict[str, int] = {}
    for event in events:
        kinds[str(event["kind"])] = kinds.get(str(event["kind"]), 0) + 1
    counts = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
    shown = sorted(events, key=lambda event: float(event["t_s"]))[:MAX_EVENT_ROWS]
    note = f"{len(events)} events: {counts}."
    if len(shown) < len(events):
        note += f" Showing the first {len(shown)}; {len(events) - len(shown)} left out."
    rows = "\n".join(_event_row(event) for event in shown)
    head = "".join(f"<th>{escape(column)}</th>" for column in EVENT_COLUMNS)
    table = f'<table class="events">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody></table>'
    return _muted(note) + f'<div class="scroll">{table}</div>'


def _event_row(event: Mapping[str, Any]) -> str:
    """Time, kind, pool, how many nodes and pods (their names in a tooltip), reason."""
    nodes, pods = list(event.get("nodes") or []), list(event.get("pods") or [])
    cells = [
        _num_td(event["t_s"]),
        _td(str(event["kind"])),
        _td(str(event.get("pool") or MISSING)),
        f'<td class="num" title="{escape(", ".join(nodes))}">{len(nodes)}</td>',
        f'<td class="num" title="{escape(", ".join(pods))}">{len(pods)}</td>',
        _td(str(event.get("reason") or "")),
    ]
    return '<tr class="event">' + "".join(cells) + "</tr>"
