"""The PromQL that a KEDA ``prometheus`` trigger may ask of gpufleet's simulated series.

A query is parsed by a real PromQL parser (the ``promql-parser`` package, Prometheus' grammar) and
then narrowed to what gpufleet can evaluate, into the small expression tree below; anything else is
a :class:`PromQLUnsupported` naming the part. The series gpufleet simulates
(:data:`SIMULATED_METRICS`) are those of the pods of a Deployment or ReplicaSet that a ``Traffic``
document aims at, one series per ready pod with the labels :data:`SERIES_LABELS` (``deployment`` on a
Deployment's pods, ``replicaset`` on a ReplicaSet's): the gauges ``queue_length``,
``requests_per_second`` and ``DCGM_FI_DEV_GPU_UTIL``, and the counter ``http_requests_total`` (the
requests that reached the Deployment, split evenly over its serving pods). cAdvisor's usage series of
every running pod whose usage gpufleet models (a Traffic's usage fields, ``gpufleet.io/cpu-usage`` /
``memory-usage``): the counter ``container_cpu_usage_seconds_total`` (CPU-seconds) and the gauge
``container_memory_working_set_bytes`` (bytes), one series per pod, labelled ``namespace``, ``pod`` and
``container`` (its first container's name), as the kubelet's cAdvisor labels them.

Supported, with Prometheus' semantics (``promql/engine.go``, ``promql/functions.go``):

- instant selectors of a gauge with label matchers (``=``, ``!=``, ``=~``, ``!~``, fully anchored
  regular expressions), the metric named or given as ``__name__="..."``;
- ``rate``, ``irate`` and ``increase`` over a range selector of the counter;
- the aggregations ``sum``, ``avg``, ``max``, ``min`` and ``count``, with ``by`` or ``without``;
- ``vector(<scalar>)``, number literals, unary minus, parentheses, and ``+ - * /`` between
  scalars and vectors (vector-vector matching one-to-one on identical label sets, no ``on``,
  ``ignoring`` or ``group_left/right``).

Not supported (each names itself in the error): other functions and aggregations, comparison and
set operators, ``offset``, ``@``, subqueries, string literals, a range vector as the result, a
gauge under ``rate``, the raw value of a counter, a metric or a label gpufleet does not simulate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import promql_parser as pp

MetricKind = Literal["gauge", "counter"]
MatchOp = Literal["=", "!=", "=~", "!~"]
AggregateOp = Literal["sum", "avg", "max", "min", "count"]
RateFunction = Literal["rate", "irate", "increase"]
ArithmeticOp = Literal["+", "-", "*", "/"]

#: The series gpufleet simulates for a ``prometheus`` trigger, and their kind.
SIMULATED_METRICS: dict[str, MetricKind] = {
    "queue_length": "gauge",
    "requests_per_second": "gauge",
    "DCGM_FI_DEV_GPU_UTIL": "gauge",
    "http_requests_total": "counter",
    "container_cpu_usage_seconds_total": "counter",
    "container_memory_working_set_bytes": "gauge",
}
#: cAdvisor's usage series of a pod's container (labels ``namespace``, ``pod``, ``container``)
CPU_USAGE_COUNTER = "container_cpu_usage_seconds_total"
MEMORY_USAGE_GAUGE = "container_memory_working_set_bytes"
CONTAINER_METRICS = (CPU_USAGE_COUNTER, MEMORY_USAGE_GAUGE)
#: The labels of the simulated series (besides ``__name__``; ``statefulset``: a LeaderWorkerSet's leaders;
#: ``container``: the usage series').
SERIES_LABELS: tuple[str, ...] = ("namespace", "pod", "deployment", "replicaset", "statefulset", "container")

_AGGREGATES: tuple[AggregateOp, ...] = ("sum", "avg", "max", "min", "count")
_RATES: tuple[RateFunction, ...] = ("rate", "irate", "increase")
_ARITHMETIC: tuple[ArithmeticOp, ...] = ("+", "-", "*", "/")
_MATCH_OPS: tuple[tuple[pp.MatchOp, MatchOp], ...] = (
    (pp.MatchOp.Equal, "="),
    (pp.MatchOp.NotEqual, "!="),
    (pp.MatchOp.Re, "=~"),
    (pp.MatchOp.NotRe, "!~"),
)


class PromQLUnsupported(ValueError):
    """A query that does not parse, or that gpufleet cannot evaluate; ``str()`` says which part."""


@dataclass(frozen=True)
class LabelMatcher:
    name: str
    op: MatchOp
    value: str

    def matches(self, labels: dict[str, str]) -> bool:
        """Prometheus' ``Matcher.Matches``: a missing label is the empty string; regexes are anchored."""
        actual = labels.get(self.name, "")
        if self.op == "=":
            return actual == self.value
        if self.op == "!=":
            return actual != self.value
        found = re.fullmatch(self.value, actual) is not None
        return found if self.op == "=~" else not found


