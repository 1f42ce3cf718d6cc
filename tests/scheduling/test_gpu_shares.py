"""The scheduler's ledger of shared GPUs (``cluster.shares``): binpacking shares onto open
GPUs, a shared GPU counted as used for whole-GPU pods, and released with its last share."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import GPU, gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.plugins.gpu_share import GpuShare as GpuShareFilter

A100 = {"nvidia.com/gpu.memory": "81920"}


def share_pod(name: str, milli: int, count: int = 1) -> Pod:
    return Pod(name, requests={"cpu": 100, "memory": 2**30}, gpu_share=GpuShare(count, compute_milli=milli))


def test_a_share_opens_a_gpu_that_whole_gpu_pods_can_no_longer_take() -> None:
    state = ClusterState([gpu_node("n", gpus=2, labels=A100)])
    state.assign(share_pod("s", 100), "n", 0.0)
    assert state.allocated(GPU) == 1  # one GPU shared, one free for whole-GPU pods
    state.assign(gpu_pod("w", 1), "n", 0.0)
    shares = state.gpu_shares()
    assert not shares.fits(GpuShare(compute_milli=950), np.array([0]))[0]
    assert shares.fits(GpuShare(compute_milli=900), np.array([0]))[0]


def test_shares_binpack_onto_the_fullest_gpu_with_room() -> None:
    state = ClusterState([gpu_node("n", gpus=4, labels=A100)])
    for name, milli in (("a", 600), ("b", 600), ("c", 300)):
        state.assign(share_pod(name, milli), "n", 0.0)
    shares = state.gpu_shares()
    slot = {k.split("/")[1]: [p.slot for p in v] for k, v in shares.placed.items()}
    assert slot["a"] != slot["b"] and slot["c"] == slot["a"]  # a's GPU has 400 left, the least that fits
    assert state.allocated(GPU) == 2


def test_the_last_share_leaving_gives_the_gpu_back() -> None:
    state = ClusterState([gpu_node("n", gpus=1, labels=A100)])
    state.assign(share_pod("a", 500), "n", 0.0)
    state.assign(share_pod("b", 500), "n", 0.0)
    state.unassign("default/a")
    assert state.allocated(GPU) == 1
    state.unassign("default/b")
    assert state.allocated(GPU) == 0
    assert state.gpu_shares().unused_per_node().tolist() == [0.0]


def test_a_memory_request_is_a_share_of_that_nodes_gpu_memory() -> None:
    """KAI's gpu-memory: 20 GiB is 250 thousandths of an 80 GiB GPU and 500 of a 40 GiB one."""
    state = ClusterState(
        [
            gpu_node("big", gpus=1, labels=A100),
            gpu_node("small", gpus=1, labels={"nvidia.com/gpu.memory": "40960"}),
        ]
    )
    share = GpuShare(memory_bytes=20 * 2**30)
    assert share.per_gpu(80 * 2**30) == (250, 250) and share.per_gpu(40 * 2**30) == (500, 500)
    for i in range(3):
        state.assign(Pod(f"p{i}", gpu_share=share), "big", 0.0)
    assert state.gpu_shares().fits(share, np.array([0, 1])).tolist() == [True, True]
    state.assign(Pod("p3", gpu_share=share), "big", 0.0)
    assert state.gpu_shares().fits(share, np.array([0, 1])).tolist() == [False, True]


def test_a_share_of_several_gpus_takes_one_slot_on_each() -> None:
    state = ClusterState([gpu_node("n", gpus=2, labels=A100)])
    state.assign(share_pod("two", 500, count=2), "n", 0.0)
    assert sorted(p.slot for p in state.gpu_shares().placed["default/two"]) == [0, 1]
    assert state.allocated(GPU) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 1000), st.integers(0, 5)), max_size=40))
