"""Scale-down verdicts kept from one scan to the next (``autoscaling.removal_memo``): a kept verdict is
always the one a fresh simulation of every candidate would make, and one is kept only while what it
was made of stands."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import gpu_node, gpu_pod, scale_down_with
from gpufleet.autoscaling.cluster_autoscaler import Candidate, ScaleDownReply
from gpufleet.autoscaling.removal_memo import RemovalMemo
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef, Pod, Requirement
from gpufleet.model.pod_affinity import PodAffinity, PodAffinityTerm

JOB = OwnerRef("Job", "train")


def scan(state: ClusterState, names: list[str], memo: RemovalMemo | None, now: float) -> ScaleDownReply:
    candidates = [Candidate(n, "pool", len(names), 0) for n in names]
    return scale_down_with(state, candidates, now=now, delay_after_add_s=0.0, memo=memo)


def unneeded(state: ClusterState, names: list[str], memo: RemovalMemo | None, now: float) -> dict[str, float]:
    return scan(state, names, memo, now).unneeded_since


def job_pod(name: str, gpus: int) -> Pod:
    return gpu_pod(name, gpus, owner=JOB)


def test_a_verdict_stands_while_the_nodes_its_pods_would_move_to_do_not_change() -> None:
    """Node c's pod would move to a (first fit): a change on d, after a, keeps c's verdict; a change
    on a, which takes its room, makes it again, and c is needed now."""
    state = ClusterState([gpu_node(n, 8) for n in ("a", "b", "c", "d")])
    for name, node, gpus in (("a0", "a", 4), ("b0", "b", 8), ("c0", "c", 4)):
        state.assign(job_pod(name, gpus), node, 0.0)
    memo = RemovalMemo()
    assert "c" in unneeded(state, ["c"], memo, 0.0)
    state.assign(job_pod("d0", 8), "d", 10.0)
    assert "c" in unneeded(state, ["c"], memo, 10.0) and "c" in memo.kept
    state.assign(job_pod("a1", 4), "a", 20.0)
    assert "c" in memo.kept  # until the next scan looks
    assert unneeded(state, ["c"], memo, 20.0) == {}


def test_no_verdict_is_kept_while_a_placed_pod_has_anti_affinity() -> None:
    """A pod placed on d, after the node c's pod would move to, repels it from their zone: c is needed."""
    zone = {"topology.kubernetes.io/zone": "z"}
    state = ClusterState([gpu_node(n, 8, labels=zone) for n in ("a", "b", "c", "d")])
    web = {"app": "web"}
    for name, node, gpus in (("a0", "a", 4), ("b0", "b", 8)):
        state.assign(job_pod(name, gpus), node, 0.0)
    state.assign(gpu_pod("c0", 4, owner=JOB, labels=web), "c", 0.0)
    memo = RemovalMemo()
    assert "c" in unneeded(state, ["c"], memo, 0.0)
    term = PodAffinityTerm((Requirement("app", "In", ("web",)),), "topology.kubernetes.io/zone")
    state.assign(gpu_pod("d0", 1, owner=JOB, pod_affinity=PodAffinity(anti_required=(term,))), "d", 10.0)
    assert unneeded(state, ["c"], memo, 10.0) == {}


def changed_after_a_scan(change: str, node: str) -> tuple[ClusterState, RemovalMemo, list[Candidate]]:
    """A scan of nodes c and d, the candidates (their pods would move to a, first fit; b is full, e
    empty), then the pod ``change`` ("add" or "remove") on ``node``: the cluster, the memo, the candidates."""
    state = ClusterState([gpu_node(n, 8) for n in ("a", "b", "c", "d", "e")])
    for name, on, gpus in (("a0", "a", 2), ("b0", "b", 8), ("c0", "c", 2), ("d0", "d", 2), ("e0", "e", 1)):
        state.assign(job_pod(name, gpus), on, 0.0)
    candidates = [Candidate(n, "pool", 2, 0) for n in ("c", "d")]
    memo = RemovalMemo()
    reply = scale_down_with(state, candidates, now=0.0, delay_after_add_s=0.0, memo=memo)
    assert sorted(reply.unneeded_since) == ["c", "d"]
    if change == "add":
        state.assign(job_pod(f"x-{node}", 1), node, 10.0)
    else:
        state.unassign(f"default/{node}0")
    return state, memo, candidates


def recalled_whole(change: str, node: str, limit: int = 10) -> bool:
    """Whether the scan after the pod ``change`` on ``node`` gets the last scan's verdicts back whole
    (``RemovalMemo.again``)."""
    state, memo, candidates = changed_after_a_scan(change, node)
    memo.begin(state, frozenset())
    return memo.again(candidates, limit) == {"c": None, "d": None}


def test_the_last_scans_verdicts_come_back_whole_while_no_row_they_read_changed() -> None:
    """A pod placed on or taken from b or e, after a (the last row a verdict looked at) and neither
    candidate, leaves every verdict standing; one on a or on a candidate makes them one by one again, and
    so does a limit below the two eligible candidates (the simulation would stop before the second)."""
    assert recalled_whole("add", "e") and recalled_whole("remove", "e") and recalled_whole("remove", "b")
    assert not recalled_whole("add", "a") and not recalled_whole("remove", "c")
    assert not recalled_whole("add", "e", limit=1)


