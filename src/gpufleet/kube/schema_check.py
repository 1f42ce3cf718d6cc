"""Strict schema validation of standard kinds, as ``kubectl --validate=strict`` does it.

Uses the Kubernetes 1.34 OpenAPI schemas that ``kubernetes_validate`` ships
(``v1.34.0-local-strict``: every object forbids unknown fields), with the same JSON Schema
draft and registry that ``kubernetes_validate.validate(doc, "1.34.0", strict=True)`` builds,
but iterates over *all* errors instead of stopping at the first.

Speed: a snapshot holds thousands of pods. Each definition is compiled once (cached) into
plain Python predicates covering the keywords these schemas use (``type``, ``properties``,
``additionalProperties``, ``items``, ``required``, ``enum``, ``oneOf``, ``$ref``); a valid
document, the common case, costs one pass of those. Only a document they reject goes
through ``jsonschema``'s ``iter_errors``, which words the errors. (A schema with any other
keyword is left to ``jsonschema`` alone.)

Which kinds exist comes from the same file: each definition's
``x-kubernetes-group-version-kind``.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema
from referencing import Registry, Resource

from gpufleet.kube.problems import Reporter, dotted, render

KUBERNETES_VERSION = "1.34.0"
_SCHEMA_DIR = f"kubernetes-json-schema/v{KUBERNETES_VERSION}-local-strict"
_DEFINITIONS_URI = "https://kubernetes.io/api/_definitions.json"
#: Definitions that describe API machinery (``DeleteOptions``, ``WatchEvent``), not kinds one writes.
_META_PREFIX = "io.k8s.apimachinery.pkg.apis.meta."

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

#: Fields the OpenAPI schemas mark required (a Go field without ``omitempty``) that the API server
#: defaults before it validates, so that a manifest may leave them out: a Job ``podFailurePolicy``
#: rule's ``onPodConditions[].status`` (``SetDefaults_Job``, pkg/apis/batch/v1/defaults.go: ``True``).
DEFAULTED_REQUIRED = {"io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern": ("status",)}


@cache
def _definitions() -> dict[str, Any]:
    text = files("kubernetes_validate").joinpath(f"{_SCHEMA_DIR}/_definitions.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    for name, fields in DEFAULTED_REQUIRED.items():
        definition = loaded["$defs"][name]
        definition["required"] = [f for f in definition.get("required", ()) if f not in fields]
    return loaded


@cache
def standard_kinds() -> dict[tuple[str, str, str], str]:
    """``(group, version, kind)`` -> definition name, for every kind Kubernetes 1.34 serves."""
    table: dict[tuple[str, str, str], str] = {}
    for name, definition in _definitions()["$defs"].items():
        if name.startswith(_META_PREFIX):
            continue
        for gvk in definition.get("x-kubernetes-group-version-kind", ()):
            table[(gvk["group"], gvk["version"], gvk["kind"])] = name
    return table


@cache
def _validator(definition: str) -> Any:
    registry: Registry[Any] = Resource.from_contents(_definitions()) @ Registry()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": f"{_DEFINITIONS_URI}#/$defs/{definition}",
    }
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def check(instance: object, definition: str, report: Reporter) -> None:
    """Report every schema error of ``instance`` (fields in error are settled: see ``Reporter.settle``)."""
    fast = _fast_validator(definition)
    if fast is not None and fast(instance):
        return
    for error in _validator(definition).iter_errors(instance):
        for path, message in _describe(error):
            report.error(path, message)
            report.settle(path)


def check_types(instance: object, definition: str, report: Reporter) -> None:
    """Report only the fields of the wrong JSON type (an object where a string belongs): what a reader
    that takes the fields it finds relies on. Missing and unknown fields, and values outside an enum,
    pass, as they pass kubectl without ``--validate=strict``."""
    fast = _fast_validator(definition)
    if fast is not None and fast(instance):
        return
    for error in _validator(definition).iter_errors(instance):
        if error.validator in _SHAPE:
            for path, message in _describe(error):
                report.error(path, message)
                report.settle(path)


#: the JSON Schema keywords that say what type a field is
_SHAPE = frozenset({"type", "oneOf", "anyOf"})

Predicate = Callable[[object], bool]

#: JSON types that one ``isinstance`` decides (``integer`` and ``number`` must exclude booleans).
_PY_TYPES: dict[str, type] = {
    "string": str,
    "object": dict,
    "array": list,
    "boolean": bool,
    "null": type(None),
}
#: Keywords that do not constrain an instance (``format`` too: draft 2020-12 does not assert it).
_ANNOTATIONS = frozenset({"description", "format", "default", "title", "$schema", "$id"})
_OBJECT_KEYWORDS = frozenset({"properties", "additionalProperties", "required"})
_PREFIX = "#/$defs/"


class _Unsupported(Exception):
    """A schema keyword the fast predicates do not cover."""


@cache
def _fast_validator(definition: str) -> Predicate | None:
    """A predicate equivalent to the schema's validity, or None if the schema is beyond it."""
    try:
        return _compile_ref(definition, {})
    except _Unsupported:
        return None


