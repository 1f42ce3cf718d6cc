"""The cluster's DRA state as the scheduler sees it: classes, slices, claims, and what is allocated.

kube-scheduler's DynamicResources plugin (Kubernetes 1.34) finds the pod's claims at PreFilter
(a missing claim or template: ``resourceclaim "<name>" not found``), tries to allocate them on
each node at Filter (``allocator.allocate_on_node``; a failure is UnschedulableAndUnresolvable,
so DefaultPreemption never preempts for DRA resources), writes the allocation at Reserve, and
keeps a shared claim allocated while any pod still uses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.model.dra import AllocationResult, DraObjects, ResourceClaim
from gpufleet.model.pod import Pod
from gpufleet.scheduling.dra.allocator import Allocation, MatchCache, allocate_on_node
from gpufleet.scheduling.dra.claims import claims_for_pod


@dataclass
class DraState:
    objects: DraObjects
    allocated: dict[str, AllocationResult] = field(default_factory=dict)  # claim key -> allocation
    users: dict[str, set[str]] = field(default_factory=dict)  # claim key -> pod keys
    cache: MatchCache = field(default_factory=MatchCache)

    def claims_of(self, pod: Pod) -> tuple[ResourceClaim, ...] | str:
        o = self.objects
        return claims_for_pod(pod.namespace, pod.name, pod.resource_claims, o.claims, o.templates)

    def try_node(self, pod: Pod, node: str) -> Allocation | str:
        claims = self.claims_of(pod)
        if isinstance(claims, str):
            return claims
        return allocate_on_node(
            node, claims, self.objects.classes, self.objects.slices, self.allocated, cache=self.cache
        )

    def reserve(self, pod: Pod, allocation: Allocation) -> None:
        for claim, result in allocation.claims:
            self.allocated.setdefault(claim.key, result)
            self.users.setdefault(claim.key, set()).add(pod.key)

    def release(self, pod: Pod) -> None:
        """The pod is gone: a claim no pod uses any more is deallocated."""
        for key in [k for k, users in self.users.items() if pod.key in users]:
            self.users[key].discard(pod.key)
            if not self.users[key]:
                del self.users[key]
                self.allocated.pop(key, None)
