"""Kubernetes 1.34.10 ``pkg/controller/nodelifecycle/node_lifecycle_controller_test.go``: the rows gpufleet's
node lifecycle model can express (``model.node_lifecycle_zones``, ``sim.unreachable_nodes``).

- ``TestMonitorNodeHealth``: each zone's state after a pass (``handleDisruption``, ``ComputeZoneState``),
  through ``zones``: a node counts Ready where its Ready condition is ``True`` (upstream counts a node with
  no Ready condition NotReady: rows give it as such; gpufleet's own nodes always post one).
- ``Test_isNodeExcludedFromDisruptionChecks``, and the zone rates (``setLimiterInZone``, ``ReducedQPSFunc``).
- ``TestApplyNoExecuteTaints``, ``TestApplyNoExecuteTaintsToUnreachableNode``, ``TestTaintsNodeByCondition``:
  through a simulation whose node's kubelet stops (Ready ``Unknown`` after the 50 s grace period, tainted
  ``unreachable``, untainted when it is back), and a cluster dump's nodes NotReady from the start (Ready
  ``False``: ``not-ready``; ``Unknown``: ``unreachable``). gpufleet's nodes go NotReady during a run only by
  a kubelet stopping: a node turning Ready ``False`` then, other conditions' taints, leases, node and pod
  status objects, events and API errors are not modelled: those rows are skipped, each with its reason."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import pods_by_name, simulated, write
from tests.sim.serve_scenario import ON_SERVE_NODES, serve
from tests.sim.serve_scenario import labelled_pool as pool

from gpufleet.control.clock import Priority
from gpufleet.kube import load_scenario
from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, Node, Taint
from gpufleet.model.node_lifecycle_zones import (
    EVICTION_QPS,
    FULL_DISRUPTION,
    NORMAL,
    PARTIAL_DISRUPTION,
    SECONDARY_EVICTION_QPS,
    Zone,
    ZoneStates,
    excluded_from_disruption_checks,
    zones,
)
from gpufleet.sim.simulation import Simulation

FAULT_AT = 3600.0
UNREACHABLE = "node.kubernetes.io/unreachable"
EXCLUDE = "node.kubernetes.io/exclude-disruption"
FIDELITY = (
    "the node's health timing and its pods' Ready condition (tryUpdateNodeHealth, MarkPodsNotReady) are "
    "timed against the real controller by tests/fidelity, not asserted here"
)
STATUS_OBJECT = (
    "the Node's status object (its conditions' heartbeat and transition times, reasons) is not modelled"
)
READY_FALSE = (
    "a node going Ready False during a run is not modelled: gpufleet's nodes go NotReady during a run only "
    "by a kubelet stopping (Ready Unknown); a dumped node may be Ready False from the start"
)
OTHER_CONDITIONS = "node conditions other than Ready (and their taints) are not modelled"

# -- TestMonitorNodeHealth ---------------------------------------------------------------------------------


def node(name: str, region: str = "", zone: str = "", excluded: bool = False) -> Node:
    labels = {"topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": zone} if region else {}
    labels |= {EXCLUDE: ""} if excluded else {}
    return Node(name, labels=labels)


def zone_id(region: str, zone: str) -> str:
    """``testutil.CreateZoneID``."""
    return f"{region}:\x00:{zone}"


Z1, Z2, R2Z2 = zone_id("region1", "zone1"), zone_id("region1", "zone2"), zone_id("region2", "zone2")
#: a Ready condition ``True``, ``Unknown``, none
T, U, NONE = "True", "Unknown", None
STARTUP = " (happens only at cluster startup)"

# (row, the nodes, their Ready conditions at the first pass, at the second, the zone states after each)
MONITOR_NODE_HEALTH: list[
    tuple[str, list[Node], list[str | None], list[str | None], dict[str, str], dict[str, str]]
] = [
    (
        "No Disruption: Node created recently without failure domain labels" + STARTUP,
        [node("node0")],
        [T],
        [T],
        {"": NORMAL},
        {"": NORMAL},
    ),
    (
        "No Disruption: Initially both zones down, one comes back",
        [node("node0", "region1", "zone1"), node("node1", "region1", "zone2")],
        [U, U],
        [U, T],
        {Z1: FULL_DISRUPTION, Z2: FULL_DISRUPTION},
        {Z1: FULL_DISRUPTION, Z2: NORMAL},
    ),
    (
        "Partial Disruption: Nodes created recently without status conditions" + STARTUP,
        [node(f"node{i}", "region1", "zone1") for i in range(4)],
        [NONE] * 4,
        [U, U, U, T],
        {Z1: FULL_DISRUPTION},
        {Z1: PARTIAL_DISRUPTION},
    ),
    (
        "Partial Disruption: one Node failed leading to the number of healthy Nodes to exceed the configured "
        "threshold",
        [node(f"node{i}", "region1", "zone1") for i in range(5)],
        [U, U, T, T, T],
        [U, U, U, T, T],
        {Z1: NORMAL},
        {Z1: PARTIAL_DISRUPTION},
    ),
    (
        "Full Disruption: the zone has less than 2 Nodes down, the last healthy Node has failed",
        [node(f"node{i}", "region1", "zone1") for i in range(3)],
        [U, U, T],
        [U, U, U],
        {Z1: NORMAL},
        {Z1: FULL_DISRUPTION},
    ),
    (
        "Full Disruption: all the Nodes in one zone are down",
        [node("node0", "region1", "zone1"), node("node1", "region1", "zone2")],
        [U, T],
        [U, T],
        {Z1: FULL_DISRUPTION, Z2: NORMAL},
        {Z1: FULL_DISRUPTION, Z2: NORMAL},
    ),
    (
        "Full Disruption: all the Nodes in both the zones are down",
        [node("node0", "region1", "zone1"), node("node1", "region2", "zone2")],
        [U, U],
        [U, U],
        {Z1: FULL_DISRUPTION, R2Z2: FULL_DISRUPTION},
        {Z1: FULL_DISRUPTION, R2Z2: FULL_DISRUPTION},
    ),
    (
        "Full Disruption: Ready condition removed from the Node",
        [node("node0", "region1", "zone1")],
        [T],
        [NONE],
        {Z1: NORMAL},
        {Z1: FULL_DISRUPTION},
    ),
    (
        "Full Disruption: the only available Node has the node.kubernetes.io/exclude-disruption label",
        [node("node0", "region1", "zone1"), node("node-master", "region1", "zone1", excluded=True)],
        [U, T],
        [U, T],
        {Z1: FULL_DISRUPTION},
        {Z1: FULL_DISRUPTION},
    ),
]


def judged(memory: ZoneStates, nodes: list[Node], ready: list[str | None]) -> dict[str, str]:
    """The controller's ``zoneStates`` after a pass (``handleDisruption``) of these nodes, a node Ready where
    its Ready condition is ``True`` (``ComputeZoneState``: ``nodeReadyConditions[i] != nil && Status ==
    True``)."""
    memory.judge(zones((n, r == "True") for n, r in zip(nodes, ready, strict=True)))
    return dict(memory.states)


@pytest.mark.parametrize(
    ("nodes", "first", "then", "first_states", "then_states"),
    [pytest.param(*row[1:], id=f"TestMonitorNodeHealth/{row[0]}") for row in MONITOR_NODE_HEALTH],
)
def test_monitor_node_health_sets_each_zone_s_state_from_its_ready_nodes(
    nodes: list[Node],
    first: list[str | None],
    then: list[str | None],
    first_states: dict[str, str],
    then_states: dict[str, str],
) -> None:
    """``ComputeZoneState``: no Ready node, fully disrupted; more than 2 NotReady making at least 55 %,
    partially; else normal. A node labelled ``node.kubernetes.io/exclude-disruption`` counts in no zone. The
    states are those ``handleDisruption`` keeps from one pass to the next (``zoneStates``)."""
    memory = ZoneStates()
    assert (judged(memory, nodes, first), judged(memory, nodes, then)) == (first_states, then_states)


@pytest.mark.parametrize(
    ("labelled", "want"),
    [
        pytest.param(Node("", labels={}), False, id="Test_isNodeExcludedFromDisruptionChecks/no labels"),
        pytest.param(Node("master-abc"), False, id="Test_isNodeExcludedFromDisruptionChecks/master-abc"),
        pytest.param(
            Node("", labels={EXCLUDE: ""}), True, id="Test_isNodeExcludedFromDisruptionChecks/label"
        ),
    ],
)
def test_is_node_excluded_from_disruption_checks_reads_the_label_not_the_name(
    labelled: Node, want: bool
) -> None:
    """``isNodeExcludedFromDisruptionChecks``: the ``node.kubernetes.io/exclude-disruption`` label, with any
    value; a node named ``master-...`` is not excluded."""
    assert excluded_from_disruption_checks(labelled) == want


@pytest.mark.parametrize(
    ("all_zones", "qps"),
    [
        pytest.param({Z1: Zone(NORMAL, 3)}, EVICTION_QPS, id="normal"),
        pytest.param(
            {Z1: Zone(FULL_DISRUPTION, 3), Z2: Zone(NORMAL, 1)}, EVICTION_QPS, id="full, another not"
        ),
        pytest.param({Z1: Zone(FULL_DISRUPTION, 3), Z2: Zone(FULL_DISRUPTION, 1)}, 0.0, id="every zone full"),
        pytest.param({Z1: Zone(PARTIAL_DISRUPTION, 50)}, 0.0, id="partial, 50 nodes"),
        pytest.param({Z1: Zone(PARTIAL_DISRUPTION, 51)}, SECONDARY_EVICTION_QPS, id="partial, 51 nodes"),
        pytest.param({Z2: Zone(FULL_DISRUPTION, 1)}, EVICTION_QPS, id="a zone of excluded nodes only"),
    ],
)
def test_a_zone_taints_at_the_rate_its_state_and_size_give(all_zones: dict[str, Zone], qps: float) -> None:
    """``handleDisruption``'s first pass and ``setLimiterInZone`` for zone 1: ``HealthyQPSFunc`` (0.1) where
    normal or fully disrupted; ``ReducedQPSFunc`` where partially: 0.01 above
    ``--large-cluster-size-threshold`` (50 nodes), else 0; 0 everywhere where every zone is fully disrupted;
    a zone with no state (its nodes all excluded) keeps the rate its tainter was made with
    (``addPodEvictorForNewZone``)."""
    assert ZoneStates().judge(all_zones).limiters.get(Z1, EVICTION_QPS) == qps


# -- through a simulation: a node whose kubelet stops -----------------------------------------------------


SERVE = serve("3h", ON_SERVE_NODES)


def reboots(nodes: list[str], reboot: str) -> str:
    faults = "".join(f"\n  - {{at: 1h, node: {n}, kind: xid-79}}" for n in nodes)
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {{name: f}}
spec:
  response: {{detection: 0s, reboot: {reboot}}}
  faults:{faults}
"""


