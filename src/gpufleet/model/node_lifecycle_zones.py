"""The node lifecycle controller's zones (Kubernetes 1.34, ``pkg/controller/nodelifecycle/
node_lifecycle_controller.go``): how fast each zone's ``NoExecute`` tainter taints its NotReady nodes.

- A node's zone is its region and zone labels (``utilnode.GetZoneKey``); a node labelled
  ``node.kubernetes.io/exclude-disruption`` counts in no zone (``isNodeExcludedFromDisruptionChecks``).
- ``ComputeZoneState``: a zone with no Ready node is fully disrupted; one with more than 2 NotReady nodes
  making at least ``--unhealthy-zone-threshold`` (0.55) of it is partially disrupted; else normal.
- ``handleDisruption``, at each monitor pass (``ZoneStates.judge``), against the states it kept from the
  last: a zone no longer seen (no node left) is forgotten; where every zone is fully disrupted and was not
  before, every tainter stops (rate 0) and the controller takes the ``NoExecute`` taints off every node
  (``markNodeAsReachable``); where none was not fully disrupted and one is not now, every zone's tainter
  gets its state's rate; else each zone whose state changed does (``setLimiterInZone``): a normal or fully
  disrupted zone taints at ``--node-eviction-rate`` (0.1 nodes a second, ``HealthyQPSFunc``), a partially
  disrupted one at ``--secondary-node-eviction-rate`` (0.01) where it has more than
  ``--large-cluster-size-threshold`` (50) nodes, else not at all (``ReducedQPSFunc``).

Those four flags (``NodeLifecycleControllerConfiguration``, ``pkg/controller/nodelifecycle/config``) are an
``EvictionRates``, upstream's defaults unless a Simulation's ``spec.controllerManager`` sets them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gpufleet.model.node import Node

#: the state of a zone just seen (``stateInitial``)
INITIAL = "Initial"
NORMAL = "Normal"
PARTIAL_DISRUPTION = "PartialDisruption"
FULL_DISRUPTION = "FullDisruption"
#: ``--node-eviction-rate``, ``--secondary-node-eviction-rate`` (nodes a second)
EVICTION_QPS = 0.1
SECONDARY_EVICTION_QPS = 0.01
#: ``--unhealthy-zone-threshold`` and ``--large-cluster-size-threshold``
UNHEALTHY_ZONE_THRESHOLD = 0.55
LARGE_CLUSTER_SIZE_THRESHOLD = 50


@dataclass(frozen=True)
class EvictionRates:
    """``--node-eviction-rate``, ``--secondary-node-eviction-rate`` (nodes a second),
    ``--large-cluster-size-threshold`` and ``--unhealthy-zone-threshold``."""

    node_eviction_rate: float = EVICTION_QPS
    secondary_node_eviction_rate: float = SECONDARY_EVICTION_QPS
    large_cluster_size_threshold: int = LARGE_CLUSTER_SIZE_THRESHOLD
    unhealthy_zone_threshold: float = UNHEALTHY_ZONE_THRESHOLD


EXCLUDE_DISRUPTION_LABEL = "node.kubernetes.io/exclude-disruption"
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def zone_key(node: Node) -> str:
    """``utilnode.GetZoneKey``: the node's region and zone (both empty: the one zone of no label)."""
    region = next((node.labels[k] for k in REGION_LABELS if k in node.labels), "")
    zone = next((node.labels[k] for k in ZONE_LABELS if k in node.labels), "")
    return f"{region}:\x00:{zone}" if region or zone else ""


def excluded_from_disruption_checks(node: Node) -> bool:
    """``isNodeExcludedFromDisruptionChecks``: the ``node.kubernetes.io/exclude-disruption`` label, any
    value."""
    return EXCLUDE_DISRUPTION_LABEL in node.labels


def zone_state(ready: int, not_ready: int, threshold: float = UNHEALTHY_ZONE_THRESHOLD) -> str:
    """``ComputeZoneState`` of a zone with this many Ready and NotReady nodes (``threshold``:
    ``--unhealthy-zone-threshold``)."""
    if ready == 0 and not_ready > 0:
        return FULL_DISRUPTION
    if not_ready > 2 and not_ready / (not_ready + ready) >= threshold:
        return PARTIAL_DISRUPTION
    return NORMAL


@dataclass(frozen=True)
class Zone:
    state: str
    size: int  # its nodes (those excluded from disruption checks left out)


def zones(nodes: Iterable[tuple[Node, bool]], threshold: float = UNHEALTHY_ZONE_THRESHOLD) -> dict[str, Zone]:
    """Each zone's state and size from its nodes and whether each is Ready (``monitorNodeHealth``'s
    ``zoneToNodeConditions``, ``handleDisruption``'s ``ComputeZoneState`` of each)."""
    counts: dict[str, tuple[int, int]] = {}
    for node, ready in nodes:
        if excluded_from_disruption_checks(node):
            continue
        key = zone_key(node)
        up, down = counts.get(key, (0, 0))
        counts[key] = (up + ready, down + (not ready))
    return {k: Zone(zone_state(up, down, threshold), up + down) for k, (up, down) in counts.items()}


def limiter_qps(zone: Zone, rates: EvictionRates = EvictionRates()) -> float:
    """``setLimiterInZone``: the rate a zone's ``NoExecute`` tainter is given for its state and size."""
    if zone.state != PARTIAL_DISRUPTION:
        return rates.node_eviction_rate
    large = zone.size > rates.large_cluster_size_threshold
    return rates.secondary_node_eviction_rate if large else 0.0


@dataclass(frozen=True)
class Judgement:
    """What one ``handleDisruption`` did."""

    limiters: dict[str, float]  # zone -> the rate its tainter was given (``SwapLimiter``)
    forgotten: tuple[str, ...]  # the zones no longer seen
    untaint_all: bool = False  # every zone became fully disrupted: ``markNodeAsReachable`` of every node


@dataclass
class ZoneStates:
    """``handleDisruption``'s memory, the controller's ``zoneStates``."""

    states: dict[str, str] = field(default_factory=dict)
    rates: EvictionRates = field(default_factory=EvictionRates)

    def judge(self, all_zones: Mapping[str, Zone]) -> Judgement:
        """One pass's ``handleDisruption`` with these zones (``zones``). A zone no longer seen is forgotten
        (upstream stops forgetting at the first zone not fully disrupted, in map order: here all are)."""
        forgotten = tuple(k for k in self.states if k not in all_zones)
        for k in forgotten:
            del self.states[k]
        for k in all_zones:
            self.states.setdefault(k, INITIAL)
        all_are = all(z.state == FULL_DISRUPTION for z in all_zones.values())
        all_was = all(v == FULL_DISRUPTION for v in self.states.values())
        if all_are and all_was:
            return Judgement({}, forgotten)
        if all_are:  # entering full disruption: every tainter stops
            self.states = dict.fromkeys(self.states, FULL_DISRUPTION)
            return Judgement(dict.fromkeys(self.states, 0.0), forgotten, untaint_all=True)
        changed = (
            self.states if all_was else {k: v for k, v in self.states.items() if v != all_zones[k].state}
        )
        limiters = {k: limiter_qps(all_zones[k], self.rates) for k in changed}
        self.states |= {k: all_zones[k].state for k in limiters}
        return Judgement(limiters, forgotten)
