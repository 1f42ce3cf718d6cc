"""A JSON Schema (draft 2020-12) compiled once into a Python predicate: does a document conform?

jsonschema's ``Draft202012Validator`` interprets its schema afresh at every node of a document: it makes
a validator per descent, resolves each ``$ref`` and looks each keyword up (0.94 s CPU for a simulated
day's ``summary.json`` of 5,392 pods). Compiled once into nested closures, the same yes or no costs a
tenth of that or less (``docs/performance.md``). Two checks use it: manifests of standard kinds against
the Kubernetes OpenAPI schemas (``kube.schema_check``) and ``summary.json`` against its schema
(``report.schema``); where the predicate says no, jsonschema walks the document to word the errors.

The predicate mirrors jsonschema's keyword functions (``jsonschema/_keywords.py``: ``properties``,
``required``, ``additionalProperties``, ``propertyNames``, ``prefixItems``, ``items``, ``minItems``,
``maxItems``, ``minimum``, ``maximum``, ``pattern`` with ``re.search``, ``enum`` and ``const`` of strings
and null, ``anyOf``, ``oneOf``, ``$ref`` to ``#/$defs/``, recursive ones included) and its draft 2020-12
type checks (``jsonschema/_types.py``: an integer is an int or a float without a fraction, a number any
``numbers.Number``, a bool neither). Annotations, ``format`` (not asserted by default in draft 2020-12)
and ``x-`` extensions (``x-kubernetes-*``) say nothing about validity. A schema with any other keyword
is refused when compiled (`UnsupportedSchema`), so a document is never accepted more loosely than
jsonschema would accept it.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Predicate = Callable[[Any], bool]

LOCAL_DEF = "#/$defs/"
#: keywords that say nothing about validity (and ``$defs``, which only ``$ref`` reaches)
ANNOTATIONS = frozenset(
    {"$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples", "format"}
)
OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties", "propertyNames"})
ARRAY_KEYWORDS = frozenset({"prefixItems", "items", "minItems", "maxItems"})
OTHER_KEYWORDS = frozenset(
    {"type", "minimum", "maximum", "pattern", "enum", "const", "anyOf", "oneOf", "$ref"}
)
KEYWORDS = OBJECT_KEYWORDS | ARRAY_KEYWORDS | OTHER_KEYWORDS


class UnsupportedSchema(ValueError):
    """The schema uses a keyword, a reference or a value the predicate does not mirror."""


def _is_number(x: Any) -> bool:
    return type(x) is float or type(x) is int or (isinstance(x, numbers.Number) and not isinstance(x, bool))


def _is_integer(x: Any) -> bool:
    if type(x) is int:
        return True
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


TYPES: dict[str, Predicate] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "integer": _is_integer,
    "number": _is_number,
}


def _always(_: Any) -> bool:
    return True


def _never(_: Any) -> bool:
    return False


def _all(checks: Sequence[Predicate]) -> Predicate:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda x: first(x) and second(x)
    return lambda x: all(check(x) for check in checks)


def compile_schema(schema: Mapping[str, Any] | bool, defs: Mapping[str, Any] | None = None) -> Predicate:
    """A predicate true exactly where jsonschema's ``Draft202012Validator(schema).is_valid`` is;
    ``$ref`` reaches ``defs`` (default: the schema's own ``$defs``).

    Raises `UnsupportedSchema` for a keyword, ``$ref`` or ``enum`` value the predicate does not mirror.
    """
    if defs is None:
        defs = schema.get("$defs", {}) if isinstance(schema, Mapping) else {}
    return _Compiler(defs).compile(schema)


class _Compiler:
    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.compiled: dict[str, Predicate] = {}  # each definition once, however many refer to it

    def compile(self, node: Any) -> Predicate:
        if node is True:
            return _always
        if node is False:
            return _never
        if not isinstance(node, Mapping):
            raise UnsupportedSchema(f"a schema is an object or a boolean, not {node!r}")
        unknown = [k for k in node if k not in KEYWORDS and k not in ANNOTATIONS and not k.startswith("x-")]
        if unknown:
            raise UnsupportedSchema(f"keyword(s) not mirrored: {', '.join(sorted(unknown))}")
        checks = []
        if "type" in node:
            checks.append(self._type(node["type"]))
        if not OBJECT_KEYWORDS.isdisjoint(node):
            checks.append(self._object(node))
        if not ARRAY_KEYWORDS.isdisjoint(node):
            checks.append(self._array(node))
        if "minimum" in node or "maximum" in node:
            checks.append(self._bounds(node.get("minimum"), node.get("maximum")))
        if "pattern" in node:
            search = re.compile(node["pattern"]).search
            checks.append(lambda x: not isinstance(x, str) or search(x) is not None)
        if "enum" in node:
            checks.append(self._enum(node["enum"]))
        if "const" in node:
            checks.append(self._enum([node["const"]]))
        if "anyOf" in node:
            any_of = [self.compile(option) for option in node["anyOf"]]
            checks.append(lambda x: any(option(x) for option in any_of))
        if "oneOf" in node:
            one_of = [self.compile(option) for option in node["oneOf"]]
            checks.append(lambda x: sum(1 for option in one_of if option(x)) == 1)
        if "$ref" in node:
            checks.append(self._ref(node["$ref"]))
        return _all(checks)

    def _ref(self, ref: Any) -> Predicate:
        name = ref.removeprefix(LOCAL_DEF) if isinstance(ref, str) and ref.startswith(LOCAL_DEF) else None
        if name is None or name not in self.defs:
            raise UnsupportedSchema(f"$ref {ref!r}: only {LOCAL_DEF}<name> of this schema")
        if name not in self.compiled:
            slot: list[Predicate] = []
            self.compiled[name] = lambda x: slot[0](x)  # bound late: a definition may refer to itself
            slot.append(self.compile(self.defs[name]))
        return self.compiled[name]

    @staticmethod
    def _type(types: Any) -> Predicate:
        names = [types] if isinstance(types, str) else list(types)
        unknown = [name for name in names if name not in TYPES]
        if unknown:
            raise UnsupportedSchema(f"type(s) {unknown!r}")
        checks = [TYPES[name] for name in names]
        if len(checks) == 1:
            return checks[0]
        return lambda x: any(check(x) for check in checks)

    @staticmethod
    def _enum(values: Sequence[Any]) -> Predicate:
        """jsonschema's ``equal``, for strings and null: a string equals only an equal string."""
        if not all(value is None or isinstance(value, str) for value in values):
            raise UnsupportedSchema(f"enum or const {values!r}: only strings and null are mirrored")
        strings = frozenset(value for value in values if value is not None)
        null = None in values
        return lambda x: (x is None and null) or (isinstance(x, str) and x in strings)

    @staticmethod
    def _bounds(minimum: Any, maximum: Any) -> Predicate:
        """jsonschema fails a number below ``minimum`` (``x < minimum``) or above ``maximum``: NaN passes."""
        low = -float("inf") if minimum is None else minimum
        high = float("inf") if maximum is None else maximum
        return lambda x: not _is_number(x) or not (x < low or x > high)

    def _object(self, node: Mapping[str, Any]) -> Predicate:
        properties = {name: self.compile(sub) for name, sub in node.get("properties", {}).items()}
        required = tuple(node.get("required", ()))
        extra = node.get("additionalProperties", True)
        additional = None if extra is True else self.compile(extra)
        names = None if "propertyNames" not in node else self.compile(node["propertyNames"])

        def check(x: Any) -> bool:
            if not isinstance(x, dict):
                return True
            for name in required:
                if name not in x:
                    return False
            for key, value in x.items():
                member = properties.get(key, additional)
                if member is not None and not member(value):
                    return False
                if names is not None and not names(key):
                    return False
            return True

        return check

    def _array(self, node: Mapping[str, Any]) -> Predicate:
        prefix = [self.compile(sub) for sub in node.get("prefixItems", ())]
        rest = self.compile(node["items"]) if "items" in node else None
        shortest, longest = node.get("minItems", 0), node.get("maxItems")

        def check(x: Any) -> bool:
            if not isinstance(x, list):
                return True
            if len(x) < shortest or (longest is not None and len(x) > longest):
                return False
            for item, member in zip(x, prefix, strict=False):
                if not member(item):
                    return False
            if rest is not None:
                for item in x[len(prefix) :] if prefix else x:
                    if not rest(item):
                        return False
            return True

        return check
