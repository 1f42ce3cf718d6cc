"""``matchAttribute`` constraints in gpufleet's structured allocator beyond upstream's table
(``tests/conformance/test_dra_match_attribute.py``): the search does not take devices that differ in
the constrained attribute for interchangeable ones, values compare with their type, and the reason."""

from __future__ import annotations

from gpufleet.gpus.dra.allocator import Allocation, AllocationError, allocate_on_node
from gpufleet.model.dra import (
    AllocationResult,
    AttributeValue,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)

MIG = DeviceClass("mig.nvidia.com", ('device.driver == "gpu.nvidia.com"',))
PARENT = "gpu.nvidia.com/parentUUID"


def node_slice(*parents: AttributeValue | None) -> ResourceSlice:
    devices = tuple(
        Device(f"mig-{i}", {} if parent is None else {"parentUUID": parent})
        for i, parent in enumerate(parents)
    )
    return ResourceSlice("node-a-mig", "gpu.nvidia.com", "node-a", devices, node_name="node-a")


def mig_claim(*counts: int) -> ResourceClaim:
    requests = tuple(DeviceRequest(f"r{i}", MIG.name, count=count) for i, count in enumerate(counts))
    return ResourceClaim("default", "migs", requests, constraints=(DeviceConstraint((), PARENT),))


def allocate(claim: ResourceClaim, resource_slice: ResourceSlice) -> Allocation | str:
    return allocate_on_node("node-a", [claim], {MIG.name: MIG}, [resource_slice])


def test_devices_on_another_parent_gpu_are_tried_after_the_first_parent_fails() -> None:
    """The first device's parent has no room for the second request: the search backtracks to a
    device that fits the same requests but sits on another GPU."""
    result = allocate(mig_claim(1, 2), node_slice("GPU-A", "GPU-B", "GPU-B", "GPU-B"))
    assert isinstance(result, Allocation)
    assert [d.device for d in result.devices] == ["mig-1", "mig-2", "mig-3"]


def test_a_device_without_the_attribute_cannot_serve_a_constrained_request() -> None:
    result = allocate(mig_claim(1), node_slice(None, "GPU-B"))
    assert isinstance(result, Allocation) and [d.device for d in result.devices] == ["mig-1"]


def test_values_of_different_types_do_not_match() -> None:
    """matchAttributeConstraint.add compares a bool with a bool only: true is not 1."""
    assert isinstance(allocate(mig_claim(2), node_slice(True, 1)), str)


def test_the_reason_names_the_constraint() -> None:
    assert allocate(mig_claim(2), node_slice("GPU-A", "GPU-B")) == (
        "cannot allocate all claims: claim default/migs, request r0: no free matching devices share one "
        "value of gpu.nvidia.com/parentUUID (constraints: matchAttribute)"
    )


def test_a_claim_made_from_a_template_keeps_its_constraints() -> None:
    constraint = DeviceConstraint(("a",), PARENT)
    template = ResourceClaimTemplate("default", "t", (DeviceRequest("a", MIG.name),), (constraint,))
    assert template.claim_for("pod", "migs").constraints == (constraint,)


def test_all_devices_a_constraint_turns_away_is_an_error() -> None:
    """``allocateDevice`` with ``must`` (allocationMode All): the first device, in order, that the
    constraint turns away makes the allocation an error; a device in use before it only fails."""
    everything = ResourceClaim(
        "default",
        "migs",
        (DeviceRequest("all", MIG.name, allocation_mode="All", count=0),),
        constraints=(DeviceConstraint((), PARENT),),
    )
    outcome = allocate(everything, node_slice("GPU-A", "GPU-A", "GPU-B", None))
    assert isinstance(outcome, AllocationError)  # upstream's error, whole: the Filter's Error status
    assert outcome == (
        "claim default/migs, request all: cannot add device "
        "gpu.nvidia.com/node-a/mig-2 because a claim constraint would not be satisfied"
    )
    mig_slice = node_slice("GPU-A", "GPU-B", "GPU-A")
    for held, error in (("mig-0", False), ("mig-2", True)):
        result = DeviceRequestAllocationResult("r", "gpu.nvidia.com", "node-a", held)
        allocated = {"other/x": AllocationResult((result,))}
        reason = allocate_on_node("node-a", [everything], {MIG.name: MIG}, [mig_slice], allocated)
        assert (
            isinstance(reason, str) and ("cannot add device gpu.nvidia.com/node-a/mig-1" in reason) == error
        )
