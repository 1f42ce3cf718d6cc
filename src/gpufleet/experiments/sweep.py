"""``gpufleet sweep``: a grid's runs, streamed to ``results.jsonl``, resumable.

Each finished run appends one JSON line (the run's ``line``: its parameters, its figures, wall
seconds) and flushes it, so an interrupted sweep loses at most the runs in flight. A sweep first
reads the lines already there and skips every run whose parameters (for a replay: trace, nodes,
policy, seed; for a scenario: scenario, parameters, seed) have one; a line cut short by the
interruption is dropped (the file is rewritten without it) and its run done again. A run that fails
writes no line, so the next sweep does it again. A run done on a Ray cluster keeps where it ran in
its line (``ran_on``: the Ray node's id and host); ``placements`` gathers them per node.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpufleet.experiments.runs import RAN_ON, R, Run, RunsProgress, execute_reported, params_key
from gpufleet.experiments.stats import REPLAY_GROUP, group_lines
from gpufleet.model.named_paths import made_directory

RESULTS = "results.jsonl"


#: Parameters a run has only when given (``--select``): a line with one the runs lack is another run's.
OPTIONAL_PARAMS = ("selection",)


def line_key(line: Mapping[str, Any], fields: Collection[str]) -> str | None:
    """The line's parameters (``fields``) as ``runs.params_key`` gives a run's; None for a line
    without them (another kind of sweep's) or with an optional one the fields lack."""
    if any(field not in line for field in fields):
        return None
    if any(field in line and field not in fields for field in OPTIONAL_PARAMS):
        return None
    return params_key({field: line[field] for field in fields})


def _parse(text: str) -> dict[str, Any] | None:
    try:
        line = json.loads(text)
    except json.JSONDecodeError:
        return None
    return line if isinstance(line, dict) else None


def read_results(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The complete lines of ``path`` (none if it does not exist) and how many others were dropped
    (not a JSON object: a line cut short never is): a file with incomplete or unreadable lines is
    rewritten without them, so appending goes on from a clean end."""
    if not path.exists():
        return [], 0
    text = path.read_text(encoding="utf-8")
    raw = [t for t in text.splitlines() if t.strip()]
    lines = [line for line in map(_parse, raw) if line is not None]
    if len(lines) != len(raw) or (text and not text.endswith("\n")):
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return lines, len(raw) - len(lines)


@dataclass
class SweepOutcome:
    ran: int  # runs done now
    skipped: int  # runs already in results.jsonl
    lines: list[dict[str, Any]]  # the grid's lines, old and new, in the grid's order
    dropped: int  # incomplete lines found and removed
    failed: list[
        tuple[str, str]
    ]  # the label and error of each run that failed (no line: done again next time)


def pending_runs(specs: Sequence[R], lines: Sequence[dict[str, Any]]) -> list[R]:
    """The runs without a line yet."""
    fields = _fields(specs)
    done = {line_key(line, fields) for line in lines}
    return [spec for spec in specs if params_key(spec.params()) not in done]


def _fields(specs: Sequence[Run]) -> list[str]:
    return list(specs[0].params()) if specs else []


def run_sweep(
    specs: Sequence[Run],
    out_dir: Path,
    jobs: int,
    ray_address: str | None = None,
    progress: RunsProgress | None = None,
) -> SweepOutcome:
    """Run what ``out_dir/results.jsonl`` lacks, appending a line as each run finishes; a run that
    fails gets no line (``progress`` hears of each run as it ends)."""
    made_directory(out_dir)
    path = out_dir / RESULTS
    fields = _fields(specs)
    lines, dropped = read_results(path)
    todo = pending_runs(specs, lines)
    failed: list[tuple[str, str]] = []
    with path.open("a", encoding="utf-8") as handle:
        for spec, result in execute_reported(todo, jobs, progress, failed, ray_address):
            line = spec.line(result) | ({RAN_ON: result[RAN_ON]} if RAN_ON in result else {})
            handle.write(json.dumps(line) + "\n")
            handle.flush()
            lines.append(line)
    by_key = {line_key(line, fields): line for line in lines}
    ordered = [by_key[key] for key in (params_key(spec.params()) for spec in specs) if key in by_key]
    return SweepOutcome(len(todo) - len(failed), len(specs) - len(todo), ordered, dropped, failed)


def placements(lines: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The Ray nodes the lines ran on (those with ``ran_on``), each with its host and the seeds of
    its runs, in the order the nodes first appear; empty when none ran on Ray."""
    nodes: dict[str, dict[str, Any]] = {}
    for line in lines:
        where = line.get(RAN_ON)
        if where is not None:
            nodes.setdefault(where["node_id"], {**where, "seeds": []})["seeds"].append(line["seed"])
    return [{**node, "seeds": sorted(node["seeds"])} for node in nodes.values()]


def with_placements(
    stats: Sequence[dict[str, Any]], lines: Sequence[Mapping[str, Any]], by: Sequence[str] = REPLAY_GROUP
) -> list[dict[str, Any]]:
    """Each group's statistics (``stats.group_stats`` over ``lines`` by ``by``) with ``ran_on``, the
    Ray nodes its runs ran on (``placements``), where some ran on Ray."""
    groups = group_lines(lines, by).values()
    return [
        {**group, RAN_ON: nodes} if (nodes := placements(members)) else dict(group)
        for group, members in zip(stats, groups, strict=True)
    ]


def placements_note(nodes: Sequence[Mapping[str, Any]]) -> str:
    """The nodes of ``placements`` in one line: ``runs by Ray node: HOST NODE_ID (RUNS), ...``."""
    return "runs by Ray node: " + ", ".join(f"{n['host']} {n['node_id']} ({len(n['seeds'])})" for n in nodes)
