"""gpufleet compare: every (trace, policy, seed) replay, statistics over seeds, one HTML report."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from tiny_trace import write_trace
from typer.testing import CliRunner

from conftest import page_figures
from gpufleet.cli import app
from gpufleet.experiments.runs import parse_seeds
from gpufleet.experiments.stats import describe, median_curve
from gpufleet.replay.fgd_protocol import replay
from gpufleet.traces.openb import read_nodes, read_pods


def test_seeds_are_ranges_and_lists() -> None:
    assert parse_seeds("42-45") == [42, 43, 44, 45]
    assert parse_seeds("7, 1,3-4,3") == [1, 3, 4, 7]
    for bad in ("5-3", "a", "1-", ""):
        with pytest.raises(ValueError):
            parse_seeds(bad)


def test_describe_uses_the_sample_standard_deviation_and_skips_missing_values() -> None:
    assert describe([1.0, 2.0, None, 6.0]) == {
        "n": 3,
        "mean": 3.0,
        "sd": pytest.approx(statistics.stdev([1.0, 2.0, 6.0])),
        "median": 2.0,
        "min": 1.0,
        "max": 6.0,
    }
    assert describe([4.0])["sd"] == 0.0 and describe([None])["mean"] is None
    assert median_curve([[1.0, None, 3.0], [2.0, None, None], [9.0, None, 4.0]]) == [2.0, None, 3.5]


def test_compare_writes_statistics_of_the_runs_and_a_report(tmp_path: Path) -> None:
    nodes, pods, shares = write_trace(tmp_path)
    out = tmp_path / "out"
    args = ["compare", "--nodes", str(nodes), "--pods", str(pods), "--pods", str(shares)]
    args += ["--policy", "FGD", "--policy", "Random", "--seeds", "1-2", "--out", str(out), "--jobs", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    document = json.loads((out / "compare.json").read_text())
    assert document["schema"] == "gpufleet.compare/v1" and document["seeds"] == [1, 2]
    runs = document["runs"]
    assert len(runs) == 8 and len(document["stats"]) == 4
    # a run in a worker process is the replay itself
    fgd_1 = next(r for r in runs if r["trace"] == str(pods) and r["policy"] == "FGD" and r["seed"] == 1)
    direct = replay(read_nodes(nodes), [p.pod for p in read_pods(pods)], "FGD", 1).to_json()
    assert {k: v for k, v in fgd_1.items() if k not in ("wall_seconds", "trace", "nodes")} == {
        k: v for k, v in direct.items() if k != "wall_seconds"
    }
    for group in document["stats"]:
        members = [r for r in runs if (r["trace"], r["policy"]) == (group["trace"], group["policy"])]
        assert group["runs"] == len(members) == 2 and group["seeds"] == [1, 2]
        for key, values in (
            ("unallocated_gpu_pct_at_100", [r["unallocated_gpu_pct_at_100"] for r in members]),
            ("frag_ratio_pct_at_100", [r["frag_ratio_pct"][100] for r in members]),
        ):
            values = [v for v in values if v is not None]  # whole-GPU steps can skip 99..101 %
            if group["trace"] == str(shares):
                assert len(values) == 2
            figures = group[key]
            assert figures["n"] == len(values) >= 1
            assert figures["mean"] == pytest.approx(statistics.fmean(values))
            assert figures["sd"] == pytest.approx(statistics.stdev(values) if len(values) > 1 else 0.0)
            assert figures["median"] == pytest.approx(statistics.median(values))
            assert (figures["min"], figures["max"]) == (min(values), max(values))
        assert group["median_gpu_alloc_pct"] == median_curve([r["gpu_alloc_pct"] for r in members])
    html = (out / "report.html").read_text()
    charts = page_figures(html)
    assert len(charts) == 4 and "<table" in html  # two views per trace
    for data, _ in charts.values():
        assert [trace["name"] for trace in data] == ["Ideal", "FGD", "Random"]
    assert [layout["xaxis"]["range"][0] for _, layout in charts.values()] == [0.0, 80.0, 0.0, 80.0]
    assert html.count("* plotly.js v") == 1 and "<script src" not in html  # self-contained
    fgd = next(g for g in document["stats"] if g["trace"] == str(shares) and g["policy"] == "FGD")
    cell = f"{fgd['unallocated_gpu_pct_at_100']['mean']:.2f} ± {fgd['unallocated_gpu_pct_at_100']['sd']:.2f}"
    assert cell in html and cell in result.output and "shares: at 100 % arrived" in result.output


def test_compare_input_errors_exit_2_before_any_run(tmp_path: Path) -> None:
    nodes, pods, _ = write_trace(tmp_path)
    base = ["compare", "--nodes", str(nodes), "--out", str(tmp_path / "out")]
    bad = CliRunner().invoke(app, [*base, "--pods", str(pods), "--policy", "Nope", "--seeds", "3-1"])
    assert bad.exit_code == 2
    assert "--policy: unknown policy 'Nope'" in bad.output and "--seeds: '3-1'" in bad.output
    pods.write_text(pods.read_text() + "p9,x,1,0,0\n")
    bad_row = CliRunner().invoke(app, [*base, "--pods", str(pods), "--policy", "FGD"])
    assert bad_row.exit_code == 2 and "pods.csv:8: cpu_milli: 'x' is not a whole number" in bad_row.output
    assert not (tmp_path / "out").exists()
