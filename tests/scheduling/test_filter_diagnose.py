"""A dynamic filter's ``diagnose`` (``scheduling.framework.DynamicFilter``): what a failed cycle's
diagnosis reads of it, ``passes``, ``reason_masks`` and ``unresolvable_on`` of the same nodes at once,
is what the three give one by one (NodeResourcesFit reads each node's rows once for the three)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.plugins.node_resources_fit import NodeResourcesFit


@settings(max_examples=60, deadline=None)
@given(
    capacities=st.lists(st.tuples(st.integers(0, 8), st.integers(1, 128)), min_size=1, max_size=8),
    placed=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 8), st.integers(0, 64)), max_size=10),
    asked=st.tuples(st.integers(0, 8), st.integers(0, 200)),
)
def test_node_resources_fit_diagnoses_as_its_three_answers_one_by_one(
    capacities: list[tuple[int, int]], placed: list[tuple[int, int, int]], asked: tuple[int, int]
) -> None:
    state = ClusterState([gpu_node(f"n{k}", gpus, cpu=cpu) for k, (gpus, cpu) in enumerate(capacities)])
    for k, (row, gpus, cpu) in enumerate(placed):
        i = row % len(capacities)
        if state.free_on(i, "nvidia.com/gpu") >= gpus and state.free_on(i, "cpu") >= cpu * 1000:
            state.assign(gpu_pod(f"p{k}", gpus, cpu=cpu, mem_gi=1), f"n{i}", 0.0)
    ctx = PodContext(gpu_pod("asked", asked[0], cpu=asked[1], mem_gi=1), state)
    idx = np.arange(len(capacities), dtype=np.int64)
    plugin = NodeResourcesFit()
    passing, masks, beyond = plugin.diagnose(ctx, idx)
    assert passing.tolist() == plugin.passes(ctx, idx).tolist()
    assert [(r, m.tolist()) for r, m in masks] == [(r, m.tolist()) for r, m in plugin.reason_masks(ctx, idx)]
    assert beyond.tolist() == plugin.unresolvable_on(ctx, idx).tolist()
    assert all(m.any() for _, m in masks)  # only the reasons some node has
