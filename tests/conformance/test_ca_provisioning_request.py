"""cluster-autoscaler 1.34's ProvisioningRequest tests (tag ``cluster-autoscaler-1.34.5``,
``cluster-autoscaler/provisioningrequest/orchestrator/orchestrator_test.go``' ``TestScaleUp`` and
``cluster-autoscaler/processors/provreq/injector_test.go``' ``TestProvisioningRequestPodsInjector``,
``cluster-autoscaler/processors/provreq/processor_test.go``' ``TestRefresh``, ``TestDeleteOldProvReqs`` and
``TestBookCapacity``; ``provisioningrequest/conditions/condition_test.go``' ``TestBookCapacity`` and
``TestSetCondition``; ``provisioningrequest/supported_class_test.go``' ``TestSupportedProvisioningClass``;
``provisioningrequest/pods/pods_test.go``' ``TestPodsForProvisioningRequest``;
``processors/provreq/pods_filter_test.go``' ``TestProvisioningRequestPodsFilter`` and ``TestEventManager``),
case by case: each pytest id is the upstream test's name in snake case with the upstream case in brackets.
Each ``TestScaleUp`` case runs one ``provisioning_request.provision`` over ``setupTest``'s cluster (100
``test-cpu-node-<i>`` nodes of 100m and 10 bytes in group ``test-cpu``, min 50, max 150; 100
``test-mem-node-<i>`` nodes of 1m and 1000 bytes in no group) for the pods of ``provReqToScaleUp``
(``PodsForProvisioningRequest``), every request of ``provReqs`` in the cluster, and checks the result, the
requests ``Failed`` true and, with batch processing, those ``Provisioned`` true and false.
A case gpufleet does not model is kept as a skip that says why."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from ca_builders import build_test_node, build_test_pod

from gpufleet.autoscaling.provisioning_request import (
    ACCEPTED,
    BEST_EFFORT_ATOMIC,
    BOOKING_EXPIRED,
    CHECK_CAPACITY,
    FAILED,
    PROVISIONED,
    Condition,
    PodSet,
    ProvisioningRequest,
    ProvisionRequest,
    Result,
    filter_consumers,
    next_request,
    pods_for,
    provision,
    refresh,
    should_book,
    supported,
    with_condition,
)
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.profile import build_profile

AUTOPROVISIONING = (
    "node group autoprovisioning (MockAutoprovisioningNodeGroupListProcessor, NodeGroupManager) is not "
    "modelled"
)
TIMEBOX = (
    "--check-capacity-provisioning-request-batch-timebox bounds the wall-clock time one batch takes; "
    "gpufleet's decisions take no simulated time, so a batch is bounded by its size only"
)


def provreq(name: str, millicpu: int, mem: int, count: int, class_name: str) -> ProvisioningRequest:
    """``BuildValidTestProvisioningRequestFromOptions`` (``TestProvReqOptions{Name, CPU, Memory, PodCount,
    Class}``):
    one pod set of ``count`` pods of that size, in ``default``."""
    template = build_test_pod(f"{name}-template", millicpu, mem)
    return ProvisioningRequest(name, "default", class_name, (PodSet(template.name, count, template),), {})


def with_true(request: ProvisioningRequest, kind: str) -> ProvisioningRequest:
    """``SetConditions`` with one condition: ``{Type: kind, Status: ConditionTrue, LastTransitionTime:
    Now()}``."""
    return replace(request, conditions=(Condition(kind, True, "", "", 0.0),))


NEW_CPU = provreq("newCheckCapacityCpuProvReq", 5, 5, 100, CHECK_CAPACITY)
ANOTHER_CPU = provreq("anotherCheckCapacityCpuProvReq", 5, 5, 100, CHECK_CAPACITY)
NEW_MEM = provreq("newCheckCapacityMemProvReq", 1, 100, 100, CHECK_CAPACITY)
IMPOSSIBLE = provreq("impossibleCheckCapacityRequest", 1, 1, 5001, CHECK_CAPACITY)
ANOTHER_IMPOSSIBLE = provreq("anotherImpossibleCheckCapacityRequest", 1, 1, 5001, CHECK_CAPACITY)
ATOMIC = provreq("atomicScaleUpProvReq", 5, 5, 5, BEST_EFFORT_ATOMIC)
LARGE_ATOMIC = provreq("largeAtomicScaleUpProvReq", 1, 100, 100, BEST_EFFORT_ATOMIC)
IMPOSSIBLE_ATOMIC = provreq("impossibleAtomicScaleUpRequest", 1, 1, 5001, BEST_EFFORT_ATOMIC)
POSSIBLE_ATOMIC = provreq("possibleAtomicScaleUpReq", 100, 1, 120, BEST_EFFORT_ATOMIC)
AUTOPROVISIONING_ATOMIC = provreq("autoprovisioningAtomicScaleUpReq", 100, 100, 5, BEST_EFFORT_ATOMIC)
BOOKED = with_true(provreq("bookedCapacityProvReq", 1, 200, 100, CHECK_CAPACITY), PROVISIONED)
EXPIRED = with_true(provreq("expiredProvReq", 1, 200, 100, CHECK_CAPACITY), BOOKING_EXPIRED)
UNSUPPORTED = provreq("unsupportedProvReq", 1000, 1, 5, "very much unsupported")
NO_RETRY_IMPOSSIBLE = replace(IMPOSSIBLE, parameters={"noRetry": "true"})


@dataclass(frozen=True)
class Case:
    requests: tuple[ProvisioningRequest, ...]
    chosen: ProvisioningRequest | None
    result: Result
    batch: int = 0  # maxBatchSize with batchProcessing; 0: off
    provisioned_true: int = 0
    provisioned_false: int = 0
    failed_true: int = 0


def batch(
    requests: tuple[ProvisioningRequest, ...],
    chosen: ProvisioningRequest,
    size: int,
    true: int,
    false: int = 0,
) -> Case:
    result = (
        Result.SUCCESSFUL if true - sum(r.is_true(PROVISIONED) for r in requests) > 0 else Result.NO_OPTIONS
    )
    return Case(requests, chosen, result, size, true, false)


CASES: list[object] = [
    pytest.param(Case((), None, Result.NOT_TRIED), id="no ProvisioningRequests"),
    pytest.param(
        Case((NEW_CPU,), NEW_CPU, Result.SUCCESSFUL), id="one ProvisioningRequest of check capacity class"
    ),
    pytest.param(
        Case((ATOMIC,), ATOMIC, Result.NOT_NEEDED), id="one ProvisioningRequest of atomic scale up class"
    ),
    pytest.param(Case((NEW_MEM,), NEW_MEM, Result.SUCCESSFUL), id="capacity is there, check-capacity class"),
    pytest.param(
        Case((NEW_CPU, BOOKED, ATOMIC, UNSUPPORTED), UNSUPPORTED, Result.NOT_TRIED),
        id="unsupported ProvisioningRequest is ignored",
    ),
    pytest.param(
        Case((NEW_CPU, BOOKED, ATOMIC), NEW_CPU, Result.SUCCESSFUL),
        id="some capacity is pre-booked, successful capacity check",
    ),
    pytest.param(
        Case((NO_RETRY_IMPOSSIBLE,), IMPOSSIBLE, Result.NO_OPTIONS, failed_true=1),
        id="impossible check-capacity, with noRetry parameter",
    ),
    pytest.param(
        Case((BOOKED, ATOMIC), ATOMIC, Result.NOT_NEEDED),
        id="some capacity is pre-booked, atomic scale-up not needed",
    ),
    pytest.param(
        Case((LARGE_ATOMIC,), LARGE_ATOMIC, Result.NOT_NEEDED),
        id="capacity is there, large atomic scale-up request doesn't require scale-up",
    ),
    pytest.param(
        Case((IMPOSSIBLE_ATOMIC,), IMPOSSIBLE_ATOMIC, Result.NO_OPTIONS),
        id="impossible atomic scale-up request doesn't trigger scale-up",
    ),
    pytest.param(
        Case((POSSIBLE_ATOMIC,), POSSIBLE_ATOMIC, Result.SUCCESSFUL),
        id="possible atomic scale-up request triggers scale-up",
    ),
    pytest.param(
        Case((AUTOPROVISIONING_ATOMIC,), AUTOPROVISIONING_ATOMIC, Result.SUCCESSFUL),
        marks=pytest.mark.skip(reason=AUTOPROVISIONING),
        id="autoprovisioning atomic scale-up request triggers scale-up",
    ),
    pytest.param(
        batch((NEW_CPU,), NEW_CPU, 3, 1), id="batch processing of check capacity requests with one request"
    ),
    pytest.param(
        batch((NEW_CPU, NEW_MEM), NEW_CPU, 3, 2),
        id="batch processing of check capacity requests with less requests than max batch size",
    ),
    pytest.param(
        batch((NEW_CPU, NEW_MEM), NEW_CPU, 2, 2),
        id="batch processing of check capacity requests with requests equal to max batch size",
    ),
    pytest.param(
        batch((NEW_CPU, NEW_MEM, ANOTHER_CPU), NEW_CPU, 2, 2),
        id="batch processing of check capacity requests with more requests than max batch size",
    ),
    pytest.param(
        batch((NEW_CPU, BOOKED, ANOTHER_CPU), NEW_CPU, 2, 3),
        id="batch processing of check capacity requests where cluster contains already provisioned requests",
    ),
    pytest.param(
        batch((NEW_CPU, NEW_MEM), NEW_CPU, 5, 1),
        marks=pytest.mark.skip(reason=TIMEBOX),
        id="batch processing of check capacity requests where timebox is exceeded",
    ),
    pytest.param(
        # batch processing on with max batch size 0: ``isBatchEnabled`` false, the chosen request alone
        Case((NEW_CPU, NEW_MEM), NEW_CPU, Result.SUCCESSFUL, 1, 1),
        id="batch processing of check capacity requests where max batch size is invalid",
    ),
    pytest.param(
        batch((NEW_MEM, NEW_CPU, ATOMIC), NEW_MEM, 2, 2),
        id="batch processing of check capacity requests where best effort atomic scale-up request is also "
        "present in cluster",
    ),
    pytest.param(
        batch((POSSIBLE_ATOMIC,), POSSIBLE_ATOMIC, 3, 1),
        id="process atomic scale-up requests where batch processing of check capacity requests is enabled",
    ),
    pytest.param(
        batch((NEW_MEM, NEW_CPU, ATOMIC), ATOMIC, 3, 2),
        id="process atomic scale-up requests where batch processing of check capacity requests is enabled "
        "and check capacity requests are present in cluster",
    ),
    pytest.param(
        batch((NEW_MEM, IMPOSSIBLE, NEW_CPU), NEW_MEM, 3, 2, 1),
        id="batch processing of check capacity requests where some requests' capacity is not available",
    ),
    pytest.param(
        batch((IMPOSSIBLE, ANOTHER_IMPOSSIBLE), IMPOSSIBLE, 3, 0, 2),
        id="batch processing of check capacity requests where all requests' capacity is not available",
    ),
]


def _cluster() -> tuple[ClusterState, list[PoolOption]]:
    """``setupTest``'s nodes (``BuildTestNode``, ready) and its one group ``test-cpu`` (the first 100
    nodes, min 50, max 150; its template its first node)."""
    cpu = [build_test_node(f"test-cpu-node-{i}", 100, 10) for i in range(100)]
    mem = [build_test_node(f"test-mem-node-{i}", 1, 1000) for i in range(100)]
    nodes: list[Node] = [*cpu, *mem]
    group = PoolOption("test-cpu", cpu[0], room=50, size=100, max_size=150)
    return ClusterState(nodes), [group]


def _count(requests: tuple[ProvisioningRequest, ...], kind: str, status: bool) -> int:
    """``NumProvisioningRequestsWithCondition``."""
    return sum(1 for r in requests if (c := r.condition(kind)) is not None and c.status == status)


@pytest.mark.parametrize("case", CASES)
def test_scale_up(case: Case) -> None:
    state, options = _cluster()
    ask = ProvisionRequest(
        0.0, state, build_profile(ProfileConfig()), case.requests, case.chosen.key if case.chosen else None,
        options, max_batch=case.batch,
    )  # fmt: skip
    done = provision(ask)
    assert done.result == case.result
    assert len(done.requests) == len(case.requests)
    assert _count(done.requests, FAILED, True) == case.failed_true
    if case.batch:
        assert _count(done.requests, PROVISIONED, True) == case.provisioned_true
        assert _count(done.requests, PROVISIONED, False) == case.provisioned_false


# --- TestProvisioningRequestPodsInjector ---------------------------------------------------------------

NOW = 7200.0
MIN_AGO, HOUR_AGO = NOW - 61.0, NOW - 3600.0


def injected(
    name: str, pods: int, class_name: str, *conditions: Condition, **parameters: str
) -> ProvisioningRequest:
    """``testProvisioningRequestWithCondition``: ``pods`` pods (``BuildTestProvisioningRequest``: cpu 10,
    memory 100) in ``ns``, with those conditions."""
    template = build_test_pod(f"{name}-template", 10, 100)
    return ProvisioningRequest(
        name, "ns", class_name, (PodSet(template.name, pods, template),), parameters, conditions=conditions
    )


ACCEPTED_C = Condition(ACCEPTED, True, "", "", MIN_AGO)
FAILED_C = Condition(FAILED, True, "", "", HOUR_AGO)
PROVISIONED_C = Condition(PROVISIONED, True, "", "", HOUR_AGO)
NOT_PROVISIONED_C = Condition(PROVISIONED, False, "", "", HOUR_AGO)
UNKNOWN_PROVISIONED_C = Condition(PROVISIONED, None, "", "", HOUR_AGO)
NOT_PROVISIONED_RECENTLY_C = Condition(PROVISIONED, False, "", "", MIN_AGO)
PODS_A, PODS_B = 10, 20
NEW_A = injected("new", PODS_A, CHECK_CAPACITY)
NEW_ACCEPTED_A = injected("new-accepted", PODS_A, CHECK_CAPACITY, ACCEPTED_C)
NEW_A_INSTANCE = injected("new-instance", PODS_A, CHECK_CAPACITY, processorInstance="test-instance")
NEW_A_PREFIXED = injected("new-prefixed", PODS_A, "test-prefix.check-capacity.autoscaling.x-k8s.io")
NOT_PROVISIONED_ACCEPTED_B = injected(
    "provisioned-false-B", PODS_B, BEST_EFFORT_ATOMIC, NOT_PROVISIONED_C, ACCEPTED_C
)
PROVISIONED_ACCEPTED_B = injected(
    "provisioned-and-accepted", PODS_B, BEST_EFFORT_ATOMIC, PROVISIONED_C, ACCEPTED_C
)
FAILED_PR = injected("failed", PODS_A, BEST_EFFORT_ATOMIC, FAILED_C)
NOT_PROVISIONED_RECENTLY_B = injected(
    "provisioned-false-recently-B", PODS_B, BEST_EFFORT_ATOMIC, NOT_PROVISIONED_RECENTLY_C
)
UNKNOWN_PROVISIONED_B = injected("provisioned-unknown-B", PODS_B, BEST_EFFORT_ATOMIC, UNKNOWN_PROVISIONED_C)
UNKNOWN_CLASS = injected("new-accepted", PODS_A, "unknown-class", ACCEPTED_C)


@dataclass(frozen=True)
class Injection:
    requests: tuple[ProvisioningRequest, ...]
    pods: int = 0  # wantUnscheduledPodCount
    updated: str = ""  # wantUpdatedConditionName
    batch: bool = False
    instance: str = ""
    existing: int = 0  # existingUnsUnschedulablePodCount


INJECTOR_CASES = [
    pytest.param(
        Injection((NEW_A, PROVISIONED_ACCEPTED_B), PODS_A, NEW_A.name),
        id="New ProvisioningRequest, pods are injected and Accepted condition is added",
    ),
    pytest.param(
        Injection((NEW_A, PROVISIONED_ACCEPTED_B), PODS_A, NEW_A.name, batch=True),
        id="New check capacity ProvisioningRequest with batch processing, pods are injected and Accepted "
        "condition is not added",
    ),
    pytest.param(
        Injection((NEW_ACCEPTED_A, PROVISIONED_ACCEPTED_B), PODS_A, NEW_ACCEPTED_A.name),
        id="New ProvisioningRequest, pods are injected and Accepted condition is updated",
    ),
    pytest.param(
        Injection((NEW_A_PREFIXED,)),
        id="New ProvisioningRequest with not matching custom prefix, no pods are injected",
    ),
    pytest.param(
        Injection((NEW_A, PROVISIONED_ACCEPTED_B), instance="test-instance"),
        id="New ProvisioningRequest with not matching processor instance, no pods are injected",
    ),
    pytest.param(
        Injection(
            (NEW_A_INSTANCE, PROVISIONED_ACCEPTED_B), PODS_A, NEW_A_INSTANCE.name, instance="test-instance"
        ),
        id="New check capacity ProvisioningRequest with matching processor instance, pods are injected and "
        "Accepted condition is added",
    ),
    pytest.param(
        Injection((NEW_A, PROVISIONED_ACCEPTED_B), instance="test-prefix."),
        id="New ProvisioningRequest with not matching prefix, no pods are injected",
    ),
    pytest.param(
        Injection(
            (NEW_A_PREFIXED, PROVISIONED_ACCEPTED_B), PODS_A, NEW_A_PREFIXED.name, instance="test-prefix."
        ),
        id="New check capacity ProvisioningRequest with matching prefix, pods are injected and Accepted "
        "condition is added",
    ),
    pytest.param(
        Injection((NOT_PROVISIONED_ACCEPTED_B, FAILED_PR), PODS_B, NOT_PROVISIONED_ACCEPTED_B.name),
        id="Provisioned=False, pods are injected",
    ),
    pytest.param(Injection((PROVISIONED_ACCEPTED_B, FAILED_PR)), id="Provisioned=True, no pods are injected"),
    pytest.param(
        Injection((NOT_PROVISIONED_RECENTLY_B,)),
        id="Provisioned=False, ProvReq is backed off, no pods are injected",
    ),
    pytest.param(
        Injection((UNKNOWN_PROVISIONED_B, FAILED_PR)), id="Provisioned=Unknown, no pods are injected"
    ),
    pytest.param(
        Injection((UNKNOWN_CLASS, FAILED_PR)), id="ProvisionedClass is unknown, no pods are injected"
    ),
    pytest.param(
        Injection((NEW_A,), PODS_A + 50, NEW_A.name, existing=50),
        id="Provisioned=False, pods are injected but unschedulable pod list is not overwriten",
    ),
]


@pytest.mark.parametrize("case", INJECTOR_CASES)
def test_provisioning_request_pods_injector(case: Injection) -> None:
    """``injector.Process`` with the test's backoff (1 min initial, 10 min max;
    ``provisioned-false-recently-B`` backed off for 2 min): the pods it adds to ``existing`` unschedulable
    pods, and the request it marks ``Accepted`` now (not with check-capacity batch processing)."""
    backoff = {NOT_PROVISIONED_RECENTLY_B.key: 120.0}
    done = next_request(case.requests, NOW, backoff, case.batch, case.instance)
    pods = case.existing + (len(pods_for(done.chosen)) if done.chosen is not None else 0)
    assert pods == case.pods
    if not case.updated:
        return
    accepted = next(r for r in done.requests if r.name == case.updated).condition(ACCEPTED)
    if case.batch:
        assert accepted is None
    else:
        assert accepted is not None and accepted.last_transition == NOW


# --- processor_test.go ---------------------------------------------------------------------------------

DAY = 24 * 3600.0
T_NOW = 100 * DAY
DAY_AGO, WEEK_AGO, TEN_DAYS_AGO = T_NOW - DAY, T_NOW - 7 * DAY - 300.0, T_NOW - 10 * DAY
EXPIRED_NOW = Condition(FAILED, True, "Expired", "ProvisioningRequest is expired", T_NOW)


def wrapper(name: str, created: float = 0.0, *conditions: Condition) -> ProvisioningRequest:
    """``ProvisioningRequestWrapperForTesting("namespace", name)``, check-capacity (a zero creation time:
    long ago)."""
    return replace(injected(name, 1, CHECK_CAPACITY, *conditions), namespace="namespace", created=created)


REFRESH_CASES = [
    pytest.param(T_NOW, (), (), id="New ProvisioningRequest, empty conditions"),
    pytest.param(WEEK_AGO, (), (EXPIRED_NOW,), id="ProvisioningRequest with empty conditions, expired"),
    pytest.param(
        WEEK_AGO,
        (Condition(PROVISIONED, False, "Expired", "ProvisioningRequest is expired", DAY_AGO),),
        (Condition(PROVISIONED, False, "Expired", "ProvisioningRequest is expired", DAY_AGO), EXPIRED_NOW),
        id="ProvisioningRequest wasn't provisioned, expired",
    ),
    pytest.param(
        DAY_AGO,
        (Condition(PROVISIONED, True, "Expired", "ProvisioningRequest is expired", DAY_AGO),),
        (
            Condition(PROVISIONED, True, "Expired", "ProvisioningRequest is expired", DAY_AGO),
            Condition(
                BOOKING_EXPIRED,
                True,
                "CapacityReservationTimeExpired",
                "Capacity reservation time is expired",
                T_NOW,
            ),
        ),
        id="BookingCapacity time is expired ",
    ),
    pytest.param(
        DAY_AGO,
        (Condition(FAILED, True, "Failed", "Failed", DAY_AGO),),
        (Condition(FAILED, True, "Failed", "Failed", DAY_AGO),),
        id="Failed ProvisioningRequest",
    ),
]


@pytest.mark.parametrize(("created", "conditions", "want"), REFRESH_CASES)
def test_refresh(created: float, conditions: tuple[Condition, ...], want: tuple[Condition, ...]) -> None:
    """``provReqProcessor.refresh`` with ``maxUpdated`` 1 over the request and an ``additional`` one created
    a week ago: the request's conditions, and the additional one ``Failed`` only when the request took no
    update."""
    pr = wrapper("name-1", created, *conditions)
    additional = wrapper("additional", WEEK_AGO)
    (out, extra), deleted = refresh([pr, additional], T_NOW, max_updated=1)
    assert sorted(out.conditions, key=repr) == sorted(want, key=repr)
    assert extra.conditions == ((EXPIRED_NOW,) if len(conditions) == len(want) else ())
    assert deleted == []


def test_delete_old_prov_reqs() -> None:
    """``TestDeleteOldProvReqs``: a request ``Failed`` and one ``Provisioned`` ten days ago are deleted (7
    days after their condition), the two others are kept."""
    failed = wrapper("failed", TEN_DAYS_AGO, Condition(FAILED, True, "Failed", "Failed", TEN_DAYS_AGO))
    expired = wrapper(
        "expired",
        TEN_DAYS_AGO,
        Condition(PROVISIONED, True, "Provisioned", "", TEN_DAYS_AGO),
        Condition(BOOKING_EXPIRED, True, "Capacity is expired", "", TEN_DAYS_AGO),
    )
    _, deleted = refresh([wrapper("name-1"), wrapper("additional"), failed, expired], T_NOW, max_updated=1)
    assert deleted == [failed.key, expired.key]


BOOK_CASES = [
    pytest.param((), CHECK_CAPACITY, False, id="ProvReq is new, check-capacity class"),
    pytest.param((FAILED,), BEST_EFFORT_ATOMIC, False, id="ProvReq is Failed, best-effort-atomic class"),
    pytest.param((PROVISIONED,), "unknown", False, id="ProvReq is Provisioned, unknown class"),
    pytest.param(
        (PROVISIONED,),
        CHECK_CAPACITY,
        True,
        id="ProvReq is Provisioned, capacity should be booked, check-capacity class",
    ),
    pytest.param(
        (PROVISIONED,),
        BEST_EFFORT_ATOMIC,
        True,
        id="ProvReq is Provisioned, capacity should be booked, best-effort-atomic class",
    ),
    pytest.param(
        (PROVISIONED, BOOKING_EXPIRED),
        BEST_EFFORT_ATOMIC,
        False,
        id="ProvReq has BookingExpired, capacity should not be booked, best-effort-atomic class",
    ),
]


@pytest.mark.parametrize(("conditions", "class_name", "booked"), BOOK_CASES)
def test_book_capacity(conditions: tuple[str, ...], class_name: str, booked: bool) -> None:
    """``TestBookCapacity``: whether ``bookCapacity`` puts the request's pods in the snapshot
    (``ShouldCapacityBeBooked``)."""
    pr = injected("pr", 10, class_name)
    for kind in conditions:
        pr = with_condition(pr, kind, True, "", "", 0.0)
    assert should_book(pr) == booked


# --- conditions/condition_test.go ------------------------------------------------------------------------

P_TRUE, P_FALSE = (PROVISIONED, True), (PROVISIONED, False)
CONDITION_BOOK_CASES = [
    pytest.param(
        CHECK_CAPACITY, (P_TRUE, (BOOKING_EXPIRED, True)), "", False, id="BookingExpired check capacity"
    ),
    pytest.param(
        BEST_EFFORT_ATOMIC,
        (P_TRUE, (BOOKING_EXPIRED, True)),
        "",
        False,
        id="BookingExpired best effort atomic",
    ),
    pytest.param(CHECK_CAPACITY, (P_TRUE, (FAILED, True)), "", False, id="Failed check capacity"),
    pytest.param(BEST_EFFORT_ATOMIC, (P_TRUE, (FAILED, True)), "", False, id="Failed best effort atomic"),
    pytest.param(CHECK_CAPACITY, (), "", False, id="empty conditions for check capacity"),
    pytest.param(BEST_EFFORT_ATOMIC, (), "", False, id="empty conditions for best effort atomic"),
    pytest.param(
        CHECK_CAPACITY, (P_TRUE, P_TRUE), "", True, id="Capacity found and provisioned check capacity"
    ),
    pytest.param(
        BEST_EFFORT_ATOMIC, (P_TRUE, P_TRUE), "", True, id="Capacity found and provisioned best effort atomic"
    ),
    pytest.param(
        CHECK_CAPACITY,
        (P_TRUE, P_TRUE),
        "test",
        False,
        id="Capacity found and provisioned check capacity but processor instance not matching",
    ),
    pytest.param(
        BEST_EFFORT_ATOMIC,
        (P_TRUE, P_TRUE),
        "test",
        False,
        id="Capacity found and provisioned best effort atomic but processor instance means ignore",
    ),
    pytest.param(CHECK_CAPACITY, (P_FALSE,), "", False, id="Capacity is not found for check capacity"),
    pytest.param(
        BEST_EFFORT_ATOMIC, (P_FALSE,), "", False, id="Capacity is not found for best effort atomic"
    ),
]


@pytest.mark.parametrize(("class_name", "conditions", "instance", "want"), CONDITION_BOOK_CASES)
def test_conditions_book_capacity(
    class_name: str, conditions: tuple[tuple[str, bool], ...], instance: str, want: bool
) -> None:
    """``conditions.TestBookCapacity``: ``ShouldCapacityBeBooked`` with
    ``--check-capacity-processor-instance`` ``instance``."""
    pr = replace(
        injected("pr", 1, class_name), conditions=tuple(Condition(t, s, "", "", 0.0) for t, s in conditions)
    )
    assert should_book(pr, instance) == want


SET_CONDITION_CASES = [
    pytest.param((), (ACCEPTED, True), ((ACCEPTED, True),), id="Accepted added, empty conditions before"),
    pytest.param((), P_TRUE, (P_TRUE,), id="Provisioned added, empty conditions before"),
    pytest.param((P_FALSE,), P_TRUE, (P_TRUE,), id="Provisioned updated"),
    pytest.param(
        (P_TRUE,), (FAILED, True), (P_TRUE, (FAILED, True)), id="Failed added, non-empty conditions before"
    ),
    pytest.param(
        (P_TRUE,),
        (FAILED, None),
        (P_TRUE, (FAILED, None)),
        id="Unknown condition status, conditions are updated",
    ),
    pytest.param(
        (P_TRUE,), ("Unknown", True), (P_TRUE,), id="Unknown condition type, conditions are not updated"
    ),
    pytest.param(
        (),
        (BOOKING_EXPIRED, False),
        ((BOOKING_EXPIRED, False),),
        id="BookingExpired, empty conditions before",
    ),
    pytest.param(
        (("unknown", True),),
        P_TRUE,
        (("unknown", True), P_TRUE),
        id="Capacity found with unknown condition before",
    ),
]


@pytest.mark.parametrize(("old", "new", "want"), SET_CONDITION_CASES)
def test_set_condition(
    old: tuple[tuple[str, bool | None], ...],
    new: tuple[str, bool | None],
    want: tuple[tuple[str, bool | None], ...],
) -> None:
    """``TestSetCondition``: ``AddOrUpdateCondition``'s conditions, by type and status, in order."""
    pr = replace(
        injected("pr", 1, CHECK_CAPACITY), conditions=tuple(Condition(t, s, "", "", 0.0) for t, s in old)
    )
    got = with_condition(pr, new[0], new[1], "", "", 1.0)
    assert tuple((c.type, c.status) for c in got.conditions) == want


