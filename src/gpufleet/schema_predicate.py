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


#: The types whose check is one ``isinstance`` (a bool is an int in Python: "integer" and "number" are not).
_CLASSES: dict[str, type] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def _instance_of(cls: type) -> Predicate:
    return lambda x: isinstance(x, cls)


#: Each JSON type's check.
TYPES: dict[str, Predicate] = {
    **{name: _instance_of(cls) for name, cls in _CLASSES.items()},
    "integer": _is_integer,
    "number": _is_number,
}


def _always(_: Any) -> bool:
    return True


def _never(_: Any) -> bool:
    return False


def _type_names(types: Any) -> list[str]:
    """``type``'s value as a list of names (one name, or several)."""
    return [types] if isinstance(types, str) else list(types)


def _all(checks: Sequence[Predicate]) -> Predicate:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda x: first(x) and second(x)

    def every(x: Any) -> bool:
        for check in checks:  # noqa: SIM110 (a loop: ``all`` would make a generator per value)
            if not check(x):
                return False
        return True

    return every


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
        self.done: dict[str, Predicate] = {}  # those compiled to the end: referred to without the slot

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
        names = _type_names(node["type"]) if "type" in node else []
        kind = self._type(names) if names else None
        objects, arrays = not OBJECT_KEYWORDS.isdisjoint(node), not ARRAY_KEYWORDS.isdisjoint(node)
        # (where the type admits the container its keywords check, one call checks both: the type is
        # asked only of the values that are not that container)
        if kind is not None and objects and not arrays and "object" in names:
            checks.append(self._object(node, kind))
        elif kind is not None and arrays and not objects and "array" in names:
            checks.append(self._array(node, kind))
        else:
            checks += [kind] if kind is not None else []
            checks += [self._object(node)] if objects else []
            checks += [self._array(node)] if arrays else []
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

            def some(x: Any) -> bool:
                for option in any_of:  # noqa: SIM110 (a loop: ``any`` would make a generator per value)
                    if option(x):
                        return True
                return False

            checks.append(some)
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
        done = self.done.get(name)
        if done is not None:
            return done
        if name in self.compiled:  # being compiled: it refers to itself, or to one that refers back
            return self.compiled[name]
        slot: list[Predicate] = []
        self.compiled[name] = lambda x: slot[0](x)  # bound late, for those references
        done = self.done[name] = self.compile(self.defs[name])
        slot.append(done)
        return done

    @staticmethod
    def _type(names: list[str]) -> Predicate:
        unknown = [name for name in names if name not in TYPES]
        if unknown:
            raise UnsupportedSchema(f"type(s) {unknown!r}")
        if len(names) == 1:
            return TYPES[names[0]]
        classes = tuple(_CLASSES[name] for name in names if name in _CLASSES)
        numeric = _is_number if "number" in names else _is_integer if "integer" in names else None
        if numeric is None:
            return lambda x: isinstance(x, classes)
        return lambda x: isinstance(x, classes) or numeric(x)

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

    def _object(self, node: Mapping[str, Any], outside: Predicate = _always) -> Predicate:
        """The object keywords' check; a value that is not an object passes them, and is asked ``outside``."""
        properties = {name: self.compile(sub) for name, sub in node.get("properties", {}).items()}
        required = tuple(node.get("required", ()))
        extra = node.get("additionalProperties", True)
        additional = _always if extra is True else self.compile(extra)
        names = None if "propertyNames" not in node else self.compile(node["propertyNames"])

        def check(x: Any) -> bool:
            if not isinstance(x, dict):
                return outside(x)
            for name in required:
                if name not in x:
                    return False
            for key, value in x.items():
                if not properties.get(key, additional)(value):
                    return False
                if names is not None and not names(key):
                    return False
            return True

        return check

    def _array(self, node: Mapping[str, Any], outside: Predicate = _always) -> Predicate:
        """The array keywords' check; a value that is not an array passes them, and is asked ``outside``."""
        prefix = [self.compile(sub) for sub in node.get("prefixItems", ())]
        rest = self.compile(node["items"]) if "items" in node else None
        shortest, longest = node.get("minItems", 0), node.get("maxItems")

        def check(x: Any) -> bool:
            if not isinstance(x, list):
                return outside(x)
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
