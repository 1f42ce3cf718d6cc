"""A Job's ``spec.successPolicy``, read and checked as ``pkg/apis/batch/validation`` checks it
(``validateSuccessPolicy``, ``validateSuccessPolicyRule``, ``validateIndexesFormat``): it requires the
Indexed completion mode, at least one and at most 20 rules, each with ``succeededIndexes`` (at most
64 KiB, intervals in increasing order below ``completions``) and/or ``succeededCount`` (not negative,
at most ``completions`` and at most the count of its ``succeededIndexes``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.objects import items, mapping
from gpufleet.kube.problems import Reporter, invalid, required, too_many
from gpufleet.model.completion_indexes import SuccessPolicy, SuccessPolicyRule, indexes_format_error

#: ``maxSuccessPolicyRule`` and ``maxJobSuccessPolicySucceededIndexesLimit``
MAX_RULES, MAX_SUCCEEDED_INDEXES_BYTES = 20, 64 * 1024


def success_policy(
    spec: Mapping[str, Any], at_spec: Reporter, indexed: bool, completions: int | None
) -> SuccessPolicy | None:
    """``spec.successPolicy`` of a JobSpec (``at_spec`` reports at the spec), None when absent or refused."""
    raw = spec.get("successPolicy")
    if raw is None:
        return None
    if not indexed or completions is None:
        at_spec.error("successPolicy", invalid(raw, "requires indexed completion mode"))
        return None
    at = at_spec.at("successPolicy")
    rules = items(mapping(raw).get("rules"))
    if not rules:
        at.error(
            "rules", required("at least one rules must be specified when the successPolicy is specified")
        )
    if len(rules) > MAX_RULES:
        at.error("rules", too_many(len(rules), MAX_RULES))
    return SuccessPolicy(
        tuple(_rule(rule, at.at(f"rules[{i}]"), completions) for i, rule in enumerate(rules))
    )


def _rule(rule: Mapping[str, Any], at: Reporter, completions: int) -> SuccessPolicyRule:
    indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
    if indexes is None and count is None:
        at.error("", required("at least one of succeededCount or succeededIndexes must be specified"))
    total = 0
    if indexes is not None:
        text = str(indexes)
        if len(text.encode()) > MAX_SUCCEEDED_INDEXES_BYTES:
            at.error(
                "succeededIndexes", f"Too long: may not be more than {MAX_SUCCEEDED_INDEXES_BYTES} bytes"
            )
        total, problem = indexes_format_error(text, completions)
        if problem is not None:
            at.error("succeededIndexes", invalid(text, f"error parsing succeededIndexes: {problem}"))
    if count is not None:
        if not isinstance(count, int) or isinstance(count, bool):
            at.error("succeededCount", invalid(count, "must be an integer"))
            count = None
        else:
            if count < 0:
                at.error("succeededCount", invalid(count, "must be greater than or equal to 0"))
            if count > completions:
                at.error(
                    "succeededCount",
                    invalid(
                        count,
                        f"must be less than or equal to {completions} (the number of specified completions)",
                    ),
                )
            if indexes is not None and count > total:
                at.error(
                    "succeededCount",
                    invalid(
                        count,
                        f"must be less than or equal to {total} (the number of indexes in the specified "
                        "succeededIndexes field)",
                    ),
                )
    return SuccessPolicyRule(None if indexes is None else str(indexes), count)
