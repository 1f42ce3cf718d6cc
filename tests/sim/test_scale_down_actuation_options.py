"""cluster-autoscaler's scale-down actuation options in a run (``core/scaledown/actuation``): a node
annotated ``delay-deletion.cluster-autoscaler.kubernetes.io/...`` deleted ``--node-deletion-delay-timeout``
after its preparation (``WaitForDelayDeletion``: nobody takes the annotation off), which starts
``--node-delete-delay-after-taint`` after its scale-down (``deleteNodesAsync``' sleep), an empty node's
DaemonSet pods evicted under ``--daemonset-eviction-for-empty-nodes`` (``EvictDaemonSetPods``) and not
recreated (the DaemonSet controller does not tolerate the ToBeDeleted taint), and
``cluster_autoscaler_scaled_down_nodes_total`` counting a node once it is deleted
(``RegisterAndRecordSuccessfulScaleDownEvent``)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any, cast

from test_cluster_autoscaler import events, gpu_job, t4_pool

from gpufleet.control.cluster_autoscaler_events import ScaleEvent
from gpufleet.model.pod import Pod
from gpufleet.model.scenario import Scenario
from gpufleet.model.simulation import AutoscalerSettings, SimulationSettings
from gpufleet.model.workloads import DaemonSet
from gpufleet.sim.exporter_metrics import Counters
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

#: the two t4 nodes of the job fall empty at 2100 s; the scan of 2700 s starts their deletion
SCALE_DOWN_S = 2700.0
#: ... and their preparation (DaemonSet evictions, the wait for the delay-deletion annotation) starts 5 s
#: later (``--node-delete-delay-after-taint``'s default)
PREPARED_S = SCALE_DOWN_S + 5.0


def run(delayed: bool, duration_s: float = 4 * 3600, **settings: Any) -> tuple[Simulation, dict[str, Any]]:
    pool = t4_pool()
    pool = replace(pool, template=replace(pool.template, delay_deletion=delayed))
    agent = DaemonSet("agent", "default", Pod("", requests={"cpu": 100}))
    simulation = SimulationSettings(duration_s=duration_s, autoscaler=AutoscalerSettings(**settings))
    sim = Simulation(
        Scenario(
            node_pools=[pool], jobs=[gpu_job("train", 2, 1800)], daemonsets=[agent], simulation=simulation
        )
    )
    sim.run()
    return sim, build_summary(sim)


def deleted(summary: dict[str, Any]) -> dict[str, float]:
    return {n["name"]: n["deleted_s"] for n in summary["nodes"]}


def agents(summary: dict[str, Any]) -> list[tuple[str, str, float]]:
    return [(p["name"], p["reason"], p["finished_s"]) for p in summary["pods"] if "/agent-" in p["name"]]


def test_nodes_annotated_delay_deletion_are_deleted_the_timeout_after_their_scale_down() -> None:
    _, plain = run(False)
    _, delayed = run(True)
    _, shorter = run(True, node_deletion_delay_timeout_s=30.0)
    _, off = run(True, node_deletion_delay_timeout_s=0.0)
    assert [e["t_s"] for e in events(delayed, "scale-down")] == [SCALE_DOWN_S, SCALE_DOWN_S]
    assert deleted(plain) == deleted(off) == {"t4-0": PREPARED_S, "t4-1": PREPARED_S}
    assert deleted(delayed) == {"t4-0": PREPARED_S + 120.0, "t4-1": PREPARED_S + 120.0}
    assert deleted(shorter) == {"t4-0": PREPARED_S + 30.0, "t4-1": PREPARED_S + 30.0}


def test_empty_nodes_are_deleted_the_delay_after_taint_after_their_scale_down() -> None:
    """``deleteNodesAsync`` sleeps ``--node-delete-delay-after-taint`` (5 s by default) between marking the
    nodes (the scan's scale-down events) and deleting them; 0 deletes them at once, as upstream sleeps only
    for a delay above 0."""
    for delay, at in ((None, PREPARED_S), (0.0, SCALE_DOWN_S), (30.0, SCALE_DOWN_S + 30.0)):
        given = {} if delay is None else {"node_delete_delay_after_taint_s": delay}
        _, summary = run(False, **given)
        assert [e["t_s"] for e in events(summary, "scale-down")] == [SCALE_DOWN_S, SCALE_DOWN_S]
        assert deleted(summary) == {"t4-0": at, "t4-1": at}


def test_an_empty_nodes_daemon_set_pods_are_evicted_under_the_flag_and_not_recreated() -> None:
    """With the node's deletion delayed 2 minutes, the eviction shows: the agents evicted as the node's
    preparation starts end after their 30 s grace period, none comes back; by default they end with their
    node."""
    _, default = run(True)
    _, evicting = run(True, daemonset_eviction_for_empty_nodes=True)
    end = PREPARED_S + 120.0
    assert agents(default) == [
        ("default/agent-t4-0", "NodeDeleted", end),
        ("default/agent-t4-1", "NodeDeleted", end),
    ]
    gone = PREPARED_S + 30.0
    assert agents(evicting) == [
        ("default/agent-t4-0", "Evicted", gone),
        ("default/agent-t4-1", "Evicted", gone),
    ]


def test_scaled_down_nodes_are_counted_once_deleted_by_their_reason() -> None:
    """``metrics.RegisterScaleDown`` is called as the cloud provider has deleted the node: a scrape between
    the scale-down's start and the nodes' deletion counts none; after it, both, ``empty``."""
    sim, _ = run(True, duration_s=SCALE_DOWN_S + 60.0)
    counters = Counters()
    counters.catch_up(sim)
    assert counters.scaled_down == {}
    sim, _ = run(True)
    counters = Counters()
    counters.catch_up(sim)
    assert counters.scaled_down == {"empty": 2}


def test_a_node_whose_deletion_failed_is_not_counted_scaled_down() -> None:
    """A scale-down started whose drain failed (``scale-down-failed``) deleted no node: not counted."""
    log = [
        ScaleEvent(610.0, "scale-down", "g", ("n1",)),
        ScaleEvent(740.0, "scale-down-failed", "g", ("n1",), reason="failed to drain and delete node: ..."),
    ]
    autoscaler = SimpleNamespace(events=log, actuator=SimpleNamespace(removed=[]))
    sim = SimpleNamespace(autoscaler=autoscaler, all_records=[], daemon_pods=set())
    counters = Counters()
    counters.catch_up(cast(Simulation, sim))
    assert counters.scaled_down == {}
