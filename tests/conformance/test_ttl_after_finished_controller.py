"""The TTL-after-finished controller's ``TestTimeLeft`` (``pkg/controller/ttlafterfinished/
ttlafterfinished_controller_test.go``, Kubernetes v1.34.10): ``timeLeft`` of a Job that completed or failed
(its ``Complete`` / ``Failed`` condition's ``lastTransitionTime``, ``jobFinishTime``) with
``ttlSecondsAfterFinished``, asked at ``now``: the time left and when it expires; an error ("should not be
cleaned up", ``needsCleanup``) for a Job unfinished or without a TTL. Times are seconds from ``now``."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from gpufleet.workloads.kind import StatusCondition
from gpufleet.workloads.ttl_after_finished import job_finish_time, time_left


@dataclass(frozen=True)
class Row:
    completion_s: float | None = None  # the Complete condition's time (None: no such condition)
    failed_s: float | None = None  # the Failed condition's time
    ttl_s: float | None = None
    expect_err: bool = False
    time_left_s: float = 0.0
    expire_at_s: float = 0.0


CASES = {
    "Error case: Job unfinished": Row(ttl_s=100, expect_err=True),
    "Error case: Job completed now, no TTL": Row(completion_s=0, expect_err=True),
    "Job completed now, 0s TTL": Row(completion_s=0, ttl_s=0, time_left_s=0, expire_at_s=0),
    "Job completed now, 10s TTL": Row(completion_s=0, ttl_s=10, time_left_s=10, expire_at_s=10),
    "Job completed 10s ago, 15s TTL": Row(completion_s=-10, ttl_s=15, time_left_s=5, expire_at_s=5),
    "Error case: Job failed now, no TTL": Row(failed_s=0, expect_err=True),
    "Job failed now, 0s TTL": Row(failed_s=0, ttl_s=0, time_left_s=0, expire_at_s=0),
    "Job failed now, 10s TTL": Row(failed_s=0, ttl_s=10, time_left_s=10, expire_at_s=10),
    "Job failed 10s ago, 15s TTL": Row(failed_s=-10, ttl_s=15, time_left_s=5, expire_at_s=5),
}


def conditions(row: Row) -> list[tuple[StatusCondition, float]]:
    """``newJob``'s conditions: ``Complete`` then ``Failed``, each where the row gives its time."""
    out = []
    if row.completion_s is not None:
        out.append((StatusCondition("Complete", "", ""), row.completion_s))
    if row.failed_s is not None:
        out.append((StatusCondition("Failed", "", ""), row.failed_s))
    return out


@pytest.mark.parametrize("row", [pytest.param(row, id=f"TestTimeLeft/{name}") for name, row in CASES.items()])
def test_time_left(row: Row) -> None:
    finished = job_finish_time(conditions(row))
    if row.expect_err:
        with pytest.raises(ValueError, match="should not be cleaned up"):
            time_left(row.ttl_s, finished, 0.0)
        return
    assert time_left(row.ttl_s, finished, 0.0) == (row.time_left_s, row.expire_at_s)


def test_job_finish_time_is_the_first_finished_conditions_time() -> None:
    """``jobFinishTime``: the first ``Complete`` or ``Failed`` condition (the interim ones do not count)."""
    held = [
        (StatusCondition("FailureTarget", "BackoffLimitExceeded", ""), 5.0),
        (StatusCondition("Failed", "BackoffLimitExceeded", ""), 35.0),
    ]
    assert job_finish_time(held) == 35.0
    assert job_finish_time(held[:1]) is None
