"""cluster-autoscaler's cluster-wide resource limits on scale-up (``core/scaleup/resource/manager.go``).

The maxima of ``--cores-total``, ``--memory-total`` (``<min>:<max>``) and ``--gpu-total``
(``<type>:<min>:<max>``) bound what the cluster's nodes may have in all: the cores and memory of their
capacity (``GetNodeCoresAndMemory``: cores rounded up) and, per GPU type (the node's
``nvidia.com/gpu.product`` label, gpufleet's ``GPULabel``), their allocatable GPUs
(``GpuCustomResourcesProcessor.GetNodeGpuTarget``). ``ResourcesLeft`` is each limit less what the cluster has
(each node group's target size times its template, plus the nodes of no group); a group whose one new node
exceeds what is left is skipped (``IsNodeGroupResourceExceeded``: ``max cluster <resources> limit reached``),
and the chosen option's node count is cut to what is left (``ApplyLimits``). The minima bound scale-down, not
modelled (the scenario reader warns of one above 0).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from gpufleet.model.node import Node
from gpufleet.model.resources import CPU, GPU, MEMORY
from gpufleet.model.simulation import AutoscalerSettings

#: The label that names a node's GPU type for ``--gpu-total`` (the cloud provider's ``GPULabel``).
GPU_TYPE_LABEL = "nvidia.com/gpu.product"


def cluster_maxima(settings: AutoscalerSettings) -> dict[str, int]:
    """The cluster's maxima by resource (``ResourceLimiter.GetMax``): cores, memory in bytes, GPUs by
    type."""
    return {CPU: settings.max_cores_total, MEMORY: settings.max_memory_total, **dict(settings.gpu_total)}


def delta_for_node(node: Node) -> dict[str, int]:
    """``Manager.DeltaForNode``: what one node of this template adds: its cores (its capacity's cpu rounded
    up, ``Quantity.Value``), its memory in bytes and, when it has a GPU type label, its allocatable GPUs under
    that type (upstream adds the GPU target only when a GPU limit is set; a resource with no limit is not
    checked, so the outcome is the same)."""
    capacity = {**node.allocatable, **node.capacity}
    delta = {CPU: math.ceil(max(capacity.get(CPU, 0), 0) / 1000), MEMORY: max(capacity.get(MEMORY, 0), 0)}
    gpu_type, gpus = node.labels.get(GPU_TYPE_LABEL), node.allocatable.get(GPU, 0)
    if gpu_type and gpus > 0:
        delta[gpu_type] = gpus
    return delta


def cluster_totals(counted: Iterable[tuple[Node, int]]) -> Counter[str]:
    """What the nodes have in all, by resource (``coresMemoryTotal`` and the GPU targets): ``counted`` holds
    each group's template with its target size, and each node of no group with 1."""
    total: Counter[str] = Counter()
    for node, count in counted:
        total.update({r: v * count for r, v in delta_for_node(node).items()})
    return total


def resources_left(
    maxima: Mapping[str, int], counted: Iterable[tuple[Node, int]], more: Mapping[str, int] | None = None
) -> dict[str, int]:
    """``Manager.ResourcesLeft``: for each limit above zero, what is left of it below its maximum (never
    below zero, ``computeBelowMax``) once the cluster's nodes are counted (``cluster_totals`` of
    ``counted``, plus ``more``: totals counted before)."""
    total = cluster_totals(counted)
    total.update(more or {})
    return {r: max(high - total[r], 0) for r, high in maxima.items() if high > 0}


def exceeded(left: Mapping[str, int], delta: Mapping[str, int]) -> list[str]:
    """``CheckDeltaWithinLimits``: the resources, sorted, of which ``delta`` needs more than is left."""
    return sorted(r for r, d in delta.items() if r in left and d > 0 and d > left[r])


def limit_reason(resources: Sequence[str]) -> str:
    """``NewMaxResourceLimitReached``'s message."""
    return f"max cluster {', '.join(resources)} limit reached"


def apply_limits(count: int, left: Mapping[str, int], delta: Mapping[str, int]) -> int:
    """``Manager.ApplyLimits``: the new nodes cut, resource by resource, to as many as what is left of it
    holds (a group whose one node exceeds a limit was skipped before, so at least one)."""
    for r, d in delta.items():
        if r in left and count * d > left[r]:
            count = left[r] // d
    return count
