"""The FGD paper's policies (``plugins.per_node_score``) score many nodes once per class of nodes alike,
and the shape cache shares its static filtering between shapes and re-filters only changed nodes: each
shortcut gives what judging every node on its own gives.

A class (``NodeClasses``, FGD's ``classes``) holds nodes whose score no pod can tell apart: the same GPUs
left (FGD: the same typical pods admitted, and cpu and memory on the same side of every typical pod's
need, before and after the pod). A fresh plugin scores each node alone, so no memo carries a class's
value to a node outside it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import gpu_node
from gpufleet.cluster.state import SHORT_LOG, BoolArray, ClusterState, IntArray, NodeRow
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.node import Toleration
from gpufleet.model.pod import Behavior, Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.scheduling.fragmentation import NodeLeft, tasks_of
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.fgd import FragmentationGradient, sigmoid_score
from gpufleet.scheduling.plugins.fgd_policies import BestFit, DotProd, GpuClustering, GpuPacking
from gpufleet.scheduling.plugins.fgd_supply import SupplyAwareFragmentationGradient
from gpufleet.scheduling.plugins.per_node_score import PerNodeScore, PodAsk
from gpufleet.scheduling.scheduler import Scheduler
from gpufleet.scheduling.shape_cache import ShapeCache

PRODUCT = "nvidia.com/gpu.product"
TYPICAL: dict[str, object] = {
    "typicalPods": [
        {"gpus": 1, "cpu": "4", "percentage": 40},
        {"gpuMilli": 500, "cpu": "2", "percentage": 30},
        {"gpus": 2, "cpu": "16", "gpuProducts": ["T4"], "percentage": 20},
        {"gpus": 0, "cpu": "8", "percentage": 10},
    ]
}


def policies() -> list[PerNodeScore]:
    return [
        BestFit(),
        DotProd(),
        GpuPacking(),
        GpuClustering(),
        FragmentationGradient.from_args(TYPICAL),
        SupplyAwareFragmentationGradient.from_args(TYPICAL),
    ]


def make_pod(name: str, kind: int, size: int, cpu: int) -> Pod:
    """kind 0: a share of ``size`` x 100 thousandths; 1: ``size`` % 4 whole GPUs; 2: cpu only."""
    if kind == 0:
        return Pod(name, requests={"cpu": cpu}, gpu_share=GpuShare(1, compute_milli=100 * size))
    gpus = size % 4 if kind == 1 else 0
    return Pod(name, requests={"cpu": cpu, **({"nvidia.com/gpu": gpus} if gpus else {})})


KINDS, SIZES, CPUS = st.integers(0, 2), st.integers(1, 9), st.sampled_from([1000, 2000, 4000, 8000, 16000])
pods = st.tuples(KINDS, SIZES, CPUS)


def cluster(placed: list[tuple[int, int, int, int]]) -> ClusterState:
    """12 nodes, alike but for their GPU model and count, with the pods placed where they fit."""
    state = ClusterState(
        [
            gpu_node(f"n{i:02}", (8, 4)[i % 2], cpu=32, labels={PRODUCT: ("T4", "A10")[i % 3 == 0]})
            for i in range(12)
        ]
    )
    for k, (node, kind, size, cpu) in enumerate(placed):
        bind_where_it_fits(state, make_pod(f"p{k}", kind, size, cpu), node % state.size)
    return state


def bind_where_it_fits(state: ClusterState, pod: Pod, i: int) -> None:
    """The pod bound to node ``i`` if it fits there."""
    share = pod.gpu_share
    fits = share is None or bool(state.gpu_shares().fits(share, np.array([i]))[0])
    if not state.shortfall(pod, i) and fits:
        state.assign(pod, i, 0.0)


@settings(max_examples=30, deadline=None)
@given(placed=st.lists(st.tuples(st.integers(0, 11), KINDS, SIZES, CPUS), max_size=30), incoming=pods)
def test_scoring_nodes_by_class_equals_scoring_each_node_alone(
    placed: list[tuple[int, int, int, int]], incoming: tuple[int, int, int]
) -> None:
    state = cluster(placed)
    ctx = PodContext(make_pod("incoming", *incoming), state)
    every = np.arange(state.size, dtype=np.int64)
    for by_class, alone, scalar in zip(policies(), policies(), policies(), strict=True):
        assert by_class.score(ctx, every).tolist() == [
            int(alone.score(ctx, np.array([i], dtype=np.int64))[0]) for i in range(state.size)
        ], by_class.name
        # without arrays (``score_alone``: the shape cache's re-check of the node a binding changed)
        assert [scalar.score_alone(ctx, i) for i in range(state.size)] == by_class.score(ctx, every).tolist()


@settings(max_examples=15, deadline=None)
@given(
    placed=st.lists(st.tuples(st.integers(0, 11), KINDS, SIZES, CPUS), max_size=30),
    incoming=st.lists(st.tuples(st.integers(0, 11), KINDS, SIZES, CPUS), min_size=1, max_size=6),
    alone_first=st.lists(st.integers(0, 11), max_size=6),
)
def test_scores_kept_across_pods_and_bindings_equal_scoring_each_node_alone(
    placed: list[tuple[int, int, int, int]],
    incoming: list[tuple[int, int, int, int]],
    alone_first: list[int],
) -> None:
    """One plugin scores pod after pod, each then bound to a node where it fits (the scores it keeps
    per class and ask outlive a pod): first some nodes alone (``score_alone``, which for FGD keeps its
    scores by class code, as the class path does), then every node by class. Each score is what a
    fresh plugin gives the node alone."""
    state = cluster(placed)
    every = np.arange(state.size, dtype=np.int64)
    kept = policies()
    for k, (node, *shape) in enumerate(incoming):
        pod = make_pod(f"in{k}", *shape)
        ctx = PodContext(pod, state)
        for plugin, alone in zip(kept, policies(), strict=True):
            fresh = [int(alone.score(ctx, np.array([i], dtype=np.int64))[0]) for i in range(state.size)]
            assert [plugin.score_alone(ctx, i) for i in alone_first] == [fresh[i] for i in alone_first]
            assert plugin.score(ctx, every).tolist() == fresh, plugin.name
        bind_where_it_fits(state, pod, node % state.size)


@settings(max_examples=20, deadline=None)
@given(
    placed=st.lists(st.tuples(st.integers(0, 11), KINDS, SIZES, CPUS), max_size=30),
    incoming=st.lists(st.tuples(st.integers(0, 11), SIZES, CPUS), min_size=1, max_size=6),
    alone=st.booleans(),
)
def test_the_gpu_fgd_gives_a_share_is_the_one_its_best_score_takes_kept_by_class_or_not(
    placed: list[tuple[int, int, int, int]], incoming: list[tuple[int, int, int]], alone: bool
) -> None:
    """FGD's Reserve (``choose_gpu``) puts a share on the GPU its best score takes: read from what the
    score kept by class code (the nodes scored by class or alone), the GPU a fresh plugin, which keeps
    nothing, works out; share after share as they are bound."""
    state = cluster(placed)
    every = np.arange(state.size, dtype=np.int64)
    gpu_column = state.resource_column("nvidia.com/gpu")
    for policy in (FragmentationGradient, SupplyAwareFragmentationGradient):
        plugin = policy.from_args(TYPICAL)
        for k, (node, size, cpu) in enumerate(incoming):
            pod = make_pod(f"{plugin.name}-in{k}", 0, size, cpu)
            ctx = PodContext(pod, state)
            if alone:
                for i in range(state.size):
                    plugin.score_alone(ctx, i)
            else:
                plugin.score(ctx, every)
            i = node % state.size
            room = state.gpu_shares()._open_with_room(i, 100 * size, 100 * size)
            whole = int(state.alloc[i, gpu_column] - state.requested[i, gpu_column])
            fresh = policy.from_args(TYPICAL)
            fresh.state = state
            assert plugin.choose_gpu(pod, i, room, whole) == fresh.choose_gpu(pod, i, room, whole)
            bind_where_it_fits(state, pod, i)


def _with(left: NodeLeft, ask: PodAsk, gpu: int | None) -> NodeLeft:
    """The node with the pod on it, worked out here (the authors' ``NodeResource.Sub``): a share on a GPU
    with ``gpu`` left, else the first GPUs in ascending order with room."""
    gpus = list(left.gpus)
    if gpu is not None:
        gpus[gpus.index(gpu)] -= ask.milli
    else:
        need = ask.gpus
        for j, g in enumerate(gpus):
            if need and g >= ask.milli:
                gpus[j], need = g - ask.milli, need - 1
    return NodeLeft(left.cpu - ask.cpu, left.memory - ask.memory, left.pods - 1, tuple(sorted(gpus)))


@settings(max_examples=30, deadline=None)
@given(
    placed=st.lists(st.tuples(st.integers(0, 11), KINDS, SIZES, CPUS), max_size=30),
    incoming=st.lists(pods, min_size=1, max_size=6),
)
def test_fgd_scores_kept_by_key_equal_the_measure_computed_afresh(
    placed: list[tuple[int, int, int, int]], incoming: list[tuple[int, int, int]]
) -> None:
    """FGD and FGDSupply keep scores by what their measure reads (FGDSupply: FGD's measure by FGD's key,
    plus its supply term of the exact cpu, which the cluster's 8-GPU nodes are short of); over pods
    scored one after another, each equals the sigmoid of a fresh measure of the node before and after
    the pod (a share: on its best GPU)."""
    state = cluster(placed)
    every = np.arange(state.size, dtype=np.int64)
    for plugin in (
        FragmentationGradient.from_args(TYPICAL),
        SupplyAwareFragmentationGradient.from_args(TYPICAL),
    ):
        tasks = tasks_of(plugin.typical, include_cpu_pods=True)
        for k, shape in enumerate(incoming):
            pod = make_pod(f"in{k}", *shape)
            scores = plugin.score(PodContext(pod, state), every).tolist()
            for i in range(state.size):
                measure = plugin.fragmentation(state, tasks)
                left, ask = NodeLeft.of(state, i), PodAsk.of(state, pod, i)
                before = measure.of(i, left)
                if ask.shared:
                    after = [measure.of(i, _with(left, ask, g)) for g in set(left.gpus) if g >= ask.milli]
                else:
                    after = [measure.of(i, _with(left, ask, None))]
                assert scores[i] == max((sigmoid_score(before, a) for a in after), default=-1), plugin.name


def scheduler(state: ClusterState, policy: str) -> Scheduler:
    plugins = {"score": PluginSet((PluginRef(policy, 1000),), ("*",)), "postFilter": PluginSet((), ("*",))}
    args = {policy: TYPICAL} if policy.startswith("FGD") else {}
    profile = ProfileConfig("default-scheduler", plugins=plugins, plugin_args=args)
    config = SchedulerConfig("default-scheduler", profiles=[profile], percentage_of_nodes_to_score=100)
    return Scheduler(config, state, GangView(state), seed=7, tie_break="first")


@settings(max_examples=25, deadline=None)
@given(
    workload=st.lists(pods, min_size=1, max_size=40),
    policy=st.sampled_from(["Random", "DotProd", "FGD"]),
)
def test_a_refreshed_shape_cache_equals_one_built_afresh(
    workload: list[tuple[int, int, int]], policy: str
) -> None:
    """After any sequence of placements, every cached shape's filter verdicts (and, but for Random's
    scores drawn anew each cycle, its scores) are those of a cache built on the cluster as it is."""
    state = cluster([])
    sched = scheduler(state, policy)
    for k, pod in enumerate(workload):
        sched.place_once(make_pod(f"w{k}", *pod), 0.0)
    for cache in sched.caches.values():
        cache.refresh()
        fresh = ShapeCache(cache.profile, PodContext(cache.ctx.pod, state))
        assert cache.ok.tolist() == fresh.ok.tolist()
        assert cache.static_reason == fresh.static_reason
        if policy != "Random":
            assert cache.masked.tolist() == fresh.masked.tolist()


@settings(max_examples=25, deadline=None)
@given(
    workload=st.lists(pods, min_size=1, max_size=40),
    policy=st.sampled_from(["DotProd", "BestFit", "GpuPacking", "FGD"]),
    decided=st.lists(st.booleans(), min_size=40, max_size=40),
)
def test_with_the_first_node_tie_break_a_pod_gets_the_lowest_of_the_top_scoring_nodes(
    workload: list[tuple[int, int, int]], policy: str, decided: list[bool]
) -> None:
    """The FGD authors' tie-break (``tie_break="first"``): a pod goes to the lowest-numbered node of the
    top-scoring ones, whether the cache kept their list (made where a cycle asks for every tie, as
    ``decide`` does before some of the pods) or finds only the first of them (``ShapeCache.first_top``);
    after every placement each cache's first is that of a cache built afresh."""
    state = cluster([])
    sched = scheduler(state, policy)
    for k, spec in enumerate(workload):
        pod = make_pod(f"w{k}", *spec)
        expected = None
        if decided[k]:
            tied = sched.decide(pod).nodes
            expected = min(tied, key=state.index.__getitem__) if tied else None
        placed = sched.place_once(pod, 0.0)
        if decided[k]:
            assert placed == expected
        for cache in sched.caches.values():
            cache.refresh()
            fresh = ShapeCache(cache.profile, PodContext(cache.ctx.pod, state))
            assert cache.first_top() == (fresh.top_nodes() or [None])[0]


def test_static_filtering_shared_between_shapes_follows_relabelled_nodes() -> None:
    """Pods that differ only in their amounts share one static filtering; a node relabelled after it
    was kept is judged by its new labels."""
    state = cluster([])
    sched = scheduler(state, "DotProd")
    t4 = [i for i in range(state.size) if state.nodes[i].labels[PRODUCT] == "T4"]
    first = sched.place_once(Pod("a", requests={"cpu": 1000}, node_selector={PRODUCT: "A10"}), 0.0)
    assert first is not None and state.nodes[state.index[first]].labels[PRODUCT] == "A10"
    for i in range(state.size):
        if i not in t4:
            state.set_labels(state.nodes[i].name, {**state.nodes[i].labels, PRODUCT: "T4"})
    state.set_labels(state.nodes[t4[0]].name, {**state.nodes[t4[0]].labels, PRODUCT: "A10"})
    second = sched.place_once(Pod("b", requests={"cpu": 2000}, node_selector={PRODUCT: "A10"}), 0.0)
    assert second == state.nodes[t4[0]].name


def test_static_filtering_is_shared_by_pods_alike_in_what_each_static_filter_reads() -> None:
    """``StaticFilter.reads``: pods that differ in amounts or GPU share, which no default static filter or
    node PreFilter reads, share one static filtering; a toleration or a node selector gets its own, and
    so does each share where GpuMemoryFit (enabled) reads it for a pod with a GPU memory need."""
    state = cluster([])
    shares = [
        Pod(f"s{k}", requests={"cpu": 1000 * k}, gpu_share=GpuShare(1, compute_milli=100 * k))
        for k in (1, 2, 3)
    ]
    whole = Pod("w", requests={"cpu": 4000, "memory": 2**30, "nvidia.com/gpu": 2})
    tolerant = Pod("t", requests={"cpu": 1000}, tolerations=(Toleration("dedicated", "Exists", "", ""),))
    pinned = Pod("p", requests={"cpu": 1000}, node_selector={PRODUCT: "A10"})
    sched = scheduler(state, "DotProd")
    assert all(sched.place_once(pod, 0.0) is not None for pod in (*shares, whole))
    assert len(state.memo["static-filters"]) == 1  # type: ignore[arg-type]
    assert sched.place_once(tolerant, 0.0) is not None
    on = sched.place_once(pinned, 0.0)
    assert on is not None and state.nodes[state.index[on]].labels[PRODUCT] == "A10"  # its own verdicts
    assert len(state.memo["static-filters"]) == 3  # type: ignore[arg-type]
    strict = cluster([])
    profile = ProfileConfig(
        "default-scheduler",
        plugins={"filter": PluginSet((PluginRef("GpuMemoryFit"),), ())},
        percentage_of_nodes_to_score=100,
    )
    fit = Scheduler(SchedulerConfig("default-scheduler", profiles=[profile]), strict, GangView(strict))
    needy = [replace(pod, behavior=Behavior(gpu_memory_bytes=8 * 2**30)) for pod in shares]
    for pod in needy:
        fit.place_once(pod, 0.0)
    assert len(strict.memo["static-filters"]) == len(needy)  # type: ignore[arg-type]


def test_a_shape_cache_asks_scores_only_of_feasible_nodes() -> None:
    """The score plugins are asked only for nodes the filters pass (only those scores are read): a node
    is scored when a change of its own makes it feasible, and its score then is a fresh one's."""
    state = cluster([])
    sched = scheduler(state, "DotProd")
    profile = sched.profiles["default-scheduler"]
    plugin = profile.dynamic_scores[0][0]
    asked: list[int] = []
    score_alone = plugin.score_alone

    def counted(ctx: PodContext, i: int) -> int:
        asked.append(i)
        return score_alone(ctx, i)

    plugin.score_alone = counted  # type: ignore[method-assign]
    big = Pod("big", requests={"cpu": 24_000})  # each 32-cpu node holds one
    sched.place_once(big, 0.0)
    full = state.assignments[big.key].node
    cache = next(iter(sched.caches.values()))
    asked.clear()
    sched.place_once(Pod("big2", requests={"cpu": 24_000}), 0.0)  # the same shape: the bound node re-checked
    assert full not in asked and not cache.ok[full] and cache.dyn[full] == 0
    state.unassign(big.key)
    cache.refresh()
    assert asked == [full] and cache.ok[full]
    fresh = ShapeCache(cache.profile, PodContext(cache.ctx.pod, state))
    assert cache.masked.tolist() == fresh.masked.tolist()


def test_a_node_rejected_for_lack_of_room_is_judged_again_only_once_something_may_have_left() -> None:
    """NodeResourcesFit rejects a node for lack of room: while pods only join the node it stays rejected,
    so the shape cache does not judge it again; once a pod leaves (``ClusterState.freed_at``) it does.
    After each look the cache equals one built afresh."""
    state = cluster([])
    sched = scheduler(state, "DotProd")
    fit = next(f for f in sched.profiles["default-scheduler"].dynamic_filters if f.name == "NodeResourcesFit")
    judged: list[int] = []
    passes_node = fit.passes_node

    def spied(ctx: PodContext, row: NodeRow, i: int) -> bool:
        judged.append(i)
        return passes_node(ctx, row, i)

    fit.passes_node = spied  # type: ignore[method-assign]
    sched.place_once(Pod("big", requests={"cpu": 24_000}), 0.0)  # each 32-cpu node holds one
    full = state.assignments["default/big"].node
    cache = next(iter(sched.caches.values()))

    def look() -> list[int]:
        judged.clear()
        cache.refresh()
        fresh = ShapeCache(cache.profile, PodContext(cache.ctx.pod, state))
        assert (cache.ok.tolist(), cache.masked.tolist()) == (fresh.ok.tolist(), fresh.masked.tolist())
        return list(judged)

    assert look() == [full] and not cache.ok[full]  # the binding: judged, rejected
    state.assign(Pod("small", requests={"cpu": 1000}), full, 0.0)
    assert look() == []  # a pod joined a rejected node: not judged
    state.unassign("default/small")
    assert look() == [full] and not cache.ok[full]  # a pod left: judged (still no room)
    state.unassign("default/big")
    assert look() == [full] and cache.ok[full]


def test_after_a_long_gap_only_changed_nodes_found_feasible_or_that_freed_room_are_judged() -> None:
    """Over more changes than the short log holds (``SHORT_LOG``), a monotone shape cache judges again, over
    arrays, only the changed nodes it found feasible while nothing was freed (``ClusterState.last_freed``);
    once a pod left a node it rejected, that node too. After each look the cache equals one built afresh."""
    state = cluster([])
    sched = scheduler(state, "DotProd")
    fit = next(f for f in sched.profiles["default-scheduler"].dynamic_filters if f.name == "NodeResourcesFit")
    judged: list[int] = []
    passes = fit.passes

    def spied(ctx: PodContext, idx: IntArray) -> BoolArray:
        judged.extend(idx.tolist())
        return passes(ctx, idx)

    fit.passes = spied  # type: ignore[method-assign]
    sched.place_once(Pod("big", requests={"cpu": 24_000}), 0.0)  # each 32-cpu node holds one
    full = state.assignments["default/big"].node
    cache = next(iter(sched.caches.values()))
    cache.refresh()
    assert not cache.ok[full]

    def look() -> list[int]:
        judged.clear()
        cache.refresh()
        looked = sorted(judged)
        fresh = ShapeCache(cache.profile, PodContext(cache.ctx.pod, state))
        assert (cache.ok.tolist(), cache.masked.tolist()) == (fresh.ok.tolist(), fresh.masked.tolist())
        return looked

    small = [Pod(f"s{k}", requests={"cpu": 100}) for k in range(SHORT_LOG + 1)]
    for k, pod in enumerate(small):  # every node, the full one included, one pod after another
        state.assign(pod, k % state.size, 0.0)
    assert state.last_freed == -1
    assert look() == [i for i in range(state.size) if i != full]
    for k, pod in enumerate(small):  # the full node freed room, then every node took a pod again
        state.unassign(pod.key)
        state.assign(pod, k % state.size, 0.0)
    assert look() == list(range(state.size)) and not cache.ok[full]
