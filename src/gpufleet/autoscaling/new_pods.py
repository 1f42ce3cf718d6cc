"""cluster-autoscaler's wait for "very new" unschedulable pods (``core/static_autoscaler.go``,
``allPodsAreNew``; ``core/utils/utils.go``, ``GetOldestCreateTime`` and ``GetOldestCreateTimeWithGpu``;
``utils/gpu/gpu.go``, ``PodRequestsGpu``).

After the pod list processors and ``filterOutYoungPods``, when pods are left to help, ``--max-nodes-total``
is not reached and ``--bypassed-scheduler-names`` is empty, ``RunOnce`` scales up only once the oldest of
those pods is at least ``unschedulablePodTimeBuffer`` (2 s) old and, when one of them requests a GPU vendor
resource, the oldest of those GPU pods at least ``unschedulablePodWithGpuTimeBuffer`` (30 s) old: the pods
are new while ``oldest.Add(buffer).After(now)``. In a loop that waits, the orchestrator is not called (no
``NotTriggerScaleUp`` event) and scale-down is in cooldown (``DisableScaleDownForLoop``).

A pod requests a GPU when its requests name one of ``GPUVendorResourceNames`` (a HAMi share came from an
``nvidia.com/gpu`` request, so it does too); a GPU asked through DRA or a KAI fraction annotation does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpufleet.model.pod import Pod

#: ``gpu.GPUVendorResourceNames``
GPU_VENDOR_RESOURCES = ("nvidia.com/gpu", "habana.ai/gaudi", "amd.com/gpu", "microsoft.com/directx")
#: ``unschedulablePodTimeBuffer``
POD_TIME_BUFFER_S = 2.0
#: ``unschedulablePodWithGpuTimeBuffer``
GPU_POD_TIME_BUFFER_S = 30.0


def requests_gpu(pod: Pod) -> bool:
    """``PodRequestsGpu``: the pod's requests name a GPU vendor resource."""
    share = pod.gpu_share
    return any(r in pod.requests for r in GPU_VENDOR_RESOURCES) or (share is not None and share.isolated)


def new_until(pods: Iterable[Pod], created_s: Mapping[str, float], now: float) -> float | None:
    """``allPodsAreNew``: when the pods are all very new at ``now``, the time from which they are not (the
    first ``now`` at which neither buffer is ``After`` it); else None. ``created_s``: each pod's
    ``creationTimestamp``, by key."""
    listed = list(pods)
    if not listed:
        return None
    oldest = min(created_s[p.key] for p in listed)
    with_gpu = [created_s[p.key] for p in listed if requests_gpu(p)]
    # the oldest GPU pod is no older than the oldest pod: its buffer, the longer, ends last
    end = min(with_gpu) + GPU_POD_TIME_BUFFER_S if with_gpu else oldest + POD_TIME_BUFFER_S
    return end if end > now else None


def wait_hint(until: float) -> str:
    """What ``pod_hints`` says of a pending pod in a loop that waited."""
    return (
        f"cluster-autoscaler waits for unschedulable pods to be {POD_TIME_BUFFER_S:g}s old "
        f"({GPU_POD_TIME_BUFFER_S:g}s with a GPU pod) before scaling up (allPodsAreNew): "
        f"the wait ends at {until:g} s"
    )
