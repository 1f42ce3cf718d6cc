"""Model objects written back as API objects (``kube.manifests``): reading them again gives the
same node and pod, so the real control plane and gpufleet see one cluster."""

from __future__ import annotations

from pathlib import Path

import yaml
from kube_manifests import write

from conftest import gpu_pod
from gpufleet.kube import load_scenario
from gpufleet.kube.manifests import node_manifest, pod_manifest, quantity
from gpufleet.model.node import Node, Taint, Toleration
from gpufleet.model.pod import PreferredTerm, Requirement, SelectorTerm


def test_quantities_are_exact_and_canonical() -> None:
    assert [quantity("cpu", v) for v in (96_000, 1500, 1)] == ["96", "1500m", "1m"]
    assert [quantity("memory", v) for v in (768 * 2**30, 3 * 2**20, 1_000_000_007)] == [
        "768Gi",
        "3Mi",
        "1000000007",
    ]
    assert quantity("nvidia.com/gpu", 8) == "8"


def test_a_node_read_back_is_the_same_node(tmp_path: Path) -> None:
    node = Node(
        "gpu-0",
        labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "kubernetes.io/hostname": "gpu-0"},
        taints=(Taint("nvidia.com/gpu", "present", "NoSchedule"), Taint("spot", "", "PreferNoSchedule")),
        unschedulable=True,
        capacity={"cpu": 96_000, "memory": 768 * 2**30, "pods": 110, "nvidia.com/gpu": 8},
        allocatable={"cpu": 95_500, "memory": 760 * 2**30, "pods": 110, "nvidia.com/gpu": 8},
    )
    path = write(tmp_path, "n.yaml", yaml.safe_dump(node_manifest(node, annotations={"a": "b"})))
    (back,) = load_scenario([path]).nodes
    assert back == node


def test_a_pod_read_back_asks_for_the_same_things(tmp_path: Path) -> None:
    original = gpu_pod(
        "trainer",
        4,
        labels={"app": "train"},
        node_selector={"zone": "a"},
        required_terms=(
            SelectorTerm((Requirement("pool", "In", ("train",)),)),
            SelectorTerm(fields=(Requirement("metadata.name", "In", ("gpu-0",)),)),
        ),
        preferred_terms=(PreferredTerm(10, SelectorTerm((Requirement("gen", "Gt", ("3",)),))),),
        tolerations=(
            Toleration("nvidia.com/gpu", "Exists", effect="NoSchedule"),
            Toleration(operator="Exists"),
        ),
        scheduler_name="binpack",
        termination_grace_s=0,
    )
    docs = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
        pod_manifest(original, "high"),
    ]
    (bare,) = load_scenario([write(tmp_path, "p.yaml", yaml.safe_dump_all(docs))]).pods
    back = bare.pod
    for field in ("requests", "labels", "node_selector", "required_terms", "preferred_terms", "tolerations"):
        assert getattr(back, field) == getattr(original, field), field
    assert (back.scheduler_name, back.priority, back.termination_grace_s) == ("binpack", 1000, 0)
