"""A small, safe evaluator for the subset of expr-lang (``github.com/expr-lang/expr`` v1.17) that KEDA's
``spec.advanced.scalingModifiers.formula`` uses.

KEDA compiles the formula with ``expr.Compile(formula, expr.Env(map[string]float64{...}))`` (the
trigger names, each a ``float64``) and runs it with ``expr.Run`` over the triggers' metric values
(``apis/keda/v1alpha1/scaledobject_webhook.go``: ``validateScalingModifiersFormula``;
``pkg/scaling/modifiers/formula.go``: ``calculateScalingModifiersFormula``). This module parses the
same text into a tree, type-checks it as expr's checker does for that environment, and evaluates it
by walking the tree: Python's ``eval`` is never used, and nothing but the names given can be read.

Grammar (precedence climbing as expr's ``parser/operator``; higher binds tighter)::

    program    := ("let" NAME "=" expression ";")* expression
    expression := binary(0) ["?" expression ":" expression]
    binary(p)  := unary { OP binary(q) }      OP of precedence >= p; q = prec+1 (left), prec (right)
                  precedence: "||" "or" 10, "&&" "and" 15, "==" "!=" "<" ">" "<=" ">=" 20,
                  "+" "-" 30, "*" "/" "%" 60, "**" 100 (right), "??" 500
    unary      := ("!" | "not") binary(50) | ("-" | "+") binary(90) | primary
    primary    := NUMBER | "true" | "false" | "nil" | NAME | "#"
                | NAME "(" [argument {"," argument}] ")"
                | "(" expression ")" | "[" [expression {"," expression}] "]"
    argument   := expression | "{" expression "}"     (a predicate: "#" is the element)

Numbers are expr's: ``12`` an ``int``, ``1.5``/``1e3``/``.5`` a ``float64`` (``_`` separators and
``0x`` hexadecimal integers too). Types follow expr's checker: ``+ - *`` of two ints give an int,
otherwise a float64; ``/`` and ``**`` always a float64; ``%`` takes ints only; comparisons give bool;
``&&``/``||``/``!`` take bools; a ternary's condition must be a bool; ``a ?? b`` is ``a`` unless it is
nil. Builtins: ``abs``, ``ceil``, ``floor``, ``round`` (half away from zero, as Go's ``math.Round``),
``float``, ``int`` (truncates), ``max``, ``min`` (numbers, or one array), ``len``, ``sum``, ``mean``,
``median``, and over an array with a predicate ``count``, ``all``, ``any``, ``none``, ``one``,
``filter``, ``map`` (KEDA's tests use ``count([a, b], {# > 1})``).

Errors are expr's words where this subset meets them (``unknown name x``, ``invalid operation: %
(mismatched types float64 and int)``, ``non-bool expression (type float64) used as condition``,
``invalid argument for float (type bool)``, ``not enough arguments to call abs``, ``unexpected token
Operator("+")``), with expr's position suffix ``(line:column)`` and its snippet. Not supported (a
compile error naming it): strings, maps, member access, ranges, pipes, ``in``/``matches`` and the
other builtins. Ints are Go's ``int``: literals within 64 bits, arithmetic wrapped to them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Union

#: a runtime value: expr's nil, bool, int, float64, or an array of them
Value = Union[None, bool, int, float, list["Value"]]  # noqa: UP007 (a recursive alias)

_BINARY: dict[str, tuple[int, bool]] = {  # operator: (precedence, right-associative)
    "||": (10, False),
    "or": (10, False),
    "&&": (15, False),
    "and": (15, False),
    "==": (20, False),
    "!=": (20, False),
    "<": (20, False),
    ">": (20, False),
    "<=": (20, False),
    ">=": (20, False),
    "+": (30, False),
    "-": (30, False),
    "*": (60, False),
    "/": (60, False),
    "%": (60, False),
    "**": (100, True),
    "^": (100, True),
    "??": (500, False),
}
_UNARY = {"!": 50, "not": 50, "-": 90, "+": 90}
_TOKEN = re.compile(
    r"\s*(?:(?P<number>0[xX][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)"
    r"|(?P<op>\?\?|\*\*|==|!=|<=|>=|&&|\|\||[-+*/%^!<>?:()\[\]{},;=#])"
    r"|(?P<other>\S))"
)


class ExprError(ValueError):
    """A compile or run error, in expr's words: ``message (line:column)`` and the snippet under it."""

    def __init__(self, message: str, source: str = "", offset: int | None = None) -> None:
        self.message = message
        text = message
        if offset is not None:
            line = source.count("\n", 0, offset) + 1
            start = source.rfind("\n", 0, offset) + 1
            end = source.find("\n", offset)
            column = offset - start
            text += f" ({line}:{column + 1})\n | {source[start : None if end < 0 else end]}\n | "
            text += "." * column + "^"
        #: the first line: the message and its position
        self.headline = text.split("\n", 1)[0]
        super().__init__(text)


