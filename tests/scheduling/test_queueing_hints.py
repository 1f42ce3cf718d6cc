"""Queueing hints in one scheduler: which cluster events send an unschedulable pod back to be tried.

kube-scheduler 1.34 (SchedulerQueueingHints, GA) moves a pod out of the unschedulable pods only when
a plugin that rejected it registered for the event and its hint says Queue (``isPodWorthRequeuing``);
the wildcard event moves every pod; a failure no plugin is named for backs off and is tried again
(``determineSchedulingHintForInFlightPod``); any pod returns after 5 minutes
(``flushUnschedulablePodsLeftover``).
"""

from __future__ import annotations

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.host_ports import HostPort
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.events import (
    EVERYTHING,
    NODE_ADD,
    ActionType,
    ClusterChange,
    ClusterEvent,
    Resource,
    assigned_pod_deleted,
    node_before,
    node_updated,
)
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.node_resources_fit import NodeResourcesFit
from gpufleet.scheduling.scheduler import Scheduler

P = "default/p"


def cluster(*names: str) -> tuple[Scheduler, ClusterState]:
    """8-GPU nodes, each full with an 8-GPU pod ``run-<node>``."""
    state = ClusterState([gpu_node(n) for n in names])
    for n in names:
        state.assign(gpu_pod(f"run-{n}", 8), n, 0.0)
    return Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state)), state


def tried(s: Scheduler, now: float) -> list[tuple[str, str]]:
    return [(o.pod.name, o.kind) for o in s.run(now)]


def relabel(s: Scheduler, state: ClusterState, node: str, now: float, **labels: str) -> None:
    i = state.index[node]
    old = node_before(state.nodes[i])
    state.set_labels(node, {**state.nodes[i].labels, **labels})
    s.cluster_event(node_updated(old, state.nodes[i]), now)


def free(s: Scheduler, state: ClusterState, key: str, now: float) -> None:
    gone = state.unassign(key)
    assert gone is not None
    s.cluster_event([assigned_pod_deleted(gone.pod, state.nodes[gone.node].name)], now)


def test_a_pod_short_of_gpus_waits_through_a_relabel_and_goes_when_a_gpu_pod_leaves() -> None:
    s, state = cluster("a", "b")
    s.add(gpu_pod("p", 8), 0.0)
    assert tried(s, 0.0) == [("p", "unschedulable")]
    assert s.queue.unschedulable[P].rejectors == frozenset({"NodeResourcesFit"})
    relabel(s, state, "b", 20.0, team="x")  # NodeResourcesFit registers no label event
    assert tried(s, 20.0) == []
    free(s, state, "default/run-a", 30.0)  # a pod on a node leaving: Queue
    assert tried(s, 30.0) == [("p", "bound")]
    assert state.nodes[state.assignments[P].node].name == "a"


def test_a_pod_that_wants_a_label_is_not_tried_when_gpus_free_but_is_when_a_node_gets_it() -> None:
    s, state = cluster("a", "b")
    free(s, state, "default/run-b", 0.0)
    s.add(gpu_pod("p", 1, node_selector={"zone": "z"}), 0.0)
    assert tried(s, 0.0) == [("p", "unschedulable")]
    assert s.queue.unschedulable[P].rejectors == frozenset({"NodeAffinity"})
    free(s, state, "default/run-a", 10.0)  # NodeAffinity registers no pod event
    relabel(s, state, "a", 20.0, team="x")  # a label, but not one that makes a node match
    assert tried(s, 20.0) == []
    relabel(s, state, "b", 30.0, zone="z")
    assert tried(s, 30.0) == [("p", "bound")]


