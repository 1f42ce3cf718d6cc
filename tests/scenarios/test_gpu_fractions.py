"""Fractional GPU requests: KAI Scheduler's ``gpu-fraction``/``gpu-memory`` annotations and HAMi's
``nvidia.com/gpumem``/``gpucores`` resources (examples/gpu-sharing/fractions*.yaml).

KAI and HAMi binpack shares onto one GPU and keep a shared GPU away from whole-GPU pods; HAMi-core
caps a vGPU's memory, KAI's fractions cap nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpufleet.cluster.state import ClusterState
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig
from gpufleet.scheduling.profile import ProfileError, build_profile
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "gpu-sharing"

NODE = """apiVersion: v1
kind: Node
metadata:
  name: a100
  labels:
    {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.memory: "81920", nvidia.com/gpu.count: "1"}
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "1"}
"""


SIMULATION = """---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: short}
spec: {duration: 10m}
"""


def pod_doc(name: str, annotations: str = "{}", limits: str = "{}") -> str:
    """A bare pod run to completion (``restartPolicy: Never``)."""
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {annotations}}}
spec:
  restartPolicy: Never
  containers:
  - name: app
    image: app:v1
    resources: {{requests: {{cpu: "1", memory: 1Gi}}, limits: {limits}}}
"""


def run(paths: list[Path]) -> dict[str, dict[str, Any]]:
    sim = Simulation(load_scenario(paths))
    sim.run()
    return {p["name"]: p for p in build_summary(sim)["pods"]}


def test_shares_of_one_gpu_go_together_and_whole_gpu_pods_get_an_unshared_gpu() -> None:
    pods = run([EXAMPLES / "fractions.yaml"])
    assert pods["default/half-a"]["devices"] == ["0:500m"]
    assert pods["default/quarter-b"]["devices"] == ["0:250m"]
    assert pods["default/hami-c"]["devices"] == ["0:250m"]  # 20 GiB of 80 GiB and 25 % of compute
    assert pods["default/train-whole"]["devices"] == ["1"]
    assert pods["default/half-a"]["gpus"] == 0.5 and pods["default/train-whole"]["gpus"] == 1.0


def test_a_share_waits_until_a_neighbour_frees_room_on_a_gpu() -> None:
    """GPU 0 is full of shares, GPU 1 holds a whole-GPU pod: the 0.5 share waits for half-a (30 m)."""
    late = run([EXAMPLES / "fractions.yaml"])["default/kai-late"]
    assert late["bound_s"] == 1800.0 and late["devices"] == ["0:500m"]


def test_hami_caps_vgpu_memory_and_kai_fractions_do_not() -> None:
    pods = run([EXAMPLES / "fractions-memory.yaml"])
    hami, greedy = pods["default/hami-oom"], pods["default/kai-greedy"]
    assert (hami["phase"], hami["reason"]) == ("Failed", "OOMKilled")  # 30 GB into a 10 GiB vGPU
    assert hami["devices"] == ["0:0m,125m-memory"]  # no gpucores: memory only, 10 GiB of 80 GiB
    assert (greedy["phase"], greedy["reason"]) == ("Failed", "OOMKilled")  # 50 GB + neighbour's 40 GB
    assert "needs 50 GB" in greedy["message"]
    assert pods["default/kai-neighbour"]["reason"] == "Completed"


def test_a_share_too_big_for_every_gpu_stays_pending_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        NODE
        + pod_doc("whole", limits="{nvidia.com/gpu: 1}")
        + pod_doc("big-memory", annotations='{gpu-memory: "90000"}')
        + pod_doc("no-room", annotations='{gpu-fraction: "0.1"}')
        + SIMULATION
    )
    pods = run([tmp_path / "s.yaml"])
    assert pods["default/big-memory"]["message"].startswith(
        "0/1 nodes are available: 1 node(s) didn't have enough GPU memory per device."
    )
    assert pods["default/no-room"]["message"].startswith(
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    )


def test_shares_do_not_go_on_time_sliced_or_mig_gpus(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        (EXAMPLES / "time-slicing-oom.yaml").read_text().split("---\napiVersion: v1\nkind: Pod")[0]
        + pod_doc("frac", annotations='{gpu-fraction: "0.5"}')
        + SIMULATION
    )
    frac = run([tmp_path / "s.yaml"])["default/frac"]
    assert frac["phase"] == "Pending"
    assert "1 node(s) didn't have GPUs that fractional requests can share" in frac["message"]


def test_with_gpu_share_disabled_a_fraction_asks_for_no_gpu(tmp_path: Path) -> None:
    """What plain kube-scheduler does with KAI's annotation: it is not a resource, the pod lands anywhere."""
    (tmp_path / "s.yaml").write_text(
        NODE
        + pod_doc("frac", annotations='{gpu-fraction: "0.5"}')
        + """---
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled: [{name: GpuShare}]
"""
        + SIMULATION
    )
    sim = Simulation(load_scenario([tmp_path / "s.yaml"]))
    sim.run()
    assert sim.state.allocated("nvidia.com/gpu") == 1  # the ledger still records the share it holds
    assert build_summary(sim)["pods"][0]["phase"] in ("Running", "Succeeded")


