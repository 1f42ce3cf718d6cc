"""Pod records that count, per workload, the writes to what the HPA controller reads of a pod.

On every sync the HPA controller reads each pod of its target, its object and status
(``control.workload_autoscalers.HPA_READS``), to tell whether anything changed since the last sync.
The simulator makes the records of a Deployment's or ReplicaSet's pods ``WatchedPodRecord``s, whose
writes to those fields move their workload's ``StatusWatch``: a sync that finds the target's pods and
its watch as they were (``Simulation.target_pods_version``) reads none of them. Other records are plain
``PodRecord``s and pay nothing for it.
"""

from __future__ import annotations

from collections.abc import Hashable

from gpufleet.control.workload_autoscalers import HPA_READS
from gpufleet.sim.records import PodRecord

WATCHED = frozenset(HPA_READS)


class StatusWatch:
    """``version`` moves with every write to a watched field of a record it watches; ``members`` and
    ``complete``: whether every pod of the workload had a record it watches, as of ``members``."""

    __slots__ = ("complete", "members", "version")

    def __init__(self) -> None:
        self.version = 0
        self.members: Hashable = None
        self.complete = False


class WatchedPodRecord(PodRecord):
    """A pod record whose writes to ``WATCHED`` fields move ``watch.version``."""

    watch: StatusWatch | None = None

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        if name in WATCHED and self.watch is not None:
            self.watch.version += 1
