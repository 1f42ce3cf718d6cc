"""Choosing GPUs inside a node, and scoring nodes by how well they host a multi-GPU pod."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.gpus.topology.device_choice import best_set, island_score, largest_free_island
from gpufleet.gpus.topology.link_graph import LinkGraph, nvlink_islands, nvlink_pairs, nvswitch, pcie


def test_four_gpu_pod_gets_the_whole_free_island() -> None:
    g = nvlink_islands(8, 4)
    assert best_set(g, set(range(8)), 4) == (0, 1, 2, 3)
    # One GPU used in island A: the 4-GPU pod gets island B, not GPUs split across sockets.
    assert best_set(g, {1, 2, 3, 4, 5, 6, 7}, 4) == (4, 5, 6, 7)


def test_two_gpu_pod_keeps_the_whole_island_free() -> None:
    g = nvlink_islands(8, 4)
    assert best_set(g, {1, 2, 3, 4, 5, 6, 7}, 2) == (1, 2)
    # Mirror image: GPU 4 used, so island A (lower indices) must stay whole.
    assert best_set(g, {0, 1, 2, 3, 5, 6, 7}, 2) == (5, 6)
    # A single GPU goes to the partly used island too.
    assert best_set(g, {0, 1, 2, 3, 5, 6, 7}, 1) == (5,)


def test_island_score_prefers_best_fit_and_whole_islands() -> None:
    g = nvlink_islands(8, 4)
    partly_used = {1, 2, 3, 4, 5, 6, 7}
    empty = set(range(8))
    # 2-GPU pod: the node with a partly used island scores higher than an empty node.
    assert island_score(g, partly_used, 2) > island_score(g, empty, 2)
    # 4-GPU pod: a node with one whole free island beats one where both islands are broken.
    broken = {1, 2, 3, 5, 6, 7}
    assert island_score(g, partly_used, 4) == 100
    assert island_score(g, broken, 4) < island_score(g, partly_used, 4)
    assert island_score(g, {0, 1}, 4) == 0
    assert island_score(g, set(), 0) == 100


def test_largest_free_island() -> None:
    g = nvlink_islands(8, 4)
    assert largest_free_island(g, {1, 2, 3, 4, 5, 6, 7}) == 4
    assert largest_free_island(g, {1, 2, 3, 5, 6}) == 3
    assert largest_free_island(g, set()) == 0


def test_pcie_prefers_same_switch_and_numa() -> None:
    g = pcie(8, per_switch=2, per_numa=4)
    assert best_set(g, set(range(8)), 2) == (0, 1)
    assert best_set(g, {0, 2, 3, 4}, 2) == (2, 3)
    # Every 3-set crosses sockets; fewest cross links (sum), then lowest indices.
    assert best_set(g, {1, 3, 4, 5}, 3) == (1, 4, 5)
    chosen = best_set(g, {0, 1, 2, 3, 4, 5}, 4)
    assert chosen == (0, 1, 2, 3)
    bridged = nvlink_pairs(8)
    assert best_set(bridged, {1, 2, 3, 5}, 2) == (2, 3)


def test_edge_cases() -> None:
    g = nvswitch(8)
    assert best_set(g, {3}, 0) == ()
    assert best_set(g, {1, 2}, 3) is None
    with pytest.raises(ValueError):
        best_set(g, {9}, 1)
    with pytest.raises(ValueError):
        best_set(g, {1}, -1)


def _brute(graph: LinkGraph, free: set[int], k: int) -> tuple[int, int]:
    best = min(
        (
            max((graph.cost(i, j) for i, j in itertools.combinations(s, 2)), default=0),
            sum(graph.cost(i, j) for i, j in itertools.combinations(s, 2)),
        )
        for s in itertools.combinations(sorted(free), k)
    )
    return best


_LAYOUTS = [
    nvswitch(8),
    nvlink_islands(8, 4),
    nvlink_islands(8, 2),
    nvlink_pairs(8),
    pcie(8, 2, 4),
    pcie(8, 4, 4),
]


@settings(max_examples=150, deadline=None)
@given(
    layout=st.sampled_from(_LAYOUTS),
    free=st.sets(st.integers(0, 7), min_size=1),
    k=st.integers(1, 8),
)
def test_best_set_is_optimal_on_worst_then_sum(layout: LinkGraph, free: set[int], k: int) -> None:
    chosen = best_set(layout, free, k)
    if k > len(free):
        assert chosen is None
        return
    assert chosen is not None
    assert len(chosen) == k and set(chosen) <= free and list(chosen) == sorted(chosen)
    pairs = list(itertools.combinations(chosen, 2))
    got = (max((layout.cost(i, j) for i, j in pairs), default=0), sum(layout.cost(i, j) for i, j in pairs))
    assert got == _brute(layout, free, k)
    assert 0 <= island_score(layout, free, k) <= 100


def test_sixteen_gpu_search_is_fast_enough() -> None:
    g = nvswitch(16)
    assert best_set(g, set(range(16)), 8) == tuple(range(8))
