"""Topology levels from node labels and Kueue-style gang placement."""

from __future__ import annotations

import pytest

from gpufleet.gpus.topology.domains import TopologyLevels, domains, pack, place_gang

BLOCK = "topology.kubernetes.io/block"
RACK = "topology.kubernetes.io/rack"
HOST = "kubernetes.io/hostname"
LEVELS = TopologyLevels((BLOCK, RACK, HOST))


def _labels(layout: dict[str, tuple[str, str]]) -> dict[str, dict[str, str]]:
    return {node: {BLOCK: block, RACK: rack, HOST: node} for node, (block, rack) in layout.items()}


# Two blocks; block b1 has racks r1 (n1, n2) and r2 (n3, n4); block b2 has rack r1 (n5, n6).
LABELS = _labels(
    {
        "n1": ("b1", "r1"),
        "n2": ("b1", "r1"),
        "n3": ("b1", "r2"),
        "n4": ("b1", "r2"),
        "n5": ("b2", "r1"),
        "n6": ("b2", "r1"),
    }
)


def test_levels_and_domains() -> None:
    assert LEVELS.index(RACK) == 1
    with pytest.raises(ValueError):
        LEVELS.index("zone")
    with pytest.raises(ValueError):
        TopologyLevels(())
    with pytest.raises(ValueError):
        TopologyLevels((RACK, RACK))
    racks = domains(LABELS, RACK, LEVELS)
    # Rack r1 of b1 and rack r1 of b2 are different domains.
    assert racks == {("b1", "r1"): ["n1", "n2"], ("b1", "r2"): ["n3", "n4"], ("b2", "r1"): ["n5", "n6"]}
    assert domains(LABELS, RACK) == {("r1",): ["n1", "n2", "n5", "n6"], ("r2",): ["n3", "n4"]}
    unlabelled = {**LABELS, "n7": {HOST: "n7"}}
    assert "n7" not in [n for nodes in domains(unlabelled, BLOCK, LEVELS).values() for n in nodes]


def test_gang_requiring_one_rack_waits_rather_than_spread() -> None:
    free = {"n1": 8, "n2": 0, "n3": 8, "n4": 0, "n5": 8, "n6": 0}
    gang = [8, 8]
    # The cluster has 24 free GPUs, but no rack has 16.
    assert place_gang(gang, free, LABELS, RACK, None, LEVELS) is None
    # Requiring a block: b1 holds both pods.
    assert place_gang(gang, free, LABELS, BLOCK, None, LEVELS) == {0: "n1", 1: "n3"}
    # Preferring a rack falls back to the block.
    assert place_gang(gang, free, LABELS, None, RACK, LEVELS) == {0: "n1", 1: "n3"}


def test_preferred_falls_back_to_spreading_over_blocks() -> None:
    free = {"n1": 8, "n2": 0, "n3": 0, "n4": 0, "n5": 8, "n6": 0}
    assert place_gang([8, 8], free, LABELS, BLOCK, None, LEVELS) is None
    assert place_gang([8, 8], free, LABELS, None, RACK, LEVELS) == {0: "n1", 1: "n5"}
    assert place_gang([8, 8, 8], free, LABELS, None, RACK, LEVELS) is None


def test_best_fit_domain_keeps_the_emptier_rack_whole() -> None:
    free = {"n1": 8, "n2": 8, "n3": 8, "n4": 4, "n5": 8, "n6": 8}
    # A 12-GPU gang fits rack b1/r2 (12 free) exactly: take it, not a whole 16-GPU rack.
    placed = place_gang([8, 4], free, LABELS, RACK, None, LEVELS)
    assert placed == {0: "n3", 1: "n4"}
    # Inside a rack, pods go best fit: the 4-GPU pod lands on the 4-free node.
    assert place_gang([4], free, LABELS, None, HOST, LEVELS) == {0: "n4"}


def test_required_with_preference_inside() -> None:
    free = {"n1": 8, "n2": 8, "n3": 8, "n4": 8, "n5": 4, "n6": 4}
    # Require a block, prefer a host: b2 is the tighter block that fits 8 GPUs, but not on one
    # host, so the preference climbs to its rack.
    assert place_gang([4, 4], free, LABELS, BLOCK, HOST, LEVELS) == {0: "n5", 1: "n6"}
    assert place_gang([8], free, LABELS, BLOCK, HOST, LEVELS) == {0: "n1"}
    with pytest.raises(ValueError):
        place_gang([8], free, LABELS, RACK, BLOCK, LEVELS)


def test_unconstrained_and_edge_cases() -> None:
    free = {"n1": 2, "n2": 2, "n3": 8, "n4": 8, "n5": 8, "n6": 8}
    assert place_gang([], free, LABELS, RACK, None, LEVELS) == {}
    # Best fit level by level: block b2 (16 free) over b1 (20), then one node of it.
    assert place_gang([2, 2], free, LABELS, None, None, LEVELS) == {0: "n5", 1: "n5"}
    # Preferring a host: n1 has exactly 2 free for a lone 2-GPU pod.
    assert place_gang([2], free, LABELS, None, HOST, LEVELS) == {0: "n1"}
    with pytest.raises(ValueError):
        place_gang([-1], free, LABELS, None, None, LEVELS)
    # Nodes without topology labels are not used.
    assert place_gang([8], {"x": 8}, {"x": {HOST: "x"}}, None, HOST, LEVELS) is None


def test_pack_best_fit_decreasing() -> None:
    free = {"a": 8, "b": 4, "c": 2}
    assert pack([2, 4, 8], free, ["a", "b", "c"]) == {2: "a", 1: "b", 0: "c"}
    assert pack([8, 8], free, ["a", "b", "c"]) is None
    assert pack([0], free, ["a"]) == {0: "a"}
