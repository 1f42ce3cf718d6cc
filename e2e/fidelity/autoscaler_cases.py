"""The cluster-autoscaler fidelity cases: node groups and pending pods, written as a gpufleet scenario.

A case is the documents of one gpufleet scenario: NodePools (a template with GPU capacity, labels
and taints, ``min``, ``max``, existing ``replicas``), pods, the Simulation's autoscaler settings
(``expander``, ``scaleDownUnneededTime``, ...) and, for the ``priority`` expander, its ConfigMap.
The real side gives the same NodePools to cluster-autoscaler's ``kwok`` provider as node-group
templates; gpufleet simulates the scenario. What is compared is the decision (``kind``):
``scale-up`` (which groups grow, by how many nodes, in order), ``no-scale-up`` (each pod's
``NotTriggerScaleUp`` message) or ``scale-down`` (which existing nodes are removed).

Hand-written cases cover each expander gpufleet models that upstream has (least-waste, most-pods,
priority with its ConfigMap, random where one option is left, chains), each ``pod didn't trigger
scale-up`` reason and scale-down's rules; ``generated_cases`` adds seeded ones whose options do not
tie (where the expanders tie, cluster-autoscaler picks at random).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import yaml

NAMESPACE = "default"
#: ``--bypassed-scheduler-names`` on both sides: a scheduler name no pod uses, so cluster-autoscaler skips its
#: wait for "very new" pods (2 s, 30 s with GPU pods: ``allPodsAreNew``) and nothing else changes
UNUSED_SCHEDULER = "gpufleet-fidelity-no-such-scheduler"
PRODUCTS = {1: "Tesla-T4", 2: "NVIDIA-L4", 4: "NVIDIA-A10G", 8: "NVIDIA-H100-80GB-HBM3"}


@dataclass(frozen=True)
class AutoscalerCase:
    name: str
    kind: str  # "scale-up" | "no-scale-up" | "scale-down"
    documents: tuple[dict[str, Any], ...]
    origin: str = "hand-written"
    note: str = ""
    settings: dict[str, str] = field(default_factory=dict)  # Simulation.spec.autoscaler

    @property
    def pools(self) -> list[dict[str, Any]]:
        return [d for d in self.documents if d["kind"] == "NodePool"]

    @property
    def pods(self) -> list[dict[str, Any]]:
        return [d for d in self.documents if d["kind"] == "Pod"]

    @property
    def priorities(self) -> str | None:
        return next((d["data"]["priorities"] for d in self.documents if d["kind"] == "ConfigMap"), None)

    def scenario(self) -> list[dict[str, Any]]:
        """The gpufleet scenario: the documents and a Simulation with the autoscaler settings (and the real
        side's ``--bypassed-scheduler-names`` and ``--node-delete-delay-after-taint=0s``)."""
        autoscaler = {
            "scanInterval": "1s",
            "bypassedSchedulerNames": [UNUSED_SCHEDULER],
            "nodeDeleteDelayAfterTaint": "0s",
            **self.settings,
        }
        simulation = {
            "apiVersion": "gpufleet.io/v1alpha1",
            "kind": "Simulation",
            "metadata": {"name": self.name.replace("/", "-")},
            "spec": {"duration": "10m", "autoscaler": autoscaler},
        }
        return [*self.documents, simulation]


def pool(
    name: str,
    gpus: int,
    cpu: int,
    memory_gi: int,
    max_nodes: int,
    min_nodes: int = 0,
    replicas: int = 0,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    capacity = {"cpu": str(cpu), "memory": f"{memory_gi}Gi", "pods": "110"}
    node_labels = dict(labels or {})
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
        node_labels.setdefault("nvidia.com/gpu.product", PRODUCTS.get(gpus, "NVIDIA-A100-SXM4-80GB"))
    template: dict[str, Any] = {"metadata": {"labels": node_labels}, "status": {"capacity": capacity}}
    if taints:
        template["spec"] = {"taints": taints}
    return {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "min": min_nodes, "max": max_nodes, "template": template},
    }


def pod(
    name: str,
    gpus: int,
    cpu: str,
    memory: str,
    selector: dict[str, str] | None = None,
    tolerations: list[dict[str, str]] | None = None,
    node: str | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}}
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": str(gpus)}
    spec: dict[str, Any] = {
        "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "main", "image": "registry.example.com/work:v1", "resources": resources}],
    }
    if selector:
        spec["nodeSelector"] = selector
    if tolerations:
        spec["tolerations"] = tolerations
    if node:
        spec["nodeName"] = node
    metadata: dict[str, Any] = {"name": name, "namespace": NAMESPACE}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def priorities(table: dict[int, list[str]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"},
        "data": {"priorities": yaml.safe_dump(table, sort_keys=True)},
    }


def _gpu_pods(
    prefix: str, count: int, gpus: int, cpu: str = "2", memory: str = "8Gi", **kw: Any
) -> list[dict[str, Any]]:
    return [pod(f"{prefix}-{i}", gpus, cpu, memory, **kw) for i in range(count)]


def _case(
    name: str, kind: str, *docs: dict[str, Any] | list[dict[str, Any]], note: str = "", **settings: str
) -> AutoscalerCase:
    flat: list[dict[str, Any]] = []
    for d in docs:
        flat += d if isinstance(d, list) else [d]
    return AutoscalerCase(name, kind, tuple(flat), note=note, settings=settings)


NO_GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
TOLERATE_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def hand_written_cases() -> list[AutoscalerCase]:
    big, small = pool("h100", 8, 96, 1024, 4), pool("t4", 1, 8, 32, 8)
    return [
        _case(
            "least-waste: one 1-GPU pod, a 1-GPU and an 8-GPU group",
            "scale-up",
            big,
            small,
            _gpu_pods("infer", 1, 1),
            note="least-waste weighs cpu and memory only: the small node leaves less unrequested",
            expander="least-waste",
        ),
        _case(
            "least-waste: eight 1-GPU pods fill one 8-GPU node or eight 1-GPU nodes",
            "scale-up",
            big,
            small,
            _gpu_pods("infer", 8, 1, cpu="6", memory="24Gi"),
            expander="least-waste",
        ),
        _case(
            "least-waste: a 4-GPU pod goes where only the 8-GPU group fits it",
            "scale-up",
            big,
            small,
            _gpu_pods("train", 2, 4, cpu="16", memory="128Gi"),
            expander="least-waste",
        ),
        _case(
            "most-pods: the group that takes all pods wins over the cheaper-waste one",
            "scale-up",
            pool("a10g", 4, 48, 192, 1),
            pool("l4", 2, 24, 96, 4),
            _gpu_pods("work", 6, 1, cpu="4", memory="16Gi"),
            expander="most-pods",
        ),
        _case(
            "most-pods then least-waste: a chain narrows the tie",
            "scale-up",
            pool("a10g", 4, 48, 192, 4),
            pool("l4", 2, 32, 96, 4),
            _gpu_pods("work", 4, 1, cpu="4", memory="16Gi"),
            expander="most-pods,least-waste",
        ),
        _case(
            "priority: the ConfigMap's highest-priority group grows",
            "scale-up",
            pool("spot-l4", 2, 24, 96, 4),
            pool("ondemand-l4", 2, 24, 96, 4),
            priorities({10: ["^spot-.*"], 1: ["^ondemand-.*"]}),
            _gpu_pods("batch", 3, 1),
            expander="priority",
        ),
        _case(
            "priority: a higher group that cannot fit the pods is passed over",
            "scale-up",
            pool("spot-t4", 1, 8, 32, 4),
            pool("ondemand-h100", 8, 96, 1024, 2),
            priorities({50: ["spot-t4"], 5: ["ondemand"]}),
            _gpu_pods("train", 1, 4, cpu="8", memory="64Gi"),
            expander="priority",
        ),
        _case(
            "priority then least-waste: equal priorities fall to the next expander",
            "scale-up",
            pool("pool-a", 8, 96, 1024, 2),
            pool("pool-b", 2, 24, 96, 4),
            priorities({10: ["pool-.*"]}),
            _gpu_pods("job", 2, 1),
            expander="priority,least-waste",
        ),
        _case(
            "random with a single option: the one group that fits grows",
            "scale-up",
            pool("cpu", 0, 16, 64, 4),
            small,
            _gpu_pods("infer", 2, 1),
            expander="random",
        ),
        _case(
            "selectors: pods for two groups make two scale-ups, the less wasteful first",
            "scale-up",
            pool("zone-a", 2, 24, 96, 4, labels={"topology.kubernetes.io/zone": "a"}),
            pool("zone-b", 2, 32, 96, 4, labels={"topology.kubernetes.io/zone": "b"}),
            _gpu_pods("a", 2, 2, selector={"topology.kubernetes.io/zone": "a"}),
            _gpu_pods("b", 1, 2, selector={"topology.kubernetes.io/zone": "b"}),
            expander="least-waste",
        ),
        _case(
            "max: a group grows only up to its max",
            "scale-up",
            pool("l4", 2, 24, 96, 2),
            _gpu_pods("work", 6, 2),
            expander="least-waste",
        ),
        _case(
            "tolerations: only the tolerated tainted group grows",
            "scale-up",
            pool("tainted-h100", 8, 96, 1024, 2, taints=[NO_GPU_TAINT]),
            small,
            _gpu_pods("train", 1, 2, tolerations=[TOLERATE_GPU]),
            expander="least-waste",
        ),
        _case(
            "no scale-up: max node group size reached",
            "no-scale-up",
            pool("l4", 2, 24, 96, 1, replicas=1),
            _gpu_pods("fill", 1, 2, node="l4-0"),
            _gpu_pods("wait", 1, 2),
            expander="least-waste",
        ),
        _case(
            "no scale-up: the pod's selector matches no template",
            "no-scale-up",
            big,
            small,
            _gpu_pods("pinned", 1, 1, selector={"nvidia.com/gpu.product": "NVIDIA-B200"}),
            expander="least-waste",
        ),
        _case(
            "no scale-up: untolerated taint",
            "no-scale-up",
            pool("tainted", 8, 96, 1024, 2, taints=[NO_GPU_TAINT]),
            _gpu_pods("plain", 1, 1),
            expander="least-waste",
        ),
        _case(
            "no scale-up: more GPUs than any template has",
            "no-scale-up",
            big,
            small,
            _gpu_pods("huge", 1, 16, cpu="6", memory="64Gi"),
            expander="least-waste",
        ),
        _case(
            "no scale-up: reasons counted over the groups",
            "no-scale-up",
            pool("full", 8, 96, 1024, 1, replicas=1),
            pool("tainted", 8, 96, 1024, 2, taints=[NO_GPU_TAINT]),
            small,
            _gpu_pods("fill", 1, 8, node="full-0"),
            _gpu_pods("big", 1, 4, cpu="6", memory="64Gi"),
            expander="least-waste",
        ),
        _case(
            "scale-down: an empty node goes after scale-down-unneeded-time",
            "scale-down",
            pool("l4", 2, 24, 96, 4, replicas=2),
            _gpu_pods("keep", 1, 2, cpu="20", memory="80Gi", node="l4-0"),
            scaleDownUnneededTime="3s",
            scaleDownDelayAfterAdd="0s",
        ),
        _case(
            "scale-down: never below the group's min",
            "scale-down",
            pool("l4", 2, 24, 96, 4, min_nodes=2, replicas=2),
            scaleDownUnneededTime="3s",
            scaleDownDelayAfterAdd="0s",
        ),
        _case(
            "scale-down: a pod without a controller keeps its under-used node",
            "scale-down",
            pool("l4", 2, 24, 96, 4, replicas=2),
            _gpu_pods("bare", 1, 1, cpu="1", memory="1Gi", node="l4-1"),
            _gpu_pods("keep", 1, 2, cpu="20", memory="80Gi", node="l4-0"),
            scaleDownUnneededTime="3s",
            scaleDownDelayAfterAdd="0s",
        ),
        _case(
            "scale-down: safe-to-evict lets a bare pod's node go when the pod fits elsewhere",
            "scale-down",
            pool("l4", 2, 24, 96, 4, replicas=2),
            _gpu_pods(
                "movable",
                1,
                1,
                cpu="1",
                memory="1Gi",
                node="l4-1",
                annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"},
            ),
            _gpu_pods("keep", 1, 1, cpu="1", memory="1Gi", node="l4-0"),
            scaleDownUnneededTime="3s",
            scaleDownDelayAfterAdd="0s",
        ),
        _case(
            "scale-down: a node above the utilisation threshold stays",
            "scale-down",
            pool("l4", 2, 24, 96, 4, replicas=2),
            _gpu_pods("busy", 1, 1, cpu="16", memory="8Gi", node="l4-1"),
            _gpu_pods("keep", 1, 1, cpu="16", memory="8Gi", node="l4-0"),
            scaleDownUnneededTime="3s",
            scaleDownDelayAfterAdd="0s",
        ),
    ]


def generated_cases(count: int = 6, first_seed: int = 1) -> list[AutoscalerCase]:
    """Seeded scale-up cases: two to four groups of distinct shapes, a few GPU pods, one expander
    chain that ends in least-waste (distinct cpu and memory sizes keep its scores apart)."""
    cases = []
    for seed in range(first_seed, first_seed + count):
        rng = random.Random(seed)
        shapes = rng.sample(
            [(1, 8, 30), (2, 24, 90), (4, 48, 190), (8, 96, 1000), (4, 64, 250), (2, 16, 60)],
            rng.randint(2, 4),
        )
        pools = [
            pool(f"g{i}-{gpus}x", gpus, cpu, mem, rng.randint(1, 5))
            for i, (gpus, cpu, mem) in enumerate(shapes)
        ]
        expander = rng.choice(["least-waste", "most-pods,least-waste", "priority,least-waste"])
        docs: list[dict[str, Any]] = list(pools)
        if expander.startswith("priority"):
            names = [p["metadata"]["name"] for p in pools]
            docs.append(priorities({rng.randint(1, 20): [n] for n in rng.sample(names, len(names))}))
        biggest = max(s[0] for s in shapes)
        for i in range(rng.randint(1, 6)):
            gpus = rng.choice([g for g in (1, 2, 4, 8) if g <= biggest])
            docs.append(pod(f"p{i}", gpus, f"{rng.randint(1, 4)}", f"{rng.choice([2, 4, 8, 16])}Gi"))
        cases.append(
            AutoscalerCase(
                f"generated-{seed:03d}", "scale-up", tuple(docs), "generated", settings={"expander": expander}
            )
        )
    return cases


def autoscaler_cases() -> list[AutoscalerCase]:
    return [*hand_written_cases(), *generated_cases()]
