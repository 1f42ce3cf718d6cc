"""gpufleet sweep --ray on a local Ray instance (2 CPUs, no dashboard), started once for the module:
replays and scenario simulations run as Ray tasks and stream the same lines as local processes, each
saying where it ran; a run whose worker dies on every try comes back failed. A cluster of several
nodes, a worker killed mid-sweep and a resumed sweep: ``test_sweep_ray_cluster.py``."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
from sweep_cli import lines, sweep
from tiny_trace import write_trace
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.experiments import ray_backend
from gpufleet.experiments.runs import Failed

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
    assert {tuple(sorted(r["ran_on"])) for r in lines(tmp_path / "out")} == {("host", "node_id")}
    assert all("ran_on" not in r for r in lines(tmp_path / "local"))  # where a run ran: Ray runs only


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


@dataclass(frozen=True)
class Crashing:
    """A run whose process dies under it, as a worker killed for memory does."""

    seed: int

    def params(self) -> dict[str, Any]:
        return {"seed": self.seed}

    def run(self) -> NoReturn:
        os._exit(1)

    def line(self, result: dict[str, Any]) -> dict[str, Any]:
        return result

    def label(self) -> str:
        return f"crash {self.seed}"


def test_a_run_whose_worker_dies_on_every_try_comes_back_failed_in_one_line(
    local_ray: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import tests
    monkeypatch.setattr(ray_backend, "MAX_RETRIES", 0)  # one try: each would start a new worker
    [(spec, outcome)] = list(ray_backend.execute_on_ray([Crashing(1)], "local"))
    assert spec == Crashing(1)
    assert isinstance(outcome, Failed)
    assert outcome.error.startswith("WorkerCrashedError: ") and "\n" not in outcome.error
