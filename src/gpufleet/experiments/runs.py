"""Runs as units of work, and running many of them in parallel; the FGD-protocol replay's run.

A run (the ``Run`` protocol) is named by its parameters, does its work in whichever process gets
it, and says what one line of a sweep's ``results.jsonl`` holds. ``RunSpec`` is one FGD-protocol
replay (node list, pod list, policy, seed): ``run_replay`` returns ``replay.json``'s content;
``experiments.scenario_runs.ScenarioSpec`` is one simulation of a scenario variant. Trace files are
read once per process (``load_trace`` caches them): the parent reads them first, to report bad rows
before anything starts, and workers forked from it inherit what it read (frozen: their garbage
collector never walks it). ``execute`` yields each run as it finishes: in this process for one job,
else in a pool of worker processes (which ignore Ctrl-C: the parent stops them), or on a Ray cluster.
A run that raises does not stop the others: it ends ``Failed`` with its exception as one line, and
``execute_reported`` tells a ``RunsProgress`` (the CLI's bar) of every run as it ends and collects
the failures.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import multiprocessing.pool
import os
import re
import signal
import traceback
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

from gpufleet.collector import freeze_after_pauses
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.replay.fgd_protocol import replay
from gpufleet.traces.base import TraceError
from gpufleet.traces.formats import FORMATS

SEEDS_PATTERN = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


class Run(Protocol):
    """A unit of work: picklable, hashable, named by its parameters."""

    def params(self) -> dict[str, Any]:
        """What identifies the run (JSON values); a sweep skips runs whose parameters have a line."""
        ...

    def run(self) -> dict[str, Any]:
        """Do the work (in any process) and return its result."""
        ...

    def line(self, result: dict[str, Any]) -> dict[str, Any]:
        """The parameters and figures of the result: one line of a sweep's ``results.jsonl``."""
        ...

    def label(self) -> str:
        """The run in a few words, for progress lines (``FGD seed 42 (shares.csv)``)."""
        ...


class RunsProgress(Protocol):
    """Who hears how runs go: how many there are to do, then each as it finishes or fails."""

    def started(self, total: int) -> None: ...

    def finished(self, label: str, seconds: float | None) -> None: ...

    def failed(self, label: str, error: str) -> None: ...


@dataclass(frozen=True)
class Failed:
    """A run that raised: its exception in one line, with the place it was raised."""

    error: str


class RunsFailed(Exception):
    """Raised once every run has ended, when some failed: their labels and errors."""

    def __init__(self, failures: Sequence[tuple[str, str]]) -> None:
        super().__init__(f"{len(failures)} runs failed")
        self.failures = list(failures)

    def lines(self) -> list[str]:
        return [f"run failed: {label}: {error}" for label, error in self.failures]


def attempt(run: Run) -> dict[str, Any] | Failed:
    """The run's result, or ``Failed`` when it raised (in whichever process it ran)."""
    try:
        return run.run()
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
        return Failed(f"{type(exc).__name__}: {exc}{where}")


R = TypeVar("R", bound=Run)

#: The key of a result (and of its sweep line) saying where a run on a Ray cluster ran
#: (``ray_backend.placement``); runs in local processes have none.
RAN_ON = "ran_on"


def params_key(params: Mapping[str, Any]) -> str:
    """Parameters as one comparable value (JSON with sorted keys)."""
    return json.dumps(params, sort_keys=True)


@dataclass(frozen=True)
class RunSpec:
    """One replay: ``trace`` and ``nodes`` are the paths as the user wrote them (they identify the
    run), ``pods_path`` and ``nodes_path`` where to read them from."""

    trace: str
    nodes: str
    policy: str
    seed: int
    pods_path: Path
    nodes_path: Path
    fmt: str = "openb"

    @property
    def key(self) -> tuple[str, str, str, int]:
        return self.trace, self.nodes, self.policy, self.seed

    def params(self) -> dict[str, Any]:
        return {"trace": self.trace, "nodes": self.nodes, "policy": self.policy, "seed": self.seed}

    def run(self) -> dict[str, Any]:
        return run_replay(self)

    def line(self, result: dict[str, Any]) -> dict[str, Any]:
        return summary_line(self, result)

    def label(self) -> str:
        return f"{self.policy} seed {self.seed} ({Path(self.trace).name})"


#: Seeds one comparison or sweep takes: each is a run, and a range is expanded before anything runs.
MAX_SEEDS = 10_000
#: Runs one grid may make (traces x policies x seeds, or the parameters' values x seeds): each is
#: listed before anything runs.
MAX_RUNS = 100_000


def parse_seeds(text: str) -> list[int]:
    """``42-51``, ``1,2,7`` or both (``1,5-7``) as a sorted list without repeats (at most ``MAX_SEEDS``)."""
    seeds: set[int] = set()
    for part in text.split(","):
        match = SEEDS_PATTERN.match(part)
        if match is None:
            raise ValueError(f"{text!r}: seeds are numbers and ranges like 42-51, separated by commas")
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) else low
        if high < low:
            raise ValueError(f"{part.strip()!r}: a range goes from low to high")
        if high - low + 1 + len(seeds) > MAX_SEEDS:
            raise ValueError(f"{text!r}: at most {MAX_SEEDS:,} seeds")
        seeds.update(range(low, high + 1))
    return sorted(seeds)


