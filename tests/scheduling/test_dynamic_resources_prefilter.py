"""DynamicResources' PreFilter and its queueing hint for ResourceClaims (kube-scheduler 1.34.10,
``dynamicresources.go``): a request whose DeviceClass does not exist rejects the pod before any node is
filtered, in upstream's words (``validateDeviceClass``), and PostFilter then has no claims to deallocate;
a ResourceClaim event moves the pod only when it may help it (``isSchedulableAfterClaimChange``);
PostFilter deallocates a claim allocated where the pod cannot go."""

from __future__ import annotations

from dataclasses import replace

from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.dra.state import DraState
from gpufleet.model.dra import (
    AllocationResult,
    Device,
    DeviceClass,
    DeviceRequest,
    DraObjects,
    PodResourceClaim,
    ResourceClaim,
    ResourceSlice,
)
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.events import ActionType, ClusterChange, ClusterEvent, Resource
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.dynamic_resources import DynamicResources
from gpufleet.scheduling.queueing_hints import hint_map, worth_requeuing
from gpufleet.scheduling.scheduler import Scheduler

GPU = DeviceClass("gpu", ('device.driver == "gpu.example.com"',))
SLICE = ResourceSlice("n1-gpu", "gpu.example.com", "n1", (Device("gpu-0"),), "n1")


def claim(name: str, class_name: str) -> ResourceClaim:
    return ResourceClaim("default", name, (DeviceRequest("gpus", class_name),))


def pod(claim_name: str) -> Pod:
    return Pod("p", resource_claims=(PodResourceClaim("c", resource_claim_name=claim_name),))


def try_schedule(*claims: ResourceClaim) -> tuple[str | None, str]:
    state = ClusterState([Node("n1", allocatable={"pods": 110})])
    state.dra = DraState(DraObjects({GPU.name: GPU}, [SLICE], {c.key: c for c in claims}))
    scheduler = Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state))
    return scheduler.try_schedule(pod(claims[0].name))


def test_a_missing_device_class_rejects_the_pod_at_prefilter_in_upstreams_words() -> None:
    assert try_schedule(claim("train", "no-such-class")) == (
        None,
        "0/1 nodes are available: request gpus: device class no-such-class does not exist. no new claims "
        "to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    )


def test_an_allocated_claim_is_not_checked_for_its_class() -> None:
    """PreFilter checks the classes of claims still to allocate only: an allocated claim's class may be
    gone."""
    allocated = AllocationResult((), node_name="n1")
    gone = ResourceClaim("default", "train", (DeviceRequest("gpus", "deleted-class"),), allocation=allocated)
    assert try_schedule(gone) == ("n1", "")


def test_a_claim_event_for_another_claim_does_not_move_the_pod() -> None:
    hints = hint_map([DynamicResources()])
    rejected = frozenset({"DynamicResources"})
    update = ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.UPDATE)
    mine, other = claim("train", GPU.name), claim("other", GPU.name)
    allocated = AllocationResult((), node_name="n1")
    assert not worth_requeuing(hints, pod("train"), rejected, ClusterChange(update, other, replace(other)))
    assert worth_requeuing(
        hints, pod("train"), rejected, ClusterChange(update, mine, replace(mine, allocation=allocated))
    )
    freed = ClusterChange(update, replace(other, allocation=allocated), other)
    assert worth_requeuing(hints, pod("train"), rejected, freed)


def test_postfilter_deallocates_a_claim_allocated_where_the_pod_cannot_go_and_it_is_placed_later() -> None:
    """``PostFilter``: a claim allocated for nodes no node is among (its ``nodeSelector`` selects rack r9),
    reserved for no pod, is deallocated (``deallocation of ResourceClaim completed``); its update event
    moves the pod (``isSchedulableAfterClaimChange``), whose next attempt after the backoff allocates
    the claim on ``n1``."""
    elsewhere = AllocationResult((), node_selector=(SelectorTerm((Requirement("rack", "In", ("r9",)),)),))
    stuck = replace(claim("train", GPU.name), allocation=elsewhere)
    state = ClusterState([Node("n1", allocatable={"pods": 110})])
    state.dra = DraState(DraObjects({GPU.name: GPU}, [SLICE], {stuck.key: stuck}))
    scheduler = Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state))
    scheduler.add(pod("train"), 0.0)
    (first,) = scheduler.run(0.0)
    assert first.kind == "unschedulable" and first.message == (
        "0/1 nodes are available: 1 resourceclaim not available on the node. deallocation of ResourceClaim "
        "completed, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert state.dra.objects.claims[stuck.key].allocation is None and stuck.key not in state.dra.allocated
    (second,) = scheduler.run(10.0)
    assert (second.kind, second.node) == ("bound", "n1"), second.message
    assert state.dra.allocated[stuck.key].devices[0].device == "gpu-0"
