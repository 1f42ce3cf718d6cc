"""cluster-autoscaler 1.34's own tables for the scale-down simulation and planner (tag
``cluster-autoscaler-1.34.5``): ``cluster-autoscaler/simulator/cluster_test.go`` (``TestFindEmptyNodes``,
``TestFindNodesToRemove``, ``TestSimulateNodeRemoval``: which nodes the removal simulation finds removable,
with the pods they reschedule, and why the others are not) and
``cluster-autoscaler/core/scaledown/planner/planner_test.go`` (``TestUpdateClusterState``: which nodes a scan
finds unneeded and which unremovable; ``TestUpdateClusterStatUnneededNodesLimit``: how many nodes a scan finds
unneeded at most, ``unneededNodesLimit``; ``TestNewPlannerWithExistingDeletionCandidateNodes``;
``TestNodesToDelete``: the empty nodes and those to drain that may go), case by case. The simulator cases use
upstream's ``testDeleteOptions`` (system pods, local storage and custom controllers all block), gpufleet's
drainability defaults; no PDB. Upstream's ``UnremovableReason`` is checked, and a blocking pod by the phrase
of its ``drain`` reason code."""

from __future__ import annotations

from dataclasses import replace

import pytest
from builders import Skip, cases, skipped_cases
from ca_builders import (
    Removal,
    build_test_node,
    build_test_pod,
    empty_nodes,
    nodes_to_delete,
    simulate_removals,
    unneeded_after_update,
    update_cluster_state,
)

from gpufleet.autoscaling.drainability import MIRROR
from gpufleet.autoscaling.scale_down import UnremovableReason
from gpufleet.model.node import Node
from gpufleet.model.pod import OwnerRef, Pod, Requirement
from gpufleet.model.pod_affinity import DO_NOT_SCHEDULE, HONOR, TopologySpreadConstraint

NO_PLACE = UnremovableReason.NO_PLACE_TO_MOVE_PODS
BLOCKED = UnremovableReason.BLOCKED_BY_POD
NOT_REPLICATED = "is not replicated"  # drain.NotReplicated, in gpufleet's words

NO_NODE_INFO = (
    "NoNodeInfo: gpufleet lists its scale-down candidates from the cluster state itself, so it never "
    "simulates the removal of a node the snapshot lacks"
)
PERSIST = (
    "upstream's planner persists each successful simulation (NewRemovalSimulator(..., true): the removable "
    "node's pods stay on their new nodes in the snapshot, the node leaves the snapshot and podDestinations), "
    "so n2, holding n1's pods, has nowhere to move them; gpufleet simulates each candidate on the cluster as "
    "it is and finds both unneeded (a larger change to its scan and its removal memo, not made here)"
)
RECENT_EVICTIONS = (
    "recently evicted pods (ActuationStatus.RecentEvictions, injectRecentlyEvictedPods, with the "
    "ReplicaSet's status replicas telling which were recreated) are not modelled, as the 1.34.5 binary "
    "injects none: StaticAutoscaler builds its NodeDeletionTracker with an evictions TTL of 0 "
    "(NewNodeDeletionTracker(0 * time.Second)), so RecentEvictions drops every eviction before it is read "
    "(DropNotNewerThan(now)); only this test's fakeActuationStatus returns some"
)
TIMEOUT = (
    "--scale-down-simulation-timeout (a wall-clock budget, tested with a sleeping fake RemovalSimulator) "
    "has no counterpart: gpufleet's scans run on a virtual clock, with no time budget"
)
#: a node group of ``TestNodesToDelete``: target size, removable nodes (name, pods to reschedule), and for a
#: ``ZeroOrMaxNodeScaling`` group True and its other registered nodes
AtomicGroup = tuple[int, list[tuple[str, int]], bool, tuple[str, ...]]
NodeGroupSpec = tuple[int, list[tuple[str, int]]] | AtomicGroup
DELETION_CANDIDATE_TAINTS = (
    "DeletionCandidate taints are put on and taken off (autoscaling.soft_taints) but not read back: "
    "gpufleet's autoscaler does not restart, so it never reloads its unneeded nodes from a cluster "
    "(--node-deletion-candidate-ttl, 0 by default: off); upstream's test asserts nothing either"
)


def rs(pod: Pod, name: str = "rs") -> Pod:
    """``SetRSPodSpec`` / ``OwnerReferences = GenerateOwnerReferences(name, "ReplicaSet", ...)``."""
    return replace(pod, owner=OwnerRef("ReplicaSet", name))


