"""A timeline set's section of the fidelity report (the StatefulSet and Deployment controllers':
``e2e.fidelity.statefulset_report``, ``deployment_report``; in the shape of ``e2e.fidelity.section``): each
case with what kind of case it is (a StatefulSet's policy, a Deployment's strategy) and its note, the order
each side made and removed pods in, the gaps between them (``e2e.fidelity.timeline``), and whether they
agree."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from e2e.fidelity import section
from e2e.fidelity.timeline import TOLERANCE_S, Timeline, TimelineResult


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


def _why(r: TimelineResult) -> str | None:
    if r.error or r.agrees:
        return None
    return "order" if not r.order_agrees else f"gaps (more than {TOLERANCE_S:g} s apart)"


def _order_text(side: dict[str, Any] | None) -> str:
    if side is None:
        return "-"
    timed = iter(side["gaps_s"])
    entries = [e if e.startswith("step") else f"{e} ({next(timed):.1f})" for e in side["order"]]
    return ", ".join(entries)


def _compared(timelines: dict[str, Any]) -> str:
    return (
        "the order the steps were made and the pods created (+) and gone (-) in, each pod's entry with the "
        f"seconds since the entry before it (agreeing within {timelines['tolerance_s']:g} s), the pods "
        "left and how many were made"
    )


def timeline_section(
    title: str,
    controllers: str,
    test_file: str,
    column: str,
    cases: Mapping[str, tuple[str, str]],
    notes: Callable[[list[section.Row]], list[str]] = lambda cases: [],
) -> section.Section[TimelineResult]:
    """The section of a timeline set: ``cases`` each case's ``column`` value and note, by name; the rest as
    ``section.Section`` says."""

    def row(r: TimelineResult) -> dict[str, Any]:
        kind, note = cases[r.name]
        return {
            "name": r.name,
            column: kind,
            "note": note,
            "agrees": r.agrees,
            "why": _why(r),
            "error": r.error or None,
            "stepped_s": [round(t, 2) for t in r.stepped_s],
            "kube_controller_manager": _side(r.real),
            "gpufleet": _side(r.gpufleet),
            "real_s": round(r.real_s, 2),
        }

    def cells(c: dict[str, Any]) -> list[str]:
        real, ours = c["kube_controller_manager"], c["gpufleet"]
        verdict = section.verdict(c, f" ({c['why']})")
        return [c["name"], c[column], c["note"], _order_text(real), _order_text(ours), verdict]

    return section.Section(
        title,
        controllers,
        test_file,
        row,
        _compared,
        ("case", column, "note", "kube-controller-manager", "gpufleet", "agrees"),
        cells,
        tolerances={"tolerance_s": TOLERANCE_S},
        notes=notes,
    )
