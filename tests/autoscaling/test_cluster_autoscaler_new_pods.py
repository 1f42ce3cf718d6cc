"""cluster-autoscaler's wait for "very new" unschedulable pods, and ``--bypassed-scheduler-names``.

Upstream (tag ``cluster-autoscaler-1.34.5``): ``core/static_autoscaler.go`` (``RunOnce``: after
``filterOutYoungPods``, no pods left, then ``--max-nodes-total`` reached, then
``len(a.BypassedSchedulers) == 0 && allPodsAreNew(...)``: ``ScaleUpInCooldown`` and
``DisableScaleDownForLoop``; ``allPodsAreNew``:
``unschedulablePodTimeBuffer`` 2 s from the oldest pod, ``unschedulablePodWithGpuTimeBuffer`` 30 s from the
oldest GPU pod, each ``oldest.Add(buffer).After(now)``; ``listPods``), ``core/utils/utils.go``
(``GetOldestCreateTime``, ``GetOldestCreateTimeWithGpu``), ``utils/gpu/gpu.go`` (``PodRequestsGpu``,
``GPUVendorResourceNames``), ``utils/kubernetes/listers.go`` (``SchedulerUnprocessedPods``) and
``core/static_autoscaler_test.go`` (``TestStaticAutoscalerRunOnceWithBypassedSchedulers``, ported below).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import gpu_node, gpu_pod, run_simulation, scale_down_request, scale_up_reply, simulated, write
from gpufleet.autoscaling.cluster_autoscaler import Candidate, in_cooldown
from gpufleet.autoscaling.new_pods import new_until, requests_gpu
from gpufleet.autoscaling.scale_up import MAX_TOTAL_REACHED, PoolOption
from gpufleet.cluster.state import ClusterState
from gpufleet.kube import load_scenario
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.simulation import AutoscalerSettings

GI = 2**30
CPU_TEMPLATE = Node("cpu-template", capacity={"cpu": 8000, "memory": 32 * GI, "pods": 110})


def options() -> list[PoolOption]:
    """An empty pool of 8-GPU nodes and one of CPU nodes, room for 4 each."""
    return [
        PoolOption("h100", gpu_node("h100-template", 8), room=4, max_size=4),
        PoolOption("cpu", CPU_TEMPLATE, room=4, max_size=4),
    ]


def cpu_pod(name: str) -> Pod:
    return Pod(name, requests={"cpu": 1000, "memory": GI})


def ask(pods: list[Pod], created: dict[str, float], now: float, **fields: Any) -> Any:
    """``scale_up`` for ``pods`` at ``now``, each pod's ``creationTimestamp`` in ``created`` (by name)."""
    created_s = {p.key: created[p.name] for p in pods}
    return scale_up_reply(ClusterState([]), pods, options(), now=now, created_s=created_s, **fields)


# -- allPodsAreNew, the pure decision ------------------------------------------------------------------


def test_all_pods_are_new_holds_a_cpu_pod_until_it_is_2_s_old() -> None:
    """``allPodsAreNew`` (``unschedulablePodTimeBuffer``): a pod without a GPU created at 10 s is very new at
    11 s (no scale-up asked, no ``NotTriggerScaleUp``, the wait ending at 12 s) and no longer at 12 s (the
    strict ``After``): the CPU pool grows."""
    pod = cpu_pod("etl")
    held = ask([pod], {"etl": 10.0}, 11.0)
    assert (held.scale_up, held.not_triggered, held.new_until, held.new_pods) == (
        None,
        (),
        12.0,
        ("default/etl",),
    )
    grown = ask([pod], {"etl": 10.0}, 12.0)
    assert (grown.scale_up.group, grown.new_until) == ("cpu", None)


def test_all_pods_are_new_holds_a_gpu_pod_until_it_is_30_s_old_and_not_a_moment_longer() -> None:
    """``unschedulablePodWithGpuTimeBuffer``: a pod requesting ``nvidia.com/gpu`` created at 0 s is very new
    at 29.9 s and no longer at the scan at 30 s (``oldest.Add(30s).After(now)`` is false at the boundary)."""
    pod = gpu_pod("train", 8)
    assert ask([pod], {"train": 0.0}, 29.9).new_until == 30.0
    grown = ask([pod], {"train": 0.0}, 30.0)
    assert (grown.scale_up.group, grown.scale_up.nodes) == ("h100", 1)


def test_all_pods_are_new_counts_30_s_from_the_oldest_gpu_pod_not_the_oldest_pod() -> None:
    """``GetOldestCreateTimeWithGpu``: a CPU pod created at 0 s and a GPU pod at 10 s are very new together
    until 40 s (the GPU pod's 30 s), though the oldest pod is 35 s old at 35 s; at 40 s both scale up."""
    pods = [cpu_pod("etl"), gpu_pod("train", 8)]
    created = {"etl": 0.0, "train": 10.0}
    assert ask(pods, created, 35.0).new_until == 40.0
    assert ask(pods, created, 40.0).scale_up is not None


