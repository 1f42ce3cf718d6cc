"""The summary report's pod table: one row per pod (pending first, then failed, then by name, capped),
with the scheduler's message, a short diagnosis and the stages of its start (and of its node's).

Times are from the start of the run (a dump's pod created before it: negative) and stage lengths in human
form (``2m 5s``); every text cell is HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from gpufleet.report._format import MISSING, fmt_num, human_duration, is_pending
from gpufleet.report.latency import STAGE_ORDER
from gpufleet.report.page import muted

MAX_POD_ROWS = 500
FREE_NODES_SHOWN = 5
#: a new node's start chain in the order of ``NodePool`` ``provisioning`` without GPU Operator
NODE_STAGE_ORDER = ("capacityWait", "boot", "driver", "join", "devicePlugin")
POD_COLUMNS = (
    "Pod",
    "Phase",
    "Final state",
    "Node",
    "GPUs",
    "Created",
    "Bound",
    "Working",
    "Finished",
    "Scheduler message",
    "Diagnosis",
    "Stages",
)


#: The final states that are failures (``model.final_states``); a summary without them has the phase.
FAILED_STATES = ("Failed", "OOMKilled")


def _interest(pod: Mapping[str, Any]) -> tuple[int, str]:
    """Sort key: pending pods first, then those that failed (``final_state`` Failed or OOMKilled, not
    a pod scaled down, suspended or evicted), then the rest; by name within each."""
    rank = 0 if is_pending(pod) else 1 if pod.get("final_state", pod.get("phase")) in FAILED_STATES else 2
    return rank, str(pod["name"])


def pod_table(pods: Sequence[Mapping[str, Any]]) -> str:
    if not pods:
        return muted("No pods.")
    shown = sorted(pods, key=_interest)[:MAX_POD_ROWS]
    left_out = len(pods) - len(shown)
    note = (
        muted(
            f"Showing {len(shown)} of {len(pods)} pods (pending first, then failed, then by name); "
            f"{left_out} pods left out."
        )
        if left_out
        else ""
    )
    head = "".join(f"<th>{escape(column)}</th>" for column in POD_COLUMNS)
    body = "\n".join(_pod_row(pod) for pod in shown)
    table = f'<table class="pods">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>'
    before = any((pod.get("created_s") or 0.0) < 0 for pod in shown)
    times = muted(
        "Created, bound, working and finished: time from the start of the run"
        + ("; a negative time is before it (a dump's pod created before the snapshot)." if before else ".")
    )
    return f'{note}{times}<div class="scroll">{table}</div>'


def _pod_row(pod: Mapping[str, Any]) -> str:
    phase = str(pod["phase"])
    final = pod.get("final_state") or pod.get("reason") or MISSING
    cells = [
        _td(str(pod["name"])),
        f'<td class="phase-{escape(phase)}">{escape(phase)}</td>',
        _td(str(final)),
        _td(pod.get("node") or MISSING),
        f'<td class="num">{fmt_num(pod.get("gpus"))}</td>',
        *(
            f'<td class="num">{human_duration(pod.get(key))}</td>'
            for key in ("created_s", "bound_s", "working_s", "finished_s")
        ),
        f'<td class="msg">{escape(pod.get("message") or "")}</td>',
        _lines_td(_diagnosis_lines(pod.get("diagnosis"))),
        _lines_td(stage_lines(pod.get("stages") or {}) + _node_stage_lines(pod.get("node_stages") or {})),
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _td(text: str) -> str:
    return f"<td>{escape(text)}</td>"


def _lines_td(lines: Sequence[str]) -> str:
    return "<td>" + "<br>".join(escape(line) for line in lines) + "</td>"


def _diagnosis_lines(diagnosis: Mapping[str, Any] | None) -> list[str]:
    """A pod's diagnosis in a few short lines: request vs largest free block, free GPUs, gang, hints."""
    if not diagnosis:
        return []
    lines = [
        f"requests {fmt_num(diagnosis['gpus_requested'])} GPUs; "
        f"largest free block {fmt_num(diagnosis['largest_free_gpus'])}"
    ]
    free = diagnosis.get("free_gpus") or {}
    if free:
        lines.append("free: " + _top_free(free))
    gang = diagnosis.get("gang")
    if gang:
        lines.append(
            f"gang {gang['name']}: {gang['members_bound']}/{gang['members']} bound, "
            f"{gang['members_that_fit']} fit, min {gang['min_member']}, "
            f"needs {fmt_num(gang['gpus_needed'])} GPUs"
        )
    lines.extend(diagnosis.get("hints") or [])
    return lines


def _top_free(free: Mapping[str, float]) -> str:
    ranked = sorted(free.items(), key=lambda item: (-item[1], item[0]))
    text = ", ".join(f"{node} {fmt_num(gpus)}" for node, gpus in ranked[:FREE_NODES_SHOWN])
    more = len(ranked) - FREE_NODES_SHOWN
    return text + (f", +{more} more nodes" if more > 0 else "")


def ordered_names(names: set[str], order: Sequence[str]) -> list[str]:
    """``names`` in ``order`` first, then any others by name."""
    return [name for name in order if name in names] + sorted(names.difference(order))


def stage_lines(stages: Mapping[str, float]) -> list[str]:
    """Non-zero stages in human form, the contract's names in their order first, then others by name."""
    return [
        f"{key} {human_duration(stages[key])}"
        for key in ordered_names(set(stages), STAGE_ORDER)
        if stages[key]
    ]


def _node_stage_lines(node_stages: Mapping[str, float]) -> list[str]:
    """The start chain of the node launched for the pod, on one line, when the pod has one."""
    names = ordered_names(set(node_stages), NODE_STAGE_ORDER)
    parts = [f"{key} {human_duration(node_stages[key])}" for key in names]
    return ["node: " + ", ".join(parts)] if parts else []
