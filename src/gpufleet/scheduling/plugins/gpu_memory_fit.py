"""GpuMemoryFit (gpufleet's, not upstream): refuse nodes whose GPU units cannot hold the memory the
pod's process really needs (``gpufleet.io/gpu-memory``).

kube-scheduler counts GPUs, not their memory, so a pod that needs 14 GB is happily placed on a
``1g.10gb`` MIG instance and then fails with CUDA out-of-memory. Enabled in a profile (e.g.
``multiPoint: {enabled: [{name: GpuMemoryFit}]}``), this filter compares the pod's need with what
one unit of the GPU resource it requests holds on each node, read from GPU Feature Discovery's
labels: a whole GPU ``nvidia.com/gpu.memory`` (MiB), an MPS replica that divided by
``nvidia.com/gpu.replicas``, a MIG instance its profile's memory (``mig-1g.10gb``: 10 GB). A
time-sliced replica shares the whole GPU's memory, so only that bound is checked here. A
fractional request (``model.gpu_share``) holds its share of the GPU's memory when HAMi caps it, the
whole GPU's memory otherwise (KAI: what the neighbours leave is not known to a per-node filter).

Queueing hint (gpufleet's, conservative): a node added, relabelled (GPU Feature Discovery, a MIG
layout) or with its allocatable changed moves the pods it rejected, always.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpufleet.model.gpu_share import MILLI
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU
from gpufleet.scheduling.events import ActionType, ClusterEvent, EventWithHint, Resource
from gpufleet.scheduling.framework import StaticFilter
from gpufleet.scheduling.registry import register

_MIG = re.compile(r"^nvidia\.com/mig-\d+g\.(\d+)gb$")
MESSAGE = "node(s) didn't have enough GPU memory per device (GpuMemoryFit)"


def unit_memory_bytes(node: Node, resource: str) -> float | None:
    """What one unit of ``resource`` holds on ``node``, or None when the node does not say."""
    mig = _MIG.match(resource)
    if mig:
        return float(mig.group(1)) * 1e9
    if resource != GPU:
        return None
    mib = node.labels.get("nvidia.com/gpu.memory", "")
    if not mib.isdigit():
        return None
    memory = float(mib) * 2**20
    if node.labels.get("nvidia.com/gpu.sharing-strategy") == "mps":
        return memory / max(int(node.labels.get("nvidia.com/gpu.replicas", "1") or 1), 1)
    return memory


@register
class GpuMemoryFit(StaticFilter):
    name = "GpuMemoryFit"

    def events_to_register(self) -> Sequence[EventWithHint]:
        node_changes = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        return (EventWithHint(ClusterEvent(Resource.NODE, node_changes)),)

    def reject(self, pod: Pod, node: Node) -> str | None:
        need = pod.behavior.gpu_memory_bytes
        if need is None:
            return None
        share = pod.gpu_share
        if share is not None:
            gpu = unit_memory_bytes(node, GPU)
            per = share.per_gpu(gpu) if share.isolated else None
            held = gpu * per[1] / MILLI if gpu is not None and per is not None else gpu
            return MESSAGE if held is not None and need > held else None
        for resource in pod.requests:
            held = unit_memory_bytes(node, resource)
            if held is not None and need > held:
                return MESSAGE
        return None

    def reads(self, pod: Pod) -> tuple[object, ...]:
        """Nothing without a GPU memory need; else the need, the share and the resources requested."""
        need = pod.behavior.gpu_memory_bytes
        return (None,) if need is None else (need, pod.gpu_share, tuple(sorted(pod.requests)))
