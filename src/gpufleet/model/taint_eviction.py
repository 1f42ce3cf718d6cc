"""The taint eviction controller's rules (Kubernetes 1.34,
``pkg/controller/tainteviction/taint_eviction.go``): which of a node's taints hold a pod to the node's
``NoExecute`` rule, and how long the pod may stay.

``processPodOnNode``: a pod that does not tolerate every ``NoExecute`` taint of its node is deleted at once;
one that does, after the least ``tolerationSeconds`` of the tolerations that matched them
(``v1helper.GetMatchingTolerations``: the first toleration matching each taint, in the pod's order;
``getMinTolerationTime``: one of 0 or less is 0; none set: forever, nothing scheduled). The pod's
tolerations are those it was admitted with (``model.default_toleration_seconds``)."""

from __future__ import annotations

from collections.abc import Iterable

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
    """``processPodOnNode`` for a pod with these tolerations on a node with these taints: after how many
    seconds the pod is deleted (0: at once, a ``NoExecute`` taint it does not tolerate); None where it
    stays (no ``NoExecute`` taint, or every one tolerated forever: any deletion scheduled is cancelled)."""
    held = no_execute_taints(taints)
    if not held:
        return None
    used = matching_tolerations(held, tolerations)
    return 0.0 if used is None else min_toleration_s(used)


def toleration_s(pod: Pod, taints: Iterable[Taint]) -> float | None:
    """``eviction_delay_s`` of the pod, with the tolerations ``DefaultTolerationSeconds`` admitted it with,
    on a node with these taints."""
    return eviction_delay_s(with_default_tolerations(pod.tolerations), taints)
