"""A dump's Kueue ``Workload`` object: what Kueue v0.19.2 acts on when it finds one already there.

Mirrors ``kubernetes-sigs/kueue: apis/kueue/v1beta2/workload_types.go`` and ``pkg/workload/workload.go``:

* its ``metadata.creationTimestamp``: the queue-order time (``Ordering.GetQueueOrderTimestamp``) of a workload
  not evicted;
* its ``Evicted`` condition (status ``True``): its reason and ``lastTransitionTime``, the queue-order time of
  one evicted by the PodsReady timeout (``requeuingStrategy.timestamp: Eviction``) or by an admission check;
* ``status.requeueState`` (``count``, ``requeueAt``): one evicted by ``waitForPodsReady`` goes back to its
  queue only at ``requeueAt`` (``backoffWaitingTimeExpired``), and its next backoff counts on from ``count``
  (``UpdateRequeueState``);
* ``spec.active``: false, deactivated, never admitted (``IsAdmissible``);
* ``spec.priority``: the priority Kueue's scheduler reads (``priority.Priority``), set from the job when the
  Workload was made.

Times are Unix seconds, put on a run's clock by ``on_clock`` as a dump's pods' are
(``model.node_readiness.created_on_clock``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.model.node_readiness import created_on_clock


@dataclass(frozen=True)
class DumpedWorkload:
    """A dump's Workload, by the job it belongs to (``KueueObjects.dumped``)."""

    name: str  # ``<ns>/<name>``
    created_unix: float | None = None
    active: bool = True
    requeue_count: int = 0
    requeue_at_unix: float | None = None
    #: the ``Evicted`` condition while ``True``: (reason, ``lastTransitionTime``)
    evicted: tuple[str, float | None] | None = None
    priority: int | None = None


@dataclass(frozen=True)
class DumpedOnClock:
    """A dump's Workload with its times on a run's clock: created (no later than time 0; None: not known, its
    job's counts), evicted (time, no later than time 0, and reason) and requeued at (may be after time 0: its
    backoff still to wait out)."""

    created_s: float | None
    active: bool
    requeue_count: int
    requeue_at_s: float | None
    evicted: tuple[float, str] | None
    priority: int | None


def on_clock(dumped: DumpedWorkload, zero: float | None) -> DumpedOnClock:
    """``dumped`` on the run's clock of time 0 ``zero`` (Unix seconds; None: the dump has no time 0, and its
    Workload's eviction and requeue times count as time 0)."""
    created = None if dumped.created_unix is None or zero is None else min(dumped.created_unix - zero, 0.0)
    requeue_at = None
    if dumped.requeue_at_unix is not None:
        requeue_at = 0.0 if zero is None else dumped.requeue_at_unix - zero
    evicted = None
    if dumped.evicted is not None:
        reason, at = dumped.evicted
        evicted = (created_on_clock(at, zero, 0.0), reason)
    return DumpedOnClock(created, dumped.active, dumped.requeue_count, requeue_at, evicted, dumped.priority)
