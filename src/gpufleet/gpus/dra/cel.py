"""DRA device selectors: CEL expressions evaluated against one device, with Kubernetes' CEL extensions.

Upstream compiles selectors in ``staging/src/k8s.io/dynamic-resource-allocation/cel`` (``compile.go``)
and evaluates them in the structured allocator
(``staging/src/k8s.io/dynamic-resource-allocation/structured``). The expression sees one variable,
``device``, as documented on ``CELDeviceSelector`` (``pkg/apis/resource``) and the DRA docs page
(https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/):

* ``device.driver``: the driver's name;
* ``device.attributes["domain"].id``: attributes grouped by the domain of their qualified name
  (bare names belong to the driver's domain); ``version`` attributes are ``semver`` values;
* ``device.capacity["domain"].id``: capacities, as ``quantity`` values;
* ``device.allowMultipleAllocations``: always false here (consumable capacity is not modelled).

An unknown domain gives an empty map; an unknown attribute is a runtime error ("no such key"), which
upstream reports and which aborts allocating the claim on that node (``allocator.py`` does the same).
``cel.bind(var, init, expr)`` is enabled, as upstream does.

The CEL language itself is cel-python (``celpy``, pure Python). Kubernetes' CEL libraries used by real
DeviceClasses are added as functions, after ``k8s.io/apiserver/pkg/cel/library``:

* ``quantity.go``: ``quantity(string)``, ``isQuantity(string)``, and on quantities ``sign()``,
  ``isInteger()``, ``asInteger()``, ``asApproximateFloat()``, ``add(quantity|int)``,
  ``sub(quantity|int)``, ``isLessThan``, ``isGreaterThan``, ``compareTo`` and ``==``;
* ``semver.go`` / ``semverlib.go``: ``semver(string[, normalize])``, ``isSemver(string[, normalize])``,
  and on versions ``major()``, ``minor()``, ``patch()``, ``isLessThan``, ``isGreaterThan``,
  ``compareTo`` and ``==``.

Quantities use gpufleet's exact parser (``gpufleet.model.quantity.parse_quantity``), restricted to
Kubernetes syntax: gpufleet's extra byte units (``140GB``) are not quantities in CEL.

Upstream type-checks a selector when it is compiled; celpy does not, so :func:`compile_selector` checks
what can be checked without types: syntax, the length limit, that every function is declared and every
variable is ``device`` or one bound by a macro. A result that is not a bool is a runtime error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import celpy
import celpy.celtypes as ct
import lark
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, base_functions

from gpufleet.model.dra import AttributeValue, Device, VersionValue, split_qualified_name
from gpufleet.model.quantity import QuantityError, parse_quantity

#: ``resource.CELSelectorExpressionMaxLength`` (10 Ki).
EXPRESSION_MAX_LENGTH = 10 * 1024

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_GPUFLEET_ONLY_SUFFIX = re.compile(r"(?:KB|MB|GB|TB|PB|B)$")


class SelectorCompileError(ValueError):
    """A selector that does not compile (syntax, unknown function or variable, too long)."""


class SelectorRuntimeError(RuntimeError):
    """A selector whose evaluation against a device failed (unknown attribute, wrong type, ...).

    ``detail`` is the CEL error alone, in cel-go's words where they differ from cel-python's (a map
    without the key: ``no such key: <key>``), as upstream's allocator wraps it (``CEL runtime error:
    <detail>``, allocator_stable.go ``selectorsMatch``)."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message


# --- Kubernetes CEL values -------------------------------------------------------------------


