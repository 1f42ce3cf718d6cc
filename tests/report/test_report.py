"""Tests of the report layer: the summary schema check and the terminal table (the HTML page:
``test_report_html``); the summary builders here serve both."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from rich.console import Console

from gpufleet.report import (
    SummaryInvalid,
    load_summary_schema,
    print_summary,
    summary_table,
    validate_summary,
)
from gpufleet.report.latency import latency_figures, nearest_rank, percentiles

PENDING_MESSAGE = (
    "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
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


# --- autoscaling, cost and latency fields -------------------------------------------------------

WORK_COUNTS = {
    "fed": 5,
    "started": 4,
    "completed": 3,
    "lost": 0,
    "requeued": 1,
    "queued": 1,
    "in_progress": 1,
}


def latency_pods() -> list[dict[str, Any]]:
    """Pods i = 1..20 that began computing i seconds after creation, and two that never did.

    Each has ``scheduling`` = i, except pods 18..20 which spend 2 s in ``image_pull`` and
    i - 2 in ``scheduling``; pod 1 also has a stage outside the contract's names.
    """
    pods = []
    for i in range(1, 21):
        pull = 2.0 if i >= 18 else 0.0
        stages = {"scheduling": i - pull} | ({"image_pull": pull} if pull else {})
        if i == 1:
            stages["checkpoint_restore"] = 0.5
        created = 100.0 + i
        pods.append(
            make_pod(f"default/w-{i:02d}", "Running", created_s=created, working_s=created + i, stages=stages)
        )
    pods.append(pending_pod("default/waiting"))
    pods.append(make_pod("default/crashed", "Failed", working_s=None, stages={"scheduling": 1.0}))
    return pods


def autoscaled_summary(pods: list[dict[str, Any]] | None = None, events: int = 3) -> dict[str, Any]:
    summary = make_summary(pods=pods if pods is not None else latency_pods())
    summary["totals"].update(
        pods_disrupted=2,
        work_lost_s=7200.0,
        cost=12.345,
        gpu_hours_provisioned=40.0,
        gpu_hours_allocated=30.0,
        gpu_hours_working=25.0,
    )
    summary["timeline"]["nodes_by_pool"] = {"a100": [0, 1, 2], "h100-spot": [1, 1, 0]}
    summary["timeline"]["replicas"] = {"Deployment/default/web": [1, 2, 3], "ScaledJob/batch/etl": [0, 4, 2]}
    kinds = ["scale-up", "scale-up-failed", "scale-down", "provision-timeout"]
    summary["autoscaler_events"] = [
        {
            "t_s": float(i),
            "kind": kinds[i % 4],
            "pool": "a100",
            "nodes": [f"a100-{i}", f"a100-{i + 1}"] if i % 4 != 1 else [],
            "pods": ["default/w-01"],
            "reason": "stock-out" if i % 4 == 1 else "",
        }
        for i in range(events)
    ]
    summary["work_items"] = {"queue": dict(WORK_COUNTS)}
    summary["pods"][0]["node_stages"] = {"capacityWait": 5.0, "boot": 40.0, "driver": 20.0, "join": 5.0}
    summary["pods"][0]["disruptions"] = [50.0]
    summary["latency"] = latency_figures(summary)
    return summary


def test_schema_accepts_a_summary_with_every_new_field() -> None:
    validate_summary(autoscaled_summary())


def test_schema_still_accepts_the_old_minimal_summary() -> None:
    summary = make_summary(pods=[], nodes=0, points=0)
    for key in ("autoscaler_events", "latency", "work_items"):
        assert key not in summary
    validate_summary(summary)


def test_schema_accepts_latency_without_working_pods() -> None:
    summary = make_summary(pods=[pending_pod("default/waiting")])
    summary["latency"] = latency_figures(summary)
    assert summary["latency"] == {
        "pending_to_working_s": {"p50": None, "p95": None, "p99": None, "count": 0},
        "stages": {},
        "by_workload": [],
    }
    validate_summary(summary)


def test_schema_rejects_an_unknown_event_kind_and_a_latency_without_count() -> None:
    summary = autoscaled_summary()
    summary["autoscaler_events"][0]["kind"] = "scale-sideways"
    del summary["latency"]["pending_to_working_s"]["count"]
    errors = schema_errors(summary)
    assert len(errors) == 2
    assert errors[0].startswith("$.autoscaler_events[0].kind: 'scale-sideways' is not one of")
    assert errors[1] == "$.latency.pending_to_working_s: 'count' is a required property"


def test_nearest_rank_picks_a_value_of_rank_ceil_p_n_over_100() -> None:
    values = [50.0, 15.0, 40.0, 20.0, 35.0]  # sorted: 15 20 35 40 50
    assert nearest_rank(values, 5) == 15.0  # rank ceil(0.25) = 1
    assert nearest_rank(values, 30) == 20.0  # rank ceil(1.5) = 2
    assert nearest_rank(values, 40) == 20.0  # rank 2 exactly
    assert nearest_rank(values, 50) == 35.0  # rank ceil(2.5) = 3
    assert nearest_rank(values, 100) == 50.0
    assert percentiles([]) == {"p50": None, "p95": None, "p99": None}
    with pytest.raises(ValueError):
        nearest_rank([], 50)
    with pytest.raises(ValueError):
        nearest_rank(values, 0)


def test_latency_figures_by_hand() -> None:
    figures = latency_figures(autoscaled_summary())
    # Pending to working over the 20 working pods: 1..20. Ranks ceil(p * 20 / 100): 10, 19, 20.
    assert figures["pending_to_working_s"] == {"p50": 10.0, "p95": 19.0, "p99": 20.0, "count": 20}
    assert list(figures["stages"]) == ["scheduling", "image_pull", "checkpoint_restore"]
    # scheduling: 1..17, then 16, 17, 18 (pods 18..20) -> sorted ..., 15, 16, 16, 17, 17, 18.
    assert figures["stages"]["scheduling"] == {"p50": 10.0, "p95": 17.0, "p99": 18.0}
    # image_pull: seventeen pods without it count 0, three have 2.
    assert figures["stages"]["image_pull"] == {"p50": 0.0, "p95": 2.0, "p99": 2.0}
    # checkpoint_restore: only pod 1 has it (0.5), the 19 others count 0; rank 19 is still 0.
    assert figures["stages"]["checkpoint_restore"] == {"p50": 0.0, "p95": 0.0, "p99": 0.5}


def test_latency_figures_round_away_float_noise() -> None:
    pod = make_pod("default/quick", created_s=0.1, working_s=0.3, stages={"other": 0.2})
    figures = latency_figures(make_summary(pods=[pod]))
    assert figures["pending_to_working_s"]["p50"] == 0.2


def test_summary_table_shows_cost_gpu_hours_latency_disruptions_and_work_items() -> None:
    console = Console(record=True, width=300)
    console.print(summary_table(autoscaled_summary()))
    text = console.export_text()
    assert "cost " in text and "12.35" in text
    assert "provisioned 40 · allocated 30 · working 25" in text
    assert "p50 10 s · p95 19 s · p99 20 s (20 pods)" in text
    assert "2 pods disrupted · 2h of GPU time lost" in text
    assert "work items queue" in text
    assert "fed 5 · started 4 · completed 3 · lost 0 · requeued 1 · queued 1 · in progress 1" in text


def test_summary_table_computes_latency_when_absent_and_leaves_out_missing_figures() -> None:
    summary = make_summary()
    console = Console(record=True, width=300)
    console.print(summary_table(summary))
    text = console.export_text()
    assert "p95 3 s" in text  # computed from the one working pod
    for absent in ("cost", "GPU-hours", "disruptions", "work items"):
        assert absent not in text
