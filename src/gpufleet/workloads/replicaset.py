"""ReplicaSet (``apps/v1``; pkg/controller/replicaset): keep ``replicas`` pods, replacing any that
end. Its pods are named as the controller names them, ``<rs>-<5 characters>`` (the template's
``generateName`` is ``<rs>-``: pkg/controller ``GetPodFromTemplate``, then the API server's name
generator), here drawn deterministically (``model.generated_names``) from the ReplicaSet and the
pod's rank, never reused. Read as ``apps/v1`` validation reads it (``ValidateReplicaSetSpec``: the
template restarts ``Always``; the selector is not empty and matches the template's labels;
``replicas`` defaults to 1); ``minReadySeconds`` is not modelled.

An HPA or a KEDA ScaledObject scales it as it scales a Deployment (both through the scale
subresource); :func:`pods_to_delete` is the order in which the ReplicaSet controller, a Deployment's
included, removes pods when ``replicas`` falls."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import ClassVar

from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.workloads import Created
from gpufleet.workloads import register_kind
from gpufleet.workloads.kind import CONTROLLER_RESTART_POLICIES, ManifestReader
from gpufleet.workloads.replicas import KeepsReplicas

API = ("apps", "v1", "ReplicaSet")
#: ``core.PodDeletionCost``: the annotation that orders a ReplicaSet's scale-down (feature gate
#: ``PodDeletionCost``, beta and on since 1.22).
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
#: ``podPhaseToOrdinal``: Pending < Unknown < Running (any other phase counts as Pending).
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
_INT32 = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class ActivePod:
    """What ``controller.ActivePodsWithRanks`` reads of an active pod of a ReplicaSet. ``key`` stands in
    for the pod's UID (the last tie-break); ``ready_s`` is the Ready condition's last transition, None
    while the pod is not Ready; ``restarts`` its containers' restart count (gpufleet's pods have no
    sidecars, so the sidecar comparison never decides)."""

    key: str
    node: str | None
    phase: str
    ready_s: float | None
    created_s: float
    restarts: int = 0
    annotations: Mapping[str, str] = field(default_factory=dict)


def deletion_cost(annotations: Mapping[str, str]) -> int:
    """``helper.GetDeletionCostFromPodAnnotations``: the annotation as an int32; 0 when it is absent or
    does not parse (``ActivePodsWithRanks`` ignores the error)."""
    value = annotations.get(POD_DELETION_COST)
    if value is None or not _INT32.fullmatch(value):
        return 0
    cost = int(value)
    return cost if -(2**31) <= cost < 2**31 else 0


def _log_rank(t: float, now: float) -> int:
    """``logarithmicRankDiff``'s rank: log2 of the age in nanoseconds, -1 for a time not in the past."""
    age_ns = (now - t) * 1e9
    return int(math.log2(age_ns)) if age_ns > 0 else -1


def _by_uid(a: ActivePod, b: ActivePod) -> int:
    return (a.key > b.key) - (a.key < b.key)


def activity(node: str | None, phase: str, ready: bool) -> tuple[bool, int, bool]:
    """The first three rules of ``ActivePods.Less`` and ``ActivePodsWithRanks.Less``, as a key whose lower
    value is deleted first: 1. unassigned < assigned, 2. Pending < Unknown < Running
    (``podPhaseToOrdinal``), 3. not ready < ready."""
    return node is not None, _PHASE_ORDINAL.get(phase, 0), ready


