"""kube-scheduler v1.34.10 ``pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go``,
ported case by case: TestRequiredAffinitySingleNode and TestRequiredAffinityMultipleNodes (PreFilter
Skip or not, then each node's Filter status: code and reason).

Not ported: TestPreFilterDisabled (Filter without PreFilter, a Go-internal error),
TestPreFilterStateClone (Go's deep copy), TestPreFilterStateAddRemovePod and
TestGetTPMapMatchingIncomingAffinityAntiAffinity (they compare the internal count maps; RemovePod's
effect on Filter is checked through preemption in test_interpodaffinity_in_the_scheduler.py).
``defaultNamespace`` is ``""`` upstream and here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from builders import Skip, cases
from pod_builders_affinity import REQUIRED, LabelSelector, MakePod, make_node, run_filter

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.pod_affinity import PodAffinityTerm
from gpufleet.scheduling.framework import SUCCESS, Code, Status
from gpufleet.scheduling.plugins.inter_pod_affinity import (
    AFFINITY_NOT_MATCH,
    ANTI_AFFINITY_NOT_MATCH,
    EXISTING_ANTI_AFFINITY_NOT_MATCH,
    InterPodAffinity,
)

AFFINITY = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (AFFINITY_NOT_MATCH,))
ANTI = Status(Code.UNSCHEDULABLE, (ANTI_AFFINITY_NOT_MATCH,))
EXISTING = Status(Code.UNSCHEDULABLE, (EXISTING_ANTI_AFFINITY_NOT_MATCH,))
NS = ""  # defaultNamespace
#: scoring_test.go's ``namespaces``: the Namespace objects the plugin's lister holds
NAMESPACES = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
SERVICE_IN = LabelSelector().in_("service", ["securityscan", "value2"]).obj()
TEAM1 = LabelSelector().in_("team", ["team1"]).obj()


def with_terms(
    namespace: str,
    labels: Mapping[str, str],
    affinity: Sequence[PodAffinityTerm] = (),
    anti: Sequence[PodAffinityTerm] = (),
    node: str = "",
) -> Pod:
    """``createPodWithAffinityTerms``."""
    made = (
        MakePod()
        .namespace(namespace)
        .labels(labels)
        .required_terms("", *affinity)
        .required_terms("anti_", *anti)
    )
    if node:
        made.node(node)
    return made.obj()


def existing_in(namespace: str) -> Pod:
    """``{Spec: {NodeName: node1}, ObjectMeta: {Namespace: ..., Labels: podLabel}}``."""
    return MakePod().namespace(namespace).labels(POD_LABEL).node("node1").obj()


EXISTING_POD = MakePod().labels(POD_LABEL).node("node1").obj()
NODE1 = make_node("node1", {"region": "r1", "zone": "z11"})

SINGLE_NODE: list[tuple[object, ...]] = [
    (
        "A pod that has no required pod affinity scheduling rules can schedule onto a node with no "
        "existing pods",
        MakePod().obj(),
        [],
        True,
        SUCCESS,
    ),
    (
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
        "matches the existing pod",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        [EXISTING_POD],
        False,
        SUCCESS,
    ),
    (
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in "
        "operator in labelSelector that matches the existing pod",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_affinity_not_in("service", "region", ["securityscan3", "value3"], REQUIRED)
        .obj(),
        [EXISTING_POD],
        False,
        SUCCESS,
    ),
    (
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        with_terms(NS, POD_LABEL2, [PodAffinityTerm(SERVICE_IN, "", frozenset({"DiffNameSpace"}))]),
        [MakePod().namespace("ns").label("service", "securityscan").node("node1").obj()],
        False,
        AFFINITY,
    ),
    (
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_affinity_in("service", "", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        [EXISTING_POD],
        False,
        AFFINITY,
    ),
    (
        "satisfies the PodAffinity with different label Operators in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution ",
        with_terms(
            NS,
            POD_LABEL2,
            [
                PodAffinityTerm(LabelSelector().exists("service").not_exist("wrongkey").obj(), "region"),
                PodAffinityTerm(
                    LabelSelector().in_("service", ["securityscan"]).not_in("service", ["WrongValue"]).obj(),
                    "region",
                ),
            ],
        ),
        [EXISTING_POD],
        False,
        SUCCESS,
    ),
    (
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto "
        "the "
        "node because one of the matchExpression item don't match.",
        with_terms(
            NS,
            POD_LABEL2,
            [
                PodAffinityTerm(LabelSelector().exists("service").not_exist("wrongkey").obj(), "region"),
                PodAffinityTerm(
                    LabelSelector().in_("service", ["securityscan2"]).not_in("service", ["WrongValue"]).obj(),
                    "region",
                ),
            ],
        ),
        [EXISTING_POD],
        False,
        AFFINITY,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        [EXISTING_POD],
        False,
        SUCCESS,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        [
            MakePod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL)
            .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
            .obj()
        ],
        False,
        SUCCESS,
    ),
    (
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
        .obj(),
        [EXISTING_POD],
        False,
        ANTI,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
        "existing pod",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        [
            MakePod()
            .namespace(NS)
            .labels(POD_LABEL)
            .node("node1")
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
            .obj()
        ],
        False,
        EXISTING,
    ),
    (
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_affinity_not_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        [MakePod().label("service", "securityscan").node("node2").obj()],
        False,
        AFFINITY,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
        "constraints. "
        "doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        MakePod().labels(POD_LABEL).obj(),
        [
            MakePod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL)
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
            .obj()
        ],
        False,
        EXISTING,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
        "constraints. "
        "satisfy PodAntiAffinity symmetry with the existing pod",
        MakePod().labels(POD_LABEL).obj(),
        [
            MakePod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL)
            .pod_anti_affinity_not_in("service", "zone", ["securityscan", "value2"], REQUIRED)
            .obj()
        ],
        True,
        SUCCESS,
    ),
    (
        "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
        "incoming pod",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_anti_affinity_exists("service", "region", REQUIRED)
        .pod_anti_affinity_exists("security", "region", REQUIRED)
        .obj(),
        [
            MakePod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL2)
            .pod_anti_affinity_exists("security", "zone", REQUIRED)
            .obj()
        ],
        False,
        ANTI,
    ),
    (
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL)
        .pod_anti_affinity_exists("service", "zone", REQUIRED)
        .pod_anti_affinity_exists("security", "zone", REQUIRED)
        .obj(),
        [
            MakePod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL2)
            .pod_anti_affinity_exists("security", "zone", REQUIRED)
            .obj()
        ],
        False,
        ANTI,
    ),
    (
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        MakePod()
        .namespace(NS)
        .labels(POD_LABEL2)
        .pod_anti_affinity_exists("security", "zone", REQUIRED)
        .obj(),
        [
            MakePod()
            .namespace(NS)
            .node("node1")
            .labels(POD_LABEL)
            .pod_anti_affinity_exists("service", "zone", REQUIRED)
            .pod_anti_affinity_exists("security", "zone", REQUIRED)
            .obj()
        ],
        False,
        EXISTING,
    ),
    (
        "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        MakePod()
        .namespace(NS)
        .labels({"abc": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone", REQUIRED)
        .pod_anti_affinity_exists("def", "zone", REQUIRED)
        .obj(),
        [
            MakePod()
            .namespace(NS)
            .node("node1")
            .labels({"def": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone", REQUIRED)
            .pod_anti_affinity_exists("def", "zone", REQUIRED)
            .obj()
        ],
        False,
        ANTI,
    ),
    (
        "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        MakePod()
        .namespace(NS)
        .labels({"def": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone", REQUIRED)
        .pod_anti_affinity_exists("def", "zone", REQUIRED)
        .obj(),
        [
            MakePod()
            .namespace(NS)
            .node("node1")
            .labels({"abc": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone", REQUIRED)
            .pod_anti_affinity_exists("def", "zone", REQUIRED)
            .obj()
        ],
        False,
        ANTI,
    ),
    (
        "PodAffinity fails PreFilter with an invalid affinity label syntax",
        Skip(
            "an invalid label value is the API server's error when the pod is read (kube.pod_affinity), "
            "never a PreFilter status"
        ),
    ),
    (
        "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
        Skip(
            "an invalid label value is the API server's error when the pod is read (kube.pod_affinity), "
            "never a PreFilter status"
        ),
    ),
    (
        "affinity with NamespaceSelector",
        with_terms(NS, POD_LABEL2, [PodAffinityTerm(SERVICE_IN, "region", namespace_selector=TEAM1)]),
        [existing_in("subteam1.team1")],
        False,
        SUCCESS,
    ),
    (
        "affinity with non-matching NamespaceSelector",
        with_terms(NS, POD_LABEL2, [PodAffinityTerm(SERVICE_IN, "region", namespace_selector=TEAM1)]),
        [existing_in("subteam1.team2")],
        False,
        AFFINITY,
    ),
    (
        "anti-affinity with matching NamespaceSelector",
        with_terms(
            "subteam1.team1", POD_LABEL2, anti=[PodAffinityTerm(SERVICE_IN, "zone", namespace_selector=TEAM1)]
        ),
        [existing_in("subteam2.team1")],
        False,
        ANTI,
    ),
    (
        "anti-affinity with matching all NamespaceSelector",
        with_terms(
            "subteam1.team1", POD_LABEL2, anti=[PodAffinityTerm(SERVICE_IN, "zone", namespace_selector=())]
        ),
        [existing_in("subteam2.team1")],
        False,
        ANTI,
    ),
    (
        "anti-affinity with non-matching NamespaceSelector",
        with_terms(
            "subteam1.team1", POD_LABEL2, anti=[PodAffinityTerm(SERVICE_IN, "zone", namespace_selector=TEAM1)]
        ),
        [existing_in("subteam1.team2")],
        False,
        SUCCESS,
    ),
]


@pytest.mark.parametrize(
    ("pod", "pods", "skipped", "want"), cases("TestRequiredAffinitySingleNode", SINGLE_NODE, 4)
)
def test_required_affinity_single_node(pod: Pod, pods: list[Pod], skipped: bool, want: Status) -> None:
    got_skipped, statuses = run_filter(InterPodAffinity(), pod, [NODE1], pods, NAMESPACES)
    assert got_skipped == skipped
    assert statuses == [want]


CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def rz(name: str, zone: str, region: str = "r1") -> Node:
    return make_node(name, {"region": region, "zone": zone, "hostname": name})


MULTIPLE_NODES: list[tuple[object, ...]] = [
    (
        "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of "
        "them has an existing pod that matches the affinity rules",
        MakePod().namespace(NS).pod_affinity_in("foo", "region", ["bar"], REQUIRED).obj(),
        [MakePod().name("p1").node("node1").labels({"foo": "bar"}).obj()],
        [make_node("node1", CHINA), make_node("node2", CHINA_AZ1), make_node("node3", INDIA)],
        False,
        [SUCCESS, SUCCESS, AFFINITY],
    ),
    (
        "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod "
        "of the collection should not be blocked from being scheduled onto any node, even there's no "
        "existing "
        "pod that matches the rule anywhere.",
        MakePod()
        .namespace(NS)
        .labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
        .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        [MakePod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        [
            make_node("nodeA", {"zone": "az1", "hostname": "h1"}),
            make_node("nodeB", {"zone": "az2", "hostname": "h2"}),
        ],
        False,
        [SUCCESS, SUCCESS],
    ),
    (
        "The first pod of the collection can only be scheduled on nodes labelled with the requested "
        "topology keys",
        MakePod()
        .namespace(NS)
        .labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
        .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        [MakePod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        [
            make_node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
            make_node("nodeB", {"zoneLabel": "az2", "hostname": "h2"}),
        ],
        False,
        [AFFINITY, AFFINITY],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
        "inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        MakePod().namespace(NS).pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED).obj(),
        [MakePod().node("nodeA").labels({"foo": "abc"}).obj()],
        [
            make_node("nodeA", {"region": "r1", "hostname": "nodeA"}),
            make_node("nodeB", {"region": "r1", "hostname": "nodeB"}),
        ],
        False,
        [ANTI, ANTI],
    ),
    (
        "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule "
        "matches a pod.",
        MakePod()
        .namespace(NS)
        .pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED)
        .pod_anti_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        [MakePod().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
        [rz("nodeA", "z1"), rz("nodeB", "z2")],
        False,
        [ANTI, ANTI],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
        "inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto "
        "nodeC",
        MakePod().namespace(NS).pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED).obj(),
        [MakePod().node("nodeA").labels({"foo": "abc"}).obj()],
        [make_node("nodeA", CHINA), make_node("nodeB", CHINA_AZ1), make_node("nodeC", INDIA)],
        False,
        [ANTI, ANTI, SUCCESS],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
        "inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC "
        "(NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
        MakePod()
        .namespace("NS1")
        .labels({"foo": "123"})
        .pod_anti_affinity_in("foo", "region", ["bar"], REQUIRED)
        .obj(),
        [
            MakePod().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
            MakePod()
            .node("nodeC")
            .namespace("NS2")
            .pod_anti_affinity_in("foo", "region", ["123"], REQUIRED)
            .obj(),
        ],
        [make_node("nodeA", CHINA), make_node("nodeB", CHINA_AZ1), make_node("nodeC", INDIA)],
        False,
        [ANTI, ANTI, SUCCESS],
    ),
    (
        "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, "
        "labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
        MakePod().label("foo", "").obj(),
        [
            MakePod()
            .node("nodeA")
            .namespace(NS)
            .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
            .obj()
        ],
        [rz("nodeA", "z1"), rz("nodeB", "z1")],
        True,
        [SUCCESS, SUCCESS],
    ),
    (
        "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey "
        "matches",
        MakePod()
        .node("nodeA")
        .namespace(NS)
        .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
        .obj(),
        [MakePod().node("nodeA").labels({"foo": ""}).obj()],
        [rz("nodeA", "z1"), rz("nodeB", "z1")],
        False,
        [SUCCESS, SUCCESS],
    ),
    (
        "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
        "existingPod's terms on all nodes",
        MakePod().label("foo", "").label("bar", "").obj(),
        [
            MakePod().node("nodeA").namespace(NS).pod_anti_affinity_exists("foo", "zone", REQUIRED).obj(),
            MakePod().node("nodeA").namespace(NS).pod_anti_affinity_exists("bar", "region", REQUIRED).obj(),
        ],
        [rz("nodeA", "z1"), rz("nodeB", "z2")],
        False,
        [EXISTING, EXISTING],
    ),
    (
        "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least "
        "violates "
        "one anti-affinity rule of existingPod",
        MakePod()
        .namespace(NS)
        .pod_anti_affinity_exists("foo", "zone", REQUIRED)
        .pod_anti_affinity_exists("bar", "region", REQUIRED)
        .obj(),
        [
            MakePod().node("nodeA").labels({"foo": ""}).obj(),
            MakePod().node("nodeB").labels({"bar": ""}).obj(),
        ],
        [rz("nodeA", "z1"), rz("nodeB", "z2")],
        False,
        [ANTI, ANTI],
    ),
    (
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
        "counted as "
        "a single term match - case when one term has invalid topologyKey",
        MakePod().label("foo", "").label("bar", "").obj(),
        [
            MakePod()
            .node("nodeA")
            .namespace(NS)
            .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
            .pod_anti_affinity_exists("bar", "zone", REQUIRED)
            .obj()
        ],
        [rz("nodeA", "z1"), rz("nodeB", "z2")],
        False,
        [EXISTING, SUCCESS],
    ),
    (
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
        "counted as "
        "a single term match - case when one term has invalid topologyKey",
        MakePod()
        .namespace(NS)
        .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
        .pod_anti_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [MakePod().name("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        [rz("nodeA", "z1"), rz("nodeB", "z2")],
        False,
        [ANTI, SUCCESS],
    ),
    (
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
        "counted as "
        "a single term match - case when all terms have valid topologyKey",
        MakePod().label("foo", "").label("bar", "").obj(),
        [
            MakePod()
            .namespace(NS)
            .node("nodeA")
            .pod_anti_affinity_exists("foo", "region", REQUIRED)
            .pod_anti_affinity_exists("bar", "zone", REQUIRED)
            .obj()
        ],
        [rz("nodeA", "z1"), rz("nodeB", "z2")],
        False,
        [EXISTING, EXISTING],
    ),
    (
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
        "counted as "
        "a single term match - case when all terms have valid topologyKey",
        MakePod()
        .namespace(NS)
        .pod_anti_affinity_exists("foo", "region", REQUIRED)
        .pod_anti_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [MakePod().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        [rz("nodeA", "z1"), rz("nodeB", "z2")],
        False,
        [ANTI, ANTI],
    ),
    (
        "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity "
        "term "
        "matches incoming pod, so incoming pod can only be scheduled to nodeC",
        MakePod().label("foo", "").label("bar", "").obj(),
        [
            MakePod()
            .node("nodeA")
            .namespace(NS)
            .pod_anti_affinity_exists("foo", "zone", REQUIRED)
            .pod_anti_affinity_exists("labelA", "zone", REQUIRED)
            .obj(),
            MakePod()
            .node("nodeB")
            .namespace(NS)
            .pod_anti_affinity_exists("bar", "zone", REQUIRED)
            .pod_anti_affinity_exists("labelB", "zone", REQUIRED)
            .obj(),
        ],
        [rz("nodeA", "z1"), rz("nodeB", "z2"), rz("nodeC", "z3")],
        False,
        [EXISTING, EXISTING, SUCCESS],
    ),
    (
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match",
        MakePod()
        .namespace(NS)
        .pod_affinity_exists("foo", "region", REQUIRED)
        .pod_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [MakePod().name("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
        [rz("nodeA", "z1"), rz("nodeB", "z1")],
        False,
        [SUCCESS, SUCCESS],
    ),
    (
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match, and the match logic should be satisfied on the same pod",
        MakePod()
        .namespace(NS)
        .pod_affinity_exists("foo", "region", REQUIRED)
        .pod_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        [
            MakePod().node("nodeA").name("pod1").namespace(NS).labels({"foo": ""}).obj(),
            MakePod().node("nodeB").name("pod2").namespace(NS).labels({"bar": ""}).obj(),
        ],
        [rz("nodeA", "z1"), rz("nodeB", "z2")],
        False,
        [AFFINITY, AFFINITY],
    ),
]


@pytest.mark.parametrize(
    ("pod", "pods", "nodes", "skipped", "want"), cases("TestRequiredAffinityMultipleNodes", MULTIPLE_NODES, 5)
)
def test_required_affinity_multiple_nodes(
    pod: Pod, pods: list[Pod], nodes: list[Node], skipped: bool, want: list[Status]
) -> None:
    got_skipped, statuses = run_filter(InterPodAffinity(), pod, nodes, pods)
    assert got_skipped == skipped
    if not skipped:
        assert statuses == want
