"""The summary report's HTML page: its sections, tables and Plotly charts (as the page draws them),
and the page without Plotly installed. The page in a real browser: ``test_report_in_browser``."""

from __future__ import annotations

import itertools
from html import escape
from typing import Any

import numpy as np
import pytest
from test_report import WORK_COUNTS, autoscaled_summary, make_node, make_pod, make_summary, pending_pod

from conftest import page_figures
from gpufleet.report import chart_divs, render_html
from gpufleet.report.charts import MAX_POINTS, downsample, time_unit
from gpufleet.report.html import MAX_EVENT_ROWS
from gpufleet.report.latency import STAGE_ORDER
from gpufleet.report.summary_charts import (
    MAX_CHAIN_NODES,
    MAX_NODE_BARS,
    MAX_WATERFALL_PODS,
    serving_figure,
)

Figure = tuple[list[dict[str, Any]], dict[str, Any]]
LIBRARY_BANNER = "* plotly.js v"


def section_of(page: str, heading: str) -> str:
    """The HTML of the page's section with that heading."""
    start = page.index(f"<section>\n<h2>{heading}</h2>")
    return page[start : page.index("</section>", start)]


def charts_of(html: str) -> list[Figure]:
    """The charts in a piece of the page, in order."""
    return list(page_figures(html).values())


def names(figure: Figure) -> list[str]:
    return [trace["name"] for trace in figure[0]]


def traffic_summary(util: float | None = 61.24) -> dict[str, Any]:
    """A summary with a Traffic target serving through three timeline rows."""
    summary = make_summary()
    summary["traffic"] = {
        "default/chat": {
            "p50_wait_s": 0.5,
            "p95_wait_s": 75.0,
            "p99_wait_s": 3700.0,
            "requests": 1200.0,
            "served": 1150.5,
            "timed_out": 20.0,
            "dropped": 29.5,
            "dcgm_gpu_util_pct": util,
            "timeline": [
                [0.0, 10.0, 0.0, 0.0, 1, 40.0],
                [1.0, 30.0, 12.0, 4.5, 1, 99.0],
                [2.0, 20.0, 3.0, 1.0, 2, None],
            ],
        }
    }
    return summary


# --- the page and its library ------------------------------------------------------------------------


def test_the_page_carries_plotly_js_once_and_refers_to_nothing_outside() -> None:
    page = render_html(autoscaled_summary(events=300))
    assert page.startswith("<!DOCTYPE html>")
    assert page.count(LIBRARY_BANNER) == 1
    assert page.index(LIBRARY_BANNER) < page.index("Plotly.newPlot(")
    for reference in ("<script src", "<link", "@import"):
        assert reference not in page
    # GPUs, pending, waterfall, node start chain, pools, replicas, node allocation
    assert list(page_figures(page)) == [f"chart-{i}" for i in range(1, 8)]
    assert page.count('<div class="chart">') == 7


def test_without_plotly_each_chart_is_a_line_saying_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> Any:
        raise ImportError("No module named 'plotly'")

    monkeypatch.setattr(chart_divs, "load_plotly_io", missing)
    page = render_html(autoscaled_summary())
    line = "charts need the `charts` extra: pip install &#x27;gpufleet[charts]&#x27;"
    assert page.count(line) == 7
    assert "<script" not in page and LIBRARY_BANNER not in page
    assert "<td>scheduling</td>" in section_of(page, "Pending to working")  # the tables are still there
    assert "default/w-20" in section_of(page, "Pods")


def test_the_same_summary_gives_the_same_page() -> None:
    assert render_html(autoscaled_summary()) == render_html(autoscaled_summary())


# --- header --------------------------------------------------------------------------------------


def test_header_shows_gpu_shares_the_simulated_dcgm_utilisation_and_pods_by_final_state() -> None:
    summary = make_summary()
    summary["totals"].update(
        gpu_allocated_pct=71.26,
        gpu_working_pct=60.0,
        dcgm_gpu_util_pct=55.56,
        final_states={"Running": 12, "Succeeded": 3, "Preempted": 1},
    )
    header = render_html(summary).split("</header>")[0]
    for value, label in (
        ("71.3 %", "GPUs allocated %"),
        ("60 %", "GPUs working %"),
        ("55.6 %", "DCGM_FI_DEV_GPU_UTIL (simulated) %"),
        ("16", "GPUs total"),
    ):
        assert f'<div class="v">{value}</div><div class="k">{label}</div>' in header
    states = header[header.index("Pods by final state") :]
    assert states.index(">Succeeded<") < states.index(">Preempted<") < states.index(">Running<")
    assert '<div class="v">12</div><div class="k">Running</div>' in states
    assert "gpu allocated pct" not in header  # not repeated among the further totals


