"""NodeUnschedulable (``pkg/scheduler/framework/plugins/nodeunschedulable``).

A node with ``spec.unschedulable`` rejects pods that do not tolerate the
``node.kubernetes.io/unschedulable:NoSchedule`` taint.
"""

from __future__ import annotations

from gpufleet.model.node import NO_SCHEDULE, UNSCHEDULABLE_TAINT_KEY, Node, Taint, tolerated
from gpufleet.model.pod import Pod
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
