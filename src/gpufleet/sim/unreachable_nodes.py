"""A node whose kubelet stopped (a node rebooting, a node lost), as Kubernetes 1.34 learns of it, on the
simulator's clock.

- The node lifecycle controller (``pkg/controller/nodelifecycle/node_lifecycle_controller.go``,
  ``monitorNodeHealth``) sets the node's Ready condition ``Unknown`` ("Kubelet stopped posting node
  status.") once it has heard nothing for ``--node-monitor-grace-period`` (50 s since 1.32,
  ``config/v1alpha1/defaults.go``; a Simulation's ``spec.controllerManager``,
  ``model.node_lifecycle_config``); taken here as that long after the kubelet stopped (its last lease renewal
  taken at the fault; the 5 s monitor period and the 10 s renew interval are not counted). It marks the
  pods on it not ready in the same pass (``MarkPodsNotReady``: until then their Ready condition is what the
  kubelet last reported, though their containers died with the node). It then taints
  the node ``node.kubernetes.io/unreachable:NoSchedule`` at once (``doNoScheduleTaintingPass``) and
  ``node.kubernetes.io/unreachable:NoExecute`` through its zone's tainter (``doNoExecuteTaintingPass``, a
  ``RateLimitedTimedQueue``: its nodes in the order they went NotReady, the first tainted whenever its token
  bucket, of burst 1 and refilled at the zone's rate, holds a token, ``model.node_lifecycle_zones``, the
  first at ``--node-eviction-rate``; a
  node Ready again leaves
  the queue, ``markNodeAsReachable``; a node deleted takes its turn, and a token, ``Node no longer
  present``). Every zone is judged again (``handleDisruption``) at each monitor pass where a zone's state
  may change, taken at the instant: a node going NotReady or Ready again, a node deleted or added (while a
  node is down or a zone not normal); a tainter given another rate (``SwapLimiter``) keeps its queue and
  starts with a token only where the old one had one. Where every zone becomes fully disrupted, the
  controller takes the ``NoExecute`` taints off every node and empties the queues (``markNodeAsReachable``:
  the taint eviction controller cancels the deletions it had scheduled); as a zone recovers, the nodes
  still NotReady are queued again, at their zones' rates, the first after 1 / the rate.
- A cluster dump's nodes NotReady from the start (``model.node_readiness``) are queued at the first pass,
  at time 0, for the ``NoExecute`` taint of their Ready status: ``not-ready`` for ``False`` (the kubelet
  says so), ``unreachable`` for ``Unknown``; one carrying the other status's ``NoExecute`` taint has it
  swapped at once, no token taken (``processTaintBaseEviction``, ``SwapNodeControllerTaint``). Nothing
  makes them Ready again. A stopped kubelet's node is ``Unknown``: every fault that takes a node down
  (``reboot``, ``lost``) stops its kubelet.
- The taint eviction controller (``sim.taint_eviction``, ``model.taint_eviction``) deletes each pod on it
  that does not tolerate its ``NoExecute`` taints at once, and one that does after the least
  ``tolerationSeconds`` of the tolerations it matched (``getMinTolerationTime``; none set: never), with the
  300 s tolerations for the ``not-ready`` and ``unreachable`` ``NoExecute`` taints the
  ``DefaultTolerationSeconds`` admission plugin gave every pod without one
  (``model.default_toleration_seconds``); a deletion once scheduled stays as it was when a later taint
  holds the pod less long.
- A deleted pod on a node whose kubelet is down stays Terminating: nobody confirms its end until the
  kubelet is back (it is then gone), its Node is deleted, or a user taints the node
  ``node.kubernetes.io/out-of-service`` (``out_of_service``: PodGC's ``gcTerminating`` force-deletes it,
  ``sim.pod_gc_terminating``).
- A lost node's instance no longer exists: the cloud node lifecycle controller (k8s.io/cloud-provider
  ``controllers/nodelifecycle/node_lifecycle_controller.go``, ``MonitorNodes`` every ``--node-monitor-period``
  5 s, looking only at nodes whose Ready is not True) deletes its Node at its first pass after it went
  NotReady (its passes taken on the clock's multiples of 5 s). Every pool of gpufleet is launched through
  a cloud provider, so it is cloud-backed; a node of no pool (a hand-written or dumped node) has no cloud
  provider here: its Node stays.
- PodGC (``pkg/controller/podgc/gc_controller.go``, ``gcOrphaned``, every 20 s on the clock's multiples)
  finds the pods bound to a Node that no longer exists, waits ``quarantineTime`` (40 s) for the node to
  show up again, then marks them Failed with the ``DisruptionTarget`` condition (``DeletionByPodGC``) and
  deletes them (reason ``NodeDeleted``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

from gpufleet.control.clock import Clock, Priority
from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, Node, Taint
from gpufleet.model.node_lifecycle_config import NodeLifecycleConfig
from gpufleet.model.node_lifecycle_zones import EVICTION_QPS, NORMAL, ZoneStates, zone_key, zones
from gpufleet.model.node_readiness import (
    NOT_READY_TAINT_KEY,
    READY_UNKNOWN,
    UNREACHABLE_TAINT_KEY,
    NotReadyNode,
    no_execute_taints,
)
from gpufleet.model.out_of_service import OUT_OF_SERVICE
from gpufleet.scheduling.events import ClusterChange
from gpufleet.sim.cluster import InMemoryCluster
from gpufleet.sim.pod_lifecycle import PodLifecycle

#: the cloud node lifecycle controller's ``--node-monitor-period``
CLOUD_NODE_MONITOR_PERIOD_S = 5.0
#: PodGC's ``gcCheckPeriod`` and ``quarantineTime``
POD_GC_PERIOD_S = 20.0
POD_GC_QUARANTINE_S = 40.0
#: the reason of a pod deleted by PodGC
POD_GC = "NodeDeleted"

UNREACHABLE_NO_SCHEDULE = Taint(UNREACHABLE_TAINT_KEY, effect=NO_SCHEDULE)
UNREACHABLE_NO_EXECUTE = Taint(UNREACHABLE_TAINT_KEY, effect=NO_EXECUTE)
#: the taints ``markNodeAsReachable`` takes off
REACHABLE_REMOVES = (UNREACHABLE_NO_EXECUTE, Taint(NOT_READY_TAINT_KEY, effect=NO_EXECUTE))


class UnreachableHost(Protocol):
    def cluster_changed(self, changes: Sequence[ClusterChange], material: bool = True) -> None: ...

    def set_node_taints(self, name: str, taints: tuple[Taint, ...]) -> None: ...


@dataclass
class NodeDown:
    """What the control plane did about one stopped kubelet, in seconds of the run's clock."""

    instance_gone: bool  # the instance is gone (a lost node): the cloud controller deletes its Node
    #: its Ready condition once NotReady: ``Unknown`` (its kubelet stopped posting), ``False`` (a dumped
    #: node whose kubelet said so)
    ready: str = READY_UNKNOWN
    not_ready_s: float | None = None
    tainted_s: float | None = None  # the NoExecute taint
    evicted_s: float | None = None  # the last pod the taint eviction controller deleted
    node_deleted_s: float | None = None
    collected_s: float | None = None  # PodGC deleted its pods
    pods_ended_s: float | None = None  # the last of its pods gone (PodGC, the kubelet back)
    out_of_service_s: float | None = None  # a user tainted it ``node.kubernetes.io/out-of-service``


