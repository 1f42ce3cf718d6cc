"""The PromQL a ``prometheus`` trigger may use: what is parsed and evaluated, what is refused and why.

Semantics follow Prometheus' engine (``promql/engine.go``: aggregation by/without, one-to-one vector
matching, arithmetic dropping ``__name__``; ``promql/functions.go``: rate/irate/increase, vector)
and KEDA v2.20.2 ``prometheus_scaler.go`` ``ExecutePromQuery`` (one sample, empty or NaN -> 0 with
``ignoreNullValues``, several samples -> error).
"""

from __future__ import annotations

import math
from typing import ClassVar

import pytest

from gpufleet.autoscaling.keda_triggers import prometheus_value
from gpufleet.autoscaling.promql_eval import PromQLEvalError, Sample, instant_vector
from gpufleet.model.keda import PrometheusScaler
from gpufleet.model.promql import PromQLUnsupported, parse_query, yields_one_series


class FakeSeries:
    """Two Deployments' pods: web (2 pods) in serving, batch (1 pod) in jobs."""

    PODS = (("serving", "web-0", "web"), ("serving", "web-1", "web"), ("jobs", "batch-0", "batch"))
    GAUGES: ClassVar[dict[str, tuple[float, ...]]] = {
        "queue_length": (4.0, 6.0, 10.0),
        "DCGM_FI_DEV_GPU_UTIL": (50.0, 100.0, 30.0),
    }
    RATES: ClassVar[dict[float, tuple[float, ...]]] = {120.0: (3.0, 3.0, 1.0), 0.0: (5.0, 5.0, 2.0)}

    def _series(self, metric: str, values: tuple[float, ...]) -> list[Sample]:
        return [
            ({"__name__": metric, "namespace": ns, "pod": pod, "deployment": dep}, v)
            for (ns, pod, dep), v in zip(self.PODS, values, strict=True)
        ]

    def gauge(self, metric: str) -> list[Sample]:
        return self._series(metric, self.GAUGES.get(metric, (math.nan,) * 3))

    def counter_rate(self, metric: str, window_s: float) -> list[Sample]:
        return self._series(metric, self.RATES[window_s])


