"""cluster-autoscaler 1.34's own ``--balance-similar-node-groups`` tests (tag ``cluster-autoscaler-1.34.5``,
``cluster-autoscaler/processors/nodegroupset/``: ``balancing_processor_test.go``,
``compare_nodegroups_test.go``, ``label_nodegroups_test.go``), test by test: each pytest id is the upstream
test's name; an upstream test that is one sequence of assertions is one test here, its assertions in
order. A group is a ``PoolOption`` whose template is upstream's test node (its pods the template's pods);
a test of something gpufleet does not model is kept as a skip that says why."""

from __future__ import annotations

import pytest
from ca_builders import build_test_node, build_test_pod

from gpufleet.autoscaling.node_group_balancing import balance, find_similar, similar
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU

KI = 1024


def group(node: Node, pods: tuple[Pod, ...] = ()) -> PoolOption:
    """A group whose template is ``node`` (``framework.NewTestNodeInfo(node, pods...)``)."""
    return PoolOption(node.name, node, pods)


# --- balancing_processor_test.go ------------------------------------------------------------------


def _basic_groups(ready: tuple[str, str] | None = None) -> list[PoolOption]:
    """``buildBasicNodeGroups``: ng1 and ng2 of 1000m/1000 nodes, ng3 of 2000m/2000 (``ready``: the values
    of ``example.com/ready`` on ng1's and ng2's templates)."""
    nodes = [
        build_test_node("n1", 1000, 1000),
        build_test_node("n2", 1000, 1000),
        build_test_node("n3", 2000, 2000),
    ]
    if ready is not None:
        nodes[0].labels["example.com/ready"], nodes[1].labels["example.com/ready"] = ready
    return [PoolOption(f"ng{k + 1}", node) for k, node in enumerate(nodes)]


def _similar_names(groups: list[PoolOption], ignored: tuple[str, ...] = ()) -> list[list[str]]:
    return [[s.name for s in find_similar(g, groups, ignored)] for g in groups]


def test_find_similar_node_groups() -> None:
    """``TestFindSimilarNodeGroups`` (``basicSimilarNodeGroupsTest``): ng1 and ng2 are similar, ng3 is not
    (upstream compares with zero difference ratios, gpufleet with the defaults: the same here)."""
    assert _similar_names(_basic_groups()) == [["ng2"], ["ng1"], []]


def test_find_similar_node_groups_custom_labels() -> None:
    """``TestFindSimilarNodeGroupsCustomLabels``: ``example.com/ready`` differs, ignored
    (``--balancing-ignore-label``)."""
    assert _similar_names(_basic_groups(("true", "false")), ("example.com/ready",)) == [["ng2"], ["ng1"], []]


def test_find_similar_node_groups_custom_comparator() -> None:
    """``TestFindSimilarNodeGroupsCustomComparator``."""
    pytest.skip(
        "a custom NodeInfoComparator (a Go hook of BalancingNodeGroupSetProcessor) is not configurable"
    )


def test_balance_single_group() -> None:
    """``TestBalanceSingleGroup``: one group (size 1, max 10) takes 1 node, then 4."""
    assert balance([("ng1", 1, 10)], 1) == [("ng1", 1)]
    assert balance([("ng1", 1, 10)], 4) == [("ng1", 4)]


UNDER_MAX = [("ng1", 1, 10), ("ng2", 3, 10), ("ng3", 5, 10), ("ng4", 5, 10)]


def _new_sizes(groups: list[tuple[str, int, int]], nodes: int) -> dict[str, int]:
    """``ScaleUpInfo.NewSize`` of each group that grows."""
    size = {name: current for name, current, _ in groups}
    return {name: size[name] + added for name, added in balance(groups, nodes)}


def test_balance_under_max_size() -> None:
    """``TestBalanceUnderMaxSize``: groups of sizes 1, 3, 5, 5 (max 10) grow smallest first."""
    assert _new_sizes(UNDER_MAX, 1) == {"ng1": 2}
    assert _new_sizes(UNDER_MAX, 2) == {"ng1": 3}
    assert _new_sizes(UNDER_MAX, 4) == {"ng1": 4, "ng2": 4}
    five = _new_sizes(UNDER_MAX, 5)
    assert five.keys() == {"ng1", "ng2"} and sorted(five.values()) == [4, 5]
    assert _new_sizes(UNDER_MAX, 10) == dict.fromkeys(["ng1", "ng2", "ng3", "ng4"], 6)


HITTING_MAX = {
    "ng1": ("ng1", 1, 1),
    "ng2": ("ng2", 1, 3),
    "ng3": ("ng3", 3, 10),
    "ng4": ("ng4", 5, 7),
    "ng5": ("ng5", 6, 3),
}


def _groups(*names: str) -> list[tuple[str, int, int]]:
    return [HITTING_MAX[n] for n in names]


def test_balance_hitting_max_size() -> None:
    """``TestBalanceHittingMaxSize``: a group at its max (or above it) takes none, the others fill up to their
    max, the nodes capped to the room they have in all."""
    assert _new_sizes(_groups("ng1"), 1) == {}
    assert _new_sizes(_groups("ng1", "ng2"), 1) == {"ng2": 2}
    assert _new_sizes(_groups("ng1", "ng2"), 5) == {"ng2": 3}
    assert _new_sizes(_groups("ng2", "ng3"), 4) == {"ng2": 3, "ng3": 5}
    assert _new_sizes(_groups("ng2", "ng3", "ng4"), 9) == {"ng2": 3, "ng3": 8, "ng4": 7}
    assert _new_sizes(_groups("ng2", "ng3", "ng4"), 900) == {"ng2": 3, "ng3": 10, "ng4": 7}
    assert _new_sizes(_groups("ng2", "ng5"), 1) == {"ng2": 2}


