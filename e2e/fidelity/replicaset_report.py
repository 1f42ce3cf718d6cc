"""The ReplicaSet controller's section of the fidelity report (``e2e.fidelity.report``): each case of
``e2e.fidelity.replicaset_cases`` with its note, the pods each side left and made, and whether they agree."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from e2e.components import KUBERNETES_VERSION
from e2e.fidelity.replicaset_cases import REPLICASET_CASES, Outcome
from e2e.fidelity.replicaset_run import ReplicaSetResult

REPLICASET_CONTROLLER_NOT_RUN = (
    "not run with these cases (`make fidelity` runs and reports them; `make test` checks them in "
    "tests/fidelity/test_replicaset_controller_fidelity.py)"
)


def _side(outcome: Outcome | None) -> dict[str, Any] | None:
    return None if outcome is None else asdict(outcome)


def replicaset_summary(results: list[ReplicaSetResult] | None, seconds: float = 0.0) -> dict[str, Any]:
    """The section's JSON: the totals and each case (``None``: the cases did not run)."""
    if results is None:
        return {"cases_compared": 0, "cases_agreeing": 0, "status": REPLICASET_CONTROLLER_NOT_RUN}
    cases = {c.name: c for c in REPLICASET_CASES}
    rows = [
        {
            "name": r.name,
            "kind": cases[r.name].kind,
            "note": cases[r.name].note,
            "agrees": r.agrees,
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
            f"run: kube-controller-manager {KUBERNETES_VERSION}'s ReplicaSet and Deployment controllers "
            f"(kube-scheduler placing, kwok playing the pods), {len(results)} cases side by side"
        ),
        "run_s": round(seconds, 1),
        "cases_compared": len(ran),
        "cases_agreeing": sum(row["agrees"] for row in ran),
        "cases_failed": len(rows) - len(ran),
        "cases": rows,
    }


def _outcome_text(side: dict[str, Any] | None) -> str:
    if side is None:
        return "-"
    left = ", ".join(f"{node or 'pending'}/{step}" for node, step in side["left"]) or "none"
    return f"left {left}; made {side['made']}"


def replicaset_markdown(section: dict[str, Any], pct: str) -> list[str]:
    """The section's lines in ``fidelity.md`` (``pct``: the agreeing share as the report writes it)."""
    lines = ["## ReplicaSet controller (kube-controller-manager)", "", section["status"] + ".", ""]
    if "cases" not in section:
        return lines
    lines += [
        f"**{section['cases_agreeing']} of {section['cases_compared']} cases agree** ({pct}): the pods left "
        "(each as its node, then the steps made before its creation) and how many were made; cases failed "
        f"to run: {section['cases_failed']}; {section['run_s']} s.",
        "",
        "| case | kind | note | kube-controller-manager | gpufleet | agrees |",
        "|---|---|---|---|---|---|",
    ]
    for c in section["cases"]:
        verdict = "error" if c["error"] else ("yes" if c["agrees"] else "**no**")
        lines.append(
            f"| {c['name']} | {c['kind']} | {c['note']} | {_outcome_text(c['kube_controller_manager'])} | "
            f"{_outcome_text(c['gpufleet'])} | {verdict} |"
        )
    errors = [c for c in section["cases"] if c["error"]]
    if errors:
        lines += ["", "Failed to run:", ""]
        lines += [f"- {c['name']}: {c['error'].splitlines()[0]}" for c in errors]
    lines.append("")
    return lines
