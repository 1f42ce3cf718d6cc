"""The cluster's change log (``ClusterState.changes``) that the shape caches follow: it stays bounded
when no one reads it, a reader that fell behind the part it lost still learns which nodes changed since
(``ClusterState.changed_at``), and a cache that far behind ends with the answers a fresh cache gives, as
does one that follows a single change at a time (re-evaluating the changed node, or reusing what an equal
resource row gave, where nothing else is read)."""

from __future__ import annotations

import numpy as np

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, MEMORY
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.profile import build_profiles
from gpufleet.scheduling.shape_cache import ShapeCache

GI = 2**30


def _churn(state: ClusterState, rounds: int, start: int = 0) -> None:
    """Pods come and go on every node: each assignment and removal is one change."""
    for k in range(start, start + rounds):
        pod = gpu_pod(f"churn-{k}", 1 + k % 3)
        state.assign(pod, k % state.size, 0.0)
        state.unassign(pod.key)


def _same(cache: ShapeCache, fresh: ShapeCache) -> None:
    assert cache.masked.tolist() == fresh.masked.tolist()
    assert cache.ok.tolist() == fresh.ok.tolist()
    assert cache.top_nodes() == fresh.top_nodes()
    assert cache.feasible_nodes().tolist() == fresh.feasible_nodes().tolist()
    assert cache.feasible_list() == fresh.feasible_list()


def test_the_change_log_stays_bounded_without_readers() -> None:
    state = ClusterState([gpu_node(f"n{i}", 8) for i in range(6)])
    _churn(state, 3_000)
    assert len(state.changes) <= 4 * 256
    assert state.change_pos == state.change_base + len(state.changes)
    assert state.change_base > 0  # the log's start is lost, yet the nodes changed since are known
    assert state.changes_since(0).tolist() == list(range(6))
    assert state.changes_since(state.change_pos - 3).tolist() == sorted(set(state.changes[-3:]))
    assert state.changes_since(state.change_pos - 40).tolist() == sorted(set(state.changes[-40:]))
    state.assign(gpu_pod("late", 1), 4, 0.0)
    assert state.changes_since(state.change_pos - 1).tolist() == [4]
    assert state.changes_since(state.change_pos).tolist() == []


def test_a_cache_behind_the_trimmed_log_and_one_following_it_agree_with_a_fresh_one() -> None:
    state = ClusterState([gpu_node(f"n{i}", 8) for i in range(12)])
    profile = build_profiles(SchedulerConfig("default-scheduler"))[0]
    pod = gpu_pod("probe", 2)
    behind, following = (ShapeCache(profile, PodContext(pod, state)) for _ in range(2))
    singles: list[str] = []
    for k in range(0, 2_000, 200):
        _churn(state, 200, k)
        following.refresh()  # 400 changes: the nodes changed since, re-evaluated
        following.feasible_list()
        for j in range(3):  # then one change at a time: a node fills up ...
            single = gpu_pod(f"one-{k}-{j}", 3)
            state.assign(single, k // 200 % state.size, 0.0)
            singles.append(single.key)
            following.refresh()
            following.feasible_list()
        for key in singles[:2]:  # ... and empties
            state.unassign(key)
            following.refresh()
        del singles[:2]
    behind.refresh()
    fresh = ShapeCache(profile, PodContext(pod, state))
    _same(behind, fresh)
    _same(following, fresh)
    assert np.array_equal(following.dyn, fresh.dyn)


def test_nodes_with_equal_rows_but_other_shared_gpus_get_their_own_verdicts() -> None:
    """A share's fit reads the node's shared GPUs, not only its resource row: a node whose one GPU holds a
    half share takes another half, one whose GPU holds three quarters does not, though both rows say one
    GPU, 4 CPUs and 16 GiB requested."""
    memory = {"nvidia.com/gpu.memory": "81920"}
    state = ClusterState([gpu_node(f"n{i}", 1, labels=memory) for i in range(2)])
    profile = build_profiles(SchedulerConfig("default-scheduler"))[0]
    half = GpuShare(compute_milli=500)
    probe = Pod("probe", requests={CPU: 4_000, MEMORY: 16 * GI}, gpu_share=half)
    cache = ShapeCache(profile, PodContext(probe, state))
    state.assign(Pod("shared", requests={CPU: 4_000, MEMORY: 16 * GI}, gpu_share=half), 0, 0.0)
    cache.refresh()
    state.assign(
        Pod("bigger", requests={CPU: 4_000, MEMORY: 16 * GI}, gpu_share=GpuShare(compute_milli=750)), 1, 0.0
    )
    cache.refresh()
    assert state.requested[0].tolist() == state.requested[1].tolist()
    assert state.nonzero[0].tolist() == state.nonzero[1].tolist()
    assert cache.ok.tolist() == [True, False]
    _same(cache, ShapeCache(profile, PodContext(probe, state)))


def test_a_cache_rebuilt_for_a_grown_node_set_judges_the_new_nodes() -> None:
    """A few nodes are re-evaluated one by one even when the cache is rebuilt; after a node is added, its
    answers (feasibility kept as a list between changes) cover the new node too, as a fresh cache's do."""
    state = ClusterState([gpu_node("n0", 1), gpu_node("n1", 1)])
    (profile,) = build_profiles(SchedulerConfig("default-scheduler"))
    pod = gpu_pod("p", 1)
    cache = ShapeCache(profile, PodContext(pod, state))
    state.assign(gpu_pod("full", 1), 0, 0.0)
    cache.refresh()  # one node changed: the feasibility list is made and kept
    state.add_node(gpu_node("n2", 1))
    state.assign(gpu_pod("other", 1), 2, 0.0)
    cache.refresh()
    fresh = ShapeCache(profile, PodContext(pod, state))
    assert cache.ok.tolist() == fresh.ok.tolist() == [False, True, False]
    assert cache.feasible_list() == [1] and cache.top_nodes() == [1]


def test_a_cache_that_catches_up_on_a_dozen_nodes_keeps_its_feasible_lists_right() -> None:
    """Between two looks a dozen nodes change (more than one by one, so over arrays), some filling up and
    some emptying: the lists of which nodes fit, which the cache keeps through single changes, stay those
    of a fresh cache, and so do the answers after the next single changes that read them."""
    state = ClusterState([gpu_node(f"n{i}", 8) for i in range(40)])
    profile = build_profiles(SchedulerConfig("default-scheduler"))[0]
    pod = gpu_pod("probe", 4)
    cache = ShapeCache(profile, PodContext(pod, state))
    held: dict[int, list[str]] = {i: [] for i in range(state.size)}
    for k in range(30):
        for j in range(12):  # a dozen nodes: odd rounds fill them, even rounds empty them again
            i = (7 * k + j) % state.size
            if k % 2 == 0 and held[i]:
                state.unassign(held[i].pop())
            elif k % 2 and not held[i]:
                filler = gpu_pod(f"fill-{k}-{j}", 5)
                state.assign(filler, i, 0.0)
                held[i].append(filler.key)
        cache.refresh()
        cache.feasible_list()
        cache.feasible_nodes()
        i = (3 * k) % state.size  # then one node changes alone (its verdict read against the kept list)
        single = gpu_pod(f"one-{k}", 2)
        state.assign(single, i, 0.0)
        held[i].append(single.key)
        cache.refresh()
        _same(cache, ShapeCache(profile, PodContext(pod, state)))
