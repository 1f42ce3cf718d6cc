"""Structured-parameters allocation of ResourceClaims on one node."""

from __future__ import annotations

from gpufleet.gpus.dra.allocator import (
    CANNOT_ALLOCATE,
    NOT_AVAILABLE,
    Allocation,
    AllocationError,
    MatchCache,
    allocate_on_node,
)
from gpufleet.gpus.dra.state import RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE, DraState
from gpufleet.model.dra import (
    ALL,
    AllocationResult,
    Device,
    DeviceClass,
    DeviceID,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DraObjects,
    PodResourceClaim,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from gpufleet.model.dra_slices import slices_for_node
from gpufleet.model.pod import Pod

GIB = 2**30
GPU_CLASS = DeviceClass("gpu.nvidia.com", ('device.driver == "gpu.nvidia.com"',))
CLASSES = {GPU_CLASS.name: GPU_CLASS}
H100_40G = (
    'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3" && '
    'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'
)
NODE_A = slices_for_node("node-a", 8, "NVIDIA H100 80GB HBM3", 80 * GIB, driver_version="550.54.15")
NODE_B = slices_for_node("node-b", 8, "NVIDIA A100-SXM4-40GB", 40 * GIB, driver_version="535.104.5")


def claim(name: str, *requests: DeviceRequest, namespace: str = "default") -> ResourceClaim:
    return ResourceClaim(namespace, name, requests)


def gpus(count: int, *selectors: str, name: str = "gpus") -> DeviceRequest:
    return DeviceRequest(name, GPU_CLASS.name, selectors, count=count)


def test_two_h100s_with_40gi_of_eight() -> None:
    result = allocate_on_node("node-a", [claim("train", gpus(2, H100_40G))], CLASSES, [NODE_A, NODE_B])
    assert isinstance(result, Allocation)
    assert result.devices == (
        DeviceID("gpu.nvidia.com", "node-a", "gpu-0"),
        DeviceID("gpu.nvidia.com", "node-a", "gpu-1"),
    )
    allocation = result.result_for("default/train")
    assert allocation.node_name == "node-a"
    assert [r.request for r in allocation.results] == ["gpus", "gpus"]
    assert result.new == ("default/train",)
    # the same claim on the A100 node: no device matches
    reason = allocate_on_node("node-b", [claim("train", gpus(2, H100_40G))], CLASSES, [NODE_A, NODE_B])
    assert isinstance(reason, str) and reason.startswith(CANNOT_ALLOCATE)
    assert "needs 2 matching device(s), the node has 0 matching" in reason


def test_claim_too_big_gives_a_reason() -> None:
    reason = allocate_on_node("node-a", [claim("huge", gpus(9, H100_40G))], CLASSES, [NODE_A])
    assert reason == (
        "cannot allocate all claims: claim default/huge, request gpus: needs 9 matching device(s), "
        "the node has 8 matching, 8 of them free"
    )


def test_devices_allocated_to_other_claims_are_not_free() -> None:
    first = allocate_on_node("node-a", [claim("a", gpus(6))], CLASSES, [NODE_A])
    assert isinstance(first, Allocation)
    taken = {key: result for key, result in ((c.key, r) for c, r in first.claims)}
    second = allocate_on_node("node-a", [claim("b", gpus(2))], CLASSES, [NODE_A], taken)
    assert isinstance(second, Allocation)
    assert [d.device for d in second.devices] == ["gpu-6", "gpu-7"]
    taken.update((c.key, r) for c, r in second.claims)
    third = allocate_on_node("node-a", [claim("c", gpus(1))], CLASSES, [NODE_A], taken)
    assert isinstance(third, str) and "8 matching, 0 of them free" in third


def test_two_pods_sharing_a_claim_get_the_same_devices() -> None:
    shared = claim("shared", gpus(2, H100_40G))
    first = allocate_on_node("node-a", [shared], CLASSES, [NODE_A])
    assert isinstance(first, Allocation)
    allocated = {shared.key: first.result_for(shared.key)}
    second = allocate_on_node("node-a", [shared], CLASSES, [NODE_A], allocated)
    assert isinstance(second, Allocation)
    assert second.devices == first.devices
    assert second.new == ()
    # the shared claim's devices are tied to node-a
    elsewhere = allocate_on_node("node-b", [shared], CLASSES, [NODE_A, NODE_B], allocated)
    assert elsewhere == f"{NOT_AVAILABLE}: claim default/shared is allocated on node node-a"


def test_claim_from_template_is_per_pod() -> None:
    template = ResourceClaimTemplate("default", "one-gpu", (gpus(1),))
    first = template.claim_for("pod-0", "gpu")
    result = allocate_on_node("node-a", [first], CLASSES, [NODE_A])
    assert isinstance(result, Allocation)
    allocated = {first.key: result.result_for(first.key)}
    second = allocate_on_node("node-a", [template.claim_for("pod-1", "gpu")], CLASSES, [NODE_A], allocated)
    assert isinstance(second, Allocation)
    assert first.key == "default/pod-0-gpu"
    assert second.devices != result.devices


def test_semver_selector_on_driver_version() -> None:
    newer = 'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("540.0.0"))'
    both = [NODE_A, NODE_B]
    assert isinstance(allocate_on_node("node-a", [claim("c", gpus(1, newer))], CLASSES, both), Allocation)
    assert isinstance(allocate_on_node("node-b", [claim("c", gpus(1, newer))], CLASSES, both), str)


def test_all_mode() -> None:
    everything = claim("all", DeviceRequest("all", GPU_CLASS.name, allocation_mode=ALL, count=0))
    result = allocate_on_node("node-a", [everything], CLASSES, [NODE_A])
    assert isinstance(result, Allocation) and len(result.devices) == 8
    busy = {
        "default/x": AllocationResult(
            (DeviceRequestAllocationResult("r", "gpu.nvidia.com", "node-a", "gpu-3"),)
        )
    }
    reason = allocate_on_node("node-a", [everything], CLASSES, [NODE_A], busy)
    assert isinstance(reason, str) and "1 of the 8 matching devices are already allocated" in reason
    none = allocate_on_node("node-c", [everything], CLASSES, [NODE_A])
    assert isinstance(none, str) and "no matching device" in none


def test_backtracking_across_requests() -> None:
    # "any" is asked first and would greedily take gpu-0, which "first" needs.
    any_gpu = gpus(1, name="any")
    first = gpus(1, 'device.attributes["gpu.nvidia.com"].index == 0', name="first")
    small = slices_for_node("node-s", 2, "NVIDIA L4", 24 * GIB)
    result = allocate_on_node("node-s", [claim("c", any_gpu, first)], CLASSES, [small])
    assert isinstance(result, Allocation)
    assert [(r.request, r.device) for r in result.result_for("default/c").results] == [
        ("any", "gpu-1"),
        ("first", "gpu-0"),
    ]


def test_identical_devices_do_not_explode_the_search() -> None:
    big = slices_for_node("node-x", 32, "NVIDIA H100 80GB HBM3", 80 * GIB)
    impossible = claim("c", gpus(8, name="a"), gpus(8, name="b"), gpus(8, name="c"), gpus(9, name="d"))
    reason = allocate_on_node("node-x", [impossible], CLASSES, [big], max_steps=10_000)
    assert isinstance(reason, str) and "gave up" not in reason


def test_missing_class_and_runtime_errors() -> None:
    missing = DeviceRequest("r", "no-such-class")
    reason = allocate_on_node("node-a", [claim("c", missing)], CLASSES, [NODE_A])
    assert reason == (
        "cannot allocate all claims: claim default/c, request r: could not retrieve device class "
        'no-such-class: deviceclass.resource.k8s.io "no-such-class" not found'
    )
    broken = gpus(1, 'device.attributes["gpu.nvidia.com"].model == "x"')
    reason = allocate_on_node("node-a", [claim("c", broken)], CLASSES, [NODE_A])
    # an error, in upstream's words (allocator_stable.go ``selectorsMatch``, cel-go's ``no such key``)
    assert isinstance(reason, AllocationError)
    assert reason == "claim default/c: selector #0: CEL runtime error: no such key: model"


def test_incomplete_pool_and_generations() -> None:
    old = ResourceSlice("s-old", "gpu.nvidia.com", "pool", NODE_A.devices[:2], node_name="node-a")
    new = ResourceSlice(
        "s-new", "gpu.nvidia.com", "pool", NODE_A.devices[2:3], node_name="node-a", pool_generation=1
    )
    result = allocate_on_node("node-a", [claim("c", gpus(1))], CLASSES, [old, new])
    assert isinstance(result, Allocation) and [d.device for d in result.devices] == ["gpu-2"]
    partial = ResourceSlice(
        "s", "gpu.nvidia.com", "pool", NODE_A.devices[:2], node_name="node-a", resource_slice_count=2
    )
    everything = claim("all", DeviceRequest("all", GPU_CLASS.name, allocation_mode=ALL, count=0))
    reason = allocate_on_node("node-a", [everything], CLASSES, [partial])
    assert (
        isinstance(reason, str) and "resource pool gpu.nvidia.com/pool is currently being updated" in reason
    )
    assert isinstance(allocate_on_node("node-a", [claim("c", gpus(2))], CLASSES, [partial]), Allocation)


def test_all_nodes_devices_are_not_tied_to_a_node() -> None:
    network = ResourceSlice("net", "net.example.com", "fabric", NODE_A.devices[:1], all_nodes=True)
    any_class = DeviceClass("any")
    request = DeviceRequest("r", "any")
    result = allocate_on_node("node-z", [claim("c", request)], {"any": any_class}, [network])
    assert isinstance(result, Allocation)
    assert result.result_for("default/c").node_name is None


def test_match_cache_keeps_outcomes_across_pods() -> None:
    cache = MatchCache()
    first = allocate_on_node("node-a", [claim("a", gpus(1, H100_40G))], CLASSES, [NODE_A], cache=cache)
    assert isinstance(first, Allocation)
    assert len(cache) == 16  # class and request selector on each of the 8 devices
    second = allocate_on_node("node-a", [claim("b", gpus(1, H100_40G))], CLASSES, [NODE_A], cache=cache)
    assert isinstance(second, Allocation) and len(cache) == 16
    broken = gpus(1, 'device.attributes["gpu.nvidia.com"].model == "x"')
    for _ in range(2):
        reason = allocate_on_node("node-a", [claim("c", broken)], CLASSES, [NODE_A], cache=cache)
        assert isinstance(reason, str) and "CEL runtime error" in reason


def _shared_state() -> tuple[DraState, ResourceClaim]:
    shared = claim("shared", gpus(1))
    objects = DraObjects(classes=dict(CLASSES), slices=[NODE_A], claims={shared.key: shared})
    return DraState(objects), shared


def _sharer(i: int) -> Pod:
    return Pod(f"p{i}", resource_claims=(PodResourceClaim("gpus", resource_claim_name="shared"),))


def test_a_claim_takes_256_consumers_and_refuses_the_257th_changing_nothing() -> None:
    """``ResourceClaimReservedForMaxSize`` (256): the API server refuses a 257th ``reservedFor`` entry,
    which kube-scheduler's PreBind reports as ``add reservation to claim <ns>/<name>: ...``."""
    state, shared = _shared_state()
    for i in range(RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE):
        assert state.place(_sharer(i), "node-a") is None
    assert state.place(_sharer(256), "node-a") == (
        'add reservation to claim default/shared: ResourceClaim.resource.k8s.io "shared" is invalid: '
        "status.reservedFor: Too many: 257: must have at most 256 items"
    )
    assert len(state.users[shared.key]) == 256 and "default/p256" not in state.users[shared.key]
    assert state.place(_sharer(0), "node-a") is None  # a pod already reserved may come back
    state.release(_sharer(0))
    assert state.place(_sharer(256), "node-a") is None


def test_a_fork_allocates_and_publishes_without_touching_the_cluster_state() -> None:
    """cluster-autoscaler simulates on a forked DRA snapshot: allocations, releases and slices of
    simulated nodes stay in the fork."""
    state, shared = _shared_state()
    assert state.place(_sharer(0), "node-a") is None
    fork = state.fork([slices_for_node("sim-node", 8, "NVIDIA H100 80GB HBM3", 80 * GIB)])
    fork.release(_sharer(0))
    assert fork.place(_sharer(1), "sim-node") is None
    assert fork.allocated[shared.key].node_name == "sim-node"
    assert state.allocated[shared.key].node_name == "node-a" and state.users[shared.key] == {"default/p0"}
    assert [s.node_name for s in state.objects.slices] == ["node-a"]


def test_requests_are_checked_in_upstreams_order_and_words() -> None:
    """``validateDeviceRequest``: a request without a class name is refused before any class lookup,
    an unknown allocation mode after it."""
    nameless = allocate_on_node("node-a", [claim("c", DeviceRequest("r", ""))], CLASSES, [NODE_A])
    assert nameless == (
        "cannot allocate all claims: claim default/c, request r: missing device class name "
        "(unsupported request type?)"
    )
    future = DeviceRequest("r", GPU_CLASS.name, allocation_mode="future-mode")
    reason = allocate_on_node("node-a", [claim("c", future)], CLASSES, [NODE_A])
    assert (
        reason == "cannot allocate all claims: claim default/c, request r: unsupported count mode future-mode"
    )


def test_the_claim_limit_is_checked_before_looking_for_free_devices() -> None:
    """``Allocate`` refuses a claim asking for more than 32 devices (``All`` counting its matching
    ones) before searching, whatever the node has."""
    for node in ("node-a", "node-without-slices"):
        reason = allocate_on_node(node, [claim("c", gpus(33))], CLASSES, [NODE_A])
        assert reason == (
            "cannot allocate all claims: claim default/c: number of requested devices 33 exceeds the "
            "claim limit of 32"
        )
    everything = DeviceRequest("all", GPU_CLASS.name, allocation_mode=ALL, count=0)
    reason = allocate_on_node("node-a", [claim("c", everything, gpus(25))], CLASSES, [NODE_A])
    assert isinstance(reason, str) and "number of requested devices 33 exceeds" in reason


def _pool(name: str, *devices: str, node: str = "node-a") -> ResourceSlice:
    listed = tuple(Device(d) for d in devices)
    return ResourceSlice(f"{node}-{name}", "gpu.nvidia.com", name, listed, node_name=node)


def test_a_search_that_reaches_an_invalid_pool_fails_naming_it() -> None:
    """``allocateOne``: an ``ExactCount`` search errors on reaching a pool that lists a device twice
    (pools here in driver and name order); devices before it still serve, pools after it never do."""
    slices = [_pool("a", "gpu-0"), _pool("b", "gpu-0", "gpu-0"), _pool("c", "gpu-0", "gpu-1")]
    one = allocate_on_node("node-a", [claim("c", gpus(1))], CLASSES, slices)
    assert isinstance(one, Allocation) and one.devices == (DeviceID("gpu.nvidia.com", "a", "gpu-0"),)
    two = allocate_on_node("node-a", [claim("c", gpus(2))], CLASSES, slices)
    assert two == "cannot allocate all claims: pool b is invalid: duplicate device name gpu-0"


def test_all_mode_needs_every_pool_complete_and_valid_before_matching() -> None:
    """``validateDeviceRequest`` for ``All``: each pool the node reaches is checked, even one whose
    devices the request would not take."""
    other = DeviceClass("other", ('device.driver == "other.example.com"',))
    everything = claim("all", DeviceRequest("all", other.name, allocation_mode=ALL, count=0))
    partial = ResourceSlice(
        "s", "gpu.nvidia.com", "p", NODE_A.devices, node_name="node-a", resource_slice_count=2
    )
    reason = allocate_on_node("node-a", [everything], {other.name: other}, [partial])
    assert reason == (
        "cannot allocate all claims: claim default/all, request all: asks for all devices, but resource "
        "pool gpu.nvidia.com/p is currently being updated"
    )
    invalid = allocate_on_node("node-a", [everything], {other.name: other}, [_pool("b", "gpu-0", "gpu-0")])
    assert isinstance(invalid, str) and invalid.endswith(
        "resource pool gpu.nvidia.com/b is currently invalid"
    )


def h100s_or_a100s(h100s: int, a100s: int) -> DeviceRequest:
    """A prioritized list: ``h100s`` H100s (``h100``), else ``a100s`` of any GPU (``any``)."""
    return DeviceRequest.prioritized(
        "gpus",
        gpus(h100s, H100_40G, name="h100"),
        gpus(a100s, name="any"),
    )


def test_a_prioritized_list_names_the_subrequest_it_took_in_the_results() -> None:
    result = allocate_on_node("node-b", [claim("train", h100s_or_a100s(2, 3))], CLASSES, [NODE_A, NODE_B])
    assert isinstance(result, Allocation)
    assert [(r.request, r.device) for r in result.result_for("default/train").results] == [
        ("gpus/any", "gpu-0"),
        ("gpus/any", "gpu-1"),
        ("gpus/any", "gpu-2"),
    ]
    first = allocate_on_node("node-a", [claim("train", h100s_or_a100s(2, 3))], CLASSES, [NODE_A, NODE_B])
    assert isinstance(first, Allocation)
    assert {r.request for r in first.result_for("default/train").results} == {"gpus/h100"}


def test_a_prioritized_list_that_cannot_be_allocated_gives_each_subrequests_reason() -> None:
    result = allocate_on_node("node-b", [claim("train", h100s_or_a100s(2, 9))], CLASSES, [NODE_B])
    assert result == (
        f"{CANNOT_ALLOCATE}: claim default/train, request gpus/h100: needs 2 matching device(s), the node "
        "has 0 matching, 0 of them free; claim default/train, request gpus/any: needs 9 matching "
        "device(s), the node has 8 matching, 8 of them free"
    )


def test_a_subrequest_with_an_unknown_class_is_an_error_naming_it() -> None:
    """``validateDeviceRequest`` checks every subrequest before the search, even one never needed."""
    listed = DeviceRequest.prioritized("gpus", gpus(1), DeviceRequest("tpu", "tpu.google.com"))
    result = allocate_on_node("node-a", [claim("train", listed)], CLASSES, [NODE_A])
    assert result == (
        f"{CANNOT_ALLOCATE}: claim default/train, request gpus/tpu: could not retrieve device class "
        'tpu.google.com: deviceclass.resource.k8s.io "tpu.google.com" not found'
    )


def test_the_claim_limit_counts_a_prioritized_lists_smallest_subrequest() -> None:
    """``Allocate`` counts each list's smallest subrequest against the 32 devices: 33 + 1 is no error, and
    32 + 1 more for a second request is one."""
    small = DeviceRequest.prioritized("gpus", gpus(33, name="many"), gpus(1, name="one"))
    result = allocate_on_node("node-a", [claim("train", small)], CLASSES, [NODE_A])
    assert isinstance(result, Allocation) and len(result.devices) == 1
    big = DeviceRequest.prioritized("big", gpus(32, name="all"), gpus(32, name="still-all"))
    over = allocate_on_node("node-a", [claim("train", big, gpus(1))], CLASSES, [NODE_A])
    assert over == (
        f"{CANNOT_ALLOCATE}: claim default/train: number of requested devices 33 exceeds the claim "
        "limit of 32"
    )
