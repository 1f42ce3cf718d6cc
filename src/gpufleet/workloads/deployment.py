"""Deployment (its ReplicaSet's job): keep ``replicas`` pods, replacing any that end. Pods are
named ``<deployment>-<n>``, ``n`` from 0, never reused; autoscalers change ``replicas``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

from gpufleet.model.node import Node
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.workloads import Deployment, PodGroup
from gpufleet.workloads import register_kind


@register_kind(Deployment)
class DeploymentController:
    kind: ClassVar[str] = "Deployment"
    per_node: ClassVar[bool] = False

    def __init__(self, deployment: Deployment):
        self.deployment = deployment
        self.replicas = deployment.replicas  # spec.replicas, which autoscalers change
        self.next_index = 0
        self.active: set[str] = set()

    @property
    def key(self) -> str:
        return self.deployment.key

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        d = self.deployment
        out = []
        while len(self.active) < self.replicas:
            pod = replace(
                d.template.stamped(f"{d.name}-{self.next_index}", OwnerRef("Deployment", d.name)),
                namespace=d.namespace,
            )
            self.next_index += 1
            self.active.add(pod.key)
            out.append(pod)
        return out

    def pod_groups(self) -> list[PodGroup]:
        return []

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        self.active.discard(pod.key)
        return True

    def suspended(self, pod: Pod) -> None:
        self.finished(pod, succeeded=False)

    def node_added(self, node: Node) -> list[Pod]:
        return []