class Quantity:
    """A ``k8s.io/apimachinery`` Quantity as a CEL value (``kubernetes.Quantity``)."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Quantity({self.value})"


_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


_LOOSE_CORE = re.compile(r"^(\d+)(?:\.(\d+))?(?:\.(\d+))?([-+].*)?$")


class Semver:
    """A semantic version as a CEL value (``kubernetes.Semver``), compared by semver precedence."""

    __slots__ = ("major", "minor", "patch", "pre", "text")

    def __init__(self, text: str, major: int, minor: int, patch: int, pre: tuple[str, ...]) -> None:
        self.text, self.major, self.minor, self.patch, self.pre = text, major, minor, patch, pre

    def compare(self, other: Semver) -> int:
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return -1 if mine < theirs else 1
        return _compare_pre(self.pre, other.pre)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __repr__(self) -> str:
        return f"Semver({self.text!r})"


def _compare_pre(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    if a == b:
        return 0
    if not a or not b:  # a version without pre-release ranks above one with
        return 1 if not a else -1
    for x, y in zip(a, b, strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit() != y.isdigit():  # numeric identifiers rank below alphanumeric ones
            return -1 if x.isdigit() else 1
        return -1 if x < y else 1
    return -1 if len(a) < len(b) else 1


def parse_semver(text: str, normalize: bool = False) -> Semver:
    """Parse a strict semantic version (blang/semver ``Parse``); ``normalize`` accepts ``v1``, ``1.2``
    and leading zeros, as ``semver(string, true)`` does."""
    original = text
    if normalize:
        text = text.removeprefix("v")
        loose = _LOOSE_CORE.match(text)
        if loose:
            core = [str(int(part)) if part else "0" for part in loose.group(1, 2, 3)]
            text = ".".join(core) + (loose.group(4) or "")
    match = _SEMVER.match(text)
    if not match:
        raise ValueError(f"invalid semver: {original!r}")
    pre = tuple(match.group(4).split(".")) if match.group(4) else ()
    return Semver(original, int(match.group(1)), int(match.group(2)), int(match.group(3)), pre)


def parse_k8s_quantity(text: str) -> Fraction:
    """A Kubernetes quantity string, exactly; gpufleet's extra byte units are refused."""
    if _GPUFLEET_ONLY_SUFFIX.search(text.strip()):
        raise QuantityError(f"quantities must match the regular expression; {text!r} is not a quantity")
    return parse_quantity(text)


# --- the extension functions -------------------------------------------------------------------


def _error(message: str) -> CELEvalError:
    return CELEvalError(message, ValueError, None)


def _f_quantity(text: object) -> Quantity | CELEvalError:
    if not isinstance(text, str):
        return _error("no such overload: quantity")
    try:
        return Quantity(parse_k8s_quantity(text))
    except QuantityError as err:
        return _error(str(err))


def _f_is_quantity(text: object) -> ct.BoolType | CELEvalError:
    if not isinstance(text, str):
        return _error("no such overload: isQuantity")
    try:
        parse_k8s_quantity(text)
    except QuantityError:
        return ct.BoolType(False)
    return ct.BoolType(True)


def _f_semver(text: object, normalize: object = False) -> Semver | CELEvalError:
    if not isinstance(text, str) or not isinstance(normalize, bool | ct.BoolType):
        return _error("no such overload: semver")
    try:
        return parse_semver(text, bool(normalize))
    except ValueError as err:
        return _error(f"could not parse {text!r} as semver: {err}")


def _f_is_semver(text: object, normalize: object = False) -> ct.BoolType | CELEvalError:
    if not isinstance(text, str) or not isinstance(normalize, bool | ct.BoolType):
        return _error("no such overload: isSemver")
    try:
        parse_semver(text, bool(normalize))
    except ValueError:
        return ct.BoolType(False)
    return ct.BoolType(True)


def _compare(name: str, a: object, b: object) -> int | CELEvalError:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return (a.value > b.value) - (a.value < b.value)
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.compare(b)
    return _error(f"no such overload: {_type_name(a)}.{name}({_type_name(b)})")


def _type_name(value: object) -> str:
    if isinstance(value, Quantity):
        return "quantity"
    if isinstance(value, Semver):
        return "semver"
    return type(value).__name__.removesuffix("Type").lower()


def _f_compare_to(a: object, b: object) -> ct.IntType | CELEvalError:
    result = _compare("compareTo", a, b)
    return result if isinstance(result, CELEvalError) else ct.IntType(result)


def _f_is_less_than(a: object, b: object) -> ct.BoolType | CELEvalError:
    result = _compare("isLessThan", a, b)
    return result if isinstance(result, CELEvalError) else ct.BoolType(result < 0)


def _f_is_greater_than(a: object, b: object) -> ct.BoolType | CELEvalError:
    result = _compare("isGreaterThan", a, b)
    return result if isinstance(result, CELEvalError) else ct.BoolType(result > 0)


