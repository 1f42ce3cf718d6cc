"""The exact packing optimum (src/gpufleet/replay/optimum.py): hand-solved instances, a brute force
over tiny ones, and every FGD-protocol policy at or below it."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import gpu_node
from gpufleet.cli import app
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.replay.fgd_protocol import POLICIES, replay, typical_pods, workload
from gpufleet.replay.optimum import (
    MISSING,
    PRODUCT,
    PackNode,
    PackPod,
    allocated_milli,
    compare_to_optimum,
    gpu_patterns,
    pack_node,
    pack_pods,
    placements_of,
    schedule,
    solve,
    trace_slice,
    violations,
)
from shared_files import TRACES, needs_traces

pytest.importorskip("highspy")

GI = 2**30
SMALL = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def node(
    gpus: int, cpu: int = 64_000, memory: int = 256 * GI, pods: int = 110, model: str = "T4"
) -> PackNode:
    return PackNode(cpu, memory, pods, gpus, model)


def share(milli: int, cpu: int = 1000, memory: int = GI, products: frozenset[str] | None = None) -> PackPod:
    return PackPod(cpu, memory, 1, milli, products)


def whole(gpus: int, cpu: int = 1000, products: frozenset[str] | None = None) -> PackPod:
    return PackPod(cpu, GI, gpus, 1000, products)


def optimum(nodes: list[PackNode], pods: list[PackPod]) -> int:
    result = solve(nodes, pods)
    assert result.optimal and result.status == "Optimal" and result.gap == 0.0
    assert violations(nodes, pods, result.placements) == []
    assert result.allocated_milli == result.bound_milli
    return result.allocated_milli


def test_two_one_gpu_nodes_take_0_6_with_0_4_twice() -> None:
    """0.6 + 0.4 on each GPU: both GPUs full, where 0.6 + 0.6 would not fit one."""
    pods = [share(600), share(600), share(400), share(400)]
    result = solve([node(1), node(1)], pods)
    assert result.allocated_milli == 2000 and len(result.placements) == 4
    for k in (0, 1):
        assert sorted(pods[i].milli for i, (n, _) in result.placements.items() if n == k) == [400, 600]


def test_a_whole_two_gpu_pod_beats_shares_that_leave_room() -> None:
    """On one 2-GPU node: the whole 2-GPU pod (2000) rather than two 0.6 shares (1200); with a
    third GPU the shares fit beside it, each on its own GPU only if they cannot share one."""
    assert optimum([node(2)], [whole(2), share(600), share(600)]) == 2000
    assert optimum([node(3)], [whole(2), share(600), share(300)]) == 2900
    assert optimum([node(2)], [whole(1), share(700), share(700)]) == 1700
    result = solve([node(3)], [whole(2), share(600), share(300)])
    (whole_gpus, (share_gpu,), (other_gpu,)) = (result.placements[i][1] for i in range(3))
    assert share_gpu == other_gpu and share_gpu not in whole_gpus


def test_cpu_memory_and_pod_slots_bind() -> None:
    """All four shares fit the two GPUs, but 4 cores hold only 0.6 + 0.4 + 0.3 (2 + 1 + 1 cores);
    memory alike; two pod slots: the two largest shares."""
    cpu_bound = [share(600, cpu=2000), share(400, cpu=2000), share(410, cpu=1000), share(300, cpu=1000)]
    assert optimum([node(2, cpu=4000)], cpu_bound) == 1310
    memory_bound = [share(600, memory=2 * GI), share(400, memory=2 * GI), share(410), share(300)]
    assert optimum([node(2, memory=4 * GI)], memory_bound) == 1310
    assert optimum([node(2, pods=2)], [share(200), share(200), share(600), share(200)]) == 800


def test_the_gpu_model_constraint_is_respected() -> None:
    """Two V100-only whole pods and two halves: one V100 pod on the V100 node, the halves on the T4."""
    v100 = frozenset({"V100"})
    nodes = [node(1, model="T4"), node(1, model="V100")]
    pods = [whole(1, products=v100), whole(1, products=v100), share(500), share(500)]
    result = solve(nodes, pods)
    assert result.allocated_milli == 2000
    placed_v100 = [i for i in (0, 1) if i in result.placements]
    assert len(placed_v100) == 1 and result.placements[placed_v100[0]][0] == 1
    assert optimum([node(4, model="T4")], [whole(1, products=v100)]) == 0


def test_cpu_only_pods_and_empty_instances_give_zero() -> None:
    assert optimum([node(2)], [PackPod(1000, GI, 0, 0)]) == 0
    assert optimum([], [share(500)]) == 0


def test_gpu_patterns_are_the_maximal_fillings_of_one_gpu() -> None:
    assert gpu_patterns({500: 2, 300: 3}) == [((500, 2),), ((500, 1), (300, 1)), ((300, 3),)]
    assert gpu_patterns({400: 1}) == [((400, 1),)]


def test_a_share_of_several_gpus_is_refused() -> None:
    with pytest.raises(ValueError, match="only one GPU can be shared"):
        PackPod(1000, GI, 2, 500)


def brute_force(nodes: list[PackNode], pods: list[PackPod]) -> int:
    """Every way to place every pod (or not), the best that holds."""
    options: list[list[tuple[int, tuple[int, ...]] | None]] = []
    for pod in pods:
        choices: list[tuple[int, tuple[int, ...]] | None] = [None]
        for n, nd in enumerate(nodes):
            choices += [(n, gpus) for gpus in itertools.combinations(range(nd.gpus), pod.gpus)]
        options.append(choices)
    best = 0
    for pick in itertools.product(*options):
        placements = {i: p for i, p in enumerate(pick) if p is not None}
        if not violations(nodes, pods, placements):
            best = max(best, sum(pods[i].gpu_milli for i in placements))
    return best


tiny_nodes = st.lists(
    st.builds(
        PackNode,
        cpu=st.sampled_from([3000, 4000, 64_000]),
        memory=st.just(64 * GI),
        pods=st.integers(1, 4),
        gpus=st.integers(1, 2),
        model=st.sampled_from(["T4", "V100"]),
    ),
    min_size=1,
    max_size=2,
)
tiny_pods = st.lists(
    st.builds(
        PackPod,
        cpu=st.sampled_from([0, 1000, 2000, 3000]),
        memory=st.just(GI),
        gpus=st.just(1),
        milli=st.sampled_from([200, 300, 500, 600, 700, 1000]),
        products=st.sampled_from([None, frozenset({"V100"})]),
    )
    | st.builds(PackPod, cpu=st.just(1000), memory=st.just(GI), gpus=st.just(2), milli=st.just(1000)),
    min_size=1,
    max_size=5,
)


@SMALL
@given(tiny_nodes, tiny_pods)
def test_the_program_finds_what_a_brute_force_finds(nodes: list[PackNode], pods: list[PackPod]) -> None:
    assert optimum(nodes, pods) == brute_force(nodes, pods)


T4 = {PRODUCT: "Tesla-T4"}
V100 = {PRODUCT: "Tesla-V100-SXM2-32GB"}


def trace_pod(name: str, gpus: int, milli: int, cpu: int = 2000, v100_only: bool = False) -> Pod:
    terms = (SelectorTerm((Requirement(PRODUCT, "In", (V100[PRODUCT],)),)),) if v100_only else None
    requests = {"cpu": cpu, "memory": 4 * GI}
    if milli < 1000:
        return Pod(name, requests=requests, gpu_share=GpuShare(1, compute_milli=milli), required_terms=terms)
    return Pod(name, requests={**requests, "nvidia.com/gpu": gpus}, required_terms=terms)


pod_specs = st.lists(
    st.tuples(st.sampled_from([(1, 250), (1, 470), (1, 650), (1, 810), (1, 1000), (2, 1000)]), st.booleans()),
    min_size=3,
    max_size=14,
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pod_specs, st.integers(0, 3))
def test_no_policy_allocates_more_than_the_optimum(
    specs: list[tuple[tuple[int, int], bool]], seed: int
) -> None:
    nodes = [
        gpu_node("a", 2, cpu=8, labels=T4),
        gpu_node("b", 2, cpu=16, labels=V100),
        gpu_node("c", 1, cpu=8, labels=T4),
    ]
    pods = [trace_pod(f"p{i}", k, m, v100_only=v) for i, ((k, m), v) in enumerate(specs)]
    packed_nodes, packed_pods = [pack_node(n) for n in nodes], pack_pods(pods, nodes)
    best = solve(packed_nodes, packed_pods)
    assert best.optimal
    for policy in POLICIES:
        placed = schedule(nodes, pods, typical_pods(pods), policy, seed)
        assert violations(packed_nodes, packed_pods, placements_of(nodes, pods, placed)) == [], policy
        assert allocated_milli(pods, placed) <= best.allocated_milli, policy


def test_schedule_fails_the_pods_the_protocol_replay_fails() -> None:
    """``schedule`` sets the scheduler up as ``fgd_protocol.replay`` does: same pods dropped."""
    nodes = [gpu_node(f"n{i}", 2, cpu=12, labels=T4 if i % 2 else V100) for i in range(4)]
    pods = [trace_pod(f"p{i:02d}", *[(1, 470), (1, 810), (2, 1000), (1, 1000)][i % 4]) for i in range(9)]
    for policy in POLICIES:
        order = workload(pods, 8000, 5)
        placed = schedule(nodes, order, typical_pods(pods), policy, 5)
        assert placed.count(None) == replay(nodes, pods, policy, 5).pods_failed, policy


def test_a_trace_slice_keeps_the_first_gpu_nodes_and_pods_that_fit_one() -> None:
    cpu_node = gpu_node("cpu", 0)
    nodes = [
        cpu_node,
        gpu_node("a", 2, labels=T4),
        gpu_node("b", 1, labels=T4),
        gpu_node("c", 8, labels=V100),
    ]
    pods = [trace_pod(f"s{i:02d}", 1, 500) for i in range(20)]
    pods += [trace_pod("eight", 8, 1000), trace_pod("v100", 1, 1000, v100_only=True)]
    part = trace_slice(nodes, pods, 2, 1.0, 7)
    assert [n.name for n in part.nodes] == ["a", "b"] and part.gpus == 3
    assert {p.name for p in part.pods} <= {p.name for p in pods[:20]}
    assert sum(p.gpu_share.compute_milli for p in part.pods if p.gpu_share) == 3000
    with pytest.raises(ValueError, match="no GPU nodes"):
        trace_slice([cpu_node], pods, 2, 1.0, 7)


def test_compare_to_optimum_reports_each_policy_gap() -> None:
    nodes = [gpu_node(f"n{i}", 2, cpu=16, labels=T4) for i in range(3)]
    pods = [trace_pod(f"p{i:02d}", *[(1, 470), (1, 650), (1, 810), (1, 250)][i % 4]) for i in range(16)]
    doc = compare_to_optimum(nodes, pods, 3, 1.3, 42)
    assert doc["gpus"] == 6 and doc["optimum"]["optimal"]
    bound = doc["optimum"]["bound_milli"]
    assert [row["policy"] for row in doc["policies"]] == list(POLICIES)
    for row in doc["policies"]:
        assert row["allocated_milli"] <= bound
        assert row["gap_pct"] == round(100 * (bound - row["allocated_milli"]) / bound, 2)


NODES_CSV = "sn,cpu_milli,memory_mib,gpu,model\nt0,16000,65536,2,T4\nt1,16000,65536,2,T4\n"
PODS_CSV = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n" + "".join(
    f"q{i},2000,4096,1,{(470, 650, 810, 1000)[i % 4]}\n" for i in range(12)
)


def test_the_command_prints_the_table_and_writes_optimum_json(tmp_path: Path) -> None:
    (tmp_path / "n.csv").write_text(NODES_CSV)
    (tmp_path / "p.csv").write_text(PODS_CSV)
    base = ["optimum", "--nodes", str(tmp_path / "n.csv"), "--pods", str(tmp_path / "p.csv")]
    result = CliRunner().invoke(app, [*base, "--max-nodes", "2", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "optimum" in result.output and "FGD" in result.output
    doc = json.loads((tmp_path / "o" / "optimum.json").read_text())
    assert doc["nodes"] == 2 and doc["optimum"]["optimal"] and len(doc["policies"]) == len(POLICIES)
    (tmp_path / "bad.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\nt0,lots,65536,2,T4\n")
    bad = CliRunner().invoke(
        app, ["optimum", "--nodes", str(tmp_path / "bad.csv"), "--pods", str(tmp_path / "p.csv")]
    )
    assert bad.exit_code == 2 and f"{tmp_path / 'bad.csv'}:2: cpu_milli" in bad.output
    assert "Traceback" not in bad.output
    load = CliRunner().invoke(app, [*base, "--load", "0"])
    assert load.exit_code == 2 and load.output.strip() == "--load: 0: above 0"


def test_the_command_names_the_extra_when_highspy_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "highspy", None)  # import highspy now raises ImportError
    result = CliRunner().invoke(
        app, ["optimum", "--nodes", str(tmp_path / "n"), "--pods", str(tmp_path / "p")]
    )
    assert result.exit_code == 2 and result.output.strip() == MISSING
    assert "gpufleet[optimum]" in MISSING


@needs_traces
def test_the_readme_instance_has_optimum_39_71_gpus() -> None:
    """The first 20 GPU nodes of openb (2-GPU P100s), load 130 %, seed 42: 80 pods, 39.71 of 40 GPUs."""
    from gpufleet.traces.openb import read_nodes, read_pods

    nodes = read_nodes(TRACES / "openb_node_list_gpu_node.csv")
    pods = [p.pod for p in read_pods(TRACES / "openb_pod_list_default.csv")]
    part = trace_slice(nodes, pods, 20, 1.3, 42)
    result = solve([pack_node(n) for n in part.nodes], pack_pods(part.pods, part.nodes))
    assert len(part.pods) == 80 and result.optimal and result.allocated_milli == 39_710
