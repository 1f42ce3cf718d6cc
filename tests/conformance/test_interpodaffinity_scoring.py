"""kube-scheduler v1.34.10 ``pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go``, ported
case by case: TestPreferredAffinity and TestPreferredAffinityWithHardPodAffinitySymmetricWeight
(PreScore over every node, Score, NormalizeScore; a PreScore Skip is every node scoring 0, as the
framework leaves a skipped plugin out). ``namespaces`` are the test's Namespace objects."""

from __future__ import annotations

from dataclasses import replace

import pytest
from builders import Skip, cases
from pod_builders_affinity import LabelSelector, MakePod, make_node, run_scores

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.pod_affinity import PodAffinity, PodAffinityTerm, Selector, WeightedPodAffinityTerm
from gpufleet.scheduling.plugins.inter_pod_affinity import InterPodAffinity

NAMESPACES = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}
CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}
TEAM1 = LabelSelector().in_("team", ["team1"]).obj()


def preferred(
    weight: int,
    selector: LabelSelector,
    topology_key: str,
    namespaces: frozenset[str] = frozenset(),
    namespace_selector: Selector = None,
) -> WeightedPodAffinityTerm:
    return WeightedPodAffinityTerm(
        weight, PodAffinityTerm(selector.obj(), topology_key, namespaces, namespace_selector)
    )


STAY_WITH_S1_IN_REGION = PodAffinity(
    preferred=(preferred(5, LabelSelector().in_("security", ["S1"]), "region"),)
)
STAY_WITH_S2_IN_REGION = PodAffinity(
    preferred=(preferred(6, LabelSelector().in_("security", ["S2"]), "region"),)
)
AFFINITY3 = PodAffinity(
    preferred=(
        preferred(8, LabelSelector().not_in("security", ["S1"]).in_("security", ["S2"]), "region"),
        preferred(2, LabelSelector().exists("security").not_exist("wrongkey"), "region"),
    )
)
HARD_AFFINITY = PodAffinity(
    required=(
        PodAffinityTerm(LabelSelector().in_("security", ["S1", "value2"]).obj(), "region"),
        PodAffinityTerm(LabelSelector().exists("security").not_exist("wrongkey").obj(), "region"),
    )
)
AWAY_FROM_S1_IN_AZ = PodAffinity(
    anti_preferred=(preferred(5, LabelSelector().in_("security", ["S1"]), "az"),)
)
AWAY_FROM_S2_IN_AZ = PodAffinity(
    anti_preferred=(preferred(5, LabelSelector().in_("security", ["S2"]), "az"),)
)
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = PodAffinity(
    preferred=(preferred(8, LabelSelector().in_("security", ["S1"]), "region"),),
    anti_preferred=(preferred(5, LabelSelector().in_("security", ["S2"]), "az"),),
)
NS_TERM = preferred(
    5,
    LabelSelector().in_("security", ["S1"]),
    "region",
    namespaces=frozenset({"subteam2.team2"}),
    namespace_selector=TEAM1,
)
AFFINITY_NAMESPACE_SELECTOR = PodAffinity(preferred=(NS_TERM,))
ANTI_AFFINITY_NAMESPACE_SELECTOR = PodAffinity(anti_preferred=(NS_TERM,))


def p(
    labels: dict[str, str] | None = None,
    node: str = "",
    affinity: PodAffinity | None = None,
    namespace: str = "",
) -> Pod:
    """``&v1.Pod{Spec: {NodeName, Affinity}, ObjectMeta: {Namespace, Labels}}``."""
    made = MakePod().namespace(namespace).labels(labels or {})
    if node:
        made.node(node)
    return replace(made.obj(), pod_affinity=affinity)


def nodes(*labels: dict[str, str]) -> list[Node]:
    return [make_node(f"node{k + 1}", lab) for k, lab in enumerate(labels)]


