"""cAdvisor's usage series in the PromQL subset (``gpufleet.model.promql``):
``container_cpu_usage_seconds_total`` is a counter (read through ``rate``/``irate``/``increase``),
``container_memory_working_set_bytes`` a gauge, both labelled ``namespace``, ``pod`` and ``container``
(cAdvisor's labels, as the kubelet exports them)."""

from __future__ import annotations

import re

import pytest

from gpufleet.model.promql import (
    SIMULATED_METRICS,
    CounterRate,
    PromQLUnsupported,
    parse_query,
    yields_one_series,
)


def test_the_usage_series_are_a_cpu_counter_and_a_memory_gauge() -> None:
    assert SIMULATED_METRICS["container_cpu_usage_seconds_total"] == "counter"
    assert SIMULATED_METRICS["container_memory_working_set_bytes"] == "gauge"


@pytest.mark.parametrize(
    "query",
    [
        'sum(rate(container_cpu_usage_seconds_total{namespace="web", pod=~"api-.*", container="api"}[1m]))',
        'sum(irate(container_cpu_usage_seconds_total{container!=""}[2m]))',
        'sum(container_memory_working_set_bytes{namespace="web", container="api"})',
    ],
)
def test_a_usage_query_with_cadvisors_labels_parses_to_one_series(query: str) -> None:
    assert yields_one_series(parse_query(query))


def test_rate_of_the_cpu_counter_reads_its_window() -> None:
    expr = parse_query("rate(container_cpu_usage_seconds_total[5m])")
    assert isinstance(expr, CounterRate)
    assert (expr.selector.metric, expr.window_s) == ("container_cpu_usage_seconds_total", 300.0)


@pytest.mark.parametrize(
    ("query", "part"),
    [
        ("sum(container_cpu_usage_seconds_total)", "the raw value of the counter"),
        ("sum(rate(container_memory_working_set_bytes[1m]))", "rate() over the gauge"),
        ('sum(container_memory_working_set_bytes{image="x"})', "the label 'image'"),
    ],
)
def test_what_prometheus_would_not_give_a_usage_query_is_refused(query: str, part: str) -> None:
    with pytest.raises(PromQLUnsupported, match=re.escape(part)):
        parse_query(query)
