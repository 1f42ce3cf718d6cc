"""The formula's tree, after expr's ``ast/node.go``: a literal (``IntegerNode``, ``FloatNode``, ``BoolNode``,
``NilNode``), a name (``IdentifierNode``), ``#`` (``PointerNode``), ``UnaryNode``, ``BinaryNode``,
``ConditionalNode``, ``ArrayNode``, ``PredicateNode``, a builtin's call (``BuiltinNode``) and ``let``
(``VariableDeclaratorNode``); each node keeps its token's offset in the source for the error's position."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

#: a runtime value: expr's nil, bool, int, float64, or an array of them
Value = Union[None, bool, int, float, list["Value"]]  # noqa: UP007 (a recursive alias)


@dataclass(frozen=True)
class Node:
    offset: int


@dataclass(frozen=True)
class Literal(Node):
    value: Value


@dataclass(frozen=True)
class Name(Node):
    name: str


@dataclass(frozen=True)
class Pointer(Node):
    """``#``: the element a predicate is applied to."""


@dataclass(frozen=True)
class Unary(Node):
    op: str
    operand: Node


@dataclass(frozen=True)
class Binary(Node):
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Conditional(Node):
    condition: Node
    then: Node
    otherwise: Node


@dataclass(frozen=True)
class Array(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Predicate(Node):
    body: Node


@dataclass(frozen=True)
class Call(Node):
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Let(Node):
    name: str
    value: Node
    body: Node
