"""Port of the structured allocator's test table (k8s.io/dynamic-resource-allocation v0.34.10,
structured/internal/allocatortesting/allocator_testing.go, ``TestAllocator``, as
structured/internal/stable runs it), each test named after its upstream case; the ``matchAttribute``
cases are in ``test_dra_match_attribute.py``. (Not ``test_dra_allocator.py``: tests/devices has that
basename, and pytest's default import mode needs unique ones.) Objects are upstream's
(``dra_builders``): class ``class-a`` selects driver ``driver-a``, ``class-b`` driver ``driver-b``;
slices ``slice-1`` of pool ``pool-1`` on ``node-1`` unless a case says otherwise.

``expectResults: nil`` without an error is gpufleet's ``cannot allocate all claims`` (:func:`failed`);
``expectError`` is the same with upstream's words in the reason (:func:`error`). gpufleet runs the
DynamicResources Filter for one node by name, so cases without a node or slices run on ``node-1``
with no slices. Cases needing what gpufleet does not model are skipped with the reason: features
behind gates off by default in Kubernetes 1.34 (DRAPartitionableDevices, DRADeviceTaints,
DRAConsumableCapacity, DRADeviceBindingConditions: alpha), a feature on by default that gpufleet
refuses when reading manifests, a beta feature turned off (gpufleet models no feature gates), and
objects gpufleet cannot express. Prioritized lists (``firstAvailable``, DRAPrioritizedList, beta and on in
1.34), admin access (``adminAccess``, DRAAdminAccess, beta and on in 1.34) and network-attached devices
(a slice's ``nodeSelector``) are modelled: their cases run.
"""

from __future__ import annotations

import pytest
from dra_builders import (
    CLASS_A,
    CLASS_B,
    DRIVER_A,
    DRIVER_B,
    NODE_1,
    NODE_2,
    REGION_2,
    admin_results,
    all_devices,
    allocate,
    claim,
    error,
    failed,
    label_selector,
    local_selector,
    network_slice,
    node_of,
    node_slice,
    numbered_devices,
    one_device,
    picked,
    prioritized,
    request,
    selector_of,
)

from gpufleet.gpus.dra.allocator import Allocation
from gpufleet.model.dra import ALLOCATION_RESULTS_MAX_SIZE, Device, DeviceClass, DeviceID, DeviceRequest

R0, R1, R2 = "req-0", "req-1", "req-2"
A1, B1 = (DRIVER_A, "pool-1"), (DRIVER_B, "pool-1")  # driver and pool of most devices here
SLICE_A = one_device("slice-1", NODE_1, "pool-1", DRIVER_A)
SLICE_B = one_device("slice-1", NODE_1, "pool-1", DRIVER_B)
AT_LEAST = 'device.capacity["driver-a"].memory.compareTo(quantity("{}")) >= 0'
CLAIM_1 = "default/claim-1"


def memory_devices(*sizes: tuple[str, int]) -> tuple[Device, ...]:
    return tuple(Device(name, capacity={"memory": gib * 2**30}) for name, gib in sizes)


# --- basic allocation ---------------------------------------------------------------------------


def test_empty() -> None:
    result = allocate([], [])
    assert isinstance(result, Allocation) and result.claims == ()


def test_simple() -> None:
    result = allocate([claim(request(R0))], [SLICE_A])
    assert picked(result) == [(R0, *A1, "device-1")] and node_of(result) == NODE_1


def test_other_node() -> None:
    slices = [
        one_device("slice-1", NODE_1, "pool-1", DRIVER_B),
        one_device("slice-2", NODE_2, "pool-2", DRIVER_A),
    ]
    result = allocate([claim(request(R0))], slices, node=NODE_2)
    assert picked(result) == [(R0, DRIVER_A, "pool-2", "device-1")] and node_of(result) == NODE_2


def test_small_and_large() -> None:
    requests = (request(R0, 1, AT_LEAST.format("1Gi")), request(R1, 1, AT_LEAST.format("2Gi")))
    devices = memory_devices(("device-1", 1), ("device-2", 2))
    result = allocate([claim(*requests)], [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices)])
    assert picked(result) == [(R0, *A1, "device-1"), (R1, *A1, "device-2")]


