"""The FGD paper's replay protocol (docs/fgd-protocol.md) and its policies as score plugins."""

from __future__ import annotations

import gc
import json
from dataclasses import replace
from itertools import accumulate
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import gpu_node
from gpufleet.cli import app
from gpufleet.cluster.state import ClusterState
from gpufleet.model.dra import PodResourceClaim
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.pod import Pod
from gpufleet.replay.fgd_protocol import (
    bucket,
    gpu_request,
    percentages,
    prepared,
    replay,
    typical_pods,
    workload,
)
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.plugins.fgd_policies import BestFit, DotProd, GpuClustering, GpuPacking, Random
from gpufleet.scheduling.scheduler import Scheduler
from shared_files import TRACES, needs_traces


def share(name: str, milli: int, cpu: int = 1000) -> Pod:
    return Pod(name, requests={"cpu": cpu}, gpu_share=GpuShare(1, compute_milli=milli))


def whole(name: str, gpus: int, cpu: int = 1000) -> Pod:
    return Pod(name, requests={"cpu": cpu, "nvidia.com/gpu": gpus})


def test_workload_is_shuffled_then_tuned_to_130_percent_of_the_gpus() -> None:
    """tuneUpPods: copies drawn from the name-sorted pods, named <name>-tuned-<i>, until the next
    copy's per-GPU request would pass 130 % of capacity; the same seed gives the same order."""
    pods = [share(f"s{i:02d}", 300) for i in range(10)] + [whole(f"w{i:02d}", 1) for i in range(5)]
    order = workload(pods, 10 * 1000, seed=7)
    assert sorted(p.name for p in order[:15]) == sorted(p.name for p in pods)
    assert [p.name for p in order[:15]] != sorted(p.name for p in pods)  # shuffled
    total = sum(k * m for k, m in map(gpu_request, order))
    assert total <= 13_000 and all("-tuned-" in p.name for p in order[15:])
    assert [p.name for p in workload(pods, 10 * 1000, seed=7)] == [p.name for p in order]


def test_a_tuned_copy_is_the_trace_pod_under_a_new_name() -> None:
    """``Pod.renamed``: what ``dataclasses.replace(pod, name=...)`` gives, field for field, and the
    source unchanged."""
    source = Pod(
        "a", "ns", labels={"app": "x"}, requests={"cpu": 2000}, gpu_share=GpuShare(1, compute_milli=300)
    )
    copy = source.renamed("a-tuned-0")
    assert copy == replace(source, name="a-tuned-0") and copy is not source
    assert (source.name, copy.key, copy.labels is source.labels) == ("a", "ns/a-tuned-0", True)


def test_a_replays_typical_pods_and_workload_are_kept_for_the_same_pods_and_seed_only() -> None:
    """``prepared``: the same pods (objects, in order) and seed give what ``typical_pods`` and ``workload``
    give, and each pod's shape and GPU request, without working them out again; another seed, another
    pod in the list or the same pods in another order are worked out anew (new tuned copies); what a
    caller does to its copies does not reach the next."""
    pods = [share(f"s{i:02d}", 300) for i in range(10)] + [whole(f"w{i:02d}", 1) for i in range(5)]
    typical, order, arrivals = prepared(pods, 10 * 1000, 7)
    assert typical == typical_pods(pods)
    assert [p.name for p in order] == [p.name for p in workload(pods, 10 * 1000, seed=7)]
    assert arrivals == tuple((p.shape(), *gpu_request(p)) for p in order)
    assert {a[1:] for a in arrivals} == {(1, 300), (1, 1000)}
    again_typical, again, _ = prepared(pods, 10 * 1000, 7)
    assert again == order and again[-1] is order[-1]  # kept: the same tuned copies
    again.clear()
    again_typical[0]["gpus"] = 99
    assert prepared(pods, 10 * 1000, 7) == (typical, order, arrivals)
    assert prepared(pods, 10 * 1000, 8)[1][-1] is not order[-1]
    other = [*pods[:-1], whole("w99", 1)]
    assert "w99" in {p.name for p in prepared(other, 10 * 1000, 7)[1]}
    assert prepared(pods[::-1], 10 * 1000, 7)[1][-1] is not order[-1]  # (its names alike: sorted first)


