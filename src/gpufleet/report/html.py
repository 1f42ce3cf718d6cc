"""The summary report: one self-contained HTML page for a summary (``report.html``).

Totals (GPUs allocated / working %, the simulated DCGM_FI_DEV_GPU_UTIL, pods by final state),
interactive charts drawn by Plotly (`summary_charts`; hover for figures, drag to zoom on a time
range, click a legend entry to hide its series), tables of percentiles, and the pods. Every figure
is read from the summary; durations and sizes show in human form (``2h 5m``).

Sections that need optional fields (cost and GPU-hours, work items, pending-to-working latency, job
waits, Traffic, the node start chain, nodes per pool, replicas, autoscaler events) appear only when
the summary has those fields. The latency table uses the summary's ``latency`` field and, when it
is absent, computes the same figures with `latency_figures`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from gpufleet.report._format import MISSING, fmt_num, human_duration, human_percent
from gpufleet.report.chart_divs import ChartDivs
from gpufleet.report.fault_section import fault_section
from gpufleet.report.job_waits import job_wait_figures
from gpufleet.report.latency import (
    STAGE_ORDER,
    latency_figures,
    nearest_rank,
    pending_to_working,
    percentiles,
    working_pods,
)
from gpufleet.report.page import cards, muted, page, section, table
from gpufleet.report.pod_table import NODE_STAGE_ORDER, ordered_names, pod_table
from gpufleet.report.rollouts import rollout_section
from gpufleet.report.startup_table import SPREAD_HEAD, chain_rows, stage_rows
from gpufleet.report.summary_charts import (
    Chain,
    chain_figure,
    gpu_figure,
    keyed_figure,
    node_allocation_figure,
    pending_figure,
    serving_figure,
    waterfall_figure,
)

MAX_EVENT_ROWS = 200
TOTAL_CARDS = (
    ("gpus_total", "GPUs total"),
    ("gpus_allocated", "GPUs allocated"),
    ("gpus_working", "GPUs working"),
    ("pods_pending", "pods pending"),
    ("pods_running", "pods running"),
    ("pods_succeeded", "pods succeeded"),
    ("pods_failed", "pods failed"),
)
SHARE_CARDS = (
    ("gpu_allocated_pct", "GPUs allocated %"),
    ("gpu_working_pct", "GPUs working %"),
    ("dcgm_gpu_util_pct", "DCGM_FI_DEV_GPU_UTIL (simulated) %"),
)
#: Totals shown elsewhere than among the headline cards.
OTHER_TOTALS = (
    "cost",
    "gpu_hours_provisioned",
    "gpu_hours_allocated",
    "gpu_hours_working",
    "pods_disrupted",
    "work_lost_s",
    "final_states",
)
FINAL_STATES = (
    "Succeeded", "Failed", "OOMKilled", "Evicted", "Preempted",
    "ScaledDown", "Suspended", "Deleted", "Running", "Pending",
)  # fmt: skip
WORK_ITEM_COLUMNS = ("fed", "started", "completed", "lost", "requeued", "queued", "in_progress")
TRAFFIC_COUNTS = (
    ("requests", "requests"),
    ("served", "served"),
    ("timed_out", "timed out"),
    ("dropped", "dropped"),
)
EVENT_COLUMNS = ("time", "kind", "pool", "nodes", "pods", "reason")


def render_html(summary: dict[str, Any]) -> str:
    """Render ``summary`` (a valid `gpufleet.summary/v1` dict) as one self-contained HTML page."""
    scenario = summary.get("scenario")
    title = "gpufleet report" + (f" — {scenario}" if scenario else "")
    charts = ChartDivs()
    timeline_charts = [
        ("GPUs over time", gpu_figure),
        ("Pending pods over time", pending_figure),
    ]
    sections = [
        section(
            heading,
            charts.div(build(summary)) if summary["timeline"]["t_s"] else muted("No timeline samples."),
        )
        for heading, build in timeline_charts
    ]
    sections += _optional_sections(summary, charts)
    sections += [
        section("GPU allocation per node", _node_allocation(summary["nodes"], charts)),
        section("Pods", pod_table(summary["pods"])),
        section("Warnings", _warnings(summary["warnings"])),
    ]
    source = f"the summary ({summary['schema']})"
    return page(title, _header(summary), sections, source)


def _optional_sections(summary: Mapping[str, Any], charts: ChartDivs) -> list[str]:
    """The sections whose data is optional in the contract, each only when its data is present."""
    parts = [
        ("Cost, GPU-hours and work", _cost_and_work(summary)),
        ("Pending to working", _latency_section(summary, charts)),
        ("Wait per job size", _job_waits_section(summary)),
        ("Serving", _serving_section(summary, charts)),
        ("Node start chain", _node_chain_section(summary, charts)),
        ("Start-up, measured", _startup_section(summary["startup"]) if summary.get("startup") else ""),
        ("Autoscaling", _autoscaling_section(summary, charts)),
        ("Faults", fault_section(summary)),
        ("Rollouts", rollout_section(summary)),
    ]
    return [section(heading, content) for heading, content in parts if content]


# --- header -------------------------------------------------------------------------------------


def _header(summary: Mapping[str, Any]) -> str:
    facts = [f"end time {human_duration(summary['end_time_s'])}"]
    if "seed" in summary:
        facts.append(f"seed {summary['seed']}")
    if summary.get("schedulers"):
        facts.append("schedulers: " + ", ".join(summary["schedulers"]))
    if summary.get("selection"):
        facts.append(f"selection: {summary['selection']}")
    totals = summary["totals"]
    shares = [(label, human_percent(_number(totals.get(key)))) for key, label in SHARE_CARDS]
    final_states: Mapping[str, int] = totals.get("final_states") or {}
    states = [(state, str(final_states[state])) for state in ordered_names(set(final_states), FINAL_STATES)]
    by_state = f"<h3>Pods by final state</h3>{cards(states)}" if states else ""
    return (
        f'<div class="muted">{escape(" · ".join(facts))}</div>\n'
        f"{cards(_total_figures(totals))}\n{cards(shares)}\n{by_state}"
    )


def _total_figures(totals: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The contract's totals in a fixed order, then further numeric totals (not those shown elsewhere)."""
    known = {key for key, _ in (*TOTAL_CARDS, *SHARE_CARDS)}.union(OTHER_TOTALS)
    figures = [(label, fmt_num(totals[key])) for key, label in TOTAL_CARDS]
    extra = sorted(
        (key.replace("_", " "), fmt_num(value))
        for key, value in totals.items()
        if key not in known and _number(value) is not None
    )
    return figures + extra


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


