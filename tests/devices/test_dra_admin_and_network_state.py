"""The cluster's DRA state with admin-access claims (DRAAdminAccess: beta, on in 1.34) and
network-attached devices (a ResourceSlice's ``nodeSelector``): an admin claim's devices block nobody
but count in cluster-autoscaler's utilisation; a network-attached pool serves the nodes its selector
selects, and a claim allocated from it admits consumers only on those nodes."""

from __future__ import annotations

from gpufleet.gpus.dra.allocator import NOT_AVAILABLE, Allocation
from gpufleet.gpus.dra.state import DraState
from gpufleet.model.dra import (
    ALL,
    Device,
    DeviceClass,
    DeviceID,
    DeviceRequest,
    DraObjects,
    PodResourceClaim,
    ResourceClaim,
    ResourceSlice,
)
from gpufleet.model.dra_slices import slices_for_node
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod, Requirement, SelectorTerm

GPU_CLASS = DeviceClass("gpu.nvidia.com", ('device.driver == "gpu.nvidia.com"',))
NIC_CLASS = DeviceClass("fabric", ('device.driver == "fabric.example.com"',))
NODE_A = slices_for_node("node-a", 4, "NVIDIA H100 80GB HBM3", 80 * 2**30)
RACK_1 = SelectorTerm((Requirement("rack", "In", ("r1",)),))
FABRIC = ResourceSlice(
    "fabric-r1",
    "fabric.example.com",
    "fabric-r1",
    (Device("nic-0"), Device("nic-1")),
    node_selector=(RACK_1,),
)
ON_R1, ON_R2 = Node("node-a", {"rack": "r1"}), Node("node-b", {"rack": "r2"})


def pod(name: str, claim: str) -> Pod:
    return Pod(name, resource_claims=(PodResourceClaim("c", resource_claim_name=claim),))


def state(*claims: ResourceClaim) -> DraState:
    classes = {c.name: c for c in (GPU_CLASS, NIC_CLASS)}
    return DraState(DraObjects(classes, [NODE_A, FABRIC], {c.key: c for c in claims}))


WATCH = ResourceClaim(
    "default", "watch", (DeviceRequest("all", GPU_CLASS.name, (), ALL, 0, admin_access=True),)
)
TRAIN = ResourceClaim("default", "train", (DeviceRequest("gpus", GPU_CLASS.name, count=4),))


def test_an_admin_claim_on_every_gpu_blocks_no_other_claim_yet_counts_in_utilisation() -> None:
    """cluster-autoscaler's ``CalculateDynamicResourceUtilization`` counts every result of the node's
    claims (``groupAllocatedDevices`` has no admin-access case): the node is fully utilised."""
    dra = state(WATCH, TRAIN)
    assert dra.place(pod("monitor", "watch"), "node-a") is None
    assert dra.pool_utilization("node-a") == 1.0
    assert dra.place(pod("trainer", "train"), "node-a") is None
    assert dra.allocated["default/watch"].devices == dra.allocated["default/train"].devices
    assert dra.pool_utilization("node-a") == 1.0


def test_an_admin_claim_gets_devices_other_claims_hold_but_no_tainted_one() -> None:
    dra = state(WATCH, TRAIN)
    assert dra.place(pod("trainer", "train"), "node-a") is None
    dra.tainted.add(DeviceID("gpu.nvidia.com", "node-a", "gpu-3"))
    outcome = dra.try_node(pod("monitor", "watch"), "node-a")
    assert isinstance(outcome, str) and "1 of the 4 matching devices are already allocated" in outcome
    dra.tainted.clear()
    outcome = dra.try_node(pod("monitor", "watch"), "node-a")
    assert isinstance(outcome, Allocation) and all(
        r.admin_access for r in outcome.result_for(WATCH.key).results
    )


def test_a_network_attached_pool_serves_only_the_nodes_its_selector_selects() -> None:
    nics = ResourceClaim("default", "nics", (DeviceRequest("nic", NIC_CLASS.name, count=2),))
    dra = state(nics)
    refused = dra.try_node(pod("p", "nics"), ON_R2)
    assert isinstance(refused, str) and refused.startswith("cannot allocate all claims")
    assert dra.try_node(pod("p", "nics"), "node-a") == refused  # a bare name has no rack label
    assert dra.place(pod("p", "nics"), ON_R1) is None
    allocation = dra.allocated["default/nics"]
    assert allocation.node_name is None and allocation.node_selector == (RACK_1,)
    assert dra.try_node(pod("q", "nics"), ON_R2) == (
        f"{NOT_AVAILABLE}: claim default/nics is allocated for the nodes its nodeSelector selects"
    )
    assert isinstance(dra.try_node(pod("q", "nics"), Node("node-c", {"rack": "r1"})), Allocation)