def test_small_and_large_backtrack_requests() -> None:
    requests = (request(R0, 1, AT_LEAST.format("1Gi")), request(R1, 1, AT_LEAST.format("2Gi")))
    devices = memory_devices(("device-2", 2), ("device-1", 1))  # the large one listed first
    result = allocate([claim(*requests)], [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices)])
    assert picked(result) == [(R0, *A1, "device-1"), (R1, *A1, "device-2")]


def test_small_and_large_backtrack_claims() -> None:
    claims = [
        claim(request(R0, 1, AT_LEAST.format("1Gi"))),
        claim(request(R1, 1, AT_LEAST.format("2Gi")), name="claim-1"),
    ]
    devices = memory_devices(("device-2", 2), ("device-1", 1))
    result = allocate(claims, [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices)])
    assert picked(result) == [(R0, *A1, "device-1")]
    assert picked(result, CLAIM_1) == [(R1, *A1, "device-2")]


def test_devices_split_across_different_slices() -> None:
    slices = [SLICE_A, one_device("slice-2", NODE_1, "pool-2", DRIVER_A)]
    result = allocate([claim(request(R0, 2))], slices)
    assert picked(result) == [(R0, *A1, "device-1"), (R0, DRIVER_A, "pool-2", "device-1")]


def test_obsolete_slice() -> None:
    obsolete = node_slice("slice-1-obsolete", NODE_1, "pool-1", DRIVER_A, Device("device-0"), generation=1)
    newer = node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, Device("device-1"), generation=2)
    # upstream's two slices list the same device-1; device-0 here tells which slice served it
    assert picked(allocate([claim(request(R0))], [obsolete, newer])) == [(R0, *A1, "device-1")]


def test_duplicate_slice() -> None:
    slices = [
        node_slice(name, NODE_1, "pool-1", DRIVER_A, Device("device-1"), slice_count=2)
        for name in ("slice-1", "slice-1-2")
    ]
    assert error(
        allocate([claim(request(R0))], slices), "pool pool-1 is invalid: duplicate device name device-1"
    )


def test_no_slices() -> None:
    assert failed(allocate([claim(request(R0))], []))


def test_not_enough_suitable_devices() -> None:
    # upstream passes two claims both named claim-0; gpufleet keys claims by namespace/name and
    # would take them for one, so the second lives in another namespace
    claims = [claim(request(R0)), claim(request(R1), namespace="other")]
    assert failed(allocate(claims, [SLICE_A]))


def test_no_classes() -> None:
    result = allocate([claim(request(R0))], [SLICE_A], classes=())
    assert error(result, "could not retrieve device class class-a")


def test_unknown_class() -> None:
    result = allocate([claim(request(R0, class_name="unknown-class"))], [SLICE_A])
    assert error(result, "could not retrieve device class unknown-class")


def test_empty_class() -> None:
    result = allocate([claim(request(R0, class_name=""))], [SLICE_A])
    assert error(
        result, "claim default/claim-0, request req-0: missing device class name (unsupported request type?)"
    )


def test_no_claims_to_allocate() -> None:
    result = allocate([], [SLICE_A])
    assert isinstance(result, Allocation) and result.claims == ()


# --- allocationMode: All ------------------------------------------------------------------------


def test_all_devices_single() -> None:
    result = allocate([claim(all_devices(R0))], [SLICE_A])
    assert picked(result) == [(R0, *A1, "device-1")] and node_of(result) == NODE_1


def test_all_devices_many() -> None:
    slices = [SLICE_A, one_device("slice-1", NODE_1, "pool-2", DRIVER_A)]
    result = allocate([claim(all_devices(R0))], slices)
    assert picked(result) == [(R0, *A1, "device-1"), (R0, DRIVER_A, "pool-2", "device-1")]


def test_all_devices_of_the_incomplete_pool() -> None:
    incomplete = node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, Device("device-1"), slice_count=2)
    result = allocate([claim(all_devices(R0))], [incomplete])
    words = "asks for all devices, but resource pool driver-a/pool-1 is currently being updated"
    assert error(result, f"claim default/claim-0, request req-0: {words}")


