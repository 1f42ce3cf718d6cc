"""Terminal-table rows for the faults of a run with a FaultModel (``summary["faults"]``,
``gpufleet.sim.faults``): how many of each kind, the pods they hit, the GPU-hours out of service and
the work lost since the checkpoints; then MTTR, goodput and the GPU-hours spent writing checkpoints (when
any). Durations read as people read them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.report._format import MISSING, counted, fmt_num, human_duration


def fault_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    faults = summary.get("faults")
    if faults is None:
        return []
    totals = faults["totals"]
    kinds = ", ".join(f"{kind} {count}" for kind, count in totals["by_kind"].items())
    happened = counted(totals["faults"], "fault") + (f" ({kinds})" if kinds else "")
    cost = (
        f"{counted(totals['pods_hit'], 'pod')} hit · {fmt_num(totals['gpu_hours_lost'])} GPU-hours out of "
        f"service · {fmt_num(totals['work_lost_gpu_hours'])} GPU-hours of work lost"
    )
    goodput = totals["goodput"]
    recovery = [
        f"MTTR {human_duration(totals['mttr_s'])} ({totals['recovered']} recovered)",
        f"goodput {MISSING if goodput is None else f'{100 * goodput:.1f} %'}",
    ]
    saving = totals.get("checkpoint_save_gpu_hours") or 0.0
    if saving > 0:
        recovery.append(f"{fmt_num(saving)} GPU-hours writing checkpoints")
    return [("faults", f"{happened} · {cost}"), ("fault recovery", " · ".join(recovery))]
