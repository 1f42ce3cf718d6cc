"""The Job controller's pod failure policy: ``TestMatchPodFailurePolicy``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/job/pod_failure_policy_test.go``, against
``gpufleet.model.pod_failure_policy.match_pod_failure_policy``. Upstream's pods are written as
:class:`FailedPod` (its name ``default/mypod``, its conditions, its containers' exit codes; a container
without a terminated state has exit code None). The feature gates are 1.34's defaults
(JobBackoffLimitPerIndex GA, on).
"""

from __future__ import annotations

import pytest

from gpufleet.model.pod_failure_policy import (
    COUNT,
    DISRUPTION_TARGET,
    FAIL_INDEX,
    FAIL_JOB,
    IGNORE,
    IN,
    NOT_IN,
    ContainerExit,
    FailedPod,
    OnExitCodes,
    OnPodCondition,
    PodFailurePolicy,
    PodFailurePolicyRule,
    match_pod_failure_policy,
)

GATE_OFF = (
    "JobBackoffLimitPerIndex turned off (emulating 1.32): 1.34's default (GA, on) is the one modelled, "
    "with FailIndex matched as the gate-on cases check"
)


def exits(*codes: tuple[str, int | None]) -> tuple[ContainerExit, ...]:
    return tuple(ContainerExit(name, code) for name, code in codes)


def on_codes(action: str, operator: str, *values: int) -> PodFailurePolicyRule:
    return PodFailurePolicyRule(action, on_exit_codes=OnExitCodes(operator, values))


def on_condition(action: str, status: str = "True", kind: str = DISRUPTION_TARGET) -> PodFailurePolicyRule:
    return PodFailurePolicyRule(action, on_pod_conditions=(OnPodCondition(kind, status),))


def pod(
    containers: tuple[ContainerExit, ...] = (),
    conditions: tuple[tuple[str, str], ...] = (),
    init: tuple[ContainerExit, ...] = (),
) -> FailedPod:
    return FailedPod("default", "mypod", conditions, containers, init)


def policy(*rules: PodFailurePolicyRule) -> PodFailurePolicy:
    return PodFailurePolicy(rules)


def fail_job_by_exit_code(code: int, index: int) -> str:
    """The message of a FailJob rule that matched container ``main-container``'s exit code."""
    return (
        f"Container main-container for pod default/mypod failed with exit code {code} matching FailJob "
        f"rule at index {index}"
    )


DISRUPTED = ((DISRUPTION_TARGET, "True"),)
MAIN_2 = exits(("main-container", 2))
UNNAMED_2 = exits(("", 2))

