"""Kueue's admission checks and its ProvisioningRequest admission check controller, as pure functions.

After ``kubernetes-sigs/kueue`` (``pkg/workload/admissionchecks.go``, ``pkg/workload/workload.go``,
``pkg/controller/core/workload_controller.go``, ``pkg/workload/evict/evict.go`` and
``pkg/controller/admissionchecks/provisioning/{controller,provisioning}.go``):

* ``checks_for_workload`` -- ``AdmissionChecksForWorkload``: with an admission, the checks of the workload's
  ClusterQueue whose flavors (a rule's ``onFlavors``, else every flavor of the queue: ``NewAdmissionChecks``)
  meet the flavors it was assigned; without one, those covering every flavor of the queue;
  ``sync_check_list`` -- ``syncAdmissionCheckConditions``: the workload's check states for those checks;
* a workload with checks gets ``QuotaReserved`` and is ``Admitted`` only once every check is ``Ready``
  (``admitted_condition``: ``SyncAdmittedCondition``); one ``Retry`` evicts it (reason ``AdmissionCheck``, its
  checks reset to ``Pending``, a Retry one with its ``retryCount`` incremented: ``resetChecksOnEviction``)
  and it waits out the check's ``requeueAfterSeconds`` (``requeue_at_update``: ``NeedsRequeueAtUpdate``); one
  ``Rejected`` deactivates it (``check_based_eviction``: ``reconcileCheckBasedEviction``);
* the ProvisioningRequest controller names its request ``<workload>-<check>-<attempt>``
  (``ProvisioningRequestName``; past 252 characters, cut and suffixed by a hash: ``limitObjectName``), makes
  one PodTemplate ``ppt-<request>-<podset>`` per pod set that uses a managed resource and has pods
  (``requiredPodSets``, ``mergePodSets``), asks for a new attempt when the last one ``Failed`` (or its booking
  expired before admission) while the check is ``Pending`` (``syncOwnedProvisionRequest``), and sets the
  check's state from the request's conditions (``syncCheckStates``): ``Failed`` -> Retry with a backoff of
  ``backoffBaseSeconds * 2^(n-1)`` capped at ``backoffMaxSeconds`` (``UpdateAdmissionCheckRequeueState``;
  upstream's 0.01% jitter left out) while the attempt is at most ``backoffLimitCount``, else Rejected;
  ``CapacityRevoked`` -> Rejected; ``BookingExpired`` before admission -> as ``Failed``; ``Provisioned`` ->
  Ready, the pods annotated with the request and its class (``podSetUpdates``); ``Accepted`` -> Pending with
  the ``Provisioned`` condition's message.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from gpufleet.model.kueue import (
    CHECK_PENDING,
    CHECK_READY,
    CHECK_REJECTED,
    CHECK_RETRY,
    DEACTIVATED,
    EVICTED_BY_ADMISSION_CHECK,
    ClusterQueue,
    ProvisioningRequestConfig,
)
from gpufleet.model.provisioning_request import ProvisioningRequest
from gpufleet.scheduling.kueue.pods_ready import requeue_backoff_s

#: ``constants.go``
CHECK_INACTIVE_MESSAGE = "the check is not active"
NO_REQUEST_NEEDED = "the provisioning request is not needed"
#: gpufleet's word on a check whose controller it does not run: it stays Pending
NOT_MODELLED_MESSAGE = 'the check\'s controller "{}" is not modelled by gpufleet: the check stays Pending'
#: the ProvisioningRequest conditions the controller reads (``autoscaling.x-k8s.io/v1``)
PROVISIONED, ACCEPTED, FAILED, BOOKING_EXPIRED, CAPACITY_REVOKED = (
    "Provisioned",
    "Accepted",
    "Failed",
    "BookingExpired",
    "CapacityRevoked",
)
#: the pod annotations of a Ready check's ``podSetUpdates`` (``ProvisioningRequestPodAnnotationKey``,
#: ``ProvisioningClassPodAnnotationKey``)
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS_ANNOTATION = "autoscaling.x-k8s.io/provisioning-class-name"
#: a workload annotation with this prefix is passed on as a request parameter (``passProvReqParams``)
PROVREQ_ANNOTATION_PREFIX = "provreq.kueue.x-k8s.io/"
POD_TEMPLATES_PREFIX = "ppt"
_HASH_LENGTH = 5
_MAX_PREFIX = 252 - _HASH_LENGTH
#: the Admitted condition while a check is not Ready (``SyncAdmittedCondition``)
NOT_ALL_CHECKS_READY = "The workload has not all checks ready"
#: the workload controller's ``Admitted`` event when the last check turns Ready (``Reconcile``): the queue and
#: the seconds since quota was reserved
ADMITTED_EVENT = "Admitted by ClusterQueue {}, wait time since reservation was {:.0f}s"
#: the ``Evicted`` condition's message of a deactivated workload, before `` due to <why>`` (``Reconcile``)
WORKLOAD_DEACTIVATED = "The workload is deactivated"
#: the scheduler's word on a head with a Retry or Rejected check (``nominate``)
FAILED_CHECKS = "The workload has failed admission checks"


class InconsistentAssignments(ValueError):
    """``errInconsistentPodSetAssignments``: a pod set that needs a request has no assignment."""


@dataclass(frozen=True)
class PodSetUpdate:
    """``PodSetUpdate``: what a Ready check adds to its pod set's pods."""

    name: str
    annotations: Mapping[str, str]