def test_a_tuned_copys_ask_is_its_sources_but_a_pod_with_resource_claims_is_asked_under_its_name() -> None:
    """``prepared`` works each trace pod's shape out once for every seed; a tuned copy takes its source's,
    but where the shape names the pod (ResourceClaims: such pods are evaluated one by one) the copy's own."""
    claims = (PodResourceClaim("gpu", resource_claim_template_name="one-gpu"),)
    pods = [share(f"s{i:02d}", 300) for i in range(6)] + [replace(whole("d", 1), resource_claims=claims)]
    for seed in (3, 4):
        _, order, arrivals = prepared(pods, 10 * 1000, seed)
        assert arrivals == tuple((p.shape(), *gpu_request(p)) for p in order)
        copies = [p for p in order if p.name.startswith("d-tuned-")]
        assert copies and {a[0][6] for p, a in zip(order, arrivals, strict=True) if p in copies} == {
            ("default", p.name) for p in copies
        }


def test_a_trace_above_130_percent_loses_random_pods() -> None:
    """tuneDownPods: pods removed at random until the request is at most 130 %."""
    pods = [whole(f"w{i:02d}", 1) for i in range(20)]
    order = workload(pods, 10 * 1000, seed=1)
    assert len(order) == 13


def test_buckets_average_records_and_fall_back_to_neighbours() -> None:
    values = bucket([0, 0, 2, 5], [1.0, 3.0, 4.0, 7.0])
    assert values[0] == 2.0 and values[1] == 2.67 and values[2] == 4.0  # 1: mean of 0..2's records
    assert values[3] == 4.0 and values[5] == 7.0 and values[6] == 7.0 and values[7] is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(0, 100)), max_size=80))
def test_a_bucket_is_the_mean_of_its_records_in_their_order_or_of_its_neighbours(
    steps: list[tuple[int, float]],
) -> None:
    """The authors' analysis: per percent, the records there (else at the percent either side), summed in
    the order they were recorded, float for float; a replay's percents arrived never fall."""
    arrived = list(accumulate(step for step, _ in steps))
    values = [value for _, value in steps]
    by: dict[int, list[float]] = {}
    for a, v in zip(arrived, values, strict=True):
        by.setdefault(a, []).append(v)
    expected = []
    for b in range(131):
        hits = by.get(b) or [*by.get(b - 1, []), *by.get(b + 1, [])]
        expected.append(round(sum(hits) / len(hits), 2) if hits else None)
    assert bucket(arrived, values) == expected


def test_typical_pods_are_the_shapes_covering_95_percent_of_pods() -> None:
    pods = (
        [share(f"s{i}", 500) for i in range(90)] + [whole(f"w{i}", 1) for i in range(8)] + [whole("x", 8)] * 2
    )
    typical = typical_pods(pods)
    assert [(t["gpus"], t["gpuMilli"]) for t in typical] == [(1, 500), (1, 1000)]  # 98 % of pods
    assert typical[0]["percentage"] == pytest.approx(100 * 90 / 98)


def left_state() -> ClusterState:
    """n0: 8 free GPUs; n1: 8 GPUs, one holding a 0.5 share (500 left)."""
    labels = {"nvidia.com/gpu.memory": "16384"}
    state = ClusterState([gpu_node(f"n{i}", 8, cpu=64, labels=labels) for i in range(2)])
    state.assign(share("old", 500), 1, 0.0)
    return state


def scores(plugin: object, pod: Pod, state: ClusterState) -> list[int]:
    return plugin.score(PodContext(pod, state), np.arange(2)).tolist()  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32),
    st.lists(st.tuples(st.integers(0, 1500), st.integers(1, 9)), min_size=1, max_size=12),
)
def test_random_draws_what_its_seeded_generator_would(seed: int, cycles: list[tuple[int, int]]) -> None:
    """Random's scores are ``rng.integers(0, 2**31, size)`` and its choice of GPU ``rng.integers(n)`` of
    a generator seeded with its seed, call after call (the replays of the starting point stay
    byte-identical), however it draws them."""
    state = ClusterState([gpu_node("a", 4)])
    ctx = PodContext(Pod("p", requests={"nvidia.com/gpu": 1}), state)
    plugin, numpy_rng = Random(seed), np.random.default_rng(seed)
    for size, gpus in cycles:
        drawn = plugin.score(ctx, np.zeros(size, dtype=np.int64))
        assert drawn.dtype == np.int64
        assert drawn.tolist() == numpy_rng.integers(0, 2**31, size=size, dtype=np.int64).tolist()
        room = [(0, 0, slot) for slot in range(gpus)]
        expected = int(numpy_rng.integers(gpus + 1))
        assert plugin.choose_gpu(ctx.pod, 0, room, 1) == (expected if expected < gpus else None)


