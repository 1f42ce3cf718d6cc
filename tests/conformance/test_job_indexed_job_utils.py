"""An Indexed Job's completion indexes: ``indexed_job_utils_test.go``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/job/indexed_job_utils_test.go``.
``TestCalculateSucceededIndexes`` runs against what adoption (``gpufleet.kube.adoption``) counts of a
snapshot's Job: ``status.completedIndexes`` (``parse_indexes``, ``parseIndexesFromString``) and the
indexes of its Succeeded pods still holding the job-tracking finalizer (every upstream pod here holds it).
``TestFirstPendingIndexes`` runs against ``JobController``: an Indexed Job adopts the active pods and the
succeeded indexes, with ``parallelism`` its active pods of a valid index plus the count asked for; the pods
of an invalid index, which its first sync deletes (``activePodsForRemoval``), are gone; the indexes of the
pods it then creates are compared. ``TestAppendDuplicatedIndexPodsForRemoval`` runs against
``gpufleet.workloads.job_removal``. Upstream's intervals are written as sets of indexes.
``backoffLimitPerIndex`` (``TestIsIndexFailed``, ``TestGetIndexFailureCount``,
``TestGetNewIndexFailureCountValue``) runs against ``gpufleet.model.failed_indexes``, upstream's pods written
as their annotations and what ``matchPodFailurePolicy`` reads of them; ``TestCalculateFailedIndexes`` against
adoption as above. ``TestGetPodsWithDelayedDeletionPerIndex`` runs against
``gpufleet.workloads.job_backoff.pods_with_delayed_deletion``, on the pods as adoption reads them (counted
yet or not, their finish times: ``finished_time``), the succeeded and failed indexes as it counts them.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpufleet.kube.adoption import JOB_TRACKING_FINALIZER, _count_ended, _job_status, _Object, finished_time
from gpufleet.model.failed_indexes import (
    INDEX_FAILURE_COUNT,
    index_failure_count,
    is_index_failed,
    new_index_failure_counts,
)
from gpufleet.model.owned import JOB_COMPLETION_INDEX, Owned, OwnedPod
from gpufleet.model.pod import Pod
from gpufleet.model.pod_failure_policy import (
    DISRUPTION_TARGET,
    FAIL_INDEX,
    IGNORE,
    IN,
    ContainerExit,
    FailedPod,
    OnExitCodes,
    OnPodCondition,
    PodFailurePolicy,
    PodFailurePolicyRule,
)
from gpufleet.model.scenario import BarePod
from gpufleet.model.workloads import Job
from gpufleet.workloads.job import JobController
from gpufleet.workloads.job_backoff import pods_with_delayed_deletion
from gpufleet.workloads.job_removal import duplicated_index_pods

NO_INDEX = None  # noIndex: a pod without the completion index annotation
EXPECTED_RM_FINALIZERS = (
    "the controller's expectations of finalizer removals (expectedRmFinalizers) are not modelled: a "
    "snapshot's pod that holds the tracking finalizer is not counted yet"
)
SETS = "gpufleet keeps completion indexes as sets, not as orderedIntervals: there is no has() to test"
NO_GENERATE_NAME = (
    "gpufleet names an Indexed Job's pods <job>-<index> (retries -r<n>), without generateName's random "
    "suffix and its truncation to MaxGeneratedNameLength"
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
    "last pods active or succeeded": (6, 6, [("6", "Pending")], span((4, 5)), [0, 1, 2, 3]),
    "mixed": (
        5,
        20,
        [("3", "Pending"), ("5", "Running"), ("8", "Pending"), (NO_INDEX, "Running"), ("-3", "Running")],
        span((2, 4), (9, 9)),
        [0, 1, 6, 7, 10],
    ),
}


@pytest.mark.parametrize(
    ("cnt", "completions", "active", "succeeded", "want"),
    [pytest.param(*case, id=f"TestFirstPendingIndexes/{name}") for name, case in FIRST_PENDING.items()],
)
def test_first_pending_indexes(
    cnt: int,
    completions: int,
    active: list[tuple[str | None, str]],
    succeeded: frozenset[int],
    want: list[int],
) -> None:
    pods = [OwnedPod(indexed_pod(f"job-old-{i}", index), phase) for i, (index, phase) in enumerate(active)]
    valid = sum(1 for p in pods if p.completion_index is not None and p.completion_index < completions)
    job = Job("job", "default", Pod(""), parallelism=valid + cnt, completions=completions, indexed=True)
    controller = JobController(job)
    controller.adopt(Owned(pods=pods, succeeded=len(succeeded), completed_indexes=succeeded))
    for key, _ in controller.doomed():
        controller.finished(next(p.pod for p in pods if p.pod.key == key), succeeded=False)
    created = controller.wanted()
    assert [controller.active[p.key] for p in created] == want


SKIPPED = {
    "TestGetPodsWithDelayedDeletionPerIndex": (
        [
            "failed pod with expected finalizer removal; the pod's deletion is not delayed as it already "
            "started",
        ],
        EXPECTED_RM_FINALIZERS,
    ),
    "TestIntervalsHaveIndex": (
        ["empty", "before all", "after all", "in between", "in first", "in second"],
        SETS,
    ),
    "TestPodGenerateNameWithIndex": (
        [
            "short job name",
            "job name exceeds MaxGeneneratedNameLength",
            "job name with index suffix exceeds MaxGeneratedNameLength",
        ],
        NO_GENERATE_NAME,
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


# name: (pods (index, phase), completions, want removed, want left)
DUPLICATED: dict[
    str, tuple[list[tuple[str | None, str]], int, list[tuple[str | None, str]], list[tuple[str | None, str]]]
] = {
    "all unique": (
        [(NO_INDEX, "Pending"), ("2", "Pending"), ("5", "Running"), ("6", "Running")],
        6,
        [(NO_INDEX, "Pending"), ("6", "Running")],
        [("2", "Pending"), ("5", "Running")],
    ),
    "all with index": (
        [
            ("5", "Pending"),
            ("0", "Running"),
            ("3", "Pending"),
            ("0", "Running"),
            ("3", "Running"),
            ("0", "Pending"),
            ("6", "Running"),
            ("6", "Pending"),
        ],
        6,
        [("0", "Pending"), ("0", "Running"), ("3", "Pending"), ("6", "Running"), ("6", "Pending")],
        [("0", "Running"), ("3", "Running"), ("5", "Pending")],
    ),
    "mixed": (
        [
            (NO_INDEX, "Pending"),
            ("invalid", "Running"),
            ("-2", "Running"),
            ("0", "Pending"),
            ("1", "Pending"),
            ("1", "Pending"),
            ("1", "Running"),
        ],
        6,
        [
            (NO_INDEX, "Pending"),
            ("invalid", "Running"),
            ("-2", "Running"),
            ("1", "Pending"),
            ("1", "Pending"),
        ],
        [("0", "Pending"), ("1", "Running")],
    ),
}


@pytest.mark.parametrize(
    ("pods", "completions", "want_rm", "want_left"),
    [
        pytest.param(*case, id=f"TestAppendDuplicatedIndexPodsForRemoval/{name}")
        for name, case in DUPLICATED.items()
    ],
)
def test_append_duplicated_index_pods_for_removal(
    pods: list[tuple[str | None, str]],
    completions: int,
    want_rm: list[tuple[str | None, str]],
    want_left: list[tuple[str | None, str]],
) -> None:
    """``appendDuplicatedIndexPodsForRemoval``: of each index, all but the pod ``ActivePods`` ranks last
    (Pending before Running) are removed, and every pod of no index or of an index out of range."""
    owned = [OwnedPod(indexed_pod(f"pod-{i}", index), phase) for i, (index, phase) in enumerate(pods)]
    rm, left = duplicated_index_pods(owned, completions)

    def described(chosen: list[OwnedPod]) -> list[tuple[str | None, str]]:
        return [(p.pod.annotations.get(JOB_COMPLETION_INDEX), p.phase) for p in chosen]

    assert (described(rm), described(left)) == (want_rm, want_left)


def test_first_pending_indexes_with_failed_indexes() -> None:
    """``TestFirstPendingIndexes/with failed indexes``: a Job with ``backoffLimitPerIndex`` adopts its
    ``status.failedIndexes``, which are not created again."""
    job = Job(
        "job", "default", Pod(""), parallelism=2 + 5, completions=20, indexed=True, backoff_limit_per_index=1
    )
    controller = JobController(job)
    pods = [OwnedPod(indexed_pod(f"job-old-{i}", index), "Pending") for i, index in enumerate(("3", "9"))]
    controller.adopt(
        Owned(
            pods=pods,
            succeeded=3,
            completed_indexes=span((1, 1), (5, 5), (9, 9)),
            failed_indexes=span((2, 2), (6, 7)),
        )
    )
    created = controller.wanted()
    assert [controller.active[p.key] for p in created] == [0, 4, 8, 10, 11]


def count_pod(count: str | None) -> dict[str, str]:
    """``buildPod().indexFailureCount(count)``'s annotations."""
    return {} if count is None else {INDEX_FAILURE_COUNT: count}


