"""cluster-autoscaler's ProvisioningRequests (``autoscaling.x-k8s.io/v1``), as pure functions.

A ProvisioningRequest asks for room for its pods (``spec.podSets``: a PodTemplate and a count each) all at
once. cluster-autoscaler 1.34 (``provisioningrequest/``) handles two classes:

- ``check-capacity.autoscaling.x-k8s.io`` (``checkcapacity.checkCapacityProvClass.checkCapacity``): if every
  pod fits on the nodes there are (upcoming ones counted), ``Provisioned`` true (``CapacityIsFound``);
  else ``Provisioned`` false (``CapacityIsNotFound``, "Capacity is not found, CA will try to find it later."),
  or with the parameter ``noRetry: "true"`` ``Failed`` true ("CA could not find requested capacity").
- ``best-effort-atomic-scale-up.autoscaling.x-k8s.io`` (``besteffortatomic.bestEffortAtomicProvClass``): the
  pods that fit on the nodes there are need nothing (all of them: ``Provisioned`` true, ``CapacityIsFound``,
  ``ScaleUpNotNeeded``); for the others one scale-up that takes them all or none (``allOrNothing``): done,
  ``Provisioned`` true (``CapacityIsProvisioned``); else ``Provisioned`` false (``CapacityIsNotFound``).

Every check-capacity request processed is ``Accepted`` first. A class neither names (or a request whose
``Failed`` or ``BookingExpired`` is true) is not processed: ``ScaleUpNotTried``.

The capacity of a request ``Provisioned`` true is booked for 10 minutes after that condition's transition
(``processors/provreq``' ``defaultReservationTime``, a constant: cluster-autoscaler 1.34 has no flag for it):
its pods are placed in the scale-up snapshot before any other pod (``bookCapacity``) so no other pod takes it
and scale-down keeps it; then ``BookingExpired`` true (``CapacityReservationTimeExpired``). A request not
provisioned 7 days after its creation is ``Failed`` (``Expired``), and one whose ``Provisioned`` or ``Failed``
condition is 7 days old is deleted (``refresh``, ``DeleteOldProvReqs``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from gpufleet.autoscaling.cluster_autoscaler import ScaleUp, ScaleUpRequest, scale_up
from gpufleet.autoscaling.expendable import DEFAULT_CUTOFF, expendable_on
from gpufleet.autoscaling.scale_up import PoolOption, ScaleUpSnapshot
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.provisioning_request import (
    BEST_EFFORT_ATOMIC,
    CHECK_CAPACITY,
    Condition,
    PodSet,
    ProvisioningRequest,
)
from gpufleet.scheduling.profile import Profile

__all__ = ["BEST_EFFORT_ATOMIC", "CHECK_CAPACITY", "Condition", "PodSet", "ProvisioningRequest"]

#: the pod annotations that tie a pod to the request it consumes, and the request's class
#: (``ProvisioningRequestPodAnnotationKey``, ``ProvisioningClassPodAnnotationKey``)
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS_ANNOTATION = "autoscaling.x-k8s.io/provisioning-class-name"
#: ``DeprecatedProvisioningRequestPodAnnotationKey``, still read
DEPRECATED_CONSUME_ANNOTATION = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
#: ``maxProvReqEvent``: the consuming pods told why they trigger no scale-up, per loop
MAX_IGNORED_EVENTS = 50
#: cluster-autoscaler's ``CheckCapacityProcessorInstanceKey`` and ``NoRetryParameterKey`` parameters
PROCESSOR_INSTANCE = "processorInstance"
NO_RETRY = "noRetry"

ACCEPTED, PROVISIONED, FAILED, BOOKING_EXPIRED = "Accepted", "Provisioned", "Failed", "BookingExpired"

ACCEPTED_REASON, ACCEPTED_MSG = "Accepted", "ProvisioningRequest is accepted by ClusterAutoscaler"
CAPACITY_FOUND_REASON, CAPACITY_FOUND_MSG = "CapacityIsFound", "Capacity is found in the cluster"
CAPACITY_PROVISIONED_REASON = "CapacityIsProvisioned"
CAPACITY_PROVISIONED_MSG = "Capacity is found in the cluster"  # (upstream's CapacityIsProvisionedMsg)
CAPACITY_NOT_FOUND_REASON = "CapacityIsNotFound"
TRY_LATER_MSG = "Capacity is not found, CA will try to find it later."
NO_RETRY_MSG = "CA could not find requested capacity"
RESERVATION_EXPIRED_REASON = "CapacityReservationTimeExpired"
RESERVATION_EXPIRED_MSG = "Capacity reservation time is expired"
EXPIRED_REASON, EXPIRED_MSG = "Expired", "ProvisioningRequest is expired"

#: ``defaultReservationTime``, ``defaultExpirationTime``, ``defaultTerminalProvReqTTL`` (seconds)
RESERVATION_TIME_S = 10 * 60.0
EXPIRATION_TIME_S = 7 * 24 * 3600.0
TERMINAL_TTL_S = 7 * 24 * 3600.0
#: ``--provisioning-request-initial-backoff-time`` and ``--provisioning-request-max-backoff-time``' defaults
INITIAL_RETRY_S, MAX_RETRY_S = 60.0, 600.0
#: ``defaultMaxUpdated``: the requests ``refresh`` updates in one loop
MAX_UPDATED = 20


class Result(enum.Enum):
    """``status.ScaleUpResult``."""

    NOT_TRIED = "ScaleUpNotTried"
    NOT_NEEDED = "ScaleUpNotNeeded"
    SUCCESSFUL = "ScaleUpSuccessful"
    NO_OPTIONS = "ScaleUpNoOptionsAvailable"


def with_condition(
    request: ProvisioningRequest, kind: str, status: bool | None, reason: str, message: str, now: float
) -> ProvisioningRequest:
    """``conditions.AddOrUpdateCondition``: the condition of that type replaced in place, else appended (its
    transition time is now, whether or not its status changed, as upstream's); a type other than
    ``Provisioned``, ``BookingExpired``, ``Failed`` and ``Accepted`` changes nothing."""
    if kind not in (PROVISIONED, BOOKING_EXPIRED, FAILED, ACCEPTED):
        return request
    new = Condition(kind, status, reason, message, now)
    if request.condition(kind) is None:
        return replace(request, conditions=(*request.conditions, new))
    return replace(request, conditions=tuple(new if c.type == kind else c for c in request.conditions))


def supported_check_capacity(request: ProvisioningRequest, instance: str = "") -> bool:
    """``SupportedCheckCapacityClass`` (``--check-capacity-processor-instance`` ``instance``): without an
    instance, the class and no ``processorInstance`` parameter; with one, the parameter equal to it, or
    (deprecated) no parameter and the class prefixed by it."""
    named = request.parameters.get(PROCESSOR_INSTANCE, "")
    if not instance:
        return not named and request.class_name == CHECK_CAPACITY
    if named:
        return named == instance and request.class_name == CHECK_CAPACITY
    return request.class_name.startswith(instance) and request.class_name[len(instance) :] == CHECK_CAPACITY


def supported(request: ProvisioningRequest, instance: str = "") -> bool:
    """``SupportedProvisioningClass``: best-effort-atomic without a processor instance (an instance processes
    check-capacity only), or check-capacity for this processor instance."""
    if request.class_name == BEST_EFFORT_ATOMIC:
        return not instance
    return supported_check_capacity(request, instance)


def should_book(request: ProvisioningRequest, instance: str = "") -> bool:
    """``ShouldCapacityBeBooked``: a supported request ``Provisioned`` true, neither ``Failed`` nor
    ``BookingExpired``."""
    if not supported(request, instance) or request.is_true(FAILED) or request.is_true(BOOKING_EXPIRED):
        return False
    return request.is_true(PROVISIONED)


def pods_for(request: ProvisioningRequest) -> list[Pod]:
    """``PodsForProvisioningRequest``: each pod set's template ``count`` times, named
    ``<generateName><set>-<k>`` (``GetPodFromTemplate``'s ``generateName``: the request's name and ``-``), in
    the request's namespace, owned by it, annotated with the request and its class."""
    out = []
    for i, pod_set in enumerate(request.pod_sets):
        template = pod_set.pod
        annotations = {
            **template.annotations,
            CONSUME_ANNOTATION: request.name,
            CLASS_ANNOTATION: request.class_name,
        }
        for k in range(pod_set.count):
            out.append(
                replace(
                    template.renamed(f"{request.name}-{i}-{k}"),
                    namespace=request.namespace,
                    annotations=dict(annotations),
                    owner=OwnerRef("ProvisioningRequest", request.name),
                )
            )
    return out


def consumed_request(pod: Pod) -> str | None:
    """``provisioningRequestName``: the request a pod consumes (its annotation, or the deprecated one)."""
    name = pod.annotations.get(CONSUME_ANNOTATION)
    return pod.annotations.get(DEPRECATED_CONSUME_ANNOTATION) if name is None else name


def filter_consumers(
    pods: Sequence[Pod], limit: int = MAX_IGNORED_EVENTS
) -> tuple[list[Pod], list[tuple[str, str]]]:
    """``ProvisioningRequestPodsFilter.Process``: the unschedulable pods that consume no ProvisioningRequest
    (the others trigger no scale-up), and for the first ``limit`` of the others their key and their event's
    message (``LogIgnoredInScaleUpEvent``)."""
    kept: list[Pod] = []
    told: list[tuple[str, str]] = []
    for pod in pods:
        name = consumed_request(pod)
        if name is None:
            kept.append(pod)
        elif len(told) < limit:
            message = (
                "Unschedulable pod didn't trigger scale-up, because it's consuming ProvisioningRequest "
                f"{pod.namespace}/{name}"
            )
            told.append((pod.key, message))
    return kept, told


def refresh(
    requests: Sequence[ProvisioningRequest], now: float, instance: str = "", max_updated: int = MAX_UPDATED
) -> tuple[list[ProvisioningRequest], list[str]]:
    """``provReqProcessor.refresh``: each supported request ``Provisioned`` true whose transition is more than
    10 minutes old gets ``BookingExpired``; one not provisioned and created more than 7 days ago gets
    ``Failed`` (``Expired``), at most ``max_updated`` (``defaultMaxUpdated``, 20) in all; then the keys of
    those whose ``Provisioned`` or ``Failed`` condition is more than 7 days old, to delete
    (``DeleteOldProvReqs``)."""
    expired: set[str] = set()
    failed: set[str] = set()
    for r in requests:
        if len(expired) >= max_updated:
            break
        if not supported(r, instance) or r.is_true(BOOKING_EXPIRED) or r.is_true(FAILED):
            continue
        provisioned = r.condition(PROVISIONED)
        if provisioned is not None and provisioned.status:
            if provisioned.last_transition + RESERVATION_TIME_S < now:
                expired.add(r.key)
        elif len(failed) < max_updated - len(expired) and r.created + EXPIRATION_TIME_S < now:
            failed.add(r.key)
    out = []
    for r in requests:
        if r.key in expired:
            r = with_condition(
                r, BOOKING_EXPIRED, True, RESERVATION_EXPIRED_REASON, RESERVATION_EXPIRED_MSG, now
            )
        elif r.key in failed:
            r = with_condition(r, FAILED, True, EXPIRED_REASON, EXPIRED_MSG, now)
        out.append(r)
    old = [
        r.key
        for r in requests
        if any(
            c is not None and c.last_transition + TERMINAL_TTL_S < now
            for c in (r.condition(PROVISIONED), r.condition(FAILED))
        )
    ]
    return out, old


def available(request: ProvisioningRequest, now: float, retry_s: float = INITIAL_RETRY_S) -> bool:
    """``IsAvailableForProvisioning``: neither ``Failed`` nor ``Provisioned`` true; ``Provisioned`` false only
    once ``retry_s`` (``--provisioning-request-initial-backoff-time``, doubled at each retry up to
    ``--provisioning-request-max-backoff-time``: the caller's) has passed since its transition."""
    if request.is_true(FAILED) or request.is_true(PROVISIONED):
        return False
    provisioned = request.condition(PROVISIONED)
    if provisioned is None:
        return True
    return provisioned.status is False and provisioned.last_transition + retry_s < now


@dataclass(frozen=True)
class Injected:
    """``GetPodsFromNextRequest``: the request whose pods this loop's scale-up gets (None: none), every
    request (that one ``Accepted`` unless check-capacity batch processing takes it), and each request's next
    backoff."""

    chosen: ProvisioningRequest | None
    requests: tuple[ProvisioningRequest, ...]
    retry_s: Mapping[str, float]


def next_request(
    requests: Sequence[ProvisioningRequest],
    now: float,
    retry_s: Mapping[str, float] | None = None,
    batch: bool = False,
    instance: str = "",
    max_retry_s: float = MAX_RETRY_S,
) -> Injected:
    """``ProvisioningRequestPodsInjector.GetPodsFromNextRequest``: the first request of a supported class
    available for provisioning (``available``: a retried one's backoff doubles, up to ``max_retry_s``), marked
    ``Accepted`` unless it is check-capacity with ``batch`` processing (``shouldMarkAsAccepted``)."""
    backoff = dict(retry_s or {})
    for r in requests:
        if not supported(r, instance):
            continue
        if r.is_true(FAILED) or r.is_true(PROVISIONED):
            backoff.pop(r.key, None)
            continue
        wait = backoff.get(r.key, INITIAL_RETRY_S)
        if not available(r, now, wait):
            continue
        if r.condition(PROVISIONED) is not None:
            backoff[r.key] = min(2 * wait, max_retry_s)
        chosen = r
        if not (batch and supported_check_capacity(r, instance)):
            chosen = with_condition(r, ACCEPTED, True, ACCEPTED_REASON, ACCEPTED_MSG, now)
        return Injected(chosen, tuple(chosen if q.key == r.key else q for q in requests), backoff)
    return Injected(None, tuple(requests), backoff)


@dataclass(frozen=True)
class ProvisionRequest:
    """One ``provReqOrchestrator.ScaleUp``: the cluster, every ProvisioningRequest in it (the client's order),
    the request whose pods the injector gave (``chosen``, a key: ``GetPodsFromNextRequest``), the groups, and
    ``max_batch`` (``--check-capacity-provisioning-request-max-batch-size`` with
    ``--check-capacity-batch-processing``; 1: off)."""

    now: float
    state: ClusterState
    profile: Profile
    requests: Sequence[ProvisioningRequest]
    chosen: str | None
    options: Sequence[PoolOption] = ()
    max_batch: int = 1
    exclude: frozenset[int] = frozenset()
    backed_off: frozenset[str] = frozenset()
    expander: str = "random"
    rng: np.random.Generator | None = None
    resources_left: Mapping[str, int] | None = None
    nodes_left: int | None = None
    instance: str = ""  # --check-capacity-processor-instance
    retry_s: Mapping[str, float] | None = None  # each request's backoff (``available``)
    #: --expendable-pods-priority-cutoff: the snapshot has no scheduled pod of a lower priority
    #: (``autoscaling.expendable``; the requests' own pods, injected after ``filterOutExpendable``, are not
    #: filtered)
    expendable_cutoff: int = DEFAULT_CUTOFF


@dataclass(frozen=True)
class Provisioned:
    """What the orchestrator did: its result, every request with its new conditions, and the scale-up it asks
    for (best-effort-atomic only)."""

    result: Result
    requests: tuple[ProvisioningRequest, ...]
    scale_up: ScaleUp | None = None

    def request(self, key: str) -> ProvisioningRequest:
        return next(r for r in self.requests if r.key == key)


def booked_pods(requests: Sequence[ProvisioningRequest], instance: str = "") -> list[Pod]:
    """``bookCapacity``'s pods: those of every request whose capacity is booked (``should_book``)."""
    return [p for r in requests if should_book(r, instance) for p in pods_for(r)]


def booked_nodes(
    state: ClusterState,
    profile: Profile,
    requests: Sequence[ProvisioningRequest],
    exclude: frozenset[int] = frozenset(),
    instance: str = "",
    cutoff: int = DEFAULT_CUTOFF,
) -> frozenset[str]:
    """The nodes the booked requests' pods go to, put in turn where they fit (``bookCapacity``'s
    ``TrySchedulePods``, over the snapshot without the pods below ``cutoff``): upstream's scale-down sees
    those pods on them, so they are not removed while booked."""
    pods = booked_pods(requests, instance)
    if not pods:
        return frozenset()
    snapshot = ScaleUpSnapshot(state, profile, pods, (), exclude, expendable_on(state, cutoff))
    rows = {
        snapshot.on_cluster(pod, snapshot.states(pod)) for pod in sorted(pods, key=lambda pod: -pod.priority)
    }
    return frozenset(state.nodes[row].name for row in rows if row is not None)


def _all_fit(snapshot: ScaleUpSnapshot, pods: Sequence[Pod]) -> bool:
    """``TrySchedulePods(..., breakOnFailure=true)``: the pods put in turn (highest priority first, as
    ``filter_out_schedulable``), stopping at the first that does not fit."""
    return all(snapshot.schedule(pod) for pod in sorted(pods, key=lambda pod: -pod.priority))


def _check_capacity(ask: ProvisionRequest, batch: Sequence[ProvisioningRequest]) -> Provisioned:
    """``checkCapacityProvClass.Provision``: each request of the batch ``Accepted``, then its pods placed on
    the nodes there are (the booked requests' first), kept there when they all fit (``Provisioned`` true),
    else taken back (``Provisioned`` false, or ``Failed`` with ``noRetry``)."""
    now, pods = ask.now, {r.key: pods_for(r) for r in batch}
    booked = booked_pods(ask.requests, ask.instance)
    every = [p for r in batch for p in pods[r.key]]
    snapshot = ScaleUpSnapshot(
        ask.state, ask.profile, [*booked, *every], list(ask.options), ask.exclude,
        expendable_on(ask.state, ask.expendable_cutoff),
    )  # fmt: skip
    snapshot.filter_out_schedulable(booked)
    found, updated = False, {}
    for r in batch:
        r = with_condition(r, ACCEPTED, True, ACCEPTED_REASON, ACCEPTED_MSG, now)
        snapshot.fork()
        if _all_fit(snapshot, pods[r.key]):
            snapshot.commit()
            found = True
            r = with_condition(r, PROVISIONED, True, CAPACITY_FOUND_REASON, CAPACITY_FOUND_MSG, now)
        else:
            snapshot.revert()
            if r.parameters.get(NO_RETRY) == "true":
                r = with_condition(r, FAILED, True, CAPACITY_NOT_FOUND_REASON, NO_RETRY_MSG, now)
            else:
                r = with_condition(r, PROVISIONED, False, CAPACITY_NOT_FOUND_REASON, TRY_LATER_MSG, now)
        updated[r.key] = r
    result = Result.SUCCESSFUL if found else Result.NO_OPTIONS
    return Provisioned(result, tuple(updated.get(r.key, r) for r in ask.requests))


def _best_effort_atomic(ask: ProvisionRequest, request: ProvisioningRequest) -> Provisioned:
    """``bestEffortAtomicProvClass.Provision``: the pods that fit on the nodes there are need no node (all of
    them: ``ScaleUpNotNeeded``); the others one all-or-nothing scale-up."""
    now, pods = ask.now, pods_for(request)
    booked = booked_pods(ask.requests, ask.instance)
    snapshot = ScaleUpSnapshot(
        ask.state, ask.profile, [*booked, *pods], list(ask.options), ask.exclude,
        expendable_on(ask.state, ask.expendable_cutoff),
    )  # fmt: skip
    snapshot.filter_out_schedulable(booked)
    up: ScaleUp | None = None
    left = snapshot.filter_out_schedulable(pods)
    unplaced, by_priority = {p.key for p in left}, sorted(pods, key=lambda pod: -pod.priority)
    if not left:
        result = Result.NOT_NEEDED
        request = with_condition(request, PROVISIONED, True, CAPACITY_FOUND_REASON, CAPACITY_FOUND_MSG, now)
    else:
        reply = scale_up(
            ScaleUpRequest(
                now, ask.state, ask.profile, left, ask.options, ask.backed_off, ask.expander,
                ask.rng if ask.rng is not None else np.random.default_rng(0), ask.exclude,
                ask.nodes_left == 0,
                resources_left=ask.resources_left or {}, nodes_left=ask.nodes_left, all_or_nothing=True,
                placed_first=[*booked, *(p for p in by_priority if p.key not in unplaced)], filtered=True,
                expendable_cutoff=ask.expendable_cutoff,
            )
        )  # fmt: skip
        up = reply.scale_up
        if up is not None:
            result = Result.SUCCESSFUL
            request = with_condition(
                request, PROVISIONED, True, CAPACITY_PROVISIONED_REASON, CAPACITY_PROVISIONED_MSG, now
            )
        else:
            result = Result.NO_OPTIONS
            request = with_condition(
                request, PROVISIONED, False, CAPACITY_NOT_FOUND_REASON, TRY_LATER_MSG, now
            )
    every = tuple(request if r.key == request.key else r for r in ask.requests)
    return Provisioned(result, every, up)


def provision(ask: ProvisionRequest) -> Provisioned:
    """``provReqOrchestrator.ScaleUp``: check-capacity first (with batch processing, up to ``max_batch``
    check-capacity requests available for provisioning, whatever request was chosen:
    ``GetCheckCapacityBatch``; else the chosen one if of that class), then best-effort-atomic (the chosen
    one if of that class); a request of neither: ``ScaleUpNotTried``."""
    chosen = next((r for r in ask.requests if r.key == ask.chosen), None)
    if ask.max_batch > 1:
        retry = ask.retry_s or {}
        batch = [
            r
            for r in ask.requests
            if supported_check_capacity(r, ask.instance)
            and available(r, ask.now, retry.get(r.key, INITIAL_RETRY_S))
        ][: ask.max_batch]
    else:
        batch = [chosen] if chosen is not None and supported_check_capacity(chosen, ask.instance) else []
    if batch:
        return _check_capacity(ask, batch)
    if chosen is not None and chosen.class_name == BEST_EFFORT_ATOMIC and chosen.pod_sets:
        return _best_effort_atomic(ask, chosen)
    return Provisioned(Result.NOT_TRIED, tuple(ask.requests))
