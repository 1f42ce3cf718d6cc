"""DynamicResources (``pkg/scheduler/framework/plugins/dynamicresources``, Kubernetes 1.34): a pod
with ``spec.resourceClaims`` fits a node only if its claims can be allocated from the devices the
node's ResourceSlices publish (``gpus.dra``). The reason is the allocator's, reported as
unresolvable: the scheduler does not preempt for DRA resources. Pods without claims pass.

PostFilter, which runs before DefaultPreemption (``applyDynamicResources`` puts it there) so its
message comes first in the FitError's: ``no new claims to deallocate`` for a pod without claims;
``still not schedulable`` for one with claims (upstream first deallocates one of the pod's claims
that is allocated but unavailable and reserved for no other pod, ``deallocation of ResourceClaim
completed``; gpufleet keeps no allocation for a pod it did not place, so it never has one to free).

Queueing hints (``EventsToRegister``, none with a hint function: always Queue): a node added,
relabelled or its allocatable changed; ResourceSlices added or updated (published, devices tainted);
and, standing in for the ResourceClaim update that follows when a consumer leaves (gpufleet frees a
claim's devices with its pod, and sends no claim events), a pod deleted from a node.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpufleet.cluster.state import BoolArray, IntArray, NodeRow
from gpufleet.gpus.dra.allocator import filter_reason
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import ActionType, ClusterEvent, EventWithHint, Resource
from gpufleet.scheduling.framework import (
    Code,
    DynamicFilter,
    PodContext,
    PostFilter,
    PostFilterRequest,
    PostFilterResult,
    Status,
)
from gpufleet.scheduling.registry import register

NO_CLAIMS = "no new claims to deallocate"
STILL_NOT_SCHEDULABLE = "still not schedulable"


@register
class DynamicResources(DynamicFilter, PostFilter):
    name = "DynamicResources"
    origin = "kube-scheduler"

    def events_to_register(self) -> Sequence[EventWithHint]:
        node_changes = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        slices = ActionType.ADD | ActionType.UPDATE
        return (
            EventWithHint(ClusterEvent(Resource.NODE, node_changes)),
            EventWithHint(ClusterEvent(Resource.RESOURCE_SLICE, slices)),
            EventWithHint(ClusterEvent(Resource.RESOURCE_CLAIM, slices)),
            EventWithHint(ClusterEvent(Resource.DEVICE_CLASS, slices)),
            EventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE)),
        )

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        reason = STILL_NOT_SCHEDULABLE if request.ctx.pod.resource_claims else NO_CLAIMS
        return PostFilterResult(Status(Code.UNSCHEDULABLE, (reason,), self.name))

    def _reasons(self, ctx: PodContext, idx: IntArray) -> list[str | None]:
        dra = ctx.state.dra
        if dra is None or not ctx.pod.resource_claims:
            return [None] * len(idx)
        out: list[str | None] = []
        for i in idx.tolist():
            outcome = dra.try_node(ctx.pod, ctx.state.nodes[i])
            out.append(filter_reason(outcome) if isinstance(outcome, str) else None)
        return out

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        if ctx.state.dra is None or not ctx.pod.resource_claims:
            return np.ones(len(idx), dtype=bool)
        return np.array([r is None for r in self._reasons(ctx, idx)], dtype=bool)

    def reason_masks(self, ctx: PodContext, idx: IntArray) -> list[tuple[str, BoolArray]]:
        reasons = self._reasons(ctx, idx)
        distinct = sorted({r for r in reasons if r})
        return [(r, np.array([x == r for x in reasons], dtype=bool)) for r in distinct]

    unresolvable = True

    def row_only(self, pod: Pod) -> bool:
        return not pod.resource_claims

    def skips(self, pod: Pod) -> bool:
        """Upstream's PreFilter returns Skip for a pod without ResourceClaims (``dynamicresources.go``)."""
        return not pod.resource_claims

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        """Only asked for pods without claims: the shape cache re-evaluates pods with claims through
        ``passes`` (a claim's fit depends on the node's name, not on its resource row)."""
        return True