def _quantity_method(name: str, value: object) -> Quantity | CELEvalError:
    if isinstance(value, Quantity):
        return value
    return _error(f"no such overload: {_type_name(value)}.{name}()")


def _f_sign(q: object) -> ct.IntType | CELEvalError:
    value = _quantity_method("sign", q)
    if isinstance(value, CELEvalError):
        return value
    return ct.IntType((value.value > 0) - (value.value < 0))


def _f_is_integer(q: object) -> ct.BoolType | CELEvalError:
    value = _quantity_method("isInteger", q)
    if isinstance(value, CELEvalError):
        return value
    v = value.value
    return ct.BoolType(v.denominator == 1 and _INT64_MIN <= v <= _INT64_MAX)


def _f_as_integer(q: object) -> ct.IntType | CELEvalError:
    value = _quantity_method("asInteger", q)
    if isinstance(value, CELEvalError):
        return value
    v = value.value
    if v.denominator != 1 or not _INT64_MIN <= v <= _INT64_MAX:
        return _error("cannot convert value to integer")
    return ct.IntType(int(v))


def _f_as_approximate_float(q: object) -> ct.DoubleType | CELEvalError:
    value = _quantity_method("asApproximateFloat", q)
    if isinstance(value, CELEvalError):
        return value
    return ct.DoubleType(float(value.value))


def _arith(name: str, q: object, other: object, sign: int) -> Quantity | CELEvalError:
    value = _quantity_method(name, q)
    if isinstance(value, CELEvalError):
        return value
    if isinstance(other, Quantity):
        return Quantity(value.value + sign * other.value)
    if isinstance(other, int) and not isinstance(other, bool):
        return Quantity(value.value + sign * Fraction(int(other)))
    return _error(f"no such overload: quantity.{name}({_type_name(other)})")


def _f_add(q: object, other: object) -> Quantity | CELEvalError:
    return _arith("add", q, other, 1)


def _f_sub(q: object, other: object) -> Quantity | CELEvalError:
    return _arith("sub", q, other, -1)


def _semver_part(name: str) -> Callable[[object], ct.IntType | CELEvalError]:
    def part(v: object) -> ct.IntType | CELEvalError:
        if not isinstance(v, Semver):
            return _error(f"no such overload: {_type_name(v)}.{name}()")
        return ct.IntType(getattr(v, name))

    return part


_EXTENSIONS: dict[str, Callable[..., Any]] = {
    "quantity": _f_quantity,
    "isQuantity": _f_is_quantity,
    "sign": _f_sign,
    "isInteger": _f_is_integer,
    "asInteger": _f_as_integer,
    "asApproximateFloat": _f_as_approximate_float,
    "add": _f_add,
    "sub": _f_sub,
    "semver": _f_semver,
    "isSemver": _f_is_semver,
    "major": _semver_part("major"),
    "minor": _semver_part("minor"),
    "patch": _semver_part("patch"),
    "compareTo": _f_compare_to,
    "isLessThan": _f_is_less_than,
    "isGreaterThan": _f_is_greater_than,
}

#: Macros celpy expands itself; the first argument of the comprehensions names a variable.
_COMPREHENSIONS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_KNOWN_FUNCTIONS = frozenset(base_functions) | frozenset(_EXTENSIONS) | _COMPREHENSIONS | {"has", "dyn"}
_VARIABLES = frozenset({"device"})


# --- compiling ---------------------------------------------------------------------------------


def _children_trees(tree: lark.Tree[Any]) -> Iterator[lark.Tree[Any]]:
    for child in tree.children:
        if isinstance(child, lark.Tree):
            yield child


def _exprlist(tree: lark.Tree[Any]) -> list[lark.Tree[Any]]:
    for child in _children_trees(tree):
        if child.data == "exprlist":
            return list(_children_trees(child))
    return []


def _single_ident(expr: lark.Tree[Any]) -> str | None:
    """The identifier an expression consists of, if it is a bare identifier."""
    node = expr
    while True:
        kids = list(_children_trees(node))
        if node.data == "ident":
            token = node.children[0]
            return str(token)
        if len(kids) != 1 or len(node.children) != 1:
            return None
        node = kids[0]