# -- simulator/cluster_test.go --------------------------------------------------------------------


def test_find_empty_nodes() -> None:
    """``TestFindEmptyNodes``: p1 (no controller) keeps n1; the mirror pod p2 does not keep n2."""
    nodes = [build_test_node(f"n{i}", 1000, 2000000) for i in range(4)]
    p1 = build_test_pod("p1", 300, 500000)
    p2 = replace(build_test_pod("p2", 300, 500000), annotations={MIRROR: ""})
    assert empty_nodes(nodes, [(p1, "n1"), (p2, "n2")]) == ["n0", "n2", "n3"]


EMPTY = build_test_node("n1", 1000, 2000000)
DRAINABLE = build_test_node("n2", 1000, 2000000)  # two small ReplicaSet pods
NON_DRAINABLE = build_test_node("n3", 1000, 2000000)  # one small pod, not backed by anything
FULL = build_test_node("n4", 1000, 2000000)  # one very large pod
P1 = rs(build_test_pod("p1", 100, 100000))
P2 = rs(build_test_pod("p2", 100, 100000))
P3 = build_test_pod("p3", 100, 100000)
P4 = build_test_pod("p4", 1000, 100000)

HOST = "kubernetes.io/hostname"
TOPO = [build_test_node(f"topo-n{i}", 1000, 2000000) for i in (1, 2, 3)]
TOPO_APP = (Requirement("app", "In", ("topo-app",)),)
TSC = TopologySpreadConstraint(1, HOST, DO_NOT_SCHEDULE, TOPO_APP, min_domains=2)
HONOR_TSC = replace(TSC, node_taints_policy=HONOR)


def topo_pod(name: str, tsc: TopologySpreadConstraint = TSC) -> Pod:
    """``buildTopoPod``: a ReplicaSet pod labelled ``app: topo-app`` with one spread constraint."""
    pod = rs(build_test_pod(name, 100, 100000, labels={"app": "topo-app"}))
    return replace(pod, spread_constraints=(tsc,))


P5, P6, P7 = topo_pod("p5"), topo_pod("p6"), topo_pod("p7")
BLOCKER1, BLOCKER2 = build_test_pod("blocker1", 100, 100000), build_test_pod("blocker2", 100, 100000)


def removable(node: Node, *pods: Pod) -> Removal:
    return Removal(node.name, tuple(p.name for p in pods))


def unremovable(node: Node, reason: UnremovableReason, blocking: Pod | None = None) -> Removal:
    """``UnremovableNode{Node, Reason, BlockingPod}``: the blocking pod's name is matched in the message."""
    return Removal(node.name, (), reason, blocking.key if blocking is not None else "")


def _check(got: list[Removal], want: list[Removal]) -> None:
    assert [(r.node, r.moved, r.reason) for r in got] == [(r.node, r.moved, r.reason) for r in want]
    for g, w in zip(got, want, strict=True):
        if w.reason == BLOCKED:
            assert w.message in g.message and NOT_REPLICATED in g.message


# (name, pods with their nodes, all nodes, candidates, removable then unremovable, in candidate order)
FIND_NODES_TO_REMOVE = [
    ("just an empty node, should be removed", [], [EMPTY], [EMPTY], [removable(EMPTY)]),
    (
        "just a drainable node, but nowhere for pods to go to",
        [(P1, "n2"), (P2, "n2")],
        [DRAINABLE],
        [DRAINABLE],
        [unremovable(DRAINABLE, NO_PLACE)],
    ),
    (
        "drainable node, and a mostly empty node that can take its pods",
        [(P1, "n2"), (P2, "n2"), (P3, "n3")],
        [DRAINABLE, NON_DRAINABLE],
        [DRAINABLE, NON_DRAINABLE],
        [removable(DRAINABLE, P1, P2), unremovable(NON_DRAINABLE, BLOCKED, P3)],
    ),
    (
        "drainable node, and a full node that cannot fit anymore pods",
        [(P1, "n2"), (P2, "n2"), (P4, "n4")],
        [DRAINABLE, FULL],
        [DRAINABLE],
        [unremovable(DRAINABLE, NO_PLACE)],
    ),
    (
        "4 nodes, 1 empty, 1 drainable",
        [(P1, "n2"), (P2, "n2"), (P3, "n3"), (P4, "n4")],
        [EMPTY, DRAINABLE, FULL, NON_DRAINABLE],
        [EMPTY, DRAINABLE],
        [removable(EMPTY), removable(DRAINABLE, P1, P2)],
    ),
    (
        "topology spread constraint test - node unremovable due to phantom zone",
        [(P5, "topo-n1"), (P6, "topo-n2"), (P7, "topo-n3"), (BLOCKER1, "topo-n2"), (BLOCKER2, "topo-n3")],
        TOPO,
        TOPO,
        [
            unremovable(TOPO[0], NO_PLACE),
            unremovable(TOPO[1], BLOCKED, BLOCKER1),
            unremovable(TOPO[2], BLOCKED, BLOCKER2),
        ],
    ),
]


