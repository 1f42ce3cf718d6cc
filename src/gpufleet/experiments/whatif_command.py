"""The ``gpufleet whatif`` command behind the CLI's options.

Checks the input first (``--for``; the snapshot and the change files as the loader reads them, and
what each ``Change`` names), exiting 2 with one line per problem; then simulates both sides, writes
``DIR/whatif.json``, ``DIR/report.html`` and each side's ``summary.json`` and ``report.html`` under
``DIR/baseline/`` and ``DIR/changed/``, and prints the figures and the pods side by side (``-o wide``:
every pod and whole messages; ``-o json|yaml``: the document; ``-n``: one namespace's pods shown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from gpufleet.collector import collector_spaced
from gpufleet.experiments.commands import _fail
from gpufleet.experiments.whatif import SIDES, Side, load_sides, simulate, whatif_document
from gpufleet.experiments.whatif_html import render_whatif_html
from gpufleet.experiments.whatif_view import figure_rows, for_how_long, pod_rows
from gpufleet.kube import ScenarioError
from gpufleet.model.named_paths import made_directory
from gpufleet.model.quantity import QuantityError, parse_duration
from gpufleet.report import render_html
from gpufleet.report.json_text import json_file_text
from gpufleet.report.output import WIDE, print_data, print_wide
from gpufleet.scheduling.profile import ProfileError

#: Pods the terminal table lists (whatif.json and report.html have them all).
SHOWN_PODS = 20
#: The scheduler's message is cut to this many characters in the terminal.
MESSAGE_CHARS = 90


@dataclass(frozen=True)
class WhatifView:
    """What the command prints: ``output`` (None: the tables; ``wide``, ``json``, ``yaml``) and the
    namespace whose pods it shows (None: all); the files written hold everything."""

    output: str | None = None
    namespace: str | None = None


def whatif_command(
    snapshot: Sequence[Path],
    changes: Sequence[Path],
    duration: str | None,
    seed: int | None,
    out_dir: Path,
    out: Console,
    err: Console,
    view: WhatifView = WhatifView(),
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
    with collector_spaced():  # (both scenarios live to the end: frozen, no collection walks them)
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
        write_whatif(out_dir, sides, document)
    wrote = f"wrote {out_dir / 'whatif.json'} and {out_dir / 'report.html'}"
    if view.namespace is not None:
        shown = [p for p in document["pods"] if str(p["pod"]).partition("/")[0] == view.namespace]
        document = {**document, "pods": shown}
    if view.output in (None, WIDE):
        print_whatif(document, out, wide=view.output == WIDE, namespace=view.namespace)
        out.print(wrote, highlight=False)
    else:
        print_data(document, view.output)
        err.print(wrote, highlight=False)
    return 0


def write_whatif(out_dir: Path, sides: dict[str, Side], document: dict[str, Any]) -> None:
    """``whatif.json`` and ``report.html`` in ``out_dir``, and each side's ``summary.json`` and
    ``report.html`` under ``out_dir/SIDE/``."""
    for name, side in sides.items():
        made_directory(out_dir / name)
        (out_dir / name / "summary.json").write_text(json_file_text(side.summary, sort_keys=True))
        (out_dir / name / "report.html").write_text(render_html(side.summary))
    (out_dir / "whatif.json").write_text(json_file_text(document))
    (out_dir / "report.html").write_text(render_whatif_html(document))


def print_whatif(
    document: dict[str, Any], out: Console, wide: bool = False, namespace: str | None = None
) -> None:
    """The figures, then the pods, side by side (``wide``: every pod, messages whole; ``namespace``:
    the one the pods were chosen from)."""
    figures = Table(
        title=f"whatif: {for_how_long(document['duration_s'])} from the snapshot, seed {document['seed']}"
    )
    for column in ("", "baseline", "changed"):
        figures.add_column(column)
    for label, baseline, changed in figure_rows(document):
        figures.add_row(label, baseline, changed)
    out.print(figures)
    rows = pod_rows(document["pods"], None if wide else MESSAGE_CHARS)
    if not rows:
        where = f" in namespace {namespace}" if namespace is not None else ""
        out.print(f"the snapshot has no pending pods{where}", highlight=False)
        return
    pods = Table(title="the snapshot's pending pods")
    for column in ("pod", "GPUs", "baseline", "changed"):
        pods.add_column(column, overflow="fold")
    shown = len(rows) if wide else SHOWN_PODS
    for pod, gpus, baseline, changed in rows[:shown]:
        pods.add_row(pod, gpus, baseline, changed)
    if wide:
        print_wide(pods, out)
    else:
        out.print(pods)
    if len(rows) > shown:
        out.print(f"… and {len(rows) - SHOWN_PODS} more pods (whatif.json has them all)", highlight=False)
