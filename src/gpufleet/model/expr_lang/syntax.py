"""The formula's text into its tree: expr's lexer (``parser/lexer/lexer.go``: numbers, names, operators;
strings and the other tokens refused) and parser (``parser/parser.go``: ``parseExpression`` climbing the
precedences of ``parser/operator/operator.go``, ``parseVariableDeclaration``, ``parseConditional``,
``parsePrimary``, ``parseCall`` and ``parsePredicate``), with ``parseSecondary``'s number literals
(``strconv.ParseInt``/``ParseFloat`` of the text without ``_``: ``0x`` hexadecimal, ints within 64 bits)."""

from __future__ import annotations

import re
from dataclasses import dataclass

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


#: how deep a formula's tree may be (expr has no such limit; Python's recursion has one)
MAX_DEPTH = 100


def _too_deep(source: str, offset: int) -> ExprError:
    return ExprError(f"expression nested too deeply (gpufleet's limit: {MAX_DEPTH})", source, offset)


def _depth(node: Node) -> int:
    """The tree's depth, walked without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in vars(current).values() if isinstance(child, Node))
        for value in vars(current).values():
            if isinstance(value, tuple):
                stack.extend((child, depth + 1) for child in value if isinstance(child, Node))
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

    def program(self) -> Node:
        node = self.let_or_expression()
        if self.token.kind != "eof":
            raise self.error(self.token)
        return node

    def let_or_expression(self) -> Node:
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
            return Let(token.offset, name.text, value, self.let_or_expression())
        return self.expression()

    def expression(self) -> Node:
        node = self.binary(0)
        if self.token.kind == "op" and self.token.text == "?":
            offset = self.token.offset
            self.at += 1
            then = self.expression()
            self.expect(":")
            node = Conditional(offset, node, then, self.expression())
        return node

    def binary(self, minimum: int) -> Node:
        self.nesting += 1
        try:
            return self._binary(minimum)
        finally:
            self.nesting -= 1

    def _binary(self, minimum: int) -> Node:
        if self.nesting > MAX_DEPTH:
            raise _too_deep(self.source, self.token.offset)
        node = self.unary()
        while True:
            token = self.token
            op = _BINARY.get(token.text) if token.kind in ("op", "name") else None
            if op is None or op[0] < minimum:
                return node
            self.at += 1
            precedence, right = op
            rhs = self.binary(precedence if right else precedence + 1)
            node = Binary(
                token.offset, {"or": "||", "and": "&&", "^": "**"}.get(token.text, token.text), node, rhs
            )

    def unary(self) -> Node:
        token = self.token
        if token.kind in ("op", "name") and token.text in _UNARY:
            self.at += 1
            op = "!" if token.text == "not" else token.text
            return Unary(token.offset, op, self.binary(_UNARY[token.text]))
        return self.primary()

    def primary(self) -> Node:
        token = self.token
        self.at += 1
        if token.kind == "number":
            return Literal(token.offset, _number(token, self.source))
        if token.kind == "name":
            if token.text in ("true", "false"):
                return Literal(token.offset, token.text == "true")
            if token.text == "nil":
                return Literal(token.offset, None)
            if self.token.text == "(" and self.token.kind == "op":
                self.at += 1
                return Call(token.offset, token.text, self.arguments(")"))
            return Name(token.offset, token.text)
        if token.text == "#":
            return Pointer(token.offset)
        if token.text == "(":
            node = self.let_or_expression()
            self.expect(")")
            return node
        if token.text == "[":
            return Array(token.offset, self.arguments("]"))
        if token.text == "{":
            body = self.expression()
            self.expect("}")
            return Predicate(token.offset, body)
        raise self.error(token)

    def arguments(self, closing: str) -> tuple[Node, ...]:
        args: list[Node] = []
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


def parse(source: str) -> Node:
    """The formula's tree; :class:`ExprError` in expr's words where it does not parse."""
    tree = _Parser(source).program()
    if _depth(tree) > MAX_DEPTH:
        raise _too_deep(source, 0)
    return tree