def taints_at(
    tmp_path: Path, texts: list[str], times: list[float]
) -> dict[float, dict[str, tuple[Taint, ...]]]:
    """The nodes' taints at each of ``times`` of a simulation of ``texts``."""
    sim = Simulation(load_scenario(write(tmp_path, *texts)))
    seen: dict[float, dict[str, tuple[Taint, ...]]] = {}

    def look(t: float) -> None:
        seen[t] = {name: sim.state.nodes[i].taints for name, i in sim.state.index.items()}

    for t in times:
        sim.loop.at(t, Priority.ARRIVAL, partial(look, t))
    sim.run()
    return seen


def test_apply_no_execute_taints_to_unreachable_node_and_take_them_off_when_it_is_back(
    tmp_path: Path,
) -> None:
    """``TestApplyNoExecuteTaintsToUnreachableNode`` (and ``TestApplyNoExecuteTaints``' node0,
    ``TestTaintsNodeByCondition``'s Ready ``Unknown`` row): node0's kubelet stops at 1h; past the 50 s grace
    period its Ready is ``Unknown``: tainted ``unreachable:NoSchedule`` (``doNoScheduleTaintingPass``) and
    ``unreachable:NoExecute`` (``doNoExecuteTaintingPass``), node1 not; Ready again (the kubelet back
    after 10 min), both taints are taken off (``markNodeAsReachable``)."""
    texts = [pool("h100", 2, "{role: serve}"), SERVE, reboots(["h100-0"], "10m")]
    seen = taints_at(tmp_path, texts, [FAULT_AT + 49, FAULT_AT + 51, FAULT_AT + 601])
    unreachable = (Taint(UNREACHABLE, effect=NO_SCHEDULE), Taint(UNREACHABLE, effect=NO_EXECUTE))
    assert seen[FAULT_AT + 49] == {"h100-0": (), "h100-1": ()}
    assert seen[FAULT_AT + 51] == {"h100-0": unreachable, "h100-1": ()}
    assert seen[FAULT_AT + 601] == {"h100-0": (), "h100-1": ()}


