"""The formula's value, as expr's VM runs it (``vm/vm.go``, ``vm/runtime/runtime.go``): Go's int (wrapped
to 64 bits, ``%`` truncated, divide by zero an error) and float64 arithmetic (``/`` by zero ±Inf or NaN),
``&&``/``||`` short-circuit, ``??``, ``let``; and the builtins as ``builtin/builtin.go`` computes them
(``round`` half away from zero as Go's ``math.Round``, ``int`` truncating, the predicates over ``#``), with
the run errors' words."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpufleet.model.expr_lang.checker import ARRAY, BOOL, FLOAT, INT, OVER_ARRAY, PREDICATED
from gpufleet.model.expr_lang.errors import ExprError
from gpufleet.model.expr_lang.tree import (
    Array,
    Binary,
    Call,
    Conditional,
    Let,
    Literal,
    Name,
    Node,
    Pointer,
    Predicate,
    Unary,
    Value,
)


def _int64(value: int) -> int:
    """Go's int arithmetic: wrapped to 64 bits."""
    return (value + 2**63) % 2**64 - 2**63


def _go_type(value: Value) -> str:
    if value is None:
        return "<nil>"
    return (
        BOOL
        if isinstance(value, bool)
        else INT
        if isinstance(value, int)
        else FLOAT
        if isinstance(value, float)
        else ARRAY
    )


