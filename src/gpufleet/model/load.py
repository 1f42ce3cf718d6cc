"""Load kinds (``gpufleet.io/v1alpha1``): ``QueueFeed`` (work items pushed to a named list, the way
a Redis list feeds KEDA's ``redis`` trigger) and ``Traffic`` (inference requests aimed at a
Deployment)."""

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
class Traffic:
    name: str
    namespace: str
    target: str  # the name of a Deployment (or ReplicaSet, or LeaderWorkerSet), same namespace
    rps: tuple[tuple[float, float], ...]  # (from time, requests per second) steps
    per_replica_rps: float
    target_kind: str = "Deployment"  # or "ReplicaSet" or "LeaderWorkerSet"
    timeout_s: float | None = None  # a request waiting longer gives up (a client or gateway timeout)
    max_queue: int | None = None  # requests arriving at this backlog are refused (HTTP 503/429)
