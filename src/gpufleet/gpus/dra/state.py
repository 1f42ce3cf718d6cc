"""The cluster's DRA state as the scheduler sees it: classes, slices, claims, and what is allocated.

kube-scheduler's DynamicResources plugin (Kubernetes 1.34) finds the pod's claims at PreFilter
(a missing claim or template: ``resourceclaim "<name>" not found``), tries to allocate them on
each node at Filter (``allocator.allocate_on_node``; a failure is UnschedulableAndUnresolvable,
so DefaultPreemption never preempts for DRA resources), writes the allocation at Reserve, and
keeps a shared claim allocated while any pod still uses it.

``users`` is each claim's ``status.reservedFor``: at most ``RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE``
(256) consumers. kube-scheduler does not check that limit before binding (``CanBeReserved`` allows
any number); its PreBind appends the pod to ``reservedFor`` and the API server's validation refuses
the 257th, so the pod fails PreBind with the API server's words (:meth:`DraState.reserve`).

An admin-access claim's devices (``adminAccess``, DRAAdminAccess, beta and on in 1.34) block no one:
the scheduler builds its allocated-devices set without admin-access results (``foreachAllocatedDevice``),
so a monitoring pod holding every GPU of a node for admin access leaves them to other pods. They do
count in cluster-autoscaler's device utilisation, which takes every result of the node's claims
(``CalculateDynamicResourceUtilization``, ``groupAllocatedDevices``): :meth:`DraState.allocated_devices`.

``tainted``: devices their driver reports unhealthy. The NVIDIA DRA driver's health check
(``kubernetes-sigs/dra-driver-nvidia-gpu``, ``DeviceHealthCheck``: an NVML XID event the device plugin
would also treat as fatal) republishes the device in its ResourceSlice with a ``NoSchedule`` device
taint (KEP-5055): the allocator skips it (claims here tolerate no taint) and what was allocated stays.

:meth:`DraState.fork` gives the copy cluster-autoscaler simulates on (its DRA snapshot): the same
objects, its own allocations, and the ResourceSlices of nodes that exist only in the simulation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from gpufleet.gpus.dra.allocator import Allocation, MatchCache, allocate_on_node, node_pools
from gpufleet.gpus.dra.claims import claims_for_pod
from gpufleet.model.dra import (
    AllocationResult,
    Device,
    DeviceID,
    DraObjects,
    ResourceClaim,
    ResourceSlice,
)
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod

#: ``ResourceClaimReservedForMaxSize`` (k8s.io/api resource/v1): consumers one claim may have.
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256


def reserved_for_full(claim: ResourceClaim, consumers: int) -> str:
    """What the API server answers PreBind's ``reservedFor`` update for one consumer too many
    (``validateResourceClaimStatusUpdate``: ``field.TooMany``), as ``bindClaim`` wraps it."""
    return (
        f'add reservation to claim {claim.key}: ResourceClaim.resource.k8s.io "{claim.name}" is invalid: '
        f"status.reservedFor: Too many: {consumers}: must have at most "
        f"{RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE} items"
    )


@dataclass
class DraState:
    objects: DraObjects
    allocated: dict[str, AllocationResult] = field(default_factory=dict)  # claim key -> allocation
    users: dict[str, set[str]] = field(default_factory=dict)  # claim key -> pod keys (reservedFor)
    cache: MatchCache = field(default_factory=MatchCache)
    tainted: set[DeviceID] = field(default_factory=set)  # NoSchedule: never allocated
    _by_node: dict[str | None, list[ResourceSlice]] = field(default_factory=dict, init=False, repr=False)
    _indexed: tuple[list[ResourceSlice] | None, int] = field(default=(None, -1), init=False, repr=False)
    _pools_seen: set[tuple[str, str]] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        self._pools_seen = {(s.driver, s.pool) for s in self.objects.slices}
        self._seed_status_allocations()

    def _seed_status_allocations(self) -> None:
        """Claims allocated already (their ``status.allocation``, as read) hold their devices, whichever
        pod uses them: the scheduler's PreFilter takes every allocated claim's devices as in use
        (``ListAllAllocatedDevices`` over the claim tracker, dynamicresources.go), not only the pod's."""
        for key, claim in self.objects.claims.items():
            if claim.allocation is not None:
                self.allocated.setdefault(key, claim.allocation)

    def claims_of(self, pod: Pod) -> tuple[ResourceClaim, ...] | str:
        o = self.objects
        return claims_for_pod(pod.namespace, pod.name, pod.resource_claims, o.claims, o.templates)

    def slices_on(self, node: str) -> list[ResourceSlice]:
        """The slices a pod on ``node`` may reach: the node's own, those of every node (``allNodes``) and
        those of the nodes a ``nodeSelector`` selects (the allocator matches them to the node)."""
        slices = self.objects.slices
        if self._indexed[0] is not slices or self._indexed[1] != len(slices):
            self._by_node = {}
            self._index(slices)
        return [*self._by_node.get(node, ()), *self._by_node.get(None, ())]

    def _index(self, slices: list[ResourceSlice]) -> None:
        for s in slices:  # None: every node's, or some nodes' by their labels
            if s.all_nodes or s.node_name is not None or s.node_selector:
                self._by_node.setdefault(s.node_name, []).append(s)
        self._indexed = (self.objects.slices, len(self.objects.slices))

    def try_node(self, pod: Pod, node: Node | str) -> Allocation | str:
        """The DynamicResources Filter on ``node`` (by name: a node with no labels but its hostname)."""
        claims = self.claims_of(pod)
        if isinstance(claims, str):
            return claims
        slices = self.slices_on(node if isinstance(node, str) else node.name)
        classes = self.objects.classes
        return allocate_on_node(
            node, claims, classes, slices, self.allocated, cache=self.cache, tainted=self.tainted
        )

    def reserve(self, pod: Pod, allocation: Allocation) -> str | None:
        """Record the allocation and add the pod to each claim's ``reservedFor``; or, changing nothing,
        the API server's refusal when a claim already has the maximum number of consumers."""
        for claim, _ in allocation.claims:
            users = self.users.get(claim.key, set())
            if pod.key not in users and len(users) >= RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE:
                return reserved_for_full(claim, len(users) + 1)
        for claim, result in allocation.claims:
            self.allocated.setdefault(claim.key, result)
            self.users.setdefault(claim.key, set()).add(pod.key)
        return None

    def place(self, pod: Pod, node: Node | str) -> str | None:
        """Filter and Reserve in one step, as a simulation places a pod: None when it took the node."""
        allocation = self.try_node(pod, node)
        return allocation if isinstance(allocation, str) else self.reserve(pod, allocation)

    def allocations_of(self, pod: Pod) -> tuple[tuple[str, AllocationResult], ...]:
        """The pod's claims that hold an allocation, each with it, in the pod's order."""
        claims = self.claims_of(pod)
        if isinstance(claims, str):
            return ()
        held = ((c.key, self.allocated.get(c.key, c.allocation)) for c in claims)
        return tuple((key, allocation) for key, allocation in held if allocation is not None)

    def release(self, pod: Pod) -> None:
        """The pod is gone: a claim no pod uses any more is deallocated."""
        for key in [k for k, users in self.users.items() if pod.key in users]:
            self.users[key].discard(pod.key)
            if not self.users[key]:
                del self.users[key]
                self.allocated.pop(key, None)

    def deallocate(self, key: str) -> tuple[ResourceClaim, ResourceClaim] | None:
        """DynamicResources' PostFilter clears the claim's ``allocation`` and ``reservedFor``
        (``PostFilter``: ``UpdateStatus``): the claim before and after, or None when it is unknown.
        The claims (``objects.claims``) are shared with this state's forks, which live no longer than
        one cluster-autoscaler loop."""
        claim = self.objects.claims.get(key)
        if claim is None:
            return None
        before = replace(claim, allocation=self.allocated.get(key, claim.allocation))
        after = replace(claim, allocation=None)
        self.objects.claims[key] = after
        self.allocated.pop(key, None)
        self.users.pop(key, None)
        return before, after

    # -- ResourceSlices come and go ----------------------------------------------------------
    def publish(self, slices: Iterable[ResourceSlice]) -> None:
        """A driver publishes slices. A pool published before may now name other devices under the
        same IDs, so the selector outcomes go then."""
        new = list(slices)
        pools = {(s.driver, s.pool) for s in new}
        if pools & self._pools_seen:
            self.cache.clear()
        self._pools_seen |= pools
        current = self._indexed[0] is self.objects.slices and self._indexed[1] == len(self.objects.slices)
        self.objects.slices.extend(new)
        if current:
            self._index(new)

    def withdraw(self, node: str) -> None:
        """The node is gone, and the slices it published with it."""
        self.objects.slices = [s for s in self.objects.slices if s.node_name != node]

    def fork(self, slices: Sequence[ResourceSlice] = ()) -> DraState:
        """A copy to simulate on (cluster-autoscaler's forked DRA snapshot): allocations and
        reservations change only there; ``slices`` are published there only. Selector outcomes
        are shared: a device ID names the same device in both."""
        objects = replace(self.objects, slices=[*self.objects.slices, *slices])
        users = {k: set(v) for k, v in self.users.items()}
        return DraState(objects, dict(self.allocated), users, self.cache, set(self.tainted))

    # -- what is allocated where ---------------------------------------------------------------
    def allocated_devices(self) -> set[DeviceID]:
        """The devices allocated claims name, admin access or not (cluster-autoscaler's
        ``groupAllocatedDevices``)."""
        return {device for result in self.allocated.values() for device in result.devices}

    def pool_utilization(self, node: str) -> float | None:
        """cluster-autoscaler's utilisation of a node with node-local slices (``utilization.Calculate``
        with DRA: ``HighestDynamicResourceUtilization``): allocated over all devices of each of the
        node's pools (newest generation), the highest; None when the node publishes no slice."""
        own = [s for s in self.slices_on(node) if s.node_name == node and not s.all_nodes]
        if not own:
            return None
        allocated = self.allocated_devices()
        shares = []
        for pool in node_pools(Node(node), own):
            ids = [DeviceID(pool.driver, pool.name, d.name) for s in pool.slices for d in s.devices]
            if ids:
                shares.append(sum(1 for d in ids if d in allocated) / len(ids))
        return max(shares, default=0.0)

    def incomplete_pool(self, node: str) -> bool:
        """Whether one of the node's local pools has fewer slices of its newest generation than its
        ``resourceSliceCount`` (``allCurrentGenSlices``' error: cluster-autoscaler cannot compute the
        node's utilisation)."""
        own = [s for s in self.slices_on(node) if s.node_name == node and not s.all_nodes]
        return any(pool.incomplete for pool in node_pools(Node(node), own))

    def holders(self, device: DeviceID) -> set[str]:
        """The pods whose claims hold ``device``."""
        claims = [k for k, result in self.allocated.items() if device in result.devices]
        return {pod for k in claims for pod in self.users.get(k, ())}

    def pod_devices(self, pod: Pod, node: str) -> list[tuple[DeviceID, Device]]:
        """The devices of the pod's allocated claims on ``node``, in claim order."""
        claims = self.claims_of(pod)
        if isinstance(claims, str):
            return []
        wanted = [d for c in claims if (r := self.allocated.get(c.key)) is not None for d in r.devices]
        known = {DeviceID(s.driver, s.pool, d.name): d for s in self.slices_on(node) for d in s.devices}
        return [(d, known[d]) for d in wanted if d in known]
