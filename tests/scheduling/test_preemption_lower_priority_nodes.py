"""DefaultPreemption visits only the nodes that hold a pod of lower priority than the preemptor
(``with_lower_priority``): each node's lowest priority is kept and worked out again for the nodes
whose pods changed, so a pod arriving or leaving between two failed cycles is seen by the next."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from preemption_setup import Cluster, pod

from conftest import gpu_node
from gpufleet.cluster.state import ClusterState
from gpufleet.scheduling.events import EVERYTHING
from gpufleet.scheduling.plugins.default_preemption import with_lower_priority

URGENT = 50


def test_a_lower_priority_pod_placed_after_a_failed_cycle_is_preempted_by_the_next() -> None:
    c = Cluster("a", "b")
    c.place(pod("high-a", 8, priority=100), "a")
    c.place(pod("high-b", 8, priority=100), "b")
    first = c.schedule(pod("urgent", 8, priority=URGENT))
    assert "2 No preemption victims found for incoming pod." in first[0].message
    c.state.unassign("default/high-b")
    c.place(pod("batch", 8, priority=1), "b")
    c.scheduler.cluster_event(EVERYTHING, 200.0)
    out = [o for o in c.scheduler.run(200.0) if o.kind == "preempting"]
    assert [(o.node, o.victims) for o in out] == [("b", ("default/batch",))]


def test_a_node_whose_low_priority_pod_left_has_no_victims_again() -> None:
    c = Cluster("a")
    c.place(pod("batch", 4, priority=1), "a")
    c.place(pod("high", 4, priority=100), "a")
    assert with_lower_priority(c.state, [0], URGENT) == [0]
    c.state.unassign("default/batch")
    assert with_lower_priority(c.state, [0], URGENT) == []


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.integers(-3, 3), st.booleans()),
        min_size=1,
        max_size=400,
    ),
    st.integers(-3, 3),
)
def test_the_nodes_visited_are_those_with_a_lower_priority_pod(
    steps: list[tuple[int, int, bool]], priority: int
) -> None:
    """Pods come and go on six nodes (and nodes join) between the questions; each answer equals a
    fresh look at every node's pods. Hundreds of changes trim the state's change log on the way."""
    state = ClusterState([gpu_node(f"n{i}", 8) for i in range(3)])
    for k, (node, prio, leave) in enumerate(steps):
        while node >= state.size:
            state.add_node(gpu_node(f"n{state.size}", 8))
        on = list(state.pods_on[node])
        if leave and on:
            state.unassign(on[0])
        elif len(on) < 8:
            state.assign(pod(f"p{k}", 1, priority=prio), node, 0.0)
        nodes = list(range(state.size))[::-1] if k % 2 else list(range(state.size))
        expected = [i for i in nodes if any(a.pod.priority < priority for a in state.pods_on[i].values())]
        assert with_lower_priority(state, nodes, priority) == expected


def test_the_answer_holds_after_the_change_log_was_trimmed_past_the_last_question() -> None:
    state = ClusterState([gpu_node("a", 8), gpu_node("b", 8)])
    state.assign(pod("high", 1, priority=100), "a", 0.0)
    assert with_lower_priority(state, [0, 1], URGENT) == []
    for k in range(1100):  # the log keeps its newer half past 1,024 changes
        state.assign(pod(f"churn-{k}", 1, priority=100), "b", 0.0)
        state.unassign(f"default/churn-{k}")
    state.assign(pod("batch", 1, priority=1), "a", 0.0)
    state.assign(pod("churn-last", 1, priority=100), "b", 0.0)
    assert state.change_base > 0
    assert with_lower_priority(state, [0, 1], URGENT) == [0]
