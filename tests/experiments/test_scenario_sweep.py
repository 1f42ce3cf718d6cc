"""gpufleet sweep over scenario parameters: one simulation per grid point and seed, streamed to
results.jsonl, resumed without redoing finished runs; bad parameters exit 2 naming the grid file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sweep_cli import lines, no_runs, sweep
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.experiments import scenario_runs

BURSTS = Path(__file__).parents[2] / "examples" / "experiments" / "bursts.yaml"
GRID = """scenario: bursts.yaml
parameters:
  NodePool/a10.spec.warm: [0, 2]
  Simulation.spec.autoscaler.scaleDownUnneededTime: [2m, 15m]
seeds: [1, 2]
"""


def grid_file(folder: Path, text: str = GRID) -> Path:
    shutil.copy(BURSTS, folder / "bursts.yaml")
    path = folder / "grid.yaml"
    path.write_text(text)
    return path


def test_a_scenario_sweep_writes_a_line_per_grid_point_and_seed(tmp_path: Path) -> None:
    grid, out = grid_file(tmp_path), tmp_path / "out"
    result = sweep(grid, out, "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert "8 runs done, 0 already in results.jsonl" in result.output
    written = {(r["variant"], r["seed"]): r for r in lines(out)}
    assert sorted(written) == sorted(
        (f"warm={w}, scaleDownUnneededTime={t}", s) for w in (0, 2) for t in ("2m", "15m") for s in (1, 2)
    )
    line = written["warm=2, scaleDownUnneededTime=15m", 1]
    assert line["scenario"] == "bursts.yaml" and line["parameters"] == {
        "NodePool/a10.spec.warm": 2,
        "Simulation.spec.autoscaler.scaleDownUnneededTime": "15m",
    }
    for seed in (1, 2):
        by = {
            (w, t): written[f"warm={w}, scaleDownUnneededTime={t}", seed]
            for w in (0, 2)
            for t in ("2m", "15m")
        }
        # warm nodes and a longer cooldown keep more GPUs: more cost, less p95 pending
        assert by[0, "2m"]["cost"] < by[0, "15m"]["cost"] < by[2, "15m"]["cost"]
        assert by[0, "2m"]["cost"] < by[2, "2m"]["cost"] < by[2, "15m"]["cost"]
        assert by[2, "2m"]["pending_to_working_p95_s"] < by[0, "2m"]["pending_to_working_p95_s"]
        assert by[2, "2m"]["pending_to_working_p50_s"] == 30.0  # on a warm node: the image pull only
    assert "warm=2," in result.output and "mean±sd over seeds" in result.output  # the table


def test_an_override_is_the_same_run_as_the_edited_file(tmp_path: Path) -> None:
    grid = grid_file(tmp_path, "scenario: bursts.yaml\nparameters:\n  NodePool/a10.spec.warm: 2\nseeds: 3\n")
    out = tmp_path / "out"
    assert sweep(grid, out).exit_code == 0
    (line,) = lines(out)
    edited = tmp_path / "edited.yaml"
    edited.write_text(BURSTS.read_text().replace("  warm: 0\n", "  warm: 2\n"))
    direct = CliRunner().invoke(app, ["simulate", str(edited), "--seed", "3", "--out", str(tmp_path / "sim")])
    assert direct.exit_code == 0, direct.output
    summary = json.loads((tmp_path / "sim" / "summary.json").read_text())
    assert line["variant"] == "warm=2" and line["seed"] == 3
    assert line["cost"] == summary["totals"]["cost"]
    assert line["pending_to_working_p95_s"] == summary["latency"]["pending_to_working_s"]["p95"]


def test_a_second_scenario_sweep_runs_nothing_and_a_removed_run_is_redone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grid = grid_file(tmp_path, GRID.replace("[2m, 15m]", "[2m]"))
    out = tmp_path / "out"
    assert sweep(grid, out).exit_code == 0
    before = (out / "results.jsonl").read_text()
    with monkeypatch.context() as m:
        m.setattr(scenario_runs, "run_scenario", no_runs)
        again = sweep(grid, out)
    assert again.exit_code == 0, again.output
    assert "0 runs done, 4 already in results.jsonl" in again.output
    assert (out / "results.jsonl").read_text() == before
    kept = before.splitlines()
    removed = json.loads(kept.pop(1))
    (out / "results.jsonl").write_text("\n".join(kept) + "\n" + kept[0][:40])  # and a line cut short
    redo = sweep(grid, out)
    assert "1 runs done, 3 already in results.jsonl, 1 incomplete lines dropped" in redo.output
    after = lines(out)
    assert len(after) == 4 and after[-1] == {**removed, "wall_seconds": after[-1]["wall_seconds"]}
    wider = sweep(grid_file(tmp_path, GRID.replace("[2m, 15m]", "[2m]").replace("[1, 2]", "[1, 2, 3]")), out)
    assert "2 runs done, 4 already in results.jsonl" in wider.output


def test_a_bad_parameter_exits_2_naming_the_grid_file_and_the_parameter(tmp_path: Path) -> None:
    grid = grid_file(
        tmp_path,
        """scenario: bursts.yaml
