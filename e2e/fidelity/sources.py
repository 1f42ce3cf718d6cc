"""Where fidelity cases come from: seed 004's worked examples, every example in ``examples/`` (alone,
and as the README combines them), the scheduling fixtures of the test suite
(``tests/fidelity/fixture_cases.py`` builds them with the suite's own builders) and generated ones."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from e2e.fidelity import generate
from e2e.fidelity.case import Case
from e2e.fidelity.fixtures import fixture_cases

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: seed 004's table (default profile, MostAllocated) and its deadlock under the default profile
SEED_004 = (
    "seed-004/default-scheduler.yaml",
    "seed-004/most-allocated.yaml",
    "seed-004/deadlock-default-scheduler.yaml",
)
#: examples that are run together (the README's commands), beside each file alone
COMBINED = (
    ("seed-001/t4-pool.yaml", "seed-001/scaled-object.yaml"),
    ("seed-001/t4-pool.yaml", "seed-001/scaled-job.yaml"),
    ("gpu-sharing/fragmentation.yaml", "gpu-sharing/fgd-scheduler.yaml"),
    ("seed-004-backfill/work.yaml", "seed-004-backfill/coscheduling.yaml"),
    ("seed-004-backfill/work.yaml", "seed-004-backfill/backfill.yaml"),
)
#: example files that are not scenarios though they hold Kubernetes objects: a cluster dump for
#: `gpufleet explain` (grid files, which hold no objects, are told apart by `_holds_objects`)
NOT_SCENARIOS = ("explain/cluster-dump.yaml",)
#: example directories that are not scenarios file by file: `gpufleet whatif`'s change files and its
#: history-shaped scenario, whose pods name Jobs it does not hold (as `gpufleet history` writes them;
#: the real garbage collector deletes such pods at once)
NOT_SCENARIO_DIRS = ("whatif/",)
DEFAULT_GENERATED = 320


def read(paths: Iterable[Path]) -> tuple[dict[str, Any], ...]:
    docs: list[dict[str, Any]] = []
    for path in paths:
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return tuple(docs)


def _example(relative: tuple[str, ...], origin: str) -> Case:
    note = ""
    first = (EXAMPLES / relative[0]).read_text().splitlines()
    note = " ".join(line.lstrip("# ").strip() for line in first[:2] if line.startswith("#"))
    return Case(
        " + ".join(f"examples/{r}" for r in relative), origin, read(EXAMPLES / r for r in relative), note
    )


def seed_004_cases() -> list[Case]:
    return [_example((r,), "seed-004") for r in SEED_004]


def _holds_objects(path: Path) -> bool:
    """Every document of ``path`` is a Kubernetes object (has a ``kind``): not a sweep's grid file."""
    return all(isinstance(d, dict) and "kind" in d for d in yaml.safe_load_all(path.read_text()) if d)


def example_cases() -> list[Case]:
    files = sorted(
        str(p.relative_to(EXAMPLES))
        for p in EXAMPLES.rglob("*.yaml")
        if str(p.relative_to(EXAMPLES)) not in NOT_SCENARIOS
        and not str(p.relative_to(EXAMPLES)).startswith(NOT_SCENARIO_DIRS)
        and _holds_objects(p)
    )
    singles = [(f,) for f in files if f not in SEED_004]
    return [_example(r, "example") for r in [*singles, *COMBINED]]


def generated_cases(count: int = DEFAULT_GENERATED, first_seed: int = 1) -> list[Case]:
    return generate.cases(count, first_seed)


def all_cases(generated: int = DEFAULT_GENERATED, first_seed: int = 1) -> list[Case]:
    """Every kube-scheduler case: seed 004's, the examples', the test fixtures' and the generated ones."""
    return [*seed_004_cases(), *example_cases(), *fixture_cases(), *generated_cases(generated, first_seed)]