@pytest.mark.parametrize(
    ("case", "reversed_", "devices"),
    [
        ("all-devices-plus-another", False, 1),
        ("all-devices-plus-another-reversed", True, 1),
        ("all-devices-many-plus-another", False, 2),
        ("all-devices-many-plus-another-reversed", True, 2),
    ],
)
def test_all_devices_plus_another(case: str, reversed_: bool, devices: int) -> None:
    """claim-0 asks for all of driver-a's ``devices``, claim-1 for one of driver-b's; the claims are
    listed in that order or reversed."""
    claims = [claim(all_devices(R0)), claim(request(R0, class_name=CLASS_B.name), name="claim-1")]
    slice_a = node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(devices, first=1))
    result = allocate(claims[::-1] if reversed_ else claims, [slice_a, SLICE_B], classes=(CLASS_A, CLASS_B))
    assert picked(result) == [(R0, *A1, f"device-{i}") for i in range(1, devices + 1)], case
    assert picked(result, CLAIM_1) == [(R0, *B1, "device-1")]


@pytest.mark.parametrize("case", ["all-devices-no-solution", "all-devices-no-solution-reversed"])
def test_all_devices_no_solution(case: str) -> None:
    # one device, claim-1 asks for one, claim-0 for all
    claims = [claim(request(R0), name="claim-1"), claim(all_devices(R0))]
    ordered = claims[::-1] if case.endswith("reversed") else claims
    assert failed(allocate(ordered, [SLICE_A]))


def test_all_devices_slice_without_devices() -> None:
    assert failed(allocate([claim(all_devices(R0))], [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A)]))


def test_all_devices_no_slices() -> None:
    assert failed(allocate([claim(all_devices(R0))], []))


def test_all_devices_some_allocated() -> None:
    slices = [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(2, first=1))]
    result = allocate([claim(all_devices(R0))], slices, allocated=[DeviceID(DRIVER_A, "pool-1", "device-1")])
    assert failed(result)


# --- several drivers, allocated devices -----------------------------------------------------------


def test_several_different_drivers() -> None:
    # upstream's two claims are both claim-0: the second lives in another namespace here
    claims = [claim(request(R0)), claim(request(R0, class_name=CLASS_B.name), namespace="other")]
    slice_a = node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(2, first=1))
    result = allocate(claims, [slice_a, SLICE_B], classes=(CLASS_A, CLASS_B))
    assert picked(result) == [(R0, *A1, "device-1")]
    assert picked(result, "other/claim-0") == [(R0, *B1, "device-1")]


def test_already_allocated_devices() -> None:
    held = [DeviceID(DRIVER_A, "pool-1", d) for d in ("device-1", "device-2")]
    assert failed(allocate([claim(request(R0))], [SLICE_A], allocated=held))


# --- device configuration: the devices only ---------------------------------------------------------
# Opaque ``config`` (of a class or a claim) is not modelled: gpufleet.kube.dra ignores it with a
# warning, so these cases check the devices upstream allocates and not ``Devices.Config``.


def test_with_class_device_config() -> None:
    assert picked(allocate([claim(request(R0))], [SLICE_A])) == [(R0, *A1, "device-1")]


def test_with_class_device_config_with_multiple_request_and_configs() -> None:
    requests = (request(R0), request(R1), request(R2, class_name=CLASS_B.name))
    slices = [
        node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(2)),
        one_device("slice-2", NODE_1, "pool-1", DRIVER_B),
    ]
    result = allocate([claim(*requests)], slices, classes=(CLASS_A, CLASS_B))
    assert picked(result) == [(R0, *A1, "device-0"), (R1, *A1, "device-1"), (R2, *B1, "device-1")]


def test_claim_with_device_config() -> None:
    assert picked(allocate([claim(request(R0))], [SLICE_A])) == [(R0, *A1, "device-1")]


# --- errors -------------------------------------------------------------------------------------


def test_unknown_allocation_mode() -> None:
    result = allocate([claim(request(R0, mode="future-mode"))], [SLICE_A])
    assert error(result, "unsupported count mode future-mode")


def test_invalid_cel_one_device() -> None:
    assert error(allocate([claim(request(R0, 1, "noSuchVar"))], [SLICE_A]), "undeclared reference")


