"""PodGC's ``gcTerminating`` on the simulator's clock (Kubernetes 1.34, ``pkg/controller/podgc/
gc_controller.go``; the rule: ``model.out_of_service``): at each pass, every ``gcCheckPeriod`` (20 s, on the
clock's multiples), the pods being deleted on a NotReady node tainted ``node.kubernetes.io/out-of-service``
are marked Failed and deleted with no grace period: nothing waits for a kubelet that is not coming back.

A pass is taken only where it has something to do: it is armed, for PodGC's next pass, when a pod starts
being deleted on a NotReady node carrying the taint, and when such a node gets a taint (the out-of-service
one, or the node lifecycle controller's as it goes NotReady) with pods being deleted on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gpufleet.control.clock import Clock, Priority
from gpufleet.model.out_of_service import force_deleted_by_pod_gc
from gpufleet.sim.cluster import InMemoryCluster
from gpufleet.sim.records import PodRecord

#: PodGC's ``gcCheckPeriod``
POD_GC_PERIOD_S = 20.0


class TerminatingPodGC:
    def __init__(
        self,
        clock: Clock,
        cluster: InMemoryCluster,
        records: dict[str, PodRecord],
        force_delete: Callable[[PodRecord], None],
    ):
        """``force_delete``: ``markFailedAndDeletePod`` (Failed where not terminal, deleted at once)."""
        self.clock = clock
        self.cluster = cluster
        self.records = records
        self.force_delete = force_delete
        self._due: set[float] = set()  # the passes armed
        #: told each node whose pods a pass deleted
        self.listeners: list[Callable[[str], None]] = []

    def _terminating_on(self, node: str) -> list[PodRecord]:
        """The pods being deleted on the node, where ``gcTerminating`` deletes them, in name order."""
        state = self.cluster.state
        if node not in state.index:
            return []
        ready, taints = node not in self.cluster.not_ready, state.nodes[state.index[node]].taints
        recs = [self.records[k] for k in sorted(a.pod.key for a in state.pods_on[state.index[node]].values())]
        return [
            r for r in recs if force_deleted_by_pod_gc(r.terminating and r.deleted_s is None, ready, taints)
        ]

    def look(self, node: str | None) -> None:
        """Something ``gcTerminating`` reads changed on the node (a pod there being deleted, its taints):
        PodGC's next pass is armed where it will find a pod to delete there."""
        if node is None or node not in self.cluster.not_ready or not self._terminating_on(node):
            return
        at = math.ceil(self.clock.now / POD_GC_PERIOD_S) * POD_GC_PERIOD_S
        if at not in self._due:
            self._due.add(at)
            self.clock.at(at, Priority.COMPLETION, self._pass)

    def _pass(self) -> None:
        self._due.discard(self.clock.now)
        for node in sorted(self.cluster.not_ready):
            gone = self._terminating_on(node)
            for rec in gone:
                self.force_delete(rec)
            if gone:
                for listener in self.listeners:
                    listener(node)