def _is_number(value: Value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _go_round(x: float) -> float:
    """Go's ``math.Round``: half away from zero."""
    return math.copysign(math.floor(abs(x) + 0.5), x)


def _truncated_mod(a: int, b: int) -> int:
    """Go's ``%`` on ints: the sign of the dividend."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _divide(a: float, b: float) -> float:
    """Go's float64 division: ±Inf or NaN by zero, no error."""
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _power(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except (OverflowError, ValueError):
        return math.inf if abs(a) > 1 else math.nan


_ROUNDING: dict[str, Callable[[float], float]] = {
    "ceil": lambda x: float(math.ceil(x)),
    "floor": lambda x: float(math.floor(x)),
    "round": _go_round,
}


@dataclass
class _Frame:
    names: dict[str, Value]
    pointer: Value = None


class _Runner:
    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, node: Node, message: str) -> ExprError:
        return ExprError(message, self.source, node.offset)

    def run(self, node: Node, frame: _Frame) -> Value:
        if isinstance(node, Literal):
            return node.value
        if isinstance(node, Name):
            return frame.names[node.name]
        if isinstance(node, Pointer):
            return frame.pointer
        if isinstance(node, Let):
            inner = _Frame({**frame.names, node.name: self.run(node.value, frame)}, frame.pointer)
            return self.run(node.body, inner)
        if isinstance(node, Unary):
            value = self.run(node.operand, frame)
            if node.op == "!":
                if not isinstance(value, bool):
                    raise self.error(node, f"invalid operation: !{_go_type(value)}")
                return not value
            if not _is_number(value):
                raise self.error(node, f"invalid operation: {node.op}{_go_type(value)}")
            assert isinstance(value, int | float)
            if node.op == "+":
                return value
            return _int64(-value) if isinstance(value, int) else -value
        if isinstance(node, Binary):
            return self.binary(node, frame)
        if isinstance(node, Conditional):
            condition = self.run(node.condition, frame)
            if not isinstance(condition, bool):
                raise self.error(node, f"non-bool value {_go_type(condition)} used as condition")
            return self.run(node.then if condition else node.otherwise, frame)
        if isinstance(node, Array):
            return [self.run(item, frame) for item in node.items]
        assert isinstance(node, Call)
        return self.call(node, frame)

    def binary(self, node: Binary, frame: _Frame) -> Value:
        op = node.op
        left = self.run(node.left, frame)
        if op == "??":
            return self.run(node.right, frame) if left is None else left
        if op in ("&&", "||"):
            if not isinstance(left, bool):
                raise self.error(node, f"invalid operation: {_go_type(left)} {op} bool")
            if (op == "&&") != left:  # short circuit: false && _, true || _
                return left
            right_bool = self.run(node.right, frame)
            if not isinstance(right_bool, bool):
                raise self.error(node, f"invalid operation: bool {op} {_go_type(right_bool)}")
            return right_bool
        right = self.run(node.right, frame)
        if op in ("==", "!="):
            equal = (
                left == right
                and (left is None) == (right is None)
                and isinstance(left, bool) == isinstance(right, bool)
            )
            return equal if op == "==" else not equal
        if not (_is_number(left) and _is_number(right)):
            raise self.error(node, f"invalid operation: {_go_type(left)} {op} {_go_type(right)}")
        assert isinstance(left, int | float) and isinstance(right, int | float)
        comparisons: dict[str, Callable[[float, float], bool]] = {
            "<": lambda a, b: a < b,
            ">": lambda a, b: a > b,
            "<=": lambda a, b: a <= b,
            ">=": lambda a, b: a >= b,
        }
        if op in comparisons:
            return comparisons[op](left, right)
        if op == "%":
            if not (isinstance(left, int) and isinstance(right, int)):
                raise self.error(node, f"invalid operation: {_go_type(left)} % {_go_type(right)}")
            if right == 0:
                raise self.error(node, "integer divide by zero")
            return _truncated_mod(left, right)
        if op == "/":
            return _divide(float(left), float(right))
        if op == "**":
            return _power(float(left), float(right))
        if isinstance(left, int) and isinstance(right, int):
            return _int64(left + right if op == "+" else left - right if op == "-" else left * right)
        a, b = float(left), float(right)
        return a + b if op == "+" else a - b if op == "-" else a * b

    def call(self, node: Call, frame: _Frame) -> Value:
        name = node.name
        if name in PREDICATED:
            items = self.run(node.args[0], frame)
            if not isinstance(items, list):
                raise self.error(node, f"builtin {name} takes only array (got {_go_type(items)})")
            predicate = node.args[1]
            assert isinstance(predicate, Predicate)
            results = [self.run(predicate.body, _Frame(frame.names, item)) for item in items]
            if name == "map":
                return results
            for result in results:
                if not isinstance(result, bool):
                    raise self.error(predicate, f"predicate should return boolean (got {_go_type(result)})")
            if name == "filter":
                return [item for item, keep in zip(items, results, strict=True) if keep]
            hits = sum(1 for r in results if r)
            return {
                "count": hits,
                "all": hits == len(items),
                "any": hits > 0,
                "none": hits == 0,
                "one": hits == 1,
            }[name]
        args = [self.run(a, frame) for a in node.args]
        if name in OVER_ARRAY or (name in ("max", "min") and len(args) == 1 and isinstance(args[0], list)):
            items = args[0]
            if not isinstance(items, list):
                raise self.error(node, f"invalid argument for {name} (type {_go_type(items)})")
            if name == "len":
                return len(items)
            args = items
            if name in ("max", "min") and not args:
                raise self.error(node, f"not enough arguments to call {name}")
        for a in args:
            if not _is_number(a):
                raise self.error(node, f"invalid argument for {name} (type {_go_type(a)})")
        numbers = [a for a in args if isinstance(a, int | float)]
        if name == "sum":
            if all(isinstance(a, int) for a in numbers):
                return _int64(sum(int(a) for a in numbers))
            return float(sum(float(a) for a in numbers))  # Go adds in order: may reach ±Inf
        if name == "mean":
            return math.nan if not numbers else float(sum(numbers)) / len(numbers)
        if name == "median":
            ordered = sorted(numbers)
            if not ordered:
                return math.nan
            mid = len(ordered) // 2
            return float(ordered[mid]) if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
        if name in ("max", "min"):
            return (max if name == "max" else min)(numbers)
        x = numbers[0]
        if name == "abs":
            return _int64(abs(x)) if isinstance(x, int) else abs(x)
        if name == "float":
            return float(x)
        if name == "int":
            return _int64(int(x)) if math.isfinite(x) else -(2**63)
        if not math.isfinite(x):
            return float(x)  # Go's Ceil, Floor and Round keep ±Inf and NaN
        return _ROUNDING[name](float(x))


def evaluate(source: str, tree: Node, env: Mapping[str, Value]) -> Value:
    """The tree's value over ``env``'s values; :class:`ExprError` where it fails to run."""
    return _Runner(source).run(tree, _Frame(dict(env)))
