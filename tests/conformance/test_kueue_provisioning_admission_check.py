"""Kueue's ProvisioningRequest admission check controller,
``kubernetes-sigs/kueue: pkg/controller/admissionchecks/provisioning/controller_test.go`` (at commit
``ff69552e79ad``: ``TestMergePodSetsSkipsZeroCounts`` 3 cases, ``TestReqIsNeeded`` 6, ``TestReconcile`` 40,
``TestActiveOrLastPRForChecks`` 3, ``TestIsMissingInCache`` 2, ``TestUpdateCheckMessage`` 5), held against
``gpufleet.scheduling.kueue.admission_checks``.

``TestReconcile``'s cases are ported where the reconcile is expressible as gpufleet's pure steps:
``sync_check`` (``syncCheckStates`` for the case's check ``check1``, its state and the request's
conditions), ``update_event`` (the ``AdmissionCheckUpdated`` event), ``next_attempt``,
``provisioning_request_name`` / ``pod_template_name`` / ``merged_pod_sets`` / ``request_parameters``
(``syncOwnedProvisionRequest``: the request to create) and ``active_or_last`` (which request is the check's).
The base workload is upstream's: pod sets ``ps1`` (4 pods, 1 cpu, admitted 4) and ``ps2`` (4 pods, 1M memory,
admitted 3); the config ``class1`` with ``p1: v1`` and the default retry strategy. Upstream's second check
``not-provisioning`` (another controller) only shows its state untouched: gpufleet's controller never reads
it (the simulator keeps such a check Pending, tests/kueue). The request's PodTemplate objects and their
owner references are not modelled (a request holds its templates' pods: ``model.provisioning_request``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from gpufleet.model.kueue import (
    CHECK_PENDING,
    CHECK_READY,
    CHECK_REJECTED,
    CHECK_RETRY,
    ProvisioningRequestConfig,
    RetryStrategy,
)
from gpufleet.model.pod import Pod
from gpufleet.model.provisioning_request import Condition, PodSet, ProvisioningRequest
from gpufleet.scheduling.kueue.admission_checks import (
    CHECK_INACTIVE_MESSAGE,
    CLASS_ANNOTATION,
    CONSUME_ANNOTATION,
    NO_REQUEST_NEEDED,
    CheckState,
    InconsistentAssignments,
    PodSetNeed,
    PodSetUpdate,
    active_or_last,
    attempt_of,
    merged_pod_sets,
    next_attempt,
    pod_template_name,
    provisioning_request_name,
    request_needed,
    request_parameters,
    sync_check,
    synced_with_config,
    update_event,
)

SKIP_API = (
    "API errors, the informer cache and object creation races are not modelled (gpufleet holds no API server)"
)
SKIP_MERGE = "podSetMergePolicy is not modelled (a warning): pod sets are never merged"
SKIP_DETAILS = (
    "podSetUpdates.nodeSelector from the request's provisioningClassDetails is not modelled (a warning)"
)
SKIP_DELETE = (
    "the deletion of a finished or evicted workload's requests is done by the simulator "
    "(AdmissionChecks.evicted, CleanupProvisioningRequestsOnEviction), held in "
    "tests/kueue/test_kueue_admission_checks.py::test_a_failed_request_retries_with_backoff_then_rejects_and_deactivates"
)
SKIP_UNRELATED = (
    "a workload without provisioning checks is never reconciled by gpufleet's controller "
    "(AdmissionChecks._sync runs only for a workload holding a reservation with checks)"
)

WL = "wl"
CHECK = "check1"
BASE = [PodSetNeed("ps1", 4, 4, frozenset({"cpu"})), PodSetNeed("ps2", 4, 3, frozenset({"memory"}))]
CONFIG = ProvisioningRequestConfig("config1", "class1", {"p1": "v1"}, (), RetryStrategy(3, 60.0, 1800.0))


def request(
    name: str = "wl-check1-1",
    conditions: tuple[tuple[str, bool | None, str], ...] = (),
    parameters: dict[str, str] | None = None,
    pod_sets: tuple[tuple[str, int], ...] = (("ps1", 4), ("ps2", 3)),
) -> ProvisioningRequest:
    """A request of class ``class1`` with ``conditions`` (type, status, message) and its pod sets' templates
    ``ppt-<name>-<podset>``."""
    pod = Pod("t", "default")
    sets = tuple(PodSet(pod_template_name(name, ps), count, pod) for ps, count in pod_sets)
    made = tuple(Condition(kind, status, kind, message, 0.0) for kind, status, message in conditions)
    return ProvisioningRequest(
        name, "ns", "class1", sets, {"p1": "v1"} if parameters is None else parameters, conditions=made
    )


def by_test(kind: str) -> tuple[tuple[str, bool | None, str], ...]:
    """``requestWithCondition``: one condition, true, message ``By test``."""
    return ((kind, True, "By test"),)


# -- TestMergePodSetsSkipsZeroCounts ---------------------------------------------------------------


def _ps(specs: list[int], admitted: list[int]) -> list[PodSetNeed]:
    return [
        PodSetNeed(f"ps{i}", s, a, frozenset({"cpu"}))
        for i, (s, a) in enumerate(zip(specs, admitted, strict=True))
    ]


@pytest.mark.parametrize(
    ("pod_sets", "want"),
    [
        pytest.param(_ps([0, 2], [0, 2]), [("ps1", 2)], id="TestMergePodSetsSkipsZeroCounts/zero spec count"),
        pytest.param(
            _ps([1, 2], [0, 2]),
            [("ps1", 2)],
            id="TestMergePodSetsSkipsZeroCounts/zero admission count override",
        ),
        pytest.param(
            _ps([1, 2, 3], [0, 2, 3]),
            [("ps1", 5)],
            id="TestMergePodSetsSkipsZeroCounts/zero count does not block compatible merging",
            marks=pytest.mark.skip(reason=SKIP_MERGE),
        ),
    ],
)
def test_merge_pod_sets_skips_zero_counts(pod_sets: list[PodSetNeed], want: list[tuple[str, int]]) -> None:
    assert merged_pod_sets(pod_sets, ()) == want


# -- TestReqIsNeeded -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod_sets", "want"),
    [
        pytest.param(
            [PodSetNeed("ps", 1, 1, frozenset({"cpu"}))],
            True,
            id="TestReqIsNeeded/positive admitted count needs request",
        ),
        pytest.param(
            [PodSetNeed("ps", 1, 1, frozenset({"cpu"}))],
            True,
            id="TestReqIsNeeded/missing admitted count falls back to spec count",
        ),  # (gpufleet's assignment always has its count: the spec's when none is given)
        pytest.param(
            [PodSetNeed("ps", 1, 0, frozenset({"cpu"}))],
            False,
            id="TestReqIsNeeded/zero admitted count does not need request",
        ),
        pytest.param(
            [PodSetNeed("ps", 0, None, frozenset({"cpu"}))],
            False,
            id="TestReqIsNeeded/zero spec count does not require assignment",
        ),
        pytest.param(
            [PodSetNeed("ps", 1, None, frozenset({"cpu"}))],
            None,
            id="TestReqIsNeeded/missing assignment returns inconsistency error",
        ),
        pytest.param(
            [PodSetNeed("ps1", 1, 1, frozenset({"cpu"})), PodSetNeed("ps2", 1, None, frozenset({"cpu"}))],
            True,
            id="TestReqIsNeeded/needed podset short circuits later missing assignment",
        ),
    ],
)
def test_req_is_needed(pod_sets: list[PodSetNeed], want: bool | None) -> None:
    """``managedResources: [cpu]``; ``None``: ``errInconsistentPodSetAssignments``."""
    if want is None:
        with pytest.raises(InconsistentAssignments):
            request_needed(pod_sets, ("cpu",))
    else:
        assert request_needed(pod_sets, ("cpu",)) is want


# -- TestReconcile: the check's new state ----------------------------------------------------------


@dataclass(frozen=True)
class Sync:
    """A reconcile's check sync: the check before, the config (None: missing), the request there (None:
    none), whether the workload is admitted / finished, the managed resources; the check after (None:
    unchanged because the controller waits) and the event."""

    state: CheckState
    config: ProvisioningRequestConfig | None
    request: ProvisioningRequest | None
    want: CheckState | None
    event: str | None = None
    admitted: bool = False
    finished: bool = False
    pod_sets: tuple[PodSetNeed, ...] = tuple(BASE)


PENDING = CheckState(CHECK, CHECK_PENDING)
READY_UPDATES = (
    PodSetUpdate("ps1", {CONSUME_ANNOTATION: "wl-check1-1", CLASS_ANNOTATION: "class1"}),
    PodSetUpdate("ps2", {CONSUME_ANNOTATION: "wl-check1-1", CLASS_ANNOTATION: "class1"}),
)
ALREADY_EXISTS = (
    'Error creating ProvisioningRequest "wl-check1-1": provisioningrequests.autoscaling.x-k8s.io '
    '"wl-check1-1" already exists'
)
REVOKED = (
    ("Failed", False, ""),
    ("Provisioned", True, ""),
    ("Accepted", True, ""),
    ("CapacityRevoked", True, ""),
)
EXPIRED = (("Failed", False, ""), ("Provisioned", True, ""), ("Accepted", True, ""))
ZERO = tuple(replace(p, count=0, admitted=0) for p in BASE)

SYNC: list[tuple[str, Sync]] = [
    ("missing config", Sync(PENDING, None, None, CheckState(CHECK, CHECK_PENDING, CHECK_INACTIVE_MESSAGE))),
    ("with config", Sync(PENDING, CONFIG, None, None)),
    (
        "with only zero-count PodSets",
        Sync(
            PENDING,
            CONFIG,
            request(),
            CheckState(CHECK, CHECK_READY, NO_REQUEST_NEEDED),
            "Admission check check1 updated state from Pending to Ready with message: "
            "the provisioning request is not needed",
            pod_sets=ZERO,
        ),
    ),
    (
        "when request fails and is retried",
        Sync(
            PENDING,
            replace(CONFIG, retry=RetryStrategy(2, 60.0, 1800.0)),
            request(conditions=by_test("Failed")),
            CheckState(CHECK, CHECK_RETRY, "Retrying after failure: By test", requeue_after_s=60.0),
            "Admission check check1 updated state from Pending to Retry with message: "
            "Retrying after failure: By test",
        ),
    ),
    (
        "when request fails, and there is no retry",
        Sync(
            PENDING,
            replace(CONFIG, retry=RetryStrategy(0, 60.0, 1800.0)),
            request(conditions=by_test("Failed")),
            CheckState(CHECK, CHECK_REJECTED, "By test"),
            "Admission check check1 updated state from Pending to Rejected with message: By test",
        ),
    ),
    (
        "when request is provisioned",
        Sync(
            PENDING,
            CONFIG,
            request(conditions=by_test("Provisioned")),
            CheckState(CHECK, CHECK_READY, "By test", pod_set_updates=READY_UPDATES),
            "Admission check check1 updated state from Pending to Ready with message: By test",
        ),
    ),
    (
        "when no request is needed",
        Sync(
            PENDING,
            replace(CONFIG, managed_resources=("example.org/gpu",)),
            None,
            CheckState(CHECK, CHECK_READY, NO_REQUEST_NEEDED),
            "Admission check check1 updated state from Pending to Ready with message: "
            "the provisioning request is not needed",
        ),
    ),
    (
        "when the request is removed while the check is ready; don't create the ProvReq and keep Ready state",
        Sync(CheckState(CHECK, CHECK_READY), CONFIG, None, None),
    ),
    (
        "workloads status gets updated based on the provisioning request",
        Sync(
            PENDING,
            CONFIG,
            request(
                conditions=(
                    ("Failed", False, ""),
                    (
                        "Provisioned",
                        False,
                        "Provisioning Request wasn't provisioned. ETA: 2024-02-22T10:36:40Z",
                    ),
                    ("Accepted", True, ""),
                )
            ),
            CheckState(
                CHECK, CHECK_PENDING, "Provisioning Request wasn't provisioned. ETA: 2024-02-22T10:36:40Z"
            ),
        ),
    ),
    (
        "workload sets AdmissionCheck status to Rejected when it is not finished and receives "
        "the provisioning request's CapacityRevoked condition",
        Sync(
            PENDING,
            CONFIG,
            request(conditions=REVOKED),
            CheckState(CHECK, CHECK_REJECTED),
            "Admission check check1 updated state from Pending to Rejected",
            admitted=True,
        ),
    ),
    (
        "workload sets AdmissionCheck status to Rejected when it is not admitted and receives "
        "the provisioning request's CapacityRevoked condition",
        Sync(
            PENDING,
            CONFIG,
            request(conditions=REVOKED),
            CheckState(CHECK, CHECK_REJECTED),
            "Admission check check1 updated state from Pending to Rejected",
        ),
    ),
    (
        "workloads doesnt set AdmissionCheck status to Rejected when it is finished and receives "
        "the provisioning request's CapacityRevoked condition",
        Sync(PENDING, CONFIG, request(conditions=REVOKED), PENDING, finished=True),
    ),
    (
        "workload does nothing when admitted and receives the provisioning request's "
        "BookingExpired condition",
        Sync(
            PENDING,
            CONFIG,
            request(conditions=(*EXPIRED, ("BookingExpired", True, ""))),
            PENDING,
            admitted=True,
        ),
    ),
    (
        "workload retries the admission check when is not admitted and receives the provisioning request's "
        "BookingExpired condition",
        Sync(
            PENDING,
            replace(CONFIG, retry=RetryStrategy(1, 60.0, 1800.0)),
            request(conditions=(*EXPIRED, ("BookingExpired", True, "Expired By test"))),
            CheckState(
                CHECK, CHECK_RETRY, "Retrying after booking expired: Expired By test", requeue_after_s=60.0
            ),
            "Admission check check1 updated state from Pending to Retry with message: "
            "Retrying after booking expired: Expired By test",
        ),
    ),
    (
        "workload rejects the admission check when is not admitted and receives the provisioning request's "
        "BookingExpired condition",
        Sync(
            PENDING,
            replace(CONFIG, retry=RetryStrategy(0, 60.0, 1800.0)),
            request(conditions=(*EXPIRED, ("BookingExpired", True, ""))),
            CheckState(CHECK, CHECK_REJECTED),
            "Admission check check1 updated state from Pending to Rejected",
        ),
    ),
    (
        "when the request has no conditions yet the previous check message is cleared",
        Sync(CheckState(CHECK, CHECK_PENDING, ALREADY_EXISTS), CONFIG, request(), PENDING),
    ),
    (
        "when the request is provisioned the previous check message is cleared",
        Sync(
            CheckState(CHECK, CHECK_PENDING, ALREADY_EXISTS),
            CONFIG,
            request(conditions=(("Provisioned", True, ""),)),
            CheckState(CHECK, CHECK_READY, "", pod_set_updates=READY_UPDATES),
            "Admission check check1 updated state from Pending to Ready",
        ),
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=f"TestReconcile/{n}") for n, c in SYNC])
def test_reconcile_check_state(case: Sync) -> None:
    """``syncCheckStates`` and its ``AdmissionCheckUpdated`` event (upstream's ``wantWorkloads`` and
    ``wantEvents`` for ``check1``; a None want: the check as it was)."""
    config = case.config
    needed = config is not None and request_needed(case.pod_sets, config.managed_resources)
    got = sync_check(case.state, config, needed, case.request, WL, case.admitted, case.finished)
    assert got == case.want
    after = case.state if got is None else got
    assert update_event(case.state, after) == case.event


# -- TestReconcile: the request created ------------------------------------------------------------


@dataclass(frozen=True)
class Create:
    """A reconcile's request to create: the check, the requests there, the workload's annotations and the
    config; the request's name and pod sets (template, count) and parameters, or None when none is made."""

    state: CheckState
    requests: tuple[ProvisioningRequest, ...]
    want: tuple[str, tuple[tuple[str, int], ...], dict[str, str]] | None
    config: ProvisioningRequestConfig = CONFIG
    annotations: tuple[tuple[str, str], ...] = ()
    pod_sets: tuple[PodSetNeed, ...] = tuple(BASE)
    admitted: bool = False


