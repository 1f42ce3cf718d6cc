"""kube-scheduler v1.34.10 ``noderesources/requested_to_capacity_ratio_test.go``, ported case by
case: TestRequestedToCapacityRatioScoringStrategy, TestBrokenLinearFunction (``broken_linear_point``
with unscaled scores: ``helper.BuildBrokenLinearFunction`` itself), TestResourceBinPackingSingleExtended
and TestResourceBinPackingMultipleExtended (each node's Score, no normalising)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import cases, dynamic_scores, make_node, make_pod, nodes, pods_on, req_pod

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.plugins.node_resources_fit import (
    NodeResourcesFit,
    ScoringStrategy,
    broken_linear_point,
)

DEFAULT = (("cpu", 1), ("memory", 1))
LEAST_REQUESTED_SHAPE = ((0, 10), (100, 0))
BIN_PACKING_SHAPE = ((0, 0), (100, 1))
SMALL = {"cpu": "4000", "memory": "10000"}

RTCR: list[Any] = [
    (
        "nothing scheduled, nothing requested (default - least requested nodes have priority)",
        make_pod(),
        nodes(SMALL, SMALL),
        pods_on(node1=[None, None]),
        [100, 100],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes (default - least requested nodes "
        "have priority)",
        req_pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}),
        nodes(SMALL, {"cpu": "6000", "memory": "10000"}),
        pods_on(node1=[None, None]),
        [38, 50],
    ),
    (
        "no resources requested, pods scheduled with resources (default - least requested nodes have "
        "priority)",
        make_pod(),
        nodes(SMALL, {"cpu": "6000", "memory": "10000"}),
        pods_on(node1=[{"cpu": "3000", "memory": "5000"}], node2=[{"cpu": "3000", "memory": "5000"}]),
        [38, 50],
    ),
]


@pytest.mark.parametrize(
    ("pod", "node_list", "existing", "want"), cases("TestRequestedToCapacityRatioScoringStrategy", RTCR, 4)
)
def test_requested_to_capacity_ratio_scores(
    pod: Pod, node_list: list[Node], existing: dict[str, list[Pod]], want: list[int]
) -> None:
    plugin = NodeResourcesFit(ScoringStrategy("RequestedToCapacityRatio", DEFAULT, LEAST_REQUESTED_SHAPE))
    assert dynamic_scores(plugin, pod, node_list, existing) == want


BROKEN_LINEAR: list[Any] = [
    (
        "case_0",
        ((10, 1), (90, 9)),
        [
            (-10, 1),
            (0, 1),
            (9, 1),
            (10, 1),
            (15, 1),
            (19, 1),
            (20, 2),
            (89, 8),
            (90, 9),
            (99, 9),
            (100, 9),
            (110, 9),
        ],
    ),
    (
        "case_1",
        ((0, 2), (40, 10), (100, 0)),
        [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
    ),
    (
        "case_2",
        ((0, 2), (40, 2), (100, 2)),
        [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
    ),
]


@pytest.mark.parametrize(("shape", "assertions"), cases("TestBrokenLinearFunction", BROKEN_LINEAR, 2))
def test_broken_linear_function(
    shape: tuple[tuple[int, int], ...], assertions: list[tuple[int, int]]
) -> None:
    assert [(p, broken_linear_point(shape, p, scale=1)) for p, _ in assertions] == assertions


def test_broken_linear_function_truncates_a_falling_segment_toward_zero() -> None:
    """``BuildBrokenLinearFunction`` divides int64s, which Go truncates toward zero: on the scaled
    shape (0, 100) -> (30, 0), utilisation 10 is 100 + (-1000 / 30) = 100 - 33 = 67, not 66."""
    assert broken_linear_point(((0, 10), (30, 0)), 10) == 67
    strategy = ScoringStrategy("RequestedToCapacityRatio", (("cpu", 1),), ((0, 10), (30, 0)))
    node = make_node("node1", {"cpu": "30"})
    assert dynamic_scores(NodeResourcesFit(strategy), req_pod({"cpu": "3"}), [node]) == [67]


def _extended_nodes(first: dict[str, str], second: dict[str, str]) -> list[Node]:
    """noderesources ``makeNode(name, 4000, 10000*1024*1024, extended)``."""
    base = {"cpu": "4000m", "memory": str(10000 * 1024 * 1024)}
    return [make_node("node1", {**base, **first}), make_node("node2", {**base, **second})]


FOO_8, FOO_4 = {"intel.com/foo": "8"}, {"intel.com/foo": "4"}
SINGLE_EXTENDED: list[Any] = [
    ("nothing scheduled, nothing requested", make_pod(), {}, [0, 0]),
    (
        "resources requested, pods scheduled with less resources",
        req_pod({"intel.com/foo": "2"}),
        {},  # one pod without containers, on no node (``st.MakePod().Obj()``): not in any NodeInfo
        [2, 5],
    ),
    (
        "resources requested, pods scheduled with resources, on node with existing pod running ",
        req_pod({"intel.com/foo": "2"}),
        pods_on(node2=[{"intel.com/foo": "2"}]),
        [2, 10],
    ),
    ("resources requested, pods scheduled with more resources", req_pod({"intel.com/foo": "4"}), {}, [5, 10]),
]


@pytest.mark.parametrize(
    ("pod", "existing", "want"), cases("TestResourceBinPackingSingleExtended", SINGLE_EXTENDED, 3)
)
def test_resource_bin_packing_single_extended(
    pod: Pod, existing: dict[str, list[Pod]], want: list[int]
) -> None:
    strategy = ScoringStrategy("RequestedToCapacityRatio", (("intel.com/foo", 1),), BIN_PACKING_SHAPE)
    assert dynamic_scores(NodeResourcesFit(strategy), pod, _extended_nodes(FOO_8, FOO_4), existing) == want


POD_1 = {"intel.com/foo": "2", "intel.com/bar": "2"}
POD_2 = {"intel.com/foo": "4", "intel.com/bar": "2"}
MULTIPLE_EXTENDED: list[Any] = [
    ("nothing scheduled, nothing requested", make_pod(), {}, [0, 0]),
    ("resources requested, pods scheduled with less resources", req_pod(POD_1), {}, [4, 3]),
    (
        "resources requested, pods scheduled with resources, on node with existing pod running ",
        req_pod(POD_1),
        pods_on(node2=[POD_2]),
        [4, 7],
    ),
    ("resources requested, pods scheduled with more resources", req_pod(POD_2), {}, [5, 5]),
]


@pytest.mark.parametrize(
    ("pod", "existing", "want"), cases("TestResourceBinPackingMultipleExtended", MULTIPLE_EXTENDED, 3)
)
def test_resource_bin_packing_multiple_extended(
    pod: Pod, existing: dict[str, list[Pod]], want: list[int]
) -> None:
    strategy = ScoringStrategy(
        "RequestedToCapacityRatio", (("intel.com/foo", 3), ("intel.com/bar", 5)), BIN_PACKING_SHAPE
    )
    node_list = _extended_nodes(
        {"intel.com/foo": "8", "intel.com/bar": "4"}, {"intel.com/foo": "4", "intel.com/bar": "8"}
    )
    assert dynamic_scores(NodeResourcesFit(strategy), pod, node_list, existing) == want
