"""``gpufleet compare``: every (trace, policy, seed) FGD-protocol replay, and one report of them.

``compare.json`` (schema ``gpufleet.compare/v1``) holds each run's ``replay.json`` content with
its ``trace`` and ``nodes``, and per (trace, policy) the statistics of ``stats.group_stats``
and the median allocation curve over the seeds; ``report.html`` shows them
(``compare_html``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gpufleet.experiments.compare_html import render_compare_html
from gpufleet.experiments.runs import R, RunsFailed, RunSpec, RunsProgress, execute_reported, summary_line
from gpufleet.experiments.stats import group_lines, group_stats, median_curve
from gpufleet.model.named_paths import made_directory
from gpufleet.report.json_text import json_file_text

SCHEMA = "gpufleet.compare/v1"


def run_specs(
    nodes: Path, traces: Sequence[Path], policies: Sequence[str], seeds: Sequence[int], fmt: str
) -> list[RunSpec]:
    """Every (trace, policy, seed), in that order."""
    return [
        RunSpec(str(trace), str(nodes), policy, seed, trace.resolve(), nodes.resolve(), fmt)
        for trace in traces
        for policy in policies
        for seed in seeds
    ]


def run_all(specs: Sequence[R], jobs: int, progress: RunsProgress | None = None) -> list[dict[str, Any]]:
    """Every run's result, in the specs' order (whatever order they finish in); ``RunsFailed``, once
    every run has ended, when some failed."""
    failures: list[tuple[str, str]] = []
    results = dict(execute_reported(specs, jobs, progress, failures))
    if failures:
        raise RunsFailed(failures)
    return [results[s] for s in specs]


def run_compare(specs: Sequence[RunSpec], jobs: int, progress: RunsProgress | None = None) -> dict[str, Any]:
    """Run them all and gather ``compare.json``'s content (runs in the specs' order)."""
    return compare_document(specs, run_all(specs, jobs, progress))


def compare_document(specs: Sequence[RunSpec], results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    runs = [{"trace": s.trace, "nodes": s.nodes, **r} for s, r in zip(specs, results, strict=True)]
    stats = group_stats(summary_line(s, r) for s, r in zip(specs, results, strict=True))
    curves = group_lines(runs)
    for group in stats:
        members = curves[group["trace"], group["policy"]]
        group["median_gpu_alloc_pct"] = median_curve([run["gpu_alloc_pct"] for run in members])
    return {
        "schema": SCHEMA,
        "protocol": "fgd",
        "format": specs[0].fmt if specs else "openb",
        "nodes": sorted({s.nodes for s in specs}),
        "traces": list(dict.fromkeys(s.trace for s in specs)),
        "policies": list(dict.fromkeys(s.policy for s in specs)),
        "seeds": sorted({s.seed for s in specs}),
        "arrived_pct": runs[0]["arrived_pct"] if runs else [],
        "stats": stats,
        "runs": runs,
    }


def write_compare(
    document: dict[str, Any],
    out_dir: Path,
    render: Callable[[Mapping[str, Any]], str] = render_compare_html,
) -> tuple[Path, Path]:
    """``compare.json`` and ``report.html`` (the document as ``render`` shows it) in ``out_dir``."""
    made_directory(out_dir)
    json_path, html_path = out_dir / "compare.json", out_dir / "report.html"
    json_path.write_text(json_file_text(document))
    html_path.write_text(render(document))
    return json_path, html_path
