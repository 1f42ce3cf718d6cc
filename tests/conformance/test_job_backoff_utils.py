"""The Job controller's pod failure backoff: ``backoff_utils_test.go``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/job/backoff_utils_test.go``, against
``gpufleet.workloads.job_backoff``'s ``new_backoff_record`` (``backoffStore.newBackoffRecord``) and
``remaining_backoff_s`` (``backoffRecord.getRemainingTime``), and ``remaining_backoff_per_index_s``
(``getRemainingTimePerIndex``: the last failed pod written as its ``job-index-failure-count`` annotations,
failed at T). Times are seconds from the test's
``defaultTestTime`` (0.0); upstream's pods are written as their finish times; the record's key is left
out (one record per controller). ``TestGetFinishedTime`` against ``gpufleet.kube.adoption.finished_time``
(what a snapshot's pod carries over, ``OwnedPod.finished_unix``), its pods written as their documents. The
feature gates are 1.34's defaults (``SidecarContainers`` on).
"""

from __future__ import annotations

from typing import Any

import pytest

from gpufleet.kube.adoption import finished_time
from gpufleet.model.failed_indexes import INDEX_FAILURE_COUNT, INDEX_IGNORED_FAILURE_COUNT
from gpufleet.workloads.job_backoff import (
    BackoffRecord,
    new_backoff_record,
    remaining_backoff_per_index_s,
    remaining_backoff_s,
)

T = 0.0  # defaultTestTime
MS = 0.001
# name: (old record, succeeded finish times, failed finish times, want record)
NEW_BACKOFF_RECORD: dict[str, tuple[BackoffRecord, list[float], list[float], BackoffRecord]] = {
    "Empty backoff store and one new failure": (BackoffRecord(), [], [T], BackoffRecord(1, T)),
    "Empty backoff store and two new failures": (BackoffRecord(), [], [T, T - 1 * MS], BackoffRecord(2, T)),
    "Empty backoff store, two failures followed by success": (
        BackoffRecord(),
        [T],
        [T - 2 * MS, T - 1 * MS],
        BackoffRecord(0, None),
    ),
    "Empty backoff store, two failures, one success and two more failures": (
        BackoffRecord(),
        [T - 2 * MS],
        [T, T - 4 * MS, T - 3 * MS, T - 1 * MS],
        BackoffRecord(2, T),
    ),
    "Backoff store having failure count 2 and one new failure": (
        BackoffRecord(2, None),
        [],
        [T],
        BackoffRecord(3, T),
    ),
    "Empty backoff store with success and failure at same timestamp": (
        BackoffRecord(),
        [T],
        [T],
        BackoffRecord(0, None),
    ),
    "Empty backoff store with no success/failure": (BackoffRecord(), [], [], BackoffRecord(0, None)),
    "Empty backoff store with one success": (BackoffRecord(), [T], [], BackoffRecord(0, None)),
}


@pytest.mark.parametrize(
    ("old", "succeeded", "failed", "want"),
    [pytest.param(*case, id=f"TestNewBackoffRecord/{name}") for name, case in NEW_BACKOFF_RECORD.items()],
)
def test_new_backoff_record(
    old: BackoffRecord, succeeded: list[float], failed: list[float], want: BackoffRecord
) -> None:
    assert new_backoff_record(old, succeeded, failed) == want


#: ``defaultTestTime`` of ``TestGetFinishedTime``, as RFC 3339 and Unix seconds
TEST_TIME, TEST_UNIX = "2009-11-10T23:00:00Z", 1257894000.0


def at(seconds: int) -> str:
    """``defaultTestTime`` plus ``seconds`` (at most 0, more than -60)."""
    return TEST_TIME if seconds == 0 else f"2009-11-10T22:59:{60 + seconds:02d}Z"


def terminated(finished: int | None) -> dict[str, Any]:
    """A container status terminated at ``finished`` (seconds from ``defaultTestTime``; None: no time)."""
    state = {} if finished is None else {"finishedAt": at(finished)}
    return {"state": {"terminated": state}}


RUNNING = {"state": {"running": {}}}

