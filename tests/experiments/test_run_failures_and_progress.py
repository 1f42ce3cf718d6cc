"""A run that raises does not stop the others: compare and sweep say which run failed and why (one
line each) and exit 1, a sweep keeps the other runs' lines and does the failed run again next time;
the CLI draws its progress bars on a terminal only, without changing what a command writes."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from sweep_cli import lines, sweep
from tiny_trace import write_trace
from typer.testing import CliRunner

from gpufleet import cli
from gpufleet.experiments import runs
from gpufleet.experiments.runs import RunSpec, execute_reported
from gpufleet.report import progress
from gpufleet.report.progress import SimulationBar
from gpufleet.report.progress_wanted import NO_PROGRESS_ENV

BURSTS = Path(__file__).parents[2] / "examples" / "experiments" / "bursts.yaml"


@dataclass(frozen=True)
class Sum:
    """A run adding two numbers; ``b == 0`` makes it fail."""

    a: int
    b: int

    def params(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b}

    def run(self) -> dict[str, Any]:
        if self.b == 0:
            raise ZeroDivisionError("b is zero")
        return {"sum": self.a + self.b, "wall_seconds": 0.5}

    def line(self, result: dict[str, Any]) -> dict[str, Any]:
        return {**self.params(), **result}

    def label(self) -> str:
        return f"{self.a}+{self.b}"


class Heard:
    def __init__(self) -> None:
        self.said: list[tuple[Any, ...]] = []

    def started(self, total: int) -> None:
        self.said.append(("started", total))

    def finished(self, label: str, seconds: float | None) -> None:
        self.said.append(("finished", label, seconds))

    def failed(self, label: str, error: str) -> None:
        self.said.append(("failed", label, error))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failed_run_is_reported_with_its_error_and_the_others_go_on(jobs: int) -> None:
    heard, failures = Heard(), []
    specs = [Sum(1, 2), Sum(3, 0), Sum(4, 5)]
    done = dict(execute_reported(specs, jobs, heard, failures))
    assert done == {Sum(1, 2): {"sum": 3, "wall_seconds": 0.5}, Sum(4, 5): {"sum": 9, "wall_seconds": 0.5}}
    assert len(failures) == 1
    label, error = failures[0]
    assert label == "3+0"
    assert error.startswith("ZeroDivisionError: b is zero (at test_run_failures_and_progress.py:")
    assert heard.said[0] == ("started", 3)
    assert sorted(heard.said[1:]) == [
        ("failed", "3+0", error),
        ("finished", "1+2", 0.5),
        ("finished", "4+5", 0.5),
    ]


def replay_failing_for(policy: str, real: Any) -> Any:
    def run_replay(spec: RunSpec) -> dict[str, Any]:
        if spec.policy == policy:
            raise RuntimeError("out of memory")
        return real(spec)

    return run_replay


def test_a_sweep_keeps_the_other_runs_and_does_the_failed_ones_next_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_trace(tmp_path)
    grid = tmp_path / "grid.yaml"
    grid.write_text("nodes: nodes.csv\ntraces: [pods.csv]\npolicies: [FGD, BestFit]\nseeds: 1-2\n")
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        m.setattr(runs, "run_replay", replay_failing_for("BestFit", runs.run_replay))
        first = sweep(grid, out)
    assert first.exit_code == 1, first.output
    assert "run failed: BestFit seed 1 (pods.csv): RuntimeError: out of memory (at " in first.output
    assert "2 runs failed: no line in results.jsonl, the next sweep does them again" in first.output
    assert "2 runs done, 0 already in results.jsonl" in first.output
    assert sorted((r["policy"], r["seed"]) for r in lines(out)) == [("FGD", 1), ("FGD", 2)]
    again = sweep(grid, out)
    assert again.exit_code == 0, again.output
    assert "2 runs done, 2 already in results.jsonl" in again.output


def test_a_compare_with_a_failed_run_exits_1_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes, pods, _ = write_trace(tmp_path)
    monkeypatch.setattr(runs, "run_replay", replay_failing_for("FGD", runs.run_replay))
    args = ["--nodes", str(nodes), "--pods", str(pods), "--policy", "FGD", "--policy", "BestFit"]
    result = CliRunner().invoke(
        cli.app, ["compare", "--out", str(tmp_path / "out"), *args, "--seeds", "1", "--jobs", "1"]
    )
    assert result.exit_code == 1, result.output
    assert "run failed: FGD seed 1 (pods.csv): RuntimeError: out of memory" in result.output
    assert "1 of 2 runs failed; nothing written" in result.output
    assert not (tmp_path / "out" / "compare.json").exists()


def simulate_on_terminal(out: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> tuple[str, str]:
    """``gpufleet simulate`` of the bursts example with stderr a (fake) terminal: what it drew there
    and the summary.json it wrote."""
    buffer = io.StringIO()
    terminal, made = Console(file=buffer, force_terminal=True, width=120), cli.console
    monkeypatch.setattr(cli, "console", lambda stderr=False: terminal if stderr else made())
    result = CliRunner().invoke(cli.app, ["simulate", str(BURSTS), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return buffer.getvalue(), (out / "summary.json").read_text()


def test_simulate_draws_its_bar_on_a_terminal_and_writes_the_same_summary_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(NO_PROGRESS_ENV, raising=False)
    monkeypatch.setattr(progress, "SimulationBar", partial(SimulationBar, show_after_s=0.0))
    drawn, summary = simulate_on_terminal(tmp_path / "bar", monkeypatch)
    assert "simulating" in drawn and "of 1h 30m (" in drawn
    assert "simulated 1h 30m in " in drawn
    quiet, same = simulate_on_terminal(tmp_path / "quiet", monkeypatch, "--no-progress")
    assert quiet == ""
    assert json.loads(same) == json.loads(summary)


def test_a_simulate_shorter_than_the_delay_draws_nothing_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(NO_PROGRESS_ENV, raising=False)
    # a clock at which no time passes
    monkeypatch.setattr(progress, "SimulationBar", partial(SimulationBar, clock=lambda: 0.0))
    drawn, _ = simulate_on_terminal(tmp_path, monkeypatch)
    assert drawn == ""
