"""Kubernetes quantity, duration and bandwidth parsing.

Mirrors ``k8s.io/apimachinery/pkg/api/resource`` (binary suffixes Ki..Ei, decimal suffixes
n, u, m, k, M, G, T, P, E, and exponents such as ``1e3``) and Go's ``time.ParseDuration``
(``90s``, ``1h30m``, ``250ms``). gpufleet also accepts decimal byte units (``140GB`` =
140×10⁹ bytes, ``MB``, ``TB``) and bandwidths written as a size per second (``10GB/s``).

Bounds: a duration is at most Go's largest (``math.MaxInt64`` nanoseconds, about 292 years), as
``time.ParseDuration`` refuses longer ones, and never NaN or infinite; a written one is read as Go reads
it, to the nanosecond, its overflow checks included. A quantity has at most
``MAX_DIGITS`` characters of number and an exponent within ±``MAX_EXPONENT``
(Kubernetes takes any int32 exponent into its arbitrary-precision decimal; no resource comes near
10^±100), so that parsing one costs little whatever is written.
"""

from __future__ import annotations

import math
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
    r"^([+-]?(?:\d++(?:\.\d*+)?|\.\d++))(?:([eE][+-]?\d++)|(Ki|Mi|Gi|Ti|Pi|Ei|KB|MB|GB|TB|PB|B|[numkMGTPE]))?$"
)
#: The longest duration Go represents (``time.Duration`` is int64 nanoseconds).
MAX_DURATION_S = (2**63 - 1) / 1e9
MAX_DIGITS = 100
MAX_EXPONENT = 100
#: One term of a Go duration: its whole digits, its fraction's, and its unit (what follows up to the next
#: digit or point); the match is never absent, possibly empty.
_DURATION_TERM = re.compile(r"([0-9]*+)(?:\.([0-9]*+))?([^0-9.]*+)")
#: ``time``'s ``unitMap``, in nanoseconds; microseconds three ways (``us``, U+00B5, U+03BC).
_UNIT_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_INT64_SPAN = 1 << 63


class QuantityError(ValueError):
    """A quantity, duration or bandwidth that does not parse."""


def parse_quantity(value: object) -> Fraction:
    """Parse a Kubernetes quantity (``"500m"``, ``"64Gi"``, ``2``, ``"140GB"``) exactly."""
    if isinstance(value, bool):
        raise QuantityError(f"quantities must be numbers or strings, not {value!r}")
    if isinstance(value, int):
        if abs(value) >= 10**MAX_DIGITS:
            raise QuantityError(f"quantities have at most {MAX_DIGITS} digits")
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"quantities must be finite numbers, not {value!r}")
        value = str(value)
    if not isinstance(value, str):
        raise QuantityError(f"quantities must be numbers or strings, not {value!r}")
    text = value.strip()
    match = _QUANTITY.match(text)
    if not match:
        raise QuantityError(
            "quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {_cut(value)!r}"
        )
    if len(match.group(1)) > MAX_DIGITS:
        raise QuantityError(f"quantities have at most {MAX_DIGITS} digits: {_cut(value)!r}")
    number = Fraction(match.group(1))
    exponent, suffix = match.group(2), match.group(3)
    if exponent:
        if len(exponent) > 5 or abs(int(exponent[1:])) > MAX_EXPONENT:
            raise QuantityError(f"quantity exponents are within ±{MAX_EXPONENT}: {_cut(value)!r}")
        return number * Fraction(10) ** int(exponent[1:])
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _BYTE_UNITS:
        return number * _BYTE_UNITS[suffix]
    return number * _DECIMAL[suffix or ""]


