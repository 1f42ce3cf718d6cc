"""A Kueue workload as the admission code sees it: one pod set's total requests and its queue order.

Mirrors ``kubernetes-sigs/kueue: pkg/workload`` (``Info``) for a single pod set named ``main``:
``requests`` is the sum over the workload's pods (a Job's ``parallelism`` x its template), and
admission is all or nothing for it. Queue order (``pkg/workload/ordering.go``): higher
priority first, then the older creation time; ``order`` keeps creation order for equal times.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.model.kueue import FlavorResource
from gpufleet.model.pod import Pod
from gpufleet.scheduling.kueue.topology import TopologyRequest

POD_SET = "main"


@dataclass(frozen=True)
class Workload:
    key: str  # "Job/<ns>/<name>", "PodGroup/<ns>/<name>" or "Pod/<ns>/<name>"
    cluster_queue: str
    priority: int
    created_s: float
    order: int
    requests: dict[str, int]
    pod: Pod  # a pod of the set: its nodeSelector, affinity and tolerations meet the flavors'
    topology: tuple[TopologyRequest, ...] = ()  # its pod sets that ask for Topology-Aware Scheduling
    #: its pod sets' names (``main`` for a Job); their requests are summed in ``requests`` and they
    #: share one flavor assignment (Kueue assigns each its own)
    pod_sets: tuple[str, ...] = (POD_SET,)
    pod_count: int = 1  # its pods over all its pod sets (what a ClusterQueue's ``pods`` quota counts)

    @property
    def namespace(self) -> str:
        return self.key.split("/")[1]

    def queue_order(self) -> tuple[int, float, int, str]:
        return (-self.priority, self.created_s, self.order, self.key)


@dataclass(frozen=True)
class Admitted:
    """A workload holding quota: the flavor of each resource and what it uses of each."""

    workload: Workload
    flavors: dict[str, str]
    usage: dict[FlavorResource, int]
    admitted_s: float
    evicting: bool = False  # being preempted: it holds its quota until its pods are gone
    #: Topology-Aware Scheduling: each TAS pod set's nodes, one per pod
    placement: dict[str, list[str]] = field(default_factory=dict)