@dataclass
class Tainter:
    """A zone's ``zoneNoExecuteTainter``: its queue (node -> the ``NodeDown`` queued), its limiter and when
    the limiter next lets a node through. The limiter is first a token bucket of burst 1 at
    ``--node-eviction-rate`` (``addPodEvictorForNewZone``), then what ``SwapLimiter`` gives it. A bucket at a
    rate of 0 or less (only the first can be: ``--node-eviction-rate`` is not checked) holds the one token it
    starts with and never another (golang.org/x/time/rate v0.9.0: no tokens accrue at such a rate)."""

    qps: float = EVICTION_QPS  # the token bucket's rate
    token_s: float = -math.inf  # when the bucket holds a token (inf: never again)
    never: bool = False  # ``NewFakeNeverRateLimiter``: lets none through (its ``QPS()`` says 1)
    queue: dict[str, NodeDown] = field(default_factory=dict)
    turn: int = 0  # moves as the next taint is rescheduled: the one scheduled before is void

    @property
    def limiter_qps(self) -> float:
        """The limiter's ``QPS()``: the bucket's rate, 1 for a limiter that never lets one through."""
        return 1.0 if self.never else self.qps

    @property
    def next_token_s(self) -> float:
        """When the limiter next lets a node through (inf: never)."""
        return math.inf if self.never else self.token_s

    def swap(self, qps: float, now: float) -> None:
        """``SwapLimiter``: nothing where the limiter's ``QPS()`` is ``qps`` already; at 0 or less a limiter
        that never lets one through; else a new bucket, drained where the old limiter held no token."""
        if qps == self.limiter_qps:
            return
        if qps <= 0:
            self.never = True
            return
        self.token_s = now if self.next_token_s <= now else now + 1 / qps
        self.qps, self.never = qps, False

    def take(self, now: float) -> None:
        """The token taken (burst 1): the next one a token's time later, none at a rate of 0 or less."""
        self.token_s = now + 1 / self.qps if self.qps > 0 else math.inf


