"""Deployment (its ReplicaSet's job): keep ``replicas`` pods, replacing any that end. Pods are
named ``<deployment>-<n>``, ``n`` from 0, never reused; autoscalers change ``replicas``."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.workloads import Deployment
from gpufleet.workloads import register_kind
from gpufleet.workloads.replicas import KeepsReplicas


@register_kind(Deployment)
class DeploymentController(KeepsReplicas):
    kind: ClassVar[str] = "Deployment"

    def __init__(self, deployment: Deployment):
        super().__init__(deployment.replicas)
        self.deployment = deployment
        self.next_index = 0

    @property
    def key(self) -> str:
        return self.deployment.key

    def next_pod(self) -> Pod:
        d = self.deployment
        self.next_index += 1
        return replace(
            d.template.stamped(f"{d.name}-{self.next_index - 1}", OwnerRef("Deployment", d.name)),
            namespace=d.namespace,
        )
