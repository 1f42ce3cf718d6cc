"""Filters whose PreFilter returns Skip for a pod are not run for it (kube-scheduler's
``framework.Skip``: ``RunFilterPlugins`` leaves out the plugins in ``CycleState.SkipFilterPlugins``).

DynamicResources' PreFilter Skips a pod without ResourceClaims (``dynamicresources.go``: "no
claims"); GpuShare passes every node for a pod without a fractional request. The shape cache leaves
such filters out of its evaluation; a pod that needs them keeps them.
"""

from __future__ import annotations

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.dra import PodResourceClaim
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.scheduler import Scheduler
from gpufleet.scheduling.shape_cache import ShapeCache


def cache_for(pod: Pod) -> ShapeCache:
    state = ClusterState([gpu_node(f"n{k}", 4) for k in range(3)])
    scheduler = Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state))
    profile = scheduler.profiles["default-scheduler"]
    return ShapeCache(profile, PodContext(pod, state))


def filter_names(cache: ShapeCache) -> list[str]:
    return [f.name for f in cache.dynamic_filters]


def test_a_pod_without_claims_or_share_skips_dynamic_resources_and_gpu_share() -> None:
    cache = cache_for(gpu_pod("whole", 1))
    assert "DynamicResources" not in filter_names(cache) and "GpuShare" not in filter_names(cache)
    assert "NodeResourcesFit" in filter_names(cache)
    assert cache.ok.tolist() == [True, True, True]


def test_a_pod_with_a_share_keeps_gpu_share_and_one_with_claims_keeps_dynamic_resources() -> None:
    shared = Pod("half", requests={"cpu": 1000}, gpu_share=GpuShare(1, compute_milli=500))
    assert "GpuShare" in filter_names(cache_for(shared))
    claim = PodResourceClaim("gpu", resource_claim_name="c")
    claims = Pod("dra", requests={"cpu": 1000}, resource_claims=(claim,))
    assert "DynamicResources" in filter_names(cache_for(claims))
