"""An Indexed Job's completion indexes: ``indexed_job_utils_test.go``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/job/indexed_job_utils_test.go``.
``TestCalculateSucceededIndexes`` runs against what adoption (``gpufleet.kube.adoption``) counts of a
snapshot's Job: ``status.completedIndexes`` (``parse_indexes``, ``parseIndexesFromString``) and the
indexes of its Succeeded pods still holding the job-tracking finalizer (every upstream pod here holds it).
``TestFirstPendingIndexes`` runs against ``JobController``: it adopts the active pods and the succeeded
indexes, with ``parallelism`` the active pods plus the count asked for, and the indexes of the pods it
creates are compared. Upstream's intervals are written as sets of indexes.
"""

from __future__ import annotations

import pytest

from gpufleet.kube.adoption import JOB_TRACKING_FINALIZER, _count_ended, _job_status, _Object
from gpufleet.model.owned import JOB_COMPLETION_INDEX, Owned, OwnedPod
from gpufleet.model.pod import Pod
from gpufleet.model.scenario import BarePod
from gpufleet.model.workloads import Job
from gpufleet.workloads.job import JobController

NO_INDEX = None  # noIndex: a pod without the completion index annotation
PER_INDEX = "backoffLimitPerIndex (failed indexes, the per-index failure count annotations) is not modelled"
SETS = "gpufleet keeps completion indexes as sets, not as orderedIntervals: there is no has() to test"
NO_DUPLICATE_REMOVAL = (
    "gpufleet's Job controller makes one pod per index and adopts a snapshot's pods as they are: it "
    "removes no duplicate-index pods (appendDuplicatedIndexPodsForRemoval)"
)
NO_GENERATE_NAME = (
    "gpufleet names an Indexed Job's pods <job>-<index> (retries -r<n>), without generateName's random "
    "suffix and its truncation to MaxGeneratedNameLength"
)
OUT_OF_RANGE_ACTIVE = (
    "an adopted active pod of an index outside completions (6 of 6) counts as active in gpufleet, which "
    "then creates 3; upstream's manageJob deletes such a pod and the test asks firstPendingIndexes for 6"
)
INVALID_INDEX_ACTIVE = (
    "gpufleet gives an adopted active pod without a valid completion index (noIndex, -3) the next free "
    "index (0, 1); upstream's manageJob deletes such pods and firstPendingIndexes ignores them"
)


def span(*intervals: tuple[int, int]) -> frozenset[int]:
    return frozenset(i for first, last in intervals for i in range(first, last + 1))


# name: (prevSucceeded, pods (index, phase), completions, want status indexes, want indexes)
SUCCEEDED: dict[str, tuple[str, list[tuple[str | None, str]], int, frozenset[int], frozenset[int]]] = {
    "one index": ("", [("1", "Succeeded")], 2, span(), span((1, 1))),
    "two separate": (
        "",
        [("2", "Failed"), ("5", "Succeeded"), ("5", "Succeeded"), ("10", "Failed"), ("10", "Succeeded")],
        11,
        span(),
        span((5, 5), (10, 10)),
    ),
    "two intervals": (
        "",
        [("0", "Running"), ("1", "Pending")] + [(str(i), "Succeeded") for i in (2, 3, 5, 6, 7)],
        8,
        span(),
        span((2, 3), (5, 7)),
    ),
    "one index and one interval": (
        "",
        [("0", "Succeeded"), ("1", "Failed")]
        + [(str(i), "Succeeded") for i in (2, 3, 4, 5)]
        + [(NO_INDEX, "Succeeded"), ("-2", "Succeeded")],
        6,
        span(),
        span((0, 0), (2, 5)),
    ),
    "out of range": (
        "",
        [(str(i), "Succeeded") for i in (0, 1, 2)]
        + [
            ("3", "Failed"),
            ("4", "Succeeded"),
            ("5", "Succeeded"),
            (NO_INDEX, "Succeeded"),
            ("-2", "Succeeded"),
        ],
        5,
        span(),
        span((0, 2), (4, 4)),
    ),
    "prev interval out of range": ("0-5,8-10", [], 8, span((0, 5)), span((0, 5))),
    "prev interval partially out of range": ("0-5,8-10", [], 10, span((0, 5), (8, 9)), span((0, 5), (8, 9))),
    "prev and new separate": (
        "0,4,5,10-12",
        [("2", "Succeeded"), ("7", "Succeeded"), ("8", "Succeeded")],
        13,
        span((0, 0), (4, 5), (10, 12)),
        span((0, 0), (2, 2), (4, 5), (7, 8), (10, 12)),
    ),
    "prev between new": (
        "3,4,6",
        [("2", "Succeeded"), ("7", "Succeeded"), ("8", "Succeeded")],
        9,
        span((3, 4), (6, 6)),
        span((2, 4), (6, 8)),
    ),
    "new between prev": (
        "2,7,8",
        [("3", "Succeeded"), ("4", "Succeeded"), ("6", "Succeeded")],
        9,
        span((2, 2), (7, 8)),
        span((2, 4), (6, 8)),
    ),
    "new within prev": (
        "2-7",
        [("0", "Succeeded"), ("3", "Succeeded"), ("5", "Succeeded"), ("9", "Succeeded")],
        10,
        span((2, 7)),
        span((0, 0), (2, 7), (9, 9)),
    ),
    "corrupted interval": ("0,1-foo,bar", [("3", "Succeeded")], 4, span((0, 0)), span((0, 0), (3, 3))),
}


def indexed_pod(name: str, index: str | None) -> Pod:
    annotations = {} if index is None else {JOB_COMPLETION_INDEX: index}
    return Pod(name, annotations=annotations)


