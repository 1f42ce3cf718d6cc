"""``gpufleet compare`` of simulation scenarios: every (variant, seed) run, and one report of them.

A variant is a scenario as ``gpufleet simulate`` takes it (``--scenario A.yaml``; several files or
directories joined by commas make one scenario: ``--scenario base/,fgd.yaml``), or a point of a
scenario grid (``--grid``, ``scenario_grid``). ``compare.json`` (schema
``gpufleet.compare-scenarios/v1``) holds each run's line (scenario, parameters, seed, variant, the
figures of ``scenario_runs.scenario_figures``, wall seconds) and per variant the statistics over
the seeds (``stats.group_stats`` of ``SCENARIO_METRICS``); ``autoscaling`` says whether some run
had node pools, where ``report.html`` (``scenario_compare_html``) plots cost against p95
pending-to-working time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpufleet.experiments.compare import run_all
from gpufleet.experiments.runs import RunsProgress
from gpufleet.experiments.scenario_runs import SCENARIO_GROUP, SCENARIO_METRICS, ScenarioSpec
from gpufleet.experiments.stats import group_stats

SCHEMA = "gpufleet.compare-scenarios/v1"


def variant_specs(variants: Sequence[str], seeds: Sequence[int]) -> list[ScenarioSpec]:
    """Every (variant, seed), in that order; a variant's comma-separated paths make one scenario."""
    labels = variant_labels(variants)
    return [
        ScenarioSpec(variant, _paths(variant), (), seed, labels[variant])
        for variant in dict.fromkeys(variants)
        for seed in seeds
    ]


def variant_labels(variants: Sequence[str]) -> dict[str, str]:
    """Short names: each path's file or folder name without ``.yaml``/``.yml``/``.json``, joined by
    ``+`` (``fragmentation+fgd-scheduler``); the variant as written where two share a name."""
    paths = list(dict.fromkeys(variants))
    short = [
        "+".join(
            Path(p.strip()).name.removesuffix(".yaml").removesuffix(".yml").removesuffix(".json")
            for p in v.split(",")
            if p.strip()
        )
        for v in paths
    ]
    return {v: (s if short.count(s) == 1 else v) for v, s in zip(paths, short, strict=True)}


def _paths(variant: str) -> tuple[Path, ...]:
    return tuple(Path(part.strip()).resolve() for part in variant.split(",") if part.strip())


def run_scenario_compare(
    specs: Sequence[ScenarioSpec], jobs: int, progress: RunsProgress | None = None
) -> dict[str, Any]:
    """Run them all and gather ``compare.json``'s content (runs in the specs' order)."""
    return scenario_compare_document(specs, run_all(specs, jobs, progress))


def scenario_compare_document(
    specs: Sequence[ScenarioSpec], results: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    runs = [spec.line(result) for spec, result in zip(specs, results, strict=True)]
    variants = {s.variant: {"variant": s.variant, **s.params()} for s in specs}
    return {
        "schema": SCHEMA,
        "variants": [{k: v for k, v in variant.items() if k != "seed"} for variant in variants.values()],
        "seeds": sorted({s.seed for s in specs}),
        "autoscaling": any(run["node_pools"] for run in runs),
        "stats": group_stats(runs, SCENARIO_GROUP, SCENARIO_METRICS),
        "runs": runs,
    }