def sets(name: str, *pod_sets: tuple[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple((pod_template_name(name, ps), count) for ps, count in pod_sets)


BASE_REQUEST = ("wl-check1-1", sets("wl-check1-1", ("ps1", 4), ("ps2", 3)), {"p1": "v1"})

CREATE: list[tuple[str, Create]] = [
    ("with config", Create(PENDING, (), BASE_REQUEST)),
    (
        "workload with provreq annotation",
        Create(
            PENDING,
            (),
            ("wl-check1-1", sets("wl-check1-1", ("main", 1)), {"ValidUntilSeconds": "0"}),
            config=ProvisioningRequestConfig("config1", ""),
            annotations=(
                ("provreq.kueue.x-k8s.io/ValidUntilSeconds", "0"),
                ("invalid-provreq-prefix/Foo1", "Bar1"),
                ("another-invalid-provreq-prefix/Foo2", "Bar2"),
            ),
            pod_sets=(PodSetNeed("main", 1, 1, frozenset()),),
        ),
    ),
    (
        # the request "wl-check2" is not one of check1's attempts: not active, deleted; check1's is created
        "remove unnecessary requests",
        Create(PENDING, (request("wl-check2", pod_sets=()),), BASE_REQUEST),
    ),
    (
        # the request's parameters are out of sync with the config: not active, deleted, made again
        "request out of sync",
        Create(PENDING, (request(parameters={"p1": "v0"}, pod_sets=(("main", 1),)),), BASE_REQUEST),
    ),
    (
        "when retry count is preserved but provisioning request was cleaned up",
        Create(
            CheckState(CHECK, CHECK_PENDING, retry_count=1),
            (),
            ("wl-check1-2", sets("wl-check1-2", ("ps1", 4), ("ps2", 3)), {"p1": "v1"}),
        ),
    ),
    (
        "when request is needed for one PodSet (resource request)",
        Create(
            PENDING,
            (),
            ("wl-check1-1", sets("wl-check1-1", ("ps2", 3)), {"p1": "v1"}),
            config=replace(CONFIG, managed_resources=("memory",)),
        ),
    ),
    (
        # gpufleet reads a container's extended-resource limit as its request (limits are not modelled apart)
        "when request is needed for one PodSet (resource limit)",
        Create(
            PENDING,
            (),
            ("wl-check1-1", sets("wl-check1-1", ("ps1", 4)), {"p1": "v1"}),
            config=replace(CONFIG, managed_resources=("example.com/gpu",)),
            pod_sets=(PodSetNeed("ps1", 4, 4, frozenset({"cpu", "example.com/gpu"})), BASE[1]),
        ),
    ),
    (
        "when the request is removed while the check is ready; don't create the ProvReq and keep Ready state",
        Create(CheckState(CHECK, CHECK_READY), (), None),
    ),
    (
        "when request fails and is retried",
        Create(
            PENDING,
            (request(conditions=by_test("Failed")),),
            None,
            config=replace(CONFIG, retry=RetryStrategy(2, 60.0, 1800.0)),
        ),
    ),
    ("when request is provisioned", Create(PENDING, (request(conditions=by_test("Provisioned")),), None)),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=f"TestReconcile/{n}") for n, c in CREATE])