# --- supported_class_test.go ------------------------------------------------------------------------------

SUPPORTED_CASES = [
    pytest.param(CHECK_CAPACITY, "", "", True, id="Check capacity without instance"),
    pytest.param(
        CHECK_CAPACITY, "instance", "instance", True, id="Check capacity with matching instance param"
    ),
    pytest.param(
        CHECK_CAPACITY, "instance2", "instance", False, id="Check capacity with not matching instance param"
    ),
    pytest.param(
        "instance" + CHECK_CAPACITY, "", "instance", True, id="Check capacity with matching instance prefix"
    ),
    pytest.param(
        "instance2" + CHECK_CAPACITY,
        "",
        "instance",
        False,
        id="Check capacity with not matching instance prefix",
    ),
    pytest.param(BEST_EFFORT_ATOMIC, "", "", True, id="Best effort atomic"),
    pytest.param(BEST_EFFORT_ATOMIC, "", "instance", False, id="Best effort atomic with any instance"),
    pytest.param("invalid", "", "", False, id="Invalid class name"),
]


@pytest.mark.parametrize(("class_name", "parameter", "instance", "want"), SUPPORTED_CASES)
def test_supported_provisioning_class(class_name: str, parameter: str, instance: str, want: bool) -> None:
    """``TestSupportedProvisioningClass``: the ``processorInstance`` parameter ``parameter`` (empty: as
    upstream's, an empty value), ``--check-capacity-processor-instance`` ``instance``."""
    pr = injected("pr", 1, class_name, processorInstance=parameter)
    assert supported(pr, instance) == want


