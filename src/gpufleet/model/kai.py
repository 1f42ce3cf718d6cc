"""KAI Scheduler's queues (``scheduling.run.ai/v2`` ``Queue``) and pod groups, as pure data.

Mirrors ``NVIDIA/KAI-Scheduler: pkg/apis/scheduling/v2/{queue_types,resources}.go``: a Queue has
an optional ``parentQueue`` (queues form a tree; only leaves take jobs), a ``priority`` (default
100) and, per resource (``gpu`` in devices, ``cpu`` in millicores, ``memory`` in megabytes of 10^6
bytes), a ``quota`` (deserved), a ``limit`` (the most its jobs may hold; ``-1``: none) and an
``overQuotaWeight``. A pod names its queue with the label ``kai.scheduler/queue``
(``constants.DefaultQueueLabel``; ``default-queue`` when it has none, as the pod grouper's
``CalcPodGroupQueue``); the pod grouper writes the PodGroup's name on the pod as the annotation
``pod-group-name``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KAI_SCHEDULER = "kai-scheduler"
QUEUE_LABEL = "kai.scheduler/queue"
OLD_QUEUE_LABEL = "runai/queue"  # Run:ai's label before KAI Scheduler; not read
DEFAULT_QUEUE = "default-queue"
POD_GROUP_ANNOTATION = "pod-group-name"
UNLIMITED = -1.0
DEFAULT_PRIORITY = 100
#: the Queue's resource names and the Kubernetes resource each stands for
RESOURCES = {"gpu": "nvidia.com/gpu", "cpu": "cpu", "memory": "memory"}


@dataclass(frozen=True)
class KaiQuota:
    quota: float = 0.0
    limit: float = 0.0  # KAI's scheduler reads an unset limit as 0 (``isOverLimit``); -1: no limit
    over_quota_weight: float = 0.0


@dataclass(frozen=True)
class KaiQueue:
    name: str
    parent: str | None = None
    priority: int = DEFAULT_PRIORITY
    #: "gpu", "cpu", "memory" -> quota; a Queue without ``spec.resources`` has none (all 0)
    resources: dict[str, KaiQuota] = field(default_factory=dict)

    def quota(self, resource: str) -> KaiQuota:
        return self.resources.get(resource, KaiQuota())
