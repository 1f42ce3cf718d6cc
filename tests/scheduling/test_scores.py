"""Score plugins checked against kube-scheduler's formulas (Kubernetes 1.34)."""

from __future__ import annotations

import numpy as np

from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from gpufleet.scheduling.plugins.node_resources_fit import NodeResourcesFit, ScoringStrategy
from gpufleet.scheduling.plugins.taint_toleration import TaintToleration

MI = 2**20


def scores(
    plugin: NodeResourcesFit | NodeResourcesBalancedAllocation, state: ClusterState, pod: Pod
) -> list[int]:
    return [int(x) for x in plugin.score(PodContext(pod, state), np.arange(state.size))]


def test_requested_to_capacity_ratio_matches_the_resource_bin_packing_doc_example() -> None:
    """kubernetes.io resource-bin-packing: weights foo 5, memory 1, cpu 3, shape {0,0},{100,10}.

    The doc computes on the legacy 0..10 scale (node scores 5 and 7); the code scales shape
    scores by 10 and rounds the weighted mean: 536/9 -> 60 and 625/9 -> 69.
    """
    state = ClusterState(
        [
            Node("node1", capacity={"example.com/foo": 4, "memory": 1024 * MI, "cpu": 8000, "pods": 110}),
            Node("node2", capacity={"example.com/foo": 8, "memory": 1024 * MI, "cpu": 8000, "pods": 110}),
        ]
    )
    state.assign(Pod("used1", requests={"example.com/foo": 1, "memory": 256 * MI, "cpu": 1000}), "node1", 0)
    state.assign(Pod("used2", requests={"example.com/foo": 2, "memory": 512 * MI, "cpu": 6000}), "node2", 0)
    pod = Pod("p", requests={"example.com/foo": 2, "memory": 256 * MI, "cpu": 2000})
    strategy = ScoringStrategy(
        "RequestedToCapacityRatio", (("example.com/foo", 5), ("memory", 1), ("cpu", 3)), ((0, 0), (100, 10))
    )
    assert scores(NodeResourcesFit(strategy), state, pod) == [60, 69]


def test_least_allocated_is_free_share_of_cpu_and_memory_by_default() -> None:
    """least_allocated.go: (allocatable - requested) * 100 / allocatable, mean over cpu and memory."""
    state = ClusterState([Node("n", capacity={"cpu": 4000, "memory": 10000 * MI, "pods": 110})])
    state.assign(Pod("a", requests={"cpu": 1000, "memory": 2000 * MI}), "n", 0)
    pod = Pod("p", requests={"cpu": 1000, "memory": 3000 * MI})
    # cpu: (4000-2000)*100/4000 = 50; memory: (10000-5000)*100/10000 = 50
    assert scores(NodeResourcesFit(), state, pod) == [50]


def test_pods_without_requests_score_with_nonzero_defaults() -> None:
    """util.GetNonzeroRequests: 100m cpu and 200Mi memory for scoring only."""
    state = ClusterState([Node("n", capacity={"cpu": 1000, "memory": 1000 * MI, "pods": 110})])
    # cpu: (1000-100)*100/1000 = 90; memory: (1000-200)*100/1000 = 80 -> 85
    assert scores(NodeResourcesFit(), state, Pod("p")) == [85]


def test_most_allocated_skips_extended_resources_the_pod_does_not_request() -> None:
    """resource_allocation.go: an extended resource the pod does not request is left out."""
    state = ClusterState(
        [Node("n", capacity={"cpu": 4000, "memory": 4000 * MI, "nvidia.com/gpu": 8, "pods": 110})]
    )
    strategy = ScoringStrategy("MostAllocated", (("nvidia.com/gpu", 10), ("cpu", 1), ("memory", 1)))
    cpu_pod = Pod("p", requests={"cpu": 2000, "memory": 1000 * MI})
    # only cpu (50) and memory (25) count: (50 + 25) // 2 = 37
    assert scores(NodeResourcesFit(strategy), state, cpu_pod) == [37]
    gpu_pod = Pod("g", requests={"cpu": 2000, "memory": 1000 * MI, "nvidia.com/gpu": 4})
    # gpu 50 * 10 + 50 + 25 = 575 // 12 = 47
    assert scores(NodeResourcesFit(strategy), state, gpu_pod) == [47]


def test_balanced_allocation_is_one_minus_half_the_fraction_gap() -> None:
    """balanced_allocation.go: two resources -> std = |f1 - f2| / 2, score = (1 - std) * 100."""
    state = ClusterState([Node("n", capacity={"cpu": 4000, "memory": 4000 * MI, "pods": 110})])
    pod = Pod("p", requests={"cpu": 3000, "memory": 1000 * MI})
    # fractions 0.75 and 0.25 -> std 0.25 -> 75
    assert scores(NodeResourcesBalancedAllocation(), state, pod) == [75]
    assert scores(NodeResourcesBalancedAllocation(), state, Pod("besteffort")) == [0]


def test_taint_toleration_score_prefers_fewer_untolerated_prefer_no_schedule_taints() -> None:
    """taint_toleration.go + DefaultNormalizeScore(reverse): 100 - count * 100 / max."""
    plugin = TaintToleration()
    pod = Pod("p")
    nodes = [
        Node("clean"),
        Node("one", taints=(Taint("a", "1", "PreferNoSchedule"),)),
        Node("two", taints=(Taint("a", "1", "PreferNoSchedule"), Taint("b", "2", "PreferNoSchedule"))),
    ]
    raw = np.array([plugin.raw(pod, n) for n in nodes], dtype=np.int64)
    assert list(plugin.normalize(raw)) == [100, 50, 0]