# --- pods/pods_test.go ----------------------------------------------------------------------------------

LIMITS_AS_REQUESTS = (
    "a container's requests defaulted to its limits is the manifest reader's (kube.pods reads a "
    "PodTemplate's limits as its requests; tests/kube/test_kube_provisioning_request.py); "
    "PodsForProvisioningRequest gets the template as read"
)
SIMPLE = ((("template-1", 1),), ["test-pr-name-0-0"])
PODS_CASES = [
    pytest.param(*SIMPLE, id="simple ProvReq"),
    pytest.param(*SIMPLE, id="ProvReq already having taint"),
    pytest.param(*SIMPLE, id="ProvReq already having nodeSelector"),
    pytest.param(
        (("template-1", 2), ("template-2", 3)),
        ["test-pr-name-0-0", "test-pr-name-0-1", "test-pr-name-1-0", "test-pr-name-1-1", "test-pr-name-1-2"],
        id="ProvReq with multiple pod sets",
    ),
    pytest.param(
        *SIMPLE,
        marks=pytest.mark.skip(reason=LIMITS_AS_REQUESTS),
        id="PodTemplate doesn't specify container resources requests, Pods container default resources "
        "requests to limits",
    ),
]


@pytest.mark.parametrize(("pod_sets", "names"), PODS_CASES)
def test_pods_for_provisioning_request(pod_sets: tuple[tuple[str, int], ...], names: list[str]) -> None:
    """``TestPodsForProvisioningRequest``: each pod named ``<request>-<set>-<k>``, in the request's namespace,
    owned by it, annotated with it and its class, its set's template's image."""
    sets = tuple(
        PodSet(name, count, replace(build_test_pod(name, 0, 0), images=(f"image-{name}",)))
        for name, count in pod_sets
    )
    pr = ProvisioningRequest("test-pr-name", "test-namespace", "test-class", sets, {})
    pods = pods_for(pr)
    assert [p.name for p in pods] == names
    assert {p.namespace for p in pods} == {"test-namespace"}
    assert {(p.owner.kind, p.owner.name) for p in pods if p.owner} == {
        ("ProvisioningRequest", "test-pr-name")
    }
    assert all(
        p.annotations
        == {
            "autoscaling.x-k8s.io/consume-provisioning-request": "test-pr-name",
            "autoscaling.x-k8s.io/provisioning-class-name": "test-class",
        }
        for p in pods
    )
    images = [p.images for p in pods]
    assert images == [(f"image-{name}",) for name, count in pod_sets for _ in range(count)]


