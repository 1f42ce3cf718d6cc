"""The one-node (Python integer) path of each dynamic plugin agrees with its NumPy path.

The shape cache re-evaluates the node a binding just changed with ``passes_node`` and
``score_node``; whole columns with ``passes`` and ``score``. Both must give the same
answer for every node, strategy and pod, or placement would depend on cache history.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from gpufleet.scheduling.plugins.node_resources_fit import NodeResourcesFit, ScoringStrategy

GPU = "nvidia.com/gpu"
RESOURCES = ("cpu", "memory", GPU)

quantities = st.fixed_dictionaries(
    {"cpu": st.integers(0, 64_000), "memory": st.integers(0, 2**36), GPU: st.integers(0, 8)}
)
strategies = st.sampled_from(
    [
        ScoringStrategy(),
        ScoringStrategy("MostAllocated", ((GPU, 10), ("cpu", 1), ("memory", 1))),
        ScoringStrategy(
            "RequestedToCapacityRatio", ((GPU, 5), ("cpu", 3), ("memory", 1)), ((0, 0), (100, 10))
        ),
        ScoringStrategy(
            "RequestedToCapacityRatio", (("cpu", 1), ("memory", 1)), ((0, 10), (50, 3), (100, 0))
        ),
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    nodes=st.lists(quantities, min_size=1, max_size=6),
    placed=st.lists(st.tuples(st.integers(0, 5), quantities), max_size=8),
    pod=quantities,
    strategy=strategies,
)
def test_one_node_path_equals_column_path(
    nodes: list[dict[str, int]],
    placed: list[tuple[int, dict[str, int]]],
    pod: dict[str, int],
    strategy: ScoringStrategy,
) -> None:
    state = ClusterState([Node(f"n{i}", capacity={**cap, "pods": 110}) for i, cap in enumerate(nodes)])
    for k, (i, req) in enumerate(placed):
        state.assign(Pod(f"p{k}", requests={r: v for r, v in req.items() if v}), i % len(nodes), 0.0)
    ctx = PodContext(Pod("incoming", requests={r: v for r, v in pod.items() if v}), state)
    idx = np.arange(state.size, dtype=np.int64)
    fit, balanced = NodeResourcesFit(strategy), NodeResourcesBalancedAllocation()
    rows = [
        (state.alloc[i].tolist(), state.requested[i].tolist(), state.nonzero[i].tolist())
        for i in range(state.size)
    ]
    assert fit.passes(ctx, idx).tolist() == [fit.passes_node(ctx, row, i) for i, row in enumerate(rows)]
    assert fit.score(ctx, idx).tolist() == [fit.score_node(ctx, row) for row in rows]
    assert balanced.score(ctx, idx).tolist() == [balanced.score_node(ctx, row) for row in rows]
