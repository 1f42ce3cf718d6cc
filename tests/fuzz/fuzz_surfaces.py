"""The input surfaces the fuzzers drive: bytes in, the reader's own error or a result out.

Each surface writes one input to a file, as a user would hand it over, and runs what the command
runs before it starts work (``simulate``: the scenario loader and the simulation it builds;
``explain``: the loader and the explanations; ``compare``/``sweep``: the trace and grid readers;
``whatif``: both sides of a snapshot and a change file; ``startup``: a dump measured; ``history``: the
answers of a Prometheus read into the scenario it writes, and ``--priority-classes``). The input passes
when it loads or when the reader refuses it with its own error (``ScenarioError``,
``TraceError``, ``GridError``, ``QuantityError``), every line of which names the file (and line or
document, and field) on one line. Anything else escaping is a defect: the CLI would print a
traceback. ``check`` raises ``Escaped`` for it, which the atheris driver (``run.py``) and the
pytest replays report.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from gpufleet.experiments.commands import load_any_grid
from gpufleet.experiments.grid import GridError
from gpufleet.experiments.history_command import gang_stretch, read_priority_classes
from gpufleet.experiments.startup_command import StartupOptions, startup_command
from gpufleet.experiments.whatif import load_sides
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.kube.explain import explain_scenario
from gpufleet.kube.pod_annotations import _PARSERS
from gpufleet.live.history import build_scenario
from gpufleet.live.history_read import read_history
from gpufleet.live.prometheus_api import PrometheusAPI, PrometheusError
from gpufleet.model.problem_lines import ProblemLines
from gpufleet.model.quantity import (
    QuantityError,
    parse_bandwidth,
    parse_duration,
    parse_quantity,
    parse_window,
)
from gpufleet.scheduling.profile import ProfileError
from gpufleet.sim.simulation import Simulation
from gpufleet.traces.base import TraceError
from gpufleet.traces.openb import read_nodes, read_pods

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
#: the snapshot a fuzzed ``whatif`` change file applies to
WHATIF_SNAPSHOT = ROOT / "examples" / "whatif" / "last-week"


class Escaped(AssertionError):
    """An input made a reader fail with something other than its own one-line error."""


@dataclass(frozen=True)
class Surface:
    name: str
    suffix: str  # of the file the input is written to
    read: Callable[[Path], object]  # raises one of ``refusals`` for bad input
    refusals: tuple[type[Exception], ...]
    seeds: tuple[str, ...] = ()  # globs below the repository root: starting inputs for the fuzzer
    #: other files its problems may name (the snapshot a change file's ``set`` edits)
    also_named: tuple[str, ...] = ()
    #: its refusal's message is printed as it is (not quoted in a reader's line): one line itself
    printed: bool = False


def _simulate(path: Path) -> object:
    return Simulation(load_scenario([path]))


def _explain(path: Path) -> object:
    return explain_scenario(load_scenario([path]))


#: The annotations a pod may carry, in a fixed order: an input's first byte picks one.
ANNOTATIONS = sorted(_PARSERS)
_QUANTITY_PARSERS: tuple[Callable[[str], object], ...] = (
    parse_quantity,
    parse_duration,
    parse_bandwidth,
    parse_window,
)


def _annotation(path: Path) -> object:
    """An annotation's value as ``pod_annotations.read`` parses it: ``ValueError`` is its refusal."""
    data = path.read_bytes()
    key = ANNOTATIONS[data[0] % len(ANNOTATIONS)] if data else ANNOTATIONS[0]
    return _PARSERS[key](data[1:].decode("utf-8", "replace"))


def _quantity(path: Path) -> object:
    data = path.read_bytes()
    parse = _QUANTITY_PARSERS[data[0] % len(_QUANTITY_PARSERS)] if data else parse_quantity
    return parse(data[1:].decode("utf-8", "replace"))


def _whatif(path: Path) -> object:
    return [Simulation(side) for side in load_sides([WHATIF_SNAPSHOT], [path], None)]


class Refused(ProblemLines):
    """A command's exit status 2, with the lines it printed: its refusal."""


def _startup(path: Path) -> object:
    """``gpufleet startup DUMP --calibrate`` on the file: measured, summarised, reported, calibrated."""
    err = io.StringIO()
    wide: dict[str, Any] = {"width": 100_000, "color_system": None}
    with tempfile.TemporaryDirectory(prefix="gpufleet-fuzz-") as out:
        options = StartupOptions([path], Path(out), calibrate=True)
        status = startup_command(options, Console(file=io.StringIO(), **wide), Console(file=err, **wide))
    if status != 0:
        raise Refused(err.getvalue().splitlines())
    return status


@dataclass(frozen=True)
class _Answers(PrometheusAPI):
    """A Prometheus whose answers are a file's: a JSON object of answers by series (``SERIES`` for the
    instant queries of a series, ``seen:SERIES`` for its range query; an empty result when absent), or
    anything else, which then answers every query."""

    raw: bytes = b""
    answers: dict[str, object] | None = None

    @classmethod
    def of(cls, raw: bytes) -> _Answers:
        try:
            answers = json.loads(raw)
        except ValueError:
            answers = None
        return cls("http://prometheus.fuzz", raw=raw, answers=answers if isinstance(answers, dict) else None)

    def _post(self, path: str, form: dict[str, str]) -> dict[str, Any]:
        answers = self.answers
        if answers is None:
            return self._decode(path, self.raw)
        query = form["query"]
        series = query.removeprefix("last_over_time(").partition("{")[0].partition("[")[0]
        ranged = path.endswith("query_range")
        key = f"seen:{series}" if ranged else series
        empty = {"resultType": "matrix" if ranged else "vector", "result": []}
        answer = answers.get(key, {"status": "success", "data": empty})
        return self._decode(path, json.dumps(answer).encode())