def test_invalid_cel_one_device_class() -> None:
    broken = DeviceClass(CLASS_A.name, ("noSuchVar",))
    assert error(allocate([claim(request(R0))], [SLICE_A], classes=(broken,)), "undeclared reference")


def test_invalid_cel_all_devices() -> None:
    everything = request(R0, 0, "noSuchVar", mode="All")
    assert error(allocate([claim(everything)], [SLICE_A]), "undeclared reference")


def test_too_many_devices_single_request() -> None:
    assert error(allocate([claim(request(R0, 500))], []), "exceeds the claim limit")


def test_many_devices_okay() -> None:
    result = allocate([claim(request(R0, ALLOCATION_RESULTS_MAX_SIZE))], [])
    assert failed(result) and "exceeds the claim limit" not in str(result)


def test_too_many_devices_total() -> None:
    requests = (request(R0, ALLOCATION_RESULTS_MAX_SIZE), request(R1))
    slices = [
        node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(ALLOCATION_RESULTS_MAX_SIZE + 1))
    ]
    assert error(allocate([claim(*requests)], slices), "exceeds the claim limit")


def test_all_devices_invalid_cel() -> None:
    # upstream's case is the same as too-many-devices-single-request (a count of 500)
    assert error(allocate([claim(request(R0, 500))], []), "exceeds the claim limit")


def test_max_number_devices() -> None:
    devices = numbered_devices(ALLOCATION_RESULTS_MAX_SIZE)
    result = allocate(
        [claim(request(R0, ALLOCATION_RESULTS_MAX_SIZE))],
        [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices)],
    )
    assert picked(result) == sorted((R0, *A1, d.name) for d in devices)


def test_interrupt_off() -> None:
    # six devices asked of five: no solution, no error
    slices = [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(5, first=1))]
    result = allocate([claim(request(R0, 6))], slices)
    assert failed(result) and "invalid" not in str(result)


# --- prioritized lists (firstAvailable, DRAPrioritizedList: beta, on in 1.34) ----------------------

S0, S1 = "subReq-0", "subReq-1"
R0S1, R1S1 = f"{R0}/{S1}", f"{R1}/{S1}"  # upstream's req0SubReq1, req1SubReq1
A2, B2 = (DRIVER_A, "pool-2"), (DRIVER_B, "pool-2")
CLASSES = (CLASS_A, CLASS_B)
EIGHT_OR_FOUR = prioritized(
    R0, request(S0, 1, AT_LEAST.format("8Gi")), request(S1, 1, AT_LEAST.format("4Gi"))
)
EIGHT_AND_FOUR = [
    node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *memory_devices(("device-1", 8))),
    node_slice("slice-2", NODE_1, "pool-2", DRIVER_A, *memory_devices(("device-2", 4))),
]


def all_or_b(name: str = R0) -> DeviceRequest:
    """``subReq-0`` asks for all of class-a's devices, ``subReq-1`` for one of class-b's."""
    return prioritized(name, all_devices(S0), request(S1, class_name=CLASS_B.name))


def test_all_devices_slice_without_devices_prioritized_list() -> None:
    slices = [
        node_slice("slice-1", NODE_1, "pool-1", DRIVER_A),
        one_device("slice-2", NODE_1, "pool-2", DRIVER_B),
    ]
    result = allocate([claim(all_or_b())], slices, classes=CLASSES)
    assert picked(result) == [(R0S1, *B2, "device-1")] and node_of(result) == NODE_1


def test_all_devices_no_slices_prioritized_list() -> None:
    result = allocate(
        [claim(all_or_b())], [one_device("slice-2", NODE_1, "pool-2", DRIVER_B)], classes=CLASSES
    )
    assert picked(result) == [(R0S1, *B2, "device-1")] and node_of(result) == NODE_1


def test_all_devices_some_allocated_prioritized_list() -> None:
    slices = [
        node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(2, first=1)),
        one_device("slice-2", NODE_1, "pool-2", DRIVER_B),
    ]
    held = [DeviceID(DRIVER_A, "pool-1", "device-1")]
    result = allocate([claim(all_or_b())], slices, classes=CLASSES, allocated=held)
    assert picked(result) == [(R0S1, *B2, "device-1")]


