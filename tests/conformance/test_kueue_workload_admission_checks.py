"""Kueue's workload controller and workload package on admission checks, at commit ``ff69552e79ad`` of
``kubernetes-sigs/kueue``, held against ``gpufleet.scheduling.kueue.admission_checks`` (the pure rules
``control.kueue_admission_checks`` runs):

* ``pkg/controller/core/workload_controller_test.go``: ``TestSyncCheckStates`` (5 cases,
  ``syncAdmissionCheckConditions``: ``sync_check_list``), ``TestReconcileSyncAdmissionChecks`` (5,
  ``AdmissionChecksForWorkload`` then ``syncAdmissionCheckConditions``: ``checks_for_workload`` and
  ``sync_check_list``) and the 4 ``TestReconcile`` cases about admission checks (the checks a reservation
  gets, and ``SyncAdmittedCondition``: ``admitted_condition``, with the ``Admitted`` event:
  ``ADMITTED_EVENT``); its other ``TestReconcile`` cases (finalizers, retention, admission gates, preemption
  gates, maximum execution time, observability reasons) and its other tests (PodsReady, AFS) are not about
  admission checks and not part of this port;
* its split-off ``workload_controller_eviction_test.go`` (``TestReconcileEviction``: the 8 cases about
  admission checks -- ``reconcileCheckBasedEviction``: ``check_based_eviction``, ``resetChecksOnEviction``:
  ``reset_on_eviction``) and ``workload_controller_requeue_test.go`` (``TestReconcileRequeue``: the 6 cases
  about admission check backoff -- ``NeedsRequeueAtUpdate``: ``requeue_at_update``; the requeue backoff:
  ``pods_ready.backoff_expired``); their cases about ``waitForPodsReady``, ``spec.active`` and stop policies
  are not part of this port;
* ``pkg/workload/admissionchecks_test.go``: ``TestSyncAdmittedCondition`` (16 cases) and
  ``TestGetMaxRetryTime`` (7, ``retry_time``).

Kueue's feature gates are at their defaults (``UnadmittedWorkloadsObservability`` on, so the ``Admitted``
condition's reasons are the granular ones; ``UnadmittedWorkloadsExplicitStatus`` off); a case that turns
``UnadmittedWorkloadsObservability`` on is then the default one. Times are simulated seconds; ``NOW`` stands
for upstream's ``now``. Conditions' ``lastTransitionTime`` and ``observedGeneration`` are not held (upstream
ignores the first), nor ``AccumulatedPastExecutionTimeSeconds`` (``maximumExecutionTimeSeconds`` is not
modelled).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from builders import Skip, cases

from gpufleet.model.kueue import (
    CHECK_PENDING,
    CHECK_READY,
    CHECK_REJECTED,
    CHECK_RETRY,
    DEACTIVATED,
    EVICTED_BY_ADMISSION_CHECK,
    ClusterQueue,
    FlavorQuotas,
    ResourceGroup,
)
from gpufleet.scheduling.kueue.admission_checks import (
    ADMITTED,
    ADMITTED_EVENT,
    NO_RESERVATION,
    UNSATISFIED_CHECKS,
    AdmittedCondition,
    CheckState,
    admitted_condition,
    check_based_eviction,
    checks_for_workload,
    requeue_at_update,
    reset_on_eviction,
    retry_time,
    sync_check_list,
)
from gpufleet.scheduling.kueue.pods_ready import backoff_expired

NOW = 1000.0
RESET = "Reset to Pending after eviction. Previously: {}"

DELAYED_TOPOLOGY = (
    "delayed topology requests (DelayedTopologyRequest, the TAS second pass after a ProvisioningRequest "
    "check) are not modelled: gpufleet assigns a TAS pod set's topology at quota reservation"
)
PAST_EXECUTION = (
    "the case is about AccumulatedPastExecutionTimeSeconds (the time a workload was admitted, for "
    "maximumExecutionTimeSeconds), which gpufleet does not model"
)
ZERO_TIME = (
    "a check's lastTransitionTime is always set in gpufleet (a simulated second, 0 being the simulation's "
    "start rather than Go's zero time), so GetMaxRetryTime's guard against an unset one has no counterpart"
)
UNHEALTHY_NODES = (
    "unhealthyNodes (TAS failed-node replacement) are not modelled, and the case's point is that the "
    "Admitted condition is kept while they are"
)
PODS_READY_LIMIT = (
    "the case is about waitForPodsReady's requeuing backoffLimitCount (scheduling.kueue.pods_ready; its "
    "Ready admission check only lets the workload be admitted)"
)


def check(
    name: str,
    state: str = CHECK_PENDING,
    message: str = "",
    retry_count: int = 0,
    requeue_after_s: float | None = None,
    at: float = NOW,
) -> CheckState:
    """``kueue.AdmissionCheckState{Name, State, Message, RetryCount, RequeueAfterSeconds,
    LastTransitionTime}``."""
    return CheckState(name, state, message, retry_count, requeue_after_s, at)


def _same(got: Sequence[CheckState], want: Sequence[CheckState]) -> bool:
    """Equal but for ``lastTransitionTime`` (upstream's ``IgnoreFields(..., "LastTransitionTime")``)."""
    strip = [(c.name, c.state, c.message, c.retry_count, c.requeue_after_s, c.pod_set_updates) for c in got]
    return strip == [
        (c.name, c.state, c.message, c.retry_count, c.requeue_after_s, c.pod_set_updates) for c in want
    ]


# -- TestSyncCheckStates ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SyncList:
    states: tuple[CheckState, ...]
    names: tuple[str, ...]
    want: tuple[CheckState, ...]
    want_change: bool


SYNC_CHECK_STATES: list[tuple[str, SyncList]] = [
    ("nil conditions, nil list", SyncList((), (), (), False)),
    ("add to nil conditions", SyncList((), ("ac1", "ac2"), (check("ac1"), check("ac2")), True)),
    (
        "add and remove",
        SyncList((check("ac0"), check("ac1")), ("ac1", "ac2"), (check("ac1"), check("ac2")), True),
    ),
    ("cleanup", SyncList((check("ac0"), check("ac1")), (), (), True)),
    (
        "preserve conditions data",
        SyncList(
            (check("ac0", CHECK_READY, "Message one", at=5.0), check("ac1", at=6.0)),
            ("ac0", "ac1"),
            (check("ac0", CHECK_READY, "Message one", at=5.0), check("ac1", at=6.0)),
            False,
        ),
    ),
]


@pytest.mark.parametrize("case", cases("TestSyncCheckStates", SYNC_CHECK_STATES, 1))
def test_sync_check_states(case: SyncList) -> None:
    got, changed = sync_check_list(case.states, case.names, NOW)
    assert changed == case.want_change
    if case.want_change:
        assert _same(got, case.want)  # the added checks' lastTransitionTime ignored
    else:
        assert got == case.want


# -- TestReconcileSyncAdmissionChecks, and TestReconcile's cases on the checks a reservation gets -----------
def two_flavor_cq(*checks: tuple[str, tuple[str, ...]]) -> ClusterQueue:
    """``MakeClusterQueue("cq").ResourceGroup(MakeFlavorQuotas("flavor1"), MakeFlavorQuotas("flavor2"))``
    with ``AdmissionChecks(...)`` / ``AdmissionCheckStrategy(MakeAdmissionCheckStrategyRule(name,
    onFlavors...)...)`` (gpufleet reads both as ``admission_checks``)."""
    group = ResourceGroup((), (FlavorQuotas("flavor1", {}), FlavorQuotas("flavor2", {})))
    return ClusterQueue("cq", resource_groups=(group,), admission_checks=checks)


@dataclass(frozen=True)
class SyncChecks:
    """The workload's checks (``states``), the flavors it was assigned (None: no admission), its queue, and
    the checks it ends with."""

    states: tuple[CheckState, ...]
    assigned: tuple[str, ...] | None
    cq: ClusterQueue
    want: tuple[CheckState, ...]


def _sync(case: SyncChecks) -> None:
    names = checks_for_workload(case.cq, case.assigned)
    got, _ = sync_check_list(case.states, names, NOW)
    assert _same(got, case.want)


RECONCILE_SYNC: list[tuple[str, SyncChecks]] = [
    ("no checks in cq", SyncChecks((), None, two_flavor_cq(), ())),
    (
        "add checks from cq",
        SyncChecks((), None, two_flavor_cq(("ac1", ()), ("ac2", ())), (check("ac1"), check("ac2"))),
    ),
    (
        "add only checks covering all flavors to unadmitted wl from cq with strategy",
        SyncChecks((), None, two_flavor_cq(("ac1", ("flavor1",)), ("ac2", ())), (check("ac2"),)),
    ),
    (
        "add checks to admitted wl from cq with strategy",
        SyncChecks(
            (),
            ("flavor1",),
            two_flavor_cq(("ac1", ("flavor1",)), ("ac2", ("flavor2",)), ("ac3", ())),
            (check("ac1"), check("ac3")),
        ),
    ),
    (
        "keep only existing valid checks",
        SyncChecks(
            (check("ac1", CHECK_READY), check("ac3", CHECK_READY)),
            None,
            two_flavor_cq(("ac1", ()), ("ac2", ())),
            (check("ac1", CHECK_READY), check("ac2")),
        ),
    ),
]


@pytest.mark.parametrize("case", cases("TestReconcileSyncAdmissionChecks", RECONCILE_SYNC, 1))
def test_reconcile_sync_admission_checks(case: SyncChecks) -> None:
    _sync(case)


@dataclass(frozen=True)
class ReconcileAdmit:
    """A workload holding a reservation with ``checks`` (its queue not found: upstream's ``q1``, so its checks
    are not synced), already ``Admitted`` or not, and the ``Admitted`` condition it ends with (None: left as
    it is)."""

    checks: tuple[CheckState, ...]
    admitted: bool
    want: AdmittedCondition | None


def _reconcile_admit(case: ReconcileAdmit) -> None:
    current = ADMITTED if case.admitted else None
    new = admitted_condition(True, case.checks, current)
    assert (None if new == current else new) == case.want
    if case.want == ADMITTED:  # the event, reserved at upstream's now and admitted then
        assert ADMITTED_EVENT.format("q1", NOW - NOW) == (
            "Admitted by ClusterQueue q1, wait time since reservation was 0s"
        )


RECONCILE: list[tuple[str, SyncChecks | ReconcileAdmit]] = [
    (
        "assign Admission Checks from ClusterQueue.spec.AdmissionCheckStrategy",
        SyncChecks(
            (), ("flavor1",), two_flavor_cq(("ac1", ("flavor1",)), ("ac2", ())), (check("ac1"), check("ac2"))
        ),
    ),
    (
        "assign Admission Checks from ClusterQueue.spec.AdmissionChecks",
        SyncChecks((), ("flavor1",), two_flavor_cq(("ac1", ()), ("ac2", ())), (check("ac1"), check("ac2"))),
    ),
    ("admit", ReconcileAdmit((check("check", CHECK_READY),), False, ADMITTED)),
    ("already admitted", ReconcileAdmit((check("check", CHECK_READY),), True, None)),
]


@pytest.mark.parametrize("case", cases("TestReconcile", RECONCILE, 1))
def test_reconcile(case: SyncChecks | ReconcileAdmit) -> None:
    if isinstance(case, SyncChecks):
        _sync(case)
    else:
        _reconcile_admit(case)


# -- TestReconcileEviction ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Eviction:
    """A workload holding a reservation with ``checks``, and what ``reconcileCheckBasedEviction`` does: it
    deactivates it with the ``DeactivationTarget`` message ``want_message`` (``want_deactivated``), or evicts
    it with the ``Evicted`` message ``want_message``; its event (None: not the case's); the checks its
    eviction leaves (``resetChecksOnEviction``, where the case shows them) and its ``Admitted`` condition
    (None: not held, upstream's reconcile leaving it as it is)."""

    checks: tuple[CheckState, ...]
    want_deactivated: bool
    want_message: str
    want_event: tuple[str, str] | None
    want_checks: tuple[CheckState, ...] = ()
    want_admitted: AdmittedCondition | None = None
    #: a deactivated workload's ``Evicted`` condition (reason, message), where the case shows it
    want_evicted: tuple[str, str] | None = None


RETRY_EVICTED = 'Evicted due to AdmissionCheck in Retry state: "check-1"'
RETRY_TWO = (
    'Evicted due to AdmissionChecks in Retry state: "check-1" (infrastructure not prepared); '
    '"check-3" (budget exhausted)'
)

RECONCILE_EVICTION: list[tuple[str, Eviction | Skip]] = [
    (
        "unadmitted workload with rejected checks gets deactivated",
        Eviction(
            (check("check", CHECK_REJECTED),),
            True,
            'AdmissionCheck in Rejected state: "check"',
            ("AdmissionCheckRejected", 'Deactivated due to AdmissionCheck in Rejected state: "check"'),
            want_admitted=UNSATISFIED_CHECKS,
        ),
    ),
    (
        "admitted workload with rejected checks gets deactivated",
        Eviction(
            (check("check", CHECK_REJECTED),),
            True,
            'AdmissionCheck in Rejected state: "check"',
            ("AdmissionCheckRejected", 'Deactivated due to AdmissionCheck in Rejected state: "check"'),
        ),
    ),
    (
        "admitted workload with rejected checks gets deactivated, with message",
        Eviction(
            (check("check", CHECK_REJECTED, "quota exceeded"),),
            True,
            'AdmissionCheck in Rejected state: "check" (quota exceeded)',
            (
                "AdmissionCheckRejected",
                'Deactivated due to AdmissionCheck in Rejected state: "check" (quota exceeded)',
            ),
        ),
    ),
    # the workload already carries its DeactivationTarget (the AdmissionCheckRejected event was the earlier
    # reconcile's): evicted as deactivated, its checks reset, the Retry one with retryCount 1
    (
        "workload with deactivation target condition should be deactivated and admission checks reset",
        Eviction(
            (check("check-1", CHECK_REJECTED), check("check-2", CHECK_RETRY)),
            True,
            'AdmissionCheck in Rejected state: "check-1"',
            None,
            (
                check("check-1", message=RESET.format(CHECK_REJECTED)),
                check("check-2", message=RESET.format(CHECK_RETRY), retry_count=1),
            ),
            want_evicted=(
                "DeactivatedDueToAdmissionCheck",
                'The workload is deactivated due to AdmissionCheck in Rejected state: "check-1"',
            ),
        ),
    ),
    (
        "workload with retry checks should be evicted and checks should be pending",
        Eviction(
            (check("check-1", CHECK_RETRY), check("check-2", CHECK_READY)),
            False,
            RETRY_EVICTED,
            ("EvictedDueToAdmissionCheck", RETRY_EVICTED),
            (
                check("check-1", message=RESET.format(CHECK_RETRY), retry_count=1),
                check("check-2", message=RESET.format(CHECK_READY)),
            ),
            UNSATISFIED_CHECKS,
        ),
    ),
    (
        "workload with retry checks and unhealthy nodes should be evicted and checks should be pending",
        Skip(UNHEALTHY_NODES),
    ),
    (
        "workload with retry checks should be evicted and checks should be pending, with message",
        Eviction(
            (
                check("check-1", CHECK_RETRY, "infrastructure not prepared"),
                check("check-2", CHECK_READY),
                check("check-3", CHECK_RETRY, "budget exhausted"),
            ),
            False,
            RETRY_TWO,
            ("EvictedDueToAdmissionCheck", RETRY_TWO),
            (
                check("check-1", message=RESET.format(CHECK_RETRY), retry_count=1),
                check("check-2", message=RESET.format(CHECK_READY)),
                check("check-3", message=RESET.format(CHECK_RETRY), retry_count=1),
            ),
            UNSATISFIED_CHECKS,
        ),
    ),
    ("trigger deactivation of workload when reaching backoffLimitCount", Skip(PODS_READY_LIMIT)),
]


@pytest.mark.parametrize("case", cases("TestReconcileEviction", RECONCILE_EVICTION, 1))
def test_reconcile_eviction(case: Eviction) -> None:
    got = check_based_eviction(case.checks)
    assert got is not None
    assert (got.deactivated, got.condition_message) == (case.want_deactivated, case.want_message)
    if case.want_event is not None:
        assert got.event == case.want_event
    if case.want_deactivated:
        assert got.scheduling_stats == (DEACTIVATED, EVICTED_BY_ADMISSION_CHECK)
        if case.want_evicted is not None:
            assert got.evicted == case.want_evicted
    else:
        assert got.evicted == (EVICTED_BY_ADMISSION_CHECK, case.want_message)
        assert got.scheduling_stats == (EVICTED_BY_ADMISSION_CHECK, None)
    if case.want_checks:
        reset = reset_on_eviction(case.checks, NOW)
        assert _same(reset, case.want_checks)
        assert all(c.last_transition_s == NOW for c in reset)
        if not case.want_deactivated:
            assert admitted_condition(True, reset) == case.want_admitted
    elif case.want_admitted is not None:
        # the deactivation's patch syncs the Admitted condition of a workload not yet admitted
        assert admitted_condition(True, case.checks) == case.want_admitted


# -- TestReconcileRequeue -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RequeueAt:
    """A workload's Retry checks and its ``requeueState.requeueAt`` (None: none), and the ``requeueAt`` it
    ends with."""

    checks: tuple[CheckState, ...]
    requeue_at: float | None
    want: float | None


RECONCILE_REQUEUE: list[tuple[str, RequeueAt | float | None]] = [
    # the Requeued condition itself is not modelled: its counterpart is whether the workload still waits out
    # its backoff (the row's value: its requeueAt, the wait upstream's RequeueAfter gives)
    ("should keep the WorkloadRequeued condition until the AdmissionCheck backoff expires", NOW + 60),
    ("should set the WorkloadRequeued condition when the AdmissionCheck backoff expires", None),
    (
        "should update requeueState.requeueAt when admission check sets a delay",
        RequeueAt((check("check", CHECK_RETRY, requeue_after_s=10),), NOW + 5, NOW + 10),
    ),
    (
        "should not update requeueState.requeueAt when admission check delay is smaller",
        RequeueAt((check("check", CHECK_RETRY, requeue_after_s=5),), NOW + 10, None),
    ),
    # upstream's table ignores requeueAt's value (workloadCmpOpts) and shows now+10; the biggest delay is 7
    (
        "should always use the biggest admission check delay",
        RequeueAt(
            (
                check("check1", CHECK_RETRY, requeue_after_s=5),
                check("check2", CHECK_RETRY, requeue_after_s=7),
            ),
            None,
            NOW + 7,
        ),
    ),
    (
        "should use the biggest total time not the biggest RequeueAfterSeconds",
        RequeueAt(
            (
                check("check1", CHECK_RETRY, requeue_after_s=5, at=NOW + 10),
                check("check2", CHECK_RETRY, requeue_after_s=10),
            ),
            None,
            NOW + 15,
        ),
    ),
]


@pytest.mark.parametrize("case", cases("TestReconcileRequeue", RECONCILE_REQUEUE, 1))
def test_reconcile_requeue(case: RequeueAt | float | None) -> None:
    if not isinstance(case, RequeueAt):
        expired = case is None
        assert backoff_expired(case, NOW) == expired
        if case is not None:
            assert case - NOW == 60.0  # RequeueAfter: time.Minute
        return
    assert requeue_at_update(case.checks, case.requeue_at, NOW) == case.want


# -- TestSyncAdmittedCondition ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Admitted:
    """The workload's ``QuotaReserved`` condition's status (None: none), its checks and its ``Admitted``
    condition (None: none); the ``Admitted`` condition it ends with (None: none) and whether it changed."""

    reserved: bool | None
    checks: tuple[CheckState, ...]
    current: AdmittedCondition | None
    want: AdmittedCondition | None
    want_change: bool


#: a condition as upstream's input gives it: a status, no reason nor message
TRUE = AdmittedCondition(True, "", "")
READY_READY = (check("check1", CHECK_READY), check("check2", CHECK_READY))
READY_PENDING = (check("check1", CHECK_READY), check("check2"))
PENDING_READY = (check("check1"), check("check2", CHECK_READY))

SYNC_ADMITTED: list[tuple[str, Admitted | Skip]] = [
    ("empty", Admitted(None, (), None, None, False)),
    ("reservation no checks", Admitted(True, (), None, ADMITTED, True)),
    ("reservation, checks not ready", Admitted(True, PENDING_READY, None, UNSATISFIED_CHECKS, True)),
    ("reservation, checks ready", Admitted(True, READY_READY, None, ADMITTED, True)),
    ("reservation lost", Admitted(None, READY_READY, TRUE, NO_RESERVATION, True)),
    ("check lost", Admitted(True, READY_PENDING, TRUE, UNSATISFIED_CHECKS, True)),
    ("reservation and check lost", Admitted(None, READY_PENDING, TRUE, NO_RESERVATION, True)),
    ("reservation lost with past admitted time (set)", Skip(PAST_EXECUTION)),
    ("reservation lost with past admitted time (add)", Skip(PAST_EXECUTION)),
    ("pending delayed topology request; flip from Admitted=true", Skip(DELAYED_TOPOLOGY)),
    ("pending delayed topology request; already Admitted=false", Skip(DELAYED_TOPOLOGY)),
    (
        "reservation, checks not ready with observability",
        Admitted(True, PENDING_READY, None, UNSATISFIED_CHECKS, True),
    ),
    ("reservation lost with observability", Admitted(None, READY_READY, TRUE, NO_RESERVATION, True)),
    ("check lost with observability", Admitted(True, READY_PENDING, TRUE, UNSATISFIED_CHECKS, True)),
    (
        "reservation and check lost with observability",
        Admitted(None, READY_PENDING, TRUE, NO_RESERVATION, True),
    ),
    ("no reservation, no condition initially", Admitted(None, (check("check1"),), None, None, False)),
]


@pytest.mark.parametrize("case", cases("TestSyncAdmittedCondition", SYNC_ADMITTED, 1))
def test_sync_admitted_condition(case: Admitted) -> None:
    got = admitted_condition(case.reserved, case.checks, case.current)
    assert got == case.want
    assert (got is not None and got != case.current) == case.want_change


def test_the_admitted_condition_messages_are_upstreams() -> None:
    """``SyncAdmittedCondition``'s messages (upstream's table ignores them)."""
    assert (ADMITTED.message, NO_RESERVATION.message, UNSATISFIED_CHECKS.message) == (
        "The workload is admitted",
        "The workload has no reservation",
        "The workload has not all checks ready",
    )


# -- TestGetMaxRetryTime ------------------------------------------------------------------------------------
BASE = 500.0

GET_MAX_RETRY_TIME: list[tuple[str, tuple[tuple[CheckState, ...], float | None] | Skip]] = [
    ("no admission checks", ((), None)),
    ("admission check with nil RequeueAfterSeconds", ((check("check1", CHECK_RETRY, at=BASE),), None)),
    ("admission check with zero LastTransitionTime", Skip(ZERO_TIME)),
    (
        "single admission check with valid retry time",
        ((check("check1", CHECK_RETRY, requeue_after_s=60, at=BASE),), BASE + 60),
    ),
    (
        "multiple admission checks, returns max retry time",
        (
            (
                check("check1", CHECK_RETRY, requeue_after_s=60, at=BASE),
                check("check2", CHECK_RETRY, requeue_after_s=120, at=BASE),
                check("check3", CHECK_RETRY, requeue_after_s=30, at=BASE),
            ),
            BASE + 120,
        ),
    ),
    ("multiple checks with mixed nil and valid values", Skip(ZERO_TIME)),
    (
        "checks with different base times",
        (
            (
                check("check1", CHECK_RETRY, requeue_after_s=60, at=BASE),
                check("check2", CHECK_RETRY, requeue_after_s=60, at=BASE + 30),
            ),
            BASE + 90,
        ),
    ),
]


@pytest.mark.parametrize("case", cases("TestGetMaxRetryTime", GET_MAX_RETRY_TIME, 1))
def test_get_max_retry_time(case: tuple[tuple[CheckState, ...], float | None]) -> None:
    checks, want = case
    assert retry_time(checks) == want
