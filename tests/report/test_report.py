"""Tests of the report layer: the summary schema check, the HTML page and the terminal table."""

from __future__ import annotations

import re
import time
from typing import Any

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from rich.console import Console

from gpufleet.report import (
    SummaryInvalid,
    load_summary_schema,
    print_summary,
    render_html,
    summary_table,
    validate_summary,
)
from gpufleet.report.html import downsample, nice_ticks

PENDING_MESSAGE = (
    "0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, "
    "2 Insufficient nvidia.com/gpu. <preemption: 0/3 & more>"
)


def make_pod(name: str, phase: str = "Succeeded", **fields: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "name": name,
        "phase": phase,
        "reason": "Completed" if phase == "Succeeded" else None,
        "node": "node-0" if phase != "Pending" else None,
        "gpus": 1,
        "working": phase == "Running",
        "created_s": 0.0,
        "bound_s": None if phase == "Pending" else 1.0,
        "running_s": None if phase == "Pending" else 2.0,
        "working_s": None if phase == "Pending" else 3.0,
        "finished_s": 10.0 if phase in ("Succeeded", "Failed") else None,
        "deleted_s": None,
        "message": None,
        "scheduler": "default-scheduler",
        "diagnosis": None,
        "disruptions": [],
        "stages": {} if phase == "Pending" else {"scheduling": 1.0, "image_pull": 1.0, "warmup": 1.0},
    }
    pod.update(fields)
    return pod


def make_node(name: str, gpus: float = 8, allocated: float = 4, **fields: Any) -> dict[str, Any]:
    node: dict[str, Any] = {
        "name": name,
        "pool": "a100",
        "gpus": gpus,
        "gpus_allocated": allocated,
        "created_s": 0.0,
        "ready_s": 30.0,
        "gpu_ready_s": 60.0,
        "deleted_s": None,
    }
    node.update(fields)
    return node


def make_summary(pods: list[dict[str, Any]] | None = None, points: int = 3, nodes: int = 2) -> dict[str, Any]:
    t_s = [float(i) for i in range(points)]
    return {
        "schema": "gpufleet.summary/v1",
        "end_time_s": float(points),
        "totals": {
            "gpus_total": 16,
            "gpus_allocated": 8,
            "gpus_working": 6.5,
            "pods_pending": 1,
            "pods_running": 0,
            "pods_succeeded": 1,
            "pods_failed": 0,
        },
        "timeline": {
            "t_s": t_s,
            "gpus_total": [16.0] * points,
            "gpus_allocated": [float(i % 9) for i in range(points)],
            "gpus_working": [float(i % 7) for i in range(points)],
            "pods_pending": [float(i % 3) for i in range(points)],
            "nodes": [2.0] * points,
        },
        "pods": pods if pods is not None else [make_pod("default/train-0"), pending_pod("default/big-job")],
        "nodes": [make_node(f"node-{i}") for i in range(nodes)],
        "warnings": ["PodDisruptionBudget default/pdb is read but not modelled"],
    }


def pending_pod(name: str) -> dict[str, Any]:
    diagnosis = {
        "free_gpus": {"node-0": 4, "node-1": 4},
        "largest_free_gpus": 4,
        "gpus_requested": 8,
        "gang": {
            "name": "big-job",
            "min_member": 2,
            "members": 2,
            "members_bound": 0,
            "members_that_fit": 1,
            "gpus_needed": 16,
        },
        "hints": ["8 GPUs are free in total but no node has 8 free: fragmentation"],
    }
    return make_pod(name, "Pending", gpus=8, message=PENDING_MESSAGE, diagnosis=diagnosis)


def schema_errors(summary: dict[str, Any]) -> list[str]:
    with pytest.raises(SummaryInvalid) as caught:
        validate_summary(summary)
    return caught.value.errors


# --- schema -------------------------------------------------------------------------------------


def test_schema_file_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(load_summary_schema())


def test_minimal_summary_is_valid() -> None:
    validate_summary(make_summary(pods=[], nodes=0, points=0))


def test_summary_with_pods_nodes_and_autoscaling_fields_is_valid() -> None:
    summary = make_summary()
    summary["scenario"] = "fragmentation"
    summary["seed"] = 7
    summary["schedulers"] = ["default-scheduler"]
    summary["totals"].update(pods_disrupted=1, work_lost_s=120.0, cost=3.5, gpu_hours_provisioned=4.0)
    summary["timeline"]["replicas"] = {"Deployment/default/web": [1, 2, 3]}
    summary["timeline"]["nodes_by_pool"] = {"a100": [1, 1, 2]}
    counts = {"fed": 5, "started": 4, "completed": 3, "lost": 0, "requeued": 1, "queued": 1, "in_progress": 1}
    summary["work_items"] = {"queue": counts}
    validate_summary(summary)


def test_fields_added_by_later_work_are_allowed() -> None:
    summary = make_summary()
    summary["future_field"] = {"anything": 1}
    summary["pods"][0]["future_field"] = True
    summary["nodes"][0]["topology"] = "nvlink"
    summary["pods"][0]["stages"]["checkpoint_restore"] = 2.0
    validate_summary(summary)


def test_missing_required_field_is_reported_with_its_path() -> None:
    summary = make_summary()
    del summary["totals"]["pods_failed"]
    assert schema_errors(summary) == ["$.totals: 'pods_failed' is a required property"]


def test_unknown_phase_is_reported_with_the_pod_path() -> None:
    summary = make_summary()
    summary["pods"][1]["phase"] = "Waiting"
    (error,) = schema_errors(summary)
    assert error.startswith("$.pods[1].phase: 'Waiting' is not one of")