# --- cost, GPU-hours and work items -------------------------------------------------------------


def _cost_and_work(summary: Mapping[str, Any]) -> str:
    totals = summary["totals"]
    figures: list[tuple[str, str]] = []
    cost = _number(totals.get("cost"))
    if cost is not None:
        figures.append(("cost (currency units)", f"{cost:,.2f}"))
    provisioned = _number(totals.get("gpu_hours_provisioned"))
    for key in ("provisioned", "allocated", "working"):
        hours = _number(totals.get(f"gpu_hours_{key}"))
        if hours is None:
            continue
        figures.append((f"GPU-hours {key}", fmt_num(hours)))
        if key != "provisioned" and provisioned:
            figures.append((f"{key} / provisioned", f"{hours / provisioned:.0%}"))
    disrupted = _number(totals.get("pods_disrupted"))
    if disrupted is not None:
        figures.append(("pods disrupted", fmt_num(disrupted)))
    lost = _number(totals.get("work_lost_s"))
    if lost is not None:
        figures.append(("work lost (GPU-time)", human_duration(lost)))
    work_items = summary.get("work_items") or {}
    parts = [cards(figures)] if figures else []
    if work_items:
        head = ["list", *(column.replace("_", " ") for column in WORK_ITEM_COLUMNS)]
        rows = [
            [name, *(fmt_num(counts.get(column)) for column in WORK_ITEM_COLUMNS)]
            for name, counts in sorted(work_items.items())
        ]
        parts.append("<h3>Work items</h3>" + table(head, rows, css="narrow"))
    return "\n".join(parts)


# --- pending to working -------------------------------------------------------------------------


def _durations(figures: Mapping[str, Any]) -> list[str]:
    return [human_duration(figures.get(key)) for key in ("p50", "p95", "p99")]


def _latency_section(summary: Mapping[str, Any], charts: ChartDivs) -> str:
    figures = summary.get("latency") or latency_figures(summary)
    overall = figures["pending_to_working_s"]
    pods = working_pods(summary["pods"])
    if not overall.get("count") and not pods:
        return ""
    stages: Mapping[str, Mapping[str, Any]] = figures.get("stages") or {}
    rows = [[stage, *_durations(stages[stage])] for stage in ordered_names(set(stages), STAGE_ORDER)]
    rows.append(["pending to working (total)", *_durations(overall)])
    note = muted(
        f"Over the {overall.get('count', 0)} pods that began computing; nearest-rank percentiles (each "
        "one a pod's value), a pod without a stage counting 0 for it, so stage percentiles need not add "
        "up to the total's."
    )
    parts = [note, table(["stage", "p50", "p95", "p99"], rows, css="narrow")]
    by_workload = (summary.get("latency") or {}).get("by_workload") or []
    if by_workload:
        head = ["workload", "pods", "p50", "p95", "p99"]
        rows = [[w["workload"], str(w["count"]), *_durations(w)] for w in by_workload]
        parts.append("<h3>Per workload</h3>" + table(head, rows, css="narrow"))
    waited = [p for p in pods if (pending_to_working(p) or 0) > 0]
    if waited:
        figure, shown = waterfall_figure(waited)
        at_once = len(pods) - len(waited)
        said = f"{shown} ({at_once} of the {len(pods)} began computing at once.)" if at_once else shown
        parts.append("<h3>Waterfall</h3>" + muted(said) + charts.div(figure))
    return "\n".join(parts)


