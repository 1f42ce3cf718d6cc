"""What a ReplicaSet's controller does for every kind that keeps replicas (a ReplicaSet, a
Deployment through its ReplicaSet): keep ``replicas`` pods, replacing any that end or are being deleted;
autoscalers change ``replicas``. A kind gives only how its next pod is made (``next_pod``: its name).

Of a cluster snapshot, it adopts its pods there (``getPodsForReplicaSet``): the active ones count
toward ``replicas`` (``manageReplicas`` creates only the difference, and deletes the surplus when
scaled down), and no new pod takes the name of one of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from gpufleet.model.generated_names import unique_name
from gpufleet.model.node import Node
from gpufleet.model.owned import Owned
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import PodGroup
from gpufleet.workloads.kind import ReplicaBound


class KeepsReplicas:
    per_node: ClassVar[bool] = False
    #: whether its scale-down ranks pods by how many of its pods share their node (``pods_to_delete``)
    ranks_by_node: ClassVar[bool] = True

    def __init__(self, replicas: int):
        self.replicas = replicas  # spec.replicas, which autoscalers change
        self.active: set[str] = set()  # changed only through the methods below, which move ``version``
        self.version = 0  # moves whenever ``active`` changes
        self.names: set[str] = set()  # every name given or adopted, so that none is reused

    def next_pod(self) -> Pod:
        """The next pod the controller creates."""
        raise NotImplementedError

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        out = []
        while len(self.active) < self.replicas:
            pod = self.next_pod()
            self.active.add(pod.key)
            out.append(pod)
        self.version += len(out)
        return out

    def generated_name(self, replica_set: str, namespace: str, rank: int) -> str:
        """``<rs>-<5 characters>``, as the ReplicaSet controller names its pods (``GetPodFromTemplate``
        sets ``generateName: <rs>-``), drawn from the ReplicaSet and the pod's ``rank`` by
        ``model.generated_names``; never a name given or adopted before."""
        name = unique_name(f"{replica_set}-", f"{namespace}/{replica_set}/{rank}", self.names)
        self.names.add(name)
        return name

    def adopt(self, owned: Owned) -> None:
        """Its active pods of the snapshot (``controller.FilterActivePods``) are its replicas."""
        self.active |= {p.pod.key for p in owned.pods if p.active}
        self.version += 1
        self.names |= {p.pod.name for p in owned.pods}

    def pod_groups(self) -> list[PodGroup]:
        return []

    def replica_bounds(self) -> list[ReplicaBound]:
        """``manageReplicas`` never keeps more pods than ``replicas`` (``kind.BoundsReplicas``)."""
        return [ReplicaBound("active pods", len(self.active), 0, max(self.replicas, 0))]

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        self.retire(pod.key)
        return True

    def pod_terminating(self, pod: Pod, suspended: bool = False) -> bool:
        """A pod being deleted is no longer active (``controller.FilterActivePods`` leaves out a pod with a
        ``deletionTimestamp``): ``manageReplicas`` makes its replacement now, not once it is gone (one Kueue
        evicts waits: its workload is suspended; one it deletes itself, scaling down, no longer counted)."""
        if suspended or pod.key not in self.active:
            return False
        self.retire(pod.key)
        return True

    def retire(self, key: str) -> None:
        """The pod no longer counts toward ``replicas`` (it ended, or a scale-down deletes it)."""
        self.active.discard(key)
        self.version += 1

    def suspended(self, pod: Pod) -> None:
        self.finished(pod, succeeded=False)

    def node_added(self, node: Node) -> list[Pod]:
        return []
