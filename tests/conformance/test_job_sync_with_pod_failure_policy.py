"""The Job controller's sync of a Job with ``spec.podFailurePolicy``: ``TestSyncJobWithJobPodFailurePolicy``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/job/job_controller_test.go``. A row's Job (its
policy, ``parallelism``, ``completions``, ``backoffLimit``, completion mode) and pods (``mypod-<i>``, each
holding the job-tracking finalizer; its phase, its ``status.conditions``, its containers' and init
containers' ``state.terminated`` exit codes) and the Job's ``status.conditions`` are adopted as
``test_job_controller_sync`` adopts them (``Row``, ``adopted``: a failed pod is read by ``failed_pod_status``
and counted as ``matchPodFailurePolicy`` counts it), then synced once (``synced``: the pods the Job deletes
end, counted failed as it failed). Compared: ``status.active``/``succeeded``/``failed`` and the Job's
conditions (type, reason, message); where the row gives it, ``status.terminating`` and the pods created.

Upstream runs each row emulating 1.33 with ``JobPodReplacementPolicy`` off and ``JobManagedBy`` off unless the
row's name says it is enabled. gpufleet models 1.34's defaults, both on (``delayTerminalCondition``): a Job
that fails gets the interim ``FailureTarget`` condition, and ``Failed`` once none of its pods is terminating.
A row with ``JobManagedBy`` enabled is compared as that one sync leaves the Job (the pods it deleted still
terminating); a row with the gates off writes the terminal condition at once, and the interim
``FailureTarget`` only for a ``FailJob`` rule (``newFailureCondition`` writes ``Failed`` for the other
reasons): it is compared with the conditions the Job ends with, less an interim ``FailureTarget`` of another
reason than ``PodFailurePolicy``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest
from test_job_controller_sync import Row, adopted, synced

from gpufleet.model.pod_failure_policy import (
    COUNT,
    DISRUPTION_TARGET,
    FAIL_JOB,
    IGNORE,
    IN,
    NOT_IN,
    REASON_POD_FAILURE_POLICY,
    OnExitCodes,
    OnPodCondition,
    PodFailurePolicy,
    PodFailurePolicyRule,
)
from gpufleet.workloads.job import BACKOFF_LIMIT_EXCEEDED, FAILURE_TARGET, JobController

#: upstream's ``onExitCodeRules``: Ignore exit codes 1, 2, 3; FailJob 5, 6, 7
ON_EXIT_CODE_RULES = PodFailurePolicy(
    (
        PodFailurePolicyRule(IGNORE, OnExitCodes(IN, (1, 2, 3))),
        PodFailurePolicyRule(FAIL_JOB, OnExitCodes(IN, (5, 6, 7))),
    )
)


def on_conditions(*rules: tuple[str, str]) -> PodFailurePolicy:
    """A policy of ``(action, pod condition type)`` rules, each on the condition's status ``True``."""
    return PodFailurePolicy(
        tuple(
            PodFailurePolicyRule(action, on_pod_conditions=(OnPodCondition(kind),)) for action, kind in rules
        )
    )


def terminated(*containers: tuple[str, int], init: tuple[tuple[str, int], ...] = ()) -> dict[str, Any]:
    """A pod's status whose containers (and init containers) ``(name, exit code)`` terminated."""

    def statuses(of: tuple[tuple[str, int], ...]) -> list[dict[str, Any]]:
        return [{"name": name, "state": {"terminated": {"exitCode": code}}} for name, code in of]

    return {"containerStatuses": statuses(containers), "initContainerStatuses": statuses(init)}


def with_conditions(*kinds: str, **status: Any) -> dict[str, Any]:
    """A pod's status with the conditions ``kinds`` (status ``True``), and ``status`` besides."""
    return {"conditions": [{"type": kind, "status": "True"} for kind in kinds], **status}


