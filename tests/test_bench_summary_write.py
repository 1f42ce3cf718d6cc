"""The summary-write bench (``bench/summary_write.py``) on a small day: both checks pass the day's
summary, both writers write the same text, and the printed figures are there; outcomes, never times."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])  # bench/ lives beside src/, outside the package
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.summary_write import day_summary, describe_summary_write, measure  # noqa: E402


def test_summary_write_bench_checks_and_writes_a_day_summary_both_ways_and_prints_the_ratios() -> None:
    summary = day_summary(nodes_static=10, pool_max=5, jobs=40, hours=1.0)
    result = measure(summary)  # each way asserts that the summary conforms
    assert result.pods == len(summary["pods"]) > 40
    assert result.jsonschema_cpu_s > 0 and result.compiled_cpu_s > 0  # (measure asserts the texts equal)
    assert result.dumps_cpu_s > 0 and result.text_cpu_s > 0
    line = describe_summary_write(result)
    assert re.fullmatch(
        rf"check summary.json against its schema \({result.pods:,} pods\): jsonschema [\d.]+ s CPU, "
        r"compiled once [\d.]+ s CPU = [\d.]+x less; "
        r"its text: json.dumps [\d.]+ s CPU, json_text [\d.]+ s CPU = [\d.]+x",
        line,
    )
