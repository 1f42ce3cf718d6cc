"""The checks after each event look at what the event touched (the pods whose log moved, the nodes in
the cluster's change log and the pods on them), and still catch a violation at the event that made it;
and the meter's working and allocated GPU-hours equal what the pod records add up to."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gpufleet.control.clock import Priority
from gpufleet.kube import load_scenario
from gpufleet.model.dra import PodResourceClaim
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU
from gpufleet.sim import invariants
from gpufleet.sim.invariants import InvariantChecks, InvariantViolation, PermitWaits, pod_gpu_seconds
from gpufleet.sim.simulation import Simulation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def simulation(example: str) -> Simulation:
    sim = Simulation(load_scenario([EXAMPLES / example]))
    sim.invariants = InvariantChecks()
    return sim


def broken_at(sim: Simulation, t: float, corrupt: Callable[[Simulation], None]) -> InvariantViolation:
    """Run ``sim`` with ``corrupt`` done by an event at ``t``: the violation the checks raise."""
    sim.loop.at(t, Priority.CONTROLLER, lambda: corrupt(sim))
    with pytest.raises(InvariantViolation) as caught:
        sim.run()
    return caught.value


def end_a_running_pod_in_its_log(sim: Simulation) -> None:
    key = sorted(sim.state.assignments)[0]
    rec = sim.records[key]
    rec.phase, rec.finished_s = "Succeeded", sim.loop.now
    rec.enter(sim.loop.now, "succeeded")


def overfill_a_node(sim: Simulation) -> None:
    state = sim.state
    i, col = int(state.active_indices()[0]), state.res_index[GPU]
    state.requested[i, col] = state.alloc[i, col] + 1
    state.touched(i)


def test_a_pod_an_event_ends_while_it_holds_its_node_is_caught_at_that_event() -> None:
    sim = simulation("seed-004/coscheduling.yaml")
    broken = broken_at(sim, 1800.0, end_a_running_pod_in_its_log)
    assert (broken.invariant, broken.at_s) == ("one-state-per-pod", 1800.0)
    assert sim.loop.now == 1800.0  # the run stopped there


def test_requests_an_event_pushes_past_allocatable_are_caught_at_that_event() -> None:
    broken = broken_at(simulation("seed-004/coscheduling.yaml"), 900.0, overfill_a_node)
    assert (broken.invariant, broken.at_s) == ("resources-within-allocatable", 900.0)


def test_an_unchanged_run_is_checked_after_every_event_and_at_its_end() -> None:
    sim = simulation("seed-003/hpa-warm-nodes.yaml")
    sim.run()
    checks = sim.invariants
    assert checks is not None and checks.events == sim.loop.steps
    assert (
        checks.counts["Pending"] == sim.lifecycle.pending
        and checks.counts["Running"] == sim.lifecycle.running
    )


@pytest.mark.parametrize(
    "example",
    [
        "seed-003/hpa-warm-nodes.yaml",
        "gpu-sharing/fractions.yaml",
        "dra/claim-h100.yaml",
        "gpu-sharing/mig-reconfigure.yaml",
    ],
)
def test_the_pods_gpu_hours_are_the_meters(example: str) -> None:
    sim = simulation(example)
    sim.run()
    metered, pods = sim.meter.totals().gpu_seconds, pod_gpu_seconds(sim)
    assert pods.working > 0
    assert pods.allocated == pytest.approx(metered["allocated"], rel=1e-9)
    assert pods.working == pytest.approx(metered["working"], rel=1e-9)


def test_working_gpu_hours_the_pods_do_not_add_up_to_are_reported() -> None:
    sim = simulation("seed-003/hpa-warm-nodes.yaml")
    sim.run()
    rec = next(r for r in sim.records.values() if r.working_s is not None and r.gpu_share > 0)
    rec.gpu_share *= 2
    with pytest.raises(InvariantViolation) as caught:
        invariants.metering_adds_up(sim, 0.0)
    assert caught.value.subject == "the run's working GPU-hours"


def test_allocated_gpu_hours_the_pods_do_not_add_up_to_are_reported() -> None:
    sim = simulation("seed-003/hpa-warm-nodes.yaml")
    sim.run()
    invariants.metering_adds_up(sim, 0.0)
    with pytest.raises(InvariantViolation) as caught:
        invariants.metering_adds_up(sim, 3600.0)  # an hour of one GPU held at Permit that the meter lacks
    assert caught.value.subject == "the run's allocated GPU-hours"


def test_gpus_a_pod_holds_while_waiting_at_permit_count_until_it_is_bound() -> None:
    sim = simulation("seed-004/coscheduling.yaml")
    sim.run()
    state, waits = sim.state, PermitWaits()
    free = next(i for i in state.active_indices().tolist() if state.free_on(i, GPU) >= 2)
    pod = Pod("waiting", requests={GPU: 2})
    state.assign(pod, free, sim.loop.now)
    rec = sim.lifecycle.record(pod, "gang-scheduler")
    waits.follow(sim, [pod.key])
    assert waits.total(sim.loop.now + 30.0) == pytest.approx(60.0)
    sim.loop.now += 30.0
    rec.bound_s = sim.loop.now - 10.0
    waits.follow(sim, [])
    assert waits.gpu_s == pytest.approx(40.0) and not waits.open


def test_a_pod_waiting_with_a_resource_claim_leaves_the_allocated_gpu_hours_uncompared() -> None:
    sim = simulation("dra/claim-h100.yaml")
    sim.run()
    state, waits = sim.state, PermitWaits()
    pod = Pod("waiting", resource_claims=(PodResourceClaim("gpu", resource_claim_name="gpu"),))
    state.assign(pod, int(state.active_indices()[0]), sim.loop.now)
    sim.lifecycle.record(pod, "default-scheduler")
    waits.follow(sim, [pod.key])
    assert waits.open and waits.total(sim.loop.now) is None
