"""Small formatting and selection helpers shared by the HTML and terminal reports.

Text shows durations and sizes as people read them (``2d 21h 38m``, ``236Gi``, the binary suffixes
of Kubernetes quantities); JSON keeps the raw seconds and bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

MISSING = "—"


def fmt_num(value: float | None) -> str:
    """A number as people read it: whole numbers without decimals, others to two places."""
    if value is None:
        return MISSING
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


DURATION_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
DURATION_PARTS = 3
BYTE_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def human_duration(seconds: float | None) -> str:
    """``seconds`` as people read a duration: under a minute ``42 s`` or ``0.35 s``; above, the three
    largest units from the first that is not zero, zeros left out (``2d 21h 38m``, ``1h 5s``)."""
    if seconds is None:
        return MISSING
    sign, left = ("-", -seconds) if seconds < 0 else ("", seconds)
    if left < 60:
        return f"{sign}{fmt_num(round(left, 2))} s"
    whole = round(left)
    parts: list[tuple[int, str]] = []
    for suffix, size in DURATION_UNITS:
        if whole >= size or parts:
            count, whole = divmod(whole, size)
            parts.append((count, suffix))
    return sign + " ".join(f"{count}{suffix}" for count, suffix in parts[:DURATION_PARTS] if count)


def kubectl_age(seconds: float) -> str:
    """``duration.HumanDuration`` (k8s.io/apimachinery v0.34.10 ``pkg/util/duration``), as kubectl writes an
    age or a length (an Event's Age and ``over``, a pod's Age, a Job's Duration): ``70s``, ``3m10s``, ``70m``,
    ``3h1m``, ``47h``, ``2d1h``, ``367d``, ``2y1d``; up to 2 s in the future ``0s``, more ``<invalid>``."""
    whole = int(seconds)  # time.Duration.Seconds, truncated toward zero
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        return f"{minutes}m" if whole % 60 == 0 else f"{minutes}m{whole % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def human_bytes(size: float | None) -> str:
    """``size`` bytes with the binary suffix of a Kubernetes quantity: ``236Gi``, ``1.5Ti``,
    ``512`` (three significant figures at most)."""
    if size is None:
        return MISSING
    value, suffix = float(size), ""
    for next_suffix in BYTE_SUFFIXES:
        if abs(value) < 1024:
            break
        value, suffix = value / 1024, next_suffix
    digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2
    return f"{fmt_num(round(value, digits))}{suffix}"


def counted(count: int, noun: str) -> str:
    """``1 pod``, ``3 pods``: the count and the noun, plural unless one."""
    return f"{count} {noun}{'s' * (count != 1)}"


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_pending(pod: Mapping[str, Any]) -> bool:
    """A pod still waiting at the end of the run: phase Pending and not deleted."""
    return pod.get("phase") == "Pending" and pod.get("deleted_s") is None


def pending_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The pending pods, by name."""
    return sorted((pod for pod in pods if is_pending(pod)), key=lambda pod: str(pod["name"]))


def human_percent(value: float | None) -> str:
    """A percentage (0-100) to one place: ``42.5 %``; ``—`` when there is none."""
    return MISSING if value is None else f"{fmt_num(round(value, 1))} %"
