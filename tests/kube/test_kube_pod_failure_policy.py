"""A Job's ``spec.podFailurePolicy`` as the API server checks it (``pkg/apis/batch/validation``:
``validatePodFailurePolicy``, ``validatePodFailurePolicyRule`` and its ``onExitCodes`` and
``onPodConditions`` checks) and what gpufleet cannot model of it (the exit codes of containers other than
the first)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kube_manifests import load, problems, warnings

from gpufleet.model.pod_failure_policy import OnExitCodes, PodFailurePolicyRule

LABEL = "scenario.yaml: document 1 (Job/default/train)"


def job(rules: str, restart: str = "Never", extra: str = "") -> str:
    return textwrap.dedent(
        f"""
        apiVersion: batch/v1
        kind: Job
        metadata: {{name: train}}
        spec:
          {extra}
          podFailurePolicy:
            rules: {rules}
          template:
            metadata: {{annotations: {{gpufleet.io/duration: 1h}}}}
            spec:
              restartPolicy: {restart}
              containers: [{{name: main, image: x}}]
        """
    )


IGNORE_DISRUPTION = "[{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]"


def test_pod_failure_policy_needs_restart_policy_never(tmp_path: Path) -> None:
    assert problems(tmp_path, job(IGNORE_DISRUPTION, restart="OnFailure")) == [
        f'{LABEL}: spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported '
        "when podFailurePolicy is specified"
    ]


def test_pod_failure_policy_rule_action_is_checked(tmp_path: Path) -> None:
    rules = (
        "[{onPodConditions: [{type: DisruptionTarget}]}, {action: Retry, onPodConditions: [{type: A}]},"
        " {action: FailIndex, onPodConditions: [{type: A}]}]"
    )
    at = f"{LABEL}: spec.podFailurePolicy.rules"
    assert problems(tmp_path, job(rules)) == [
        f"{at}[0].action: Required value",  # (the OpenAPI schema's required field, found first)
        f'{at}[1].action: Unsupported value: "Retry": supported values: "Count", "FailIndex", "FailJob", '
        '"Ignore"',
        f'{at}[2].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
    ]


def test_pod_failure_policy_rule_needs_one_requirement(tmp_path: Path) -> None:
    rules = (
        "[{action: Ignore}, {action: Count, onExitCodes: {operator: In, values: [1]},"
        " onPodConditions: [{type: DisruptionTarget}]}]"
    )
    at = f"{LABEL}: spec.podFailurePolicy.rules"
    assert problems(tmp_path, job(rules)) == [
        f"{at}[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
        f"{at}[1]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
    ]


def test_pod_failure_policy_exit_codes_are_checked(tmp_path: Path) -> None:
    rules = (
        "[{action: FailJob, onExitCodes: {containerName: sidecar, operator: In, values: [0, 3, 3, 2]}},"
        " {action: FailJob, onExitCodes: {operator: Between, values: []}}]"
    )
    at = f"{LABEL}: spec.podFailurePolicy.rules"
    assert problems(tmp_path, job(rules)) == [
        f'{at}[0].onExitCodes.containerName: Invalid value: "sidecar": must be one of the container or '
        "initContainer names in the pod template",
        f"{at}[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
        f"{at}[0].onExitCodes.values[2]: Duplicate value: 3",
        f"{at}[0].onExitCodes.values: Invalid value: [0, 3, 3, 2]: must be ordered",
        f'{at}[1].onExitCodes.operator: Unsupported value: "Between": supported values: "In", "NotIn"',
        f"{at}[1].onExitCodes.values: Invalid value: []: at least one value is required",
    ]


def test_pod_failure_policy_condition_status_is_checked(tmp_path: Path) -> None:
    rules = "[{action: Ignore, onPodConditions: [{type: DisruptionTarget, status: Maybe}]}]"
    assert problems(tmp_path, job(rules)) == [
        f'{LABEL}: spec.podFailurePolicy.rules[0].onPodConditions[0].status: Unsupported value: "Maybe": '
        'supported values: "False", "True", "Unknown"'
    ]


def test_pod_failure_policy_exit_code_rules_on_the_first_container_are_read_without_a_warning(
    tmp_path: Path,
) -> None:
    """The simulation gives a failed pod's first container an exit code (``model.pod_failure_policy``), so
    an ``onExitCodes`` rule on it is modelled: no warning (it used to say the rule never matches)."""
    text = job("[{action: FailJob, onExitCodes: {containerName: main, operator: In, values: [42]}}]")
    assert warnings(tmp_path, text) == []
    (train,) = load(tmp_path, text).jobs
    assert train.pod_failure_policy is not None
    assert train.pod_failure_policy.rules == (
        PodFailurePolicyRule("FailJob", on_exit_codes=OnExitCodes("In", (42,), "main")),
    )


def test_pod_failure_policy_exit_code_rule_on_another_container_warns_it_matches_no_simulated_pod(
    tmp_path: Path,
) -> None:
    """Only the first container gets an exit code in the simulation: a rule naming an init container or a
    sidecar is kept (a snapshot's pods have their statuses) with a warning."""
    text = job(
        "[{action: FailJob, onExitCodes: {containerName: init, operator: In, values: [42]}},"
        " {action: Ignore, onExitCodes: {operator: In, values: [137]}}]"
    ).replace(
        "containers: [{name: main, image: x}]",
        "containers: [{name: main, image: x}]\n      initContainers: [{name: init, image: x}]",
    )
    assert warnings(tmp_path, text) == [
        f"{LABEL}: spec.podFailurePolicy.rules[0].onExitCodes.containerName init is not modelled (the "
        "simulation gives an exit code to a pod's first container only: the rule matches no simulated pod); "
        "ignored"
    ]


def test_pod_failure_policy_fail_index_with_backoff_limit_per_index_is_modelled(tmp_path: Path) -> None:
    """``FailIndex`` with ``backoffLimitPerIndex`` fails the pod's index (``model.failed_indexes``): read
    without a warning."""
    text = job(
        "[{action: FailIndex, onPodConditions: [{type: DisruptionTarget}]}]",
        extra="completions: 2\n          completionMode: Indexed\n          backoffLimitPerIndex: 1",
    )
    assert not any("FailIndex" in line for line in warnings(tmp_path, text))
    (train,) = load(tmp_path, text).jobs
    assert train.backoff_limit_per_index == 1
    assert train.pod_failure_policy is not None
    assert train.pod_failure_policy.rules[0].action == "FailIndex"
