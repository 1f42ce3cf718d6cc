"""cluster-autoscaler's cluster state registry, the part of it gpufleet models
(``clusterstate/clusterstate.go``, 1.34): how the registered nodes count (``updateReadinessStats``), the
range of sizes a node group may have while its scale-ups and scale-downs are in flight
(``updateAcceptableRanges``), and whether the cluster and each node group are healthy enough to autoscale
(``IsClusterHealthy``, ``IsNodeGroupHealthy``, under ``--ok-total-unready-count`` and
``--max-total-unready-percentage``), and each group's one scale-up request, done or timed out
(``registerOrUpdateScaleUpNoLock``, ``updateScaleRequests``).

Pure: node names and times in, counts and verdicts out. The loop's health part
(``control.cluster_autoscaler_health``) is given the cluster as the loop reads it and asks these."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: A node not Ready within this long of registering is still starting (``MaxNodeStartupTime``).
MAX_NODE_STARTUP_S = 15 * 60.0
#: What ``RunOnce`` logs when ``IsClusterHealthy`` is false, before it returns.
NOT_READY_FOR_AUTOSCALING = "Cluster is not ready for autoscaling"


@dataclass(frozen=True)
class Readiness:
    """``clusterstate.Readiness``: the registered nodes, each Ready, not Ready after it started
    (``Unready``), or not Ready within ``MaxNodeStartupTime`` of registering (``NotStarted``)."""

    ready: tuple[str, ...] = ()
    unready: tuple[str, ...] = ()
    not_started: tuple[str, ...] = ()

    @property
    def registered(self) -> int:
        return len(self.ready) + len(self.unready) + len(self.not_started)


def readiness(nodes: Iterable[str], unready_since: Mapping[str, float], now: float) -> Readiness:
    """``updateReadinessStats``' ``update``: a node whose Ready condition is True is ``Ready``; one that is
    not is ``NotStarted`` while its ``creationTimestamp`` plus ``MaxNodeStartupTime`` is after now, else
    ``Unready``. ``unready_since``: the nodes not Ready, each with when it registered."""
    ready: list[str] = []
    unready: list[str] = []
    not_started: list[str] = []
    for name in nodes:
        since = unready_since.get(name)
        if since is None:
            ready.append(name)
        elif since + MAX_NODE_STARTUP_S > now:
            not_started.append(name)
        else:
            unready.append(name)
    return Readiness(tuple(ready), tuple(unready), tuple(not_started))


@dataclass(frozen=True)
class AcceptableRange:
    """``clusterstate.AcceptableRange``: the fewest and most nodes a group may have now, and its target."""

    min_nodes: int
    max_nodes: int
    current_target: int


def acceptable_range(
    target: int, long_unregistered: int = 0, scale_up_increase: int = 0, scale_downs: int = 0
) -> AcceptableRange:
    """``updateAcceptableRanges``: the target size less the nodes that failed to register in time and the
    increase of the scale-up in flight, up to the target plus the nodes being deleted."""
    return AcceptableRange(target - long_unregistered - scale_up_increase, target + scale_downs, target)


def too_many_unready(unready: int, total: int, ok_total_unready_count: int, max_percentage: float) -> bool:
    """The test ``IsClusterHealthy`` and ``IsNodeGroupHealthy`` share: more than ``--ok-total-unready-count``
    nodes unready and more than ``--max-total-unready-percentage`` of ``total``."""
    return unready > ok_total_unready_count and unready > max_percentage / 100.0 * total


def cluster_healthy(
    total: Readiness, nodes: int, ok_total_unready_count: int = 3, max_percentage: float = 45.0
) -> bool:
    """``IsClusterHealthy``: the cluster's ``Unready`` nodes (not those still starting) against all its
    nodes, of a group or not. An unhealthy cluster is not autoscaled at all (``RunOnce``)."""
    return not too_many_unready(len(total.unready), nodes, ok_total_unready_count, max_percentage)


def node_group_healthy(
    acceptable: AcceptableRange,
    group: Readiness | None,
    ok_total_unready_count: int = 3,
    max_percentage: float = 45.0,
) -> bool:
    """``IsNodeGroupHealthy``: with no node registered (``group`` None), healthy when its target is 0 or
    its minimum is 0 and it is scaling up; else the Ready nodes missing below the acceptable minimum
    (``unjustifiedUnready``) against its registered nodes. An unhealthy group is skipped by scale-up,
    ``not ready for scale-up`` (``NodeGroupScaleUpSafety``)."""
    if group is None:
        return acceptable.current_target == 0 or (acceptable.min_nodes == 0 and acceptable.current_target > 0)
    unjustified = max(acceptable.min_nodes - len(group.ready), 0)
    return not too_many_unready(unjustified, group.registered, ok_total_unready_count, max_percentage)


@dataclass(frozen=True)
class HealthCondition:
    """A ``Health`` condition of cluster-autoscaler's status ConfigMap (``clusterstate/api/types.go``
    ``ClusterHealthCondition``, built by ``buildHealthStatusClusterwide`` and ``buildNodeCount``): Healthy or
    Unhealthy, with the registered nodes counted Ready, ``Unready`` and ``NotStarted``."""

    healthy: bool
    registered: int
    ready: int
    unready: int
    not_started: int

    @property
    def status(self) -> str:
        """``ClusterAutoscalerHealthy`` or ``ClusterAutoscalerUnhealthy``."""
        return "Healthy" if self.healthy else "Unhealthy"

    def message(self) -> str:
        """The condition as the status ConfigMap's text said it (``Health: Unhealthy (ready=2 unready=4
        notStarted=0 registered=6)``, the counts of ``buildHealthStatusClusterwide``'s message that gpufleet
        keeps: no ``resourceUnready``, ``longNotStarted`` or ``longUnregistered``)."""
        counts = (
            ("ready", self.ready),
            ("unready", self.unready),
            ("notStarted", self.not_started),
            ("registered", self.registered),
        )
        return f"Health: {self.status} ({' '.join(f'{name}={count}' for name, count in counts)})"

    def node_counts(self) -> dict[str, int]:
        """``NodeCount.Registered``'s counts (``total``, ``ready``, ``notStarted``, ``unready.total``)."""
        return {
            "registered": self.registered,
            "ready": self.ready,
            "not_started": self.not_started,
            "unready": self.unready,
        }