@dataclass(frozen=True)
class CheckState:
    """``AdmissionCheckState``: a check of one workload."""

    name: str
    state: str = CHECK_PENDING
    message: str = ""
    retry_count: int = 0  # ``retryCount`` (nil: 0)
    requeue_after_s: float | None = None  # ``requeueAfterSeconds``
    last_transition_s: float = 0.0
    pod_set_updates: tuple[PodSetUpdate, ...] = ()


@dataclass(frozen=True)
class PodSetNeed:
    """One pod set of the workload as the controller reads it: its spec ``count``, its assignment's count
    (``admitted``; None: it has no assignment) and the resources its containers request or limit."""

    name: str
    count: int
    admitted: int | None
    resources: frozenset[str] = field(default_factory=frozenset)


def limit_object_name(full: str) -> str:
    """``limitObjectName``: a name of more than 247 characters is cut there and suffixed with ``-`` and the
    first 5 hex digits of its SHA-1."""
    if len(full) <= _MAX_PREFIX:
        return full
    digest = hashlib.sha1(full.encode()).hexdigest()
    return f"{full[:_MAX_PREFIX]}-{digest[:_HASH_LENGTH]}"


def provisioning_request_name(workload: str, check: str, attempt: int) -> str:
    """``ProvisioningRequestName``: ``<workload>-<check>-<attempt>``."""
    return limit_object_name(f"{workload}-{check}-{attempt}")


def pod_template_name(request: str, pod_set: str) -> str:
    """``getProvisioningRequestPodTemplateName``: ``ppt-<request>-<podset>``."""
    return limit_object_name(f"{POD_TEMPLATES_PREFIX}-{request}-{pod_set}")


def attempt_of(request: str, workload: str, check: str) -> int | None:
    """``getAttempt``: the attempt a request's name ends with, when it is one of this workload's and
    check's (``matchesWorkloadAndCheck``); None when it is not."""
    prefix = limit_object_name(f"{workload}-{check}-")
    found = re.fullmatch(re.escape(prefix) + r"([0-9]+)", request)
    return None if found is None else int(found.group(1))


def check_flavors(cq: ClusterQueue) -> dict[str, frozenset[str]]:
    """``NewAdmissionChecks``: each check of the queue and the flavors it runs for (its ``onFlavors``,
    else every flavor of the queue)."""
    every = frozenset(cq.flavor_names())
    return {name: frozenset(on) if on else every for name, on in cq.admission_checks}