# --- processors/provreq/pods_filter_test.go -------------------------------------------------------------

IGNORED = (
    "Unschedulable pod didn't trigger scale-up, because it's consuming ProvisioningRequest default/pr-class"
)


def consumer(name: str, request: str, deprecated: bool = False) -> Pod:
    """``BuildTestPod(name, 500, 10)`` annotated with the request it consumes (the deprecated key)."""
    pod = build_test_pod(name, 500, 10)
    key = "cluster-autoscaler.kubernetes.io" if deprecated else "autoscaling.x-k8s.io"
    pod.annotations[f"{key}/consume-provisioning-request"] = request
    return pod


PR_POD_1, PR_POD_2 = consumer("pr-pod-1", "pr-class"), consumer("pr-pod-2", "pr-class-2", deprecated=True)
POD_1, POD_2 = build_test_pod("pod-1", 500, 10), build_test_pod("pod-2", 500, 10)
FILTER_CASES = [
    pytest.param([PR_POD_1, POD_1], [POD_1], id="ProvisioningRequest consumer is filtered out"),
    pytest.param(
        [PR_POD_1, PR_POD_2, POD_1], [POD_1], id="Different ProvisioningRequest consumers are filtered out"
    ),
    pytest.param([POD_1, POD_2], [POD_1, POD_2], id="No pod is filtered"),
    pytest.param([], [], id="Empty unschedulable pods list"),
    pytest.param([PR_POD_1, PR_POD_2], [], id="All ProvisioningRequest consumers are filtered out"),
]


@pytest.mark.parametrize(("candidates", "expected"), FILTER_CASES)
def test_provisioning_request_pods_filter(candidates: list[Pod], expected: list[Pod]) -> None:
    """``TestProvisioningRequestPodsFilter``: the unschedulable pods left, and each consumer's event."""
    kept, told = filter_consumers(candidates)
    assert [p.name for p in kept] == [p.name for p in expected]
    assert [key for key, _ in told] == [p.key for p in candidates if p not in expected]
    assert all(message == IGNORED for key, message in told if key == PR_POD_1.key)


def test_event_manager() -> None:
    """``TestEventManager``: with an event limit of 5, ten consumers are filtered out and only five told."""
    pods = [build_test_pod("pod", 500, 10), *(consumer(f"pr-pod-{i}", "pr-class") for i in range(10))]
    kept, told = filter_consumers(pods, limit=5)
    assert [p.name for p in kept] == ["pod"]
    assert [message for _, message in told] == [IGNORED] * 5
