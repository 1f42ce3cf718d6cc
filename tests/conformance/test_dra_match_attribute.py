"""Port of the ``matchAttribute`` cases of the structured allocator's test table
(k8s.io/dynamic-resource-allocation v0.34.10, structured/internal/allocatortesting/allocator_testing.go,
``TestAllocator``), each test named after its upstream case. Upstream's objects: class ``class-a``
selects ``device.driver == "driver-a"``; slice ``slice-1`` of pool ``pool-1`` on ``node-1``;
constraints name ``driver-a/<attribute>`` and the devices carry the bare attribute. ``expectResults:
nil`` (no allocation) is gpufleet's ``cannot allocate all claims``."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from gpufleet.gpus.dra.allocator import CANNOT_ALLOCATE, Allocation, allocate_on_node
from gpufleet.model.dra import (
    ALL,
    AttributeValue,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    ResourceClaim,
    ResourceSlice,
    VersionValue,
)

CLASS_A = DeviceClass("class-a", ('device.driver == "driver-a"',))
NON_EXISTENT = "driver-a/NonExistentAttribute"
BOOL, STRING, VERSION, INT = (
    f"driver-a/{a}" for a in ("boolAttribute", "stringAttribute", "driverVersion", "numa")
)


def request(name: str, count: int = 1, mode: str = "ExactCount") -> DeviceRequest:
    return DeviceRequest(name, CLASS_A.name, (), mode, count)


def claim(constraints: tuple[DeviceConstraint, ...], *requests: DeviceRequest) -> ResourceClaim:
    return ResourceClaim("default", "claim-0", requests, constraints=constraints)


def match(attribute: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(requests, attribute)


def allocate(claim_: ResourceClaim, *devices: Mapping[str, AttributeValue]) -> Allocation | str:
    slice_ = ResourceSlice(
        "slice-1",
        "driver-a",
        "pool-1",
        tuple(Device(f"device-{i}", attributes) for i, attributes in enumerate(devices, start=1)),
        node_name="node-1",
    )
    return allocate_on_node("node-1", [claim_], {CLASS_A.name: CLASS_A}, [slice_])


def picked(result: Allocation | str) -> list[tuple[str, str]]:
    assert isinstance(result, Allocation), result
    return [(r.request, r.device) for r in result.result_for("default/claim-0").results]


def failed(result: Allocation | str) -> bool:
    return isinstance(result, str) and result.startswith(CANNOT_ALLOCATE)


ALL_FOUR: dict[str, AttributeValue] = {
    "driverVersion": VersionValue("1.0.0"),
    "numa": 1,
    "stringAttribute": "stringAttributeValue",
    "boolAttribute": True,
}


def test_with_constraint() -> None:
    constraints = tuple(match(a) for a in (INT, VERSION, STRING, BOOL))
    result = allocate(claim(constraints, request("req-0"), request("req-1")), ALL_FOUR, ALL_FOUR)
    assert picked(result) == [("req-0", "device-1"), ("req-1", "device-2")]


def test_with_constraint_non_existent_attribute() -> None:
    assert failed(allocate(claim((match(NON_EXISTENT),), request("req-0")), {}))


def test_with_constraint_not_matching_int_attribute() -> None:
    assert failed(allocate(claim((match(INT),), request("req-0", 2)), {"numa": 1}, {"numa": 2}))


def test_with_constraint_not_matching_int_attribute_all_devices() -> None:
    # upstream: an error "cannot add device driver-a/pool-1/device-2 because a claim constraint would
    # not be satisfied"; the claim is not allocated either way
    result = allocate(claim((match(INT),), request("req-0", 0, ALL)), {"numa": 1}, {"numa": 2})
    assert failed(result) and "asks for all devices, but no free matching devices share" in str(result)


def test_with_constraint_not_matching_string_attribute() -> None:
    devices = ({"stringAttribute": "stringAttributeValue"}, {"stringAttribute": "stringAttributeValue2"})
    assert failed(allocate(claim((match(STRING),), request("req-0", 2)), *devices))


def test_with_constraint_not_matching_bool_attribute() -> None:
    devices = ({"boolAttribute": True}, {"boolAttribute": False})
    assert failed(allocate(claim((match(BOOL),), request("req-0", 2)), *devices))


def test_with_constraint_not_matching_version_attribute() -> None:
    devices = ({"driverVersion": VersionValue("1.0.0")}, {"driverVersion": VersionValue("2.0.0")})
    assert failed(allocate(claim((match(VERSION),), request("req-0", 2)), *devices))


def test_with_constraint_for_request() -> None:
    devices = ({"driverVersion": VersionValue("1.0.0")}, {"driverVersion": VersionValue("2.0.0")})
    result = allocate(claim((match(VERSION, "req-0"),), request("req-0"), request("req-1")), *devices)
    assert picked(result) == [("req-0", "device-1"), ("req-1", "device-2")]


def test_with_constraint_for_request_retry() -> None:
    devices: tuple[dict[str, AttributeValue], ...] = (
        {"driverVersion": VersionValue("1.0.0"), "stringAttribute": "a"},
        {"driverVersion": VersionValue("2.0.0"), "stringAttribute": "b"},
        {"driverVersion": VersionValue("3.0.0"), "stringAttribute": "b"},
    )
    constraints = (match(VERSION, "req-0"), match(STRING))
    result = allocate(claim(constraints, request("req-0"), request("req-1")), *devices)
    assert picked(result) == [("req-0", "device-2"), ("req-1", "device-3")]


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        (
            "prioritized-list-subrequests-with-constraints-ref-parent-request",
            "firstAvailable is not modelled",
        ),
        ("prioritized-list-subrequests-with-constraints-ref-sub-request", "firstAvailable is not modelled"),
        (
            "consumable-capacity-with-multi-allocatable-device-backtrack",
            "consumable capacity is not modelled",
        ),
    ],
)
def test_match_attribute_with_features_gpufleet_does_not_model(case: str, reason: str) -> None:
    pytest.skip(f"allocator_testing.go {case}: {reason}")
