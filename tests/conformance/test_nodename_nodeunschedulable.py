"""kube-scheduler v1.34.10 ``plugins/nodename/node_name_test.go`` TestNodeName and
``plugins/nodeunschedulable/node_unschedulable_test.go`` TestNodeUnschedulable, ported case by case
(Filter status: both reject UnschedulableAndUnresolvable), and NodeUnschedulable's queueing hints
(TestIsSchedulableAfterNodeChange, TestIsSchedulableAfterPodTolerationChange)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import NOT_A_NODE, NOT_A_POD, cases, filter_status, hint_of, make_node, make_pod, status

from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, UNSCHEDULABLE_TAINT_KEY, Node, Taint, Toleration
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import EventPod
from gpufleet.scheduling.framework import Code, Status
from gpufleet.scheduling.plugins.node_name import NodeName
from gpufleet.scheduling.plugins.node_unschedulable import (
    NodeUnschedulable,
    after_node_change,
    after_toleration_change,
)

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


NOT_READY = Taint("node.kubernetes.io/not-ready", "", NO_EXECUTE)
NODE_CHANGES: list[Any] = [
    ("error-wrong-new-object", None, NOT_A_NODE, "error"),
    ("error-wrong-old-object", NOT_A_NODE, make_node(unschedulable=True), "error"),
    ("skip-queue-on-unschedulable-node-added", None, make_node(unschedulable=True), "QueueSkip"),
    ("queue-on-schedulable-node-added", None, make_node(), "Queue"),
    (
        "skip-unrelated-change-unschedulable-true",
        make_node(unschedulable=True),
        make_node(unschedulable=True, taints=[NOT_READY]),
        "QueueSkip",
    ),
    ("skip-unrelated-change-unschedulable-false", make_node(), make_node(taints=[NOT_READY]), "QueueSkip"),
    ("queue-on-unschedulable-field-change", make_node(unschedulable=True), make_node(), "Queue"),
]


@pytest.mark.parametrize(("old", "new", "want"), cases("TestIsSchedulableAfterNodeChange", NODE_CHANGES, 3))
def test_is_schedulable_after_node_change(old: object, new: object, want: str) -> None:
    assert hint_of(after_node_change, make_pod(), old, new) == want


def with_uid(uid: str, *tolerating: str) -> EventPod:
    """``st.MakePod().UID(uid).Toleration(key)...``: the UID stands as the pod's name."""
    pod = make_pod(name=uid)
    pod.tolerations = tuple(Toleration(key, "Exists") for key in tolerating)
    return EventPod(pod)


UID = with_uid("uid").pod
TOLERATION_CHANGES: list[Any] = [
    ("error-wrong-new-object", make_pod(), None, NOT_A_POD, "error"),
    ("error-wrong-old-object", make_pod(), NOT_A_POD, EventPod(make_pod()), "error"),
    (
        "skip-different-pod-update",
        UID,
        with_uid("different-uid"),
        with_uid("different-uid", UNSCHEDULABLE_TAINT_KEY),
        "QueueSkip",
    ),
    (
        "queue-when-the-unsched-pod-gets-toleration",
        UID,
        with_uid("uid"),
        with_uid("uid", UNSCHEDULABLE_TAINT_KEY),
        "Queue",
    ),
    (
        "skip-when-the-unsched-pod-gets-unrelated-toleration",
        UID,
        with_uid("uid"),
        with_uid("uid", "unrelated-key"),
        "QueueSkip",
    ),
]


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"), cases("TestIsSchedulableAfterPodTolerationChange", TOLERATION_CHANGES, 4)
)
def test_is_schedulable_after_pod_toleration_change(pod: Pod, old: object, new: object, want: str) -> None:
    assert hint_of(after_toleration_change, pod, old, new) == want
