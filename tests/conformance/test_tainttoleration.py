"""kube-scheduler v1.34.10 ``plugins/tainttoleration/taint_toleration_test.go``, ported case by case:
TestTaintTolerationScore (Score then NormalizeScore over the nodes) and TestTaintTolerationFilter
(status code and reason, 1.34.10's ``node(s) had untolerated taint(s)``).

TestIsSchedulableAfterNodeChange and Test_isSchedulableAfterPodTolerationChange: the queueing hints
(``error`` is upstream's ``(Queue, err)`` for an object of the wrong kind)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import (
    NOT_A_NODE,
    NOT_A_POD,
    cases,
    filter_status,
    hint_of,
    make_node,
    make_pod,
    static_scores,
    status,
)

from gpufleet.model.node import NO_SCHEDULE, PREFER_NO_SCHEDULE, Node, Taint, Toleration
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import EventPod
from gpufleet.scheduling.framework import Code, Status
from gpufleet.scheduling.plugins.taint_toleration import (
    TaintToleration,
    after_node_change,
    after_toleration_change,
)

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


def dedicated(value: str) -> Taint:
    return Taint("dedicated", value, NO_SCHEDULE)


USER2 = pod_with(Toleration("dedicated", "Equal", "user2", NO_SCHEDULE))
NODE_CHANGES: list[Any] = [
    ("backoff-wrong-new-object", make_pod(), None, NOT_A_NODE, "error"),
    ("backoff-wrong-old-object", make_pod(), NOT_A_NODE, node_with("nodeA", dedicated("user1")), "error"),
    (
        "skip-queue-on-untoleratedtaint-node-added",
        USER2,
        None,
        node_with("nodeA", dedicated("user1")),
        "QueueSkip",
    ),
    ("queue-on-toleratedtaint-node-added", USER2, None, node_with("nodeA", dedicated("user2")), "Queue"),
    (
        "skip-unrelated-change",
        USER2,
        node_with("nodeA", dedicated("user1")),
        node_with("nodeA", dedicated("user1"), dedicated("user3")),
        "QueueSkip",
    ),
    (
        "queue-on-taint-change",
        USER2,
        node_with("nodeA", dedicated("user1")),
        node_with("nodeA", dedicated("user2")),
        "Queue",
    ),
]


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"), cases("TestIsSchedulableAfterNodeChange", NODE_CHANGES, 4)
)
def test_is_schedulable_after_node_change(pod: Pod, old: object, new: object, want: str) -> None:
    assert hint_of(after_node_change, pod, old, new) == want


def pod_in_ns1(name: str, *tolerations: Toleration) -> EventPod:
    pod = make_pod(name=name)
    pod.namespace, pod.tolerations = "ns-1", tolerations
    return EventPod(pod)


POD_1 = pod_in_ns1("pod-1").pod
TOLERATION_CHANGES: list[Any] = [
    ("backoff-wrong-new-object", make_pod(), None, NOT_A_POD, "error"),
    ("backoff-wrong-old-object", make_pod(), NOT_A_POD, EventPod(make_pod()), "error"),
    (
        "skip-updates-other-pod",
        POD_1,
        pod_in_ns1("pod-2"),
        pod_in_ns1("pod-2", Toleration("foo", effect=NO_SCHEDULE)),
        "QueueSkip",
    ),
    (
        "queue-on-toleration-added",
        POD_1,
        pod_in_ns1("pod-1"),
        pod_in_ns1("pod-1", Toleration("foo", effect=NO_SCHEDULE)),
        "Queue",
    ),
]


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"), cases("Test_isSchedulableAfterPodTolerationChange", TOLERATION_CHANGES, 4)
)
def test_is_schedulable_after_pod_toleration_change(pod: Pod, old: object, new: object, want: str) -> None:
    assert hint_of(after_toleration_change, pod, old, new) == want