def checks_for_admission(cq: ClusterQueue, assigned: Iterable[str]) -> tuple[str, ...]:
    """``admissionChecksForAdmission``: the checks whose flavors meet the flavors assigned, by name."""
    flavors = set(assigned)
    return tuple(sorted(name for name, on in check_flavors(cq).items() if on & flavors))


def checks_for_workload(cq: ClusterQueue, assigned: Iterable[str] | None) -> tuple[str, ...]:
    """``AdmissionChecksForWorkload``: with an admission (the flavors ``assigned``), the checks for those
    flavors (``checks_for_admission``); without one (None), only the checks that cover every flavor of the
    queue, by name."""
    if assigned is not None:
        return checks_for_admission(cq, assigned)
    every = frozenset(cq.flavor_names())
    return tuple(sorted(name for name, on in check_flavors(cq).items() if on >= every))


def sync_check_list(
    states: Sequence[CheckState], names: Iterable[str], now: float
) -> tuple[tuple[CheckState, ...], bool]:
    """``syncAdmissionCheckConditions``: the workload's check states for the checks ``names``: each one it
    has kept as it is, each one missing added ``Pending`` (transition ``now``), the others dropped, sorted by
    name; and whether anything was added or dropped."""
    wanted = set(names)
    if not wanted:
        return (), bool(states)
    have = {s.name for s in states}
    added = [CheckState(n, CHECK_PENDING, last_transition_s=now) for n in sorted(wanted - have)]
    kept = [s for s in states if s.name in wanted]
    out = tuple(sorted([*kept, *added], key=lambda s: s.name))
    return out, bool(added) or len(kept) < len(states)


def all_checks_ready(checks: Iterable[CheckState]) -> bool:
    """``HasAllChecksReady``: every check Ready (true without any)."""
    return all(c.state == CHECK_READY for c in checks)


def has_all_required_checks(checks: Iterable[CheckState], required: Iterable[str]) -> bool:
    """``HasAllRequiredChecks``: each check the admission needs is among the workload's (in any state)."""
    return set(required) <= {c.name for c in checks}


@dataclass(frozen=True)
class AdmittedCondition:
    """The workload's ``Admitted`` condition: its status, reason and message."""

    status: bool
    reason: str
    message: str


#: ``SyncAdmittedCondition``'s conditions, with Kueue's default gates (``UnadmittedWorkloadsObservability``
#: on: ``kueue.WorkloadAdmittedReason*``; ``UnadmittedWorkloadsExplicitStatus`` off)
ADMITTED = AdmittedCondition(True, "Admitted", "The workload is admitted")
NO_RESERVATION = AdmittedCondition(False, "NoReservation", "The workload has no reservation")
UNSATISFIED_CHECKS = AdmittedCondition(False, "UnsatisfiedAdmissionChecks", NOT_ALL_CHECKS_READY)


def admitted_condition(
    reserved: bool | None, checks: Iterable[CheckState], current: AdmittedCondition | None = None
) -> AdmittedCondition | None:
    """``SyncAdmittedCondition`` with Kueue's default gates: the ``Admitted`` condition a workload should
    carry, given its ``QuotaReserved`` condition's status (``reserved``; None: it has none), its checks and
    its ``Admitted`` condition (``current``; None: none). None while it has neither condition (both are left
    absent, ``UnadmittedWorkloadsExplicitStatus`` being off). True when quota is reserved and every check is
    Ready; else ``NoReservation`` without a reservation (checks or not), else ``UnsatisfiedAdmissionChecks``
    (``The workload has not all checks ready``). Delayed topology requests are not modelled."""
    if reserved is None and current is None:
        return None
    if reserved is not True:
        return NO_RESERVATION
    if not all_checks_ready(checks):
        return UNSATISFIED_CHECKS
    return ADMITTED