# name: (policy, pod, want message, want count failed, want action)
CASES: dict[str, tuple[PodFailurePolicy | None, FailedPod, str | None, bool, str | None]] = {
    "unknown action for rule matching by exit codes - skip rule with unknown action": (
        policy(on_codes("UnknownAction", IN, 1, 2), on_codes(FAIL_JOB, IN, 2, 3)),
        pod(MAIN_2),
        fail_job_by_exit_code(2, 1),
        True,
        FAIL_JOB,
    ),
    "unknown action for rule matching by pod conditions - skip rule with unknown action": (
        policy(on_condition("UnkonwnAction"), on_condition(IGNORE)),
        pod(conditions=DISRUPTED),
        None,
        False,
        IGNORE,
    ),
    "unknown operator - rule with unknown action is skipped for onExitCodes": (
        policy(on_codes(IGNORE, "UnknownOperator", 1, 2), on_codes(FAIL_JOB, IN, 2, 3)),
        pod(MAIN_2),
        fail_job_by_exit_code(2, 1),
        True,
        FAIL_JOB,
    ),
    "no policy rules": (None, pod(UNNAMED_2), None, True, None),
    "ignore rule matched for exit codes": (
        policy(on_codes(IGNORE, IN, 1, 2, 3)),
        pod(UNNAMED_2),
        None,
        False,
        IGNORE,
    ),
    "ignore rule matched on negative exit codes - needed for Windows support": (
        policy(on_codes(IGNORE, IN, -1073741676, -1073741510)),
        pod(exits(("", -1073741510))),
        None,
        False,
        IGNORE,
    ),
    "FailJob rule matched for exit codes": (
        policy(on_codes(FAIL_JOB, IN, 1, 2, 3)),
        pod(MAIN_2),
        fail_job_by_exit_code(2, 0),
        True,
        FAIL_JOB,
    ),
    "successful containers are skipped by the rules": (
        policy(on_codes(FAIL_JOB, NOT_IN, 111)),
        pod(
            exits(("main-container", 111), ("suppport-container", 0)),
            init=exits(("init-container", 0)),
        ),
        None,
        True,
        None,
    ),
    "FailIndex rule matched for exit codes; JobBackoffLimitPerIndex enabled": (
        policy(on_codes(FAIL_INDEX, IN, 1, 2, 3)),
        pod(UNNAMED_2),
        None,
        True,
        FAIL_INDEX,
    ),
    "pod failure policy with NotIn operator and value 0": (
        policy(on_codes(FAIL_JOB, NOT_IN, 0)),
        pod(exits(("main-container", 1), ("suppport-container", 0))),
        fail_job_by_exit_code(1, 0),
        True,
        FAIL_JOB,
    ),
    "second jobfail rule matched for exit codes": (
        policy(on_codes(COUNT, IN, 1, 2, 3), on_codes(FAIL_JOB, IN, 4, 5, 6)),
        pod(exits(("main-container", 6))),
        fail_job_by_exit_code(6, 1),
        True,
        FAIL_JOB,
    ),
    "count rule matched for exit codes": (
        policy(on_codes(COUNT, IN, 1, 2, 3)),
        pod(exits(("foo", None), ("bar", 2))),
        None,
        True,
        COUNT,
    ),
    "FailIndex rule matched for pod conditions; JobBackoffLimitPerIndex enabled": (
        policy(on_condition(FAIL_INDEX)),
        pod(conditions=DISRUPTED),
        None,
        True,
        FAIL_INDEX,
    ),
    "ignore rule matched for pod conditions": (
        policy(on_condition(IGNORE)),
        pod(conditions=DISRUPTED),
        None,
        False,
        IGNORE,
    ),
    "ignore rule matches by the status=False": (
        policy(on_condition(IGNORE, "False")),
        pod(conditions=((DISRUPTION_TARGET, "False"),)),
        None,
        False,
        IGNORE,
    ),
    "ignore rule matches by the status=Unknown": (
        policy(on_condition(IGNORE, "Unknown")),
        pod(conditions=((DISRUPTION_TARGET, "Unknown"),)),
        None,
        False,
        IGNORE,
    ),
    "ignore rule does not match when status for pattern is False, but actual True": (
        policy(on_condition(IGNORE, "False")),
        pod(conditions=DISRUPTED),
        None,
        True,
        None,
    ),
    "ignore rule does not match when status for pattern is True, but actual False": (
        policy(on_condition(IGNORE)),
        pod(conditions=((DISRUPTION_TARGET, "False"),)),
        None,
        True,
        None,
    ),
    "default - do not match condition with status=False": (
        policy(on_condition(IGNORE)),
        pod(conditions=((DISRUPTION_TARGET, "False"),)),
        None,
        True,
        None,
    ),
    "job fail rule matched for pod conditions": (
        policy(on_condition(FAIL_JOB)),
        pod(conditions=DISRUPTED),
        "Pod default/mypod has condition DisruptionTarget matching FailJob rule at index 0",
        True,
        FAIL_JOB,
    ),
    "count rule matched for pod conditions": (
        policy(on_condition(COUNT)),
        pod(conditions=DISRUPTED),
        None,
        True,
        COUNT,
    ),
    "no rule matched": (
        policy(
            on_codes(COUNT, NOT_IN, 8),
            on_codes(IGNORE, IN, 1, 2, 3),
            on_codes(FAIL_JOB, NOT_IN, 5, 6, 7),
            on_condition(COUNT, kind="ResourceLimitExceeded"),
            on_condition(IGNORE),
        ),
        pod(exits(("", 32))),
        None,
        True,
        COUNT,
    ),
}

SKIPPED = {
    "FailIndex rule matched for exit codes; JobBackoffLimitPerIndex disabled": GATE_OFF,
    "FailIndex rule matched for pod conditions; JobBackoffLimitPerIndex disabled": GATE_OFF,
}


@pytest.mark.parametrize(
    ("name", "case"),
    [pytest.param(name, case, id=f"TestMatchPodFailurePolicy/{name}") for name, case in CASES.items()]
    + [
        pytest.param(
            name, None, id=f"TestMatchPodFailurePolicy/{name}", marks=pytest.mark.skip(reason=reason)
        )
        for name, reason in SKIPPED.items()
    ],
)
def test_match_pod_failure_policy(
    name: str, case: tuple[PodFailurePolicy | None, FailedPod, str | None, bool, str | None]
) -> None:
    rules, failed, want_message, want_count, want_action = case
    got = match_pod_failure_policy(rules, failed)
    assert got.job_failure_message == want_message
    assert got.count_failed is want_count
    assert got.action == want_action
