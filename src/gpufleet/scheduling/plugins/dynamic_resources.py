"""DynamicResources (``pkg/scheduler/framework/plugins/dynamicresources``, Kubernetes 1.34): a pod
with ``spec.resourceClaims`` fits a node only if its claims can be allocated from the devices the
node's ResourceSlices publish (``gpus.dra``). The reason is the allocator's, reported as
unresolvable: the scheduler does not preempt for DRA resources. Pods without claims pass. Where the
allocator errs (a CEL runtime error in a selector: ``allocator.AllocationError``), Filter returns an
Error status (``statusError``): ``running "DynamicResources" filter plugin: claim <ns>/<name>: selector
#0: CEL runtime error: no such key: <attribute>``, which aborts the attempt (``framework.PluginError``).

PreFilter (``PreFilter``): Skip for a pod without claims; a claim the pod names that does not exist
(``resourceclaim "<name>" not found``), or a request of a claim still to allocate whose DeviceClass does
not exist (``request <request>: device class <class> does not exist``; a prioritized list's subrequest
as ``<request>/<subrequest>``), rejects the pod before any node is filtered, UnschedulableAndUnresolvable.

PostFilter, which runs before DefaultPreemption (``applyDynamicResources`` puts it there) so its
message comes first in the FitError's: ``no new claims to deallocate`` for a pod without claims or
one PreFilter rejected (its cycle state then holds no claims); ``deallocation of ResourceClaim
completed`` when it deallocates one of the pod's claims (:func:`unavailable_claim`: allocated for nodes
that do not include one Filter tried, reserved for no other pod: a claim allocated in its manifest's
status), so that a later attempt allocates it where the pod fits; else ``still not schedulable``.

Queueing hints (``EventsToRegister``): a node added, relabelled or its allocatable changed;
ResourceSlices added or updated (published, devices tainted); DeviceClasses added or updated; a
ResourceClaim added or updated, with upstream's hint (:meth:`DynamicResources.after_claim_change`);
and, standing in for the ResourceClaim update that follows when a consumer leaves (gpufleet frees a
claim's devices with its pod, and sends no claim events), a pod deleted from a node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gpufleet.cluster.state import BoolArray, IntArray, NodeRow
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import ActionType, ClusterEvent, EventWithHint, QueueingHint, Resource, as_new
from gpufleet.scheduling.framework import (
    SUCCESS,
    Code,
    DynamicFilter,
    PodContext,
    PostFilter,
    PostFilterRequest,
    PostFilterResult,
    PreFilter,
    Status,
    filter_error,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.registry import register

if TYPE_CHECKING:
    from gpufleet.gpus.dra.state import DraState

NO_CLAIMS = "no new claims to deallocate"
STILL_NOT_SCHEDULABLE = "still not schedulable"
DEALLOCATED = "deallocation of ResourceClaim completed"
_SKIP = Status(Code.SKIP, (), "DynamicResources")


def pre_filter_refusal(dra: DraState, pod: Pod) -> Status | None:
    """Why DynamicResources' ``PreFilter`` (dynamicresources.go) rejects a pod with claims, or None: a claim
    it names is missing; or, for each claim not yet allocated, a request's DeviceClass (each subrequest's,
    for a prioritized list) does not exist (``validateDeviceClass``: ``request <name>: device class
    <class> does not exist``), or the request names none (``unsupported request type``, an Error)."""
    from gpufleet.model.dra import request_ref  # (loaded with ``dra``)

    claims = dra.claims_of(pod)
    if isinstance(claims, str):
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (claims,), DynamicResources.name)
    classes = dra.objects.classes
    for claim in claims:
        if dra.allocated.get(claim.key, claim.allocation) is not None:
            continue
        for request in claim.requests:
            for alternative in request.alternatives:
                sub = alternative.name if request.first_available else None
                ref = request_ref(request.name, sub)
                name = alternative.device_class_name
                if not name:
                    return Status(
                        Code.ERROR, (f"request {ref}: unsupported request type",), DynamicResources.name
                    )
                if name not in classes:
                    reason = f"request {ref}: device class {name} does not exist"
                    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,), DynamicResources.name)
    return None


def unavailable_claim(dra: DraState, pod: Pod, nodes: Sequence[Node]) -> str | None:
    """The claim PostFilter deallocates (``PostFilter``, dynamicresources.go), or None: one of the pod's
    allocated claims that Filter found not available on a node (its allocation's ``nodeSelector`` does
    not select it), reserved for no pod or for this pod alone. Upstream takes one at random among them
    (a map's order); gpufleet the first in the pod's order. Upstream looks at the nodes its Filter
    reached (those every earlier filter passed); gpufleet at every node."""
    claims = dra.claims_of(pod)
    if isinstance(claims, str):
        return None
    for claim in claims:
        allocation = dra.allocated.get(claim.key, claim.allocation)
        if allocation is None or all(allocation.admits(n) for n in nodes):
            continue
        if not dra.users.get(claim.key, set()) - {pod.key}:
            return claim.key
    return None


@register
class DynamicResources(DynamicFilter, PreFilter, PostFilter):
    name = "DynamicResources"
    origin = "kube-scheduler"

    def events_to_register(self) -> Sequence[EventWithHint]:
        node_changes = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        slices = ActionType.ADD | ActionType.UPDATE
        return (
            EventWithHint(ClusterEvent(Resource.NODE, node_changes)),
            EventWithHint(ClusterEvent(Resource.RESOURCE_SLICE, slices)),
            EventWithHint(ClusterEvent(Resource.RESOURCE_CLAIM, slices), self.after_claim_change),
            EventWithHint(ClusterEvent(Resource.DEVICE_CLASS, slices)),
            EventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE)),
        )

    def after_claim_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterClaimChange``: a claim deallocated may free devices for any pod (Queue);
        another claim than the pod's changing does not help it; its claim created, or its status (the
        allocation) changed, may. A change that leaves the status as it was (a finalizer added) does not.
        Upstream first skips a pod one of whose claims is missing (``foreachPodResourceClaim``): the
        hint has no cluster state here, so such a pod is queued and PreFilter rejects it again."""
        from gpufleet.gpus.dra.claims import pod_claim_keys  # (DRA's machinery loaded where claims are)
        from gpufleet.model.dra import ResourceClaim

        before, after = as_new(ResourceClaim, old, new)
        if before is not None and before.allocation is not None and after.allocation is None:
            return QueueingHint.QUEUE
        if after.key not in pod_claim_keys(pod.namespace, pod.name, pod.resource_claims):
            return QueueingHint.SKIP
        if before is None or before.allocation != after.allocation:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def pre_filter(self, ctx: PodContext, gangs: GangView) -> Status:
        """Skip for a pod without claims; else :func:`pre_filter_refusal`'s rejection, or success."""
        dra = ctx.state.dra
        if dra is None or not ctx.pod.resource_claims:
            return _SKIP
        return pre_filter_refusal(dra, ctx.pod) or SUCCESS

    def post_filter(self, request: PostFilterRequest) -> PostFilterResult:
        pod, state = request.ctx.pod, request.ctx.state
        dra = state.dra
        refused = dra is not None and pod.resource_claims and pre_filter_refusal(dra, pod) is not None
        if not pod.resource_claims or refused:
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (NO_CLAIMS,), self.name))
        stuck = (
            None
            if dra is None
            else unavailable_claim(dra, pod, [state.nodes[i] for i in state.index.values()])
        )
        if stuck is not None:
            status = Status(Code.UNSCHEDULABLE, (DEALLOCATED,), self.name)
            return PostFilterResult(status, deallocate=(stuck,))
        return PostFilterResult(Status(Code.UNSCHEDULABLE, (STILL_NOT_SCHEDULABLE,), self.name))

    def _reasons(self, ctx: PodContext, idx: IntArray) -> list[str | None]:
        dra = ctx.state.dra
        if dra is None or not ctx.pod.resource_claims:
            return [None] * len(idx)
        from gpufleet.gpus.dra.allocator import AllocationError, filter_reason  # (loaded with ``dra``)

        out: list[str | None] = []
        for i in idx.tolist():
            outcome = dra.try_node(ctx.pod, ctx.state.nodes[i])
            if isinstance(outcome, AllocationError):  # ``statusError``: the attempt is aborted
                raise filter_error(self.name, outcome)
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