def test_a_pod_turned_away_by_a_cordon_goes_back_when_the_node_is_uncordoned_not_when_allocatable_grows() -> (
    None
):
    state = ClusterState([gpu_node("a")])
    s = Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state))
    state.cordon("a")
    s.add(gpu_pod("p", 1), 0.0)
    assert tried(s, 0.0) == [("p", "unschedulable")]
    assert s.queue.unschedulable[P].rejectors == frozenset({"NodeUnschedulable"})
    node = state.nodes[0]
    old = node_before(node)
    state.set_allocatable("a", {**node.allocatable, "nvidia.com/gpu": 16})
    s.cluster_event(node_updated(old, node), 10.0)
    assert tried(s, 10.0) == []
    old = node_before(node)
    state.cordon("a", unschedulable=False)
    s.cluster_event(node_updated(old, node), 20.0)
    assert tried(s, 20.0) == [("p", "bound")]


def test_a_pod_that_wants_a_host_port_goes_back_only_when_a_pod_holding_that_port_leaves() -> None:
    port = HostPort("TCP", "0.0.0.0", 8080)
    state = ClusterState([gpu_node("a")])
    s = Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state))
    state.assign(Pod("web", host_ports=(port,)), "a", 0.0)
    state.assign(Pod("batch"), "a", 0.0)
    s.add(Pod("p", host_ports=(port,)), 0.0)
    assert tried(s, 0.0) == [("p", "unschedulable")]
    free(s, state, "default/batch", 10.0)
    assert tried(s, 10.0) == []
    free(s, state, "default/web", 20.0)
    assert tried(s, 20.0) == [("p", "bound")]


def test_a_node_added_that_the_pod_cannot_fit_leaves_it_waiting_and_one_it_fits_sends_it_back() -> None:
    s, state = cluster("a")
    s.add(gpu_pod("p", 8), 0.0)
    assert tried(s, 0.0) == [("p", "unschedulable")]
    small = gpu_node("small", gpus=4)
    state.add_node(small)
    s.cluster_event([ClusterChange(NODE_ADD, None, small)], 10.0)
    assert tried(s, 10.0) == []
    big = gpu_node("big")
    state.add_node(big)
    s.cluster_event([ClusterChange(NODE_ADD, None, big)], 20.0)
    assert tried(s, 20.0) == [("p", "bound")]


def test_the_wildcard_event_sends_every_unschedulable_pod_back() -> None:
    s, _ = cluster("a")
    s.add(gpu_pod("p", 8), 0.0)
    assert tried(s, 0.0) == [("p", "unschedulable")]
    s.cluster_event(EVERYTHING, 10.0)
    assert tried(s, 10.0) == [("p", "unschedulable")]


def test_a_pod_no_event_helps_returns_after_five_minutes() -> None:
    """``flushUnschedulablePodsLeftover`` runs every 30 s and moves a pod more than 5 minutes after its
    failure: at 330 s, not 300 s."""
    s, state = cluster("a", "b")
    s.add(gpu_pod("p", 8), 0.0)
    assert tried(s, 0.0) == [("p", "unschedulable")]
    relabel(s, state, "b", 10.0, team="x")
    assert tried(s, 299.0) == []
    assert tried(s, 300.0) == []
    assert tried(s, 330.0) == [("p", "unschedulable")]


def test_a_failure_no_plugin_is_named_for_backs_off_and_is_tried_again_without_an_event() -> None:
    """No node at all (``ErrNoNodesAvailable``): no rejector plugin, so the pod goes to backoff (1 s,
    then 2 s) and is tried again once it is over: at the start of the 1-second window after the one its
    expiry falls in (at 2 s, then 5 s)."""
    state = ClusterState([])
    s = Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state))
    s.add(gpu_pod("p", 1), 0.0)
    assert tried(s, 0.0) == [("p", "unschedulable")]
    assert P not in s.queue.unschedulable
    assert tried(s, 1.0) == []
    assert tried(s, 2.0) == [("p", "unschedulable")]
    assert tried(s, 4.0) == []
    assert tried(s, 5.0) == [("p", "unschedulable")]


def test_node_resources_fit_registers_for_1_34s_gates() -> None:
    """``EventsToRegister`` with SchedulerQueueingHints (GA) and InPlacePodVerticalScaling both on: a pod
    deleted or scaled down, a node added or its allocatable changed."""
    got = [e.event for e in NodeResourcesFit().events_to_register()]
    assert got == [
        ClusterEvent(Resource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
    ]
