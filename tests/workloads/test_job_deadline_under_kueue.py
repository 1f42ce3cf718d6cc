"""A Job's ``status.startTime`` and ``activeDeadlineSeconds`` across Kueue's suspension and resumption
(``pkg/controller/job``: ``syncJob`` sets ``startTime`` at the first sync of a Job not suspended and again
when it resumes, "Resumed jobs will always reset StartTime"; ``pastActiveDeadline`` is false while the Job
is suspended; Kueue's ``Job.Stop``, ``pkg/controller/jobs/job``, clears ``startTime`` when it evicts it).

On ``examples/kueue/cohort-reclaim.yaml``: team-b's ``b-borrower`` is admitted at 0 s, evicted at 600 s
(team-a reclaims its quota; its pod gone at 630 s), admitted again at 2430 s, and its requeued pod runs
until 9030 s; team-a's ``a-train`` is created at 600 s, admitted at 630 s, and runs until 2430 s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import pods_by_name, simulated

EXAMPLE = Path(__file__).parents[2] / "examples" / "kueue" / "cohort-reclaim.yaml"
DEADLINE = ("DeadlineExceeded", "Job was active longer than specified deadline")


def with_deadline(tmp_path: Path, job: str, namespace: str, seconds: int) -> dict[str, Any]:
    """The example with ``activeDeadlineSeconds: seconds`` on ``job``, simulated: ``summary.json``."""
    text = EXAMPLE.read_text()
    start = text.index(f"  name: {job}\n  namespace: {namespace}\n")
    spec = text.index("spec:\n", start) + len("spec:\n")
    text = f"{text[:spec]}  activeDeadlineSeconds: {seconds}\n{text[spec:]}"
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return simulated([path])


def conditions(status: dict[str, Any]) -> list[tuple[str, str, str, float]]:
    return [(c["type"], c["reason"], c["message"], c["time_s"]) for c in status["conditions"]]


def test_a_kueue_job_evicted_and_readmitted_gets_its_full_deadline_again_from_the_readmission(
    tmp_path: Path,
) -> None:
    """7000 s from its readmission (2430 s) is 9430 s: its pod, done at 9030 s, finishes in time (counted
    from its creation, or from its first admission without its suspended time, 7000 s would have passed
    before). Its ``startTime`` is its readmission's."""
    summary = with_deadline(tmp_path, "b-borrower", "team-b", 7000)
    pods = pods_by_name(summary, namespaced=True)
    assert (pods["team-b/b-borrower-0-r1"]["phase"], pods["team-b/b-borrower-0-r1"]["finished_s"]) == (
        "Succeeded",
        9030.0,
    )
    status = summary["workload_status"]["Job/team-b/b-borrower"]
    assert [c[0] for c in conditions(status)] == ["SuccessCriteriaMet", "Complete"]
    assert (status["start_time_s"], status["completion_time_s"]) == (2430.0, 9030.0)


def test_a_kueue_job_past_its_deadline_after_readmission_fails_deadline_exceeded_then(tmp_path: Path) -> None:
    """3600 s from its readmission at 2430 s: ``DeadlineExceeded`` at 6030 s (its first 600 s admitted and
    its 1830 s suspended do not count), its pod deleted (gone after its 30 s grace period), ``Failed``
    then."""
    summary = with_deadline(tmp_path, "b-borrower", "team-b", 3600)
    pods = pods_by_name(summary, namespaced=True)
    again = pods["team-b/b-borrower-0-r1"]
    assert (again["reason"], again["deleted_s"], again["finished_s"]) == ("Deleted", 6060.0, 6060.0)
    status = summary["workload_status"]["Job/team-b/b-borrower"]
    assert conditions(status) == [("FailureTarget", *DEADLINE, 6030.0), ("Failed", *DEADLINE, 6060.0)]
    assert (status["start_time_s"], status["failed"]) == (2430.0, 1)


def test_a_kueue_jobs_wait_in_its_queue_does_not_count_toward_its_deadline(tmp_path: Path) -> None:
    """``a-train`` is created at 600 s, admitted at 630 s and done at 2430 s: 1810 s from its admission
    (2440 s) it has finished; 1810 s from its creation (2410 s) it would not have."""
    summary = with_deadline(tmp_path, "a-train", "team-a", 1810)
    assert pods_by_name(summary, namespaced=True)["team-a/a-train-0"]["phase"] == "Succeeded"
    status = summary["workload_status"]["Job/team-a/a-train"]
    assert (status["start_time_s"], status["completion_time_s"]) == (630.0, 2430.0)