@dataclass(frozen=True)
class Selector:
    """An instant selector of a gauge: ``queue_length{namespace="serving"}``."""

    metric: str
    matchers: tuple[LabelMatcher, ...] = ()


@dataclass(frozen=True)
class CounterRate:
    """``rate``/``irate``/``increase`` of the counter over ``window_s`` seconds."""

    function: RateFunction
    selector: Selector
    window_s: float


@dataclass(frozen=True)
class Aggregate:
    """``op by (labels) (expr)``, or ``without`` when ``without`` is True."""

    op: AggregateOp
    expr: PromExpr
    labels: tuple[str, ...] = ()
    without: bool = False


@dataclass(frozen=True)
class Arithmetic:
    op: ArithmeticOp
    lhs: PromExpr
    rhs: PromExpr


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Negation:
    expr: PromExpr


@dataclass(frozen=True)
class VectorOf:
    """``vector(s)``: the scalar as a one-element vector without labels."""

    scalar: PromExpr


PromExpr = Selector | CounterRate | Aggregate | Arithmetic | Number | Negation | VectorOf


def is_scalar(expr: PromExpr) -> bool:
    """Whether the expression yields a scalar (else an instant vector)."""
    if isinstance(expr, Number):
        return True
    if isinstance(expr, Negation):
        return is_scalar(expr.expr)
    if isinstance(expr, Arithmetic):
        return is_scalar(expr.lhs) and is_scalar(expr.rhs)
    return False


def yields_one_series(expr: PromExpr) -> bool:
    """Whether the result has at most one series whatever the pods (KEDA needs exactly one)."""
    if isinstance(expr, Aggregate):
        return not expr.labels and not expr.without
    if isinstance(expr, VectorOf):
        return True
    if isinstance(expr, Negation):
        return yields_one_series(expr.expr)
    if isinstance(expr, Arithmetic):
        return all(is_scalar(e) or yields_one_series(e) for e in (expr.lhs, expr.rhs))
    return False


def parse_query(query: str) -> PromExpr:
    """The query as gpufleet evaluates it; :class:`PromQLUnsupported` says what is not PromQL or
    what gpufleet cannot evaluate."""
    try:
        tree = pp.parse(query)
    except ValueError as err:
        raise PromQLUnsupported(f"is not valid PromQL: {err}") from None
    expr = _convert(tree)
    if is_scalar(expr):
        raise PromQLUnsupported(
            "returns a scalar, which KEDA cannot read (it needs an instant vector; wrap it in vector())"
        )
    return expr


def _unsupported(what: str, note: str = "") -> PromQLUnsupported:
    return PromQLUnsupported(f"{what} is not supported" + (f" ({note})" if note else ""))


def _convert(node: pp.Expr) -> PromExpr:
    if isinstance(node, pp.ParenExpr):
        return _convert(node.expr)
    if isinstance(node, pp.NumberLiteral):
        return Number(float(node.val))
    if isinstance(node, pp.UnaryExpr):
        return Negation(_convert(node.expr))
    if isinstance(node, pp.VectorSelector):
        return _gauge(_selector(node))
    if isinstance(node, pp.AggregateExpr):
        return _aggregate(node)
    if isinstance(node, pp.BinaryExpr):
        return _binary(node)
    if isinstance(node, pp.Call):
        return _call(node)
    if isinstance(node, pp.MatrixSelector):
        raise _unsupported(f"the range vector {node} as a value", "only under rate, irate or increase")
    if isinstance(node, pp.SubqueryExpr):
        raise _unsupported(f"the subquery {node.prettify()}")
    if isinstance(node, pp.StringLiteral):
        raise _unsupported(f"the string literal {node}")
    raise _unsupported(f"the expression {node.prettify()}")


