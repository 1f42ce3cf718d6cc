"""The taint eviction controller's rules (Kubernetes 1.34,
``pkg/controller/tainteviction/taint_eviction.go``): which of a node's taints hold a pod to the node's
``NoExecute`` rule, and how long the pod may stay.

``processPodOnNode``: a pod that does not tolerate every ``NoExecute`` taint of its node is deleted at once;
one that does, after the least ``tolerationSeconds`` of the tolerations that matched them
(``v1helper.GetMatchingTolerations``: the first toleration matching each taint, in the pod's order;
``getMinTolerationTime``: one of 0 or less is 0; none set: forever, nothing scheduled). The pod's
tolerations are those it was admitted with (``model.default_toleration_seconds``).

A deletion once scheduled is kept (``processPodOnNode`` against ``TimedWorkerQueue.GetWorkerUnsafe``, and
``AddWork`` adds no work for a pod that has one): a later look at the pod (a second taint it tolerates
for less, a taint taken off while another stays) leaves it as it was, unless it comes at the instant the
deletion was scheduled; only a taint the pod does not tolerate (at once), or none left to hold it (every
one tolerated forever, no ``NoExecute`` taint), replaces or cancels it (``process_pod_on_node``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpufleet.model.default_toleration_seconds import with_default_tolerations
from gpufleet.model.node import NO_EXECUTE, Taint, Toleration
from gpufleet.model.pod import Pod

#: the reason of a pod the taint eviction controller deleted (its ``DisruptionTarget`` condition's
#: ``DeletionByTaintManager``)
TAINT_EVICTION = "TaintManagerEviction"


def no_execute_taints(taints: Iterable[Taint]) -> tuple[Taint, ...]:
    """``getNoExecuteTaints``: the taints of effect ``NoExecute``, in order."""
    return tuple(t for t in taints if t.effect == NO_EXECUTE)


def matching_tolerations(
    taints: Iterable[Taint], tolerations: tuple[Toleration, ...]
) -> tuple[Toleration, ...] | None:
    """``GetMatchingTolerations``: for each taint the first toleration that tolerates it; None where one
    taint is tolerated by none."""
    used: list[Toleration] = []
    for taint in taints:
        match = next((t for t in tolerations if t.tolerates(taint)), None)
        if match is None:
            return None
        used.append(match)
    return tuple(used)


def min_toleration_s(tolerations: Iterable[Toleration]) -> float | None:
    """``getMinTolerationTime``: the least ``tolerationSeconds`` of the tolerations (0 or less: 0; no
    toleration at all: 0); None where none sets it (upstream's -1: tolerated forever)."""
    tolerations = tuple(tolerations)
    if not tolerations:
        return 0.0
    seconds = [t.toleration_seconds for t in tolerations if t.toleration_seconds is not None]
    return None if not seconds else float(max(min(seconds), 0))


def eviction_delay_s(tolerations: tuple[Toleration, ...], taints: Iterable[Taint]) -> float | None:
    """``processPodOnNode``'s first look at a pod with these tolerations on a node with these taints (no
    deletion scheduled yet): after how many seconds the pod is deleted (0: at once, a ``NoExecute`` taint it
    does not tolerate); None where it stays (no ``NoExecute`` taint, or every one tolerated forever)."""
    first = process_pod_on_node(None, tolerations, taints, 0.0)
    return None if first is None else first.fire_s


def toleration_s(pod: Pod, taints: Iterable[Taint]) -> float | None:
    """``eviction_delay_s`` of the pod, with the tolerations ``DefaultTolerationSeconds`` admitted it with,
    on a node with these taints."""
    return eviction_delay_s(with_default_tolerations(pod.tolerations), taints)


@dataclass(frozen=True)
class ScheduledDeletion:
    """A pod's work in the controller's ``TimedWorkerQueue``: when it was scheduled (``CreatedAt``) and
    when it deletes the pod (``FireAt``), in seconds of the run's clock."""

    created_s: float
    fire_s: float


def process_pod_on_node(
    scheduled: ScheduledDeletion | None,
    tolerations: tuple[Toleration, ...],
    taints: Iterable[Taint],
    now: float,
) -> ScheduledDeletion | None:
    """``processPodOnNode`` at ``now`` for a pod with these tolerations (as admitted) on a node with these
    taints, the pod's deletion already ``scheduled`` or None: the deletion it has after (None: none, any
    scheduled cancelled). No ``NoExecute`` taint, or every one tolerated forever: cancelled. One it does
    not tolerate: at once, in place of any scheduled. Else the least ``tolerationSeconds`` matched
    (``minTolerationTime``): a deletion already scheduled is kept where its ``CreatedAt`` plus that time is
    before ``now`` plus it (``startTime.Add(minTolerationTime).Before(triggerTime)``, that is, scheduled
    before ``now``); else it is replaced by one firing that long after ``now``, its ``CreatedAt`` kept."""
    held = no_execute_taints(taints)
    if not held:
        return None
    used = matching_tolerations(held, tolerations)
    if used is None:
        return ScheduledDeletion(now, now)
    least = min_toleration_s(used)
    if least is None:
        return None
    if scheduled is None:
        return ScheduledDeletion(now, now + least)
    if scheduled.created_s + least < now + least:
        return scheduled
    return ScheduledDeletion(scheduled.created_s, now + least)