def test_prioritized_list_first_unavailable() -> None:
    listed = prioritized(R0, request(S0, class_name=CLASS_B.name), request(S1))
    result = allocate([claim(listed)], [SLICE_A], classes=CLASSES)
    assert picked(result) == [(R0S1, *A1, "device-1")] and node_of(result) == NODE_1


def test_prioritized_list_non_available() -> None:
    listed = prioritized(R0, request(S0, 2, class_name=CLASS_B.name), request(S1, 2))
    slices = [SLICE_A, one_device("slice-2", NODE_1, "pool-2", DRIVER_B)]
    result = allocate([claim(listed)], slices, classes=CLASSES)
    assert failed(result) and all(f"request {R0}/{sub}: needs 2" in str(result) for sub in (S0, S1))


def test_prioritized_list_device_config() -> None:
    # the claim's config for req-0/subReq-1 is not modelled (see "device configuration" above)
    listed = prioritized(R0, request(S0), request(S1, 2, class_name=CLASS_B.name))
    slices = [node_slice("slice-1", NODE_1, "pool-1", DRIVER_B, *numbered_devices(2, first=1))]
    result = allocate([claim(listed)], slices, classes=CLASSES)
    assert picked(result) == [(R0S1, *B1, "device-1"), (R0S1, *B1, "device-2")]


def test_prioritized_list_class_config() -> None:
    # the classes' config is not modelled (see "device configuration" above)
    listed = prioritized(R0, request(S0, 2), request(S1, 2, class_name=CLASS_B.name))
    slices = [
        node_slice("slice-1", NODE_1, "pool-1", DRIVER_B, *numbered_devices(2, first=1)),
        node_slice("slice-2", NODE_1, "pool-2", DRIVER_A, Device("device-3")),
    ]
    result = allocate([claim(listed)], slices, classes=CLASSES)
    assert picked(result) == [(R0S1, *B1, "device-1"), (R0S1, *B1, "device-2")]


def test_prioritized_list_subrequests_with_expressions() -> None:
    requests = (
        request(R0, 1, AT_LEAST.format("1Gi")),
        prioritized(R1, request(S0, 1, AT_LEAST.format("4Gi")), request(S1, 2, AT_LEAST.format("2Gi"))),
    )
    devices = memory_devices(("device-1", 2), ("device-2", 2), ("device-3", 1))
    result = allocate([claim(*requests)], [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices)])
    assert picked(result) == [(R0, *A1, "device-3"), (R1S1, *A1, "device-1"), (R1S1, *A1, "device-2")]


def test_prioritized_list_subrequests_with_allocation_mode_all() -> None:
    listed = prioritized(R0, all_devices(S0), request(S1))
    slices = [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(2, first=1))]
    result = allocate([claim(listed)], slices, allocated=[DeviceID(DRIVER_A, "pool-1", "device-1")])
    assert picked(result) == [(R0S1, *A1, "device-2")]


def test_prioritized_list_allocation_mode_all_multiple_requests() -> None:
    requests = (request(R0), prioritized(R1, all_devices(S0), request(S1)))
    slices = [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(2, first=1))]
    result = allocate([claim(*requests)], slices)
    assert picked(result) == [(R0, *A1, "device-1"), (R1S1, *A1, "device-2")]


def test_prioritized_list_multi_request() -> None:
    eight = request(R1, 1, AT_LEAST.format("8Gi"))
    result = allocate([claim(eight, EIGHT_OR_FOUR)], EIGHT_AND_FOUR)
    assert picked(result) == [(R0S1, *A2, "device-2"), (R1, *A1, "device-1")]


def test_prioritized_list_with_backtracking() -> None:
    """req-0 takes the 8Gi device with subReq-0, req-1 then finds none: back to subReq-1 (4Gi)."""
    eight = request(R1, 1, AT_LEAST.format("8Gi"))
    result = allocate([claim(EIGHT_OR_FOUR, eight)], EIGHT_AND_FOUR)
    assert picked(result) == [(R0S1, *A2, "device-2"), (R1, *A1, "device-1")]


