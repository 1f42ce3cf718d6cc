"""kube-scheduler v1.34.10 ``plugins/tainttoleration/taint_toleration_test.go``, ported case by case:
TestTaintTolerationScore (Score then NormalizeScore over the nodes) and TestTaintTolerationFilter
(status code and reason, 1.34.10's ``node(s) had untolerated taint(s)``).

TestIsSchedulableAfterNodeChange and Test_isSchedulableAfterPodTolerationChange (queueing hints) are
kept as skipped cases."""

from __future__ import annotations

from typing import Any

import pytest
from builders import (
    QUEUEING_HINTS,
    cases,
    filter_status,
    make_node,
    make_pod,
    skipped_cases,
    static_scores,
    status,
)

from gpufleet.model.node import NO_SCHEDULE, PREFER_NO_SCHEDULE, Node, Taint, Toleration
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import Code, Status
from gpufleet.scheduling.plugins.taint_toleration import TaintToleration

UNTOLERATED = status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)")


def pod_with(*tolerations: Toleration) -> Pod:
    """``podWithTolerations("pod1", ...)``."""
    pod = make_pod(name="pod1")
    pod.tolerations = tolerations
    return pod


def node_with(name: str, *taints: Taint) -> Node:
    """``nodeWithTaints(name, ...)``."""
    return make_node(name, taints=taints)


def prefer(key: str, value: str) -> Taint:
    return Taint(key, value, PREFER_NO_SCHEDULE)


def tolerate(key: str, value: str, effect: str = PREFER_NO_SCHEDULE, operator: str = "Equal") -> Toleration:
    return Toleration(key, operator, value, effect)


ARM, SSD = prefer("cpu-type", "arm64"), prefer("disk-type", "ssd")
SCORE: list[Any] = [
    (
        "node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
        pod_with(tolerate("foo", "bar")),
        [node_with("nodeA", prefer("foo", "bar")), node_with("nodeB", prefer("foo", "blah"))],
        [100, 0],
    ),
    (
        "the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many "
        "tolerable taints a node has",
        pod_with(tolerate("cpu-type", "arm64"), tolerate("disk-type", "ssd")),
        [node_with("nodeA"), node_with("nodeB", ARM), node_with("nodeC", ARM, SSD)],
        [100, 100, 100],
    ),
    (
        "the more intolerable taints a node has, the lower score it gets.",
        pod_with(tolerate("foo", "bar")),
        [node_with("nodeA"), node_with("nodeB", ARM), node_with("nodeC", ARM, SSD)],
        [100, 50, 0],
    ),
    (
        "only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations "
        "priority function",
        pod_with(tolerate("cpu-type", "arm64", NO_SCHEDULE), tolerate("disk-type", "ssd", NO_SCHEDULE)),
        [
            node_with("nodeA"),
            node_with("nodeB", Taint("cpu-type", "arm64", NO_SCHEDULE)),
            node_with("nodeC", ARM, SSD),
        ],
        [100, 100, 0],
    ),
    (
        "Default behaviour No taints and tolerations, lands on node with no taints",
        pod_with(),
        [node_with("nodeA"), node_with("nodeB", ARM)],
        [100, 0],
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "want"), cases("TestTaintTolerationScore", SCORE, 3))
def test_taint_toleration_score(pod: Pod, nodes: list[Node], want: list[int]) -> None:
    assert static_scores(TaintToleration(), pod, nodes) == want


DEDICATED_USER1 = Taint("dedicated", "user1", NO_SCHEDULE)
FOO_BAR = Taint("foo", "bar", NO_SCHEDULE)
FILTER: list[Any] = [
    (
        "A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        pod_with(),
        node_with("nodeA", DEDICATED_USER1),
        UNTOLERATED,
    ),
    (
        "A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        pod_with(tolerate("dedicated", "user1", NO_SCHEDULE)),
        node_with("nodeA", DEDICATED_USER1),
        status(),
    ),
    (
        "A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        pod_with(tolerate("dedicated", "user2", NO_SCHEDULE)),
        node_with("nodeA", DEDICATED_USER1),
        UNTOLERATED,
    ),
    (
        "A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the "
        "taints on the node",
        pod_with(tolerate("foo", "", NO_SCHEDULE, "Exists")),
        node_with("nodeA", FOO_BAR),
        status(),
    ),
    (
        "A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be "
        "scheduled onto the node",
        pod_with(tolerate("dedicated", "user2", NO_SCHEDULE), tolerate("foo", "", NO_SCHEDULE, "Exists")),
        node_with("nodeA", Taint("dedicated", "user2", NO_SCHEDULE), FOO_BAR),
        status(),
    ),
    (
        "A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect "
        "doesn't match, can't be scheduled onto the node",
        pod_with(tolerate("foo", "bar", PREFER_NO_SCHEDULE)),
        node_with("nodeA", FOO_BAR),
        UNTOLERATED,
    ),
    (
        "The pod has a toleration that keys and values match the taint on the node, the effect of toleration "
        "is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
        pod_with(tolerate("foo", "bar", "")),
        node_with("nodeA", FOO_BAR),
        status(),
    ),
    (
        "The pod has a toleration that key and value don't match the taint on the node, but the effect of "
        "taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
        pod_with(tolerate("dedicated", "user2", NO_SCHEDULE)),
        node_with("nodeA", prefer("dedicated", "user1")),
        status(),
    ),
    (
        "The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be "
        "scheduled onto the node",
        pod_with(),
        node_with("nodeA", prefer("dedicated", "user1")),
        status(),
    ),
]


@pytest.mark.parametrize(("pod", "node", "want"), cases("TestTaintTolerationFilter", FILTER, 3))
def test_taint_toleration_filter(pod: Pod, node: Node, want: Status) -> None:
    assert filter_status(TaintToleration(), pod, node) == want


HINTS = {
    "TestIsSchedulableAfterNodeChange": [
        "backoff-wrong-new-object",
        "backoff-wrong-old-object",
        "skip-queue-on-untoleratedtaint-node-added",
        "queue-on-toleratedtaint-node-added",
        "skip-unrelated-change",
        "queue-on-taint-change",
    ],
    "Test_isSchedulableAfterPodTolerationChange": [
        "backoff-wrong-new-object",
        "backoff-wrong-old-object",
        "skip-updates-other-pod",
        "queue-on-toleration-added",
    ],
}


@pytest.mark.parametrize(
    "name", [p for test, names in HINTS.items() for p in skipped_cases(test, names, QUEUEING_HINTS)]
)
def test_queueing_hints(name: None) -> None:
    """Never runs: every case is skipped with its reason."""
