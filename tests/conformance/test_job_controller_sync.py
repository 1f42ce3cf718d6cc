"""The Job controller's sync: ``TestControllerSyncJob``, ``TestSyncJobPastDeadline`` and
``TestSyncJobWithJobBackoffLimitPerIndex`` and ``TestGetPodCreationInfoForIndependentIndexes``; and the
integration test ``TestSuspendJob``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/job/job_controller_test.go``. A row's Job and
pods become a cluster snapshot's: its pods are counted as adoption counts them (``gpufleet.kube.adoption``:
every upstream pod holds the job-tracking finalizer, the Job's status is empty unless the row gives one),
``JobController`` adopts them, deletes what ``doomed`` names (each deleted pod then ends Failed, as upstream
counts the pods of a failed Job) and creates what ``wanted`` returns. Compared: the creations and
deletions, the created completion indexes, ``status.active``/``succeeded``/``failed``/``completedIndexes``
and the Job's finished condition, or ``Suspended`` (``JobSuspended``) for a Job with ``spec.suspend``, whose
deleted pods are still terminating at the end of the sync (and never counted once gone: ``deleteJobPods``
removes their tracking finalizer first; ``TestSuspendJob``); ``status.terminating`` where the row gives it
(``CountTerminatingPods``: a row's ``terminatingPods`` are Running with a ``deletionTimestamp``, and the pods
the sync deletes are terminating at its end). The pods ``manageJob`` deletes (too many, of an invalid or
duplicated index: ``activePodsForRemoval``) are still terminating at the sync's end, as a suspended Job's;
only a failed Job's deleted pods end within the sync. A row's ``deleting`` Job has a ``deletionTimestamp``
(``Job.deleting``). ``status.ready`` is not modelled and not compared. The feature
gates are 1.34's defaults; a row's Job is not defaulted, as upstream's are not: without
``podReplacementPolicy`` it replaces terminating pods unless it has a ``podFailurePolicy``
(``onlyReplaceFailedPods``).

Upstream's ``test/integration/job/job_test.go`` (``TestSuspendJob``): a Job created suspended or not, then
updated to the other, checked after each step once its pods are created or gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from gpufleet.kube.adoption import (
    JOB_TRACKING_FINALIZER,
    _count_ended,
    _job_status,
    _Object,
    failed_pod_status,
    finished_time,
)
from gpufleet.model.completion_indexes import SuccessPolicy, SuccessPolicyRule
from gpufleet.model.failed_indexes import INDEX_FAILURE_COUNT
from gpufleet.model.owned import JOB_COMPLETION_INDEX, Owned, OwnedPod
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.pod_failure_policy import (
    OnExitCodes,
    OnPodCondition,
    PodFailurePolicy,
    PodFailurePolicyRule,
)
from gpufleet.model.scenario import BarePod
from gpufleet.model.workloads import REPLACE_FAILED, REPLACE_TERMINATING_OR_FAILED, Job
from gpufleet.workloads.job import BACKOFF_LIMIT_EXCEEDED, DEADLINE_EXCEEDED, JOB_SUSPENDED, JobController

COMPLETE = ("Complete", "")


def added_manually(kind: str) -> dict[str, Any]:
    """A Job's status with one condition of type ``kind`` and status ``False``, added by hand, and one active
    pod (``initialStatus``)."""
    condition = {"type": kind, "status": "False", "reason": "ConditionAddedManually", "message": "Testing"}
    return {"active": 1, "conditions": [condition]}


FAILED_BACKOFF = ("Failed", BACKOFF_LIMIT_EXCEEDED[0])
SUSPENDED = JOB_SUSPENDED[:2]

NO_API_ERRORS = "the fake pod control's errors and creation limit: gpufleet's pod creations do not fail"
NO_EXPECTATIONS = "the controller's expectations (creations/deletions not yet observed) are not modelled"
NO_BACKOFF_SEEDING = (
    "a backoff record put in the controller's in-memory store with no pod behind it (a failure whose pod is "
    "gone): no dump can express it: a controller that starts on a cluster has an empty store and rebuilds "
    "the record from the ended pods it lists (newBackoffRecord of no old record; a Job's status.failed is no "
    "record), so upstream's own restarted controller creates at once here, as gpufleet does "
    "(workloads.job_backoff)"
)
GATE_OFF = "the feature gate turned off: 1.34's default (PodIndexLabel GA, on) is the one modelled"
NO_MANAGED_BY = "spec.managedBy (JobManagedBy's FailureTarget-only condition) is not modelled"


@dataclass(frozen=True)
class Row:
    parallelism: int
    completions: int  # -1: unset (a work queue)
    backoff_limit: int = 0
    pending: int = 0
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0  # Running pods with a deletionTimestamp (``terminatingPods``)
    with_indexes: tuple[tuple[str, str], ...] = ()
    indexed: bool = False
    status: dict[str, Any] = field(default_factory=dict)
    suspend: bool = False
    deleting: bool = False  # the Job's metadata.deletionTimestamp is set
    restart_policy: str = "Always"  # the pod template's (a Pod's default)
    restart_counts: tuple[int, ...] = ()  # each pod's containers' restartCount, in order (else 0)
    policy: PodFailurePolicy | None = None  # spec.podFailurePolicy
    replacement: str | None = None  # spec.podReplacementPolicy
    #: a pod's ``status`` (``conditions``, ``containerStatuses``, ``initContainerStatuses``), by its position
    pod_statuses: dict[int, dict[str, Any]] = field(default_factory=dict)
    # expectations
    creations: int = 0
    deletions: int = 0
    want_active: int = 0
    want_succeeded: int = 0
    want_failed: int = 0
    completed_indexes: str = ""
    created_indexes: frozenset[int] | None = None
    condition: tuple[str, str] | None = None
    want_terminating: int | None = None  # status.terminating, where the row compares it


CASES: dict[str, Row] = {
    "job start": Row(2, 5, 6, creations=2, want_active=2),
    "WQ job start": Row(2, -1, 6, creations=2, want_active=2),
    "pending pods": Row(2, 5, 6, pending=2, want_active=2),
    "correct # of pods": Row(3, 5, 6, active=3, want_active=3),
    "WQ job: correct # of pods": Row(2, -1, 6, active=2, want_active=2),
    "too few active pods": Row(2, 5, 6, active=1, succeeded=1, creations=1, want_active=2, want_succeeded=1),
    "too few active pods and no back-offs": Row(1, 1, 6, creations=1, want_active=1),
    "too few active pods with a dynamic job": Row(2, -1, 6, active=1, creations=1, want_active=2),
    "failed + succeed pods: reset backoff delay": Row(
        2, 5, 6, active=1, succeeded=1, failed=1, creations=1, want_active=2, want_succeeded=1, want_failed=1
    ),
    "new failed pod": Row(2, 5, 6, active=1, failed=1, creations=1, want_active=2, want_failed=1),
    "no new pod; possible finalizer update of failed pod": Row(
        1, 1, 6, active=1, status={"active": 1, "failed": 1}, want_active=1, want_failed=1
    ),
    "job finish": Row(2, 5, 6, succeeded=5, want_succeeded=5, condition=COMPLETE),
    "WQ job finishing": Row(2, -1, 6, active=1, succeeded=1, want_active=1, want_succeeded=1),
    "WQ job all finished": Row(2, -1, 6, succeeded=2, want_succeeded=2, condition=COMPLETE),
    "WQ job all finished despite one failure": Row(
        2, -1, 6, succeeded=1, failed=1, want_succeeded=1, want_failed=1, condition=COMPLETE
    ),
    "status change": Row(2, 5, 6, active=2, succeeded=2, want_active=2, want_succeeded=2),
    "indexed job start": Row(
        2, 5, 6, indexed=True, creations=2, want_active=2, created_indexes=frozenset({0, 1})
    ),
    "indexed job completed": Row(
        2,
        3,
        6,
        indexed=True,
        with_indexes=(("0", "Succeeded"), ("1", "Failed"), ("1", "Succeeded"), ("2", "Succeeded")),
        want_succeeded=3,
        want_failed=1,
        completed_indexes="0-2",
        condition=COMPLETE,
    ),
    "indexed job failed": Row(
        2,
        3,
        0,
        indexed=True,
        with_indexes=(("0", "Succeeded"), ("1", "Failed"), ("2", "Running")),
        want_succeeded=1,
        want_failed=2,
        completed_indexes="0",
        condition=FAILED_BACKOFF,
        deletions=1,
    ),
    "count ready pods when job fails": Row(
        2, 3, 0, active=2, failed=1, want_failed=3, condition=FAILED_BACKOFF, deletions=2
    ),
    "indexed job repeated completed index": Row(
        2,
        3,
        6,
        indexed=True,
        with_indexes=(("0", "Succeeded"), ("1", "Succeeded"), ("1", "Succeeded")),
        creations=1,
        want_active=1,
        want_succeeded=2,
        completed_indexes="0,1",
        created_indexes=frozenset({2}),
    ),
    "indexed job some running and completed pods": Row(
        8,
        20,
        6,
        indexed=True,
        with_indexes=(
            ("0", "Running"),
            ("2", "Succeeded"),
            ("3", "Pending"),
            ("4", "Succeeded"),
            ("5", "Succeeded"),
            ("7", "Succeeded"),
            ("8", "Succeeded"),
            ("9", "Succeeded"),
        ),
        creations=6,
        want_active=8,
        want_succeeded=6,
        completed_indexes="2,4,5,7-9",
        created_indexes=frozenset({1, 6, 10, 11, 12, 13}),
    ),
    "indexed job some failed pods": Row(
        3,
        4,
        6,
        indexed=True,
        with_indexes=(("0", "Failed"), ("1", "Pending"), ("2", "Failed")),
        creations=2,
        want_active=3,
        want_failed=2,
        created_indexes=frozenset({0, 2}),
    ),
    # "deleting: true" there only keeps manageJob from running; the failure path is the same
    "too many job failures": Row(2, 5, 0, failed=1, want_failed=1, condition=FAILED_BACKOFF),
    # ready pods and (PodReplacementPolicy) terminating pods are not compared: the three rows are one
    "suspending a job with satisfied expectations": Row(
        2, 4, 6, active=2, suspend=True, deletions=2, condition=SUSPENDED
    ),
    "suspending a job with satisfied expectations; PodReplacementPolicy enabled": Row(
        2, 4, 6, active=2, suspend=True, deletions=2, condition=SUSPENDED, want_terminating=2
    ),
    "count ready pods when suspending a job with satisfied expectations": Row(
        2, 4, 6, active=2, suspend=True, deletions=2, condition=SUSPENDED
    ),
    # its status's Suspended condition: not read (a snapshot Job's conditions are not), so the condition
    # Suspended=False (JobResumed) the sync writes is not compared; it starts as a new Job starts
    "resuming a suspended job": Row(2, 4, 6, creations=2, want_active=2),
    # podReplacementPolicy: Failed holds the terminating pod's replacement back and does not count it
    # (onlyReplaceFailedPods: wantActive - terminating - active); TerminatingOrFailed, or unset without a
    # podFailurePolicy, counts it failed (isPodFailed) and replaces it
    "WQ job: recreate pods when failed": Row(
        1,
        -1,
        6,
        active=1,
        failed=1,
        terminating=1,
        replacement=REPLACE_FAILED,
        want_active=1,
        want_failed=1,
        want_terminating=1,
    ),
    "WQ job: turn on PodReplacementPolicy but not set PodReplacementPolicy": Row(
        1, 1, 6, active=1, failed=1, terminating=1, want_active=1, want_failed=2, want_terminating=1
    ),
    "WQ job: recreate pods when terminating or failed": Row(
        1,
        -1,
        6,
        active=1,
        failed=1,
        terminating=1,
        replacement=REPLACE_TERMINATING_OR_FAILED,
        want_active=1,
        want_failed=2,
        want_terminating=1,
    ),
    # the terminating pod has no completion index: not counted (trackJobStatusAndRemoveFinalizers)
    "indexed job with some pods deleted, podReplacementPolicy Failed": Row(
        2,
        5,
        6,
        indexed=True,
        terminating=1,
        replacement=REPLACE_FAILED,
        creations=1,
        want_active=1,
        created_indexes=frozenset({0}),
        want_terminating=1,
    ),
    "indexed job with some pods deleted, podReplacementPolicy TerminatingOrFailed": Row(
        2,
        5,
        6,
        indexed=True,
        terminating=1,
        replacement=REPLACE_TERMINATING_OR_FAILED,
        creations=2,
        want_active=2,
        created_indexes=frozenset({0, 1}),
        want_terminating=1,
    ),
    "count terminating pods when indexed job fails and PodReplacementPolicy enabled": Row(
        2,
        3,
        0,
        indexed=True,
        with_indexes=(("0", "Succeeded"), ("1", "Failed"), ("2", "Running")),
        want_succeeded=1,
        want_failed=2,
        completed_indexes="0",
        condition=FAILED_BACKOFF,
        deletions=1,
        want_terminating=1,
    ),
    # a condition of status False is ignored (hasSuccessCriteriaMetCondition and syncJob's FailureTarget need
    # status True): the Job runs on; upstream keeps it in its status, gpufleet's conditions are those that
    # hold, so none is compared
    "FailureTarget=False condition added manually is ignored": Row(
        1, 1, 0, active=1, status=added_manually("FailureTarget"), want_active=1
    ),
    "SuccessCriteriaMet=False condition added manually is ignored": Row(
        1, 1, 0, active=1, status=added_manually("SuccessCriteriaMet"), want_active=1
    ),
    # manageJob deletes the active pods beyond wantActive (activePodsForRemoval) with deleteJobPods: neither
    # counted nor replaced, terminating at the sync's end (status.terminating); the terminating pods under
    # podReplacementPolicy Failed (or a podFailurePolicy: onlyReplaceFailedPods) are not counted failed
    "more terminating pods than parallelism": Row(
        1,
        1,
        6,
        active=2,
        terminating=4,
        replacement=REPLACE_FAILED,
        deletions=1,
        want_active=1,
        want_terminating=5,
    ),
    "more terminating pods than parallelism; PodFailurePolicy used": Row(
        1, 1, 6, active=2, terminating=4, policy=PodFailurePolicy(()), deletions=1, want_active=1
    ),
    "too many active pods": Row(2, 5, 6, active=3, deletions=1, want_active=2),
    "too many active pods; PodReplacementPolicy enabled": Row(
        2, 5, 6, active=3, deletions=1, want_active=2, want_terminating=1
    ),
    "count ready pods when too many active pods": Row(2, 5, 6, active=3, deletions=1, want_active=2),
    "more active pods than parallelism": Row(2, 5, 6, active=10, deletions=8, want_active=2),
    "more active pods than remaining completions": Row(
        3, 4, 6, active=3, succeeded=2, deletions=1, want_active=2, want_succeeded=2
    ),
    # a Job being deleted: syncJob does not run manageJob (no creations, no deletions, no Suspended condition)
    "deleting job": Row(
        2, 5, 6, deleting=True, pending=1, active=1, succeeded=1, want_active=2, want_succeeded=1
    ),
    "suspending a deleted job": Row(2, 4, 6, active=2, suspend=True, deleting=True, want_active=2),
    "suspending a deleted job; PodReplacementPolicy enabled": Row(
        2, 4, 6, active=2, suspend=True, deleting=True, want_active=2, want_terminating=0
    ),
    # an Indexed Job's active pods of no index, of an index out of range, or of an index another active pod
    # holds (but the one ActivePods ranks last) are deleted (appendDuplicatedIndexPodsForRemoval), never
    # counted (getValidPodsWithFilter); a deleting sync creates nothing
    "indexed job some pods without index": Row(
        2,
        5,
        6,
        active=1,
        succeeded=1,
        failed=1,
        indexed=True,
        with_indexes=(
            ("invalid", "Running"),
            ("invalid", "Succeeded"),
            ("invalid", "Failed"),
            ("invalid", "Pending"),
            ("0", "Succeeded"),
            ("1", "Running"),
            ("2", "Running"),
        ),
        deletions=3,
        want_active=2,
        want_succeeded=1,
        completed_indexes="0",
    ),
    "indexed job repeated indexes": Row(
        5,
        5,
        6,
        succeeded=1,
        failed=1,
        indexed=True,
        with_indexes=(
            ("invalid", "Running"),
            ("0", "Succeeded"),
            ("1", "Running"),
            ("2", "Running"),
            ("2", "Pending"),
        ),
        deletions=2,
        want_active=2,
        want_succeeded=1,
        completed_indexes="0",
    ),
    "indexed job with indexes outside of range": Row(
        2,
        5,
        6,
        indexed=True,
        with_indexes=(
            ("0", "Succeeded"),
            ("5", "Running"),
            ("6", "Succeeded"),
            ("7", "Pending"),
            ("8", "Failed"),
        ),
        deletions=2,
        want_succeeded=1,
        completed_indexes="0",
    ),
}

SKIPPED = {
    "too few active pods and active back-off": NO_BACKOFF_SEEDING,
    "too few active pods and active back-off with running pods": NO_BACKOFF_SEEDING,
    "too few active pods, with controller error": NO_API_ERRORS,
    "too many active pods, with controller error": NO_API_ERRORS,
    "only new failed pod with controller error": NO_API_ERRORS,
    "limited pods": NO_API_ERRORS,
    "job failures, unsatisfied expectations": NO_EXPECTATIONS,
    "suspending a job with unsatisfied expectations": NO_EXPECTATIONS,
    "count ready pods when suspending a job with unsatisfied expectations": NO_EXPECTATIONS,
    "suspending a job with unsatisfied expectations; PodReplacementPolicy enabled": NO_EXPECTATIONS,
    "indexed job with podIndexLabel feature disabled": GATE_OFF,
    "backoff limit exceeded; JobManagedBy enabled": NO_MANAGED_BY,
}


def intervals(indexes: frozenset[int]) -> str:
    """``orderedIntervals.String``: ``0,2-4``; an interval of two is written ``5,6``."""
    parts: list[str] = []
    ordered = sorted(indexes)
    start = 0
    for i, index in enumerate(ordered):
        if i + 1 < len(ordered) and ordered[i + 1] == index + 1:
            continue
        first = ordered[start]
        parts.append(str(first) if first == index else f"{first}{',' if index == first + 1 else '-'}{index}")
        start = i + 1
    return ",".join(parts)


def snapshot_pods(row: Row) -> list[tuple[str | None, str, bool]]:
    """``setPodsStatuses`` then ``setPodsStatusesWithIndexes``: (completion index, phase, whether it has a
    ``deletionTimestamp``) of each pod."""
    pods: list[tuple[str | None, str, bool]] = []
    for phase, count in (("Pending", row.pending), ("Running", row.active)):
        pods += [(None, phase, False)] * count
    pods += [(None, "Succeeded", False)] * row.succeeded + [(None, "Failed", False)] * row.failed
    pods += [(None, "Running", True)] * row.terminating
    return pods + [(index, phase, False) for index, phase in row.with_indexes]


#: the sync's time (upstream's fake clock ``now``), as RFC 3339 and Unix seconds
NOW, NOW_UNIX = "2026-01-01T00:00:00Z", 1767225600.0
TRACKED = _Object("", None, {"metadata": {"finalizers": [JOB_TRACKING_FINALIZER]}})


def adopt_pod(
    owned: Owned,
    body: dict[str, Any],
    policy: Any,
    name: str,
    phase: str,
    annotations: dict[str, str],
    status: dict[str, Any],
    restarts: int = 0,
    terminating: bool = False,
    job: Job | None = None,
) -> None:
    """One snapshot pod of the Job ``body`` (its finalizer on; ``terminating``: with a ``deletionTimestamp``),
    read as ``claim`` reads it: a failed one as its status tells of it (``failed_pod_status``), counted as
    the Job's ``podFailurePolicy`` counts it, a terminating one as the Job ``job``'s ``podReplacementPolicy``
    does (``isPodFailed``)."""
    pod = Pod(name, namespace="default", annotations=annotations, owner=OwnerRef("Job", "job"))
    bare = BarePod(pod, phase=phase)
    body_status = {"status": {"phase": phase, **status}}
    failure = failed_pod_status(bare, body_status) if phase == "Failed" else None
    finished = finished_time(body_status)
    owned.pods.append(OwnedPod(pod, phase, terminating, failure, restarts, finished_unix=finished))
    replaces_terminating = job is not None and not job.only_replace_failed_pods
    _count_ended(owned, bare, TRACKED, body, policy, replaces_terminating)


def adopted(row: Row, deadline_s: float | None = None) -> tuple[JobController, Owned]:
    """The row's Job (with ``activeDeadlineSeconds`` ``deadline_s``) adopting its snapshot's pods
    (``mypod-<i>``, as upstream's ``podBuilder`` names them), a failed one read as its status tells of it
    (``failed_pod_status``) and counted as the Job's ``podFailurePolicy`` counts it."""
    completions = None if row.completions < 0 else row.completions
    spec: dict[str, Any] = {"completionMode": "Indexed" if row.indexed else "NonIndexed"}
    if completions is not None:
        spec["completions"] = completions
    body = {"spec": spec, "status": row.status}
    owned = _job_status(body)
    template = Pod("", restart_policy=row.restart_policy)
    job = Job(
        "job",
        "default",
        template,
        row.parallelism,
        completions,
        row.backoff_limit,
        suspend=row.suspend,
        pod_failure_policy=row.policy,
        indexed=row.indexed,
        pod_replacement_policy=row.replacement,
        deleting=row.deleting,
    )
    for i, (index, phase, terminating) in enumerate(snapshot_pods(row)):
        annotations = {} if index is None else {JOB_COMPLETION_INDEX: index}
        restarts = row.restart_counts[i] if i < len(row.restart_counts) else 0
        status = row.pod_statuses.get(i, {})
        name = f"mypod-{i}"
        adopt_pod(owned, body, row.policy, name, phase, annotations, status, restarts, terminating, job)
    controller = JobController(replace(job, active_deadline_s=deadline_s))
    controller.adopt(owned)
    return controller, owned


def synced(controller: JobController, owned: Owned) -> tuple[list[Pod], list[tuple[str, str]]]:
    """What one sync of the adopted Job does: the pods it deletes (a failed Job's each then ends Failed, as
    upstream counts the pods of a failed Job, ``deleteActivePods``; those ``manageJob`` deletes, a suspended
    Job's or too many, are still terminating at the sync's end, and would not count once gone) and then
    creates (nothing where it deleted: ``manageJob``'s pod deletion takes precedence)."""
    doomed = controller.doomed()
    for key, _ in doomed if controller.failure is not None else []:
        gone = next(p.pod for p in owned.pods if p.pod.key == key)
        assert controller.finished(gone, succeeded=False)
    return controller.wanted(), doomed


def condition_of(controller: JobController) -> tuple[str, str] | None:
    """The Job's finished condition (type, reason), else its ``Suspended`` one, else None."""
    if controller.failure is not None:
        return ("Failed", controller.failure[0])
    if controller.done:
        return COMPLETE
    return next(((c.type, c.reason) for c in controller.status_conditions()), None)


@pytest.mark.parametrize(
    "row",
    [pytest.param(row, id=f"TestControllerSyncJob/{name}") for name, row in CASES.items()]
    + [
        pytest.param(None, id=f"TestControllerSyncJob/{name}", marks=pytest.mark.skip(reason=why))
        for name, why in SKIPPED.items()
    ],
)
def test_controller_sync_job(row: Row) -> None:
    controller, owned = adopted(row)
    terminating = controller.status_counts()["terminating"]  # (the pods it deletes in this sync too)
    created, doomed = synced(controller, owned)

    assert (len(created), len(doomed)) == (row.creations, row.deletions)
    if row.created_indexes is not None:
        assert {controller.active[p.key] for p in created} == row.created_indexes
    assert controller.status_counts()["active"] == row.want_active
    assert (controller.succeeded, controller.failed) == (row.want_succeeded, row.want_failed)
    if row.indexed:
        assert intervals(owned.completed_indexes) == row.completed_indexes
    assert condition_of(controller) == row.condition
    if row.want_terminating is not None:
        assert terminating == row.want_terminating


#: ``TestSuspendJob``'s cases: the Job's (``spec.suspend``, active pods wanted) as created, then as updated
SUSPEND_CASES: dict[str, tuple[tuple[bool, int], tuple[bool, int]]] = {
    "feature=false,create=false,update=true": ((False, 2), (True, 0)),
    "feature=false,create=true,update=false": ((True, 0), (False, 2)),
}


def settled(suspend: bool, active: int) -> JobController:
    """``TestSuspendJob``'s Job (parallelism 2, completions 4) with ``spec.suspend`` ``suspend``, adopting
    the ``active`` running pods the step before left, once its sync's deletions are gone (each ended as the
    kubelet ends a deleted pod: Failed) and its creations made."""
    controller, owned = adopted(Row(2, 4, 6, active=active, suspend=suspend))
    for key, _ in controller.doomed():
        controller.finished(next(p.pod for p in owned.pods if p.pod.key == key), succeeded=False)
    controller.wanted()
    return controller


@pytest.mark.parametrize(
    ("create", "update"),
    [pytest.param(*steps, id=f"TestSuspendJob/{name}") for name, steps in SUSPEND_CASES.items()],
)
def test_suspend_job(create: tuple[bool, int], update: tuple[bool, int]) -> None:
    """After each step ``validateJobPodsStatus`` compares all of ``podsByStatus`` (``cmp.Equal``): the
    active pods wanted and 0 succeeded, 0 failed, 0 terminating (the pods a suspended Job deleted are not
    counted, ``deleteJobPods``; ``Ready`` is not modelled); the ``Suspended`` condition holds while the Job is
    suspended (its ``False``/``Resumed`` condition after the update is not modelled: none)."""
    active = 0
    for suspend, want_active in (create, update):
        controller = settled(suspend, active)
        counts = {"active": want_active, "succeeded": 0, "failed": 0, "terminating": 0}
        assert controller.status_counts() == counts
        assert condition_of(controller) == (SUSPENDED if suspend else None)
        active = want_active


FAILED_DEADLINE = ("Failed", DEADLINE_EXCEEDED[0])
#: one pod succeeded, one active when the deadline passed: deleted, and counted failed
PAST_DEADLINE_ONE_SUCCEEDED = Row(
    1, 2, 6, active=1, succeeded=1, deletions=1, want_succeeded=1, want_failed=1, condition=FAILED_DEADLINE
)


@dataclass(frozen=True)
class DeadlineRow:
    """A row of ``TestSyncJobPastDeadline``: a NonIndexed Job (``row``: its counts, pods and expectations)
    with ``activeDeadlineSeconds`` whose ``status.startTime`` is ``start_s`` ago."""

    deadline_s: int
    start_s: int
    row: Row


DEADLINE_CASES: dict[str, DeadlineRow] = {
    "activeDeadlineSeconds less than single pod execution": DeadlineRow(
        10, 15, Row(1, 1, 6, active=1, deletions=1, want_failed=1, condition=FAILED_DEADLINE)
    ),
    "activeDeadlineSeconds bigger than single pod execution": DeadlineRow(
        10,
        15,
        PAST_DEADLINE_ONE_SUCCEEDED,
    ),
    "activeDeadlineSeconds times-out before any pod starts": DeadlineRow(
        10, 10, Row(1, 1, 6, condition=FAILED_DEADLINE)
    ),
    "activeDeadlineSeconds with backofflimit reach": DeadlineRow(
        1, 10, Row(1, 1, 0, failed=1, want_failed=1, condition=FAILED_BACKOFF)
    ),
    "activeDeadlineSeconds exceeded; JobPodReplacementPolicy enabled": DeadlineRow(
        10,
        15,
        PAST_DEADLINE_ONE_SUCCEEDED,
    ),
    "activeDeadlineSeconds exceeded; JobManagedBy enabled": DeadlineRow(
        10,
        15,
        PAST_DEADLINE_ONE_SUCCEEDED,
    ),
    "activeDeadlineSeconds exceeded and backofflimit reached; JobManagedBy enabled": DeadlineRow(
        1, 10, Row(1, 1, 0, failed=1, want_failed=1, condition=FAILED_BACKOFF)
    ),
    "activeDeadlineSeconds is not triggered when Job is suspended": DeadlineRow(
        10, 15, Row(1, 2, 6, suspend=True, condition=SUSPENDED)
    ),
}
DEADLINE_SKIPPED: dict[str, str] = {}


@pytest.mark.parametrize(
    "case",
    [pytest.param(case, id=f"TestSyncJobPastDeadline/{name}") for name, case in DEADLINE_CASES.items()]
    + [
        pytest.param(None, id=f"TestSyncJobPastDeadline/{name}", marks=pytest.mark.skip(reason=why))
        for name, why in DEADLINE_SKIPPED.items()
    ],
)
def test_sync_job_past_deadline(case: DeadlineRow) -> None:
    """The row's Job adopted; the driver tells it its deadline passed where ``startTime`` is at least
    ``activeDeadlineSeconds`` ago (``pastActiveDeadline``, checked in ``syncJob`` after ``backoffLimit``).
    Compared as ``TestControllerSyncJob``'s rows are (the finished condition: its reason; upstream's rows run
    with JobPodReplacementPolicy and JobManagedBy on or off, which only changes whether ``FailureTarget`` or
    ``Failed`` is written in this one sync; no creations in any row)."""
    row = case.row
    controller, owned = adopted(row, float(case.deadline_s))
    if case.start_s >= case.deadline_s:
        controller.deadline_passed()
    created, doomed = synced(controller, owned)

    assert (len(created), len(doomed)) == (0, row.deletions)
    assert controller.status_counts()["active"] == row.want_active
    assert (controller.succeeded, controller.failed) == (row.want_succeeded, row.want_failed)
    assert condition_of(controller) == row.condition


@dataclass(frozen=True)
class PerIndexRow:
    """A row of ``TestSyncJobWithJobBackoffLimitPerIndex``: an Indexed Job (``parallelism`` and
    ``completions``) with ``backoffLimitPerIndex``, its pods (index, phase, ``job-index-failure-count``),
    the Job's ``podFailurePolicy`` and each pod's ``status.containerStatuses`` (by the pod's position)."""

    parallelism: int
    backoff_limit: int
    backoff_limit_per_index: int
    pods: tuple[tuple[str, str, str], ...]
    max_failed_indexes: int | None = None
    policy: PodFailurePolicy | None = None
    container_statuses: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    # expectations
    want_active: int = 0
    want_succeeded: int = 0
    want_failed: int = 0
    failed_indexes: str = ""
    completed_indexes: str = ""
    conditions: tuple[tuple[str, str], ...] = ()
    message: str = ""  # the conditions' message, where the row gives one


MAX_INT32 = 2**31 - 1
FAILED_INDEXES_CONDITIONS = (("FailureTarget", "FailedIndexes"), ("Failed", "FailedIndexes"))
MAX_FAILED_ROW = PerIndexRow(
    4,
    MAX_INT32,
    1,
    (("0", "Failed", "1"), ("1", "Succeeded", "0"), ("2", "Failed", "1"), ("3", "Running", "0")),
    max_failed_indexes=1,
    want_succeeded=1,
    want_failed=3,
    failed_indexes="0,2",
    completed_indexes="1",
    conditions=(("FailureTarget", "MaxFailedIndexesExceeded"),),
)
FAILED_INDEXES_ROW = PerIndexRow(
    2,
    MAX_INT32,
    1,
    (("0", "Failed", "1"), ("1", "Succeeded", "0")),
    want_succeeded=1,
    want_failed=1,
    failed_indexes="0",
    completed_indexes="1",
    conditions=FAILED_INDEXES_CONDITIONS,
)
PER_INDEX_CASES: dict[str, PerIndexRow] = {
    "successful job after a single failure within index": PerIndexRow(
        2,
        MAX_INT32,
        1,
        (("0", "Failed", "0"), ("0", "Succeeded", "1"), ("1", "Succeeded", "0")),
        want_succeeded=2,
        want_failed=1,
        completed_indexes="0,1",
        conditions=(("SuccessCriteriaMet", "CompletionsReached"), ("Complete", "CompletionsReached")),
    ),
    "single failed pod replaced already": PerIndexRow(
        2, MAX_INT32, 1, (("0", "Failed", "0"), ("0", "Pending", "1")), want_active=2, want_failed=1
    ),
    "single failed index due to exceeding the backoff limit per index, the job continues": PerIndexRow(
        2, MAX_INT32, 1, (("0", "Failed", "1"),), want_active=1, want_failed=1, failed_indexes="0"
    ),
    "job failed due to exceeding backoffLimit before backoffLimitPerIndex": PerIndexRow(
        2,
        1,
        1,
        (("0", "Failed", "0"), ("1", "Failed", "0")),
        want_failed=2,
        conditions=(("FailureTarget", "BackoffLimitExceeded"), ("Failed", "BackoffLimitExceeded")),
    ),
    "job failed due to failed indexes": FAILED_INDEXES_ROW,
    "job failed due to exceeding max failed indexes": MAX_FAILED_ROW,
    "job failed due to failed indexes; JobManagedBy enabled": FAILED_INDEXES_ROW,
    "job failed due to exceeding max failed indexes; JobManagedBy enabled": MAX_FAILED_ROW,
}


def on_exit_code_3(action: str) -> PodFailurePolicy:
    """The rows' policy: one rule of ``action`` on exit code 3 (``OnExitCodesOpIn``, ``[]int32{3}``)."""
    return PodFailurePolicy((PodFailurePolicyRule(action, OnExitCodes("In", (3,))),))


def exited_3(name: str = "") -> dict[int, list[dict[str, Any]]]:
    """The first pod's container ``name`` terminated with exit code 3."""
    return {0: [{"name": name, "state": {"terminated": {"exitCode": 3}}}]}


PER_INDEX_CASES |= {
    "single failed index due to FailIndex action, the job continues": PerIndexRow(
        2,
        MAX_INT32,
        1,
        (("0", "Failed", "0"),),
        policy=on_exit_code_3("FailIndex"),
        container_statuses=exited_3(),
        want_active=1,
        want_failed=1,
        failed_indexes="0",
    ),
    "job failed index due to FailJob action": PerIndexRow(
        2,
        6,
        1,
        (("0", "Failed", "0"),),
        policy=on_exit_code_3("FailJob"),
        container_statuses=exited_3("x"),
        want_failed=1,
        conditions=(("FailureTarget", "PodFailurePolicy"), ("Failed", "PodFailurePolicy")),
        # (upstream's pod is mypod-0)
        message="Container x for pod default/pod-0 failed with exit code 3 matching FailJob rule at index 0",
    ),
    # index 1's pod failed at the sync's time (its container's finishedAt ``now``): its per-index backoff
    # (getRemainingTimePerIndex, 10 s) holds its replacement back and, with it, its count
    # (getPodsWithDelayedDeletionPerIndex): active 1, failed 0
    "replacement pod creation delayed by per-index backoff while another index runs": PerIndexRow(
        2,
        MAX_INT32,
        1,
        (("0", "Running", "0"), ("1", "Failed", "0")),
        container_statuses={1: [{"name": "x", "state": {"terminated": {"finishedAt": NOW}}}]},
        want_active=1,
    ),
    # index 0's pod finished long ago (no finish time): its backoff over, the sync creates indexes 0 and 1 and
    # leaves the pod uncounted (getPodsWithDelayedDeletionPerIndex keeps its finalizer until the next sync)
    "single failed pod, not counted as the replacement pod creation is delayed": PerIndexRow(
        2, MAX_INT32, 1, (("0", "Failed", "0"),), want_active=2
    ),
    "job pod failure ignored due to matching Ignore action": PerIndexRow(
        2,
        6,
        1,
        (("0", "Failed", "0"),),
        policy=on_exit_code_3("Ignore"),
        container_statuses=exited_3("x"),
        want_active=2,
    ),
}
PER_INDEX_GATE_OFF = (
    "the feature gates turned off (emulating 1.32 or 1.33): 1.34's defaults (JobBackoffLimitPerIndex, "
    "JobPodReplacementPolicy, JobManagedBy on) are the ones modelled"
)
PER_INDEX_SKIPPED = {
    "job with finished indexes; failedIndexes are cleaned when JobBackoffLimitPerIndex disabled": (
        PER_INDEX_GATE_OFF
    ),
    "job failed due to failed indexes; JobPodReplacementPolicy and JobManagedBy disabled": PER_INDEX_GATE_OFF,
    "job failed due to exceeding max failed indexes; JobPodReplacementPolicy and JobManagedBy disabled": (
        PER_INDEX_GATE_OFF
    ),
}


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(row, id=f"TestSyncJobWithJobBackoffLimitPerIndex/{name}")
        for name, row in PER_INDEX_CASES.items()
    ]
    + [
        pytest.param(
            None, id=f"TestSyncJobWithJobBackoffLimitPerIndex/{name}", marks=pytest.mark.skip(reason=why)
        )
        for name, why in PER_INDEX_SKIPPED.items()
    ],
)
def test_sync_job_with_job_backoff_limit_per_index(row: PerIndexRow) -> None:
    """As ``test_controller_sync_job``, with ``status.failedIndexes`` (``calculateFailedIndexes``) and the
    Job's conditions compared; a pod the Job deletes ends at once, so where upstream's sync leaves only
    ``FailureTarget`` (a pod still terminating) only that first condition is compared."""
    spec: dict[str, Any] = {
        "completionMode": "Indexed",
        "completions": row.parallelism,
        "backoffLimitPerIndex": row.backoff_limit_per_index,
    }
    body = {"spec": spec, "status": {}}
    owned = _job_status(body)
    owned.adopted_unix = NOW_UNIX  # the sync's time: a pod's finish time counts its backoff from it
    for i, (index, phase, count) in enumerate(row.pods):
        annotations = {JOB_COMPLETION_INDEX: index, INDEX_FAILURE_COUNT: count}
        status = {"containerStatuses": row.container_statuses.get(i, [])}
        adopt_pod(owned, body, row.policy, f"pod-{i}", phase, annotations, status)
    job = Job(
        "job",
        "default",
        Pod(""),
        row.parallelism,
        row.parallelism,
        row.backoff_limit,
        indexed=True,
        backoff_limit_per_index=row.backoff_limit_per_index,
        max_failed_indexes=row.max_failed_indexes,
        pod_failure_policy=row.policy,
    )
    controller = JobController(job)
    controller.adopt(owned)
    for key, _ in controller.doomed():  # deleted: each ends Failed
        gone = next(p.pod for p in owned.pods if p.pod.key == key)
        assert controller.finished(gone, succeeded=False)
    controller.wanted()

    assert len(controller.active) == row.want_active
    assert (controller.succeeded, controller.failed) == (row.want_succeeded, row.want_failed)
    completed = {"completedIndexes": row.completed_indexes} if row.completed_indexes else {}
    assert controller.status_indexes() == {**completed, "failedIndexes": row.failed_indexes}
    assert intervals(owned.completed_indexes) == row.completed_indexes
    got = tuple((c.type, c.reason) for c in controller.status_conditions())
    assert got[: len(row.conditions)] == row.conditions
    assert bool(got) == bool(row.conditions)
    if row.message:
        assert {c.message for c in controller.status_conditions()} == {row.message}


