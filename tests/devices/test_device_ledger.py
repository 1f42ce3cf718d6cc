"""The device ledger (``gpus.ledger``): a pod's device units are decided as it is bound, travel in
its scheduling outcome, and go back when it leaves its node."""

from __future__ import annotations

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.ledger import DeviceLedger
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
