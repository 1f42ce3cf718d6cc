"""Which pods of a cluster snapshot each of its controllers already made, so that it adopts them
instead of creating its pods again (``Scenario.owned``).

A pod is a controller's when its controlling ``ownerReference`` (``controller: true``:
``metav1.GetControllerOf``) names a Job, ReplicaSet or DaemonSet of the scenario in the pod's
namespace, by kind and name and, where both sides have one, by uid (``PodControllerRefManager.ClaimPods``,
pkg/controller/controller_ref_manager.go, releases a pod whose controller uid differs). A pod whose
controller is not in the snapshot is an orphan and stays a bare pod; adopting orphans by selector
is not done. A ReplicaSet whose controller is a Deployment of the scenario is that Deployment's
(``getReplicaSetsForDeployment``): it is no workload of its own, its pods are the Deployment's
(their owner becomes the Deployment) and the one whose template equals the Deployment's but for
the ``pod-template-hash`` label (``FindNewReplicaSet``, ``EqualIgnoreHash``; the oldest first) names
its new pods. Without the ReplicaSets in the snapshot, a pod owned by ``<deployment>-<hash>`` with
the label ``pod-template-hash: <hash>`` is the Deployment's (the name the Deployment controller
gives its ReplicaSets). A Job counts its ended pods as its status does (job_controller.go
``trackJobStatusAndRemoveFinalizers``): ``status.succeeded``/``failed`` plus the ended pods not yet
counted there (in ``status.uncountedTerminatedPods``, or still holding the
``batch.kubernetes.io/job-tracking`` finalizer); a Job written without ``status`` counts the ended
pods of the snapshot. A failed pod not yet counted is counted as the Job's ``podFailurePolicy`` says
(``matchPodFailurePolicy``: an ``Ignore`` rule leaves it out, a ``FailIndex`` rule fails its index), from
what its ``status`` says (``failed_pod_status``: its conditions and its containers' and init containers'
``state.terminated.exitCode``; ``lastState`` is not read, as upstream's ``matchOnExitCodes`` does not).
Of the Job's ``status.conditions`` only a ``SuccessCriteriaMet`` or ``FailureTarget`` of status ``True`` is
read: the success or failure an earlier sync decided, which the Job then ends with (``syncJob``:
``hasSuccessCriteriaMetCondition`` first); the others (one of status ``False``, added by hand) are ignored, as
upstream ignores them, and not kept. A pod being deleted
(``metadata.deletionTimestamp``) and not ended is not active (``IsPodActive``); a Job whose
``podReplacementPolicy`` is ``TerminatingOrFailed`` counts it failed now (``isPodFailed``), one under
``Failed`` once it ended (``kube.pod_deletion``: the run ends it after what remains of its grace period).
Each of a controller's pods carries when it finished (``finished_time``: the Job controller's
``getFinishedTime``, backoff_utils.go), from which a Job counts the pod failure backoff it carries over, and
whether its Job's status counts it yet (``OwnedPod.uncounted``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from gpufleet.kube.nodes import unix_time
from gpufleet.kube.objects import items, mapping
from gpufleet.kube.problems import Reporter
from gpufleet.model.completion_indexes import parse_indexes
from gpufleet.model.failed_indexes import is_index_failed
from gpufleet.model.owned import Owned, OwnedPod
from gpufleet.model.pod import OwnerRef
from gpufleet.model.pod_failure_policy import (
    ContainerExit,
    FailedPod,
    PodFailurePolicy,
    match_pod_failure_policy,
)
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.workloads import Job
from gpufleet.workloads import controller_for

#: ``apps.DefaultDeploymentUniqueLabelKey``
POD_TEMPLATE_HASH = "pod-template-hash"
#: ``batch.JobTrackingFinalizer``: a Job's ended pod holds it until the Job's status counts it
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
#: ``batch.JobFailureTarget`` and ``batch.JobSuccessCriteriaMet``: the interim conditions of a Job that is
#: failing or succeeding
JOB_FAILURE_TARGET, JOB_SUCCESS_CRITERIA_MET = "FailureTarget", "SuccessCriteriaMet"

#: kind, namespace, name
Ref = tuple[str, str, str]


@dataclass(frozen=True)
class _Object:
    """What adoption reads of a Pod, Job, Deployment, ReplicaSet or DaemonSet document."""

    uid: str
    owner: tuple[str, str, str] | None  # its controller: kind, name, uid
    body: Mapping[str, Any]


def _read(body: Mapping[str, Any]) -> _Object:
    metadata = mapping(body.get("metadata"))
    controller = next(
        (o for o in items(metadata.get("ownerReferences")) if o.get("controller") is True), None
    )
    owner = None
    if controller is not None:
        owner = (
            str(controller.get("kind") or ""),
            str(controller.get("name") or ""),
            str(controller.get("uid") or ""),
        )
    return _Object(str(metadata.get("uid") or ""), owner, body)


def claim(scenario: Scenario, documents: Sequence[tuple[Ref, Mapping[str, Any]]]) -> None:
    """Fill ``scenario.owned`` from the snapshot's documents (``(kind, namespace, name)`` and body, of
    its Pods and workloads); fold the ReplicaSets of its Deployments into them."""
    objects = {ref: _read(body) for ref, body in documents}
    workloads = {(controller_for(w).kind, w.namespace, w.name): w for w in scenario.workloads()}

    def controller(namespace: str, owner: tuple[str, str, str] | None) -> Ref | None:
        """The workload of the scenario that ``owner``, a controller reference, names."""
        if owner is None:
            return None
        ref = (owner[0], namespace, owner[1])
        found = objects.get(ref)
        if ref not in workloads or found is None:
            return None
        return ref if not (found.uid and owner[2]) or found.uid == owner[2] else None

    folded = {
        rs: deployment
        for rs in workloads
        if rs[0] == "ReplicaSet"
        and (deployment := controller(rs[1], objects[rs].owner)) is not None
        and deployment[0] == "Deployment"
    }
    for job in (ref for ref in workloads if ref[0] == "Job" and ref in objects):
        counted = _job_status(objects[job].body)
        decided = counted.failure_target or counted.success_criteria_met
        if counted.succeeded or counted.failed or counted.completed_indexes or decided:
            scenario.owned[_key(job)] = counted
    for ref, deployment in sorted(folded.items(), key=lambda item: _created(objects[item[0]])):
        scenario.other_workloads.remove(workloads[ref])
        if _key(deployment) not in scenario.owned and _equal_ignore_hash(
            objects[ref].body, objects[deployment].body
        ):
            scenario.owned[_key(deployment)] = Owned(replica_set=ref[2])
    for i, bare in enumerate(scenario.pods):
        pod = objects.get(("Pod", bare.pod.namespace, bare.pod.name))
        if pod is None or pod.owner is None:
            continue
        kind, name, _ = pod.owner
        target = controller(bare.pod.namespace, pod.owner)
        if target is not None:
            target = folded.get(target, target)
        elif kind == "ReplicaSet" and (kind, bare.pod.namespace, name) not in objects:
            target = _deployment_by_hash(bare, name, workloads)
        if target is None:
            continue
        if target[0] == "Deployment":
            bare = scenario.pods[i] = replace(
                bare, pod=replace(bare.pod, owner=OwnerRef("Deployment", target[2]))
            )
        owned = scenario.owned.setdefault(_key(target), Owned())
        metadata = mapping(pod.body.get("metadata"))
        terminating = metadata.get("deletionTimestamp") is not None
        failure = failed_pod_status(bare, pod.body) if bare.phase == "Failed" else None
        restarts = _restarts(pod.body)
        owned.pods.append(
            OwnedPod(
                bare.pod,
                bare.phase,
                terminating,
                failure,
                restarts,
                _ready_since(pod.body),
                _max_restarts(pod.body),
                str(metadata.get("creationTimestamp") or ""),
                finished_time(pod.body),
            )
        )
        if target[0] == "Job":
            workload = workloads[target]
            batch = workload if isinstance(workload, Job) else None
            policy = batch.pod_failure_policy if batch is not None else None
            replaces_terminating = batch is not None and not batch.only_replace_failed_pods
            _count_ended(owned, bare, pod, objects[target].body, policy, replaces_terminating)


def _key(ref: Ref) -> str:
    return "/".join(ref)


def _created(found: _Object) -> str:
    """``metadata.creationTimestamp`` (RFC 3339 in UTC sorts as text): the oldest comes first."""
    return str(mapping(found.body.get("metadata")).get("creationTimestamp") or "")


def deployment_by_hash(replica_set: str, pod_labels: Mapping[str, str]) -> str | None:
    """The name of the Deployment whose ReplicaSet ``replica_set`` (absent from the snapshot) made a
    pod with ``pod_labels``: the Deployment controller names its ReplicaSets
    ``<deployment>-<pod-template-hash>``."""
    hash_ = pod_labels.get(POD_TEMPLATE_HASH)
    suffix = f"-{hash_}"
    return replica_set[: -len(suffix)] if hash_ and replica_set.endswith(suffix) else None


def _deployment_by_hash(bare: BarePod, replica_set: str, workloads: Mapping[Ref, object]) -> Ref | None:
    """The Deployment of the scenario whose ReplicaSet ``replica_set`` (absent) owns ``bare``."""
    name = deployment_by_hash(replica_set, bare.pod.labels)
    ref = ("Deployment", bare.pod.namespace, name or "")
    return ref if name is not None and ref in workloads else None


def _equal_ignore_hash(replica_set: Mapping[str, Any], deployment: Mapping[str, Any]) -> bool:
    """``EqualIgnoreHash``: the two pod templates are equal once the ``pod-template-hash`` label is
    dropped (empty and absent maps are equal, as ``Semantic.DeepEqual`` has them)."""

    def template(body: Mapping[str, Any]) -> dict[str, Any]:
        spec = mapping(mapping(body.get("spec")).get("template"))
        metadata = mapping(spec.get("metadata"))
        labels = {k: v for k, v in mapping(metadata.get("labels")).items() if k != POD_TEMPLATE_HASH}
        metadata = {k: v for k, v in {**metadata, "labels": labels}.items() if v not in ({}, None)}
        return {k: v for k, v in {**spec, "metadata": metadata}.items() if v not in ({}, None)}

    return template(replica_set) == template(deployment)


def _decided(status: Mapping[str, Any], kind: str) -> tuple[str, str] | None:
    """The reason and message of the status's first condition of type ``kind`` (``findConditionByType``)
    where its status is ``True``; None otherwise."""
    found = next((c for c in items(status.get("conditions")) if c.get("type") == kind), None)
    if found is None or found.get("status") != "True":
        return None
    return (str(found.get("reason") or ""), str(found.get("message") or ""))


def _job_status(job: Mapping[str, Any]) -> Owned:
    """What a Job's ``status`` has counted: ``succeeded``, ``failed``, ``completedIndexes`` and
    ``failedIndexes`` (``backoffLimitPerIndex``); and the success or failure an earlier sync decided: its
    ``SuccessCriteriaMet`` and ``FailureTarget`` conditions of status ``True`` (``_decided``)."""
    status = mapping(job.get("status"))
    return Owned(
        succeeded=_int(status.get("succeeded")),
        failed=_int(status.get("failed")),
        completed_indexes=parse_indexes(status.get("completedIndexes"), _completions(job)),
        failed_indexes=parse_indexes(status.get("failedIndexes"), _completions(job)),
        failure_target=_decided(status, JOB_FAILURE_TARGET),
        success_criteria_met=_decided(status, JOB_SUCCESS_CRITERIA_MET),
    )


def _completions(job: Mapping[str, Any]) -> int | None:
    """``spec.completions``, None when unset (a work queue: no completion indexes)."""
    value = mapping(job.get("spec")).get("completions")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def failed_pod_status(bare: BarePod, body: Mapping[str, Any]) -> FailedPod:
    """What ``matchPodFailurePolicy`` reads of a snapshot's pod ``body``: its ``status.conditions``
    (type, status) and its containers' and init containers' statuses, each with its ``state.terminated``
    exit code and reason (a container not terminated has none: ``getMatchingContainerFromList`` skips it;
    ``lastState`` is not read, as upstream does not)."""
    status = mapping(body.get("status"))
    conditions = tuple(
        (str(c.get("type") or ""), str(c.get("status") or "")) for c in items(status.get("conditions"))
    )
    return FailedPod(
        bare.pod.namespace,
        bare.pod.name,
        conditions,
        _container_exits(status.get("containerStatuses")),
        _container_exits(status.get("initContainerStatuses")),
    )


def finished_time(body: Mapping[str, Any]) -> float | None:
    """``getFinishedTime`` (backoff_utils.go): when a pod ``body`` finished, in Unix seconds: the latest
    ``state.terminated.finishedAt`` of its containers and sidecars (init containers of ``restartPolicy:
    Always``, ``SidecarContainers`` being on) once each of them has one, else its ``Ready`` condition's
    ``lastTransitionTime`` where that is ``False``, else its ``deletionTimestamp`` less its
    ``deletionGracePeriodSeconds``, else its ``creationTimestamp``; None where none is set (upstream's zero
    time). A time that is no RFC 3339 one counts as unset."""
    metadata, spec, status = (mapping(body.get(key)) for key in ("metadata", "spec", "status"))
    sidecars = {
        str(c.get("name") or "")
        for c in items(spec.get("initContainers"))
        if c.get("restartPolicy") == "Always"
    }
    ended = _latest_finish(None, items(status.get("containerStatuses")))
    ended = _latest_finish(
        ended, [s for s in items(status.get("initContainerStatuses")) if s.get("name") in sidecars]
    )
    if ended is not None:
        return ended
    ready = next((c for c in items(status.get("conditions")) if c.get("type") == "Ready"), None)
    since = _unix(ready.get("lastTransitionTime")) if ready is not None else None
    if ready is not None and ready.get("status") == "False" and since is not None:
        return since
    deleted = _unix(metadata.get("deletionTimestamp"))
    if deleted is not None:
        grace = metadata.get("deletionGracePeriodSeconds")
        return deleted - (grace if isinstance(grace, int) and not isinstance(grace, bool) else 0)
    return _unix(metadata.get("creationTimestamp"))


def check_finish_times(body: Mapping[str, Any], report: Reporter) -> None:
    """Report each time ``finished_time`` reads of an ended pod ``body`` that is no RFC 3339 time (an error at
    its field, as a Node's times are): its containers' ``finishedAt``, its ``Ready`` condition's
    ``lastTransitionTime``, its ``deletionTimestamp``."""
    status = mapping(body.get("status"))
    for key in ("containerStatuses", "initContainerStatuses"):
        for i, container in enumerate(items(status.get(key))):
            finished = mapping(mapping(container.get("state")).get("terminated")).get("finishedAt")
            unix_time(finished, report, f"status.{key}[{i}].state.terminated.finishedAt")
    for i, condition in enumerate(items(status.get("conditions"))):
        if condition.get("type") == "Ready":
            path = f"status.conditions[{i}].lastTransitionTime"
            unix_time(condition.get("lastTransitionTime"), report, path)
    deleted = mapping(body.get("metadata")).get("deletionTimestamp")
    unix_time(deleted, report, "metadata.deletionTimestamp")


def _latest_finish(since: float | None, statuses: Sequence[Mapping[str, Any]]) -> float | None:
    """``latestFinishTime``: the latest of ``since`` and the statuses' ``state.terminated.finishedAt``; None
    as soon as one of them has none."""
    for status in statuses:
        end = _unix(mapping(mapping(status.get("state")).get("terminated")).get("finishedAt"))
        if end is None:
            return None
        since = end if since is None else max(since, end)
    return since


def _unix(value: object) -> float | None:
    """An RFC 3339 time (YAML may have read it as a date-time) as Unix seconds (UTC without a zone, as
    ``kube.nodes.unix_time`` reads it); None when absent or not a time (an ended pod's:
    ``check_finish_times`` reported it)."""
    at = value
    if not isinstance(at, datetime):
        try:
            at = datetime.fromisoformat(str(value))
        except ValueError:
            return None
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).timestamp()


def _restarts(body: Mapping[str, Any]) -> int:
    """The ``restartCount`` of a pod's containers and init containers, summed (``pastBackoffLimitOnFailure``;
    a count that is not a number counts 0: the schema check reports it)."""
    status = mapping(body.get("status"))
    return sum(
        _int(s.get("restartCount"))
        for key in ("initContainerStatuses", "containerStatuses")
        for s in items(status.get(key))
    )


def _ready_since(body: Mapping[str, Any]) -> str | None:
    """``podReadyTime``: the ``lastTransitionTime`` of the pod's ``Ready`` condition where it is ``True``
    (``""`` without one), None where the pod is not Ready."""
    conditions = items(mapping(body.get("status")).get("conditions"))
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    if ready is None or ready.get("status") != "True":
        return None
    return str(ready.get("lastTransitionTime") or "")


def _max_restarts(body: Mapping[str, Any]) -> int:
    """``maxContainerRestarts``: the highest ``restartCount`` of the pod's containers (not init ones)."""
    statuses = items(mapping(body.get("status")).get("containerStatuses"))
    return max((_int(s.get("restartCount")) for s in statuses), default=0)


