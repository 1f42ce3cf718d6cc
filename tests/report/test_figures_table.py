"""The terminal summary table's figures say what they are: GPUs allocated % and working % (never
"utilisation"), the simulated DCGM_FI_DEV_GPU_UTIL when there is one, pods by final state, durations in
human form, fragmented GPUs apart from those out of the pending work's reach."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from gpufleet.report import summary_table
from gpufleet.report.pod_states import final_state_counts


def summary(**totals: Any) -> dict[str, Any]:
    return {
        "schema": "gpufleet.summary/v1",
        "end_time_s": 250_680.0,  # 2d 21h 38m
        "totals": {
            "gpus_total": 16,
            "gpus_allocated": 8,
            "gpus_working": 4,
            "pods_pending": 0,
            "pods_running": 1,
            "pods_succeeded": 0,
            "pods_failed": 0,
            **totals,
        },
        "timeline": {},
        "pods": [],
        "nodes": [],
        "warnings": [],
    }


def rows(summary: dict[str, Any]) -> dict[str, str]:
    console = Console(record=True, width=400)
    console.print(summary_table(summary))
    out = {}
    for line in console.export_text().splitlines():
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        if len(cells) == 2 and cells[0]:
            out[cells[0]] = cells[1]
    return out


def test_allocated_and_working_gpu_hours_are_named_so_and_no_row_says_utilisation() -> None:
    shown = rows(summary(gpu_allocated_pct=66.4137, gpu_working_pct=33.3, dcgm_gpu_util_pct=None))
    assert shown["GPUs allocated %"] == "66.4 % of the provisioned GPU-hours allocated to pods"
    assert shown["GPUs working %"] == "33.3 % of the provisioned GPU-hours with pods computing"
    assert "DCGM_FI_DEV_GPU_UTIL (simulated) %" not in shown  # null: no Traffic
    assert not any("utilisation" in what.lower() or "utilization" in what.lower() for what in shown)


def test_the_simulated_dcgm_gpu_util_has_a_row_of_its_own_when_the_summary_has_it() -> None:
    shown = rows(summary(gpu_allocated_pct=50.0, gpu_working_pct=40.0, dcgm_gpu_util_pct=27.25))
    assert shown["DCGM_FI_DEV_GPU_UTIL (simulated) %"].startswith("27.2 % ")
    assert shown["GPUs working %"].startswith("40.0 % ")


def test_nothing_provisioned_leaves_the_percent_rows_out() -> None:
    shown = rows(summary(gpu_allocated_pct=None, gpu_working_pct=None))
    assert "GPUs allocated %" not in shown and "GPUs working %" not in shown


def test_pods_row_counts_by_final_state_showing_pending_running_succeeded_failed_even_at_zero() -> None:
    shown = rows(summary(final_states={"Running": 3, "Succeeded": 5, "ScaledDown": 2, "Evicted": 1}))
    assert shown["pods"] == "pending 0 · running 3 · succeeded 5 · scaled down 2 · evicted 1 · failed 0"


def test_a_summary_without_final_states_has_them_counted_from_its_pod_records() -> None:
    old = summary()
    old["pods"] = [
        {"name": "d/a", "phase": "Failed", "reason": "Preempted", "deleted_s": 9.0},
        {"name": "d/b", "phase": "Failed", "reason": "Error", "deleted_s": None},
        {"name": "d/c", "phase": "Running", "reason": None, "deleted_s": None},
    ]
    assert final_state_counts(old) == {"Running": 1, "Preempted": 1, "Failed": 1}
    assert rows(old)["pods"] == "pending 0 · running 1 · succeeded 0 · preempted 1 · failed 1"


def test_durations_read_as_people_read_them() -> None:
    done = summary(pods_disrupted=2, work_lost_s=7380.0)
    done["pods"] = [
        {
            "name": "d/a",
            "phase": "Running",
            "reason": None,
            "gpus": 8,
            "pod_group": None,
            "created_s": 0.0,
            "bound_s": 5400.0,
            "working_s": 5442.0,
            "deleted_s": None,
        },
    ]
    shown = rows(done)
    assert shown["end time"] == "2d 21h 38m"
    assert shown["pending → working"] == "p50 1h 30m 42s · p95 1h 30m 42s · p99 1h 30m 42s (1 pod)"
    assert shown["wait, 5-8 GPU"] == "mean 1h 30m · p50 1h 30m · p95 1h 30m · max 1h 30m (1 job)"
    assert shown["disruptions"] == "2 pods disrupted · 2h 3m of GPU time lost"


def test_fragmentation_tells_fragmented_gpus_from_those_out_of_reach() -> None:
    frag = {"free_gpus": 12.0, "fragmented_gpus": 2.0, "ratio": 1 / 6, "out_of_reach_gpus": 8.0, "nodes": {}}
    shown = rows({**summary(), "fragmentation": frag})
    assert shown["fragmentation"] == (
        "2 of 12 free GPUs fragmented (17%): on nodes the pending work may use but cannot fit on · "
        "8 free GPUs on nodes it may not use (selector, affinity, taints)"
    )
