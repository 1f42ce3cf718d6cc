"""Job (``pkg/controller/job``): keep ``parallelism`` pods active until ``completions`` have
succeeded (work-queue mode when completions is unset: done once any pod succeeds); a failed pod
is replaced under the same index (``-r<n>``) until ``backoffLimit`` failures, after the pod failure
backoff: 10 s doubling per failure since the last success, at most 10 min
(``DefaultJobPodFailureBackOff``, ``MaxJobPodFailureBackOff``): ``manageJob`` holds every creation of the
Job back until then (``getRemainingTime``, on the run's clock: ``kind.KeepsTime``).
Pods are named ``<job>-<index>``, retries ``<job>-<index>-r<n>``, in either
completion mode (upstream's are the API server's ``generateName`` ones: ``<job>-<index>-<random>`` in
Indexed mode, ``podGenerateNameWithIndex``, ``<job>-<random>`` otherwise). An Indexed Job's pods carry their
completion index as label and annotation ``batch.kubernetes.io/job-completion-index``
(``addCompletionIndexLabel``, ``addCompletionIndexAnnotation``); its ``spec.hostname`` ``<job>-<index>`` and
``JOB_COMPLETION_INDEX`` environment variable, which only the containers see, are not set.

A snapshot's Job carries its pod failure backoff over (``workloads.job_backoff``): from when its ended pods
finished (``getFinishedTime``: their containers' ``finishedAt``, ...; on the run's clock), the record of the
failures after its last success (``newBackoffRecord``) holds every creation back until its backoff has passed
(``manageJob``), and its failures count on in the run; with ``backoffLimitPerIndex`` each index whose last
failed pod is not counted yet (``getPodsWithDelayedDeletionPerIndex``) waits its own backoff (none where it
has passed), that pod uncounted until the sync after its replacement is created (1 s later:
``kind.SyncsAgain``), while the other indexes are created. Without a time 0 for the run
(``model.node_readiness.clock_zero``) nothing is carried over.

A Job of a cluster snapshot adopts its pods there (``getPodsForJob``): its active ones count toward
``parallelism`` under their completion index (an Indexed Job's annotation), its ended ones as its
status counts them (a failed one not yet counted as its ``podFailurePolicy`` counts it, from its
status's conditions and exit codes, ``kube.adoption``; a failed one a ``FailJob`` rule matches fails the
Job, ``getFailJobMessage``, as does the Job's own ``FailureTarget`` condition, with its reason and message;
under ``restartPolicy: OnFailure`` its active ones' ``restartCount``, toward
``pastBackoffLimitOnFailure``), and new pods take the lowest indexes neither active nor completed
(``firstPendingIndexes``) under names the snapshot does not hold.

One sync creates at most ``MaxPodCreateDeletePerSync`` (500) pods, or deletes at most 500 found too many
(``manageJob``); the rest is left to the next sync, ``SyncJobBatchPeriod`` (1 s) later, as the pods' add or
delete events enqueue the Job (``enqueueSyncJobBatched``; ``kind.SyncsAgain``): a Job of ``parallelism``
2,000 creates its pods at 0, 1, 2 and 3 s.

Under Kueue with ``kueue.x-k8s.io/job-min-parallelism`` it may be admitted with fewer pods than its
``parallelism`` (partial admission): it runs with the count admitted until Kueue evicts it, then asks for its
spec's again (``control.port.AdmitsPartially``).

``spec.podFailurePolicy`` (``model.pod_failure_policy``) decides how a failed pod counts, from what the
simulation tells of it (``failed_with``: the ``DisruptionTarget`` condition of a preempted, evicted or
orphaned pod, its first container's exit code where the kubelet would report one: 137 for an OOM kill or a
container killed at deletion, ``gpufleet.io/exit-code``'s): ``Ignore`` does not count it toward
``backoffLimit`` (its replacement still waits the pod failure backoff, which counts every failure),
``FailJob`` fails the Job (reason ``PodFailurePolicy``).
``activeDeadlineSeconds`` after its ``status.startTime`` (``pastActiveDeadline``) a Job not yet finished
fails (``DeadlineExceeded``): the start time is when the controller started (a snapshot's Job: from the
snapshot, its ``status.startTime`` not read), or for a Job Kueue manages, which starts suspended, its latest
admission (a suspended Job's time does not count: Kueue's ``Job.Stop`` clears the start time when it evicts
the Job, and ``syncJob`` sets it anew when it resumes; the driver arms the deadline then). A deadline of 0
fails the Job before it creates any pod (``syncJob`` checks ``pastActiveDeadline`` before ``manageJob``):
failed 0; under Kueue its gated pods (stand-ins for the none a suspended Job has) are dropped uncounted as
Kueue admits it, and it fails then. A Job that failed
(``BackoffLimitExceeded``, ``PodFailurePolicy``, ``DeadlineExceeded``, ``MaxFailedIndexesExceeded``) deletes
its active pods (``deleteActivePods``), which count as failed at once: in the sync that finds the Job failed,
"every non-terminated pod is considered failed" (``trackJobStatusAndRemoveFinalizers``), matched by its
``podFailurePolicy`` as the pod is then, running: no container has terminated, so no ``onExitCodes`` rule
matches it (not the exit code 137 its container is killed with afterwards), and it counts.

Under ``restartPolicy: OnFailure`` the kubelet restarts a failed container in place (``sim.pod_lifecycle``):
once the restart counts of the Job's active pods, summed, reach ``backoffLimit`` (exceed 0 for a limit of 0),
the Job fails (``BackoffLimitExceeded``, ``pastBackoffLimitOnFailure``) and deletes its active pods, which
count as failed.

An Indexed Job's ``spec.successPolicy`` (``model.completion_indexes``) succeeds it once its succeeded
indexes meet a rule (``SuccessCriteriaMet``, reason ``SuccessPolicy``); it then deletes its active pods too.
What a user reads of the Job (``kind.ReportsStatus``): its conditions, the interim ``FailureTarget`` or
``SuccessCriteriaMet`` first, then ``Failed`` or ``Complete`` once none of its pods is terminating, and its
pod counts (``sim.workload_status``).

An Indexed Job with ``backoffLimitPerIndex`` (``model.failed_indexes``) counts each index's failures on its
pods' ``batch.kubernetes.io/job-index-failure-count`` annotation: a failed pod whose count reached the limit,
or that a ``FailIndex`` rule matches, fails its index (``status.failedIndexes``), which is not created again.
More failed indexes than ``maxFailedIndexes`` fail the Job (``MaxFailedIndexesExceeded``); otherwise once
every index has succeeded or failed, a Job with failed indexes fails (``FailedIndexes``). Each index backs
off on its own (``getRemainingTimePerIndex``: 10 s doubling per failure of the index), the other indexes
created meanwhile (``getPodCreationInfoForIndependentIndexes``).

A Job with ``spec.suspend: true`` that Kueue does not manage (no queue label, or Kueue not installed) is
suspended for good, as nothing in a simulation resumes it: ``manageJob`` creates none of its pods and deletes
its active ones (a snapshot's) with ``deleteJobPods``, which first removes each pod's finalizer
``batch.kubernetes.io/job-tracking``, so that gone, the pod is not counted at all
(``trackJobStatusAndRemoveFinalizers`` skips a pod without the finalizer): not failed, not toward
``backoffLimit`` or an index, no pod failure backoff (integration test ``TestSuspendJob``: suspended, the Job
has 0 active, 0 failed, 0 terminating); they are not replaced; it has no ``status.startTime`` and its
deadline does not run (``pastActiveDeadline``); its condition is ``Suspended`` (reason ``JobSuspended``, "Job
suspended") while it has not finished. (A Job that finished deletes its active pods keeping the finalizer,
``deleteActivePods``: those count as failed.)

A Job Kueue manages is suspended and resumed by Kueue: its eviction (preemption, ``waitForPodsReady``, an
admission check's retry...) sets ``spec.suspend`` (``Job.Stop``) and ``manageJob`` deletes the active pods the
same way (``deleteJobPods``): none counts, however often the Job is evicted (``suspended``); each index is
created again (``-r<n>``) for when Kueue admits it again.

A snapshot's Job that is neither finished nor suspended nor being deleted deletes, as its first sync
(``manageJob``) does, its active pods beyond those it wants (``wantActive``: ``parallelism``, at most the
``completions`` not yet succeeded) and, Indexed, every active pod of no completion index, of one not below
``completions`` or of one another active pod holds (``activePodsForRemoval``, ``workloads.job_removal``: in
``controller.ActivePods`` order, not scheduled, Pending, not Ready, Ready for less time first). It deletes
them as ``deleteJobPods`` does, its tracking finalizer removed first: through gpufleet's pod deletion (the
grace period of a bound pod), terminating (``status.terminating``) until gone, never counted, not replaced;
that sync creates nothing (pod deletion takes precedence), the next one (once the deletions are heard) the
lowest pending indexes. An Indexed Job's pod of an invalid index is deleted, uncounted, whatever the sync (a
finished or a suspended Job's too). A Job being deleted (``metadata.deletionTimestamp``) runs no ``manageJob``
(``syncJob``): it creates no pods, deletes none for being too many or for ``spec.suspend`` (no ``Suspended``
condition either), counts its pods as they end and fails or completes as any Job; the garbage collector
deletes it as its finalizers say (``model.job_deletion``): ``foregroundDeletion``, its pods first (through
their grace period, counted as they end), then the Job once none is left; ``orphan``, the Job at once, its
pods running on uncounted; neither, the Job at once, then its pods (uncounted); other finalizers hold the Job
(and, under background deletion, its pods). A snapshot's Job whose status has ``SuccessCriteriaMet`` (status
``True``) succeeds with its reason and message (``hasSuccessCriteriaMetCondition``, before anything else) and
deletes its active pods as a Job that met its ``successPolicy``; a condition of status ``False`` is ignored.

A pod being deleted (a preemption, an eviction, a drain, Kueue's eviction, the Job's own deletion; a
snapshot's pod with a ``deletionTimestamp``) is terminating until it ended (``status.terminating``,
``CountTerminatingPods``; ``pod_terminating``). ``spec.podReplacementPolicy`` says when it is replaced
(``onlyReplaceFailedPods``): ``TerminatingOrFailed``, the default without a ``podFailurePolicy``, counts it
failed as soon as it is terminating (``isPodFailed``) and replaces it after the pod failure backoff while it
still terminates; ``Failed``, the default and only value with a ``podFailurePolicy``, counts it only once it
ended Failed and holds its replacement back until then (``manageJob``: ``wantActive - terminating -
active``). A finished Job's ``Failed`` or ``Complete`` condition waits for its terminating pods
(``delayTerminalCondition``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import ClassVar, TypeVar, cast

from gpufleet.lazy_container import (
    EMPTY_MAPPING,
    EMPTY_SEQUENCE,
    EMPTY_SET,
    LazyContainer,
    lazy_dict,
    lazy_list,
    lazy_set,
)
from gpufleet.model.completion_indexes import REASON_SUCCESS_POLICY, match_success_policy
from gpufleet.model.failed_indexes import (
    FAILED_INDEXES,
    MAX_FAILED_INDEXES_EXCEEDED,
    format_indexes,
    index_failure_annotations,
    is_index_failed,
    new_index_failure_counts,
)
from gpufleet.model.kueue import KueueObjects
from gpufleet.model.node import Node
from gpufleet.model.owned import FINISHED_PHASES, JOB_COMPLETION_INDEX, Owned, OwnedPod
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.pod_failure_policy import (
    REASON_POD_FAILURE_POLICY,
    ContainerExit,
    FailedPod,
    failed_pod,
    match_pod_failure_policy,
)
from gpufleet.model.workloads import Job, PodGroup, PodSet
from gpufleet.workloads import register_kind
from gpufleet.workloads.job_backoff import (
    NO_FAILURES,
    finished_age_s,
    last_failed_per_index,
    new_backoff_record,
    pods_with_delayed_deletion,
    remaining_backoff_per_index_s,
    remaining_backoff_s,
)
from gpufleet.workloads.job_removal import pods_for_removal
from gpufleet.workloads.kind import StatusCondition

#: ``JobReasonBackoffLimitExceeded`` and its condition's message
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
#: ``JobReasonDeadlineExceeded`` and its condition's message
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")
#: ``JobReasonCompletionsReached`` and its message (``newSuccessCondition``)
#: ``syncJob``'s condition of a suspended Job not finished (``batch.JobSuspended``): type, reason, message
JOB_SUSPENDED = ("Suspended", "JobSuspended", "Job suspended")
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
#: ``MaxPodCreateDeletePerSync``: the pods one sync creates, or deletes for being too many (``manageJob``);
#: and ``SyncJobBatchPeriod``, when the next sync comes once its creations or deletions are observed
#: (``addPod``, ``deletePod``: ``enqueueSyncJobBatched``)
MAX_POD_CREATE_DELETE_PER_SYNC, SYNC_JOB_BATCH_PERIOD_S = 500, 1.0
#: the interim conditions (``delayTerminalCondition``: JobManagedBy and JobPodReplacementPolicy, GA)
#: and the terminal ones the Job gets once it has no terminating pods (``enactJobFinished``)
FAILURE_TARGET, FAILED = "FailureTarget", "Failed"
SUCCESS_CRITERIA_MET, COMPLETE = "SuccessCriteriaMet", "Complete"


W = TypeVar("W")

#: the writers of ``JobController``'s containers (``lazy_container``: each reads empty until written)
_USED: LazyContainer[set[int]] = lazy_set("used")
_NAMES: LazyContainer[set[str]] = lazy_set("names")
_ACTIVE: LazyContainer[dict[str, int]] = lazy_dict("active")
_TERMINATING: LazyContainer[dict[str, int | None]] = lazy_dict("terminating")
_REMOVING: LazyContainer[dict[str, None]] = lazy_dict("removing")
_RETRIES: LazyContainer[list[int]] = lazy_list("retries")
_ATTEMPTS: LazyContainer[dict[int, int]] = lazy_dict("attempts")
_SUCCEEDED_INDEXES: LazyContainer[set[int]] = lazy_set("succeeded_indexes")
_FAILED_AS: LazyContainer[dict[str, FailedPod]] = lazy_dict("_failed_as")
_RESTARTS: LazyContainer[dict[str, int]] = lazy_dict("_restarts")
_FAILED_INDEXES: LazyContainer[set[int]] = lazy_set("failed_indexes")
_INDEX_ANNOTATIONS: LazyContainer[dict[int, dict[str, str]]] = lazy_dict("_index_annotations")
_INDEX_READY_S: LazyContainer[dict[int, float]] = lazy_dict("_index_ready_s")
_BACKING_OFF: LazyContainer[dict[int, tuple[float, int]]] = lazy_dict("_backing_off")
#: what a Job's pods' lives read and a finished Job without pods does not (``JobController._settle``)
_POD_LIFE_STATE = (
    _ACTIVE,
    _TERMINATING,
    _REMOVING,
    _RETRIES,
    _ATTEMPTS,
    _FAILED_AS,
    _RESTARTS,
    _USED,
    _NAMES,
    _INDEX_ANNOTATIONS,
    _INDEX_READY_S,
)


def restarts_past_limit(restart_counts: Iterable[int], limit: int) -> bool:
    """Whether container restart counts, summed, reach ``limit`` (exceed 0 for a limit of 0): the Job
    controller's ``pastBackoffLimitOnFailure``, the training operator's ``PastBackoffLimit``."""
    restarts = sum(restart_counts)
    return restarts > 0 if limit == 0 else restarts >= limit


def past_backoff_limit_on_failure(job: Job, restart_counts: Iterable[int]) -> bool:
    """``pastBackoffLimitOnFailure``: under ``restartPolicy: OnFailure``, whether the restart counts of the
    containers (init and app) of the Job's Pending and Running pods, summed, reach ``backoffLimit`` (exceed
    0 for a ``backoffLimit`` of 0)."""
    return job.template.restart_policy == "OnFailure" and restarts_past_limit(
        restart_counts, job.backoff_limit
    )


def kueue_held(workload: W, kueue: KueueObjects) -> W:
    """``workload``, a Job Kueue holds (``KueueObjects.holds``: it manages it, and no dump's Workload of it
    is admitted), ``queued`` and without its ``spec.suspend``: Kueue holds it and unsuspends it when it admits
    it; any other workload as it is."""
    if isinstance(workload, Job) and kueue.holds(f"Job/{workload.key}"):
        return cast(W, replace(workload, suspend=False, queued=True))
    return workload


@register_kind(Job)
class JobController:
    #: what ``__init__`` sets, in slots (as ``sim.simulation.Simulation``): with more than 30 attributes an
    #: instance does not fit CPython 3.11's shared-key layout and would keep a dictionary of its own, 1.5 KiB
    #: for every Job of a run, finished ones included. ``__dict__`` takes what a subclass (``ChildJob``) or a
    #: test adds, and stays unmade otherwise. Its containers hold a shared empty one until first written
    #: (``lazy_container``: its writers ``_ACTIVE``, ``_RETRIES``...): most Jobs never fill most of them; and
    #: once a Job finished and none of its pods is left, it lets go of those only its pods' lives read
    #: (``_settle``).
    __slots__ = (
        "__dict__",
        "_backing_off",
        "_counted_next_sync",
        "_deferred",
        "_failed_as",
        "_index_annotations",
        "_index_delay_s",
        "_index_ready_s",
        "_next_sync_armed",
        "_restarts",
        "_surplus",
        "active",
        "attempts",
        "backoff",
        "done",
        "failed",
        "failed_indexes",
        "failure",
        "held",
        "issued",
        "job",
        "names",
        "next_index",
        "now_s",
        "removing",
        "retries",
        "spec",
        "succeeded",
        "succeeded_indexes",
        "success",
        "terminating",
        "used",
    )
    kind: ClassVar[str] = "Job"
    per_node: ClassVar[bool] = False
    status_times: ClassVar[bool] = True  # kind.ReportsStatus: status.startTime and completionTime

    def __init__(self, job: Job):
        self.job = job
        self.spec = job  # as submitted; ``job`` carries the counts Kueue admitted it with
        self.next_index = 0
        self.issued = 0  # indexes given to pods (adopted or created)
        self.used: AbstractSet[int] = EMPTY_SET  # indexes an adopted pod holds, active or completed
        self.names: AbstractSet[str] = EMPTY_SET  # the names of its pods in a snapshot
        self.active: Mapping[str, int] = EMPTY_MAPPING  # pod key -> completion index
        #: its pods being deleted (``deletionTimestamp`` set) that have not ended (``status.terminating``):
        #: pod key -> the completion index to count and create again once it ends, None where nothing is
        #: left to count (counted failed already, ``TerminatingOrFailed``; an Indexed Job's pod of no index)
        self.terminating: Mapping[str, int | None] = EMPTY_MAPPING
        #: its pods ``manageJob`` deletes with ``deleteJobPods`` (``activePodsForRemoval``: too many, of an
        #: invalid or duplicated index), in order, until their deletion is heard: never counted (their
        #: tracking finalizer is removed first), not replaced, terminating from the sync that deletes them
        self.removing: Mapping[str, None] = EMPTY_MAPPING
        #: its active pods it deletes in later syncs, in order (``activePodsForRemoval`` found more than
        #: ``MaxPodCreateDeletePerSync``)
        self._surplus: Sequence[str] = EMPTY_SEQUENCE
        #: its last sync left creations or deletions to the next (``MaxPodCreateDeletePerSync``), which has
        #: not come; and whether the driver was told when it comes (``kind.SyncsAgain``)
        self._deferred = False
        self._next_sync_armed = False
        self.retries: Sequence[int] = EMPTY_SEQUENCE  # indices whose pod failed, to create again
        self.attempts: Mapping[int, int] = EMPTY_MAPPING  # index -> the re-creations of its pod so far
        self.succeeded = 0
        self.failed = 0
        #: the run's time as it was last told (``kind.KeepsTime``): when its pods end, what its backoffs count
        self.now_s = 0.0
        #: the pod failure backoff, its times the run's (``newBackoffRecord``)
        self.backoff = NO_FAILURES
        self.done = False
        #: ``(reason, message)`` of its ``Failed`` condition once it failed
        self.failure: tuple[str, str] | None = None
        #: ``(reason, message)`` of its ``Complete`` condition once it succeeded
        self.success: tuple[str, str] | None = None
        #: an Indexed Job's completion indexes whose pod succeeded (``succeededIndexes``), below
        #: ``completions``
        self.succeeded_indexes: AbstractSet[int] = EMPTY_SET
        #: pod key -> what ``failed_with`` told of it
        self._failed_as: Mapping[str, FailedPod] = EMPTY_MAPPING
        #: active pod key -> its containers' restarts (``restarted``)
        self._restarts: Mapping[str, int] = EMPTY_MAPPING
        #: ``backoffLimitPerIndex``: the indexes that failed (``status.failedIndexes``), the annotations of
        #: each index's next pod (its failure counts) and the per-index backoff of the last failure
        self.failed_indexes: AbstractSet[int] = EMPTY_SET
        self._index_annotations: Mapping[int, dict[str, str]] = EMPTY_MAPPING
        self._index_delay_s = 0.0
        #: ``backoffLimitPerIndex``: when each index whose pod failed in the run may be created again
        #: (``getRemainingTimePerIndex``), on the run's clock
        self._index_ready_s: Mapping[int, float] = EMPTY_MAPPING
        #: what it holds back after adopting a snapshot's recently failed pods (``kind.HoldsAdopted``): by
        #: completion index, the seconds after its adoption the index's backoff ends and the failures its last
        #: failed pod counts once its replacement is created
        self._backing_off: Mapping[int, tuple[float, int]] = EMPTY_MAPPING
        #: the failures of such held pods whose replacement it created: counted at the next sync, once their
        #: index is active (``getPodsWithDelayedDeletionPerIndex`` holds them no longer)
        self._counted_next_sync = 0
        #: Kueue holds it suspended until it admits it (``Job.queued``; a queued JobSet's child Job): its pods
        #: are created gated, where upstream the suspended Job has none
        self.held = job.queued
        if job.completions == 0:  # syncJob: 0 succeeded reach 0 completions with no pod active
            self.done, self.success = True, COMPLETIONS_REACHED

    @property
    def per_index(self) -> bool:
        """``hasBackoffLimitPerIndex``: an Indexed Job with ``backoffLimitPerIndex``."""
        return self.job.indexed and self.job.backoff_limit_per_index is not None

    @property
    def disowned(self) -> bool:
        """A Job being deleted whose pods the garbage collector orphaned, or that was gone as the run started
        (``model.job_deletion``: ``Deletion.disowns``): nothing of its pods counts."""
        gc = self.job.gc
        return self.job.deleting and gc is not None and gc.disowns

    def gone(self) -> bool:
        """Whether the Job being deleted is gone (``model.job_deletion``): at once under ``Background`` or
        ``Orphan``; under ``Foreground`` once none of its pods is left (active, terminating or being deleted);
        never while other finalizers hold it."""
        gc = self.job.gc
        if not self.job.deleting or gc is None or gc.held:
            return False
        return gc.gone_at_once or not (self.active or self.terminating or self.removing)

    @property
    def suspending(self) -> bool:
        """``manageJob``'s suspended branch runs: ``spec.suspend``, and the Job is not being deleted
        (``syncJob`` runs ``manageJob`` only for a Job without a ``deletionTimestamp``)."""
        return self.job.suspend and not self.job.deleting

    @property
    def key(self) -> str:
        return self.job.key

    def _stamp(self, index: int) -> Pod:
        pod = self.pod(index, self.attempts.get(index, 0))
        _ACTIVE.of(self)[pod.key] = index
        return pod

    def pod(self, index: int, attempt: int) -> Pod:
        """The pod of completion index ``index``, its ``attempt``-th re-creation (0: the first)."""
        suffix = f"-r{attempt}" if attempt else ""
        job = self.job
        # PodIndexLabel (GA): addCompletionIndexLabel and addCompletionIndexAnnotation
        marks = {JOB_COMPLETION_INDEX: str(index)} if job.indexed else None
        pod = job.template.stamped(
            f"{job.name}-{index}{suffix}", OwnerRef("Job", job.name), marks, namespace=job.namespace
        )
        if marks is not None:
            pod.annotations.update(marks)
        pod.annotations.update(self.index_failure_marks(index))
        return pod

    def index_failure_marks(self, index: int) -> dict[str, str]:
        """``addIndexFailureCountAnnotation``: the failure counts of index ``index``'s next pod, under
        ``backoffLimitPerIndex``; none without it."""
        if not self.per_index:
            return {}
        return self._index_annotations.get(index) or index_failure_annotations(0, 0)

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        """The pods it creates now (``manageJob``). None for a Job of ``activeDeadlineSeconds: 0`` that
        Kueue does not hold: ``syncJob`` sets its ``startTime`` at its first sync (or as Kueue resumes it)
        and checks ``pastActiveDeadline`` before ``manageJob``, so it is past its deadline before it creates
        any pod (the driver fails it at that instant, ``kind.HasDeadline``); held, its gated pods are
        created for Kueue to see, and dropped uncounted as Kueue admits it (``run_with_counts``)."""
        job = self.job
        # manageJob: a suspended Job creates no pods, nor one that is being deleted (syncJob does not run
        # manageJob), nor one whose sync deleted pods (pod deletion takes precedence; the next sync, once
        # the deletions are observed, creates)
        if self.done or job.suspend or job.deleting or self.removing:
            return []
        # manageJob: the Job-wide backoff holds every creation back (getRemainingTime)
        if not self.per_index and remaining_backoff_s(self.backoff, self.now_s) > 0:
            return []
        if self._deferred:  # what the last sync left waits for the next (MaxPodCreateDeletePerSync)
            return []
        if job.active_deadline_s == 0 and not self.held:
            return []
        out: list[Pod] = []
        # manageJob: wantActive - terminating - active, the terminating pods held back only under
        # onlyReplaceFailedPods (each is created again once it ended Failed: ``pending``)
        held = len(self.terminating) if job.only_replace_failed_pods else 0
        pending = sum(1 for index in self.terminating.values() if index is not None)
        cap = MAX_POD_CREATE_DELETE_PER_SYNC
        while len(self.active) + held < job.parallelism and len(out) < cap and (ready := self._ready()):
            # firstPendingIndexes: an Indexed Job's lowest pending index first
            first = min(ready) if job.indexed else ready[0]
            _RETRIES.of(self).remove(first)
            out.append(self._stamp(first))
        if job.completions is None:
            remaining = job.parallelism - self.issued if self.succeeded == 0 else 0
        else:
            remaining = (
                job.completions
                - self.succeeded
                - len(self.active)
                - len(self.retries)
                - len(self.failed_indexes)
                - pending
                - len(self._backing_off)
            )
        while len(self.active) + held < job.parallelism and remaining > 0 and len(out) < cap:
            out.append(self._stamp(self._new_index()))
            remaining -= 1
        # manageJob: diff capped at MaxPodCreateDeletePerSync; the next sync creates the rest
        room = len(self.active) + held < job.parallelism
        self._deferred = len(out) == cap and room and (remaining > 0 or bool(self._ready()))
        return out

    def _ready(self) -> Sequence[int]:
        """The indexes to create again whose backoff has passed: each index's own with
        ``backoffLimitPerIndex`` (``getPodCreationInfoForIndependentIndexes``: the others wait), else all."""
        if not self.per_index:
            return self.retries
        return [i for i in self.retries if self._index_ready_s.get(i, self.now_s) <= self.now_s]

    def tick(self, now_s: float) -> None:
        """``kind.KeepsTime``: the run's time is ``now_s``."""
        self.now_s = now_s

    def sync_again_s(self) -> float | None:
        """``kind.SyncsAgain``: where its last sync created or deleted ``MaxPodCreateDeletePerSync`` pods
        and left more, or created the replacement of an index's held failed pod (not counted until then), its
        next sync comes ``SyncJobBatchPeriod`` later, as the pods' add or delete events enqueue it
        (``enqueueSyncJobBatched``; the expectations it set are met at once here)."""
        if not (self._deferred or self._counted_next_sync) or self._next_sync_armed:
            return None
        self._next_sync_armed = True
        return SYNC_JOB_BATCH_PERIOD_S

    def next_sync(self) -> None:
        """``kind.SyncsAgain``: the sync after one that left work: the held failed pods whose replacements
        were created count (``trackJobStatusAndRemoveFinalizers``; past ``backoffLimit`` the Job fails), then
        it deletes the next of the pods found too many that are still active (``activePodsForRemoval``, at
        most ``MaxPodCreateDeletePerSync``), else creates what is missing (``wanted``)."""
        self._deferred = self._next_sync_armed = False
        self.failed += self._counted_next_sync
        self._counted_next_sync = 0
        if not self.done and self.failed > self.job.backoff_limit:
            self._fail(*BACKOFF_LIMIT_EXCEEDED)
        if not self.done:
            self._remove(self._surplus)

    def _new_index(self) -> int:
        """The lowest index not yet given, held by no adopted pod, whose name the snapshot does not hold."""
        while (
            self.next_index in self.used
            or self.next_index in self.failed_indexes
            or f"{self.job.name}-{self.next_index}" in self.names
        ):
            self.next_index += 1
        self.next_index += 1
        self.issued += 1
        return self.next_index - 1

    def adopt(self, owned: Owned) -> None:
        """The Job's pods of a snapshot (``getPodsForJob``) and what its status counted
        (``status.succeeded``/``failed`` and the ended pods not yet counted, trackingUncountedPods): an
        active pod keeps its completion index (else takes the next free one; an Indexed Job's of an invalid
        index is deleted). In ``syncJob``'s order: one whose status has a ``SuccessCriteriaMet`` condition
        (status ``True``: an earlier sync's decision) succeeds with its reason and message, and deletes its
        active pods; else one with a ``FailureTarget`` condition fails likewise, as one a ``FailJob`` rule
        matches or whose failures passed ``backoffLimit`` (``BackoffLimitExceeded``); then its failed indexes
        and its ``successPolicy``; a Job none of them finished deletes its pods beyond those it wants
        (``_remove_surplus``) and is complete once its completions succeeded (it creates nothing more)."""
        self.succeeded, self.failed = owned.succeeded, owned.failed
        self.names = {p.pod.name for p in owned.pods}
        job = self.job
        active = [p for p in owned.pods if p.active]
        # an Indexed Job's active pod of no index or of one out of range is never counted
        # (getValidPodsWithFilter) and every sync deletes it (activePodsForRemoval, deleteActivePods); but a
        # Job being deleted, whose pods stay as they are
        invalid = {p.pod.key for p in active if job.indexed and not job.deleting and not self._valid_index(p)}
        # a pod being deleted: counted failed by adoption under TerminatingOrFailed (isPodFailed), else
        # counted and created again once it ended; an Indexed Job's pod of an invalid index is not counted
        terminating = [p for p in owned.pods if p.terminating and p.phase not in FINISHED_PHASES]
        uncounted = [
            p
            for p in terminating
            if job.only_replace_failed_pods and not (job.indexed and not self._valid_index(p))
        ]
        kept = [p for p in active if p.pod.key not in invalid]
        self.used = set(owned.completed_indexes) | {
            i for p in kept + uncounted if (i := p.completion_index) is not None
        }
        for p in kept:
            index = p.completion_index
            _ACTIVE.of(self)[p.pod.key] = self._new_index() if index is None else index
        self.removing = dict.fromkeys(p.pod.key for p in active if p.pod.key in invalid)
        self.terminating = {p.pod.key: None for p in terminating}
        for p in uncounted:
            index = p.completion_index
            _TERMINATING.of(self)[p.pod.key] = self._new_index() if index is None else index
        self._restarts = {p.pod.key: p.restarts for p in active if p.restarts}
        if job.indexed:
            self.succeeded_indexes = set(owned.completed_indexes)
        if self.per_index:
            self.failed_indexes = set(owned.failed_indexes)
            self._adopt_index_failures(owned)
        # syncJob's order: the status's SuccessCriteriaMet, then its FailureTarget, a FailJob rule,
        # backoffLimit, then the failed indexes, then successPolicy, and only then the completions
        # (``complete``, in the branch where no finished condition was found)
        decided = owned.success_criteria_met or owned.failure_target
        message = None if decided else self._fail_job_message(owned)
        if owned.success_criteria_met is not None:  # hasSuccessCriteriaMetCondition: its reason and message
            self.done, self.success = True, owned.success_criteria_met
        elif owned.failure_target is not None:
            self._fail(*owned.failure_target)  # newFailedConditionForFailureTarget: its reason and message
        elif message is not None:
            self._fail(REASON_POD_FAILURE_POLICY, message)
        elif self.failed > job.backoff_limit or past_backoff_limit_on_failure(job, self._restarts.values()):
            self._fail(*BACKOFF_LIMIT_EXCEEDED)  # its active pods are then deleted (syncJob)
        if self.failure is None and self.success is None:
            self._match_failed_indexes()
        if self.failure is None and self.success is None:
            self._match_success_policy()
        if self.failure is None and self.success is None:
            if not job.suspend and not job.deleting:
                self._remove_surplus(active)
            if job.completions is None:
                complete = self.succeeded > 0 and not self.active
            else:  # (manageJob left no pod active once completions were reached; it did not run if deleting)
                complete = self.succeeded >= job.completions and not (job.deleting and self.active)
            if complete:
                self.done, self.success = True, COMPLETIONS_REACHED
        self.issued = len(self.active) + len(uncounted)
        if owned.adopted_unix is not None and not self.done:
            self._adopt_backoff(owned.pods, owned.adopted_unix)

    def _adopt_backoff(self, pods: Sequence[OwnedPod], now_unix: float) -> None:
        """The pod failure backoff its snapshot's pods leave, at ``now_unix`` (its adoption), from when they
        finished (``getFinishedTime``). Job-wide: the record of its ended pods (``newBackoffRecord``, an empty
        store: the failures after the last success, the last one's finish time) holds every creation back
        until it has passed (``manageJob``: ``getRemainingTime``), and its failures count on in the run. With
        ``backoffLimitPerIndex``: each index whose last failed pod is kept uncounted
        (``pods_with_delayed_deletion``) waits its own backoff (``getRemainingTimePerIndex``; none where it
        has passed), that pod uncounted until the sync after its replacement is created
        (``trackJobStatusAndRemoveFinalizers`` skips it until its index is active); the other indexes are
        created meanwhile (``getPodCreationInfoForIndependentIndexes``)."""
        job = self.job
        if not self.per_index:
            failed = [
                self.now_s + finished_age_s(p, now_unix)
                for p in pods
                if p.phase == "Failed"
                or (p.terminating and p.phase != "Succeeded" and not job.only_replace_failed_pods)
            ]
            succeeded = [self.now_s + finished_age_s(p, now_unix) for p in pods if p.phase == "Succeeded"]
            self.backoff = new_backoff_record(NO_FAILURES, succeeded, failed)
            return
        settled = self.succeeded_indexes | self.failed_indexes | set(self.active.values())
        delayed = pods_with_delayed_deletion(
            pods, job.completions or 0, settled, not job.only_replace_failed_pods
        )
        for index, p in delayed.items():
            wait = remaining_backoff_per_index_s(p.pod.annotations, finished_age_s(p, now_unix), 0.0)
            failure = p.failure or FailedPod(p.pod.namespace, p.pod.name)
            counted = match_pod_failure_policy(job.pod_failure_policy, failure).count_failed
            self.failed -= counted
            _USED.of(self).add(index)
            if wait > 0:
                _BACKING_OFF.of(self)[index] = (wait, counted)
            else:  # its backoff over: the first sync creates its replacement, the next counts it
                self._counted_next_sync += counted
                self._retry(index)

    def held_s(self) -> list[float]:
        """``kind.HoldsAdopted``: the seconds after its adoption at which a backoff carried over ends (the
        Job-wide one, ``manageJob``'s ``getRemainingTime``; each index's)."""
        waits = {wait for wait, _ in self._backing_off.values()}
        if (wait := remaining_backoff_s(self.backoff, self.now_s)) > 0:
            waits.add(wait)
        return sorted(waits)

    def release_held(self, elapsed_s: float) -> None:
        """``kind.HoldsAdopted``: ``elapsed_s`` after its adoption, the backoffs carried over that have ended
        let it create again: the index is created again, and its held failed pod counts at the sync after
        (``next_sync``; past ``backoffLimit`` the Job fails then). The Job-wide backoff ends by itself:
        ``wanted`` reads it."""
        for key, (wait, counted) in list(self._backing_off.items()):
            if wait > elapsed_s:
                continue
            del _BACKING_OFF.of(self)[key]
            if self.done:
                continue
            self._counted_next_sync += counted
            self._retry(key)

    def _valid_index(self, pod: OwnedPod) -> bool:
        """An Indexed Job's ``pod`` has a completion index below ``completions``
        (``getValidPodsWithFilter``)."""
        index, completions = pod.completion_index, self.job.completions
        return index is not None and (completions is None or index < completions)

    def _remove_surplus(self, active: Sequence[OwnedPod]) -> None:
        """``manageJob`` of a Job neither finished nor suspended nor being deleted, on adopting its ``active``
        pods: beyond ``wantActive`` (``parallelism``, at most the ``completions`` not yet succeeded; for a
        work queue, ``parallelism`` until a pod succeeded, then as many as are active) and, for an Indexed
        Job, those of an invalid or duplicated index, it deletes pods (``activePodsForRemoval``) with
        ``deleteJobPods``: ``removing``, no longer active, their indexes pending again."""
        job = self.job
        if job.completions is None:
            want = len(active) if self.succeeded > 0 else job.parallelism
        else:
            want = max(min(job.completions - self.succeeded, job.parallelism), 0)
        completions = job.completions if job.indexed else None
        self._remove([p.pod.key for p in pods_for_removal(active, len(active) - want, completions)])

    def _remove(self, keys: Sequence[str]) -> None:
        """``manageJob`` deletes the first ``MaxPodCreateDeletePerSync`` of ``keys``, its active pods found
        too many or of an invalid or duplicated index, still active (``removing``, no longer active, their
        indexes pending again); the rest are left to the next sync (``_surplus``)."""
        keys = [key for key in keys if key in self.active]
        self._surplus = keys[MAX_POD_CREATE_DELETE_PER_SYNC:]
        self._deferred = bool(self._surplus)
        for key in keys[:MAX_POD_CREATE_DELETE_PER_SYNC]:
            _REMOVING.of(self)[key] = None
            _RESTARTS.of(self).pop(key, None)
            index = _ACTIVE.of(self).pop(key)
            if index not in self.active.values():
                _USED.of(self).discard(index)

    def _fail_job_message(self, owned: Owned) -> str | None:
        """``getFailJobMessage``: the message of the first ``FailJob`` rule one of the snapshot's failed pods
        matches (counted already or not), as its status tells of it; None without a match."""
        policy = self.job.pod_failure_policy
        if policy is None:
            return None
        for p in owned.pods:
            if p.phase == "Failed":  # isPodFailed (podFailurePolicy set: onlyReplaceFailedPods)
                failed = p.failure or FailedPod(p.pod.namespace, p.pod.name)
                message = match_pod_failure_policy(policy, failed).job_failure_message
                if message is not None:
                    return message
        return None

    def _adopt_index_failures(self, owned: Owned) -> None:
        """``backoffLimitPerIndex``: the failure counts of the next pod of each index whose last failed pod
        (``getPodsWithDelayedDeletionPerIndex``: the highest ``job-index-failure-count``, the latest to
        finish) the snapshot holds (``getNewIndexFailureCounts``; the pod as its status tells of it:
        ``OwnedPod.failure``)."""
        last = last_failed_per_index(p for p in owned.pods if p.phase == "Failed")
        for index, held in last.items():
            pod = held.pod
            failed = held.failure or FailedPod(pod.namespace, pod.name)
            count, ignored = new_index_failure_counts(self.job.pod_failure_policy, (pod.annotations, failed))
            _INDEX_ANNOTATIONS.of(self)[index] = index_failure_annotations(count, ignored)

    def pod_groups(self) -> list[PodGroup]:
        return []

    def pod_sets(self) -> list[PodSet]:
        """Kueue's Job integration: one pod set ``main`` of ``parallelism`` pods (at most ``completions``)."""
        job = self.job
        count = job.parallelism if job.completions is None else min(job.parallelism, job.completions)
        return [PodSet("main", count, job.template, min_count=job.min_parallelism)]

    def run_with_counts(self, counts: Mapping[str, int]) -> list[str]:
        """Kueue's ``RunWithPodSetsInfo``: it unsuspends the Job, no longer ``held``. With
        ``kueue.x-k8s.io/job-min-parallelism`` its ``parallelism`` becomes the count admitted (and
        ``completions`` too, with ``kueue.x-k8s.io/job-completions-equal-parallelism``): its pods beyond it,
        gated until now (the highest indexes), are no longer its own: their keys. A Job of
        ``activeDeadlineSeconds: 0`` is past its deadline at the sync that resumes it, before ``manageJob``
        (``syncJob``): upstream the suspended Job had no pod, so none of its gated ones is its own, and none
        counts as failed (``deadline_passed``). Any other Job runs as it is."""
        self.held = False
        job = self.job
        keep = len(self.active)
        if job.active_deadline_s == 0:
            keep = 0
        elif job.min_parallelism is not None:
            keep = counts["main"]
            completions = keep if job.completions_equal_parallelism else job.completions
            self.job = replace(job, parallelism=keep, completions=completions)
        surplus = sorted(self.active, key=lambda k: (self.active[k], k))[keep:]
        for key in surplus:
            del _ACTIVE.of(self)[key]
        self.issued -= len(surplus)
        return surplus

    def restore_counts(self) -> None:
        """Kueue's ``RestorePodSetsInfo``, when it evicts the Job (``Stop``: suspended, ``held`` again): its
        spec's ``parallelism`` and ``completions`` again."""
        self.held = True
        self.job = replace(self.job, parallelism=self.spec.parallelism, completions=self.spec.completions)

    def reclaimable_pods(self) -> dict[str, int]:
        """Kueue's ``Job.ReclaimablePods``: for a Job of more than one pod with terminal pods, once fewer
        completions remain (``completions`` defaulting to ``parallelism``) than ``parallelism``,
        ``parallelism - remaining`` pods of ``main`` will not run again. A NonIndexed Job's terminal pods
        are its succeeded ones (``status.succeeded``); an Indexed Job's its indexes below ``completions``
        that completed or failed (``terminalIndexesCount``: ``completedIndexes`` and ``failedIndexes``, the
        latter with ``backoffLimitPerIndex``, counted once)."""
        job = self.job
        completions = job.parallelism if job.completions is None else job.completions
        terminal = self.succeeded
        if job.indexed:
            terminal = len({i for i in self.succeeded_indexes | self.failed_indexes if i < completions})
        remaining = max(completions - terminal, 0)
        if job.parallelism > 1 and terminal > 0 and remaining < job.parallelism:
            return {"main": job.parallelism - remaining}
        return {}

    def failed_with(self, pod: Pod, reason: str | None, terminated: ContainerExit | None = None) -> None:
        """One of its pods ended Failed with ``reason`` and its first container's terminated state
        ``terminated`` (``kind.ReadsFailedPods``; told right before ``finished``): what
        ``spec.podFailurePolicy`` reads of it (its ``DisruptionTarget`` condition, its exit code)."""
        _FAILED_AS.of(self)[pod.key] = failed_pod(pod.namespace, pod.name, reason, terminated)

    def restarted(self, pod: Pod) -> None:
        """``kind.CountsRestarts``: the kubelet restarted the container of its active ``pod`` once more (a
        snapshot's pod counts on from its ``restartCount``, ``adopt``): a Job not finished whose active pods'
        restarts reach its limit (``past_backoff_limit_on_failure``) fails (``BackoffLimitExceeded``) and
        deletes its active pods."""
        if pod.key not in self.active or self.disowned:
            return
        restarts = _RESTARTS.of(self)
        restarts[pod.key] = restarts.get(pod.key, 0) + 1
        if not self.done and past_backoff_limit_on_failure(self.job, self._restarts.values()):
            self._fail(*BACKOFF_LIMIT_EXCEEDED)

    def pod_terminating(self, pod: Pod, suspended: bool = False) -> bool:
        """``kind.HearsTerminating``: its active ``pod`` is being deleted (``deletionTimestamp``: a
        preemption, an eviction, a drain, the Job's own deletion; ``suspended``: Kueue's eviction of the Job,
        whose ``deleteJobPods`` leaves it uncounted) and terminating until it ends (``status.terminating``,
        ``CountTerminatingPods``). Under ``TerminatingOrFailed`` (``isPodFailed``: a deleted pod not
        Succeeded is failed) it counts as failed now and is replaced after the pod failure backoff; under
        ``Failed`` (``onlyReplaceFailedPods``) it is counted once it ended Failed, and until then it holds
        its replacement back (``manageJob``: ``wantActive - terminating - active``). Returns whether the Job
        may want a pod now. A pod it deleted for being too many or of an invalid index (``removing``) is
        terminating, not to be counted or replaced, and the Job may want pods again (``manageJob``'s next
        sync)."""
        if pod.key in self.removing:
            del _REMOVING.of(self)[pod.key]
            _TERMINATING.of(self)[pod.key] = None
            return True
        if pod.key not in self.active:
            return False
        if self.disowned:
            self._forget(pod)
            return False
        if suspended or self.suspending or self.job.only_replace_failed_pods:
            _RESTARTS.of(self).pop(pod.key, None)
            _TERMINATING.of(self)[pod.key] = _ACTIVE.of(self).pop(pod.key)
            return False
        self.finished(pod, succeeded=False)
        _TERMINATING.of(self)[pod.key] = None
        return True

    def forget_pods(self) -> None:
        """None of its pods is its own any more, active or terminating (``rayjob``: the RayJob deleted them
        with everything else): nothing of them is counted."""
        _ACTIVE.drop(self)
        _TERMINATING.drop(self)

    def _forget(self, pod: Pod) -> tuple[int | None, FailedPod | None]:
        """``pod`` is no longer one of its active or terminating ones: its completion index (None if it was
        neither, or was counted as it began terminating) and what ``failed_with`` told of it."""
        _RESTARTS.of(self).pop(pod.key, None)
        _REMOVING.of(self).pop(pod.key, None)
        index = _ACTIVE.of(self).pop(pod.key, None)
        if pod.key in self.terminating:
            index = _TERMINATING.of(self).pop(pod.key)
        return index, _FAILED_AS.of(self).pop(pod.key, None)

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        """One of its pods ended (``kind.WorkloadController``): counted (``_count``), after which a Job
        finished with none of its pods left lets go of what only its pods' lives read (``_settle``)."""
        wants = self._count(pod, succeeded)
        self._settle()
        return wants

    def _settle(self) -> None:
        """A Job that finished and has no pod left (active, terminating or being deleted) creates, counts
        and deletes nothing more (``wanted``, ``finished``, ``doomed``; ``done`` is never undone): it lets go
        of the containers its pods' lives read, which read empty from then on. What is read of a finished Job
        is kept: its counts, conditions and indexes (``kind.ReportsStatus``, read by the summary, the report
        and the TTL-after-finished controller's finish time), ``gone`` (the garbage collector) and Kueue's
        ``reclaimable_pods`` (the succeeded and failed indexes)."""
        if self.done and not (self.active or self.terminating or self.removing):
            for container in _POD_LIFE_STATE:
                container.drop(self)

    def _count(self, pod: Pod, succeeded: bool) -> bool:
        """Count its ended ``pod`` (``trackJobStatusAndRemoveFinalizers``). While ``spec.suspend`` holds a
        Job not finished, its pod was deleted by ``deleteJobPods`` without its tracking finalizer: not counted
        (``suspended``); so was one it deleted for being too many or of an invalid index (``removing``)."""
        if (self.suspending and not self.done) or pod.key in self.removing:
            self.suspended(pod)
            return True
        index, status = self._forget(pod)
        if self.disowned:
            return False
        if index is None:
            return True
        if succeeded:
            self.succeeded += 1
            self.backoff = new_backoff_record(self.backoff, (self.now_s,), ())  # a success ends the backoff
            # trackJobStatusAndRemoveFinalizers counts an Indexed Job's succeeded pod's index below
            # completions (``isIndexed``: a NonIndexed Job keeps no indexes) even once the Job finished (a pod
            # that succeeded as its successPolicy was met)
            if self.job.indexed and (self.job.completions is None or index < self.job.completions):
                _SUCCEEDED_INDEXES.of(self).add(index)
            if self.done:  # a pod deleted as it finished, or beyond its completions
                return True
            complete = self.job.completions is None or self.succeeded >= self.job.completions
            self.done = complete and (self.job.completions is not None or not self.active)
            if self.done:
                self.success = COMPLETIONS_REACHED
            else:
                self._match_failed_indexes()
            if not self.done:
                self._match_success_policy()
            return True
        self.backoff = new_backoff_record(self.backoff, (), (self.now_s,))
        if self.failure is not None:  # an active pod it deleted as it failed: counted then (``_fail``)
            return True
        failed = status or FailedPod(pod.namespace, pod.name)
        match = match_pod_failure_policy(self.job.pod_failure_policy, failed)
        self.failed += match.count_failed
        if self.success is not None:  # an active pod it deleted as it met its successPolicy
            return True
        index_failed = self._index_failed(pod, index, failed)
        if match.job_failure_message is not None:
            self._fail(REASON_POD_FAILURE_POLICY, match.job_failure_message)
        elif self.failed > self.job.backoff_limit:
            self._fail(*BACKOFF_LIMIT_EXCEEDED)
        elif index_failed:
            self._match_failed_indexes()
        else:
            self._retry(index)
        return True

    def _index_failed(self, pod: Pod, index: int, failed: FailedPod) -> bool:
        """``backoffLimitPerIndex``: whether the failed ``pod`` fails its index (``isIndexFailed``, an index
        below ``completions``); if not, the failure counts of its replacement (``getNewIndexFailureCounts``)
        and its backoff (``getRemainingTimePerIndex``)."""
        job = self.job
        if not self.per_index or job.backoff_limit_per_index is None or job.completions is None:
            return False
        if index < job.completions and is_index_failed(
            job.backoff_limit_per_index, job.pod_failure_policy, pod.annotations, failed
        ):
            _FAILED_INDEXES.of(self).add(index)
            return True
        count, ignored = new_index_failure_counts(job.pod_failure_policy, (pod.annotations, failed))
        _INDEX_ANNOTATIONS.of(self)[index] = index_failure_annotations(count, ignored)
        self._index_delay_s = remaining_backoff_per_index_s(pod.annotations, 0.0, 0.0)
        _INDEX_READY_S.of(self)[index] = self.now_s + self._index_delay_s
        return False

    def _match_failed_indexes(self) -> None:
        """``syncJob``'s failure scenarios for ``backoffLimitPerIndex``: more failed indexes than
        ``maxFailedIndexes`` fail the Job (``MaxFailedIndexesExceeded``); failed indexes that with the
        succeeded ones make ``completions`` fail it (``FailedIndexes``)."""
        job = self.job
        if not self.per_index or not self.failed_indexes or job.completions is None:
            return
        failed = len(self.failed_indexes)
        if job.max_failed_indexes is not None and failed > job.max_failed_indexes:
            self._fail(*MAX_FAILED_INDEXES_EXCEEDED)
        elif failed + len(self.succeeded_indexes) >= job.completions:
            self._fail(*FAILED_INDEXES)

    def _match_success_policy(self) -> None:
        """``spec.successPolicy`` (``matchSuccessPolicy``, evaluated in ``syncJob`` before the Job is done
        otherwise): once a rule is met the Job succeeds (``SuccessCriteriaMet``, reason ``SuccessPolicy``)
        and deletes its active pods."""
        job = self.job
        if job.success_policy is None or job.completions is None:
            return
        message = match_success_policy(job.success_policy, job.completions, frozenset(self.succeeded_indexes))
        if message is not None:
            self.done = True
            self.success = (REASON_SUCCESS_POLICY, message)

    def _fail(self, reason: str, message: str) -> None:
        """The Job failed (its ``Failed`` condition): it creates nothing more and deletes its active pods,
        each counted failed now (``trackJobStatusAndRemoveFinalizers``: a Job finished other than by its
        ``successPolicy`` counts every non-terminated pod failed unless ``podFailurePolicy`` matches it, which
        for a pod with no terminated container and no condition no rule does), and so is the last failed pod
        of an index whose backoff held it uncounted."""
        self.done = True
        self.failure = (reason, message)
        uncounted = [key for key, index in self.terminating.items() if index is not None]
        held = sum(counted for _, counted in self._backing_off.values())  # an index's last failed pod, held
        self.failed += len(self.active) + len(uncounted) + held + self._counted_next_sync
        _BACKING_OFF.drop(self)
        self._counted_next_sync = 0
        for key in uncounted:
            _TERMINATING.of(self)[key] = None

    def status_conditions(self) -> list[StatusCondition]:
        """``kind.ReportsStatus``: ``FailureTarget`` (``newFailureCondition``) or ``SuccessCriteriaMet``
        (``newSuccessCondition``) once the Job failed or succeeded, then ``Failed`` or ``Complete`` with the
        same reason and message once none of its pods is terminating (``enactJobFinished``); before that,
        ``Suspended`` (``JobSuspended``) while ``spec.suspend`` holds it."""
        ended = (FAILURE_TARGET, FAILED, self.failure) if self.failure is not None else None
        if ended is None and self.success is not None:
            ended = (SUCCESS_CRITERIA_MET, COMPLETE, self.success)
        if ended is None:
            return [StatusCondition(*JOB_SUSPENDED)] if self.suspending and not self.done else []
        interim, terminal, (reason, message) = ended
        out = [StatusCondition(interim, reason, message)]
        if not self.active and not self.terminating and not self.removing:
            out.append(StatusCondition(terminal, reason, message))
        return out

    def status_counts(self) -> dict[str, int]:
        """``status.active`` (its pods not terminating), ``succeeded``, ``failed`` and ``terminating``
        (``CountTerminatingPods``: its pods being deleted, and those it deletes as it finished or as it is
        suspended, or for being too many or of an invalid index, until they are gone)."""
        finishing = self.failure is not None or self.success is not None
        deleting = len(self.active) if finishing or self.suspending else 0
        return {
            "active": len(self.active) - deleting,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "terminating": deleting + len(self.terminating) + len(self.removing),
        }

    def status_indexes(self) -> dict[str, str]:
        """``status.completedIndexes`` of an Indexed Job (``1,3-5``, its succeeded indexes below
        ``completions``; left out while there are none, as the API's ``omitempty``) and
        ``status.failedIndexes`` of one with ``backoffLimitPerIndex`` (empty when none)."""
        out = {}
        completions = self.job.completions
        if self.job.indexed and (done := [i for i in self.succeeded_indexes if i < (completions or 0)]):
            out["completedIndexes"] = format_indexes(done)
        if self.per_index:
            out["failedIndexes"] = format_indexes(self.failed_indexes)
        return out

    def deadlines(self) -> dict[str, float]:
        """``activeDeadlineSeconds`` (``kind.HasDeadline``: the Job's own, ``""``), counted from
        ``status.startTime``: when the controller starts, or when it resumes after a suspension (Kueue's
        admission)."""
        deadline = self.job.active_deadline_s
        return {} if deadline is None else {"": deadline}

    def deadline_passed(self, name: str = "") -> None:
        """``pastActiveDeadline``: a Job not yet finished fails (``DeadlineExceeded``); not one that
        ``spec.suspend`` holds (its deadline does not run while it is suspended)."""
        if not self.done and not self.job.suspend and not self.disowned:
            self._fail(*DEADLINE_EXCEEDED)

    def doomed(self) -> list[tuple[str, str]]:
        """``deleteActivePods`` (``kind.DeletesPods``): once the Job failed, or met its ``successPolicy``,
        or while ``spec.suspend`` holds it (``manageJob``'s ``deleteJobPods``), its pods still active (each
        time it is asked, as every sync of a finished Job deletes them; deleting one already terminating does
        nothing); before them, those ``manageJob`` deletes for being too many or of an invalid index
        (``removing``), until their deletion is heard. A Job being deleted deletes none while not finished
        (``syncJob`` does not run ``manageJob``), but the garbage collector deletes its active pods
        (``model.job_deletion``: ``Foreground``, or ``Background`` once the Job is gone)."""
        removing = [(key, "Deleted") for key in self.removing]
        gc = self.job.gc if self.job.deleting else None
        collected = gc is not None and gc.deletes_pods
        if self.failure is None and self.success is None and not self.suspending and not collected:
            return removing
        return removing + [(key, "Deleted") for key in sorted(self.active)]

    def retry_delay_s(self) -> float:
        """The pod failure backoff before a failed pod's replacement (``kind.BacksOff``); none once
        the Job failed (its active pods are deleted at once)."""
        if self.failure is not None or self.success is not None:
            return 0.0
        if self.per_index:
            return self._index_delay_s
        return remaining_backoff_s(self.backoff, self.now_s)

    def node_added(self, node: Node) -> list[Pod]:
        return []

    def suspended(self, pod: Pod) -> None:
        """``spec.suspend`` (Kueue evicted the Job, or the workload that owns it): the pod, deleted by
        ``deleteJobPods`` without its tracking finalizer, is not counted (neither failed nor succeeded, no
        pod failure backoff), and its index is created again (``-r<n>``) for when the Job resumes."""
        index, _ = self._forget(pod)
        if index is not None:
            self._retry(index)

    def _retry(self, index: int) -> None:
        attempts = _ATTEMPTS.of(self)
        attempts[index] = attempts.get(index, 0) + 1
        _RETRIES.of(self).append(index)
