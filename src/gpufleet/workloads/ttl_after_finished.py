"""The TTL-after-finished controller (``pkg/controller/ttlafterfinished/ttlafterfinished_controller.go``,
Kubernetes v1.34.10): a Job with ``spec.ttlSecondsAfterFinished`` is deleted that many seconds after it
finished (``needsCleanup``: its ``Complete`` or ``Failed`` condition holds; ``jobFinishTime``: that
condition's ``lastTransitionTime``; ``timeLeft``), with foreground cascading deletion (``processJob``:
``PropagationPolicy: Foreground``): its pods go first, then the Job, and what it owns with it (Kueue's
Workload of the Job)."""

from __future__ import annotations

from collections.abc import Iterable

from gpufleet.workloads.kind import StatusCondition

#: the conditions of a finished Job (``IsJobFinished``)
FINISHED = ("Complete", "Failed")


def job_finish_time(conditions: Iterable[tuple[StatusCondition, float]]) -> float | None:
    """``jobFinishTime``: the time of the Job's first ``Complete`` or ``Failed`` condition; None while it has
    none (not finished)."""
    return next((at for c, at in conditions if c.type in FINISHED), None)


def time_left(ttl_s: float | None, finished_s: float | None, since_s: float) -> tuple[float, float]:
    """``timeLeft``: the seconds from ``since_s`` until the Job that finished at ``finished_s`` expires (0 or
    less: it has, and is deleted now) and when it does. ``ValueError`` for a Job that should not be cleaned
    up (``needsCleanup``: no TTL, or not finished)."""
    if ttl_s is None or finished_s is None:
        raise ValueError("the Job should not be cleaned up")
    expire_s = finished_s + ttl_s
    return expire_s - since_s, expire_s