@pytest.mark.parametrize(
    ("pods", "nodes", "candidates", "want"), cases("TestFindNodesToRemove", FIND_NODES_TO_REMOVE, 4)
)
def test_find_nodes_to_remove(
    pods: list[tuple[Pod, str]], nodes: list[Node], candidates: list[Node], want: list[Removal]
) -> None:
    """``FindNodesToRemove`` (``persistSuccessfulSimulations`` false): the removable nodes with the pods
    they reschedule, and the unremovable ones with their reason (upstream returns the two lists apart; the
    order within each is the candidates', as here)."""
    _check(simulate_removals(nodes, pods, [c.name for c in candidates]), want)


DRAIN_A, DRAIN_B = (
    rs(build_test_pod("drainable-rs-pod-a", 100, 100000)),
    rs(build_test_pod("drainable-rs-pod-b", 100, 100000)),
)
STANDALONE = build_test_pod("standalone-on-non-drainable", 100, 100000)
LARGE = build_test_pod("large-pod-on-full", 1000, 100000)
DEFAULT_N = [topo_pod(f"default-tsc-pod-n{i}") for i in (1, 2, 3)]
BLOCKER_N2, BLOCKER_N3 = build_test_pod("blocker-n2", 100, 100000), build_test_pod("blocker-n3", 100, 100000)
HONOR_N = [topo_pod(f"honor-tsc-pod-n{i}", HONOR_TSC) for i in (1, 2, 3)]
ON_TOPO = ["topo-n1", "topo-n2", "topo-n3"]

# (name, pods with their nodes, all nodes, the node, its outcome) or (name, Skip)
SIMULATE_NODE_REMOVAL = [
    ("just an empty node, should be removed", [], [EMPTY], EMPTY, removable(EMPTY)),
    (
        "just a drainable node, but nowhere for pods to go to",
        [(DRAIN_A, "n2"), (DRAIN_B, "n2")],
        [DRAINABLE],
        DRAINABLE,
        unremovable(DRAINABLE, NO_PLACE),
    ),
    (
        "drainable node, and a mostly empty node that can take its pods",
        [(DRAIN_A, "n2"), (DRAIN_B, "n2"), (STANDALONE, "n3")],
        [DRAINABLE, NON_DRAINABLE],
        DRAINABLE,
        removable(DRAINABLE, DRAIN_A, DRAIN_B),
    ),
    (
        "drainable node, and a full node that cannot fit anymore pods",
        [(DRAIN_A, "n2"), (DRAIN_B, "n2"), (LARGE, "n4")],
        [DRAINABLE, FULL],
        DRAINABLE,
        unremovable(DRAINABLE, NO_PLACE),
    ),
    (
        "4 nodes, 1 empty, 1 drainable",
        [(DRAIN_A, "n2"), (DRAIN_B, "n2"), (STANDALONE, "n3"), (LARGE, "n4")],
        [EMPTY, DRAINABLE, FULL, NON_DRAINABLE],
        EMPTY,
        removable(EMPTY),
    ),
    (
        "topology spread constraint test - node unremovable due to phantom zone",
        [*zip(DEFAULT_N, ON_TOPO, strict=True), (BLOCKER_N2, "topo-n2"), (BLOCKER_N3, "topo-n3")],
        TOPO,
        TOPO[0],
        unremovable(TOPO[0], NO_PLACE),
    ),
    (
        "topology spread constraint test - node removable with nodeTaintsPolicy Honor",
        [*zip(HONOR_N, ON_TOPO, strict=True)],
        TOPO,
        TOPO[0],
        removable(TOPO[0], HONOR_N[0]),
    ),
    ("candidate not in clusterSnapshot should be marked unremovable", Skip(NO_NODE_INFO)),
]


