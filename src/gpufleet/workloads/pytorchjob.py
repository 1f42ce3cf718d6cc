"""Kubeflow Training Operator v1's ``PyTorchJob`` (``kubeflow.org/v1``): a Master and Workers, each a
replica spec with its pod template, driven as the operator's common job controller drives them
(``pkg/controller.v1/common/{job,pod}.go``, ``pkg/controller.v1/pytorch/pytorchjob_controller.go``).

Read as the operator's defaulting and validation read it (``pkg/apis/kubeflow.org/v1``):

- ``pytorchReplicaSpecs`` keys are ``Master`` and ``Worker`` in any case (``setTypeNameToCamelCase``);
  any other is rejected (``validatePyTorchReplicaSpecs``), as is a Master of more than 1 replica and a
  template with no container named ``pytorch``.
- ``replicas`` defaults to 1, ``restartPolicy`` to ``OnFailure`` (``PytorchJobDefaultRestartPolicy``);
  the replica's policy overwrites the template's (``core.SetRestartPolicy``: ``ExitCode`` makes the
  pod ``Never``).
- ``runPolicy.cleanPodPolicy`` defaults to ``None`` (``SetDefaults_PyTorchJob``): a finished job's
  pods are left as they are, so its running workers run on to their own end. ``Running`` and ``All``
  (delete them) are not modelled: a warning, and the pods are kept as under ``None``.

Pods (``createNewPod``): ``<job>-<replica type, lowercase>-<index>`` (``GenGeneralName``), labelled
``training.kubeflow.org/{job-name,replica-type,replica-index,operator-name}`` (and ``job-role:
master`` on the Master), owned by the PyTorchJob. A pod that fails is deleted and created again
under the same name when its replica's ``restartPolicy`` is ``OnFailure`` or ``Always``; under ``Never``
the job fails (``UpdateJobStatus``: ``failed > 0`` and ``RestartPolicyNever``). Under ``ExitCode``
(``ReconcilePods``) the exit code of the pod's container named ``pytorch`` decides
(``IsRetryableExitCode``): 128 and above is retryable, the pod created again (137: a container
OOM-killed, or killed after its grace period as its pod was deleted, evicted or preempted); below 128
(1-127, or negative) is permanent, the job fails ("a non-retryable exit code"). A pod whose ``pytorch``
container has no terminated state reads as upstream's ``0xbeef``, retryable: a process a GPU or node
fault killed, a pod whose node is gone, one that never started (gpufleet gives them no exit code). The
simulation's exit codes (``gpufleet.io/exit-code``, an OOM kill) are the first container's: with
another container first, a warning says every failure reads as retryable. Each re-creation counts toward
``runPolicy.backoffLimit`` (unset: no limit); past it the job fails. So do the kubelet's restarts in place of
the containers of its running pods under ``OnFailure`` or ``Always`` (``PastBackoffLimit``: summed, they
reach the limit, or exceed 0 for a limit of 0; the pods are then kept, as under ``cleanPodPolicy: None``).
Each re-creation waits as a work-queue retry (``kind.work_queue_delay_s``: 5 ms doubling to 1000 s), so a
job with no limit whose pod fails at once retries ever more slowly, never in a tight loop.

Its pods compute only once the job's world has gathered (``Behavior.rendezvous``: every replica, or
with ``elasticPolicy`` the Master and ``minReplicas`` Workers), as torchrun's rendezvous waits, whether
or not a PodGroup gangs their scheduling.

The job succeeds when its Master succeeded (``expected == 0`` for the Master); with no Master, when
all its Workers succeeded. A finished job creates nothing more.

Gang (``runPolicy.schedulingPolicy`` given): a scheduler-plugins PodGroup named after the job, with
``minMember`` = ``schedulingPolicy.minAvailable`` or the total replicas and ``scheduleTimeoutSeconds``
from the policy (``pkg/controller.v1/common/scheduling.go``, ``SchedulerPluginsControl``); its pods
carry ``scheduling.x-k8s.io/pod-group: <job>``. The operator makes one for every job when it runs with
``--gang-scheduler-name``; here the policy asks for it, and the templates' ``schedulerName`` is kept.

``runPolicy.suspend: true``: no pods are created (``ReconcileJobs`` deletes a suspended job's pods).

``elasticPolicy`` (torchrun's elastic rendezvous, ``pytorch_defaults.go`` ``setElasticPolicy``): it needs a
Worker spec (``validateSpec``); ``minReplicas`` and ``maxReplicas`` default to each other, or both to the
Workers' replicas; ``nProcPerNode`` there is forbidden beside ``nprocPerNode``. With no Master the job
succeeds as soon as any Worker succeeded (``UpdateJobStatus``). The operator's HPA on the job
(``elasticPolicy.metrics``, ``hpa.go``) and torchrun's in-place ``maxRestarts`` are not modelled (a
warning); the rendezvous settings (``rdzv*``, ``standalone``) change nothing scheduled and are read silently.

Not modelled, a warning each: ``runPolicy.activeDeadlineSeconds``,
``runPolicy.ttlSecondsAfterFinished``, ``runPolicy.cleanPodPolicy`` ``Running``/``All``,
``runPolicy.managedBy``, ``schedulingPolicy.queue``/``priorityClass``/``minResources`` and any other
field. ``nprocPerNode`` (the processes per pod, an environment variable) changes nothing scheduled and
is read silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from gpufleet.model.node import Node
from gpufleet.model.pod import POD_GROUP_LABEL, VOLCANO_GROUP_ANNOTATION, OwnerRef, Pod
from gpufleet.model.pod_failure_policy import ContainerExit
from gpufleet.model.workloads import Created, PodGroup, PodSet, labelled
from gpufleet.workloads import register_kind
from gpufleet.workloads.job import restarts_past_limit
from gpufleet.workloads.kind import EndsWithCondition, ManifestReader, work_queue_delay_s

API = ("kubeflow.org", "v1", "PyTorchJob")
MASTER, WORKER = "Master", "Worker"
REPLICA_TYPES = (MASTER, WORKER)
EXIT_CODE = "ExitCode"
RESTART_POLICIES = ("Always", "OnFailure", "Never", EXIT_CODE)
#: the exit code ``ReconcilePods`` reads of a failed pod whose container ``pytorch`` has no terminated
#: state (its ``0xbeef`` "magic number"): retryable
NO_EXIT_CODE = 0xBEEF
DEFAULT_RESTART_POLICY = "OnFailure"  # PytorchJobDefaultRestartPolicy
CLEAN_POD_POLICIES = ("None", "Running", "All")
DEFAULT_CONTAINER = "pytorch"  # PytorchJobDefaultContainerName
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
#: the gang scheduler whose PodGroups the operator makes when the pods name it (``VolcanoControl``)
VOLCANO = "volcano"
OPERATOR_NAME = "pytorchjob-controller"
#: the runPolicy fields read here; any other that is given is a warning
_RUN_POLICY_READ = ("backoffLimit", "cleanPodPolicy", "schedulingPolicy", "suspend")
_SCHEDULING_POLICY_READ = ("minAvailable", "scheduleTimeoutSeconds")
#: elasticPolicy's fields that change nothing scheduled (torchrun's rendezvous) and the modelled ones
_ELASTIC_READ = (
    "minReplicas",
    "maxReplicas",
    "nProcPerNode",
    "rdzvBackend",
    "rdzvPort",
    "rdzvHost",
    "rdzvId",
    "rdzvConf",
    "standalone",
)


@dataclass(frozen=True)
class ReplicaSpec:
    type: str  # Master or Worker
    replicas: int
    restart_policy: str  # the replica's: Always, OnFailure, Never or ExitCode
    template: Pod  # with the pod restartPolicy the operator sets


@dataclass
class PyTorchJob:
    name: str
    namespace: str
    replica_specs: tuple[ReplicaSpec, ...]  # Master first
    created: Created
    backoff_limit: int | None = None
    #: the gang's minMember when ``runPolicy.schedulingPolicy`` is given (else no PodGroup)
    min_available: int | None = None
    schedule_timeout_s: float | None = None
    suspend: bool = False
    #: ``elasticPolicy``'s (minReplicas, maxReplicas) after defaulting; None without one
    elastic: tuple[int, int] | None = None
    #: ``schedulingPolicy.queue``: the Volcano PodGroup's queue when the pods name Volcano
    queue: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def template(self) -> Pod:
        """The first replica's template (the Master's when there is one)."""
        return self.replica_specs[0].template

    @property
    def total_replicas(self) -> int:
        return sum(s.replicas for s in self.replica_specs)


# the API server's wording (``field.Invalid``, ``field.NotSupported``, ``field.Required``), as the
# manifest reader writes it; gpufleet.workloads does not import the reader (.importlinter layers)
def invalid(value: object, detail: str) -> str:
    return f"Invalid value: {json.dumps(value, default=str)}: {detail}"


def unsupported(value: object, supported: Sequence[str]) -> str:
    listed = ", ".join(f'"{s}"' for s in supported)
    return f"Unsupported value: {json.dumps(value, default=str)}: supported values: {listed}"


def required(detail: str) -> str:
    return f"Required value: {detail}"


def is_retryable_exit_code(code: int) -> bool:
    """``IsRetryableExitCode`` (``pkg/util/train``): 128 and above (a signal's, 128 + its number) is
    retryable; below, 1-127 and any negative code, is a permanent error."""
    return code >= 128


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, dict) else {}


def _replica_spec(manifest: ManifestReader, key: str, rtype: str) -> tuple[ReplicaSpec, Created]:
    at = f"pytorchReplicaSpecs.{key}"
    replicas = manifest.count(f"{at}.replicas", 1)
    if rtype == MASTER and replicas != 1:
        manifest.error(f"{at}.replicas", invalid(replicas, "there must be only 1 master replica"))
    elif rtype == WORKER and replicas < 1:  # validatePyTorchReplicaSpecs
        manifest.error(f"{at}.replicas", "Forbidden: must be at least 1")
    policy = manifest.value(f"{at}.restartPolicy") or DEFAULT_RESTART_POLICY
    if policy not in RESTART_POLICIES:
        manifest.error(f"{at}.restartPolicy", unsupported(policy, RESTART_POLICIES))
        policy = DEFAULT_RESTART_POLICY
    pod_policy = "Never" if policy == EXIT_CODE else str(policy)  # core.SetRestartPolicy
    template, created = manifest.template(
        f"{at}.template", ("Always", "OnFailure", "Never"), restart_policy=pod_policy
    )
    containers = manifest.value(f"{at}.template.spec.containers")
    names = [_mapping(c).get("name") for c in containers] if isinstance(containers, list) else []
    if containers and DEFAULT_CONTAINER not in names:
        detail = f"there is no container named {DEFAULT_CONTAINER} in {rtype}"
        manifest.error(f"{at}.template.spec.containers", invalid(names, detail))
    elif policy == EXIT_CODE and names and names[0] != DEFAULT_CONTAINER:
        manifest.warn(
            f"{at}.template.spec.containers[0]",
            f"restartPolicy ExitCode reads the exit code of container {DEFAULT_CONTAINER}; gpufleet's exit "
            f"codes (gpufleet.io/exit-code, an OOM kill) are the first container's, {names[0]}: every "
            "failure of this replica reads as retryable",
        )
    return ReplicaSpec(rtype, replicas, str(policy), template), created


def run_policy_gang(
    manifest: ManifestReader,
    run_policy: Mapping[str, object],
    read: Sequence[str],
    total: int,
    scheduler_name: str,
) -> tuple[bool, int | None, float | None, str | None]:
    """The Kubeflow ``RunPolicy``'s ``suspend`` and gang (``schedulingPolicy``: ``minAvailable``,
    default ``total``, ``scheduleTimeoutSeconds``, where 0 or none leaves the plugin's own, and
    ``queue``, a Volcano PodGroup's when the pods name Volcano, else not modelled), as the training
    operators read them (``pkg/controller.v1/common/scheduling.go``); a field of ``runPolicy`` not in
    ``read`` is a warning."""
    suspend = run_policy.get("suspend")
    if suspend is not None and not isinstance(suspend, bool):
        manifest.error("runPolicy.suspend", invalid(suspend, "must be a boolean"))
    manifest.unmodelled([f"runPolicy.{f}" for f in run_policy if f not in read])
    policy = run_policy.get("schedulingPolicy")
    if policy is None:
        return suspend is True, None, None, None
    if not isinstance(policy, dict):
        manifest.error("runPolicy.schedulingPolicy", invalid(policy, "must be an object"))
        policy = {}
    min_available = manifest.count("runPolicy.schedulingPolicy.minAvailable", total)
    timeout = None
    if policy.get("scheduleTimeoutSeconds"):
        timeout = float(manifest.count("runPolicy.schedulingPolicy.scheduleTimeoutSeconds", 0))
    queue = policy.get("queue") if scheduler_name == VOLCANO else None
    read_here = (*_SCHEDULING_POLICY_READ, *(("queue",) if scheduler_name == VOLCANO else ()))
    manifest.unmodelled([f"runPolicy.schedulingPolicy.{f}" for f in policy if f not in read_here])
    return suspend is True, min_available, timeout, None if queue is None else str(queue)


def in_gang(pod: Pod, group: str) -> Pod:
    """A pod of a training job's gang. The operator's gang scheduler is the one its pods name:
    ``volcano`` (``VolcanoControl``) joins them to a Volcano PodGroup by the annotation
    ``scheduling.k8s.io/group-name``, any other (``SchedulerPluginsControl``) to a scheduler-plugins
    PodGroup by the label ``scheduling.x-k8s.io/pod-group``."""
    if pod.scheduler_name == VOLCANO:
        return replace(pod, annotations={**pod.annotations, VOLCANO_GROUP_ANNOTATION: group})
    return replace(pod, labels={**pod.labels, POD_GROUP_LABEL: group})


def gang_pod_group(
    name: str, namespace: str, gang: tuple[int, float | None, str | None], created: Created, template: Pod
) -> PodGroup:
    """The PodGroup named after the job (``gang``: minMember, scheduleTimeoutSeconds, queue), of the
    gang scheduler its pods name (``in_gang``); a Volcano PodGroup's queue defaults to ``default``."""
    min_member, timeout, queue = gang
    if template.scheduler_name == VOLCANO:
        return PodGroup(name, namespace, min_member, None, created, queue or "default")
    return PodGroup(name, namespace, min_member, timeout, created)


def _elastic(manifest: ManifestReader, workers: ReplicaSpec | None) -> tuple[int, int] | None:
    """``elasticPolicy`` defaulted (``setElasticPolicy``) and validated (``validateSpec``)."""
    policy = manifest.value("elasticPolicy")
    if policy is None:
        return None
    if not isinstance(policy, dict):
        manifest.error("elasticPolicy", invalid(policy, "must be an object"))
        return None
    if workers is None:
        manifest.error(
            f"pytorchReplicaSpecs[{WORKER}]", required("must be configured if elastic policy is used")
        )
    if policy.get("nProcPerNode") is not None and manifest.value("nprocPerNode") is not None:
        manifest.error("elasticPolicy.nProcPerNode", "Forbidden: must not be used with spec.nprocPerNode")
    replicas = workers.replicas if workers is not None else 0
    low = manifest.count("elasticPolicy.minReplicas", -1)
    high = manifest.count("elasticPolicy.maxReplicas", -1)
    low, high = (low if low >= 0 else high), (high if high >= 0 else low)
    manifest.unmodelled([f"elasticPolicy.{f}" for f in policy if f not in _ELASTIC_READ])
    return (low, high) if low >= 0 else (replicas, replicas)


def read_pytorch_job(manifest: ManifestReader) -> PyTorchJob:
    """A ``kubeflow.org/v1`` PyTorchJob, defaulted and validated as the operator does."""
    manifest.value("nprocPerNode")  # environment only
    specs = manifest.value("pytorchReplicaSpecs")
    by_type: dict[str, tuple[ReplicaSpec, Created]] = {}
    if not isinstance(specs, dict) or not specs:
        manifest.error("pytorchReplicaSpecs", required("a Master or Worker replica spec is required"))
    else:
        for key in specs:
            rtype = next((t for t in REPLICA_TYPES if t.lower() == str(key).lower()), None)
            if rtype is None:
                manifest.error(f"pytorchReplicaSpecs.{key}", unsupported(key, REPLICA_TYPES))
                continue
            by_type[rtype] = _replica_spec(manifest, str(key), rtype)
    replica_specs = tuple(by_type[t][0] for t in REPLICA_TYPES if t in by_type)
    elastic = _elastic(manifest, by_type[WORKER][0] if WORKER in by_type else None)
    created = min((c for _, c in by_type.values()), key=lambda c: c.submit_at_s, default=Created())

    run_policy = _mapping(manifest.value("runPolicy"))
    backoff_limit = (
        None if run_policy.get("backoffLimit") is None else manifest.count("runPolicy.backoffLimit", 0)
    )
    clean = run_policy.get("cleanPodPolicy")
    if clean is not None and clean not in CLEAN_POD_POLICIES:
        manifest.error("runPolicy.cleanPodPolicy", unsupported(clean, CLEAN_POD_POLICIES))
    elif clean in ("Running", "All"):
        manifest.unmodelled(["runPolicy.cleanPodPolicy"])
    total = sum(s.replicas for s in replica_specs)
    scheduler = replica_specs[0].template.scheduler_name if replica_specs else ""
    suspend, min_available, timeout, queue = run_policy_gang(
        manifest, run_policy, _RUN_POLICY_READ, total, scheduler
    )

    if not replica_specs:  # rejected above; an object that is never run
        replica_specs = (
            ReplicaSpec(WORKER, 0, DEFAULT_RESTART_POLICY, Pod(name="", namespace=manifest.namespace)),
        )
    return PyTorchJob(
        manifest.name,
        manifest.namespace,
        replica_specs,
        created,
        backoff_limit,
        min_available,
        timeout,
        suspend,
        elastic,
        queue,
    )


@register_kind(PyTorchJob, api=API, read=read_pytorch_job)
class PyTorchJobController(EndsWithCondition):
    """The operator's reconcile of one PyTorchJob: every replica index has one pod; a failed one is
    created again (restartPolicy permitting) until the job ends."""

    kind: ClassVar[str] = "PyTorchJob"
    per_node: ClassVar[bool] = False

    def __init__(self, job: PyTorchJob) -> None:
        self.job = job
        self.specs = {s.type: s for s in job.replica_specs}
        self.active: dict[str, tuple[str, int]] = {}  # pod key -> (replica type, index)
        self.succeeded: set[tuple[str, int]] = set()
        #: pod key -> the exit code ``ReconcilePods`` reads of it, told by ``failed_with``
        self._exit_codes: dict[str, int] = {}
        self.restarts = 0
        #: an active pod's container restarts in place (``restarted``), which ``PastBackoffLimit`` sums
        self._container_restarts: dict[str, int] = {}
        #: the job's last condition: Created, Running, Restarting, Succeeded, Failed or Suspended
        self.status = "Suspended" if job.suspend else "Created"

    @property
    def key(self) -> str:
        return self.job.key

    def _pod(self, spec: ReplicaSpec, index: int) -> Pod:
        job = self.job
        rtype = spec.type.lower()
        labels = {
            JOB_NAME_LABEL: job.name,
            OPERATOR_NAME_LABEL: OPERATOR_NAME,
            REPLICA_TYPE_LABEL: rtype,
            REPLICA_INDEX_LABEL: str(index),
        }
        if spec.type == MASTER:
            labels[JOB_ROLE_LABEL] = "master"
        pod = spec.template.stamped(f"{job.name}-{rtype}-{index}", OwnerRef(self.kind, job.name), labels)
        if job.min_available is not None:
            pod = in_gang(pod, job.name)
        world = (f"{job.namespace}/{job.name}", self.world_size)
        pod = replace(pod, namespace=job.namespace, behavior=replace(pod.behavior, rendezvous=world))
        self.active[pod.key] = (spec.type, index)
        return pod

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        """A pod for each replica index that has none and has not succeeded (``ReconcilePods``)."""
        if self.job.suspend or self.finished_as is not None:
            return []
        have = set(self.active.values()) | self.succeeded
        out = []
        for spec in self.job.replica_specs:
            out += [self._pod(spec, i) for i in range(spec.replicas) if (spec.type, i) not in have]
        if self.status == "Created" and out:
            self.status = "Running"
        return out

    @property
    def world_size(self) -> int:
        """The ranks torchrun waits for before training starts: every replica, or with
        ``elasticPolicy`` the Master and ``minReplicas`` Workers (``--nnodes=min:max``)."""
        job = self.job
        if job.elastic is None:
            return job.total_replicas
        return job.elastic[0] + (1 if MASTER in self.specs else 0)

    def pod_sets(self) -> list[PodSet]:
        """Kueue's PyTorchJob integration: a pod set per replica type, named after it in lower case
        (``pkg/controller/jobs/kubeflow/kubeflowjob``)."""
        return [
            PodSet(s.type.lower(), s.replicas, s.template, labelled(REPLICA_TYPE_LABEL, s.type.lower()))
            for s in self.job.replica_specs
        ]

    def pod_groups(self) -> list[PodGroup]:
        job = self.job
        if job.min_available is None:
            return []
        gang = (job.min_available, job.schedule_timeout_s, job.queue)
        return [gang_pod_group(job.name, job.namespace, gang, job.created, job.template)]

    def failed_with(self, pod: Pod, reason: str | None, terminated: ContainerExit | None = None) -> None:
        """One of its pods ended Failed (``kind.ReadsFailedPods``; told right before ``finished``): the
        exit code ``ReconcilePods`` reads of it, its container ``pytorch``'s (the simulation's
        ``terminated`` is its first container's), ``NO_EXIT_CODE`` without one."""
        named = terminated is not None and terminated.name == DEFAULT_CONTAINER
        code = terminated.exit_code if terminated is not None and named else None
        self._exit_codes[pod.key] = NO_EXIT_CODE if code is None else code

    def restarted(self, pod: Pod) -> None:
        """``kind.CountsRestarts``: the kubelet restarted the container of one of its running pods (its
        replica's ``restartPolicy`` ``OnFailure`` or ``Always``): once the restarts, summed, are past
        ``runPolicy.backoffLimit`` (``PastBackoffLimit``) the job fails."""
        limit = self.job.backoff_limit
        if pod.key not in self.active or self.finished_as is not None:
            return
        self._container_restarts[pod.key] = self._container_restarts.get(pod.key, 0) + 1
        if limit is not None and restarts_past_limit(self._container_restarts.values(), limit):
            self.status = "Failed"  # BackoffLimitExceeded

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        self._container_restarts.pop(pod.key, None)
        replica = self.active.pop(pod.key, None)
        exit_code = self._exit_codes.pop(pod.key, NO_EXIT_CODE)
        if replica is None or self.finished_as is not None:
            return False
        rtype = replica[0]
        if succeeded:
            self.succeeded.add(replica)
            ends = MASTER if MASTER in self.specs else WORKER
            elastic_done = ends == WORKER and self.job.elastic is not None  # any Worker succeeded
            if rtype == ends and (
                elastic_done or all((ends, i) in self.succeeded for i in range(self.specs[ends].replicas))
            ):
                self.status = "Succeeded"
            return False
        policy = self.specs[rtype].restart_policy
        if policy == "Never" or (policy == EXIT_CODE and not is_retryable_exit_code(exit_code)):
            self.status = "Failed"  # UpdateJobStatus; ReconcilePods: "a non-retryable exit code"
            return False
        self.restarts += 1
        limit = self.job.backoff_limit
        if limit is not None and self.restarts > limit:
            self.status = "Failed"  # BackoffLimitExceeded
            return False
        self.status = "Restarting"
        return True  # created again under the same name

    def retry_delay_s(self) -> float:
        """The operator's work-queue wait before the failed replica is created again (``kind.BacksOff``)."""
        return work_queue_delay_s(self.restarts - 1)

    def node_added(self, node: Node) -> list[Pod]:
        return []

    def suspended(self, pod: Pod) -> None:
        """Taken away to come back later: created again, not counted as a restart. The operator deletes
        every pod of a suspended job, the Succeeded ones too (``ReconcileJobs``: ``CleanUpResources``
        with the job not finished), so those replicas are created again as well."""
        self._container_restarts.pop(pod.key, None)
        self.active.pop(pod.key, None)
        self.succeeded.clear()