def test_header_shows_a_dash_for_shares_the_summary_lacks() -> None:
    summary = make_summary()
    summary["totals"]["dcgm_gpu_util_pct"] = None
    header = render_html(summary).split("</header>")[0]
    for label in ("GPUs allocated %", "GPUs working %", "DCGM_FI_DEV_GPU_UTIL (simulated) %"):
        assert f'<div class="v">—</div><div class="k">{label}</div>' in header
    assert "Pods by final state" not in header
    assert "end time 3 s" in header


# --- timelines -----------------------------------------------------------------------------------


def test_gpu_chart_has_a_step_line_per_series_held_to_the_end_of_the_run() -> None:
    summary = make_summary(points=3)
    summary["end_time_s"] = 10.0
    (figure,) = charts_of(section_of(render_html(summary), "GPUs over time"))
    assert names(figure) == ["total", "allocated", "working"]
    allocated = figure[0][1]
    assert allocated["x"] == [0.0, 1.0, 2.0, 10.0]
    assert allocated["y"] == [0.0, 1.0, 2.0, 2.0]  # the last sample holds until the end
    assert allocated["line"]["shape"] == "hv"
    assert figure[1]["xaxis"]["title"]["text"] == "time (s)"
    assert figure[1]["yaxis"]["title"]["text"] == "GPUs"


def test_time_axes_take_the_unit_of_their_span_and_hovers_say_times_in_human_form() -> None:
    assert [time_unit(span)[1] for span in (600, 601, 36_000, 36_001)] == ["s", "min", "min", "h"]
    summary = make_summary(points=3)
    summary["timeline"]["t_s"] = [0.0, 3600.0, 93_784.0]
    summary["end_time_s"] = 93_784.0
    (figure,) = charts_of(section_of(render_html(summary), "Pending pods over time"))
    (pending,) = figure[0]
    assert figure[1]["xaxis"]["title"]["text"] == "time (h)"
    assert pending["x"][1] == 1.0
    assert pending["customdata"][:3] == ["0 s", "1h", "1d 2h 3m"]
    assert "%{customdata}" in pending["hovertemplate"] and pending["name"] == "pending"


def test_long_series_are_downsampled_for_drawing() -> None:
    pods = [make_pod(f"default/job-{i:05d}") for i in range(3000)]
    summary = make_summary(pods=pods, points=10_000, nodes=500)
    page = render_html(summary)
    for data, _ in page_figures(page).values():
        for trace in data:
            assert len(trace["x"]) <= MAX_POINTS + 1  # the samples kept, and the end of the run
    allocation = section_of(page, "GPU allocation per node")
    assert f"Showing the first {MAX_NODE_BARS} of 500 nodes by name." in allocation


def test_downsample_keeps_first_and_last_samples_and_spikes() -> None:
    times = np.arange(10_000, dtype=np.float64)
    values = np.zeros(10_000)
    values[0], values[4321], values[-1] = 3.0, 99.0, 5.0
    picked_times, (picked,) = downsample(times, [values], 100)
    assert picked_times.size <= 100
    assert (picked_times[0], picked[0]) == (0.0, 3.0)
    assert (picked_times[-1], picked[-1]) == (9999.0, 5.0)
    assert picked.max() == 99.0
    assert np.all(np.diff(picked_times) > 0)


def test_downsample_leaves_short_series_alone() -> None:
    times = np.arange(5, dtype=np.float64)
    picked_times, (picked,) = downsample(times, [times * 2], 100)
    assert picked_times.tolist() == times.tolist()
    assert picked.tolist() == (times * 2).tolist()


def test_a_summary_without_samples_pods_or_nodes_still_renders() -> None:
    page = render_html(make_summary(pods=[], points=0, nodes=0))
    assert page.count("No timeline samples.") == 2
    assert "No pods." in page and "No nodes at the end of the run." in page
    assert page_figures(page) == {}


