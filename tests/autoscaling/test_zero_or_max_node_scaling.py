"""cluster-autoscaler 1.34.5's ``ZeroOrMaxNodeScaling`` (``NodeGroupAutoscalingOptions``: "a node group should
be scaled up to maximum size or down to zero nodes all at once instead of one-by-one"), as a NodePool's
``zeroOrMaxNodeScaling: true``: a multi-host slice useful only whole.

Scale-up (``core/scaleup/orchestrator/orchestrator.go``): the group grows to its max in one scale-up
(``ComputeExpansionOption``), is not balanced with similar groups (``ComputeSimilarNodeGroups``), and is
skipped when all those nodes would pass a resource limit or ``--max-nodes-total``
(``filterValidScaleUpNodeGroups``); a refused launch deletes all its nodes
(``overrideNodesToDeleteForZeroOrMax``).
Scale-down: its unneeded nodes go only all together (``AtomicResizeFilteringProcessor``), whole within the
budgets (``CropNodes``), deleted as one batch (``GroupDeletionScheduler.addToBatcher``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from conftest import gpu_node, gpu_pod, run_simulation, scale_down_with, scale_up_reply, write
from gpufleet.autoscaling.cluster_autoscaler import (
    Candidate,
    ScaleDownReply,
)
from gpufleet.autoscaling.node_group_balancing import Balancing
from gpufleet.autoscaling.scale_down import UnremovableReason
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef

JOB = OwnerRef("Job", "serve")


def slice_pool(replicas: int = 0, extra: str = "") -> str:
    """An atomic pool ``slice`` of up to four 8-GPU H100 hosts."""
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: slice}}
spec:
  replicas: {replicas}
  max: 4
  zeroOrMaxNodeScaling: true
  gpu: {{model: H100-80GB, count: 8}}
  template:
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}{extra}
"""


def job(name: str, pods: int, gpus: int, duration: str, gang: bool = False, grace: int = 30) -> str:
    labels = f"\n      labels: {{scheduling.x-k8s.io/pod-group: {name}}}" if gang else ""
    group = (
        f"apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {{name: {name}}}\n"
        f"spec: {{minMember: {pods}}}\n---\n"
        if gang
        else ""
    )
    return f"""---
{group}apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  completions: {pods}
  parallelism: {pods}
  template:
    metadata:
      annotations: {{gpufleet.io/duration: {duration}}}{labels}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: {grace}
      containers:
      - name: c
        image: x
        resources:
          limits: {{nvidia.com/gpu: {gpus}}}
"""


def simulation(duration: str, autoscaler: str = "") -> str:
    head = "---\napiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
    knobs = f", autoscaler: {{{autoscaler}}}" if autoscaler else ""
    return f"{head}spec: {{duration: {duration}{knobs}}}\n"


def events(sim: Any) -> list[tuple[float, str, str | None, tuple[str, ...]]]:
    """Its events but ``no-scale-up`` and the soft DeletionCandidate taints (test_soft_deletion_taints)."""
    skipped = ("no-scale-up", "soft-taint", "soft-taint-removed")
    return [(e.t_s, e.kind, e.pool, e.nodes) for e in sim.autoscaler.events if e.kind not in skipped]


# -- scale-up ------------------------------------------------------------------------------------


def test_a_pending_gang_gets_all_four_nodes_of_an_atomic_pool_in_one_scale_up(tmp_path: Path) -> None:
    """A 4-pod gang of 8 GPUs a pod: the empty atomic pool grows to its max, 4 nodes, in one scale-up (at
    30 s: ``allPodsAreNew`` waits until the oldest GPU pod, created at 0 s, is 30 s old)."""
    sim = run_simulation(
        write(tmp_path, slice_pool() + job("train", 4, 8, "1h", gang=True) + simulation("30m"))
    )
    ups = [e for e in events(sim) if e[1] == "scale-up"]
    assert ups == [(30.0, "scale-up", "slice", ("slice-0", "slice-1", "slice-2", "slice-3"))]


def test_one_small_pod_grows_an_atomic_pool_to_its_max(tmp_path: Path) -> None:
    """One 1-GPU pod fits one node, but the atomic pool only grows from zero to its max: 4 nodes (at 30 s, the
    GPU pod created at 0 s no longer new: ``allPodsAreNew``)."""
    sim = run_simulation(write(tmp_path, slice_pool() + job("probe", 1, 1, "1m") + simulation("5m")))
    assert [e for e in events(sim) if e[1] == "scale-up"] == [
        (30.0, "scale-up", "slice", ("slice-0", "slice-1", "slice-2", "slice-3"))
    ]