@dataclass(frozen=True)
class CheckEviction:
    """What ``reconcileCheckBasedEviction`` does to a workload with Rejected or Retry checks.

    ``deactivated``: a Rejected check deactivates it (``spec.active: false``, the ``DeactivationTarget``
    condition of reason ``AdmissionCheck`` and message ``condition_message``), else a Retry check evicts it
    (the ``Evicted`` condition's message is ``condition_message``). ``event``: the controller's event
    (reason, message); ``evicted``: the ``Evicted`` condition it ends with (reason, message);
    ``scheduling_stats``: the eviction as ``schedulingStats.evictions`` counts it (reason, underlying
    cause, None: none)."""

    deactivated: bool
    condition_message: str
    event: tuple[str, str]
    evicted: tuple[str, str]
    scheduling_stats: tuple[str, str | None]


def check_based_eviction(checks: Sequence[CheckState]) -> CheckEviction | None:
    """``reconcileCheckBasedEviction`` (and the deactivation it leads to in ``Reconcile``): None without a
    Rejected or Retry check; Rejected checks first, the message naming them
    (``buildAdmissionChecksMessage``)."""
    rejected = [c for c in checks if c.state == CHECK_REJECTED]
    if rejected:
        message = checks_message(rejected, CHECK_REJECTED)
        return CheckEviction(
            True,
            message,
            ("AdmissionCheckRejected", f"Deactivated due to {message}"),
            (
                f"{DEACTIVATED}DueTo{EVICTED_BY_ADMISSION_CHECK}",
                f"The workload is deactivated due to {message}",
            ),
            (DEACTIVATED, EVICTED_BY_ADMISSION_CHECK),
        )
    retry = [c for c in checks if c.state == CHECK_RETRY]
    if not retry:
        return None
    message = f"Evicted due to {checks_message(retry, CHECK_RETRY)}"
    return CheckEviction(
        False,
        message,
        (f"EvictedDueTo{EVICTED_BY_ADMISSION_CHECK}", message),
        (EVICTED_BY_ADMISSION_CHECK, message),
        (EVICTED_BY_ADMISSION_CHECK, None),
    )


def _uses(pod_set: PodSetNeed, managed: Sequence[str]) -> bool:
    return not managed or bool(pod_set.resources & set(managed))


def _required(pod_sets: Sequence[PodSetNeed], managed: Sequence[str]) -> Iterator[tuple[str, int]]:
    """``requiredPodSets``, lazily: each pod set with pods that uses a managed resource (any, when none is
    listed), with its assignment's count (else its spec's), those whose assignment has no pods left out;
    raises ``InconsistentAssignments`` on reaching such a pod set without an assignment."""
    for ps in pod_sets:
        if ps.count <= 0 or not _uses(ps, managed):
            continue
        if ps.admitted is None:
            raise InconsistentAssignments(f"missing assignment for PodSet {ps.name!r}")
        if ps.admitted > 0:
            yield ps.name, ps.admitted


def request_needed(pod_sets: Sequence[PodSetNeed], managed: Sequence[str]) -> bool:
    """``reqIsNeeded``: some pod set is required (``_required``); the search stops at the first, so a pod set
    without an assignment after it raises nothing."""
    return next(_required(pod_sets, managed), None) is not None


def merged_pod_sets(pod_sets: Sequence[PodSetNeed], managed: Sequence[str]) -> list[tuple[str, int]]:
    """``mergePodSets`` without a ``podSetMergePolicy``: every required pod set (``_required``)."""
    return list(_required(pod_sets, managed))


def request_parameters(config: ProvisioningRequestConfig, annotations: Mapping[str, str]) -> dict[str, str]:
    """The request's ``parameters``: the config's, then each workload annotation
    ``provreq.kueue.x-k8s.io/<name>`` as ``<name>`` (``passProvReqParams``)."""
    out = dict(config.parameters)
    for key, value in sorted(annotations.items()):
        if key.startswith(PROVREQ_ANNOTATION_PREFIX):
            out[key[len(PROVREQ_ANNOTATION_PREFIX) :]] = value
    return out