# --- pods and nodes ------------------------------------------------------------------------------


def test_pod_table_escapes_messages_and_shows_diagnosis_and_stages_in_human_form() -> None:
    summary = make_summary()
    summary["pods"][0]["stages"] = {"scheduling": 1.0, "image_pull": 125.0, "warmup": 0.0}
    summary["pods"][0]["finished_s"] = 3700.0
    section = section_of(render_html(summary), "Pods")
    assert "default/train-0" in section and "default/big-job" in section
    assert "&lt;preemption: 0/3 &amp; more&gt;" in section and "<preemption" not in section
    assert "requests 8 GPUs; largest free block 4" in section
    assert "gang big-job: 0/2 bound, 1 fit, min 2, needs 16 GPUs" in section
    assert "<td>scheduling 1 s<br>image_pull 2m 5s</td>" in section  # zero stages left out
    assert '<td class="num">1h 1m 40s</td>' in section
    assert "PodDisruptionBudget default/pdb is read but not modelled" in render_html(summary)


def test_pod_table_shows_the_final_state_and_the_node_stages() -> None:
    summary = autoscaled_summary()
    summary["pods"][0]["final_state"] = "Preempted"
    section = section_of(render_html(summary), "Pods")
    assert "<td>Preempted</td>" in section
    assert "node: capacityWait 5 s, boot 40 s, driver 20 s, join 5 s" in section


def test_pod_table_is_capped_and_says_how_many_were_left_out() -> None:
    pods = [make_pod(f"default/job-{i:04d}") for i in range(1999)] + [pending_pod("default/zz-pending")]
    section = section_of(render_html(make_summary(pods=pods)), "Pods")
    assert "Showing 500 of 2000 pods" in section and "1500 pods left out" in section
    assert section.count("<tr>") == 501  # header and 500 pods
    assert "default/zz-pending" in section  # pending pods come first, whatever their name
    assert "default/job-1999" not in section


def test_node_allocation_chart_leaves_out_deleted_nodes_and_says_so() -> None:
    summary = make_summary()
    summary["nodes"].append(make_node("node-gone", deleted_s=5.0))
    section = section_of(render_html(summary), "GPU allocation per node")
    (figure,) = charts_of(section)
    assert names(figure) == ["GPUs on the node", "allocated"]
    assert figure[0][0]["y"] == ["node-0", "node-1"] and figure[0][1]["x"] == [4.0, 4.0]
    assert figure[1]["xaxis"]["dtick"] == 1  # whole GPUs
    assert "node-0</b> (pool a100): 4 of 8 GPUs allocated" in figure[0][1]["hovertext"][0]
    assert "1 deleted nodes not shown." in section and "node-gone" not in section


# --- pending to working --------------------------------------------------------------------------


def test_waterfall_has_a_bar_per_working_pod_and_a_trace_per_stage_with_human_hovers() -> None:
    section = section_of(render_html(autoscaled_summary()), "Pending to working")
    (figure,) = charts_of(section)
    data, layout = figure
    assert names(figure) == ["scheduling", "image_pull", "checkpoint_restore"]
    scheduling, image_pull, _ = data
    assert scheduling["y"][0] == "default/w-20" and scheduling["y"][-1] == "default/w-01"  # slowest first
    assert len(scheduling["y"]) == 20 and scheduling["orientation"] == "h"
    assert sum(1 for x in image_pull["x"] if x) == 3
    assert scheduling["hovertext"][0] == (
        "scheduling: 18 s<br><b>default/w-20</b>: 20 s pending to working<br>scheduling 18 s, image_pull 2 s"
    )
    assert layout["barmode"] == "stack" and layout["legend"]["traceorder"] == "normal"
    assert layout["xaxis"]["title"]["text"] == "time from the pod's creation (s)"
    assert "All 20 pods that waited before computing, slowest first." in section
    assert set(STAGE_ORDER).isdisjoint(names(figure)[2:])


def test_waterfall_is_capped_at_the_slowest_pods_and_says_so() -> None:
    pods = [
        make_pod(f"default/p-{i:03d}", working_s=float(i), stages={"other": float(i)}) for i in range(1, 101)
    ]
    section = section_of(render_html(make_summary(pods=pods)), "Pending to working")
    ((other,), _) = charts_of(section)[0]
    assert len(other["y"]) == MAX_WATERFALL_PODS
    assert other["y"][0] == "default/p-100" and "default/p-040" not in other["y"]
    assert f"Showing the {MAX_WATERFALL_PODS} slowest of the 100 pods" in section


