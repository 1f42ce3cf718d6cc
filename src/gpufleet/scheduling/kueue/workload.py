"""A Kueue workload as the admission code sees it: its pod sets' requests and its queue order.

Mirrors ``kubernetes-sigs/kueue: pkg/workload`` (``Info``, ``PodSetResources``): each pod set (a
Job's one ``main``; a PyTorchJob's ``master`` and ``worker``; ...) asks ``requests`` over all its pods
(``count`` x its template's) and is assigned flavors of its own, matched against its template's
nodeSelector, node affinity and tolerations; admission is all or nothing for the workload. Queue order
(``pkg/workload/ordering.go``): higher priority first, then the older creation time; ``order`` keeps
creation order for equal times.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpufleet.model.kueue import FlavorResource
from gpufleet.model.pod import Pod
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