@pytest.mark.parametrize(
    ("pods", "nodes", "node", "want"), cases("TestSimulateNodeRemoval", SIMULATE_NODE_REMOVAL, 4)
)
def test_simulate_node_removal(
    pods: list[tuple[Pod, str]], nodes: list[Node], node: Node, want: Removal
) -> None:
    """``SimulateNodeRemoval``: exactly one of the removable node (with the pods it reschedules) and the
    unremovable one (with its reason)."""
    _check(simulate_removals(nodes, pods, [node.name]), [want])


# -- core/scaledown/planner/planner_test.go -------------------------------------------------------


def n(name: str, millicpu: int) -> Node:
    """``BuildTestNode(name, millicpu, 10)``."""
    return build_test_node(name, millicpu, 10)


def scheduled(name: str, millicpu: int, on: str) -> tuple[Pod, str]:
    """``SetRSPodSpec(BuildScheduledTestPod(name, millicpu, 1, on), "rs")``."""
    return rs(build_test_pod(name, millicpu, 1)), on


N3 = [n("n1", 1000), n("n2", 1000), n("n3", 1000)]
N2 = [n("n1", 1000), n("n2", 1000)]
TWO_ON_N1 = [scheduled("p1", 500, "n1"), scheduled("p2", 500, "n1")]

# (name, nodes, pods with their nodes, eligible, being deleted, unneeded, unremovable) or (name, Skip)
UPDATE_CLUSTER_STATE = [
    ("empty nodes, all eligible", N3, [], ["n1", "n2", "n3"], [], ["n1", "n2", "n3"], []),
    ("empty nodes, some eligible", N3, [], ["n1", "n2"], [], ["n1", "n2"], ["n3"]),
    ("empty nodes, none eligible", N3, [], [], [], [], ["n1", "n2", "n3"]),
    (
        "single utilised node, not eligible",
        [n("n1", 1000)],
        [scheduled("p1", 500, "n1")],
        ["n1"],
        [],
        [],
        ["n1"],
    ),
    (
        "pods cannot schedule on node undergoing deletion, not eligible",
        N2,
        TWO_ON_N1,
        ["n1"],
        ["n2"],
        [],
        ["n1", "n2"],
    ),
    ("pods can schedule on non-eligible node, eligible", N2, TWO_ON_N1, ["n1"], [], ["n1"], ["n2"]),
    ("pods can schedule on eligible node, eligible", Skip(PERSIST)),
    (
        "pods cannot schedule anywhere, not eligible",
        [n("n1", 2000), n("n2", 1000), n("n3", 500)],
        [scheduled("p1", 1000, "n1"), scheduled("p2", 1000, "n1"), scheduled("p3", 1000, "n2")],
        ["n1", "n2"],
        [],
        [],
        ["n1", "n2", "n3"],
    ),
    (
        "all pods from multiple nodes can schedule elsewhere, all eligible",
        [n("n1", 1000), n("n2", 1000), n("n3", 2000)],
        [*TWO_ON_N1, scheduled("p3", 500, "n2"), scheduled("p4", 500, "n2")],
        ["n1", "n2"],
        [],
        ["n1", "n2"],
        ["n3"],
    ),
    (
        "some pods from multiple nodes can schedule elsewhere, some eligible",
        [n("n1", 2000), n("n2", 1000), n("n3", 1000)],
        [
            scheduled("p1", 1000, "n1"),
            scheduled("p2", 1000, "n1"),
            scheduled("p3", 500, "n2"),
            scheduled("p4", 500, "n2"),
        ],
        ["n1", "n2"],
        [],
        ["n2"],
        ["n1", "n3"],
    ),
    (
        "no pods from multiple nodes can schedule elsewhere, no eligible",
        [n("n1", 1000), n("n2", 1000), n("n3", 500)],
        [*TWO_ON_N1, scheduled("p3", 500, "n2"), scheduled("p4", 500, "n2")],
        ["n1", "n2"],
        [],
        [],
        ["n1", "n2", "n3"],
    ),
    ("recently evicted RS pod, not eligible", Skip(RECENT_EVICTIONS)),
    ("recently evicted pod without owner, not eligible", Skip(RECENT_EVICTIONS)),
    ("recently evicted static pod, eligible", Skip(RECENT_EVICTIONS)),
    ("recently evicted mirror pod, eligible", Skip(RECENT_EVICTIONS)),
    ("recently evicted DS pod, eligible", Skip(RECENT_EVICTIONS)),
    ("recently evicted pod can schedule on non-eligible node, eligible", Skip(RECENT_EVICTIONS)),
    ("recently evicted pod can schedule on eligible node, eligible", Skip(RECENT_EVICTIONS)),
    ("recently evicted pod too large to schedule anywhere, all eligible", Skip(RECENT_EVICTIONS)),
    ("all recently evicted pod got rescheduled, all eligible", Skip(RECENT_EVICTIONS)),
    ("some recently evicted pod got rescheduled, some eligible", Skip(RECENT_EVICTIONS)),
    ("no recently evicted pod got rescheduled, no eligible", Skip(RECENT_EVICTIONS)),
    ("all scheduled and recently evicted pods can schedule elsewhere, all eligible", Skip(RECENT_EVICTIONS)),
    (
        "some scheduled and recently evicted pods can schedule elsewhere, some eligible",
        Skip(RECENT_EVICTIONS),
    ),
    ("scheduled and recently evicted pods take all capacity, no eligible", Skip(RECENT_EVICTIONS)),
    ("Simulation timeout is hit", Skip(TIMEOUT)),
]


