"""Statistics over seeds: per (trace, policy), the spread of each run's figures, and median curves.

The standard deviation is the sample one (n - 1), 0 for a single run. Runs whose figure is missing
(no record near 100 % arrived, as on a tiny trace) are left out of that figure's statistics; ``n``
says how many counted.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich import box
from rich.table import Table

#: The figures at 100 % arrived that compare and sweep report, with their headings.
METRICS = (
    ("unallocated_gpu_pct_at_100", "unallocated GPU %"),
    ("frag_ratio_pct_at_100", "fragmentation ratio %"),
)


def describe(values: Iterable[float | None]) -> dict[str, float | int | None]:
    """n, mean, sd (sample), median, min and max of the values given (``None`` left out)."""
    kept = [float(v) for v in values if v is not None]
    if not kept:
        return {"n": 0, "mean": None, "sd": None, "median": None, "min": None, "max": None}
    return {
        "n": len(kept),
        "mean": statistics.fmean(kept),
        "sd": statistics.stdev(kept) if len(kept) > 1 else 0.0,
        "median": statistics.median(kept),
        "min": min(kept),
        "max": max(kept),
    }


def group_lines(lines: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Run summaries by (trace, policy), in the order each pair first appears."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for line in lines:
        groups.setdefault((str(line["trace"]), str(line["policy"])), []).append(line)
    return groups


def group_stats(lines: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (trace, policy): the number of runs, the seeds and ``describe`` of each metric."""
    return [
        {
            "trace": trace,
            "policy": policy,
            "runs": len(group),
            "seeds": sorted(int(line["seed"]) for line in group),
            **{key: describe(line[key] for line in group) for key, _ in METRICS},
        }
        for (trace, policy), group in group_lines(lines).items()
    ]


def median_curve(curves: Sequence[Sequence[float | None]]) -> list[float | None]:
    """Point by point, the median of the curves' values there (``None`` where none has one)."""
    out: list[float | None] = []
    for column in zip(*curves, strict=True):
        kept = [v for v in column if v is not None]
        out.append(statistics.median(kept) if kept else None)
    return out


def fmt(value: float | int | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def mean_sd(figures: Mapping[str, Any]) -> str:
    """``mean ± sd`` to two places (``—`` without values)."""
    return "—" if figures["mean"] is None else f"{fmt(figures['mean'])} ± {fmt(figures['sd'])}"


def metric_head(spread: bool) -> list[str]:
    """Headings of ``metric_cells``."""
    head = []
    for _, title in METRICS:
        head += [f"{title}: mean ± sd", "median", *(["min–max"] if spread else [])]
    return head


def metric_cells(group: Mapping[str, Any], spread: bool) -> list[str]:
    """Per metric: mean ± sd, median, and with ``spread`` min–max, to two places."""
    cells = []
    for key, _ in METRICS:
        figures = group[key]
        cells += [mean_sd(figures), fmt(figures["median"])]
        if spread:
            cells.append(f"{fmt(figures['min'])}–{fmt(figures['max'])}")
    return cells


def stats_tables(stats: Sequence[Mapping[str, Any]], label: Mapping[str, str]) -> list[Table]:
    """The statistics as terminal tables, one per trace: per policy, mean ± sd and median."""
    tables: dict[str, Table] = {}
    for group in stats:
        trace = group["trace"]
        if trace not in tables:
            tables[trace] = table = Table(
                title=f"{label.get(trace, trace)}: at 100 % arrived, over seeds",
                title_justify="left",
                box=box.SIMPLE_HEAD,
            )
            table.add_column("policy")
            table.add_column("runs", justify="right")
            for heading in metric_head(spread=False):
                table.add_column(heading, justify="right")
        tables[trace].add_row(group["policy"], str(group["runs"]), *metric_cells(group, spread=False))
    return list(tables.values())


def trace_labels(traces: Iterable[str]) -> dict[str, str]:
    """Short names for trace paths: the file name without ``.csv``, or the whole path where two
    share a name."""
    paths = list(dict.fromkeys(traces))
    stems = [path.rsplit("/", 1)[-1].removesuffix(".csv") for path in paths]
    return {p: (s if stems.count(s) == 1 else p) for p, s in zip(paths, stems, strict=True)}
