"""cluster-autoscaler's cluster state registry's health, as its loop keeps it (upstream
``clusterstate/clusterstate.go``: ``IsClusterHealthy``, ``IsNodeGroupHealthy``, the status ConfigMap's
``Health`` condition; the counting itself is ``autoscaling.cluster_state``).

With more nodes ``Unready`` (not Ready, registered 15 minutes or more before) than
``--ok-total-unready-count`` and than ``--max-total-unready-percentage`` of the cluster's nodes, a scan does
nothing (``IsClusterHealthy``); a group with that many of its nodes missing among the Ready is skipped by
scale-up, ``not ready for scale-up`` (``IsNodeGroupHealthy``). The scan that finds the cluster unhealthy logs
a ``cluster-unhealthy`` event, the first that finds it healthy again a ``cluster-healthy`` one, each with the
status ConfigMap's ``Health`` condition (its node counts); while the cluster is unhealthy, or a group not
ready for scale-up, ``pod_hints`` says so for a pending pod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

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
from gpufleet.model.simulation import AutoscalerSettings


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

    def cluster_healthy(self, now: float) -> bool:
        """``IsClusterHealthy``: unhealthy when its ``Unready`` nodes (not Ready, registered at least
        ``MAX_NODE_STARTUP_S`` ago) are more than ``--ok-total-unready-count`` and more than
        ``--max-total-unready-percentage`` of all its nodes. Then ``RunOnce`` neither scales up nor down
        (``Cluster is not ready for autoscaling``), and gpufleet's warm nodes wait too; launches still time
        out (``updateScaleRequests`` runs before)."""
        unready = self.port.unready_nodes()
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
        active node registered; a launch registered without its GPUs still starting, as in a group."""
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
        that registered without its GPUs is not Ready yet (``ResourceUnready``), still starting."""
        state = self.port.state
        registered = [n for n in sorted(group.nodes) if n in state.index]
        if not registered:
            return None
        counted = readiness((n for n in registered if n not in group.launching), unready, now)
        launches = tuple(n for n in registered if n in group.launching)
        return Readiness(counted.ready, counted.unready, counted.not_started + launches)

    def update_groups(
        self, groups: Sequence[NodeGroup], now: float, increases: Mapping[str, int]
    ) -> frozenset[str]:
        """Keep the groups not ready for scale-up (``unready_groups``) and name them; ``increases``: each
        group's scale-up request's ``Increase``."""
        self.unready_groups = self._unhealthy_groups(groups, now, increases)
        return frozenset(self.unready_groups)

    def _unhealthy_groups(
        self, groups: Sequence[NodeGroup], now: float, increases: Mapping[str, int]
    ) -> dict[str, str]:
        """The groups ``IsNodeGroupHealthy`` finds unhealthy: more of their nodes missing among the Ready
        below the acceptable minimum (its size less its scale-up request's ``Increase``:
        ``updateAcceptableRanges``; a request timed out is gone, and its late nodes count as missing) than
        ``--ok-total-unready-count`` and than ``--max-total-unready-percentage`` of its registered nodes.
        With every node Ready and no group launching more than its request none is (each registered node
        not launched is Ready). Each with its Health condition's text (``buildHealthStatusNodeGroup``: the
        counts, ``cloudProviderTarget``, min, max)."""
        unready, settings = self.port.unready_nodes(), self.settings
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
