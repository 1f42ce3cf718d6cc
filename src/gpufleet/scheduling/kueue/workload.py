"""A Kueue workload as the admission code sees it: its pod sets' requests and its queue order.

Mirrors ``kubernetes-sigs/kueue: pkg/workload`` (``Info``, ``PodSetResources``): each pod set (a
Job's one ``main``; a PyTorchJob's ``master`` and ``worker``; ...) asks ``requests`` over all its pods
(``count`` x its template's) and is assigned flavors of its own, matched against its template's
nodeSelector, node affinity and tolerations; admission is all or nothing for the workload. Queue order
(``pkg/workload/ordering.go``): higher priority first, then the older creation time; ``order`` keeps
creation order for equal times. A pod set with a ``minCount`` may be admitted with fewer pods
(``scheduling.kueue.partial_admission``).

Reclaimable pods (``status.reclaimablePods``, the ``ReclaimablePods`` feature gate: beta, on by default
since Kueue 0.15; gpufleet keeps it on): the pods of a pod set its controller will not create again
(``JobWithReclaimablePods``) no longer count. A pod set's count is its spec's less them, never below
none (``podSetsCountsAfterReclaim``); a pending workload asks for that many pods
(``totalRequestsFromPodSets``) and an admitted one whose count drops below what it was admitted with
uses its requests per pod for the pods left (``totalRequestsFromAdmission``: ``Divide`` by the admitted
count, ``Mul`` by the one left), so its quota is released as its pods become reclaimable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from gpufleet.model.kueue import FlavorResource
from gpufleet.model.pod import Pod
from gpufleet.model.resources import PODS
from gpufleet.scheduling.kueue.topology import TopologyRequest

POD_SET = "main"


@dataclass(frozen=True)
class PodSetResources:
    """One pod set: ``count`` pods asking ``requests`` in all, of the template ``pod``."""

    name: str
    count: int
    requests: Mapping[str, int]
    pod: Pod  # its template: its nodeSelector, affinity and tolerations meet the flavors'
    topology: TopologyRequest | None = None  # its Topology-Aware Scheduling request
    #: ``podSetGroupName`` (``kueue.x-k8s.io/podset-group-name``, with a TAS request): pod sets of one
    #: group are assigned one flavor per resource, together
    group: str | None = None
    #: ``minCount``: the fewest pods partial admission may admit it with (None: its whole count)
    min_count: int | None = None

    def scaled(self, count: int) -> PodSetResources:
        """The pod set cut to ``count`` pods, its requests per pod kept (``Divide``, ``Mul``); itself
        when it has no more than ``count``."""
        if count >= self.count:
            return self
        requests = {r: v // self.count * count for r, v in self.requests.items()}
        topology = None if self.topology is None else replace(self.topology, count=count)
        return replace(self, count=count, requests=requests, topology=topology)

    def usage(self, flavors: Mapping[str, str]) -> dict[FlavorResource, int]:
        """What it takes of each (flavor, resource) its assignment gave it (``flavors``: resource ->
        flavor): its requests, and one ``pods`` per pod."""
        return {(f, r): self.count if r == PODS else self.requests.get(r, 0) for r, f in flavors.items()}


@dataclass(frozen=True)
class Workload:
    key: str  # "Job/<ns>/<name>", "PodGroup/<ns>/<name>" or "Pod/<ns>/<name>"
    cluster_queue: str
    priority: int
    created_s: float
    order: int
    pod_sets: tuple[PodSetResources, ...]

    @property
    def namespace(self) -> str:
        return self.key.split("/")[1]

    def queue_order(self) -> tuple[int, float, int, str]:
        return (-self.priority, self.created_s, self.order, self.key)

    def can_be_partially_admitted(self) -> bool:
        """``CanBePartiallyAdmitted`` (``pkg/workload``): a pod set may be admitted with fewer pods."""
        return any(ps.min_count is not None and ps.min_count < ps.count for ps in self.pod_sets)

    def with_counts(self, counts: Sequence[int]) -> Workload:
        """The workload with each pod set cut to its count in ``counts`` (``PodSetResources.scaled``)."""
        pod_sets = tuple(ps.scaled(c) for ps, c in zip(self.pod_sets, counts, strict=True))
        return replace(self, pod_sets=pod_sets)

    def reclaimed(self, counts: Mapping[str, int], reclaimable: Mapping[str, int]) -> Workload:
        """Its pod sets with ``reclaimable`` pods no longer counted: each cut to its spec's count
        (``counts``) less its reclaimable pods, never below none (``podSetsCountsAfterReclaim``); itself
        when none is cut."""
        pod_sets = tuple(
            ps.scaled(counts[ps.name] - min(reclaimable.get(ps.name, 0), counts[ps.name]))
            for ps in self.pod_sets
        )
        if all(new is old for new, old in zip(pod_sets, self.pod_sets, strict=True)):
            return self
        return replace(self, pod_sets=pod_sets)


@dataclass(frozen=True)
class Admitted:
    """A workload holding quota: each pod set's flavor of each resource (``podSetAssignments``), and
    what the workload uses of each (flavor, resource), summed over its pod sets."""

    workload: Workload
    flavors: dict[str, dict[str, str]]  # pod set -> resource -> flavor
    usage: dict[FlavorResource, int]
    admitted_s: float
    evicting: bool = False  # being preempted: it holds its quota until its pods are gone
    #: Topology-Aware Scheduling: each TAS pod set's nodes, one per pod
    placement: dict[str, list[str]] = field(default_factory=dict)

    def reclaimed(self, counts: Mapping[str, int], reclaimable: Mapping[str, int]) -> Admitted:
        """The workload with ``reclaimable`` pods no longer counted (``Workload.reclaimed``), its usage
        less what the pods cut from its pod sets took of their flavors; itself when none is cut."""
        workload = self.workload.reclaimed(counts, reclaimable)
        if workload is self.workload:
            return self
        usage = dict(self.usage)
        for new, old in zip(workload.pod_sets, self.workload.pod_sets, strict=True):
            if new is not old:
                flavors = self.flavors[old.name]
                took = old.usage(flavors)
                for fr, v in new.usage(flavors).items():
                    usage[fr] -= took[fr] - v
        return replace(self, workload=workload, usage=usage)