MAX = 100
PREFERRED_AFFINITY: list[tuple[object, ...]] = [
    ("all nodes are same priority as Affinity is nil", p(S1), [], nodes(CHINA, INDIA, AZ1), False, [0, 0, 0]),
    (
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
        "which doesn't match either pods in nodes or in topology key",
        p(S1, affinity=STAY_WITH_S1_IN_REGION),
        [p(S1, "node1"), p(S2, "node2"), p(S1, "node3")],
        nodes(CHINA, INDIA, AZ1),
        False,
        [MAX, 0, 0],
    ),
    (
        "All the nodes that have the same topology key & label value with one of them has an existing pod "
        "that "
        "match the affinity rules, have the same score",
        p(affinity=STAY_WITH_S1_IN_REGION),
        [p(S1, "node1")],
        nodes(CHINA, CHINA_AZ1, INDIA),
        False,
        [MAX, MAX, 0],
    ),
    (
        "Affinity: nodes in one region has more matching pods comparing to other region, so the region "
        "which has "
        "more matches will get high score",
        p(S1, affinity=STAY_WITH_S2_IN_REGION),
        [p(S2, "node1"), p(S2, "node1"), p(S2, "node2"), p(S2, "node3"), p(S2, "node4"), p(S2, "node5")],
        nodes(CHINA, INDIA, CHINA, CHINA, INDIA),
        False,
        [MAX, 0, MAX, MAX, 0],
    ),
    (
        "Affinity: different Label operators and values for pod affinity scheduling preference, including "
        "some "
        "match failures ",
        p(S1, affinity=AFFINITY3),
        [p(S1, "node1"), p(S2, "node2"), p(S1, "node3")],
        nodes(CHINA, INDIA, AZ1),
        False,
        [20, MAX, 0],
    ),
    (
        "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod "
        "affinity "
        "symmetry",
        p(S2),
        [p(S1, "node1", STAY_WITH_S1_IN_REGION), p(S2, "node2", STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        False,
        [0, MAX, 0],
    ),
    (
        "Affinity symmetry with namespace selector",
        p(S1, namespace="subteam1.team1"),
        [p(S1, "node1", AFFINITY_NAMESPACE_SELECTOR), p(S2, "node2", STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        False,
        [MAX, 0, 0],
    ),
    (
        "AntiAffinity symmetry with namespace selector",
        p(S1, namespace="subteam1.team1"),
        [p(S1, "node1", ANTI_AFFINITY_NAMESPACE_SELECTOR), p(S2, "node2", STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        False,
        [0, MAX, MAX],
    ),
    (
        "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity "
        "symmetry",
        p(S1),
        [p(S1, "node1", HARD_AFFINITY), p(S2, "node2", HARD_AFFINITY)],
        nodes(CHINA, INDIA, AZ1),
        False,
        [MAX, MAX, 0],
    ),
    (
        "Anti Affinity: pod that does not match existing pods in node will get high score ",
        p(S1, affinity=AWAY_FROM_S1_IN_AZ),
        [p(S1, "node1"), p(S2, "node2")],
        nodes(AZ1, CHINA),
        False,
        [0, MAX],
    ),
    (
        "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
        "comparing to others ",
        p(S1, affinity=AWAY_FROM_S1_IN_AZ),
        [p(S1, "node1"), p(S1, "node2")],
        nodes(AZ1, CHINA),
        False,
        [0, MAX],
    ),
    (
        "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
        "unmatches will get high score",
        p(S1, affinity=AWAY_FROM_S1_IN_AZ),
        [p(S1, "node1"), p(S1, "node1"), p(S2, "node2")],
        nodes(AZ1, INDIA),
        False,
        [0, MAX],
    ),
    (
        "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        p(S2),
        [p(S1, "node1", AWAY_FROM_S2_IN_AZ), p(S2, "node2", AWAY_FROM_S1_IN_AZ)],
        nodes(AZ1, AZ2),
        False,
        [0, MAX],
    ),
    (
        "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in "
        "both pod "
        "affinity & anti affinity",
        p(S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [p(S1, "node1"), p(S1, "node2")],
        nodes(CHINA, AZ1),
        False,
        [MAX, 0],
    ),
    (
        "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and "
        "existing pods have the same labels",
        p(S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [
            p(S1, "node1"),
            p(S1, "node1"),
            p(S1, "node2"),
            p(S1, "node3"),
            p(S1, "node3"),
            p(S1, "node4"),
            p(S1, "node5"),
        ],
        nodes(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA),
        False,
        [MAX, 0, MAX, MAX, 0],
    ),
    (
        "Affinity and Anti Affinity and symmetry: considered only "
        "preferredDuringSchedulingIgnoredDuringExecution "
        "in both pod affinity & anti affinity & symmetry",
        p(S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [
            p(S1, "node1"),
            p(S2, "node2"),
            p(node="node3", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            p(node="node4", affinity=AWAY_FROM_S1_IN_AZ),
        ],
        nodes(CHINA, AZ1, INDIA, AZ2),
        False,
        [MAX, 0, MAX, 0],
    ),
    (
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        p(S1),
        [p(S1, "node1"), p(node="node2", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)],
        nodes(CHINA, CHINA),
        False,
        [0, 0],
    ),
    (
        "invalid Affinity fails PreScore",
        Skip(
            "an invalid label value is the API server's error when the pod is read, never a PreScore status"
        ),
    ),
    (
        "invalid AntiAffinity fails PreScore",
        Skip(
            "an invalid label value is the API server's error when the pod is read, never a PreScore status"
        ),
    ),
    (
        "Affinity with pods matching NamespaceSelector",
        p(S1, namespace="subteam1.team1", affinity=AFFINITY_NAMESPACE_SELECTOR),
        [
            p(S1, "node1", namespace="subteam1.team1"),
            p(S1, "node1", namespace="subteam1.team1"),
            p(S1, "node1", namespace="subteam1.team2"),
            p(S1, "node2", namespace="subteam2.team1"),
        ],
        nodes(CHINA, INDIA),
        False,
        [MAX, 0],
    ),
    (
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        p(S1, namespace="subteam1.team1", affinity=AFFINITY_NAMESPACE_SELECTOR),
        [
            p(S1, "node1", namespace="subteam1.team1"),
            p(S1, "node1", namespace="subteam1.team1"),
            p(S1, "node1", namespace="subteam2.team2"),
            p(S1, "node2", namespace="subteam2.team1"),
        ],
        nodes(CHINA, INDIA),
        False,
        [MAX, 0],
    ),
    (
        "Affinity with pods matching NamespaceSelector (anti-affinity)",
        p(S1, namespace="subteam1.team1", affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR),
        [
            p(S1, "node1", namespace="subteam1.team1"),
            p(S1, "node1", namespace="subteam1.team1"),
            p(S1, "node1", namespace="subteam1.team2"),
            p(S1, "node2", namespace="subteam2.team1"),
        ],
        nodes(CHINA, INDIA),
        False,
        [0, MAX],
    ),
    (
        "Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity)",
        p(S1, namespace="subteam1.team1", affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR),
        [
            p(S1, "node1", namespace="subteam1.team1"),
            p(S1, "node1", namespace="subteam1.team1"),
            p(S1, "node1", namespace="subteam2.team2"),
            p(S1, "node2", namespace="subteam2.team1"),
        ],
        nodes(CHINA, INDIA),
        False,
        [0, MAX],
    ),
    (
        "Ignore preferred terms of existing pods",
        p(S2),
        [p(S1, "node1", STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), p(S2, "node2", STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA),
        True,
        [0, 0],
    ),
    (
        "Do not ignore preferred terms of existing pods",
        p(S2),
        [p(S1, "node1", STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), p(S2, "node2", STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA),
        False,
        [0, MAX],
    ),
    ("No nodes to score", p(S2), [], [], False, []),
]


@pytest.mark.parametrize(
    ("pod", "pods", "node_list", "ignore", "want"), cases("TestPreferredAffinity", PREFERRED_AFFINITY, 5)
)
def test_preferred_affinity(
    pod: Pod, pods: list[Pod], node_list: list[Node], ignore: bool, want: list[int]
) -> None:
    plugin = InterPodAffinity(hard_pod_affinity_weight=1, ignore_preferred_terms_of_existing_pods=ignore)
    assert run_scores(plugin, pod, node_list, pods, namespaces=NAMESPACES) == want


HARD_POD_AFFINITY = PodAffinity(
    required=(
        PodAffinityTerm(
            LabelSelector().in_("service", ["S1"]).obj(),
            "region",
            frozenset({"", "subteam2.team2"}),
            TEAM1,
        ),
    )
)
SERVICE_S1 = {"service": "S1"}
THREE = nodes(CHINA, INDIA, AZ1)
EXISTING = [p(node="node1", affinity=HARD_POD_AFFINITY), p(node="node2", affinity=HARD_POD_AFFINITY)]
HARD_WEIGHT: list[tuple[object, ...]] = [
    ("with default weight", p(SERVICE_S1), 1, [MAX, MAX, 0]),
    ("with zero weight", p(SERVICE_S1), 0, [0, 0, 0]),
    ("with no matching namespace", p(SERVICE_S1, namespace="subteam1.team2"), 1, [0, 0, 0]),
    ("with matching NamespaceSelector", p(SERVICE_S1, namespace="subteam1.team1"), 1, [MAX, MAX, 0]),
    ("with matching Namespaces", p(SERVICE_S1, namespace="subteam2.team2"), 1, [MAX, MAX, 0]),
]


@pytest.mark.parametrize(
    ("pod", "weight", "want"),
    cases("TestPreferredAffinityWithHardPodAffinitySymmetricWeight", HARD_WEIGHT, 3),
)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    pod: Pod, weight: int, want: list[int]
) -> None:
    plugin = InterPodAffinity(hard_pod_affinity_weight=weight)
    assert run_scores(plugin, pod, THREE, EXISTING, namespaces=NAMESPACES) == want
