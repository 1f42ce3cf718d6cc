"""What a controller of a cluster snapshot has already made: the pods of the snapshot it owns and,
for a Job, what its status has counted. Its controller adopts them (upstream's
``PodControllerRefManager.ClaimPods``, pkg/controller/controller_ref_manager.go) and creates only
what is missing, instead of starting afresh beside them."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.model.pod import Pod
from gpufleet.model.pod_failure_policy import FailedPod

#: ``batch.kubernetes.io/job-completion-index``: an Indexed Job's pod's completion index
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
#: the phases of a pod that has ended
FINISHED_PHASES = ("Succeeded", "Failed")


@dataclass(frozen=True)
class OwnedPod:
    """A pod of the snapshot whose controlling owner is the controller (its ``phase`` as the dump has
    it; ``terminating``: it has a ``metadata.deletionTimestamp``; ``failure``: what a Job's
    ``podFailurePolicy`` reads of its ``status`` -- its conditions, its containers' exit codes -- where
    it failed)."""

    pod: Pod
    phase: str
    terminating: bool = False
    failure: FailedPod | None = None
    #: its containers' and init containers' ``restartCount``, summed (what a Job's
    #: ``pastBackoffLimitOnFailure`` reads)
    restarts: int = 0
    #: what ``controller.ActivePods`` ranks it by (a Job's ``activePodsForRemoval``): its ``Ready``
    #: condition's ``lastTransitionTime`` while that is ``True`` (None: not Ready; ``""``: no time), its
    #: containers' highest ``restartCount`` and its ``metadata.creationTimestamp`` (``""``: unset), as RFC
    #: 3339 text
    ready_since: str | None = None
    max_restarts: int = 0
    created: str = ""
    #: when it finished, in Unix seconds (a Job's ``getFinishedTime``: its containers' latest
    #: ``state.terminated.finishedAt``, else its ``Ready=False`` condition's ``lastTransitionTime``, else its
    #: ``deletionTimestamp`` less ``deletionGracePeriodSeconds``, else its ``creationTimestamp``); None where
    #: none says (upstream's zero time: long ago)
    finished_unix: float | None = None
    #: an ended pod of a Job that its ``status`` does not count yet (it holds the tracking finalizer or is in
    #: ``uncountedTerminatedPods``): adoption counts it
    uncounted: bool = False

    @property
    def active(self) -> bool:
        """Neither Succeeded nor Failed nor being deleted (``controller.IsPodActive``)."""
        return self.phase not in FINISHED_PHASES and not self.terminating

    @property
    def node(self) -> str | None:
        """The node the pod is on or pinned to (``util.GetTargetNodeName``: ``spec.nodeName``, else a
        DaemonSet pod's required node affinity on ``metadata.name``)."""
        if self.pod.node_name is not None:
            return self.pod.node_name
        for term in self.pod.required_terms or ():
            for req in term.fields:
                if req.key == "metadata.name" and req.operator == "In" and len(req.values) == 1:
                    return req.values[0]
        return None

    @property
    def completion_index(self) -> int | None:
        """An Indexed Job's pod's completion index (its annotation), None when absent or not a number."""
        value = self.pod.annotations.get(JOB_COMPLETION_INDEX, "")
        return int(value) if value.isdigit() else None


@dataclass
class Owned:
    """A controller's pods in the snapshot and, for a Job, its pods that have ended and been counted:
    ``succeeded`` and ``failed`` (``status.succeeded``/``failed`` plus the finished pods not yet
    counted there) and ``completed_indexes`` (an Indexed Job's ``status.completedIndexes``); for a
    Deployment, ``replica_set``: its current ReplicaSet, which names its new pods."""

    pods: list[OwnedPod] = field(default_factory=list)
    succeeded: int = 0
    failed: int = 0
    completed_indexes: frozenset[int] = frozenset()
    #: a Job's ``status.failedIndexes`` (``backoffLimitPerIndex``)
    failed_indexes: frozenset[int] = frozenset()
    #: a Job's ``FailureTarget`` condition of status ``True`` (reason, message): a failure an earlier sync
    #: decided, which the Job's ``Failed`` condition copies (``newFailedConditionForFailureTarget``)
    failure_target: tuple[str, str] | None = None
    #: a Job's ``SuccessCriteriaMet`` condition of status ``True`` (reason, message): a success an earlier
    #: sync decided, which the Job's ``Complete`` condition copies (``hasSuccessCriteriaMetCondition``)
    success_criteria_met: tuple[str, str] | None = None
    replica_set: str = ""
    #: the wall-clock time (Unix s) at which its controller adopts them (the run's time 0 plus the time it
    #: starts), set by the driver: what a Job's pod failure backoff counts its failed pods' finish times
    #: from; None where the run has no time 0 (``model.node_readiness.clock_zero``): none carried over
    adopted_unix: float | None = None
