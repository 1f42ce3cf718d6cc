"""The ``gpufleet compare`` and ``gpufleet sweep`` commands behind the CLI's options.

Each checks its input first and returns the exit status: 2 with one line per problem on stderr
(``--option: what is wrong``, ``FILE:LINE: column: problem`` for trace rows, ``GRID: field:
problem`` for grid files, the loader's ``FILE: document N (Kind/name): field: problem`` for
scenarios) before any run starts; else it runs, shows a progress bar of runs done on a terminal
(``report.progress.RunsBar``, unless ``progress`` is off), prints the statistics table and returns
0, or 1 when some run failed (one line each: ``run failed: LABEL: error``; compare then writes
nothing). Both take trace replays (FGD protocol) or simulation scenarios: ``compare`` by
``--nodes/--pods/--policy`` or ``--scenario``, or either kind of grid file; ``sweep`` by the kind
of its grid file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from gpufleet.experiments.compare import run_compare, run_specs, write_compare
from gpufleet.experiments.grid import Grid, GridError, is_scenario_grid, read_grid, trace_grid
from gpufleet.experiments.runs import Run, RunsFailed, RunSpec, check_traces, default_jobs, parse_seeds
from gpufleet.experiments.scenario_compare import run_scenario_compare, variant_specs
from gpufleet.experiments.scenario_compare_html import render_scenario_compare_html
from gpufleet.experiments.scenario_grid import ScenarioGrid, scenario_grid
from gpufleet.experiments.scenario_runs import SCENARIO_GROUP, SCENARIO_METRICS, ScenarioSpec, check_variants
from gpufleet.experiments.stats import group_stats, stats_tables, trace_labels, variant_table
from gpufleet.experiments.sweep import RESULTS, placements, placements_note, run_sweep, with_placements
from gpufleet.model.pod_selection import PodSelection
from gpufleet.replay.fgd_protocol import POLICIES
from gpufleet.report.output import print_data
from gpufleet.report.progress import RunsBar
from gpufleet.traces.base import TraceError
from gpufleet.traces.formats import FORMATS

#: Seeds when ``--seeds`` is not given: the FGD paper's for replays, five for scenarios.
TRACE_SEEDS, SCENARIO_SEEDS = "42-51", "1-5"


#: ``--select`` on a trace replay: its pods have no labels or namespaces to select by.
SELECT_TRACES = (
    "--select, --namespace: select the pods of scenarios (--scenario, --grid), not of trace replays"
)


def selected(specs: Sequence[ScenarioSpec], selection: PodSelection | None) -> list[ScenarioSpec]:
    """The runs with their pod figures over ``selection``."""
    return [replace(spec, selection=selection) for spec in specs]


def _fail(err: Console, lines: Sequence[str], status: int = 2) -> int:
    for line in lines:
        err.print(line, markup=False, highlight=False, soft_wrap=True)
    return status


@dataclass(frozen=True)
class Terminal:
    """Where a command speaks: its result on ``out`` (the tables, or with ``output`` json or yaml the
    result as data), its notes (files written) and problems on ``err`` (notes on ``out`` with the
    tables), and whether progress bars may show."""

    out: Console
    err: Console
    progress: bool = True
    output: str | None = None

    def result(self, data: Any, view: Callable[[], None]) -> None:
        """``data`` as ``-o`` asks, else the human ``view``."""
        if self.output is None:
            view()
        else:
            print_data(data, self.output)

    def note(self, line: str) -> None:
        (self.err if self.output else self.out).print(line, highlight=False, soft_wrap=True)


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


def _seeds(text: str, problems: list[str]) -> list[int]:
    try:
        return parse_seeds(text)
    except ValueError as exc:
        problems.append(f"--seeds: {exc}")
        return []


def load_any_grid(path: Path) -> Grid | ScenarioGrid:
    """The trace grid or scenario grid in ``path``; ``GridError`` with every problem."""
    data = read_grid(path)
    return scenario_grid(path, data) if is_scenario_grid(data) else trace_grid(path, data)


def compare_command(
    nodes: Path | None,
    pods: Sequence[Path],
    policies: Sequence[str],
    seeds: str | None,
    out_dir: Path,
    jobs: int | None,
    fmt: str,
    term: Terminal,
    scenarios: Sequence[str] = (),
    grid_path: Path | None = None,
    selection: PodSelection | None = None,
) -> int:
    """Every run of a trace comparison (trace, policy, seed), of scenario variants (variant, seed)
    or of a grid file; ``out_dir/compare.json`` and ``out_dir/report.html``. ``selection``
    (``--select``, ``--namespace``) restricts a scenario run's pod figures."""
    err = term.err
    problems = _jobs_problem(jobs)
    given = {"--nodes": nodes is not None, "--pods": bool(pods), "--policy": bool(policies)}
    trace_options = [name for name, present in given.items() if present]
    if scenarios and grid_path is not None:
        problems.append("--grid: give scenarios either by --scenario or in a grid file, not both")
    if (scenarios or grid_path is not None) and trace_options:
        problems.append(
            f"{', '.join(trace_options)}: compare scenarios (--scenario, --grid) or a trace, not both"
        )
    if problems:
        return _fail(err, problems)
    if grid_path is not None:
        return _compare_grid(grid_path, seeds, out_dir, jobs, term, selection)
    if scenarios:
        seed_list = _seeds(seeds or SCENARIO_SEEDS, problems)
        if problems:
            return _fail(err, problems)
        variant_runs = selected(variant_specs(scenarios, seed_list), selection)
        return _compare_scenarios(variant_runs, None, out_dir, jobs, term)
    if selection is not None:
        problems.append(SELECT_TRACES)
    problems += [
        f"{name}: missing: a trace comparison needs --nodes, --pods and --policy "
        "(or compare scenarios with --scenario or --grid)"
        for name, present in given.items()
        if not present
    ]
    problems += [
        f"--policy: unknown policy {p!r} (known: {', '.join(POLICIES)})"
        for p in policies
        if p not in POLICIES
    ]
    if fmt not in FORMATS:
        problems.append(f"--format: unknown trace format {fmt!r} (known: {', '.join(sorted(FORMATS))})")
    seed_list = _seeds(seeds or TRACE_SEEDS, problems)
    if problems or nodes is None:
        return _fail(err, problems)
    specs = run_specs(nodes, list(dict.fromkeys(pods)), list(dict.fromkeys(policies)), seed_list, fmt)
    return _compare_traces(specs, out_dir, jobs, term)


