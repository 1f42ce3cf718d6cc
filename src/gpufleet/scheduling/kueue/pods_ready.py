"""Kueue's ``waitForPodsReady``: when an admitted workload that is not PodsReady is evicted, when it may be
queued again, and by which time it is ordered.

Pure decisions (state and time in, decisions out), after ``kubernetes-sigs/kueue``:

* ``pods_ready_deadline`` -- ``admittedNotReadyWorkload`` (``pkg/controller/core/workload_controller.go``):
  an admitted workload that was never PodsReady is timed from its admission (``WaitForStart``, ``timeout``);
  one that was and lost it, from that loss (``WaitForRecovery``, ``recoveryTimeout``; not checked when
  ``0s``);
* ``on_timeout`` -- ``reconcileNotReadyTimeout`` and ``triggerDeactivation``: past the deadline the workload
  is deactivated if its requeue count has reached ``backoffLimitCount`` (``RequeuingLimitExceeded``), else
  evicted (``PodsReadyTimeout``) with its count incremented and ``requeueAt`` set by ``UpdateRequeueState``;
* ``requeue_backoff_s`` -- ``UpdateRequeueState`` with ``pkg/util/wait``'s ``Backoff.WaitTime``: the n-th
  requeue waits ``backoffBaseSeconds * 2^(n-1)``, capped at ``backoffMaxSeconds``. Upstream adds a random
  jitter of up to 0.01% (``requeuingBackoffJitter = 0.0001``: at most 6 ms of 60 s, 0.36 s of the hour);
  gpufleet leaves it out (jitter 0), which keeps runs deterministic;
* ``backoff_expired`` -- ``backoffWaitingTimeExpired`` (``pkg/cache/queue/cluster_queue.go``): a workload
  with a ``requeueAt`` goes back to its queue's heap only once the time is at or past it; before, it waits
  as inadmissible;
* ``queue_order_time`` -- ``Ordering.GetQueueOrderTimestamp`` (``pkg/workload/workload.go``): with
  ``requeuingStrategy.timestamp: Eviction`` (also where ``waitForPodsReady`` is off: ``cmd/kueue/main.go``
  ``podsReadyRequeuingTimestamp``) a workload evicted by the timeout is ordered by its eviction time; one
  evicted by an admission check (``IsEvictedByAdmissionCheck``) always is; any other by its creation time.
  (Its third case, a workload preempted by ``InCohortReclaimWhileBorrowing`` ordered just after its
  preemption, holds only with the ``PrioritySortingWithinCohort`` gate off, on by default.)
"""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.model.kueue import (
    EVICTED_BY_ADMISSION_CHECK,
    EVICTION_TIMESTAMP,
    PODS_READY_TIMEOUT,
    WaitForPodsReady,
)

#: ``kueue.WorkloadWaitForStart`` and ``kueue.WorkloadWaitForRecovery``: the PodsReady condition's reasons
#: while it is false, the eviction's underlying cause.
WAIT_FOR_START = "WaitForStart"
WAIT_FOR_RECOVERY = "WaitForRecovery"
#: ``waitForPodsReadyIfNeeded`` (``pkg/scheduler/scheduler.go``): the QuotaReserved message of a head the
#: scheduler holds while admitted workloads are not PodsReady (``blockAdmission``).
WAITING_FOR_PODS_READY = "waiting for all admitted workloads to be in PodsReady condition"
#: the Evicted condition's message (``reconcileNotReadyTimeout``: ``Exceeded the PodsReady timeout <ns/nm>``)
TIMEOUT_MESSAGE = "Exceeded the PodsReady timeout {}"
#: the deactivation's message (``triggerDeactivation``, then the Deactivated eviction's ``... due to ...``)
DEACTIVATED_MESSAGE = "The workload is deactivated due to exceeding the maximum number of re-queuing retries"


@dataclass(frozen=True)
class Requeue:
    """Evict (``PodsReadyTimeout``), the requeue count now ``count``, queued again at ``requeue_at_s``."""

    count: int
    requeue_at_s: float


@dataclass(frozen=True)
class Deactivate:
    """Deactivate (``spec.active: false``): evicted with reason ``Deactivated``, underlying cause
    ``RequeuingLimitExceeded``; its requeue state cleared."""


def requeue_backoff_s(count: int, base_s: float, max_s: float) -> float:
    """The wait before the ``count``-th requeue (from 1): ``base_s * 2^(count-1)``, at most ``max_s`` (0: no
    cap, as ``NewBackoff``'s ``cmp.Or(cap, ...)``), without upstream's 0.01% random jitter."""
    wait = base_s * 2.0 ** (count - 1)
    return min(wait, max_s) if max_s > 0 else wait


def pods_ready_deadline(
    config: WaitForPodsReady, admitted_s: float, ready: bool, ready_lost_s: float | None
) -> tuple[str, float] | None:
    """When an admitted workload that is not PodsReady times out, with the underlying cause; None when it is
    PodsReady, or lost it with ``recoveryTimeout`` off. ``ready_lost_s``: when it last went from PodsReady to
    not (None: it never was PodsReady in this admission)."""
    if ready:
        return None
    if ready_lost_s is None:
        return WAIT_FOR_START, admitted_s + config.timeout_s
    if config.recovery_timeout_s is None:
        return None
    return WAIT_FOR_RECOVERY, ready_lost_s + config.recovery_timeout_s


def on_timeout(config: WaitForPodsReady, count: int, now: float) -> Requeue | Deactivate:
    """What a workload past its PodsReady deadline gets, its requeue count so far ``count``: deactivation
    when ``count + 1`` exceeds ``backoffLimitCount``, else eviction and a requeue after the backoff."""
    limit = config.backoff_limit_count
    if limit is not None and count + 1 > limit:
        return Deactivate()
    n = count + 1
    return Requeue(n, now + requeue_backoff_s(n, config.backoff_base_s, config.backoff_max_s))


def backoff_expired(requeue_at_s: float | None, now: float) -> bool:
    """Whether a workload's requeue backoff is over (none set: it is)."""
    return requeue_at_s is None or now >= requeue_at_s


def queue_order_time(
    config: WaitForPodsReady | None, created_s: float, last_eviction: tuple[float, str] | None
) -> float:
    """The time the workload is ordered by in its queue: its last eviction's (``last_eviction``: time and
    reason, while its ``Evicted`` condition is true), when that was by the PodsReady timeout and the requeuing
    timestamp is ``Eviction`` (``config`` None: ``waitForPodsReady`` off, whose timestamp is ``Eviction``) or
    by an admission check; else its creation time."""
    if last_eviction is not None:
        t_s, reason = last_eviction
        by_eviction = config is None or config.timestamp == EVICTION_TIMESTAMP
        if (reason == PODS_READY_TIMEOUT and by_eviction) or reason == EVICTED_BY_ADMISSION_CHECK:
            return t_s
    return created_s
