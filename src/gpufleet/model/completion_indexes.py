"""An Indexed Job's completion indexes written as intervals (``1,3-5``): ``status.completedIndexes`` and a
``spec.successPolicy`` rule's ``succeededIndexes`` (``pkg/controller/job``'s ``parseIndexesFromString``,
``pkg/apis/batch/validation``'s ``validateIndexesFormat``), and ``spec.successPolicy``
(``success_policy.go``: ``matchSuccessPolicy``). Upstream keeps them as ``orderedIntervals``; here they
are sets of indexes."""

from __future__ import annotations

from dataclasses import dataclass

#: ``JobReasonSuccessPolicy``: the reason of the ``SuccessCriteriaMet`` and ``Complete`` conditions a rule
#: of ``successPolicy`` sets
REASON_SUCCESS_POLICY = "SuccessPolicy"


def parse_indexes(value: object, completions: int | None) -> frozenset[int]:
    """``status.completedIndexes`` (``1,3-5``) as a set, as ``parseIndexesFromString`` reads it: a part
    that does not parse is skipped, an interval is cut at ``completions`` and none from there on is read
    (None: no limit)."""
    found: set[int] = set()
    for part in str(value or "").split(","):
        limits = part.split("-")
        if not limits[0].isdigit():
            continue
        first = int(limits[0])
        if completions is not None and first >= completions:
            break
        if len(limits) > 1 and not limits[1].isdigit():
            continue
        last = int(limits[1]) if len(limits) > 1 else first
        if completions is not None:
            last = min(last, completions - 1)
        found.update(range(first, last + 1))
    return frozenset(found)


def indexes_format_error(value: str, completions: int) -> tuple[int, str | None]:
    """``validateIndexesFormat``: the count of indexes ``value`` names, or its problem (``non-increasing
    order``, ``too large index``, ``cannot convert string to integer``) with a count of 0."""
    if not value:
        return 0, None
    last: int | None = None
    total = 0
    for interval in value.split(","):
        limits = interval.split("-")
        if len(limits) > 2:
            return 0, (
                f'the fragment "{interval}" violates the requirement that an index interval can have at '
                "most two parts separated by '-'"
            )
        bounds: list[int] = []
        for limit in limits:
            digits = limit[1:] if limit[:1] in "+-" else limit
            if not digits.isdigit() or len(digits.lstrip("0")) > 18:  # (Atoi: beyond int64 does not parse)
                return 0, f'cannot convert string to integer for index: "{limit}"'
            if int(limit) >= completions:
                return 0, f'too large index: "{limit}"'
            bounds.append(int(limit))
        first, end = bounds[0], bounds[-1]
        if len(bounds) == 2 and first >= end:
            return 0, f"non-increasing order, previous: {first}, current: {end}"
        if last is not None and last >= first:
            return 0, f"non-increasing order, previous: {last}, current: {first}"
        total += end - first + 1
        last = end
    return total, None


@dataclass(frozen=True)
class SuccessPolicyRule:
    """``SuccessPolicyRule``: the indexes that must have succeeded (``succeededIndexes``, as written),
    and/or how many of them (or, without indexes, of all) must have."""

    succeeded_indexes: str | None = None
    succeeded_count: int | None = None


@dataclass(frozen=True)
class SuccessPolicy:
    """``spec.successPolicy`` of an Indexed Job: it succeeds once any rule is met."""

    rules: tuple[SuccessPolicyRule, ...] = ()


def match_success_policy(
    policy: SuccessPolicy | None, completions: int, succeeded: frozenset[int]
) -> str | None:
    """``matchSuccessPolicy``: the message of the ``SuccessCriteriaMet`` condition (``Matched rules at
    index <i>``, the first rule met) once the succeeded indexes meet a rule, else None. A rule with
    ``succeededIndexes`` is met when all of them succeeded, or ``succeededCount`` of them; a rule whose
    indexes do not parse (none read) is passed over; one with only ``succeededCount``, when that many
    indexes succeeded."""
    if policy is None or not succeeded:
        return None
    for i, rule in enumerate(policy.rules):
        if rule.succeeded_indexes is not None:
            required = parse_indexes(rule.succeeded_indexes, completions)
            if not required:
                continue
            contains = len(required & succeeded)
            count = rule.succeeded_count
            if contains == len(required) or (count is not None and contains >= count):
                return f"Matched rules at index {i}"
        elif rule.succeeded_count is not None and len(succeeded) >= rule.succeeded_count:
            return f"Matched rules at index {i}"
    return None
