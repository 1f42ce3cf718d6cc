"""``gpufleet describe node``'s own part, below kubectl's, in lines: the node's GPUs as gpufleet models them
(one row a unit the device plugin hands out -- a whole GPU, a time-slicing or MPS replica, a MIG instance --
with the pod holding it, and one a fractional share), and for each pending pod what keeps it off this node.
The record it prints is built from the source by ``experiments.node_gpus``: the report reads records only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.report._format import fmt_num
from gpufleet.report.describe import aligned

TITLE = "gpufleet (not part of kubectl describe node):"


def gpufleet_lines(g: Mapping[str, Any], source: str, end_time_s: float | None) -> list[str]:
    """gpufleet's part in lines: its GPUs, their devices, the pending pods."""
    gpus = g["gpus"]
    when = "at the end of the run" if end_time_s is not None else "as the input shows"
    lines = ["", TITLE, f"  GPU devices ({when}):"]
    facts = [
        ("model", gpus["model"] or "<unknown>"),
        ("memory per GPU", gpus["memory_per_gpu"] or "<unknown>"),
        ("sharing", gpus["sharing"] or "<unknown>"),
        ("GPUs", "<unknown>" if gpus["gpus"] is None else fmt_num(gpus["gpus"])),
        (
            "free",
            "<unknown>"
            if gpus["units_free"] is None
            else f"{fmt_num(gpus['units_free'])} of {fmt_num(gpus['units'])}",
        ),
    ]
    lines += aligned([(f"{k}:", v) for k, v in facts], "    ")
    if gpus["note"]:
        lines.append(f"    ({gpus['note']})")
    if gpus["devices"] and "state" in gpus["devices"][0]:
        rows: list[tuple[str, ...]] = [("Device", "Resource", "GPU", "Share", "State", "Held by")]
        for d in gpus["devices"]:
            gpu = "<not modelled>" if d["gpu"] is None else str(d["gpu"])
            rows.append(
                (d["device"], d["resource"], gpu, fmt_num(d["share"]), d["state"], ", ".join(d["held_by"]))
            )
        lines += aligned(rows, "    ")
    elif gpus["devices"]:
        rows = [("Pod", "GPUs", "Devices")]
        rows += [  # a pod's devices where the source names them
            (", ".join(d["held_by"]), fmt_num(d["gpus"]), d["device"] or "<unknown>") for d in gpus["devices"]
        ]
        lines += aligned(rows, "    ")
    lines += _pending_lines(g)
    return lines


def _pending_lines(g: Mapping[str, Any]) -> list[str]:
    pending = g["pending"]
    lines = ["  Pending pods, and what keeps each off this node:" + ("" if pending else " <none>")]
    if g.get("pending_note"):
        lines.append(f"    ({g['pending_note']})")
    for p in pending:
        lines.append(f"    {p['pod']} (GPUs: {fmt_num(p['gpus'])}):")
        needs = p["needs_here"]
        if needs is None:
            here = "<unknown>"
        elif p["ruled_out_here"]:
            here = "ruled out: " + "; ".join(needs)
        elif needs:
            here = "needs " + "; ".join(needs)
            if p["would_free_it"]:
                here += f" (e.g. if {', '.join(p['would_free_it'])} were gone)"
        elif p["placed_here_now"]:
            here = "fits: gpufleet would place it here now"
        else:
            here = "explain's check of this node (filters, host ports, resources) finds nothing in the way"
        lines.append(f"      here: {here}")
        if p["message"]:
            lines.append(f"      whole cluster: {p['message']}")
        lines.extend(f"      - {hint}" for hint in p["hints"])
    return lines