def health_condition(healthy: bool, counted: Readiness, registered: int | None = None) -> HealthCondition:
    """The ``Health`` condition of ``counted``; with ``registered`` (all the registered nodes, when
    ``counted`` lists only those not Ready), the nodes not listed are Ready."""
    total = counted.registered if registered is None else registered
    unready, not_started = len(counted.unready), len(counted.not_started)
    return HealthCondition(healthy, total, total - unready - not_started, unready, not_started)


def halted_hint(
    health: HealthCondition, ok_total_unready_count: int, max_percentage: float, halted: str
) -> str:
    """What a pending pod's diagnosis says while ``IsClusterHealthy`` is false: ``halted`` (``is halted
    since 120 s``) with the Health condition and the two flags."""
    return (
        f"cluster-autoscaler {halted} ({NOT_READY_FOR_AUTOSCALING}): {health.message()}; more than "
        f"{ok_total_unready_count} nodes (--ok-total-unready-count) and more than {max_percentage:g}% of the "
        f"{health.registered} nodes (--max-total-unready-percentage) are Unready: it scales no node group up "
        "or down until fewer are"
    )


@dataclass
class ScaleUpRequest:
    """``clusterstate.ScaleUpRequest``: a node group's scale-up in flight, one per group: the nodes asked
    for (``Increase``), when it was last increased (``Time``), when they are expected by
    (``ExpectedAddTime``)."""

    group: str
    increase: int
    time: float
    expected_add_time: float


def register_scale_up(
    requests: dict[str, ScaleUpRequest], group: str, delta: int, now: float, max_node_provision_time_s: float
) -> None:
    """``registerOrUpdateScaleUpNoLock``: a group's first increase makes its request; each further one adds
    to its ``Increase`` and, when positive, shifts ``Time`` to now and ``ExpectedAddTime`` to now plus
    ``maxNodeProvisionTime``; a request brought to no increase at all is dropped (a negative delta makes
    none)."""
    request = requests.get(group)
    if request is None:
        if delta > 0:
            requests[group] = ScaleUpRequest(group, delta, now, now + max_node_provision_time_s)
        return
    if request.increase + delta <= 0:
        del requests[group]
        return
    request.increase += delta
    if delta > 0:
        request.time, request.expected_add_time = now, now + max_node_provision_time_s


def update_scale_requests(
    requests: dict[str, ScaleUpRequest], upcoming: Mapping[str, int], now: float
) -> list[ScaleUpRequest]:
    """``updateScaleRequests``: a request whose group has no upcoming node left is done and dropped
    (``areThereUpcomingNodesInNodeGroup``); one still waiting once its ``ExpectedAddTime`` is before now has
    timed out and is dropped too. The timed-out ones, in group order (their groups are backed off:
    ``registerFailedScaleUpNoLock``)."""
    timed_out = []
    for name in sorted(requests):
        request = requests[name]
        if upcoming.get(name, 0) <= 0:
            del requests[name]
        elif request.expected_add_time < now:
            timed_out.append(request)
            del requests[name]
    return timed_out
