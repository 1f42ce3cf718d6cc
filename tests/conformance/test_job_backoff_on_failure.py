"""The Job controller's ``pastBackoffLimitOnFailure``: ``TestJobBackoffForOnFailure``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/job/job_controller_test.go``. A row's Job (its
template ``restartPolicy: OnFailure``) adopts its pods, each with its containers' ``restartCount``
(``OwnedPod.restarts``), as ``test_job_controller_sync`` adopts them, then syncs once (its deleted pods then
end Failed, a suspended Job's are still terminating). Compared: ``status.active``/``succeeded``/``failed``
and the finished condition (or ``Suspended``). Upstream runs the rows without the
``JobPodReplacementPolicy`` suffix with that gate off (emulating 1.33): the Job's ``Failed`` condition
comes at once rather than after the interim ``FailureTarget``; gpufleet compares the condition the Job ends
with, which is the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from test_job_controller_sync import (
    COMPLETE,
    FAILED_BACKOFF,
    NO_MANAGED_BY,
    SUSPENDED,
    Row,
    adopted,
    condition_of,
    synced,
)


@dataclass(frozen=True)
class OnFailureRow:
    parallelism: int
    completions: int
    backoff_limit: int
    restart_counts: tuple[int, ...]
    phase: str
    want_active: int = 0
    want_succeeded: int = 0
    want_failed: int = 0
    condition: tuple[str, str] | None = None
    suspend: bool = False


CASES: dict[str, OnFailureRow] = {
    "backoffLimit 0 should have 1 pod active": OnFailureRow(1, 1, 0, (0,), "Running", want_active=1),
    "backoffLimit 1 with restartCount 0 should have 1 pod active": OnFailureRow(
        1, 1, 1, (0,), "Running", want_active=1
    ),
    "backoffLimit 1 with restartCount 1 and podRunning should have 0 pod active": OnFailureRow(
        1, 1, 1, (1,), "Running", want_failed=1, condition=FAILED_BACKOFF
    ),
    "backoffLimit 1 with restartCount 1 and podPending should have 0 pod active": OnFailureRow(
        1, 1, 1, (1,), "Pending", want_failed=1, condition=FAILED_BACKOFF
    ),
    "too many job failures with podRunning - single pod": OnFailureRow(
        1, 5, 2, (2,), "Running", want_failed=1, condition=FAILED_BACKOFF
    ),
    "too many job failures with podPending - single pod": OnFailureRow(
        1, 5, 2, (2,), "Pending", want_failed=1, condition=FAILED_BACKOFF
    ),
    "too many job failures with podRunning - multiple pods": OnFailureRow(
        2, 5, 2, (1, 1), "Running", want_failed=2, condition=FAILED_BACKOFF
    ),
    "too many job failures with podPending - multiple pods": OnFailureRow(
        2, 5, 2, (1, 1), "Pending", want_failed=2, condition=FAILED_BACKOFF
    ),
    "not enough failures": OnFailureRow(2, 5, 3, (1, 1), "Running", want_active=2),
    "suspending a job": OnFailureRow(2, 4, 6, (1, 1), "Running", condition=SUSPENDED, suspend=True),
    "finished job": OnFailureRow(
        2, 4, 6, (1, 1, 2, 0), "Succeeded", want_succeeded=4, condition=COMPLETE, suspend=True
    ),
    "finished job; JobPodReplacementPolicy enabled": OnFailureRow(
        2, 4, 6, (1, 1, 2, 0), "Succeeded", want_succeeded=4, condition=COMPLETE, suspend=True
    ),
    "too many job failures with podRunning - multiple pods; JobPodReplacementPolicy enabled": OnFailureRow(
        2, 5, 2, (1, 1), "Running", want_failed=2, condition=FAILED_BACKOFF
    ),
}

SKIPPED = {
    "finished job; JobManagedBy enabled": NO_MANAGED_BY,
    "too many job failures with podRunning - multiple pods; JobManagedBy enabled": NO_MANAGED_BY,
}


@pytest.mark.parametrize(
    "row",
    [pytest.param(row, id=f"TestJobBackoffForOnFailure/{name}") for name, row in CASES.items()]
    + [
        pytest.param(None, id=f"TestJobBackoffForOnFailure/{name}", marks=pytest.mark.skip(reason=why))
        for name, why in SKIPPED.items()
    ],
)
def test_job_backoff_for_on_failure(row: OnFailureRow) -> None:
    n = len(row.restart_counts)
    pods = {phase: n if row.phase == phase else 0 for phase in ("Pending", "Running", "Succeeded")}
    controller, owned = adopted(
        Row(
            row.parallelism,
            row.completions,
            row.backoff_limit,
            pending=pods["Pending"],
            active=pods["Running"],
            succeeded=pods["Succeeded"],
            suspend=row.suspend,
            restart_policy="OnFailure",
            restart_counts=row.restart_counts,
        )
    )
    synced(controller, owned)
    assert controller.status_counts()["active"] == row.want_active
    assert (controller.succeeded, controller.failed) == (row.want_succeeded, row.want_failed)
    assert condition_of(controller) == row.condition
