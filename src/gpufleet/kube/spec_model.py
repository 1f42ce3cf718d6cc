"""Strict pydantic models for objects the Kubernetes schemas do not describe.

gpufleet's kinds, scheduler-plugins' PodGroup, ``KubeSchedulerConfiguration`` and plugin
args are read the way the API server and kube-scheduler decode strictly
(``runtime.NewStrictDecodingError``): camelCase fields, an unknown field is an error, and
values are not coerced (``"3"`` is not a number). Quantities, durations and bandwidths use
``gpufleet.model.quantity``. Errors become field-path problem lines worded like the schema
checker's.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from gpufleet.kube.problems import Reporter, dotted, render, required
from gpufleet.model.quantity import parse_bandwidth, parse_duration


class SpecModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, alias_generator=to_camel, frozen=True)

    def given(self) -> dict[str, Any]:
        """The fields given (not null), by their names in the manifest, as plain data."""
        return self.model_dump(by_alias=True, exclude_none=True)


Duration = Annotated[float, BeforeValidator(parse_duration)]
PositiveDuration = Annotated[float, BeforeValidator(parse_duration), Field(gt=0)]
Bandwidth = Annotated[float, BeforeValidator(parse_bandwidth)]
NonNegativeInt = Annotated[int, Field(ge=0)]
Fraction01 = Annotated[float, Field(ge=0, le=1)]


M = TypeVar("M", bound=BaseModel)
#: Rounds of dropping fields in error before giving up on reading an object.
_MAX_PRUNES = 5

_NOUNS = {
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def validate(model: type[M], data: object, report: Reporter, path: str = "") -> M | None:
    """``model`` read from ``data``, after reporting every error under ``path``.

    Fields in error are dropped and the rest read again, so that the checks that follow
    still see what was right; None when that is not possible (a required field is missing).
    """
    for _ in range(_MAX_PRUNES):
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            for field, message in describe(exc):
                report.error(dotted([path, field]), message)
                report.settle(dotted([path, field]))
            data = _pruned(data, [error["loc"] for error in exc.errors()])
            if data is None:
                return None
    return None


def _pruned(data: object, locations: list[tuple[int | str, ...]]) -> object:
    """A copy of ``data`` without the values at ``locations``; None if that leaves nothing to read.

    A missing field takes the object that lacks it along.
    """
    if not isinstance(data, dict):
        return None
    pruned: dict[str, Any] = deepcopy(data)

    # Later list items first, so that dropping one does not move the others.
    def order(loc: tuple[int | str, ...]) -> list[tuple[bool, int, str]]:
        return [(isinstance(p, str), p if isinstance(p, int) else 0, str(p)) for p in loc]

    for loc in sorted(locations, key=order, reverse=True):
        if not _drop(pruned, loc):
            return None
    return pruned


def _drop(data: dict[str, Any], loc: tuple[int | str, ...]) -> bool:
    while loc:
        parent: Any = data
        for part in loc[:-1]:
            parent = parent[part] if _has(parent, part) else None
        if _has(parent, loc[-1]):
            del parent[loc[-1]]
            return True
        loc = loc[:-1]
    return False


def _has(container: object, key: int | str) -> bool:
    if isinstance(container, dict):
        return key in container
    return isinstance(container, list) and isinstance(key, int) and 0 <= key < len(container)


def describe(exc: ValidationError) -> list[tuple[str, str]]:
    """``(field path, message)`` for each error of ``exc``."""
    return [(dotted(error["loc"]), _message(error)) for error in exc.errors(include_url=False)]


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"Additional properties are not allowed ({error['loc'][-1]!r} was unexpected)"
    if kind == "missing":
        return required()
    if kind == "value_error":  # QuantityError and gpufleet's own checks name the value themselves
        return str(error["ctx"]["error"])
    if kind in _NOUNS:
        return f"Invalid value: {render(error['input'])}: must be {_NOUNS[kind]}"
    return f"Invalid value: {render(error['input'])}: {error['msg'].replace('Input should be', 'must be')}"