def fail_job(message: str) -> tuple[tuple[str, str, str], ...]:
    """The conditions of a Job a ``FailJob`` rule failed: ``FailureTarget``, then ``Failed``."""
    return (
        (FAILURE_TARGET, REASON_POD_FAILURE_POLICY, message),
        ("Failed", REASON_POD_FAILURE_POLICY, message),
    )


def exit_code_5(pod: str = "mypod-0", container: str = "main-container") -> str:
    """A ``FailJob`` message: ``container`` of ``pod`` exited 5, the rule at index 1 (``onExitCodeRules``)."""
    return (
        f"Container {container} for pod default/{pod} failed with exit code 5 matching FailJob rule at "
        "index 1"
    )


@dataclass(frozen=True)
class PolicyRow:
    """A row: the Job, its pods and the counts wanted (``row``), its conditions wanted (type, reason,
    message), and whether it runs with ``JobManagedBy`` enabled."""

    row: Row
    conditions: tuple[tuple[str, str, str], ...] = ()
    managed_by: bool = False


MAIN_EXITED_5 = {0: terminated(("main-container", 5))}
FAILED_ONE_POD = Row(1, 1, 6, failed=1, policy=ON_EXIT_CODE_RULES, pod_statuses=MAIN_EXITED_5, want_failed=1)
#: a Running pod and one Failed with exit code 5: the FailJob rule fails the Job, the running pod counted
MULTIPLE_PODS = Row(
    2,
    2,
    6,
    active=1,
    failed=1,
    policy=ON_EXIT_CODE_RULES,
    pod_statuses={1: terminated(("main-container", 5))},
    want_failed=2,
)
#: exit code 10 matches no rule: counted, past backoffLimit 0
UNMATCHED_EXIT_CODE = Row(
    1, 1, 0, failed=1, policy=ON_EXIT_CODE_RULES, pod_statuses={0: terminated(("", 10))}, want_failed=1
)
DISRUPTED = {0: with_conditions(DISRUPTION_TARGET)}


def marked_failure_target(pod: str) -> PolicyRow:
    """``FAILED_ONE_POD`` whose status has the ``FailureTarget`` condition of an earlier sync naming ``pod``:
    the Job fails with its reason and message (``newFailedConditionForFailureTarget``), not the message its
    pod's ``FailJob`` rule would give."""
    message = exit_code_5(pod)
    condition = {
        "type": FAILURE_TARGET,
        "status": "True",
        "reason": REASON_POD_FAILURE_POLICY,
        "message": message,
    }
    return PolicyRow(replace(FAILED_ONE_POD, status={"conditions": [condition]}), fail_job(message))