def synced_with_config(request: ProvisioningRequest, config: ProvisioningRequestConfig) -> bool:
    """``provReqSyncedWithConfig``: the config's class and every one of its parameters."""
    if request.class_name != config.class_name:
        return False
    return all(request.parameters.get(k) == v for k, v in config.parameters.items())


def active_or_last(
    requests: Iterable[ProvisioningRequest], workload: str, check: str, config: ProvisioningRequestConfig
) -> ProvisioningRequest | None:
    """``activeOrLastPRForChecks``: of the workload's requests for the check (``matchesWorkloadAndCheck``)
    in sync with the config (``provReqSyncedWithConfig``), the one of the highest attempt; the first of
    equal attempts."""
    best: tuple[int, ProvisioningRequest] | None = None
    for request in requests:
        attempt = attempt_of(request.name, workload, check)
        if attempt is None or not synced_with_config(request, config):
            continue
        if best is None or best[0] < attempt:
            best = (attempt, request)
    return None if best is None else best[1]


def next_attempt(
    state: CheckState | None, last: ProvisioningRequest | None, workload: str, admitted: bool
) -> int | None:
    """``syncOwnedProvisionRequest``: the attempt of the request to create now, or None. None while the
    check is Ready; without a request, the check's ``retryCount + 1``; after one that ``Failed`` (or whose
    booking expired before admission) while the check is Pending, the next attempt."""
    if state is not None and state.state == CHECK_READY:
        return None
    if last is None:
        return (state.retry_count if state is not None else 0) + 1
    over = last.is_true(FAILED) or (last.is_true(BOOKING_EXPIRED) and not admitted)
    if over and state is not None and state.state == CHECK_PENDING:
        return (attempt_of(last.name, workload, state.name) or 1) + 1
    return None


def _condition_message(request: ProvisioningRequest, kind: str) -> str:
    found = request.condition(kind)
    return "" if found is None else found.message


def _retry_or_reject(
    state: CheckState, attempt: int, config: ProvisioningRequestConfig, prefix: str, message: str
) -> CheckState:
    """A failed attempt: Retry (with the next backoff) while it is at most ``backoffLimitCount``, else
    Rejected with the condition's message. A check already Retry for a later attempt keeps its state."""
    if attempt > config.retry.backoff_limit_count:
        return replace(state, state=CHECK_REJECTED, message=message)
    state = replace(state, message=f"{prefix}: {message}")
    if attempt > state.retry_count:
        wait = requeue_backoff_s(
            state.retry_count + 1, config.retry.backoff_base_s, config.retry.backoff_max_s
        )
        state = replace(state, state=CHECK_RETRY, requeue_after_s=float(int(wait)))
    return state


def sync_check(
    state: CheckState,
    config: ProvisioningRequestConfig | None,
    needed: bool,
    request: ProvisioningRequest | None,
    workload: str,
    admitted: bool,
    finished: bool = False,
    active: bool = True,
) -> CheckState | None:
    """``syncCheckStates`` for one check: its new state (its transition time as given; the caller stamps
    a change), or None when the controller waits (a request is needed and none exists yet)."""
    if config is None:
        return replace(state, state=CHECK_PENDING, message=CHECK_INACTIVE_MESSAGE)
    if not needed:
        if state.state != CHECK_READY:
            return replace(state, state=CHECK_READY, message=NO_REQUEST_NEEDED, pod_set_updates=())
        return state
    if request is None:
        return None
    attempt = attempt_of(request.name, workload, state.name) or 1
    if request.is_true(FAILED):
        return _retry_or_reject(
            state, attempt, config, "Retrying after failure", _condition_message(request, FAILED)
        )
    if request.is_true(CAPACITY_REVOKED):
        if active and not finished:
            return replace(state, state=CHECK_REJECTED, message=_condition_message(request, CAPACITY_REVOKED))
        return state
    if request.is_true(BOOKING_EXPIRED):
        if admitted:
            return state
        message = _condition_message(request, BOOKING_EXPIRED)
        return _retry_or_reject(state, attempt, config, "Retrying after booking expired", message)
    if request.is_true(PROVISIONED):
        if state.state != CHECK_READY:
            updates = tuple(
                PodSetUpdate(name, {CONSUME_ANNOTATION: request.name, CLASS_ANNOTATION: request.class_name})
                for name in _pod_sets_of(request)
            )
            return replace(
                state,
                state=CHECK_READY,
                message=_condition_message(request, PROVISIONED),
                pod_set_updates=updates,
            )
        return state
    if request.is_true(ACCEPTED):
        provisioned = request.condition(PROVISIONED)
        if provisioned is not None:
            return replace(state, state=CHECK_PENDING, message=provisioned.message)
        return state
    return replace(state, state=CHECK_PENDING, message="")


