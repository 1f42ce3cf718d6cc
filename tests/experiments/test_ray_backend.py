"""gpufleet sweep --ray on a local Ray instance (2 CPUs, no dashboard), started once for the module:
replays and scenario simulations run as Ray tasks and stream the same lines as local processes."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sweep_cli import lines, sweep
from tiny_trace import write_trace
from typer.testing import CliRunner

from gpufleet.cli import app

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="ray is not installed (the dev extra has it: make test)"
)
BURSTS = Path(__file__).parents[2] / "examples" / "experiments" / "bursts.yaml"


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_a_replay_sweep_runs_as_ray_tasks(tmp_path: Path, local_ray: None) -> None:
    write_trace(tmp_path)
    grid = tmp_path / "grid.yaml"
    grid.write_text("nodes: nodes.csv\ntraces: [shares.csv]\npolicies: [FGD, BestFit]\nseeds: 1-2\n")
    result = sweep(grid, tmp_path / "out", "--ray", "local")
    assert result.exit_code == 0, result.output
    assert "4 runs done" in result.output
    local = CliRunner().invoke(
        app, ["sweep", "--grid", str(grid), "--out", str(tmp_path / "local"), "--jobs", "1"]
    )
    assert local.exit_code == 0, local.output

    def figures(out: Path) -> list[tuple[Any, ...]]:
        return sorted((r["policy"], r["seed"], r["unallocated_gpu_pct_at_100"]) for r in lines(out))

    assert figures(tmp_path / "out") == figures(tmp_path / "local")


def test_a_scenario_sweep_runs_as_ray_tasks_and_resumes(tmp_path: Path, local_ray: None) -> None:
    shutil.copy(BURSTS, tmp_path / "bursts.yaml")
    grid = tmp_path / "grid.yaml"
    grid.write_text("scenario: bursts.yaml\nparameters:\n  NodePool/a10.spec.warm: [0, 2]\nseeds: [1]\n")
    out = tmp_path / "out"
    result = sweep(grid, out, "--ray", "local")
    assert result.exit_code == 0, result.output
    assert "2 runs done, 0 already in results.jsonl" in result.output
    by_warm = {r["parameters"]["NodePool/a10.spec.warm"]: r for r in lines(out)}
    assert by_warm[2]["cost"] > by_warm[0]["cost"]
    assert by_warm[2]["pending_to_working_p95_s"] < by_warm[0]["pending_to_working_p95_s"]
    again = sweep(grid, out, "--ray", "local")
    assert "0 runs done, 2 already in results.jsonl" in again.output