def _selector(node: pp.VectorSelector) -> Selector:
    if node.offset is not None:
        raise _unsupported(f"the offset modifier in {node}")
    if node.at is not None:
        raise _unsupported(f"the @ modifier in {node}")
    if node.matchers.or_matchers:
        raise _unsupported(f"the 'or' of label matchers in {node}")
    name = node.name
    matchers: list[LabelMatcher] = []
    for m in node.matchers.matchers:
        op = next(ours for theirs, ours in _MATCH_OPS if m.op == theirs)
        if m.name == "__name__":
            if op != "=":
                raise _unsupported(f"matching the metric name with {op} in {node}")
            name = m.value
            continue
        if m.name not in SERIES_LABELS:
            raise _unsupported(
                f"the label {m.name!r} in {node}", f"gpufleet's series have {', '.join(SERIES_LABELS)}"
            )
        try:
            re.compile(m.value)
        except re.error as err:
            raise PromQLUnsupported(f"the regular expression {m.value!r} in {node}: {err}") from None
        matchers.append(LabelMatcher(m.name, op, m.value))
    if name is None:
        raise _unsupported(f"a selector without a metric name ({node})")
    if name not in SIMULATED_METRICS:
        raise PromQLUnsupported(
            f"the metric {name!r} is not one gpufleet simulates ({', '.join(SIMULATED_METRICS)}): "
            "the query would return nothing and the scaler would never scale"
        )
    return Selector(name, tuple(matchers))


def _gauge(selector: Selector) -> Selector:
    if SIMULATED_METRICS[selector.metric] == "counter":
        raise _unsupported(
            f"the raw value of the counter {selector.metric!r}", "use rate, irate or increase over a range"
        )
    return selector


def _aggregate(node: pp.AggregateExpr) -> Aggregate:
    op = str(node.op)
    if op not in _AGGREGATES:
        raise _unsupported(f"the aggregation {op}()", f"gpufleet evaluates {', '.join(_AGGREGATES)}")
    inner = _convert(node.expr)
    if is_scalar(inner):
        raise PromQLUnsupported(f"{op}() needs an instant vector, got a scalar")
    labels: tuple[str, ...] = ()
    without = False
    if node.modifier is not None:
        labels = tuple(node.modifier.labels)
        without = node.modifier.type == pp.AggModifierType.Without
    return Aggregate(op, inner, labels, without)


def _binary(node: pp.BinaryExpr) -> Arithmetic:
    op = str(node.op)
    if op not in _ARITHMETIC:
        raise _unsupported(f"the operator {op!r}", f"gpufleet evaluates {' '.join(_ARITHMETIC)}")
    modifier = node.modifier
    if modifier is not None and (
        modifier.matching is not None
        or modifier.group_labels
        or modifier.card != pp.VectorMatchCardinality.OneToOne
    ):
        raise _unsupported(f"vector matching modifiers in {node.prettify()}")
    return Arithmetic(op, _convert(node.lhs), _convert(node.rhs))


def _call(node: pp.Call) -> PromExpr:
    name = node.func.name
    if name in _RATES:
        arg = node.args[0]
        if not isinstance(arg, pp.MatrixSelector):
            raise _unsupported(f"{name}() over {arg.prettify()}", "only over a range selector")
        selector = _selector(arg.vector_selector)
        if SIMULATED_METRICS[selector.metric] != "counter":
            raise _unsupported(f"{name}() over the gauge {selector.metric!r}", f"{name} needs a counter")
        return CounterRate(name, selector, arg.range.total_seconds())
    if name == "vector":
        scalar = _convert(node.args[0])
        if not is_scalar(scalar):
            raise PromQLUnsupported("vector() needs a scalar")
        return VectorOf(scalar)
    raise _unsupported(f"the function {name}()", "gpufleet evaluates rate, irate, increase, vector")