def compare_active_pods(a: ActivePod, rank_a: int, b: ActivePod, rank_b: int, now: float) -> int:
    """``ActivePodsWithRanks.Less`` as a comparison: negative when ``a`` (ranked ``rank_a``: how many of
    the set's active pods share its node) is deleted before ``b``, positive when after, 0 when neither
    ``Less`` holds."""
    first_a, first_b = (
        activity(a.node, a.phase, a.ready_s is not None),
        activity(b.node, b.phase, b.ready_s is not None),
    )
    if first_a != first_b:  # 1-3: unassigned, Pending, not ready first
        return -1 if first_a < first_b else 1
    cost_a, cost_b = deletion_cost(a.annotations), deletion_cost(b.annotations)
    if cost_a != cost_b:  # 4. lower pod-deletion-cost < higher
        return cost_a - cost_b
    if rank_a != rank_b:  # 5. doubled up (more of its pods on the node) < not doubled up
        return rank_b - rank_a
    if a.ready_s is not None and b.ready_s is not None and a.ready_s != b.ready_s:
        # 6. ready for less time < more time, in log2 buckets (LogarithmicScaleDown, GA), then by UID
        diff = _log_rank(a.ready_s, now) - _log_rank(b.ready_s, now)
        return diff if diff != 0 else _by_uid(a, b)
    if a.restarts != b.restarts:  # 7. more container restarts < fewer
        return b.restarts - a.restarts
    if a.created_s != b.created_s:  # 8. newer < older, in log2 buckets, then by UID
        diff = _log_rank(a.created_s, now) - _log_rank(b.created_s, now)
        return diff if diff != 0 else _by_uid(a, b)
    return 0


def pods_to_delete(
    pods: Sequence[ActivePod],
    diff: int,
    now: float,
    by_node: bool = True,
    related: Sequence[ActivePod] | None = None,
) -> list[str]:
    """``getPodsToDelete`` (pkg/controller/replicaset): the keys of the ``diff`` pods a ReplicaSet deletes
    when it has ``diff`` too many, in ``ActivePodsWithRanks`` order, each pod ranked by how many of the
    related active pods share its node (``getPodsRankedByRelatedPodsOnSameNode``: ``related``, the active
    pods of every ReplicaSet of its Deployment; the set's own where not given), or all ranked 0 where
    not ``by_node``: a ReplicaSet no controller owns has no related pods to count
    (``getIndirectlyRelatedPods`` lists the pods of ``getReplicaSetsWithSameController``, none without a
    controller). Equal pods keep the order given."""
    if diff >= len(pods):
        return [p.key for p in pods]
    counted = pods if related is None else related
    on_node = Counter(p.node for p in counted) if by_node else Counter[str | None]()

    def compare(a: ActivePod, b: ActivePod) -> int:
        return compare_active_pods(a, on_node[a.node], b, on_node[b.node], now)

    ranked = sorted(pods, key=cmp_to_key(compare))
    return [p.key for p in ranked[:diff]]


@dataclass
class ReplicaSet:
    name: str
    namespace: str
    template: Pod
    replicas: int = 1
    created: Created = field(default_factory=Created)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def read_replica_set(manifest: ManifestReader) -> ReplicaSet:
    manifest.unmodelled(["minReadySeconds"])
    template, created = manifest.template("template", CONTROLLER_RESTART_POLICIES)
    manifest.selector("replicaset")
    replicas = manifest.count("replicas", 1)
    return ReplicaSet(manifest.name, manifest.namespace, template, replicas, created)


@register_kind(ReplicaSet, api=API, read=read_replica_set)
class ReplicaSetController(KeepsReplicas):
    """A ReplicaSet of its own (a snapshot's ReplicaSets of Deployments are folded into them): its
    scale-down ranks no pod by the set's pods on its node (``pods_to_delete``)."""

    kind: ClassVar[str] = "ReplicaSet"
    ranks_by_node: ClassVar[bool] = False

    def __init__(self, replica_set: ReplicaSet):
        super().__init__(replica_set.replicas)
        self.replica_set = replica_set
        self.created = 0  # pods created so far: the rank of the next one

    @property
    def key(self) -> str:
        return self.replica_set.key

    def next_pod(self) -> Pod:
        rs = self.replica_set
        name = self.generated_name(rs.name, rs.namespace, self.created)
        self.created += 1
        return rs.template.stamped(name, OwnerRef(self.kind, rs.name), namespace=rs.namespace)
