"""What is free on each node, kept between cluster-autoscaler's scans (``autoscaling.free_rows``): the
kept arrays, brought up to date by row, are always those a fresh read of the cluster gives, and they
are read again whole when a node joins or leaves, or the columns or the excluded nodes change."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import gpu_node, gpu_pod
from gpufleet.autoscaling.free_rows import free_rows
from gpufleet.cluster.snapshot import ClusterSnapshot
from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Taint


def fresh(state: ClusterState, exclude: frozenset[int]) -> tuple[list[int], Any, Any]:
    keep = state.active.copy()
    keep[[i for i in exclude if i < len(keep)]] = False
    idx = np.flatnonzero(keep).astype(np.int64)
    free, milli = ClusterSnapshot(state).free(idx)
    return idx.tolist(), free, milli


def test_a_scan_with_nothing_changed_reads_nothing_again() -> None:
    state = ClusterState([gpu_node(n, 8) for n in ("a", "b")])
    first = free_rows(state, frozenset())
    assert free_rows(state, frozenset()) is first


def test_a_node_cordoned_or_tainted_since_frees_nothing_and_reads_nothing_again() -> None:
    state = ClusterState([gpu_node(n, 8) for n in ("a", "b")])
    first = free_rows(state, frozenset())
    state.cordon("a")
    state.set_taints("b", (Taint("DeletionCandidateOfClusterAutoscaler", "1700000000", "PreferNoSchedule"),))
    assert free_rows(state, frozenset()) is first


def test_a_pod_placed_since_changes_only_its_node_row() -> None:
    state = ClusterState([gpu_node(n, 8) for n in ("a", "b", "c")])
    first = free_rows(state, frozenset({0}))
    state.assign(gpu_pod("p", 3), "c", 0.0)
    later = free_rows(state, frozenset({0}))
    assert later.rows == [1, 2] and later.milli.tolist() == [8000, 5000]
    assert first.milli.tolist() == [8000, 8000]  # what an earlier scan read stands


# between two reads: a pod placed or removed, a node added, removed, cordoned, its GPUs registered
STEP = st.one_of(
    st.tuples(st.just("move"), st.integers(0, 9), st.one_of(st.none(), st.integers(0, 7))),
    st.tuples(st.sampled_from(["add", "remove", "cordon", "register"]), st.integers(0, 7), st.none()),
)


@settings(max_examples=150, deadline=None)
@given(
    sizes=st.lists(st.sampled_from([1, 2, 4, 8]), min_size=10, max_size=10),
    reads=st.lists(
        st.tuples(st.lists(STEP, max_size=4), st.frozensets(st.integers(0, 7), max_size=2)), max_size=10
    ),
)
def test_kept_rows_are_those_a_fresh_read_gives(sizes: list[int], reads: list[Any]) -> None:
    state = ClusterState([gpu_node(f"n{k}", 8) for k in range(5)])
    pods = [gpu_pod(f"p{k}", gpus) for k, gpus in enumerate(sizes)]
    added = 0
    for steps, exclude in reads:
        for what, k, node in steps:
            if what == "add":
                added += 1
                state.add_node(gpu_node(f"new{added}", 0 if added % 2 else 8))
                continue
            name = state.nodes[k % len(state.nodes)].name
            if what == "move":
                placed, on = (
                    pods[k].key in state.assignments,
                    name if node is None else state.nodes[node % len(state.nodes)].name,
                )
                if placed:
                    state.unassign(pods[k].key)
                elif on in state.index and state.free_on(state.index[on], "nvidia.com/gpu") >= sizes[k]:
                    state.assign(pods[k], on, 0.0)
            elif name not in state.index:
                continue
            elif what == "remove":
                state.remove_node(name)
            elif what == "cordon":
                state.cordon(name)
            else:
                state.set_allocatable(
                    name, {**state.nodes[state.index[name]].allocatable, "nvidia.com/gpu": 8}
                )
        kept = free_rows(state, exclude)
        rows, free, milli = fresh(state, exclude)
        assert kept.rows == rows and kept.idx.tolist() == rows
        assert kept.free.tolist() == free.tolist() and kept.milli.tolist() == milli.tolist()
