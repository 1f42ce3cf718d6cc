"""Node PreFilters whose node names leave no node reject the pod at PreFilter (kube-scheduler 1.34
``RunPreFilterPlugins``): the intersection of the ``PreFilterResult.NodeNames`` so far is empty, so the
framework returns UnschedulableAndUnresolvable with ``node(s) didn't satisfy plugin X`` (one narrowing
plugin) or ``node(s) didn't satisfy plugin(s) [X Y] simultaneously``, the FitError says only that (its
PreFilter message, no per-node count), and those plugins are the pod's UnschedulablePlugins. Where some
node is left, the others are each rejected with ``node(s) didn't satisfy plugin(s) [X]`` as before."""

from __future__ import annotations

from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.framework import NodesPreFilter
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.scheduler import Scheduler


def pinning(plugin: str, *names: str) -> NodesPreFilter:
    class Pin(NodesPreFilter):
        name = plugin

        def nodes(self, pod: Pod) -> set[str] | None:
            return set(names)

        def reads(self, pod: Pod) -> tuple[object, ...]:
            return (plugin, names)

    return Pin()


def scheduler_pinned(*prefilters: NodesPreFilter) -> Scheduler:
    nodes = [Node(n, allocatable={"cpu": 4000, "memory": 1 << 30, "pods": 10}) for n in ("a", "b", "c")]
    state = ClusterState(nodes)
    sched = Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state))
    sched.profiles["default-scheduler"].node_prefilters.extend(prefilters)
    return sched


def test_node_prefilters_with_no_common_node_reject_at_prefilter() -> None:
    sched = scheduler_pinned(pinning("PinB", "b"), pinning("PinA", "a"))
    node, message = sched.try_schedule(Pod("p"))
    assert node is None
    assert message.startswith(
        "0/3 nodes are available: node(s) didn't satisfy plugin(s) [PinA PinB] simultaneously."
    )
    assert sched.rejectors == {"PinA", "PinB"}


def test_one_node_prefilter_with_no_node_rejects_at_prefilter() -> None:
    sched = scheduler_pinned(pinning("PinA"))
    node, message = sched.try_schedule(Pod("p"))
    assert node is None
    assert message.startswith("0/3 nodes are available: node(s) didn't satisfy plugin PinA.")
    assert sched.rejectors == {"PinA"}


def test_node_prefilters_leaving_a_node_reject_the_others_per_node() -> None:
    sched = scheduler_pinned(pinning("PinA", "a", "b"), pinning("PinB", "b"))
    assert sched.decide(Pod("p")).nodes == ("b",)
    sched = scheduler_pinned(pinning("PinA", "gone"))
    node, message = sched.try_schedule(Pod("p"))
    assert node is None
    assert message.startswith("0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [PinA].")