def test_latency_table_has_each_stage_and_the_total_in_human_form() -> None:
    summary = autoscaled_summary()
    summary["latency"]["by_workload"] = [
        {"workload": "Deployment/default/web", "namespace": "default", "count": 4, "p50": 90.0, "p95": 3600.0,
         "p99": 3600.0, "stages": {}},
    ]  # fmt: skip
    section = section_of(render_html(summary), "Pending to working")
    assert (
        '<td>scheduling</td><td class="num">10 s</td><td class="num">17 s</td><td class="num">18 s</td>'
        in section
    )
    assert '<td>pending to working (total)</td><td class="num">10 s</td><td class="num">19 s</td>' in section
    assert "Over the 20 pods that began computing" in section
    assert '<td>Deployment/default/web</td><td class="num">4</td><td class="num">1m 30s</td>' in section


def test_latency_is_computed_when_the_summary_has_none() -> None:
    without = autoscaled_summary()
    del without["latency"]
    assert section_of(render_html(without), "Pending to working") == section_of(
        render_html(autoscaled_summary()), "Pending to working"
    )


# --- serving -------------------------------------------------------------------------------------


def test_serving_section_has_the_traffic_figures_and_a_chart_over_time_per_target() -> None:
    section = section_of(render_html(traffic_summary()), "Serving")
    cells = "".join(
        f'<td class="num">{c}</td>' for c in ("1200", "1150.5", "20", "29.5", "0.5 s", "1m 15s", "1h 1m 40s")
    )
    assert f"<td>default/chat</td>{cells}" + '<td class="num">61.2 %</td>' in section
    assert "<h3>default/chat over time</h3>" in section
    (figure,) = charts_of(section)
    assert len(figure[0]) == 5 and "DCGM_FI_DEV_GPU_UTIL (simulated) %" in names(figure)


def test_serving_section_says_dash_where_no_replica_worked() -> None:
    section = section_of(render_html(traffic_summary(util=None)), "Serving")
    assert '<td class="num">—</td></tr>' in section


def test_serving_chart_stacks_a_panel_per_column_over_one_time_axis() -> None:
    rows = traffic_summary()["traffic"]["default/chat"]["timeline"]
    data, layout = serving_figure(rows, 2.0)["data"], serving_figure(rows, 2.0)["layout"]
    assert [trace["yaxis"] for trace in data] == ["y1", "y2", "y3", "y4", "y5"]
    assert [trace["y"] for trace in data] == [[10.0, 30.0, 20.0], [0.0, 12.0, 3.0], [0.0, 4.5, 1.0],
                                              [1.0, 1.0, 2.0], [40.0, 99.0, None]]  # fmt: skip
    assert data[2]["customdata"] == ["0 s", "1 s", "2 s"]
    domains = [layout["yaxis"]["domain"], *(layout[f"yaxis{i}"]["domain"] for i in range(2, 6))]
    assert all(low < high for low, high in domains)
    assert all(a[0] >= b[1] for a, b in itertools.pairwise(domains))  # top to bottom, apart
    assert layout["xaxis"]["anchor"] == "y5" and min(low for low, _ in domains) >= 0


def test_a_summary_without_traffic_has_no_serving_section() -> None:
    assert "<h2>Serving</h2>" not in render_html(make_summary())


# --- node start chain, autoscaling, cost ---------------------------------------------------------


def test_node_start_chain_has_two_segments_per_node_and_is_capped() -> None:
    summary = autoscaled_summary()
    summary["nodes"] = [
        make_node(f"n-{i:02d}", ready_s=30.0 + i, gpu_ready_s=60.0 + 2 * i) for i in range(45)
    ]
    summary["nodes"].append(make_node("never-ready", ready_s=None, gpu_ready_s=None))
    section = section_of(render_html(summary), "Node start chain")
    (figure,) = charts_of(section)
    ready, gpu = figure[0]
    assert names(figure) == ["launch request → kubelet Ready", "Ready → GPUs allocatable"]
    assert len(ready["y"]) == MAX_CHAIN_NODES and ready["y"][0] == "n-44" and "n-00" not in ready["y"]
    assert (ready["x"][0], gpu["x"][0]) == (74.0, 74.0)  # n-44: Ready at 74 s, GPUs 74 s later
    assert "<b>n-44</b> (pool a100): Ready after 1m 14s, GPUs allocatable after 2m 28s" in gpu["hovertext"][0]
    assert f"Showing the {MAX_CHAIN_NODES} slowest of 45 nodes" in section
    assert "never-ready" not in section
    assert '<td>boot</td><td class="num">40 s</td>' in section


