"""A JSON Schema compiled into a predicate (``gpufleet.schema_predicate``) says yes exactly where
jsonschema's ``Draft202012Validator`` finds no error: keyword by keyword on jsonschema's own edge cases,
and on real summaries changed at random anywhere (the Kubernetes schemas: ``tests/kube``)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from conftest import simulated
from gpufleet.report.schema import (
    SummaryInvalid,
    compiled_summary_schema,
    load_summary_schema,
    schema_errors,
    validate_summary,
)
from gpufleet.schema_predicate import UnsupportedSchema, compile_schema

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ("faults/training.yaml", "seed-003/hpa-cold-nodes.yaml", "kueue/cohort-reclaim.yaml")

OBJECT = {
    "type": "object",
    "properties": {"a": {"type": "integer", "minimum": 0}, "b": {"$ref": "#/$defs/name"}},
    "required": ["a"],
    "additionalProperties": False,
    "$defs": {"name": {"type": "string", "pattern": "^[^/]+/[^/]+$"}},
}
CASES: list[tuple[dict[str, Any], list[Any]]] = [
    ({"type": "integer"}, [3, 3.0, 3.5, True, "3", None, math.nan, 10**30]),
    ({"type": "number"}, [3, 3.5, True, False, "3", math.inf, None]),
    ({"type": ["string", "null"]}, ["x", None, 0, False, []]),
    ({"type": "boolean"}, [True, False, 0, 1, None]),
    ({"type": "object"}, [{}, [], "x"]),
    ({"type": "array"}, [[], {}, (), "x"]),
    ({"minimum": 0, "maximum": 100}, [0, -1, 100, 100.5, math.nan, -math.inf, "x", True, None]),
    ({"enum": ["a", "b"]}, ["a", "c", None, 0, ["a"], True]),
    ({"enum": ["a", None]}, [None, "a", False, 0]),
    ({"const": "gpufleet.summary/v1"}, ["gpufleet.summary/v1", "gpufleet.summary/v2", 1]),
    ({"pattern": "b"}, ["abc", "xyz", 7, None]),
    ({"pattern": "^[^/]+/[^/]+$"}, ["ns/name", "name", "a/b/c", "/b", 3]),
    (
        OBJECT,
        [{"a": 1}, {"a": -1}, {"a": 1, "b": "x/y"}, {"a": 1, "b": "xy"}, {"a": 1, "c": 0}, {"b": "x/y"}, []],
    ),
    ({"additionalProperties": {"type": "number"}}, [{"x": 1}, {"x": "1"}, {}, 5]),
    ({"propertyNames": {"enum": ["Succeeded", "Failed"]}}, [{"Succeeded": 1}, {"Other": 1}, {}, []]),
    ({"items": {"type": "string"}}, [[], ["a"], ["a", 1], "a1", {}]),
    ({"minItems": 2, "maxItems": 3}, [[1], [1, 2], [1, 2, 3, 4], "abcd"]),
    (
        {"prefixItems": [{"type": "number"}, {"type": "string"}], "items": {"type": "null"}},
        [[], [1], [1, "a"], [1, 2], ["a"], [1, "a", None], [1, "a", 0]],
    ),
    ({"prefixItems": [{"type": "number"}]}, [[1, "anything"], ["a"]]),
    ({"anyOf": [{"type": "number", "minimum": 0}, {"type": "null"}]}, [1, -1, None, "x"]),
    ({"$ref": "#/$defs/n", "description": "d", "$defs": {"n": {"type": "number"}}}, [1, "x"]),
    ({"items": False}, [[], [1]]),
    ({"properties": {"x": False, "y": True}}, [{"x": 1}, {"y": 1}, {}]),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, [1, 1.5, "x"]),
    ({"type": "string", "format": "date-time", "x-kubernetes-int-or-string": True}, ["not a date", 1]),
    (
        {
            "$ref": "#/$defs/tree",
            "$defs": {"tree": {"type": "object", "additionalProperties": {"$ref": "#/$defs/tree"}}},
        },
        [{}, {"a": {"b": {}}}, {"a": {"b": 1}}, {"a": {"b": {"c": True}}}, 1],
    ),
    # several types: one isinstance, and an integer or a number asked apart (a bool is neither)
    ({"type": ["integer", "number", "null"]}, [1, 1.5, None, True, "x"]),
    ({"type": ["boolean", "integer"]}, [True, 1, 1.0, 1.5, None]),
    # a type that admits the object (or the array) its keywords check: one check of both
    (
        {"type": ["object", "null"], "properties": {"a": {"type": ["integer", "null"]}}, "required": ["a"]},
        [None, {"a": 1}, {"a": None}, {"a": True}, {"a": 1.0}, {"a": 1.5}, {}, "x", []],
    ),
    (
        {"type": ["array", "null"], "items": {"type": ["number", "boolean"]}},
        [None, [1, True, 1.5], ["x"], {}, "x"],
    ),
    ({"type": ["string", "object"], "properties": {"a": {"type": "string"}}}, [{"a": "x"}, {"a": 1}, "s", 1]),
    # ... and one that does not admit it, or keywords of both containers
    ({"type": "string", "properties": {"a": {"type": "string"}}}, [{"a": "x"}, {}, "s"]),
    (
        {"type": ["object", "array"], "properties": {"a": {"type": "string"}}, "items": {"type": "string"}},
        [{"a": "x"}, {"a": 1}, ["x"], [1], "x"],
    ),
    # definitions referred to again once compiled, and two that refer to each other
    (
        {
            "properties": {"x": {"$ref": "#/$defs/a"}, "y": {"$ref": "#/$defs/a"}},
            "$defs": {
                "a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}},
                "b": {"type": ["object", "null"], "properties": {"a": {"$ref": "#/$defs/a"}}},
            },
        },
        [
            {},
            {"x": {"b": None}},
            {"x": {"b": {"a": {}}}, "y": {}},
            {"y": {"b": {"a": 1}}},
            {"x": 1},
            {"y": {"b": 2}},
        ],
    ),
]


@pytest.mark.parametrize(
    ("schema", "instance"),
    [(schema, instance) for schema, instances in CASES for instance in instances],
)
def test_compiled_schema_agrees_with_jsonschema_on_each_keyword(
    schema: dict[str, Any], instance: Any
) -> None:
    assert compile_schema(schema)(instance) is Draft202012Validator(schema).is_valid(instance)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "allOf": [{"type": "string"}]},
        {"patternProperties": {"^x": {"type": "string"}}},
        {"$ref": "https://example.com/schema"},
        {"$ref": "#/$defs/missing"},
        {"enum": [1, 2]},
        {"type": "decimal"},
        {"properties": {"x": {"exclusiveMinimum": 0}}},
    ],
)
def test_a_schema_with_what_the_compiler_does_not_mirror_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedSchema):
        compile_schema(schema)


@cache
def summaries() -> tuple[dict[str, Any], ...]:
    """Real summaries with faults, gangs, an HPA, traffic, autoscaling and Kueue, their timelines cut
    to the first samples (thousands of samples of one shape would take most of the changes)."""
    return tuple(_short_timeline(simulated([ROOT / "examples" / name])) for name in EXAMPLES)


def _short_timeline(summary: dict[str, Any], samples: int = 4) -> dict[str, Any]:
    for key, series in summary["timeline"].items():
        if isinstance(series, list):
            summary["timeline"][key] = series[:samples]
        else:
            summary["timeline"][key] = {name: values[:samples] for name, values in series.items()}
    return summary


def test_the_summary_schema_compiles() -> None:
    assert compiled_summary_schema() is not None


@cache
def conforms() -> Callable[[Any], bool]:
    return compile_schema(load_summary_schema())


@cache
def jsonschema_validator() -> Draft202012Validator:
    return Draft202012Validator(load_summary_schema())


def _places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value in a JSON document (the document itself first)."""
    places = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            places.extend(_places(value, (*path, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            places.extend(_places(value, (*path, index)))
    return places


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(["", "x", "ns/name", "a/b/c", "Succeeded", "gpu", "scale-up"]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(["a", "name"]), children, max_size=2)
    ),
    max_leaves=5,
)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(), which=st.integers(0, len(EXAMPLES) - 1), action=st.sampled_from(["set", "drop", "add"])
)
def test_compiled_schema_agrees_with_jsonschema_on_summaries_changed_anywhere(
    data: st.DataObject, which: int, action: str
) -> None:
    summary = copy.deepcopy(summaries()[which])
    places = _places(summary)[1:]
    path = data.draw(st.sampled_from(places))
    *parent_path, last = path
    parent: Any = summary
    for step in parent_path:
        parent = parent[step]
    if action == "drop" and isinstance(parent, dict):
        del parent[last]
    elif action == "add" and isinstance(parent[last], dict):
        parent[last][data.draw(st.sampled_from(["extra", "name", "phase", "gpus"]))] = data.draw(JSON)
    else:
        parent[last] = data.draw(JSON)
    assert conforms()(summary) is jsonschema_validator().is_valid(summary)


def test_a_summary_that_does_not_conform_still_lists_every_error() -> None:
    summary = copy.deepcopy(summaries()[0])
    summary["pods"][0]["phase"] = "Lost"
    del summary["totals"]["gpus_total"]
    with pytest.raises(SummaryInvalid) as caught:
        validate_summary(summary)
    assert caught.value.errors == schema_errors(summary)
    assert len(caught.value.errors) == 2
    assert any(error.startswith("$.pods[0].phase: 'Lost' is not one of") for error in caught.value.errors)
