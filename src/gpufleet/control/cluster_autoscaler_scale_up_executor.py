"""cluster-autoscaler's scale-up execution, as its loop carries a chosen scale-up out (upstream
``core/scaleup/orchestrator/executor.go``: ``ExecuteScaleUps``, ``executeScaleUp``), the scale-up requests
its cluster state registry keeps for them (``clusterstate/clusterstate.go``: ``RegisterScaleUp``,
``updateScaleRequests``), and the removal of nodes that never registered
(``core/static_autoscaler.go``: ``removeOldUnregisteredNodes``).

Each group of a scale-up's split is asked for its nodes, one after another. A launch the cloud refuses
backs the group off (5 minutes, doubling up to 30: ``utils/backoff/exponential_backoff.go``). The nodes a
group did get are registered in its one scale-up request (``autoscaling.cluster_state.ScaleUpRequest``): a
further scale-up of the group adds to it and moves its deadline to its own time plus
``maxNodeProvisionTime``. Each scan (before the cluster's health is looked at, as ``RunOnce`` updates the
registry first) drops the requests whose group has no upcoming node left, and times out those still
waiting past their deadline: the group is backed off and a ``provision-timeout`` event logged
(``ScaleUpTimedOut``), but no node is deleted for it. A node whose GPUs register late stays: it is
registered, not Ready for cluster-autoscaler until its GPUs are allocatable
(``FilterOutNodesWithUnreadyResources``), and is used once they are. A node that has not even registered
(joined the cluster) more than ``maxNodeProvisionTime`` after its launch is deleted
(``removeOldUnregisteredNodes``: no deletion below the group's min; a ``ZeroOrMaxNodeScaling`` group's
nodes all go), with a ``delete-unregistered`` event (``DeleteUnregistered``) and no backoff of its own.
A ``zeroOrMaxNodeScaling`` group grows by all its nodes at once; a launch the cloud refuses deletes them
all (``overrideNodesToDeleteForZeroOrMax``).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from gpufleet.autoscaling.cluster_autoscaler import ScaleUp
from gpufleet.autoscaling.cluster_state import ScaleUpRequest, register_scale_up, update_scale_requests
from gpufleet.control.clock import Clock
from gpufleet.control.cluster_autoscaler_events import ScaleEvent
from gpufleet.control.cluster_autoscaler_health import upcoming_nodes
from gpufleet.control.port import NodeGroup, NodeGroupPort
from gpufleet.model.quantity import go_duration
from gpufleet.model.simulation import AutoscalerSettings


class ScaleUpExecutor:
    """Launches nodes through ``port`` on ``clock``, logging to ``events``, and keeps each group's scale-up
    request (``requests``, by group)."""

    def __init__(
        self,
        port: NodeGroupPort,
        clock: Clock,
        settings: AutoscalerSettings,
        events: list[ScaleEvent],
    ) -> None:
        self.port = port
        self.clock = clock
        self.settings = settings
        self.events = events
        self.requests: dict[str, ScaleUpRequest] = {}
        #: each launch not registered yet: since when (``UnregisteredSince``: its launch, or when first seen)
        self.unregistered_since: dict[str, float] = {}

    def execute(self, up: ScaleUp, deleting: AbstractSet[str]) -> bool:
        """``ExecuteScaleUps``: each group of the split, one after another (``deleting``: the nodes being
        deleted, which a failed atomic scale-up leaves alone). True when some group grew."""
        now, groups, grew = self.clock.now, self.port.node_groups, False
        for name, nodes in up.split:
            group = groups[name]
            if group.pool.zero_or_max_node_scaling:
                grew |= self._scale_up_atomic(group, nodes, up.pods, deleting)
                continue
            launched = [n for _ in range(nodes) if (n := self.launch(group, up.pods)) is not None]
            if launched:
                grew = True
                self.register_scale_up(group, len(launched))
                self.events.append(ScaleEvent(now, "scale-up", group.name, tuple(launched), up.pods))
        return grew

    def register_scale_up(self, group: NodeGroup, delta: int) -> None:
        """``RegisterScaleUp``: ``delta`` nodes the group got, added to its scale-up request."""
        limit = self.settings.max_node_provision_time_s
        register_scale_up(self.requests, group.name, delta, self.clock.now, limit)

    def _scale_up_atomic(
        self, group: NodeGroup, nodes: int, for_pods: tuple[str, ...], deleting: AbstractSet[str]
    ) -> bool:
        """A ``ZeroOrMaxNodeScaling`` group grows by all its nodes in one request: when the cloud refuses one
        of them, the group is backed off and the failed scale-up's cleanup deletes all the group's nodes,
        none kept (``deleteCreatedNodesWithErrors``, ``overrideNodesToDeleteForZeroOrMax``;
        ``AllowNonAtomicScaleUpToMax`` is not modelled). True when it grew."""
        now = self.clock.now
        launched: list[str] = []
        for _ in range(nodes):
            name = self.launch(group, for_pods)
            if name is None:
                break
            launched.append(name)
        else:
            if launched:
                self.register_scale_up(group, len(launched))
                self.events.append(ScaleEvent(now, "scale-up", group.name, tuple(launched), for_pods))
            return bool(launched)
        doomed = tuple(sorted(group.nodes - deleting))
        for name in doomed:
            self.port.delete_node(name)
        if doomed:
            reason = "atomic scale-up failed: all the group's nodes deleted (ZeroOrMaxNodeScaling)"
            self.events.append(ScaleEvent(now, "scale-up-failed", group.name, doomed, for_pods, reason))
        for key in for_pods:
            self.port.pod_waits_for_node(key, provisioning=self._still_provisioning(key))
        return False

    def launch(self, group: NodeGroup, for_pods: tuple[str, ...] = (), warm: bool = False) -> str | None:
        """Ask the cloud for a node; a refusal (a stock-out) backs the group off. The node counts as
        unregistered from now until it joins the cluster."""
        now = self.clock.now
        name = self.port.launch(group.name, for_pods, warm)
        if name is None:
            group.back_off(now, self.settings)
            self.events.append(ScaleEvent(now, "scale-up-failed", group.name, (), for_pods, "stock-out"))
            return None
        self.unregistered_since[name] = now
        return name

    def update(self, deleting: AbstractSet[str], long_unready: AbstractSet[str]) -> bool:
        """What a loop does before it looks at the cluster's health: ``updateScaleRequests`` (a request
        timed out backs its group off: ``registerFailedScaleUpNoLock``), then ``removeOldUnregisteredNodes``
        (``deleting``: the nodes being deleted, left alone; ``long_unready``: ``UnreadyNodes.long_unready``).
        True when it deleted a node."""
        groups, now = self.port.node_groups, self.clock.now
        if not self.requests and not any(g.launching for g in groups.values()):
            self.unregistered_since.clear()  # nothing to time out, nothing unregistered
            return False
        upcoming = {name: upcoming_nodes(g, long_unready) for name, g in groups.items()}
        for request in update_scale_requests(self.requests, upcoming, now):
            group = groups[request.group]
            group.back_off(now, self.settings)
            late = tuple(sorted(n for n in group.launching if n not in long_unready))
            within = go_duration(now - request.time)
            reason = f"Nodes added to group {group.name} failed to register within {within}"
            self.events.append(ScaleEvent(now, "provision-timeout", group.name, late, reason=reason))
        return self._remove_old_unregistered(deleting)

    def _remove_old_unregistered(self, deleting: AbstractSet[str]) -> bool:
        """``removeOldUnregisteredNodes``: the launches not registered more than ``maxNodeProvisionTime``
        after their launch (``UnregisteredSince.Add(maxNodeProvisionTime).Before(now)``) are deleted, as many
        as the group's min allows (target size less min; ``--force-delete-unregistered-nodes`` is not
        modelled), all the group's nodes for a ``ZeroOrMaxNodeScaling`` group
        (``overrideNodesToDeleteForZeroOrMax``). Their pods wait on."""
        state, now, limit = self.port.state, self.clock.now, self.settings.max_node_provision_time_s
        since = self.unregistered_since
        removed = False
        for group in sorted(self.port.node_groups.values(), key=lambda g: g.name):
            old: list[str] = []
            for name in sorted(group.launching):
                if name in state.index:
                    since.pop(name, None)
                    continue
                if since.setdefault(name, now) + limit < now:
                    old.append(name)
            possible = len(group.nodes) - group.pool.min
            if not old or possible <= 0:
                continue
            old = old[:possible]
            if group.pool.zero_or_max_node_scaling:
                old = sorted(group.nodes - deleting)
            for_pods = tuple(
                sorted(
                    {key for name in old if name in group.launching for key in group.launching[name].for_pods}
                )
            )
            for name in old:
                since.pop(name, None)
                self.port.delete_node(name)
            reason = "Removed unregistered node " + ", ".join(old)
            self.events.append(
                ScaleEvent(now, "delete-unregistered", group.name, tuple(old), for_pods, reason)
            )
            for key in for_pods:
                self.port.pod_waits_for_node(key, provisioning=self._still_provisioning(key))
            removed = True
        launching = {n for g in self.port.node_groups.values() for n in g.launching}
        for name in [n for n in since if n not in launching]:
            del since[name]
        return removed

    def _still_provisioning(self, key: str) -> bool:
        return any(
            key in launch.for_pods for g in self.port.node_groups.values() for launch in g.launching.values()
        )