def _wrap(meta: Any, chain: tuple[str, ...], leaf: lark.Tree[Any]) -> lark.Tree[Any]:
    node = leaf
    for data in reversed(chain):
        node = lark.Tree(data, [node], meta)
    return node


_EXPR_TO_MEMBER = (
    "expr",
    "conditionalor",
    "conditionaland",
    "relation",
    "addition",
    "multiplication",
    "unary",
)


def _rewrite_bind(tree: lark.Tree[Any]) -> None:
    """Rewrite ``cel.bind(x, init, body)`` as ``[init].map(x, body)[0]`` (same value, same errors)."""
    for node in _children_trees(tree):
        _rewrite_bind(node)
    if tree.data != "member_dot_arg" or str(tree.children[1]) != "bind":
        return
    target = tree.children[0]
    if not (isinstance(target, lark.Tree) and _single_ident(target) == "cel"):
        return
    args = _exprlist(tree)
    if len(args) != 3 or _single_ident(args[0]) is None:
        raise SelectorCompileError("cel.bind() takes an identifier, an initial value and an expression")
    meta = tree.meta
    var, init, body = args
    list_lit = lark.Tree(
        "member",
        [lark.Tree("primary", [lark.Tree("list_lit", [lark.Tree("exprlist", [init], meta)], meta)], meta)],
        meta,
    )
    mapped = lark.Tree(
        "member_dot_arg",
        [list_lit, lark.Token("IDENT", "map"), lark.Tree("exprlist", [var, body], meta)],
        meta,
    )
    zero = _wrap(
        meta,
        (*_EXPR_TO_MEMBER, "member", "primary"),
        lark.Tree("literal", [lark.Token("INT_LIT", "0")], meta),
    )
    tree.data = "member_index"
    tree.children = [lark.Tree("member", [mapped], meta), zero]


def _check_names(tree: lark.Tree[Any], bound: frozenset[str], expression: str) -> None:
    if tree.data == "ident":
        name = str(tree.children[0])
        if name not in bound and name not in _VARIABLES:
            raise SelectorCompileError(f"undeclared reference to {name!r} in selector {expression!r}")
        return
    if tree.data in ("ident_arg", "member_dot_arg", "dot_ident_arg"):
        token_index = 1 if tree.data == "member_dot_arg" else 0
        name = str(tree.children[token_index])
        if name not in _KNOWN_FUNCTIONS:
            raise SelectorCompileError(
                f"undeclared reference to function {name!r} in selector {expression!r}"
            )
        if tree.data == "member_dot_arg" and name in _COMPREHENSIONS:
            target = tree.children[0]
            assert isinstance(target, lark.Tree)
            _check_names(target, bound, expression)
            args = _exprlist(tree)
            var = _single_ident(args[0]) if args else None
            if var is None or len(args) not in (2, 3):
                raise SelectorCompileError(f"{name}() needs a variable name first in selector {expression!r}")
            for arg in args[1:]:
                _check_names(arg, bound | {var}, expression)
            return
        if tree.data == "ident_arg" and name == "has":
            for arg in _exprlist(tree):  # has(x.f): x.f is a field test, not an evaluation
                _check_names(arg, bound, expression)
            return
    if tree.data == "member_dot":  # a field selection: only the target holds references
        target = tree.children[0]
        assert isinstance(target, lark.Tree)
        _check_names(target, bound, expression)
        return
    for child in _children_trees(tree):
        _check_names(child, bound, expression)


@dataclass(frozen=True, eq=False)
class CompiledSelector:
    """A compiled selector; :meth:`matches` evaluates it against one device."""

    expression: str
    _program: celpy.Runner

    def matches(self, device: Device, driver: str) -> bool:
        """Whether the device satisfies the selector.

        Raises :class:`SelectorRuntimeError` when evaluation fails or does not give a bool.
        """
        try:
            result = self._program.evaluate({"device": device_variable(device, driver)})
        except CELEvalError as err:
            raise SelectorRuntimeError(
                _runtime_message(self.expression, device, err), cel_go_detail(err)
            ) from err
        except (TypeError, ValueError, ArithmeticError, AttributeError, KeyError) as err:
            raise SelectorRuntimeError(
                f"CEL runtime error: selector {self.expression!r} on device {device.name}: {err}", str(err)
            ) from err
        if not isinstance(result, bool | ct.BoolType):
            raise SelectorRuntimeError(
                f"CEL runtime error: selector {self.expression!r} on device {device.name} returned "
                f"{_type_name(result)}, not bool",
                f"CEL result of type {_type_name(result)} could not be converted to bool",
            )
        return bool(result)


