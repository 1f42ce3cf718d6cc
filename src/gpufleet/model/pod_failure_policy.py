"""A Job's ``spec.podFailurePolicy`` (``batch/v1``, GA in 1.31) and how a failed pod matches it
(``pkg/controller/job/pod_failure_policy.go``, ``matchPodFailurePolicy``).

The rules are tried in order; the first whose ``onExitCodes`` or ``onPodConditions`` matches decides:
``FailJob`` ends the Job Failed (reason ``PodFailurePolicy``) with a message naming the container or
the condition, ``Ignore`` does not count the failure toward ``backoffLimit``, ``Count`` counts it as
without a policy, ``FailIndex`` fails the pod's index (only with ``backoffLimitPerIndex``). A rule of an
action or operator the matcher does not know is skipped.

What the simulation tells of a failed pod (``failed_pod``): the ``DisruptionTarget`` condition
(status ``True``) of a pod a kube-scheduler preempted (reason ``PreemptionByScheduler``), one the
Eviction API evicted (``kubectl drain``, the MIG manager: ``EvictionByEvictionAPI``) and one whose node
is gone (the pod garbage collector's ``DeletionByPodGC``); and its first container's terminated state
(``ContainerExit``: exit code and reason) where the kubelet would report one:

- a container OOM-killed (gpufleet's ``OOMKilled``, CUDA out of memory under ``restartPolicy: Never``):
  exit code 137 (128 + SIGKILL), reason ``OOMKilled``, as the runtime reports an OOM kill;
- a pod deleted, evicted or preempted once its container ran: the kubelet stops the container with
  SIGTERM and, the simulation's process never exiting on its own, SIGKILL once the grace period is over
  (``killContainer``): exit code 137, reason ``Error`` (the runtime's reason for a non-zero exit);
- a container whose work ends with ``gpufleet.io/exit-code`` (``kube.pod_annotations``) non-zero under
  ``restartPolicy: Never``: that code, reason ``Error``; one that succeeds: 0, ``Completed``.

Without a code (no ``onExitCodes`` rule matches them): a process killed by a GPU or node fault
(``sim.faults``: an XID crash has no standard exit code, reason ``Error``), a hung process the liveness
probe had killed, a pod whose node is gone (PodGC marks it Failed; no kubelet reports its containers), a
pod the kubelet rejected at admission, and a container that never started.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

#: ``PodFailurePolicyAction``
FAIL_JOB, IGNORE, COUNT, FAIL_INDEX = "FailJob", "Ignore", "Count", "FailIndex"
ACTIONS = (COUNT, FAIL_INDEX, FAIL_JOB, IGNORE)  # ``supportedPodFailurePolicyActions``, sorted
#: ``PodFailurePolicyOnExitCodesOperator``
IN, NOT_IN = "In", "NotIn"
OPERATORS = (IN, NOT_IN)
CONDITION_STATUSES = ("False", "True", "Unknown")
DISRUPTION_TARGET = "DisruptionTarget"
#: ``JobReasonPodFailurePolicy``: the reason of the Failed condition a ``FailJob`` rule sets
REASON_POD_FAILURE_POLICY = "PodFailurePolicy"

#: the simulation's reasons for a pod that ended Failed which carry the ``DisruptionTarget`` condition,
#: with that condition's reason (``k8s.io/api/core/v1``: ``PodReasonPreemptionByScheduler``,
#: ``EvictionByEvictionAPI``, ``PodReasonDeletionByPodGC``; the taint eviction controller's
#: ``DeletionByTaintManager``, ``tainteviction/taint_eviction.go``)
DISRUPTION_REASONS: Mapping[str, str] = {
    "Preempted": "PreemptionByScheduler",
    "Evicted": "EvictionByEvictionAPI",
    "NodeDeleted": "DeletionByPodGC",
    "TaintManagerEviction": "DeletionByTaintManager",
}


@dataclass(frozen=True)
class OnExitCodes:
    """``PodFailurePolicyOnExitCodesRequirement``."""

    operator: str
    values: tuple[int, ...]
    container_name: str | None = None


@dataclass(frozen=True)
class OnPodCondition:
    """``PodFailurePolicyOnPodConditionsPattern``."""

    type: str
    status: str = "True"


@dataclass(frozen=True)
class PodFailurePolicyRule:
    """``PodFailurePolicyRule``: ``on_exit_codes`` or ``on_pod_conditions``."""

    action: str
    on_exit_codes: OnExitCodes | None = None
    on_pod_conditions: tuple[OnPodCondition, ...] = ()


@dataclass(frozen=True)
class PodFailurePolicy:
    rules: tuple[PodFailurePolicyRule, ...] = ()


#: 128 + SIGKILL (9): the exit code the runtime reports for a container killed (OOM, after the grace period)
SIGKILL_EXIT_CODE = 137
#: the reasons of a terminated container's state (containerd's CRI: ``OOMKilled`` for an OOM kill, else
#: ``Completed`` for exit code 0 and ``Error`` for any other)
OOM_KILLED, COMPLETED, ERROR = "OOMKilled", "Completed", "Error"
#: the reason the kubelet gives a container it cannot find any more (its node rebooted under it):
#: ``kubecontainer.ContainerReasonStatusUnknown``, with exit code 137
CONTAINER_STATUS_UNKNOWN = "ContainerStatusUnknown"


@dataclass(frozen=True, slots=True)
class ContainerExit:
    """A container's status: its name and, once terminated (``state.terminated``), its exit code (None:
    not terminated) and the reason of its terminated state (``OOMKilled``, ``Error``, ``Completed``)."""

    name: str
    exit_code: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class FailedPod:
    """What ``matchPodFailurePolicy`` reads of a failed pod: its name, its conditions
    (``(type, status)``) and its containers' and init containers' statuses."""

    namespace: str
    name: str
    conditions: tuple[tuple[str, str], ...] = ()
    container_statuses: tuple[ContainerExit, ...] = ()
    init_container_statuses: tuple[ContainerExit, ...] = ()


class PolicyMatch(NamedTuple):
    """``matchPodFailurePolicy``'s answer: the Job's failure message (a ``FailJob`` rule matched),
    whether the failure counts toward ``backoffLimit``, and the action of the rule that matched."""

    job_failure_message: str | None
    count_failed: bool
    action: str | None


def failed_pod(
    namespace: str, name: str, reason: str | None, terminated: ContainerExit | None = None
) -> FailedPod:
    """A pod of the simulation that ended Failed with ``reason`` (``PodRecord.reason``), as the Job
    controller sees it: the ``DisruptionTarget`` condition where ``reason`` is a disruption's, and its
    first container's terminated state ``terminated`` where it has one (None: no exit code)."""
    disrupted = reason in DISRUPTION_REASONS
    conditions = ((DISRUPTION_TARGET, "True"),) if disrupted else ()
    return FailedPod(namespace, name, conditions, () if terminated is None else (terminated,))