@pytest.mark.parametrize(
    ("annotations", "limits", "message"),
    [
        ('{gpu-fraction: "1.5"}', "{}", 'annotations.gpu-fraction: Invalid value: "1.5": must be a number'),
        ('{gpu-fraction: "0.5", gpu-memory: "100"}', "{}", "gpu-fraction and gpu-memory cannot both be set"),
        ('{gpu-fraction: "0.5"}', "{nvidia.com/gpu: 1}", "cannot be combined with a nvidia.com/gpu request"),
        ('{gpu-memory: "-5"}', "{}", 'annotations.gpu-memory: Invalid value: "-5"'),
        ("{}", "{nvidia.com/gpumem: 1000}", "nvidia.com/gpumem requires a nvidia.com/gpu (vGPU) count"),
        ("{}", "{nvidia.com/gpu: 1, nvidia.com/gpucores: 150}", "must be a percentage from 0 to 100"),
        (
            "{}",
            "{nvidia.com/gpu: 1, nvidia.com/gpumem: 10, nvidia.com/gpumem-percentage: 10}",
            "set one of nvidia.com/gpumem and nvidia.com/gpumem-percentage",
        ),
    ],
)
def test_bad_fractional_requests_are_input_errors(
    tmp_path: Path, annotations: str, limits: str, message: str
) -> None:
    (tmp_path / "s.yaml").write_text(NODE + pod_doc("bad", annotations, limits))
    with pytest.raises(ScenarioError) as err:
        load_scenario([tmp_path / "s.yaml"])
    assert any(message in line and "(Pod/default/bad)" in line for line in err.value.problems), (
        err.value.problems
    )


def test_cluster_autoscaler_packs_fractions_several_to_a_gpu(tmp_path: Path) -> None:
    """Four 0.5 shares on a pool of one-GPU L4 nodes (24 GB): two nodes, not four (binpacking estimator
    with GPUs counted in thousandths)."""
    pool = """apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: l4}
spec:
  min: 0
  max: 8
  gpu: {model: L4, count: 1}
  template:
    status:
      capacity: {cpu: "16", memory: 64Gi, pods: "110"}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: fractions-scale-up}
spec: {duration: 1h}
"""
    pods = "".join(
        pod_doc(f"half-{i}", annotations='{gpu-fraction: "0.5", gpufleet.io/duration: 10m}') for i in range(4)
    )
    (tmp_path / "s.yaml").write_text(pool + pods)
    sim = Simulation(load_scenario([tmp_path / "s.yaml"]))
    sim.run()
    summary = build_summary(sim)
    assert len(summary["nodes"]) == 2
    by_node: dict[str, list[str]] = {}
    for p in summary["pods"]:
        assert p["reason"] == "Completed"
        by_node.setdefault(p["node"], []).append(p["devices"][0])
    assert sorted(by_node.values()) == [["0:500m", "0:500m"], ["0:500m", "0:500m"]]


def test_default_scores_spread_halves_and_strand_a_whole_gpu() -> None:
    """examples/gpu-sharing/fragmentation.yaml: LeastAllocated puts the second half on the other node;
    1 GPU is free as two halves and the whole-GPU pod waits (FGD's motivating case)."""
    sim = Simulation(load_scenario([EXAMPLES / "fragmentation.yaml"]))
    sim.run()
    summary = build_summary(sim)
    pods = {p["name"]: p for p in summary["pods"]}
    assert {pods["default/infer-1"]["node"], pods["default/infer-2"]["node"]} == {"a100-a", "a100-b"}
    assert pods["default/train"]["message"].startswith(
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    )
    assert summary["fragmentation"]["fragmented_gpus"] == 1.0


def test_fgd_keeps_a_whole_gpu_free_for_the_declared_mix() -> None:
    sim = Simulation(load_scenario([EXAMPLES / "fragmentation.yaml", EXAMPLES / "fgd-scheduler.yaml"]))
    sim.run()
    pods = {p["name"]: p for p in build_summary(sim)["pods"]}
    assert pods["default/infer-1"]["node"] == pods["default/infer-2"]["node"] == "a100-a"
    assert (pods["default/train"]["node"], pods["default/train"]["devices"]) == ("a100-b", ["0"])


def test_bad_fgd_typical_pods_are_a_configuration_error() -> None:
    config = ProfileConfig(
        plugins={"multiPoint": PluginSet((PluginRef("FGD"),))},
        plugin_args={"FGD": {"typicalPods": [{"gpus": 2, "gpuMilli": 500}]}},
    )
    with pytest.raises(ProfileError, match=r"pluginConfig FGD: args.typicalPods\[0\]: gpus >= 0"):
        build_profile(config)


def test_without_gpu_share_a_fraction_on_a_cpu_node_holds_no_gpu() -> None:
    """A profile without GpuShare may put the pod on a node without GPUs: it then holds none."""
    state = ClusterState([Node("cpu-only", capacity={"cpu": 8000, "memory": 2**34, "pods": 110})])
    state.assign(Pod("frac", requests={"cpu": 1000}, gpu_share=GpuShare(compute_milli=500)), "cpu-only", 0.0)
    assert "default/frac" not in state.gpu_shares().placed and state.allocated("nvidia.com/gpu") == 0


def test_gpu_memory_fit_refuses_a_hami_vgpu_smaller_than_the_process(tmp_path: Path) -> None:
    """With GpuMemoryFit, hami-oom (30 GB into a 10 GiB vGPU) waits with the reason instead of failing."""
    (tmp_path / "scheduler.yaml").write_text(
        """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: GpuMemoryFit}]
"""
    )
    pods = run([EXAMPLES / "fractions-memory.yaml", tmp_path / "scheduler.yaml"])
    hami = pods["default/hami-oom"]
    assert hami["phase"] == "Pending"
    assert "1 node(s) didn't have enough GPU memory per device (GpuMemoryFit)" in hami["message"]
    assert pods["default/kai-greedy"]["reason"] == "OOMKilled"  # its neighbours' use is not a node fact