_NO_SUCH_MEMBER = re.compile(r"no such member in mapping: '(?P<key>[^']*)'")


def cel_go_detail(err: CELEvalError) -> str:
    """The CEL error as cel-go words it: a map selected by a key it lacks (``m.k`` or ``m["k"]``) is
    ``no such key: k``; any other error is cel-python's text."""
    detail = str(err.args[0]) if err.args else str(err)
    member = _NO_SUCH_MEMBER.fullmatch(detail)
    if member is not None:
        return f"no such key: {member['key']}"
    if detail == "no such key" and len(err.args) > 2 and isinstance(err.args[2], tuple) and err.args[2]:
        return f"no such key: {err.args[2][0]}"
    return detail


def _runtime_message(expression: str, device: Device, err: CELEvalError) -> str:
    detail = err.args[0] if err.args else str(err)
    hint = ""
    if "no such member" in str(detail) or "no such key" in str(detail):
        hint = " (a robust selector checks for an attribute first, e.g. with has() or 'in')"
    return f"CEL runtime error: selector {expression!r} on device {device.name}: {detail}{hint}"


_ENVIRONMENT: celpy.Environment | None = None


def _environment() -> celpy.Environment:
    global _ENVIRONMENT
    if _ENVIRONMENT is None:
        _ENVIRONMENT = celpy.Environment()
    return _ENVIRONMENT


@lru_cache(maxsize=4096)
def compile_selector(expression: str) -> CompiledSelector:
    """Compile a DRA selector; raises :class:`SelectorCompileError` with the reason when it cannot."""
    if len(expression) > EXPRESSION_MAX_LENGTH:
        raise SelectorCompileError(
            f"selector is {len(expression)} characters long; the limit is {EXPRESSION_MAX_LENGTH}"
        )
    if not expression.strip():
        raise SelectorCompileError("selector expression is empty")
    env = _environment()
    try:
        tree = env.compile(expression)
    except CELParseError as err:
        raise SelectorCompileError(f"CEL syntax error in selector {expression!r}:\n{err}") from err
    _rewrite_bind(tree)
    _check_names(tree, frozenset(), expression)
    return CompiledSelector(expression, env.program(tree, functions=_EXTENSIONS))


# --- the device variable -------------------------------------------------------------------------


class _DomainMap(ct.MapType):
    """``device.attributes`` / ``device.capacity``: an unknown domain is an empty map."""

    def __missing__(self, key: Any) -> ct.MapType:
        return ct.MapType({})


def _attribute_value(value: AttributeValue) -> Any:
    if isinstance(value, bool):
        return ct.BoolType(value)
    if isinstance(value, int):
        return ct.IntType(value)
    if isinstance(value, VersionValue):
        return parse_semver(value.text)
    return ct.StringType(value)


def _grouped(values: Mapping[str, Any], driver: str, convert: Callable[[Any], Any]) -> _DomainMap:
    domains: dict[str, dict[ct.StringType, Any]] = {}
    for name, value in values.items():
        domain, ident = split_qualified_name(name, driver)
        domains.setdefault(domain, {})[ct.StringType(ident)] = convert(value)
    return _DomainMap({ct.StringType(d): ct.MapType(v) for d, v in domains.items()})


def device_variable(device: Device, driver: str) -> ct.MapType:
    """The ``device`` variable a selector sees for ``device`` published by ``driver``."""
    return ct.MapType(
        {
            ct.StringType("driver"): ct.StringType(driver),
            ct.StringType("attributes"): _grouped(device.attributes, driver, _attribute_value),
            ct.StringType("capacity"): _grouped(device.capacity, driver, lambda v: Quantity(Fraction(v))),
            ct.StringType("allowMultipleAllocations"): ct.BoolType(False),
        }
    )


def validate_selector(expression: str) -> str | None:
    """The compile error of ``expression``, or ``None`` when it compiles (for manifest checks)."""
    try:
        compile_selector(expression)
    except SelectorCompileError as err:
        return str(err)
    return None
