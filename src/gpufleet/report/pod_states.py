"""Pods by final state as the reports show them: ``pending 0 · running 3 · succeeded 5 · scaled down 2 ·
evicted 1 · failed 0``.

The counts are the summary's ``totals.final_states`` (``model.final_states``); a summary without them
(written before they existed, or built by hand) has them counted from its pod records' phase and
reason, so every report counts the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.model.final_states import FINAL_STATES, count_final_states, final_state

#: Shown even when none: a reader looks for them.
ALWAYS_SHOWN = ("Pending", "Running", "Succeeded", "Failed")
#: How a state reads in text (the others: lower case).
LABELS = {"ScaledDown": "scaled down", "OOMKilled": "OOMKilled"}


def final_state_counts(summary: Mapping[str, Any]) -> dict[str, int]:
    """Pods per final state: ``totals.final_states``, else counted from ``pods``."""
    counts = summary["totals"].get("final_states")
    if counts is not None:
        return dict(counts)
    return count_final_states(
        pod.get("final_state")
        or final_state(pod["phase"], pod.get("reason"), pod.get("deleted_s") is not None)
        for pod in summary["pods"]
    )


def state_label(state: str) -> str:
    """A final state as text reads it: ``scaled down``, ``evicted``, ``OOMKilled``."""
    return LABELS.get(state, state.lower())


def final_states_text(counts: Mapping[str, int]) -> str:
    """The counts in `FINAL_STATES` order, `ALWAYS_SHOWN` ones even at 0, the others only when some."""
    return " · ".join(
        f"{state_label(state)} {counts.get(state, 0)}"
        for state in FINAL_STATES
        if counts.get(state) or state in ALWAYS_SHOWN
    )