@pytest.mark.parametrize(
    ("prev", "pods", "completions", "want_status", "want"),
    [pytest.param(*case, id=f"TestCalculateSucceededIndexes/{name}") for name, case in SUCCEEDED.items()],
)
def test_calculate_succeeded_indexes(
    prev: str,
    pods: list[tuple[str | None, str]],
    completions: int,
    want_status: frozenset[int],
    want: frozenset[int],
) -> None:
    job = {"spec": {"completions": completions}, "status": {"completedIndexes": prev}}
    owned = _job_status(job)
    assert owned.completed_indexes == want_status
    tracked = _Object("", None, {"metadata": {"finalizers": [JOB_TRACKING_FINALIZER]}})
    for i, (index, phase) in enumerate(pods):
        pod = indexed_pod(f"pod-{i}", index)
        owned.pods.append(OwnedPod(pod, phase))
        _count_ended(owned, BarePod(pod, phase=phase), tracked, job)
    assert owned.completed_indexes == want


# name: (cnt, completions, active pods (index, phase), succeeded indexes, want)
FIRST_PENDING: dict[str, tuple[int, int, list[tuple[str | None, str]], frozenset[int], list[int]]] = {
    "cnt greater than completions": (5, 3, [], span(), [0, 1, 2]),
    "cnt less than completions": (2, 5, [], span(), [0, 1]),
    "first pods active": (3, 10, [("0", "Running"), ("1", "Pending")], span(), [2, 3, 4]),
}
FIRST_PENDING_SKIPPED = {
    "last pods active or succeeded": OUT_OF_RANGE_ACTIVE,
    "mixed": INVALID_INDEX_ACTIVE,
    "with failed indexes": PER_INDEX,
}


@pytest.mark.parametrize(
    ("cnt", "completions", "active", "succeeded", "want"),
    [pytest.param(*case, id=f"TestFirstPendingIndexes/{name}") for name, case in FIRST_PENDING.items()]
    + [
        pytest.param(
            0, 0, [], span(), [], id=f"TestFirstPendingIndexes/{name}", marks=pytest.mark.skip(reason=why)
        )
        for name, why in FIRST_PENDING_SKIPPED.items()
    ],
)
def test_first_pending_indexes(
    cnt: int,
    completions: int,
    active: list[tuple[str | None, str]],
    succeeded: frozenset[int],
    want: list[int],
) -> None:
    job = Job("job", "default", Pod(""), parallelism=len(active) + cnt, completions=completions)
    controller = JobController(job)
    pods = [OwnedPod(indexed_pod(f"job-old-{i}", index), phase) for i, (index, phase) in enumerate(active)]
    controller.adopt(Owned(pods=pods, succeeded=len(succeeded), completed_indexes=succeeded))
    created = controller.wanted()
    assert [controller.active[p.key] for p in created] == want


SKIPPED = {
    "TestIsIndexFailed": (
        [
            "failed pod exceeding backoffLimitPerIndex, when backoffLimitPerIndex=0",
            "failed pod exceeding backoffLimitPerIndex, when backoffLimitPerIndex=1",
            "matching FailIndex pod failure policy",
        ],
        PER_INDEX,
    ),
    "TestCalculateFailedIndexes": (
        [
            "one new index failed",
            "pod without finalizer is ignored",
            "pod outside completions is ignored",
            "extend the failed indexes",
            "prev failed indexes empty",
            "prev failed indexes outside the completions",
        ],
        PER_INDEX,
    ),
    "TestGetPodsWithDelayedDeletionPerIndex": (
        [
            "failed pods are kept corresponding to non-failed indexes are kept",
            "failed pod without finalizer; the pod's deletion is not delayed as it already started",
            "failed pod with expected finalizer removal; the pod's deletion is not delayed as it already "
            "started",
            "failed pod with index outside of completions; the pod's deletion is not delayed",
            "failed pod for active index; the pod's deletion is not delayed as it is already replaced",
            "failed pod for succeeded index; the pod's deletion is not delayed as it is already replaced",
            "multiple failed pods for index with different failure count; only the pod with highest failure "
            "count is kept",
            "multiple failed pods for index with different finish times; only the last failed pod is kept",
        ],
        PER_INDEX,
    ),
    "TestGetNewIndexFailureCountValue": (
        [
            "first pod created",
            "failed pod being replaced with 0 index failure count",
            "failed pod being replaced with >0 index failure count",
            "failed pod being replaced, matching the ignore rule",
        ],
        PER_INDEX,
    ),
    "TestIntervalsHaveIndex": (
        ["empty", "before all", "after all", "in between", "in first", "in second"],
        SETS,
    ),
    "TestAppendDuplicatedIndexPodsForRemoval": (
        ["all unique", "all with index", "mixed"],
        NO_DUPLICATE_REMOVAL,
    ),
    "TestPodGenerateNameWithIndex": (
        [
            "short job name",
            "job name exceeds MaxGeneneratedNameLength",
            "job name with index suffix exceeds MaxGeneratedNameLength",
        ],
        NO_GENERATE_NAME,
    ),
    "TestGetIndexFailureCount": (
        [
            "no annotation",
            "valid value",
            "valid maxint32 value",
            "too large value",
            "negative value",
            "invalid int value",
        ],
        PER_INDEX,
    ),
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(f"{test}/{case}", id=f"{test}/{case}", marks=pytest.mark.skip(reason=why))
        for test, (cases, why) in SKIPPED.items()
        for case in cases
    ],
)
def test_not_modelled(name: str) -> None:
    raise AssertionError("skipped")
