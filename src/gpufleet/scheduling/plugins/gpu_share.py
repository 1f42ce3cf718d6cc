"""GpuShare (gpufleet's, not upstream): a pod with a fractional GPU request fits a node only if
enough of its GPUs have the compute and memory left (``cluster.shares``).

kube-scheduler does not know fractions: KAI Scheduler's ``gpu-fraction``/``gpu-memory`` annotations
are honoured by KAI's own scheduler, HAMi's ``nvidia.com/gpumem``/``gpucores`` by HAMi's scheduler
extender. gpufleet runs this filter in every profile by default so that such pods are placed as
those schedulers place them (``disabled: [{name: GpuShare}]`` shows what plain kube-scheduler
would do: the pod then asks for no GPU at all). Pods without a fractional request pass.

Queueing hints (gpufleet's, conservative): a pod deleted from a node or nominated to one
(NodeResourcesFit's ``isSchedulableAfterPodEvent``), and a node added or its allocatable or labels
changed (its GPUs registered, healed, relabelled), always.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpufleet.cluster.state import BoolArray, IntArray, NodeRow
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU
from gpufleet.scheduling.events import ActionType, ClusterEvent, EventWithHint, Resource
from gpufleet.scheduling.framework import DynamicFilter, PodContext
from gpufleet.scheduling.plugins.node_resources_fit import POD_FREES_ROOM
from gpufleet.scheduling.registry import register


@register
class GpuShare(DynamicFilter):
    name = "GpuShare"
    monotone = True  # (it rejects for lack of room on the node's GPUs)

    def events_to_register(self) -> Sequence[EventWithHint]:
        node_changes = ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE | ActionType.UPDATE_NODE_LABEL
        return (POD_FREES_ROOM, EventWithHint(ClusterEvent(Resource.NODE, node_changes)))

    def passes(self, ctx: PodContext, idx: IntArray) -> BoolArray:
        share = ctx.pod.gpu_share
        if share is None:
            return np.ones(len(idx), dtype=bool)
        return ctx.state.gpu_shares().fits(share, idx)

    def reason_masks(self, ctx: PodContext, idx: IntArray) -> list[tuple[str, BoolArray]]:
        share = ctx.pod.gpu_share
        return [] if share is None else ctx.state.gpu_shares().reasons(share, idx)

    def row_only(self, pod: Pod) -> bool:
        """A pod without a fractional request passes everywhere; one with reads the node's shared GPUs."""
        return pod.gpu_share is None

    def skips(self, pod: Pod) -> bool:
        """A pod without a fractional request passes everywhere."""
        return pod.gpu_share is None

    def passes_node(self, ctx: PodContext, row: NodeRow, node: int) -> bool:
        """Unshared GPUs come from ``row`` (as preemption's victim search leaves it: whole-GPU
        victims, and shared GPUs all of whose shares are victims, are free there), shared ones from
        the ledger (the room a victim's share leaves beside other shares is not counted: a
        conservative bound)."""
        share = ctx.pod.gpu_share
        if share is None:
            return True
        col = ctx.state.resource_column(GPU)
        alloc, requested, _ = row
        return ctx.state.gpu_shares().fits_node(share, node, alloc[col] - requested[col])