@pytest.mark.parametrize(
    ("annotations", "want"),
    [
        pytest.param({}, 0, id="TestGetIndexFailureCount/no annotation"),
        pytest.param(count_pod("2"), 2, id="TestGetIndexFailureCount/valid value"),
        pytest.param(
            count_pod(str(2**31 - 1)), 2**31 - 1, id="TestGetIndexFailureCount/valid maxint32 value"
        ),
        pytest.param(count_pod(str(2**31)), 0, id="TestGetIndexFailureCount/too large value"),
        pytest.param(count_pod("-1"), 0, id="TestGetIndexFailureCount/negative value"),
        pytest.param(count_pod("xyz"), 0, id="TestGetIndexFailureCount/invalid int value"),
    ],
)
def test_get_index_failure_count(annotations: dict[str, str], want: int) -> None:
    assert index_failure_count(annotations) == want


FAIL_INDEX_ON_EXIT_3 = PodFailurePolicy(
    (PodFailurePolicyRule(FAIL_INDEX, on_exit_codes=OnExitCodes(IN, (3,))),)
)


# name: (backoffLimitPerIndex, policy, the failed pod's annotations, its container exit codes, want)
IS_INDEX_FAILED: dict[str, tuple[int, PodFailurePolicy | None, dict[str, str], tuple[int, ...], bool]] = {
    "failed pod exceeding backoffLimitPerIndex, when backoffLimitPerIndex=0": (
        0,
        None,
        count_pod("0"),
        (),
        True,
    ),
    "failed pod exceeding backoffLimitPerIndex, when backoffLimitPerIndex=1": (
        1,
        None,
        count_pod("1"),
        (),
        True,
    ),
    "matching FailIndex pod failure policy": (1, FAIL_INDEX_ON_EXIT_3, count_pod("0"), (3,), True),
}