def _job_waits_section(summary: Mapping[str, Any]) -> str:
    jobs = summary.get("jobs") or job_wait_figures(summary)
    if not jobs["by_gpus"]:
        return ""
    rows = [
        [c["gpus"], str(c["count"]), str(c["waiting"])]
        + [human_duration(c[f"{key}_wait_s"]) for key in ("mean", "p50", "p95", "max")]
        for c in jobs["by_gpus"]
    ]
    allocated = summary["totals"].get("gpu_allocated_pct")
    note = muted(
        "From a job's first pod created to its last pod bound (a gang is one job, its pods' GPUs "
        "summed; a job still waiting counts its wait so far)."
        + ("" if allocated is None else f" GPUs allocated: {allocated:.1f} % of the provisioned GPU-hours.")
    )
    head = ["GPUs per job", "jobs", "still waiting", "mean", "p50", "p95", "max"]
    return "\n".join([note, table(head, rows, css="narrow")])


# --- serving (Traffic) --------------------------------------------------------------------------


def _serving_section(summary: Mapping[str, Any], charts: ChartDivs) -> str:
    traffic: Mapping[str, Mapping[str, Any]] = summary.get("traffic") or {}
    if not traffic:
        return ""
    head = ["target", *(label for _, label in TRAFFIC_COUNTS), "wait p50", "p95", "p99", "GPU util % (DCGM)"]
    rows = [
        [
            key,
            *(fmt_num(_number(entry.get(field))) for field, _ in TRAFFIC_COUNTS),
            *(human_duration(entry.get(f"p{p}_wait_s")) for p in (50, 95, 99)),
            human_percent(_number(entry.get("dcgm_gpu_util_pct"))),
        ]
        for key, entry in traffic.items()
    ]
    note = muted(
        "Per Traffic target: requests arrived, served, timed out and dropped (a fluid model: counts "
        "need not be whole); the wait of served requests; the simulated DCGM_FI_DEV_GPU_UTIL of its "
        "working replicas, averaged over the run."
    )
    parts = [note, table(head, rows, css="narrow")]
    for key, entry in traffic.items():
        rows_over_time = entry.get("timeline") or []
        if rows_over_time:
            parts.append(
                f"<h3>{escape(key)} over time</h3>"
                + charts.div(serving_figure(rows_over_time, summary["end_time_s"]))
            )
    return "\n".join(parts)


# --- node start chain ---------------------------------------------------------------------------


def _chain_times(node: Mapping[str, Any]) -> tuple[float, float | None, float | None] | None:
    """(created, ready, gpu_ready) of a node with a launch time and at least one of the others."""
    created, ready, gpu_ready = (_number(node.get(key)) for key in ("created_s", "ready_s", "gpu_ready_s"))
    if created is None or (ready is None and gpu_ready is None):
        return None
    if (ready is None or ready == created) and (gpu_ready is None or gpu_ready == created):
        return None  # a node present from the start, or started instantly: no chain to draw
    return created, ready, gpu_ready


def _node_chain_section(summary: Mapping[str, Any], charts: ChartDivs) -> str:
    chains = [(node, times) for node in summary["nodes"] if (times := _chain_times(node)) is not None]
    parts = []
    if chains:
        figure, shown = chain_figure(chains)
        parts += [_chain_table(chains), "<h3>Per node</h3>" + muted(shown) + charts.div(figure)]
    with_stages = [pod["node_stages"] for pod in summary["pods"] if pod.get("node_stages")]
    if with_stages:
        parts.append(
            "<h3>Start-chain stages of nodes launched for pods</h3>" + _node_stage_table(with_stages)
        )
    return "\n".join(parts)


def _chain_table(chains: Sequence[Chain]) -> str:
    spans = {
        "launch request → kubelet Ready": [r - c for _, (c, r, _g) in chains if r is not None],
        "Ready → GPUs allocatable": [g - r for _, (_c, r, g) in chains if r is not None and g is not None],
        "launch request → GPUs allocatable": [g - c for _, (c, _r, g) in chains if g is not None],
    }
    rows = [[label, str(len(values)), *_durations(percentiles(values))] for label, values in spans.items()]
    note = muted("Over the nodes that reached each point; nearest-rank percentiles.")
    return note + table(["span", "nodes", "p50", "p95", "p99"], rows, css="narrow")


