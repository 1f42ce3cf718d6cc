"""Claims as kube-scheduler's DynamicResources plugin finds them (1.34.10, ``dynamicresources.go``): a
claim allocated already (its ``status.allocation``) holds its devices for every other pod
(``ListAllAllocatedDevices``), and a template's claim that exists is used whether or not its template
still does (``foreachPodResourceClaim`` reads the claim the pod's status names, never the template)."""

from __future__ import annotations

from gpufleet.gpus.dra.allocator import Allocation
from gpufleet.gpus.dra.state import DraState
from gpufleet.model.dra import (
    AllocationResult,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DraObjects,
    PodResourceClaim,
    ResourceClaim,
    ResourceSlice,
)
from gpufleet.model.pod import Pod

GPU = DeviceClass("gpu", ('device.driver == "gpu.example.com"',))
SLICE = ResourceSlice("n1-gpu", "gpu.example.com", "n1", (Device("gpu-0"),), "n1")
HELD = AllocationResult(
    (DeviceRequestAllocationResult("gpus", "gpu.example.com", "n1", "gpu-0"),), node_name="n1"
)


def claim(name: str, allocation: AllocationResult | None = None) -> ResourceClaim:
    return ResourceClaim("default", name, (DeviceRequest("gpus", GPU.name),), allocation)


def state(*claims: ResourceClaim) -> DraState:
    return DraState(DraObjects({GPU.name: GPU}, [SLICE], {c.key: c for c in claims}))


def test_a_claim_allocated_in_its_status_holds_its_device_for_other_pods() -> None:
    dra = state(claim("mine"), claim("theirs", HELD))
    p = Pod("p", resource_claims=(PodResourceClaim("c", resource_claim_name="mine"),))
    refused = dra.try_node(p, "n1")
    assert isinstance(refused, str) and refused.startswith("cannot allocate all claims")


def test_a_template_claim_that_exists_is_used_without_its_template() -> None:
    dra = state(claim("p-c", HELD))
    p = Pod("p", resource_claims=(PodResourceClaim("c", resource_claim_template_name="gone"),))
    outcome = dra.try_node(p, "n1")
    assert isinstance(outcome, Allocation) and outcome.result_for("default/p-c") == HELD
