"""The GPU-equivalents of each resource on each node (``InMemoryCluster._gpu_weights``), kept as nodes
join, leave and have their devices described anew: only those nodes' rows are worked out again, and
every read equals the weights worked out afresh over every node (DESIGN: a MIG instance counts its
compute share, a time-slicing replica 1/replicas, a whole GPU 1)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import gpu_node
from gpufleet.model.node import Node
from gpufleet.sim.cluster import InMemoryCluster

A100 = "NVIDIA-A100-SXM4-40GB"


def kind_of(name: str, kind: int) -> Node:
    """Whole GPUs; time-slicing replicas; MIG instances; a node without GPUs; a node with another
    device resource (a resource column the others lack)."""
    if kind == 0:
        return gpu_node(name, 8)
    if kind == 1:
        node = gpu_node(name, 4)
        return replace(
            node,
            labels={**node.labels, "nvidia.com/gpu.replicas": "4"},
            capacity={**node.capacity, "nvidia.com/gpu": 16},
        )
    if kind == 2:
        node = gpu_node(name, 0)
        mig = {"nvidia.com/mig-1g.5gb": 7, "nvidia.com/mig-3g.20gb": 2}
        return replace(
            node,
            labels={**node.labels, "nvidia.com/gpu.product": A100, "nvidia.com/gpu.count": "2"},
            capacity={k: v for k, v in {**node.capacity, **mig}.items() if k != "nvidia.com/gpu"},
        )
    if kind == 3:
        return gpu_node(name, 0)
    node = gpu_node(name, 2)
    return replace(node, capacity={**node.capacity, "example.com/fpga": 2})


def afresh(cluster: InMemoryCluster) -> tuple[Any, Any]:
    """Every active node's row from its devices as the ledger describes them now."""
    state = cluster.state
    weights = np.zeros(state.alloc.shape, dtype=np.float64)
    physical = np.zeros(state.size, dtype=np.float64)
    for i in np.flatnonzero(state.active).tolist():
        devices = cluster.ledger.of(state.nodes[i].name)
        share = {
            state.res_index[r]: u[0].share for r, u in devices.units.items() if u and r in state.res_index
        }
        weights[i, list(share)] = list(share.values())
        physical[i] = devices.gpus
    return weights, physical


# one step between reads: a node of a kind joins, a node leaves, a node's devices register again
# (as a changed node: another kind), or a node's devices are forgotten (MIG reconfiguration)
STEP = st.tuples(
    st.sampled_from(["join", "leave", "register", "forget"]), st.integers(0, 30), st.integers(0, 4)
)


@settings(max_examples=150, deadline=None)
@given(
    first=st.lists(st.integers(0, 3), min_size=1, max_size=6),
    reads=st.lists(st.lists(STEP, max_size=4), max_size=10),
)
def test_every_read_of_the_weights_equals_the_weights_worked_out_afresh(
    first: list[int], reads: list[list[tuple[str, int, int]]]
) -> None:
    cluster = InMemoryCluster([kind_of(f"n{k}", kind) for k, kind in enumerate(first)], None, lambda _: [])
    joined = len(first)
    for steps in reads:
        for op, pick, kind in steps:
            alive = cluster.state.node_names()
            if op == "join":
                node = kind_of(f"n{joined}", kind)
                joined += 1
                cluster.launched(node.name, "pool", 0.0)
                cluster.add_node(node, 0.0)
            elif not alive:
                continue
            elif op == "leave":
                cluster.delete_node(alive[pick % len(alive)], 0.0)
            elif op == "register":
                name = alive[pick % len(alive)]
                cluster.node_gpus_ready(replace(kind_of(name, kind), name=name), 0.0)
            else:
                cluster.ledger.forget(alive[pick % len(alive)])
        weights = cluster._gpu_weights()
        expected, physical = afresh(cluster)
        assert weights.shape == expected.shape
        assert np.array_equal(weights, expected) and np.array_equal(cluster._physical, physical)


def test_a_node_joining_is_the_only_row_worked_out_again() -> None:
    cluster = InMemoryCluster([kind_of(f"n{k}", 0) for k in range(3)], None, lambda _: [])
    cluster._gpu_weights()
    asked: list[str] = []
    of = cluster.ledger.of

    def counted(name: str) -> Any:
        asked.append(name)
        return of(name)

    cluster.ledger.of = counted  # type: ignore[method-assign]
    cluster.launched("n3", "pool", 0.0)
    cluster.add_node(kind_of("n3", 1), 0.0)
    weights = cluster._gpu_weights()
    assert asked == ["n3"]
    assert weights[cluster.state.index["n3"], cluster.state.res_index["nvidia.com/gpu"]] == 0.25
