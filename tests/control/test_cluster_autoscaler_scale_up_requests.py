"""cluster-autoscaler's scale-up requests, one per node group, and what happens when they time out
(cluster-autoscaler 1.34.5 ``clusterstate/clusterstate.go``: ``RegisterScaleUp``,
``registerOrUpdateScaleUpNoLock``, ``updateScaleRequests``; ``core/static_autoscaler.go``:
``removeOldUnregisteredNodes``), through the loop: in the simulator (a pool's start chain makes its nodes
late) and through a port kept by hand (``test_loops_through_a_port``)."""

from __future__ import annotations

from typing import Any

from test_loops_through_a_port import Group, HandKeptCluster, ManualClock, autoscaler

from conftest import gpu_node, gpu_pod
from gpufleet.model.node import Node
from gpufleet.model.pod import DEFAULT_SCHEDULER, Behavior, Pod
from gpufleet.model.scenario import Scenario
from gpufleet.model.simulation import AutoscalerSettings, NodePool, SimulationSettings
from gpufleet.model.workloads import Created, Job
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

GPU = "nvidia.com/gpu"
GI = 2**30
MINUTE = 60.0


def t4_pool(*chain: tuple[str, str], **kw: Any) -> NodePool:
    template = Node("t4-template", capacity={"cpu": 8000, "memory": 32 * GI, "pods": 110, GPU: 1})
    return NodePool("t4", template, min=0, max=4, price_per_hour=0.5, provisioning=chain, **kw)


def gpu_job(name: str, at: float = 0.0) -> Job:
    template = Pod(
        "", requests={"cpu": 4000, "memory": 16 * GI, GPU: 1}, restart_policy="Never",
        behavior=Behavior(duration_s=600),
    )  # fmt: skip
    return Job(name, "default", template, parallelism=1, completions=1, created=Created(at, 0))


def run(pool: NodePool, jobs: list[Job], duration_s: float) -> dict[str, Any]:
    """The run's summary, with ``--bypassed-scheduler-names`` set: no wait for very new pods
    (``allPodsAreNew``), each job's pod scales the pool up at the scan at its creation."""
    bypassed = AutoscalerSettings(bypassed_scheduler_names=(DEFAULT_SCHEDULER,))
    settings = SimulationSettings(duration_s=duration_s, autoscaler=bypassed)
    sim = Simulation(Scenario(node_pools=[pool], jobs=jobs, simulation=settings))
    sim.run()
    return build_summary(sim)


def events(summary: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in summary["autoscaler_events"] if e["kind"] == kind]


def test_two_scale_ups_of_a_group_whose_nodes_are_late_time_out_together_at_the_second_ones_deadline() -> (
    None
):
    """``registerOrUpdateScaleUpNoLock``: the group's second scale-up (5 minutes after the first) adds to its
    one request and moves its ``ExpectedAddTime`` to its own time plus ``maxNodeProvisionTime`` (15m): the
    first node, whose GPUs take 30 minutes, is not timed out at 910 s; both are, in one
    ``provision-timeout`` (``ScaleUpTimedOut``), at the first scan after the second's deadline, the pool
    backed off once, and neither node deleted for it (both registered at 10 and 15 minutes, their GPUs late;
    the run ends at 25 minutes, before the first is ``Unready``, 15 minutes after it registered, and no
    longer upcoming: ``GetUpcomingNodes``)."""
    pool = t4_pool(("boot", "10m"), ("devicePlugin", "30m"))
    summary = run(pool, [gpu_job("a"), gpu_job("b", at=5 * MINUTE)], duration_s=25 * MINUTE)
    ups = events(summary, "scale-up")
    assert [(e["t_s"], e["nodes"]) for e in ups] == [(0.0, ["t4-0"]), (300.0, ["t4-1"])]
    timeouts = events(summary, "provision-timeout")
    assert [(e["t_s"], e["nodes"]) for e in timeouts] == [(1210.0, ["t4-0", "t4-1"])]
    assert timeouts[0]["reason"] == "Nodes added to group t4 failed to register within 15m10s"
    deleted = {n["name"]: n["deleted_s"] for n in summary["nodes"]}
    assert deleted["t4-0"] is None and deleted["t4-1"] is None