def _pod_sets_of(request: ProvisioningRequest) -> list[str]:
    """The workload's pod set each of the request's PodTemplates stands for (``ppt-<request>-<podset>``)."""
    prefix = f"{POD_TEMPLATES_PREFIX}-{request.name}-"
    return [
        ps.template[len(prefix) :] if ps.template.startswith(prefix) else ps.template
        for ps in request.pod_sets
    ]


def update_event(old: CheckState, new: CheckState) -> str | None:
    """The ``AdmissionCheckUpdated`` event of a state change: ``Admission check <name> updated state from
    <old> to <new>`` and `` with message: <message>`` when it has one."""
    if old.state == new.state:
        return None
    message = f"Admission check {new.name} updated state from {old.state} to {new.state}"
    return message + (f" with message: {new.message}" if new.message else "")


def checks_message(checks: Sequence[CheckState], state: str) -> str:
    """``buildAdmissionChecksMessage``: ``AdmissionCheck(s) in <state> state: "<name>" (<message>); ...``, the
    checks sorted by name."""
    ordered = sorted(checks, key=lambda c: c.name)
    parts = [f'"{c.name}" ({c.message})' if c.message else f'"{c.name}"' for c in ordered]
    noun = "AdmissionChecks" if len(checks) > 1 else "AdmissionCheck"
    return f"{noun} in {state} state: {'; '.join(parts)}"


def reset_on_eviction(checks: Sequence[CheckState], now: float) -> tuple[CheckState, ...]:
    """``resetChecksOnEviction``: every check not Pending becomes Pending (``Reset to Pending after eviction.
    Previously: <state>``), a Retry one with its ``retryCount`` incremented, any other with none; its
    ``requeueAfterSeconds`` kept."""
    out = []
    for c in checks:
        if c.state == CHECK_PENDING:
            out.append(c)
            continue
        count = c.retry_count + 1 if c.state == CHECK_RETRY else 0
        out.append(
            CheckState(
                c.name,
                CHECK_PENDING,
                f"Reset to Pending after eviction. Previously: {c.state}",
                count,
                c.requeue_after_s,
                now,
            )
        )
    return tuple(out)


def retry_time(checks: Sequence[CheckState]) -> float | None:
    """``GetMaxRetryTime``: the latest end of a Retry check's ``requeueAfterSeconds``, or None."""
    times = [
        c.last_transition_s + c.requeue_after_s
        for c in checks
        if c.state == CHECK_RETRY and c.requeue_after_s is not None
    ]
    return max(times) if times else None


def requeue_at_update(checks: Sequence[CheckState], requeue_at: float | None, now: float) -> float | None:
    """``NeedsRequeueAtUpdate``: the workload's new ``requeueState.requeueAt``, the latest end of its Retry
    checks' waits (``retry_time``), when that is after ``now`` and after its ``requeueAt`` (if any); else None
    (left as it is)."""
    latest = retry_time(checks)
    if latest is None or latest <= now:
        return None
    if requeue_at is not None and requeue_at >= latest:
        return None
    return latest
