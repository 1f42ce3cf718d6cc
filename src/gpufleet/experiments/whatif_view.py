"""What ``gpufleet whatif`` shows of its document, in words: the terminal table and ``report.html``.

Figures side by side (baseline, changed) and, per pending pod of the snapshot, what became of it on
each side: ``started after 12 s on gpu-0, working after 1m 40s`` (times from the pod's creation),
``pending: <the scheduler's message>``, ``ended Failed (...)``, or ``absent`` (a change deleted it).
Cost is ``no price`` where no node had a price, never 0. Everything is read from the
``gpufleet.whatif/v1`` document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from gpufleet.model.final_states import FINAL_STATES
from gpufleet.report._format import counted, fmt_num, human_duration, truncate
from gpufleet.report.pod_states import state_label

NO_PRICE = "no price"


def for_how_long(value: float | None) -> str:
    """The simulated span: a human duration, or until the simulation has nothing left to do."""
    return "until nothing is left" if value is None else human_duration(value)


def _pair(p50: str, p95: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda side: f"{human_duration(side[p50])} / {human_duration(side[p95])}"


def _cost(side: Mapping[str, Any]) -> str:
    if side["cost"] is None:
        return NO_PRICE
    text = f"{side['cost']:.2f}"
    unpriced = side["nodes_without_price"]
    return f"{text} (+ {counted(unpriced, 'node')} with no price)" if unpriced else text


def _final_state_rows(document: Mapping[str, Any]) -> list[tuple[str, Callable[[Mapping[str, Any]], str]]]:
    """Every pod by final state, a row per state either side has (preempted always)."""
    sides = (document["baseline"], document["changed"])
    return [
        (f"all pods: {state_label(state)}", partial(_state_count, state))
        for state in FINAL_STATES
        if state == "Preempted" or any(side["final_states"].get(state) for side in sides)
    ]


def _state_count(state: str, side: Mapping[str, Any]) -> str:
    return str(side["final_states"].get(state, 0))


def figure_rows(document: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(figure, baseline, changed) for the key figures."""
    pending = document["pending_in_snapshot"]
    rows: list[tuple[str, Callable[[Mapping[str, Any]], str]]] = [
        (f"pods started (of {pending} pending in the snapshot)", lambda s: str(s["pods_started"])),
        ("still pending at the end", lambda s: str(s["pods_pending_at_end"])),
        ("time to start p50 / p95", _pair("time_to_start_p50_s", "time_to_start_p95_s")),
        ("time to working p50 / p95", _pair("time_to_working_p50_s", "time_to_working_p95_s")),
        *_final_state_rows(document),
        (
            "GPUs allocated at the end",
            lambda s: f"{fmt_num(s['gpus_allocated'])} of {fmt_num(s['gpus_total'])}",
        ),
        (
            "GPU-hours allocated / working",
            lambda s: f"{fmt_num(s['gpu_hours_allocated'])} / {fmt_num(s['gpu_hours_working'])}",
        ),
        ("nodes added", lambda s: str(s["nodes_added"])),
        ("cost (price per hour × hours)", _cost),
    ]
    if any(document[side]["pods_absent"] for side in ("baseline", "changed")):
        rows.insert(2, ("deleted by the change", lambda s: str(s["pods_absent"])))
    return [(label, show(document["baseline"]), show(document["changed"])) for label, show in rows]


def outcome_text(outcome: Mapping[str, Any], limit: int | None = None) -> str:
    """One pod's outcome on one side, in words; the scheduler's message cut to ``limit`` characters."""
    state = outcome["state"]
    if state == "absent":
        return "absent (deleted by the change)"
    if state == "pending":
        message = outcome["message"] or "no message"
        return f"pending: {message if limit is None else truncate(message, limit)}"
    if state == "ended":
        return f"ended {outcome['phase']} ({outcome['reason'] or 'no reason'}), never bound"
    text = f"started after {human_duration(outcome['time_to_start_s'])} on {outcome['node']}"
    if outcome["time_to_working_s"] is not None:
        text += f", working after {human_duration(outcome['time_to_working_s'])}"
    if outcome["phase"] != "Running" or outcome["reason"]:
        text += f", then {outcome['phase']}" + (f" ({outcome['reason']})" if outcome["reason"] else "")
    return text


def pod_rows(pods: Sequence[Mapping[str, Any]], limit: int | None = None) -> list[tuple[str, str, str, str]]:
    """(pod, GPUs, baseline, changed), pods whose outcome differs first, then in snapshot order."""
    ordered = sorted(pods, key=lambda row: not row["differs"])
    return [
        (
            row["pod"],
            fmt_num(row["gpus"]),
            outcome_text(row["baseline"], limit),
            outcome_text(row["changed"], limit),
        )
        for row in ordered
    ]