@dataclass(frozen=True)
class _Token:
    kind: str  # number, name, op, eof
    text: str
    offset: int


def _tokens(source: str) -> list[_Token]:
    out: list[_Token] = []
    position = 0
    while position < len(source) and source[position:].strip():
        match = _TOKEN.match(source, position)
        assert match is not None  # ``other`` matches any non-space character
        kind = match.lastgroup or "other"
        text = match.group(kind)
        offset = match.start(kind)
        if kind == "other":
            what = "string literals are" if text in "\"'`" else f"{text!r} is"
            raise ExprError(f"unexpected token {text!r}: {what} not supported by gpufleet", source, offset)
        out.append(_Token(kind, text, offset))
        position = match.end()
    out.append(_Token("eof", "", len(source)))
    return out


# --- the tree -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Node:
    offset: int


@dataclass(frozen=True)
class _Literal(_Node):
    value: Value


@dataclass(frozen=True)
class _Name(_Node):
    name: str


@dataclass(frozen=True)
class _Pointer(_Node):
    """``#``: the element a predicate is applied to."""


@dataclass(frozen=True)
class _Unary(_Node):
    op: str
    operand: _Node


@dataclass(frozen=True)
class _Binary(_Node):
    op: str
    left: _Node
    right: _Node


@dataclass(frozen=True)
class _Conditional(_Node):
    condition: _Node
    then: _Node
    otherwise: _Node


@dataclass(frozen=True)
class _Array(_Node):
    items: tuple[_Node, ...]


@dataclass(frozen=True)
class _Predicate(_Node):
    body: _Node


@dataclass(frozen=True)
class _Call(_Node):
    name: str
    args: tuple[_Node, ...]


@dataclass(frozen=True)
class _Let(_Node):
    name: str
    value: _Node
    body: _Node


#: how deep a formula's tree may be (expr has no such limit; Python's recursion has one)
MAX_DEPTH = 100


def _depth(node: _Node) -> int:
    """The tree's depth, walked without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in vars(current).values() if isinstance(child, _Node))
        for value in vars(current).values():
            if isinstance(value, tuple):
                stack.extend((child, depth + 1) for child in value if isinstance(child, _Node))
    return deepest


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = _tokens(source)
        self.at = 0
        self.nesting = 0

    @property
    def token(self) -> _Token:
        return self.tokens[self.at]

    def error(self, token: _Token) -> ExprError:
        if token.kind == "eof":
            return ExprError("unexpected end of expression", self.source, token.offset)
        kind = {"number": "Number", "name": "Identifier", "op": "Operator"}[token.kind]
        return ExprError(f'unexpected token {kind}("{token.text}")', self.source, token.offset)

    def expect(self, text: str) -> _Token:
        token = self.token
        if token.text != text or token.kind not in ("op", "name"):
            raise self.error(token)
        self.at += 1
        return token

    def program(self) -> _Node:
        node = self.let_or_expression()
        if self.token.kind != "eof":
            raise self.error(self.token)
        return node

    def let_or_expression(self) -> _Node:
        token = self.token
        if token.kind == "name" and token.text == "let":
            self.at += 1
            name = self.token
            if name.kind != "name":
                raise self.error(name)
            self.at += 1
            self.expect("=")
            value = self.expression()
            self.expect(";")
            return _Let(token.offset, name.text, value, self.let_or_expression())
        return self.expression()

    def expression(self) -> _Node:
        node = self.binary(0)
        if self.token.kind == "op" and self.token.text == "?":
            offset = self.token.offset
            self.at += 1
            then = self.expression()
            self.expect(":")
            node = _Conditional(offset, node, then, self.expression())
        return node

    def binary(self, minimum: int) -> _Node:
        self.nesting += 1
        try:
            return self._binary(minimum)
        finally:
            self.nesting -= 1

    def _binary(self, minimum: int) -> _Node:
        if self.nesting > MAX_DEPTH:
            raise ExprError(
                f"expression nested too deeply (gpufleet's limit: {MAX_DEPTH})",
                self.source,
                self.token.offset,
            )
        node = self.unary()
        while True:
            token = self.token
            op = _BINARY.get(token.text) if token.kind in ("op", "name") else None
            if op is None or op[0] < minimum:
                return node
            self.at += 1
            precedence, right = op
            rhs = self.binary(precedence if right else precedence + 1)
            node = _Binary(
                token.offset, {"or": "||", "and": "&&", "^": "**"}.get(token.text, token.text), node, rhs
            )

    def unary(self) -> _Node:
        token = self.token
        if token.kind in ("op", "name") and token.text in _UNARY:
            self.at += 1
            op = "!" if token.text == "not" else token.text
            return _Unary(token.offset, op, self.binary(_UNARY[token.text]))
        return self.primary()

    def primary(self) -> _Node:
        token = self.token
        self.at += 1
        if token.kind == "number":
            return _Literal(token.offset, _number(token, self.source))
        if token.kind == "name":
            if token.text in ("true", "false"):
                return _Literal(token.offset, token.text == "true")
            if token.text == "nil":
                return _Literal(token.offset, None)
            if self.token.text == "(" and self.token.kind == "op":
                self.at += 1
                return _Call(token.offset, token.text, self.arguments(")"))
            return _Name(token.offset, token.text)
        if token.text == "#":
            return _Pointer(token.offset)
        if token.text == "(":
            node = self.let_or_expression()
            self.expect(")")
            return node
        if token.text == "[":
            return _Array(token.offset, self.arguments("]"))
        if token.text == "{":
            body = self.expression()
            self.expect("}")
            return _Predicate(token.offset, body)
        raise self.error(token)

    def arguments(self, closing: str) -> tuple[_Node, ...]:
        args: list[_Node] = []
        while not (self.token.kind == "op" and self.token.text == closing):
            if args:
                self.expect(",")
            args.append(self.expression())
        self.at += 1
        return tuple(args)


def _number(token: _Token, source: str) -> int | float:
    text = token.text.replace("_", "")
    try:
        if text[:2].lower() != "0x" and any(c in text for c in ".eE"):
            return float(text)
        value = int(text, 16) if text[:2].lower() == "0x" else int(text)
    except ValueError:
        value = None
    if value is None or not -(2**63) <= value < 2**63:
        raise ExprError(f"invalid number {token.text!r}", source, token.offset)
    return value


def _int64(value: int) -> int:
    """Go's int arithmetic: wrapped to 64 bits."""
    return (value + 2**63) % 2**64 - 2**63