def _node_stage_table(node_stages: Sequence[Mapping[str, float]]) -> str:
    names: set[str] = set()
    for stages in node_stages:
        names.update(stages)
    rows = []
    for name in ordered_names(names, NODE_STAGE_ORDER):
        values = [float(stages.get(name) or 0.0) for stages in node_stages]
        rows.append([name, *(human_duration(nearest_rank(values, p)) for p in (50, 95, 99))])
    note = muted(
        f"Over the {len(node_stages)} pods a node was launched for (a node launched for several pods "
        "counts once per pod); a pod whose node lacks a stage counts 0 for it."
    )
    return note + table(["stage", "p50", "p95", "p99"], rows, css="narrow")


# --- a measured start-up (gpufleet startup) ------------------------------------------------------


def _startup_section(startup: Mapping[str, Any]) -> str:
    """Per stage and per node group's start chain, the measured spread; then what the input lacks."""
    note = muted(
        f"Measured from a {startup['source']}, time 0 at {startup['origin']}; nearest-rank percentiles. "
        "Stages over the pods that began serving (a pod without a stage counts 0); a node's boot is its "
        "launch request to its Node object, join that to Ready, devicePlugin Ready to GPUs allocatable."
    )
    parts = [note, table(SPREAD_HEAD, stage_rows(startup) + chain_rows(startup), css="narrow")]
    if startup["notes"]:
        items = "".join(f"<li>{escape(str(text))}</li>" for text in startup["notes"])
        parts.append(f"<h3>Not recorded</h3><ul>{items}</ul>")
    return "\n".join(parts)


# --- autoscaling --------------------------------------------------------------------------------


def _autoscaling_section(summary: Mapping[str, Any], charts: ChartDivs) -> str:
    timeline = summary["timeline"]
    parts = []
    keyed = (
        ("nodes_by_pool", "Nodes per pool", "nodes", "pools"),
        ("nodes_by_state", "Nodes by state", "nodes", "states"),
        ("replicas", "Replicas per scaled workload", "replicas", "workloads"),
    )
    for field, heading, y_title, what in keyed:
        by_key = timeline.get(field) or {}
        if by_key and timeline["t_s"]:
            figure, left_out = keyed_figure(summary, by_key, y_title, what)
            parts.append(
                f"<h3>{escape(heading)}</h3>" + (muted(left_out) if left_out else "") + charts.div(figure)
            )
    events = summary.get("autoscaler_events")
    if events is not None:
        parts.append("<h3>Autoscaler events</h3>" + _events_table(events))
    return "\n".join(parts)


def _events_table(events: Sequence[Mapping[str, Any]]) -> str:
    if not events:
        return muted("No autoscaler events.")
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
    events_table = (
        f'<table class="events">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody></table>'
    )
    return muted(note) + f'<div class="scroll">{events_table}</div>'


def _event_row(event: Mapping[str, Any]) -> str:
    """Time from the start, kind, pool, how many nodes and pods (their names in a tooltip), reason."""
    nodes, pods = list(event.get("nodes") or []), list(event.get("pods") or [])
    cells = [
        f'<td class="num">{human_duration(event["t_s"])}</td>',
        f"<td>{escape(str(event['kind']))}</td>",
        f"<td>{escape(str(event.get('pool') or MISSING))}</td>",
        f'<td class="num" title="{escape(", ".join(nodes))}">{len(nodes)}</td>',
        f'<td class="num" title="{escape(", ".join(pods))}">{len(pods)}</td>',
        f"<td>{escape(str(event.get('reason') or ''))}</td>",
    ]
    return '<tr class="event">' + "".join(cells) + "</tr>"


# --- per-node allocation, warnings ---------------------------------------------------------------


def _node_allocation(nodes: Sequence[Mapping[str, Any]], charts: ChartDivs) -> str:
    live = sorted((node for node in nodes if node.get("deleted_s") is None), key=lambda n: str(n["name"]))
    deleted = len(nodes) - len(live)
    note = muted(f"{deleted} deleted nodes not shown.") if deleted else ""
    if not live:
        return muted("No nodes at the end of the run.") + note
    figure, left_out = node_allocation_figure(live)
    intro = muted("GPUs on each node and those allocated to pods, at the end of the run. " + left_out)
    return intro + charts.div(figure) + note


def _warnings(warnings: Sequence[str]) -> str:
    if not warnings:
        return muted("No warnings.")
    return "<ul>\n" + "\n".join(f"<li>{escape(str(warning))}</li>" for warning in warnings) + "\n</ul>"
