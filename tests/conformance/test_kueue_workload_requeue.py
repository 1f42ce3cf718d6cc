"""Kueue v0.19.2's queue-order time and requeue state of a Workload, held against what gpufleet reads of a
dump's Workload (``kube.kueue_workloads.read``, ``model.kueue_dumped.on_clock``) and its pure rules
(``scheduling.kueue.pods_ready``: ``queue_order_time``, ``on_timeout``, ``backoff_expired``;
``scheduling.kueue.admission_checks.requeue_at_update``):

* ``pkg/workload/workload_test.go``: ``TestGetQueueOrderTimestamp`` (4 cases, each under both
  ``requeuingStrategy.timestamp`` values: a Workload document read, then ordered) and ``TestSetRequeueState``
  (8 cases: ``SetRequeueState`` without ``incrementCount`` is the admission-check path,
  ``requeue_at_update``; with it, ``UpdateRequeueState`` at a PodsReady timeout, ``on_timeout``);
* ``pkg/controller/core/workload_controller_requeue_test.go``: ``TestReconcileRequeue``'s cases about
  ``waitForPodsReady``'s requeue state and the ``Requeued`` backoff (its admission-check delay cases are
  ported in ``test_kueue_workload_admission_checks.py``).

Upstream's times are wall-clock; here a dump's Workload is read with time 0 at ``ZERO`` and ``NOW`` is a run
second.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from builders import Skip, cases

from gpufleet.kube.kueue_workloads import read
from gpufleet.kube.objects import Meta
from gpufleet.kube.problems import Location, Problems, Reporter
from gpufleet.model.kueue import CHECK_RETRY, CREATION_TIMESTAMP, EVICTION_TIMESTAMP, WaitForPodsReady
from gpufleet.model.kueue_dumped import on_clock
from gpufleet.scheduling.kueue.admission_checks import CheckState, requeue_at_update
from gpufleet.scheduling.kueue.pods_ready import Requeue, backoff_expired, on_timeout, queue_order_time

ZERO = "2026-12-06T05:00:00Z"
ZERO_UNIX = 1796533200.0
CREATED = "2026-12-06T04:00:00Z"  # upstream's creationTime: an hour before its conditionTime
CONDITION = ZERO  # upstream's conditionTime
NOW = 1000.0


def evicted(status: str, reason: str) -> dict[str, Any]:
    return {
        "type": "Evicted",
        "status": status,
        "reason": reason,
        "message": "m",
        "lastTransitionTime": CONDITION,
    }


QUEUE_ORDER = [
    ("no condition", [], (-3600.0, -3600.0)),
    ("evicted by preemption", [evicted("True", "Preempted")], (-3600.0, -3600.0)),
    ("evicted by PodsReady timeout", [evicted("True", "PodsReadyTimeout")], (0.0, -3600.0)),
    ("after eviction", [evicted("False", "PodsReadyTimeout")], (-3600.0, -3600.0)),
]


@pytest.mark.parametrize(("conditions", "want"), cases("TestGetQueueOrderTimestamp", QUEUE_ORDER, 2))
def test_get_queue_order_timestamp(conditions: list[dict[str, Any]], want: tuple[float, float]) -> None:
    """``Ordering.GetQueueOrderTimestamp`` under ``EvictionTimestamp`` and ``CreationTimestamp``: the
    Workload's ``creationTimestamp`` (an hour before time 0), or its true ``Evicted`` condition's
    ``lastTransitionTime`` (time 0) when evicted by the PodsReady timeout under ``Eviction``."""
    body = {
        "metadata": {"name": "name", "namespace": "ns", "creationTimestamp": CREATED},
        "status": {"conditions": conditions},
    }
    problems = Problems()
    got = read(Meta("name", "ns"), body, Reporter(problems, Location("w.yaml", 0, 1)))
    assert not problems.errors
    dumped = on_clock(got.workload, ZERO_UNIX)
    assert dumped.created_s is not None
    orders = [
        queue_order_time(WaitForPodsReady(timestamp=timestamp), dumped.created_s, dumped.evicted)
        for timestamp in (EVICTION_TIMESTAMP, CREATION_TIMESTAMP)
    ]
    assert tuple(orders) == want


BASE, FUTURE, LATER, PAST = NOW, NOW + 300.0, NOW + 600.0, NOW - 300.0
KEEP_LATER = Skip(
    "incrementCount with a later requeueAt to keep: gpufleet's PodsReady timeout (on_timeout) sets requeueAt "
    "afresh; the admission-check path that shares SetRequeueState never increments the count"
)

#: (existing requeueAt, existing count, incrementCount) -> (updated, requeueAt, count); None: nil
SET_REQUEUE_STATE = [
    ("should initialize and set time when requeue state is nil without increment", (None, None, False),
     (True, FUTURE, None)),
    ("should initialize and set time and count when requeue state is nil with increment", (None, None, True),
     (True, FUTURE, 1)),
    ("should update time when existing requeue time is earlier", (PAST, 2, False), (True, FUTURE, 2)),
    ("should not update time when existing requeue time is later", (LATER, 3, False), (False, LATER, 3)),
    ("should increment count but keep later requeue time", KEEP_LATER),
    ("should increment count when requeue time is same", (FUTURE, 1, True), (True, FUTURE, 2)),
    ("should increment from zero count", (PAST, 0, True), (True, FUTURE, 1)),
    ("should handle zero time in requeue state", (0.0, 0, True), (True, FUTURE, 1)),
]  # fmt: skip


@pytest.mark.parametrize(("given", "want"), cases("TestSetRequeueState", SET_REQUEUE_STATE, 2))
def test_set_requeue_state(
    given: tuple[float | None, int | None, bool], want: tuple[bool, float, int | None]
) -> None:
    """``SetRequeueState(wl, waitUntil=FUTURE, incrementCount)``. Without ``incrementCount``: an admission
    check's Retry whose wait ends at ``FUTURE`` (``requeue_at_update``: a new requeueAt only when later). With
    it: a PodsReady timeout at ``BASE`` whose backoff ends at ``FUTURE`` (``on_timeout``: the count on from
    the Workload's, nil read as 0)."""
    requeue_at, count, increment = given
    updated, want_at, want_count = want
    if not increment:
        retry = CheckState("check", CHECK_RETRY, requeue_after_s=FUTURE - BASE, last_transition_s=BASE)
        new = requeue_at_update([retry], requeue_at, NOW)
        assert (new is not None, requeue_at if new is None else new, count) == (updated, want_at, want_count)
        return
    n = (count or 0) + 1
    config = WaitForPodsReady(backoff_base_s=(FUTURE - BASE) / 2 ** (n - 1), backoff_max_s=0.0)
    assert on_timeout(config, count or 0, BASE) == Requeue(want_count or 0, want_at)


REQUEUED = Skip(
    "the Requeued condition is not held: gpufleet requeues a workload by its requeueAt "
    "(backoffWaitingTimeExpired), not by the condition's reason"
)
RECOVERY = Skip(
    "an eviction by WaitForRecovery of a PodsReady=False condition recorded before the reconcile: gpufleet "
    "times the recovery from a loss it sees in the run (pods_ready_deadline) and reads no PodsReady "
    "condition"
)

#: (waitForPodsReady, count before, requeueAt) -> the requeue after the timeout at NOW
BACKOFF_10S = WaitForPodsReady(backoff_limit_count=100, backoff_base_s=10.0, backoff_max_s=3600.0)
RECONCILE_TIMEOUT = [
    ("increment re-queue count", BACKOFF_10S, 3, Requeue(4, NOW + 80)),
    ("wait time should be limited to backoffMaxSeconds", replace(BACKOFF_10S, backoff_max_s=7200.0), 10,
     Requeue(11, NOW + 7200)),
    ("recovery time should be limited to recoveryTimeout", RECOVERY),
    ("recovery time with unhealthy nodes should still be limited to recoveryTimeout", RECOVERY),
]  # fmt: skip


@pytest.mark.parametrize(("config", "count", "want"), cases("TestReconcileRequeue", RECONCILE_TIMEOUT, 3))
def test_reconcile_requeue_at_a_pods_ready_timeout(
    config: WaitForPodsReady, count: int, want: Requeue
) -> None:
    """``reconcileNotReadyTimeout`` then ``UpdateRequeueState``: the count on from the Workload's
    ``requeueState.count``, ``requeueAt`` after ``base * 2^(count-1)`` capped at ``backoffMaxSeconds``."""
    assert on_timeout(config, count, NOW) == want


#: requeueAt (None: no requeueState) -> whether the workload goes back to its queue at NOW
RECONCILE_BACKOFF = [
    ("should set the WorkloadRequeued condition to true on re-activated", None, True),
    ("should keep the WorkloadRequeued condition until the WaitForPodsReady backoff expires", NOW + 60,
     False),
    ("should set the WorkloadRequeued condition when the WaitForPodsReady backoff expires", None, True),
    ("should keep the WorkloadRequeued condition until the AdmissionCheck backoff expires", NOW + 60, False),
    ("should set the WorkloadRequeued condition when the AdmissionCheck backoff expires", None, True),
    ("scale-to-zero released workload should not be requeued while transitioning back to pending",
     Skip("a workload on hold (QuotaReserved=False, OnHold: a StatefulSet scaled to zero) is not modelled")),
    ("shouldn't set the WorkloadRequeued condition when backoff expires and workload finished", REQUEUED),
    ("should set the WorkloadRequeued condition to true on ClusterQueue started", REQUEUED),
    ("should set the WorkloadRequeued condition to true on LocalQueue started", REQUEUED),
]  # fmt: skip


@pytest.mark.parametrize(("requeue_at", "queued"), cases("TestReconcileRequeue", RECONCILE_BACKOFF, 2))
def test_reconcile_requeue_after_the_backoff(requeue_at: float | None, queued: bool) -> None:
    """An active workload goes back to its queue once its ``requeueAt`` is past, at once without one
    (``backoffWaitingTimeExpired``; the workload controller's requeue after the backoff)."""
    assert backoff_expired(requeue_at, NOW) is queued
