"""Strict schema validation of standard kinds, as ``kubectl --validate=strict`` does it.

Uses the Kubernetes 1.34 OpenAPI schemas that ``kubernetes_validate`` ships
(``v1.34.0-local-strict``: every object forbids unknown fields), with the same JSON Schema
draft and registry that ``kubernetes_validate.validate(doc, "1.34.0", strict=True)`` builds,
but iterates over *all* errors instead of stopping at the first.

Speed: a snapshot holds thousands of pods. Each definition is compiled once (cached) into a
plain Python predicate (``gpufleet.schema_predicate``, which covers the keywords these schemas use:
``type``, ``properties``, ``additionalProperties``, ``items``, ``required``, ``enum``, ``oneOf``,
``$ref``); a valid document, the common case, costs one pass of it. Only a document it rejects goes
through ``jsonschema``'s ``iter_errors``, which words the errors. (A schema with any other
keyword is left to ``jsonschema`` alone.)

Which kinds exist comes from the same file: each definition's
``x-kubernetes-group-version-kind``.
"""

from __future__ import annotations

import ast
import json
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from gpufleet.kube.problems import Reporter, dotted, render
from gpufleet.schema_predicate import LOCAL_DEF, Predicate, UnsupportedSchema, compile_schema

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
    # (the package's folder found, not imported: importing it imports jsonschema, which only the wording
    # of errors needs)
    spec = find_spec("kubernetes_validate")
    assert spec is not None and spec.submodule_search_locations  # (a package gpufleet depends on)
    folder = Path(next(iter(spec.submodule_search_locations)))
    text = (folder / _SCHEMA_DIR / "_definitions.json").read_text()
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
    """jsonschema's validator, which words the errors of a document the predicate rejects (imported then:
    a valid scenario, the common case, never needs it; 0.05 s of every command that reads manifests)."""
    import jsonschema
    from referencing import Registry, Resource

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


@cache
def _fast_validator(definition: str) -> Predicate | None:
    """A predicate equivalent to the definition's validity, or None if its schema is beyond it."""
    try:
        return compile_schema({"$ref": f"{LOCAL_DEF}{definition}"}, _definitions()["$defs"])
    except UnsupportedSchema:
        return None


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