CHANGES = [("add", "e", 10), ("remove", "e", 10), ("remove", "b", 10), ("add", "a", 10), ("remove", "c", 10)]


@pytest.mark.parametrize(("change", "node", "limit"), [*CHANGES, ("add", "e", 1)])
def test_holds_says_what_again_would_and_leaves_the_memo_as_it_was(
    change: str, node: str, limit: int
) -> None:
    """``RemovalMemo.holds``, which the loop asks before it builds a scan's request, answers as ``begin``
    then ``again`` would, and moves nothing: ``begin`` and ``again`` after it answer the same."""
    state, memo, candidates = changed_after_a_scan(change, node)
    held = memo.holds(state, candidates, limit)
    assert held == recalled_whole(change, node, limit)
    memo.begin(state, frozenset())
    assert (memo.again(candidates, limit) is not None) == held


def test_holds_looks_only_at_what_changed_since_it_last_held_and_then_at_the_next_change() -> None:
    """A pod on e (after a, the last row a verdict read) leaves the verdicts standing; a pod on candidate c
    after that does not, for ``holds`` and for the next scan's ``again`` alike."""
    state, memo, candidates = changed_after_a_scan("add", "e")
    assert memo.holds(state, candidates, 10)
    state.assign(job_pod("x-c", 1), "c", 20.0)
    assert not memo.holds(state, candidates, 10)
    memo.begin(state, frozenset())
    assert memo.again(candidates, 10) is None


def test_a_pod_that_fits_nowhere_is_looked_for_again_after_any_change() -> None:
    state = ClusterState([gpu_node(n, 8) for n in ("a", "b")])
    state.assign(job_pod("a0", 8), "a", 0.0)
    state.assign(job_pod("b0", 4), "b", 0.0)
    memo = RemovalMemo()
    assert unneeded(state, ["b"], memo, 0.0) == {}
    state.unassign("default/a0")
    assert unneeded(state, ["b"], memo, 10.0) == {"b": 10.0}


# a scan sees the cluster after some pods came and went: (pod number, node or None to remove it)
MOVE = st.tuples(st.integers(0, 11), st.one_of(st.none(), st.integers(0, 5)))
MOVES = st.lists(MOVE, min_size=1, max_size=4)


@settings(max_examples=100, deadline=None)
@given(
    sizes=st.lists(st.sampled_from([1, 2, 4, 8]), min_size=12, max_size=12),
    scans=st.lists(MOVES, min_size=2, max_size=8),
)
def test_kept_verdicts_are_those_a_fresh_scan_makes(sizes: list[int], scans: list[Any]) -> None:
    """Over random clusters and random pods coming and going between scans, the scans that keep
    verdicts find the same unneeded nodes, and the same reasons for the others (``UnremovableReason``
    and words), as scans that simulate every candidate afresh."""
    names = [f"n{k}" for k in range(6)]
    state = ClusterState([gpu_node(n, 8) for n in names])
    pods = [job_pod(f"p{k}", gpus) for k, gpus in enumerate(sizes)]
    memo = RemovalMemo()
    for t, moves in enumerate(scans):
        for k, node in moves:
            placed = pods[k].key in state.assignments
            if node is None and placed:
                state.unassign(pods[k].key)
            elif node is not None and not placed and state.free_on(node, "nvidia.com/gpu") >= sizes[k]:
                state.assign(pods[k], node, float(t))
        kept, fresh = scan(state, names, memo, float(t)), scan(state, names, None, float(t))
        assert (kept.unneeded_since, kept.not_unneeded) == (fresh.unneeded_since, fresh.not_unneeded)


def test_a_node_added_keeps_verdicts_that_looked_before_it_and_serves_one_that_fitted_nowhere() -> None:
    """Node z's pod would move to a: a node added (after every row) keeps z's verdict. Node b's pod
    fitted nowhere: it is looked for on the new node, and b is unneeded now."""
    state = ClusterState([gpu_node("a", 8), gpu_node("b", 8), gpu_node("c", 8), gpu_node("z", 4)])
    for name, node, gpus in (("a0", "a", 7), ("b0", "b", 4), ("c0", "c", 4), ("c1", "c", 1), ("z0", "z", 1)):
        state.assign(job_pod(name, gpus), node, 0.0)
    memo = RemovalMemo()
    assert unneeded(state, ["b", "z"], memo, 0.0) == {"z": 0.0}
    kept = memo.kept["z"]
    state.add_node(gpu_node("d", 8))
    assert unneeded(state, ["b", "z"], memo, 10.0) == {"b": 10.0, "z": 10.0}
    assert memo.kept["z"] is kept  # recalled, not simulated again


