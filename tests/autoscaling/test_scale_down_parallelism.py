"""cluster-autoscaler 1.34.5's scale-down budgets and ``unneededNodesLimit``.

``budgets.ScaleDownBudgetProcessor.CropNodes`` (``core/scaledown/budgets/budgets.go``): of
``--max-scale-down-parallelism`` (10) less every deletion in progress
(``ActuationStatus.DeletionsInProgress``, empty and drained), the empty nodes take what they need and the
nodes to drain the rest, within
``--max-drain-parallelism`` (1) less the drains in progress; each kind is taken a node group at a time. The
deprecated ``--max-empty-bulk-delete`` is no longer a flag in 1.34. ``Planner.unneededNodesLimit``
(``core/scaledown/planner/planner.go``): a scan stops simulating removals once it has found the nodes
unneeded at the last scan plus twice the parallelism (at most the parallelism times the scans within
``ScaleDownUnneededTime``, plus the parallelism), the candidates taken empty ones first, then those unneeded
at the last scan (``EmptySorting``, ``PreviousCandidates``, registered in ``main.go``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import gpu_node, gpu_pod, run_simulation, scale_down_with, write
from gpufleet.autoscaling.cluster_autoscaler import Candidate, ScaleDownReply
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef

JOB = OwnerRef("Job", "serve")


def cluster(empty: int, busy: int = 0, spare: bool = False) -> ClusterState:
    """``empty`` empty 8-GPU nodes ``e<k>`` and ``busy`` ones ``b<k>`` with a 1-GPU Job pod each (to drain);
    with ``spare``, an empty node of no candidate that takes them all."""
    names = [f"e{k:02}" for k in range(empty)] + [f"b{k:02}" for k in range(busy)]
    state = ClusterState([gpu_node(n, 8) for n in names] + ([gpu_node("spare", 8)] if spare else []))
    for k in range(busy):
        state.assign(gpu_pod(f"pod-{k}", 1, owner=JOB), f"b{k:02}", 0.0)
    return state


def down(state: ClusterState, nodes: list[str], **kw: Any) -> ScaleDownReply:
    """A scan at 700 s of ``nodes`` (group ``h100``, ``min`` 0), each unneeded since 0 s unless told."""
    candidates = kw.pop("candidates", [Candidate(n, "h100", 100, 0) for n in nodes])
    defaults = {"now": 700.0, "unneeded_since": dict.fromkeys(nodes, 0.0), "assess": False}
    return scale_down_with(state, candidates, **(defaults | kw))


def removed(reply: ScaleDownReply) -> list[str]:
    return [c.node for c in reply.remove]


def test_empty_nodes_leave_no_room_for_a_drain_beyond_max_scale_down_parallelism() -> None:
    """Ten empty nodes and one to drain, all unneeded long enough: the empty ones take the whole budget of 10
    and the drain waits (it used to start besides ten empty deletions)."""
    state = cluster(10, 1, spare=True)
    nodes = [f"e{k:02}" for k in range(10)] + ["b00"]
    assert removed(down(state, nodes)) == nodes[:10]
    assert removed(down(state, nodes[5:])) == nodes[5:]  # five empty ones leave room for it


def test_deletions_in_progress_count_against_max_scale_down_parallelism() -> None:
    """With two drains in progress, 8 of 10 empty nodes go; with 10 deletions in progress none."""
    state = cluster(10)
    nodes = [f"e{k:02}" for k in range(10)]
    assert removed(down(state, nodes, in_progress=(0, 2))) == nodes[:8]
    assert removed(down(state, nodes, in_progress=(4, 6))) == []
    assert set(down(state, nodes, in_progress=(4, 6)).unneeded_since) == set(nodes)  # still unneeded


def test_max_drain_parallelism_drains_several_nodes_at_once_less_those_draining() -> None:
    """``maxDrainParallelism`` 3: three nodes to drain go together; with one drain in progress two."""
    state = cluster(0, 4, spare=True)
    nodes = [f"b{k:02}" for k in range(4)]
    assert removed(down(state, nodes, max_drain_parallelism=3)) == nodes[:3]
    assert removed(down(state, nodes, max_drain_parallelism=3, in_progress=(0, 1))) == nodes[:2]
    assert removed(down(state, nodes, max_drain_parallelism=0)) == []


def test_the_budget_takes_empty_nodes_a_node_group_at_a_time() -> None:
    """``CropNodes`` groups the nodes by node group (in the order of each group's first node): with a
    budget of 2, a-1 goes with a-0 rather than b-0, though b-0 comes before it by name."""
    state = ClusterState([gpu_node(n, 8) for n in ("a-0", "a-1", "b-0")])
    candidates = [Candidate("a-0", "a", 3, 0), Candidate("b-0", "b", 3, 0), Candidate("a-1", "a", 3, 0)]
    reply = down(
        state, [], candidates=candidates, unneeded_since=dict.fromkeys(("a-0", "a-1", "b-0"), 0.0),
        max_parallelism=2,
    )  # fmt: skip
    assert removed(reply) == ["a-0", "a-1"]


def test_a_scan_finds_no_more_unneeded_nodes_than_unneeded_nodes_limit() -> None:
    """25 empty nodes, none unneeded before: the first scan stops at 20 (twice the parallelism of 10) and
    says it was cut; the next, with those 20 unneeded before, finds all 25."""
    state = cluster(25)
    nodes = [f"e{k:02}" for k in range(25)]
    first = down(state, nodes, now=0.0, unneeded_since={}, assess=True)
    assert sorted(first.unneeded_since) == nodes[:20] and first.cut
    second = down(state, nodes, now=10.0, unneeded_since=first.unneeded_since, assess=True)
    assert second.unneeded_since == {**dict.fromkeys(nodes[:20], 0.0), **dict.fromkeys(nodes[20:], 10.0)}
    assert not second.cut


def test_nodes_unneeded_at_the_last_scan_are_simulated_first() -> None:
    """30 empty nodes, the last five unneeded since 0 s: the limit (5 + 20) keeps those five, with their time,
    and the first 20 others; e20 to e24 are left out (neither unneeded nor unremovable)."""
    state = cluster(30)
    nodes = [f"e{k:02}" for k in range(30)]
    reply = down(state, nodes, now=10.0, unneeded_since=dict.fromkeys(nodes[25:], 0.0), assess=True)
    assert reply.unneeded_since == {**dict.fromkeys(nodes[25:], 0.0), **dict.fromkeys(nodes[:20], 10.0)}
    assert reply.not_unneeded == ()


def test_empty_nodes_are_simulated_before_those_to_drain() -> None:
    """A limit of 2 (``maxScaleDownParallelism`` 1, nothing unneeded before): b00 and b01 (to drain) come
    first by name, but the empty e00 and e01 are taken before them."""
    state = cluster(2, 2, spare=True)
    nodes = ["b00", "b01", "e00", "e01"]
    reply = down(state, nodes, now=0.0, unneeded_since={}, assess=True, max_parallelism=1)
    assert sorted(reply.unneeded_since) == ["e00", "e01"]


def pool(replicas: int) -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec:
  replicas: {replicas}
  min: 0
  max: {replicas}
  gpu: {{model: H100-80GB, count: 8}}
  template:
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}
"""


def test_max_scale_down_parallelism_deletes_empty_nodes_two_by_two(tmp_path: Path) -> None:
    """``maxScaleDownParallelism: 2``: five empty nodes, unneeded from the first scan (four of them: the
    limit is 2 + 2; h100-4 from 10 s), go two per scan from 610 s: the deletions of 610 s count at the scan
    the first two's removal arms at 610 s (upstream's loop scans once a tick), not only while their nodes
    stay."""
    simulation = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec:
  duration: 20m
  autoscaler: {maxScaleDownParallelism: 2}
"""
    sim = run_simulation(write(tmp_path, simulation, pool(5)))
    downs = [(e.t_s, e.nodes) for e in sim.autoscaler.events if e.kind == "scale-down"]
    assert downs == [
        (610.0, ("h100-0",)),
        (610.0, ("h100-1",)),
        (620.0, ("h100-2",)),
        (620.0, ("h100-3",)),
        (630.0, ("h100-4",)),
    ]


def test_twenty_five_empty_nodes_go_ten_per_scan_by_default(tmp_path: Path) -> None:
    """Default flags: 25 empty nodes (20 unneeded from 0 s, the limit; 5 from 10 s) go 10 at 610 s, 10 at
    620 s and 5 at 630 s; not all at 610 s, as the scans a removal arms at the same instant used to take
    them ten by ten."""
    simulation = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec:
  duration: 20m
"""
    sim = run_simulation(write(tmp_path, simulation, pool(25)))
    downs = [e.t_s for e in sim.autoscaler.events if e.kind == "scale-down"]
    assert downs == [610.0] * 10 + [620.0] * 10 + [630.0] * 5


def test_a_drain_whose_pods_only_fit_on_an_empty_node_deleted_beside_it_waits() -> None:
    """``persistSuccessfulSimulations``: upstream's planner finds the empty node removable first and keeps
    that removal in its snapshot, so the busy node's pod has nowhere to go and the node stays. gpufleet
    checks the scan's deletions together: the empty node goes, the drain waits (it used to go too, its pod
    left with no node)."""
    state = cluster(1, 1)
    assert removed(down(state, ["e00", "b00"])) == ["e00"]
    assert removed(down(cluster(1, 1, spare=True), ["e00", "b00"])) == ["e00", "b00"]


def test_drains_that_go_together_share_the_room_their_pods_move_to() -> None:
    """``maxDrainParallelism`` 3: three one-pod nodes to drain and a spare node with room for two of their
    pods: the first two go, the third waits for a later scan."""
    state = ClusterState([gpu_node(f"b{k:02}", 8) for k in range(3)] + [gpu_node("spare", 2)])
    for k in range(3):
        state.assign(gpu_pod(f"pod-{k}", 1, owner=JOB), f"b{k:02}", 0.0)
    nodes = [f"b{k:02}" for k in range(3)]
    assert removed(down(state, nodes, max_drain_parallelism=3)) == nodes[:2]
