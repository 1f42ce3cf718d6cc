"""Random durations: a fixed duration, a lognormal ``{median, p95}`` or a uniform ``{min, max}``.

Source: DESIGN.md (``NodePool.spec.provisioning`` stages and the ``gpufleet.io/warmup``
annotation take "a duration, or ``{median, p95}`` (lognormal), or ``{min, max}``
(uniform)"). A lognormal is fixed by its median and 95th percentile: ``mu = ln(median)``
and ``sigma = (ln(p95) - ln(median)) / z``, ``z`` the standard normal 0.95 quantile.
Durations are written in Go syntax (``"90s"``) or as numbers of seconds and read with
``gpufleet.model.quantity.parse_duration``.

A distribution that can take one value only (``{min: x, max: x}``, ``{median: x, p95: x}``)
is read as the fixed duration ``x``. Sampling a fixed duration draws nothing from the
generator; a lognormal or a uniform draws exactly one value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from gpufleet.model.quantity import parse_duration

#: The standard normal distribution's 0.95 quantile (Φ⁻¹(0.95)).
Z_95 = 1.6448536269514722

_SHAPES = "a duration ('90s' or seconds) or a mapping {median, p95} or {min, max}"


@dataclass(frozen=True)
class Fixed:
    """Always ``seconds``."""

    seconds: float

    def __post_init__(self) -> None:
        _check_non_negative("duration", self.seconds)

    def sample(self, rng: np.random.Generator) -> float:
        return self.seconds

    def mean(self) -> float:
        return self.seconds


@dataclass(frozen=True)
class LogNormal:
    """Lognormal with median ``median_s`` and 95th percentile ``p95_s`` (``0 < median_s <= p95_s``)."""

    median_s: float
    p95_s: float

    def __post_init__(self) -> None:
        _check_non_negative("median", self.median_s)
        _check_non_negative("p95", self.p95_s)
        if self.median_s == 0:
            raise ValueError("median must be greater than 0 for a lognormal {median, p95}")
        if self.p95_s < self.median_s:
            raise ValueError(f"p95 ({self.p95_s:g}s) must not be less than median ({self.median_s:g}s)")

    @property
    def mu(self) -> float:
        return math.log(self.median_s)

    @property
    def sigma(self) -> float:
        return (math.log(self.p95_s) - math.log(self.median_s)) / Z_95

    def sample(self, rng: np.random.Generator) -> float:
        # median * exp(sigma * Z) is exp(mu + sigma * Z), written so that sigma = 0 gives the median exactly.
        return self.median_s * math.exp(self.sigma * float(rng.standard_normal()))

    def mean(self) -> float:
        return self.median_s * math.exp(self.sigma**2 / 2)


@dataclass(frozen=True)
class Uniform:
    """Uniform on ``[min_s, max_s]``."""

    min_s: float
    max_s: float

    def __post_init__(self) -> None:
        _check_non_negative("min", self.min_s)
        _check_non_negative("max", self.max_s)
        if self.max_s < self.min_s:
            raise ValueError(f"min ({self.min_s:g}s) must not be greater than max ({self.max_s:g}s)")

    def sample(self, rng: np.random.Generator) -> float:
        return float(rng.uniform(self.min_s, self.max_s))

    def mean(self) -> float:
        return (self.min_s + self.max_s) / 2


DurationSpec = Fixed | LogNormal | Uniform


def parse_duration_spec(value: object) -> DurationSpec:
    """Read a YAML value: ``"90s"``, ``90``, ``{median: 2m, p95: 5m}`` or ``{min: 1m, max: 3m}``.

    Raises ``ValueError`` saying what is wrong (an unknown or missing key, a value that is not
    a duration, a negative duration, ``p95 < median``, ``min > max``).
    """
    if not isinstance(value, Mapping):
        try:
            return Fixed(parse_duration(value))
        except ValueError as exc:
            raise ValueError(f"{exc}; expected {_SHAPES}") from None
    keys = set(value)
    if keys == {"median", "p95"}:
        median, p95 = _field(value, "median"), _field(value, "p95")
        return Fixed(median) if median == p95 else LogNormal(median, p95)
    if keys == {"min", "max"}:
        low, high = _field(value, "min"), _field(value, "max")
        return Fixed(low) if low == high else Uniform(low, high)
    unknown = sorted(str(key) for key in keys - {"median", "p95", "min", "max"})
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}; expected {_SHAPES}")
    raise ValueError(f"got fields {{{', '.join(sorted(map(str, keys)))}}}; expected {_SHAPES}")


def _field(value: Mapping[object, object], key: str) -> float:
    try:
        return parse_duration(value[key])
    except ValueError as exc:
        raise ValueError(f"{key}: {exc}") from None


def _check_non_negative(name: str, seconds: float) -> None:
    if not math.isfinite(seconds):
        raise ValueError(f"{name} must be a finite duration: {seconds!r}")
    if seconds < 0:
        raise ValueError(f"{name} must not be negative: {seconds!r}")
