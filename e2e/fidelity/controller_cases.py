"""What the workload controllers' fidelity cases (``e2e.fidelity.replicaset_cases``,
``e2e.fidelity.statefulset_cases``) share: a case's kwok nodes and its pods' template.

A case runs in a namespace of its own on nodes of its own (``<namespace>-a``, ``-b``, ..., each with the
CPUs the case gives, played by kwok); its pods ask for one CPU each and are pinned to the case's nodes
(``nodeSelector`` on a label the case's nodes carry) and prefer node a (a preferred node affinity), so the
nodes' sizes and that preference decide where they go, never the scheduler's ties."""

from __future__ import annotations

from typing import Any

from gpufleet.kube.manifests import node_manifest
from gpufleet.model.node import Node

KWOK_NODE = {"kwok.x-k8s.io/node": "fake"}
CASE_LABEL = "gpufleet.io/fidelity-case"
PREFERRED_LABEL = "gpufleet.io/fidelity-preferred"


def node_name(namespace: str, letter: str) -> str:
    return f"{namespace}-{letter}"


def letters(cpus: tuple[int, ...]) -> list[str]:
    return [chr(ord("a") + k) for k in range(len(cpus))]


def case_nodes(namespace: str, cpus: tuple[int, ...]) -> list[dict[str, Any]]:
    """The case's kwok nodes (``cpus``: each node's CPUs, for nodes a, b, c, ...), labelled with the case."""
    return [
        node_manifest(
            Node(
                node_name(namespace, letter),
                labels={CASE_LABEL: namespace, **({PREFERRED_LABEL: "yes"} if letter == "a" else {})},
                capacity={"cpu": n * 1000, "memory": 64 * 2**30, "pods": 110},
            ),
            KWOK_NODE,
        )
        for letter, n in zip(letters(cpus), cpus, strict=True)
    ]


def pod_template(namespace: str, labels: dict[str, str], grace_s: int = 0) -> dict[str, Any]:
    """Pods of one CPU on the case's nodes, node a preferred, running until deleted and gone
    ``grace_s`` (``terminationGracePeriodSeconds``) after their deletion."""
    preferred = {"key": PREFERRED_LABEL, "operator": "In", "values": ["yes"]}
    return {
        "metadata": {"labels": labels},
        "spec": {
            "terminationGracePeriodSeconds": grace_s,
            "nodeSelector": {CASE_LABEL: namespace},
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 100, "preference": {"matchExpressions": [preferred]}}
                    ]
                }
            },
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example.com/serve:v1",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                }
            ],
        },
    }