CASES: dict[str, PolicyRow] = {
    "default handling for pod failure if the container matching the exit codes does not match the "
    "containerName restriction": PolicyRow(
        Row(
            1,
            1,
            6,
            failed=1,
            policy=PodFailurePolicy(
                (
                    PodFailurePolicyRule(IGNORE, OnExitCodes(IN, (1, 2, 3), "main-container")),
                    PodFailurePolicyRule(FAIL_JOB, OnExitCodes(IN, (5, 6, 7), "main-container")),
                )
            ),
            pod_statuses={0: terminated(("monitoring-container", 5), ("main-container", 42))},
            want_active=1,
            want_failed=1,
        )
    ),
    "running pod should not result in job fail based on OnExitCodes": PolicyRow(
        Row(1, 1, 6, active=1, policy=ON_EXIT_CODE_RULES, pod_statuses=MAIN_EXITED_5, want_active=1)
    ),
    "fail job based on OnExitCodes": PolicyRow(FAILED_ONE_POD, fail_job(exit_code_5())),
    "job marked already as failure target with failed pod": marked_failure_target("mypod-0"),
    "job marked already as failure target with failed pod, message based on already deleted pod": (
        marked_failure_target("already-deleted-pod")
    ),
    "fail job with multiple pods": PolicyRow(MULTIPLE_PODS, fail_job(exit_code_5("mypod-1"))),
    "fail job with multiple pods; JobManagedBy enabled delays setting terminal condition": PolicyRow(
        MULTIPLE_PODS, fail_job(exit_code_5("mypod-1"))[:1], managed_by=True
    ),
    "fail indexed job based on OnExitCodes": PolicyRow(
        Row(
            1,
            1,
            6,
            indexed=True,
            with_indexes=(("0", "Failed"),),
            policy=ON_EXIT_CODE_RULES,
            pod_statuses=MAIN_EXITED_5,
            want_failed=1,
        ),
        fail_job(exit_code_5()),
    ),
    "fail job based on OnExitCodes with NotIn operator": PolicyRow(
        Row(
            1,
            1,
            6,
            failed=1,
            policy=PodFailurePolicy((PodFailurePolicyRule(FAIL_JOB, OnExitCodes(NOT_IN, (5, 6, 7))),)),
            pod_statuses={0: terminated(("main-container", 42))},
            want_failed=1,
        ),
        fail_job(
            "Container main-container for pod default/mypod-0 failed with exit code 42 matching FailJob rule "
            "at index 0"
        ),
    ),
    "default handling job based on OnExitCodes with NotIn operator": PolicyRow(
        Row(
            1,
            1,
            6,
            failed=1,
            policy=PodFailurePolicy((PodFailurePolicyRule(FAIL_JOB, OnExitCodes(NOT_IN, (5, 6, 7))),)),
            pod_statuses=MAIN_EXITED_5,
            want_active=1,
            want_failed=1,
        )
    ),
    "fail job based on OnExitCodes for InitContainer": PolicyRow(
        Row(
            1,
            1,
            6,
            failed=1,
            policy=ON_EXIT_CODE_RULES,
            pod_statuses={0: terminated(("main-container", 143), init=(("init-container", 5),))},
            want_failed=1,
        ),
        fail_job(exit_code_5(container="init-container")),
    ),
    "ignore pod failure; both rules are matching, the first is executed only": PolicyRow(
        Row(
            1,
            1,
            0,
            failed=1,
            policy=ON_EXIT_CODE_RULES,
            pod_statuses={0: terminated(("container1", 2), ("container2", 6))},
            want_active=1,
        )
    ),
    "ignore pod failure based on OnExitCodes": PolicyRow(
        Row(
            1, 1, 0, failed=1, policy=ON_EXIT_CODE_RULES, pod_statuses={0: terminated(("", 1))}, want_active=1
        )
    ),
    "default job based on OnExitCodes": PolicyRow(
        UNMATCHED_EXIT_CODE, (("Failed", *BACKOFF_LIMIT_EXCEEDED),)
    ),
    "default job based on OnExitCodes; JobManagedBy enabled triggers adding interim condition": PolicyRow(
        UNMATCHED_EXIT_CODE,
        ((FAILURE_TARGET, *BACKOFF_LIMIT_EXCEEDED), ("Failed", *BACKOFF_LIMIT_EXCEEDED)),
        managed_by=True,
    ),
    "count pod failure based on OnExitCodes; both rules are matching, the first is executed only": PolicyRow(
        Row(
            1,
            1,
            6,
            failed=1,
            policy=PodFailurePolicy(
                (
                    PodFailurePolicyRule(COUNT, OnExitCodes(IN, (1, 2))),
                    PodFailurePolicyRule(IGNORE, OnExitCodes(IN, (2, 3))),
                )
            ),
            pod_statuses={0: terminated(("", 2))},
            want_active=1,
            want_failed=1,
        )
    ),
    "count pod failure based on OnPodConditions; both rules are matching, the first is executed "
    "only": PolicyRow(
        Row(
            1,
            1,
            6,
            failed=1,
            policy=on_conditions((COUNT, "ResourceLimitExceeded"), (IGNORE, DISRUPTION_TARGET)),
            # (its container terminated without an exit code: 0)
            pod_statuses={
                0: with_conditions("ResourceLimitExceeded", DISRUPTION_TARGET, **terminated(("", 0)))
            },
            want_active=1,
            want_failed=1,
        )
    ),
    "ignore pod failure based on OnPodConditions": PolicyRow(
        Row(
            1,
            1,
            0,
            failed=1,
            policy=on_conditions((IGNORE, DISRUPTION_TARGET)),
            pod_statuses=DISRUPTED,
            want_active=1,
        )
    ),
    "fail job based on OnPodConditions": PolicyRow(
        Row(
            1,
            1,
            6,
            failed=1,
            policy=on_conditions((FAIL_JOB, DISRUPTION_TARGET)),
            pod_statuses=DISRUPTED,
            want_failed=1,
        ),
        fail_job("Pod default/mypod-0 has condition DisruptionTarget matching FailJob rule at index 0"),
    ),
}