def options(atomic: bool) -> list[PoolOption]:
    """Two similar empty groups of 8-GPU nodes, max 4 each; ``a`` the cheaper."""
    template = gpu_node("template", 8)
    return [
        PoolOption(name, template, room=4, size=0, max_size=4, atomic=atomic, price_per_hour=price)
        for name, price in (("a", 1.0), ("b", 2.0))
    ]


def up(opts: list[PoolOption], pods: int, **kw: Any) -> Any:
    state = ClusterState([])
    pending = [gpu_pod(f"p{k}", 8) for k in range(pods)]
    return scale_up_reply(state, pending, opts, **({"expander": "price"} | kw))


def test_scale_up_of_an_atomic_pool_is_not_balanced() -> None:
    """``ComputeSimilarNodeGroups`` finds no similar group for an atomic group: with
    ``--balance-similar-node-groups`` two 8-GPU pods grow ``a`` to its 4 nodes alone; regular groups split
    them 1/1."""
    balancing = Balancing(room=100)
    assert up(options(True), 2, balancing=balancing).scale_up.split == (("a", 4),)
    assert up(options(False), 2, balancing=balancing).scale_up.split == (("a", 1), ("b", 1))


def test_an_atomic_pool_that_would_pass_max_nodes_total_is_skipped() -> None:
    """``--max-nodes-total`` leaves room for 3 nodes: the atomic groups' 4 would pass it, so neither grows,
    though one node would take the pod."""
    reply = up([replace(o, room=3) for o in options(True)], 1, nodes_left=3)
    assert reply.scale_up is None
    assert reply.not_triggered == (("default/p0", "2 atomic scale-up exceeds cluster node count limit"),)


def test_a_refused_launch_deletes_the_atomic_pools_nodes(tmp_path: Path) -> None:
    """The cloud has 2 of the 4 hosts: the scale-up fails, the pool is backed off, and the 2 nodes launched
    are deleted with it (no partial slice is kept); at 30 s, once the GPU pod created at 0 s is no longer new
    (``allPodsAreNew``)."""
    stock = "\n  stock: {available: [{at: 0s, count: 2}]}"
    sim = run_simulation(
        write(tmp_path, slice_pool(extra="").replace("  max: 4", "  max: 4" + stock) + job("p", 1, 8, "1h")
              + simulation("2m"))
    )  # fmt: skip
    got = events(sim)
    assert got[0] == (30.0, "scale-up-failed", "slice", ())
    assert got[1] == (30.0, "scale-up-failed", "slice", ("slice-0", "slice-1"))
    assert all(e[1] != "scale-up" for e in got)
    assert sim.autoscaler.port.node_groups["slice"].nodes == set()


# -- scale-down ----------------------------------------------------------------------------------


def down(state: ClusterState, candidates: list[Candidate], **kw: Any) -> ScaleDownReply:
    """A scan at 700 s of ``candidates``, each unneeded since 0 s."""
    return scale_down_with(
        state,
        candidates,
        **({"now": 700.0, "unneeded_since": {c.node: 0.0 for c in candidates}, "assess": False} | kw),
    )


def atomic(names: list[str], size: int = 2) -> list[Candidate]:
    return [Candidate(n, "slice", size, 0, True, True, size) for n in names]


def test_an_idle_node_of_an_atomic_group_stays_while_another_is_busy() -> None:
    """Of a 2-node atomic group only the idle node is unneeded: it is ``AtomicScaleDownFailed``, not
    removed (a regular group's idle node would go)."""
    state = ClusterState([gpu_node("slice-0", 8), gpu_node("slice-1", 8)])
    state.assign(gpu_pod("busy", 6, owner=JOB), "slice-0", 0.0)
    reply = down(state, atomic(["slice-1"]))
    assert reply.remove == ()
    assert [(n, why.reason) for n, why in reply.unremovable] == [
        ("slice-1", UnremovableReason.ATOMIC_SCALE_DOWN_FAILED)
    ]
    assert "slice-1" in reply.unneeded_since  # still unneeded
    regular = [Candidate("slice-1", "slice", 2, 0)]
    assert [c.node for c in down(state, regular).remove] == ["slice-1"]