def dumped(ready: str, taints: str = "[]") -> str:
    """node0, Ready ``ready`` with these taints (a YAML flow list), and node1, Ready, as a dump has them,
    one zone; a pod running on node0."""
    return f"""
apiVersion: v1
kind: Node
metadata: {{name: node0}}
spec: {{taints: {taints}}}
status:
  capacity: {{cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}}
  conditions: [{{type: Ready, status: "{ready}"}}]
---
apiVersion: v1
kind: Node
metadata: {{name: node1}}
status:
  capacity: {{cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}}
  conditions: [{{type: Ready, status: "True"}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {{gpufleet.io/duration: 1h}}
spec:
  nodeName: node0
  containers:
  - {{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
status: {{phase: Running}}
"""


NOT_READY = "node.kubernetes.io/not-ready"


@pytest.mark.parametrize(
    ("ready", "key"),
    [
        pytest.param("False", NOT_READY, id="TestApplyNoExecuteTaints/node2 Ready False"),
        pytest.param("False", NOT_READY, id="TestTaintsNodeByCondition/Ready is false"),
        pytest.param("Unknown", UNREACHABLE, id="TestTaintsNodeByCondition/Ready is unknown, dumped"),
    ],
)
def test_a_dumped_not_ready_node_is_tainted_for_its_ready_status(
    tmp_path: Path, ready: str, key: str
) -> None:
    """``doNoScheduleTaintingPass`` and ``doNoExecuteTaintingPass`` (``nodeConditionToTaintKeyStatusMap``,
    ``NotReadyTaintTemplate``, ``UnreachableTaintTemplate``): a dumped node0 whose Ready condition is
    ``False`` is tainted ``not-ready`` (``NoSchedule`` as it is read, ``NoExecute`` at the first pass: its
    zone has a Ready node, node1, which is not); ``Unknown``, ``unreachable``. Its pod, tolerating either
    for ``DefaultTolerationSeconds``' 300 s, is deleted then: under a kubelet that posts (``False``) it stops
    and ends; under one that posts nothing (``Unknown``) it stays Running, Terminating, no work of it
    known to stop."""
    seen = taints_at(tmp_path, [dumped(ready)], [1.0])
    assert seen[1.0] == {
        "node0": (Taint(key, effect=NO_SCHEDULE), Taint(key, effect=NO_EXECUTE)),
        "node1": (),
    }
    sim = Simulation(load_scenario(write(tmp_path, dumped(ready))))
    sim.run()
    rec = sim.lifecycle.records["default/p"]
    assert rec.reason == "TaintManagerEviction"
    if ready == "False":
        assert (rec.phase, rec.disruptions) == ("Failed", (300,))
    else:
        assert (rec.phase, rec.disruptions, sim.state.assignments["default/p"].deleted_s) == (
            "Running",
            (),
            300,
        )


