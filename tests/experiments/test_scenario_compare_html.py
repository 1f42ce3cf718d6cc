"""compare's page of scenario variants: a column per figure the runs carry, in human form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import page_figures
from gpufleet.experiments.scenario_compare import scenario_compare_document
from gpufleet.experiments.scenario_compare_html import render_scenario_compare_html, run_figures
from gpufleet.experiments.scenario_runs import ScenarioSpec


def document(node_pools: list[str]) -> dict[str, Any]:
    """Two seeds of one variant whose runs carry a makespan, waits by job size and no request wait."""
    specs = [
        ScenarioSpec("a.yaml", (Path("/a.yaml"),), (("NodePool/l4.spec.warm", "2"),), s, "a") for s in (1, 2)
    ]
    results = [
        {
            "cost": 3.0 + seed,
            "pending_to_working_p95_s": 60.0 * seed,
            "gpu_working_pct": 40.0 + seed,
            "request_p95_wait_s": None,
            "makespan_s": 3600.0 * seed,
            "job_wait_p95_s_by_gpus": {"8": 90.0 * seed},
            "model_bytes": 2.0**30 * seed,
            "node_pools": node_pools,
            "wall_seconds": 0.25 * seed,
        }
        for seed in (1, 2)
    ]
    return scenario_compare_document(specs, results)


def test_run_figures_are_its_numbers_and_those_keyed_in_a_field_not_its_seed_or_wall_time() -> None:
    run = document([])["runs"][0]
    assert run_figures(run) == {
        "cost": 4.0,
        "pending_to_working_p95_s": 60.0,
        "gpu_working_pct": 41.0,
        "request_p95_wait_s": None,
        "makespan_s": 3600.0,
        "job_wait_p95_s_by_gpus.8": 90.0,
        "model_bytes": 2.0**30,
    }


def test_the_table_has_a_column_per_figure_with_its_unit_in_human_form() -> None:
    page = render_scenario_compare_html(document([]))
    table = page[page.index('<table class="stats fit">') : page.index("</table>")]
    heads = ["variant", "runs", "cost", "p95 pending", "GPUs working %", "makespan",
             "job wait p95 by gpus: 8", "model"]  # fmt: skip
    assert table.count("<th>") == len(heads) and all(f"<th>{head}</th>" in table for head in heads)
    assert "request p95" not in table and "wall" not in table and "seed" not in table  # no value, not figures
    for cell in (
        '4.50 ± 0.71<span class="sub">4.00–5.00</span>',
        '1m 30s ± 42.43 s<span class="sub">1m–2m</span>',
        '1h 30m ± 42m 26s<span class="sub">1h–2h</span>',
        "41.5 % ± 0.7 %",
        '1.5Gi ± 724Mi<span class="sub">1Gi–2Gi</span>',
        "2m 15s ± 1m 4s",
    ):
        assert cell in table
    assert page_figures(page) == {}  # no node pools: no cost chart


def test_with_node_pools_the_page_plots_cost_against_p95() -> None:
    (points, layout), *_ = page_figures(render_scenario_compare_html(document(["l4"]))).values()
    assert [trace["name"] for trace in points] == ["a"]
    assert points[0]["y"] == [90.0] and layout["yaxis"]["title"]["text"] == "p95 pending→working (s)"
    assert (points[0]["error_y"]["arrayminus"], points[0]["error_y"]["array"]) == ([30.0], [30.0])
