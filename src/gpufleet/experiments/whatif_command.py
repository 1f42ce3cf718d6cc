"""The ``gpufleet whatif`` command behind the CLI's options.

Checks the input first (``--for``; the snapshot and the change files as the loader reads them, and
what each ``Change`` names), exiting 2 with one line per problem; then simulates both sides, writes
``DIR/whatif.json``, ``DIR/report.html`` and each side's ``summary.json`` and ``report.html`` under
``DIR/baseline/`` and ``DIR/changed/``, and prints the figures and the pods side by side.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from gpufleet.experiments.commands import _fail
from gpufleet.experiments.whatif import SIDES, Side, load_sides, simulate, whatif_document
from gpufleet.experiments.whatif_html import render_whatif_html
from gpufleet.experiments.whatif_view import figure_rows, for_how_long, pod_rows
from gpufleet.kube import ScenarioError
from gpufleet.model.quantity import QuantityError, parse_duration
from gpufleet.report import render_html
from gpufleet.scheduling.profile import ProfileError

#: Pods the terminal table lists (whatif.json and report.html have them all).
SHOWN_PODS = 20
#: The scheduler's message is cut to this many characters in the terminal.
MESSAGE_CHARS = 90


def whatif_command(
    snapshot: Sequence[Path],
    changes: Sequence[Path],
    duration: str | None,
    seed: int | None,
    out_dir: Path,
    out: Console,
    err: Console,
) -> int:
    problems = []
    if duration is not None:
        try:
            if parse_duration(duration) <= 0:
                problems.append(f"--for: {duration}: must be above 0")
        except QuantityError as exc:
            problems.append(f"--for: {exc}")
    if problems:
        return _fail(err, problems)
    try:
        scenarios = load_sides(snapshot, changes, duration)
    except ScenarioError as exc:
        return _fail(err, exc.problems)
    chosen_seed = scenarios[0].simulation.seed if seed is None else seed
    sides: dict[str, Side] = {}
    for name, scenario in zip(SIDES, scenarios, strict=True):
        try:
            sides[name] = Side(scenario, simulate(scenario, chosen_seed))
        except ProfileError as exc:
            return _fail(err, [f"{name}: KubeSchedulerConfiguration: {exc}"])
    document = whatif_document(snapshot, changes, chosen_seed, sides)
    for name, side in sides.items():
        (out_dir / name).mkdir(parents=True, exist_ok=True)
        (out_dir / name / "summary.json").write_text(
            json.dumps(side.summary, indent=1, sort_keys=True) + "\n"
        )
        (out_dir / name / "report.html").write_text(render_html(side.summary))
    (out_dir / "whatif.json").write_text(json.dumps(document, indent=1) + "\n")
    (out_dir / "report.html").write_text(render_whatif_html(document))
    print_whatif(document, out)
    out.print(f"wrote {out_dir / 'whatif.json'} and {out_dir / 'report.html'}", highlight=False)
    return 0


def print_whatif(document: dict[str, Any], out: Console) -> None:
    """The figures, then the pods, side by side."""
    figures = Table(
        title=f"whatif: {for_how_long(document['duration_s'])} from the snapshot, seed {document['seed']}"
    )
    for column in ("", "baseline", "changed"):
        figures.add_column(column)
    for label, baseline, changed in figure_rows(document):
        figures.add_row(label, baseline, changed)
    out.print(figures)
    rows = pod_rows(document["pods"], MESSAGE_CHARS)
    if not rows:
        out.print("the snapshot has no pending pods", highlight=False)
        return
    pods = Table(title="the snapshot's pending pods")
    for column in ("pod", "GPUs", "baseline", "changed"):
        pods.add_column(column, overflow="fold")
    for pod, gpus, baseline, changed in rows[:SHOWN_PODS]:
        pods.add_row(pod, gpus, baseline, changed)
    out.print(pods)
    if len(rows) > SHOWN_PODS:
        out.print(f"… and {len(rows) - SHOWN_PODS} more pods (whatif.json has them all)", highlight=False)
