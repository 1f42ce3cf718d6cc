"""A sweep's grid of simulations: a scenario, parameters to vary, seeds.

```yaml
scenario: ../seed-003/hpa-cold-nodes.yaml       # a file or directory, or a list of them (one scenario)
parameters:                                     # optional: each a list of values, or one value
  NodePool/l4.spec.warm: [0, 1, 2]
  Simulation.spec.autoscaler.scaleDownUnneededTime: [5m, 10m]
seeds: [1, 2, 3]                                # or a range like 1-5
```

Parameters use ``overrides``' syntax (``KIND[/NAME].field.path``). Relative paths are read from the
grid file's folder. The runs are every combination of the parameters' values (in the file's order,
the last varying fastest), each with every seed: at most ``runs.MAX_RUNS``. Every problem is one
line, ``FILE: field: what is wrong``, raised together as ``GridError``; whether a parameter names a
field of the scenario is checked when the variants are loaded (``scenario_runs.check_variants``).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpufleet.experiments.grid import GridChecker, GridError
from gpufleet.experiments.scenario_runs import ScenarioSpec
from gpufleet.model.named_paths import stat_or_problem

FIELDS = ("scenario", "parameters", "seeds")


@dataclass(frozen=True)
class ScenarioGrid:
    scenario: str  # as written (several paths joined by ", ")
    paths: tuple[Path, ...]
    parameters: tuple[tuple[str, tuple[str, ...]], ...]  # (parameter, values as JSON)
    seeds: tuple[int, ...]

    def specs(self) -> list[ScenarioSpec]:
        """Every combination of the parameters' values, each with every seed, in that order."""
        names = [parameter for parameter, _ in self.parameters]
        labels = short_names(names)
        out = []
        for values in itertools.product(*(values for _, values in self.parameters)):
            overrides = tuple(zip(names, values, strict=True))
            variant = ", ".join(f"{labels[n]}={_shown(v)}" for n, v in overrides) or self.scenario
            out += [ScenarioSpec(self.scenario, self.paths, overrides, seed, variant) for seed in self.seeds]
        return out


def short_names(parameters: list[str]) -> dict[str, str]:
    """The last field of each parameter (``NodePool/l4.spec.warm``: ``warm``), or the whole
    parameter where that is not a plain name or two parameters share it."""
    last = [p.rsplit(".", 1)[-1] for p in parameters]
    plain = [name.isidentifier() and last.count(name) == 1 for name in last]
    return {p: (name if ok else p) for p, name, ok in zip(parameters, last, plain, strict=True)}


def _shown(value: str) -> str:
    plain = json.loads(value)
    return plain if isinstance(plain, str) else value


def _json(value: Any) -> str | None:
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return None


def scenario_grid(path: Path, data: dict[str, Any]) -> ScenarioGrid:
    """The scenario grid of a grid file's mapping; ``GridError`` with every problem."""
    check = GridChecker(path)
    for field in data:
        if field not in FIELDS:
            check.problem(str(field), f"unknown field (fields of a scenario grid: {', '.join(FIELDS)})")
    for field in ("scenario", "seeds"):
        if field not in data:
            check.problem(field, "missing")
    written = data.get("scenario")
    given = written if isinstance(written, list) else [written]
    paths: list[Path] = []
    if "scenario" in data and (not given or not all(isinstance(p, str) and p.strip() for p in given)):
        check.problem("scenario", "a file or directory, or a non-empty list of them, expected")
    elif "scenario" in data:
        for i, name in enumerate(given):
            where = path.parent / name
            found = stat_or_problem(where)
            if isinstance(found, str):
                field = f"scenario[{i}]" if isinstance(written, list) else "scenario"
                check.problem(field, f"{found} {where}")
            else:
                paths.append(where.resolve())
    parameters: list[tuple[str, tuple[str, ...]]] = []
    raw = data.get("parameters") or {}
    if not isinstance(raw, dict):
        check.problem("parameters", "a mapping of KIND/NAME.field.path to a list of values expected")
        raw = {}
    for parameter, values in raw.items():
        field = f"parameters: {parameter}"
        listed = values if isinstance(values, list) else [values]
        encoded = [_json(v) for v in listed]
        if not listed:
            check.problem(field, "no values")
        elif None in encoded:
            check.problem(field, f"{listed[encoded.index(None)]!r} is not a plain value")
        elif len(set(encoded)) < len(encoded):
            twice = next(v for i, v in enumerate(listed) if encoded[i] in encoded[:i])
            check.problem(field, f"{twice!r} is listed twice")
        else:
            parameters.append((str(parameter), tuple(e for e in encoded if e is not None)))
    seeds = check.seeds(data["seeds"]) if "seeds" in data else ()
    check.runs(*(len(values) for _, values in parameters), max(1, len(seeds)))
    if check.problems:
        raise GridError(check.problems)
    label = ", ".join(str(p) for p in given) if isinstance(written, list) else str(written)
    return ScenarioGrid(label, tuple(paths), tuple(parameters), seeds)