# name: (the indexes to add, each index's last failed pod (its job-index-failure-count, when it finished:
# seconds from now), want: the indexes created now, the remaining time)
CREATION_INFO: dict[str, tuple[list[int], dict[int, tuple[str, int]], list[int], float]] = {
    "simple index creation": ([1, 3], {}, [1, 3], 0.0),
    "subset of indexes can be recreated now": ([1, 3], {1: ("0", 0)}, [3], 0.0),
    "subset of indexes can be recreated now as the pods failed long time ago": (
        [1, 3],
        {1: ("0", 0), 3: ("0", -10)},
        [3],
        0.0,
    ),
    "no indexes can be recreated now, need to wait default pod failure backoff": (
        [1, 2, 3],
        {1: ("1", 0), 2: ("0", 0), 3: ("2", 0)},
        [],
        10.0,
    ),
    "no indexes can be recreated now, need to wait but 1s already passed": (
        [1, 2, 3],
        {1: ("1", -1), 2: ("0", -1), 3: ("2", -1)},
        [],
        9.0,
    ),
}


@pytest.mark.parametrize(
    ("to_add", "last_failed", "want", "want_remaining"),
    [
        pytest.param(*case, id=f"TestGetPodCreationInfoForIndependentIndexes/{name}")
        for name, case in CREATION_INFO.items()
    ],
)
def test_get_pod_creation_info_for_independent_indexes(
    to_add: list[int], last_failed: dict[int, tuple[str, int]], want: list[int], want_remaining: float
) -> None:
    """``getPodCreationInfoForIndependentIndexes``: an Indexed Job of 4 completions with
    ``backoffLimitPerIndex`` whose indexes not to add run; each index's last failed pod, not counted yet,
    finished (its container's ``finishedAt``, where upstream's has its ``deletionTimestamp``: the same
    ``getFinishedTime``) some seconds before its adoption. The indexes whose backoff ended are created now
    (remaining 0); if none, nothing is, and the remaining time is the least of their backoffs (``held_s``)."""
    body: dict[str, Any] = {
        "spec": {"completionMode": "Indexed", "completions": 4, "backoffLimitPerIndex": MAX_INT32},
        "status": {},
    }
    owned = _job_status(body)
    owned.adopted_unix = NOW_UNIX
    for index in sorted(set(range(4)) - set(to_add)):
        annotations = {JOB_COMPLETION_INDEX: str(index), INDEX_FAILURE_COUNT: "0"}
        adopt_pod(owned, body, None, f"pod-{index}", "Running", annotations, {})
    for index, (count, finished) in last_failed.items():
        annotations = {JOB_COMPLETION_INDEX: str(index), INDEX_FAILURE_COUNT: count}
        ended = {
            "state": {
                "terminated": {"finishedAt": f"2025-12-31T23:59:{60 + finished:02d}Z" if finished else NOW}
            }
        }
        adopt_pod(owned, body, None, f"failed-{index}", "Failed", annotations, {"containerStatuses": [ended]})
    job = Job("job", "default", Pod(""), 4, 4, MAX_INT32, indexed=True, backoff_limit_per_index=MAX_INT32)
    controller = JobController(job)
    controller.adopt(owned)
    created = sorted(controller.active[p.key] for p in controller.wanted())
    assert created == want
    assert (0.0 if created else min(controller.held_s())) == want_remaining


