"""The device ledger (``gpus.ledger``): a pod's device units are decided as it is bound, travel in
its scheduling outcome, and go back when it leaves its node."""

from __future__ import annotations

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.shares import SharePlacement
from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.devices import NodeDevices
from gpufleet.gpus.ledger import DeviceLedger
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.scheduler import Scheduler


def test_a_bound_pods_outcome_carries_the_gpus_it_got_and_they_come_back_when_it_leaves() -> None:
    node = gpu_node("h100", 8, labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})
    state = ClusterState([node])
    ledger = DeviceLedger(state)
    scheduler = Scheduler(SchedulerConfig("test"), state, GangView(state))
    scheduler.add(gpu_pod("a", 2), 0.0)
    scheduler.add(gpu_pod("b", 4), 0.0)
    outcomes = {o.pod.name: o for o in scheduler.run(0.0)}
    assert [u.gpu for u in outcomes["a"].devices] == [0, 1]
    assert len(outcomes["b"].devices) == 4 and {u.gpu for u in outcomes["b"].devices}.isdisjoint({0, 1})
    free, _ = ledger.free_gpus(0) or ([], None)
    assert len(free) == 2
    state.unassign("default/a")
    free, _ = ledger.free_gpus(0) or ([], None)
    assert 0 in free and 1 in free and len(free) == 4


def test_without_a_ledger_nothing_is_allocated() -> None:
    state = ClusterState([gpu_node("n", 8)])
    scheduler = Scheduler(SchedulerConfig("test"), state, GangView(state))
    scheduler.add(gpu_pod("a", 2), 0.0)
    (outcome,) = scheduler.run(0.0)
    assert outcome.kind == "bound" and outcome.devices == ()


def test_the_device_plugin_refuses_a_pod_its_healthy_free_gpus_cannot_cover() -> None:
    """kubelet's devicemanager ``devicesToAllocate``: "requested number of devices unavailable for R.
    Requested: N, Available: K" where fewer healthy units are free than the pod asks; none taken then."""
    devices = NodeDevices.of(gpu_node("h100", 8))
    devices.unhealthy = {"3"}
    assert devices.unavailable(gpu_pod("all", 8)) == (
        "requested number of devices unavailable for nvidia.com/gpu. Requested: 8, Available: 7"
    )
    assert devices.unavailable(gpu_pod("seven", 7)) is None
    assert [u.gpu for u in devices.allocate(gpu_pod("seven", 7))] == [0, 1, 2, 4, 5, 6, 7]
    assert devices.unavailable(gpu_pod("one", 1)) == (
        "requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0"
    )


def test_a_share_that_opens_a_gpu_is_refused_where_every_gpu_is_held_or_unhealthy() -> None:
    """A fractional share whose slot no GPU holds yet needs a GPU nothing holds and the device plugin
    reports healthy: with GPU 0 holding slot 0's shares and GPU 1 Unhealthy, there is none. A share on
    slot 0, open already, goes on GPU 0."""
    devices = NodeDevices.of(gpu_node("a100", 2))
    first = gpu_pod("first", 0, gpu_share=GpuShare(1, 500, 500))
    assert [u.id for u in devices.allocate(first, [SharePlacement(0, 0, 500, 500)])] == ["0:500m"]
    devices.unhealthy = {"1"}
    second = gpu_pod("second", 0, gpu_share=GpuShare(1, 500, 500))
    assert devices.unavailable(second, [SharePlacement(0, 1, 500, 500)]) == (
        "requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0"
    )
    assert devices.unavailable(second, [SharePlacement(0, 0, 500, 500)]) is None
