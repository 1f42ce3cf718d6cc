"""The FGD paper's fragmentation measure (Weng et al., ATC '23, section 3) over whole GPUs."""

from __future__ import annotations

import pytest

from conftest import gpu_node, gpu_pod
from gpufleet.scheduling.cluster_state import ClusterState
from gpufleet.scheduling.fragmentation import fragmentation


def seed_004_state() -> ClusterState:
    """Nodes A, B, C of 8 GPUs with 4 used on A and B, and C full: 8 GPUs free, 4 + 4."""
    state = ClusterState([gpu_node(n) for n in ("a", "b", "c")])
    state.assign(gpu_pod("s4a", 4), "a", 0.0)
    state.assign(gpu_pod("s4b", 4), "b", 0.0)
    state.assign(gpu_pod("t16-0", 8), "c", 0.0)
    return state


def test_free_gpus_no_pending_shape_can_use_are_all_fragmented() -> None:
    frag = fragmentation(seed_004_state(), [gpu_pod("t8", 8), gpu_pod("t16-1", 8)])
    assert (frag.free_gpus, frag.fragmented_gpus, frag.ratio) == (8.0, 8.0, 1.0)
    assert frag.per_node == {"a": 4.0, "b": 4.0}


def test_fragmentation_weights_each_shape_by_its_popularity() -> None:
    """Half the workload needs 8 GPUs (cannot use the 4 + 4), half needs 4 (can): 0.5 x 8 = 4."""
    frag = fragmentation(seed_004_state(), [gpu_pod("big", 8), gpu_pod("small", 4, cpu=8, mem_gi=64)])
    assert frag.fragmented_gpus == pytest.approx(4.0)
    assert frag.ratio == pytest.approx(0.5)