@pytest.mark.parametrize(
    ("limit", "policy", "annotations", "exit_codes", "want"),
    [pytest.param(*case, id=f"TestIsIndexFailed/{name}") for name, case in IS_INDEX_FAILED.items()],
)
def test_is_index_failed(
    limit: int,
    policy: PodFailurePolicy | None,
    annotations: dict[str, str],
    exit_codes: tuple[int, ...],
    want: bool,
) -> None:
    pod = FailedPod("default", "mypod", container_statuses=tuple(ContainerExit("", c) for c in exit_codes))
    assert is_index_failed(limit, policy, annotations, pod) is want


IGNORE_DISRUPTION = PodFailurePolicy(
    (PodFailurePolicyRule(IGNORE, on_pod_conditions=(OnPodCondition(DISRUPTION_TARGET, "True"),)),)
)


# name: (policy, the replaced pod's annotations and conditions (None: no pod), want count, want ignored)
NEW_COUNTS: dict[str, tuple[PodFailurePolicy | None, tuple[dict[str, str], bool] | None, int, int]] = {
    "first pod created": (None, None, 0, 0),
    "failed pod being replaced with 0 index failure count": (None, (count_pod("0"), False), 1, 0),
    "failed pod being replaced with >0 index failure count": (None, (count_pod("3"), False), 4, 0),
    "failed pod being replaced, matching the ignore rule": (IGNORE_DISRUPTION, (count_pod("3"), True), 3, 1),
}