# name: (the pod's document, want: seconds from defaultTestTime)
GET_FINISHED_TIME: dict[str, tuple[dict[str, Any], float]] = {
    "Pod with multiple containers and all containers terminated": (
        {"status": {"containerStatuses": [terminated(-1), terminated(0), terminated(-2)]}},
        0,
    ),
    "Pod with multiple containers; two containers in terminated state and one in running state; fallback to "
    "deletionTimestamp": (
        {
            "metadata": {"deletionTimestamp": TEST_TIME},
            "status": {"containerStatuses": [terminated(-1), RUNNING, terminated(-2)]},
        },
        0,
    ),
    "fallback to deletionTimestamp": (
        {"metadata": {"deletionTimestamp": TEST_TIME}, "status": {"containerStatuses": [RUNNING]}},
        0,
    ),
    "fallback to deletionTimestamp, decremented by grace period": (
        {
            "metadata": {"deletionTimestamp": TEST_TIME, "deletionGracePeriodSeconds": 30},
            "status": {"containerStatuses": [RUNNING]},
        },
        -30,
    ),
    "fallback to PodReady.LastTransitionTime when status of the condition is False": (
        {
            "status": {
                "containerStatuses": [terminated(None)],
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "False",
                        "reason": "PodFailed",
                        "lastTransitionTime": TEST_TIME,
                    }
                ],
            }
        },
        0,
    ),
    "skip fallback to PodReady.LastTransitionTime when status of the condition is True": (
        {
            "metadata": {"deletionTimestamp": TEST_TIME},
            "status": {
                "containerStatuses": [terminated(None)],
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": at(-30)}],
            },
        },
        0,
    ),
    "fallback to creationTimestamp": (
        {"metadata": {"creationTimestamp": TEST_TIME}, "status": {"containerStatuses": [terminated(None)]}},
        0,
    ),
    "Pod with sidecar container and all containers terminated": (
        {
            "spec": {"initContainers": [{"name": "sidecar", "restartPolicy": "Always"}]},
            "status": {
                "containerStatuses": [terminated(-1)],
                "initContainerStatuses": [{"name": "sidecar", **terminated(0)}],
            },
        },
        0,
    ),
}


@pytest.mark.parametrize(
    ("pod", "want"),
    [pytest.param(*case, id=f"TestGetFinishedTime/{name}") for name, case in GET_FINISHED_TIME.items()],
)
def test_get_finished_time(pod: dict[str, Any], want: float) -> None:
    assert finished_time(pod) == TEST_UNIX + want


# name: (record, now, default backoff, max backoff, want seconds)
REMAINING: dict[str, tuple[BackoffRecord, float, float, float, float]] = {
    "no failures": (BackoffRecord(0, None), T, 5.0, 700.0, 0.0),
    "one failure; current time and failure time are same": (BackoffRecord(1, T), T, 5.0, 700.0, 5.0),
    "one failure; current time == 1 second + failure time": (BackoffRecord(1, T), T + 1, 5.0, 700.0, 4.0),
    "one failure; current time == expected backoff time": (BackoffRecord(1, T), T + 5, 5.0, 700.0, 0.0),
    "one failure; current time == expected backoff time + 1 Second": (
        BackoffRecord(1, T),
        T + 6,
        5.0,
        700.0,
        0.0,
    ),
    "three failures; current time and failure time are same": (BackoffRecord(3, T), T, 5.0, 700.0, 20.0),
    "eight failures; current time and failure time are same; backoff not exceeding maxBackoff": (
        BackoffRecord(8, T),
        T,
        5.0,
        700.0,
        640.0,
    ),
    "nine failures; current time and failure time are same; backoff exceeding maxBackoff": (
        BackoffRecord(9, T),
        T,
        5.0,
        700.0,
        700.0,
    ),
}


@pytest.mark.parametrize(
    ("record", "now", "default_s", "max_s", "want"),
    [pytest.param(*case, id=f"TestGetRemainingBackoffTime/{name}") for name, case in REMAINING.items()],
)
def test_get_remaining_backoff_time(
    record: BackoffRecord, now: float, default_s: float, max_s: float, want: float
) -> None:
    assert remaining_backoff_s(record, now, default_s, max_s) == want


# name: (the last failed pod's annotations (None: none), now, default backoff, max backoff, want seconds);
# the pod failed at T
PER_INDEX: dict[str, tuple[dict[str, str] | None, float, float, float, float]] = {
    "no failures": (None, 0.0, 5.0, 700.0, 0.0),
    "two prev failures; current time and failure time are same": (
        {INDEX_FAILURE_COUNT: "2"},
        T,
        5.0,
        700.0,
        20.0,
    ),
    "one prev failure counted and one ignored; current time and failure time are same": (
        {INDEX_FAILURE_COUNT: "1", INDEX_IGNORED_FAILURE_COUNT: "1"},
        T,
        5.0,
        700.0,
        20.0,
    ),
}


@pytest.mark.parametrize(
    ("last_failed", "now", "default_s", "max_s", "want"),
    [
        pytest.param(*case, id=f"TestGetRemainingBackoffTimePerIndex/{name}")
        for name, case in PER_INDEX.items()
    ],
)
def test_get_remaining_backoff_time_per_index(
    last_failed: dict[str, str] | None, now: float, default_s: float, max_s: float, want: float
) -> None:
    assert remaining_backoff_per_index_s(last_failed, T, now, default_s, max_s) == want