# --- types (expr's checker, over this subset) -----------------------------------------------------

INT, FLOAT, BOOL, NIL, ARRAY, ANY = "int", "float64", "bool", "nil", "[]interface {}", "interface {}"
_NUMBERS = (INT, FLOAT, ANY)
_ONE_NUMBER = {"abs": None, "ceil": FLOAT, "floor": FLOAT, "round": FLOAT, "float": FLOAT, "int": INT}
_OVER_ARRAY = {"len": INT, "sum": ANY, "mean": FLOAT, "median": FLOAT}
_PREDICATED = {
    "count": INT,
    "all": BOOL,
    "any": BOOL,
    "none": BOOL,
    "one": BOOL,
    "filter": ARRAY,
    "map": ARRAY,
}
BUILTINS: tuple[str, ...] = (*_ONE_NUMBER, "max", "min", *_OVER_ARRAY, *_PREDICATED)


def _common(a: str, b: str) -> str:
    return a if a == b else ANY


class _Checker:
    def __init__(self, source: str, names: Mapping[str, str]) -> None:
        self.source = source
        self.names = dict(names)

    def error(self, node: _Node, message: str) -> ExprError:
        return ExprError(message, self.source, node.offset)

    def check(self, node: _Node, pointer: str | None = None) -> str:
        if isinstance(node, _Literal):
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
        if isinstance(node, _Name):
            if node.name not in self.names:
                raise self.error(node, f"unknown name {node.name}")
            return self.names[node.name]
        if isinstance(node, _Pointer):
            if pointer is None:
                raise self.error(node, "cannot use pointer accessor outside predicate")
            return pointer
        if isinstance(node, _Let):
            kept = self.names.get(node.name)
            self.names[node.name] = self.check(node.value, pointer)
            out = self.check(node.body, pointer)
            if kept is None:
                del self.names[node.name]
            else:
                self.names[node.name] = kept
            return out
        if isinstance(node, _Unary):
            operand = self.check(node.operand, pointer)
            if node.op == "!":
                if operand not in (BOOL, ANY):
                    raise self.error(node, f"invalid operation: ! (mismatched type {operand})")
                return BOOL
            if operand not in _NUMBERS:
                raise self.error(node, f"invalid operation: {node.op} (mismatched type {operand})")
            return operand
        if isinstance(node, _Binary):
            return self.binary(node, self.check(node.left, pointer), self.check(node.right, pointer))
        if isinstance(node, _Conditional):
            condition = self.check(node.condition, pointer)
            if condition not in (BOOL, ANY):
                raise self.error(node, f"non-bool expression (type {condition}) used as condition")
            return _common(self.check(node.then, pointer), self.check(node.otherwise, pointer))
        if isinstance(node, _Array):
            for item in node.items:
                self.check(item, pointer)
            return ARRAY
        if isinstance(node, _Predicate):
            raise self.error(node, "a predicate {...} is only an argument of a builtin")
        assert isinstance(node, _Call)
        return self.call(node, pointer)

    def binary(self, node: _Binary, left: str, right: str) -> str:
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

    def call(self, node: _Call, pointer: str | None) -> str:
        name, args = node.name, node.args
        if name in self.names or name not in BUILTINS:
            raise self.error(
                node, f"unknown name {name}" if name not in self.names else f"{name} is not a function"
            )
        arity = (
            (1, 1)
            if name in _ONE_NUMBER or name in _OVER_ARRAY
            else (2, 2)
            if name in _PREDICATED
            else (1, None)
        )
        if len(args) < arity[0]:
            raise self.error(node, f"not enough arguments to call {name}")
        if arity[1] is not None and len(args) > arity[1]:
            raise self.error(node, f"too many arguments to call {name}")
        if name in _PREDICATED:
            if self.check(args[0], pointer) not in (ARRAY, ANY):
                raise self.error(
                    node, f"builtin {name} takes only array (got {self.check(args[0], pointer)})"
                )
            if not isinstance(args[1], _Predicate):
                raise self.error(args[1], f"{name}'s second argument must be a predicate {{...}}")
            body = self.check(args[1].body, ANY)
            if name != "map" and body not in (BOOL, ANY):
                raise self.error(args[1], f"predicate should return boolean (got {body})")
            return _PREDICATED[name]
        types = [self.check(a, pointer) for a in args]
        if name in _OVER_ARRAY:
            if types[0] not in (ARRAY, ANY):
                raise self.error(node, f"invalid argument for {name} (type {types[0]})")
            return _OVER_ARRAY[name]
        if name in ("max", "min") and types == [ARRAY]:
            return ANY
        for t in types:
            if t not in _NUMBERS:
                raise self.error(node, f"invalid argument for {name} (type {t})")
        if name in ("max", "min"):
            return INT if all(t == INT for t in types) else ANY
        return _ONE_NUMBER[name] or types[0]


