"""Kubeflow Trainer v2's ``TrainJob`` (``trainer.kubeflow.org/v1alpha1``): a training job that names a
runtime (a ``ClusterTrainingRuntime`` or namespaced ``TrainingRuntime``, read by
``gpufleet.kube.training_runtimes``) whose JobSet template the trainer fills in and creates
(``pkg/runtime/core/trainingruntime.go``, ``pkg/runtime/framework/plugins/{jobset,torch,mpi,
coscheduling}``). gpufleet does what the JobSet and Job controllers then do, directly: this module
expands the filled-in JobSet into its Jobs' pods.

The TrainJob's own fields (``read_train_job``): ``runtimeRef`` (``name`` required; ``apiGroup``
``trainer.kubeflow.org``; ``kind`` ``ClusterTrainingRuntime``, the default, or ``TrainingRuntime``),
``trainer`` (``numNodes`` at least 0, ``numProcPerNode`` at least 1, ``image``, ``command``,
``args``, ``env``, ``resourcesPerNode``), ``initializer`` (storage URIs and environment: read
silently), ``suspend``. ``activeDeadlineSeconds``, ``runtimePatches`` and ``managedBy`` MultiKueue
are not modelled: a warning each.

The JobSet (``jobset_controller.go`` ``constructJob``, ``labelAndAnnotateObject``): the JobSet is named
after the TrainJob; replicated job ``r`` has ``replicas`` Jobs ``<trainjob>-<r>-<jobIndex>``
(``placement.GenJobName``), each an Indexed Job of ``parallelism`` = ``completions`` = the pod set's
count. Its pods are named as gpufleet names a Job's pods, ``<job>-<completion index>`` (retries
``-r<n>``; upstream the Job controller adds a random suffix to that hostname), owned by the Job and
labelled ``jobset.sigs.k8s.io/{jobset-name, replicatedjob-name, replicatedjob-replicas,
global-replicas, job-index, job-global-index, job-key, restart-attempt, group-name, group-replicas,
job-group-index}`` (``jobset-uid`` is left out: a simulated object has no uid),
``batch.kubernetes.io/job-name``, ``job-name`` and ``batch.kubernetes.io/job-completion-index``.
Each Job replaces a failed pod after the pod failure backoff until its ``backoffLimit``, its
``podFailurePolicy`` deciding how a failed pod counts (``Ignore``: not at all; ``FailJob``: the Job fails,
``PodFailurePolicy``), told how each pod failed (``failed_with``) as a Job is (``gpufleet.workloads.job``);
under ``OnFailure``, the JobSet webhook's default, the kubelet's container restarts count toward
``backoffLimit`` (``pastBackoffLimitOnFailure``). The runtime's Job templates' ``backoffLimitPerIndex`` and
``maxFailedIndexes`` are not modelled (a warning). The ranks of the ML policy's world
(``Behavior.rendezvous``: torch, JAX and XGBoost, the trainer's pods; MPI, the launcher's and the nodes')
compute only once all are up.

A replicated job with ``dependsOn`` is created once each named one is ``Complete`` (all its Jobs
succeeded) or ``Ready`` (each Job has ``ready + succeeded`` pods for its parallelism, or ended)
(``dependencyReachedStatus``). The JobSet completes by its ``successPolicy`` (``All``, the default,
or ``Any`` of the Jobs of ``targetReplicatedJobs``, default all) and fails when a Job fails (no
``failurePolicy``: ``maxRestarts`` 0); then it deletes its Jobs still active (``deleteJobs``), and the
TrainJob is ``Complete`` or ``Failed`` with it.

Coscheduling (``podGroupPolicy.coscheduling``): a PodGroup named after the TrainJob of ``minMember``
= the sum of the pod sets' counts and ``scheduleTimeoutSeconds`` (default 60); every pod carries
``scheduling.x-k8s.io/pod-group`` (``plugins/coscheduling``). Kueue: a pod set per replicated job,
less the pods of its Jobs that succeeded (``reclaimablePods``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from gpufleet.model.node import Node
from gpufleet.model.pod import POD_GROUP_LABEL, Pod
from gpufleet.model.pod_failure_policy import ContainerExit, PodFailurePolicy
from gpufleet.model.workloads import Created, Job, PodGroup, PodSet, labelled
from gpufleet.workloads import register_kind
from gpufleet.workloads.job import JobController
from gpufleet.workloads.jobset import (
    COMPLETION_INDEX,
    GLOBAL_REPLICAS,
    GROUP_NAME,
    GROUP_REPLICAS,
    JOB_GLOBAL_INDEX,
    JOB_GROUP_INDEX,
    JOB_INDEX,
    JOB_KEY,
    JOBSET_NAME,
    REPLICATED_JOB_NAME,
    REPLICATED_JOB_REPLICAS,
    RESTART_ATTEMPT,
    child_job_name,
    job_key,
)
from gpufleet.workloads.kind import EndsWithCondition, ManifestReader
from gpufleet.workloads.mpijob import JOB_POD_LABELS
from gpufleet.workloads.pytorchjob import invalid, required, unsupported

API = ("trainer.kubeflow.org", "v1alpha1", "TrainJob")
GROUP = API[0]
CLUSTER_TRAINING_RUNTIME, TRAINING_RUNTIME = "ClusterTrainingRuntime", "TrainingRuntime"
RUNTIME_KINDS = (CLUSTER_TRAINING_RUNTIME, TRAINING_RUNTIME)
MANAGED_BY = ("trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue")
READY, COMPLETE = "Ready", "Complete"


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
    suspend: bool = False

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
    manifest.unmodelled(["activeDeadlineSeconds", "runtimePatches"])
    if manager == MANAGED_BY[1]:  # MultiKueue runs it on another cluster
        manifest.unmodelled(["managedBy"])
    return TrainJob(manifest.name, manifest.namespace, str(kind), str(name or ""), suspend=suspend is True)


class _ChildJob:
    """One Job of the JobSet: gpufleet's Job controller, with the JobSet's labels on its pods."""

    def __init__(self, job: Job, replicated_job: str) -> None:
        self.controller = JobController(job)
        self.replicated_job = replicated_job
        self.ready: set[str] = set()

    @property
    def count(self) -> int:
        return self.controller.job.parallelism

    @property
    def ended(self) -> bool:
        return self.controller.done

    @property
    def succeeded(self) -> bool:
        return self.controller.done and self.controller.succeeded >= self.count

    @property
    def is_ready(self) -> bool:
        """``calculateReplicatedJobStatuses``: ready + succeeded pods reach the parallelism, or it ended."""
        return self.ended or len(self.ready) + self.controller.succeeded >= self.count

    def wanted(self) -> list[Pod]:
        out = []
        for pod in self.controller.wanted():
            index = str(self.controller.active[pod.key])
            out.append(replace(pod, labels={**pod.labels, COMPLETION_INDEX: index}))
        return out


@register_kind(TrainJob, api=API, read=read_train_job)
class TrainJobController(EndsWithCondition):
    """The trainer's JobSet and the JobSet controller's Jobs, for one TrainJob."""

    ENDED: ClassVar[tuple[str, str]] = ("Complete", "Failed")

    kind: ClassVar[str] = "TrainJob"
    per_node: ClassVar[bool] = False

    def __init__(self, train_job: TrainJob) -> None:
        self.train_job = train_job
        self.children: dict[str, list[_ChildJob]] = {}  # replicated job -> its Jobs, once created
        self.owner: dict[str, _ChildJob] = {}  # pod key -> its Job
        self._deleted = False
        self._retry_s = 0.0
        #: the TrainJob's condition: Created, Running, Complete, Failed or Suspended
        self.status = "Suspended" if train_job.suspend else "Created"

    @property
    def key(self) -> str:
        return self.train_job.key

    @property
    def active(self) -> set[str]:
        return {k for jobs in self.children.values() for j in jobs for k in j.controller.active}

    def _labels(self, rjob: ReplicatedJob, job_index: int) -> dict[str, str]:
        """``labelAndAnnotateObject`` and the Job controller's labels."""
        train_job = self.train_job
        jobs = train_job.jobs
        job_name = child_job_name(train_job.name, rjob.name, job_index)
        before = jobs[: jobs.index(rjob)]
        group = [j for j in jobs if j.group == rjob.group]
        labels = {
            JOBSET_NAME: train_job.name,
            REPLICATED_JOB_NAME: rjob.name,
            REPLICATED_JOB_REPLICAS: str(rjob.replicas),
            GLOBAL_REPLICAS: str(sum(j.replicas for j in jobs)),
            JOB_INDEX: str(job_index),
            JOB_GLOBAL_INDEX: str(sum(j.replicas for j in before) + job_index),
            JOB_KEY: job_key(train_job.namespace, job_name),
            RESTART_ATTEMPT: "0",
            GROUP_NAME: rjob.group,
            GROUP_REPLICAS: str(sum(j.replicas for j in group)),
            JOB_GROUP_INDEX: str(sum(j.replicas for j in before if j.group == rjob.group) + job_index),
            **dict.fromkeys(JOB_POD_LABELS, job_name),
        }
        if train_job.coscheduling_timeout_s is not None:
            labels[POD_GROUP_LABEL] = train_job.name
        return labels

    def _create(self, rjob: ReplicatedJob) -> list[_ChildJob]:
        train_job = self.train_job
        template = rjob.template
        if rjob.ranks:  # torchrun's rendezvous of PET_NNODES nodes, mpirun's launcher and nodes
            world = (train_job.key, sum(r.replicas * r.count for r in train_job.jobs if r.ranks))
            template = replace(template, behavior=replace(template.behavior, rendezvous=world))
        out = []
        for index in range(rjob.replicas):
            labelled = replace(template, labels={**template.labels, **self._labels(rjob, index)})
            name = child_job_name(train_job.name, rjob.name, index)
            job = Job(
                name,
                train_job.namespace,
                labelled,
                rjob.count,
                rjob.count,
                rjob.backoff_limit,
                pod_failure_policy=rjob.pod_failure_policy,
            )
            out.append(_ChildJob(job, rjob.name))
        return out

    def _reached(self, dependency: str, status: str) -> bool:
        """``dependencyReachedStatus``."""
        jobs = self.children.get(dependency)
        if jobs is None:
            return False
        if status == COMPLETE:
            return all(j.succeeded for j in jobs)
        return all(j.is_ready for j in jobs)

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        """The replicated jobs whose dependencies are reached get their Jobs; each Job its pods."""
        if self.train_job.suspend or self.done:
            return []
        for rjob in self.train_job.jobs:
            if rjob.name not in self.children and all(self._reached(d, s) for d, s in rjob.depends_on):
                self.children[rjob.name] = self._create(rjob)
        out = []
        for jobs in self.children.values():
            for job in jobs:
                pods = job.wanted()
                self.owner.update((p.key, job) for p in pods)
                out += pods
        if out and self.status == "Created":
            self.status = "Running"
        return out

    def _judge(self) -> None:
        """``executeSuccessPolicy`` and a failed Job with no failurePolicy."""
        jobs = [j for js in self.children.values() for j in js]
        if any(j.ended and not j.succeeded for j in jobs):
            self.status = "Failed"
            return
        train_job = self.train_job
        targets = train_job.success_targets or tuple(r.name for r in train_job.jobs)
        targeted = [j for r in train_job.jobs if r.name in targets for j in self.children.get(r.name, ())]
        expected = sum(r.replicas for r in train_job.jobs if r.name in targets)
        succeeded = sum(j.succeeded for j in targeted)
        if (succeeded > 0) if train_job.success_any else (succeeded == expected):
            self.status = "Complete"

    def failed_with(self, pod: Pod, reason: str | None, terminated: ContainerExit | None = None) -> None:
        """``kind.ReadsFailedPods``: how the pod failed, for its Job's ``podFailurePolicy``."""
        job = self.owner.get(pod.key)
        if job is not None:
            job.controller.failed_with(pod, reason, terminated)

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        job = self.owner.pop(pod.key, None)
        if job is None or self.done:
            return False
        job.ready.discard(pod.key)
        job.controller.finished(pod, succeeded)
        self._retry_s = 0.0 if succeeded else job.controller.retry_delay_s()
        self._judge()
        return True

    def restarted(self, pod: Pod) -> None:
        """``kind.CountsRestarts``: the kubelet restarted a container of one of its Jobs' pods in place; a
        Job that fails for it (``pastBackoffLimitOnFailure``) fails the TrainJob as any failed Job."""
        job = self.owner.get(pod.key)
        if job is None or self.done:
            return
        job.controller.restarted(pod)
        self._judge()

    def retry_delay_s(self) -> float:
        """The Job's pod failure backoff before its failed pod's replacement (``kind.BacksOff``)."""
        return self._retry_s

    def pod_ready(self, pod: Pod) -> bool:
        """A pod turned Ready: a replicated job that ``dependsOn`` its Job being Ready may start."""
        job = self.owner.get(pod.key)
        if job is None:
            return False
        job.ready.add(pod.key)
        waiting = [r for r in self.train_job.jobs if r.name not in self.children]
        return any(d == job.replicated_job and s == READY for r in waiting for d, s in r.depends_on)

    def pod_bound(self, pod: Pod, node: Node) -> bool:
        return False

    def doomed(self) -> list[tuple[str, str]]:
        """A finished JobSet deletes its active Jobs, and with them their pods (``deleteJobs``)."""
        if not self.done or self._deleted:
            return []
        self._deleted = True
        return [(key, "Deleted") for key in sorted(self.active)]

    def pod_groups(self) -> list[PodGroup]:
        train_job = self.train_job
        timeout = train_job.coscheduling_timeout_s
        if timeout is None:
            return []
        members = sum(r.count for r in train_job.jobs)  # the pod sets' counts
        return [PodGroup(train_job.name, train_job.namespace, members, timeout, train_job.created)]

    def pod_sets(self) -> list[PodSet]:
        """Kueue's TrainJob integration: a pod set per replicated job, of all its Jobs' pods."""
        return [
            PodSet(r.name, r.replicas * r.count, r.template, labelled(REPLICATED_JOB_NAME, r.name))
            for r in self.train_job.jobs
        ]

    def reclaimable_pods(self) -> dict[str, int]:
        """Kueue's ``TrainJob.ReclaimablePods``: per replicated job, the pods of its Jobs that succeeded
        (``jobsStatus[].succeeded`` x the JobSet's ``PodsCountPerReplica``)."""
        out = {}
        for r in self.train_job.jobs:
            succeeded = sum(1 for j in self.children.get(r.name, ()) if j.succeeded)
            if 0 < succeeded <= r.replicas:
                out[r.name] = succeeded * r.count
        return out

    def node_added(self, node: Node) -> list[Pod]:
        return []

    def suspended(self, pod: Pod) -> None:
        """Taken away by Kueue to come back later: its Job creates it again."""
        job = self.owner.pop(pod.key, None)
        if job is not None:
            job.ready.discard(pod.key)
            job.controller.suspended(pod)
