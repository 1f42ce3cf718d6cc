"""The GPU-equivalents allocated, kept as the allocations change (``sim.allocated_sum``): every read is
the float a fresh NumPy sum over every node gives, whether the weights are whole numbers (kept in
integers) or not, and past the totals where floats stop being exact."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.sim.allocated_sum import EXACT, AllocatedSum


def fresh(state: ClusterState, weights: Any) -> float:
    return float((state.requested * weights).sum(axis=1).sum())


def weights_of(state: ClusterState, gpu_weight: float) -> Any:
    weights = np.zeros(state.alloc.shape, dtype=np.float64)
    weights[:, state.res_index["nvidia.com/gpu"]] = gpu_weight
    return weights


def test_whole_weights_are_summed_in_integers_and_others_as_numpy_does() -> None:
    state = ClusterState([gpu_node(n, 8) for n in ("a", "b", "c")])
    for k, node in enumerate(("a", "b", "c", "a")):
        state.assign(gpu_pod(f"p{k}", 1 + k), node, 0.0)
    whole, seventh = AllocatedSum(), AllocatedSum()
    assert whole.read(state, weights_of(state, 1.0)) == 10.0 and whole.columns is not None
    weights = weights_of(state, 1 / 7)
    assert seventh.read(state, weights) == fresh(state, weights) and seventh.columns is None


def test_a_total_past_exact_floats_is_summed_as_numpy_does() -> None:
    state = ClusterState([gpu_node(n, 8) for n in ("a", "b", "c")])
    for k, node in enumerate(("a", "b", "c")):
        state.assign(gpu_pod(f"p{k}", 3 + k), node, 0.0)
    weights = weights_of(state, float(EXACT // 7 + 1))
    kept = AllocatedSum()
    assert kept.total == 0 and kept.read(state, weights) == fresh(state, weights)
    assert kept.total >= EXACT


# between two reads: a pod placed on a node or removed; sometimes the weights are made again, with the same
# values, with another weight on one node (its devices described anew), or for a node that joined
MOVE = st.tuples(st.integers(0, 9), st.one_of(st.none(), st.integers(0, 4)))
REMAKE = st.one_of(
    st.none(),
    st.just("copy"),
    st.just("join"),
    st.tuples(st.integers(0, 4), st.sampled_from([0.0, 1.0, 2.0, 1 / 7, -1.0, float("inf")])),
)


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.sampled_from([1, 2, 3, 4, 8]), min_size=10, max_size=10),
    weight=st.sampled_from([1.0, 2.0, 0.0, 1 / 7, 0.5, 3 / 10]),
    reads=st.lists(st.tuples(st.lists(MOVE, max_size=4), REMAKE), max_size=12),
)
def test_every_read_is_a_fresh_numpy_sum(sizes: list[int], weight: float, reads: list[Any]) -> None:
    state = ClusterState([gpu_node(f"n{k}", 16) for k in range(5)])
    pods = [gpu_pod(f"p{k}", gpus) for k, gpus in enumerate(sizes)]
    weights, kept = weights_of(state, weight), AllocatedSum()
    for moves, remake in reads:
        for k, node in moves:
            if pods[k].key in state.assignments:
                state.unassign(pods[k].key)
            elif node is not None and state.free_on(node, "nvidia.com/gpu") >= sizes[k]:
                state.assign(pods[k], f"n{node}", 0.0)
        if remake == "copy":
            weights = weights.copy()
        elif remake == "join":
            state.add_node(gpu_node(f"n{state.size}", 16))
            weights = np.concatenate([weights, weights_of(state, weight)[len(weights) :]])
        elif remake is not None:
            weights = weights.copy()
            weights[remake[0], state.res_index["nvidia.com/gpu"]] = remake[1]
        with np.errstate(invalid="ignore"):  # (an infinite weight on a node without pods: nan, as NumPy's)
            got, want = kept.read(state, weights), fresh(state, weights)
        assert got == want or (np.isnan(got) and np.isnan(want))