# --- evaluation -----------------------------------------------------------------------------------


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

    def error(self, node: _Node, message: str) -> ExprError:
        return ExprError(message, self.source, node.offset)

    def run(self, node: _Node, frame: _Frame) -> Value:
        if isinstance(node, _Literal):
            return node.value
        if isinstance(node, _Name):
            return frame.names[node.name]
        if isinstance(node, _Pointer):
            return frame.pointer
        if isinstance(node, _Let):
            inner = _Frame({**frame.names, node.name: self.run(node.value, frame)}, frame.pointer)
            return self.run(node.body, inner)
        if isinstance(node, _Unary):
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
        if isinstance(node, _Binary):
            return self.binary(node, frame)
        if isinstance(node, _Conditional):
            condition = self.run(node.condition, frame)
            if not isinstance(condition, bool):
                raise self.error(node, f"non-bool value {_go_type(condition)} used as condition")
            return self.run(node.then if condition else node.otherwise, frame)
        if isinstance(node, _Array):
            return [self.run(item, frame) for item in node.items]
        assert isinstance(node, _Call)
        return self.call(node, frame)

    def binary(self, node: _Binary, frame: _Frame) -> Value:
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

    def call(self, node: _Call, frame: _Frame) -> Value:
        name = node.name
        if name in _PREDICATED:
            items = self.run(node.args[0], frame)
            if not isinstance(items, list):
                raise self.error(node, f"builtin {name} takes only array (got {_go_type(items)})")
            predicate = node.args[1]
            assert isinstance(predicate, _Predicate)
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
        if name in _OVER_ARRAY or (name in ("max", "min") and len(args) == 1 and isinstance(args[0], list)):
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


@dataclass(frozen=True)
class Program:
    """A compiled formula (``expr.Compile``): :meth:`run` evaluates it over the variables' values."""

    source: str
    tree: _Node
    names: tuple[str, ...]

    def run(self, env: Mapping[str, Value]) -> Value:
        """``expr.Run``: the formula's value (nil is None); :class:`ExprError` where it fails to run."""
        missing = [n for n in self.names if n not in env]
        if missing:
            raise ExprError(f"unknown name {missing[0]}")
        return _Runner(self.source).run(self.tree, _Frame(dict(env)))


def compile_program(source: str, names: Sequence[str]) -> Program:
    """``expr.Compile(source, expr.Env(map[string]float64{name: ...}))``: parse and type-check, each name a
    float64 variable; :class:`ExprError` in expr's words where it does not compile."""
    tree = _Parser(source).program()
    if _depth(tree) > MAX_DEPTH:
        raise ExprError(f"expression nested too deeply (gpufleet's limit: {MAX_DEPTH})", source, 0)
    _Checker(source, dict.fromkeys(names, FLOAT)).check(tree)
    return Program(source, tree, tuple(names))
