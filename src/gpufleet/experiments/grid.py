"""A sweep's grid of trace replays: a small YAML file, checked field by field.

```yaml
nodes: openb_node_list_gpu_node.csv        # the node list (CSV)
traces: [openb_pod_list_default.csv, openb_pod_list_multigpu50.csv]   # pod lists (CSV)
policies: [FGD, BestFit]
seeds: 42-51                                # or a list: [42, 43]; or "1,5-7"
format: openb                               # optional (default openb)
```

Relative paths are read from the grid file's folder. The runs are every (trace, policy, seed): at most
``runs.MAX_RUNS``.
Every problem is one line, ``FILE: field: what is wrong``, raised together as ``GridError``. A grid
with ``scenario`` (or ``parameters``) is a grid of simulations instead (``scenario_grid``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpufleet.experiments.runs import MAX_RUNS, RunSpec, parse_seeds
from gpufleet.kube.documents import YamlValueError, yaml_value
from gpufleet.model.named_paths import not_a_file
from gpufleet.model.problem_lines import ProblemLines
from gpufleet.replay.fgd_protocol import POLICIES
from gpufleet.traces.formats import FORMATS

FIELDS = ("nodes", "traces", "policies", "seeds", "format")
REQUIRED = ("nodes", "traces", "policies", "seeds")


class GridError(ProblemLines):
    """A bad grid file: every problem, one line each."""


@dataclass(frozen=True)
class Grid:
    fmt: str
    nodes: str  # as written in the grid
    nodes_path: Path
    traces: tuple[tuple[str, Path], ...]  # (as written, where to read it)
    policies: tuple[str, ...]
    seeds: tuple[int, ...]

    def specs(self) -> list[RunSpec]:
        """Every (trace, policy, seed), in that order."""
        return [
            RunSpec(trace, self.nodes, policy, seed, path, self.nodes_path, self.fmt)
            for trace, path in self.traces
            for policy in self.policies
            for seed in self.seeds
        ]


class GridChecker:
    """Checks fields of a grid file, gathering one line per problem."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []

    def problem(self, field: str, message: str) -> None:
        self.problems.append(f"{self.path}: {field}: {message}")

    def runs(self, *counts: int) -> None:
        """The runs the grid combines (the product of ``counts``): at most ``MAX_RUNS``."""
        runs = math.prod(counts)
        if runs > MAX_RUNS:
            product = " x ".join(f"{count:,}" for count in counts)
            self.problem("runs", f"{runs:,} runs ({product}) exceed the limit of {MAX_RUNS:,} runs per grid")

    def file(self, field: str, value: Any) -> tuple[str, Path] | None:
        if not isinstance(value, str) or not value.strip():
            self.problem(field, f"{value!r} is not a file path")
            return None
        where = self.path.parent / value
        reason = not_a_file(where)
        if reason is not None:
            self.problem(field, f"{reason} {where}")
            return None
        return value, where.resolve()

    def names(self, field: str, what: str, value: Any, known: tuple[str, ...]) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            self.problem(field, f"a non-empty list of names expected (known: {', '.join(known)})")
            return ()
        for i, name in enumerate(value):
            if name not in known:
                self.problem(f"{field}[{i}]", f"unknown {what} {name!r} (known: {', '.join(known)})")
            elif name in value[:i]:
                self.problem(f"{field}[{i}]", f"{name!r} is listed twice")
        return tuple(str(name) for name in value)

    def seeds(self, value: Any) -> tuple[int, ...]:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, list) and value:
            bad = [v for v in value if not isinstance(v, int) or isinstance(v, bool) or v < 0]
            if not bad:
                return tuple(sorted(set(value)))
            self.problem("seeds", f"{bad[0]!r} is not a whole number at least 0")
            return ()
        if isinstance(value, str):
            try:
                return tuple(parse_seeds(value))
            except ValueError as exc:
                self.problem("seeds", str(exc))
                return ()
        self.problem("seeds", "a list of whole numbers or a range like 42-51 expected")
        return ()


def read_grid(path: Path) -> dict[str, Any]:
    """The grid file's mapping; ``GridError`` if it cannot be read or is not a mapping."""
    try:
        data = yaml_value(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GridError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError as exc:
        raise GridError([f"{path}: cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})"]) from None
    except YamlValueError as exc:
        where = f"{path}:{exc.line}" if exc.line is not None else str(path)
        raise GridError([f"{where}: not valid YAML: {exc}"]) from None
    if not isinstance(data, dict):
        raise GridError([f"{path}: a grid is a mapping with the fields {', '.join(FIELDS)}"])
    return data


def is_scenario_grid(data: dict[str, Any]) -> bool:
    return "scenario" in data or "parameters" in data


def load_grid(path: Path) -> Grid:
    """The trace grid in ``path``; ``GridError`` with every problem."""
    return trace_grid(path, read_grid(path))


def trace_grid(path: Path, data: dict[str, Any]) -> Grid:
    """The trace grid of a grid file's mapping; ``GridError`` with every problem."""
    check = GridChecker(path)
    for field in data:
        if field not in FIELDS:
            check.problem(str(field), f"unknown field (fields: {', '.join(FIELDS)})")
    for field in REQUIRED:
        if field not in data:
            check.problem(field, "missing")
    fmt = data.get("format", "openb")
    if fmt not in FORMATS:
        check.problem("format", f"unknown trace format {fmt!r} (known: {', '.join(sorted(FORMATS))})")
    nodes = check.file("nodes", data["nodes"]) if "nodes" in data else None
    traces: list[tuple[str, Path]] = []
    if "traces" in data:
        value = data["traces"]
        if isinstance(value, list) and value:
            for i, v in enumerate(value):
                if v in value[:i]:
                    check.problem(f"traces[{i}]", f"{v!r} is listed twice")
                elif (trace := check.file(f"traces[{i}]", v)) is not None:
                    traces.append(trace)
        else:
            check.problem("traces", "a non-empty list of pod list files expected")
    policies = check.names("policies", "policy", data["policies"], POLICIES) if "policies" in data else ()
    seeds = check.seeds(data["seeds"]) if "seeds" in data else ()
    check.runs(len(traces), len(policies), len(seeds))
    if check.problems or nodes is None:
        raise GridError(check.problems)
    return Grid(str(fmt), nodes[0], nodes[1], tuple(traces), policies, seeds)
