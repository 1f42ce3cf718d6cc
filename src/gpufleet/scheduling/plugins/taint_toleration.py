"""TaintToleration (``pkg/scheduler/framework/plugins/tainttoleration``), Kubernetes 1.34.10.

Filter: a ``NoSchedule``/``NoExecute`` taint the pod does not tolerate rejects the node,
unresolvably, with ``node(s) had untolerated taint(s)`` (1.34.0 printed the first such taint,
``node(s) had untolerated taint {key: value}``; 1.34.2 and later name none). Score: the number of
``PreferNoSchedule`` taints not tolerated (by tolerations with an empty or
``PreferNoSchedule`` effect), normalised in reverse so fewer is better.

Queueing hints (``EventsToRegister``): a node added or its taints changed where the pod tolerates the
new taints but did not the old ones (``isSchedulableAfterNodeChange``); the pod itself updated with a
toleration (``isSchedulableAfterPodTolerationChange``).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from gpufleet.cluster.state import IntArray
from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Node, tolerated
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import (
    EventPod,
    EventWithHint,
    QueueingHint,
    as_new,
    taint_events,
)
from gpufleet.scheduling.framework import StaticFilter, StaticScore, default_normalize
from gpufleet.scheduling.registry import register

UNTOLERATED = "node(s) had untolerated taint(s)"


def untolerated(pod: Pod, node: Node) -> bool:
    """The node has a ``NoSchedule`` or ``NoExecute`` taint the pod does not tolerate."""
    return any(
        taint.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerated(taint, pod.tolerations)
        for taint in node.taints
    )


@register
class TaintToleration(StaticFilter, StaticScore):
    name = "TaintToleration"
    origin = "kube-scheduler"

    def reject(self, pod: Pod, node: Node) -> str | None:
        return UNTOLERATED if untolerated(pod, node) else None

    def reject_each(self, pod: Pod, nodes: list[Node]) -> list[str | None]:
        """``reject``, judged once per distinct set of taints (an untainted node passes)."""
        return self.reject_alike(pod, nodes, attrgetter("taints"), {(): None})

    def reads(self, pod: Pod) -> tuple[object, ...]:
        return (pod.tolerations,)

    def raw(self, pod: Pod, node: Node) -> int:
        prefer = tuple(t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE))
        return sum(1 for t in node.taints if t.effect == PREFER_NO_SCHEDULE and not tolerated(t, prefer))

    def normalize(self, raw: IntArray) -> IntArray:
        return default_normalize(raw, reverse=True)

    def events_to_register(self) -> Sequence[EventWithHint]:
        return taint_events(after_node_change, after_toleration_change)


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """``isSchedulableAfterNodeChange``: the node's taints were untolerated (or it is new) and are not now."""
    before, after = as_new(Node, old, new)
    was = before is None or untolerated(pod, before)
    return QueueingHint.QUEUE if was and not untolerated(pod, after) else QueueingHint.SKIP


def after_toleration_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """``isSchedulableAfterPodTolerationChange``: the pod updated is the unschedulable pod itself."""
    _, after = as_new(EventPod, old, new)
    return QueueingHint.QUEUE if after.pod.key == pod.key else QueueingHint.SKIP
