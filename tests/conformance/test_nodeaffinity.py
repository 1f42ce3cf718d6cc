"""kube-scheduler v1.34.10 ``plugins/nodeaffinity/node_affinity_test.go``, ported case by case:
TestNodeAffinity (PreFilter status and node names, then Filter status) and TestNodeAffinityPriority
(Score then NormalizeScore over the nodes).

Upstream's PreFilter ``Skip`` (a pod without node affinity or selector) is gpufleet's success with
no node names: the plugin then adds nothing, as Skip makes it. Test_isSchedulableAfterNodeChange
checks the queueing hint (``error`` is upstream's ``(Queue, err)``)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import (
    NOT_A_NODE,
    Skip,
    cases,
    container,
    filter_status,
    hint_of,
    make_node,
    make_pod,
    static_scores,
    status,
)

from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.scheduling.framework import Code, PodContext, Status
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.node_affinity import NodeAffinity

UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NO_MATCH = status(UU, "node(s) didn't match Pod's node affinity/selector")
OK = status()
NAME = "metadata.name"


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


def term(*expressions: dict[str, Any], fields: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if expressions:
        body["matchExpressions"] = list(expressions)
    if fields:
        body["matchFields"] = list(fields)
    return body


def affinity_pod(*terms: dict[str, Any], selector: dict[str, str] | None = None) -> Pod:
    """A pod with these required node selector terms (none: no affinity) and ``nodeSelector``."""
    spec: dict[str, Any] = {}
    if selector:
        spec["nodeSelector"] = selector
    if terms:
        required = {"nodeSelectorTerms": list(terms)}
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    return make_pod([container()], spec=spec)


def invalid_value_pod() -> Pod:
    """The API server refuses a new pod whose required term has an invalid label value, but keeps an
    existing one (``AllowInvalidLabelValueInRequiredNodeAffinity``): built here as the model holds it."""
    bad = Requirement("foo", "NotIn", ("invalid value: ___@#$%^",))
    return Pod("p", required_terms=(SelectorTerm((bad,)),), nonzero_requests={})


def field_in(name: str) -> dict[str, Any]:
    return expr(NAME, "In", name)


# (name, pod, node name, node labels, PreFilter (status, node names) or None when not run, Filter status)
NODE_AFFINITY: list[Any] = [
    ("missing labels", affinity_pod(selector={"foo": "bar"}), "", {}, (OK, None), NO_MATCH),
    ("same labels", affinity_pod(selector={"foo": "bar"}), "", {"foo": "bar"}, (OK, None), OK),
    (
        "node labels are superset",
        affinity_pod(selector={"foo": "bar"}),
        "",
        {"foo": "bar", "baz": "blah"},
        (OK, None),
        OK,
    ),
    (
        "node labels are subset",
        affinity_pod(selector={"foo": "bar", "baz": "blah"}),
        "",
        {"foo": "bar"},
        (OK, None),
        NO_MATCH,
    ),
    (
        "Pod with matchExpressions using In operator that matches the existing node",
        affinity_pod(term(expr("foo", "In", "bar", "value2"))),
        "",
        {"foo": "bar"},
        (OK, None),
        OK,
    ),
    (
        "Pod with matchExpressions using Gt operator that matches the existing node",
        affinity_pod(term(expr("kernel-version", "Gt", "0204"))),
        "",
        {"kernel-version": "0206"},
        (OK, None),
        OK,
    ),
    (
        "Pod with matchExpressions using NotIn operator that matches the existing node",
        affinity_pod(term(expr("mem-type", "NotIn", "DDR", "DDR2"))),
        "",
        {"mem-type": "DDR3"},
        (OK, None),
        OK,
    ),
    (
        "Pod with matchExpressions using Exists operator that matches the existing node",
        affinity_pod(term(expr("GPU", "Exists"))),
        "",
        {"GPU": "NVIDIA-GRID-K1"},
        (OK, None),
        OK,
    ),
    (
        "Pod with affinity that don't match node's labels won't schedule onto the node",
        affinity_pod(term(expr("foo", "In", "value1", "value2"))),
        "",
        {"foo": "bar"},
        (OK, None),
        NO_MATCH,
    ),
    (
        "Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto "
        "the node",
        affinity_pod(term()),
        "",
        {"foo": "bar"},
        (OK, None),
        NO_MATCH,
    ),
    ("Pod with no Affinity will schedule onto a node", make_pod(), "", {"foo": "bar"}, (OK, None), OK),
    (
        "Pod with Affinity but nil NodeSelector will schedule onto a node",
        make_pod([container()], spec={"affinity": {"nodeAffinity": {}}}),
        "",
        {"foo": "bar"},
        (OK, None),
        OK,
    ),
    (
        "Pod with multiple matchExpressions ANDed that matches the existing node",
        affinity_pod(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER"))),
        "",
        {"GPU": "NVIDIA-GRID-K1"},
        (OK, None),
        OK,
    ),
    (
        "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
        affinity_pod(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER"))),
        "",
        {"GPU": "NVIDIA-GRID-K1"},
        (OK, None),
        NO_MATCH,
    ),
    (
        "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule "
        "onto the node",
        affinity_pod(
            term(expr("foo", "In", "bar", "value2")), term(expr("diffkey", "In", "wrong", "value2"))
        ),
        "",
        {"foo": "bar"},
        (OK, None),
        OK,
    ),
    (
        "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are "
        "satisfied, will schedule onto the node",
        affinity_pod(term(expr("foo", "Exists")), selector={"foo": "bar"}),
        "",
        {"foo": "bar"},
        (OK, None),
        OK,
    ),
    (
        "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
        "deprecating) is not satisfied, won't schedule onto the node",
        affinity_pod(term(expr("foo", "Exists")), selector={"foo": "bar"}),
        "",
        {"foo": "barrrrrr"},
        (OK, None),
        NO_MATCH,
    ),
    (
        "Pod with an invalid value in Affinity term won't be scheduled onto the node",
        invalid_value_pod(),
        "",
        {"foo": "bar"},
        (OK, None),
        NO_MATCH,
    ),
    (
        "Pod with matchFields using In operator that matches the existing node",
        affinity_pod(term(fields=(field_in("node1"),))),
        "node1",
        {},
        (OK, {"node1"}),
        OK,
    ),
    (
        "Pod with matchFields using In operator that does not match the existing node",
        affinity_pod(term(fields=(field_in("node1"),))),
        "node2",
        {},
        (OK, {"node1"}),
        NO_MATCH,
    ),
    (
        "Pod with two terms: matchFields does not match, but matchExpressions matches",
        affinity_pod(term(fields=(field_in("node1"), field_in("node2"))), term(expr("foo", "In", "bar"))),
        "node2",
        {"foo": "bar"},
        None,
        OK,
    ),
    (
        "Pod with one term: matchFields does not match, but matchExpressions matches",
        affinity_pod(term(expr("foo", "In", "bar"), fields=(field_in("node1"),))),
        "node2",
        {"foo": "bar"},
        (OK, {"node1"}),
        NO_MATCH,
    ),
    (
        "Pod with one term: both matchFields and matchExpressions match",
        affinity_pod(term(expr("foo", "In", "bar"), fields=(field_in("node1"),))),
        "node1",
        {"foo": "bar"},
        (OK, {"node1"}),
        OK,
    ),
    (
        "Pod with two terms: both matchFields and matchExpressions do not match",
        affinity_pod(term(fields=(field_in("node1"),)), term(expr("foo", "In", "not-match-to-bar"))),
        "node2",
        {"foo": "bar"},
        None,
        NO_MATCH,
    ),
    (
        "Pod with two terms of node.Name affinity",
        affinity_pod(term(fields=(field_in("node1"),)), term(fields=(field_in("node2"),))),
        "node2",
        {},
        (OK, {"node1", "node2"}),
        OK,
    ),
    (
        "Pod with two conflicting mach field requirements",
        affinity_pod(term(fields=(field_in("node1"), field_in("node2")))),
        "node2",
        {"foo": "bar"},
        (status(UU, "pod affinity terms conflict"), None),
        NO_MATCH,
    ),
    (
        "Matches node selector correctly even if PreFilter is not called",
        affinity_pod(selector={"foo": "bar"}),
        "",
        {"foo": "bar", "baz": "blah"},
        None,
        OK,
    ),
    (
        "Matches node affinity correctly even if PreFilter is not called",
        affinity_pod(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER"))),
        "",
        {"GPU": "NVIDIA-GRID-K1"},
        None,
        OK,
    ),
]


def added(*terms: dict[str, Any]) -> dict[str, Any]:
    """``NodeAffinityArgs`` whose ``addedAffinity`` requires these terms."""
    return {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
        }
    }


# (name, pod, node name, node labels, PreFilter, Filter status, NodeAffinityArgs)
ADDED_AFFINITY: list[Any] = [
    (
        "Matches added affinity and Pod's node affinity",
        affinity_pod(term(expr("zone", "In", "foo"))),
        "node2",
        {"zone": "foo"},
        None,
        OK,
        added(term(fields=(field_in("node2"),))),
    ),
    (
        "Matches added affinity but not Pod's node affinity",
        affinity_pod(term(expr("zone", "In", "bar"))),
        "node2",
        {"zone": "foo"},
        (OK, None),
        NO_MATCH,
        added(term(fields=(field_in("node2"),))),
    ),
    (
        "Doesn't match added affinity",
        make_pod(),
        "node2",
        {"zone": "foo"},
        (OK, None),
        status(UU, "node(s) didn't match scheduler-enforced node affinity"),
        added(term(expr("zone", "In", "bar"))),
    ),
]


@pytest.mark.parametrize(
    ("pod", "node_name", "labels", "pre_filter", "want", "args"),
    [
        *cases("TestNodeAffinity", [(*row, {}) for row in NODE_AFFINITY], 6),
        *cases("TestNodeAffinity", ADDED_AFFINITY, 6),
    ],
)
def test_node_affinity(
    pod: Pod,
    node_name: str,
    labels: dict[str, str],
    pre_filter: tuple[Status, set[str] | None] | None,
    want: Status,
    args: dict[str, Any],
) -> None:
    node = make_node(node_name, labels=labels)
    plugin = NodeAffinity.from_args(args)
    if pre_filter is not None:
        want_status, want_nodes = pre_filter
        state = ClusterState([node])
        got = plugin.pre_filter(PodContext(pod, state), GangView(state))
        assert (got.code, got.reasons) == (want_status.code, want_status.reasons)
        if got.ok:
            assert plugin.nodes(pod) == want_nodes
    assert filter_status(plugin, pod, node) == want


def preferred_pod(*weighted: tuple[int, dict[str, Any]]) -> Pod:
    preferred = [{"weight": w, "preference": t} for w, t in weighted]
    spec = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}}
    return make_pod([container()], spec=spec)


LABEL1, LABEL2, LABEL3 = {"foo": "bar"}, {"key": "value"}, {"az": "az1"}
LABEL4, LABEL5 = {"abc": "az11", "def": "az22"}, {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = preferred_pod((2, term(expr("foo", "In", "bar"))))
#: ``affinity1.NodeAffinity`` as NodeAffinityArgs' addedAffinity
ADDED_PREFERRED_1 = {
    "addedAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 2, "preference": term(expr("foo", "In", "bar"))}
        ]
    }
}
AFFINITY2 = preferred_pod(
    (2, term(expr("foo", "In", "bar"))),
    (4, term(expr("key", "In", "value"))),
    (5, term(expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1"))),
)


def labelled(**labels: dict[str, str]) -> list[Node]:
    return [make_node(name, labels=value) for name, value in labels.items()]


PRIORITY: list[Any] = [
    (
        "all nodes are same priority as NodeAffinity is nil",
        make_pod(),
        labelled(node1=LABEL1, node2=LABEL2, node3=LABEL3),
        [0, 0, 0],
    ),
    # PreScore's Skip: the plugin adds nothing, which gpufleet says with ``applies``
    ("Skip is returned in PreScore when NodeAffinity is nil", make_pod(), labelled(node1=LABEL1), None),
    (
        "PreScore returns error when an incoming Pod has a broken affinity",
        Skip("an invalid key is refused by the API server (ValidateLabelName): such a pod is a load error"),
    ),
    (
        "no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is "
        "zero",
        AFFINITY1,
        labelled(node1=LABEL4, node2=LABEL2, node3=LABEL3),
        [0, 0, 0],
    ),
    (
        "only node1 matches the preferred scheduling requirements of pod",
        AFFINITY1,
        labelled(node1=LABEL1, node2=LABEL2, node3=LABEL3),
        [100, 0, 0],
    ),
    (
        "all nodes matches the preferred scheduling requirements of pod but with different priorities ",
        AFFINITY2,
        labelled(node1=LABEL1, node5=LABEL5, node2=LABEL2),
        [18, 100, 36],
    ),
    ("added affinity", make_pod(), labelled(node1=LABEL1, node2=LABEL2), [100, 0], ADDED_PREFERRED_1),
    (
        "added affinity and pod has default affinity",
        AFFINITY1,
        labelled(node1=LABEL1, node2=LABEL2, node3=LABEL5),
        [40, 60, 100],
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 3, "preference": term(expr("key", "In", "value"))}
                ]
            }
        },
    ),
    (
        "calculate the priorities correctly even if PreScore is not called",
        AFFINITY2,
        labelled(node1=LABEL1, node5=LABEL5, node2=LABEL2),
        [18, 100, 36],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "want", "args"),
    cases("TestNodeAffinityPriority", [row if len(row) in (2, 5) else (*row, {}) for row in PRIORITY], 4),
)
def test_node_affinity_priority(
    pod: Pod, nodes: list[Node], want: list[int] | None, args: dict[str, Any]
) -> None:
    plugin = NodeAffinity.from_args(args)
    if want is None:
        assert not plugin.applies(pod)
        return
    assert static_scores(plugin, pod, nodes) == want


FOO_BAR = affinity_pod(term(expr("foo", "In", "bar")))
ENFORCED_FOO_BAR = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [term(expr("foo", "In", "bar"))]
        }
    }
}
BARE = make_node("")
NO_CAPACITY = Node("")  # ``Capacity(nil)``: no allocatable at all


def labelled(node: Node, **labels: str) -> Node:
    return Node(node.name, labels=labels, capacity=dict(node.capacity), allocatable=dict(node.allocatable))


# (name, args, old node, new node, hint)
HINTS: list[Any] = [
    ("backoff-wrong-new-object", {}, None, NOT_A_NODE, "error"),
    ("backoff-wrong-old-object", {}, NOT_A_NODE, BARE, "error"),
    ("skip-queue-on-add", {}, None, BARE, "QueueSkip"),
    ("queue-on-add", {}, None, labelled(BARE, foo="bar"), "Queue"),
    ("skip-unrelated-changes", {}, BARE, NO_CAPACITY, "QueueSkip"),
    ("skip-unrelated-changes-on-labels", {}, BARE, labelled(BARE, k="v"), "QueueSkip"),
    (
        "skip-labels-changes-on-node-from-suitable-to-unsuitable",
        {},
        labelled(BARE, foo="bar"),
        labelled(BARE, k="v"),
        "QueueSkip",
    ),
    ("queue-on-labels-change-makes-pod-schedulable", {}, BARE, labelled(BARE, foo="bar"), "Queue"),
    (
        "skip-unrelated-change-that-keeps-pod-schedulable",
        {},
        labelled(BARE, foo="bar"),
        labelled(NO_CAPACITY, foo="bar"),
        "QueueSkip",
    ),
    ("skip-queue-on-add-scheduler-enforced-node-affinity", ENFORCED_FOO_BAR, None, BARE, "QueueSkip"),
    (
        "queue-on-add-scheduler-enforced-node-affinity",
        ENFORCED_FOO_BAR,
        None,
        labelled(BARE, foo="bar"),
        "Queue",
    ),
]


@pytest.mark.parametrize(("args", "old", "new", "want"), cases("Test_isSchedulableAfterNodeChange", HINTS, 4))
def test_is_schedulable_after_node_change(args: dict[str, Any], old: object, new: object, want: str) -> None:
    plugin = NodeAffinity.from_args(args)
    assert hint_of(plugin.after_node_change, FOO_BAR, old, new) == want