def test_all_pods_are_new_is_decided_by_the_oldest_pods_not_the_newest() -> None:
    """``allPodsAreNew`` (``GetOldestCreateTime``): a CPU pod 2 s old lets a CPU pod created this instant
    scale up with it; a GPU pod created this instant holds both until it is 30 s old, whatever the CPU pod's
    age (``GetOldestCreateTimeWithGpu``)."""
    assert ask([cpu_pod("a"), cpu_pod("b")], {"a": 0.0, "b": 2.0}, 2.0).scale_up is not None
    held = ask([cpu_pod("a"), gpu_pod("train", 8)], {"a": 0.0, "train": 2.0}, 2.0)
    assert held.new_until == 32.0


@pytest.mark.parametrize(
    "resource", ["nvidia.com/gpu", "habana.ai/gaudi", "amd.com/gpu", "microsoft.com/directx"]
)
def test_pod_requests_gpu_reads_every_gpu_vendor_resource_name(resource: str) -> None:
    """``PodRequestsGpu`` over ``GPUVendorResourceNames``: each vendor's resource makes the pod a GPU pod
    (30 s); a HAMi share came from an ``nvidia.com/gpu`` request; a KAI fraction (an annotation) does not."""
    pod = Pod("p", requests={"cpu": 1000, resource: 1})
    assert requests_gpu(pod)
    assert new_until([pod], {"default/p": 0.0}, 10.0) == 30.0
    hami = Pod("h", gpu_share=GpuShare(1, 500, memory_milli=500, isolated=True))
    kai = Pod("k", gpu_share=GpuShare(1, 500, memory_milli=500))
    assert (requests_gpu(hami), requests_gpu(kai)) == (True, False)


def test_max_nodes_total_is_checked_before_all_pods_are_new() -> None:
    """``RunOnce``: ``--max-nodes-total`` reached comes first: the very new pods get ``max total nodes in
    cluster reached`` at once, no wait (no group has room left)."""
    full = [replace(o, room=0) for o in options()]
    pods = [gpu_pod("train", 8)]
    reply = scale_up_reply(ClusterState([]), pods, full, created_s={"default/train": 0.0}, total_reached=True)
    assert (reply.new_until, reply.not_triggered) == (None, (("default/train", MAX_TOTAL_REACHED),))


def test_young_pods_are_filtered_before_all_pods_are_new() -> None:
    """``filterOutYoungPods`` runs before ``allPodsAreNew``: a GPU pod created at 60 s and too young for its
    ``pod-scale-up-delay`` is left out, so the pods left (a CPU pod created at 0 s) are not new at 60 s and
    the CPU pool grows; without the young pod left out, the GPU pod would hold both until 90 s."""
    pods = [cpu_pod("etl"), gpu_pod("train", 8)]
    created = {"etl": 0.0, "train": 60.0}
    grown = ask(pods, created, 60.0, young=frozenset({"default/train"}))
    assert (grown.scale_up.group, grown.scale_up.pods) == ("cpu", ("default/etl",))
    assert ask(pods, created, 60.0).new_until == 90.0


def test_without_creation_times_the_scale_up_does_not_wait() -> None:
    """``created_s`` None (``--bypassed-scheduler-names`` set, or a ProvisioningRequest's pods, whose
    ``ScaleUpEnforcer`` forces the scale-up): a GPU pod created this instant scales up."""
    reply = scale_up_reply(ClusterState([]), [gpu_pod("train", 8)], options())
    assert reply.scale_up is not None and reply.new_until is None


def test_scale_down_is_in_cooldown_in_a_loop_that_waited_for_new_pods() -> None:
    """``DisableScaleDownForLoop``: ``isScaleDownInCooldown`` is true for that loop whatever the delays."""
    state = ClusterState([gpu_node("n0", 8)])
    candidates = [Candidate("n0", "h100", 1, 0)]
    assert not in_cooldown(scale_down_request(state, candidates, now=3600.0))
    assert in_cooldown(scale_down_request(state, candidates, now=3600.0, disabled_for_loop=True))


# -- the simulator --------------------------------------------------------------------------------------


def simulation(autoscaler: str = "", duration: str = "10m") -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: {duration}, autoscaler: {{{autoscaler}}}}}
"""


POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  max: 2
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
"""
#: a pool of one empty CPU node, unneeded from the start
CPU_POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  replicas: 1
  max: 1
  template:
    status:
      capacity: {cpu: "8", memory: 32Gi, pods: "110"}
