"""Builders for the ports of the structured allocator's test table (k8s.io/dynamic-resource-allocation
v0.34.10, structured/internal/allocatortesting/allocator_testing.go, ``TestAllocator``), after its
helpers: ``class`` (a class selecting ``device.driver == "<driver>"``), ``request``, ``slice``,
``device``. Upstream's slices default to pool generation 1 and ``resourceSliceCount`` 1; gpufleet's
default generation is 0, which only matters relative to the other slices of a pool.

Upstream's claims have no namespace; gpufleet keys claims by ``namespace/name``, so they live in
``default`` and upstream's ``klog.KObj(claim)`` (``claim-0``) reads ``default/claim-0`` here. Upstream
compares results with ``ConsistOf`` (order irrelevant): :func:`picked` sorts them. Upstream's ``node(name,
region)`` is a node labelled ``region: <region>`` and ``planet: earth``; :func:`allocate` builds it."""

from __future__ import annotations

from collections.abc import Sequence

from gpufleet.gpus.dra.allocator import CANNOT_ALLOCATE, Allocation, AllocationError, allocate_on_node
from gpufleet.model.dra import (
    ALL,
    EXACT_COUNT,
    AllocationResult,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceID,
    DeviceRequest,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceSlice,
)
from gpufleet.model.node import Node
from gpufleet.model.pod import Requirement, SelectorTerm

DRIVER_A, DRIVER_B = "driver-a", "driver-b"
NODE_1, NODE_2 = "node-1", "node-2"
REGION_1, REGION_2 = "region-1", "region-2"


def device_class(name: str, driver: str) -> DeviceClass:
    """Upstream's ``class(name, driver)``."""
    return DeviceClass(name, (f'device.driver == "{driver}"',))


CLASS_A = device_class("class-a", DRIVER_A)
CLASS_B = device_class("class-b", DRIVER_B)


def request(
    name: str,
    count: int = 1,
    *selectors: str,
    class_name: str = CLASS_A.name,
    mode: str = EXACT_COUNT,
    admin: bool = False,
) -> DeviceRequest:
    """Upstream's ``request``; ``admin``: ``Exactly.AdminAccess = ptr.To(true)``."""
    return DeviceRequest(name, class_name, selectors, mode, count, admin_access=admin)


def all_devices(name: str, class_name: str = CLASS_A.name, admin: bool = False) -> DeviceRequest:
    """An ``allocationMode: All`` request (no count)."""
    return DeviceRequest(name, class_name, (), ALL, 0, admin_access=admin)


def prioritized(name: str, *subrequests: DeviceRequest) -> DeviceRequest:
    """Upstream's ``requestWithPrioritizedList``: ``subrequests`` (built with :func:`request` or
    :func:`all_devices`, upstream's ``subRequest``) in ``firstAvailable``."""
    return DeviceRequest.prioritized(name, *subrequests)


def claim(
    *requests: DeviceRequest,
    constraints: tuple[DeviceConstraint, ...] = (),
    name: str = "claim-0",
    namespace: str = "default",
) -> ResourceClaim:
    return ResourceClaim(namespace, name, requests, constraints=constraints)


def node_slice(
    name: str,
    node: str | None,
    pool: str,
    driver: str,
    *devices: Device,
    generation: int = 0,
    slice_count: int = 1,
) -> ResourceSlice:
    """Upstream's ``slice``: ``node`` is the slice's ``nodeName``, ``None`` for ``allNodes``."""
    all_nodes = node is None
    return ResourceSlice(name, driver, pool, devices, node, all_nodes, generation, slice_count)


def label_selector(key: str, *values: str) -> SelectorTerm:
    """Upstream's ``nodeLabelSelector``: one term, ``key In values``."""
    return SelectorTerm((Requirement(key, "In", values),))


def local_selector(node: str) -> SelectorTerm:
    """Upstream's ``localNodeSelector``: one term, ``metadata.name In [node]`` (a field)."""
    return SelectorTerm(fields=(Requirement("metadata.name", "In", (node,)),))


def network_slice(name: str, selector: SelectorTerm, pool: str, driver: str) -> ResourceSlice:
    """Upstream's ``sliceWithOneDevice`` with a ``*v1.NodeSelector`` as its node selection."""
    return ResourceSlice(name, driver, pool, (Device("device-1"),), node_selector=(selector,))


def numbered_devices(count: int, first: int = 0) -> tuple[Device, ...]:
    """``device-<first>`` ... (upstream's ``sliceWithMultipleDevices`` numbers from 0)."""
    return tuple(Device(f"device-{i}") for i in range(first, first + count))


def one_device(name: str, node: str | None, pool: str, driver: str) -> ResourceSlice:
    """Upstream's ``sliceWithOneDevice``: one device, ``device-1``."""
    return node_slice(name, node, pool, driver, Device("device-1"))


def allocate(
    claims: Sequence[ResourceClaim],
    slices: Sequence[ResourceSlice],
    classes: Sequence[DeviceClass] = (CLASS_A,),
    node: str = NODE_1,
    allocated: Sequence[DeviceID] = (),
    region: str = REGION_1,
) -> Allocation | str:
    """``Allocate`` for upstream's ``node(node, region)``; ``allocated`` is upstream's ``allocatedDevices``
    (held by some claim)."""
    held = tuple(DeviceRequestAllocationResult("", d.driver, d.pool, d.device) for d in allocated)
    return allocate_on_node(
        Node(node, {"region": region, "planet": "earth"}),
        claims,
        {c.name: c for c in classes},
        slices,
        {"other/holder": AllocationResult(held)} if held else {},
    )


def picked(result: Allocation | str, key: str = "default/claim-0") -> list[tuple[str, str, str, str]]:
    """The claim's devices as ``(request, driver, pool, device)``, sorted."""
    assert isinstance(result, Allocation), result
    return sorted((r.request, r.driver, r.pool, r.device) for r in result.result_for(key).results)


def node_of(result: Allocation | str, key: str = "default/claim-0") -> str | None:
    """The node the allocation is tied to (upstream's ``localNodeSelector(node)``), ``None`` for none."""
    assert isinstance(result, Allocation), result
    return result.result_for(key).node_name


def admin_results(result: Allocation | str, key: str = "default/claim-0") -> list[bool]:
    """The ``adminAccess`` of the claim's results, in :func:`picked`'s order."""
    assert isinstance(result, Allocation), result
    results = sorted(result.result_for(key).results, key=lambda r: (r.request, r.driver, r.pool, r.device))
    return [r.admin_access for r in results]


def selector_of(result: Allocation | str, key: str = "default/claim-0") -> set[Requirement]:
    """The requirements (expressions and fields) of the allocation's one ``nodeSelector`` term, for an
    allocation not tied to one node (upstream's ``matchNodeSelector``: order irrelevant)."""
    assert isinstance(result, Allocation), result
    allocation = result.result_for(key)
    assert allocation.node_name is None and len(allocation.node_selector) <= 1
    return {r for term in allocation.node_selector for r in (*term.expressions, *term.fields)}


def failed(result: Allocation | str) -> bool:
    """Upstream's ``expectResults: nil``: the claims are not allocated."""
    return isinstance(result, str) and result.startswith(CANNOT_ALLOCATE)


def error(result: Allocation | str, words: str) -> bool:
    """Upstream's ``expectError`` with ``ContainSubstring(words)``: gpufleet answers the error itself (an
    ``AllocationError``: a CEL error, a constraint an ``All`` request cannot meet), or reports it as the
    reason of a failure (a request's validation, which the DynamicResources PreFilter catches first)."""
    return (isinstance(result, AllocationError) or failed(result)) and words in str(result)
