"""gpufleet sweep: a grid's runs streamed to results.jsonl, resumed without redoing finished runs."""

from __future__ import annotations

import importlib.util
import json
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

import pytest
from sweep_cli import lines, no_runs, sweep
from tiny_trace import write_trace

from gpufleet.experiments import runs
from gpufleet.experiments.grid import load_grid
from gpufleet.replay import fgd_protocol
from gpufleet.replay.fgd_protocol import POLICIES, replay
from gpufleet.traces.openb import read_nodes, read_pods

GRID = """nodes: nodes.csv
traces: [pods.csv, shares.csv]
policies: [FGD, BestFit]
seeds: 1-2
"""
has_ray = importlib.util.find_spec("ray") is not None


def grid_file(folder: Path, text: str = GRID) -> Path:
    write_trace(folder)
    path = folder / "grid.yaml"
    path.write_text(text)
    return path


def test_sweep_writes_a_line_per_run_with_its_parameters_and_figures(tmp_path: Path) -> None:
    grid = grid_file(tmp_path)
    result = sweep(grid, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "8 runs done, 0 already in results.jsonl" in result.output
    written = lines(tmp_path / "out")
    assert sorted((r["trace"], r["policy"], r["seed"]) for r in written) == sorted(
        (t, p, s) for t in ("pods.csv", "shares.csv") for p in ("FGD", "BestFit") for s in (1, 2)
    )
    assert {r["nodes"] for r in written} == {"nodes.csv"}
    line = next(r for r in written if (r["trace"], r["policy"], r["seed"]) == ("shares.csv", "BestFit", 2))
    direct = replay(
        read_nodes(tmp_path / "nodes.csv"), [p.pod for p in read_pods(tmp_path / "shares.csv")], "BestFit", 2
    )
    assert line["pods_total"] == direct.pods_total and line["pods_failed"] == direct.pods_failed
    assert line["unallocated_gpu_pct_at_100"] == direct.unallocated_gpu_pct_at_100
    assert line["frag_ratio_pct_at_100"] == direct.frag_ratio_pct[100]
    assert line["wall_seconds"] >= 0
    assert "shares: at 100 % arrived" in result.output  # the table over what is there


def test_a_second_sweep_runs_nothing_and_a_removed_run_is_redone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grid, out = grid_file(tmp_path), tmp_path / "out"
    assert sweep(grid, out).exit_code == 0
    before = (out / "results.jsonl").read_text()
    with monkeypatch.context() as m:
        m.setattr(runs, "run_replay", no_runs)
        again = sweep(grid, out)
    assert again.exit_code == 0, again.output
    assert "0 runs done, 8 already in results.jsonl" in again.output
    assert (out / "results.jsonl").read_text() == before
    kept = before.splitlines()
    removed = json.loads(kept.pop(3))
    (out / "results.jsonl").write_text("\n".join(kept) + "\n")
    redo = sweep(grid, out)
    assert "1 runs done, 7 already in results.jsonl" in redo.output
    after = lines(out)
    assert len(after) == 8 and after[-1] == {**removed, "wall_seconds": after[-1]["wall_seconds"]}


def test_a_line_cut_short_by_an_interruption_is_dropped_and_its_run_redone(tmp_path: Path) -> None:
    grid, out = grid_file(tmp_path), tmp_path / "out"
    assert sweep(grid, out).exit_code == 0
    text = (out / "results.jsonl").read_text()
    last = text.splitlines()[-1]
    (out / "results.jsonl").write_text(text[: -len(last) // 2])  # killed while writing the last line
    redo = sweep(grid, out)
    assert "1 runs done, 7 already in results.jsonl, 1 incomplete lines dropped" in redo.output
    assert len(lines(out)) == 8 and lines(out)[-1]["seed"] == json.loads(last)["seed"]


def test_a_grid_with_new_seeds_runs_only_those(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert sweep(grid_file(tmp_path), out).exit_code == 0
    wider = sweep(grid_file(tmp_path, GRID.replace("seeds: 1-2", "seeds: [1, 2, 3]")), out)
    assert "4 runs done, 8 already in results.jsonl" in wider.output
    assert sorted({r["seed"] for r in lines(out)}) == [1, 2, 3]


def test_a_bad_grid_exits_2_naming_the_file_and_field(tmp_path: Path) -> None:
    bad = grid_file(
        tmp_path,
        "nodes: nodes.csv\ntraces: [pods.csv, gone.csv, pods.csv]\npolicies: [FGD, Nope]\ncolour: red\n",
    )
    result = sweep(bad, tmp_path / "out")
    assert result.exit_code == 2
    problems = {line.removeprefix(f"{bad}: ") for line in result.output.splitlines()}
    assert f"traces[1]: no such file {tmp_path / 'gone.csv'}" in problems
    assert "traces[2]: 'pods.csv' is listed twice" in problems
    assert f"policies[1]: unknown policy 'Nope' (known: {', '.join(POLICIES)})" in problems
    assert "colour: unknown field (fields: nodes, traces, policies, seeds, format)" in problems
    assert "seeds: missing" in problems
    assert not (tmp_path / "out").exists()
    for text, problem in (
        ("nodes: [a\n", f"{bad}:2: not valid YAML"),
        ("- 1\n", f"{bad}: a grid is a mapping"),
        (GRID.replace("1-2", "two"), f"{bad}: seeds: 'two': seeds are numbers and ranges"),
        (GRID.replace("1-2", "[1, -1]"), f"{bad}: seeds: -1 is not a whole number at least 0"),
    ):
        bad.write_text(text)
        result = sweep(bad, tmp_path / "out")
        assert result.exit_code == 2 and problem in result.output, result.output


def test_grid_paths_are_read_from_the_grid_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grid = grid_file(tmp_path)
    monkeypatch.chdir(tmp_path.parent)
    loaded = load_grid(grid)
    assert loaded.nodes == "nodes.csv" and loaded.nodes_path == (tmp_path / "nodes.csv").resolve()
    assert [t for t, _ in loaded.traces] == ["pods.csv", "shares.csv"] and loaded.seeds == (1, 2)
    assert len(loaded.specs()) == 8


@pytest.mark.skipif(has_ray, reason="ray is installed")
def test_ray_without_the_extra_exits_2_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grid = grid_file(tmp_path)
    result = sweep(grid, tmp_path / "out", "--ray", "auto")
    assert result.exit_code == 2
    assert (
        result.output == "--ray: Ray is not installed; install the ray extra: pip install 'gpufleet[ray]'\n"
    )
    monkeypatch.setenv("RAY_ADDRESS", "auto")
    assert sweep(grid, tmp_path / "out").output == result.output  # RAY_ADDRESS asks for Ray too


def test_a_sweeps_runs_of_one_trace_and_seed_work_its_workload_out_once_and_a_single_replay_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep's runs (``runs.run_replay``) keep the trace's typical pods and workload for its next
    policies (``fgd_protocol.prepared``), and give what a replay working them out gives; a replay on its
    own (``gpufleet replay``) works them out and keeps nothing."""
    write_trace(tmp_path)
    worked: list[int] = []
    plain = fgd_protocol._drawn

    def counted(requests: list[tuple[int, int]], capacity: int, seed: int) -> tuple[list[int], list[int]]:
        worked.append(seed)
        return plain(requests, capacity, seed)

    monkeypatch.setattr(fgd_protocol, "_drawn", counted)
    monkeypatch.setattr(fgd_protocol, "_PREPARED", OrderedDict())
    monkeypatch.setattr(fgd_protocol, "_TRACES", OrderedDict())
    spec = runs.RunSpec("shares.csv", "nodes.csv", "FGD", 2, tmp_path / "shares.csv", tmp_path / "nodes.csv")
    kept = [runs.run_replay(replace(spec, policy=policy)) for policy in ("FGD", "BestFit", "FGD")]
    assert worked == [2] and kept[0] == {**kept[2], "wall_seconds": kept[0]["wall_seconds"]}
    runs.run_replay(replace(spec, seed=3))
    assert worked == [2, 3]
    nodes, pods = runs.load_trace("openb", tmp_path / "nodes.csv", tmp_path / "shares.csv")
    alone = replay(nodes, pods, "BestFit", 2).to_json()
    assert worked == [2, 3, 2] and len(fgd_protocol._PREPARED) == 2 and len(fgd_protocol._TRACES) == 1
    assert alone == {**kept[1], "wall_seconds": alone["wall_seconds"]}
