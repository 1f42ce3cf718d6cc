"""The FGD paper's fragmentation measure (Weng et al., ATC '23, section 3; ``frag.go``) and its FGD score."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpufleet.scheduling.fragmentation as fragmentation_module
from conftest import GI, gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.model.resources import GPU
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.scheduling.fragmentation import (
    NodeFragmentation,
    NodeLeft,
    Task,
    fragmentation,
    gpu_ask,
    tasks_of,
)
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.fgd import FragmentationGradient
from gpufleet.scheduling.plugins.fgd_supply import SupplyFragmentation
from gpufleet.scheduling.scheduler import Scheduler


def seed_004_state() -> ClusterState:
    """Nodes A, B, C of 8 GPUs with 4 used on A and B, and C full: 8 GPUs free, 4 + 4."""
    state = ClusterState([gpu_node(n) for n in ("a", "b", "c")])
    state.assign(gpu_pod("s4a", 4), "a", 0.0)
    state.assign(gpu_pod("s4b", 4), "b", 0.0)
    state.assign(gpu_pod("t16-0", 8), "c", 0.0)
    return state


def test_free_gpus_no_pending_shape_can_use_are_all_fragmented() -> None:
    frag = fragmentation(seed_004_state(), [gpu_pod("t8", 8), gpu_pod("t16-1", 8)])
    assert (frag.free_gpus, frag.fragmented_gpus, frag.ratio) == (8.0, 8.0, 1.0)
    assert frag.per_node == {"a": 4.0, "b": 4.0}


def test_fragmentation_weights_each_shape_by_its_popularity() -> None:
    """Half the workload needs 8 GPUs (cannot use the 4 + 4), half needs 4 (can): 0.5 x 8 = 4."""
    frag = fragmentation(seed_004_state(), [gpu_pod("big", 8), gpu_pod("small", 4, cpu=8, mem_gi=64)])
    assert frag.fragmented_gpus == pytest.approx(4.0)
    assert frag.ratio == pytest.approx(0.5)


def test_a_tasks_popularity_counts_every_copy_and_every_pod_of_its_shape() -> None:
    """Typical pods repeat one object per percentage point; pods of one shape count together whatever
    their names, in the order their shapes first come, each task built from the first pod of its shape."""
    eight, four = gpu_pod("eight", 8), gpu_pod("four-a", 4)
    workload = [eight] * 3 + [four] + [gpu_pod("four-b", 4)] * 2 + [eight, gpu_pod("cpu-only", 0)]
    tasks = tasks_of(workload)
    assert [(t.pod.name, t.weight) for t in tasks] == [("eight", 4 / 7), ("four-a", 3 / 7)]
    with_cpu = tasks_of(workload, include_cpu_pods=True)
    expected = [("eight", 0.5), ("four-a", 3 / 8), ("cpu-only", 1 / 8)]
    assert [(t.pod.name, t.weight) for t in with_cpu] == expected


def shared_state() -> ClusterState:
    """Node a: one GPU holding a 0.5 share (500 left); b: one free GPU; c: one GPU running a whole-GPU pod."""
    labels = {"nvidia.com/gpu.memory": "81920"}
    state = ClusterState([gpu_node(n, gpus=1, cpu=16, mem_gi=64, labels=labels) for n in ("a", "b", "c")])
    state.assign(half("first"), "a", 0.0)
    state.assign(gpu_pod("whole", 1, cpu=1, mem_gi=1), "c", 0.0)
    return state


def half(name: str) -> Pod:
    return Pod(name, requests={"cpu": 1000, "memory": GI}, gpu_share=GpuShare(compute_milli=500))


def test_half_free_gpus_are_fragments_for_whole_gpu_tasks_only() -> None:
    """Q-III of the paper: a task that can run counts only the GPUs with less left than it asks of one."""
    state = shared_state()
    whole = fragmentation(state, [gpu_pod("w", 1, cpu=1, mem_gi=1)])
    assert (whole.free_gpus, whole.fragmented_gpus, whole.per_node) == (1.5, 0.5, {"a": 0.5})
    assert fragmentation(state, [half("h")]).fragmented_gpus == 0.0


def test_fgd_puts_a_share_where_it_adds_the_least_fragmentation() -> None:
    """Workload: two 0.5 shares and one whole-GPU pod. On a the share fills a half-used GPU (a's 0.5
    fragment for whole-GPU tasks disappears: -1/3 x 500 milli); on b it half-fills a free GPU (+1/3 x 500)."""
    state = shared_state()
    pod = half("next")
    scores = FragmentationGradient().score(PodContext(pod, state), np.array([0, 1], dtype=np.int64))
    assert scores.tolist() == [54, 45]  # int(100 * sigmoid(+-166.7 / 1000))
    config = SchedulerConfig(
        "test",
        profiles=[
            ProfileConfig(
                plugins={"multiPoint": PluginSet((PluginRef("FGD", 10),))},
            )
        ],
    )
    scheduler = Scheduler(config, state, GangView(state))
    assert scheduler.try_schedule(pod)[0] == "a"
    assert Scheduler(SchedulerConfig("plain"), state, GangView(state)).try_schedule(pod)[0] == "b"


def test_which_tasks_a_node_admits_is_each_tasks_own_node_affinity_verdict() -> None:
    """Tasks that share a placement constraint are judged once per node (``NodeFragmentation``): the
    verdicts are still each task's own, by node selector, required affinity and node name."""
    product = "nvidia.com/gpu.product"
    t4 = (SelectorTerm((Requirement(product, "In", ("T4",)),)),)
    named = (SelectorTerm(fields=(Requirement("metadata.name", "In", ("b",)),)),)
    tasks = [
        gpu_pod("any", 1),
        gpu_pod("t4", 1, required_terms=t4),
        gpu_pod("any-2", 2),
        gpu_pod("a10", 2, node_selector={product: "A10"}),
        gpu_pod("t4-2", 4, required_terms=t4),
        gpu_pod("on-b", 1, required_terms=named),
    ]
    state = ClusterState(
        [gpu_node(n, labels={product: m}) for n, m in (("a", "T4"), ("b", "A10"), ("c", "T4"))]
    )
    measure = NodeFragmentation(state, tasks_of(tasks))
    for i, node in enumerate(state.nodes):
        assert measure.node_facts(i)[0] == tuple(t.pod.matches_node_selector(node) for t in measure.tasks)
    assert [measure.node_facts(i)[0] for i in range(3)] == [
        (True, True, True, False, True, False),
        (True, False, True, True, False, True),
        (True, True, True, False, True, False),
    ]