@pytest.mark.parametrize(
    ("nodes", "pods", "eligible", "being_deleted", "unneeded", "unremovable_nodes"),
    cases("TestUpdateClusterState", UPDATE_CLUSTER_STATE, 6),
)
def test_update_cluster_state(
    nodes: list[Node],
    pods: list[tuple[Pod, str]],
    eligible: list[str],
    being_deleted: list[str],
    unneeded: list[str],
    unremovable_nodes: list[str],
) -> None:
    """``UpdateClusterState``: which nodes ``unneededNodes`` and ``unremovableNodes`` contain; the nodes
    ``fakeEligibilityChecker`` refuses are unremovable, the others unneeded unless their pods cannot move."""
    assert update_cluster_state(nodes, pods, eligible, being_deleted) == (unneeded, unremovable_nodes)


# (name, previously unneeded, nodes, MaxScaleDownParallelism, ScaleDownUnneededTime (s),
# minUpdateInterval (s), ZeroOrMaxNodeScaling, unneeded after) or (name, Skip)
UNNEEDED_LIMIT_CASES = [
    ("no unneeded, default settings", 0, 100, 10, 60.0, 10.0, False, 20),
    ("some unneeded, default settings", 3, 100, 10, 60.0, 10.0, False, 23),
    ("max unneeded, default settings", 70, 100, 10, 60.0, 10.0, False, 70),
    ("too many unneeded, default settings", 77, 100, 10, 60.0, 10.0, False, 70),
    ("instant kill nodes", 0, 100, 10, 0.0, 10.0, False, 20),
    ("quick loops", 13, 100, 10, 60.0, 1.0, False, 33),
    ("slow loops", 13, 100, 10, 60.0, 30.0, False, 30),
    # an atomic group's nodes are not counted against the limit (atomicScaleDownNodesCount): all are found
    ("atomic sclale down - default settings", 5, 100, 10, 60.0, 10.0, True, 100),
    ("atomic sclale down - quick loops", 5, 100, 10, 60.0, 1.0, True, 100),
    ("atomic sclale down - slow loops", 5, 100, 10, 60.0, 30.0, True, 100),
    ("atomic sclale down - too many unneeded", 77, 100, 10, 60.0, 30.0, True, 100),
    ("atomic sclale down - no uneeded", 0, 100, 10, 60.0, 30.0, True, 100),
    ("atomic sclale down - short uneeded time and short update interval", 0, 500, 1, 1.0, 1.0, True, 500),
]


@pytest.mark.parametrize(
    (
        "previously_unneeded",
        "nodes",
        "max_parallelism",
        "unneeded_time_s",
        "update_interval_s",
        "atomic",
        "want",
    ),
    cases("TestUpdateClusterStatUnneededNodesLimit", UNNEEDED_LIMIT_CASES, 7),
)
def test_update_cluster_stat_unneeded_nodes_limit(
    previously_unneeded: int,
    nodes: int,
    max_parallelism: int,
    unneeded_time_s: float,
    update_interval_s: float,
    atomic: bool,
    want: int,
) -> None:
    """``TestUpdateClusterStatUnneededNodesLimit``: a scan stops simulating removals once it has found
    ``unneededNodesLimit`` unneeded nodes, those of a ``ZeroOrMaxNodeScaling`` group not counted."""
    got = unneeded_after_update(
        previously_unneeded, nodes, max_parallelism, unneeded_time_s, update_interval_s, atomic
    )
    assert got == want