def values(query: str) -> list[tuple[dict[str, str], float]]:
    return sorted(instant_vector(parse_query(query), FakeSeries()), key=lambda s: sorted(s[0].items()))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("sum(queue_length)", [({}, 20.0)]),
        ('sum(queue_length{namespace="serving"})', [({}, 10.0)]),
        ('avg(DCGM_FI_DEV_GPU_UTIL{deployment=~"we.*"})', [({}, 75.0)]),
        ('max(queue_length{pod!="web-1"})', [({}, 10.0)]),
        ('min(queue_length{deployment!~"web"})', [({}, 10.0)]),
        ("count(queue_length)", [({}, 3.0)]),
        (
            "sum by (namespace) (queue_length)",
            [({"namespace": "jobs"}, 10.0), ({"namespace": "serving"}, 10.0)],
        ),
        (
            "sum without (pod) (queue_length)",
            [
                ({"deployment": "batch", "namespace": "jobs"}, 10.0),
                ({"deployment": "web", "namespace": "serving"}, 10.0),
            ],
        ),
        ('sum(rate(http_requests_total{deployment="web"}[2m]))', [({}, 6.0)]),
        ('sum(irate(http_requests_total{deployment="web"}[2m]))', [({}, 10.0)]),
        ('sum(increase(http_requests_total{deployment="web"}[2m]))', [({}, 720.0)]),
        ("vector(100)", [({}, 100.0)]),
        ("sum(queue_length) / 2 + 1", [({}, 11.0)]),
        ("-sum(queue_length)", [({}, -20.0)]),
        ("sum(queue_length) / count(queue_length)", [({}, 20.0 / 3)]),
        (
            '{__name__="queue_length", pod="web-0"}',
            [
                (
                    {"__name__": "queue_length", "namespace": "serving", "pod": "web-0", "deployment": "web"},
                    4.0,
                )
            ],
        ),
        (
            'queue_length{pod="web-0"} * 2',
            [({"deployment": "web", "namespace": "serving", "pod": "web-0"}, 8.0)],
        ),
    ],
)
def test_supported_queries_evaluate_as_prometheus_does(
    query: str, expected: list[tuple[dict[str, str], float]]
) -> None:
    got = values(query)
    assert [labels for labels, _ in got] == [labels for labels, _ in expected]
    assert [v for _, v in got] == pytest.approx([v for _, v in expected])


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("sum(", "is not valid PromQL: unclosed left parenthesis"),
        ("sum(http_requests_count)", "the metric 'http_requests_count' is not one gpufleet simulates"),
        ('queue_length{job="api"}', "the label 'job' in queue_length{job=\"api\"} is not supported"),
        (
            "rate(queue_length[1m])",
            "rate() over the gauge 'queue_length' is not supported (rate needs a counter)",
        ),
        ("http_requests_total", "the raw value of the counter 'http_requests_total' is not supported"),
        ("topk(1, queue_length)", "the aggregation topk() is not supported"),
        ("histogram_quantile(0.9, queue_length)", "the function histogram_quantile() is not supported"),
        ("queue_length > 3", "the operator '>' is not supported"),
        ("queue_length / on (pod) queue_length", "vector matching modifiers"),
        ("queue_length offset 5m", "the offset modifier"),
        ("queue_length @ 100", "the @ modifier"),
        ("sum(rate(http_requests_total[5m:1m]))", "rate() over http_requests_total[5m:1m] is not supported"),
        ("queue_length[5m]", "the range vector queue_length{}[5m] as a value is not supported"),
        ("1 + 1", "returns a scalar, which KEDA cannot read"),
        ('"text"', "the string literal"),
    ],
)
def test_unsupported_queries_say_what_part_is_not_supported(query: str, message: str) -> None:
    with pytest.raises(PromQLUnsupported) as caught:
        parse_query(query)
    assert message in str(caught.value)


def test_queries_that_may_return_several_series_are_known_statically() -> None:
    assert yields_one_series(parse_query("sum(queue_length) / 2"))
    assert yields_one_series(parse_query("vector(1)"))
    assert not yields_one_series(parse_query("sum by (pod) (queue_length)"))
    assert not yields_one_series(parse_query("queue_length"))


class _SameLabelsTwice(FakeSeries):
    def gauge(self, metric: str) -> list[Sample]:
        first = super().gauge(metric)[0]
        return [first, (dict(first[0]), 1.0)]


def test_many_to_many_matching_is_an_evaluation_error() -> None:
    # engine.go VectorBinop: "many-to-many matching not allowed" (KEDA then reports the scaler failed).
    with pytest.raises(PromQLEvalError, match="many-to-many matching not allowed"):
        instant_vector(parse_query("queue_length + queue_length"), _SameLabelsTwice())


def _scaler(ignore_null_values: bool = True) -> PrometheusScaler:
    return PrometheusScaler(
        "http://prom:9090", "sum(queue_length)", 1.0, ignore_null_values=ignore_null_values
    )


@pytest.mark.parametrize(
    ("result", "ignore_null_values", "expected"),
    [
        ([({}, 7.5)], True, 7.5),
        ([], True, 0.0),  # empty result, ignoreNullValues: 0
        ([], False, None),  # "prometheus metrics 'prometheus' target may be lost, the result is empty"
        ([({}, math.nan)], True, 0.0),
        ([({}, math.inf)], False, None),  # "prometheus query returns +Inf"
        ([({"pod": "a"}, 1.0), ({"pod": "b"}, 2.0)], True, None),  # "returned multiple elements"
        (None, True, None),  # the evaluation failed
    ],
)
def test_keda_reads_one_sample_from_the_result(
    result: list[Sample] | None, ignore_null_values: bool, expected: float | None
) -> None:
    assert prometheus_value(_scaler(ignore_null_values), result) == expected