def test_sync_job_with_job_success_policy_success_criteria_met_never_fails() -> None:
    """``TestSyncJobWithJobSuccessPolicy/job with successPolicy and podFailurePolicy; jobPodReplacementPolicy
    feature enabled; job with SuccessCriteriaMet has never been transitioned to FailureTarget and Failed even
    if job meets podFailurePolicy``: the status's ``SuccessCriteriaMet`` (``hasSuccessCriteriaMetCondition``)
    is the Job's finished condition, so its failed pod, though a ``FailJob`` rule matches it, does not fail it
    (``getFailJobMessage`` is not asked): it counts failed and the Job is ``Complete`` with the condition's
    reason and message."""
    matched = "Matched rules at index 0"
    condition = {
        "type": "SuccessCriteriaMet",
        "status": "True",
        "reason": "SuccessPolicy",
        "message": matched,
    }
    spec = {"completionMode": "Indexed", "completions": 2}
    body = {"spec": spec, "status": {"succeeded": 1, "completedIndexes": "1", "conditions": [condition]}}
    policy = PodFailurePolicy(
        (PodFailurePolicyRule("FailJob", on_pod_conditions=(OnPodCondition("DisruptionTarget"),)),)
    )
    owned = _job_status(body)
    disrupted = {"conditions": [{"type": "DisruptionTarget", "status": "True"}]}
    adopt_pod(owned, body, policy, "pod-a", "Failed", {JOB_COMPLETION_INDEX: "0"}, disrupted)
    adopt_pod(owned, body, policy, "pod-b", "Succeeded", {JOB_COMPLETION_INDEX: "1"}, {})
    job = Job(
        "job",
        "default",
        Pod(""),
        2,
        2,
        MAX_INT32,
        indexed=True,
        pod_failure_policy=policy,
        success_policy=SuccessPolicy((SuccessPolicyRule(succeeded_count=1),)),
    )
    controller = JobController(job)
    controller.adopt(owned)

    assert (controller.succeeded, controller.failed, controller.status_indexes()) == (
        1,
        1,
        {"completedIndexes": "1"},
    )
    got = [(c.type, c.reason, c.message) for c in controller.status_conditions()]
    assert got == [("SuccessCriteriaMet", "SuccessPolicy", matched), ("Complete", "SuccessPolicy", matched)]
    assert (controller.doomed(), controller.wanted()) == ([], [])
