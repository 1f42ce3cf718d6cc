"""cluster-autoscaler's cluster state registry's health, as its loop keeps it (upstream
``clusterstate/clusterstate.go``: ``IsClusterHealthy``, ``IsNodeGroupHealthy``, the status ConfigMap's
``Health`` condition; the counting itself is ``autoscaling.cluster_state``).

A node is not Ready when its Ready condition is not True, or when its GPUs are not allocatable
(``resource_unready``: ``FilterOutNodesWithUnreadyResources``). With more nodes ``Unready`` (not Ready,
registered 15 minutes or more before) than
``--ok-total-unready-count`` and than ``--max-total-unready-percentage`` of the cluster's nodes, a scan does
nothing (``IsClusterHealthy``); a group with that many of its nodes missing among the Ready is skipped by
scale-up, ``not ready for scale-up`` (``IsNodeGroupHealthy``). The scan that finds the cluster unhealthy logs
a ``cluster-unhealthy`` event, the first that finds it healthy again a ``cluster-healthy`` one, each with the
status ConfigMap's ``Health`` condition (its node counts); while the cluster is unhealthy, or a group not
ready for scale-up, ``pod_hints`` says so for a pending pod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from gpufleet.autoscaling.cluster_state import (
    MAX_NODE_STARTUP_S,
    NOT_READY_FOR_AUTOSCALING,
    HealthCondition,
    Readiness,
    acceptable_range,
    cluster_healthy,
    halted_hint,
    health_condition,
    node_group_healthy,
    readiness,
)
from gpufleet.autoscaling.scale_up import NOT_READY
from gpufleet.control.cluster_autoscaler_events import ScaleEvent
from gpufleet.control.port import NodeGroup, NodeGroupPort
from gpufleet.model.mig_configs import is_device_plugin_resource
from gpufleet.model.simulation import AutoscalerSettings


def has_gpus(allocatable: Mapping[str, int]) -> bool:
    """Whether any device-plugin resource (GPUs, replicas, MIG instances) is allocatable
    (``gpu.NodeHasGpuAllocatable``)."""
    return any(is_device_plugin_resource(r) and n > 0 for r, n in allocatable.items())


def resource_unready(port: NodeGroupPort) -> dict[str, float]:
    """The registered nodes whose GPUs are not allocatable yet, each with when it registered:
    ``GpuCustomResourcesProcessor.FilterOutNodesWithUnreadyResources`` replaces a node that should have GPUs
    (its group's template has device-plugin resources: upstream's GPU label) and has none allocatable with a
    not-Ready copy (``GetUnreadyNodeCopy``, reason ``ResourceUnready``, its Ready condition's
    ``lastTransitionTime`` its ``creationTimestamp``). gpufleet's such nodes are its groups' launches that
    registered (``LaunchStatus.registered_s``) and have no device-plugin resource allocatable."""
    state, out = port.state, {}
    for group in port.node_groups.values():
        joined = [
            (name, launch.registered_s)
            for name, launch in group.launching.items()
            if launch.registered_s is not None and name in state.index
        ]
        if not joined or not has_gpus(group.pool.template.allocatable):
            continue
        for name, since in joined:
            if not has_gpus(state.nodes[state.index[name]].allocatable):
                out[name] = since
    return out


@dataclass(frozen=True)
class UnreadyNodes:
    """The nodes cluster-autoscaler takes as not Ready, as one scan reads them (``RunOnce`` lists the nodes
    once, through ``FilterOutNodesWithUnreadyResources``, before it updates the cluster state registry):
    ``nodes``, each with when it registered: those whose Ready condition is not True
    (``port.unready_nodes``) and ``launches``, those ``resource_unready`` makes so."""

    nodes: Mapping[str, float]
    launches: Mapping[str, float]

    def long_unready(self, now: float) -> frozenset[str]:
        """The ``launches`` registered ``MAX_NODE_STARTUP_S`` or more before now: ``updateReadinessStats``
        counts them ``Unready``, no longer ``NotStarted``, so they are no longer upcoming
        (``GetUpcomingNodes``: a group's target less its Ready, Unready and long unregistered nodes)."""
        return frozenset(n for n, since in self.launches.items() if since + MAX_NODE_STARTUP_S <= now)


def upcoming_nodes(group: NodeGroup, long_unready: AbstractSet[str]) -> int:
    """The group's upcoming nodes (``GetUpcomingNodes``): its launches (``NodeGroup.upcoming``) less those
    ``long_unready`` (``UnreadyNodes.long_unready``)."""
    upcoming = group.upcoming()
    return upcoming - sum(1 for n in group.launching if n in long_unready) if long_unready else upcoming


def unready_nodes(port: NodeGroupPort) -> UnreadyNodes:
    """The nodes cluster-autoscaler takes as not Ready now (``UnreadyNodes``)."""
    unready, extra = port.unready_nodes(), resource_unready(port)
    return UnreadyNodes({**unready, **extra} if extra else unready, extra)


class ClusterHealth:
    """The cluster's and its node groups' health as the last scan found them, read through ``port``; its
    changes logged to ``events``."""

    def __init__(self, port: NodeGroupPort, settings: AutoscalerSettings, events: list[ScaleEvent]) -> None:
        self.port = port
        self.settings = settings
        self.events = events
        #: while the last scan found the cluster unhealthy: since when, and its Health condition then
        self.unhealthy: tuple[float, HealthCondition] | None = None
        #: the groups the last scale-up found not ready for scale-up, each with its Health condition's text
        self.unready_groups: dict[str, str] = {}

    def cluster_healthy(self, now: float, unready: Mapping[str, float]) -> bool:
        """``IsClusterHealthy``: unhealthy when its ``Unready`` nodes (not Ready, registered at least
        ``MAX_NODE_STARTUP_S`` ago) are more than ``--ok-total-unready-count`` and more than
        ``--max-total-unready-percentage`` of all its nodes. Then ``RunOnce`` neither scales up nor down
        (``Cluster is not ready for autoscaling``), and gpufleet's warm nodes wait too; launches still time
        out (``updateScaleRequests`` runs before). ``unready``: ``UnreadyNodes.nodes``."""
        if len(unready) <= self.settings.ok_total_unready_count:
            if self.unhealthy is not None:
                self._changed(unready, True, now)
            return True
        settings = self.settings
        total = readiness(unready, unready, now)  # (only the nodes not Ready can be Unready)
        nodes = self.port.state.size_active
        ok, percentage = settings.ok_total_unready_count, settings.max_total_unready_percentage
        healthy = cluster_healthy(total, nodes, ok, percentage)
        if not healthy or self.unhealthy is not None:
            self._changed(unready, healthy, now)
        return healthy

    def _condition(self, unready: Mapping[str, float], healthy: bool, now: float) -> HealthCondition:
        """The cluster-wide ``Health`` condition (``GetStatus``' ``buildHealthStatusClusterwide``): every
        active node registered, those ``resource_unready`` among the not Ready; a launch registered whose
        port does not say when, still starting, as in a group."""
        state = self.port.state
        counted = readiness(unready, unready, now)
        launches = tuple(
            n
            for g in self.port.node_groups.values()
            for n in sorted(g.launching)
            if n in state.index and n not in unready
        )
        counted = Readiness((), counted.unready, counted.not_started + launches)
        return health_condition(healthy, counted, state.size_active)

    def _changed(self, unready: Mapping[str, float], healthy: bool, now: float) -> None:
        """Keep the cluster's Health condition while it is unhealthy; at each change log an event:
        ``cluster-unhealthy`` (upstream logs ``Cluster is not ready for autoscaling`` and records the
        ``ClusterUnhealthy`` Event on its status ConfigMap, every loop; gpufleet once, with the Unready nodes)
        or ``cluster-healthy`` (the status ConfigMap's Health condition back to ``Healthy``)."""
        health = self._condition(unready, healthy, now)
        if healthy:
            self.unhealthy = None
            event = ScaleEvent(now, "cluster-healthy", None, (), reason=health.message())
        else:
            was = self.unhealthy
            self.unhealthy = (now if was is None else was[0], health)
            if was is not None:
                return
            names = tuple(sorted(n for n, since in unready.items() if since + MAX_NODE_STARTUP_S <= now))
            reason = f"{NOT_READY_FOR_AUTOSCALING}: {health.message()}"
            event = ScaleEvent(now, "cluster-unhealthy", None, names, reason=reason)
        self.events.append(replace(event, node_counts=health.node_counts()))

    def pod_hints(self, not_triggered: str) -> list[str]:
        """What it says about a pending pod whose last ``NotTriggerScaleUp`` message is ``not_triggered``,
        as of the last scan: that cluster-autoscaler is halted, the cluster unhealthy (its Health condition,
        since when, the two flags); else, if that message said ``not ready for scale-up``, which groups are
        not and their Health condition."""
        if self.unhealthy is not None:
            since, health = self.unhealthy
            ok, percentage = self.settings.ok_total_unready_count, self.settings.max_total_unready_percentage
            return [halted_hint(health, ok, percentage, f"is halted since {since:g} s")]
        if NOT_READY not in not_triggered:
            return []
        return [
            f"cluster-autoscaler: node group {name} is {NOT_READY} ({message})"
            for name, message in sorted(self.unready_groups.items())
        ]

    def _group_readiness(
        self, group: NodeGroup, unready: Mapping[str, float], now: float
    ) -> Readiness | None:
        """The group's registered nodes as ``updateReadinessStats`` counts them (None when none is): a launch
        that registered without its GPUs is not Ready (``ResourceUnready``): ``NotStarted`` within
        ``MAX_NODE_STARTUP_S`` of registering, ``Unready`` after (one whose port does not say when it
        registered, still starting)."""
        state = self.port.state
        registered = [n for n in sorted(group.nodes) if n in state.index]
        if not registered:
            return None
        counted = readiness((n for n in registered if n not in group.launching or n in unready), unready, now)
        launches = tuple(n for n in registered if n in group.launching and n not in unready)
        return Readiness(counted.ready, counted.unready, counted.not_started + launches)

    def update_groups(
        self,
        groups: Sequence[NodeGroup],
        now: float,
        increases: Mapping[str, int],
        unready: Mapping[str, float],
    ) -> frozenset[str]:
        """Keep the groups not ready for scale-up (``unready_groups``) and name them; ``increases``: each
        group's scale-up request's ``Increase``; ``unready``: ``UnreadyNodes.nodes``."""
        self.unready_groups = self._unhealthy_groups(groups, now, increases, unready)
        return frozenset(self.unready_groups)

    def _unhealthy_groups(
        self,
        groups: Sequence[NodeGroup],
        now: float,
        increases: Mapping[str, int],
        unready: Mapping[str, float],
    ) -> dict[str, str]:
        """The groups ``IsNodeGroupHealthy`` finds unhealthy: more of their nodes missing among the Ready
        below the acceptable minimum (its size less its scale-up request's ``Increase``:
        ``updateAcceptableRanges``; a request timed out is gone, and its late nodes count as missing) than
        ``--ok-total-unready-count`` and than ``--max-total-unready-percentage`` of its registered nodes.
        With every node Ready and no group launching more than its request none is (each registered node
        not launched is Ready). Each with its Health condition's text (``buildHealthStatusNodeGroup``: the
        counts, ``cloudProviderTarget``, min, max)."""
        settings = self.settings
        if not unready and all(len(g.launching) <= increases.get(g.name, 0) for g in groups):
            return {}
        out = {}
        for g in groups:
            acceptable = acceptable_range(len(g.nodes), scale_up_increase=increases.get(g.name, 0))
            counted = self._group_readiness(g, unready, now)
            ok, percentage = settings.ok_total_unready_count, settings.max_total_unready_percentage
            if not node_group_healthy(acceptable, counted, ok, percentage):
                health = health_condition(False, counted or Readiness())
                out[g.name] = (
                    f"{health.message()} cloudProviderTarget={acceptable.current_target} "
                    f"(minSize={g.pool.min}, maxSize={g.pool.max})"
                )
        return out