def parse_duration(value: object) -> float:
    """Parse a Go duration (``"90s"``, ``"1h30m"``) or a number of seconds into seconds; never negative
    (a sign is refused)."""
    if isinstance(value, bool):
        raise QuantityError(f"durations must be strings such as '90s' or numbers of seconds, not {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise QuantityError(f"durations must not be negative: {value!r}")
        return _bounded(float(value) if value <= MAX_DURATION_S else math.inf, value)
    if not isinstance(value, str):
        raise QuantityError(f"durations must be strings such as '90s', not {value!r}")
    text = value.strip()
    if text[:1] in ("+", "-"):
        raise QuantityError(_invalid_duration(value))
    return _go_nanoseconds(text, value) / 1e9


def parse_go_duration(text: str) -> float | None:
    """``time.ParseDuration``: a signed Go duration in seconds, or None where Go returns an error."""
    nanoseconds = parse_go_duration_ns(text)
    return None if nanoseconds is None else nanoseconds / 1e9


def parse_go_duration_ns(text: str) -> int | None:
    """``time.ParseDuration`` exactly, in nanoseconds, or None where Go returns an error (any space, a
    bare number but ``0``, a unit Go does not know, beyond an int64 of nanoseconds)."""
    try:
        return _go_nanoseconds(text, text)
    except QuantityError:
        return None


def _go_nanoseconds(text: str, value: object) -> int:
    """``time.ParseDuration`` to the nanosecond, its overflow checks and its truncation of a fraction
    included (``leadingInt``, ``leadingFraction``); ``value`` is what an error quotes."""
    negative = text[:1] == "-"
    body = text[1:] if text[:1] in ("+", "-") else text
    if body == "0":
        return 0
    if not body:
        raise QuantityError(_invalid_duration(value))
    total, pos = 0, 0
    while pos < len(body):
        term = _DURATION_TERM.match(body, pos)
        assert term is not None  # every part of the pattern may be empty
        whole, fraction, unit = term.groups()
        pos = term.end()
        if (not whole and not fraction) or unit not in _UNIT_NS:
            raise QuantityError(_invalid_duration(value))
        digits = whole.lstrip("0")
        if len(digits) > 19 or int(digits or 0) > _INT64_SPAN:
            raise QuantityError(_too_long(value))
        scale = _UNIT_NS[unit]
        if int(digits or 0) > _INT64_SPAN // scale:
            raise QuantityError(_too_long(value))
        nanoseconds = int(digits or 0) * scale
        if fraction:
            kept, divisor = _leading_fraction(fraction)
            nanoseconds += int(kept * (scale / divisor))
        total += nanoseconds
        if nanoseconds > _INT64_SPAN or total > _INT64_SPAN:
            raise QuantityError(_too_long(value))
    if negative:
        return -total
    if total >= _INT64_SPAN:
        raise QuantityError(_too_long(value))
    return total


def _leading_fraction(digits: str) -> tuple[int, float]:
    """``leadingFraction``: the fraction's digits as an integer while it stays within an int64 (the rest
    ignored), and the power of ten (a float, as Go keeps it) that divides it."""
    kept, scale = 0, 1.0
    for char in digits:
        if kept > (_INT64_SPAN - 1) // 10:
            break
        longer = kept * 10 + int(char)
        if longer > _INT64_SPAN:
            break
        kept, scale = longer, scale * 10
    return kept, scale


def _invalid_duration(value: object) -> str:
    return f"invalid duration {_cut(value)!r} (use Go syntax such as '90s', '20m', '2h')"


def _too_long(value: object) -> str:
    return f"durations are at most 2562047h47m16s (Go's largest): {_cut(value)!r}"


_GO_UNITS = ((3600.0, "h"), (60.0, "m"))


def go_duration(seconds: float) -> str:
    """``time.Duration.String()`` to the nanosecond: ``0s``, ``500ms``, ``2.5s``, ``1m30s``, ``1h0m0s``,
    ``-2s``."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    if ns < 0:
        return "-" + go_duration(-seconds)
    if ns < 1_000_000_000:
        for scale, unit in ((1_000_000, "ms"), (1_000, "µs"), (1, "ns")):
            if ns >= scale:
                return f"{_go_decimal(ns, scale)}{unit}"
    out, rest = "", ns
    for scale_s, unit in _GO_UNITS:
        scale = int(scale_s * 1e9)
        if rest >= scale or out:
            out += f"{rest // scale}{unit}"
            rest %= scale
    return f"{out}{_go_decimal(rest, 1_000_000_000)}s"


def _go_decimal(ns: int, scale: int) -> str:
    whole, frac = divmod(ns, scale)
    digits = str(frac).rjust(len(str(scale)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def _bounded(seconds: float, value: object) -> float:
    """``seconds`` if Go could hold it as a ``time.Duration`` (NaN never): else ``QuantityError``."""
    if not seconds <= MAX_DURATION_S:
        raise QuantityError(f"durations are at most 2562047h47m16s (Go's largest): {_cut(value)!r}")
    return seconds


def _cut(value: object) -> object:
    """A value to quote in a message: long text cut short."""
    return value[:40] + "..." if isinstance(value, str) and len(value) > 43 else value


def parse_window(text: str) -> float:
    """A window length: Go duration syntax (``90m``, ``36h``), plus days as Prometheus writes them
    (``7d``, ``1d12h``)."""
    match = re.fullmatch(r"(\d{1,9})d(.*)", text.strip())
    if match is None:
        return parse_duration(text)
    days = int(match.group(1)) * 86400
    return _bounded(days + (parse_duration(match.group(2)) if match.group(2) else 0.0), text)


def parse_bandwidth(value: object) -> float:
    """Parse a bandwidth written as a size per second (``"10GB/s"``, ``"500Mi/s"``) into bytes/s."""
    if not isinstance(value, str) or not value.strip().endswith("/s"):
        raise QuantityError(f"a bandwidth is a size per second such as '10GB/s', not {value!r}")
    rate = parse_quantity(value.strip()[:-2])
    if rate <= 0:
        raise QuantityError(f"a bandwidth must be positive: {value!r}")
    return float(rate)