def test_the_tasks_constraints_are_judged_once_per_value_of_the_labels_they_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nodes alike in the labels the tasks' placement constraints read (other labels, names aside) get
    one judgement of each constraint; a term that reads the node's name has each node judged."""
    product = "nvidia.com/gpu.product"
    t4 = (SelectorTerm((Requirement(product, "In", ("T4",)),)),)
    tasks = [
        gpu_pod("any", 1),
        gpu_pod("t4", 1, required_terms=t4),
        gpu_pod("a10", 2, node_selector={product: "A10"}),
    ]
    models = ("T4", "A10", "T4", "T4", "A10", "T4")
    nodes = [gpu_node(f"n{i}", labels={product: m, "zone": f"z{i}"}) for i, m in enumerate(models)]
    judged: list[str] = []
    plain = Pod.matches_node_selector

    def counted(pod: Pod, node: Node) -> bool:
        judged.append(node.name)
        return plain(pod, node)

    monkeypatch.setattr(Pod, "matches_node_selector", counted)
    measure = NodeFragmentation(ClusterState(nodes), tasks_of(tasks))
    facts = [measure.node_facts(i)[0] for i in range(len(nodes))]
    assert facts == [(True, True, False) if m == "T4" else (True, False, True) for m in models]
    assert len(judged) == 2 * 3  # two values of the one label read, three constraints
    named = (SelectorTerm(fields=(Requirement("metadata.name", "In", ("n1",)),)),)
    judged.clear()
    by_name = NodeFragmentation(
        ClusterState(nodes), tasks_of([*tasks, gpu_pod("on-n1", 1, required_terms=named)])
    )
    assert [by_name.node_facts(i)[0][3] for i in range(len(nodes))] == [i == 1 for i in range(len(nodes))]
    assert len(judged) == 4 * len(nodes)


