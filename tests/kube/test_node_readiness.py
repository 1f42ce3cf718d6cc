"""A Node's Ready condition and times read from manifests and dumps (``kube.nodes``), and mapped onto a
run's clock (``model.node_readiness``).

Upstream rules checked: cluster-autoscaler counts a node NotReady by its Ready condition and ``Unready``
from ``creationTimestamp`` + ``MaxNodeStartupTime`` (``clusterstate.updateReadinessStats``, 1.34);
kube-scheduler reads only the taints the node lifecycle controller adds for it
(``nodeConditionToTaintKeyStatusMap``: Ready ``False`` -> ``node.kubernetes.io/not-ready``, ``Unknown``
-> ``node.kubernetes.io/unreachable``, ``doNoScheduleTaintingPass``, pkg/controller/nodelifecycle)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from kube_manifests import load, problems, warnings

from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, Node, Taint
from gpufleet.model.node_readiness import REGISTERED_LONG_AGO_S, NotReadyNode, clock_zero, not_ready_at_start

LABEL = "scenario.yaml: document 1 (Node/n)"
T0 = "2026-12-06T05:00:00Z"


def unix(text: str) -> float:
    return datetime.fromisoformat(text).astimezone(UTC).timestamp()


def node(conditions: str, taints: str = "[]", created: str = "2026-12-06T03:00:00Z") -> str:
    return f"""
apiVersion: v1
kind: Node
metadata: {{name: n, creationTimestamp: "{created}"}}
spec: {{taints: {taints}}}
status:
  capacity: {{cpu: '8'}}
  conditions: {conditions}
"""


READY_FALSE = f"""
  - {{type: MemoryPressure, status: "False", lastHeartbeatTime: "{T0}",
     lastTransitionTime: "2026-12-06T03:00:00Z"}}
  - {{type: Ready, status: "False", lastHeartbeatTime: "2026-12-06T04:59:30Z",
     lastTransitionTime: "2026-12-06T04:30:00Z"}}
"""


def test_the_ready_condition_its_transition_and_the_nodes_times_are_read(tmp_path: Path) -> None:
    (n,) = load(
        tmp_path, node(READY_FALSE, taints="[{key: node.kubernetes.io/not-ready, effect: NoSchedule}]")
    ).nodes
    assert (n.ready, n.ready_since_unix) == ("False", unix("2026-12-06T04:30:00Z"))
    assert n.created_unix == unix("2026-12-06T03:00:00Z")
    assert n.observed_unix == unix(T0)  # the latest heartbeat
    assert n.taints == (Taint("node.kubernetes.io/not-ready", "", NO_SCHEDULE),)


def test_a_not_ready_node_with_its_taint_is_no_warning(tmp_path: Path) -> None:
    """The condition is read now (it used to be ``Ready=False is not modelled``); with the lifecycle
    controller's taint (any effect) nothing is added."""
    taints = "[{key: node.kubernetes.io/not-ready, effect: NoExecute}]"
    assert warnings(tmp_path, node(READY_FALSE, taints=taints)) == []
    (n,) = load(tmp_path, node(READY_FALSE, taints=taints)).nodes
    assert n.taints == (Taint("node.kubernetes.io/not-ready", "", NO_EXECUTE),)


def test_ready_unknown_without_the_unreachable_taint_gets_it_with_a_warning(tmp_path: Path) -> None:
    conditions = f'[{{type: Ready, status: Unknown, lastTransitionTime: "{T0}"}}]'
    (n,) = load(tmp_path, node(conditions)).nodes
    assert n.ready == "Unknown"
    assert n.taints == (Taint("node.kubernetes.io/unreachable", "", NO_SCHEDULE),)
    assert warnings(tmp_path, node(conditions)) == [
        f"{LABEL}: spec.taints: Ready=Unknown without the node.kubernetes.io/unreachable taint: tainted "
        "node.kubernetes.io/unreachable:NoSchedule, as the node lifecycle controller taints it at its next "
        "pass (kube-scheduler reads the taint, not the condition)"
    ]


def test_a_node_without_conditions_is_ready_and_has_no_times(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: '8'}}\n"
    (n,) = load(tmp_path, text).nodes
    assert (n.ready, n.ready_since_unix, n.created_unix, n.observed_unix, n.taints) == (
        "True",
        None,
        None,
        None,
        (),
    )


def test_a_ready_status_or_time_that_is_not_one_is_an_error(tmp_path: Path) -> None:
    conditions = '[{type: Ready, status: "Yes", lastTransitionTime: "yesterday"}]'
    assert problems(tmp_path, node(conditions)) == [
        f'{LABEL}: status.conditions[0].lastTransitionTime: Invalid value: "yesterday": '
        "must be an RFC 3339 time",
        f'{LABEL}: status.conditions[0].status: Unsupported value: "Yes": supported values: "True", '
        '"False", "Unknown"',
    ]


def test_a_node_pools_template_keeps_a_ready_condition_as_a_warning(tmp_path: Path) -> None:
    text = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: p}
spec:
  replicas: 1
  template:
    status:
      capacity: {cpu: '8'}
      conditions: [{type: Ready, status: "False"}]
"""
    assert [w for w in warnings(tmp_path, text) if "Ready=False" in w] == [
        "scenario.yaml: document 1 (NodePool/p): spec.template.status.conditions[0] Ready=False is not "
        "modelled (the node is treated as Ready); ignored"
    ]


def n(
    name: str, ready: str = "True", since: str | None = None, created: str | None = None, seen: str = T0
) -> Node:
    return Node(
        name,
        ready=ready,
        ready_since_unix=unix(since) if since else None,
        created_unix=unix(created) if created else None,
        observed_unix=unix(seen),
    )


def test_time_zero_is_the_latest_time_the_nodes_show_unless_start_time_says() -> None:
    nodes = [n("a", seen="2026-12-06T04:59:00Z"), n("b")]
    assert clock_zero(nodes) == unix(T0)
    assert clock_zero(nodes, 42.0) == 42.0
    assert clock_zero([Node("c")]) is None


def test_not_ready_nodes_are_placed_before_time_zero() -> None:
    nodes = [
        n("ready", created="2026-12-06T01:00:00Z"),
        n("down", "Unknown", since="2026-12-06T04:30:00Z", created="2026-12-06T03:00:00Z"),
        n("hand-written", "False"),
    ]
    assert not_ready_at_start(nodes) == [
        NotReadyNode("down", "Unknown", -1800.0, -7200.0),
        NotReadyNode("hand-written", "False", 0.0, REGISTERED_LONG_AGO_S),
    ]
    later = unix(T0) + 600.0  # spec.startTime ten minutes after the dump
    assert not_ready_at_start(nodes, later)[0] == NotReadyNode("down", "Unknown", -2400.0, -7800.0)