def test_gpu_packing_prefers_partly_used_gpus_then_used_nodes() -> None:
    """gpu_packing_score.go: all free -> max(33 - 8, 8) = 25; a share on the 500-left GPU ->
    max(100 - 50 // 10, 50) = 95."""
    assert scores(GpuPacking(), share("p", 300), left_state()) == [25, 95]


def test_best_fit_and_dot_product_follow_the_authors_formulas() -> None:
    """best_fit_score.go and dot_product_score.go with MaxSpecCpu 128000, MaxSpecGpu 8000."""
    state = left_state()
    pod = share("p", 300, cpu=4000)
    n0 = 0.5 * (64000 - 4000) / 128000 + 0.5 * (8000 - 300) / 8000
    n1 = 0.5 * (63000 - 4000) / 128000 + 0.5 * (7500 - 300) / 8000
    assert scores(BestFit(), pod, state) == [int((1 - n0) * 100), int((1 - n1) * 100)]
    d0 = (64000 / 128000) * (4000 / 128000) + 1.0 * (300 / 8000)
    d1 = (63000 / 128000) * (4000 / 128000) + (7500 / 8000) * (300 / 8000)
    assert scores(DotProd(), pod, state) == [int(100 * (1 - d0 / 2)), int(100 * (1 - d1 / 2))]


def test_gpu_clustering_puts_pods_of_a_kind_together() -> None:
    """gpu_clustering_score.go: b = 25 * (8000 - G) // 8000; a share next to a share scores 75 + b,
    on a node without GPU pods 25 + b; a whole-GPU pod beside a share scores b."""
    state = left_state()
    assert scores(GpuClustering(), share("p", 300), state) == [25 + 0, 75 + 1]
    assert scores(GpuClustering(), whole("w", 1), state) == [25, 1]


def test_gpu_clustering_follows_the_kinds_a_binding_adds() -> None:
    """After a whole-GPU pod joins n1's share, a share there runs among others: 50 + b (G = 6500)."""
    state = left_state()
    plugin = GpuClustering()
    assert scores(plugin, share("p", 300), state) == [25 + 0, 75 + 1]
    state.assign(whole("w", 1), 1, 0.0)
    assert scores(plugin, share("q", 300), state) == [25 + 0, 50 + 25 * 1500 // 8000]


def test_fgd_allocates_what_spreading_strands() -> None:
    """Two one-GPU nodes, halves then a whole GPU: FGD keeps a GPU whole and places all three."""
    nodes = [gpu_node(f"n{i}", 1, cpu=16, labels={"nvidia.com/gpu.memory": "16384"}) for i in range(2)]
    pods = [share("a-half", 500), share("b-half", 500), whole("c-whole", 1)]
    result = replay(nodes, pods, "FGD", seed=3)
    assert result.pods_failed == 0 or result.pods_total > 3  # tuning adds copies up to 130 %
    assert result.gpu_alloc_pct[100] == 100.0


def test_replay_cli_writes_the_contract_and_refuses_unknown_policies(tmp_path: Path) -> None:
    (tmp_path / "nodes.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,2,T4\n")
    (tmp_path / "pods.csv").write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,1024,1,500\np2,1000,1024,1,500\np3,1000,1024,1,1000\n"
    )
    base = [
        "replay",
        "--protocol",
        "fgd",
        "--nodes",
        str(tmp_path / "nodes.csv"),
        "--pods",
        str(tmp_path / "pods.csv"),
    ]
    result = CliRunner().invoke(
        app, [*base, "--policy", "BestFit", "--seed", "42", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "o" / "replay.json").read_text())
    for key in (
        "policy",
        "seed",
        "pods_total",
        "arrived_pct",
        "gpu_alloc_pct",
        "frag_amount_pct",
        "frag_ratio_pct",
    ):
        assert key in data
    assert data["arrived_pct"] == list(range(131)) and len(data["gpu_alloc_pct"]) == 131
    assert data["unallocated_gpu_pct_at_100"] == 0.0  # the three pods fill both GPUs exactly at 100 %
    bad = CliRunner().invoke(app, [*base, "--policy", "Nope", "--out", str(tmp_path / "o")])
    assert bad.exit_code == 2 and "unknown policy 'Nope'" in bad.output


