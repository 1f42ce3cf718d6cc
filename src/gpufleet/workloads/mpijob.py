"""The MPI Operator v2's ``MPIJob`` (``kubeflow.org/v2beta1``): worker pods the operator creates
itself and a launcher ``batch/v1`` Job whose pod runs ``mpirun``, driven as
``pkg/controller/mpi_job_controller.go`` (``syncHandler``) drives them.

Read as the operator defaults and validates it (``pkg/apis/kubeflow/v2beta1/default.go``,
``pkg/apis/kubeflow/validation/validation.go``):

- ``mpiReplicaSpecs`` holds ``Launcher`` (required, ``replicas`` 1, the only value allowed) and
  ``Worker`` (optional; ``replicas`` defaults to 0 and must then be at least 1). Any other key is
  ignored by the operator: a warning. ``restartPolicy`` defaults to ``OnFailure`` for the launcher
  (``DefaultLauncherRestartPolicy``) and ``Never`` for workers (``DefaultRestartPolicy``); only
  ``Never`` and ``OnFailure`` are valid (``validRestartPolicies``: v2beta1 has no ``ExitCode``). The
  replica's policy overwrites the template's (``setRestartPolicy``), and a pod's
  ``gpufleet.io/exit-code`` is read under it: a non-zero code fails a pod under ``Never``.
- ``slotsPerWorker`` (default 1, not negative), ``mpiImplementation`` (``OpenMPI``, ``Intel``,
  ``MPICH``), ``sshAuthMountPath`` and ``runLauncherAsWorker`` shape the hostfile and environment, not
  what is scheduled: read silently (``runLauncherAsWorker`` shifts the replica-index labels).
- ``launcherCreationPolicy``: ``AtStartup`` (default) creates the launcher with the workers;
  ``WaitForWorkersReady`` creates it once every worker pod is Ready (``countReadyWorkerPods``).
- ``runPolicy``: ``cleanPodPolicy`` defaults to ``None``; ``Running`` and ``All`` delete the worker
  pods still Pending or Running once the job finished (``deleteWorkerPods``). ``backoffLimit`` is the
  launcher Job's (unset: the Job default, 6). ``suspend: true`` creates no pods.
  ``schedulingPolicy`` asks for a scheduler-plugins PodGroup named after the job of ``minMember`` =
  ``minAvailable`` or workers + 1 (``calculateMinAvailable``) and its ``scheduleTimeoutSeconds``
  (``SchedulerPluginsCtrl.newPodGroup``); the operator makes one for every job when it runs with a
  gang scheduler, here the policy asks for it. ``ttlSecondsAfterFinished``,
  ``activeDeadlineSeconds``, ``managedBy`` (MultiKueue's) and the policy's ``queue``/``priorityClass``/
  ``minResources`` are not modelled: a warning each.

Pods: workers ``<job>-worker-<i>`` (``workerName``), owned by the MPIJob, labelled
``training.kubeflow.org/{operator-name: mpi-operator, job-name, job-role: worker, replica-index}``
(``defaultLabels``; no replica-type label). The launcher is the Job ``<job>-launcher``
(``newLauncherJob``) whose pod is named as gpufleet names a Job's pods, ``<job>-launcher-0`` (retries
``-r<n>``; upstream the Job controller adds a random suffix), owned by that Job, labelled
``job-role: launcher`` and with the Job's ``batch.kubernetes.io/job-name``/``job-name``. The launcher
Job is a ``gpufleet.workloads.job`` Job: its failed pod is replaced after the pod failure backoff
until ``backoffLimit``. ``newLauncherJob`` (mpi-operator v0.8.2) sets its ``podReplacementPolicy: Failed``:
a launcher pod being deleted (a preemption, an eviction, a drain) is terminating (``status.terminating``)
and is replaced only once it ended Failed, as the Job controller does it for any Job (``pod_terminating``).
It gives it no ``podFailurePolicy``: whatever its exit code, a failed launcher pod counts toward
``backoffLimit``, and the operator reads no exit code itself. Under the
launcher's ``OnFailure`` the kubelet restarts its container in place, and the restarts count toward
``backoffLimit`` too (``pastBackoffLimitOnFailure``): past it the launcher Job fails and deletes its pod.

Its pods compute only once the job's world has gathered (``Behavior.rendezvous``: the launcher and
every worker), as ``mpirun`` starts its ranks on the workers over SSH.

The job succeeds when the launcher Job succeeds and fails when it fails (``updateMPIJobStatus``).
``getOrCreateWorker`` creates only the workers it cannot find by name:

- a worker deleted (preempted, evicted, its node gone) is created again under its name, after a
  work-queue retry, until the job finished; the launcher waits for it, as for any rank not yet there
  (``mpirun`` losing the rank is not modelled then: the world waits and resumes from its checkpoint);
- a worker that fails in place (its pods are under the replica's ``restartPolicy``: under the default
  ``Never`` a non-zero exit, CUDA out of memory, a refusal at admission) stays, Failed, and is never
  created again; ``updateMPIJobStatus`` only counts it (``Failed`` of the Worker replica status; the
  job's ``Failed`` condition ``MPIJobEvicted`` is for a pod the kubelet evicted, its status reason
  ``Evicted``, which gpufleet does not model: an eviction here deletes the pod). ``mpirun`` loses that
  rank and aborts the job: the launcher's process exits at once (exit code 1), and each time the
  launcher's container starts again it exits so too (the failed worker's host no longer resolves). The
  kubelet restarts it under ``OnFailure`` (each restart counts toward ``backoffLimit``), or the launcher
  Job makes a new pod under ``Never``, until the launcher Job fails past ``backoffLimit`` and the job
  with it;
- a worker that succeeded stays, Succeeded, and is not created again until Kueue suspends the job.

Kueue (``pkg/controller/jobs/mpijob``): pod sets ``launcher`` (1) and ``worker``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from gpufleet.model.node import Node
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.workloads import REPLACE_FAILED, Created, Job, PodGroup, PodSet, labelled
from gpufleet.workloads import register_kind
from gpufleet.workloads.job import JobController
from gpufleet.workloads.kind import EndsWithCondition, ManifestReader, work_queue_delay_s
from gpufleet.workloads.pytorchjob import (
    JOB_NAME_LABEL,
    JOB_ROLE_LABEL,
    OPERATOR_NAME_LABEL,
    REPLICA_INDEX_LABEL,
    gang_pod_group,
    in_gang,
    invalid,
    required,
    run_policy_gang,
    unsupported,
)

API = ("kubeflow.org", "v2beta1", "MPIJob")
LAUNCHER, WORKER = "Launcher", "Worker"
OPERATOR_NAME = "mpi-operator"
RESTART_POLICIES = ("Never", "OnFailure")  # validRestartPolicies
DEFAULT_RESTART_POLICY = {LAUNCHER: "OnFailure", WORKER: "Never"}
CLEAN_POD_POLICIES = ("All", "None", "Running")
MPI_IMPLEMENTATIONS = ("Intel", "MPICH", "OpenMPI")
LAUNCHER_CREATION_POLICIES = ("AtStartup", "WaitForWorkersReady")
MANAGED_BY = ("kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue")
#: the exit code of ``mpirun`` aborting a job that lost a rank (non-zero; which one depends on the MPI
#: implementation and on how the rank ended)
MPIRUN_ABORTED_EXIT_CODE = 1
#: a Job's default ``backoffLimit``: the operator passes ``runPolicy.backoffLimit`` on as it is
JOB_BACKOFF_LIMIT = 6
#: the labels the Job controller puts on a Job's pods
JOB_POD_LABELS = ("batch.kubernetes.io/job-name", "job-name")
_RUN_POLICY_READ = ("backoffLimit", "cleanPodPolicy", "schedulingPolicy", "suspend", "managedBy")


@dataclass
class MPIJob:
    name: str
    namespace: str
    launcher: Pod  # the launcher pod template, with its restart policy
    workers: int
    worker: Pod  # the worker pod template, with its restart policy
    created: Created
    backoff_limit: int = JOB_BACKOFF_LIMIT
    wait_for_workers: bool = False  # launcherCreationPolicy WaitForWorkersReady
    clean_pod_policy: str = "None"  # runPolicy.cleanPodPolicy: None, Running or All
    run_launcher_as_worker: bool = False
    #: the gang's minMember when ``runPolicy.schedulingPolicy`` is given (else no PodGroup)
    min_available: int | None = None
    schedule_timeout_s: float | None = None
    suspend: bool = False
    #: ``schedulingPolicy.queue``: the Volcano PodGroup's queue when the pods name Volcano
    queue: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def template(self) -> Pod:
        return self.launcher

    @property
    def clean_pods(self) -> bool:
        """Whether the workers not yet ended are deleted once the job finished (Running or All)."""
        return self.clean_pod_policy in ("Running", "All")


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, dict) else {}


def _enum(manifest: ManifestReader, path: str, allowed: Sequence[str], default: str) -> str:
    value = manifest.value(path)
    if value is None or value == "":
        return default
    if value not in allowed:
        manifest.error(path, unsupported(value, allowed))
        return default
    return str(value)


def _replica(manifest: ManifestReader, rtype: str, default_replicas: int) -> tuple[int, Pod, Created]:
    at = f"mpiReplicaSpecs.{rtype}"
    replicas = manifest.count(f"{at}.replicas", default_replicas)
    if rtype == LAUNCHER and replicas != 1:
        manifest.error(f"{at}.replicas", invalid(replicas, "must be 1"))
    elif rtype == WORKER and replicas < 1:
        manifest.error(f"{at}.replicas", invalid(replicas, "must be greater than or equal to 1"))
    policy = _enum(manifest, f"{at}.restartPolicy", RESTART_POLICIES, DEFAULT_RESTART_POLICY[rtype])
    template, created = manifest.template(
        f"{at}.template", ("Always", "OnFailure", "Never"), restart_policy=policy
    )
    return replicas, template, created


def read_mpi_job(manifest: ManifestReader) -> MPIJob:
    """A ``kubeflow.org/v2beta1`` MPIJob, defaulted and validated as the operator does."""
    manifest.count("slotsPerWorker", 1)  # the hostfile's slots: nothing scheduled
    manifest.value("sshAuthMountPath")  # a mount path for the SSH keys
    _enum(manifest, "mpiImplementation", MPI_IMPLEMENTATIONS, "OpenMPI")
    creation = _enum(manifest, "launcherCreationPolicy", LAUNCHER_CREATION_POLICIES, "AtStartup")
    as_worker = manifest.value("runLauncherAsWorker")
    if as_worker is not None and not isinstance(as_worker, bool):
        manifest.error("runLauncherAsWorker", invalid(as_worker, "must be a boolean"))

    specs = manifest.value("mpiReplicaSpecs")
    namespace = manifest.namespace
    launcher, workers, worker = Pod(name="", namespace=namespace), 0, Pod(name="", namespace=namespace)
    created = Created()
    if not isinstance(specs, dict) or not specs:
        manifest.error("mpiReplicaSpecs", required("must have replica specs"))
    else:
        manifest.unmodelled([f"mpiReplicaSpecs.{k}" for k in specs if k not in (LAUNCHER, WORKER)])
        if LAUNCHER not in specs:
            manifest.error(f"mpiReplicaSpecs.{LAUNCHER}", required(f"must have {LAUNCHER} replica spec"))
        else:
            _, launcher, created = _replica(manifest, LAUNCHER, 1)
        if WORKER in specs:
            workers, worker, worker_created = _replica(manifest, WORKER, 0)
            created = min(created, worker_created, key=lambda c: c.submit_at_s)

    run_policy = _mapping(manifest.value("runPolicy"))
    backoff_limit = manifest.count("runPolicy.backoffLimit", JOB_BACKOFF_LIMIT)
    clean = _enum(manifest, "runPolicy.cleanPodPolicy", CLEAN_POD_POLICIES, "None")
    for field in ("ttlSecondsAfterFinished", "activeDeadlineSeconds"):
        if run_policy.get(field) is not None:
            manifest.count(f"runPolicy.{field}", 0)  # ValidateNonnegativeField
    if _enum(manifest, "runPolicy.managedBy", MANAGED_BY, MANAGED_BY[0]) != MANAGED_BY[0]:
        manifest.unmodelled(["runPolicy.managedBy"])  # MultiKueue runs it on another cluster
    suspend, min_available, timeout, queue = run_policy_gang(
        manifest, run_policy, _RUN_POLICY_READ, workers + 1, launcher.scheduler_name
    )

    return MPIJob(
        manifest.name,
        namespace,
        launcher,
        workers,
        worker,
        created,
        backoff_limit,
        creation == "WaitForWorkersReady",
        clean,
        as_worker is True,
        min_available,
        timeout,
        suspend,
        queue,
    )


@register_kind(MPIJob, api=API, read=read_mpi_job)
class MPIJobController(EndsWithCondition):
    """The operator's ``syncHandler`` for one MPIJob: a pod per worker index, the launcher Job (at
    once, or once every worker is Ready), and the job's end with the launcher Job's."""

    kind: ClassVar[str] = "MPIJob"
    per_node: ClassVar[bool] = False

    def __init__(self, job: MPIJob) -> None:
        self.job = job
        self.workers: dict[str, int] = {}  # pod key -> worker index, for the pods not yet ended
        #: the worker indices whose pod succeeded: it stays, Succeeded, and is not created again
        self.succeeded: set[int] = set()
        #: the worker indices whose pod failed in place: it stays, Failed, and is not created again
        self.failed: set[int] = set()
        self._deleting: set[str] = set()  # worker pods about to be reported finished that were deleted
        self._aborting = False  # mpirun lost a rank: the launcher's process exits (``exiting``)
        self.ready: set[str] = set()  # worker pods that are Ready
        self.restarts = 0  # workers created again
        self.launcher: JobController | None = None
        self.now_s = 0.0  # the run's time as it was last told (``tick``)
        self._deleted = False
        self._retry_s = 0.0
        #: the job's last condition: Created, Running, Succeeded, Failed or Suspended
        self.status = "Suspended" if job.suspend else "Created"

    @property
    def key(self) -> str:
        return self.job.key

    @property
    def launcher_job(self) -> str:
        return f"{self.job.name}-launcher"

    @property
    def active(self) -> set[str]:
        """Its pods not yet ended (Kueue's QueuedWorkload): the launcher's terminating one too."""
        launcher = self.launcher
        held = set(launcher.active) | set(launcher.terminating) if launcher is not None else set()
        return set(self.workers) | held

    def _in_world(self, template: Pod) -> Pod:
        """The launcher and the workers are mpirun's world: none computes before all are up; with a
        ``schedulingPolicy`` they are the job's gang too."""
        world = (self.job.key, self.job.workers + 1)
        pod = replace(template, behavior=replace(template.behavior, rendezvous=world))
        return pod if self.job.min_available is None else in_gang(pod, self.job.name)

    def _labels(self, role: str) -> dict[str, str]:
        return {OPERATOR_NAME_LABEL: OPERATOR_NAME, JOB_NAME_LABEL: self.job.name, JOB_ROLE_LABEL: role}

    def _worker(self, index: int) -> Pod:
        job = self.job
        labels = self._labels("worker")
        labels[REPLICA_INDEX_LABEL] = str(index + 1 if job.run_launcher_as_worker else index)
        pod = self._in_world(job.worker).stamped(
            f"{job.name}-worker-{index}", OwnerRef(self.kind, job.name), labels
        )
        pod = replace(pod, namespace=job.namespace)
        self.workers[pod.key] = index
        return pod

    def _launcher_job(self) -> JobController:
        job = self.job
        labels = self._labels("launcher") | dict.fromkeys(JOB_POD_LABELS, self.launcher_job)
        if job.run_launcher_as_worker:
            labels[REPLICA_INDEX_LABEL] = "0"
        launcher = self._in_world(job.launcher)
        template = replace(launcher, labels={**launcher.labels, **labels})
        batch = Job(
            self.launcher_job,
            job.namespace,
            template,
            1,
            1,
            job.backoff_limit,
            job.created,
            pod_replacement_policy=REPLACE_FAILED,
        )
        return JobController(batch)

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        """The missing workers, then the launcher Job's pod (``syncHandler``)."""
        job = self.job
        if job.suspend or self.done:
            return []
        have = self.succeeded.union(self.failed, self.workers.values())
        out = [self._worker(i) for i in range(job.workers) if i not in have]
        if self.launcher is None and (not job.wait_for_workers or self._workers_ready()):
            self.launcher = self._launcher_job()
            self.launcher.tick(self.now_s)
        if self.launcher is not None:
            out += self.launcher.wanted(nodes)
        if out:
            self.status = "Running"
        return out

    def _workers_ready(self) -> bool:
        return len(self.workers) == self.job.workers and set(self.workers) <= self.ready

    def pod_ready(self, pod: Pod) -> bool:
        """A worker turned Ready: under ``WaitForWorkersReady`` the last one lets the launcher be created.
        The launcher's container started while a worker is Failed: its ``mpirun`` exits (``exiting``)."""
        if self.failed and self.launcher is not None and pod.key in self.launcher.active:
            self._aborting = True
            return True
        if pod.key not in self.workers:
            return False
        self.ready.add(pod.key)
        return self.launcher is None and self.job.wait_for_workers and self._workers_ready()

    def pod_bound(self, pod: Pod, node: Node) -> bool:
        return False

    def doomed(self) -> list[tuple[str, str]]:
        """The launcher Job's pod once that Job failed (its ``deleteActivePods``); ``cleanPodPolicy``
        Running or All: the workers not yet ended, once the job finished."""
        launcher = self.launcher.doomed() if self.launcher is not None else []
        if not (self.done and self.job.clean_pods) or self._deleted:
            return launcher
        self._deleted = True
        return launcher + [(key, "Deleted") for key in sorted(self.workers)]

    def deleted(self, pod: Pod) -> None:
        """``kind.HearsDeletions``: the pod about to be reported finished was deleted, not failed in place."""
        self._deleting.add(pod.key)

    def pod_terminating(self, pod: Pod, suspended: bool = False) -> bool:
        """``kind.HearsTerminating``: the launcher's pod is being deleted: its Job hears it as a plain Job
        does (``JobController.pod_terminating``). ``newLauncherJob`` sets ``podReplacementPolicy: Failed``:
        the pod is terminating (the Job's ``status.terminating``) and its replacement waits until it ended
        Failed (``finished``), then the pod failure backoff. A worker's deletion is the operator's to hear
        once the worker is gone."""
        if self.launcher is None or pod.key not in self.launcher.active:
            return False
        return self.launcher.pod_terminating(pod, suspended)

    def exiting(self) -> list[tuple[str, int]]:
        """``kind.EndsProcesses``: once ``mpirun`` lost a rank, the launcher's process exits."""
        aborting, self._aborting = self._aborting, False
        if not aborting or self.launcher is None:
            return []
        return [(key, MPIRUN_ABORTED_EXIT_CODE) for key in sorted(self.launcher.active)]

    def restarted(self, pod: Pod) -> None:
        """``kind.CountsRestarts``: the kubelet restarted a container of the launcher's pod: its Job counts
        it (``pastBackoffLimitOnFailure``) and, failed, deletes the pod (``doomed``); the job fails once the
        pod is gone (``finished``). A worker's restarts count toward nothing."""
        if self.launcher is not None:
            self.launcher.restarted(pod)

    def pod_sets(self) -> list[PodSet]:
        """Kueue's MPIJob integration: ``launcher`` and ``worker`` (``pkg/controller/jobs/mpijob``)."""
        job = self.job
        sets = [PodSet("launcher", 1, job.launcher, labelled(JOB_ROLE_LABEL, "launcher"))]
        if job.workers:
            sets.append(PodSet("worker", job.workers, job.worker, labelled(JOB_ROLE_LABEL, "worker")))
        return sets

    def pod_groups(self) -> list[PodGroup]:
        job = self.job
        if job.min_available is None:
            return []
        gang = (job.min_available, job.schedule_timeout_s, job.queue)
        return [gang_pod_group(job.name, job.namespace, gang, job.created, job.launcher)]

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        self.ready.discard(pod.key)
        deleted = pod.key in self._deleting
        self._deleting.discard(pod.key)
        if pod.key in self.workers:
            index = self.workers.pop(pod.key)
            if succeeded:
                self.succeeded.add(index)
            if self.done or succeeded:
                return False
            if not deleted:  # failed in place: it stays, and mpirun aborts the job at once
                self.failed.add(index)
                self._aborting, self._retry_s = True, 0.0
                return True
            self.restarts += 1
            self._retry_s = work_queue_delay_s(self.restarts - 1)
            return True  # getOrCreateWorker creates it again
        if self.launcher is None or not self.launcher.finished(pod, succeeded):
            return False
        if self.launcher.done:
            self.status = "Succeeded" if self.launcher.succeeded else "Failed"
        self._retry_s = self.launcher.retry_delay_s()
        return True  # the replacement launcher pod, or the clean-up of the workers

    def tick(self, now_s: float) -> None:
        """``kind.KeepsTime``: the run's time, which its launcher Job's pod failure backoff reads
        (``JobController.tick``)."""
        self.now_s = now_s
        if self.launcher is not None:
            self.launcher.tick(now_s)

    def retry_delay_s(self) -> float:
        """After a worker failed, the operator's work-queue retry; after the launcher's pod, its Job's
        pod failure backoff (``kind.BacksOff``)."""
        return self._retry_s

    def node_added(self, node: Node) -> list[Pod]:
        return []

    def suspended(self, pod: Pod) -> None:
        """Taken away by Kueue to come back later: created again, not counted as a restart. The
        operator deletes the workers of a suspended job, the Succeeded and Failed ones too but under
        ``cleanPodPolicy: Running`` (``deleteWorkerPods``): those are created again too."""
        self.ready.discard(pod.key)
        if self.job.clean_pod_policy != "Running":
            self.succeeded.clear()
            self.failed.clear()
        if self.workers.pop(pod.key, None) is None and self.launcher is not None:
            self.launcher.suspended(pod)