def test_swap_unreachable_not_ready_taints(tmp_path: Path) -> None:
    """``TestSwapUnreachableNotReadyTaints``' second half: node0, Ready ``False`` but tainted
    ``unreachable:NoExecute`` (as it was while ``Unknown``), has the taint swapped for ``not-ready:NoExecute``
    at the first pass, at once, no token taken (``processTaintBaseEviction``, ``SwapNodeControllerTaint``).
    gpufleet's nodes never turn from ``Unknown`` to ``False`` during a run: the dump holds the first half."""
    taints = f"[{{key: {UNREACHABLE}, effect: NoExecute}}, {{key: {NOT_READY}, effect: NoSchedule}}]"
    seen = taints_at(tmp_path, [dumped("False", taints)], [0.5])
    assert seen[0.5]["node0"] == (Taint(NOT_READY, effect=NO_SCHEDULE), Taint(NOT_READY, effect=NO_EXECUTE))


def only_fault(summary: dict[str, Any]) -> dict[str, Any]:
    (fault,) = summary["faults"]["faults"]
    return fault


def test_a_node_excluded_from_disruption_checks_does_not_keep_its_zone_out_of_full_disruption(
    tmp_path: Path,
) -> None:
    """``TestMonitorNodeHealth``'s "the only available Node has the node.kubernetes.io/exclude-disruption
    label" in a run: the serving node's kubelet stops for an hour; the only other node, Ready, is labelled
    ``node.kubernetes.io/exclude-disruption``, so its zone counts only the NotReady node: every zone is
    fully disrupted, the controller stops all evictions (``handleDisruption``): no ``NoExecute`` taint, the
    pod is not evicted at +350 s and restarts in place when the kubelet is back."""
    texts = [
        pool("h100", 1, "{role: serve}"),
        pool("ctl", 1, "{node.kubernetes.io/exclude-disruption: ''}"),
        SERVE,
        reboots(["h100-0"], "1h"),
    ]
    summary = simulated(write(tmp_path, *texts))
    pods = pods_by_name(summary)
    assert list(pods) == ["serve-0"] and pods["serve-0"]["restarts"] == 1
    fault = only_fault(summary)
    assert fault["not_ready_s"] == 50 and fault["tainted_s"] is None and fault["pods_evicted_s"] is None