def match_pod_failure_policy(policy: PodFailurePolicy | None, pod: FailedPod) -> PolicyMatch:
    """``matchPodFailurePolicy`` (``JobBackoffLimitPerIndex`` on, as in 1.34): the first rule the pod
    matches, by its containers' exit codes or by its conditions; a rule of an unknown action is skipped."""
    if policy is None:
        return PolicyMatch(None, True, None)
    for index, rule in enumerate(policy.rules):
        message: str | None = None
        if rule.on_exit_codes is not None:
            container = _match_on_exit_codes(pod, rule.on_exit_codes)
            if container is None:
                continue
            message = (
                f"Container {container.name} for pod {pod.namespace}/{pod.name} failed with exit code "
                f"{container.exit_code} matching {rule.action} rule at index {index}"
            )
        elif rule.on_pod_conditions:
            condition = _match_on_pod_conditions(pod, rule.on_pod_conditions)
            if condition is None:
                continue
            message = (
                f"Pod {pod.namespace}/{pod.name} has condition {condition} matching {rule.action} rule at "
                f"index {index}"
            )
        else:
            continue
        if rule.action == IGNORE:
            return PolicyMatch(None, False, IGNORE)
        if rule.action in (FAIL_INDEX, COUNT):
            return PolicyMatch(None, True, rule.action)
        if rule.action == FAIL_JOB:
            return PolicyMatch(message, True, FAIL_JOB)
    return PolicyMatch(None, True, None)


def _match_on_exit_codes(pod: FailedPod, requirement: OnExitCodes) -> ContainerExit | None:
    """``matchOnExitCodes``: the first terminated container (app containers, then init containers) of a
    non-zero exit code the requirement matches."""
    for statuses in (pod.container_statuses, pod.init_container_statuses):
        for status in statuses:
            code = status.exit_code
            if code is None or code == 0:
                continue  # still terminating, or succeeded
            if requirement.container_name is not None and requirement.container_name != status.name:
                continue
            if _operator_matches(code, requirement):
                return status
    return None


def _operator_matches(code: int, requirement: OnExitCodes) -> bool:
    """``isOnExitCodesOperatorMatching``; an unknown operator matches nothing."""
    if requirement.operator == IN:
        return code in requirement.values
    if requirement.operator == NOT_IN:
        return code not in requirement.values
    return False


def _match_on_pod_conditions(pod: FailedPod, patterns: tuple[OnPodCondition, ...]) -> str | None:
    """``matchOnPodConditions``: the type of the first of the pod's conditions a pattern matches."""
    for kind, status in pod.conditions:
        if any(p.type == kind and p.status == status for p in patterns):
            return kind
    return None
