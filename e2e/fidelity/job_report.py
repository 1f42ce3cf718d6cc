"""The Job controller's section of the fidelity report (``e2e.fidelity.report``, in the shape of
``e2e.fidelity.section``): each case of ``e2e.fidelity.job_cases`` with its note, how it ended on both sides
(and when, where its times are compared, ``e2e.fidelity.job_times``), and whether they agree; the totals over
the cases that ran."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from typing import Any

from e2e.fidelity import section
from e2e.fidelity.job_cases import JOB_CASES, Outcome
from e2e.fidelity.job_run import JobResult
from e2e.fidelity.job_times import TOLERANCE_S, Times


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


def _row(r: JobResult) -> dict[str, Any]:
    case = next(c for c in JOB_CASES if c.name == r.name)
    why_outcome = "" if r.error or r.real is None else outcome_why(r.real, r.gpufleet)
    why_times = r.times_why(not case.untimed)
    return {
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


def _counts(ran: list[dict[str, Any]]) -> dict[str, int]:
    timed = [row for row in ran if row["times_compared"]]
    return {
        "outcomes_agreeing": sum(row["outcome_agrees"] for row in ran),
        "times_compared": len(timed),
        "times_agreeing": sum(bool(row["times_agree"]) for row in timed),
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


def _compared(jobs: dict[str, Any]) -> str:
    return (
        f"outcomes {jobs['outcomes_agreeing']} of {jobs['cases_compared']}, times "
        f"{jobs['times_agreeing']} of {jobs['times_compared']} (each pod's creation, then the Job's end "
        "decided, step by step: the time since the event before within "
        f"{jobs['time_tolerance_s']:g} s of gpufleet's)"
    )


def _cells(c: dict[str, Any]) -> list[str]:
    verdict = section.verdict(c, ": " + json.dumps(c["why"]))
    if c["known_difference"] and not c["agrees"]:
        verdict += " (known, not yet mended)"
    real, ours = c["kube_controller_manager"], c["gpufleet"]
    times = f"{_times_text(real)} / {_times_text(ours)}"
    if not c["times_compared"]:
        times += " (not compared)"
    return [c["name"], c["note"], _outcome_text(real), _outcome_text(ours), times, verdict]


def _notes(cases: list[dict[str, Any]]) -> list[str]:
    """Why the untimed cases' times are not compared; the known disagreements."""
    lines = []
    for why in sorted({c["untimed"] for c in cases if c["untimed"]}):
        names = ", ".join(c["name"] for c in cases if c["untimed"] == why)
        lines += ["", f"Times not compared ({names}): {why}."]
    known = [c for c in cases if c["known_difference"]]
    if known:
        lines += ["", "Known disagreements, not yet mended:", ""]
        lines += [f"- {c['name']}: {c['known_difference']}" for c in known]
    return lines


JOBS: section.Section[JobResult] = section.Section(
    "Job controller",
    "Job controller (its pods played by kwok)",
    "test_job_controller_fidelity.py",
    _row,
    _compared,
    (
        "case",
        "note",
        "kube-controller-manager",
        "gpufleet",
        "pods created; end decided, s (kube-controller-manager / gpufleet)",
        "agrees",
    ),
    _cells,
    tolerances={"time_tolerance_s": TOLERANCE_S},
    counts=_counts,
    notes=_notes,
)
JOB_CONTROLLER_NOT_RUN = JOBS.not_run
job_summary = JOBS.summary
job_markdown = JOBS.markdown
