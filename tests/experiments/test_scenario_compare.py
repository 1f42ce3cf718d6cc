"""gpufleet compare of simulation scenarios: variants x seeds, statistics over seeds, cost against
p95 pending-to-working time."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from conftest import page_figures
from gpufleet.cli import app

EXAMPLES = Path(__file__).parents[2] / "examples"
BURSTS = EXAMPLES / "experiments" / "bursts.yaml"


def variants(folder: Path) -> tuple[Path, Path]:
    """The bursts example as it is (no warm nodes) and with two warm nodes."""
    cold = folder / "bursts.yaml"
    shutil.copy(BURSTS, cold)
    warm = folder / "bursts-warm.yaml"
    warm.write_text(BURSTS.read_text().replace("  warm: 0\n", "  warm: 2\n"))
    return cold, warm


def compare(out: Path, *args: str) -> Any:
    return CliRunner().invoke(app, ["compare", "--out", str(out), *args])


def runs_by(document: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(run["variant"], run["seed"]): run for run in document["runs"]}


def test_warm_nodes_cost_more_and_cut_p95_pending_on_every_seed(tmp_path: Path) -> None:
    cold, warm = variants(tmp_path)
    out = tmp_path / "out"
    result = compare(out, "--scenario", str(cold), "--scenario", str(warm), "--seeds", "1-2", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert "4 runs; wrote" in result.output and "bursts-warm" in result.output
    document = json.loads((out / "compare.json").read_text())
    assert document["schema"] == "gpufleet.compare-scenarios/v1" and document["seeds"] == [1, 2]
    assert [v["variant"] for v in document["variants"]] == ["bursts", "bursts-warm"]
    assert document["autoscaling"] is True
    runs = runs_by(document)
    assert len(runs) == 4
    for seed in (1, 2):
        c, w = runs["bursts", seed], runs["bursts-warm", seed]
        assert w["pending_to_working_p95_s"] < c["pending_to_working_p95_s"]
        assert w["cost"] > c["cost"] and w["gpu_hours_provisioned"] > c["gpu_hours_provisioned"]
        assert c["pods_started"] == w["pods_started"] == 12 and c["pods_pending"] == w["pods_pending"] == 0
        # half the pods land on warm, started nodes: they wait only for the image, 6 GB at 200 MB/s
        assert w["pending_to_working_p50_s"] == 30.0
        assert c["pending_to_working_p50_s"] > 150  # each waits for a node's start chain
    # the seed changes the run: node start-up times are drawn from the pool's distributions
    assert runs["bursts", 1]["pending_to_working_p95_s"] != runs["bursts", 2]["pending_to_working_p95_s"]
    for group in document["stats"]:
        mine = [runs[group["variant"], seed] for seed in (1, 2)]
        assert group["runs"] == 2 and group["seeds"] == [1, 2]
        for key in ("cost", "pending_to_working_p95_s", "gpu_allocated_pct"):
            values = [run[key] for run in mine]
            assert group[key]["mean"] == pytest.approx(statistics.fmean(values))
            assert group[key]["sd"] == pytest.approx(statistics.stdev(values))
            assert (group[key]["min"], group[key]["max"]) == (min(values), max(values))
        assert group["request_p95_wait_s"]["n"] == 0  # no Traffic
    html = (out / "report.html").read_text()
    (points, layout), *_ = page_figures(html).values()
    assert [trace["name"] for trace in points] == ["bursts", "bursts-warm"]  # one point per variant
    warm = document["stats"][1]
    assert points[1]["x"] == [warm["cost"]["mean"]]
    assert points[1]["error_x"]["arrayminus"] == [pytest.approx(warm["cost"]["mean"] - warm["cost"]["min"])]
    assert points[1]["hovertext"][0].startswith("<b>bursts-warm</b>: cost ")
    assert layout["yaxis"]["title"]["text"].startswith("p95 pending→working (")
    assert "request p95" not in html


def test_a_compare_run_has_the_figures_simulate_writes_for_that_seed(tmp_path: Path) -> None:
    cold, _ = variants(tmp_path)
    assert compare(tmp_path / "out", "--scenario", str(cold), "--seeds", "2", "--jobs", "1").exit_code == 0
    run = json.loads((tmp_path / "out" / "compare.json").read_text())["runs"][0]
    simulated = CliRunner().invoke(
        app, ["simulate", str(cold), "--seed", "2", "--out", str(tmp_path / "sim")]
    )
    assert simulated.exit_code == 0, simulated.output
    summary = json.loads((tmp_path / "sim" / "summary.json").read_text())
    assert run["seed"] == summary["seed"] == 2
    assert run["cost"] == summary["totals"]["cost"]
    assert run["pending_to_working_p95_s"] == summary["latency"]["pending_to_working_s"]["p95"]
    assert run["pending_to_working_p50_s"] == summary["latency"]["pending_to_working_s"]["p50"]
    totals = summary["totals"]
    assert run["gpu_allocated_pct"] == pytest.approx(
        100 * totals["gpu_hours_allocated"] / totals["gpu_hours_provisioned"], abs=1e-4
    )
    assert run["gpu_working_pct"] == pytest.approx(
        100 * totals["gpu_hours_working"] / totals["gpu_hours_provisioned"], abs=1e-4
    )
    assert run["final_states"] == totals["final_states"] and sum(run["final_states"].values()) == len(
        summary["pods"]
    )


def test_without_node_pools_there_is_no_cost_plot(tmp_path: Path) -> None:
    one = EXAMPLES / "seed-004-cold-start" / "one-replica.yaml"
    eight = EXAMPLES / "seed-004-cold-start" / "eight-replicas.yaml"
    out = tmp_path / "out"
    result = compare(out, "--scenario", str(one), "--scenario", str(eight), "--seeds", "0", "--jobs", "1")
    assert result.exit_code == 0, result.output
    document = json.loads((out / "compare.json").read_text())
    assert document["autoscaling"] is False
    p95 = {g["variant"]: g["pending_to_working_p95_s"]["mean"] for g in document["stats"]}
    # seed 004's cold start: 140 GB over 10 GB/s of shared storage, 14 s alone, 112 s for eight
    assert p95 == {"one-replica": 14.0, "eight-replicas": 112.0}
    assert page_figures((out / "report.html").read_text()) == {}


def test_comma_joined_paths_make_one_variant(tmp_path: Path) -> None:
    gpu = EXAMPLES / "gpu-sharing"
    out = tmp_path / "out"
    both = f"{gpu / 'fragmentation.yaml'},{gpu / 'fgd-scheduler.yaml'}"
    result = compare(out, "--scenario", str(gpu / "fragmentation.yaml"), "--scenario", both, "--seeds", "0")
    assert result.exit_code == 0, result.output
    stats = {g["variant"]: g for g in json.loads((out / "compare.json").read_text())["stats"]}
    # the README's fragmentation example: default scores leave "train" pending, FGD places it
    assert stats["fragmentation"]["pods_pending"]["mean"] == 1.0
    assert stats["fragmentation+fgd-scheduler"]["pods_pending"]["mean"] == 0.0


def test_compare_input_problems_exit_2_one_line_each(tmp_path: Path) -> None:
    out = tmp_path / "out"
    nothing = compare(out)
    assert nothing.exit_code == 2
    assert nothing.output.splitlines() == [
        f"--{name}: missing: a trace comparison needs --nodes, --pods and --policy "
        "(or compare scenarios with --scenario or --grid)"
        for name in ("nodes", "pods", "policy")
    ]
    both = compare(out, "--scenario", "a.yaml", "--nodes", "n.csv", "--policy", "FGD")
    assert both.exit_code == 2
    assert both.output == "--nodes, --policy: compare scenarios (--scenario, --grid) or a trace, not both\n"
    missing = compare(out, "--scenario", str(tmp_path / "gone.yaml"), "--seeds", "x")
    assert missing.exit_code == 2 and missing.output.startswith("--seeds: 'x': seeds are numbers")
    missing = compare(out, "--scenario", str(tmp_path / "gone.yaml"))
    assert missing.exit_code == 2
    assert missing.output == f"{tmp_path / 'gone.yaml'}: no such file or directory\n"
    assert not out.exists()


def test_compare_of_a_grid_file_runs_its_points(tmp_path: Path) -> None:
    shutil.copy(BURSTS, tmp_path / "bursts.yaml")
    grid = tmp_path / "grid.yaml"
    grid.write_text("scenario: bursts.yaml\nparameters:\n  NodePool/a10.spec.warm: [0, 2]\nseeds: [5, 6]\n")
    out = tmp_path / "out"
    result = compare(out, "--grid", str(grid), "--seeds", "1", "--jobs", "1")  # --seeds replaces the grid's
    assert result.exit_code == 0, result.output
    document = json.loads((out / "compare.json").read_text())
    assert [(r["variant"], r["seed"], r["parameters"]) for r in document["runs"]] == [
        ("warm=0", 1, {"NodePool/a10.spec.warm": 0}),
        ("warm=2", 1, {"NodePool/a10.spec.warm": 2}),
    ]
    cold, warm = (r["pending_to_working_p95_s"] for r in document["runs"])
    assert warm < cold


def test_compare_and_sweep_print_their_statistics_as_data_with_output(tmp_path: Path) -> None:
    """``-o json|yaml`` as kubectl's: the statistics on stdout as data, the same in both; the line
    about the files written goes to stderr."""
    shutil.copy(BURSTS, tmp_path / "bursts.yaml")
    grid = tmp_path / "grid.yaml"
    grid.write_text("scenario: bursts.yaml\nparameters:\n  NodePool/a10.spec.warm: [0, 2]\nseeds: [1]\n")
    runner = CliRunner()
    as_json = runner.invoke(app, ["compare", "--out", str(tmp_path / "c"), "--grid", str(grid), "-o", "json"])
    assert as_json.exit_code == 0, as_json.output
    stats = json.loads(as_json.stdout)
    assert [s["variant"] for s in stats] == ["warm=0", "warm=2"]
    assert "2 runs; wrote" in as_json.stderr and "2 runs; wrote" not in as_json.stdout
    as_yaml = runner.invoke(app, ["sweep", "--grid", str(grid), "--out", str(tmp_path / "s"), "-o", "yaml"])
    assert as_yaml.exit_code == 0, as_yaml.output
    assert [s["variant"] for s in yaml.safe_load(as_yaml.stdout)] == ["warm=0", "warm=2"]
    assert "results in" in as_yaml.stderr