def test_a_large_zone_partially_disrupted_taints_at_the_secondary_rate(tmp_path: Path) -> None:
    """``setLimiterInZone`` with ``ReducedQPSFunc``: 30 of a zone's 52 nodes (58 %, above 2 and at least
    55 %) stop at once: partially disrupted, and larger than ``--large-cluster-size-threshold`` (50): the
    zone taints at ``--secondary-node-eviction-rate``, 0.01 nodes a second: one at +50 s, the next 100 s
    later, and so on (not every 10 s)."""
    texts = [pool("h100", 52, "{role: serve}"), SERVE, reboots([f"h100-{i}" for i in range(30)], "1h")]
    summary = simulated(write(tmp_path, *texts))
    tainted = sorted(f["tainted_s"] for f in summary["faults"]["faults"] if f["tainted_s"] is not None)
    assert tainted[:4] == [50, 150, 250, 350]


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(name, marks=pytest.mark.skip(reason=reason))
        for name, reason in [
            ("TestPodStatusChange", FIDELITY),
            ("TestMonitorNodeHealthUpdateStatus", STATUS_OBJECT),
            ("TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease", "node leases are not modelled"),
            ("TestMonitorNodeHealthMarkPodsNotReady", FIDELITY),
            (
                "TestMonitorNodeHealthMarkPodsNotReadyWithWorkerSize",
                "the controller's workers are not modelled",
            ),
            ("TestMonitorNodeHealthMarkPodsNotReadyRetry", "API errors are not modelled"),
            (
                "TestApplyNoExecuteTaints/node3 Ready again between the health pass and the tainting pass",
                "the two passes are one instant in gpufleet (a node Ready again is not tainted, as upstream)",
            ),
            (
                "TestApplyNoExecuteTaintsToNodesEnqueueTwice",
                READY_FALSE
                + " (node5); a node Ready again leaving the queue, the next tainted in its stead, is "
                "tests/sim/test_zone_disruption.py's",
            ),
            ("TestTaintsNodeByCondition/NetworkUnavailable is true", OTHER_CONDITIONS),
            ("TestTaintsNodeByCondition/NetworkUnavailable is true#01", OTHER_CONDITIONS),
            ("TestNodeEventGeneration", "gpufleet records no Event of the node lifecycle controller"),
            ("TestReconcileNodeLabels", "the beta OS and architecture labels are not reconciled"),
            ("TestTryUpdateNodeHealth", FIDELITY),
            ("TestProcessPodMarkPodNotReady", FIDELITY),
        ]
    ],
)
def test_node_lifecycle_rows_gpufleet_cannot_express(row: str) -> None:
    raise AssertionError(row)
