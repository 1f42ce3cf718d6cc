"""kube-scheduler v1.34.10 ``noderesources/balanced_allocation_test.go``
TestNodeResourcesBalancedAllocation, ported case by case (each node's Score; a best-effort pod,
which upstream's PreScore skips, scores 0 everywhere here, so the plugin adds nothing either way)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import cases, container, dynamic_scores, make_node, make_pod, req_pod

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.plugins.balanced_allocation import NodeResourcesBalancedAllocation

GPU = "nvidia.com/gpu"
DEFAULT = (("cpu", 1), ("memory", 1))
WITH_GPU = (("cpu", 1), ("memory", 1), (GPU, 1))


def spec_pod(*requests: dict[str, str]) -> Pod:
    """A ``v1.PodSpec`` with one container per request list (no limits beyond what the API needs)."""
    return make_pod([container(r) for r in requests])


CPU_AND_MEMORY = spec_pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})
CPU_ONLY = spec_pod({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})
CPU_AND_MEMORY_AND_GPU = spec_pod(
    {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"}
)


def nodes(cpu1: int, mem1: int, cpu2: int, mem2: int, gpus1: int = 0, gpus2: int = 0) -> list[Node]:
    """noderesources ``makeNode(name, milliCPU, memory, extended)`` twice."""

    def one(name: str, cpu: int, mem: int, gpus: int) -> Node:
        return make_node(name, {"cpu": f"{cpu}m", "memory": str(mem), **({GPU: str(gpus)} if gpus else {})})

    return [one("node1", cpu1, mem1, gpus1), one("node2", cpu2, mem2, gpus2)]


BALANCED: list[Any] = [
    (
        "nothing scheduled, nothing requested, skip in PreScore",
        make_pod(),
        nodes(4000, 10000, 4000, 10000),
        {},
        DEFAULT,
        [0, 0],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        CPU_AND_MEMORY,
        nodes(4000, 10000, 6000, 10000),
        {},
        DEFAULT,
        [87, 100],
    ),
    (
        "resources requested, pods scheduled with resources",
        CPU_AND_MEMORY,
        nodes(10000, 20000, 10000, 20000),
        {"node1": [CPU_ONLY], "node2": [CPU_AND_MEMORY]},
        DEFAULT,
        [82, 95],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        CPU_AND_MEMORY,
        nodes(10000, 20000, 10000, 50000),
        {"node1": [CPU_ONLY], "node2": [CPU_AND_MEMORY]},
        DEFAULT,
        [82, 80],
    ),
    (
        "requested resources at node capacity",
        CPU_ONLY,
        nodes(6000, 10000, 6000, 10000),
        {"node1": [CPU_ONLY], "node2": [CPU_AND_MEMORY]},
        DEFAULT,
        [50, 75],
    ),
    (
        "include scalar resource on a node for balanced resource allocation",
        req_pod({"memory": "0", GPU: "1"}),
        nodes(3500, 40000, 3500, 40000, gpus1=8, gpus2=8),
        {"node1": [CPU_AND_MEMORY_AND_GPU], "node2": [CPU_AND_MEMORY]},
        WITH_GPU,
        [70, 65],
    ),
    (
        "node without the scalar resource should skip the scalar resource",
        CPU_AND_MEMORY,
        nodes(3500, 40000, 3500, 40000, gpus1=8),
        {},
        WITH_GPU,
        [63, 63],
    ),
    (
        "resources requested, pods scheduled with resources if PreScore not called",
        CPU_AND_MEMORY,
        nodes(10000, 20000, 10000, 20000),
        {"node1": [CPU_ONLY], "node2": [CPU_AND_MEMORY]},
        DEFAULT,
        [82, 95],
    ),
]


@pytest.mark.parametrize(
    ("pod", "node_list", "existing", "resources", "want"),
    cases("TestNodeResourcesBalancedAllocation", BALANCED, 5),
)
def test_balanced_allocation_scores(
    pod: Pod,
    node_list: list[Node],
    existing: dict[str, list[Pod]],
    resources: tuple[tuple[str, int], ...],
    want: list[int],
) -> None:
    plugin = NodeResourcesBalancedAllocation(resources)
    assert dynamic_scores(plugin, pod, node_list, existing) == want
