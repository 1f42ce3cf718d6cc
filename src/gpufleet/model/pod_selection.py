"""Which pods a run's figures are computed over: ``--select`` / ``-l`` (a label selector in kubectl's
syntax) and ``--namespace`` / ``-n``, as ``kubectl get pods -n NS -l SELECTOR`` picks pods.

`parse_label_selector` reads the string form of apimachinery's ``labels.Parse``: requirements joined
by ``,`` (ANDed), each ``key`` (Exists), ``!key`` (DoesNotExist), ``key=value`` or ``key==value``
(In), ``key!=value`` (NotIn: a pod without the key matches too), ``key in (a,b)``, ``key notin
(a,b)``, ``key>n`` / ``key<n`` (Gt/Lt, integers); keys and values are checked as
``labels.NewRequirement`` checks them (``label_syntax.requirement_problems``). The empty string
selects every pod.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpufleet.model.label_syntax import requirement_problems
from gpufleet.model.pod import Pod, Requirement

#: apimachinery's selector lexer: its symbols, longest first, and identifiers between them.
_TOKEN = re.compile(r"==|!=|[!=(),<>]|[^\s!=(),<>]+")
_SYMBOLS = ("==", "!=", "!", "=", "(", ")", ",", "<", ">")
_OPERATORS = {"=": "In", "==": "In", "!=": "NotIn", "in": "In", "notin": "NotIn", ">": "Gt", "<": "Lt"}


class SelectorError(ValueError):
    """A label selector that does not parse; the message says what was found and what was expected."""


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _TOKEN.findall(text)
        self.pos = 0

    def peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def take(self) -> str:
        token = self.peek()
        self.pos += 1
        return token

    def identifier(self, expected: str) -> str:
        token = self.take()
        if not token or token in _SYMBOLS:
            raise SelectorError(f"unable to parse requirement: found '{token}', expected: {expected}")
        return token

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.take()
            return Requirement(self.identifier("identifier after '!'"), "DoesNotExist")
        key = self.identifier("identifier")
        if self.peek() in ("", ","):
            return Requirement(key, "Exists")
        token = self.take()
        operator = _OPERATORS.get(token)
        if operator is None:
            raise SelectorError(
                f"unable to parse requirement: found '{token}', expected: "
                "'=', '!=', '==', 'in', 'notin', '>' or '<'"
            )
        if token in ("in", "notin"):
            return Requirement(key, operator, self.value_set())
        value = "" if self.peek() in ("", ",") else self.identifier("a value")
        return Requirement(key, operator, (value,))

    def value_set(self) -> tuple[str, ...]:
        if (token := self.take()) != "(":
            raise SelectorError(f"unable to parse requirement: found '{token}', expected: '('")
        values: list[str] = []
        while True:
            token = self.peek()
            if token == ")":
                self.take()
                return tuple(values)
            if token == ",":
                values.append("")  # an empty value, as ``in (,a)`` has
                self.take()
                continue
            values.append(self.identifier("a value, ',' or ')'"))
            if self.peek() == ",":
                self.take()
            elif self.peek() != ")":
                raise SelectorError(
                    f"unable to parse requirement: found '{self.peek()}', expected: ',' or ')'"
                )


def parse_label_selector(text: str) -> tuple[Requirement, ...]:
    """The requirements of ``text`` (``labels.Parse``); ``SelectorError`` when it does not parse or a
    key or value is not valid."""
    parser = _Parser(text)
    requirements: list[Requirement] = []
    while parser.peek():
        requirement = parser.requirement()
        problems = requirement_problems(requirement.key, requirement.operator, requirement.values)
        if problems:
            raise SelectorError("; ".join(problems))
        requirements.append(requirement)
        if parser.peek() not in ("", ","):
            raise SelectorError(f"unable to parse requirement: found '{parser.peek()}', expected: ','")
        if parser.take() == "," and not parser.peek():
            raise SelectorError("unable to parse requirement: found '', expected: identifier")
    return tuple(requirements)


@dataclass(frozen=True)
class PodSelection:
    """Pods of ``namespace`` (any, when None) whose labels match ``labels``."""

    namespace: str | None = None
    labels: tuple[Requirement, ...] = ()
    selector: str = ""  # the label selector as written

    def selects(self, pod: Pod) -> bool:
        in_namespace = self.namespace is None or pod.namespace == self.namespace
        return in_namespace and all(r.matches(pod.labels) for r in self.labels)

    @property
    def text(self) -> str:
        """What the summary records as ``selection``: the label selector as written, ``namespace NS``,
        or both (``namespace serving, app=vllm``)."""
        parts = [f"namespace {self.namespace}"] if self.namespace is not None else []
        return ", ".join([*parts, *([self.selector] if self.selector else [])])


def pod_selection(selector: str | None, namespace: str | None) -> PodSelection | None:
    """The selection ``--select`` and ``--namespace`` give (None when neither is given);
    ``SelectorError`` for a selector that does not parse."""
    if not selector and not namespace:
        return None
    return PodSelection(namespace or None, parse_label_selector(selector or ""), (selector or "").strip())