def test_a_replay_runs_with_the_garbage_collector_off_and_leaves_it_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nodes = [gpu_node(f"n{i}", gpus=2) for i in range(4)]
    pods = [share(f"s{i}", 250) for i in range(20)] + [whole(f"w{i}", 1) for i in range(4)]
    collecting: list[bool] = []

    def place_once(
        self: Scheduler, pod: Pod, now: float, shape: tuple[object, ...] | None = None
    ) -> str | None:
        collecting.append(gc.isenabled())
        return placed(self, pod, now, shape)

    placed = Scheduler.place_once
    monkeypatch.setattr(Scheduler, "place_once", place_once)
    result = replay(nodes, pods, "FGD", 42)
    enabled_after = gc.isenabled()
    gc.disable()
    try:
        again = replay(nodes, pods, "FGD", 42)
        disabled_after = not gc.isenabled()
    finally:
        gc.enable()
    assert collecting and not any(collecting) and enabled_after and disabled_after
    assert again.to_json() | {"wall_seconds": 0} == result.to_json() | {"wall_seconds": 0}


@pytest.mark.parametrize("policy", ["FGD", "Random", "DotProd", "GpuPacking"])
def test_a_replay_leaves_no_reference_cycle_so_its_cluster_is_freed_when_it_returns(policy: str) -> None:
    """Whatever a replay built (the cluster with its GPU shares and pod index, the scheduler with its
    queue and caches) is freed by reference counting when the replay returns: none of it waits for a
    collection that walks every object the run made (a tenth of a replay's CPU on the gpushare traces)."""
    nodes = [gpu_node(f"n{i}", gpus=2) for i in range(4)]
    pods = [share(f"s{i}", 250) for i in range(20)] + [whole(f"w{i}", 1) for i in range(4)]
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        replay(nodes, pods, policy, 42)
        left_in_cycles = gc.collect()
    finally:
        if enabled:
            gc.enable()
    assert left_in_cycles == 0


@needs_traces
def test_default_trace_fgd_leaves_fewer_gpus_unallocated_than_best_fit() -> None:
    """The paper's headline on the default trace (seed 42): FGD about 4.8 %, BestFit about 7.1 %."""
    from gpufleet.traces.openb import read_nodes, read_pods

    nodes = read_nodes(TRACES / "openb_node_list_gpu_node.csv")
    pods = [p.pod for p in read_pods(TRACES / "openb_pod_list_default.csv")]
    fgd, best_fit = (replay(nodes, pods, policy, 42) for policy in ("FGD", "BestFit"))
    assert fgd.pods_total == best_fit.pods_total == 10825
    assert fgd.unallocated_gpu_pct_at_100 is not None and best_fit.unallocated_gpu_pct_at_100 is not None
    assert 3.5 < fgd.unallocated_gpu_pct_at_100 < 6.0 < best_fit.unallocated_gpu_pct_at_100 < 8.5


@settings(max_examples=60, deadline=None)
@given(
    gpus_total=st.integers(1, 20_000),
    steps=st.lists(
        st.tuples(st.integers(0, 10**9), st.integers(0, 10**9), st.floats(0, 1e10, allow_nan=False)),
        max_size=30,
    ),
)
def test_the_recorded_percentages_are_each_steps_python_arithmetic(
    gpus_total: int, steps: list[tuple[int, int, float]]
) -> None:
    """``percentages`` over arrays gives, float for float, what the protocol's expressions give on one
    step's numbers in Python (``round`` half to even; no idle GPU: a ratio of 0)."""
    arrived, used, frag = [a for a, _, _ in steps], [u for _, u, _ in steps], [f for _, _, f in steps]
    used = [min(u, 1000 * gpus_total) for u in used]
    used[: len(used) // 3] = [1000 * gpus_total] * (len(used) // 3)  # (some steps with nothing idle)
    expected = (
        [round(a / gpus_total / 10) for a in arrived],
        [u / gpus_total / 10 for u in used],
        [100 * f / 1000 / gpus_total for f in frag],
        [
            100 * f / (1000 * gpus_total - u) if 1000 * gpus_total - u else 0.0
            for u, f in zip(used, frag, strict=True)
        ],
    )
    assert percentages(arrived, used, frag, gpus_total) == expected
