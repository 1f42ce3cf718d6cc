"""Load kinds (``gpufleet.io/v1alpha1``): ``QueueFeed`` (work items pushed to a named list, the way
a Redis list feeds KEDA's ``redis`` trigger) and ``Traffic`` (inference requests aimed at a
Deployment, and the CPU and memory its pods use serving them: ``TrafficUsage``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FeedItems:
    at_s: float
    count: int
    work_s: float


@dataclass(frozen=True)
class FeedRate:
    """Poisson arrivals: ``per_hour`` items of ``work_s`` each, between ``from_s`` and ``until_s``."""

    per_hour: float
    work_s: float
    from_s: float = 0.0
    until_s: float | None = None


@dataclass(frozen=True)
class QueueFeed:
    name: str
    namespace: str
    list: str
    items: tuple[FeedItems, ...] = ()
    rate: FeedRate | None = None


@dataclass(frozen=True)
class TrafficUsage:
    """What a Traffic's pods use, as the metrics server reads it (``gpufleet.sim.traffic``).

    CPU (cores) is ``idle_cpu`` plus, on a serving pod, ``cpu_per_request`` CPU-seconds for each request
    it serves per second; memory (bytes) is ``idle_memory`` plus, on a serving pod,
    ``memory_per_queued_request`` for each request waiting on it. A resource with neither field set has
    no usage (its pods report no sample: an HPA's Resource metric on it reads nothing).
    """

    cpu_per_request: float | None = None  # CPU-seconds per served request
    idle_cpu: float | None = None  # cores, every running pod
    idle_memory: float | None = None  # bytes, every running pod
    memory_per_queued_request: float | None = None  # bytes per waiting request

    def models(self, resource: str) -> bool:
        """Whether the Traffic gives its pods a usage of ``resource`` (``cpu`` or ``memory``)."""
        if resource == "cpu":
            return self.cpu_per_request is not None or self.idle_cpu is not None
        if resource == "memory":
            return self.idle_memory is not None or self.memory_per_queued_request is not None
        return False


@dataclass(frozen=True)
class Traffic:
    name: str
    namespace: str
    target: str  # the name of a Deployment (or ReplicaSet, StatefulSet, LeaderWorkerSet), same namespace
    rps: tuple[tuple[float, float], ...]  # (from time, requests per second) steps
    per_replica_rps: float
    target_kind: str = "Deployment"  # or "ReplicaSet", "StatefulSet" or "LeaderWorkerSet"
    timeout_s: float | None = None  # a request waiting longer gives up (a client or gateway timeout)
    max_queue: int | None = None  # requests arriving at this backlog are refused (HTTP 503/429)
    usage: TrafficUsage = TrafficUsage()  # the CPU and memory its pods use
