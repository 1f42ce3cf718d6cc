"""The Job controller's pod failure backoff (``pkg/controller/job/backoff_utils.go``, and
``getPodsWithDelayedDeletionPerIndex`` of ``indexed_job_utils.go``): after a pod failed, the Job's next pod is
created only once ``DefaultJobPodFailureBackOff`` (10 s), doubling per failure since the last success, at most
``MaxJobPodFailureBackOff`` (10 min), has passed since the last failure ended (``backoffRecord``,
``newBackoffRecord``, ``getRemainingTime``); an Indexed Job with ``backoffLimitPerIndex`` backs off each index
on its own, from its last failed pod (``getRemainingTimePerIndex``).

A snapshot's Job carries the backoff over from its pods' finish times (``OwnedPod.finished_unix``:
``getFinishedTime``), as ages at the moment it is adopted (``finished_age_s``, negative: before it): the
record its live controller's store holds is rebuilt from the snapshot's ended pods (``newBackoffRecord`` of an
empty store), and each index's last failed pod not yet counted, whose deletion waits for its replacement
(``pods_with_delayed_deletion``), backs its index off.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpufleet.model.failed_indexes import index_absolute_failure_count
from gpufleet.model.owned import OwnedPod

#: ``pkg/controller/job``: ``DefaultJobPodFailureBackOff``, ``MaxJobPodFailureBackOff``
POD_FAILURE_BACKOFF_S, MAX_POD_FAILURE_BACKOFF_S = 10.0, 600.0


@dataclass(frozen=True, slots=True)
class BackoffRecord:
    """``backoffRecord``: the failures since the last success, and when the last of them ended."""

    failures_after_last_success: int = 0
    last_failure_s: float | None = None


#: the record of no failure since the last success (or none at all), shared by every Job that has it: a
#: Job's controller keeps its record for the whole run
NO_FAILURES = BackoffRecord()


def new_backoff_record(
    old: BackoffRecord, succeeded_s: Sequence[float], failed_s: Sequence[float]
) -> BackoffRecord:
    """``backoffStore.newBackoffRecord``: ``old`` after pods that ended at ``succeeded_s`` and
    ``failed_s``. A success clears the failures before it; only the failures that ended after the last
    success (strictly) count then."""
    failed = sorted(failed_s)
    if not succeeded_s:
        if not failed:
            return old
        return BackoffRecord(old.failures_after_last_success + len(failed), failed[-1])
    last_success = max(succeeded_s)
    after = [t for t in failed if t > last_success]
    return BackoffRecord(len(after), after[-1]) if after else NO_FAILURES


def remaining_backoff_s(
    record: BackoffRecord,
    now_s: float,
    default_s: float = POD_FAILURE_BACKOFF_S,
    max_s: float = MAX_POD_FAILURE_BACKOFF_S,
) -> float:
    """``backoffRecord.getRemainingTime``: ``default_s`` doubling per failure after the first, at most
    ``max_s``, less the time since the last failure; 0 without failures or once it has passed."""
    n = record.failures_after_last_success
    if n == 0 or record.last_failure_s is None:
        return 0.0
    backoff = default_s
    for _ in range(1, n):
        backoff *= 2
        if backoff >= max_s:
            backoff = max_s
            break
    elapsed = now_s - record.last_failure_s
    return 0.0 if backoff < elapsed else backoff - elapsed


def remaining_backoff_per_index_s(
    last_failed: Mapping[str, str] | None,
    last_failure_s: float,
    now_s: float,
    default_s: float = POD_FAILURE_BACKOFF_S,
    max_s: float = MAX_POD_FAILURE_BACKOFF_S,
) -> float:
    """``getRemainingTimePerIndex``: the backoff of an index before its next pod, from the annotations of its
    last failed pod (None: none failed), which ended at ``last_failure_s``: as ``remaining_backoff_s`` for
    its failures (counted or ignored, ``getIndexAbsoluteFailureCount``) and this one."""
    if last_failed is None:
        return 0.0
    record = BackoffRecord(index_absolute_failure_count(last_failed) + 1, last_failure_s)
    return remaining_backoff_s(record, now_s, default_s, max_s)


def finished_age_s(pod: OwnedPod, now_unix: float = 0.0) -> float:
    """When a snapshot's ``pod`` finished (``getFinishedTime``), in seconds from ``now_unix`` (negative:
    before it); one whose finish time nothing tells (upstream's zero time) finished long before."""
    return float("-inf") if pod.finished_unix is None else pod.finished_unix - now_unix


def last_failed_per_index(failed: Iterable[OwnedPod]) -> dict[int, OwnedPod]:
    """Of each completion index, the last of its ``failed`` pods (``getPodsWithDelayedDeletionPerIndex``'s
    choice): one replaces the one chosen so far when its absolute failure count is not lower and it did not
    finish before it; pods without a completion index are left out."""
    last: dict[int, OwnedPod] = {}
    for p in failed:
        index = p.completion_index
        if index is None:
            continue
        held = last.get(index)
        if held is None or (
            index_absolute_failure_count(held.pod.annotations)
            <= index_absolute_failure_count(p.pod.annotations)
            and finished_age_s(p) >= finished_age_s(held)
        ):
            last[index] = p
    return last


def pods_with_delayed_deletion(
    pods: Iterable[OwnedPod], completions: int, settled: Collection[int], replaces_terminating: bool
) -> dict[int, OwnedPod]:
    """``getPodsWithDelayedDeletionPerIndex``: the last failed pod (``isPodFailed``: Failed, or being deleted
    and not Succeeded where ``replaces_terminating``) of each index below ``completions`` that is neither
    succeeded nor failed nor active (``settled``), among those the Job's status does not count yet (their
    tracking finalizer kept, ``OwnedPod.uncounted``): the Job keeps it uncounted until the sync after its
    replacement is created, and backs its index off from it."""
    failed = (
        p
        for p in pods
        if p.uncounted
        and (p.phase == "Failed" or (replaces_terminating and p.terminating and p.phase != "Succeeded"))
        and (index := p.completion_index) is not None
        and index < completions
        and index not in settled
    )
    return last_failed_per_index(failed)