def test_a_cordon_on_the_node_a_verdict_moved_pods_to_makes_it_again() -> None:
    """Node c's pod would move to a; a is cordoned (no other node has room): c is needed now."""
    state = ClusterState([gpu_node(n, 8) for n in ("a", "b", "c")])
    for name, node, gpus in (("a0", "a", 4), ("b0", "b", 8), ("c0", "c", 4)):
        state.assign(job_pod(name, gpus), node, 0.0)
    memo = RemovalMemo()
    assert unneeded(state, ["c"], memo, 0.0) == {"c": 0.0}
    state.cordon("a")
    assert unneeded(state, ["c"], memo, 10.0) == {}


def delete(state: ClusterState, key: str, now: float) -> None:
    """The pod is deleted at ``now`` and stays terminating (its kubelet confirms nothing)."""
    a = state.assignments[key]
    state.set_terminating(a)
    a.deleted_s = now


def test_a_pod_turning_long_terminating_makes_its_nodes_verdict_again_and_keeps_the_others() -> None:
    """c's pod, deleted at 0 with a 30 s grace period, counts in c's utilisation at 10 s and is left out once
    long terminating (``IsPodLongTerminating``: after grace + 30 s): c is unneeded at 70 s. Its row changed
    as the memo sees it, and a's verdict (its pod moves to b, before c) is recalled, not made again."""
    state = ClusterState([gpu_node(n, 8) for n in ("a", "b", "c")])
    for name, node, gpus in (("a0", "a", 2), ("b0", "b", 4), ("c0", "c", 8)):
        state.assign(job_pod(name, gpus), node, 0.0)
    delete(state, "default/c0", 0.0)
    memo = RemovalMemo()
    assert unneeded(state, ["a", "c"], memo, 10.0) == {"a": 10.0}
    kept = memo.kept["a"]
    assert unneeded(state, ["a", "c"], memo, 70.0) == {"a": 70.0, "c": 70.0}
    assert memo.kept["a"] is kept
    assert memo.kept["c"].why is None


@settings(max_examples=100, deadline=None)
@given(
    sizes=st.lists(st.sampled_from([1, 2, 4, 8]), min_size=12, max_size=12),
    scans=st.lists(st.tuples(MOVES, st.lists(st.integers(0, 11), max_size=2)), min_size=2, max_size=8),
)
def test_kept_verdicts_are_those_a_fresh_scan_makes_while_pods_terminate(
    sizes: list[int], scans: list[Any]
) -> None:
    """As the first, with placed pods deleted between scans (20 s apart) and left terminating: each becomes
    long terminating three scans later, and scale-down neither counts nor moves it from then on."""
    names = [f"n{k}" for k in range(6)]
    state = ClusterState([gpu_node(n, 8) for n in names])
    pods = [job_pod(f"p{k}", gpus) for k, gpus in enumerate(sizes)]
    memo = RemovalMemo()
    for t, (moves, deleted) in enumerate(scans):
        now = 20.0 * t
        for k, node in moves:
            placed = pods[k].key in state.assignments
            if node is None and placed:
                state.unassign(pods[k].key)
            elif node is not None and not placed and state.free_on(node, "nvidia.com/gpu") >= sizes[k]:
                state.assign(pods[k], node, now)
        for k in deleted:
            if pods[k].key in state.assignments and pods[k].key not in state.deleting:
                delete(state, pods[k].key, now)
        kept, fresh = scan(state, names, memo, now), scan(state, names, None, now)
        assert (kept.unneeded_since, kept.not_unneeded) == (fresh.unneeded_since, fresh.not_unneeded)


# between scans, a node's static facts may change too: (what, node number)
CHANGE = st.sampled_from(["cordon", "uncordon", "relabel", "remove", "add"])
STATIC = st.lists(st.tuples(CHANGE, st.integers(0, 5)))


@settings(max_examples=100, deadline=None)
@given(
    sizes=st.lists(st.sampled_from([1, 2, 4, 8]), min_size=12, max_size=12),
    scans=st.lists(st.tuples(MOVES, STATIC), min_size=2, max_size=8),
)
def test_kept_verdicts_are_those_a_fresh_scan_makes_while_nodes_come_go_and_are_cordoned(
    sizes: list[int], scans: list[Any]
) -> None:
    """As above, with nodes added, removed, cordoned, uncordoned and relabelled between scans."""
    state = ClusterState([gpu_node(f"n{k}", 8) for k in range(6)])
    pods = [job_pod(f"p{k}", gpus) for k, gpus in enumerate(sizes)]
    memo = RemovalMemo()
    added = 0
    for t, (moves, static) in enumerate(scans):
        for what, k in static:
            name = state.nodes[k].name
            if what == "add":
                added += 1
                state.add_node(gpu_node(f"new{added}", 8))
            elif name not in state.index:
                continue
            elif what == "remove":
                state.remove_node(name)
            elif what == "relabel":
                state.set_labels(name, {"pool": str(t)})
            else:
                state.cordon(name, what == "cordon")
        for k, node in moves:
            placed = pods[k].key in state.assignments
            if node is None and placed:
                state.unassign(pods[k].key)
            elif (
                node is not None
                and not placed
                and state.nodes[node].name in state.index
                and state.free_on(node, "nvidia.com/gpu") >= sizes[k]
            ):
                state.assign(pods[k], node, float(t))
        names = state.node_names()
        assert unneeded(state, names, memo, float(t)) == unneeded(state, names, None, float(t))
