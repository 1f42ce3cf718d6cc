"""Kubernetes quantity, duration and bandwidth parsing.

Mirrors ``k8s.io/apimachinery/pkg/api/resource`` (binary suffixes Ki..Ei, decimal suffixes
n, u, m, k, M, G, T, P, E, and exponents such as ``1e3``) and Go's ``time.ParseDuration``
(``90s``, ``1h30m``, ``250ms``). gpufleet also accepts decimal byte units (``140GB`` =
140×10⁹ bytes, ``MB``, ``TB``) and bandwidths written as a size per second (``10GB/s``).
"""

from __future__ import annotations

import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
#: Decimal byte units accepted beside Kubernetes syntax (``140GB``).
_BYTE_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15}

_QUANTITY = re.compile(
    r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|KB|MB|GB|TB|PB|B|[numkMGTPE]))?$"
)
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|ms|s|m|h)")
_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


class QuantityError(ValueError):
    """A quantity, duration or bandwidth that does not parse."""


def parse_quantity(value: object) -> Fraction:
    """Parse a Kubernetes quantity (``"500m"``, ``"64Gi"``, ``2``, ``"140GB"``) exactly."""
    if isinstance(value, bool):
        raise QuantityError(f"quantities must be numbers or strings, not {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value))
    if not isinstance(value, str):
        raise QuantityError(f"quantities must be numbers or strings, not {value!r}")
    text = value.strip()
    match = _QUANTITY.match(text)
    if not match:
        raise QuantityError(
            "quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {value!r}"
        )
    number = Fraction(match.group(1))
    exponent, suffix = match.group(2), match.group(3)
    if exponent:
        return number * Fraction(10) ** int(exponent[1:])
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _BYTE_UNITS:
        return number * _BYTE_UNITS[suffix]
    return number * _DECIMAL[suffix or ""]


def parse_duration(value: object) -> float:
    """Parse a Go duration (``"90s"``, ``"1h30m"``) or a number of seconds into seconds."""
    if isinstance(value, bool):
        raise QuantityError(f"durations must be strings such as '90s' or numbers of seconds, not {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise QuantityError(f"durations must not be negative: {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise QuantityError(f"durations must be strings such as '90s', not {value!r}")
    text = value.strip()
    if text in ("0", "0s"):
        return 0.0
    pos, total = 0, 0.0
    for part in _DURATION_PART.finditer(text):
        if part.start() != pos:
            break
        total += float(part.group(1)) * _DURATION_UNITS[part.group(2)]
        pos = part.end()
    if pos != len(text) or not text:
        raise QuantityError(f"invalid duration {value!r} (use Go syntax such as '90s', '20m', '2h')")
    return total


def parse_window(text: str) -> float:
    """A window length: Go duration syntax (``90m``, ``36h``), plus days as Prometheus writes them
    (``7d``, ``1d12h``)."""
    match = re.fullmatch(r"(\d+)d(.*)", text.strip())
    if match is None:
        return parse_duration(text)
    return int(match.group(1)) * 86400 + (parse_duration(match.group(2)) if match.group(2) else 0.0)


def parse_bandwidth(value: object) -> float:
    """Parse a bandwidth written as a size per second (``"10GB/s"``, ``"500Mi/s"``) into bytes/s."""
    if not isinstance(value, str) or not value.strip().endswith("/s"):
        raise QuantityError(f"a bandwidth is a size per second such as '10GB/s', not {value!r}")
    rate = parse_quantity(value.strip()[:-2])
    if rate <= 0:
        raise QuantityError(f"a bandwidth must be positive: {value!r}")
    return float(rate)