def reference_measure(tasks: list[Task], admitted: list[bool], left: NodeLeft, may_use: bool) -> float:
    """``F_n`` as the paper defines it, task by task in order (``frag.go``, ``NodeGpuShareFragAmount``): a
    task the node's labels refuse counts all free capacity (nothing, with ``may_use``), one that cannot
    run there all of it, one that can the capacity of the GPUs with less left than it asks of one."""
    total, frag = sum(left.gpus), 0.0
    for task, admits in zip(tasks, admitted, strict=True):
        gpus, milli = gpu_ask(task.pod, None)
        room = [g for g in left.gpus if g >= milli]
        runs = (
            admits
            and milli > 0
            and len(room) >= gpus
            and task.pod.requests.get("cpu", 0) <= left.cpu
            and task.pod.requests.get("memory", 0) <= left.memory
            and left.pods >= 1
        )
        value = (
            sum(g for g in left.gpus if g < milli) if runs else total if admits else 0 if may_use else total
        )
        frag += task.weight * value
    return frag


typical = st.tuples(
    st.integers(0, 4),  # whole GPUs (0: cpu only)
    st.sampled_from([0, 250, 500, 750]),  # a share's thousandths (0: whole GPUs)
    st.sampled_from([0, 1000, 4000, 16000]),  # cpu
    st.sampled_from([0, GI, 8 * GI]),  # memory
    st.sampled_from([None, "T4", "A10"]),  # the only GPU model it runs on
)