def test_wrong_schema_name_is_rejected() -> None:
    summary = make_summary()
    summary["schema"] = "gpufleet.summary/v2"
    assert schema_errors(summary)[0].startswith("$.schema:")


def test_timeline_series_of_the_wrong_length_are_reported_by_path() -> None:
    summary = make_summary()
    summary["timeline"]["gpus_working"].pop()
    summary["timeline"]["replicas"] = {"Deployment/default/web": [1, 2]}
    expected = "has 2 values, expected 3 (the length of $.timeline.t_s)"
    assert schema_errors(summary) == [
        f"$.timeline.gpus_working: {expected}",
        f"$.timeline.replicas['Deployment/default/web']: {expected}",
    ]


def test_every_error_is_listed_in_the_exception_message() -> None:
    summary = make_summary()
    del summary["warnings"]
    summary["nodes"][0]["gpus"] = -1
    with pytest.raises(SummaryInvalid) as caught:
        validate_summary(summary)
    assert len(caught.value.errors) == 2
    assert "$: 'warnings' is a required property" in str(caught.value)
    assert "$.nodes[0].gpus: -1 is less than the minimum of 0" in str(caught.value)
    assert isinstance(caught.value, ValueError)


# --- HTML ---------------------------------------------------------------------------------------


def test_html_is_self_contained() -> None:
    page = render_html(make_summary())
    assert page.startswith("<!DOCTYPE html>")
    for reference in ("<script", "http://", "https://", "<link", "@import", "url("):
        assert reference not in page


def test_html_shows_each_pod_and_escapes_its_message() -> None:
    page = render_html(make_summary())
    assert "default/train-0" in page
    assert "default/big-job" in page
    assert "&lt;preemption: 0/3 &amp; more&gt;" in page
    assert "<preemption" not in page


def test_html_renders_diagnosis_stages_and_warnings() -> None:
    page = render_html(make_summary())
    assert "requests 8 GPUs; largest free block 4" in page
    assert "gang big-job: 0/2 bound, 1 fit, min 2, needs 16 GPUs" in page
    assert "scheduling 1<br>image_pull 1<br>warmup 1" in page
    assert "PodDisruptionBudget default/pdb is read but not modelled" in page


def test_html_draws_svg_charts_with_legends_and_node_bars() -> None:
    page = render_html(make_summary())
    assert page.count("<svg") == 3
    for text in ("GPUs over time", "Pending pods over time", "GPU allocation per node"):
        assert text in page
    assert ">allocated</text>" in page  # legend
    assert ">working</text>" in page
    assert page.count('fill="#0969da"') == 2  # one allocated bar per node


def test_html_pod_table_is_capped_and_says_how_many_were_left_out() -> None:
    pods = [make_pod(f"default/job-{i:04d}") for i in range(1999)] + [pending_pod("default/zz-pending")]
    page = render_html(make_summary(pods=pods))
    assert "Showing 500 of 2000 pods" in page
    assert "1500 pods left out" in page
    assert page.count("<tr>") == 501  # header and 500 pods
    assert "default/zz-pending" in page  # pending pods come first, whatever their name
    assert "default/job-1999" not in page


def test_html_leaves_out_deleted_nodes_and_says_so() -> None:
    summary = make_summary()
    summary["nodes"].append(make_node("node-gone", deleted_s=5.0))
    page = render_html(summary)
    assert "node-gone" not in page
    assert "1 deleted nodes not shown." in page


def test_html_renders_a_summary_without_samples_pods_or_nodes() -> None:
    page = render_html(make_summary(pods=[], points=0, nodes=0))
    assert "No timeline samples." in page
    assert "No pods." in page


def test_large_summary_renders_quickly() -> None:
    pods = [make_pod(f"default/job-{i:05d}") for i in range(10_000)]
    summary = make_summary(pods=pods, points=10_000, nodes=1_000)
    started = time.perf_counter()
    page = render_html(summary)
    assert time.perf_counter() - started < 2.0
    longest_path = max(len(d) for d in re.findall(r'<path d="([^"]*)"', page))
    assert longest_path < 20_000  # the 10,000-point series were downsampled


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


def test_nice_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(0.0, 16.0) == [0.0, 5.0, 10.0, 15.0, 20.0]
    assert nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0.0, 0.0)[-1] >= 0.0


# --- terminal table -----------------------------------------------------------------------------


def test_summary_table_shows_totals_and_the_pending_pods_message() -> None:
    console = Console(record=True, width=300)
    console.print(summary_table(make_summary()))
    text = console.export_text()
    assert "total 16 · allocated 8 · working 6.5" in text
    assert "pending 1 · running 0 · succeeded 1 · failed 0" in text
    assert "default/big-job: 0/3 nodes are available" in text


def test_summary_table_truncates_messages_and_counts_further_pending_pods() -> None:
    pods = [pending_pod(f"default/wait-{i}") for i in range(7)]
    pods[0]["message"] = "0/900 nodes are available: " + "x" * 300 + " END"
    console = Console(record=True, width=400)
    console.print(summary_table(make_summary(pods=pods)))
    text = console.export_text()
    assert "default/wait-4" in text
    assert "default/wait-5" not in text
    assert "… and 2 more pending pods" in text
    assert "0/900 nodes are available: xxx" in text
    assert "END" not in text


def test_print_summary_prints_to_the_given_console() -> None:
    console = Console(record=True, width=200)
    print_summary(make_summary(), console)
    assert "gpufleet summary" in console.export_text()