#: the window a fuzzed Prometheus is read over (one chunk of ``history_read``)
HISTORY_WINDOW = (1_000_000.0, 1_003_600.0)


def _history(path: Path) -> object:
    """``gpufleet history`` on a Prometheus answering from the file: the window read, the scenario
    built and written as its files, and these loaded as ``simulate`` loads them. A value no
    kube-state-metrics exports (a toleration effect the API server refuses) is written as read, and
    ``simulate`` then refuses it in its own words: that is no finding; an exception is."""
    import yaml

    history = read_history(_Answers.of(path.read_bytes()), *HISTORY_WINDOW)
    scenario = build_scenario(history, gang_stretch)
    with tempfile.TemporaryDirectory(prefix="gpufleet-fuzz-") as out:
        for name, documents in scenario.files.items():
            (Path(out) / name).write_text(yaml.safe_dump_all(documents, sort_keys=False))
        try:
            return load_scenario([out])
        except ScenarioError as exc:
            return exc.problems


SURFACES = {
    s.name: s
    for s in (
        Surface(
            "scenario",
            ".yaml",
            _simulate,
            (ScenarioError, ProfileError),
            ("examples/**/*.yaml", "tests/fuzz/corpus/scenario/*"),
        ),
        Surface(
            "explain",
            ".json",
            _explain,
            (ScenarioError, ProfileError),
            ("tests/fuzz/corpus/explain/*",),
        ),
        Surface(
            "scheduler-config",
            ".yaml",
            _simulate,
            (ScenarioError, ProfileError),
            (
                "examples/seed-004/*.yaml",
                "examples/gpu-sharing/fgd-scheduler.yaml",
                "tests/fuzz/corpus/scheduler-config/*",
            ),
        ),
        Surface("trace-nodes", ".csv", read_nodes, (TraceError,), ("tests/fuzz/corpus/trace-nodes/*",)),
        Surface("trace-pods", ".csv", read_pods, (TraceError,), ("tests/fuzz/corpus/trace-pods/*",)),
        Surface(
            "grid",
            ".yaml",
            load_any_grid,
            (GridError,),
            ("examples/experiments/grid.yaml", "tests/fuzz/corpus/grid/*"),
        ),
        # A pod annotation's parser reports ValueError's message as the field's problem (``read``).
        Surface("annotation", ".txt", _annotation, (ValueError,), ("tests/fuzz/corpus/annotation/*",)),
        Surface("quantity", ".txt", _quantity, (QuantityError,), ("tests/fuzz/corpus/quantity/*",)),
        Surface(
            "whatif",
            ".yaml",
            _whatif,
            (ScenarioError, ProfileError),
            ("examples/whatif/*.yaml", "tests/fuzz/corpus/whatif/*"),
            (str(WHATIF_SNAPSHOT),),
        ),
        Surface(
            "startup",
            ".json",
            _startup,
            (Refused,),
            ("examples/startup/*.json", "tests/fuzz/corpus/startup/*"),
        ),
        # Prometheus' refusals name its URL, not a file: ``check`` asks them to be one line.
        Surface(
            "history", ".json", _history, (PrometheusError,), ("tests/fuzz/corpus/history/*",), printed=True
        ),
        # ``--priority-classes FILE: ...``: the option first, then the file.
        Surface(
            "priority-classes",
            ".yaml",
            read_priority_classes,
            (ValueError,),
            ("tests/fuzz/corpus/priority-classes/*",),
            printed=True,
        ),
    )
}


def check(surface: Surface, path: Path) -> None:
    """Run ``surface`` on the file ``path``; ``Escaped`` unless it loads or is refused in one-line form.

    A reader's lines (``ProblemLines``) each name the file first (or a file in ``also_named``); a
    parser's message (an annotation's, a quantity's) becomes part of such a line (which escapes its line
    breaks), and a refusal printed as it is (``printed``: Prometheus', naming its URL) is one line.
    """
    try:
        surface.read(path)
    except surface.refusals as exc:
        if not isinstance(exc, ProblemLines):  # a message quoted in a reader's line, or printed as it is
            if surface.printed and len(str(exc).splitlines()) != 1:
                raise Escaped(f"{surface.name}: not one line: {str(exc)!r}") from exc
            return
        for line in exc.problems:
            if len(line.splitlines()) != 1 or not line.startswith((str(path), *surface.also_named)):
                raise Escaped(f"{surface.name}: not one line naming the file: {line!r}") from exc
    except Exception as exc:  # RecursionError, MemoryError and the like included
        raise Escaped(f"{surface.name}: {type(exc).__name__}: {exc}") from exc


def check_bytes(surface: Surface, data: bytes, folder: Path | None = None) -> None:
    """``check`` on ``data`` written to a file of the surface's suffix (in ``folder``, else a fresh one)."""
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="gpufleet-fuzz-") as tmp:
            check_bytes(surface, data, Path(tmp))
        return
    path = folder / f"input{surface.suffix}"
    path.write_bytes(data)
    check(surface, path)
