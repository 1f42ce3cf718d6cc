"""cluster-autoscaler's second look at a node before it deletes it, in a run (1.34.5
``core/scaledown/actuation/actuator.go``, ``deleteNodesAsync``): ``--node-delete-delay-after-taint`` (5 s)
after its scale-down, the actuator reads the node's pods again (``createSnapshot``) and asks
``simulator.GetPodsToMove`` once more, a drained node with the PodDisruptionBudgets as they are then. A node
chosen empty that now has a pod to move is given back (``AbortNodeDeletion(..., "node is not empty", ...)``),
so is a node where a pod now blocks the drain (``failed to get pods to move on node``): untainted, a
``scale-down-failed`` event, not counted scaled down, a candidate again. A drained node evicts the pods of
that second snapshot: those bound during the delay too, the expendable ones never.

Two 4-GPU pool nodes, t4-0 busy (3 GPUs), t4-1 below the threshold: the scan of 610 s scales t4-1 down, its
second look comes at 615 s; what lands on t4-1 or changes the budget does so at 612 s, in the delay."""

from __future__ import annotations

from typing import Any

from test_cluster_autoscaler import GPU, run, t4_pool

from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.pod import Behavior, OwnerRef, Pod
from gpufleet.model.scenario import BarePod, Scenario
from gpufleet.model.simulation import AutoscalerSettings, NodePool, SimulationSettings
from gpufleet.model.workloads import Created
from gpufleet.sim.exporter_metrics import Counters
from gpufleet.sim.simulation import Simulation

#: the scan that scales t4-1 down (unneeded from the first scan at 0 s, for more than 10 minutes)
SCALE_DOWN_S = 610.0
#: ... and its second look, ``--node-delete-delay-after-taint`` (5 s) later
SECOND_LOOK_S = SCALE_DOWN_S + 5.0
#: when a pod lands on t4-1, or the budget loses a pod: in the delay
MEANWHILE_S = 612.0
WEB = (("app", "web"),)


def pool() -> NodePool:
    pool = t4_pool(replicas=2, min=0, provisioning=())
    pool.template.capacity[GPU] = pool.template.allocatable[GPU] = 4
    return pool


def job_pod(name: str, node: str, gpus: int, at: float = 0.0, priority: int = 0, **behavior: Any) -> BarePod:
    """A Job's pod (replicated) bound to ``node`` (``spec.nodeName``): running from 0 s, or arriving at
    ``at`` and started there by the kubelet (a pod bound by name passes no scheduler, nor the cordon)."""
    pod = Pod(
        name,
        labels=dict(WEB) if name.startswith("web") else {},
        requests={"cpu": 1000, GPU: gpus},
        owner=OwnerRef("Job", name),
        priority=priority,
        behavior=Behavior(duration_s=4 * 3600, **behavior),
    )
    return BarePod(pod, Created(at, 0), bound_node=node, phase="Running" if at == 0.0 else "Pending")


def scale_downs(summary: dict[str, Any]) -> list[tuple[float, str, tuple[str, ...], str]]:
    return [
        (e["t_s"], e["kind"], tuple(e["nodes"]), e["reason"])
        for e in summary["autoscaler_events"]
        if e["kind"] in ("scale-down", "scale-down-failed")
    ]


def deleted(summary: dict[str, Any]) -> dict[str, float | None]:
    return {n["name"]: n["deleted_s"] for n in summary["nodes"]}


def pods(summary: dict[str, Any]) -> dict[str, tuple[str | None, str | None, list[float]]]:
    return {p["name"]: (p["node"], p["reason"], p["disruptions"]) for p in summary["pods"]}


def test_a_pod_landing_on_an_empty_node_in_the_delay_gives_the_node_back_untainted() -> None:
    """``deleteNodesAsync``: t4-1, chosen empty at 610 s, has a pod to move at its second look (``late``,
    bound at 612 s): its deletion is aborted at 615 s (``failed to delete empty node "t4-1", new pods
    scheduled``), its mark taken off, no node counted scaled down. It is a candidate again: unneeded for 10
    minutes more, it is scaled down with drain at 1230 s, ``late`` evicted at its second look (1235 s), the
    node deleted once ``late`` has left (30 s)."""
    bare = [job_pod("big", "t4-0", 3), job_pod("late", "t4-1", 1, at=MEANWHILE_S)]
    summary = run([pool()], [], duration_s=1200, pods=bare)
    not_empty = 'failed to delete empty node: failed to delete empty node "t4-1", new pods scheduled'
    assert scale_downs(summary) == [
        (SCALE_DOWN_S, "scale-down", ("t4-1",), ""),
        (SECOND_LOOK_S, "scale-down-failed", ("t4-1",), not_empty),
    ]
    assert deleted(summary) == {"t4-0": None, "t4-1": None}
    assert pods(summary)["default/late"] == ("t4-1", None, [])
    summary = run([pool()], [], duration_s=2400, pods=bare)
    assert scale_downs(summary)[2] == (1230.0, "scale-down", ("t4-1",), "")
    assert pods(summary)["default/late"] == ("t4-1", "Evicted", [1235.0])
    assert deleted(summary)["t4-1"] == 1265.0


