"""The Job controller's section of the fidelity report (``e2e.fidelity.report``): each case of
``e2e.fidelity.job_cases`` with its note, how it ended on both sides (and when, where its times are compared,
``e2e.fidelity.job_times``), and whether they agree; the totals over the cases that ran."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from typing import Any

from e2e.components import KUBERNETES_VERSION
from e2e.fidelity.job_cases import JOB_CASES, Outcome
from e2e.fidelity.job_run import JobResult
from e2e.fidelity.job_times import TOLERANCE_S, Times

JOB_CONTROLLER_NOT_RUN = (
    "not run with these cases (`make fidelity` runs and reports them; `make test` checks them in "
    "tests/fidelity/test_job_controller_fidelity.py)"
)


def outcome_why(real: Outcome, gpufleet: Outcome) -> str:
    """What differs between the two outcomes, field by field; empty when nothing does."""
    return "; ".join(
        f"{f.name}: {getattr(real, f.name)!r}, gpufleet {getattr(gpufleet, f.name)!r}"
        for f in fields(Outcome)
        if getattr(real, f.name) != getattr(gpufleet, f.name)
    )


def _side(outcome: Outcome | None, times: Times | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {**asdict(outcome), **(times.as_json() if times is not None else {})}


def job_summary(results: list[JobResult] | None, seconds: float = 0.0) -> dict[str, Any]:
    """The section's JSON: the totals and each case (``None``: the Job cases did not run)."""
    if results is None:
        return {"cases_compared": 0, "cases_agreeing": 0, "status": JOB_CONTROLLER_NOT_RUN}
    cases = {c.name: c for c in JOB_CASES}
    rows = []
    for r in results:
        case = cases[r.name]
        why_outcome = "" if r.error or r.real is None else outcome_why(r.real, r.gpufleet)
        why_times = r.times_why(not case.untimed)
        rows.append(
            {
                "name": r.name,
                "note": case.note,
                "agrees": not r.error and not why_outcome and not why_times,
                "outcome_agrees": r.outcome_agrees,
                "times_compared": not case.untimed,
                "untimed": case.untimed or None,
                "known_difference": case.differs or None,
                "times_agree": None if case.untimed or r.error else not why_times,
                "why": "; ".join(w for w in (why_outcome, why_times) if w) or None,
                "error": r.error or None,
                "patched_s": [round(t, 2) for t in r.patched_s],
                "kube_controller_manager": _side(r.real, r.real_times),
                "gpufleet": _side(r.gpufleet, r.gpufleet_times),
                "real_s": round(r.real_s, 2),
            }
        )
    ran = [row for row in rows if not row["error"]]
    timed = [row for row in ran if row["times_compared"]]
    return {
        "version": KUBERNETES_VERSION,
        "status": (
            f"run: kube-controller-manager {KUBERNETES_VERSION}'s Job controller (its pods played by kwok), "
            f"{len(results)} cases side by side"
        ),
        "run_s": round(seconds, 1),
        "time_tolerance_s": TOLERANCE_S,
        "cases_compared": len(ran),
        "cases_agreeing": sum(row["agrees"] for row in ran),
        "outcomes_agreeing": sum(row["outcome_agrees"] for row in ran),
        "times_compared": len(timed),
        "times_agreeing": sum(bool(row["times_agree"]) for row in timed),
        "cases_failed": len(rows) - len(ran),
        "cases": rows,
    }


def _outcome_text(side: dict[str, Any] | None) -> str:
    if side is None:
        return "-"
    text = f"{side['condition'] or 'not finished'}, succeeded {side['succeeded']}, failed {side['failed']}, "
    text += f"pods {side['pods']}"
    if side["completed_indexes"]:
        text += f", completed {side['completed_indexes']}"
    if side["failed_indexes"]:
        text += f", failed indexes {side['failed_indexes']}"
    return text


def _times_text(side: dict[str, Any] | None) -> str:
    if side is None:
        return "-"
    created = ", ".join(f"{t:g}" for t in side["pods_created_s"]) or "none"
    return f"{created}; {side['finished_s']}"


def job_markdown(jobs: dict[str, Any], pct: str) -> list[str]:
    """The section's lines in ``fidelity.md`` (``pct``: the agreeing share as the report writes it)."""
    lines = ["## Job controller (kube-controller-manager)", "", jobs["status"] + ".", ""]
    if "cases" not in jobs:
        return lines
    lines += [
        f"**{jobs['cases_agreeing']} of {jobs['cases_compared']} cases agree** ({pct}): outcomes "
        f"{jobs['outcomes_agreeing']} of {jobs['cases_compared']}, times {jobs['times_agreeing']} of "
        f"{jobs['times_compared']} (each pod's creation, then the Job's end decided, step by step: the time "
        f"since the event before within {jobs['time_tolerance_s']:g} s of gpufleet's); cases failed to run: "
        f"{jobs['cases_failed']}; {jobs['run_s']} s.",
        "",
        "| case | note | kube-controller-manager | gpufleet | pods created; end decided, s "
        "(kube-controller-manager / gpufleet) | agrees |",
        "|---|---|---|---|---|---|",
    ]
    for c in jobs["cases"]:
        verdict = "error" if c["error"] else ("yes" if c["agrees"] else "**no**: " + json.dumps(c["why"]))
        if c["known_difference"] and not c["agrees"]:
            verdict += " (known, not yet mended)"
        times = f"{_times_text(c['kube_controller_manager'])} / {_times_text(c['gpufleet'])}"
        if not c["times_compared"]:
            times += " (not compared)"
        lines.append(
            f"| {c['name']} | {c['note']} | {_outcome_text(c['kube_controller_manager'])} | "
            f"{_outcome_text(c['gpufleet'])} | {times} | {verdict} |"
        )
    for why in sorted({c["untimed"] for c in jobs["cases"] if c["untimed"]}):
        names = ", ".join(c["name"] for c in jobs["cases"] if c["untimed"] == why)
        lines += ["", f"Times not compared ({names}): {why}."]
    known = [c for c in jobs["cases"] if c["known_difference"]]
    if known:
        lines += ["", "Known disagreements, not yet mended:", ""]
        lines += [f"- {c['name']}: {c['known_difference']}" for c in known]
    errors = [c for c in jobs["cases"] if c["error"]]
    if errors:
        lines += ["", "Failed to run:", ""]
        lines += [f"- {c['name']}: {c['error'].splitlines()[0]}" for c in errors]
    lines.append("")
    return lines
