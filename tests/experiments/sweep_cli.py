"""`gpufleet sweep` from the tests: run it on a grid file, read its results.jsonl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from gpufleet.cli import app


def sweep(grid: Path, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(app, ["sweep", "--grid", str(grid), "--out", str(out), "--jobs", "1", *extra])


def lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(t) for t in (out / "results.jsonl").read_text().splitlines()]


def no_runs(_: object) -> dict[str, Any]:
    raise AssertionError("a finished run was done again")
