"""Deployment (its ReplicaSets' job): keep ``replicas`` pods, replacing any that end. Pods are named
``<deployment>-<n>``, ``n`` from 0, never reused (nor a name its pods of a snapshot hold: it adopts those,
its ReplicaSets' pods, as ``KeepsReplicas`` says, and then names its new pods as its current ReplicaSet of
the snapshot names them: ``<rs>-<5 characters>``); autoscalers change ``replicas``.

Once its template changes (a gpufleet ``Rollout``, ``TemplateChange``) it keeps one ReplicaSet per template
(``getAllReplicaSetsAndSyncRevision``; a template it had before takes its old ReplicaSet back, as a
rollback does): the first holds the pods it had, named as above; each later one, ``<deployment>-<hash>``
(``pod-template-hash``), names its pods ``<deployment>-<hash>-<5 characters>`` and labels them
``pod-template-hash``. Each sync (``sync``) sets each ReplicaSet's ``replicas`` as ``rolloutRolling`` or
``rolloutRecreate`` does (``workloads.deployment_rolling``); ``wanted`` creates what a ReplicaSet lacks and
``surplus`` says how many of its pods each has too many, which the driver deletes in the ReplicaSet
controller's order (``workloads.replicaset.pods_to_delete``). A change of ``replicas`` mid-rollout (an HPA)
is spread over the ReplicaSets in proportion (``workloads.deployment_scaling``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from gpufleet.model.node import Node
from gpufleet.model.owned import Owned
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.workloads import RECREATE, Deployment, TemplateChange
from gpufleet.workloads import register_kind
from gpufleet.workloads.deployment_rolling import (
    ReplicaSetCounts,
    deployment_complete,
    rollout_recreate,
    rollout_rolling,
)
from gpufleet.workloads.deployment_scaling import annotate, is_scaling_event, scale
from gpufleet.workloads.kind import ReplicaBound
from gpufleet.workloads.replicas import KeepsReplicas

#: the label the Deployment controller puts on its ReplicaSets' pods
#: (``apps.DefaultDeploymentUniqueLabelKey``)
POD_TEMPLATE_HASH = "pod-template-hash"


@dataclass
class DeploymentReplicaSet:
    """One ReplicaSet of the Deployment: its template, its ``counts`` (``spec.replicas``), its active pods
    (``pods``) and those not gone yet (``present``: a pod being deleted too)."""

    name: str
    template: Pod
    template_hash: str
    counts: ReplicaSetCounts
    pods: set[str] = field(default_factory=set)
    present: set[str] = field(default_factory=set)
    made: int = 0  # pods created so far: the rank of the next one's name
    first: bool = False  # the Deployment's first: its pods named as ``next_pod`` names them


@register_kind(Deployment)
class DeploymentController(KeepsReplicas):
    kind: ClassVar[str] = "Deployment"

    def __init__(self, deployment: Deployment):
        super().__init__(deployment.replicas)
        self.deployment = deployment
        self.next_index = 0
        self.replica_set = ""  # its current ReplicaSet in a snapshot, which names its pods
        self.present: set[str] = set()  # its pods not gone yet
        self.sets: list[DeploymentReplicaSet] = []  # its ReplicaSets, oldest first, once its template changed
        self.rolling = False  # a rollout is under way: not complete yet

    def adopt(self, owned: Owned) -> None:
        super().adopt(owned)
        self.replica_set = owned.replica_set
        self.present |= self.active

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

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        if not self.sets:
            out = super().wanted(nodes)
            self.present.update(p.key for p in out)
            return out
        out = []
        for rs in self.sets:  # manageReplicas of each ReplicaSet
            while len(rs.pods) < rs.counts.replicas:
                pod = self._set_pod(rs)
                rs.pods.add(pod.key)
                rs.present.add(pod.key)
                self.active.add(pod.key)
                self.present.add(pod.key)
                out.append(pod)
        self.version += len(out)
        return out

    def _set_pod(self, rs: DeploymentReplicaSet) -> Pod:
        """The next pod of ``rs``: the first ReplicaSet's as ``next_pod`` names them, a later one's
        ``<rs>-<5 characters>`` labelled with its ``pod-template-hash``."""
        if rs.first:
            return self.next_pod()
        d = self.deployment
        name = self.generated_name(rs.name, d.namespace, rs.made)
        rs.made += 1
        owner = OwnerRef("Deployment", d.name)
        return rs.template.stamped(name, owner, {POD_TEMPLATE_HASH: rs.template_hash}, d.namespace)

    def replica_bounds(self) -> list[ReplicaBound]:
        """Once it has ReplicaSets, each one's active pods within its ``replicas`` (``manageReplicas``); the
        Deployment's together exceed ``replicas`` by the surge while a rollout is under way."""
        if not self.sets:
            return super().replica_bounds()
        return [
            ReplicaBound(f"active pods of {rs.name}", len(rs.pods), 0, rs.counts.replicas) for rs in self.sets
        ]

    def retire(self, key: str) -> None:
        super().retire(key)
        for rs in self.sets:
            rs.pods.discard(key)

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        self.present.discard(pod.key)
        for rs in self.sets:
            rs.present.discard(pod.key)
        return super().finished(pod, succeeded)

    # -- rollouts ---------------------------------------------------------------------------
    @property
    def new_set(self) -> DeploymentReplicaSet | None:
        """The ReplicaSet of the current template (``FindNewReplicaSet``), None before any rollout."""
        return self.sets[-1] if self.sets else None

    def roll(self, change: TemplateChange) -> DeploymentReplicaSet:
        """The template changes: its ReplicaSet (one it had, or a new one with 0 replicas) becomes the new
        one, last in ``sets`` (the others, by creation, old)."""
        d = self.deployment
        if not self.sets:
            first = DeploymentReplicaSet(
                f"{d.name}-{d.template_hash}",
                d.template,
                d.template_hash,
                ReplicaSetCounts(f"{d.name}-{d.template_hash}", self.replicas),
                set(self.active),
                set(self.present),
                first=True,
            )
            annotate(first.counts, d.strategy, self.replicas)
            self.sets.append(first)
        rs = next((s for s in self.sets if s.template_hash == change.template_hash), None)
        if rs is None:  # getNewReplicaSet: created with 0 replicas, annotated
            name = f"{d.name}-{change.template_hash}"
            rs = DeploymentReplicaSet(name, change.template, change.template_hash, ReplicaSetCounts(name, 0))
            annotate(rs.counts, d.strategy, self.replicas)
        else:
            self.sets.remove(rs)
        self.sets.append(rs)
        for rank, s in enumerate(self.sets):
            s.counts.created = rank
        self.rolling = True
        return rs

    def sync(self, available: Mapping[str, int]) -> bool:
        """One sync of its ReplicaSets' ``replicas``, given each one's available pods by name: after a change
        of ``replicas`` (``isScalingEvent``) the ReplicaSets scaled in proportion
        (``workloads.deployment_scaling``), else one step of ``rolloutRolling`` or ``rolloutRecreate``;
        whether any was scaled (the driver syncs again then, as a ReplicaSet's update requeues its
        Deployment)."""
        for rs in self.sets:
            rs.counts.available = available.get(rs.name, 0)
        strategy, counts = self.deployment.strategy, [rs.counts for rs in self.sets]
        new, old = counts[-1], counts[:-1]
        if is_scaling_event(self.replicas, counts):  # syncDeployment: sync, not a rollout step
            return scale(strategy, self.replicas, len(self.active), old, new)
        before = [c.replicas for c in counts]
        if strategy.type == RECREATE:
            running = any(rs.present for rs in self.sets[:-1])
            scaled = rollout_recreate(self.replicas, old, new, running)
        else:
            scaled = rollout_rolling(strategy, self.replicas, old, new)
        for c, size in zip(counts, before, strict=True):
            if c.replicas != size:  # scaleReplicaSet annotates what it scales
                annotate(c, strategy, self.replicas)
        return scaled

    def surplus(self) -> list[tuple[list[str], int]]:
        """Each ReplicaSet's active pods (sorted) and how many of them it has above its ``replicas``, where
        it has too many (``manageReplicas`` then deletes them)."""
        return [
            (sorted(rs.pods), len(rs.pods) - rs.counts.replicas)
            for rs in self.sets
            if len(rs.pods) > rs.counts.replicas
        ]

    def complete(self, available: int) -> bool:
        """``DeploymentComplete``, given the available pods of all its ReplicaSets."""
        new = self.sets[-1]
        return deployment_complete(self.replicas, len(new.pods), len(self.active), available)