def test_a_node_given_back_by_its_second_look_is_not_counted_scaled_down() -> None:
    """``scaled_down_nodes_total`` counts a node once deleted (``RegisterAndRecordSuccessfulScaleDownEvent``);
    ``AbortNodeDeletion`` registers no scale-down, nor a failed one (``RegisterFailedScaleDown`` is the cloud
    provider's failure to delete alone): none counted, the pool not backed off, the node no longer being
    deleted nor cordoned (``CleanToBeDeleted``, ``NodeDeletionTracker.EndDeletion``)."""
    bare = [job_pod("big", "t4-0", 3), job_pod("late", "t4-1", 1, at=MEANWHILE_S)]
    settings = SimulationSettings(duration_s=1200, autoscaler=AutoscalerSettings())
    sim = Simulation(Scenario(node_pools=[pool()], pods=bare, simulation=settings))
    sim.run()
    counters = Counters()
    counters.catch_up(sim)
    assert counters.scaled_down == {} and counters.failed_scale_ups == {}
    assert [g.backed_off(SECOND_LOOK_S) for g in sim.node_groups.values()] == [False]
    assert not sim.autoscaler.actuator.deleting and not sim.state.nodes[sim.state.index["t4-1"]].unschedulable


def test_a_budget_used_up_in_the_delay_aborts_the_drain_at_the_second_look() -> None:
    """The drained node's second look reads the PodDisruptionBudgets then (``remainingPdbTracker.SetPdbs``):
    ``web`` (minAvailable 2) allowed one disruption at 610 s; web-2, deleted at 612 s, leaves it none, so
    ``GetPodsToMove`` blocks on web-1 (``NotEnoughPdb``) and t4-1 is given back at 615 s: web-1 never
    evicted (without the second look the drain would have tried it for ``--max-pod-eviction-time``)."""
    bare = [
        job_pod("web-0", "t4-0", 2),
        job_pod("web-1", "t4-1", 1),
        job_pod("web-2", "t4-0", 1, delete_at_s=MEANWHILE_S),
    ]
    budget = DisruptionBudget("default", "web", WEB, min_available=2)
    summary = run([pool()], [], duration_s=1800, pods=bare, budgets=[budget])
    why = (
        'failed to drain and delete node: GetPodsToMove for "t4-1" returned error: '
        "pod default/web-1 is protected by PodDisruptionBudget default/web"
    )
    assert scale_downs(summary) == [
        (SCALE_DOWN_S, "scale-down", ("t4-1",), ""),
        (SECOND_LOOK_S, "scale-down-failed", ("t4-1",), why),
    ]
    assert pods(summary)["default/web-1"] == ("t4-1", None, [])
    assert deleted(summary) == {"t4-0": None, "t4-1": None}


def test_a_drain_evicts_the_pods_bound_in_the_delay_but_not_the_expendable_ones() -> None:
    """The drain evicts the pods of the second look's snapshot (``ScheduleDeletion(nodeInfo, ...)``):
    ``late``, bound to t4-1 at 612 s, is evicted with web-1 at 615 s; ``spare``, bound too but expendable
    (priority -20, below ``--expendable-pods-priority-cutoff``: ``createSnapshot``'
    ``FilterOutExpendablePods``), is not, and ends with the node, deleted once web-1 and late have left
    (their 30 s grace period)."""
    bare = [
        job_pod("big", "t4-0", 3),
        job_pod("web-1", "t4-1", 1),
        job_pod("late", "t4-1", 0, at=MEANWHILE_S),
        job_pod("spare", "t4-1", 0, at=MEANWHILE_S, priority=-20),
    ]
    summary = run([pool()], [], duration_s=1200, pods=bare)
    assert scale_downs(summary) == [(SCALE_DOWN_S, "scale-down", ("t4-1",), "")]
    assert deleted(summary)["t4-1"] == SECOND_LOOK_S + 30.0
    got = pods(summary)
    assert got["default/web-1"] == got["default/late"] == ("t4-1", "Evicted", [SECOND_LOOK_S])
    assert got["default/spare"] == ("t4-1", "NodeDeleted", [SECOND_LOOK_S + 30.0])
