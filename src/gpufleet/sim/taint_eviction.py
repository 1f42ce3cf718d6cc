"""The taint eviction controller on the simulator's clock (Kubernetes 1.34,
``pkg/controller/tainteviction/taint_eviction.go``): one scheduled deletion per pod, its ``TimedWorkerQueue``.

- ``handlePodUpdate``: a pod whose ``nodeName`` is set (bound by a scheduler, or by ``spec.nodeName``: the
  kubelet's admission, whether it admits the pod or rejects it, changes nothing of that) on a node with
  ``NoExecute`` taints (``taintedNodes``) is looked at (``processPodOnNode``, ``model.taint_eviction``).
- ``handleNodeUpdate``: a node whose ``NoExecute`` taints changed (``NodeUpdated``): each pod bound to it,
  in name order; with none left, each deletion scheduled for them is cancelled.
- a deletion fires (``deletePodHandler``): the pod, still there and not already being deleted, is deleted
  (its ``DisruptionTarget`` condition ``DeletionByTaintManager``): a running one gets its SIGTERM and grace
  period, one its kubelet rejected (Failed) goes at once. A pod deleted meanwhile (``handlePodUpdate``'s
  NotFound) has its deletion cancelled; a pod of the same name made again is another pod.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from gpufleet.control.clock import Clock, Priority
from gpufleet.model.default_toleration_seconds import DefaultTolerationSeconds, with_default_tolerations
from gpufleet.model.node import Taint
from gpufleet.model.taint_eviction import ScheduledDeletion, no_execute_taints, process_pod_on_node
from gpufleet.sim.cluster import InMemoryCluster
from gpufleet.sim.records import PodRecord


class TaintEviction:
    def __init__(
        self,
        clock: Clock,
        cluster: InMemoryCluster,
        records: dict[str, PodRecord],
        delete: Callable[[PodRecord], None],
        defaults: DefaultTolerationSeconds,
    ):
        """``delete``: the pod's deletion (``addConditionAndDeletePod``); ``defaults``: the tolerations
        the API server admitted pods with (``model.default_toleration_seconds``)."""
        self.clock = clock
        self.defaults = defaults
        self.cluster = cluster
        self.records = records
        self.delete = delete
        #: pod key -> the pod and its scheduled deletion (the queue's ``workers``)
        self.scheduled: dict[str, tuple[PodRecord, ScheduledDeletion]] = {}
        #: told (node, pod key) of each pod it deletes
        self.listeners: list[Callable[[str, str], None]] = []

    def _taints(self, node: str) -> tuple[Taint, ...]:
        state = self.cluster.state
        return state.nodes[state.index[node]].taints if node in state.index else ()

    def pod_on_node(self, rec: PodRecord, node: str) -> None:
        """``handlePodUpdate``: the pod's ``nodeName`` was set to ``node``; nothing where the node has no
        ``NoExecute`` taint (it is not in ``taintedNodes``)."""
        taints = self._taints(node)
        if no_execute_taints(taints):
            self._process(rec, taints)

    def node_taints_changed(self, node: str, before: Iterable[Taint]) -> None:
        """``NodeUpdated`` then ``handleNodeUpdate``: the node's taints were ``before``; where its
        ``NoExecute`` taints changed, each pod bound to it is looked at again."""
        taints = self._taints(node)
        if no_execute_taints(before) == no_execute_taints(taints):
            return
        state = self.cluster.state
        on = {a.pod.key for a in state.pods_on[state.index[node]].values()} if node in state.index else set()
        on |= {k for k, (rec, _) in self.scheduled.items() if rec.node == node}
        for key in sorted(on):
            self._process(self.records[key], taints)

    def _process(self, rec: PodRecord, taints: tuple[Taint, ...]) -> None:
        key = rec.pod.key
        held = self.scheduled.get(key)
        before = held[1] if held is not None and held[0] is rec else None
        after = process_pod_on_node(
            before, with_default_tolerations(rec.pod.tolerations, self.defaults), taints, self.clock.now
        )
        if after is None:
            self.scheduled.pop(key, None)
        elif after is not before:
            self.scheduled[key] = (rec, after)
            self.clock.at(after.fire_s, Priority.COMPLETION, partial(self._fire, rec, after))

    def _fire(self, rec: PodRecord, work: ScheduledDeletion) -> None:
        key = rec.pod.key
        held = self.scheduled.get(key)
        if held is None or held[0] is not rec or held[1] is not work:
            return  # cancelled, or replaced
        del self.scheduled[key]
        if rec.deleted_s is not None or rec.terminating or self.records.get(key) is not rec:
            return
        for listener in self.listeners:
            listener(rec.node or "", key)
        self.delete(rec)