@pytest.mark.parametrize(
    ("policy", "replaced", "want_count", "want_ignored"),
    [pytest.param(*case, id=f"TestGetNewIndexFailureCountValue/{name}") for name, case in NEW_COUNTS.items()],
)
def test_get_new_index_failure_count_value(
    policy: PodFailurePolicy | None,
    replaced: tuple[dict[str, str], bool] | None,
    want_count: int,
    want_ignored: int,
) -> None:
    pod = None
    if replaced is not None:
        annotations, disrupted = replaced
        conditions = ((DISRUPTION_TARGET, "True"),) if disrupted else ()
        pod = (annotations, FailedPod("default", "a", conditions))
    assert new_index_failure_counts(policy, pod) == (want_count, want_ignored)


# name: (prev status.failedIndexes (None: unset), backoffLimitPerIndex, pods (index, failure count,
# tracking finalizer)), want failed indexes; every pod Failed, completions 2
CALCULATE_FAILED: dict[str, tuple[str | None, int, list[tuple[str, str, bool]], frozenset[int]]] = {
    "one new index failed": (None, 1, [("0", "0", True), ("1", "1", True)], span((1, 1))),
    "pod without finalizer is ignored": (None, 0, [("0", "0", False)], span()),
    "pod outside completions is ignored": (None, 0, [("3", "0", False)], span()),
    "extend the failed indexes": ("0", 0, [("1", "0", True)], span((0, 1))),
    "prev failed indexes empty": ("", 0, [("1", "0", True)], span((1, 1))),
    "prev failed indexes outside the completions": ("9", 0, [("1", "0", True)], span((1, 1))),
}


@pytest.mark.parametrize(
    ("prev", "limit", "pods", "want"),
    [pytest.param(*case, id=f"TestCalculateFailedIndexes/{name}") for name, case in CALCULATE_FAILED.items()],
)
def test_calculate_failed_indexes(
    prev: str | None, limit: int, pods: list[tuple[str, str, bool]], want: frozenset[int]
) -> None:
    """Against adoption (``_job_status``, ``_count_ended``): ``status.failedIndexes`` and the failed pods
    its status has not counted (holding the job-tracking finalizer)."""
    status = {} if prev is None else {"failedIndexes": prev}
    job = {
        "spec": {"completions": 2, "completionMode": "Indexed", "backoffLimitPerIndex": limit},
        "status": {"succeeded": 0, **status},
    }
    owned = _job_status(job)
    for i, (index, count, finalizer) in enumerate(pods):
        pod = Pod(f"pod-{i}", annotations={JOB_COMPLETION_INDEX: index, **count_pod(count)})
        finalizers = [JOB_TRACKING_FINALIZER] if finalizer else []
        owned.pods.append(OwnedPod(pod, "Failed"))
        _count_ended(
            owned,
            BarePod(pod, phase="Failed"),
            _Object("", None, {"metadata": {"finalizers": finalizers}}),
            job,
        )
    assert owned.failed_indexes == want


