"""Small formatting and selection helpers shared by the HTML and terminal reports."""

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


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_pending(pod: Mapping[str, Any]) -> bool:
    """A pod still waiting at the end of the run: phase Pending and not deleted."""
    return pod.get("phase") == "Pending" and pod.get("deleted_s") is None


def pending_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The pending pods, by name."""
    return sorted((pod for pod in pods if is_pending(pod)), key=lambda pod: str(pod["name"]))
