"""The cluster's node set (``ClusterState``): node names are unique (a node is an API object named in
its cluster), and the count of active nodes follows the nodes that join and leave."""

from __future__ import annotations

import pytest

from conftest import gpu_node
from gpufleet.cluster.state import ClusterState


def test_two_nodes_of_one_name_are_refused_in_one_batch_as_one_after_the_other() -> None:
    with pytest.raises(ValueError, match="node a already exists"):
        ClusterState([gpu_node("a"), gpu_node("b"), gpu_node("a")])
    state = ClusterState([gpu_node("a")])
    with pytest.raises(ValueError, match="node a already exists"):
        state.add_node(gpu_node("a"))


def test_the_active_count_follows_nodes_joining_and_leaving() -> None:
    state = ClusterState([gpu_node(n) for n in ("a", "b", "c")])
    state.remove_node("b")
    state.add_node(gpu_node("d"))
    state.add_node(gpu_node("b"))  # (a name may come back once its node left: a new row)
    assert state.size_active == int(state.active.sum()) == 4 and state.size == 5
