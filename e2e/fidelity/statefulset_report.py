"""The StatefulSet controller's section of the fidelity report (``e2e.fidelity.report``, in the shape of
``e2e.fidelity.section``): each case of ``e2e.fidelity.statefulset_cases`` with its note, the order each side
made and removed pods in, the gaps between them, and whether they agree."""

from __future__ import annotations

from typing import Any

from e2e.fidelity import section
from e2e.fidelity.statefulset_cases import STATEFULSET_CASES
from e2e.fidelity.statefulset_run import TOLERANCE_S, StatefulSetResult, Timeline

_CASES = {c.name: c for c in STATEFULSET_CASES}


def _side(side: Timeline | None) -> dict[str, Any] | None:
    if side is None:
        return None
    o = side.outcome
    return {
        "left": list(o.left),
        "order": list(o.order),
        "made": o.made,
        "gaps_s": [round(g, 2) for g in side.gaps_s],
    }


def _why(r: StatefulSetResult) -> str | None:
    if r.error or r.agrees:
        return None
    return "order" if not r.order_agrees else f"gaps (more than {TOLERANCE_S:g} s apart)"


def _row(r: StatefulSetResult) -> dict[str, Any]:
    return {
        "name": r.name,
        "policy": _CASES[r.name].policy,
        "note": _CASES[r.name].note,
        "agrees": r.agrees,
        "why": _why(r),
        "error": r.error or None,
        "stepped_s": [round(t, 2) for t in r.stepped_s],
        "kube_controller_manager": _side(r.real),
        "gpufleet": _side(r.gpufleet),
        "real_s": round(r.real_s, 2),
    }


def _order_text(side: dict[str, Any] | None) -> str:
    if side is None:
        return "-"
    timed = iter(side["gaps_s"])
    entries = [e if e.startswith("step") else f"{e} ({next(timed):.1f})" for e in side["order"]]
    return ", ".join(entries)


def _compared(statefulsets: dict[str, Any]) -> str:
    return (
        "the order the steps were made and the pods created (+) and gone (-) in, each pod's entry with the "
        f"seconds since the entry before it (agreeing within {statefulsets['tolerance_s']:g} s), the pods "
        "left and how many were made"
    )


def _cells(c: dict[str, Any]) -> list[str]:
    real, ours = c["kube_controller_manager"], c["gpufleet"]
    verdict = section.verdict(c, f" ({c['why']})")
    return [c["name"], c["policy"], c["note"], _order_text(real), _order_text(ours), verdict]


STATEFULSETS: section.Section[StatefulSetResult] = section.Section(
    "StatefulSet controller",
    "StatefulSet controller (kube-scheduler placing, kwok playing the pods)",
    "test_statefulset_controller_fidelity.py",
    _row,
    _compared,
    ("case", "policy", "note", "kube-controller-manager", "gpufleet", "agrees"),
    _cells,
    tolerances={"tolerance_s": TOLERANCE_S},
)
STATEFULSET_CONTROLLER_NOT_RUN = STATEFULSETS.not_run
statefulset_summary = STATEFULSETS.summary
statefulset_markdown = STATEFULSETS.markdown