def _container_exits(statuses: object) -> tuple[ContainerExit, ...]:
    """Each container status's name and ``state.terminated`` (exit code, reason), in order."""
    out = []
    for status in items(statuses):
        state = mapping(status.get("state"))
        terminated = mapping(state.get("terminated"))
        code = terminated.get("exitCode", 0) if state.get("terminated") is not None else None
        if isinstance(code, bool) or not isinstance(code, int | None):
            code = None  # (not a number: the schema check reports it)
        out.append(ContainerExit(str(status.get("name") or ""), code, str(terminated.get("reason") or "")))
    return tuple(out)


def _count_ended(
    owned: Owned,
    bare: BarePod,
    pod: _Object,
    job: Mapping[str, Any],
    policy: PodFailurePolicy | None = None,
    replaces_terminating: bool = False,
) -> None:
    """Add the Job's ended pod ``bare`` to its counts, unless its status counted it already; a failed one
    as the Job's ``podFailurePolicy`` ``policy`` counts it (``trackJobStatusAndRemoveFinalizers``: an
    ``Ignore`` rule's pod is not counted; ``calculateFailedIndexes``). ``replaces_terminating``: the Job's
    ``podReplacementPolicy`` is ``TerminatingOrFailed`` (``onlyReplaceFailedPods`` false), under which a pod
    being deleted (``deletionTimestamp``) and not Succeeded is failed (``isPodFailed``)."""
    phase = bare.phase
    if replaces_terminating and owned.pods[-1].terminating and phase != "Succeeded":
        phase = "Failed"
    if phase not in ("Succeeded", "Failed"):
        return
    status = mapping(job.get("status"))
    uncounted = mapping(status.get("uncountedTerminatedPods")).get(phase.lower()) or ()
    finalizers = mapping(pod.body.get("metadata")).get("finalizers") or ()
    if status and pod.uid not in uncounted and JOB_TRACKING_FINALIZER not in finalizers:
        return  # already in status.succeeded / status.failed
    owned.pods[-1] = replace(owned.pods[-1], uncounted=True)
    index = owned.pods[-1].completion_index
    failure = owned.pods[-1].failure or FailedPod(bare.pod.namespace, bare.pod.name)
    counted = match_pod_failure_policy(policy, failure).count_failed
    completions = _completions(job)
    in_range = index is not None and (completions is None or index < completions)
    if mapping(job.get("spec")).get("completionMode") == "Indexed":
        # trackJobStatusAndRemoveFinalizers: an Indexed Job counts the pods of its indexes only, and an
        # index succeeds once (status.succeeded is the number of completed indexes)
        if not in_range or index is None:
            return
        if phase == "Failed":
            owned.failed += counted
            if _index_failed(job, bare.pod.annotations, policy, failure):
                owned.failed_indexes |= {index}
        elif index not in owned.completed_indexes:
            owned.succeeded += 1
            owned.completed_indexes |= {index}
        return
    if phase == "Failed":
        owned.failed += counted
        return
    owned.succeeded += 1
    if index is not None and in_range:  # (calculateSucceededIndexes)
        owned.completed_indexes |= {index}


def _index_failed(
    job: Mapping[str, Any],
    annotations: Mapping[str, str],
    policy: PodFailurePolicy | None,
    failure: FailedPod,
) -> bool:
    """``calculateFailedIndexes``: whether a Job with ``backoffLimitPerIndex`` counts its failed pod, not yet
    counted, as failing its index (``isIndexFailed``: a ``FailIndex`` rule of ``policy`` matches it, or its
    failure counts and its ``job-index-failure-count`` reached the limit)."""
    limit = mapping(job.get("spec")).get("backoffLimitPerIndex")
    if not isinstance(limit, int) or isinstance(limit, bool):
        return False
    return is_index_failed(limit, policy, annotations, failure)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
