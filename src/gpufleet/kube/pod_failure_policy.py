"""A Job's ``spec.podFailurePolicy``, read and checked as ``pkg/apis/batch/validation``
(``validatePodFailurePolicy``, ``validatePodFailurePolicyRule``) checks it, with ``SetDefaults_Job``'s
default (an ``onPodConditions`` pattern's ``status`` is ``True``).

An ``onExitCodes`` rule matches the exit code the simulation gives a failed pod's first container
(``model.pod_failure_policy``: 137 for an OOM kill or a container killed at deletion, eviction or
preemption, ``gpufleet.io/exit-code``'s) and a snapshot's pod's container statuses. A rule whose
``containerName`` names another container (an init container, a sidecar) matches a snapshot's pods only:
the simulation gives no other container an exit code (a warning says so). ``FailIndex`` needs
``backoffLimitPerIndex``: it fails the pod's index (``model.failed_indexes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from gpufleet.kube.objects import items, mapping
from gpufleet.kube.problems import Reporter, duplicate, invalid, required, too_many, unsupported
from gpufleet.model.pod_failure_policy import (
    ACTIONS,
    CONDITION_STATUSES,
    FAIL_INDEX,
    IN,
    OPERATORS,
    OnExitCodes,
    OnPodCondition,
    PodFailurePolicy,
    PodFailurePolicyRule,
)

#: ``maxPodFailurePolicyRules``, ``maxPodFailurePolicyOnExitCodesValues``,
#: ``maxPodFailurePolicyOnPodConditionsPatterns``
MAX_RULES, MAX_EXIT_CODE_VALUES, MAX_CONDITION_PATTERNS = 20, 255, 20
NO_EXIT_CODES = (
    "the simulation gives an exit code to a pod's first container only: the rule matches no simulated pod"
)
ONLY_NEVER = 'only "Never" is supported when podFailurePolicy is specified'


def _valid_values(values: tuple[str, ...]) -> str:
    """Go's ``%q`` of a sorted string list: ``valid values: ["Count" "FailJob"]``."""
    return "valid values: [" + " ".join(f'"{v}"' for v in values) + "]"


def pod_failure_policy(spec: Mapping[str, Any], at_spec: Reporter) -> PodFailurePolicy | None:
    """``spec.podFailurePolicy`` of a JobSpec (``at_spec`` reports at the spec), None when absent."""
    raw = spec.get("podFailurePolicy")
    if raw is None:
        return None
    at = at_spec.at("podFailurePolicy")
    template_spec = mapping(mapping(spec.get("template")).get("spec"))
    restart = template_spec.get("restartPolicy")
    if restart == "OnFailure":  # (Always is refused for every Job already)
        at_spec.error("template.spec.restartPolicy", invalid(restart, ONLY_NEVER))
    names = {
        str(c.get("name"))
        for field in ("containers", "initContainers")
        for c in items(template_spec.get(field))
    }
    first = next((str(c.get("name")) for c in items(template_spec.get("containers"))), None)
    body = mapping(raw)
    rules = items(body.get("rules"))
    if len(rules) > MAX_RULES:
        at.error("rules", too_many(len(rules), MAX_RULES))
    has_per_index = spec.get("backoffLimitPerIndex") is not None
    read = tuple(
        _rule(rule, at.at(f"rules[{i}]"), names, has_per_index, first) for i, rule in enumerate(rules)
    )
    return PodFailurePolicy(read)


def _rule(
    rule: Mapping[str, Any], at: Reporter, names: set[str], has_per_index: bool, first: str | None
) -> PodFailurePolicyRule:
    """One rule; ``first``: the name of the template's first container, the one the simulation gives an
    exit code."""
    action = rule.get("action") or ""
    if not action:
        at.error("action", required(_valid_values(ACTIONS)))
    elif action == FAIL_INDEX:
        if not has_per_index:
            at.error("action", invalid(action, "requires the backoffLimitPerIndex to be set"))
    elif action not in ACTIONS:
        at.error("action", unsupported(action, ACTIONS))
    exit_codes = rule.get("onExitCodes")
    on_exit_codes = (
        _on_exit_codes(mapping(exit_codes), at.at("onExitCodes"), names) if exit_codes is not None else None
    )
    patterns = items(rule.get("onPodConditions"))
    conditions = _on_pod_conditions(patterns, at.at("onPodConditions"))
    if on_exit_codes is not None and conditions:
        at.error("", "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported")
    if on_exit_codes is None and not conditions:
        at.error("", "Invalid value: specifying one of OnExitCodes and OnPodConditions is required")
    container = None if on_exit_codes is None else on_exit_codes.container_name
    if container is not None and container != first and container in names:
        at.not_modelled("onExitCodes.containerName", container, note=NO_EXIT_CODES)
    return PodFailurePolicyRule(action, on_exit_codes, conditions)


def _on_exit_codes(body: Mapping[str, Any], at: Reporter, names: set[str]) -> OnExitCodes:
    """``validatePodFailurePolicyRuleOnExitCodes``."""
    operator = body.get("operator") or ""
    if not operator:
        at.error("operator", required(_valid_values(OPERATORS)))
    elif operator not in OPERATORS:
        at.error("operator", unsupported(operator, OPERATORS))
    container = body.get("containerName")
    if container is not None and str(container) not in names:
        at.error(
            "containerName",
            invalid(container, "must be one of the container or initContainer names in the pod template"),
        )
    raw = body.get("values")
    values = [v for v in raw if isinstance(v, int)] if isinstance(raw, list) else []
    if not values:
        at.error("values", invalid(values, "at least one value is required"))
    elif len(values) > MAX_EXIT_CODE_VALUES:
        at.error("values", too_many(len(values), MAX_EXIT_CODE_VALUES))
    seen: set[int] = set()
    for j, value in enumerate(values):
        if operator == IN and value == 0:
            at.error(f"values[{j}]", invalid(value, "must not be 0 for the In operator"))
        if value in seen:
            at.error(f"values[{j}]", duplicate(value))
        seen.add(value)
    if any(a > b for a, b in pairwise(values)):
        at.error("values", invalid(values, "must be ordered"))
    return OnExitCodes(operator, tuple(values), None if container is None else str(container))


def _on_pod_conditions(patterns: list[dict[str, Any]], at: Reporter) -> tuple[OnPodCondition, ...]:
    """``validatePodFailurePolicyRuleOnPodConditions``, a pattern's ``status`` defaulting to ``True``."""
    if len(patterns) > MAX_CONDITION_PATTERNS:
        at.error("", too_many(len(patterns), MAX_CONDITION_PATTERNS))
    out = []
    for j, pattern in enumerate(patterns):
        kind = str(pattern.get("type") or "")
        if not kind:
            at.error(f"[{j}].type", required("name part must be non-empty"))
        status = str(pattern.get("status") or "True")  # SetDefaults_Job
        if status not in CONDITION_STATUSES:
            at.error(f"[{j}].status", unsupported(status, CONDITION_STATUSES))
        out.append(OnPodCondition(kind, status))
    return tuple(out)
