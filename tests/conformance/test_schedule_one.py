"""kube-scheduler v1.34.10 ``pkg/scheduler/schedule_one_test.go``, ported case by case: the node choice of
``schedule_one.go`` (``schedulePod``, ``findNodesThatFitPod``, ``findNodesThatPassFilters``,
``numFeasibleNodesToFind``, ``prioritizeNodes``, ``selectHost``) against gpufleet's ``Scheduler``.

Upstream's fake plugins (``testing/framework/fake_plugins.go`` and the ones defined in that file) are
written here as gpufleet plugins of the same name and behaviour: a filter that reads only the node
object (and the pod's name) is a ``StaticFilter``, one that reads the pods placed (NoPodsFilter) a
``DynamicFilter``, a score that reads only the node a ``StaticScore``, a PreFilter that narrows the nodes
a ``NodesPreFilter``. They are put in a hand-built ``Profile`` (the registry is left alone), as
``tf.NewFramework`` registers them. gpufleet's static filters reject UnschedulableAndUnresolvable
whatever code the fake returns: the code only steers preemption, which none of these cases runs, so the
message and the rejecting plugins are compared, not the code.

What is compared: the set of nodes the pod may get (upstream draws one at random from the top-scoring
nodes; gpufleet's ``Scheduler.decide`` gives them all), the FitError's message (derived, as
``FitError.Error`` does, from the expected ``NodeToStatus``: each node's reasons, plus the absent nodes'
status for the others) and ``UnschedulablePlugins`` (``Scheduler.rejectors``). gpufleet does not count
``EvaluatedNodes`` nor Filter calls: those checks are left out (each test says so), the node set still
compared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from builders import Skip, cases, cluster, container, make_node, make_pod

from gpufleet.cluster.state import BoolArray, ClusterState, IntArray, NodeRow
from gpufleet.model.images import normalized_image_name
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.scheduling.framework import (
    SUCCESS,
    Code,
    DynamicFilter,
    NodesPreFilter,
    PodContext,
    PreFilter,
    StaticFilter,
    StaticScore,
    Status,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.messages import fit_error
from gpufleet.scheduling.plugins.priority_sort import PrioritySort
from gpufleet.scheduling.profile import Profile, build_profile
from gpufleet.scheduling.scheduler import Scheduler, num_feasible_nodes_to_find

UPSTREAM = "schedule_one_test.go"
ERR_REASON_FAKE = "Nodes failed the fake plugin"  # tf.ErrReasonFake
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest
DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest
MB = 1024 * 1024
NAME = "default-scheduler"

NO_EXTENDERS = "scheduler extenders (FakeExtender) are not modelled by gpufleet"
NO_VOLUMES = "VolumeBinding (PVCs, PVs) is accepted in a configuration but not simulated by gpufleet"
NO_PLUGIN_ERRORS = (
    "a Score plugin's Error status has no gpufleet counterpart: gpufleet models the Error statuses of "
    "PreFilter and Filter plugins (framework.PluginError), its Score plugins return scores, never errors"
)


# -- upstream's fake plugins -------------------------------------------------------------------
class TrueFilter(StaticFilter):
    name = "TrueFilter"

    def reject(self, pod: Pod, node: Node) -> str | None:
        return None


class FalseFilter(StaticFilter):
    name = "FalseFilter"

    def reject(self, pod: Pod, node: Node) -> str | None:
        return ERR_REASON_FAKE


class MatchFilter(StaticFilter):
    """Passes the node whose name is the pod's."""

    name = "MatchFilter"

    def reject(self, pod: Pod, node: Node) -> str | None:
        return None if pod.name == node.name else ERR_REASON_FAKE

    def reads(self, pod: Pod) -> tuple[object, ...]:
        return (pod.name,)


class FakeFilter(StaticFilter):
    """``tf.FakeFilterPlugin``: rejects the nodes of its map (the code is not kept, see above)."""

    name = "FakeFilter"

    def __init__(self, failing: Sequence[str] = ()) -> None:
        self.failing_nodes = frozenset(failing)

    def reject(self, pod: Pod, node: Node) -> str | None:
        return f"injecting failure for pod {pod.name}" if node.name in self.failing_nodes else None

    def reads(self, pod: Pod) -> tuple[object, ...]:
        return (pod.name, self.failing_nodes)


class FakeFilter1(FakeFilter):
    name = "FakeFilter1"


class NoPodsFilter(DynamicFilter):
    """Passes the nodes no pod runs on."""

    name = "NoPodsFilter"

    def _empty(self, state: ClusterState) -> set[int]:
        used = {a.node for a in state.assignments.values()}
        return {i for i in range(state.size) if i not in used}

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        empty = self._empty(ctx.state)
        return np.array([int(i) in empty for i in idx], dtype=bool)

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        return node in self._empty(ctx.state)

    def reason_masks(self, ctx: PodContext, idx: IntArray) -> list[tuple[str, BoolArray]]:
        return [(ERR_REASON_FAKE, ~self.passes(ctx, idx))]


class SkippedFilter(DynamicFilter):
    """FakeFilter2 of "test prefilter plugin returning skip": its PreFilter returns Skip, so its Filter
    (which would fail every node with an Error) must not run."""

    name = "FakeFilter2"

    def skips(self, pod: Pod) -> bool:
        return True

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        raise AssertionError("the Filter of a plugin whose PreFilter returned Skip ran")

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        raise AssertionError("the Filter of a plugin whose PreFilter returned Skip ran")


class FakePreFilter(PreFilter):
    """``tf.FakePreFilterPlugin`` returning a status."""

    name = "FakePreFilter"

    def __init__(self, status: Status = SUCCESS) -> None:
        self.status = status

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        return self.status