def test_reconcile_request_created(case: Create) -> None:
    """``syncOwnedProvisionRequest``: the request upstream's ``wantRequests`` holds (its name, its pod sets'
    templates and counts, its parameters), from the check's state and the request that is its active or last
    one (``activeOrLastPRForChecks``), after the check's state is synced (``syncCheckStates`` runs first: a
    failed request makes the check Retry, and no request is made until the eviction resets it to Pending)."""
    last = active_or_last(case.requests, WL, CHECK, case.config)
    needed = request_needed(case.pod_sets, case.config.managed_resources)
    state = sync_check(case.state, case.config, needed, last, WL, case.admitted) or case.state
    attempt = next_attempt(state, last, WL, case.admitted)
    if case.want is None:
        assert attempt is None
        return
    assert attempt is not None
    name = provisioning_request_name(WL, CHECK, attempt)
    got_sets = tuple(
        (pod_template_name(name, ps), count)
        for ps, count in merged_pod_sets(case.pod_sets, case.config.managed_resources)
    )
    assert (name, got_sets, request_parameters(case.config, dict(case.annotations))) == case.want


OTHER: list[tuple[str, str]] = [
    ("unrelated workload", SKIP_UNRELATED),
    ("unrelated workload with reservation", SKIP_UNRELATED),
    ("unrelated admitted workload", SKIP_UNRELATED),
    ("one template already created", "PodTemplate objects and their owner references are not modelled"),
    ("request removed on workload finished", SKIP_DELETE),
    ("request removed on workload evicted", SKIP_DELETE),
    ("request removed on workload evicted by admission check", SKIP_DELETE),
    (
        "request preserved on workload evicted when cleanup is disabled",
        "the CleanupProvisioningRequestsOnEviction gate turned off: gpufleet keeps Kueue's default "
        "(beta, on since 0.19)",
    ),
    ("when pod template creation error", SKIP_API),
    ("when provisioning request creation error", SKIP_API),
    ("when the provisioning request already exists", SKIP_API),
    ("when the existing request is already visible in the cache", SKIP_API),
    ("when request is provisioned and has NodeSelector specified via ProvisioningClassDetail", SKIP_DETAILS),
    ("when request is provisioned and has NodeSelector missing in the ProvisioningClassDetail", SKIP_DETAILS),
    ("with podSetMergePolicy IdenticalPodTemplates", SKIP_MERGE),
    ("with podSetMergePolicy IdenticalWorkloadSchedulingRequirements", SKIP_MERGE),
    ("with podSetMergePolicy but no PodSetAssignments", SKIP_MERGE),
]


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, id=f"TestReconcile/{n}", marks=pytest.mark.skip(reason=r)) for n, r in OTHER],
)
def test_reconcile_not_ported(name: str) -> None:
    raise AssertionError(name)