def test_autoscaling_section_has_pool_and_replica_charts_and_the_events_table() -> None:
    section = section_of(render_html(autoscaled_summary()), "Autoscaling")
    pools, replicas = charts_of(section)
    assert names(pools) == ["a100", "h100-spot"]
    assert names(replicas) == ["Deployment/default/web", "ScaledJob/batch/etl"]
    assert pools[1]["showlegend"] is True  # a single series still names itself
    assert section.count('<tr class="event">') == 3
    assert "3 events: 1 scale-down, 1 scale-up, 1 scale-up-failed." in section
    assert "<td>stock-out</td>" in section and 'title="a100-0, a100-1">2</td>' in section


def test_keyed_charts_show_the_highest_peaks_and_say_what_was_left_out() -> None:
    summary = autoscaled_summary()
    summary["timeline"]["replicas"] = {f"Deployment/default/w{i:02d}": [0, i, 0] for i in range(14)}
    section = section_of(render_html(summary), "Autoscaling")
    _, replicas = charts_of(section)
    assert names(replicas) == [f"Deployment/default/w{i:02d}" for i in range(4, 14)]
    assert "Showing the 10 of 14 workloads with the highest peaks." in section


def test_events_table_is_capped() -> None:
    section = section_of(render_html(autoscaled_summary(events=250)), "Autoscaling")
    assert section.count('<tr class="event">') == MAX_EVENT_ROWS
    assert f"Showing the first {MAX_EVENT_ROWS}; 50 left out." in section


def test_cost_cards_and_work_items_table() -> None:
    page = render_html(autoscaled_summary())
    section = section_of(page, "Cost, GPU-hours and work")
    for value, label in (
        ("12.35", "cost (currency units)"),
        ("40", "GPU-hours provisioned"),
        ("25", "GPU-hours working"),
        ("62%", "working / provisioned"),
        ("2", "pods disrupted"),
        ("2h", "work lost (GPU-time)"),
    ):
        assert f'<div class="v">{value}</div><div class="k">{escape(label)}</div>' in section
    assert "<td>queue</td>" + "".join(f'<td class="num">{n}</td>' for n in WORK_COUNTS.values()) in section
    assert "cost" not in page.split("</header>")[0]  # not repeated among the headline cards


def test_without_the_optional_fields_there_are_none_of_their_sections() -> None:
    headings = (
        "Pending to working",
        "Node start chain",
        "Autoscaling",
        "Cost, GPU-hours and work",
        "Serving",
    )
    page = render_html(make_summary(pods=[pending_pod("default/waiting")], nodes=0))
    assert not [heading for heading in headings if f"<h2>{heading}</h2>" in page]
    page = render_html(autoscaled_summary())
    assert [heading for heading in headings if f"<h2>{heading}</h2>" not in page] == ["Serving"]


def test_the_pod_table_lists_real_failures_before_pods_scaled_down() -> None:
    """A pod scaled down by an HPA or evicted is no failure, an OOMKilled pod is (``final_state``):
    the table shows pending pods, then failures, then the rest, by name."""
    from gpufleet.report.pod_table import pod_table

    def pod(name: str, phase: str, final: str) -> dict[str, Any]:
        return {"name": f"default/{name}", "phase": phase, "final_state": final, "gpus": 1, "stages": {}}

    pods = [
        pod("a-scaled", "Succeeded", "ScaledDown"),
        pod("b-oom", "Failed", "OOMKilled"),
        pod("c-wait", "Pending", "Pending"),
        pod("d-evicted", "Failed", "Evicted"),
    ]
    html = pod_table(pods)
    order = sorted(("c-wait", "b-oom", "a-scaled", "d-evicted"), key=html.index)
    assert order == ["c-wait", "b-oom", "a-scaled", "d-evicted"]
