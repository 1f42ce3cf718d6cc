"""How compare and whatif print their figures: the variant table keeps to 80 columns (the metrics that
do not fit continue in a second table, the variants repeated), GPUs allocated % and working % by name;
whatif counts every pod by final state, a row per state either side has, and says spans in human form."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from gpufleet.experiments.scenario_runs import SCENARIO_METRICS
from gpufleet.experiments.stats import describe, variant_table
from gpufleet.experiments.whatif_view import figure_rows, for_how_long


def stats(variant: str, **values: float | None) -> dict[str, Any]:
    return {
        "variant": variant,
        "runs": 2,
        **{key: describe([values.get(key)]) for key, _ in SCENARIO_METRICS},
    }


def printed(renderable: Any) -> list[str]:
    console = Console(record=True, width=80)
    console.print(renderable)
    return console.export_text().splitlines()


def test_the_variant_table_keeps_to_80_columns_and_names_gpus_allocated_and_working() -> None:
    figures = {
        "cost": 11.0,
        "pending_to_working_p50_s": 30.0,
        "pending_to_working_p95_s": 224.0,
        "gpu_allocated_pct": 23.1,
        "gpu_working_pct": 21.8,
        "dcgm_gpu_util_pct": 55.5,
        "pods_pending": 0.0,
        "request_p95_wait_s": 5.5,
    }
    lines = printed(
        variant_table([stats("bursts", **figures), stats("bursts-warm", **figures)], SCENARIO_METRICS)
    )
    text = "\n".join(lines)
    assert all(len(line.rstrip()) <= 80 for line in lines)
    assert sum(1 for line in lines if line.startswith(" bursts-warm ")) == 1  # whole, its figures folded
    for word in ("allocated", "working", "DCGM_FI_DEV_GPU_UTIL", "(simulated)", "23.1±0.0", "55.5±0.0"):
        assert word in text
    assert "utilisation" not in text


def test_a_metric_no_variant_has_gets_no_column() -> None:
    text = "\n".join(printed(variant_table([stats("a", cost=1.0)], SCENARIO_METRICS)))
    assert "cost" in text and "DCGM_FI_DEV_GPU_UTIL" not in text


def side(**final_states: int) -> dict[str, Any]:
    return {
        "pods_started": 1,
        "pods_pending_at_end": 0,
        "pods_absent": 0,
        "time_to_start_p50_s": 30.0,
        "time_to_start_p95_s": 9600.0,
        "time_to_working_p50_s": None,
        "time_to_working_p95_s": None,
        "pods_preempted": final_states.get("Preempted", 0),
        "final_states": final_states,
        "gpus_total": 8,
        "gpus_allocated": 8,
        "gpu_hours_allocated": 1,
        "gpu_hours_working": 1,
        "nodes_added": 0,
        "cost": None,
        "nodes_without_price": 0,
    }


def test_whatif_counts_every_pod_by_final_state_a_row_per_state_either_side_has() -> None:
    document = {
        "pending_in_snapshot": 1,
        "baseline": side(Running=3, Pending=1),
        "changed": side(Running=3, Suspended=1, Preempted=1),
    }
    rows = {label: (baseline, changed) for label, baseline, changed in figure_rows(document)}
    assert rows["all pods: running"] == ("3", "3")
    assert rows["all pods: pending"] == ("1", "0")
    assert rows["all pods: suspended"] == ("0", "1")
    assert rows["all pods: preempted"] == ("0", "1")
    assert "all pods: evicted" not in rows  # neither side has one
    assert rows["time to start p50 / p95"] == ("30 s / 2h 40m", "30 s / 2h 40m")


def test_whatif_says_how_long_it_simulated_in_human_form() -> None:
    assert (for_how_long(21600.0), for_how_long(None)) == ("6h", "until nothing is left")