def test_prioritized_list_too_many_in_first_subrequest() -> None:
    """The claim limit counts a list's smallest subrequest: 500 devices in subReq-0 are no error."""
    listed = prioritized(R0, request(S0, 500, class_name=CLASS_B.name), request(S1))
    result = allocate([claim(listed)], [SLICE_A], classes=CLASSES)
    assert picked(result) == [(R0S1, *A1, "device-1")]


def test_prioritized_list_allocation_mode_all() -> None:
    listed = prioritized(R0, all_devices(S0), request(S1))
    slices = [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(2, first=1))]
    result = allocate([claim(listed)], slices, allocated=[DeviceID(DRIVER_A, "pool-1", "device-2")])
    assert picked(result) == [(R0S1, *A1, "device-1")]


def test_prioritized_list_max_allocation_limit_request() -> None:
    """32 then 16 devices for each of two requests: 32 + 32 and 32 + 16 pass the claim limit, so both
    get 16 (upstream takes devices in slice order, gpufleet in name order: the sets differ)."""
    half = ALLOCATION_RESULTS_MAX_SIZE // 2
    requests = [
        prioritized(name, request(S0, ALLOCATION_RESULTS_MAX_SIZE), request(S1, half)) for name in (R0, R1)
    ]
    devices = numbered_devices(2 * ALLOCATION_RESULTS_MAX_SIZE)
    result = allocate([claim(*requests)], [node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices)])
    results = picked(result)
    assert sorted({r[0] for r in results}) == [R0S1, R1S1] and len({r[3] for r in results}) == 2 * half
    assert [r[0] for r in results].count(R0S1) == half


def test_prioritized_list_max_allocation_allocation_mode_all() -> None:
    """All 31 devices of class-a and req-1's two would be 33: subReq-1's two instead."""
    requests = (prioritized(R0, all_devices(S0), request(S1, 2)), request(R1, 2, class_name=CLASS_B.name))
    slices = [
        node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(ALLOCATION_RESULTS_MAX_SIZE - 1)),
        node_slice("slice-2", NODE_1, "pool-2", DRIVER_B, *numbered_devices(2)),
    ]
    result = allocate([claim(*requests)], slices, classes=CLASSES)
    assert picked(result) == [
        (R0S1, *A1, "device-0"),
        (R0S1, *A1, "device-1"),
        (R1, *B2, "device-0"),
        (R1, *B2, "device-1"),
    ]


# --- admin access (adminAccess, DRAAdminAccess: beta, on in 1.34) ----------------------------------

TWO_DEVICES = node_slice("slice-1", NODE_1, "pool-1", DRIVER_A, *numbered_devices(2, first=1))
DEVICE_1, DEVICE_2 = (DeviceID(DRIVER_A, "pool-1", f"device-{n}") for n in (1, 2))


def test_all_devices_some_allocated_admin_access() -> None:
    """An admin-access ``All`` request gets the device another claim holds too."""
    result = allocate([claim(all_devices(R0, admin=True))], [TWO_DEVICES], allocated=[DEVICE_1])
    assert picked(result) == [(R0, *A1, "device-1"), (R0, *A1, "device-2")]
    assert admin_results(result) == [True, True] and node_of(result) == NODE_1


def test_all_devices_some_allocating_admin_access() -> None:
    """Admin access or not, a claim gets a device once: req-1's ``All`` cannot have req-0's device."""
    requests = (request(R0, admin=True), all_devices(R1, admin=True))
    assert failed(allocate([claim(*requests)], [TWO_DEVICES]))


def test_count_devices_some_allocated_admin_access() -> None:
    result = allocate([claim(request(R0, 2, admin=True))], [TWO_DEVICES], allocated=[DEVICE_1])
    assert picked(result) == [(R0, *A1, "device-1"), (R0, *A1, "device-2")]
    assert admin_results(result) == [True, True]


def test_separate_claims_share_device_admin_access() -> None:
    claims = [claim(request(R0, admin=True)), claim(request(R0, admin=True), name="claim-1")]
    result = allocate(claims, [TWO_DEVICES])
    for key in ("default/claim-0", CLAIM_1):
        assert picked(result, key) == [(R0, *A1, "device-1")] and admin_results(result, key) == [True]


