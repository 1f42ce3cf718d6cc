"""The ``gpufleet compare`` and ``gpufleet sweep`` commands behind the CLI's options.

Each checks its input first and returns the exit status: 2 with one line per problem on stderr
(``--option: what is wrong``, ``FILE:LINE: column: problem`` for trace rows, ``GRID: field:
problem`` for grid files) before any run starts; else it runs, shows a progress bar of runs done
on a terminal, prints the statistics table and returns 0.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from gpufleet.experiments.compare import run_compare, run_specs, write_compare
from gpufleet.experiments.grid import GridError, load_grid
from gpufleet.experiments.runs import RunSpec, check_traces, default_jobs, parse_seeds, run_progress
from gpufleet.experiments.stats import group_stats, stats_tables, trace_labels
from gpufleet.experiments.sweep import RESULTS, run_sweep
from gpufleet.replay.fgd_protocol import POLICIES
from gpufleet.traces.base import TraceError
from gpufleet.traces.formats import FORMATS


def _fail(err: Console, lines: Sequence[str]) -> int:
    for line in lines:
        err.print(line, markup=False, highlight=False, soft_wrap=True)
    return 2


def _print_tables(out: Console, stats: Sequence[Mapping[str, Any]]) -> None:
    """Figures at 100 % arrived, one table per trace."""
    for table in stats_tables(stats, trace_labels(group["trace"] for group in stats)):
        out.print(table)


def _jobs_problem(jobs: int | None) -> list[str]:
    return [] if jobs is None or jobs >= 1 else [f"--jobs: {jobs}: at least 1"]


def _trace_problems(specs: Sequence[RunSpec]) -> list[str]:
    try:
        check_traces(specs)
    except TraceError as exc:
        return exc.problems
    return []


def compare_command(
    nodes: Path,
    pods: Sequence[Path],
    policies: Sequence[str],
    seeds: str,
    out_dir: Path,
    jobs: int | None,
    fmt: str,
    out: Console,
    err: Console,
) -> int:
    """Every (trace, policy, seed) replay; ``out_dir/compare.json`` and ``out_dir/report.html``."""
    problems = _jobs_problem(jobs)
    problems += [
        f"--policy: unknown policy {p!r} (known: {', '.join(POLICIES)})"
        for p in policies
        if p not in POLICIES
    ]
    if fmt not in FORMATS:
        problems.append(f"--format: unknown trace format {fmt!r} (known: {', '.join(sorted(FORMATS))})")
    seed_list: list[int] = []
    try:
        seed_list = parse_seeds(seeds)
    except ValueError as exc:
        problems.append(f"--seeds: {exc}")
    if problems:
        return _fail(err, problems)
    specs = run_specs(nodes, list(dict.fromkeys(pods)), list(dict.fromkeys(policies)), seed_list, fmt)
    if problems := _trace_problems(specs):
        return _fail(err, problems)
    with run_progress(err, "comparing") as progress:
        task = progress.add_task("runs", total=len(specs))
        document = run_compare(specs, jobs or default_jobs(), lambda _: progress.advance(task))
    json_path, html_path = write_compare(document, out_dir)
    _print_tables(out, document["stats"])
    out.print(f"{len(specs)} runs; wrote {json_path} and {html_path}", highlight=False)
    return 0


def sweep_command(
    grid_path: Path, out_dir: Path, jobs: int | None, ray_address: str | None, out: Console, err: Console
) -> int:
    """The grid's runs that ``out_dir/results.jsonl`` lacks, a line each as they finish."""
    problems = _jobs_problem(jobs)
    try:
        grid = load_grid(grid_path)
    except GridError as exc:
        problems += exc.problems
    if problems:
        return _fail(err, problems)
    specs = grid.specs()
    if problems := _trace_problems(specs):
        return _fail(err, problems)
    if ray_address:
        from gpufleet.experiments.ray_backend import MISSING, connect, ray_available

        if not ray_available():
            return _fail(err, [MISSING])
        try:
            connect(ray_address)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            return _fail(err, [f"--ray: cannot use the Ray cluster at {ray_address!r}: {exc}"])
    with run_progress(err, "sweeping") as progress:
        task = progress.add_task("runs", total=None)
        outcome = run_sweep(
            specs,
            out_dir,
            jobs or default_jobs(),
            ray_address or None,
            on_start=lambda todo: progress.update(task, total=todo),
            on_done=lambda _: progress.advance(task),
        )
    _print_tables(out, group_stats(outcome.lines))
    dropped = f", {outcome.dropped} incomplete lines dropped" if outcome.dropped else ""
    out.print(
        f"{outcome.ran} runs done, {outcome.skipped} already in {RESULTS}{dropped}; "
        f"results in {out_dir / RESULTS}",
        highlight=False,
    )
    return 0


def ray_address_from(option: str | None) -> str | None:
    """``--ray``, else ``RAY_ADDRESS``, else none (local processes)."""
    return option or os.environ.get("RAY_ADDRESS") or None
