"""Workload objects whose controllers create pods, and scheduling-policy objects.

``Job`` (``batch/v1``: parallelism, completions, backoffLimit), ``Deployment`` (``apps/v1``:
replicas, its strategy and the changes of its template a gpufleet ``Rollout`` makes), ``DaemonSet``
(``apps/v1``: one pod per matching node), ``PodGroup`` (``scheduling.x-k8s.io/v1alpha1``: minMember,
scheduleTimeoutSeconds) and ``PriorityClass`` (``scheduling.k8s.io/v1``). ``Workload`` is what every workload
object has, whatever its kind (a kind registered in ``gpufleet.workloads`` may bring its own object).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from gpufleet.model.completion_indexes import SuccessPolicy
from gpufleet.model.job_deletion import Deletion
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_failure_policy import PodFailurePolicy

#: ``batch.PodReplacementPolicy``'s values
REPLACE_FAILED, REPLACE_TERMINATING_OR_FAILED = "Failed", "TerminatingOrFailed"


@dataclass(frozen=True)
class Created:
    """Where an object came from and when it is created in the simulation."""

    submit_at_s: float = 0.0
    order: int = 0  # document order: equal submit times keep it


class Workload(Protocol):
    """A workload object read from a manifest."""

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def template(self) -> Pod: ...
    @property
    def created(self) -> Created: ...
    @property
    def key(self) -> str: ...


@dataclass
class Job:
    name: str
    namespace: str
    template: Pod
    parallelism: int = 1
    completions: int | None = 1
    backoff_limit: int = 6
    created: Created = Created()
    #: Kueue's partial admission (``kueue.x-k8s.io/job-min-parallelism``): the fewest pods it may be
    #: admitted with; and whether ``completions`` follows ``parallelism`` when it is
    #: (``kueue.x-k8s.io/job-completions-equal-parallelism``)
    min_parallelism: int | None = None
    completions_equal_parallelism: bool = False
    #: ``spec.podFailurePolicy``: how a failed pod counts (``model.pod_failure_policy``)
    pod_failure_policy: PodFailurePolicy | None = None
    #: ``spec.activeDeadlineSeconds``: how long it may be active before it fails (DeadlineExceeded)
    active_deadline_s: float | None = None
    #: ``spec.completionMode: Indexed`` (pods are named ``<job>-<index>`` in either mode)
    indexed: bool = False
    #: ``spec.successPolicy`` of an Indexed Job (``model.completion_indexes``)
    success_policy: SuccessPolicy | None = None
    #: ``spec.backoffLimitPerIndex`` and ``spec.maxFailedIndexes`` of an Indexed Job
    #: (``model.failed_indexes``); None: unset
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    #: ``spec.suspend: true``: the Job creates no pods and deletes its active ones (``manageJob``); nothing in
    #: a simulation resumes it, but Kueue, which admits a Job it manages by unsuspending it
    suspend: bool = False
    #: ``spec.podReplacementPolicy`` (None: unset, defaulted by ``SetDefaults_Job`` from
    #: ``podFailurePolicy``)
    pod_replacement_policy: str | None = None
    #: ``spec.ttlSecondsAfterFinished``: deleted that long after it finished
    #: (``workloads.ttl_after_finished``)
    ttl_after_finished_s: float | None = None
    #: ``metadata.deletionTimestamp`` set (a snapshot's Job being deleted): ``syncJob`` no longer runs
    #: ``manageJob``, so it creates no pods, deletes none for being too many or suspended, and its
    #: ``Suspended`` condition is not written
    deleting: bool = False
    #: how the garbage collector deletes it while ``deleting``, from its ``metadata.finalizers``
    #: (``model.job_deletion``); None: nothing of the collector's is modelled (its pods run on)
    gc: Deletion | None = None
    #: Kueue manages it (``workloads.job.kueue_held``): it holds the Job suspended until it admits it, its
    #: pods created gated (upstream the suspended Job has none)
    queued: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def only_replace_failed_pods(self) -> bool:
        """``onlyReplaceFailedPods``: a pod being deleted is replaced only once it is Failed (policy
        ``Failed``, the default and only value with a ``podFailurePolicy``); else (``TerminatingOrFailed``)
        it counts as failed and is replaced as soon as it is terminating (``isPodFailed``)."""
        return self.pod_replacement_policy == REPLACE_FAILED or self.pod_failure_policy is not None


#: ``apps.DeploymentStrategyType``'s values
ROLLING_UPDATE, RECREATE = "RollingUpdate", "Recreate"


@dataclass(frozen=True)
class DeploymentStrategy:
    """``spec.strategy`` as ``apps/v1`` defaults it (``SetDefaults_Deployment``: ``RollingUpdate``, 25 % and
    25 %); ``max_surge`` and ``max_unavailable`` are an int or a percentage string (``"25%"``)."""

    type: str = ROLLING_UPDATE
    max_surge: int | str = "25%"
    max_unavailable: int | str = "25%"


@dataclass(frozen=True)
class TemplateChange:
    """A change of a Deployment's pod template at ``at_s`` (a gpufleet ``Rollout``): its new ``template``,
    the ``pod-template-hash`` of its ReplicaSet, and the Rollout's name."""

    at_s: float
    template: Pod
    template_hash: str
    name: str


@dataclass
class Deployment:
    name: str
    namespace: str
    template: Pod
    replicas: int = 1
    created: Created = Created()
    strategy: DeploymentStrategy = DeploymentStrategy()
    min_ready_s: int = 0
    #: the hash of ``template`` (its first ReplicaSet's ``pod-template-hash``); "" until a Rollout needs it
    template_hash: str = ""
    #: the template's changes, by time (``Rollout`` objects)
    rollouts: tuple[TemplateChange, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class DaemonSet:
    name: str
    namespace: str
    template: Pod
    created: Created = Created()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class PodSet:
    """One of a workload's pod sets as Kueue admits it (``Workload.spec.podSets``): ``count`` pods of
    ``template``, named as its integration names them (``main`` for a Job, the replica type for a
    training job). ``selector`` tells its pods from the other sets' by the labels its controller gives
    them (a PyTorchJob's ``training.kubeflow.org/replica-type``): Kueue gives each pod its own set's
    flavors (what upstream's ``kueue.x-k8s.io/podset`` label on the set's pod template marks)."""

    name: str
    count: int
    template: Pod
    selector: tuple[Requirement, ...] = ()  # every requirement matches its pods' labels; () every pod
    min_count: int | None = None  # ``minCount``: partial admission may admit it with this many pods

    def holds(self, pod: Pod) -> bool:
        """Whether ``pod`` is one of this set's."""
        return all(r.matches(pod.labels) for r in self.selector)


def labelled(key: str, value: str) -> tuple[Requirement, ...]:
    """The selector of the pods labelled ``key: value``."""
    return (Requirement(key, "In", (value,)),)


@dataclass
class PodGroup:
    name: str
    namespace: str
    min_member: int = 1
    schedule_timeout_s: float | None = None
    created: Created = Created()
    #: a Volcano PodGroup's ``spec.queue`` (``scheduling.volcano.sh``); None for scheduler-plugins'
    queue: str | None = None
    #: scheduler-plugins' ``spec.minResources`` in canonical units (None: not given)
    min_resources: dict[str, int] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"
