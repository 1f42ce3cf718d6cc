"""``gpufleet.io/*`` annotations: a pod's simulated behaviour (DESIGN.md, "Annotations").

``submit-at``, ``duration`` and ``checkpoint-interval`` become ``Behavior``; the others are
validated (sizes are quantities, times are Go durations, flags are ``"true"``/``"false"``,
``warmup`` is a duration or a ``{median, p95}`` / ``{min, max}`` mapping written as YAML or
JSON) and reported as not modelled yet. An unknown ``gpufleet.io/`` key is an error: it is
most likely a typo, and a typo would otherwise silently change the simulation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import yaml
from pydantic import ValidationError

from gpufleet.kube.problems import Reporter, invalid, join, unsupported
from gpufleet.kube.spec_model import Distribution, describe
from gpufleet.model.pod import Behavior
from gpufleet.model.quantity import parse_duration, parse_quantity

PREFIX = "gpufleet.io/"
SUBMIT_AT = PREFIX + "submit-at"
DURATION = PREFIX + "duration"
CHECKPOINT_INTERVAL = PREFIX + "checkpoint-interval"


def _positive_duration(text: str) -> float:
    seconds = parse_duration(text)
    if seconds <= 0:
        raise ValueError(invalid(text, "must be greater than 0"))
    return seconds


def _size(text: str) -> float:
    size = parse_quantity(text)
    if size < 0:
        raise ValueError(invalid(text, "must be greater than or equal to 0"))
    return float(size)


def _flag(text: str) -> bool:
    if text not in ("true", "false"):
        raise ValueError(unsupported(text, ("true", "false")))
    return text == "true"


def _list_name(text: str) -> str:
    if not text.strip():
        raise ValueError(invalid(text, "must name a list (e.g. train:jobs)"))
    return text


def _warmup(text: str) -> Distribution:
    if ":" in text:  # a mapping, in YAML or JSON; a Go duration never has a colon
        try:
            return Distribution.model_validate(yaml.safe_load(text))
        except yaml.YAMLError as exc:
            raise ValueError(invalid(text, f"not a YAML or JSON mapping: {exc}")) from None
    return Distribution.model_validate(text)


_PARSERS: dict[str, Callable[[str], object]] = {
    SUBMIT_AT: parse_duration,
    DURATION: parse_duration,
    CHECKPOINT_INTERVAL: _positive_duration,
    PREFIX + "image-size": _size,
    PREFIX + "model-size": _size,
    PREFIX + "gpu-memory": _size,
    PREFIX + "warmup": _warmup,
    PREFIX + "checkpoint-on-sigterm": _flag,
    PREFIX + "requeue-on-sigterm": _flag,
    PREFIX + "time-limit": _positive_duration,
    PREFIX + "consumes": _list_name,
}
_MODELLED = frozenset({SUBMIT_AT, DURATION, CHECKPOINT_INTERVAL})
#: On a workload's own metadata (not its pod template) only the creation time applies.
WORKLOAD_KEYS = frozenset({SUBMIT_AT})
#: Objects that are not pods and not workloads take none.
NO_KEYS: frozenset[str] = frozenset()


def read(
    annotations: Mapping[str, str] | None, report: Reporter, allowed: frozenset[str] | None = None
) -> dict[str, object]:
    """Parsed values of the ``gpufleet.io/`` annotations (``allowed``: the keys valid here; all by default).

    ``report`` is positioned at the object's ``metadata``.
    """
    values: dict[str, object] = {}
    for key, text in (annotations or {}).items():
        if not key.startswith(PREFIX):
            continue
        path = f"annotations.{key}"
        if key not in _PARSERS:
            known = ", ".join(sorted(_PARSERS))
            report.error(path, f"unknown gpufleet annotation (known: {known})")
            continue
        if allowed is not None and key not in allowed:
            report.error(path, "this annotation belongs on a pod or a pod template (spec.template.metadata)")
            continue
        try:
            values[key] = _PARSERS[key](text)
        except ValidationError as exc:
            for field, message in describe(exc):
                report.error(join(path, field), message)
            continue
        except ValueError as exc:
            report.error(path, str(exc))
            continue
        if key not in _MODELLED:
            report.not_modelled(path, yet=True)
    return values


def behavior(values: Mapping[str, object]) -> Behavior:
    """A pod's ``Behavior`` from the values ``read`` returned."""
    return Behavior(
        submit_at_s=seconds(values, SUBMIT_AT) or 0.0,
        duration_s=seconds(values, DURATION),
        checkpoint_interval_s=seconds(values, CHECKPOINT_INTERVAL),
    )


def seconds(values: Mapping[str, object], key: str) -> float | None:
    """The duration ``read`` parsed for ``key``, if any."""
    value = values.get(key)
    return value if isinstance(value, float) else None
