"""An Indexed Job's ``backoffLimitPerIndex`` (``batch/v1``, GA in 1.33): each index's failures, counted on
its pods' annotations, and the indexes that failed (``pkg/controller/job/indexed_job_utils.go``).

Each pod of such a Job carries ``batch.kubernetes.io/job-index-failure-count`` (the failures of its index
before it, counted toward ``backoffLimitPerIndex``) and, once some were not counted (an ``Ignore`` rule of
``podFailurePolicy``), ``batch.kubernetes.io/job-index-ignored-failure-count``. A failed pod whose count
already reached ``backoffLimitPerIndex``, or that a ``FailIndex`` rule matches, fails its index: no pod of
it is created again, and the index joins ``status.failedIndexes`` (written as ``completedIndexes`` is:
``1,3-5``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpufleet.model.pod_failure_policy import (
    FAIL_INDEX,
    FailedPod,
    PodFailurePolicy,
    match_pod_failure_policy,
)

#: ``batch.JobIndexFailureCountAnnotation``, ``batch.JobIndexIgnoredFailureCountAnnotation``
INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
INDEX_IGNORED_FAILURE_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"
#: ``JobReasonMaxFailedIndexesExceeded``, ``JobReasonFailedIndexes`` and their conditions' messages
MAX_FAILED_INDEXES_EXCEEDED = (
    "MaxFailedIndexesExceeded",
    "Job has exceeded the specified maximal number of failed indexes",
)
FAILED_INDEXES = ("FailedIndexes", "Job has failed indexes")
MAX_INT32 = 2**31 - 1


def _parse_int32(value: str) -> int:
    """``parseInt32``: the value as Go's ``strconv.Atoi`` reads it, 0 when it does not parse or is negative
    or above ``MaxInt32``."""
    text = value[1:] if value[:1] in "+-" else value
    if not text.isascii() or not text.isdigit():
        return 0
    number = int(value)
    return number if 0 <= number <= MAX_INT32 else 0


def index_failure_count(annotations: Mapping[str, str]) -> int:
    """``getIndexFailureCount``: the pod's ``job-index-failure-count`` annotation, 0 when absent or
    invalid."""
    value = annotations.get(INDEX_FAILURE_COUNT)
    return 0 if value is None else _parse_int32(value)


def index_ignored_failure_count(annotations: Mapping[str, str]) -> int:
    """``parseIndexFailureIgnoreCountAnnotation``: its ``job-index-ignored-failure-count``, else 0."""
    value = annotations.get(INDEX_IGNORED_FAILURE_COUNT)
    return 0 if value is None else _parse_int32(value)


def new_index_failure_counts(
    policy: PodFailurePolicy | None, replaced: tuple[Mapping[str, str], FailedPod] | None
) -> tuple[int, int]:
    """``getNewIndexFailureCounts``: the failure and ignored-failure counts of the pod that replaces
    ``replaced`` (its annotations and what the policy reads of it; None: the index's first pod): its
    counts, the one its failure counts toward (``podFailurePolicy``) one more."""
    if replaced is None:
        return 0, 0
    annotations, pod = replaced
    count, ignored = index_failure_count(annotations), index_ignored_failure_count(annotations)
    if policy is None or match_pod_failure_policy(policy, pod).count_failed:
        return count + 1, ignored
    return count, ignored + 1


def index_failure_annotations(count: int, ignored: int) -> dict[str, str]:
    """``addIndexFailureCountAnnotation``: the count always, the ignored count once above 0."""
    out = {INDEX_FAILURE_COUNT: str(count)}
    if ignored > 0:
        out[INDEX_IGNORED_FAILURE_COUNT] = str(ignored)
    return out


def is_index_failed(
    backoff_limit_per_index: int,
    policy: PodFailurePolicy | None,
    annotations: Mapping[str, str],
    pod: FailedPod,
) -> bool:
    """``isIndexFailed`` for a failed pod: a ``FailIndex`` rule matches it, or its failure counts and its
    index's failure count already reached ``backoffLimitPerIndex``."""
    counted = True
    if policy is not None:
        match = match_pod_failure_policy(policy, pod)
        if match.action == FAIL_INDEX:
            return True
        counted = match.count_failed
    return counted and index_failure_count(annotations) >= backoff_limit_per_index


def format_indexes(indexes: Iterable[int]) -> str:
    """``orderedIntervals.String``: ``0,2-4``; an interval of two indexes is written ``1,2``."""
    parts: list[str] = []
    ordered = sorted(set(indexes))
    i = 0
    while i < len(ordered):
        first = last = ordered[i]
        while i + 1 < len(ordered) and ordered[i + 1] == last + 1:
            i += 1
            last = ordered[i]
        parts.append(str(first) if last == first else f"{first}{',' if last == first + 1 else '-'}{last}")
        i += 1
    return ",".join(parts)


def index_absolute_failure_count(annotations: Mapping[str, str]) -> int:
    """``getIndexAbsoluteFailureCount``: the index's failures before the pod, counted or ignored."""
    return index_failure_count(annotations) + index_ignored_failure_count(annotations)
