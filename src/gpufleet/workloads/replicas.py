"""What a ReplicaSet's controller does for every kind that keeps replicas (a ReplicaSet, a
Deployment through its ReplicaSet): keep ``replicas`` pods, replacing any that end; autoscalers
change ``replicas``. A kind gives only how its next pod is made (``next_pod``: its name)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import PodGroup


class KeepsReplicas:
    per_node: ClassVar[bool] = False

    def __init__(self, replicas: int):
        self.replicas = replicas  # spec.replicas, which autoscalers change
        self.active: set[str] = set()

    def next_pod(self) -> Pod:
        """The next pod the controller creates."""
        raise NotImplementedError

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        out = []
        while len(self.active) < self.replicas:
            pod = self.next_pod()
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
