"""kube-scheduler v1.34.10 ``noderesources/most_allocated_test.go`` TestMostAllocatedScoringStrategy,
ported case by case: NodeResourcesFit's score with ``scoringStrategy.type: MostAllocated`` (each
node's Score, no normalising), and the weight validation cases through a configuration file."""

from __future__ import annotations

from typing import Any

import pytest
from builders import (
    Skip,
    cases,
    container,
    dynamic_scores,
    make_pod,
    nodes,
    plugin_args_errors,
    pods_on,
    req_pod,
)

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.plugins.node_resources_fit import NodeResourcesFit, ScoringStrategy

TEST = "TestMostAllocatedScoringStrategy"
EXT = "abc.com/xyz"  # noderesources test_util.go ``extendedRes``
DEFAULT = (("cpu", 1), ("memory", 1))
EXTENDED_SET = (("cpu", 1), ("memory", 1), (EXT, 1))
NO_RESOURCES = Skip("a v1 configuration defaults empty scoringStrategy.resources to cpu and memory weight 1")
ZERO_WEIGHT = Skip("a v1 configuration defaults a zero weight to 1 (SetDefaults_NodeResourcesFitArgs)")

TWO_CONTAINERS = req_pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})
SMALL = {"cpu": "4000", "memory": "10000"}
#: ``st.MakePod().Container("container")``: a container without requests (the non-zero defaults count)
BARE = make_pod([container()])
MOST_ALLOCATED: list[Any] = [
    ("nothing scheduled, nothing requested", make_pod(), nodes(SMALL, SMALL), {}, DEFAULT, [0, 0]),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        TWO_CONTAINERS,
        nodes(SMALL, {"cpu": "6000", "memory": "10000"}),
        {},
        DEFAULT,
        [62, 50],
    ),
    ("Resources not set, pods scheduled with error", NO_RESOURCES),
    (
        "no resources requested, pods scheduled with resources",
        make_pod(),
        nodes({"cpu": "10000", "memory": "20000"}, {"cpu": "10000", "memory": "20000"}),
        pods_on(
            node1=[{"cpu": "3000", "memory": "0"}, {"cpu": "3000", "memory": "0"}],
            node2=[{"cpu": "3000", "memory": "0"}, {"cpu": "3000", "memory": "5000"}],
        ),
        DEFAULT,
        [30, 42],
    ),
    (
        "resources requested, pods scheduled with resources",
        TWO_CONTAINERS,
        nodes({"cpu": "10000", "memory": "20000"}, {"cpu": "10000", "memory": "20000"}),
        pods_on(node1=[{"cpu": "3000", "memory": "0"}], node2=[{"cpu": "3000", "memory": "5000"}]),
        DEFAULT,
        [42, 55],
    ),
    (
        "resources requested equal node capacity",
        req_pod({"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
        nodes({"cpu": "5000", "memory": "10000"}, {"cpu": "10000", "memory": "9000"}),
        {},
        DEFAULT,
        [95, 75],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        TWO_CONTAINERS,
        nodes(SMALL, {"cpu": "6000", "memory": "10000"}),
        {},
        (("memory", 2), ("cpu", 1)),
        [58, 50],
    ),
    (
        "no resources requested, pods scheduled, nonzero request for resource",
        BARE,
        nodes({"cpu": "250m", "memory": "1000Mi"}, {"cpu": "250m", "memory": "1000Mi"}),
        {"node1": [BARE, BARE]},
        DEFAULT,
        [80, 30],
    ),
    ("resource with negative weight", (("memory", -1), ("cpu", 1)), ["scoringStrategy.resources[0].weight"]),
    ("resource with zero weight", ZERO_WEIGHT),
    ("resource weight larger than MaxNodeScore", (("memory", 101),), ["scoringStrategy.resources[0].weight"]),
    (
        "bypass extended resource if the pod does not request",
        TWO_CONTAINERS,
        nodes({"cpu": "6000", "memory": "10000"}, {"cpu": "6000", "memory": "10000", EXT: "4"}),
        {},
        EXTENDED_SET,
        [50, 50],
    ),
    (
        "honor extended resource if the pod request",
        req_pod({"cpu": "3000", "memory": "5000", EXT: "2"}),
        nodes({"cpu": "6000", "memory": "10000", EXT: "4"}, {"cpu": "6000", "memory": "10000", EXT: "10"}),
        {},
        EXTENDED_SET,
        [50, 40],
    ),
    (
        "if the node doesn't have a resource",
        req_pod({"cpu": "3000", "memory": "4000"}),
        nodes({"cpu": "6000", "memory": "10000"}, {"cpu": "6000", "memory": "10000", EXT: "4"}),
        {},
        ((EXT, 2), ("cpu", 1), ("memory", 1)),
        [45, 45],
    ),
]
SCORES = [row for row in MOST_ALLOCATED if len(row) != 3]
WEIGHT_ERRORS = [row for row in MOST_ALLOCATED if len(row) == 3]


@pytest.mark.parametrize(("pod", "node_list", "existing", "resources", "want"), cases(TEST, SCORES, 5))
def test_most_allocated_scores(
    pod: Pod,
    node_list: list[Node],
    existing: dict[str, list[Pod]],
    resources: tuple[tuple[str, int], ...],
    want: list[int],
) -> None:
    plugin = NodeResourcesFit(ScoringStrategy("MostAllocated", resources))
    assert dynamic_scores(plugin, pod, node_list, existing) == want


@pytest.mark.parametrize(("resources", "fields"), cases(TEST, WEIGHT_ERRORS, 2))
def test_most_allocated_rejects_weights_out_of_range(
    resources: tuple[tuple[str, int], ...], fields: list[str]
) -> None:
    """``ValidateNodeResourcesFitArgs``: a weight outside (0, 100] is a configuration error."""
    strategy = {"type": "MostAllocated", "resources": [{"name": n, "weight": w} for n, w in resources]}
    errors = plugin_args_errors("NodeResourcesFit", {"scoringStrategy": strategy})
    assert [e.split(": ")[0] for e in errors] == fields
