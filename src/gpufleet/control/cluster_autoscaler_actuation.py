"""cluster-autoscaler's scale-down actuation: what happens to the nodes a scan chose to delete
(``core/scaledown/actuation``: ``Actuator.StartDeletion``, ``GroupDeletionScheduler``, ``Evictor``).

Every node chosen is marked to be deleted first (``taintNodesSync``: the ToBeDeleted taint, a cordon here:
no pod is scheduled there any more) and counted as being deleted (``NodeDeletionTracker.StartDeletion``: no
scan chooses it again, and the deletions in progress count it). Nothing more happens to it for
``--node-delete-delay-after-taint`` (5 s; ``deleteNodesAsync``' sleep, empty nodes and drained ones alike;
the loop's scans go on meanwhile); then its pods are read (``createSnapshot``: a pod gone meanwhile is not
evicted, one bound meanwhile is, an expendable one never) and each node is looked at again
(``GetPodsToMove``, the second look): a node where a pod now blocks a drain (not replicated, a kube-system
pod, ``safe-to-evict: "false"``, a PodDisruptionBudget with no disruption left now: a drained node's
budgets are read then, an empty node's drain has none, as upstream passes no ``remainingPdbTracker``) is
given back (``failed to get pods to move on node``), and so is a node chosen empty that now has a pod to
move (``node is not empty``). Each drained node left is drained (``prepareNodeForDeletion``): its pods
evicted priority group by priority group, each group's refused evictions retried and its pods waited for
until none is on the node (``autoscaling.eviction``); its DaemonSet pods evicted with them best effort, under
``--daemonset-eviction-for-occupied-nodes`` (``DrainNode``). An empty node (no pod to move:
``deleteAsyncEmpty``) has only its DaemonSet pods evicted, best effort, under
``--daemonset-eviction-for-empty-nodes`` (``EvictDaemonSetPods``). The expendable pods (absent from the
actuator's snapshot, ``createSnapshot``) and the DaemonSet pods not evicted are left to end with the node;
no evicted DaemonSet pod comes back, as the DaemonSet controller does not tolerate the ToBeDeleted taint
(``NodeShouldRunDaemonPod``; gpufleet's DaemonSet controller never replaces a pod on its node). A node
annotated ``delay-deletion.cluster-autoscaler.kubernetes.io/...`` then waits ``--node-deletion-delay-timeout``
(``WaitForDelayDeletion``: nobody takes the annotation off in a run). The node is deleted then, but a
``zeroOrMaxNodeScaling`` group's nodes, which are queued until the last of the batch is ready and deleted
together (``addToBatcher``); with ``--node-deletion-batcher-interval`` above 0, the nodes of a group due for
deletion within that long of the first are deleted together, that long after it
(``NodeDeletionBatcher.AddNodes``). Each node deleted is counted then (``removed``: what
``RegisterAndRecordSuccessfulScaleDownEvent`` counts in ``metrics.RegisterScaleDown``), by
``nodeScaleDownReason``: ``unready`` for a node NotReady when its deletion started, else ``underutilized``
for one drained, ``empty`` for the others.

A node the second look gives back, or whose drain fails (an eviction still refused after
``--max-pod-eviction-time``, or pods still there after the group's wait), has its deletion aborted
(``AbortNodeDeletion``): the mark is taken off (``CleanToBeDeleted``), a ``scale-down-failed`` event says
why (``ScaleDownFailed``: ``failed to drain and delete node: ...``, or ``failed to delete empty node: ...``
for a node chosen empty; the second look's words ``GetPodsToMove for "<node>" returned error: <the
blocking pod>`` and ``failed to delete empty node "<node>", new pods scheduled``), it is not counted scaled
down, and the nodes of its group queued for the same batch, and those of it ready later, are aborted with it
(``couldn't scale down other nodes in this node group``, a ``zeroOrMaxNodeScaling`` group's only: another
group's nodes are handed to the batcher one by one and go on). The pods already evicted go on terminating.
No backoff follows: upstream's ``RegisterFailedScaleDown`` only counts a cloud provider's failure to delete,
and ``--scale-down-delay-after-failure`` starts only from a scale-down that fails as it starts
(``NodeDeletionTracker.EndDeletion`` records the result, which only the scale-down status processors read);
the node is a candidate again at the next scan. An empty node's DaemonSet evictions never fail its deletion.

``--dynamic-node-delete-delay-after-taint-enabled`` (off by default) makes the delay twice the taint's
measured round trip, which gpufleet's taint does not take: 0 (``kube.gpufleet_kinds`` warns). The mark is a
cordon here: the pods that can land on a node during the delay are those bound to it by name
(``spec.nodeName``), those tolerating ``node.kubernetes.io/unschedulable``, and those a scheduler had
assumed there before the mark.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from gpufleet.autoscaling.drainability import DeleteOptions
from gpufleet.autoscaling.eviction import (
    EVICTION_RETRY_S,
    POD_EVICTION_HEADROOM_S,
    WAIT_POLL_S,
    EvictionGroup,
    drain_rules,
    eviction_grace_s,
    group_by_priority,
    pods_to_evict,
)
from gpufleet.autoscaling.expendable import expendable_on
from gpufleet.autoscaling.scale_down import CreatedAt, SnapshotPods, long_terminating_on, pods_to_move
from gpufleet.control.clock import Clock, Priority
from gpufleet.control.cluster_autoscaler_events import ScaleEvent
from gpufleet.control.port import NodeGroupPort
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.pod import Pod
from gpufleet.model.simulation import AutoscalerSettings

#: what the other nodes of a group whose deletion failed are told (``AbortNodeDeletion``, ``addToBatcher``)
GROUP_FAILED = "couldn't scale down other nodes in this node group"


@dataclass(frozen=True)
class Removal:
    """A node a scan chose to delete: its group, whether that group is deleted only whole
    (``zeroOrMaxNodeScaling``), and whether it is deleted with drain (``StartDeletionWithDrain``: pods to
    move)."""

    node: str
    group: str
    atomic: bool
    drain: bool


@dataclass(frozen=True)
class Removed:
    """A node deleted (``RegisterAndRecordSuccessfulScaleDownEvent``): when, and why
    (``nodeScaleDownReason``: ``empty``, ``underutilized`` or ``unready``)."""

    t_s: float
    node: str
    reason: str


@dataclass
class _Drain:
    removal: Removal
    groups: list[EvictionGroup]
    #: the pods of the group under way evicted and waited for, each with when its grace period is over
    evicted: dict[str, float] = field(default_factory=dict)


class Actuator:
    """The deletions under way: ``deleting`` (the nodes marked, not yet deleted nor given back) and
    ``draining`` (those of them with pods to evict)."""

    def __init__(
        self,
        port: NodeGroupPort,
        clock: Clock,
        settings: AutoscalerSettings,
        events: list[ScaleEvent],
        failed: Callable[[], None],
        created: CreatedAt | None = None,
    ):
        """``failed``: told after a deletion failed (the node is a candidate again); ``created``: each pod's
        ``creationTimestamp`` on the run's clock, by key, which the second look ages it from (None, or where
        it says None: its placement)."""
        self.port = port
        self.clock = clock
        self.events = events
        self.rules = drain_rules(settings.drain_priority_config, settings.max_graceful_termination_s)
        self.max_pod_eviction_time_s = settings.max_pod_eviction_time_s
        self.batcher_interval_s = settings.node_deletion_batcher_interval_s
        #: ``fullDsEviction``: a drain's DaemonSet pods evicted as the others (``--drain-priority-config``)
        self.full_ds_eviction = bool(settings.drain_priority_config)
        self.ds_eviction_for_empty_nodes = settings.daemonset_eviction_for_empty_nodes
        self.ds_eviction_for_occupied_nodes = settings.daemonset_eviction_for_occupied_nodes
        self.delay_timeout_s = settings.node_deletion_delay_timeout_s
        self.delay_after_taint_s = settings.node_delete_delay_after_taint_s
        #: the drainability rules' options (``NodeDeleteOptions``), the scans' and the second look's
        self.delete_options = DeleteOptions(
            settings.skip_nodes_with_system_pods, settings.skip_nodes_with_custom_controller_pods
        )
        self.expendable_cutoff = settings.expendable_pods_priority_cutoff
        self.created = created
        self.failed = failed
        self.deleting: set[str] = set()
        self.draining: set[str] = set()
        #: each zeroOrMaxNodeScaling group's nodes drained, waiting for the rest of their batch
        self._queued: dict[str, list[Removal]] = {}
        self._batch: dict[str, int] = {}  # the batch's size, by group
        #: the groups whose deletion failed, while nodes of theirs are being drained (``failuresForGroup``)
        self._failed: set[str] = set()
        #: each group's nodes waiting for the batcher's interval to end (``deletionsPerNodeGroup``)
        self._buckets: dict[str, list[str]] = {}
        self._reasons: dict[str, str] = {}  # each node being deleted's ``nodeScaleDownReason``
        self._delayed: set[str] = set()  # the nodes annotated delay-deletion
        #: the nodes deleted, in order (``scaled_down_nodes_total``)
        self.removed: list[Removed] = []

    def start(self, removals: Sequence[Removal]) -> None:
        """``StartDeletion``: mark them all (``taintNodesSync``) and count them as being deleted
        (``NodeDeletionTracker.StartDeletion``), then, ``--node-delete-delay-after-taint`` later, drain or
        delete each (``deleteNodesAsync``). No node, nothing to wait for (``startDeletion`` returns
        ``ScaleDownNoNodeDeleted`` before any)."""
        if not removals:
            return
        unready = self.port.unready_nodes()
        state = self.port.state
        for r in removals:
            self.deleting.add(r.node)
            if r.drain:
                self.draining.add(r.node)
            self.port.cordon(r.node, True)
            if r.atomic:
                self._batch[r.group] = sum(1 for o in removals if o.group == r.group)
            self._reasons[r.node] = (
                "unready" if r.node in unready else "underutilized" if r.drain else "empty"
            )
            if state.nodes[state.index[r.node]].delay_deletion:
                self._delayed.add(r.node)
        if self.delay_after_taint_s > 0:  # (upstream sleeps only for a delay above 0)
            at = self.clock.now + self.delay_after_taint_s
            self.clock.at(at, Priority.CONTROLLER, partial(self._prepare, tuple(removals)))
        else:
            self._prepare(removals)

    def _prepare(self, removals: Sequence[Removal]) -> None:
        """``deleteNodesAsync`` after its sleep: each node's pods read then (``createSnapshot``: the
        expendable ones left out, ``FilterOutExpendablePods``; the long-terminating ones too, which
        ``GetPodsToMove`` skips), in key order; each node looked at again (``GetPodsToMove``, with the
        PodDisruptionBudgets as they are now for a drained node, none for an empty one) and given back where
        a pod now blocks its drain (``failed to get pods to move on node``) or an empty one now has a pod to
        move (``node is not empty``); the others' pods evicted (``prepareNodeForDeletion``), an empty node's
        DaemonSet pods alone. A node gone meanwhile has no pod."""
        state, now = self.port.state, self.clock.now
        snapshot = SnapshotPods(
            expendable=expendable_on(state, self.expendable_cutoff),
            long_terminating=long_terminating_on(state, now),
        )
        budgets = self.port.disruption_budgets
        allowed = disruptions_allowed(self.port) if budgets else {}
        for r in removals:
            row = state.index.get(r.node)
            pods = [a.pod for a in snapshot.placed(state, row)] if row is not None else []
            why = None if row is None else self._second_look(r, row, snapshot, budgets, allowed)
            if why is not None:
                self._fail(r, why)
                continue
            groups = self._groups(r, pods)
            if not groups:
                self.clock.at(now, Priority.COMPLETION, partial(self._drained, r))
                continue
            self._evict(_Drain(r, groups))

    def _second_look(
        self,
        r: Removal,
        row: int,
        snapshot: SnapshotPods,
        budgets: Sequence[DisruptionBudget],
        allowed: Mapping[str, int],
    ) -> str | None:
        """Why ``deleteNodesAsync`` gives the node back after its sleep (``AbortNodeDeletion``' result error),
        or None: ``GetPodsToMove`` (``remainingPdbTracker`` of the budgets now for a drained node, none for an
        empty one) finds a pod that blocks the drain, or a pod to move on a node chosen empty."""
        look = pods_to_move(
            self.port.state,
            row,
            snapshot,
            budgets if r.drain else (),
            allowed if r.drain else {},
            self.port.daemon_pod_keys(),
            self.clock.now,
            self.delete_options,
            self.created,
        )
        if look.blocker is not None:
            return f'GetPodsToMove for "{r.node}" returned error: {look.blocker}'
        if not r.drain and look.pods:
            return f'failed to delete empty node "{r.node}", new pods scheduled'
        return None

    def _groups(self, r: Removal, pods: Sequence[Pod]) -> list[EvictionGroup]:
        """The node's ``pods`` to evict by priority group (``podsToEvict``, ``groupByPriority``): a drained
        node's pods but its DaemonSet ones, waited for, with its DaemonSet ones best effort (waited for too
        under ``fullDsEviction``); an empty node's DaemonSet ones alone, best effort
        (``EvictDaemonSetPods``)."""
        full: list[Pod] = []
        if not r.drain:
            best_effort, _ = pods_to_evict(pods, self.ds_eviction_for_empty_nodes)
        else:
            best_effort, full = pods_to_evict(pods, self.ds_eviction_for_occupied_nodes)
            if self.full_ds_eviction:
                full, best_effort = full + best_effort, []
        groups = group_by_priority(self.rules, full, best_effort)
        return [g for g in groups if g.pods or g.best_effort]

    # -- the drain ---------------------------------------------------------------------------
    def _evict(self, drain: _Drain) -> None:
        """``initiateEviction`` of the drain's next group: every pod evicted with its grace, those refused
        tried again every 10 s until ``--max-pod-eviction-time`` has passed."""
        group = drain.groups[0]
        drain.evicted = {}
        self._try(drain, [p.key for p in (*group.pods, *group.best_effort)], self.clock.now)

    def _try(self, drain: _Drain, keys: list[str], started: float) -> None:
        if drain.removal.node not in self.deleting:  # (its deletion failed meanwhile)
            return
        group = drain.groups[0]
        grace = {p.key: eviction_grace_s(p, group.rule.grace_s) for p in (*group.pods, *group.best_effort)}
        full = {p.key for p in group.pods}
        answers = {k: self.port.evict_pod(k, grace[k]) for k in keys}
        refused = [k for k in keys if answers[k] is not None]
        now = self.clock.now
        drain.evicted |= {k: now + grace[k] for k in keys if answers[k] is None and k in full}
        if not refused:
            self._evicted(drain)
            return
        after = now + EVICTION_RETRY_S
        if after < started + self.max_pod_eviction_time_s:
            self.clock.at(after, Priority.CONTROLLER, lambda: self._try(drain, refused, started))
            return
        failed = [k for k in refused if k in full]  # (the best-effort ones given up)
        if not failed:
            self.clock.at(after, Priority.CONTROLLER, lambda: self._evicted(drain))
            return
        errors = " ".join(
            f"failed to evict pod {k} within allowed timeout (last error: {answers[k]})" for k in failed
        )
        node = drain.removal.node
        why = f"Failed to drain node /{node}, due to following errors: [{errors}]"
        self.clock.at(after, Priority.CONTROLLER, lambda: self._fail(drain.removal, why))

    def _evicted(self, drain: _Drain) -> None:
        """``waitPodsToDisappear`` of the group's pods evicted and waited for: a pod is seen gone once its
        grace period is over, else at the 5 s polls."""
        if drain.removal.node not in self.deleting:
            return
        limit = drain.groups[0].rule.grace_s + POD_EVICTION_HEADROOM_S
        if limit <= 0:  # (no poll at all: even with no pod to wait for)
            self._drain_failed(drain, _pods_remaining(drain.removal.node))
            return
        now = self.clock.now
        gone = max(drain.evicted.values(), default=now)  # (some may have gone while others were retried)
        first = max(gone, now) if gone - now < limit else now
        self.clock.at(first, Priority.COMPLETION, lambda: self._wait(drain, now, limit))

    def _wait(self, drain: _Drain, started: float, limit: float) -> None:
        if drain.removal.node not in self.deleting:
            return
        state = self.port.state
        row = state.index.get(drain.removal.node)
        on_node = [k for k in drain.evicted if (a := state.assignments.get(k)) is not None and a.node == row]
        if row is None or not on_node:  # (a pod gone, or bound elsewhere: not on the node)
            drain.groups.pop(0)
            if drain.groups:
                self._evict(drain)
            else:
                self._drained(drain.removal)
            return
        polls = math.floor((self.clock.now - started) / WAIT_POLL_S + 1e-9) + 1
        after = started + polls * WAIT_POLL_S
        if polls * WAIT_POLL_S < limit:
            self.clock.at(after, Priority.COMPLETION, lambda: self._wait(drain, started, limit))
        else:
            why = _pods_remaining(drain.removal.node)
            self.clock.at(after, Priority.CONTROLLER, lambda: self._drain_failed(drain, why))

    def _drain_failed(self, drain: _Drain, why: str) -> None:
        """A drained node given back; an empty node's DaemonSet evictions stopped there, its deletion going on
        (``prepareNodeForDeletion`` ignores ``EvictDaemonSetPods``' error)."""
        if drain.removal.drain:
            self._fail(drain.removal, why)
        else:
            self._drained(drain.removal)

    # -- the deletion ------------------------------------------------------------------------
    def _drained(self, r: Removal) -> None:
        """``WaitForDelayDeletion``: a node annotated delay-deletion waits ``--node-deletion-delay-timeout``
        (0: not at all), which its annotation outlasts; then ``addToBatcher``."""
        if r.node not in self.deleting:
            return
        if r.node in self._delayed and self.delay_timeout_s > 0:
            if math.isfinite(self.delay_timeout_s):
                at = self.clock.now + self.delay_timeout_s
                self.clock.at(at, Priority.COMPLETION, partial(self._add_to_batcher, r))
            return
        self._add_to_batcher(r)

    def _add_to_batcher(self, r: Removal) -> None:
        """``addToBatcher``: deleted now, but a zeroOrMaxNodeScaling group's node, queued until its whole
        batch is drained; after a failure of its group, aborted with it."""
        if r.node not in self.deleting:
            return
        if not r.atomic:
            self._add_nodes(r.group, [r.node])
            return
        if r.group in self._failed:
            self._fail(r, GROUP_FAILED, group_failed=True)
            return
        queued = self._queued.setdefault(r.group, [])
        queued.append(r)
        if len(queued) < self._batch[r.group]:
            return
        del self._queued[r.group]
        self._add_nodes(r.group, [q.node for q in queued])

    def _add_nodes(self, group: str, names: list[str]) -> None:
        """``NodeDeletionBatcher.AddNodes``: deleted now with no interval; else into the group's bucket,
        deleted with it when the interval from its first node is over."""
        if self.batcher_interval_s == 0:
            for name in names:
                self._delete(name)
            return
        bucket = self._buckets.setdefault(group, [])
        if not bucket:
            self.clock.at(
                self.clock.now + self.batcher_interval_s, Priority.COMPLETION, partial(self._remove, group)
            )
        bucket.extend(names)

    def _remove(self, group: str) -> None:
        for name in self._buckets.pop(group, []):
            self._delete(name)

    def _delete(self, name: str) -> None:
        reason = self._forget(name)
        self.port.delete_node(name)
        self.removed.append(Removed(self.clock.now, name, reason))

    def _forget(self, name: str) -> str:
        """The node's deletion over (done or given back): its ``nodeScaleDownReason``."""
        self.deleting.discard(name)
        self.draining.discard(name)
        self._delayed.discard(name)
        return self._reasons.pop(name)

    def _fail(self, r: Removal, why: str, group_failed: bool = False) -> None:
        """``AbortNodeDeletion``: the node given back, its mark off, its group's queued nodes with it."""
        if r.node not in self.deleting:
            return
        self._give_back(r, why)
        if r.atomic:
            if not group_failed:
                for other in self._queued.pop(r.group, []):
                    self._give_back(other, GROUP_FAILED)
                self._failed.add(r.group)
            group = self.port.node_groups.get(r.group)
            if group is None or not group.nodes & self.deleting:  # (the batch is over)
                self._failed.discard(r.group)
        self.failed()

    def _give_back(self, r: Removal, why: str) -> None:
        """``CleanUpAndRecordFailedScaleDownEvent``."""
        self._forget(r.node)
        self.port.cordon(r.node, False)
        what = "failed to drain and delete node" if r.drain else "failed to delete empty node"
        event = ScaleEvent(self.clock.now, "scale-down-failed", r.group, (r.node,), reason=f"{what}: {why}")
        self.events.append(event)


def disruptions_allowed(port: NodeGroupPort) -> dict[str, int]:
    """Each PodDisruptionBudget's ``status.disruptionsAllowed`` now, by ``namespace/name``."""
    return {f"{b.namespace}/{b.name}": n for b, n in port.pod_disruption_budgets()}


def _pods_remaining(node: str) -> str:
    """``waitPodsToDisappear``'s error (the node's namespace is empty)."""
    return f"Failed to drain node /{node}: pods remaining after timeout"
