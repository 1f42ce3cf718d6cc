"""``Scheduler.decide``: one attempt with every tie kept, what a comparison with kube-scheduler needs
where its own choice is random (``selectHost`` among the top-scoring nodes; the equally ranked
preemption candidates, taken in map order)."""

from __future__ import annotations

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.scheduler import Decision, Scheduler


def scheduler(*nodes: str) -> Scheduler:
    state = ClusterState([gpu_node(n) for n in nodes])
    return Scheduler(SchedulerConfig("test"), state, GangView(state))


def test_equally_scored_nodes_are_all_kept_and_nothing_changes() -> None:
    s = scheduler("a", "b", "c")
    s.state.assign(gpu_pod("busy", 4), "b", 0.0)
    assert s.decide(gpu_pod("p", 2)) == Decision(nodes=("a", "c"))
    assert set(s.state.assignments) == {"default/busy"}


def test_a_unique_best_node_is_the_decision() -> None:
    s = scheduler("a", "b")
    s.state.assign(gpu_pod("busy", 4), "b", 0.0)
    assert s.decide(gpu_pod("p", 2)).nodes == ("a",)


def test_equally_ranked_preemption_candidates_are_all_kept_with_their_victims() -> None:
    """pickOneNodeForPreemption ties on every criterion (same priority, same start second): either
    node may be nominated, each with its own victim."""
    s = scheduler("a", "b")
    s.state.assign(gpu_pod("x", 8, priority=5), "a", 10.2)
    s.state.assign(gpu_pod("y", 8, priority=5), "b", 10.7)
    decision = s.decide(gpu_pod("urgent", 8, priority=1000))
    assert decision.nodes == ()
    assert decision.nominations == (("a", ("default/x",)), ("b", ("default/y",)))
    assert decision.message.startswith("0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory")


def test_a_tie_break_decides_between_equal_nodes_and_candidates() -> None:
    s = scheduler("a", "b")
    s.tie_break = lambda pod, names: names.index("b")
    node, _ = s.try_schedule(gpu_pod("p", 2))
    assert node == "b"
