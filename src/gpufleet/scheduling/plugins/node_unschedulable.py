"""NodeUnschedulable (``pkg/scheduler/framework/plugins/nodeunschedulable``).

A node with ``spec.unschedulable`` rejects pods that do not tolerate the
``node.kubernetes.io/unschedulable:NoSchedule`` taint.

Queueing hints (``EventsToRegister``): a node added schedulable, or turned schedulable
(``isSchedulableAfterNodeChange``); the pod itself given the toleration
(``isSchedulableAfterPodTolerationChange``).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufleet.model.node import NO_SCHEDULE, UNSCHEDULABLE_TAINT_KEY, Node, Taint, tolerated
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import (
    EventPod,
    EventWithHint,
    QueueingHint,
    as_new,
    taint_events,
)
from gpufleet.scheduling.framework import StaticFilter
from gpufleet.scheduling.registry import register

REASON = "node(s) were unschedulable"
_TAINT = Taint(UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE)


@register
class NodeUnschedulable(StaticFilter):
    name = "NodeUnschedulable"
    origin = "kube-scheduler"

    def reject(self, pod: Pod, node: Node) -> str | None:
        if node.unschedulable and not tolerated(_TAINT, pod.tolerations):
            return REASON
        return None

    def reject_each(self, pod: Pod, nodes: list[Node]) -> list[str | None]:
        if tolerated(_TAINT, pod.tolerations):
            return [None] * len(nodes)
        return [REASON if node.unschedulable else None for node in nodes]

    def reads(self, pod: Pod) -> tuple[object, ...]:
        return (pod.tolerations,)

    def events_to_register(self) -> Sequence[EventWithHint]:
        return taint_events(after_node_change, after_toleration_change)


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """``isSchedulableAfterNodeChange``: a node added schedulable, or one that was unschedulable no more."""
    before, after = as_new(Node, old, new)
    if after.unschedulable or (before is not None and not before.unschedulable):
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def after_toleration_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """``isSchedulableAfterPodTolerationChange``: the pod itself now tolerates the unschedulable taint."""
    _, after = as_new(EventPod, old, new)
    if after.pod.key == pod.key and tolerated(_TAINT, after.pod.tolerations):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP
