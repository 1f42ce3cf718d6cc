"""Seeded random fidelity cases: small GPU clusters and the pods that probe kube-scheduler's rules.

Each case (``generated/<seed>``) draws 2-6 nodes (CPU, memory and pod counts; whole GPUs, MIG
instances or time-sliced replicas with their GPU Feature Discovery labels; zone labels; taints of
every effect; now and then a cordoned node) and 3-9 pods (requests and limits, explicit zeros and
missing requests among them, several containers and init containers; node selectors, required and
preferred node affinity with every operator, ``matchFields``; tolerations; priority classes and
``preemptionPolicy: Never``; PodDisruptionBudgets; one of several profiles; and, in some cases,
pod affinity, anti-affinity and topology spread constraints). Every case uses the same
``KubeSchedulerConfiguration`` (``PROFILES``), so one kube-scheduler process serves them all.
"""

from __future__ import annotations

import random
from typing import Any

from e2e.fidelity.case import Case

ZONES = ("zone-a", "zone-b", "zone-c")
ZONE_LABEL = "topology.kubernetes.io/zone"
GPU = "nvidia.com/gpu"
MIG = ("nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb")
PRODUCTS = ("NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L4")
TAINTS = (
    {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "training", "effect": "NoSchedule"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "maintenance", "effect": "NoExecute"},
)


def _resources(scoring: str, weights: dict[str, int]) -> list[dict[str, Any]]:
    return [{"name": name, "weight": w} for name, w in weights.items()]


#: the profiles every generated case may use: upstream defaults and other scoring strategies and weights
PROFILES: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "default-scheduler"},
        {
            "schedulerName": "binpack",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": _resources("MostAllocated", {"cpu": 1, "memory": 1, GPU: 5}),
                        }
                    },
                }
            ],
        },
        {
            "schedulerName": "ratio",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "RequestedToCapacityRatio",
                            "resources": _resources("RequestedToCapacityRatio", {"cpu": 2, GPU: 3}),
                            "requestedToCapacityRatio": {
                                "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                            },
                        }
                    },
                }
            ],
        },
        {
            "schedulerName": "weighted",
            "plugins": {
                "score": {
                    "enabled": [
                        {"name": "NodeAffinity", "weight": 5},
                        {"name": "TaintToleration", "weight": 1},
                    ],
                    "disabled": [{"name": "NodeResourcesBalancedAllocation"}],
                }
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "LeastAllocated",
                            "resources": _resources("LeastAllocated", {"cpu": 1, "memory": 3}),
                        }
                    },
                }
            ],
        },
    ],
}
SCHEDULERS = [p["schedulerName"] for p in PROFILES["profiles"]]


def _quantity_cpu(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def _node(rng: random.Random, name: str) -> dict[str, Any]:
    cpu = rng.choice((4, 8, 16, 32, 64, 96))
    memory = rng.choice((16, 32, 64, 256, 768))
    pods = rng.choice((110, 110, 110, 4, 6))
    capacity: dict[str, str] = {"cpu": str(cpu), "memory": f"{memory}Gi", "pods": str(pods)}
    labels = {ZONE_LABEL: rng.choice(ZONES)}
    kind = rng.choice(("gpu", "gpu", "gpu", "mig", "shared", "cpu"))
    if kind == "gpu":
        capacity[GPU] = str(rng.choice((1, 2, 4, 8)))
        labels["nvidia.com/gpu.product"] = rng.choice(PRODUCTS)
        labels["nvidia.com/gpu.count"] = capacity[GPU]
    elif kind == "mig":
        for resource in MIG:
            capacity[resource] = str(rng.choice((0, 1, 2, 4)))
        labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3"
        labels["nvidia.com/mig.strategy"] = "mixed"
    elif kind == "shared":
        replicas = rng.choice((2, 4))
        capacity[GPU] = str(replicas * rng.choice((1, 2)))
        labels["nvidia.com/gpu.product"] = "NVIDIA-L4-SHARED"
        labels["nvidia.com/gpu.replicas"] = str(replicas)
    if rng.random() < 0.3:
        labels["pool"] = rng.choice(("train", "serve"))
    spec: dict[str, Any] = {}
    if rng.random() < 0.35:
        spec["taints"] = rng.sample(TAINTS, rng.choice((1, 1, 2)))
    if rng.random() < 0.07:
        spec["unschedulable"] = True
    allocatable = dict(capacity)
    if rng.random() < 0.3:  # system reserved
        allocatable["cpu"] = _quantity_cpu(cpu * 1000 - rng.choice((100, 500, 1000)))
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"capacity": capacity, "allocatable": allocatable},
    }


def _container(rng: random.Random, name: str, gpus: tuple[str, int] | None) -> dict[str, Any]:
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    shape = rng.choice(("both", "both", "requests", "limits", "none", "zero"))
    cpu = rng.choice((100, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000))
    memory = rng.choice((128, 512, 1024, 4096, 16384, 65536))
    if shape in ("both", "requests"):
        requests.update(cpu=_quantity_cpu(cpu), memory=f"{memory}Mi")
    if shape in ("both", "limits"):
        limits.update(cpu=_quantity_cpu(cpu * rng.choice((1, 2))), memory=f"{memory}Mi")
    if shape == "zero":
        requests.update(cpu="0", memory="0")
    if gpus is not None:
        resource, count = gpus
        limits[resource] = str(count)
        if rng.random() < 0.5:
            requests[resource] = str(count)
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {
        "name": name,
        "image": "registry.example.com/app:v1",
        **({"resources": resources} if resources else {}),
    }


def _requirement(rng: random.Random) -> dict[str, Any]:
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
    if op in ("Gt", "Lt"):
        return {"key": "nvidia.com/gpu.count", "operator": op, "values": [str(rng.choice((0, 1, 2, 4)))]}
    if op in ("Exists", "DoesNotExist"):
        return {
            "key": rng.choice(("pool", "nvidia.com/gpu.product", "nvidia.com/mig.strategy")),
            "operator": op,
        }
    key, values = rng.choice(
        ((ZONE_LABEL, ZONES), ("pool", ("train", "serve")), ("nvidia.com/gpu.product", PRODUCTS))
    )
    return {"key": key, "operator": op, "values": sorted(rng.sample(values, rng.choice((1, 2))))}


def _affinity(
    rng: random.Random, nodes: list[str], labels: dict[str, str], inter_pod: bool
) -> dict[str, Any]:
    affinity: dict[str, Any] = {}
    node_affinity: dict[str, Any] = {}
    if rng.random() < 0.3:
        terms = []
        for _ in range(rng.choice((1, 1, 2))):
            if rng.random() < 0.15:
                terms.append(
                    {
                        "matchFields": [
                            {
                                "key": "metadata.name",
                                "operator": "In",
                                "values": [rng.choice([*nodes, "gone"])],
                            }
                        ]
                    }
                )
            else:
                terms.append({"matchExpressions": [_requirement(rng) for _ in range(rng.choice((1, 1, 2)))]})
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if rng.random() < 0.3:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.choice((1, 10, 50, 100)), "preference": {"matchExpressions": [_requirement(rng)]}}
            for _ in range(rng.choice((1, 2)))
        ]
    if node_affinity:
        affinity["nodeAffinity"] = node_affinity
    if inter_pod and rng.random() < 0.5:
        kind = rng.choice(("podAffinity", "podAntiAffinity"))
        term = {
            "labelSelector": {"matchLabels": {"app": labels["app"]}},
            "topologyKey": rng.choice(("kubernetes.io/hostname", ZONE_LABEL)),
        }
        if rng.random() < 0.5:
            affinity[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        else:
            affinity[kind] = {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": term}]
            }
    return affinity


def _pod(
    rng: random.Random, name: str, nodes: list[dict[str, Any]], priorities: list[str], inter_pod: bool
) -> dict[str, Any]:
    node_names = [n["metadata"]["name"] for n in nodes]
    gpu_resources = sorted({r for n in nodes for r in n["status"]["capacity"] if r.startswith("nvidia.com/")})
    gpus: tuple[str, int] | None = None
    if gpu_resources and rng.random() < 0.75:
        gpus = (rng.choice(gpu_resources), rng.choice((1, 1, 2, 4, 8)))
    labels = {"app": rng.choice(("train", "serve", "batch"))}
    containers = [_container(rng, "main", gpus)]
    if rng.random() < 0.2:
        containers.append(_container(rng, "sidecar", None))
    spec: dict[str, Any] = {"containers": containers}
    if rng.random() < 0.12:
        spec["initContainers"] = [_container(rng, "init", None)]
    if rng.random() < 0.25:
        spec["nodeSelector"] = {ZONE_LABEL: rng.choice(ZONES)}
    affinity = _affinity(rng, node_names, labels, inter_pod)
    if affinity:
        spec["affinity"] = affinity
    tolerations = []
    for taint in TAINTS:
        if rng.random() < 0.3:
            t: dict[str, Any] = {"key": taint["key"], "effect": taint["effect"]}
            if "value" in taint and rng.random() < 0.7:
                t.update(operator="Equal", value=taint["value"] if rng.random() < 0.85 else "other")
            else:
                t["operator"] = "Exists"
            tolerations.append(t)
    if rng.random() < 0.05:
        tolerations.append({"operator": "Exists"})
    if tolerations:
        spec["tolerations"] = tolerations
    if priorities and rng.random() < 0.6:
        spec["priorityClassName"] = rng.choice(priorities)
    spec["schedulerName"] = rng.choice(SCHEDULERS) if rng.random() < 0.5 else "default-scheduler"
    if inter_pod and rng.random() < 0.5:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": rng.choice((ZONE_LABEL, "kubernetes.io/hostname")),
                "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                "labelSelector": {"matchLabels": {"app": labels["app"]}},
            }
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": spec}


def case(seed: int) -> Case:
    rng = random.Random(seed)
    nodes = [_node(rng, f"node-{k}") for k in range(rng.randint(2, 6))]
    documents: list[dict[str, Any]] = [PROFILES, *nodes]
    priorities: list[str] = []
    if rng.random() < 0.4:
        for name, value, policy in (
            ("low", 100, "PreemptLowerPriority"),
            ("high", 1000, "PreemptLowerPriority"),
            ("high-never", 1000, "Never"),
        ):
            documents.append(
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": name},
                    "value": value,
                    "preemptionPolicy": policy,
                }
            )
            priorities.append(name)
    inter_pod = rng.random() < 0.15
    pods = [_pod(rng, f"pod-{k}", nodes, priorities, inter_pod) for k in range(rng.randint(3, 9))]
    if priorities and rng.random() < 0.4:
        documents.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "keep-serving", "namespace": "default"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "serve"}}},
            }
        )
    documents += pods
    return Case(f"generated/{seed:04d}", "generated", tuple(documents), f"random case, seed {seed}")


def cases(count: int, first_seed: int = 1) -> list[Case]:
    return [case(seed) for seed in range(first_seed, first_seed + count)]
