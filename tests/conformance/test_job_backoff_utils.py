"""The Job controller's pod failure backoff: ``backoff_utils_test.go``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/job/backoff_utils_test.go``, against
``gpufleet.workloads.job``'s ``new_backoff_record`` (``backoffStore.newBackoffRecord``) and
``remaining_backoff_s`` (``backoffRecord.getRemainingTime``), and ``remaining_backoff_per_index_s``
(``getRemainingTimePerIndex``: the last failed pod written as its ``job-index-failure-count`` annotations,
failed at T). Times are seconds from the test's
``defaultTestTime`` (0.0); upstream's pods are written as their finish times; the record's key is left
out (one record per controller). The feature gates are 1.34's defaults.
"""

from __future__ import annotations

import pytest

from gpufleet.model.failed_indexes import INDEX_FAILURE_COUNT, INDEX_IGNORED_FAILURE_COUNT
from gpufleet.workloads.job import (
    BackoffRecord,
    new_backoff_record,
    remaining_backoff_per_index_s,
    remaining_backoff_s,
)

T = 0.0  # defaultTestTime
MS = 0.001
NO_POD_STATUS = (
    "getFinishedTime reads a pod's status (containers' FinishedAt, PodReady's transition, "
    "deletionTimestamp less its grace period, creation time): gpufleet's controller is told of each pod "
    "as it ends, at that moment, and keeps no pod status to read it from"
)

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


GET_FINISHED_TIME = [
    "Pod with multiple containers and all containers terminated",
    "Pod with multiple containers; two containers in terminated state and one in running state; fallback to "
    "deletionTimestamp",
    "fallback to deletionTimestamp",
    "fallback to deletionTimestamp, decremented by grace period",
    "fallback to PodReady.LastTransitionTime when status of the condition is False",
    "skip fallback to PodReady.LastTransitionTime when status of the condition is True",
    "fallback to creationTimestamp",
    "Pod with sidecar container and all containers terminated",
]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, id=f"TestGetFinishedTime/{name}", marks=pytest.mark.skip(reason=NO_POD_STATUS))
        for name in GET_FINISHED_TIME
    ],
)
def test_get_finished_time(name: str) -> None:
    raise AssertionError("skipped")


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
