"""The node lifecycle controller's zones (Kubernetes 1.34, ``pkg/controller/nodelifecycle/
node_lifecycle_controller.go``): how fast each zone's ``NoExecute`` tainter taints its NotReady nodes.

- A node's zone is its region and zone labels (``utilnode.GetZoneKey``); a node labelled
  ``node.kubernetes.io/exclude-disruption`` counts in no zone (``isNodeExcludedFromDisruptionChecks``).
- ``ComputeZoneState``: a zone with no Ready node is fully disrupted; one with more than 2 NotReady nodes
  making at least ``--unhealthy-zone-threshold`` (0.55) of it is partially disrupted; else normal.
- ``handleDisruption`` and ``setLimiterInZone``: where every zone is fully disrupted, no zone taints
  (the controller stops all evictions); else a normal or fully disrupted zone taints at
  ``--node-eviction-rate`` (0.1 nodes a second, ``HealthyQPSFunc``), a partially disrupted one at
  ``--secondary-node-eviction-rate`` (0.01) where it has more than ``--large-cluster-size-threshold`` (50)
  nodes, else not at all (``ReducedQPSFunc``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gpufleet.model.node import Node

NORMAL = "Normal"
PARTIAL_DISRUPTION = "PartialDisruption"
FULL_DISRUPTION = "FullDisruption"
#: ``--node-eviction-rate``, ``--secondary-node-eviction-rate`` (nodes a second)
EVICTION_QPS = 0.1
SECONDARY_EVICTION_QPS = 0.01
#: ``--unhealthy-zone-threshold`` and ``--large-cluster-size-threshold``
UNHEALTHY_ZONE_THRESHOLD = 0.55
LARGE_CLUSTER_SIZE_THRESHOLD = 50
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


def zone_state(ready: int, not_ready: int) -> str:
    """``ComputeZoneState`` of a zone with this many Ready and NotReady nodes."""
    if ready == 0 and not_ready > 0:
        return FULL_DISRUPTION
    if not_ready > 2 and not_ready / (not_ready + ready) >= UNHEALTHY_ZONE_THRESHOLD:
        return PARTIAL_DISRUPTION
    return NORMAL


@dataclass(frozen=True)
class Zone:
    state: str
    size: int  # its nodes (those excluded from disruption checks left out)


def zones(nodes: Iterable[tuple[Node, bool]]) -> dict[str, Zone]:
    """Each zone's state and size from its nodes and whether each is Ready (``monitorNodeHealth``'s
    ``zoneToNodeConditions``, ``handleDisruption``'s ``ComputeZoneState`` of each)."""
    counts: dict[str, tuple[int, int]] = {}
    for node, ready in nodes:
        if excluded_from_disruption_checks(node):
            continue
        up, down = counts.get(zone_key(node), (0, 0))
        counts[zone_key(node)] = (up + ready, down + (not ready))
    return {k: Zone(zone_state(up, down), up + down) for k, (up, down) in counts.items()}


def tainting_qps(all_zones: Mapping[str, Zone], zone: str) -> float:
    """How many nodes a second the zone's ``NoExecute`` tainter taints (``handleDisruption``,
    ``setLimiterInZone``): 0 where every zone is fully disrupted. A zone of none but nodes excluded from
    disruption checks has no state: its tainter keeps the rate it was made with
    (``addPodEvictorForNewZone``)."""
    if zone not in all_zones:
        return EVICTION_QPS
    if all(z.state == FULL_DISRUPTION for z in all_zones.values()):
        return 0.0
    state, size = all_zones[zone].state, all_zones[zone].size
    if state != PARTIAL_DISRUPTION:
        return EVICTION_QPS
    return SECONDARY_EVICTION_QPS if size > LARGE_CLUSTER_SIZE_THRESHOLD else 0.0
