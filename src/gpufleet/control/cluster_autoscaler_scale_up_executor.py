"""cluster-autoscaler's scale-up execution, as its loop carries a chosen scale-up out (upstream
``core/scaleup/orchestrator/executor.go``: ``ExecuteScaleUps``, ``executeScaleUp``; and the scale-up requests
the cluster state registry times out, ``clusterstate.updateScaleRequests``).

Each group of a scale-up's split is asked for its nodes, one after another. A launch the cloud refuses
backs the group off (5 minutes, doubling up to 30: ``utils/backoff/exponential_backoff.go``), and so does a
node that has not registered its GPUs within ``maxNodeProvisionTime`` (it is deleted at the first scan after
that time). A ``zeroOrMaxNodeScaling`` group grows by all its nodes at once; a launch the cloud refuses
deletes them all (``overrideNodesToDeleteForZeroOrMax``).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet
from functools import partial

from gpufleet.autoscaling.cluster_autoscaler import ScaleUp
from gpufleet.control.clock import Clock, Priority
from gpufleet.control.cluster_autoscaler_events import ScaleEvent
from gpufleet.control.port import LaunchStatus, NodeGroup, NodeGroupPort
from gpufleet.model.simulation import AutoscalerSettings


class ScaleUpExecutor:
    """Launches nodes through ``port`` on ``clock``, logging to ``events``; ``scan_after``: the loop's first
    scan strictly after a time (when a launch's ``maxNodeProvisionTime`` is checked)."""

    def __init__(
        self,
        port: NodeGroupPort,
        clock: Clock,
        settings: AutoscalerSettings,
        events: list[ScaleEvent],
        scan_after: Callable[[float], float],
    ) -> None:
        self.port = port
        self.clock = clock
        self.settings = settings
        self.events = events
        self.scan_after = scan_after

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
                self.events.append(ScaleEvent(now, "scale-up", group.name, tuple(launched), up.pods))
        return grew

    def _scale_up_atomic(
        self, group: NodeGroup, nodes: int, for_pods: tuple[str, ...], deleting: AbstractSet[str]
    ) -> bool:
        """A ``ZeroOrMaxNodeScaling`` group grows by all its nodes in one request (``increaseSize`` with
        ``atomic``: ``AtomicIncreaseSize``): when the cloud refuses one of them, the group is backed off and
        the failed scale-up's cleanup deletes all the group's nodes, none kept
        (``deleteCreatedNodesWithErrors``, ``overrideNodesToDeleteForZeroOrMax``;
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
        """Ask the cloud for a node; a refusal (a stock-out) backs the group off. A node that may not
        register its GPUs within ``maxNodeProvisionTime`` is checked at the first scan after that time
        (``updateScaleRequests``: timed out once ``ExpectedAddTime.Before(now)``, this scan's time plus
        ``maxNodeProvisionTime``)."""
        now = self.clock.now
        name = self.port.launch(group.name, for_pods, warm)
        if name is None:
            group.back_off(now, self.settings)
            self.events.append(ScaleEvent(now, "scale-up-failed", group.name, (), for_pods, "stock-out"))
            return None
        launch = group.launching[name]
        limit = self.settings.max_node_provision_time_s
        ready_after = launch.gpu_ready_after_s
        if ready_after is None or ready_after > limit:
            self.clock.at(
                self.scan_after(now + limit),
                Priority.ARRIVAL,
                partial(self._provision_timeout, group, name, launch),
            )
        return name

    def _provision_timeout(self, group: NodeGroup, name: str, launch: LaunchStatus) -> None:
        if group.launching.get(name) is not launch:
            return
        now = self.clock.now
        for_pods = launch.for_pods
        group.back_off(now, self.settings)
        self.events.append(
            ScaleEvent(
                now,
                "provision-timeout",
                group.name,
                (name,),
                for_pods,
                "GPUs not registered within maxNodeProvisionTime",
            )
        )
        self.port.delete_node(name)
        for key in for_pods:
            self.port.pod_waits_for_node(key, provisioning=self._still_provisioning(key))

    def _still_provisioning(self, key: str) -> bool:
        return any(
            key in launch.for_pods for g in self.port.node_groups.values() for launch in g.launching.values()
        )