@settings(max_examples=200, deadline=None)
@given(
    shapes=st.lists(typical, min_size=1, max_size=8),
    gpus=st.lists(st.sampled_from([0, 100, 250, 500, 750, 1000]), max_size=8),
    cpu=st.integers(0, 20000),
    memory=st.sampled_from([0, GI // 2, GI, 4 * GI, 16 * GI]),
    pods=st.integers(0, 2),
    model=st.sampled_from(["T4", "A10"]),
    may_use=st.booleans(),
)
def test_the_measure_is_the_papers_sum_over_tasks_for_any_node(
    shapes: list[tuple[int, int, int, int, str | None]],
    gpus: list[int],
    cpu: int,
    memory: int,
    pods: int,
    model: str,
    may_use: bool,
) -> None:
    """Whatever the node has left, ``NodeFragmentation.of`` (which plans each task's part per node facts
    and keys, and keeps values by them) equals the paper's sum worked out afresh, to the last bit."""
    state = ClusterState([gpu_node("n", 8, labels={"nvidia.com/gpu.product": model})])
    workload = []
    for k, (whole, share, want_cpu, want_memory, only) in enumerate(shapes):
        terms = (SelectorTerm((Requirement("nvidia.com/gpu.product", "In", (only,)),)),) if only else None
        requests = {"cpu": want_cpu, "memory": want_memory, **({} if share or not whole else {GPU: whole})}
        requests = {r: v for r, v in requests.items() if v}
        gpu_share = GpuShare(compute_milli=share) if share else None
        workload += [Pod(f"t{k}", requests=requests, gpu_share=gpu_share, required_terms=terms)] * (k + 1)
    tasks = tasks_of(workload, include_cpu_pods=True)
    allow = (lambda pod, node: pod.matches_node_selector(node)) if may_use else None
    measure = NodeFragmentation(state, tasks, allow)
    admitted = [t.pod.matches_node_selector(state.nodes[0]) for t in tasks]
    for left in (
        NodeLeft(cpu, memory, pods, tuple(sorted(gpus))),
        NodeLeft(cpu // 2, memory, 1, (1000,) * 2),
    ):
        assert measure.of(0, left) == reference_measure(tasks, admitted, left, may_use)
        # measures made ``shared`` on other clusters (the other GPU model first) look values up in one memo
        for other in ("A10" if model == "T4" else "T4", model):
            node = gpu_node("m", 8, labels={"nvidia.com/gpu.product": other})
            shared = NodeFragmentation(ClusterState([node]), tasks, allow).shared()
            admits = [t.pod.matches_node_selector(node) for t in tasks]
            assert shared.of(0, left) == reference_measure(tasks, admits, left, may_use)


def test_measures_made_shared_work_each_node_state_out_once_for_equal_tasks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``NodeFragmentation.shared``: a measure of the same tasks on another cluster (the next run of a
    sweep, FGD's own measure in a replay, FGDSupply's) finds the node states the first worked out; other
    tasks, or a ``may_use`` verdict, keep their own memo."""
    computed: list[tuple[int, ...]] = []
    plain = NodeFragmentation._compute

    def counted(self: NodeFragmentation, plan: object, gpus: tuple[int, ...]) -> float:
        computed.append(gpus)
        return plain(self, plan, gpus)  # type: ignore[arg-type]

    monkeypatch.setattr(NodeFragmentation, "_compute", counted)
    monkeypatch.setattr(fragmentation_module, "_SHARED", OrderedDict())  # (none from other tests)
    tasks = tasks_of([gpu_pod("one", 1), gpu_pod("two", 2), gpu_pod("two-b", 2)])
    first = NodeFragmentation(seed_004_state(), tasks).shared()
    values = [first.of(i, NodeLeft.of(first.state, i)) for i in range(3)]
    assert len(computed) == 2  # a and b alike (4 GPUs left), c full
    renamed = [gpu_pod("one", 1), gpu_pod("two", 2), gpu_pod("2", 2)]  # (equal shapes and weights)
    again = NodeFragmentation(seed_004_state(), tasks_of(renamed))
    assert [again.shared().of(i, NodeLeft.of(again.state, i)) for i in range(3)] == values
    # FGDSupply's measure adds its term to ``of`` and works the rest out alike: the same tables
    supply = SupplyFragmentation(seed_004_state(), tasks).shared()
    assert [NodeFragmentation.of(supply, i, NodeLeft.of(supply.state, i)) for i in range(3)] == values
    assert len(computed) == 2
    for other in (
        NodeFragmentation(seed_004_state(), tasks_of([gpu_pod("one", 1), gpu_pod("two", 2)])).shared(),
        NodeFragmentation(seed_004_state(), tasks, lambda pod, node: True).shared(),
        NodeFragmentation(seed_004_state(), tasks),
    ):
        computed.clear()
        other.of(0, NodeLeft.of(other.state, 0))
        assert len(computed) == 1


def test_what_a_node_has_left_counts_a_shared_gpu_by_its_lesser_part_and_each_free_gpu_whole() -> None:
    """``NodeLeft.of``: the cpu, memory and pod room left, a GPU a share holds by the lesser of its compute
    and memory left, and each GPU nobody holds (a share's GPU after it left too) as 1000, sorted; a GPU
    taken whole is not there."""
    state = ClusterState([gpu_node("n", 4, cpu=32, mem_gi=256)])
    share = Pod(
        "s", requests={"cpu": 2000, "memory": 8 * GI}, gpu_share=GpuShare(compute_milli=300, memory_milli=500)
    )
    state.assign(share, "n", 0.0)
    state.assign(Pod("t", gpu_share=GpuShare(compute_milli=800)), "n", 0.0)  # (another GPU: 700 left on s's)
    state.assign(gpu_pod("w", 1, cpu=4, mem_gi=16), "n", 0.0)
    assert NodeLeft.of(state, 0) == NodeLeft(26_000, 232 * GI, 107, (200, 500, 1000))
    state.unassign("default/t")
    assert NodeLeft.of(state, 0) == NodeLeft(26_000, 232 * GI, 108, (500, 1000, 1000))