"""


def gpu_pod_doc(name: str, at: str = "0s", scheduler: str = "") -> str:
    spec = f"\n  schedulerName: {scheduler}" if scheduler else ""
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{gpufleet.io/duration: 5m, gpufleet.io/submit-at: {at}}}
spec:{spec}
  containers:
  - name: train
    image: trainer:1
    resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""


def events(sim: Any, kind: str) -> list[tuple[float, tuple[str, ...]]]:
    return [(e.t_s, e.nodes) for e in sim.autoscaler.events if e.kind == kind]


def test_a_gpu_pod_created_at_0_s_scales_the_pool_up_at_30_s_and_bypassed_schedulers_skip_the_wait(
    tmp_path: Path,
) -> None:
    """``allPodsAreNew``: the scans at 0 s, 10 s and 20 s wait for more pods; the scan at 30 s grows the
    pool. With ``bypassedSchedulerNames`` set (``len(a.BypassedSchedulers) == 0`` false) the scan at 0 s
    does."""
    assert events(run_simulation(write(tmp_path, simulation(), POOL, gpu_pod_doc("a"))), "scale-up") == [
        (30.0, ("h100-0",))
    ]
    bypassed = simulation("bypassedSchedulerNames: [default-scheduler]")
    sim = run_simulation(write(tmp_path, bypassed, POOL, gpu_pod_doc("a")))
    assert events(sim, "scale-up") == [(0.0, ("h100-0",))]


def test_an_unneeded_node_is_not_deleted_in_a_loop_that_waited_for_new_pods(tmp_path: Path) -> None:
    """``DisableScaleDownForLoop``: an empty CPU node unneeded from 0 s goes at the scan at 610 s; with a GPU
    pod created at 605 s, the scans at 610 s to 630 s wait for it (``allPodsAreNew``) and delete nothing;
    the scan at 640 s grows the GPU pool and, with ``scaleDownDelayAfterAdd: 0s``, deletes the node."""
    knobs = "scaleDownDelayAfterAdd: 0s"
    alone = run_simulation(write(tmp_path, simulation(knobs, "20m"), CPU_POOL, POOL))
    assert events(alone, "scale-down") == [(610.0, ("cpu-0",))]
    sim = run_simulation(write(tmp_path, simulation(knobs, "20m"), CPU_POOL, POOL, gpu_pod_doc("a", "605s")))
    assert events(sim, "scale-up") == [(640.0, ("h100-0",))]
    assert events(sim, "scale-down") == [(640.0, ("cpu-0",))]


def test_a_bypassed_scheduler_s_pod_no_scheduler_serves_triggers_a_scale_up(tmp_path: Path) -> None:
    """``SchedulerUnprocessedPods``: a pod of ``schedulerName: custom``, which no scheduler of the run
    serves, stays Pending with no ``PodScheduled`` condition; cluster-autoscaler looks at it only with
    ``custom`` among ``bypassedSchedulerNames``, and then scales up for it at once (no wait)."""
    unseen = run_simulation(write(tmp_path, simulation(), POOL, gpu_pod_doc("a", scheduler="custom")))
    assert events(unseen, "scale-up") == []
    bypassed = simulation("bypassedSchedulerNames: [custom]")
    sim = run_simulation(write(tmp_path, bypassed, POOL, gpu_pod_doc("a", scheduler="custom")))
    assert events(sim, "scale-up") == [(0.0, ("h100-0",))]
    assert sim.records["default/a"].phase == "Pending"


def test_a_pending_pod_inside_the_wait_is_told_that_cluster_autoscaler_waits_and_until_when(
    tmp_path: Path,
) -> None:
    """``allPodsAreNew``: a run ending at 20 s with a GPU pod created at 0 s: the pod's hints say that
    cluster-autoscaler waits for unschedulable pods to be 2 s old (30 s with a GPU pod) and that the wait
    ends at 30 s."""
    summary = simulated(write(tmp_path, simulation(duration="20s"), POOL, gpu_pod_doc("a")))
    (pod,) = summary["pods"]
    assert pod["diagnosis"]["hints"][-1] == (
        "cluster-autoscaler waits for unschedulable pods to be 2s old (30s with a GPU pod) before scaling up "
        "(allPodsAreNew): the wait ends at 30 s"
    )


def test_bypassed_scheduler_names_is_read_as_a_list(tmp_path: Path) -> None:
    """``--bypassed-scheduler-names`` (a string slice): ``bypassedSchedulerNames``, each name."""
    scenario = load_scenario(
        write(tmp_path, simulation("bypassedSchedulerNames: [default-scheduler, custom]"))
    )
    assert scenario.simulation.autoscaler.bypassed_scheduler_names == ("default-scheduler", "custom")
    assert AutoscalerSettings().bypassed_scheduler_names == ()
