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
gpufleet). An admitted Workload's ``status.admission`` (``model.kueue_dumped.DumpedAdmission``: its
ClusterQueue, each pod set's flavors, ``count`` and ``resourceUsage``) holds that quota from the run's start
(``control.kueue_queues``), its pods on their nodes; where its ClusterQueue or a flavor is not in the input
(or the ClusterQueue has no quota of that flavor and resource), its Job is suspended, or it holds quota
without being ``Admitted``, a warning names the Workload and the field, and gpufleet queues it afresh. A
``topologyAssignment`` is a warning (its pods keep their nodes). A ``Requeued=False`` condition is read as
Kueue's workload controller acts on it (``REQUEUED_BY_KUEUE``); one of another reason is a warning. Not
carried: ``spec.maximumExecutionTimeSeconds``, ``status.admissionChecks`` (the run's checks start Pending) and
``status.accumulatedPastExexcutionTimeSeconds``: warnings. The rest of its spec (``podSets``) and status
(``reclaimablePods``, ``resourceRequests``) Kueue derives from its job, and so does gpufleet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpufleet.kube import nodes, resource_lists
from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.problems import Reporter, invalid
from gpufleet.model.kueue import QUEUE_NAME_LABEL, KueueObjects
from gpufleet.model.kueue_dumped import DumpedAdmission, DumpedPodSetAdmission, DumpedWorkload
from gpufleet.model.pod import Pod
from gpufleet.scheduling.kueue.workload import POD_SET

#: the label a Kueue pod group's pods carry: its Workload's name (``podconstants.GroupNameLabel``)
POD_GROUP_NAME_LABEL = "kueue.x-k8s.io/pod-group-name"
WORKLOAD = "Workload"
#: the Workload's conditions read (``workload_types.go``)
EVICTED = "Evicted"
QUOTA_RESERVED = "QuotaReserved"
ADMITTED = "Admitted"
REQUEUED = "Requeued"
#: the reasons of a ``Requeued=False`` condition that Kueue's workload controller turns ``True`` by itself
#: (``workload_controller.go`` ``Reconcile``): once ``requeueAt`` passes for one evicted by the PodsReady
#: timeout or an admission check (``BackoffFinished``; gpufleet waits for ``requeueAt``), at once for one
#: deactivated that is active again (``Reactivated``; one still inactive stays so) and once its stopped
#: queue runs again (gpufleet's queues run: ``stopPolicy`` is not modelled)
REQUEUED_BY_KUEUE = (
    "PodsReadyTimeout",
    "AdmissionCheck",
    "Deactivated",
    "ClusterQueueStopped",
    "LocalQueueStopped",
)
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
    _check_requeued(status, report)
    count, requeue_at = _requeue_state(mapping(status.get("requeueState")), report)
    for path, value in (
        ("spec.maximumExecutionTimeSeconds", spec.get("maximumExecutionTimeSeconds")),
        ("status.admissionChecks", status.get("admissionChecks")),
        ("status.accumulatedPastExexcutionTimeSeconds", status.get("accumulatedPastExexcutionTimeSeconds")),
    ):
        if value not in (None, [], 0):
            report.not_modelled(path)
    name = f"{meta.namespace}/{meta.name}"
    reserved_in = None
    admission = mapping(status.get("admission"))
    if QUOTA_RESERVED in conditions:
        reserved_in = str(admission.get("clusterQueue") or "")
    admitted = _admission(name, admission, conditions, report) if admission else None
    workload = DumpedWorkload(name, created, active, count, requeue_at, evicted, priority, admitted)
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


def _admission(
    name: str,
    admission: Mapping[str, Any],
    conditions: Mapping[str, tuple[str, float | None]],
    report: Reporter,
) -> DumpedAdmission | None:
    """``status.admission``, carried where the Workload is admitted (``QuotaReserved`` and ``Admitted``
    ``True``: Kueue's cache counts a Workload holding quota, ``HasQuotaReservation``; its job runs once it is
    ``Admitted``); a count that is no int32 or a quantity that is none is an error, a ``topologyAssignment``
    a warning."""
    pod_sets = []
    for i, assignment in enumerate(items(admission.get("podSetAssignments"))):
        at = f"status.admission.podSetAssignments[{i}]"
        count = assignment.get("count")
        if count is not None and (
            not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= _INT32_MAX
        ):
            report.error(f"{at}.count", invalid(count, "must be an int32, not negative"))
            count = None
        flavors = {str(r): str(f) for r, f in mapping(assignment.get("flavors")).items()}
        usage = resource_lists.read(assignment.get("resourceUsage"), report, f"{at}.resourceUsage")
        if assignment.get("topologyAssignment"):
            report.not_modelled(
                f"{at}.topologyAssignment",
                note="its pods keep the nodes they are bound to; a pod created later goes where its "
                "scheduler puts it within its flavors",
            )
        pod_sets.append(DumpedPodSetAdmission(str(assignment.get("name") or POD_SET), count, flavors, usage))
    cluster_queue = str(admission.get("clusterQueue") or "")
    if QUOTA_RESERVED not in conditions:
        report.warn(
            "status.admission",
            f"Workload {name} has no QuotaReserved condition True: Kueue's cache does not count its "
            "admission (HasQuotaReservation); ignored",
        )
        return None
    if ADMITTED not in conditions:
        report.warn(
            "status.conditions",
            f"Workload {name} holds quota of ClusterQueue {cluster_queue or '(none named)'} but is not "
            "Admitted (its admission checks' states are not carried): gpufleet queues it afresh",
        )
        return None
    return DumpedAdmission(cluster_queue, tuple(pod_sets), conditions[ADMITTED][1])


def _check_requeued(status: Mapping[str, Any], report: Reporter) -> None:
    """The ``Requeued`` condition: ``False`` keeps the Workload out of its queue
    (``backoffWaitingTimeExpired``, ``pkg/cache/queue/cluster_queue.go``) until the workload controller sets
    it ``True``; for a reason in ``REQUEUED_BY_KUEUE`` gpufleet does as that controller does, for any other it
    cannot tell when: a warning."""
    for i, condition in enumerate(items(status.get("conditions"))):
        reason = str(condition.get("reason") or "")
        if (
            condition.get("type") != REQUEUED
            or condition.get("status") != "False"
            or reason in REQUEUED_BY_KUEUE
        ):
            continue
        report.not_modelled(
            f"status.conditions[{i}]",
            f"Requeued=False ({reason or 'no reason'})",
            note="Kueue keeps the Workload out of its queue until its workload controller sets it True; "
            "gpufleet queues it from the start",
        )


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
        objects.dumped[key] = _check(wl, key, job, objects)


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


def _check(wl: ReadWorkload, key: str, job: Queued, objects: KueueObjects) -> DumpedWorkload:
    """The Workload against its job and the input's Kueue objects: the job decides its queue, suspension and
    derived priority; where the Workload says otherwise, a warning. Its admission is kept where it agrees with
    them (``_admission_agrees``); else the Workload is queued afresh."""
    report = wl.report
    dumped = wl.workload
    if dumped.admission is not None and (
        job.suspended is True or not _admission_agrees(wl, dumped.admission, objects)
    ):
        dumped = replace(dumped, admission=None)
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
        return dumped
    derived = objects.priority(key, job.template.labels, job.template.priority)
    given = wl.workload.priority
    if given is not None and given != derived:
        report.warn(
            "spec.priority",
            f"{given} is not the priority gpufleet derives from {key} ({derived}): Kueue's scheduler reads "
            "the Workload's, and so does gpufleet",
        )
    return dumped


def _admission_agrees(wl: ReadWorkload, admission: DumpedAdmission, objects: KueueObjects) -> bool:
    """Whether the admission's ClusterQueue is one of the input and each flavor it assigns a ResourceFlavor
    that the ClusterQueue has quota of for its resource (Kueue's cache counts the usage there); each
    disagreement is a warning naming the Workload and its field."""
    name = wl.workload.name
    cq = objects.cluster_queues.get(admission.cluster_queue)
    if cq is None:
        wl.report.warn(
            "status.admission.clusterQueue",
            f"Workload {name} is admitted to ClusterQueue {admission.cluster_queue!r}, which is not in the "
            "input: gpufleet queues it afresh",
        )
        return False
    agrees = True
    for i, ps in enumerate(admission.pod_sets):
        for resource, flavor in sorted(ps.flavors.items()):
            path = f"status.admission.podSetAssignments[{i}].flavors.{resource}"
            if flavor not in objects.flavors:
                detail = f"flavor {flavor!r} is no ResourceFlavor of the input"
            elif cq.quota(flavor, resource) is None:
                detail = f"ClusterQueue {cq.name} has no quota of {resource} in flavor {flavor!r}"
            else:
                continue
            wl.report.warn(path, f"Workload {name} is admitted with {detail}: gpufleet queues it afresh")
            agrees = False
    return agrees
