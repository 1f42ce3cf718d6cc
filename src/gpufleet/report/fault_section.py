"""The report's faults section (``summary["faults"]``, ``gpufleet.sim.faults``): one small table, a row
per fault (when, where, what, the response, when it was noticed, the pods hit, GPU-hours out of
service and of work lost, time to recovery), under the totals the terminal table shows too. Where a
node's kubelet went down (a reboot, a lost node), a column says when Kubernetes acted on it, from the
fault: NotReady, the ``NoExecute`` taint, the out-of-service taint a user put on, the pods deleted by taint
eviction, the Node deleted, PodGC, the pods' end (``sim.unreachable_nodes``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.report._format import MISSING, fmt_num, human_duration
from gpufleet.report.fault_rows import fault_rows
from gpufleet.report.page import muted, table

#: Rows shown; the rest are counted in the note.
MAX_FAULT_ROWS = 50
HEAD = [
    "at",
    "node",
    "kind",
    "response",
    "noticed after",
    "pods hit",
    "GPU-h out",
    "GPU-h work lost",
    "recovery",
]
#: the node lifecycle's steps after a kubelet went down, as the column words them (seconds after the fault)
NODE_DOWN = (
    ("not_ready_s", "NotReady"),
    ("tainted_s", "NoExecute taint"),
    ("out_of_service_s", "out-of-service"),
    ("pods_evicted_s", "pods deleted"),
    ("node_deleted_s", "Node deleted"),
    ("pods_collected_s", "PodGC"),
    ("pods_ended_s", "pods gone"),
)


def fault_section(summary: Mapping[str, Any]) -> str:
    faults = summary.get("faults")
    if faults is None:
        return ""
    note = " ".join(f"{what}: {value}." for what, value in fault_rows(summary))
    records = faults["faults"]
    if len(records) > MAX_FAULT_ROWS:
        note += f" Showing the first {MAX_FAULT_ROWS} of {len(records)}."
    shown = records[:MAX_FAULT_ROWS]
    rows = [_row(f) for f in shown]
    head = HEAD
    if any(f.get(key) is not None for f in shown for key, _ in NODE_DOWN):
        head = [*HEAD, "Kubernetes after the fault"]
        rows = [[*row, _node_down(f)] for row, f in zip(rows, shown, strict=True)]
    return "\n".join([muted(note), table(head, rows, css="narrow", numeric_from=4)]) if rows else muted(note)


def _node_down(fault: Mapping[str, Any]) -> str:
    """``NotReady 50s · NoExecute taint 50s · ...``: the steps that happened, in the order listed."""
    steps = [
        f"{words} {human_duration(fault[key])}" for key, words in NODE_DOWN if fault.get(key) is not None
    ]
    return " · ".join(steps) if steps else MISSING


def _row(fault: Mapping[str, Any]) -> list[str]:
    where = (
        fault["node"]
        if fault["gpu"] is None or fault["response"] != "gpu"
        else f"{fault['node']} GPU {fault['gpu']}"
    )
    kind = fault["kind"] + (f" (XID {fault['xid']})" if fault["xid"] is not None else "")
    return [
        human_duration(fault["at_s"]),
        where,
        kind,
        fault["response"] if fault["note"] is None else fault["note"],
        human_duration(fault["detection_s"]),
        str(len(fault["pods_hit"])),
        fmt_num(fault["gpu_hours_lost"]),
        fmt_num(fault["work_lost_gpu_hours"]),
        MISSING if fault["time_to_recovery_s"] is None else human_duration(fault["time_to_recovery_s"]),
    ]