def test_admin_access_claims_device_allocating_for_non_admin_access() -> None:
    claims = [claim(request(R0)), claim(request(R0, admin=True), name="claim-1")]
    result = allocate(claims, [TWO_DEVICES])
    assert picked(result) == picked(result, CLAIM_1) == [(R0, *A1, "device-1")]
    assert admin_results(result) == [False] and admin_results(result, CLAIM_1) == [True]


def test_admin_access_enabled() -> None:
    result = allocate([claim(request(R0, admin=True))], [SLICE_A], allocated=[DEVICE_1, DEVICE_2])
    assert picked(result) == [(R0, *A1, "device-1")] and admin_results(result) == [True]


# --- network-attached devices (a slice's nodeSelector) ----------------------------------------------

IN_REGION_1 = label_selector("region", "region-1")
ON_EARTH = label_selector("planet", "earth")


def test_network_attached_device() -> None:
    result = allocate([claim(request(R0))], [network_slice("slice-1", IN_REGION_1, "pool-1", DRIVER_A)])
    assert picked(result) == [(R0, *A1, "device-1")] and admin_results(result) == [False]
    assert selector_of(result) == set(IN_REGION_1.expressions)


def test_unsuccessful_allocation_network_attached_device() -> None:
    slices = [network_slice("slice-1", IN_REGION_1, "pool-1", DRIVER_A)]
    assert failed(allocate([claim(request(R0))], slices, node=NODE_2, region=REGION_2))


def test_many_network_attached_devices() -> None:
    """The allocation's one term is the union of the slices' requirements, each once."""
    slices = [
        network_slice("slice-1", IN_REGION_1, "pool-1", DRIVER_A),
        one_device("slice-1", None, "pool-2", DRIVER_A),
        network_slice("slice-1", ON_EARTH, "pool-3", DRIVER_A),
        network_slice("slice-1", local_selector(NODE_1), "pool-4", DRIVER_A),
    ]
    result = allocate([claim(request(R0, 4))], slices)
    assert picked(result) == [(R0, DRIVER_A, f"pool-{n}", "device-1") for n in range(1, 5)]
    expected = {*IN_REGION_1.expressions, *ON_EARTH.expressions, *local_selector(NODE_1).fields}
    assert selector_of(result) == expected


def test_local_and_network_attached_devices() -> None:
    """Once there is any node-local device, the allocation is tied to that node."""
    slices = [
        network_slice("slice-1", IN_REGION_1, "pool-1", DRIVER_A),
        one_device("slice-1", NODE_1, "pool-2", DRIVER_A),
    ]
    result = allocate([claim(request(R0, 2))], slices)
    assert picked(result) == [(R0, *A1, "device-1"), (R0, DRIVER_A, "pool-2", "device-1")]
    assert node_of(result) == NODE_1


# --- cases of features gpufleet does not model ----------------------------------------------------

ADMIN_OFF = "DRAAdminAccess turned off: gpufleet models 1.34's default (on) and no feature gates"
LIST_OFF = "DRAPrioritizedList turned off: gpufleet models 1.34's default (on) and no feature gates"
PARTITIONABLE = "needs DRAPartitionableDevices (alpha, off by default in 1.34); counters are not modelled"
TAINTS = "needs DRADeviceTaints (alpha, off by default in 1.34); tolerations are not modelled"
BINDING = (
    "needs DRADeviceBindingConditions (alpha, off by default in 1.34); bindingConditions are not modelled"
)
CAPACITY = "needs DRAConsumableCapacity (alpha, off by default in 1.34); shared devices are not modelled"
COUNTERS_OFF = (
    "consumesCounters and perDeviceNodeSelection cannot be expressed (gpufleet.kube.dra refuses them)"
)
TAINTS_OFF = (
    "the allocator's Device has no taints (gpufleet.kube.dra ignores them; DraState.tainted is separate)"
)
BINDING_OFF = "a device with bindingConditions cannot be expressed (not modelled)"
INTERRUPT = "the search is bounded by max_steps, not by a context's timeout or cancellation"