# --- compare_nodegroups_test.go -------------------------------------------------------------------


def _alike(n1: Node, n2: Node, pods1: tuple[Pod, ...] = (), pods2: tuple[Pod, ...] = ()) -> bool:
    """``CreateGenericNodeInfoComparator`` with the default ratios (``checkNodesSimilarWithPods``)."""
    return similar(group(n1, pods1), group(n2, pods2))


def test_identical_nodes_similar() -> None:
    assert _alike(build_test_node("node1", 1000, 2000), build_test_node("node2", 1000, 2000))


def test_nodes_similar_various_requirements() -> None:
    """``TestNodesSimilarVariousRequirements``."""
    n1 = build_test_node("node1", 1000, 2000)
    n2 = build_test_node("node2", 1000, 2000)
    n2.capacity["cpu"] = 1001  # different CPU capacity
    assert not _alike(n1, n2)
    n3 = build_test_node("node3", 1000, 2000)
    n3.allocatable["cpu"] = 999  # same CPU capacity, but slightly different allocatable
    assert _alike(n1, n3)
    n4 = build_test_node("node4", 1000, 2000)
    n4.allocatable["cpu"] = 500  # same CPU capacity, significantly different allocatable
    assert not _alike(n1, n4)
    n5 = build_test_node("node5", 1000, 2000)
    n5.capacity[GPU] = n5.allocatable[GPU] = 1  # one with GPU, one without
    assert not _alike(n1, n5)


def test_nodes_similar_various_requirements_and_pods() -> None:
    """``TestNodesSimilarVariousRequirementsAndPods``."""
    n1, p1 = build_test_node("node1", 1000, 2000), build_test_pod("pod1", 500, 1000)
    n2 = build_test_node("node2", 1000, 2000)
    n2.allocatable.update(cpu=500, memory=1000)  # different allocatable, but same free
    assert not _alike(n1, n2, (p1,))
    n3 = build_test_node("node3", 1000, 2000)  # same requests of pods
    assert _alike(n1, n3, (p1,), (build_test_pod("pod3", 500, 1000),))
    n4 = build_test_node("node4", 1000, 2000)
    n4.allocatable["cpu"] = 999  # similar allocatable, similar pods
    assert _alike(n1, n4, (p1,), (build_test_pod("pod4", 501, 1001),))


def test_nodes_similar_various_memory_requirements() -> None:
    """``TestNodesSimilarVariousMemoryRequirements``: memory capacity within 1.5%, and past it."""
    n1 = build_test_node("node1", 1000, 1000)
    n2 = build_test_node("node2", 1000, 1000)
    n2.capacity["memory"] = 1000 - 15 + 1
    assert _alike(n1, n2)
    n3 = build_test_node("node3", 1000, 1000)
    n3.capacity["memory"] = 1000 - 15 - 1
    assert not _alike(n1, n3)


@pytest.mark.parametrize(
    ("q1", "q2", "q3"),
    [
        pytest.param(
            16116152, 15944120, 16438475, id="TestNodesSimilarVariousLargeMemoryRequirementsM5XLarge"
        ),
        pytest.param(
            259970052, 257217528, 265169453, id="TestNodesSimilarVariousLargeMemoryRequirementsM516XLarge"
        ),
    ],
)
def test_nodes_similar_various_large_memory_requirements(q1: int, q2: int, q3: int) -> None:
    """Real memory capacities (Ki) of two nodes of one instance type, similar; and ``q1`` * 1.02, not."""
    n1 = build_test_node("node1", 1000, q1 * KI)
    assert _alike(n1, build_test_node("node2", 1000, q2 * KI))
    assert not _alike(n1, build_test_node("node3", 1000, q3 * KI))


def test_nodes_similar_various_labels() -> None:
    """``TestNodesSimilarVariousLabels`` (``example.com/ready`` ignored besides the basic labels)."""
    n1 = build_test_node("node1", 1000, 2000)
    n1.labels.update({"test-label": "test-value", "character": "winnie the pooh"})
    n2 = build_test_node("node2", 1000, 2000)
    n2.labels["test-label"] = "test-value"

    def alike() -> bool:
        return similar(group(n1), group(n2), ("example.com/ready",))

    assert not alike()  # missing character label
    n2.labels["character"] = "winnie the pooh"
    assert alike()
    n1.labels["kubernetes.io/hostname"], n2.labels["kubernetes.io/hostname"] = "node1", "node2"
    assert alike()  # different hostname labels shouldn't matter
    zone = "failure-domain.beta.kubernetes.io/zone"
    n1.labels[zone], n2.labels[zone] = "mars-olympus-mons1-b", "us-houston1-a"
    assert alike()  # different zone shouldn't matter either
    fluentd = "beta.kubernetes.io/fluentd-ds-ready"
    n1.labels[fluentd], n2.labels[fluentd] = "true", "false"
    assert alike()
    del n2.labels[fluentd]
    assert alike()
    n1.labels["example.com/ready"], n2.labels["example.com/ready"] = "true", "false"
    assert alike()  # different custom labels should not matter


# --- label_nodegroups_test.go ---------------------------------------------------------------------


def test_node_label_comparison() -> None:
    """``TestNodeLabelComparison``."""
    pytest.skip(
        "--balancing-label (CreateLabelNodeInfoComparator: similar by the given labels alone) is not modelled"
    )
