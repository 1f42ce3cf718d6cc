"""The formula's types as expr's checker gives them (``checker/checker.go``) for KEDA's environment of
float64 names: ``+ - *`` of two ints an int, ``/`` and ``**`` a float64, ``%`` of ints only, comparisons
and ``&& || !`` bools, a ternary's condition a bool, ``??``'s common type; and the builtins' arities and
result types (``builtin/builtin.go``), with the checker's error messages."""

from __future__ import annotations

from collections.abc import Mapping

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
)

INT, FLOAT, BOOL, NIL, ARRAY, ANY = "int", "float64", "bool", "nil", "[]interface {}", "interface {}"
_NUMBERS = (INT, FLOAT, ANY)
_ONE_NUMBER = {"abs": None, "ceil": FLOAT, "floor": FLOAT, "round": FLOAT, "float": FLOAT, "int": INT}
OVER_ARRAY = {"len": INT, "sum": ANY, "mean": FLOAT, "median": FLOAT}
PREDICATED = {
    "count": INT,
    "all": BOOL,
    "any": BOOL,
    "none": BOOL,
    "one": BOOL,
    "filter": ARRAY,
    "map": ARRAY,
}
BUILTINS: tuple[str, ...] = (*_ONE_NUMBER, "max", "min", *OVER_ARRAY, *PREDICATED)


def _common(a: str, b: str) -> str:
    return a if a == b else ANY


class _Checker:
    def __init__(self, source: str, names: Mapping[str, str]) -> None:
        self.source = source
        self.names = dict(names)

    def error(self, node: Node, message: str) -> ExprError:
        return ExprError(message, self.source, node.offset)

    def check(self, node: Node, pointer: str | None = None) -> str:
        if isinstance(node, Literal):
            value = node.value
            return (
                NIL
                if value is None
                else BOOL
                if isinstance(value, bool)
                else INT
                if isinstance(value, int)
                else FLOAT
            )
        if isinstance(node, Name):
            if node.name not in self.names:
                raise self.error(node, f"unknown name {node.name}")
            return self.names[node.name]
        if isinstance(node, Pointer):
            if pointer is None:
                raise self.error(node, "cannot use pointer accessor outside predicate")
            return pointer
        if isinstance(node, Let):
            kept = self.names.get(node.name)
            self.names[node.name] = self.check(node.value, pointer)
            out = self.check(node.body, pointer)
            if kept is None:
                del self.names[node.name]
            else:
                self.names[node.name] = kept
            return out
        if isinstance(node, Unary):
            operand = self.check(node.operand, pointer)
            if node.op == "!":
                if operand not in (BOOL, ANY):
                    raise self.error(node, f"invalid operation: ! (mismatched type {operand})")
                return BOOL
            if operand not in _NUMBERS:
                raise self.error(node, f"invalid operation: {node.op} (mismatched type {operand})")
            return operand
        if isinstance(node, Binary):
            return self.binary(node, self.check(node.left, pointer), self.check(node.right, pointer))
        if isinstance(node, Conditional):
            condition = self.check(node.condition, pointer)
            if condition not in (BOOL, ANY):
                raise self.error(node, f"non-bool expression (type {condition}) used as condition")
            return _common(self.check(node.then, pointer), self.check(node.otherwise, pointer))
        if isinstance(node, Array):
            for item in node.items:
                self.check(item, pointer)
            return ARRAY
        if isinstance(node, Predicate):
            raise self.error(node, "a predicate {...} is only an argument of a builtin")
        assert isinstance(node, Call)
        return self.call(node, pointer)

    def binary(self, node: Binary, left: str, right: str) -> str:
        op = node.op
        mismatch = self.error(node, f"invalid operation: {op} (mismatched types {left} and {right})")
        if op in ("==", "!="):
            return BOOL
        if op == "??":
            return left if left == right or right == NIL else ANY if left == NIL else _common(left, right)
        if op in ("&&", "||"):
            if left not in (BOOL, ANY) or right not in (BOOL, ANY):
                raise mismatch
            return BOOL
        if left not in _NUMBERS or right not in _NUMBERS:
            raise mismatch
        if op in ("<", ">", "<=", ">="):
            return BOOL
        if op == "%":
            if FLOAT in (left, right):
                raise mismatch
            return INT
        if op in ("/", "**"):
            return FLOAT
        return INT if left == right == INT else FLOAT if ANY not in (left, right) else ANY

    def call(self, node: Call, pointer: str | None) -> str:
        name, args = node.name, node.args
        if name in self.names or name not in BUILTINS:
            raise self.error(
                node, f"unknown name {name}" if name not in self.names else f"{name} is not a function"
            )
        arity = (
            (1, 1)
            if name in _ONE_NUMBER or name in OVER_ARRAY
            else (2, 2)
            if name in PREDICATED
            else (1, None)
        )
        if len(args) < arity[0]:
            raise self.error(node, f"not enough arguments to call {name}")
        if arity[1] is not None and len(args) > arity[1]:
            raise self.error(node, f"too many arguments to call {name}")
        if name in PREDICATED:
            if self.check(args[0], pointer) not in (ARRAY, ANY):
                raise self.error(
                    node, f"builtin {name} takes only array (got {self.check(args[0], pointer)})"
                )
            if not isinstance(args[1], Predicate):
                raise self.error(args[1], f"{name}'s second argument must be a predicate {{...}}")
            body = self.check(args[1].body, ANY)
            if name != "map" and body not in (BOOL, ANY):
                raise self.error(args[1], f"predicate should return boolean (got {body})")
            return PREDICATED[name]
        types = [self.check(a, pointer) for a in args]
        if name in OVER_ARRAY:
            if types[0] not in (ARRAY, ANY):
                raise self.error(node, f"invalid argument for {name} (type {types[0]})")
            return OVER_ARRAY[name]
        if name in ("max", "min") and types == [ARRAY]:
            return ANY
        for t in types:
            if t not in _NUMBERS:
                raise self.error(node, f"invalid argument for {name} (type {t})")
        if name in ("max", "min"):
            return INT if all(t == INT for t in types) else ANY
        return _ONE_NUMBER[name] or types[0]


def check(source: str, tree: Node, names: Mapping[str, str]) -> str:
    """The tree's type, each of ``names`` a variable of its type; :class:`ExprError` where it fails."""
    return _Checker(source, names).check(tree)
