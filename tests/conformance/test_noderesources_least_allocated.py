"""kube-scheduler v1.34.10 ``noderesources/least_allocated_test.go`` TestLeastAllocatedScoringStrategy,
ported case by case: NodeResourcesFit's score with ``scoringStrategy.type: LeastAllocated`` (each
node's Score, no normalising), and the weight validation cases through a configuration file."""

from __future__ import annotations

from typing import Any

import pytest
from builders import Skip, cases, dynamic_scores, make_pod, nodes, plugin_args_errors, pods_on, req_pod

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.plugins.node_resources_fit import NodeResourcesFit, ScoringStrategy

TEST = "TestLeastAllocatedScoringStrategy"
EXT = "abc.com/xyz"  # noderesources test_util.go ``extendedRes``
DEFAULT = (("cpu", 1), ("memory", 1))
EXTENDED_SET = (("cpu", 1), ("memory", 1), (EXT, 1))
#: the v1 configuration API defaults empty resources to cpu and memory (SetDefaults_NodeResourcesFitArgs)
NO_RESOURCES = Skip("a v1 configuration defaults empty scoringStrategy.resources to cpu and memory weight 1")
ZERO_WEIGHT = Skip("a v1 configuration defaults a zero weight to 1 (SetDefaults_NodeResourcesFitArgs)")


TWO_CONTAINERS = req_pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})
SMALL = {"cpu": "4000", "memory": "10000"}
LEAST_ALLOCATED: list[Any] = [
    ("nothing scheduled, nothing requested", make_pod(), nodes(SMALL, SMALL), {}, DEFAULT, [100, 100]),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        TWO_CONTAINERS,
        nodes(SMALL, {"cpu": "6000", "memory": "10000"}),
        {},
        DEFAULT,
        [37, 50],
    ),
    ("Resources not set, pods scheduled with error", NO_RESOURCES),
    (
        "no resources requested, pods scheduled",
        make_pod(),
        nodes(SMALL, SMALL),
        pods_on(node1=[None, None], node2=[None, None]),
        DEFAULT,
        [100, 100],
    ),
    (
        "no resources requested, pods scheduled with resources",
        make_pod(),
        nodes({"cpu": "10000", "memory": "20000"}, {"cpu": "10000", "memory": "20000"}),
        pods_on(
            node1=[{"cpu": "3000", "memory": "0"}, {"cpu": "3000", "memory": "0"}],
            node2=[{"cpu": "3000", "memory": "0"}, {"cpu": "3000", "memory": "5000"}],
        ),
        DEFAULT,
        [70, 57],
    ),
    (
        "resources requested, pods scheduled with resources",
        TWO_CONTAINERS,
        nodes({"cpu": "10000", "memory": "20000"}, {"cpu": "10000", "memory": "20000"}),
        pods_on(node1=[{"cpu": "3000", "memory": "0"}], node2=[{"cpu": "3000", "memory": "5000"}]),
        DEFAULT,
        [57, 45],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        TWO_CONTAINERS,
        nodes({"cpu": "10000", "memory": "20000"}, {"cpu": "10000", "memory": "50000"}),
        pods_on(node1=[{"cpu": "3000", "memory": "0"}], node2=[{"cpu": "3000", "memory": "5000"}]),
        DEFAULT,
        [57, 60],
    ),
    (
        "requested resources exceed node capacity",
        req_pod({"cpu": "3000", "memory": "0"}),
        nodes(SMALL, SMALL),
        pods_on(node1=[{"cpu": "3000", "memory": "0"}], node2=[{"cpu": "3000", "memory": "5000"}]),
        DEFAULT,
        [50, 25],
    ),
    (
        "zero node resources, pods scheduled with resources",
        make_pod(),
        nodes({}, {}),
        pods_on(node1=[{"cpu": "3000", "memory": "0"}], node2=[{"cpu": "3000", "memory": "5000"}]),
        DEFAULT,
        [0, 0],
    ),
    (
        "nothing scheduled, resources requested with different weight on CPU and memory, "
        "differently sized nodes",
        TWO_CONTAINERS,
        nodes(SMALL, {"cpu": "6000", "memory": "10000"}),
        {},
        (("memory", 2), ("cpu", 1)),
        [41, 50],
    ),
    ("resource with negative weight", (("memory", -1), ("cpu", 1)), ["scoringStrategy.resources[0].weight"]),
    ("resource with zero weight", ZERO_WEIGHT),
    (
        "resource weight larger than MaxNodeScore",
        (("memory", 1), ("cpu", 101)),
        ["scoringStrategy.resources[1].weight"],
    ),
    (
        "bypass extended resource if the pod does not request",
        TWO_CONTAINERS,
        nodes({"cpu": "6000", "memory": "10000"}, {"cpu": "6000", "memory": "10000", EXT: "4"}),
        {},
        EXTENDED_SET,
        [50, 50],
    ),
    (
        "honor extended resource if the pod requests",
        req_pod({"cpu": "3000", "memory": "5000", EXT: "2"}),
        nodes({"cpu": "6000", "memory": "10000", EXT: "4"}, {"cpu": "6000", "memory": "10000", EXT: "10"}),
        {},
        EXTENDED_SET,
        [50, 60],
    ),
    (
        "if the node doesn't have a resource",
        req_pod({"cpu": "3000", "memory": "4000"}),
        nodes({"cpu": "6000", "memory": "10000"}, {"cpu": "6000", "memory": "10000", EXT: "4"}),
        {},
        ((EXT, 2), ("cpu", 1), ("memory", 1)),
        [55, 55],
    ),
]
SCORES = [row for row in LEAST_ALLOCATED if len(row) != 3]
WEIGHT_ERRORS = [row for row in LEAST_ALLOCATED if len(row) == 3]


@pytest.mark.parametrize(("pod", "node_list", "existing", "resources", "want"), cases(TEST, SCORES, 5))
def test_least_allocated_scores(
    pod: Pod,
    node_list: list[Node],
    existing: dict[str, list[Pod]],
    resources: tuple[tuple[str, int], ...],
    want: list[int],
) -> None:
    plugin = NodeResourcesFit(ScoringStrategy("LeastAllocated", resources))
    assert dynamic_scores(plugin, pod, node_list, existing) == want


@pytest.mark.parametrize(("resources", "fields"), cases(TEST, WEIGHT_ERRORS, 2))
def test_least_allocated_rejects_weights_out_of_range(
    resources: tuple[tuple[str, int], ...], fields: list[str]
) -> None:
    """``ValidateNodeResourcesFitArgs``: a weight outside (0, 100] is a configuration error."""
    strategy = {"type": "LeastAllocated", "resources": [{"name": n, "weight": w} for n, w in resources]}
    errors = plugin_args_errors("NodeResourcesFit", {"scoringStrategy": strategy})
    assert [e.split(": ")[0] for e in errors] == fields
