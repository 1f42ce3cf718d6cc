"""Scenario parameters: a field of one document set to a value in the parsed YAML, before loading.

A parameter names a document and a field in it::

    KIND[/[NAMESPACE/]NAME].FIELD.PATH

``KIND`` is the document's ``kind`` (``NodePool``, ``Simulation``, ``Deployment``,
``KubeSchedulerConfiguration``, ...); ``NAME`` its ``metadata.name`` (with ``NAMESPACE/`` where
two namespaces hold the name), left out for a kind the scenario has one document of
(``Simulation.spec.seed``). The path is field names joined by dots, list items by index in
brackets (``profiles[0]``), and keys with dots or slashes quoted in brackets
(``metadata.annotations["gpufleet.io/warmup"]``). Names may contain dots: the longest name of that
kind the parameter starts with is taken. The path is written as kubectl's JSONPath child
notation (``kubectl get -o jsonpath='{.spec.template.metadata.annotations.gpufleet\\.io/warmup}'``
escapes the dot instead; here ``["..."]`` or ``['...']``), and, as ``helm install --set
a.b.c=v`` does, mappings missing along the path are created, so a field the document leaves at
its default can be set.

The value replaces the field as if written in the file, and the scenario is then checked and
loaded as ``gpufleet simulate`` does (``kube.load_scenario``'s ``edit``): a misspelt or wrong-typed
field is reported against the real field, in the loader's words. A parameter that names no
document, or a path that cannot be followed (through a value that is not a mapping, or a list item
that is not there), is an ``OverrideError``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from typing import Any

from gpufleet.kube.documents import Document
from gpufleet.kube.problems import dotted

FieldPath = tuple[str | int, ...]

_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_STEP = re.compile(r"""\.([^.\[\]"']+)|\[(\d+)\]|\["([^"]*)"\]|\['([^']*)'\]""")
_FIRST = re.compile(r"[^.\[\]/\"']+")


class OverrideError(ValueError):
    """A parameter that names no document, or a path that cannot be followed; the message says
    why (the caller names the parameter)."""


def parse_path(text: str) -> FieldPath:
    """``spec.profiles[0]["a.b"]`` as ``("spec", "profiles", 0, "a.b")``; ``text`` starts with a
    field name or a bracket."""
    first = _FIRST.match(text)
    steps: list[str | int] = [first.group(0)] if first else []
    at = first.end() if first else 0
    while at < len(text):
        step = _STEP.match(text, at)
        if step is None:
            raise OverrideError(f"cannot read the field path at {text[at:]!r}")
        name, index, double, single = step.groups()
        steps.append(
            int(index) if index is not None else next(s for s in (name, double, single) if s is not None)
        )
        at = step.end()
    if not steps:
        raise OverrideError("no field path: write KIND/NAME.field.path")
    return tuple(steps)


def _name(document: Document) -> tuple[str, str]:
    meta = document.body.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def locate(parameter: str, documents: Sequence[Document]) -> tuple[Document, FieldPath]:
    """The document a parameter names and the path of the field in it."""
    kind_match = _KIND.match(parameter)
    if kind_match is None:
        raise OverrideError("a parameter starts with a kind: KIND/NAME.field.path")
    kind, rest = kind_match.group(0), parameter[kind_match.end() :]
    of_kind = [d for d in documents if d.body.get("kind") == kind]
    if not of_kind:
        raise OverrideError(f"the scenario has no {kind}")
    names = sorted({_name(d)[1] for d in of_kind if _name(d)[1]})
    known = f"{kind}s: {', '.join(names)}" if names else f"no {kind} has a name"
    if not rest.startswith("/"):
        if len(of_kind) > 1:
            raise OverrideError(
                f"the scenario has {len(of_kind)} of kind {kind}; name one as {kind}/NAME ({known})"
            )
        return of_kind[0], parse_path(rest.removeprefix("."))
    rest = rest[1:]
    matches: list[tuple[int, Document]] = []
    for document in of_kind:
        namespace, name = _name(document)
        for written in (f"{namespace}/{name}", name):
            if name and rest.startswith(written) and rest[len(written) : len(written) + 1] in (".", "["):
                matches.append((len(written), document))
                break
    if not matches:
        raise OverrideError(f"no {kind} named {re.split(r'[.[]', rest, maxsplit=1)[0]!r} ({known})")
    length = max(n for n, _ in matches)
    found = [d for n, d in matches if n == length]
    if len(found) > 1:
        where = ", ".join(f"{kind}/{'/'.join(_name(d))}" for d in found)
        raise OverrideError(f"{len(found)} documents match ({where}); write {kind}/NAMESPACE/NAME")
    return found[0], parse_path(rest[length:].removeprefix("."))


def set_field(body: dict[str, Any], path: FieldPath, value: Any) -> None:
    """Set ``body``'s field at ``path`` to (a copy of) ``value``, creating missing mappings."""
    node: Any = body
    for i, step in enumerate(path):
        here = dotted(path[:i]) or "the document"
        last = i == len(path) - 1
        if isinstance(step, int):
            if not isinstance(node, list):
                raise OverrideError(f"{here} is not a list")
            if step >= len(node):
                raise OverrideError(f"{dotted(path[: i + 1])}: no such item ({here} has {len(node)})")
        elif not isinstance(node, dict):
            raise OverrideError(f"{here} is not a mapping")
        elif not last and node.get(step) is None:
            if isinstance(path[i + 1], int):
                raise OverrideError(f"{dotted(path[: i + 1])} is not set: no list item to change")
            node[step] = {}
        if last:
            node[step] = copy.deepcopy(value)
        else:
            node = node[step]


def apply(overrides: Sequence[tuple[str, Any]], documents: Sequence[Document]) -> None:
    """Set each (parameter, value), in order; ``OverrideError`` names the parameter (``PARAM: why``)."""
    for parameter, value in overrides:
        try:
            document, path = locate(parameter, documents)
            set_field(document.body, path, value)
        except OverrideError as exc:
            raise OverrideError(f"{parameter}: {exc}") from None


def check(parameters: Sequence[tuple[str, Sequence[Any]]], documents: Sequence[Document]) -> list[str]:
    """Why each parameter cannot be set to its values in ``documents`` (left unchanged), one line
    each (``PARAM: why``), each parameter on its own."""
    problems = []
    for parameter, values in parameters:
        for value in values:
            try:
                document, path = locate(parameter, documents)
                set_field(copy.deepcopy(document.body), path, value)
            except OverrideError as exc:
                problems.append(f"{parameter}: {exc}")
                break
    return problems


def editor(overrides: Sequence[tuple[str, Any]]) -> Callable[[list[Document]], None]:
    """``apply`` as ``kube.load_scenario``'s ``edit``."""
    return lambda documents: apply(overrides, documents)
