"""cluster-autoscaler 1.34's own table for its GPU custom-resources processor (tag
``cluster-autoscaler-1.34.5``: ``cluster-autoscaler/processors/customresources/gpu_processor_test.go``,
``TestFilterOutNodesWithUnreadyResources``), case by case: which nodes
``FilterOutNodesWithUnreadyResources`` leaves Ready and which it replaces with a not-Ready copy
(``GetUnreadyNodeCopy``, reason ``ResourceUnready``, the copy's Ready condition's ``lastTransitionTime``
the node's ``creationTimestamp``).

gpufleet's processor is ``control.cluster_autoscaler_health.resource_unready`` (and ``unready_nodes``,
which adds the nodes whose Ready condition is not True): upstream's GPU label is a node group whose template
has device-plugin resources, and the nodes it looks at are the group's launches that registered
(``LaunchStatus.registered_s``, the case's ``CreationTimestamp``), the only nodes of gpufleet whose GPUs are
not allocatable while their kubelet is Ready. Each case is one such node; the cases' Ready condition
``lastTransitionTime`` (10 minutes after creation) is not read by the processor."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from gpufleet.cluster.state import ClusterState
from gpufleet.control.cluster_autoscaler_health import resource_unready, unready_nodes
from gpufleet.model.node import Node
from gpufleet.model.simulation import NodePool

GPU = "nvidia.com/gpu"
START = 0.0  # the nodes' CreationTimestamp

DIRECTX = (
    "microsoft.com/directx is not a resource gpufleet models: its GPUs are the NVIDIA device plugin's "
    "(nvidia.com/gpu, nvidia.com/mig-*) or DRA devices"
)


@dataclass
class Launch:
    for_pods: tuple[str, ...] = ()
    warm: bool = False
    gpu_ready_after_s: float | None = None
    registered_s: float | None = START


@dataclass
class Group:
    name: str
    pool: NodePool
    launching: dict[str, Launch] = field(default_factory=dict)


@dataclass
class Port:
    """The reads the processor makes: the cluster's nodes, the groups and their launches, the nodes whose
    Ready condition is not True."""

    state: ClusterState
    node_groups: dict[str, Group]
    unready: dict[str, float] = field(default_factory=dict)

    def unready_nodes(self) -> dict[str, float]:
        return self.unready


def gpu_template(gpus: int | None) -> Node:
    """The group's template: ``gpus`` device-plugin GPUs (upstream's GPU label), None for none (no label)."""
    capacity = {"cpu": 8000, "pods": 110} | ({GPU: gpus} if gpus is not None else {})
    return Node("template", capacity=capacity)


def node(name: str, allocatable: dict[str, int]) -> Node:
    return Node(name, capacity={"cpu": 8000, "pods": 110, **allocatable})


@dataclass(frozen=True)
class Case:
    name: str
    template_gpus: int | None  # the group's template's GPUs: None where the node has no GPU label
    allocatable: dict[str, int]  # the node's device-plugin resources allocatable
    ready_condition: bool  # its Ready condition True
    expected_ready: bool


CASES = [
    pytest.param(Case("nodeGpuReady", 1, {GPU: 1}, True, True), id="nodeGpuReady"),
    pytest.param(Case("nodeGpuUnready", 1, {GPU: 0}, True, False), id="nodeGpuUnready"),
    pytest.param(
        Case("nodeDirectXReady", 1, {}, True, True),
        id="nodeDirectXReady",
        marks=pytest.mark.skip(reason=DIRECTX),
    ),
    pytest.param(
        Case("nodeDirectXUnready", 1, {}, True, False),
        id="nodeDirectXUnready",
        marks=pytest.mark.skip(reason=DIRECTX),
    ),
    pytest.param(Case("nodeGpuUnready2", 1, {}, True, False), id="nodeGpuUnready2"),
    pytest.param(Case("nodeNoGpuReady", None, {}, True, True), id="nodeNoGpuReady"),
    pytest.param(Case("nodeNoGpuUnready", None, {}, False, False), id="nodeNoGpuUnready"),
    # gpuExposedViaDra: a pool that publishes its GPUs as ResourceSlices has no device-plugin resource in its
    # template (gpufleet's stand-in for GCE's DRA GPU label): its nodes are Ready
    pytest.param(Case("nodeGPUViaDra", None, {}, True, True), id="nodeGPUViaDra"),
]


@pytest.mark.parametrize("case", CASES)
def test_filter_out_nodes_with_unready_resources(case: Case) -> None:
    """``TestFilterOutNodesWithUnreadyResources``: the node is in the ready list (not among gpufleet's
    not-Ready nodes) exactly when expected; a not-Ready one is not Ready since its creation."""
    pool = NodePool("g", gpu_template(case.template_gpus), min=0, max=10)
    group = Group("g", pool, {case.name: Launch()})
    port = Port(ClusterState([node(case.name, case.allocatable)]), {"g": group})
    if not case.ready_condition:
        port.unready[case.name] = START
    unready = unready_nodes(port).nodes  # type: ignore[arg-type]
    assert (case.name not in unready) == case.expected_ready
    if not case.expected_ready:
        assert unready[case.name] == START
    if case.ready_condition:  # the processor's own verdict (the others were not Ready before it)
        assert (case.name in resource_unready(port)) == (not case.expected_ready)  # type: ignore[arg-type]


def test_a_launch_not_registered_yet_is_not_a_node_at_all() -> None:
    """The processor reads the registered nodes only (``allNodes``, ``readyNodes``): a launch that has not
    joined the cluster is neither Ready nor not Ready (``updateReadinessStats`` counts it unregistered)."""
    pool = NodePool("g", gpu_template(1), min=0, max=10)
    group = Group("g", pool, {"g-0": Launch(registered_s=None)})
    port = Port(ClusterState([]), {"g": group})
    assert unready_nodes(port).nodes == {}  # type: ignore[arg-type]