def test_no_gpu_is_ever_shared_beyond_its_capacity(ops: list[tuple[bool, int, int]]) -> None:
    """Whatever arrives and leaves: free compute per open GPU stays in 0..1000, and the GPUs counted
    as requested are the open shared GPUs plus the whole-GPU pods'."""
    state = ClusterState([gpu_node("n", gpus=4, labels=A100)])
    shares = state.gpu_shares()
    shares.unused_per_node()  # sizes the ledger to the node set
    live: list[str] = []
    for n, (arrive, milli, whole) in enumerate(ops):
        if arrive:
            pod = share_pod(f"s{n}", milli) if whole == 0 else gpu_pod(f"w{n}", 1)
            fits = shares.fits(pod.gpu_share, np.array([0]))[0] if pod.gpu_share else state.free(GPU)[0] >= 1
            if fits:
                state.assign(pod, "n", 0.0)
                live.append(pod.key)
        elif live:
            state.unassign(live.pop(milli % len(live)))
        open_ = shares.holders[0] > 0
        assert ((shares.free_compute[0][open_] >= 0) & (shares.free_compute[0][open_] < 1000)).all()
        whole_pods = sum(1 for k in live if "/w" in k)
        assert state.allocated(GPU) == int(open_.sum()) + whole_pods <= 4


@settings(max_examples=80, deadline=None)
@given(
    gpus=st.lists(st.integers(0, 4), min_size=1, max_size=5),
    placed=st.lists(st.tuples(st.integers(0, 4), st.integers(1, 1000)), max_size=12),
    want=st.tuples(st.integers(1, 3), st.integers(1, 1000)),
)
def test_one_node_path_of_gpu_share_equals_column_path(
    gpus: list[int], placed: list[tuple[int, int]], want: tuple[int, int]
) -> None:
    """The shape cache re-checks the node a binding changed with ``passes_node``: it must agree."""
    state = ClusterState([gpu_node(f"n{i}", gpus=g, labels=A100) for i, g in enumerate(gpus)])
    shares = state.gpu_shares()
    for k, (i, milli) in enumerate(placed):
        node = i % len(gpus)
        pod = share_pod(f"p{k}", milli)
        assert pod.gpu_share is not None
        if shares.fits(pod.gpu_share, np.array([node]))[0]:
            state.assign(pod, node, 0.0)
    ctx = PodContext(share_pod("incoming", want[1], count=want[0]), state)
    plugin = GpuShareFilter()
    idx = np.arange(state.size, dtype=np.int64)
    rows = [(state.alloc[i].tolist(), state.requested[i].tolist(), state.nonzero[i].tolist()) for i in idx]
    assert plugin.passes(ctx, idx).tolist() == [plugin.passes_node(ctx, row, i) for i, row in enumerate(rows)]


LABELS = (A100, {}, {**A100, "nvidia.com/gpu.replicas": "4"})  # known memory, unknown, time-sliced


@settings(max_examples=80, deadline=None)
@given(
    nodes=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2)), min_size=1, max_size=6),
    placed=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 1000)), max_size=12),
    want=st.tuples(
        st.integers(1, 3), st.integers(1, 1200), st.sampled_from(["compute", "bytes", "memory", "both"])
    ),
)
def test_a_share_fits_exactly_where_no_reason_says_it_does_not(
    nodes: list[tuple[int, int]], placed: list[tuple[int, int]], want: tuple[int, int, str]
) -> None:
    """``fits`` works the verdict out directly (for a need the same on every node, as two numbers): it
    must be the complement of the union of ``reasons``, whether the share asks compute, memory in
    thousandths or in bytes, or compute and memory apart."""
    state = ClusterState([gpu_node(f"n{i}", gpus=g, labels=LABELS[k]) for i, (g, k) in enumerate(nodes)])
    shares = state.gpu_shares()
    for k, (i, milli) in enumerate(placed):
        pod = share_pod(f"p{k}", milli)
        assert pod.gpu_share is not None
        if shares.fits(pod.gpu_share, np.array([i % len(nodes)]))[0]:
            state.assign(pod, i % len(nodes), 0.0)
    count, milli, kind = want
    share = {
        "compute": GpuShare(count, compute_milli=milli),
        "bytes": GpuShare(count, memory_bytes=milli * 2**26),
        "memory": GpuShare(count, memory_milli=milli),
        "both": GpuShare(count, compute_milli=milli, memory_milli=1200 - milli),
    }[kind]
    idx = np.arange(state.size, dtype=np.int64)
    failing = np.zeros(len(idx), dtype=bool)
    for _, mask in shares.reasons(share, idx):
        failing |= mask
    assert shares.fits(share, idx).tolist() == (~failing).tolist()