def node_names_prefilter(plugin: str, names: set[str] | None) -> NodesPreFilter:
    """``tf.FakePreFilterPlugin`` named ``plugin`` returning ``PreFilterResult{NodeNames: names}`` (None: all
    nodes)."""

    class Narrowing(NodesPreFilter):
        name = plugin

        def nodes(self, pod: Pod) -> set[str] | None:
            return None if names is None else set(names)

        def reads(self, pod: Pod) -> tuple[object, ...]:
            return (plugin, None if names is None else tuple(sorted(names)))

    return Narrowing()


class NumericMap(StaticScore):
    """The node's name as a number; no NormalizeScore."""

    name = "NumericMap"

    def raw(self, pod: Pod, node: Node) -> int:
        return int(node.name)


class ReverseNumericMap(NumericMap):
    """The node's name as a number, normalised reversed onto [min, max] (upstream's NormalizeScore)."""

    name = "ReverseNumericMap"

    def normalize(self, raw: IntArray) -> IntArray:
        top, bottom = int(raw.max()), int(raw.min())
        return (top + bottom - raw).astype(np.int64)


class EqualPrioritizer(StaticScore):
    name = "EqualPrioritizerPlugin"

    def raw(self, pod: Pod, node: Node) -> int:
        return 1


class Node2Prioritizer(StaticScore):
    """``tf.Node2PrioritizerPlugin``: 100 for node2, 10 for the others."""

    name = "Node2Prioritizer"

    def raw(self, pod: Pod, node: Node) -> int:
        return 100 if node.name == "node2" else 10


class SkippedScore(StaticScore):
    """``tf.FakePreScoreAndScorePlugin`` whose PreScore returns Skip (its Score would fail)."""

    name = "FakePreScoreAndScorePlugin"

    def applies(self, pod: Pod) -> bool:
        return False

    def raw(self, pod: Pod, node: Node) -> int:
        raise AssertionError("the Score of a plugin whose PreScore returned Skip ran")


# -- harness ------------------------------------------------------------------------------------
def fake_profile(*plugins: object, weights: Mapping[str, int] | None = None) -> Profile:
    """A profile of PrioritySort and these plugins, in order at each of their extension points."""
    profile = Profile(NAME, PrioritySort())
    for plugin in plugins:
        if isinstance(plugin, NodesPreFilter):
            profile.node_prefilters.append(plugin)
        elif isinstance(plugin, PreFilter):
            profile.pre_filters.append(plugin)
        elif isinstance(plugin, StaticFilter | DynamicFilter):
            profile.filters.append(plugin)
        elif isinstance(plugin, StaticScore):
            profile.static_scores.append((plugin, (weights or {}).get(plugin.name, 1)))
        else:
            raise TypeError(plugin)
    return profile


def in_tree_profile(*points: tuple[str, tuple[PluginRef, ...]]) -> Profile:
    """A profile of PrioritySort and these in-tree plugins at these extension points only (upstream's
    ``tf.RegisterPluginAsExtensions`` / ``RegisterScorePlugin``)."""
    plugins = {"multiPoint": PluginSet((PluginRef("PrioritySort"),), ("*",))}
    plugins.update({point: PluginSet(refs) for point, refs in points})
    return build_profile(ProfileConfig(NAME, plugins))


def scheduler_with(
    profile: Profile,
    nodes: Sequence[Node],
    existing: Mapping[str, Sequence[Pod]] | None = None,
    percentage: int | None = None,
    seed: int = 0,
) -> Scheduler:
    state = cluster(nodes, existing)
    sched = Scheduler(SchedulerConfig("conformance", [ProfileConfig()]), state, GangView(state), seed)
    profile.percentage_of_nodes_to_score = percentage
    sched.profiles[NAME] = profile
    return sched


def plain_nodes(*names: str) -> list[Node]:
    """``makeNodeList`` / the table's ``{Name, Labels{hostname}}`` nodes: no capacity at all."""
    return [Node(name, labels={"kubernetes.io/hostname": name}) for name in names]


def upstream_message(
    num_nodes: int, statuses: Mapping[str, Sequence[str]], absent: Sequence[str] = ()
) -> str:
    """``FitError.Error`` of a Diagnosis: each explicit node's reasons counted, plus the absent nodes'
    status reasons once per node not in ``statuses``."""
    reasons: Counter[str] = Counter(r for node_reasons in statuses.values() for r in node_reasons)
    for reason in absent:
        reasons[reason] += num_nodes - len(statuses)
    return fit_error(num_nodes, reasons)


# -- TestNumFeasibleNodesToFind -------------------------------------------------------------------
# (name, global percentage, profile percentage, nodes, want)
NUM_FEASIBLE: list[Any] = [
    ("not set percentageOfNodesToScore and nodes number not more than 50", None, None, 10, 10),
    ("set profile percentageOfNodesToScore and nodes number not more than 50", None, 40, 10, 10),
    ("not set percentageOfNodesToScore and nodes number more than 50", None, None, 1000, 420),
    ("set profile percentageOfNodesToScore and nodes number more than 50", None, 40, 1000, 400),
    ("set global and profile percentageOfNodesToScore and nodes number more than 50", 100, 40, 1000, 400),
    ("set global percentageOfNodesToScore and nodes number more than 50", 40, None, 1000, 400),
    ("not set profile percentageOfNodesToScore and nodes number more than 50*125", None, None, 6000, 300),
    ("set profile percentageOfNodesToScore and nodes number more than 50*125", None, 40, 6000, 2400),
]


@pytest.mark.parametrize(
    ("global_pct", "profile_pct", "num_nodes", "want"), cases("TestNumFeasibleNodesToFind", NUM_FEASIBLE, 4)
)
def test_num_feasible_nodes_to_find(
    global_pct: int | None, profile_pct: int | None, num_nodes: int, want: int
) -> None:
    """The profile's percentage wins over the process's (``build_profile``), then
    ``numFeasibleNodesToFind``."""
    config = SchedulerConfig("s", [ProfileConfig(NAME, percentage_of_nodes_to_score=profile_pct)], global_pct)
    state = cluster([])
    pct = Scheduler(config, state, GangView(state)).profiles[NAME].percentage_of_nodes_to_score
    assert num_feasible_nodes_to_find(pct, num_nodes) == want


