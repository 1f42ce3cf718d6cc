"""Ring cross-node edges (seed 004) and the communication stretch model."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpufleet.gpus.topology.rings import (
    cross_node_edges,
    ideal_ranks_per_node,
    ring_bandwidth,
    ring_stretch,
)

NVLINK = 450.0  # GB/s per GPU, one direction (H100 NVLink 4: 900 GB/s bidirectional)
NIC = 50.0  # GB/s per 400 Gb/s ConnectX-7


def test_seed_004_cross_node_edges() -> None:
    assert cross_node_edges([8, 8]) == 2
    assert cross_node_edges([4, 4, 8]) == 3
    assert cross_node_edges([6, 5, 5]) == 3
    assert cross_node_edges([16]) == 0
    assert cross_node_edges([8, 0, 8]) == 2
    assert cross_node_edges([]) == 0
    with pytest.raises(ValueError):
        cross_node_edges([-1, 8])


def test_seed_004_stretch() -> None:
    # Two whole nodes is the ideal placement of 16 ranks on 8-GPU nodes.
    assert ring_stretch([8, 8], NVLINK, NIC, 0.3) == 1.0
    assert ring_stretch([16], NVLINK, NIC, 0.3, gpus_per_node=16) == 1.0
    # Spread over three nodes, the 4-rank nodes' 4 NICs carry 8 rings' edges: B halves.
    assert ring_bandwidth([4, 4, 8], NVLINK, NIC, 8) == NIC / 2
    assert ring_stretch([4, 4, 8], NVLINK, NIC, 0.3, gpus_per_node=8) == pytest.approx(1.3)
    # No communication, no stretch.
    assert ring_stretch([4, 4, 8], NVLINK, NIC, 0.0, gpus_per_node=8) == 1.0


def test_splitting_a_one_node_job_costs_the_nvlink_to_network_ratio() -> None:
    stretch = ring_stretch([4, 4], NVLINK, NIC, 0.5, gpus_per_node=8)
    assert stretch == pytest.approx(0.5 + 0.5 * NVLINK / (NIC * 4 / 8))


def test_ideal_ranks() -> None:
    assert ideal_ranks_per_node(16, 8) == [8, 8]
    assert ideal_ranks_per_node(20, 8) == [8, 8, 4]
    assert ideal_ranks_per_node(0, 8) == []


def test_validation() -> None:
    with pytest.raises(ValueError):
        ring_stretch([8, 8], NVLINK, NIC, 1.5)
    with pytest.raises(ValueError):
        ring_stretch([8, 8], 0.0, NIC, 0.5)
    with pytest.raises(ValueError):
        ring_stretch([], NVLINK, NIC, 0.5)
    with pytest.raises(ValueError):
        ring_stretch([9], NVLINK, NIC, 0.5, gpus_per_node=8)


def test_monotone_in_spread_bandwidth_and_comm_fraction() -> None:
    placements = [[8, 8], [8, 4, 4], [4, 4, 4, 4], [4, 4, 4, 2, 2], [2] * 8]
    stretches = [ring_stretch(p, NVLINK, NIC, 0.4, gpus_per_node=8) for p in placements]
    assert stretches == sorted(stretches)
    assert stretches[0] == 1.0 < stretches[-1]
    by_fraction = [ring_stretch([4, 4, 8], NVLINK, NIC, f, gpus_per_node=8) for f in (0.0, 0.2, 0.5, 1.0)]
    assert by_fraction == sorted(by_fraction)
    by_nic = [ring_stretch([4, 4], NVLINK, nic, 0.5, gpus_per_node=8) for nic in (100.0, 50.0, 25.0)]
    assert by_nic == sorted(by_nic)


@given(
    ranks=st.lists(st.integers(1, 8), min_size=1, max_size=6),
    fraction=st.floats(0.0, 1.0),
    intra=st.floats(1.0, 1000.0),
    inter=st.floats(1.0, 1000.0),
)
def test_stretch_properties(ranks: list[int], fraction: float, intra: float, inter: float) -> None:
    stretch = ring_stretch(ranks, intra, inter, fraction, gpus_per_node=8)
    assert stretch >= 1.0
    ideal = ideal_ranks_per_node(sum(ranks), 8)
    assert ring_stretch(ideal, intra, inter, fraction, gpus_per_node=8) == 1.0
    # Taking one rank off the smallest node onto a new 1-rank node never helps.
    if max(ranks) > 1:
        worse = [*ranks, 1]
        worse[worse.index(max(ranks))] -= 1
        assert ring_stretch(worse, intra, inter, fraction, gpus_per_node=8) >= stretch - 1e-12