def test_a_node_that_never_registers_is_deleted_as_unregistered_and_its_request_times_out() -> None:
    """A node that has not joined the cluster 15 minutes after its launch is deleted by
    ``removeOldUnregisteredNodes`` (``UnregisteredSince.Add(maxNodeProvisionTime).Before(now)``: the scan at
    910 s), a ``delete-unregistered`` event (``DeleteUnregistered``); its scale-up request times out at the
    same scan (``updateScaleRequests`` runs first) and backs the pool off until 1,210 s."""
    summary = run(t4_pool(("boot", "20m")), [gpu_job("a")], duration_s=20 * MINUTE)
    timeouts, removed = events(summary, "provision-timeout"), events(summary, "delete-unregistered")
    assert [(e["t_s"], e["nodes"]) for e in timeouts] == [(910.0, ["t4-0"])]
    assert [(e["t_s"], e["nodes"], e["reason"]) for e in removed] == [
        (910.0, ["t4-0"], "Removed unregistered node t4-0")
    ]
    assert {n["name"]: n["deleted_s"] for n in summary["nodes"]}["t4-0"] == 910.0
    assert [e["t_s"] for e in events(summary, "scale-up")] == [0.0]  # backed off until 1,210 s


H100_MIN_1 = NodePool("h100", gpu_node("h100-template", 8), min=1, max=2)


def test_the_unregistered_node_of_a_group_at_its_min_is_not_deleted() -> None:
    """``removeOldUnregisteredNodes``: a group's unregistered nodes are deleted only down to its min
    (``size - MinSize()``; ``--force-delete-unregistered-nodes`` off): the scale-up request still times out
    and backs the group off."""
    port, clock = HandKeptCluster(pods=[gpu_pod("a", 8)], groups=[Group("h100", H100_MIN_1)]), ManualClock()
    port.pods["default/a"].message = "0/0 nodes are available"
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(20 * MINUTE)
    assert ("launch", "h100", ("default/a",)) in port.asked
    assert not [a for a in port.asked if a[0] == "delete"]
    assert [e.kind for e in ca.events if e.kind != "no-scale-up"] == ["scale-up", "provision-timeout"]
    assert port.node_groups["h100"].backoff_until == 910.0 + 5 * MINUTE


def test_a_request_whose_nodes_all_arrived_is_dropped_and_the_next_scale_up_starts_a_new_one() -> None:
    """``updateScaleRequests``: once the group has no upcoming node the request is done and dropped
    (``areThereUpcomingNodesInNodeGroup``); a later scale-up starts a new request, its ``Increase`` its own
    and its deadline its own time plus 15 minutes: its node, late, times out then, not 15 minutes after the
    first."""
    h100 = NodePool("h100", gpu_node("h100-template", 8), min=0, max=2)
    port, clock = (
        HandKeptCluster(pods=[gpu_pod("a", 8), gpu_pod("b", 8)], groups=[Group("h100", h100)]),
        ManualClock(),
    )
    port.pods["default/a"].message = "0/0 nodes are available"
    ca = autoscaler(port, clock)
    ca.arm(0.0)
    clock.run_until(0.0)
    requests = ca.executor.requests
    assert (requests["h100"].increase, requests["h100"].expected_add_time) == (1, 900.0)
    port.node_groups["h100"].launching.clear()  # its GPUs registered
    port.pods["default/a"].bound_s = 100.0
    clock.run_until(110.0)
    assert requests == {}
    port.pods["default/b"].message = "0/1 nodes are available"
    ca.arm(600.0)
    clock.run_until(600.0)
    assert (requests["h100"].increase, requests["h100"].time, requests["h100"].expected_add_time) == (
        1,
        600.0,
        1500.0,
    )
    clock.run_until(1500.0)
    assert not [e for e in ca.events if e.kind == "provision-timeout"]
    clock.run_until(1510.0)
    assert [e.t_s for e in ca.events if e.kind == "provision-timeout"] == [1510.0]