class UnreachableNodes:
    def __init__(
        self,
        clock: Clock,
        cluster: InMemoryCluster,
        lifecycle: PodLifecycle,
        host: UnreachableHost,
        delete_node: Callable[[str], None],
        config: NodeLifecycleConfig,
    ):
        """``delete_node``: the cloud node lifecycle controller deletes a lost node's Node; ``config``:
        kube-controller-manager's node lifecycle flags."""
        self.clock = clock
        self.config = config
        self.cluster = cluster
        self.lifecycle = lifecycle
        self.host = host
        self.delete_node = delete_node
        self.down: dict[str, NodeDown] = {}
        self.zone_states = ZoneStates(rates=config.eviction)
        self.tainters: dict[str, Tainter] = {}  # zone -> its NoExecute tainter
        self._pass_due = False
        lifecycle.taint_eviction.listeners.append(self._evicted)
        lifecycle.pod_gc.listeners.append(self._collected_terminating)

    def not_ready_from_start(self, nodes: Iterable[NotReadyNode]) -> None:
        """Nodes of a cluster dump NotReady when the run starts (``model.node_readiness``): the first monitor
        pass, at time 0, queues each for the ``NoExecute`` taint of its Ready condition's status
        (``not-ready`` for ``False``, ``unreachable`` for ``Unknown``), or swaps at once the other's where
        it carries it. Nothing makes them Ready again."""
        for n in nodes:
            self.down[n.name] = NodeDown(False, ready=n.status, not_ready_s=n.since_s)
        if self.down:
            self._request_pass()

    def _at(self, t: float, action: Callable[[], None]) -> None:
        self.clock.at(t, Priority.COMPLETION, action)

    def _pods_on(self, name: str) -> list[str]:
        state = self.cluster.state
        return sorted(a.pod.key for a in state.pods_on[state.index[name]].values())

    def stopped(self, name: str, instance_gone: bool) -> NodeDown:
        """The node's kubelet stopped with it: its pods' containers die now."""
        down = self.down[name] = NodeDown(instance_gone)
        self.cluster.kubelet_stopped.add(name)
        for key in self._pods_on(name):
            self.lifecycle.kubelet_stopped(self.lifecycle.records[key])
        grace = self.config.node_monitor_grace_period_s
        self._at(self.clock.now + grace, partial(self._not_ready, name, down))
        return down

    def _live(self, name: str, down: NodeDown) -> bool:
        return self.down.get(name) is down and name in self.cluster.state.index

    def _not_ready(self, name: str, down: NodeDown) -> None:
        """``monitorNodeHealth``: Ready Unknown, the NoSchedule taint, the NoExecute one when its zone's
        limiter lets it; a lost node's Node is deleted at the cloud controller's next pass."""
        if not self._live(name, down):
            return
        now = self.clock.now
        down.not_ready_s = now
        self.cluster.not_ready[name] = now
        for key in self._pods_on(name):  # ``MarkPodsNotReady``: their Ready condition False
            self.lifecycle.not_ready(self.lifecycle.records[key])
        self._set_taints(name, (UNREACHABLE_NO_SCHEDULE,))
        self.host.cluster_changed(())  # (cluster-autoscaler sees an unready node)
        self._request_pass()  # after the pass's other nodes
        if down.instance_gone:
            period = CLOUD_NODE_MONITOR_PERIOD_S
            self._at((math.floor(now / period) + 1) * period, partial(self._cloud_delete, name, down))

    def _node(self, name: str) -> Node:
        state = self.cluster.state
        return state.nodes[state.index[name]]

    def _set_taints(self, name: str, add: tuple[Taint, ...], remove: tuple[Taint, ...] = ()) -> None:
        taints = self._node(name).taints
        new = tuple(t for t in taints if t not in remove) + tuple(t for t in add if t not in taints)
        if new != taints:
            self.host.set_node_taints(name, new)

    def engaged(self) -> bool:
        """A node is NotReady or a zone is not normal: a node added or deleted may change a zone's state."""
        return bool(self.cluster.not_ready) or any(v != NORMAL for v in self.zone_states.states.values())

    def node_added_or_deleted(self) -> None:
        """A Node joined or was deleted: the next pass judges the zones again where that may matter."""
        if self.engaged():
            self._request_pass()

    def _request_pass(self) -> None:
        """A monitor pass now, after what else happens at this instant."""
        if not self._pass_due:
            self._pass_due = True
            self._at(self.clock.now, self._monitor_pass)

    def _monitor_pass(self) -> None:
        """``monitorNodeHealth``: each NotReady node not yet tainted is queued in its zone's tainter
        (``processTaintBaseEviction``, ``markNodeForTainting``), then ``handleDisruption`` judges the zones
        from the Ready state of every node and swaps the tainters' limiters."""
        self._pass_due = False
        now = self.clock.now
        state = self.cluster.state
        nodes = [state.nodes[i] for i in state.active_indices().tolist()]
        threshold = self.config.eviction.unhealthy_zone_threshold
        ready = ((n, n.name not in self.cluster.not_ready) for n in nodes)
        judged = self.zone_states.judge(zones(ready, threshold))
        for zone in judged.forgotten:
            self.tainters.pop(zone, None)
        if judged.untaint_all:
            for node in nodes:
                self._set_taints(node.name, (), REACHABLE_REMOVES)
            for tainter in self.tainters.values():
                tainter.queue.clear()
        down_now = () if judged.untaint_all else self.down.items()
        for name, down in down_now:
            node = self._node(name) if down.not_ready_s is not None and self._live(name, down) else None
            taint, other = no_execute_taints(down.ready)
            if node is None or taint in node.taints:
                continue
            if other in node.taints:  # ``processTaintBaseEviction``: swapped at once, no token taken
                self._taint_no_execute(name, down)
            else:
                self._tainter(zone_key(node)).queue.setdefault(name, down)
        for zone, qps in judged.limiters.items():
            self._tainter(zone).swap(qps, now)
        for zone in self.tainters:
            self._schedule_taint(zone)

    def _tainter(self, zone: str) -> Tainter:
        """The zone's tainter, made at ``--node-eviction-rate`` where it is new
        (``addPodEvictorForNewZone``)."""
        if zone not in self.tainters:
            self.tainters[zone] = Tainter(self.config.eviction.node_eviction_rate)
        return self.tainters[zone]

    def _schedule_taint(self, zone: str) -> None:
        """The tainter's next taint: its queue's head, once its bucket holds a token."""
        tainter = self.tainters[zone]
        tainter.turn += 1
        if tainter.queue and tainter.next_token_s < math.inf:
            at = max(self.clock.now, tainter.next_token_s)
            self._at(at, partial(self._taint_next, zone, tainter, tainter.turn))

    def _taint_next(self, zone: str, tainter: Tainter, turn: int) -> None:
        """``doNoExecuteTaintingPass``: the head takes the token; tainted where still down (a node deleted
        takes its turn all the same)."""
        if self.tainters.get(zone) is not tainter or tainter.turn != turn or not tainter.queue:
            return
        name = next(iter(tainter.queue))
        down = tainter.queue.pop(name)
        tainter.take(self.clock.now)
        if self._live(name, down):
            self._taint_no_execute(name, down)
        self._schedule_taint(zone)

    def _taint_no_execute(self, name: str, down: NodeDown) -> None:
        """The NoExecute taint: the taint eviction controller deletes each pod on the node after what it
        tolerates (``sim.taint_eviction``; cancelled where the taint is taken off first)."""
        down.tainted_s = self.clock.now
        taint, other = no_execute_taints(down.ready)
        self._set_taints(name, (taint,), (other,))

    def _evicted(self, name: str, key: str) -> None:
        """The taint eviction controller deleted a pod of the node: while its kubelet is down, the fault's
        ``pods_evicted_s``."""
        down = self.down.get(name)
        if down is not None and name in self.cluster.state.index:
            down.evicted_s = self.clock.now

    def out_of_service(self, name: str, down: NodeDown) -> None:
        """A user taints the node, its kubelet still down, ``node.kubernetes.io/out-of-service``
        (``model.out_of_service``): the taint eviction controller deletes the pods that do not tolerate it
        at once, and PodGC force-deletes the pods being deleted there while it is NotReady
        (``sim.pod_gc_terminating``)."""
        if self._live(name, down):
            down.out_of_service_s = self.clock.now
            self._set_taints(name, (OUT_OF_SERVICE,))

    def _collected_terminating(self, name: str) -> None:
        """PodGC's ``gcTerminating`` deleted the pods being deleted on the node (out-of-service)."""
        down = self.down.get(name)
        if down is not None:
            down.collected_s = down.pods_ended_s = self.clock.now

    def _cloud_delete(self, name: str, down: NodeDown) -> None:
        """The instance no longer exists: its Node is deleted (``orphaned`` follows)."""
        if self._live(name, down):
            self.delete_node(name)

    def orphaned(self, name: str, keys: list[str]) -> None:
        """The Node of a kubelet down was deleted (by the cloud controller, by cluster-autoscaler), its pods
        left bound to it: PodGC sees them at its next pass and deletes them once the quarantine is over."""
        down = self.down.pop(name, None)
        if down is None:
            return
        down.node_deleted_s = self.clock.now
        seen = math.ceil(self.clock.now / POD_GC_PERIOD_S) * POD_GC_PERIOD_S
        self._at(seen + POD_GC_QUARANTINE_S, partial(self._collect, down, keys))

    def _collect(self, down: NodeDown, keys: list[str]) -> None:
        """``gcOrphaned``: Failed with ``DisruptionTarget`` (``DeletionByPodGC``), then deleted."""
        records = self.lifecycle.records
        gone = [records[k] for k in keys if records[k].kubelet_down and records[k].deleted_s is None]
        for rec in gone:
            rec.kubelet_down = False
            self.lifecycle.terminated(rec, POD_GC, checkpointed=rec.terminating)
        if gone:
            down.collected_s = down.pods_ended_s = self.clock.now

    def restarted(self, name: str) -> None:
        """The kubelet is back (``reboot``): Ready again, the unreachable taints taken off (and the
        out-of-service one a user put on it: an assumption, that the user takes it off as the node is back,
        as KEP-2268 asks once the node has recovered); it confirms
        the pods deleted meanwhile, and starts again (or fails) the others."""
        down = self.down.pop(name, None)
        self.cluster.kubelet_stopped.discard(name)
        if down is None or name not in self.cluster.state.index:
            return
        self.cluster.not_ready.pop(name, None)
        self._set_taints(name, (), (UNREACHABLE_NO_SCHEDULE, *REACHABLE_REMOVES, OUT_OF_SERVICE))
        for tainter in self.tainters.values():  # ``markNodeAsReachable``: out of its zone's queue
            tainter.queue.pop(name, None)
        self._request_pass()
        records = self.lifecycle.records
        ended = False
        for key in self._pods_on(name):
            rec = records[key]
            was_down = rec.kubelet_down
            self.lifecycle.kubelet_restarted(rec)
            ended |= was_down and rec.finished_s is not None
        if ended:
            down.pods_ended_s = self.clock.now
