"""KubeRay's ``RayJob`` (``ray.io/v1``): a Ray program run on a RayCluster the job creates (or an
existing one), driven as ray-project/kuberay's ``ray-operator/controllers/ray/rayjob_controller.go``
drives it (``apis/ray/v1/rayjob_types.go``, ``common/job.go``, ``utils/validation.go``
``ValidateRayJobSpec``).

The deployment status moves as upstream's (``JobDeploymentStatus``), checked on the operator's
requeue every 3 s (``RayJobDefaultRequeueDuration``; ``control.kuberay`` calls ``sync``):

- ``Initializing``: the RayCluster ``<rayjob>-<5 chars>`` (``GenerateRayClusterName``; the characters
  from a hash of the namespace, the job and the attempt) is created from ``rayClusterSpec``
  (``workloads.raycluster``: its pods, names, labels, autoscaling), or ``clusterSelector``'s
  ``ray.io/cluster`` names an existing RayCluster. Once that cluster is ``Ready`` (the head and every
  desired worker Running and ready), in ``K8sJobMode`` (the default) the submitter batch Job named
  after the RayJob is created (``createNewK8sJob``: ``backoffLimit`` ``submitterConfig.backoffLimit``,
  default 2; its pod ``submitterPodTemplate`` or the default one: the head's image, requests cpu 500m
  memory 200Mi, limits cpu 1 memory 1Gi, ``restartPolicy: Never``; named as gpufleet names a Job's pods,
  ``<rayjob>-0``; no ``podReplacementPolicy``: a submitter pod being deleted is replaced, as by any Job of the
  default ``TerminatingOrFailed``, after the pod failure backoff while it terminates, ``pod_terminating``; the
  Job controller, not the operator's requeue, creates the submitter Job's pods, so none comes during that
  backoff); ``HTTPMode`` submits over HTTP (no pod); ``InteractiveMode`` waits for a ``jobId`` the user
  never gives here (a warning): the job stays ``Waiting``.
- ``Running``: the Ray job runs for ``gpufleet.io/duration`` (on the RayJob's metadata, else on
  ``submitterPodTemplate``'s): in K8sJobMode the submitter pod's run (its container follows the job to
  its end), so the job ends ``Complete`` when the submitter Job succeeds and ``Failed`` when it fails
  past its backoffLimit, at once (the controller ``Owns`` its Job: the Job's change is a reconcile);
  in HTTPMode ``duration`` after the job was submitted. ``Status.EndTime`` is the next requeue.
- ``activeDeadlineSeconds`` from the job's start: ``Failed`` (``DeadlineExceeded``), never retried.
- ``backoffLimit``: a ``Failed`` job is retried (``Retrying``: its cluster and submitter deleted, a new
  cluster under a new name) while ``failed < backoffLimit + 1``
  (``checkBackoffLimitAndUpdateStatusIfNeeded``).
- ``Complete``/``Failed``: with ``shutdownAfterJobFinishes`` the cluster is deleted
  ``ttlSecondsAfterFinished`` seconds after the end (``handleShutdownAfterJobFinishes``): its pods get
  SIGTERM (and so does a submitter pod still running, whose cluster is gone); the submitter Job is
  kept. A selected cluster (``clusterSelector``) is never deleted.
- ``suspend: true``: no cluster is created (``Suspended``).

Kueue (``pkg/controller/jobs/rayjob``): pod sets ``head`` (1), each worker group by name
(``replicas x numOfHosts``) and, in K8sJobMode, ``submitter`` (1); done once Complete or Failed.

The Ray demand (``gpufleet.io/ray-demand``) on a RayJob applies to the cluster it creates.

Not modelled, a warning each: ``deletionStrategy``, ``managedBy``, ``preRunningDeadlineSeconds``,
``entrypointNumCpus``/``entrypointNumGpus``/``entrypointResources`` (the driver's Ray resources),
``submissionMode: SidecarMode``, ``InteractiveMode``'s wait, ``submitterConfig`` but its
``backoffLimit``. ``entrypoint``, ``runtimeEnvYAML``, ``metadata`` and ``jobId`` change nothing
scheduled and are read silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from gpufleet.model.generated_names import generate_name
from gpufleet.model.node import Node
from gpufleet.model.pod import Behavior, OwnerRef, Pod, Requirement
from gpufleet.model.ray import RAY_DEMAND, RayDemand
from gpufleet.model.resources import CPU, MEMORY
from gpufleet.model.workloads import Created, Job, PodGroup, PodSet
from gpufleet.workloads import register_kind
from gpufleet.workloads.job import JobController
from gpufleet.workloads.kind import ManifestReader, ReplicaBound
from gpufleet.workloads.pytorchjob import invalid, required, unsupported
from gpufleet.workloads.raycluster import (
    CLUSTER_LABEL,
    NODE_TYPE_LABEL,
    ClusterPods,
    PodView,
    RayClusterSpec,
    read_cluster_spec,
)

API = ("ray.io", "v1", "RayJob")
DURATION = "gpufleet.io/duration"
K8S_JOB_MODE, HTTP_MODE, INTERACTIVE_MODE, SIDECAR_MODE = (
    "K8sJobMode",
    "HTTPMode",
    "InteractiveMode",
    "SidecarMode",
)
SUBMISSION_MODES = (K8S_JOB_MODE, HTTP_MODE, INTERACTIVE_MODE, SIDECAR_MODE)
SUBMITTER_BACKOFF_LIMIT = 2
#: GetDefaultSubmitterContainer: requests cpu 500m, memory 200Mi (in millicores and bytes)
SUBMITTER_REQUESTS = {CPU: 500, MEMORY: 200 * 2**20}
INVALID = "The RayJob spec is invalid: "
_NO_CLUSTER = INVALID + "one of RayClusterSpec or ClusterSelector must be set"
_EMPTY_SELECTOR = "cluster name in ClusterSelector should not be empty"
_TTL = INVALID + "TTLSecondsAfterFinished must be a non-negative integer"
_SELECTOR_BACKOFF = INVALID + "BackoffLimit is incompatible with ClusterSelector mode"
_DEADLINE = "activeDeadlineSeconds must be a positive integer"


@dataclass
class RayJob:
    name: str
    namespace: str
    cluster: RayClusterSpec | None  # rayClusterSpec, or None with a clusterSelector
    selector_cluster: str | None
    submitter: Pod  # the submitter pod's template (K8sJobMode)
    created: Created
    submission_mode: str = K8S_JOB_MODE
    duration_s: float | None = None  # the Ray job's run
    shutdown_after_finishes: bool = False
    ttl_s: float = 0.0
    suspend: bool = False
    backoff_limit: int | None = None
    active_deadline_s: float | None = None
    submitter_backoff_limit: int = SUBMITTER_BACKOFF_LIMIT
    demand: tuple[RayDemand, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def template(self) -> Pod:
        return self.cluster.head if self.cluster is not None else self.submitter


def _positive(manifest: ManifestReader, path: str, message: str) -> int | None:
    value = manifest.value(path)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        manifest.error(path, invalid(value, INVALID + message))
        return None
    return value


def read_ray_job(manifest: ManifestReader) -> RayJob:
    """A ``ray.io/v1`` RayJob, validated as ``ValidateRayJobSpec`` does."""
    for silent in ("entrypoint", "runtimeEnvYAML", "metadata", "jobId"):
        manifest.value(silent)
    manifest.unmodelled(
        [
            "deletionStrategy",
            "managedBy",
            "preRunningDeadlineSeconds",
            "entrypointNumCpus",
            "entrypointNumGpus",
            "entrypointResources",
        ]
    )
    mode = manifest.value("submissionMode") or K8S_JOB_MODE
    if mode not in SUBMISSION_MODES:
        manifest.error("submissionMode", unsupported(mode, SUBMISSION_MODES))
        mode = K8S_JOB_MODE
    elif mode in (SIDECAR_MODE, INTERACTIVE_MODE):
        manifest.unmodelled(["submissionMode"])
    selector = manifest.value("clusterSelector")
    has_spec = isinstance(manifest.value("rayClusterSpec"), dict)
    cluster, created = read_cluster_spec(manifest, "rayClusterSpec.") if has_spec else (None, Created())
    selected = str(selector.get(CLUSTER_LABEL) or "") if isinstance(selector, dict) and selector else None
    if not has_spec and selected is None:
        manifest.error("rayClusterSpec", required(_NO_CLUSTER))
    if selected == "":
        manifest.error("clusterSelector", invalid(selector, _EMPTY_SELECTOR))
    shutdown = manifest.value("shutdownAfterJobFinishes") is True
    suspend = manifest.value("suspend") is True
    if suspend and not shutdown:
        detail = "a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended"
        manifest.error("suspend", invalid(suspend, INVALID + detail))
    ttl = manifest.value("ttlSecondsAfterFinished")
    if ttl is not None and (not isinstance(ttl, int) or ttl < 0):
        manifest.error(
            "ttlSecondsAfterFinished",
            invalid(ttl, _TTL),
        )
    backoff = manifest.value("backoffLimit")
    if backoff is not None and (not isinstance(backoff, int) or backoff < 0):
        manifest.error("backoffLimit", invalid(backoff, INVALID + "backoffLimit must be a positive integer"))
        backoff = None
    if backoff is not None and selected is not None:
        manifest.error(
            "backoffLimit",
            invalid(backoff, _SELECTOR_BACKOFF),
        )
    deadline = _positive(
        manifest, "activeDeadlineSeconds", "activeDeadlineSeconds must be a positive integer"
    )

    submitter_config = manifest.value("submitterConfig")
    submitter_config = submitter_config if isinstance(submitter_config, dict) else {}
    submitter_backoff = manifest.count("submitterConfig.backoffLimit", SUBMITTER_BACKOFF_LIMIT)
    manifest.unmodelled([f"submitterConfig.{f}" for f in submitter_config if f != "backoffLimit"])
    if isinstance(manifest.value("submitterPodTemplate"), dict):
        submitter, own = manifest.template("submitterPodTemplate", ("Never", "OnFailure"))
        created = created if has_spec else own
    else:
        head = cluster.head if cluster is not None else Pod(name="", namespace=manifest.namespace)
        behavior = Behavior(image=head.behavior.image, image_size_bytes=head.behavior.image_size_bytes)
        submitter = Pod(
            name="",
            namespace=manifest.namespace,
            requests=dict(SUBMITTER_REQUESTS),
            restart_policy="Never",
            behavior=behavior,
            images=head.images[:1],
        )
    duration = manifest.annotation(DURATION)
    if isinstance(duration, float):
        submitter = replace(submitter, behavior=replace(submitter.behavior, duration_s=duration))
    demand = manifest.annotation(RAY_DEMAND)
    return RayJob(
        manifest.name,
        manifest.namespace,
        cluster,
        selected,
        submitter,
        created,
        str(mode),
        submitter.behavior.duration_s,
        shutdown,
        float(ttl) if isinstance(ttl, int) and ttl >= 0 else 0.0,
        suspend,
        backoff,
        None if deadline is None else float(deadline),
        submitter_backoff,
        demand if isinstance(demand, tuple) else (),
    )


@register_kind(RayJob, api=API, read=read_ray_job, annotations=frozenset({RAY_DEMAND, DURATION}))
class RayJobController:
    """The RayJob's deployment status machine (``Reconcile``); its pods are its cluster's and its
    submitter Job's."""

    kind: ClassVar[str] = "RayJob"
    per_node: ClassVar[bool] = False

    def __init__(self, job: RayJob) -> None:
        self.job = job
        self.attempt = 0
        self.cluster: ClusterPods | None = None
        self.submitter: JobController | None = None
        #: JobDeploymentStatus: Initializing, Running, Waiting, Complete, Failed, Suspended
        self.status = "Suspended" if job.suspend else "Initializing"
        self.reason = ""
        self.start_s: float | None = None  # Status.StartTime
        self.submitted_s: float | None = None
        self.end_s: float | None = None
        self.failed = 0
        self.cluster_deleted = False
        self._last: ClusterPods | JobController | None = None
        #: the submitter Job waits out its pod failure backoff: the operator's requeue creates none of its
        #: pods until the Job controller's own sync after the backoff (``wanted`` not after ``sync``)
        self._backing_off = False
        self._requeued = False  # ``sync`` ran: the next ``wanted`` is the operator's requeue
        if not job.suspend:
            self._new_cluster()

    @property
    def key(self) -> str:
        return self.job.key

    @property
    def cluster_name(self) -> str | None:
        """The RayCluster the job runs on (``Status.RayClusterName``)."""
        return self.cluster.name if self.cluster is not None else self.job.selector_cluster

    def _new_cluster(self) -> None:
        job = self.job
        if job.cluster is None:
            return
        name = generate_name(f"{job.name}-", f"{job.namespace}/{job.name}/{self.attempt}")
        self.cluster = ClusterPods(
            name, job.namespace, job.cluster, OwnerRef("RayCluster", name), app=job.name
        )

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        """The cluster's pods, then the submitter Job's: those the Job controller creates, which holds them
        back during the Job's pod failure backoff (only a reconcile not the operator's requeue, the one the
        backoff asked for, ``retry_delay_s``, ends it)."""
        requeued, self._requeued = self._requeued, False
        self._backing_off = self._backing_off and requeued
        out = self.cluster.wanted() if self.cluster is not None and not self.cluster_deleted else []
        if self.submitter is None or self._backing_off:
            return out
        return out + self.submitter.wanted()

    def tick(self, now_s: float) -> None:
        """``kind.KeepsTime``: the run's time, which its submitter Job's pod failure backoff reads
        (``JobController.tick``)."""
        if self.submitter is not None:
            self.submitter.tick(now_s)

    def pod_groups(self) -> list[PodGroup]:
        group = self.cluster.pod_group(self.job.created) if self.cluster is not None else None
        return [] if group is None else [group]

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        if self.cluster is not None and pod.key in self.cluster.active:
            self._last = self.cluster
            return self.cluster.finished(pod)
        if self.submitter is not None and self._submits(pod):
            again = self._submitter_heard(self.submitter.finished(pod, succeeded))
            if self.submitter.done and self.status == "Running":  # the RayJob controller Owns its Job
                self.status = "Complete" if self.submitter.succeeded > 0 else "Failed"
                self.reason = "" if self.status == "Complete" else "AppFailed"
            return again
        return False

    def _submits(self, pod: Pod) -> bool:
        """Whether ``pod`` is the submitter Job's, not yet ended (active or terminating)."""
        submitter = self.submitter
        return submitter is not None and (pod.key in submitter.active or pod.key in submitter.terminating)

    def pod_terminating(self, pod: Pod, suspended: bool = False) -> bool:
        """``kind.HearsTerminating``: the submitter's pod is being deleted: its Job hears it as a plain Job
        does (``JobController.pod_terminating``). ``createNewK8sJob`` sets no ``podReplacementPolicy`` nor
        ``podFailurePolicy``: the default ``TerminatingOrFailed`` counts the pod failed now and replaces it
        after the pod failure backoff while it terminates. The RayJob reads the Job's ``Failed`` condition,
        which waits for the terminating pod (``delayTerminalCondition``): a submitter Job failed so fails
        the RayJob once the pod is gone (``finished``)."""
        if self.submitter is None or pod.key not in self.submitter.active:
            return False
        return self._submitter_heard(self.submitter.pod_terminating(pod, suspended))

    def _submitter_heard(self, wants: bool) -> bool:
        """The submitter Job heard of its pod (``wants``: it may want one now): it backs off first."""
        self._last = self.submitter
        self._backing_off = self._backing_off or (wants and self.retry_delay_s() > 0)
        return wants

    def retry_delay_s(self) -> float:
        return self._last.retry_delay_s() if self._last is not None else 0.0

    def node_added(self, node: Node) -> list[Pod]:
        return []

    def suspended(self, pod: Pod) -> None:
        if self.cluster is not None:
            self.cluster.forget(pod.key)
        if self.submitter is not None:
            self.submitter.suspended(pod)

    def replica_bounds(self) -> list[ReplicaBound]:
        """The bounds of the cluster it created (``kind.BoundsReplicas``)."""
        return self.cluster.replica_bounds() if self.cluster is not None else []

    # -- the operator's requeue -------------------------------------------------------------
    def sync(self, now: float, pods: Mapping[str, PodView], selected: ClusterPods | None = None) -> list[str]:
        """One reconcile at ``now``; ``selected``: the cluster ``clusterSelector`` names, if it exists.
        Returns the pods to delete; the caller then creates what ``wanted`` returns."""
        job = self.job
        self._requeued = True
        if self.status == "Suspended":
            return []
        start = self.start_s = now if self.start_s is None else self.start_s
        deadline = job.active_deadline_s
        live = self.status in ("Initializing", "Running", "Waiting")
        if live and deadline is not None and now >= start + deadline:
            self.status, self.reason = "Failed", "DeadlineExceeded"
        if self.status == "Initializing":
            cluster = self.cluster if self.cluster is not None else selected
            if cluster is not None and cluster.ready(pods):
                self._submit(now)
        elif self.status == "Running":
            self._check_end(now)
        if self.status in ("Complete", "Failed") and self.end_s is None:
            self.end_s = now  # Status.EndTime
            if self.status == "Failed" and self.reason != "DeadlineExceeded":
                self.failed += 1
                if self._retries():
                    return self._retry()
        end = self.end_s
        shutdown = job.shutdown_after_finishes and self.cluster is not None and not self.cluster_deleted
        if self.done and shutdown and end is not None and now >= end + job.ttl_s:
            self.cluster_deleted = True
            return self._delete_all()
        return []

    def _retries(self) -> bool:
        """``checkBackoffLimitAndUpdateStatusIfNeeded``: a failure (not past the deadline) is retried
        while ``failed < backoffLimit + 1`` (the failure not yet counted counts)."""
        limit = self.job.backoff_limit
        failures = self.failed + (1 if self.end_s is None else 0)
        return (
            self.status == "Failed"
            and self.reason != "DeadlineExceeded"
            and limit is not None
            and failures < limit + 1
        )

    def _submit(self, now: float) -> None:
        job = self.job
        self.submitted_s = now
        if job.submission_mode == INTERACTIVE_MODE:
            self.status = "Waiting"
            return
        if job.submission_mode == K8S_JOB_MODE:
            spec = Job(job.name, job.namespace, job.submitter, backoff_limit=job.submitter_backoff_limit)
            self.submitter, self._backing_off = JobController(spec), False
            self.submitter.tick(now)
        self.status = "Running"

    def _check_end(self, now: float) -> None:
        """HTTPMode: the Ray job (no pod) ends ``duration`` after its submission."""
        submitted, duration = self.submitted_s, self.job.duration_s
        if self.job.submission_mode != HTTP_MODE or submitted is None or duration is None:
            return
        if now >= submitted + duration:
            self.status = "Complete"

    def _delete_all(self) -> list[str]:
        keys = self.cluster.delete() if self.cluster is not None else []
        if self.submitter is not None:
            keys += sorted(self.submitter.active)
            self.submitter.forget_pods()
            self.submitter.done = True
        return keys

    def _retry(self) -> list[str]:
        """``Retrying``: the cluster and the submitter go, a new cluster comes (``Initializing``)."""
        keys = self._delete_all()
        self.attempt += 1
        self.submitter = None
        self.status, self.reason, self.end_s, self.submitted_s = "Initializing", "", None, None
        self._new_cluster()
        return keys

    # -- Kueue's RayJob integration ---------------------------------------------------------
    @property
    def done(self) -> bool:
        """Complete, or Failed past its retries."""
        return self.status in ("Complete", "Failed") and not self._retries()

    @property
    def active(self) -> list[str]:
        submitter = self.submitter
        keys = [*submitter.active, *submitter.terminating] if submitter is not None else []
        if self.cluster is not None and not (self.done and not self.job.shutdown_after_finishes):
            keys += list(self.cluster.active)
        return sorted(keys)

    def pod_sets(self) -> list[PodSet]:
        sets = self.cluster.pod_sets() if self.cluster is not None else []
        if self.job.submission_mode == K8S_JOB_MODE:
            not_ray = (Requirement(NODE_TYPE_LABEL, "DoesNotExist"),)  # the submitter Job's pod
            sets.append(PodSet("submitter", 1, self.job.submitter, not_ray))
        return sets
