"""A ``kubectl get nodes,pods -A -o json`` snapshot loads into nodes and bound or pending pods."""

from __future__ import annotations

from pathlib import Path

from gpufleet.kube import load_scenario
from gpufleet.model.node import Taint
from gpufleet.model.pod import OwnerRef

SNAPSHOT = Path(__file__).parent / "data" / "kubectl-get-nodes-pods.json"
KI = 1024


def test_kubectl_snapshot_loads_nodes_and_pods_without_warnings() -> None:
    scenario = load_scenario([SNAPSHOT])
    assert scenario.warnings == []

    gpu, cpu = scenario.nodes
    assert gpu.name == "ip-10-0-1-17"
    assert gpu.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert gpu.allocatable["nvidia.com/gpu"] == 8
    assert gpu.allocatable["cpu"] == 191_450
    assert gpu.allocatable["memory"] == 2_056_256_780 * KI
    assert gpu.allocatable["pods"] == 100
    assert gpu.labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert cpu.allocatable == {
        "cpu": 15_890,
        "ephemeral-storage": 95_551_679_124,
        "memory": 63_048_584 * KI,
        "pods": 58,
    }


def test_snapshot_pods_are_bound_pending_or_finished_as_their_status_says() -> None:
    pods = {p.pod.key: p for p in load_scenario([SNAPSHOT]).pods}

    serving = pods["inference/vllm-7d9c6b5f8-x2kqp"]
    assert (serving.phase, serving.bound_node) == ("Running", "ip-10-0-1-17")
    assert serving.pod.requests == {"cpu": 16_000, "memory": 320 * 2**30, "nvidia.com/gpu": 4}
    assert serving.pod.owner == OwnerRef("ReplicaSet", "vllm-7d9c6b5f8")

    pending = pods["training/finetune-0-8fz2m"]
    assert (pending.phase, pending.bound_node, pending.pod.node_name) == ("Pending", None, None)
    # spec.priority is kept although the snapshot holds no PriorityClass "training".
    assert (pending.pod.priority, pending.pod.priority_class_name) == (1000, "training")
    assert pending.pod.gpus == 8

    finished = pods["training/nightly-eval-29012345-abcde"]
    assert (finished.phase, finished.bound_node) == ("Succeeded", "ip-10-0-1-17")

    plugin = pods["gpu-operator/nvidia-device-plugin-daemonset-4kz9t"]
    assert plugin.pod.priority == 2_000_001_000 and plugin.pod.requests == {}
    assert plugin.pod.owner == OwnerRef("DaemonSet", "nvidia-device-plugin-daemonset")
    assert plugin.pod.required_terms is not None
    assert plugin.pod.required_terms[0].fields[0].values == ("ip-10-0-1-17",)
