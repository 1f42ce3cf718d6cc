"""A dump's Kueue ``Workload`` objects (``kueue.x-k8s.io/v1beta1`` and ``v1beta2``): read, and matched to the
jobs they belong to.

How a job finds its Workload (kueue v0.19.2 ``pkg/controller/jobframework/reconciler.go``
``FindMatchingWorkloads``, ``EnsurePrebuiltWorkloadOwnership``): the Workload is controlled by the job (an
``ownerReferences`` entry with ``controller: true``: a Job, JobSet, RayJob, PyTorchJob... or a plain Pod). A
pod group's Workload (``pkg/controller/jobs/pod/pod_controller.go``) is named after the group (the pods'
label ``kueue.x-k8s.io/pod-group-name``) and owned by each pod, none its controller. A Workload that matches
no workload gpufleet's Kueue admits (one labelled ``kueue.x-k8s.io/queue-name`` of the scenario) is a
warning naming it; a second Workload of one job is one too (Kueue keeps one and deletes the others; gpufleet
keeps the first). A LeaderWorkerSet's Workloads (one per group) are not matched to its groups: a warning.

What is read (``model.kueue_dumped``): ``metadata.creationTimestamp``, the ``Evicted`` condition (reason and
``lastTransitionTime``), ``status.requeueState`` (``count``, not negative; ``requeueAt``), ``spec.active``
and ``spec.priority`` (an int32). A time that is no RFC 3339 time, a negative count or a value of the wrong
type is an error. Checked against the job (warnings, never a silent pick): a Workload holding quota
(``QuotaReserved``) while its Job is suspended, or none while its Job runs unsuspended; a ``spec.queueName``
other than the job's LocalQueue; a ``spec.priority`` other than what gpufleet derives from the job (its
WorkloadPriorityClass, else its pods' priority: Kueue's scheduler reads the Workload's, and so does
gpufleet). ``status.admission`` is not carried (gpufleet admits the workload again in the run), nor are
``spec.maximumExecutionTimeSeconds``, ``status.admissionChecks`` (the run's checks start Pending) and
``status.accumulatedPastExexcutionTimeSeconds``: warnings. The rest of its spec (``podSets``) and status
(``reclaimablePods``, ``resourceRequests``) Kueue derives from its job, and so does gpufleet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpufleet.kube import nodes
from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.problems import Reporter, invalid
from gpufleet.model.kueue import QUEUE_NAME_LABEL, KueueObjects
from gpufleet.model.kueue_dumped import DumpedWorkload
from gpufleet.model.pod import Pod

#: the label a Kueue pod group's pods carry: its Workload's name (``podconstants.GroupNameLabel``)
POD_GROUP_NAME_LABEL = "kueue.x-k8s.io/pod-group-name"
WORKLOAD = "Workload"
#: the Workload's conditions read (``workload_types.go``)
EVICTED = "Evicted"
QUOTA_RESERVED = "QuotaReserved"
_INT32_MAX = 2**31 - 1
#: the kinds Kueue admits part by part, a Workload per part (``control.port.QueuedInParts``)
_IN_PARTS = "LeaderWorkerSet/"


@dataclass(frozen=True)
class Queued:
    """A workload gpufleet's Kueue admits: its LocalQueue, ``spec.suspend`` (a Job's; None: a kind without
    one) and the pod whose priority Kueue derives (its first pod set's template; None: not known here)."""

    queue: str
    suspended: bool | None
    template: Pod | None


@dataclass(frozen=True)
class ReadWorkload:
    """A Workload document read: its owner (``<kind>/<ns>/<name>`` of its controller; None: none), the
    Workload itself and what is checked against its job."""

    report: Reporter
    meta: Meta
    owner: str | None
    workload: DumpedWorkload
    queue_name: str | None
    reserved_in: str | None  # ``status.admission.clusterQueue`` while QuotaReserved is True


def read(meta: Meta, body: Mapping[str, Any], report: Reporter) -> ReadWorkload:
    """The Workload document ``body`` (errors and warnings through ``report``)."""
    metadata, spec, status = (mapping(body.get(k)) for k in ("metadata", "spec", "status"))
    created = nodes.unix_time(metadata.get("creationTimestamp"), report, "metadata.creationTimestamp")
    active = True if spec.get("active") is None else spec["active"]  # (null: nil, as absent)
    if not isinstance(active, bool):
        report.error("spec.active", invalid(active, "must be a boolean"))
        active = True
    priority = spec.get("priority")
    if priority is not None and (
        not isinstance(priority, int) or isinstance(priority, bool) or abs(priority) > _INT32_MAX
    ):
        report.error("spec.priority", invalid(priority, "must be an int32"))
        priority = None
    queue_name = spec.get("queueName")
    conditions = _conditions(status, report)
    evicted = conditions.get(EVICTED)
    count, requeue_at = _requeue_state(mapping(status.get("requeueState")), report)
    for path, value in (
        ("spec.maximumExecutionTimeSeconds", spec.get("maximumExecutionTimeSeconds")),
        ("status.admissionChecks", status.get("admissionChecks")),
        ("status.accumulatedPastExexcutionTimeSeconds", status.get("accumulatedPastExexcutionTimeSeconds")),
    ):
        if value not in (None, [], 0):
            report.not_modelled(path)
    reserved_in = None
    admission = mapping(status.get("admission"))
    if admission:
        report.not_modelled(
            "status.admission", note="gpufleet admits the workload again in the run, from its job's spec"
        )
    if QUOTA_RESERVED in conditions:
        reserved_in = str(admission.get("clusterQueue") or "")
    workload = DumpedWorkload(
        f"{meta.namespace}/{meta.name}", created, active, count, requeue_at, evicted, priority
    )
    owner = _controller(metadata, meta.namespace)
    queue = queue_name if isinstance(queue_name, str) and queue_name else None
    return ReadWorkload(report, meta, owner, workload, queue, reserved_in)


def _conditions(status: Mapping[str, Any], report: Reporter) -> dict[str, tuple[str, float | None]]:
    """The conditions whose status is ``True``: type -> (reason, ``lastTransitionTime``)."""
    found = {}
    for i, condition in enumerate(items(status.get("conditions"))):
        at = nodes.unix_time(
            condition.get("lastTransitionTime"), report, f"status.conditions[{i}].lastTransitionTime"
        )
        if condition.get("status") == "True":
            found[str(condition.get("type") or "")] = (str(condition.get("reason") or ""), at)
    return found


def _requeue_state(state: Mapping[str, Any], report: Reporter) -> tuple[int, float | None]:
    """``status.requeueState``: its ``count`` (0 when absent; an int32, not negative) and ``requeueAt``."""
    count = state.get("count") or 0
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= _INT32_MAX:
        report.error("status.requeueState.count", invalid(count, "must be an int32, not negative"))
        count = 0
    at = nodes.unix_time(state.get("requeueAt"), report, "status.requeueState.requeueAt")
    return count, at


def _controller(metadata: Mapping[str, Any], namespace: str) -> str | None:
    """``<kind>/<ns>/<name>`` of the owner with ``controller: true`` (``metav1.IsControlledBy``)."""
    for owner in items(metadata.get("ownerReferences")):
        if owner.get("controller") is True:
            return f"{owner.get('kind') or ''}/{namespace}/{owner.get('name') or ''}"
    return None


def match(
    read_workloads: Sequence[ReadWorkload],
    queued: Mapping[str, Queued],
    pods: Sequence[Pod],
    objects: KueueObjects,
) -> None:
    """Put each Workload in ``objects.dumped`` under the job it belongs to (``queued``: the Jobs and other
    kinds gpufleet's Kueue admits, by ``<kind>/<ns>/<name>``; ``pods``: the scenario's pods, whose plain pods
    and pod groups it admits too), and check it against that job; one that belongs to none is a warning."""
    queued = {**_queued_pods(pods), **queued}
    first: dict[str, ReadWorkload] = {}
    for wl in read_workloads:
        key = wl.owner if wl.owner is not None else _pod_group_key(wl.meta, pods)
        job = None if key is None else queued.get(key)
        if key is None or job is None:
            wl.report.warn("metadata.ownerReferences", _unmatched(wl, key))
            continue
        if key.startswith(_IN_PARTS):
            detail = f"Workload {wl.workload.name} is one of {key}'s, one per group: gpufleet does not match "
            wl.report.warn("metadata.ownerReferences", f"{detail}them to its groups; ignored")
            continue
        if key in first:
            shown = first[key].workload.name
            detail = f"Workload {shown} already belongs to {key}: Kueue keeps one and deletes the others"
            wl.report.warn("metadata.ownerReferences", f"{detail}; ignored")
            continue
        first[key] = wl
        objects.dumped[key] = wl.workload
        _check(wl, key, job, objects)


def _queued_pods(pods: Sequence[Pod]) -> dict[str, Queued]:
    """Kueue's pod integration as gpufleet's Kueue runs it (``control.kueue_queues``): a pod labelled with a
    LocalQueue and owned by no controller is a workload ``Pod/<ns>/<name>``, or its pod group's
    ``PodGroup/<ns>/<group>``."""
    queued: dict[str, Queued] = {}
    for pod in pods:
        queue = pod.labels.get(QUEUE_NAME_LABEL)
        if queue is None or pod.owner is not None:
            continue
        key = f"PodGroup/{pod.namespace}/{pod.pod_group}" if pod.pod_group else f"Pod/{pod.key}"
        queued.setdefault(key, Queued(queue, None, pod))
    return queued


def _pod_group_key(meta: Meta, pods: Sequence[Pod]) -> str | None:
    """The key of the pod group whose pods carry ``kueue.x-k8s.io/pod-group-name: <its name>``: gpufleet's
    Kueue admits a pod group by its pods' PodGroup (``scheduling.x-k8s.io/pod-group``, else that name)."""
    for pod in pods:
        if pod.namespace == meta.namespace and pod.labels.get(POD_GROUP_NAME_LABEL) == meta.name:
            return f"PodGroup/{pod.namespace}/{pod.pod_group or meta.name}"
    return None


def _unmatched(wl: ReadWorkload, key: str | None) -> str:
    name = wl.workload.name
    if key is None:
        return (
            f"Workload {name} has no owner with controller: true and no pod labelled "
            f"{POD_GROUP_NAME_LABEL}={wl.meta.name}: it belongs to nothing gpufleet runs; ignored"
        )
    return (
        f"Workload {name} belongs to {key}, which is not a workload gpufleet's Kueue admits (none of that "
        f"kind and name labelled {QUEUE_NAME_LABEL} in the scenario); ignored"
    )


def _check(wl: ReadWorkload, key: str, job: Queued, objects: KueueObjects) -> None:
    """The Workload against its job: the job decides its queue, suspension and derived priority; where the
    Workload says otherwise, a warning."""
    report = wl.report
    if wl.queue_name is not None and wl.queue_name != job.queue:
        report.warn(
            "spec.queueName",
            f"{wl.queue_name!r} is not {key}'s LocalQueue {job.queue!r}: gpufleet queues it by its job's "
            "label",
        )
    if wl.reserved_in is not None and job.suspended is True:
        report.warn(
            "status.admission",
            f"the Workload holds quota of ClusterQueue {wl.reserved_in or '(none named)'} while {key} is "
            "suspended: gpufleet queues it afresh",
        )
    elif wl.reserved_in is None and job.suspended is False:
        report.warn(
            "status.conditions",
            f"the Workload holds no quota (no QuotaReserved condition) while {key} is not suspended: "
            "gpufleet queues it afresh",
        )
    if job.template is None:
        return
    derived = objects.priority(key, job.template.labels, job.template.priority)
    given = wl.workload.priority
    if given is not None and given != derived:
        report.warn(
            "spec.priority",
            f"{given} is not the priority gpufleet derives from {key} ({derived}): Kueue's scheduler reads "
            "the Workload's, and so does gpufleet",
        )