NOW = "2026-01-01T00:00:00Z"  # the test's ``now``


# name: (completions, backoffLimitPerIndex, pods (name, job-index-failure-count, phase, index, with the
# tracking finalizer, deletionTimestamp: seconds after now, None: none), want: the names kept)
DELAYED: dict[str, tuple[int, int, list[tuple[str, str, str, str, bool, int | None]], set[str]]] = {
    "failed pods are kept corresponding to non-failed indexes are kept": (
        3,
        1,
        [
            ("a", "0", "Failed", "0", True, None),
            ("b", "1", "Failed", "1", True, None),
            ("c", "0", "Failed", "2", True, None),
        ],
        {"a", "c"},
    ),
    "failed pod without finalizer; the pod's deletion is not delayed as it already started": (
        2,
        0,
        [("a", "0", "Failed", "0", False, None)],
        set(),
    ),
    "failed pod with index outside of completions; the pod's deletion is not delayed": (
        2,
        0,
        [("a", "0", "Failed", "4", True, None)],
        set(),
    ),
    "failed pod for active index; the pod's deletion is not delayed as it is already replaced": (
        2,
        1,
        [("a1", "0", "Failed", "0", True, None), ("a2", "1", "Running", "0", True, None)],
        set(),
    ),
    "failed pod for succeeded index; the pod's deletion is not delayed as it is already replaced": (
        2,
        1,
        [("a1", "0", "Failed", "0", True, None), ("a2", "1", "Succeeded", "0", True, None)],
        set(),
    ),
    "multiple failed pods for index with different failure count; only the pod with highest failure count is "
    "kept": (
        2,
        4,
        [
            ("a1", "0", "Failed", "0", True, None),
            ("a3", "2", "Failed", "0", True, None),
            ("a2", "1", "Failed", "0", True, None),
        ],
        {"a3"},
    ),
    "multiple failed pods for index with different finish times; only the last failed pod is kept": (
        2,
        4,
        [
            ("a1", "1", "Failed", "0", True, -1),
            ("a3", "1", "Failed", "0", True, 0),
            ("a2", "1", "Failed", "0", True, -2),
        ],
        {"a3"},
    ),
}


@pytest.mark.parametrize(
    ("completions", "limit", "pods", "want"),
    [
        pytest.param(*case, id=f"TestGetPodsWithDelayedDeletionPerIndex/{name}")
        for name, case in DELAYED.items()
    ],
)
def test_get_pods_with_delayed_deletion_per_index(
    completions: int, limit: int, pods: list[tuple[str, str, str, str, bool, int | None]], want: set[str]
) -> None:
    job: dict[str, Any] = {
        "spec": {"completionMode": "Indexed", "completions": completions, "backoffLimitPerIndex": limit},
        "status": {"active": 0},
    }
    owned = _job_status(job)
    for name, count, phase, index, tracked, deleted in pods:
        metadata: dict[str, Any] = {"uid": name, "finalizers": [JOB_TRACKING_FINALIZER] if tracked else []}
        if deleted is not None:
            metadata["deletionTimestamp"] = f"2025-12-31T23:59:{60 + deleted:02d}Z" if deleted else NOW
        body = {"metadata": metadata, "status": {"phase": phase}}
        pod = Pod(name, annotations={JOB_COMPLETION_INDEX: index, INDEX_FAILURE_COUNT: count})
        terminating = deleted is not None
        owned.pods.append(OwnedPod(pod, phase, terminating, finished_unix=finished_time(body)))
        _count_ended(owned, BarePod(pod, phase=phase), _Object(name, None, body), job)
    active = {i for p in owned.pods if p.active and (i := p.completion_index) is not None}
    settled = owned.completed_indexes | owned.failed_indexes | active
    kept = pods_with_delayed_deletion(owned.pods, completions, settled, replaces_terminating=False)
    assert {p.pod.name for p in kept.values()} == want
