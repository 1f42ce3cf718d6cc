"""PrioritySort (``pkg/scheduler/framework/plugins/queuesort``): higher priority first, then
the earlier queue timestamp."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufleet.scheduling.framework import QueueSort
from gpufleet.scheduling.registry import register

if TYPE_CHECKING:
    from gpufleet.scheduling.gangs import GangView
    from gpufleet.scheduling.queue import QueuedPod


@register
class PrioritySort(QueueSort):
    name = "PrioritySort"
    origin = "kube-scheduler"

    def sort_key(self, qp: QueuedPod, gangs: GangView) -> tuple[object, ...]:
        return (-qp.pod.priority, qp.timestamp, qp.seq)