CASES |= {
    # onlyReplaceFailedPods (a podFailurePolicy): the pod being deleted is neither counted nor replaced
    # until it is Failed (manageJob: wantActive - terminating - active); terminating (1.34's default gates)
    "terminating Pod not considered failed when JobPodFailurePolicy is enabled and used": PolicyRow(
        Row(1, -1, 0, terminating=1, policy=on_conditions((COUNT, DISRUPTION_TARGET)), want_terminating=1)
    ),
}

SKIPPED = {
    "ignore pod failure based on OnPodConditions, ignored failures delays pod recreation": (
        "the pod failure backoff of a snapshot's failed pod: upstream's newBackoffRecord counts the ignored "
        "failure as ending at its deletionTimestamp (now, getFinishedTime) and holds the replacement back "
        "10 s; gpufleet's backoff is the driver's delay after a failure it sees (BacksOff.retry_delay_s), "
        "adoption carries no finish time, and the replacement is created in this sync"
    ),
}


def conditions(controller: JobController) -> tuple[tuple[str, str, str], ...]:
    return tuple((c.type, c.reason, c.message) for c in controller.status_conditions())


def gates_off(ended: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str, str], ...]:
    """The conditions the Job ends with as upstream writes them with ``JobPodReplacementPolicy`` and
    ``JobManagedBy`` off: no interim ``FailureTarget`` but a ``FailJob`` rule's (``newFailureCondition``)."""
    return tuple(c for c in ended if c[0] != FAILURE_TARGET or c[1] == REASON_POD_FAILURE_POLICY)


@pytest.mark.parametrize(
    "case",
    [pytest.param(case, id=f"TestSyncJobWithJobPodFailurePolicy/{name}") for name, case in CASES.items()]
    + [
        pytest.param(
            None, id=f"TestSyncJobWithJobPodFailurePolicy/{name}", marks=pytest.mark.skip(reason=why)
        )
        for name, why in SKIPPED.items()
    ],
)
def test_sync_job_with_job_pod_failure_policy(case: PolicyRow) -> None:
    """``matchPodFailurePolicy`` in ``syncJob``: a ``FailJob`` rule fails the Job (reason
    ``PodFailurePolicy``, the message naming the container and exit code, or the condition, and the rule's
    index; its other pods then count failed), an ``Ignore`` rule's failure is not counted and the pod
    replaced, a ``Count`` rule's or an unmatched failure counts toward ``backoffLimit``."""
    row = case.row
    controller, owned = adopted(row)
    written = conditions(controller)  # the pods the Job deletes still terminating
    created, _ = synced(controller, owned)

    counts = controller.status_counts()
    assert (counts["active"], counts["succeeded"], counts["failed"]) == (
        row.want_active,
        row.want_succeeded,
        row.want_failed,
    )
    assert (written if case.managed_by else gates_off(conditions(controller))) == case.conditions
    if row.want_terminating is not None:
        assert (len(created), counts["terminating"]) == (row.creations, row.want_terminating)
