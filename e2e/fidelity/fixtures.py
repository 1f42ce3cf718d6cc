"""The scheduling fixtures of the test suite as fidelity cases: the clusters that
``tests/scheduling/test_messages.py``, ``test_preemption_node_ranking.py`` and
``test_preemption_pdb_reprieve.py`` build, with the pods
they place and the pod they try, written as manifests (``kube.manifests``) so the real
kube-scheduler decides the same pod. Pods placed at a later time are created at a later second on
the real side, so DefaultPreemption's start-time criteria see the same order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from e2e.fidelity.case import Case
from gpufleet.kube.manifests import node_manifest, pod_manifest
from gpufleet.model.host_ports import BIND_ALL, HostPort
from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU

GI = 2**30
URGENT = 1000
GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")


def gpu_node(name: str, gpus: int = 8, cpu: int = 96, taints: tuple[Taint, ...] = (), **kw: Any) -> Node:
    return Node(
        name, taints=taints, capacity={"cpu": cpu * 1000, "memory": 768 * GI, "pods": 110, GPU: gpus}, **kw
    )


def gpu_pod(name: str, gpus: int, cpu: int | None = None, **kw: Any) -> Pod:
    requests = {"cpu": (gpus * 8 if cpu is None else cpu) * 1000, "memory": gpus * 64 * GI}
    if gpus:
        requests[GPU] = gpus
    return Pod(name, requests={k: v for k, v in requests.items() if v}, **kw)


@dataclass
class Fixture:
    name: str
    note: str
    nodes: list[Node]
    placed: list[tuple[Pod, str, float]] = field(default_factory=list)  # (pod, node, placed at)
    tried: list[Pod] = field(default_factory=list)
    budgets: list[tuple[str, int]] = field(default_factory=list)  # (app label, minAvailable)

    def place(self, pod: Pod, node: str, at: float = 0.0) -> Fixture:
        self.placed.append((pod, node, at))
        return self

    def case(self) -> Case:
        pods = [(p, n, at) for p, n, at in self.placed] + [(p, None, 0.0) for p in self.tried]
        classes = {}
        for p, _, _ in pods:
            if p.priority or p.preemption_policy != "PreemptLowerPriority":
                name = f"priority-{p.priority}" + ("-never" if p.preemption_policy == "Never" else "")
                classes[name] = {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": name},
                    "value": p.priority,
                    "preemptionPolicy": p.preemption_policy,
                }
        docs: list[dict[str, Any]] = [*classes.values(), *(node_manifest(n) for n in self.nodes)]
        for app, minimum in self.budgets:
            docs.append(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": f"pdb-{app}", "namespace": "default"},
                    "spec": {"minAvailable": minimum, "selector": {"matchLabels": {"app": app}}},
                }
            )
        for p, node, at in pods:
            cls = next(
                (
                    c
                    for c, d in classes.items()
                    if d["value"] == p.priority and d["preemptionPolicy"] == p.preemption_policy
                ),
                None,
            )
            doc = pod_manifest(p, cls)
            if node is not None:
                doc["spec"]["nodeName"] = node
            if at:
                doc["metadata"].setdefault("annotations", {})["gpufleet.io/submit-at"] = f"{at:g}s"
            docs.append(doc)
        return Case(f"fixtures/{self.name}", "fixture", tuple(docs), self.note)


def _messages() -> list[Fixture]:
    out = [
        Fixture(
            "messages/untolerated-taint-and-insufficient-gpus",
            "test_messages: DESIGN.md principle 7 with both PostFilter messages",
            [gpu_node("gpu-a", 8, taints=(GPU_TAINT,)), gpu_node("gpu-b", 8), gpu_node("gpu-c", 8)],
            tried=[gpu_pod("trainer", 8)],
        )
        .place(gpu_pod("b", 4), "gpu-b")
        .place(gpu_pod("c", 2), "gpu-c"),
        Fixture(
            "messages/request-beyond-allocatable",
            "test_messages: a request above a node's allocatable is not helped by preemption",
            [gpu_node("small", 4), gpu_node("big", 8)],
            tried=[gpu_pod("trainer", 8)],
        )
        .place(gpu_pod("s", 2), "small")
        .place(gpu_pod("b", 2), "big"),
        Fixture(
            "messages/each-insufficient-resource",
            "test_messages: every short resource of a node is its own reason",
            [gpu_node("n", 8, cpu=16)],
            tried=[gpu_pod("p", 8, cpu=32)],
        ).place(gpu_pod("x", 1, cpu=1), "n"),
        Fixture(
            "messages/selector-and-unschedulable",
            "test_messages: node selector mismatch and a cordoned node are unresolvable",
            [
                gpu_node("a", labels={"zone": "x"}),
                Node("b", unschedulable=True, capacity={"cpu": 1000, "pods": 110}),
            ],
            tried=[Pod("p", node_selector={"zone": "y"})],
        ),
        Fixture(
            "messages/victims-that-free-too-little",
            "test_messages: removing every lower-priority pod still leaves too few GPUs",
            [gpu_node("n", 8)],
            tried=[gpu_pod("p", 8, cpu=8, priority=100)],
        )
        .place(gpu_pod("low", 2), "n")
        .place(gpu_pod("other", 4, priority=100), "n"),
        Fixture(
            "messages/preemption-policy-never",
            "test_messages: preemptionPolicy Never is not eligible",
            [gpu_node("n", 8)],
            tried=[gpu_pod("p", 8, priority=100, preemption_policy="Never")],
        ).place(gpu_pod("low", 4), "n"),
    ]
    return out


def _ports_and_images() -> list[Fixture]:
    """``tests/scenarios/test_gates_ports_images.py``: NodePorts and ImageLocality."""
    big = "registry.example.com/big:v1"
    exporter = HostPort(BIND_ALL, "TCP", 9400)
    return [
        Fixture(
            "ports-images/image-locality-then-one-host-port-per-node",
            "ImageLocality draws the pod to the node with its 3 GB image; NodePorts keeps one 9400 per node",
            [gpu_node("a", images={big: 3 * 10**9}), gpu_node("b"), gpu_node("c")],
            tried=[
                gpu_pod("serve", 1, images=(big,)),
                gpu_pod("exporter-1", 0, cpu=1, host_ports=(exporter,)),
                gpu_pod("exporter-2", 0, cpu=1, host_ports=(HostPort("10.0.0.1", "TCP", 9400),)),
                gpu_pod("exporter-3", 0, cpu=1, host_ports=(exporter,)),
            ],
        ).place(gpu_pod("exporter-0", 0, cpu=1, host_ports=(exporter,)), "a"),
    ]


def _ranking() -> list[Fixture]:
    def two(name: str, note: str) -> Fixture:
        return Fixture(
            f"preemption-ranking/{name}",
            note,
            [gpu_node("a"), gpu_node("b")],
            tried=[gpu_pod("urgent", 8, priority=URGENT)],
        )

    rule1 = two("1-fewest-pdb-violations", "pickOneNodeForPreemption rule 1 (test_preemption_node_ranking)")
    rule1.budgets.append(("db", 1))
    rule1.place(gpu_pod("db-0", 8, priority=1, labels={"app": "db"}), "a").place(
        gpu_pod("batch-0", 8, priority=5), "b"
    )
    return [
        rule1,
        two("2-lowest-highest-victim-priority", "pickOneNodeForPreemption rule 2")
        .place(gpu_pod("mid", 8, priority=10), "a")
        .place(gpu_pod("low-0", 4, priority=5), "b")
        .place(gpu_pod("low-1", 4, priority=5), "b"),
        two("3-smallest-priority-sum", "pickOneNodeForPreemption rule 3")
        .place(gpu_pod("a-0", 4, priority=5), "a")
        .place(gpu_pod("a-1", 4, priority=5), "a")
        .place(gpu_pod("b-0", 4, priority=5), "b")
        .place(gpu_pod("b-1", 4, priority=1), "b"),
        two("4-fewest-victims", "pickOneNodeForPreemption rule 4 (priorities each plus 2^31)")
        .place(gpu_pod("b-0", 4, priority=5), "a")
        .place(gpu_pod("b-1", 4, priority=-(2**31)), "a")
        .place(gpu_pod("one", 8, priority=5), "b"),
        two("5-latest-start", "pickOneNodeForPreemption rule 5: the latest-started victims go")
        .place(gpu_pod("old", 8, priority=5), "a", at=10.0)
        .place(gpu_pod("new", 8, priority=5), "b", at=20.0),
        two("6-everything-ties", "pickOneNodeForPreemption rule 6: any candidate (upstream: map order)")
        .place(gpu_pod("x", 8, priority=5), "a")
        .place(gpu_pod("y", 8, priority=5), "b"),
    ]


def _reprieve() -> list[Fixture]:
    """``tests/scheduling/test_preemption_pdb_reprieve.py``: which victims DefaultPreemption keeps."""
    with_budget = Fixture(
        "pdb-reprieve/violating-victim-reprieved-first",
        "SelectVictimsOnNode: a PDB-violating victim is reprieved before a more important one",
        [gpu_node("a")],
        tried=[gpu_pod("urgent", 4, priority=URGENT)],
    )
    with_budget.budgets.append(("db", 1))
    without = Fixture(
        "pdb-reprieve/most-important-reprieved-first",
        "SelectVictimsOnNode: without budgets the most important victim is reprieved first",
        [gpu_node("a")],
        tried=[gpu_pod("urgent", 4, priority=URGENT)],
    )
    for f in (with_budget, without):
        f.place(gpu_pod("batch-0", 4, priority=5), "a").place(
            gpu_pod("db-0", 4, priority=1, labels={"app": "db"}), "a"
        )
    return [with_budget, without]


def fixture_cases() -> list[Case]:
    return [f.case() for f in (*_messages(), *_ranking(), *_reprieve(), *_ports_and_images())]