# -- TestActiveOrLastPRForChecks -------------------------------------------------------------------

PR1_FAILED = request("wl-check-1", by_test("Failed"), pod_sets=(("ps1", 4),))
PR2 = request("wl-check-2", pod_sets=(("ps1", 4),))


@pytest.mark.parametrize(
    ("requests", "want"),
    [
        pytest.param((), None, id="TestActiveOrLastPRForChecks/no provisioning requests"),
        pytest.param(
            (PR1_FAILED, PR2),
            "wl-check-2",
            id="TestActiveOrLastPRForChecks/two provisioning requests; 1 then 2",
        ),
        pytest.param(
            (PR2, PR1_FAILED),
            "wl-check-2",
            id="TestActiveOrLastPRForChecks/two provisioning requests; 2 then 1",
        ),
    ],
)
def test_active_or_last_pr_for_checks(requests: tuple[ProvisioningRequest, ...], want: str | None) -> None:
    found = active_or_last(requests, WL, "check", CONFIG)
    assert (found.name if found is not None else None) == want


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, id=f"TestIsMissingInCache/{n}", marks=pytest.mark.skip(reason=SKIP_API))
        for n in ("the cache has not observed the request yet", "the request is already visible")
    ]
    + [
        pytest.param(
            n,
            id=f"TestUpdateCheckMessage/{n}",
            marks=pytest.mark.skip(
                reason="updateCheckMessage's changed flag drives upstream's status patch; "
                "gpufleet compares whole check states (TestReconcile's message cases above hold the messages)"
            ),
        )
        for n in (
            "sets a message on a check that has none",
            "replaces an existing message",
            "clears an existing message when the new one is empty",
            "reports no change when the message is unchanged",
            "reports no change when both messages are empty",
        )
    ],
)
def test_not_ported(name: str) -> None:
    raise AssertionError(name)


def test_provisioning_request_names_and_attempts() -> None:
    """``ProvisioningRequestName``, ``getProvisioningRequestPodTemplateName``, ``getAttempt`` and
    ``limitObjectName`` (a name past 247 characters: cut, ``-`` and 5 hex digits of its SHA-1)."""
    assert provisioning_request_name("wl", "check1", 3) == "wl-check1-3"
    assert pod_template_name("wl-check1-3", "ps1") == "ppt-wl-check1-3-ps1"
    assert attempt_of("wl-check1-12", "wl", "check1") == 12
    assert attempt_of("wl-check2", "wl", "check1") is None
    long = provisioning_request_name("w" * 260, "c", 1)
    assert len(long) == 253 and long[247] == "-"
    assert synced_with_config(request(), CONFIG) and not synced_with_config(request(parameters={}), CONFIG)