def _compare_grid(
    grid_path: Path,
    seeds: str | None,
    out_dir: Path,
    jobs: int | None,
    term: Terminal,
    selection: PodSelection | None,
) -> int:
    """A grid file's runs (``--seeds`` replacing its seeds) as one comparison."""
    err = term.err
    problems: list[str] = []
    try:
        grid = load_any_grid(grid_path)
    except GridError as exc:
        problems += exc.problems
    seed_list = _seeds(seeds, problems) if seeds is not None else None
    if problems:
        return _fail(err, problems)
    if seed_list is not None:
        grid = replace(grid, seeds=tuple(seed_list))
    if isinstance(grid, ScenarioGrid):
        return _compare_scenarios(selected(grid.specs(), selection), grid_path, out_dir, jobs, term)
    if selection is not None:
        return _fail(term.err, [SELECT_TRACES])
    return _compare_traces(grid.specs(), out_dir, jobs, term)


def _compare_traces(specs: Sequence[RunSpec], out_dir: Path, jobs: int | None, term: Terminal) -> int:
    return _compare(
        term,
        _trace_problems(specs),
        len(specs),
        lambda bar: run_compare(specs, jobs or default_jobs(), bar),
        lambda document: write_compare(document, out_dir),
        lambda stats: _print_tables(term.out, stats),
    )


def _compare_scenarios(
    specs: Sequence[ScenarioSpec],
    grid_path: Path | None,
    out_dir: Path,
    jobs: int | None,
    term: Terminal,
) -> int:
    return _compare(
        term,
        check_variants(specs, grid_path),
        len(specs),
        lambda bar: run_scenario_compare(specs, jobs or default_jobs(), bar),
        lambda document: write_compare(document, out_dir, render_scenario_compare_html),
        lambda stats: term.out.print(variant_table(stats, SCENARIO_METRICS)),
    )


