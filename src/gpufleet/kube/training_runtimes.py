"""Kubeflow Trainer v2's runtimes (``trainer.kubeflow.org/v1alpha1`` ``ClusterTrainingRuntime``,
cluster-scoped, and ``TrainingRuntime``, namespaced), and a TrainJob's JobSet built from one.

A runtime is read (``training_runtime``) with the JobSet webhook's defaults applied to its template
(pods restart ``OnFailure``; ``pkg/webhooks/jobset_webhook.go`` ``Default``): ``mlPolicy``
(``numNodes``; one of ``torch``, ``mpi``, ``jax``, ``xgboost``: their process counts, MPI
implementation and SSH path shape the environment and are read silently; ``flux`` is not modelled),
``podGroupPolicy.coscheduling.scheduleTimeoutSeconds`` (default 60; ``volcano`` is not modelled), and
``template.spec``, a JobSet spec: ``replicatedJobs`` (``name``, ``replicas``, ``dependsOn``,
``groupName``, and a Job template: ``parallelism``, ``completions``, ``backoffLimit``,
``completionMode``, ``podFailurePolicy``, read and checked as a Job's by ``kube.pod_failure_policy``,
``backoffLimitPerIndex`` and ``maxFailedIndexes`` (checked as a Job's, ``validateJobSpec``, but for the bound
by ``completions``, which the trainer sets to the pod set's count; ``backoffLimit`` then defaults to MaxInt32,
``SetDefaults_Job``), ``activeDeadlineSeconds``, ``podReplacementPolicy`` (checked as a Job's,
``validatePodReplacementPolicy``), the pod template), ``successPolicy`` and ``failurePolicy``
(read and checked as a JobSet's, ``jobset.read_failure_policy``: the trainer passes it into the JobSet as it
is). ``startupPolicy`` ``InOrder``, ``coordinator``, ``ttlSecondsAfterFinished`` and the Job fields
gpufleet's Jobs do not model are warnings. Each pod template is checked here, against the runtime's document.

``resolve`` does what the trainer's ``newRuntimeInfo`` and plugins do for one TrainJob
(``pkg/runtime/core/trainingruntime.go``, ``plugins/{torch,mpi,plainml,jax,xgboost}``,
``plugins/jobset/builder.go``): each replicated job's pod set counts its template's ``parallelism``
(1), the trainer's (label ``trainer.kubeflow.org/trainjob-ancestor-step: trainer``) the runtime's
``mlPolicy.numNodes`` (1) and then the TrainJob's ``trainer.numNodes`` (MPI: the replicated job
``node``, one less with ``runLauncherAsNode``); every Job's ``parallelism`` and ``completions`` become
that count (``syncParallelCount``); the trainer's and the initializers' Jobs are one each
(``replicas`` 1). In the trainer's container named ``node``, ``trainer.image`` replaces the image
and ``trainer.resourcesPerNode`` is merged into its resources (``MergeResourceRequirements``);
``command``, ``args`` and ``env`` change nothing scheduled. The pod templates are then read as the
TrainJob's, with its ``gpufleet.io/submit-at``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from gpufleet.kube import resource_lists
from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.pod_failure_policy import pod_failure_policy
from gpufleet.kube.priorities import Priorities
from gpufleet.kube.problems import Problems, Reporter, duplicate, invalid, required, unsupported
from gpufleet.kube.workloads import KindReader, pod_replacement_policy, pod_template
from gpufleet.model.failed_indexes import MAX_INT32
from gpufleet.workloads.jobset import JOB_SPEC_READ, REPLICATED_JOB_READ, FailurePolicy, read_failure_policy
from gpufleet.workloads.trainjob import COMPLETE, READY, ReplicatedJob, TrainJob

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER, NODE = "trainer", "node"
INITIALIZERS = ("dataset-initializer", "model-initializer")
ML_POLICIES = ("torch", "mpi", "jax", "xgboost", "flux")
JOB_RESTART_POLICIES = ("OnFailure", "Never")
COMPLETION_MODES = ("Indexed", "NonIndexed")
DEPENDENCY_STATUSES = (COMPLETE, READY)
SUCCESS_OPERATORS = ("All", "Any")
DEFAULT_SCHEDULE_TIMEOUT_S = 60  # CoschedulingPodGroupPolicySource's kubebuilder default
DEFAULT_BACKOFF_LIMIT = 6  # a Job's
_JOBSET_READ = ("replicatedJobs", "successPolicy", "failurePolicy", "startupPolicy", "network", "suspend")


@dataclass(frozen=True)
class TrainingRuntime:
    kind: str
    name: str
    namespace: str  # "" for a ClusterTrainingRuntime
    spec: Mapping[str, Any]  # with the JobSet webhook's defaults
    ml_policy: bool  # mlPolicy given
    ml_source: str | None  # torch, mpi, jax, xgboost or flux; None: plain
    num_nodes: int
    launcher_as_node: bool
    coscheduling_timeout_s: float | None
    success_any: bool
    success_targets: tuple[str, ...]
    failure_policy: FailurePolicy | None

    @property
    def replicated_jobs(self) -> list[dict[str, Any]]:
        return items(mapping(mapping(self.spec.get("template")).get("spec")).get("replicatedJobs"))


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _optional_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _job_spec(replicated_job: Mapping[str, Any]) -> dict[str, Any]:
    return mapping(mapping(replicated_job.get("template")).get("spec"))


def _pod_spec(replicated_job: Mapping[str, Any]) -> dict[str, Any]:
    return mapping(mapping(_job_spec(replicated_job).get("template")).get("spec"))


def _ancestor(replicated_job: Mapping[str, Any]) -> str | None:
    labels = mapping(mapping(mapping(replicated_job.get("template")).get("metadata")).get("labels"))
    value = labels.get(ANCESTOR_LABEL)
    return value if isinstance(value, str) else None


def training_runtime(
    kind: str, meta: Meta, body: Mapping[str, Any], report: Reporter, priorities: Priorities, order: int
) -> TrainingRuntime:
    """A ClusterTrainingRuntime or TrainingRuntime, defaulted and checked."""
    spec = copy.deepcopy(mapping(body.get("spec")))
    for rjob in items(mapping(mapping(spec.get("template")).get("spec")).get("replicatedJobs")):
        pod_spec = _pod_spec(rjob)
        if isinstance(mapping(_job_spec(rjob).get("template")).get("spec"), dict) and not pod_spec.get(
            "restartPolicy"
        ):
            pod_spec["restartPolicy"] = "OnFailure"  # the JobSet webhook's default
    reader = KindReader(meta, {"spec": spec}, report, priorities, order)

    ml = mapping(reader.value("mlPolicy"))
    given = "mlPolicy" in spec and spec["mlPolicy"] is not None
    num_nodes = reader.count("mlPolicy.numNodes", 1)
    sources = [s for s in ML_POLICIES if ml.get(s) is not None]
    if len(sources) > 1:
        reader.error("mlPolicy", invalid(sources, "only one of the policy can be configured"))
    reader.unmodelled(["mlPolicy.flux"])
    reader.unmodelled([f"mlPolicy.{k}" for k in ml if k not in ("numNodes", *ML_POLICIES)])
    launcher_as_node = mapping(ml.get("mpi")).get("runLauncherAsNode") is True

    policy = mapping(reader.value("podGroupPolicy"))
    timeout: float | None = None
    if policy.get("coscheduling") is not None:
        path = "podGroupPolicy.coscheduling.scheduleTimeoutSeconds"
        timeout = float(reader.count(path, DEFAULT_SCHEDULE_TIMEOUT_S))
    reader.unmodelled(["podGroupPolicy.volcano"])

    reader.value("template.metadata")  # the JobSet's own labels and annotations
    jobset = mapping(reader.value("template.spec"))
    success = mapping(jobset.get("successPolicy"))
    operator = success.get("operator") or "All"
    if operator not in SUCCESS_OPERATORS:
        reader.error("template.spec.successPolicy.operator", unsupported(operator, SUCCESS_OPERATORS))
    targets = tuple(str(t) for t in success.get("targetReplicatedJobs") or ())
    if mapping(jobset.get("startupPolicy")).get("startupPolicyOrder") == "InOrder":
        reader.unmodelled(["template.spec.startupPolicy"])
    reader.unmodelled([f"template.spec.{k}" for k in jobset if k not in _JOBSET_READ])
    reader.unmodelled(["template.spec.suspend"])

    rjobs = jobset.get("replicatedJobs")
    if not isinstance(rjobs, list) or not rjobs:
        reader.error("template.spec.replicatedJobs", required("a JobSet needs replicated jobs"))
        rjobs = []
    names: list[str] = []
    for i, rjob in enumerate(mapping(r) for r in rjobs):
        at = f"template.spec.replicatedJobs[{i}]"
        name = rjob.get("name")
        if not isinstance(name, str) or not name:
            reader.error(f"{at}.name", required())
        elif name in names:
            reader.error(f"{at}.name", duplicate(name))
        for j, dependency in enumerate(mapping(d) for d in items(rjob.get("dependsOn"))):
            if dependency.get("name") not in names:
                detail = "must be the name of a replicated job before this one"
                reader.error(f"{at}.dependsOn[{j}].name", invalid(dependency.get("name"), detail))
            if dependency.get("status") not in DEPENDENCY_STATUSES:
                reader.error(
                    f"{at}.dependsOn[{j}].status", unsupported(dependency.get("status"), DEPENDENCY_STATUSES)
                )
        names.append(str(name))
        reader.count(f"{at}.replicas", 1)
        job = f"{at}.template.spec"
        for field in ("parallelism", "completions", "backoffLimit"):
            reader.count(f"{job}.{field}", 1)
        mode = _job_spec(rjob).get("completionMode")
        if mode is not None and mode not in COMPLETION_MODES:
            reader.error(f"{job}.completionMode", unsupported(mode, COMPLETION_MODES))
        # completions: the pod set's count, which the trainer sets (syncParallelCount), not checked here
        reader.per_index(job, mode != "NonIndexed", None)
        reader.count(f"{job}.activeDeadlineSeconds", 0)
        reader.pod_replacement_policy(job, reader.pod_failure_policy(job))
        reader.unmodelled([f"{job}.{k}" for k in _job_spec(rjob) if k not in JOB_SPEC_READ])
        reader.unmodelled([f"{at}.{k}" for k in rjob if k not in REPLICATED_JOB_READ])
        reader.template(f"{job}.template", JOB_RESTART_POLICIES)
    for target in targets:
        if target not in names:
            detail = "must be the name of a replicated job"
            reader.error("template.spec.successPolicy.targetReplicatedJobs", invalid(target, detail))
    policy_at = "template.spec.failurePolicy"
    given_policy = jobset.get("failurePolicy") is not None
    failure_policy = read_failure_policy(reader, names, policy_at) if given_policy else None
    reader.unread()
    return TrainingRuntime(
        kind,
        meta.name,
        meta.namespace,
        spec,
        given,
        sources[0] if sources else None,
        num_nodes,
        launcher_as_node,
        timeout,
        operator == "Any",
        targets,
        failure_policy,
    )


def _count(runtime: TrainingRuntime, rjob: Mapping[str, Any], num_nodes: int | None) -> int:
    """The replicated job's pod set count (``newRuntimeInfo``, then the ML policy's ``EnforceMLPolicy``)."""
    ancestor, name = _ancestor(rjob), rjob.get("name")
    count = _int(_job_spec(rjob).get("parallelism"), 1)
    if ancestor == TRAINER and runtime.ml_policy:
        count = runtime.num_nodes
    if num_nodes is None or runtime.ml_source == "flux":
        return count
    if runtime.ml_source == "mpi":
        if name == NODE:
            return max(num_nodes - 1, 1) if runtime.launcher_as_node else num_nodes
        return count
    return num_nodes if ancestor == TRAINER else count


def _ranks(runtime: TrainingRuntime, rjob: Mapping[str, Any]) -> bool:
    """Whether the replicated job's pods are ranks of the distributed world: the trainer's under torch,
    JAX and XGBoost (the nodes torchrun's rendezvous waits for); MPI's launcher and ``node``."""
    if runtime.ml_source in ("torch", "jax", "xgboost"):
        return _ancestor(rjob) == TRAINER
    if runtime.ml_source == "mpi":
        return _ancestor(rjob) == TRAINER or rjob.get("name") == NODE
    return False


def resolve(
    train_job: TrainJob,
    runtime: TrainingRuntime,
    meta: Meta,
    body: Mapping[str, Any],
    report: Reporter,
    priorities: Priorities,
    order: int,
) -> TrainJob:
    """The TrainJob with the JobSet the trainer builds for it from ``runtime``."""
    trainer = mapping(mapping(body.get("spec")).get("trainer"))
    num_nodes = trainer.get("numNodes")
    override = mapping(trainer.get("resourcesPerNode"))
    for part in ("limits", "requests"):
        resource_lists.read(override.get(part), report, f"spec.trainer.resourcesPerNode.{part}")
    # the runtime's templates were checked with the runtime: read again, quietly, as the TrainJob's
    quiet = Reporter(Problems(), report.location)
    jobs: list[ReplicatedJob] = []
    created = []
    for rjob in copy.deepcopy(runtime.replicated_jobs):
        ancestor, name = _ancestor(rjob), str(rjob.get("name"))
        trainer_job = ancestor == TRAINER
        for container in items(_pod_spec(rjob).get("containers")):
            if container.get("name") != NODE:
                continue
            if trainer_job and trainer.get("image"):
                container["image"] = trainer["image"]
            if override and (
                (trainer_job and runtime.ml_policy) or (runtime.launcher_as_node and name == NODE)
            ):
                resources = mapping(container.get("resources"))
                container["resources"] = {
                    part: {**mapping(resources.get(part)), **mapping(override.get(part))}
                    for part in ("limits", "requests")
                    if resources.get(part) or override.get(part)
                }
        pod, made = pod_template(
            meta,
            {"template": _job_spec(rjob).get("template")},
            "template",
            quiet,
            quiet.at("spec"),
            priorities,
            order,
            JOB_RESTART_POLICIES,
        )
        created.append(made)
        single = trainer_job or ancestor in INITIALIZERS
        spec = _job_spec(rjob)
        failure_policy = pod_failure_policy(spec, quiet.at("spec"))
        per_index = _optional_int(spec.get("backoffLimitPerIndex"))
        deadline = _optional_int(spec.get("activeDeadlineSeconds"))
        # SetDefaults_Job: backoffLimit defaults to MaxInt32 with backoffLimitPerIndex
        backoff_default = DEFAULT_BACKOFF_LIMIT if per_index is None else MAX_INT32
        jobs.append(
            ReplicatedJob(
                name,
                1 if single else _int(rjob.get("replicas"), 1),
                _count(runtime, rjob, num_nodes if isinstance(num_nodes, int) else None),
                pod,
                _int(spec.get("backoffLimit"), backoff_default),
                str(rjob.get("groupName") or "default"),
                tuple((str(d.get("name")), str(d.get("status"))) for d in items(rjob.get("dependsOn"))),
                _ranks(runtime, rjob),
                failure_policy,
                spec.get("completionMode") != "NonIndexed",
                per_index,
                _optional_int(spec.get("maxFailedIndexes")),
                None if deadline is None else float(deadline),
                pod_replacement_policy(spec, quiet.at("spec"), failure_policy),
            )
        )
    first = min(created, key=lambda c: c.submit_at_s, default=train_job.created)
    return replace(
        train_job,
        created=first,
        jobs=tuple(jobs),
        coscheduling_timeout_s=runtime.coscheduling_timeout_s,
        success_any=runtime.success_any,
        success_targets=runtime.success_targets,
        failure_policy=runtime.failure_policy,
    )
