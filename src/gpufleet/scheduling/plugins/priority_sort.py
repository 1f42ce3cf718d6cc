"""PrioritySort (``pkg/scheduler/framework/plugins/queuesort``): higher priority first, then
the earlier queue timestamp."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufleet.scheduling.framework import Plugin

if TYPE_CHECKING:
    from gpufleet.scheduling.gangs import GangView
    from gpufleet.scheduling.queue import QueuedPod


class PrioritySort(Plugin):
    name = "PrioritySort"
    points = frozenset({"queueSort"})

    def sort_key(self, qp: QueuedPod, gangs: GangView) -> tuple[object, ...]:
        return (-qp.pod.priority, qp.timestamp, qp.seq)
