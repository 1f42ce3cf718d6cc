"""The simulator's parts on their own: the meter integrates its log of readings; the in-memory
cluster gives back the pods of a node it loses (it runs no pod lifecycle) and sums the GPUs
allocated as pods come and go; a pod's record keeps its progress to the last checkpoint as it stops."""

from __future__ import annotations

import pytest

from conftest import gpu_node, gpu_pod
from gpufleet.gpus.devices import Unit
from gpufleet.model.dra import PodResourceClaim
from gpufleet.model.pod import Behavior
from gpufleet.sim.cluster import InMemoryCluster
from gpufleet.sim.metering import Meter
from gpufleet.sim.records import PodRecord


def test_cost_and_gpu_hours_are_the_integral_of_the_readings_logged() -> None:
    meter = Meter()
    allocated = iter([4.0, 4.0, 8.0, 8.0])
    meter.billing(0.0, lambda: 0.0, price_per_hour=10.0, gpus=8)
    meter.advance(600.0, lambda: next(allocated))  # 4 GPUs allocated over [0, 600)
    meter.advance(1200.0, lambda: next(allocated))  # unchanged: the reading is not repeated
    meter.advance(1800.0, lambda: next(allocated))  # 8 over [1200, 1800)
    meter.billing(3600.0, lambda: next(allocated), price_per_hour=0.0, gpus=0)  # the node goes
    meter.advance(7200.0, lambda: 0.0)
    assert [(r.since_s, r.allocated_gpus, r.price_per_hour) for r in meter.readings] == [
        (0.0, 4.0, 10.0),
        (1200.0, 8.0, 10.0),
        (3600.0, 0.0, 0.0),
    ]
    totals = meter.totals()
    assert totals.cost == pytest.approx(10.0)  # one hour of a $10/h node
    assert totals.gpu_seconds["provisioned"] == pytest.approx(8 * 3600)
    assert totals.gpu_seconds["allocated"] == pytest.approx(4 * 1200 + 8 * 2400)


def test_a_device_of_a_shared_claim_counts_once_however_many_pods_work_on_it() -> None:
    meter = Meter()
    unit = Unit("gpu-0", 0, 1.0, None)
    claim = (PodResourceClaim("gpu", resource_claim_name="shared"),)
    recs = [PodRecord(gpu_pod(f"p{i}", 0, resource_claims=claim), "default-scheduler", 0.0) for i in (0, 1)]
    for rec in recs:
        rec.node, rec.devices = "a", [unit]
        meter.working(rec, +1)
    assert meter.working_gpus == 1.0
    meter.working(recs[0], -1)
    assert meter.working_gpus == 1.0  # the other pod still works on it
    meter.working(recs[1], -1)
    assert meter.working_gpus == 0.0


def test_losing_a_node_gives_back_its_pods_in_name_order_with_their_resources_freed() -> None:
    cluster = InMemoryCluster([gpu_node("a", 8), gpu_node("b", 8)], None, lambda node: [])
    state = cluster.state
    for name in ("zeta", "alpha"):
        state.assign(gpu_pod(name, 4), "a", 0.0)
    state.assign(gpu_pod("elsewhere", 4), "b", 0.0)
    lost = cluster.delete_node("a", now=60.0)
    assert [a.pod.name for a in lost] == ["alpha", "zeta"]
    assert "a" not in state.index and set(state.assignments) == {"default/elsewhere"}
    assert cluster.nodes["a"].deleted_s == 60.0
    assert cluster.gpus_total() == 8.0


def test_the_gpus_allocated_follow_each_bind_and_departure_and_the_nodes_that_come_and_go() -> None:
    cluster = InMemoryCluster([gpu_node("a", 8), gpu_node("b", 8)], None, lambda node: [])
    state = cluster.state
    seen = [cluster.gpus_allocated()]
    state.assign(gpu_pod("one", 2), "a", 0.0)
    seen.append(cluster.gpus_allocated())
    state.assign(gpu_pod("two", 4), "b", 0.0)
    state.assign(gpu_pod("three", 1), "a", 0.0)
    seen.append(cluster.gpus_allocated())
    state.unassign("default/one")
    seen.append(cluster.gpus_allocated())
    cluster.launched("c", "pool", now=5.0)
    cluster.add_node(gpu_node("c", 8), now=10.0)
    state.assign(gpu_pod("four", 8), "c", 10.0)
    seen.append(cluster.gpus_allocated())
    cluster.delete_node("b", now=20.0)
    seen.append(cluster.gpus_allocated())
    state.unassign("default/four")
    seen.append(cluster.gpus_allocated())
    assert seen == [0.0, 2.0, 7.0, 5.0, 13.0, 9.0, 1.0]