def _compile_ref(name: str, compiled: dict[str, Predicate]) -> Predicate:
    if name not in compiled:
        slot: list[Predicate] = []
        compiled[name] = lambda v: slot[0](v)  # late bound: definitions may refer to themselves
        slot.append(_compile(_definitions()["$defs"][name], compiled))
    return compiled[name]


def _compile(schema: dict[str, Any], compiled: dict[str, Predicate]) -> Predicate:
    checks: list[Predicate] = []
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS or keyword in _OBJECT_KEYWORDS or keyword.startswith("x-kubernetes-"):
            continue
        if keyword == "$ref":
            if not value.startswith(_PREFIX):
                raise _Unsupported(value)
            checks.append(_compile_ref(value.removeprefix(_PREFIX), compiled))
        elif keyword == "type":
            checks.append(_type_check([value] if isinstance(value, str) else value))
        elif keyword == "enum":
            checks.append(_enum_check(value))
        elif keyword == "oneOf":
            checks.append(_one_of_check([_compile(option, compiled) for option in value]))
        elif keyword == "items":
            checks.append(_items_check(_compile(value, compiled)))
        else:
            raise _Unsupported(keyword)
    if _OBJECT_KEYWORDS.intersection(schema):
        checks.append(_object_check(schema, compiled))
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    return lambda v: all(c(v) for c in checks)


def _enum_check(values: list[object]) -> Predicate:
    if not all(isinstance(e, str) for e in values):
        raise _Unsupported("enum")
    allowed = frozenset(values)
    return lambda v: isinstance(v, str) and v in allowed


def _one_of_check(options: list[Predicate]) -> Predicate:
    return lambda v: sum(1 for o in options if o(v)) == 1


def _items_check(item: Predicate) -> Predicate:
    return lambda v: not isinstance(v, list) or all(item(i) for i in v)


def _type_check(names: list[str]) -> Predicate:
    simple = tuple(_PY_TYPES[n] for n in names if n in _PY_TYPES)
    integer, number = "integer" in names, "number" in names
    if not integer and not number:
        return lambda v: isinstance(v, simple)

    def check(v: object) -> bool:
        if isinstance(v, bool):
            return bool in simple
        if isinstance(v, int):
            return True
        if isinstance(v, float):
            return number or v.is_integer()
        return isinstance(v, simple)

    return check


def _object_check(schema: dict[str, Any], compiled: dict[str, Predicate]) -> Predicate:
    props = {k: _compile(sub, compiled) for k, sub in schema.get("properties", {}).items()}
    required = tuple(schema.get("required", ()))
    additional = schema.get("additionalProperties", True)
    if not isinstance(additional, bool | dict):
        raise _Unsupported("additionalProperties")
    extra = _compile(additional, compiled) if isinstance(additional, dict) else None
    closed = additional is False

    def check(v: object) -> bool:
        if not isinstance(v, dict):
            return True
        for key, value in v.items():
            prop = props.get(key)
            if prop is not None:
                if not prop(value):
                    return False
            elif closed or (extra is not None and not extra(value)):
                return False
        return all(k in v for k in required)

    return check


def _describe(error: Any) -> list[tuple[str, str]]:
    """Short messages with field paths; the path names the offending field itself."""
    path = dotted(error.absolute_path)
    kind = error.validator
    instance = error.instance
    if kind == "additionalProperties" and isinstance(instance, dict):
        known = error.schema.get("properties", {})
        return [
            (
                dotted([*error.absolute_path, key]),
                f"Additional properties are not allowed ({key!r} was unexpected)",
            )
            for key in instance
            if key not in known
        ]
    if kind == "required":
        try:
            missing = ast.literal_eval(error.message.removesuffix(" is a required property"))
        except (ValueError, SyntaxError):
            return [(path, error.message)]
        return [(dotted([*error.absolute_path, str(missing)]), "Required value")]
    if kind == "type":
        return [(path, f"Invalid value: {render(instance)}: must be {_types(error.validator_value)}")]
    if kind in ("oneOf", "anyOf"):
        expected = [c.validator_value for c in error.context or () if c.validator == "type"]
        if expected:
            return [(path, f"Invalid value: {render(instance)}: must be {_types(expected)}")]
    if kind == "enum":
        return [
            (
                path,
                f"Unsupported value: {render(instance)}: supported values: "
                + ", ".join(render(v) for v in error.validator_value if v is not None),
            )
        ]
    return [
        (path, f"Invalid value: {render(instance)}: {error.message.removeprefix(repr(instance)).strip()}")
    ]


def _types(expected: object) -> str:
    """``["string", "null"]`` -> ``a string``; nested lists (from ``oneOf``) are flattened."""
    names: list[str] = []

    def collect(value: object) -> None:
        if isinstance(value, list):
            for item in value:
                collect(item)
        elif value != "null" and value not in names:
            names.append(str(value))

    collect(expected)
    article = {"integer": "an integer", "object": "an object", "array": "a list", "number": "a number"}
    return " or ".join(article.get(n, f"a {n}") for n in names)