@pytest.mark.parametrize(
    "unused",
    skipped_cases(
        "TestNewPlannerWithExistingDeletionCandidateNodes",
        [
            "All deletion candidate nodes with standard TTL",
            "Node without deletion candidate taint should not be deleted",
            "Node with invalid deletion candidate taint should be deleted",
        ],
        Skip(DELETION_CANDIDATE_TAINTS),
    ),
)
def test_new_planner_with_existing_deletion_candidate_nodes(unused: object) -> None:
    """``TestNewPlannerWithExistingDeletionCandidateNodes``."""


def _atomic(size: int, removable: list[tuple[str, int]], others: tuple[str, ...] = ()) -> AtomicGroup:
    """``sizedNodeGroup(id, size, true)`` with its removable nodes and its ``others`` (registered, in
    ``tc.nodes``)."""
    return (size, removable, True, others)


# (name, groups: name -> (target size, [(node, pods to reschedule)][, ZeroOrMaxNodeScaling, other registered
# nodes]), empty, drain) or (name, Skip)
NODES_TO_DELETE = [
    ("empty", {}, [], []),
    ("single empty", {"test-ng": (3, [("test-node", 0)])}, ["test-node"], []),
    ("single drain", {"test-ng": (3, [("test-node", 1)])}, [], ["test-node"]),
    ("single empty atomic", {"atomic-ng": _atomic(3, [("node-1", 0)], ("node-0", "node-2"))}, [], []),
    (
        "all empty atomic",
        {"atomic-ng": _atomic(3, [("node-1", 0), ("node-2", 0), ("node-3", 0)])},
        ["node-1", "node-2", "node-3"],
        [],
    ),
    (
        "some drain atomic",
        {"atomic-ng": _atomic(3, [("node-1", 0), ("node-2", 0), ("node-3", 1)])},
        ["node-1", "node-2"],
        ["node-3"],
    ),
    (
        "different groups",
        {
            "standard-empty-ng": (3, [(f"standard-empty-ng-{i}", 0) for i in range(3)]),
            "standard-drain-ng": (3, [(f"standard-drain-ng-{i}", i + 1) for i in range(3)]),
            "standard-mixed-ng": (3, [(f"standard-mixed-ng-{i}", i) for i in range(3)]),
            "atomic-empty-ng": _atomic(3, [(f"atomic-empty-ng-{i}", 0) for i in range(3)]),
            "atomic-mixed-ng": _atomic(3, [(f"atomic-mixed-ng-{i}", i) for i in range(3)]),
            "atomic-partial-ng-all-registered": _atomic(
                3,
                [("atomic-partial-ng-all-registered-1", 0), ("atomic-partial-ng-all-registered-2", 1)],
                ("atomic-partial-ng-all-registered-0",),
            ),
            "atomic-partial-ng-partially-registered": _atomic(
                3,
                [
                    ("atomic-partial-ng-partially-registered-0", 0),
                    ("atomic-partial-ng-partially-registered-1", 1),
                ],
            ),
        },
        sorted(
            [f"standard-empty-ng-{i}" for i in range(3)]
            + ["standard-mixed-ng-0"]
            + [f"atomic-empty-ng-{i}" for i in range(3)]
            + ["atomic-mixed-ng-0", "atomic-partial-ng-partially-registered-0"]
        ),
        sorted(
            [f"standard-drain-ng-{i}" for i in range(3)]
            + ["standard-mixed-ng-1", "standard-mixed-ng-2", "atomic-mixed-ng-1", "atomic-mixed-ng-2"]
            + ["atomic-partial-ng-partially-registered-1"]
        ),
    ),
]


@pytest.mark.parametrize(("groups", "empty", "drain"), cases("TestNodesToDelete", NODES_TO_DELETE, 3))
def test_nodes_to_delete(groups: dict[str, NodeGroupSpec], empty: list[str], drain: list[str]) -> None:
    """``NodesToDelete``: the removable nodes, empty ones apart from those to drain; a
    ``ZeroOrMaxNodeScaling`` group's only when they are all its nodes (its target size, or all its registered
    nodes: ``AtomicResizeFilteringProcessor``)."""
    assert nodes_to_delete(groups) == (empty, drain)
