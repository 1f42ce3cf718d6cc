"""Statistics over seeds: per group of runs (a trace and policy, or a scenario variant), the spread
of each run's figures, and median curves.

The standard deviation is the sample one (n - 1), 0 for a single run. Runs whose figure is missing
(no record near 100 % arrived, as on a tiny trace) are left out of that figure's statistics; ``n``
says how many counted.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table

Metrics = Sequence[tuple[str, str]]
"""Figures (a run line's key) with their headings."""

#: The figures at 100 % arrived that compare and sweep report for replays, with their headings.
METRICS: Metrics = (
    ("unallocated_gpu_pct_at_100", "unallocated GPU %"),
    ("frag_ratio_pct_at_100", "fragmentation ratio %"),
)
#: What groups replay runs.
REPLAY_GROUP = ("trace", "policy")


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


def group_lines(
    lines: Iterable[Mapping[str, Any]], by: Sequence[str] = REPLAY_GROUP
) -> dict[tuple[str, ...], list[Mapping[str, Any]]]:
    """Run summaries by the values of the fields ``by``, in the order each group first appears."""
    groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for line in lines:
        groups.setdefault(tuple(str(line[field]) for field in by), []).append(line)
    return groups


def group_stats(
    lines: Iterable[Mapping[str, Any]], by: Sequence[str] = REPLAY_GROUP, metrics: Metrics = METRICS
) -> list[dict[str, Any]]:
    """Per group (``group_lines``): its fields, the number of runs, the seeds and ``describe`` of
    each metric (a run without the figure counts as missing)."""
    return [
        {
            **dict(zip(by, values, strict=True)),
            "runs": len(group),
            "seeds": sorted(int(line["seed"]) for line in group),
            **{key: describe(line.get(key) for line in group) for key, _ in metrics},
        }
        for values, group in group_lines(lines, by).items()
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


def metric_head(spread: bool, metrics: Metrics = METRICS, median: bool = True) -> list[str]:
    """Headings of ``metric_cells``."""
    head = []
    for _, title in metrics:
        head += [f"{title}: mean ± sd", *(["median"] if median else []), *(["min–max"] if spread else [])]
    return head


def metric_cells(
    group: Mapping[str, Any], spread: bool, metrics: Metrics = METRICS, median: bool = True
) -> list[str]:
    """Per metric: mean ± sd, with ``median`` the median, with ``spread`` min–max, to two places."""
    cells = []
    for key, _ in metrics:
        figures = group[key]
        cells.append(mean_sd(figures))
        if median:
            cells.append(fmt(figures["median"]))
        if spread:
            cells.append(f"{fmt(figures['min'])}–{fmt(figures['max'])}")
    return cells


def measured(stats: Sequence[Mapping[str, Any]], metrics: Metrics) -> list[tuple[str, str]]:
    """The metrics some group has a value of (a scenario without Traffic has no request wait)."""
    return [(key, title) for key, title in metrics if any(group[key]["n"] for group in stats)]


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


#: The terminal width the variant tables keep to.
VARIANT_TABLE_WIDTH = 80


def variant_table(stats: Sequence[Mapping[str, Any]], metrics: Metrics) -> Group:
    """The statistics of scenario variants as terminal tables narrow enough for 80 columns: per
    variant, runs and ``mean±sd`` to one place of each metric some variant has (headings a word a
    line); the metrics that do not fit go on in a further table, with the variants again."""
    shown = measured(stats, metrics)
    measure = Console(width=10 * VARIANT_TABLE_WIDTH)
    chunks: list[list[tuple[str, str]]] = [[]]
    for metric in shown:
        wider = _variant_chunk(stats, [*chunks[-1], metric], len(chunks) > 1)
        if chunks[-1] and measure.measure(wider).maximum > VARIANT_TABLE_WIDTH:
            chunks.append([])
        chunks[-1].append(metric)
    return Group(*(_variant_chunk(stats, chunk, index > 0) for index, chunk in enumerate(chunks)))


def _variant_chunk(stats: Sequence[Mapping[str, Any]], metrics: Metrics, continued: bool) -> Table:
    table = Table(
        title="continued" if continued else "mean±sd over seeds",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("variant", overflow="fold")
    table.add_column("runs", justify="right")
    for _, title in metrics:
        table.add_column(title.replace(" ", "\n"), justify="right", no_wrap=True)
    for group in stats:
        cells = [
            "—" if group[key]["mean"] is None else f"{group[key]['mean']:.1f}±{group[key]['sd']:.1f}"
            for key, _ in metrics
        ]
        table.add_row(group["variant"], str(group["runs"]), *cells)
    return table


def trace_labels(traces: Iterable[str]) -> dict[str, str]:
    """Short names for trace paths: the file name without ``.csv``, or the whole path where two
    share a name."""
    paths = list(dict.fromkeys(traces))
    stems = [path.rsplit("/", 1)[-1].removesuffix(".csv") for path in paths]
    return {p: (s if stems.count(s) == 1 else p) for p, s in zip(paths, stems, strict=True)}