def _compare(
    term: Terminal,
    problems: list[str],
    count: int,
    run: Callable[[RunsBar], dict[str, Any]],
    write: Callable[[dict[str, Any]], tuple[Path, Path]],
    view: Callable[[Sequence[Mapping[str, Any]]], None],
) -> int:
    """The steps of every comparison: its input checked, its runs run under the bar, its files
    written, its statistics shown (or printed as ``-o`` asks)."""
    if problems:
        return _fail(term.err, problems)
    try:
        with RunsBar(term.err, "comparing", term.progress) as bar:
            document = run(bar)
    except RunsFailed as failed:
        return _runs_failed(term.err, failed, count)
    json_path, html_path = write(document)
    term.result(document["stats"], lambda: view(document["stats"]))
    term.note(f"{count} runs; wrote {json_path} and {html_path}")
    return 0


def _runs_failed(err: Console, failed: RunsFailed, total: int) -> int:
    """Each failed run on its own line, and 1."""
    return _fail(err, [*failed.lines(), f"{len(failed.failures)} of {total} runs failed; nothing written"], 1)


def sweep_command(
    grid_path: Path,
    out_dir: Path,
    jobs: int | None,
    ray_address: str | None,
    term: Terminal,
    selection: PodSelection | None = None,
) -> int:
    """The grid's runs that ``out_dir/results.jsonl`` lacks, a line each as they finish (a run with
    another ``selection`` is another run)."""
    err = term.err
    problems = _jobs_problem(jobs)
    grid: Grid | ScenarioGrid | None = None
    try:
        grid = load_any_grid(grid_path)
    except GridError as exc:
        problems += exc.problems
    if problems or grid is None:
        return _fail(err, problems)
    specs: Sequence[Run]
    if isinstance(grid, ScenarioGrid):
        specs = scenario_specs = selected(grid.specs(), selection)
        problems = check_variants(scenario_specs, grid_path)
    elif selection is not None:
        problems = [SELECT_TRACES]
    else:
        specs = trace_specs = grid.specs()
        problems = _trace_problems(trace_specs)
    if problems:
        return _fail(err, problems)
    with ExitStack() as on_ray:
        if ray_address:
            from gpufleet.experiments.ray_backend import MISSING, ray_available, session

            if not ray_available():
                return _fail(err, [MISSING])
            try:
                on_ray.enter_context(session(ray_address))
            except (ConnectionError, RuntimeError, ValueError) as exc:
                return _fail(err, [f"--ray: cannot use the Ray cluster at {ray_address!r}: {exc}"])
        with RunsBar(err, "sweeping", term.progress) as bar:
            outcome = run_sweep(specs, out_dir, jobs or default_jobs(), ray_address or None, bar)
    if isinstance(grid, ScenarioGrid):
        stats = group_stats(outcome.lines, SCENARIO_GROUP, SCENARIO_METRICS)
        stats = with_placements(stats, outcome.lines, SCENARIO_GROUP)
        term.result(stats, lambda: term.out.print(variant_table(stats, SCENARIO_METRICS)))
    else:
        stats = with_placements(group_stats(outcome.lines), outcome.lines)
        term.result(stats, lambda: _print_tables(term.out, stats))
    dropped = f", {outcome.dropped} incomplete lines dropped" if outcome.dropped else ""
    term.note(
        f"{outcome.ran} runs done, {outcome.skipped} already in {RESULTS}{dropped}; "
        f"results in {out_dir / RESULTS}"
    )
    if nodes := placements(outcome.lines):
        term.note(placements_note(nodes))
    if outcome.failed:
        again = f"{len(outcome.failed)} runs failed: no line in {RESULTS}, the next sweep does them again"
        return _fail(err, [*RunsFailed(outcome.failed).lines(), again], 1)
    return 0


def ray_address_from(option: str | None) -> str | None:
    """``--ray``, else ``RAY_ADDRESS``, else none (local processes)."""
    return option or os.environ.get("RAY_ADDRESS") or None
