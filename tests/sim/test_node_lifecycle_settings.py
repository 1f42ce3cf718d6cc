"""The node lifecycle under a Simulation's ``spec.controllerManager`` and ``spec.apiServer``
(``sim.unreachable_nodes``, ``model.node_lifecycle_zones``, ``model.default_toleration_seconds``): a node
whose kubelet stopped goes NotReady ``--node-monitor-grace-period`` after it (``tryUpdateNodeHealth``), its
pods deleted after ``--default-unreachable-toleration-seconds`` (``DefaultTolerationSeconds``, then
``processPodOnNode``), its zone's NoExecute tainter at the rate ``setLimiterInZone`` gives it from
``--node-eviction-rate``, ``--secondary-node-eviction-rate``, ``--large-cluster-size-threshold`` and
``--unhealthy-zone-threshold`` (``ComputeZoneState``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.conftest import pods_by_name, simulated, write
from tests.sim.serve_scenario import labelled_pool, serve

FAULT_AT = 3600.0


def reboots(*nodes: str) -> str:
    """Each node's kubelet stops at 1h for a 10-minute reboot (no health checker acts before it)."""
    faults = "".join(f"\n  - {{at: 1h, node: {n}, kind: xid-79}}" for n in nodes)
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {{name: f}}
spec:
  response: {{detection: 0s, reboot: 10m}}
  faults:{faults}
"""


def one_reboot(tmp_path: Path, spec: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The serving pod's node (h100-0, of two) rebooted; ``spec``: more of the Simulation's spec."""
    summary = simulated(write(tmp_path, labelled_pool("h100", 2), serve(f"3h{spec}"), reboots("h100-0")))
    return summary["faults"]["faults"][0], pods_by_name(summary)


@pytest.mark.parametrize(
    ("spec", "not_ready", "evicted"),
    [
        pytest.param("", 50, 350, id="defaults: 50 s, 300 s"),
        pytest.param(", controllerManager: {nodeMonitorGracePeriod: 20s}", 20, 320, id="grace 20 s"),
        pytest.param(
            ", controllerManager: {nodeMonitorGracePeriod: 20s}, "
            "apiServer: {defaultUnreachableTolerationSeconds: 60}",
            20,
            80,
            id="grace 20 s, unreachable toleration 60 s",
        ),
        pytest.param(
            ", apiServer: {defaultNotReadyTolerationSeconds: 60}", 50, 350, id="not-ready: not this"
        ),
    ],
)
def test_a_shorter_grace_period_and_default_toleration_evict_a_stopped_nodes_pod_sooner(
    tmp_path: Path, spec: str, not_ready: int, evicted: int
) -> None:
    """``tryUpdateNodeHealth``: Ready Unknown once ``now`` is past the last heartbeat plus
    ``nodeMonitorGracePeriod``; tainted ``unreachable:NoExecute`` then (the zone's first token); the pod,
    admitted with ``defaultUnreachableTolerationSeconds`` for that taint (the not-ready one is another
    taint's), deleted that long after, and the ReplicaSet's replacement made as its deletion begins."""
    fault, pods = one_reboot(tmp_path, spec)
    assert (fault["not_ready_s"], fault["tainted_s"], fault["pods_evicted_s"]) == (
        not_ready,
        not_ready,
        evicted,
    )
    assert pods["serve-0"]["reason"] == "TaintManagerEviction"
    assert pods["serve-1"]["created_s"] == FAULT_AT + evicted


def zone_of_four(spec: str) -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: 2h{spec}}}
---
{labelled_pool("h100", 4)}"""


@pytest.mark.parametrize(
    ("spec", "tainted"),
    [
        pytest.param("", [None, None, None], id="defaults: partial disruption of 4 nodes, not a large zone"),
        pytest.param(
            ", controllerManager: {largeClusterSizeThreshold: 3, secondaryNodeEvictionRate: 0.5}",
            [50, 52, 54],
            id="a large zone at the secondary rate",
        ),
        pytest.param(", controllerManager: {unhealthyZoneThreshold: 0.8}", [50, 60, 70], id="normal at 0.8"),
        pytest.param(
            ", controllerManager: {unhealthyZoneThreshold: 0.8, nodeEvictionRate: 1}",
            [50, 51, 52],
            id="normal, 1 node a second",
        ),
        pytest.param(
            ", controllerManager: {unhealthyZoneThreshold: 0.8, nodeEvictionRate: 0}",
            [50, None, None],
            id="normal at rate 0: the first bucket's one token, then none",
        ),
        pytest.param(
            ", controllerManager: {largeClusterSizeThreshold: 3, secondaryNodeEvictionRate: 0.5, "
            "nodeEvictionRate: 0}",
            [50, 52, 54],
            id="rate 0, a large zone partially disrupted: the secondary rate, its token kept",
        ),
    ],
)
def test_a_zones_tainter_takes_its_rate_and_state_from_the_settings(
    tmp_path: Path, spec: str, tainted: list[int | None]
) -> None:
    """Three of a zone's four nodes NotReady in one pass: ``ComputeZoneState`` says partially disrupted
    (more than 2, 0.75 at least ``unhealthyZoneThreshold``) and ``ReducedQPSFunc`` gives
    ``secondaryNodeEvictionRate`` to a zone of more than ``largeClusterSizeThreshold`` nodes, else 0 (no
    taint); normal, ``HealthyQPSFunc``'s ``nodeEvictionRate``: a taint every 1 / rate seconds. At a
    ``nodeEvictionRate`` of 0 the zone's first tainter (``addPodEvictorForNewZone``: a token bucket at rate 0,
    burst 1) taints one node and then none, and ``SwapLimiter`` keeps it for a normal zone (its ``QPS()`` is
    already 0); a partially disrupted large zone swaps it for the secondary rate, not drained (the bucket
    still held its token)."""
    summary = simulated(write(tmp_path, zone_of_four(spec), reboots("h100-0", "h100-1", "h100-2")))
    faults = sorted(summary["faults"]["faults"], key=lambda f: f["node"])
    assert [f["not_ready_s"] for f in faults] == [50, 50, 50]
    assert [f["tainted_s"] for f in faults] == tainted