SKIPPED: dict[str, list[str]] = {
    ADMIN_OFF: ["admin-access-disabled"],
    LIST_OFF: ["prioritized-list-disabled"],
    PARTITIONABLE: [
        "partitionable-devices-single-device",
        "partitionable-devices-prioritized-list",
        "partitionable-devices-multiple-devices",
        "partitionable-devices-multiple-capacity-pools",
        "partitionable-devices-multiple-counters",
        "partitionable-devices-multiple-pools",
        "partitionable-devices-unused-counters-in-counter-set",
        "partitionable-devices-no-capacity-available",
        "partitionable-devices-overallocated-capacity-pool",
        "partitionable-devices-per-device-node-selection-nodename",
        "partitionable-devices-per-device-node-selection-node-selector",
        "partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
        "partitionable-devices-with-attribute-selector",
    ],
    TAINTS: [
        "tainted-two-devices",
        "tainted-one-device-two-taints",
        "tainted-two-devices-tolerated",
        "tainted-one-device-two-taints-both-tolerated",
        "tainted-prioritized-list",
        "tainted-admin-access",
        "tainted-all-devices-single",
    ],
    BINDING: [
        "device-binding-conditions",
        "binding-conditions-multiple-devices",
        "node-restriction",
        "partitionable-devices-with-binding-conditions",
        "partitionable-devices-with-binding-conditions-multiple",
        "partitionable-devices-with-binding-conditions-some-devices-no-conditions",
        "partitionable-devices-with-binding-conditions-multi-slices",
        "partitionable-devices-with-binding-conditions-and-taints",
        "partitionable-devices-with-binding-conditions-and-taints-tolerated",
    ],
    CAPACITY: [
        *(
            f"consumable-capacity-multi-allocatable-device-{rest}"
            for rest in (
                "without-policy-without-capacity-request",
                "without-policy-without-capacity-request-block",
                "without-policy-with-capacity-request",
                "with-policy-without-capacity-request",
                "with-zero-request-policy",
                "violates-zero-request-policy",
                "with-range-policy-with-capacity-request",
                "with-range-policy-step",
                "with-valid-values-policy",
                "with-valid-values-policy-round-up",
                "with-exceeded-consumable-capacity-request",
                "with-request-over-max-sharing-policy",
                "with-some-remaining-consumable-capacity",
                "with-subrequest",
                "with-no-available-consumable-capacity",
                "allocation-mode-all-filter-out-no-capacity",
                "allocation-mode-all-filter-out-insufficient-capacity",
                "allocation-mode-all-allocating-sufficient",
                "allocation-mode-all-in-use-sufficient",
                "allocation-mode-all-allocating-insufficient",
                "allocation-mode-all-in-use-insufficient",
            )
        ),
        "consumable-capacity-dedicated-device-with-consumable-capacity-request",
        "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request",
        "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector",
        "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
        "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable",
        "allow-multiple-allocations-with-partitionable-device",
        "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
        "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint",
    ],
    COUNTERS_OFF: [
        "partitionable-devices-disabled-device-consumes-counters",
        "partitionable-devices-disabled-other-device-do-not-consume-counters",
        "partitionable-devices-disabled-per-device-node-selection",
    ],
    TAINTS_OFF: [
        "tainted-disabled",
        "tainted-all-devices-single-disabled",
        "tainted-prioritized-list-disabled",
        "tainted-admin-access-disabled",
    ],
    BINDING_OFF: [
        "binding-conditions-without-feature-gate",
        "device-binding-conditions-without-binding-conditions-feature-gate",
        "device-binding-conditions-without-device-status-feature-gate",
    ],
    "a selector without CEL cannot be expressed (DeviceRequest.selectors are CEL strings)": [
        "unknown-selector"
    ],
    "a constraint without matchAttribute cannot be expressed (DeviceConstraint is matchAttribute only)": [
        "unknown-constraint"
    ],
    INTERRUPT: ["interrupt/timeout", "interrupt/deadline", "interrupt/cancel"],
}


@pytest.mark.parametrize(
    ("case", "reason"), [(case, reason) for reason, listed in SKIPPED.items() for case in listed]
)
def test_allocator_with_features_gpufleet_does_not_model(case: str, reason: str) -> None:
    pytest.skip(f"allocator_testing.go {case}: {reason}")