@cache
def _nodes(fmt: str, path: Path) -> list[Node]:
    return FORMATS[fmt].read_nodes(path)


@cache
def _pods(fmt: str, path: Path) -> list[Pod]:
    return [p.pod for p in FORMATS[fmt].read_pods(path)]


def load_trace(fmt: str, nodes: Path, pods: Path) -> tuple[list[Node], list[Pod]]:
    """The node and pod lists, each file read once per process; ``TraceError`` with both files'
    problems."""
    problems: list[str] = []
    read: list[Any] = []
    for reader, path in ((_nodes, nodes), (_pods, pods)):
        try:
            read.append(reader(fmt, path))
        except TraceError as exc:
            problems += exc.problems
    if problems:
        raise TraceError(problems)
    return read[0], read[1]


def check_traces(specs: Iterable[RunSpec]) -> None:
    """Read every trace file the runs need (so workers find them read); ``TraceError`` with all
    problems, each file's once."""
    problems: list[str] = []
    for fmt, nodes, pods in sorted({(s.fmt, s.nodes_path, s.pods_path) for s in specs}):
        try:
            load_trace(fmt, nodes, pods)
        except TraceError as exc:
            problems += [p for p in exc.problems if p not in problems]
    if problems:
        raise TraceError(problems)


def run_replay(spec: RunSpec) -> dict[str, Any]:
    """``replay.json``'s content for one run (the typical pods and workload kept for the trace's next runs
    in this process)."""
    nodes, pods = load_trace(spec.fmt, spec.nodes_path, spec.pods_path)
    return replay(nodes, pods, spec.policy, spec.seed, keep=True).to_json()


def summary_line(spec: RunSpec, result: dict[str, Any]) -> dict[str, Any]:
    """A run's parameters and figures, flat: one line of a sweep's ``results.jsonl``."""
    figures = {
        "pods_total": result["pods_total"],
        "pods_failed": result["pods_failed"],
        "unallocated_gpu_pct_at_100": result["unallocated_gpu_pct_at_100"],
        "frag_ratio_pct_at_100": result["frag_ratio_pct"][100],
    }
    return {**spec.params(), **figures, "wall_seconds": result["wall_seconds"]}


def default_jobs() -> int:
    return os.cpu_count() or 1


def execute(
    specs: Sequence[R], jobs: int, ray_address: str | None = None
) -> Iterator[tuple[R, dict[str, Any] | Failed]]:
    """Each run's spec and result (or failure), in the order they finish."""
    if ray_address is not None:
        from gpufleet.experiments.ray_backend import execute_on_ray

        yield from execute_on_ray(specs, ray_address)
    elif jobs <= 1 or len(specs) <= 1:
        for spec in specs:
            yield spec, attempt(spec)
    else:
        yield from _execute_in_pool(specs, min(jobs, len(specs)))


def execute_reported(
    specs: Sequence[R],
    jobs: int,
    progress: RunsProgress | None,
    failures: list[tuple[str, str]],
    ray_address: str | None = None,
) -> Iterator[tuple[R, dict[str, Any]]]:
    """The runs that succeed, as they finish; ``progress`` hears of every run, ``failures`` gets the
    label and error of each run that failed."""
    if progress is not None:
        progress.started(len(specs))
    for spec, outcome in execute(specs, jobs, ray_address):
        if isinstance(outcome, Failed):
            failures.append((spec.label(), outcome.error))
            if progress is not None:
                progress.failed(spec.label(), outcome.error)
            continue
        if progress is not None:
            progress.finished(spec.label(), outcome.get("wall_seconds"))
        yield spec, outcome


def _worker_started() -> None:
    """A pool worker ignores Ctrl-C (the parent stops it) and freezes what its runs keep for the next
    (``freeze_after_pauses``: a replay's memos for its trace's next runs)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    freeze_after_pauses()


def _run(spec: R) -> tuple[R, dict[str, Any] | Failed]:
    return spec, attempt(spec)


def _fork_pool(jobs: int) -> multiprocessing.pool.Pool:
    """A pool of ``jobs`` workers forked with what this process holds (the traces it read) frozen
    (``gc.freeze``): their garbage collections never walk those objects, which would cost a full
    pass over every trace's pods in each worker and write to (so copy) every page they are on."""
    gc.freeze()
    try:
        return multiprocessing.Pool(jobs, initializer=_worker_started)
    finally:
        gc.unfreeze()


def _execute_in_pool(specs: Sequence[R], jobs: int) -> Iterator[tuple[R, dict[str, Any] | Failed]]:
    """A pool of worker processes; Ctrl-C (which only the parent heeds) stops them at once, losing
    only the runs in flight."""
    pool = _fork_pool(jobs)
    try:
        yield from pool.imap_unordered(_run, specs)
        pool.close()
    finally:
        pool.terminate()
        pool.join()