def test_an_atomic_group_whose_drained_pods_need_its_own_nodes_waits_whole() -> None:
    """Both nodes unneeded, one with a 1-GPU pod that could move only to the other: deleting them together
    leaves it nowhere, so neither goes (no partial slice)."""
    state = ClusterState([gpu_node("slice-0", 8), gpu_node("slice-1", 8)])
    state.assign(gpu_pod("small", 1, owner=JOB), "slice-0", 0.0)
    assert down(state, atomic(["slice-0", "slice-1"])).remove == ()
    state = ClusterState([gpu_node("slice-0", 8), gpu_node("slice-1", 8), gpu_node("other", 8)])
    state.assign(gpu_pod("small", 1, owner=JOB), "slice-0", 0.0)
    assert [c.node for c in down(state, atomic(["slice-0", "slice-1"])).remove] == ["slice-1", "slice-0"]


def test_the_whole_idle_atomic_group_goes_together_past_the_unneeded_time(tmp_path: Path) -> None:
    """Two nodes of an atomic pool: a 2-minute job on each; idle from 120 s, unneeded for more than 10 minutes
    at 730 s, both go in that scan and are deleted at once."""
    sim = run_simulation(
        write(tmp_path, slice_pool(2).replace("max: 4", "max: 2") + job("j", 2, 8, "2m") + simulation("30m"))
    )
    assert events(sim) == [
        (730.0, "scale-down", "slice", ("slice-0",)),
        (730.0, "scale-down", "slice", ("slice-1",)),
    ]


def test_a_busy_node_keeps_its_idle_atomic_sibling(tmp_path: Path) -> None:
    """An atomic pool of 2: a 6-GPU pod runs on one node for 5 h; the other, idle, is never removed
    (``AtomicScaleDownFailed`` counted in the gauges)."""
    sim = run_simulation(
        write(tmp_path, slice_pool(2).replace("max: 4", "max: 2") + job("j", 1, 6, "5h") + simulation("30m"))
    )
    assert events(sim) == []
    assert sim.autoscaler.gauges.unremovable[UnremovableReason.ATOMIC_SCALE_DOWN_FAILED] == 1


def test_an_atomic_groups_nodes_are_deleted_as_one_batch(tmp_path: Path) -> None:
    """An atomic pool of 2 both unneeded, one running a 1-GPU pod with a 300 s grace period (it moves to a
    regular pool's node): the drain starts ``--node-delete-delay-after-taint`` (5 s) after the scale-down at
    730 s (``deleteNodesAsync``), the empty node waits for the drained one, both are deleted at 735 + 300 s.
    Without
    soft taints (``maxBulkSoftTaintCount: 0``): with them the scan at 0 s, before the pod's first attempt,
    finds both slice nodes empty and taints them, and the pod goes to the regular node: none to drain."""
    other = """
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: other}
spec:
  replicas: 1
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
"""
    scenario = (
        slice_pool(2).replace("max: 4", "max: 2")
        + other
        + job("j", 1, 1, "5h", grace=300)
        + simulation("30m", "maxBulkSoftTaintCount: 0")
    )
    sim = run_simulation(write(tmp_path, scenario))
    downs = [e for e in events(sim) if e[1] == "scale-down"]
    assert {e[3][0] for e in downs if e[2] == "slice"} == {"slice-0", "slice-1"}
    deleted = {n: sim.cluster.nodes[n].deleted_s for n in ("slice-0", "slice-1")}
    start = downs[0][0]
    assert deleted == {"slice-0": start + 5 + 300, "slice-1": start + 5 + 300}


def test_the_atomic_slice_example_grows_and_shrinks_its_pool_whole() -> None:
    """``examples/scale-down/atomic-slice.yaml``: the gang's scale-up adds the 4 hosts at once (at 30 s, once
    its GPU pods created at 0 s are no longer new: ``allPodsAreNew``; the pods start at once, their
    scheduling backoff long over); an hour later (3630 s), done and unneeded for more than 10 minutes, the 4
    go in one scan."""
    example = Path(__file__).resolve().parents[2] / "examples" / "scale-down" / "atomic-slice.yaml"
    sim = run_simulation([example])
    nodes = ("slice-0", "slice-1", "slice-2", "slice-3")
    assert events(sim) == [(30.0, "scale-up", "slice", nodes)] + [
        (4240.0, "scale-down", "slice", (n,)) for n in nodes
    ]
