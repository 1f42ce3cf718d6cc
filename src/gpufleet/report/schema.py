"""Validation of a summary dict against the `gpufleet.summary/v1` contract.

The JSON Schema (``summary_schema.json``, shipped next to this module) checks shapes and
types; one rule JSON Schema cannot express, that every timeline series has one value per
sample time, is checked here in Python. The schema is compiled once per process into a predicate
(``gpufleet.schema_predicate``) that says whether a summary conforms; only a summary that does not
is walked by jsonschema, whose errors say what is wrong (a schema beyond the predicate would leave
every summary to jsonschema: a test keeps it compiled). The schema itself is checked against the
draft 2020-12 meta-schema by the tests, not on every run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

from gpufleet.schema_predicate import Predicate, UnsupportedSchema, compile_schema

SCHEMA_FILE = "summary_schema.json"
_LOCAL_DEF = "#/$defs/"
_IDENTIFIER = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")


class SummaryInvalid(ValueError):
    """A summary that breaks the contract; ``errors`` lists each problem as ``path: message``."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        lines = "\n".join(f"  {error}" for error in errors)
        count = f"{len(errors)} error" + ("" if len(errors) == 1 else "s")
        super().__init__(f"summary is not a valid gpufleet.summary/v1 ({count}):\n{lines}")


def load_summary_schema() -> dict[str, Any]:
    """Return the JSON Schema of `gpufleet.summary/v1` as a fresh dict."""
    text = resources.files("gpufleet.report").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def compiled_summary_schema() -> Predicate | None:
    """The summary schema as a predicate, or None where the schema is beyond ``compile_schema``."""
    try:
        return compile_schema(load_summary_schema())
    except UnsupportedSchema:
        return None


@cache
def _validator() -> Draft202012Validator:
    """jsonschema's validator, which words the errors of a summary the predicate rejects (imported then:
    a conforming summary never needs it)."""
    from jsonschema import Draft202012Validator

    schema = load_summary_schema()
    return Draft202012Validator(_inline_refs(schema, schema["$defs"]))


def _inline_refs(node: Any, defs: Mapping[str, Any]) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/<name>"}`` replaced by that definition.

    The schema has no cycles. jsonschema resolves a ``$ref`` each time it meets one, which
    doubles the time to validate a summary with thousands of pods; inlining avoids that.
    """
    if isinstance(node, dict):
        ref = node.get("$ref")
        if len(node) == 1 and isinstance(ref, str) and ref.startswith(_LOCAL_DEF):
            return _inline_refs(defs[ref.removeprefix(_LOCAL_DEF)], defs)
        return {key: _inline_refs(value, defs) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline_refs(item, defs) for item in node]
    return node


def validate_summary(summary: dict[str, Any]) -> None:
    """Raise `SummaryInvalid` listing every schema error and every timeline length mismatch."""
    timeline = summary.get("timeline") if isinstance(summary, Mapping) else None
    lengths = _timeline_length_errors(timeline) if isinstance(timeline, Mapping) else []
    conforms = compiled_summary_schema()
    if not lengths and conforms is not None and conforms(summary):
        return
    errors = schema_errors(summary) + lengths
    if errors:
        raise SummaryInvalid(errors)


def schema_errors(summary: dict[str, Any]) -> list[str]:
    """Every schema error of ``summary`` as ``path: message``, sorted: jsonschema's walk of the whole
    document, ten times the compiled predicate's cost (``validate_summary`` runs it only where that
    predicate says the summary does not conform)."""
    return sorted(f"{error.json_path}: {error.message}" for error in _validator().iter_errors(summary))


def _timeline_length_errors(timeline: Mapping[str, Any]) -> list[str]:
    times = timeline.get("t_s")
    if not isinstance(times, list):
        return []
    expected = len(times)
    return [
        f"{path}: has {len(series)} values, expected {expected} (the length of $.timeline.t_s)"
        for path, series in _timeline_series(timeline)
        if len(series) != expected
    ]


def _timeline_series(timeline: Mapping[str, Any]) -> Iterator[tuple[str, list[Any]]]:
    """Every array in the timeline, top-level or one level down (replicas, nodes_by_pool)."""
    for key, value in timeline.items():
        if isinstance(value, list):
            yield f"$.timeline{_member(key)}", value
        elif isinstance(value, Mapping):
            for inner_key, inner in value.items():
                if isinstance(inner, list):
                    yield f"$.timeline{_member(key)}{_member(inner_key)}", inner


def _member(key: str) -> str:
    """A JSON path step for ``key``, written as jsonschema writes it in ``error.json_path``."""
    if _IDENTIFIER.match(key):
        return f".{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"['{escaped}']"
