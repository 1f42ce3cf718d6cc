"""Mechanisms of kube-scheduler 1.34.10 that gpufleet once got wrong (issue 12), checked end to end:
nodes that can never fit are UnschedulableAndUnresolvable so DefaultPreemption calls itself not
helpful there, NodeAffinity's PreFilter rejects conflicting ``matchFields``, and an explicit zero
request is not the absent one that scoring fills with 100m and 200Mi."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, Node, Taint
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.node_resources_fit import NodeResourcesFit
from gpufleet.scheduling.scheduler import Scheduler

NOT_HELPFUL_TAIL = "preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."


def node(name: str, **kw: object) -> Node:
    return Node(name, capacity={"cpu": 4000, "memory": 8 * 2**30, "pods": 110}, **kw)  # type: ignore[arg-type]


def message(nodes: Sequence[Node], pod: Pod) -> str:
    """The FailedScheduling message for ``pod`` (priority 100) with a priority-0 pod on every node,
    so that preemption would have victims wherever it is tried."""
    state = ClusterState(list(nodes))
    for i, n in enumerate(nodes):
        state.assign(Pod(f"low-{i}", requests={"cpu": 100}), n.name, 0.0)
    pod.priority = 100
    placed, text = Scheduler(SchedulerConfig("test"), state, GangView(state)).try_schedule(pod)
    assert placed is None
    return text


def test_never_fitting_nodes_are_not_helped_by_preemption() -> None:
    """Each filter's rejection that no eviction can lift is UnschedulableAndUnresolvable
    (tainttoleration NoSchedule and NoExecute, nodeunschedulable, nodename, nodeaffinity,
    noderesources ``Unresolvable``): ``preemption.go`` then marks every node not helpful."""
    nodes = [
        node("tainted", taints=(Taint("dedicated", "x", NO_SCHEDULE),)),
        node("evicting", taints=(Taint("dedicated", "x", NO_EXECUTE),)),
        node("cordoned", unschedulable=True),
        node("other-zone", labels={"zone": "b"}),
        node("small"),
    ]
    pod = Pod("p", requests={"cpu": 8000}, node_selector={"zone": "b"})
    assert message(nodes, pod) == (
        "0/5 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) were unschedulable, 2 node(s) had untolerated taint(s). no new claims to deallocate, "
        + NOT_HELPFUL_TAIL.format(n=5)
    )


def test_a_node_name_mismatch_is_not_helped_by_preemption() -> None:
    """``nodename.Filter``: UnschedulableAndUnresolvable, ``node(s) didn't match the requested node name``."""
    pod = Pod("p", requests={"cpu": 100}, node_name="elsewhere")
    assert message([node("a"), node("b")], pod) == (
        "0/2 nodes are available: 2 node(s) didn't match the requested node name. "
        "no new claims to deallocate, " + NOT_HELPFUL_TAIL.format(n=2)
    )


def test_conflicting_match_fields_are_a_prefilter_rejection() -> None:
    """``nodeaffinity.PreFilter``: one term asking for two node names leaves no node:
    UnschedulableAndUnresolvable ``pod affinity terms conflict``, the FitError's PreFilter message."""
    fields = (Requirement("metadata.name", "In", ("a",)), Requirement("metadata.name", "In", ("b",)))
    pod = Pod("p", requests={"cpu": 100}, required_terms=(SelectorTerm(fields=fields),))
    assert message([node("a"), node("b")], pod) == (
        "0/2 nodes are available: pod affinity terms conflict. no new claims to deallocate, "
        + NOT_HELPFUL_TAIL.format(n=2)
    )


def test_an_explicit_zero_request_is_not_filled_with_the_non_zero_defaults() -> None:
    """``resource_allocation.go`` ``NonMissingContainerRequests``: 100m cpu and 200Mi memory stand in
    only for a request a container leaves out; ``memory: "0"`` stays 0 (LeastAllocated)."""
    state = ClusterState([Node("n", capacity={"cpu": 1000, "memory": 1000 * 2**20, "pods": 110})])
    absent = Pod("absent", requests={"cpu": 500}, nonzero_requests={"cpu": 500, "memory": 200 * 2**20})
    explicit = Pod("explicit", requests={"cpu": 500}, nonzero_requests={"cpu": 500, "memory": 0})
    fit, idx = NodeResourcesFit(), np.array([0])
    # cpu (1000-500)/1000 = 50; memory 80 with the default, 100 without -> 65 and 75
    assert int(fit.score(PodContext(absent, state), idx)[0]) == 65
    assert int(fit.score(PodContext(explicit, state), idx)[0]) == 75
