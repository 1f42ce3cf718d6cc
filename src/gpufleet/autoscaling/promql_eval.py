"""Evaluating the PromQL subset of :mod:`gpufleet.model.promql` over simulated series.

Mirrors Prometheus' engine (``promql/engine.go``: ``VectorBinop``/``VectorscalarBinop`` with
one-to-one matching on the label sets less ``__name__``, which arithmetic drops; ``aggregation``
with ``by``/``without``, ``without`` also dropping ``__name__``; ``promql/functions.go``:
``rate``/``irate``/``increase``, ``vector``). A range is read as exact per-second rates from the
source rather than extrapolated from scraped samples. A many-to-many match is an error, as in
Prometheus.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

from gpufleet.model.promql import (
    Aggregate,
    Arithmetic,
    CounterRate,
    Negation,
    Number,
    PromExpr,
    Selector,
    VectorOf,
)

Labels = dict[str, str]
Sample = tuple[Labels, float]


class PromQLEvalError(ValueError):
    """An evaluation Prometheus refuses (a many-to-many match)."""


class SeriesSource(Protocol):
    """The series a query reads: one sample per series, with its labels (``__name__`` included)."""

    def gauge(self, metric: str) -> Sequence[Sample]: ...
    def counter_rate(self, metric: str, window_s: float) -> Sequence[Sample]:
        """Per-second rates over the last ``window_s`` seconds; 0: the current rate (``irate``)."""
        ...


def evaluate(expr: PromExpr, source: SeriesSource) -> list[Sample] | float:
    """The query's instant vector (or scalar) now."""
    if isinstance(expr, Number):
        return expr.value
    if isinstance(expr, Selector):
        return [(labels, value) for labels, value in source.gauge(expr.metric) if _selected(expr, labels)]
    if isinstance(expr, CounterRate):
        window = 0.0 if expr.function == "irate" else expr.window_s
        factor = expr.window_s if expr.function == "increase" else 1.0
        return [
            (_without_name(labels), value * factor)
            for labels, value in source.counter_rate(expr.selector.metric, window)
            if _selected(expr.selector, labels)
        ]
    if isinstance(expr, VectorOf):
        scalar = evaluate(expr.scalar, source)
        assert isinstance(scalar, float)
        return [({}, scalar)]
    if isinstance(expr, Negation):
        return _apply(evaluate(expr.expr, source), lambda v: -v)
    if isinstance(expr, Aggregate):
        vector = evaluate(expr.expr, source)
        assert isinstance(vector, list)
        return _aggregate(expr, vector)
    return _arithmetic(expr, evaluate(expr.lhs, source), evaluate(expr.rhs, source))


def instant_vector(expr: PromExpr, source: SeriesSource) -> list[Sample]:
    """The query's instant vector; :class:`PromQLEvalError` for a scalar (KEDA cannot read one)."""
    result = evaluate(expr, source)
    if isinstance(result, float):
        raise PromQLEvalError("the query returns a scalar, not an instant vector")
    return result


def _selected(selector: Selector, labels: Labels) -> bool:
    return all(m.matches(labels) for m in selector.matchers)


def _without_name(labels: Labels) -> Labels:
    return {k: v for k, v in labels.items() if k != "__name__"}


def _apply(value: list[Sample] | float, fn: Callable[[float], float]) -> list[Sample] | float:
    if isinstance(value, float):
        return fn(value)
    return [(_without_name(labels), fn(v)) for labels, v in value]


def _aggregate(expr: Aggregate, vector: list[Sample]) -> list[Sample]:
    groups: dict[tuple[tuple[str, str], ...], list[float]] = {}
    for labels, value in vector:
        if expr.without:
            kept = {k: v for k, v in labels.items() if k not in expr.labels and k != "__name__"}
        else:
            kept = {k: labels[k] for k in expr.labels if k in labels}
        groups.setdefault(tuple(sorted(kept.items())), []).append(value)
    out: list[Sample] = []
    for key, values in groups.items():
        if expr.op == "sum":
            result = math.fsum(values)
        elif expr.op == "avg":
            result = math.fsum(values) / len(values)
        elif expr.op == "max":
            result = max(values)
        elif expr.op == "min":
            result = min(values)
        else:
            result = float(len(values))
        out.append((dict(key), result))
    return out


def _divide(a: float, b: float) -> float:
    """IEEE division, as Go's float64: x/0 is ±Inf, 0/0 is NaN."""
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


_OPS: dict[str, Callable[[float, float], float]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _divide,
}


def _arithmetic(
    expr: Arithmetic, lhs: list[Sample] | float, rhs: list[Sample] | float
) -> list[Sample] | float:
    op = _OPS[expr.op]
    if isinstance(lhs, float) and isinstance(rhs, float):
        return op(lhs, rhs)
    if isinstance(rhs, float):
        return _apply(lhs, lambda v: op(v, rhs))
    if isinstance(lhs, float):
        return _apply(rhs, lambda v: op(lhs, v))
    right: dict[tuple[tuple[str, str], ...], float] = {}
    for labels, value in rhs:
        key = tuple(sorted(_without_name(labels).items()))
        if key in right:
            raise PromQLEvalError(
                "found duplicate series for the match group on the right hand-side of the operation; "
                "many-to-many matching not allowed: matching labels must be unique on one side"
            )
        right[key] = value
    out: list[Sample] = []
    seen: set[tuple[tuple[str, str], ...]] = set()
    for labels, value in lhs:
        stripped = _without_name(labels)
        key = tuple(sorted(stripped.items()))
        if key in seen:
            raise PromQLEvalError(
                "found duplicate series for the match group on the left hand-side of the operation; "
                "many-to-many matching not allowed: matching labels must be unique on one side"
            )
        seen.add(key)
        if key in right:
            out.append((stripped, op(value, right[key])))
    return out