def test_the_gpus_follow_cordons_removals_and_devices_described_again_between_two_readings() -> None:
    cluster = InMemoryCluster([gpu_node(n, 8) for n in "abc"], None, lambda node: [])
    state = cluster.state
    state.assign(gpu_pod("one", 2), "a", 0.0)
    seen = [(cluster.gpus_total(), cluster.gpus_allocated())]
    state.cordon("b")
    seen.append((cluster.gpus_total(), cluster.gpus_allocated()))
    cluster.delete_node("c", now=5.0)
    seen.append((cluster.gpus_total(), cluster.gpus_allocated()))
    state.cordon("a")  # and b's GPUs registered again as four
    state.set_allocatable("b", {**state.nodes[state.index["b"]].allocatable, "nvidia.com/gpu": 4})
    cluster.ledger.registered(state.nodes[state.index["b"]])
    seen.append((cluster.gpus_total(), cluster.gpus_allocated()))
    assert seen == [(24.0, 2.0), (24.0, 2.0), (16.0, 2.0), (12.0, 2.0)]


def test_the_gpus_total_follows_a_node_whose_gpus_leave_its_allocatable_and_come_back() -> None:
    """A device plugin that stops (GPU allocatable 0, the node's devices as described) takes its node's GPUs
    out of the total, and back in as it registers them again: the total read between is not a kept one."""
    cluster = InMemoryCluster([gpu_node("a", 8), gpu_node("b", 8)], None, lambda node: [])
    state = cluster.state
    allocatable = dict(state.nodes[state.index["b"]].allocatable)
    seen = [cluster.gpus_total()]
    state.set_allocatable("b", {**allocatable, "nvidia.com/gpu": 0})
    seen.append(cluster.gpus_total())
    state.set_allocatable("b", allocatable)
    seen.append(cluster.gpus_total())
    assert seen == [16.0, 8.0, 16.0]


@pytest.mark.parametrize("save_s", [0.0, 30.0])
def test_a_worker_stopped_as_it_resumes_an_item_keeps_the_items_checkpointed_progress(save_s: float) -> None:
    """An item pushed back with 1200 s checkpointed (every 600 s) and taken by a worker that is evicted at
    the instant it starts keeps its 1200 s. (At 3867.1240091553377 s, 1200 + now - start is
    1199.9999999999998, which kept only 600: the checkpoint-kept invariant's random scenario.)"""
    now = 3867.1240091553377
    assert 1200.0 + now - now < 1200.0  # the rounding the record must not take for lost work
    behavior = Behavior(checkpoint_interval_s=600.0, checkpoint_save_s=save_s, consumes="work")
    rec = PodRecord(gpu_pod("worker", 1, behavior=behavior), "default-scheduler", 0.0)
    rec.task_s, rec.done_s, rec.working, rec.work_started_at = 2220.0, 1200.0, True, now
    assert rec.stop_working(now, sigterm=True) == 0.0
    assert rec.done_s == 1200.0


@pytest.mark.parametrize(("interval_s", "resumed_s", "kept_s"), [(None, 10.0, 10.0), (600.0, 1234.0, 1234.0)])
def test_a_pod_that_fails_keeps_the_checkpoint_it_resumed_from(
    interval_s: float | None, resumed_s: float, kept_s: float
) -> None:
    """A Job's pod made again resumes from its predecessor's checkpoint on SIGTERM (10 s, or 1234 s with
    a checkpoint every 600 s: not a multiple of it). Killed without SIGTERM 266 s later, before a
    checkpoint of its own, it loses those 266 s and keeps that checkpoint (it fell to 0 s, or to 1200 s:
    the checkpoint-kept invariant's random scenario)."""
    behavior = Behavior(checkpoint_interval_s=interval_s, checkpoint_on_sigterm=True)
    rec = PodRecord(gpu_pod("train", 1, behavior=behavior), "default-scheduler", 0.0)
    rec.task_s, rec.done_s, rec.working, rec.work_started_at = 4920.0, resumed_s, True, 3138.95
    assert rec.stop_working(3138.95 + 266.0, sigterm=False) == pytest.approx(266.0)
    assert rec.done_s == kept_s
