"""Deployment (its ReplicaSet's job): keep ``replicas`` pods, replacing any that end. Pods are
named ``<deployment>-<n>``, ``n`` from 0, never reused (nor a name its pods of a snapshot hold: it
adopts those, its ReplicaSets' pods, as ``KeepsReplicas`` says, and then names its new pods as its
current ReplicaSet of the snapshot names them: ``<rs>-<5 characters>``); autoscalers change
``replicas``."""

from __future__ import annotations

from typing import ClassVar

from gpufleet.model.owned import Owned
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
        self.replica_set = ""  # its current ReplicaSet in a snapshot, which names its pods

    def adopt(self, owned: Owned) -> None:
        super().adopt(owned)
        self.replica_set = owned.replica_set

    @property
    def key(self) -> str:
        return self.deployment.key

    def next_pod(self) -> Pod:
        d = self.deployment
        if self.replica_set:  # as ReplicaSetController.next_pod names them
            name = self.generated_name(self.replica_set, d.namespace, self.next_index)
            self.next_index += 1
            return d.template.stamped(name, OwnerRef("Deployment", d.name), namespace=d.namespace)
        while f"{d.name}-{self.next_index}" in self.names:
            self.next_index += 1
        self.next_index += 1
        owner = OwnerRef("Deployment", d.name)
        return d.template.stamped(f"{d.name}-{self.next_index - 1}", owner, namespace=d.namespace)
