"""The StatefulSet controller's section of the fidelity report (``e2e.fidelity.report``): each case of
``e2e.fidelity.statefulset_cases`` with its note, the order each side made and removed pods in, the gaps
between them, and whether they agree."""

from __future__ import annotations

from typing import Any

from e2e.components import KUBERNETES_VERSION
from e2e.fidelity.statefulset_cases import STATEFULSET_CASES
from e2e.fidelity.statefulset_run import TOLERANCE_S, StatefulSetResult, Timeline

STATEFULSET_CONTROLLER_NOT_RUN = (
    "not run with these cases (`make fidelity` runs and reports them; `make test` checks them in "
    "tests/fidelity/test_statefulset_controller_fidelity.py)"
)


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


def statefulset_summary(results: list[StatefulSetResult] | None, seconds: float = 0.0) -> dict[str, Any]:
    """The section's JSON: the totals and each case (``None``: the cases did not run)."""
    if results is None:
        return {"cases_compared": 0, "cases_agreeing": 0, "status": STATEFULSET_CONTROLLER_NOT_RUN}
    cases = {c.name: c for c in STATEFULSET_CASES}
    rows = [
        {
            "name": r.name,
            "policy": cases[r.name].policy,
            "note": cases[r.name].note,
            "agrees": r.agrees,
            "why": _why(r),
            "error": r.error or None,
            "stepped_s": [round(t, 2) for t in r.stepped_s],
            "kube_controller_manager": _side(r.real),
            "gpufleet": _side(r.gpufleet),
            "real_s": round(r.real_s, 2),
        }
        for r in results
    ]
    ran = [row for row in rows if not row["error"]]
    return {
        "version": KUBERNETES_VERSION,
        "status": (
            f"run: kube-controller-manager {KUBERNETES_VERSION}'s StatefulSet controller (kube-scheduler "
            f"placing, kwok playing the pods), {len(results)} cases side by side"
        ),
        "tolerance_s": TOLERANCE_S,
        "run_s": round(seconds, 1),
        "cases_compared": len(ran),
        "cases_agreeing": sum(row["agrees"] for row in ran),
        "cases_failed": len(rows) - len(ran),
        "cases": rows,
    }


def _order_text(side: dict[str, Any] | None) -> str:
    if side is None:
        return "-"
    timed = iter(side["gaps_s"])
    entries = [e if e.startswith("step") else f"{e} ({next(timed):.1f})" for e in side["order"]]
    return ", ".join(entries)


def statefulset_markdown(section: dict[str, Any], pct: str) -> list[str]:
    """The section's lines in ``fidelity.md`` (``pct``: the agreeing share as the report writes it)."""
    lines = ["## StatefulSet controller (kube-controller-manager)", "", section["status"] + ".", ""]
    if "cases" not in section:
        return lines
    lines += [
        f"**{section['cases_agreeing']} of {section['cases_compared']} cases agree** ({pct}): the order the "
        "steps were made and the pods created (+) and gone (-) in, each pod's entry with the seconds since "
        f"the entry before it (agreeing within {section['tolerance_s']:g} s), the pods left and how many "
        f"were made; cases failed to run: {section['cases_failed']}; {section['run_s']} s.",
        "",
        "| case | policy | note | kube-controller-manager | gpufleet | agrees |",
        "|---|---|---|---|---|---|",
    ]
    for c in section["cases"]:
        verdict = "error" if c["error"] else ("yes" if c["agrees"] else f"**no** ({c['why']})")
        lines.append(
            f"| {c['name']} | {c['policy']} | {c['note']} | {_order_text(c['kube_controller_manager'])} | "
            f"{_order_text(c['gpufleet'])} | {verdict} |"
        )
    errors = [c for c in section["cases"] if c["error"]]
    if errors:
        lines += ["", "Failed to run:", ""]
        lines += [f"- {c['name']}: {c['error'].splitlines()[0]}" for c in errors]
    lines.append("")
    return lines
