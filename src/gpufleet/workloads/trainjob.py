"""Kubeflow Trainer v2's ``TrainJob`` (``trainer.kubeflow.org/v1alpha1``): a training job that names a
runtime (a ``ClusterTrainingRuntime`` or namespaced ``TrainingRuntime``, read by
``gpufleet.kube.training_runtimes``) whose JobSet template the trainer fills in and creates
(``pkg/runtime/core/trainingruntime.go``, ``pkg/runtime/framework/plugins/{jobset,torch,mpi,
coscheduling}``). gpufleet then does what the JobSet and Job controllers do with that JobSet: its controller
is the JobSet's (``gpufleet.workloads.jobset``), run on the filled-in JobSet.

The TrainJob's own fields (``read_train_job``): ``runtimeRef`` (``name`` required; ``apiGroup``
``trainer.kubeflow.org``; ``kind`` ``ClusterTrainingRuntime``, the default, or ``TrainingRuntime``),
``trainer`` (``numNodes`` at least 0, ``numProcPerNode`` at least 1, ``image``, ``command``,
``args``, ``env``, ``resourcesPerNode``), ``initializer`` (storage URIs and environment: read
silently), ``suspend``, ``activeDeadlineSeconds`` (at least 1, the CRD's minimum): counted from the
TrainJob's start, or its last resume (the ``Suspended`` condition turning false), the trainer's
``reconcileDeadline`` fails it past that (``Failed``, reason ``DeadlineExceeded``, "TrainJob exceeded its
active deadline") and deletes its JobSet, whose Jobs' pods are deleted. ``runtimePatches`` and ``managedBy``
MultiKueue are not modelled: a warning each.

The JobSet (``plugins/jobset`` ``Build``: the runtime's JobSet spec as it is, ``failurePolicy`` included,
counts and images filled in) is named after the TrainJob; replicated job ``r`` has ``replicas`` Jobs
``<trainjob>-<r>-<jobIndex>`` (``placement.GenJobName``), each of ``parallelism`` = ``completions`` = the
pod set's count (Indexed unless the runtime says ``NonIndexed``). Its pods are named as gpufleet names a
Job's pods, ``<job>-<completion index>`` (retries ``-r<n>``; upstream the Job controller adds a random
suffix to that hostname; the pods of a restarted JobSet, whose hostnames repeat those of the old pods, get
the suffix a JobSet's pods get), owned by the Job, labelled and annotated as the JobSet controller and its
pod webhook mark them (``labelAndAnnotateObject``; ``jobset-uid`` is left out: a simulated object has no
uid). Each Job is gpufleet's Job controller: a failed pod replaced after the pod failure backoff until
``backoffLimit``, its ``podFailurePolicy``, ``backoffLimitPerIndex``/``maxFailedIndexes`` and
``activeDeadlineSeconds`` (each from the Job's own start; 0: failed before it creates a pod) and
``podReplacementPolicy`` (a pod being deleted replaced while it terminates, or once it failed) applied as a
Job's; under ``OnFailure``, the JobSet webhook's default, the kubelet's container restarts count toward
``backoffLimit``. The JobSet completes by
its ``successPolicy`` and judges a failed Job by its ``failurePolicy``, each once the Job's ``Complete`` or
``Failed`` condition is set, the pods it deleted gone (``JobFinished``; JobSet v0.12.0: ``FailJobSet``,
``RestartJobSet`` while fewer than ``maxRestarts``, ``RestartJobSetAndIgnoreMaxRestarts``; without one a
failed Job fails it); a restart recreates every Job under ``restart-attempt + 1``. The TrainJob is
``Complete`` or ``Failed`` with its JobSet (``plugins/jobset`` ``Status`` copies those two conditions and
the replicated Jobs' counts: a restart shows in neither). The ranks of the ML policy's world
(``Behavior.rendezvous``: torch, JAX and XGBoost, the trainer's pods; MPI, the launcher's and the nodes')
compute only once all are up.

Coscheduling (``podGroupPolicy.coscheduling``): a PodGroup named after the TrainJob of ``minMember``
= the sum of the pod sets' counts and ``scheduleTimeoutSeconds`` (default 60); every pod carries
``scheduling.x-k8s.io/pod-group`` (``plugins/coscheduling``). Kueue: a pod set per replicated job,
less the pods of its Jobs that succeeded (``reclaimablePods``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from gpufleet.model.kueue import QUEUE_NAME_LABEL
from gpufleet.model.pod import POD_GROUP_LABEL, Pod
from gpufleet.model.pod_failure_policy import PodFailurePolicy
from gpufleet.model.workloads import Created, PodGroup
from gpufleet.workloads import jobset as js
from gpufleet.workloads import register_kind
from gpufleet.workloads.jobset import ChildJob, FailurePolicy, JobSet, JobSetController
from gpufleet.workloads.kind import ManifestReader
from gpufleet.workloads.pytorchjob import invalid, required, unsupported

API = ("trainer.kubeflow.org", "v1alpha1", "TrainJob")
GROUP = API[0]
CLUSTER_TRAINING_RUNTIME, TRAINING_RUNTIME = "ClusterTrainingRuntime", "TrainingRuntime"
RUNTIME_KINDS = (CLUSTER_TRAINING_RUNTIME, TRAINING_RUNTIME)
MANAGED_BY = ("trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue")
READY, COMPLETE = "Ready", "Complete"
#: ``TrainJobDeadlineExceededReason`` and ``constants.TrainJobDeadlineExceededMessage``
DEADLINE_EXCEEDED = ("DeadlineExceeded", "TrainJob exceeded its active deadline")


@dataclass(frozen=True)
class ReplicatedJob:
    """One replicated job of the filled-in JobSet."""

    name: str
    replicas: int
    count: int  # each Job's parallelism and completions
    template: Pod
    backoff_limit: int = 6
    group: str = "default"
    depends_on: tuple[tuple[str, str], ...] = ()  # (replicated job, Ready or Complete)
    #: its pods are ranks of the job's distributed world (the ML policy's rendezvous)
    ranks: bool = False
    #: its Jobs' ``podFailurePolicy`` (``model.pod_failure_policy``)
    pod_failure_policy: PodFailurePolicy | None = None
    indexed: bool = True  # the JobSet webhook's default completionMode
    #: its Jobs' ``backoffLimitPerIndex``, ``maxFailedIndexes`` and ``activeDeadlineSeconds`` (None: unset)
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    active_deadline_s: float | None = None
    #: its Jobs' ``podReplacementPolicy`` (None: unset, the Job's default)
    pod_replacement_policy: str | None = None


@dataclass
class TrainJob:
    name: str
    namespace: str
    runtime_kind: str
    runtime_name: str
    created: Created = field(default_factory=Created)
    #: the JobSet the trainer builds from the runtime (empty until ``kube.training_runtimes`` fills it)
    jobs: tuple[ReplicatedJob, ...] = ()
    #: the PodGroup's scheduleTimeoutSeconds under ``podGroupPolicy.coscheduling``, else no PodGroup
    coscheduling_timeout_s: float | None = None
    success_any: bool = False  # successPolicy operator Any (else All)
    success_targets: tuple[str, ...] = ()  # successPolicy targetReplicatedJobs (empty: all)
    #: the runtime's JobSet ``failurePolicy``; None: a failed Job fails the JobSet
    failure_policy: FailurePolicy | None = None
    suspend: bool = False
    #: ``activeDeadlineSeconds``; None: unset
    active_deadline_s: float | None = None
    #: Kueue manages it (``kueue.x-k8s.io/queue-name``): its JobSet's ``queued``
    queued: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def template(self) -> Pod:
        return self.jobs[0].template if self.jobs else Pod(name="", namespace=self.namespace)


def read_train_job(manifest: ManifestReader) -> TrainJob:
    """A ``trainer.kubeflow.org/v1alpha1`` TrainJob's own fields, defaulted and validated as the CRD
    does; its JobSet comes from its runtime (``kube.training_runtimes.resolve``)."""
    name = manifest.value("runtimeRef.name")
    if not name:
        manifest.error("runtimeRef.name", required("the name of a ClusterTrainingRuntime or TrainingRuntime"))
    group = manifest.value("runtimeRef.apiGroup") or GROUP
    if group != GROUP:
        manifest.error("runtimeRef.apiGroup", unsupported(group, (GROUP,)))
    kind = manifest.value("runtimeRef.kind") or CLUSTER_TRAINING_RUNTIME
    if kind not in RUNTIME_KINDS:
        manifest.error("runtimeRef.kind", unsupported(kind, RUNTIME_KINDS))
        kind = CLUSTER_TRAINING_RUNTIME
    manifest.count("trainer.numNodes", 1)
    procs = manifest.value("trainer.numProcPerNode")
    if procs is not None and (not isinstance(procs, int) or procs < 1):
        manifest.error(
            "trainer.numProcPerNode", invalid(procs, "numProcPerNode must be greater than or equal to 1")
        )
    manifest.value("initializer")  # storage URIs and environment of the initializers
    manager = manifest.value("managedBy")
    if manager is not None and manager not in MANAGED_BY:
        manifest.error("managedBy", unsupported(manager, MANAGED_BY))
    suspend = manifest.value("suspend")
    if suspend is not None and not isinstance(suspend, bool):
        manifest.error("suspend", invalid(suspend, "must be a boolean"))
    deadline = manifest.value("activeDeadlineSeconds")
    if deadline is not None and (not isinstance(deadline, int) or isinstance(deadline, bool) or deadline < 1):
        manifest.error("activeDeadlineSeconds", invalid(deadline, "should be greater than or equal to 1"))
        deadline = None
    manifest.unmodelled(["runtimePatches"])
    if manager == MANAGED_BY[1]:  # MultiKueue runs it on another cluster
        manifest.unmodelled(["managedBy"])
    return TrainJob(
        manifest.name,
        manifest.namespace,
        str(kind),
        str(name or ""),
        suspend=suspend is True,
        active_deadline_s=None if deadline is None else float(deadline),
        queued=QUEUE_NAME_LABEL in manifest.labels,
    )


def _jobset(train_job: TrainJob) -> JobSet:
    """The JobSet the trainer builds (``plugins/jobset`` ``Build``): the runtime's, each Job of its pod set's
    count; the ranks' pods wait for the whole world, and carry the PodGroup's label under coscheduling."""
    world = (train_job.key, sum(r.replicas * r.count for r in train_job.jobs if r.ranks))
    group = {POD_GROUP_LABEL: train_job.name} if train_job.coscheduling_timeout_s is not None else {}
    rjobs = []
    for r in train_job.jobs:
        template = replace(r.template, labels={**r.template.labels, **group})
        if r.ranks:  # torchrun's rendezvous of PET_NNODES nodes, mpirun's launcher and nodes
            template = replace(template, behavior=replace(template.behavior, rendezvous=world))
        rjobs.append(
            js.ReplicatedJob(
                r.name,
                r.replicas,
                template,
                r.count,
                r.count,
                r.backoff_limit,
                r.indexed,
                r.group,
                depends_on=r.depends_on,
                pod_failure_policy=r.pod_failure_policy,
                backoff_limit_per_index=r.backoff_limit_per_index,
                max_failed_indexes=r.max_failed_indexes,
                active_deadline_s=r.active_deadline_s,
                pod_replacement_policy=r.pod_replacement_policy,
            )
        )
    return JobSet(
        train_job.name,
        train_job.namespace,
        tuple(rjobs),
        train_job.created,
        js.ANY if train_job.success_any else js.ALL,
        train_job.success_targets,
        train_job.failure_policy,
        suspend=train_job.suspend,
        queued=train_job.queued,
    )


class _TrainJobChild(ChildJob):
    """A Job of the TrainJob's JobSet: its pods named ``<job>-<index>`` (retries ``-r<n>``), their
    hostname, until a restart; a restarted JobSet's keep the JobSet's suffix, as their hostnames repeat those
    of the old pods, which may still be terminating."""

    def pod_name(self, index: int, attempt: int) -> str:
        if self.restart:
            return super().pod_name(index, attempt)
        return f"{self.job.name}-{index}" + (f"-r{attempt}" if attempt else "")


@register_kind(TrainJob, api=API, read=read_train_job)
class TrainJobController(JobSetController):
    """The JobSet controller on the JobSet the trainer builds; the TrainJob's own deadline and PodGroup."""

    ENDED: ClassVar[tuple[str, str]] = ("Complete", "Failed")
    CHILD: ClassVar[type[ChildJob]] = _TrainJobChild

    kind: ClassVar[str] = "TrainJob"

    def __init__(self, train_job: TrainJob) -> None:
        super().__init__(_jobset(train_job))
        self.train_job = train_job
        #: the reason of its ``Failed`` condition when the trainer set it (``DeadlineExceeded``)
        self.reason: str | None = None

    def deadlines(self) -> dict[str, float]:
        """``kind.HasDeadline``: the TrainJob's ``activeDeadlineSeconds`` (``""``, from its start or last
        resume; none while ``spec.suspend`` holds it, ``reconcileDeadline``) and its Jobs'
        (``JobSetController.deadlines``)."""
        out = super().deadlines()
        own = self.train_job.active_deadline_s
        if own is not None and not self.done and not self.train_job.suspend:
            out[""] = own
        return out

    def deadline_passed(self, name: str) -> None:
        """``reconcileDeadline``: past its own deadline a TrainJob not finished fails (``DeadlineExceeded``)
        and its JobSet is deleted, with its Jobs' pods; a Job's deadline is the JobSet's to judge."""
        if name:
            super().deadline_passed(name)
        elif not self.done:
            self.reason = DEADLINE_EXCEEDED[0]
            self._end("Failed", DEADLINE_EXCEEDED[1])

    def pod_groups(self) -> list[PodGroup]:
        train_job = self.train_job
        timeout = train_job.coscheduling_timeout_s
        if timeout is None:
            return []
        members = sum(r.count for r in train_job.jobs)  # the pod sets' counts
        return [PodGroup(train_job.name, train_job.namespace, members, timeout, train_job.created)]
