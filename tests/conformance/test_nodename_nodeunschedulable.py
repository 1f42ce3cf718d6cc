"""kube-scheduler v1.34.10 ``plugins/nodename/node_name_test.go`` TestNodeName and
``plugins/nodeunschedulable/node_unschedulable_test.go`` TestNodeUnschedulable, ported case by case
(Filter status: both reject UnschedulableAndUnresolvable); NodeUnschedulable's queueing-hint tests
are kept as skipped cases."""

from __future__ import annotations

from typing import Any

import pytest
from builders import QUEUEING_HINTS, cases, filter_status, make_node, make_pod, skipped_cases, status

from gpufleet.model.node import NO_SCHEDULE, UNSCHEDULABLE_TAINT_KEY, Node, Toleration
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import Code, Status
from gpufleet.scheduling.plugins.node_name import NodeName
from gpufleet.scheduling.plugins.node_unschedulable import NodeUnschedulable

UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def on_node(name: str | None) -> Pod:
    """``st.MakePod().Node(name)``: ``spec.nodeName``."""
    pod = make_pod()
    pod.node_name = name
    return pod


NODE_NAME: list[Any] = [
    ("no host specified", on_node(None), make_node(""), status()),
    ("host matches", on_node("foo"), make_node("foo"), status()),
    (
        "host doesn't match",
        on_node("bar"),
        make_node("foo"),
        status(UU, "node(s) didn't match the requested node name"),
    ),
]


@pytest.mark.parametrize(("pod", "node", "want"), cases("TestNodeName", NODE_NAME, 3))
def test_node_name(pod: Pod, node: Node, want: Status) -> None:
    assert filter_status(NodeName(), pod, node) == want


def tolerating_unschedulable() -> Pod:
    pod = make_pod()
    pod.tolerations = (Toleration(UNSCHEDULABLE_TAINT_KEY, effect=NO_SCHEDULE),)
    return pod


UNSCHEDULABLE: list[Any] = [
    (
        "Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        make_pod(),
        make_node("n", unschedulable=True),
        status(UU, "node(s) were unschedulable"),
    ),
    ("Schedule pod to normal node", make_pod(), make_node("n"), status()),
    (
        "Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        tolerating_unschedulable(),
        make_node("n", unschedulable=True),
        status(),
    ),
]


@pytest.mark.parametrize(("pod", "node", "want"), cases("TestNodeUnschedulable", UNSCHEDULABLE, 3))
def test_node_unschedulable(pod: Pod, node: Node, want: Status) -> None:
    assert filter_status(NodeUnschedulable(), pod, node) == want


HINTS = {
    "TestIsSchedulableAfterNodeChange": [
        "error-wrong-new-object",
        "error-wrong-old-object",
        "skip-queue-on-unschedulable-node-added",
        "queue-on-schedulable-node-added",
        "skip-unrelated-change-unschedulable-true",
        "skip-unrelated-change-unschedulable-false",
        "queue-on-unschedulable-field-change",
    ],
    "TestIsSchedulableAfterPodTolerationChange": [
        "error-wrong-new-object",
        "error-wrong-old-object",
        "skip-different-pod-update",
        "queue-when-the-unsched-pod-gets-toleration",
        "skip-when-the-unsched-pod-gets-unrelated-toleration",
    ],
}


@pytest.mark.parametrize(
    "name", [p for test, names in HINTS.items() for p in skipped_cases(test, names, QUEUEING_HINTS)]
)
def test_queueing_hints(name: None) -> None:
    """Never runs: every case is skipped with its reason."""
