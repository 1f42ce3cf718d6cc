"""Nodes: capacity and allocatable, taints, conditions."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings

from gpufleet.model.node import Taint

LABEL = "scenario.yaml: document 1 (Node/n)"


def node(status: str = "{capacity: {cpu: '8'}}", spec: str = "{}") -> str:
    return f"apiVersion: v1\nkind: Node\nmetadata: {{name: n}}\nspec: {spec}\nstatus: {status}\n"


def test_a_node_without_capacity_is_an_error(tmp_path: Path) -> None:
    assert problems(tmp_path, node(status="{}")) == [
        f"{LABEL}: status.capacity: a node needs capacity (cpu, memory, pods, ...)"
    ]


def test_allocatable_defaults_to_capacity_and_pods_to_the_kubelets_max_pods(tmp_path: Path) -> None:
    (n,) = load(tmp_path, node(status="{capacity: {cpu: '8', memory: 32Gi, nvidia.com/gpu: '4'}}")).nodes
    assert n.allocatable == {"cpu": 8000, "memory": 32 * 2**30, "nvidia.com/gpu": 4, "pods": 110}
    assert n.capacity["pods"] == 110
    assert warnings(tmp_path, node()) == []


def test_allocatable_alone_is_enough(tmp_path: Path) -> None:
    (n,) = load(tmp_path, node(status="{allocatable: {cpu: 7500m, pods: '30'}}")).nodes
    assert n.allocatable == {"cpu": 7500, "pods": 30}


def test_taints_and_unschedulable(tmp_path: Path) -> None:
    taints = "[{key: nvidia.com/gpu, value: present, effect: NoSchedule}, {key: x, effect: NoExecute}]"
    spec = f"{{unschedulable: true, taints: {taints}}}"
    (n,) = load(tmp_path, node(spec=spec)).nodes
    assert n.unschedulable
    assert n.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"), Taint("x", "", "NoExecute"))


def test_taint_rules_are_the_api_servers(tmp_path: Path) -> None:
    taints = (
        "[{key: a}, {key: b, effect: Sometimes}, {key: c, effect: NoSchedule}, {key: c, effect: NoSchedule}]"
    )
    spec = f"{{taints: {taints}}}"
    assert problems(tmp_path, node(spec=spec)) == [
        f"{LABEL}: spec.taints[0].effect: Required value",
        f'{LABEL}: spec.taints[1].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
        f'{LABEL}: spec.taints[3]: Invalid value: {{"key": "c", "effect": "NoSchedule"}}: taints must be '
        "unique by "
        "key and effect pair",
    ]


def test_bad_capacity_quantities_are_errors(tmp_path: Path) -> None:
    lines = problems(tmp_path, node(status="{capacity: {cpu: lots, nvidia.com/gpu: '1.5'}}"))
    assert lines[0].startswith(f"{LABEL}: status.capacity.cpu: quantities must match the regular expression")
    assert lines[1] == f"{LABEL}: status.capacity.nvidia.com/gpu: Invalid value: '1.5': must be an integer"


def test_unhealthy_conditions_are_warnings_and_healthy_ones_pass(tmp_path: Path) -> None:
    """(The Ready condition is read: ``Ready=False`` without the not-ready taint gets the taint the node
    lifecycle controller adds, with a warning; tests/kube/test_node_readiness.py.)"""
    status = """
  capacity: {cpu: '8'}
  conditions:
  - {type: MemoryPressure, status: "False"}
  - {type: DiskPressure, status: "True"}
  - {type: Ready, status: "False"}
"""
    assert warnings(tmp_path, node(status=status)) == [
        f"{LABEL}: status.conditions[1] DiskPressure=True is not modelled; ignored",
        f"{LABEL}: spec.taints: Ready=False without the node.kubernetes.io/not-ready taint: tainted "
        "node.kubernetes.io/not-ready:NoSchedule, as the node lifecycle controller taints it at its next "
        "pass (kube-scheduler reads the taint, not the condition)",
    ]
