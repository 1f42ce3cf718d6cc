"""The input surfaces the fuzzers drive: bytes in, the reader's own error or a result out.

Each surface writes one input to a file, as a user would hand it over, and runs what the command
runs before it starts work (``simulate``: the scenario loader and the simulation it builds;
``explain``: the loader and the explanations; ``compare``/``sweep``: the trace and grid readers). The
input passes when it loads or when the reader refuses it with its own error (``ScenarioError``,
``TraceError``, ``GridError``, ``QuantityError``), every line of which names the file (and line or
document, and field) on one line. Anything else escaping is a defect: the CLI would print a
traceback. ``check`` raises ``Escaped`` for it, which the atheris driver (``run.py``) and the
pytest replays report.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpufleet.experiments.commands import load_any_grid
from gpufleet.experiments.grid import GridError
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.kube.explain import explain_scenario
from gpufleet.kube.pod_annotations import _PARSERS
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


class Escaped(AssertionError):
    """An input made a reader fail with something other than its own one-line error."""


@dataclass(frozen=True)
class Surface:
    name: str
    suffix: str  # of the file the input is written to
    read: Callable[[Path], object]  # raises one of ``refusals`` for bad input
    refusals: tuple[type[Exception], ...]
    seeds: tuple[str, ...] = ()  # globs below the repository root: starting inputs for the fuzzer


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
    )
}


def check(surface: Surface, path: Path) -> None:
    """Run ``surface`` on the file ``path``; ``Escaped`` unless it loads or is refused in one-line form.

    A reader's lines (``ProblemLines``) each name the file first; a parser's message (an annotation's,
    a quantity's) becomes part of such a line.
    """
    try:
        surface.read(path)
    except surface.refusals as exc:
        for line in exc.problems if isinstance(exc, ProblemLines) else ():
            if len(line.splitlines()) != 1 or not line.startswith(str(path)):
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