# -- TestFairEvaluationForNodes -------------------------------------------------------------------
def test_fair_evaluation_for_nodes() -> None:
    """500 nodes, percentage 30 (150 nodes a cycle, 500 % 150 != 0): each cycle finds 150 feasible
    nodes and the next one starts where it stopped (``nextStartNodeIndex``), round the end, more than
    twice round the node list."""
    num_nodes = 500
    sched = scheduler_with(fake_profile(TrueFilter(), EqualPrioritizer()), plain_nodes(*map(str, range(500))))
    profile = sched.profiles[NAME]
    profile.percentage_of_nodes_to_score = 30
    to_find = num_feasible_nodes_to_find(30, num_nodes)
    assert to_find == 150
    pod = make_pod()
    for i in range(2 * (num_nodes // to_find + 1)):
        found = sched._best_nodes(profile, pod.shape(), PodContext(pod, sched.state))
        assert not hasattr(found, "message")
        assert len(found) == to_find  # every one scores the same: all of them are the best
        assert sched.next_start[NAME] == (i + 1) * to_find % num_nodes


# -- TestPreferNominatedNodeFilterCallCounts --------------------------------------------------------
# (name, nominated node, nodes the filter rejects, nodes the pod may get)
PREFER_NOMINATED: list[Any] = [
    ("pod has the nominated node set, filter is called only once", "node1", (), {"node1"}),
    ("pod without the nominated pod, filter is called for each node", None, (), {"node1", "node2", "node3"}),
    (
        "nominated pod cannot pass the filter, filter is called for each node",
        "node1",
        ("node1",),
        {"node2", "node3"},
    ),
]


@pytest.mark.parametrize(
    ("nominated", "failing", "want"), cases("TestPreferNominatedNodeFilterCallCounts", PREFER_NOMINATED, 3)
)
def test_prefer_nominated_node_filter_call_counts(
    nominated: str | None, failing: tuple[str, ...], want: set[str]
) -> None:
    """``evaluateNominatedNode``: the nominated node is tried first and, when it passes, is the pod's node
    without the others being looked at; else every node is. gpufleet filters from cached verdicts, so the
    Filter call count is not observable; what it implies is: the nominated node wins over equally good
    nodes when it passes, and is not chosen when it fails."""
    sched = scheduler_with(
        fake_profile(FakeFilter(failing), EqualPrioritizer()), plain_nodes("node1", "node2", "node3")
    )
    pod = Pod("p_with_nominated_node" if nominated else "p_without_nominated_node", priority=1000)
    if nominated is not None:
        sched.nominated[pod.key], sched.nominees[pod.key] = nominated, pod
    assert set(sched.decide(pod).nodes) == want


# -- TestFindFitAllError / TestFindFitSomeError ---------------------------------------------------
def test_find_fit_all_error() -> None:
    """An empty pod (no name) on nodes 3, 2, 1 with TrueFilter then MatchFilter: every node fails
    MatchFilter."""
    sched = scheduler_with(fake_profile(TrueFilter(), MatchFilter()), plain_nodes("3", "2", "1"))
    decision = sched.decide(Pod(""))
    statuses = {n: [ERR_REASON_FAKE] for n in ("1", "2", "3")}
    assert decision.message == upstream_message(3, statuses)
    assert sched.rejectors == {"MatchFilter"}


def test_find_fit_some_error() -> None:
    """Pod "1": node 1 passes, nodes 3 and 2 fail MatchFilter with the fake reason."""
    sched = scheduler_with(fake_profile(TrueFilter(), MatchFilter()), plain_nodes("3", "2", "1"))
    pod = Pod("1")
    assert sched.decide(pod).nodes == ("1",)
    cache = sched._cache(sched.profiles[NAME], pod.shape(), PodContext(pod, sched.state))
    reasons = {sched.state.nodes[i].name: cache.static_reason[i] for i in range(3)}
    assert reasons == {"3": ERR_REASON_FAKE, "2": ERR_REASON_FAKE, "1": None}
    failed = [
        p for reason in cache.static_histogram() for p in cache.static_plugins[reason]
    ]  # the plugins behind the failed nodes' statuses
    assert set(failed) == {"MatchFilter"}


# -- TestZeroRequest ------------------------------------------------------------------------------
def upstream_node(name: str) -> Node:
    """``makeNode(name, 1000 milli-CPU, 10 * DefaultMemoryRequest)``: 100 pods."""
    return make_node(name, {"cpu": "1000m", "memory": str(DEFAULT_MEMORY_REQUEST * 10), "pods": "100"})


def zero_request_nodes() -> list[Node]:
    return [upstream_node("node1"), upstream_node("node2")]


def no_resources(name: str = "p") -> Pod:
    return make_pod([container()], name=name)


def small(name: str = "p") -> Pod:
    requests = {"cpu": f"{DEFAULT_MILLI_CPU_REQUEST}m", "memory": str(DEFAULT_MEMORY_REQUEST)}
    return make_pod([container(requests)], name=name)


def large(name: str = "p") -> Pod:
    requests = {"cpu": f"{DEFAULT_MILLI_CPU_REQUEST * 3}m", "memory": str(DEFAULT_MEMORY_REQUEST * 3)}
    return make_pod([container(requests)], name=name)


ZERO_REQUEST: list[Any] = [
    ("test priority of zero-request pod with node with zero-request pod", no_resources(), 50),
    ("test priority of nonzero-request pod with node with zero-request pod", small(), 150),
    ("test priority of larger pod with node with zero-request pod", large(), 130),
]


def total_scores(sched: Scheduler, pod: Pod) -> dict[str, int]:
    """``prioritizeNodes``' TotalScore of every feasible node (gpufleet's cached totals)."""
    profile = sched.profiles[NAME]
    cache = sched._cache(profile, pod.shape(), PodContext(pod, sched.state))
    idx = cache.feasible_nodes()
    return {sched.state.nodes[int(i)].name: int(s) for i, s in zip(idx, cache.total_scores(idx), strict=True)}


@pytest.mark.parametrize(("pod", "want"), cases("TestZeroRequest", ZERO_REQUEST, 2))
def test_zero_request(pod: Pod, want: int) -> None:
    """NodeResourcesFit (LeastAllocated) and BalancedAllocation score a pod without requests as if it
    requested the non-zero defaults, on nodes holding such pods too."""
    profile = in_tree_profile(
        ("score", (PluginRef("NodeResourcesFit", 1), PluginRef("NodeResourcesBalancedAllocation", 1)))
    )
    existing = {"node1": [large(), no_resources()], "node2": [large(), small()]}
    sched = scheduler_with(profile, zero_request_nodes(), existing)
    assert total_scores(sched, pod) == {"node1": want, "node2": want}


# -- Test_prioritizeNodes -------------------------------------------------------------------------
IMAGES_1: dict[tuple[str, ...], int] = {
    ("gcr.io/40:latest", "gcr.io/40:v1"): 80 * MB,
    ("gcr.io/300:latest", "gcr.io/300:v1"): 300 * MB,
}
IMAGES_2: dict[tuple[str, ...], int] = {
    ("gcr.io/300:latest",): 300 * MB,
    ("gcr.io/40:latest", "gcr.io/40:v1"): 80 * MB,
}
IMAGES_3: dict[tuple[str, ...], int] = {
    ("gcr.io/600:latest",): 600 * MB,
    ("gcr.io/40:latest",): 80 * MB,
    ("gcr.io/900:latest",): 900 * MB,
}


def image_nodes() -> list[Node]:
    nodes = [upstream_node(name) for name in ("node1", "node2", "node3")]
    for node, images in zip(nodes, (IMAGES_1, IMAGES_2, IMAGES_3), strict=True):
        node.images.update({normalized_image_name(n): size for names, size in images.items() for n in names})
    return nodes


def image_pod(image: str) -> Pod:
    return make_pod([container(image=image)])


BALANCED = ("score", (PluginRef("NodeResourcesBalancedAllocation", 1),))
IMAGE_LOCALITY = ("score", (PluginRef("ImageLocality", 1),))
# (name, in-tree score plugins, fake score plugins, pod, nodes, each node's scores by plugin)
PRIORITIZE: list[Any] = [
    (
        "the score from all plugins should be recorded in PluginToNodeScores",
        BALANCED,
        (Node2Prioritizer(),),
        make_pod(),
        zero_request_nodes,
        {
            "node1": {"Node2Prioritizer": 10, "NodeResourcesBalancedAllocation": 0},
            "node2": {"Node2Prioritizer": 100, "NodeResourcesBalancedAllocation": 0},
        },
    ),
    (
        "the score from extender should also be recorded in PluginToNodeScores with plugin scores",
        Skip(NO_EXTENDERS),
    ),
    (
        "plugin which returned skip in preScore shouldn't be executed in the score phase",
        BALANCED,
        (Node2Prioritizer(), SkippedScore()),
        make_pod(),
        zero_request_nodes,
        {
            "node1": {"Node2Prioritizer": 10, "NodeResourcesBalancedAllocation": 0},
            "node2": {"Node2Prioritizer": 100, "NodeResourcesBalancedAllocation": 0},
        },
    ),
    (
        "all score plugins are skipped",
        None,
        (SkippedScore(),),
        make_pod(),
        zero_request_nodes,
        {"node1": {}, "node2": {}},
    ),
    (
        "the score from Image Locality plugin with image in all nodes",
        IMAGE_LOCALITY,
        (),
        image_pod("gcr.io/40"),
        image_nodes,
        {"node1": {"ImageLocality": 5}, "node2": {"ImageLocality": 5}, "node3": {"ImageLocality": 5}},
    ),
    (
        "the score from Image Locality plugin with image in partial nodes",
        IMAGE_LOCALITY,
        (),
        image_pod("gcr.io/300"),
        image_nodes,
        {"node1": {"ImageLocality": 18}, "node2": {"ImageLocality": 18}, "node3": {"ImageLocality": 0}},
    ),
]


@pytest.mark.parametrize(
    ("in_tree", "fakes", "pod", "nodes", "want"), cases("Test_prioritizeNodes", PRIORITIZE, 5)
)
def test_prioritize_nodes(
    in_tree: tuple[str, tuple[PluginRef, ...]] | None,
    fakes: tuple[StaticScore, ...],
    pod: Pod,
    nodes: Any,
    want: dict[str, dict[str, int]],
) -> None:
    """Each plugin's score of each node (a plugin whose PreScore Skips gives none) and their sum."""
    profile = in_tree_profile(in_tree) if in_tree else fake_profile()
    profile.static_scores += [(f, 1) for f in fakes]
    sched = scheduler_with(profile, nodes())
    state = sched.state
    ctx = PodContext(pod, state)
    idx = np.arange(state.size, dtype=np.int64)
    got: dict[str, dict[str, int]] = {n.name: {} for n in state.nodes}
    for plugin, _ in profile.dynamic_scores:
        for node, score in zip(state.nodes, plugin.score(ctx, idx), strict=True):
            got[node.name][plugin.name] = int(score)
    for static, _ in profile.static_scores:
        if static.applies(pod):
            raw = np.array(static.raw_column(pod, state, idx.tolist()), dtype=np.int64)
            for node, score in zip(state.nodes, static.normalize(raw), strict=True):
                got[node.name][static.name] = int(score)
    assert got == want
    assert total_scores(sched, pod) == {node: sum(scores.values()) for node, scores in want.items()}


# -- Test_SelectHost ------------------------------------------------------------------------------
class TableScore(StaticScore):
    """Test_SelectHost's list: each node's TotalScore, as given."""

    name = "TableScore"

    def __init__(self, scores: Mapping[str, int]) -> None:
        self.scores = dict(scores)

    def raw(self, pod: Pod, node: Node) -> int:
        return self.scores[node.name]


# (name, each node's total score, the nodes it may choose)
SELECT_HOST: list[Any] = [
    ("unique properly ordered scores", {"node1": 1, "node2": 2}, {"node2"}),
    ("numberOfNodeScoresToReturn > len(list)", {"node1": 1, "node2": 2}, {"node2"}),
    ("equal scores", {"node2.1": 2, "node2.2": 2, "node2.3": 2}, {"node2.1", "node2.2", "node2.3"}),
    ("out of order scores", {"node3.1": 3, "node2.1": 2, "node1.1": 1, "node3.2": 3}, {"node3.1", "node3.2"}),
    (
        "empty priority list",
        Skip(
            "selectHost of an empty list (errEmptyPriorityList): schedulePod never scores an empty list (no "
            "feasible node is a FitError first), and gpufleet has no selectHost apart from the node choice"
        ),
    ),
]


@pytest.mark.parametrize(("scores", "possible"), cases("Test_SelectHost", SELECT_HOST, 2))
def test_select_host(scores: dict[str, int], possible: set[str]) -> None:
    """``selectHost``: one of the top-scoring nodes, drawn at random (the set is compared, and ten seeded
    draws each land in it). The list of the top ``count`` node scores it also returns is only reported
    (``numberOfHighestScoredNodesToReport``) and has no gpufleet counterpart; an empty list, upstream's
    ``errEmptyPriorityList``, is a cluster with no node (``no nodes available to schedule pods``)."""
    sched = scheduler_with(fake_profile(TableScore(scores)), plain_nodes(*scores))
    pod = Pod("p")
    decision = sched.decide(pod)
    assert set(decision.nodes) == possible
    if not possible:
        assert decision.message == "no nodes available to schedule pods"
        return
    for seed in range(10):
        sched = scheduler_with(fake_profile(TableScore(scores)), plain_nodes(*scores), seed=seed)
        node, _ = sched.try_schedule(pod)
        assert node in possible


# -- TestSchedulerFailedSchedulingReasons ---------------------------------------------------------
@pytest.mark.parametrize("async_api_calls", [True, False], ids=lambda on: f"Async API calls enabled: {on}")
def test_scheduler_failed_scheduling_reasons(async_api_calls: bool) -> None:
    """100 nodes with half the pod's cpu and a fifth of its memory, NodeResourcesFit alone: one short
    message (under 150 characters), every node Insufficient cpu and memory, NodeResourcesFit the one
    rejecting plugin. (Both of upstream's runs, with and without async API calls, are the same here.)"""
    capacity = {"cpu": "2", "memory": "100", "pods": "10"}
    nodes = [make_node(f"node{i}", capacity) for i in range(100)]
    fit = ("preFilter", (PluginRef("NodeResourcesFit"),)), ("filter", (PluginRef("NodeResourcesFit"),))
    sched = scheduler_with(in_tree_profile(*fit), nodes)
    pod = make_pod([container({"cpu": "4", "memory": "500"})], name="bar")
    message = sched.decide(pod).message
    statuses = {n.name: ["Insufficient cpu", "Insufficient memory"] for n in nodes}
    assert message == upstream_message(100, statuses)
    assert message == "0/100 nodes are available: 100 Insufficient cpu, 100 Insufficient memory."
    assert len(message) <= 150
    assert sched.rejectors == {"NodeResourcesFit"}


# -- TestSchedulerSchedulePod ---------------------------------------------------------------------
@dataclass(frozen=True)
class Fit:
    """An expected FitError: each explicit node's reasons, the absent nodes' status reasons, the PreFilter
    message and the UnschedulablePlugins."""

    plugins: frozenset[str]
    statuses: Mapping[str, Sequence[str]] = field(default_factory=dict)
    absent: tuple[str, ...] = ()
    pre_filter_msg: str = ""


def spread_pod(max_skew: int) -> Pod:
    """``st.MakePod().Name("p").Label("foo", "").SpreadConstraint(maxSkew, hostname, DoNotSchedule,
    foo Exists)``."""
    selector = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    constraint = {
        "maxSkew": max_skew,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": selector,
    }
    return make_pod(
        [container()], name="p", labels={"foo": ""}, spec={"topologySpreadConstraints": [constraint]}
    )


def labelled(name: str) -> Pod:
    """A running pod labelled ``foo: ""`` (placed by the table)."""
    return Pod(name, labels={"foo": ""})


SPREAD = (("preFilter", (PluginRef("PodTopologySpread"),)), ("filter", (PluginRef("PodTopologySpread"),)))


def spread_profile(*scores: StaticScore) -> Profile:
    profile = in_tree_profile(*SPREAD)
    profile.static_scores += [(s, 1) for s in scores]
    return profile


# (name, profile, node names, existing pods by node, pod, nodes it may get (None: not checked), FitError)
SCHEDULE_POD: list[Any] = [
    (
        "test 1",
        lambda: fake_profile(FalseFilter()),
        ("node1", "node2"),
        {},
        Pod("2"),
        None,
        Fit(frozenset({"FalseFilter"}), {"node1": [ERR_REASON_FAKE], "node2": [ERR_REASON_FAKE]}),
    ),
    (
        "test 2",
        lambda: fake_profile(TrueFilter(), EqualPrioritizer()),
        ("node1", "node2"),
        {},
        Pod("ignore"),
        {"node1", "node2"},
        None,
    ),
    ("test 3", lambda: fake_profile(MatchFilter()), ("node1", "node2"), {}, Pod("node2"), {"node2"}, None),
    (
        "test 4",
        lambda: fake_profile(TrueFilter(), NumericMap()),
        ("3", "2", "1"),
        {},
        Pod("ignore"),
        {"3"},
        None,
    ),
    ("test 5", lambda: fake_profile(MatchFilter(), NumericMap()), ("3", "2", "1"), {}, Pod("2"), {"2"}, None),
    (
        "test 6",
        lambda: fake_profile(
            TrueFilter(), NumericMap(), ReverseNumericMap(), weights={"ReverseNumericMap": 2}
        ),
        ("3", "2", "1"),
        {},
        Pod("2"),
        {"1"},
        None,
    ),
    (
        "test 7",
        lambda: fake_profile(TrueFilter(), FalseFilter(), NumericMap()),
        ("3", "2", "1"),
        {},
        Pod("2"),
        None,
        Fit(frozenset({"FalseFilter"}), {n: [ERR_REASON_FAKE] for n in ("3", "2", "1")}),
    ),
    (
        "test 8",
        lambda: fake_profile(NoPodsFilter(), MatchFilter(), NumericMap()),
        ("1", "2"),
        {"2": [Pod("2")]},
        Pod("2"),
        None,
        Fit(frozenset({"MatchFilter", "NoPodsFilter"}), {"1": [ERR_REASON_FAKE], "2": [ERR_REASON_FAKE]}),
    ),
    ("existing PVC", Skip(NO_VOLUMES)),
    ("unknown PVC", Skip(NO_VOLUMES)),
    ("deleted PVC", Skip(NO_VOLUMES)),
    ("test error with priority map", Skip(NO_PLUGIN_ERRORS)),
    (
        "test podtopologyspread plugin - 2 nodes with maxskew=1",
        spread_profile,
        ("node1", "node2"),
        {"node1": [labelled("pod1")]},
        spread_pod(1),
        {"node2"},
        None,
    ),
    (
        "test podtopologyspread plugin - 3 nodes with maxskew=2",
        lambda: spread_profile(EqualPrioritizer()),
        ("node1", "node2", "node3"),
        {"node1": [labelled("pod1a"), labelled("pod1b")], "node2": [labelled("pod2")]},
        spread_pod(2),
        {"node2", "node3"},
        None,
    ),
    (
        "test with filter plugin returning Unschedulable status",
        lambda: fake_profile(FakeFilter(["3"]), NumericMap()),
        ("3",),
        {},
        Pod("test-filter"),
        None,
        Fit(frozenset({"FakeFilter"}), {"3": ["injecting failure for pod test-filter"]}),
    ),
    ("test with extender which filters out some Nodes", Skip(NO_EXTENDERS)),
    (
        "test with filter plugin returning UnschedulableAndUnresolvable status",
        lambda: fake_profile(FakeFilter(["3"]), NumericMap()),
        ("3",),
        {},
        Pod("test-filter"),
        None,
        Fit(frozenset({"FakeFilter"}), {"3": ["injecting failure for pod test-filter"]}),
    ),
    (
        "test with partial failed filter plugin",
        lambda: fake_profile(FakeFilter(["1"]), NumericMap()),
        ("1", "2"),
        {},
        Pod("test-filter"),
        {"2"},  # upstream checks no host here (wantNodes nil): node 2 is the only feasible node
        None,
    ),
    (
        "test prefilter plugin returning Unschedulable status",
        lambda: fake_profile(
            FakePreFilter(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("injected unschedulable status",)))
        ),
        ("1", "2"),
        {},
        Pod("test-prefilter"),
        None,
        Fit(
            frozenset({"FakePreFilter"}),
            absent=("injected unschedulable status",),
            pre_filter_msg="injected unschedulable status",
        ),
    ),
    (
        "test prefilter plugin returning node",
        lambda: fake_profile(
            node_names_prefilter("FakePreFilter1", None),
            node_names_prefilter("FakePreFilter2", {"node2"}),
            node_names_prefilter("FakePreFilter3", {"node1", "node2"}),
        ),
        ("node1", "node2", "node3"),
        {},
        Pod("test-prefilter"),
        {"node2"},
        None,
    ),
    (
        "test prefilter plugin returning non-intersecting nodes",
        lambda: fake_profile(
            node_names_prefilter("FakePreFilter1", None),
            node_names_prefilter("FakePreFilter2", {"node2"}),
            node_names_prefilter("FakePreFilter3", {"node1"}),
        ),
        ("node1", "node2", "node3"),
        {},
        Pod("test-prefilter"),
        None,
        Fit(
            frozenset({"FakePreFilter2", "FakePreFilter3"}),
            absent=("node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",),
            pre_filter_msg="node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",
        ),
    ),
    (
        "test prefilter plugin returning empty node set",
        lambda: fake_profile(
            node_names_prefilter("FakePreFilter1", None), node_names_prefilter("FakePreFilter2", set())
        ),
        ("node1",),
        {},
        Pod("test-prefilter"),
        None,
        Fit(
            frozenset({"FakePreFilter2"}),
            absent=("node(s) didn't satisfy plugin FakePreFilter2",),
            pre_filter_msg="node(s) didn't satisfy plugin FakePreFilter2",
        ),
    ),
    (
        "test some nodes are filtered out by prefilter plugin and other are filtered out by filter plugin",
        lambda: fake_profile(node_names_prefilter("FakePreFilter", {"node2"}), FakeFilter(["node2"])),
        ("node1", "node2"),
        {},
        Pod("test-prefilter"),
        None,
        Fit(
            frozenset({"FakePreFilter", "FakeFilter"}),
            {"node2": ["injecting failure for pod test-prefilter"]},
            absent=("node(s) didn't satisfy plugin(s) [FakePreFilter]",),
        ),
    ),
    (
        "test prefilter plugin returning skip",
        lambda: fake_profile(
            node_names_prefilter("FakeFilter1", None),
            FakeFilter1(["node1"]),
            SkippedFilter(),
            EqualPrioritizer(),
        ),
        ("node1", "node2", "node3"),
        {},
        Pod("test-prefilter"),
        {"node2", "node3"},
        None,
    ),
    (
        "test all prescore plugins return skip",
        lambda: fake_profile(TrueFilter(), SkippedScore()),
        ("node1", "node2"),
        {},
        Pod("ignore"),
        {"node1", "node2"},
        None,
    ),
    (
        "test without score plugin no extra nodes are evaluated",
        lambda: fake_profile(TrueFilter()),
        ("node1", "node2", "node3"),
        {},
        Pod("pod1"),
        {"node1", "node2", "node3"},
        None,
    ),
    (
        "test no score plugin, prefilter plugin returning 2 nodes",
        lambda: fake_profile(node_names_prefilter("FakePreFilter", {"node1", "node2"})),
        ("node1", "node2", "node3"),
        {},
        Pod("test-prefilter"),
        {"node1", "node2"},
        None,
    ),
    (
        "test prefilter plugin returned an invalid node",
        lambda: fake_profile(node_names_prefilter("FakePreFilter", {"invalid-node"}), TrueFilter()),
        ("1", "2"),
        {},
        Pod("test-prefilter"),
        None,
        Fit(frozenset({"FakePreFilter"}), absent=("node(s) didn't satisfy plugin(s) [FakePreFilter]",)),
    ),
    ("hostname and nodename of the node do not match", Skip(NO_VOLUMES)),
]


@pytest.mark.parametrize(
    ("profile", "node_names", "existing", "pod", "want_nodes", "want_fit"),
    cases("TestSchedulerSchedulePod", SCHEDULE_POD, 6),
)
def test_scheduler_schedule_pod(
    profile: Any,
    node_names: tuple[str, ...],
    existing: dict[str, list[Pod]],
    pod: Pod,
    want_nodes: set[str] | None,
    want_fit: Fit | None,
) -> None:
    """``schedulePod``: the nodes the pod may get (all of them a subset of upstream's ``wantNodes``), or the
    FitError's message and UnschedulablePlugins. (``EvaluatedNodes`` is not counted by gpufleet.)"""
    sched = scheduler_with(profile(), plain_nodes(*node_names), existing)
    decision = sched.decide(pod)
    if want_fit is None:
        assert decision.message == ""
        if want_nodes is not None:
            assert set(decision.nodes) == want_nodes
        return
    assert decision.nodes == ()
    want = upstream_message(len(node_names), want_fit.statuses, want_fit.absent)
    if want_fit.pre_filter_msg:  # FitError.Error: the PreFilter message alone
        want = fit_error(len(node_names), Counter(), want_fit.pre_filter_msg)
    assert decision.message == want
    assert sched.rejectors == want_fit.plugins


def test_scheduler_schedule_pod_test_prefilter_plugin_returning_error_status() -> None:
    """TestSchedulerSchedulePod/test prefilter plugin returning error status (out of the table: not a
    FitError): ``schedulePod`` returns the error, ``running PreFilter plugin "FakePreFilter": injected
    error status``, and no plugin is recorded as a rejector."""
    profile = fake_profile(FakePreFilter(Status(Code.ERROR, ("injected error status",))))
    sched = scheduler_with(profile, plain_nodes("1", "2"), {})
    decision = sched.decide(Pod("test-prefilter"))
    assert decision.nodes == ()
    assert decision.message == 'running PreFilter plugin "FakePreFilter": injected error status'
    assert sched.rejectors == set()


# -- TestSchedulerMultipleProfilesScheduling --------------------------------------------------------
class FakeNodeSelector(StaticFilter):
    """``newFakeNodeSelector``: passes only the node its args name."""

    name = "FakeNodeSelector"

    def __init__(self, node_name: str) -> None:
        self.node_name = node_name

    def reject(self, pod: Pod, node: Node) -> str | None:
        return None if node.name == self.node_name else "node didn't match"

    def reads(self, pod: Pod) -> tuple[object, ...]:
        return (self.node_name,)


def test_scheduler_multiple_profiles_scheduling() -> None:
    """Two profiles of one scheduler, each with FakeNodeSelector for its own node: every pod is scheduled
    by the profile its ``schedulerName`` names. (Upstream also checks the Scheduled event's reporting
    controller, the profile name: gpufleet's outcomes carry no events.)"""
    names = ("match-node2", "match-node3")
    state = cluster(plain_nodes("node1", "node2", "node3"))
    sched = Scheduler(
        SchedulerConfig("conformance", [ProfileConfig(n) for n in names]), state, GangView(state)
    )
    for name in names:
        profile = fake_profile(FakeNodeSelector(name.removeprefix("match-")))
        profile.scheduler_name = name
        sched.profiles[name] = profile
    pods = {"pod1": "match-node3", "pod2": "match-node2", "pod3": "match-node2", "pod4": "match-node3"}
    for pod_name, scheduler_name in pods.items():
        assert sched.add(Pod(pod_name, scheduler_name=scheduler_name), 0.0) is None
    bindings = {o.pod.name: o.node for o in sched.run(0.0) if o.kind == "bound"}
    assert bindings == {"pod1": "node3", "pod2": "node2", "pod3": "node2", "pod4": "node3"}


# -- TestSchedulerNoPhantomPodAfterDelete -----------------------------------------------------------
def port_pod(name: str, port: int) -> Pod:
    """``podWithPort``: one container with a host port (no requests)."""
    return make_pod([{"name": "ctr", "ports": [{"containerPort": port, "hostPort": port}]}], name=name)


@pytest.mark.parametrize("async_api_calls", [True, False], ids=lambda on: f"Async API calls enabled: {on}")
def test_scheduler_no_phantom_pod_after_delete(async_api_calls: bool) -> None:
    """NodePorts alone: a second pod asking for the first one's host port does not fit (the node's ports
    message, NodePorts rejecting); once the first pod is deleted, the second is scheduled there. (Both of
    upstream's runs, with and without async API calls, are the same here.)"""
    ports = ("preFilter", (PluginRef("NodePorts"),)), ("filter", (PluginRef("NodePorts"),))
    sched = scheduler_with(in_tree_profile(*ports), plain_nodes("node1"))
    first, second = port_pod("pod.Name", 8080), port_pod("bar", 8080)
    assert sched.place_once(first, 0.0) == "node1"
    node, message = sched.try_schedule(second)
    assert node is None
    assert message == upstream_message(
        1, {"node1": ["node(s) didn't have free ports for the requested pod ports"]}
    )
    assert sched.rejectors == {"NodePorts"}
    sched.state.unassign(first.key)
    assert sched.try_schedule(second) == ("node1", "")


# -- the rest of the file: what gpufleet has no counterpart for ---------------------------------------
NO_API = (
    "the API client's side of a scheduling cycle (binding requests, status patches, events, the async "
    "API dispatcher, informer state) has no gpufleet counterpart: binding is a state change"
)
NO_ERROR_PATHS = (
    "fake Reserve/Permit/PreBindPreFlight/PreBind/Bind plugins returning Error or Unschedulable, and "
    "the failure handler's bookkeeping (cache forget, nominated node kept or cleared): gpufleet cannot "
    "register such plugins (its Reserve is the state's assignment, its Permit Coscheduling's gang wait)"
)
NO_FILTER_CALLS = (
    "counts Filter calls made with and without the nominated pods added (RunFilterPluginsWithNominatedPods "
    "runs the filters twice when a nominated pod of higher priority is added); gpufleet holds the nominated "
    "pods on their node in one pass and filters from cached verdicts (the holding itself is checked in "
    "tests/scheduling/test_preemption_nominated_node.py)"
)
NOT_MODELLED: list[tuple[str, str, str]] = [
    (
        "TestSchedulerGuaranteeNonNilNodeInSchedulingCycle",
        "",
        "nodes deleted by goroutines while pods schedule",
    ),
    *(
        ("TestSchedulerScheduleOne", case, NO_ERROR_PATHS)
        for case in (
            "schedule pod failed",
            "reserve failed with status code error",
            "reserve failed with status code rejected",
            "permit failed with status code error",
            "permit failed with status code rejected",
            "nominated node name is not set, permit plugin is working, but the feature gate "
            "NominatedNodeNameForExpectation is disabled",
            "nominated node name is set, permit plugin is working in wait on permit phase",
            "prebindpreflight failed with status code error",
            "prebindpreflight failed with status code unschedulable",
            "prebind isn't called and nominated node name isn't set, if preflight returns skip",
            "prebind is called and nominated node name is set, if preflight returns success",
            "prebind failed with status code error",
            "binding failed",
            "bind assumed pod scheduled",
            "deleting pod",
            "pod with existing nominated node name on scheduling error keeps nomination",
            "pod with existing nominated node name on scheduling error clears nomination",
        )
    ),
    ("TestHandleSchedulingFailureSkipsRecreatedPod", "", NO_API),
    *(
        ("TestFindFitPredicateCallCounts", case, NO_FILTER_CALLS)
        for case in (
            "nominated pods have lower priority, predicate is called once",
            "nominated pods have higher priority, predicate is called twice",
        )
    ),
    *(
        ("TestScheduleOneMarksPodAsProcessedBeforePreBind", case, NO_ERROR_PATHS)
        for case in (
            "error on permit",
            "pod rejected on permit",
            "error on wait on permit",
            "pod rejected while wait on permit",
            "error prebind pod",
            "bind assumed pod scheduled",
            "error pod failed scheduling",
            "error bind forget pod failed scheduling",
            "deleting pod",
        )
    ),
    (
        "TestSchedulerNoPhantomPodAfterExpire",
        "",
        "the scheduler cache's expiry of an assumed pod whose binding never finished: gpufleet binds in the "
        "cycle that assumes, so no assumed pod outlives its cycle",
    ),
    *(
        ("TestSchedulerWithVolumeBinding", case, NO_VOLUMES)
        for case in (
            "all bound",
            "bound/invalid pv affinity",
            "unbound/no matches",
            "bound and unbound unsatisfied",
            "unbound/found matches/bind succeeds",
            "predicate error",
            "assume error",
            "bind error",
        )
    ),
    *(
        ("TestSchedulerBinding", case, NO_EXTENDERS)
        for case in (
            "the extender is not a binder",
            "one of the extenders is a binder and interested in pod",
            "one of the extenders is a binder, but not interested in pod",
            "ignore when extender bind failed",
        )
    ),
    *(
        ("TestUpdatePod", case, NO_API)
        for case in (
            "Should make patch request to add pod condition when there are none currently",
            "Should make patch request to add a new pod condition when there is already one with another "
            "type",
            "Should make patch request to update an existing pod condition",
            "Should make patch request to update an existing pod condition, but the transition time should "
            "remain unchanged because the status is the same",
            "Should not make patch request if pod condition already exists and is identical and nominated "
            "node name is not set",
            "Should make patch request if pod condition already exists and is identical but nominated node "
            "name is set and different",
            "Should not update nominated node name when nominatingInfo is nil",
            "Should not make patch request when nominatingInfo is nil and pod condition is unchanged",
        )
    ),
    *(
        ("TestFindNodesThatPassExtenders", case, NO_EXTENDERS)
        for case in (
            "error",
            "success",
            "unschedulable",
            "unschedulable and unresolvable",
            "extender does not overwrite the previous statuses",
            "multiple extenders",
        )
    ),
]


@pytest.mark.parametrize(
    ("test", "reason"),
    [
        pytest.param(test, reason, id=f"{test}/{case}" if case else test)
        for test, case, reason in NOT_MODELLED
    ],
)
def test_not_modelled(test: str, reason: str) -> None:
    pytest.skip(f"{UPSTREAM} {test}: {reason}")
