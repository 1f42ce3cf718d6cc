"""NodeName (``pkg/scheduler/framework/plugins/nodename``): ``spec.nodeName`` must match. Its queueing
hint (``EventsToRegister``): a node added moves the pods it rejected, always (no hint function)."""

from __future__ import annotations

from collections.abc import Sequence

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import NODE_ADD, EventWithHint
from gpufleet.scheduling.framework import StaticFilter
from gpufleet.scheduling.registry import register

REASON = "node(s) didn't match the requested node name"


@register
class NodeName(StaticFilter):
    name = "NodeName"
    origin = "kube-scheduler"

    def reject(self, pod: Pod, node: Node) -> str | None:
        if pod.node_name and pod.node_name != node.name:
            return REASON
        return None

    def reject_each(self, pod: Pod, nodes: list[Node]) -> list[str | None]:
        if not pod.node_name:
            return [None] * len(nodes)
        return super().reject_each(pod, nodes)

    def reads(self, pod: Pod) -> tuple[object, ...]:
        return (pod.node_name,)

    def events_to_register(self) -> Sequence[EventWithHint]:
        return (EventWithHint(NODE_ADD),)