parameters:
  NodePool/h100.spec.warm: [0, 1]
  Job/burst-1.spec.template.spec.containers[2].image: [x]
  Simulation.spec.duration.value: [1h]
seeds: [1]
""",
    )
    result = sweep(grid, tmp_path / "out")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"{grid}: parameters: NodePool/h100.spec.warm: no NodePool named 'h100' (NodePools: a10)",
        f"{grid}: parameters: Job/burst-1.spec.template.spec.containers[2].image: "
        "spec.template.spec.containers[2]: no such item (spec.template.spec.containers has 1)",
        f"{grid}: parameters: Simulation.spec.duration.value: spec.duration is not a mapping",
    ]
    assert not (tmp_path / "out").exists()


def test_a_misspelt_or_invalid_field_is_the_loaders_error_for_that_grid_point(tmp_path: Path) -> None:
    grid = grid_file(
        tmp_path,
        """scenario: bursts.yaml
parameters:
  NodePool/a10.spec.warmNodes: [1, 2]
  Simulation.spec.autoscaler.scaleDownUnneededTime: [2m, soon]
seeds: [1]
""",
    )
    result = sweep(grid, tmp_path / "out")
    assert result.exit_code == 2
    scenario = (tmp_path / "bursts.yaml").resolve()
    assert result.output.splitlines() == [
        f"{grid}: with warmNodes=1, scaleDownUnneededTime=2m: {scenario}: document 1 (NodePool/a10): "
        "spec.warmNodes: Additional properties are not allowed ('warmNodes' was unexpected)",
        f"{grid}: with warmNodes=1, scaleDownUnneededTime=soon: {scenario}: document 5 (Simulation/bursts): "
        "spec.autoscaler.scaleDownUnneededTime: invalid duration 'soon' "
        "(use Go syntax such as '90s', '20m', '2h')",
    ]


def test_a_bad_scenario_grid_lists_every_problem(tmp_path: Path) -> None:
    grid = grid_file(
        tmp_path,
        """scenario: [bursts.yaml, gone/]
parameters:
  NodePool/a10.spec.warm: [1, 1]
  NodePool/a10.spec.max: []
seed: 1
""",
    )
    result = sweep(grid, tmp_path / "out")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"{grid}: seed: unknown field (fields of a scenario grid: scenario, parameters, seeds)",
        f"{grid}: seeds: missing",
        f"{grid}: scenario[1]: no such file or directory {tmp_path / 'gone'}",
        f"{grid}: parameters: NodePool/a10.spec.warm: 1 is listed twice",
        f"{grid}: parameters: NodePool/a10.spec.max: no values",
    ]
