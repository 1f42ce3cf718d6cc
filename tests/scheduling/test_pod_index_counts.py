"""The pod index's groups (``cluster.pod_index``) count what is assigned: after any assignments, removals
and terminations, the counts a recount of the assigned pods gives, whether the index was asked for from
the start (kept current by each step) or first after some of them (made from the assignments then)."""

from __future__ import annotations

from collections import Counter

from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import gpu_node
from gpufleet.cluster.state import Assignment, ClusterState
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_affinity import PodAffinity, PodAffinityTerm

LABELS = ({"app": "a"}, {"app": "b"}, {"app": "a", "tier": "x"}, {})
#: pod 3's terms (the others have none)
APART = PodAffinity(
    anti_required=(PodAffinityTerm((Requirement("app", "In", ("a",)),), "kubernetes.io/hostname"),)
)

#: (what, pod number, node or labels choice): assign, unassign, terminate, read the groups
Step = tuple[str, int, int]


def _recount(state: ClusterState) -> dict[tuple[object, ...], tuple[Counter[int], Counter[int]]]:
    counts: dict[tuple[object, ...], tuple[Counter[int], Counter[int]]] = {}
    for a in state.assignments.values():
        held, live = counts.setdefault(
            (a.pod.namespace, tuple(sorted(a.pod.labels.items()))), (Counter(), Counter())
        )
        held[a.node] += 1
        if not a.terminating:
            live[a.node] += 1
    return counts


def _counted(state: ClusterState) -> dict[tuple[object, ...], tuple[Counter[int], Counter[int]]]:
    return {
        key: (
            Counter({i: n for i, n in enumerate(g.held.tolist()) if n}),
            Counter({i: n for i, n in enumerate(g.live.tolist()) if n}),
        )
        for key, g in state.placed.groups.items()
    }


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["assign", "assign", "unassign", "terminate", "terminate", "read"]),
            st.integers(0, 4),
            st.integers(0, 5),
        ),
        max_size=60,
    ),
    st.booleans(),
)
@example(  # a pod let go, then terminating: its group counts it neither way
    [
        ("assign", 0, 0),
        ("assign", 2, 0),
        ("read", 0, 0),
        ("unassign", 0, 0),
        ("terminate", 0, 0),
        ("read", 0, 0),
    ],
    False,
)
def test_groups_read_after_any_steps_count_the_assigned_pods(steps: list[Step], early: bool) -> None:
    state = ClusterState([gpu_node(f"n{i}", 8) for i in range(6)])
    if early:
        assert not state.placed.groups
    gone: dict[str, Assignment] = {}  # assignments let go, which may still change (and count for nothing)
    for what, p, x in steps:
        key = f"default/p{p}"
        a = state.assignments.get(key)
        if what == "assign" and a is None:
            affinity = APART if p == 3 else None
            state.assign(
                Pod(f"p{p}", labels=dict(LABELS[p % 2 * (x % 3)]), pod_affinity=affinity), x % 2, 0.0
            )
        elif what == "unassign" and a is not None:
            gone[key] = a
            state.unassign(key)
        elif what == "terminate" and (a := a or gone.get(key)) is not None:
            state.set_terminating(a, not a.terminating)
        elif what == "read":
            assert _counted(state) == _recount(state)
        # (counted on every step, index or not: InterPodAffinity's Skip reads it)
        assert state.placed_with_affinity == ("default/p3" in state.assignments)
    assert _counted(state) == _recount(state)
    assert list(state.placed.with_affinity) == [k for k in state.assignments if k == "default/p3"]
