"""A Job's ``spec.successPolicy``: ``TestMatchSuccessPolicy``, and its validation (``TestValidateJob``'s
successPolicy cases, ``TestValidateIndexesString``).

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/job/success_policy_test.go`` against
``gpufleet.model.completion_indexes.match_success_policy``, and ``pkg/apis/batch/validation/
validation_test.go`` against the manifest reader (``gpufleet.kube.success_policy``: a Job document that
must not load, its first problem at upstream's field and containing upstream's message) and
``indexes_format_error`` (``validateIndexesFormat``). Upstream's ``orderedIntervals`` are written as
sets of indexes (``span(0, 2)`` is ``{0, 1, 2}``). The feature gates are 1.34's defaults
(JobSuccessPolicy GA, on).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.completion_indexes import (
    SuccessPolicy,
    SuccessPolicyRule,
    indexes_format_error,
    match_success_policy,
)

GATE_OFF = (
    "JobSuccessPolicy turned off (emulating 1.32): 1.34's default (GA, on) is the one modelled, and "
    "gpufleet has no gate to turn it off"
)


def span(*intervals: tuple[int, int]) -> frozenset[int]:
    """``orderedIntervals{{a, b}, ...}`` as the set of indexes."""
    return frozenset(i for first, last in intervals for i in range(first, last + 1))


def rule(indexes: str | None = None, count: int | None = None) -> SuccessPolicyRule:
    return SuccessPolicyRule(indexes, count)


def rules(*each: SuccessPolicyRule) -> SuccessPolicy:
    return SuccessPolicy(each)


MATCHED = "Matched rules at index 0"

# (name, successPolicy, succeededIndexes, wantMessage or None); completions 10 in every case
MATCH_CASES = [
    pytest.param(
        "JobSuccessPolicy is disabled", None, span((0, 0)), None, marks=pytest.mark.skip(reason=GATE_OFF)
    ),
    ("successPolicy is null", None, span((0, 0)), None),
    ("any rules are nothing", rules(), span((0, 0)), None),
    ("rules.succeededIndexes is invalid format", rules(rule("invalid-form")), span((0, 0)), None),
    (
        "rules.succeededIndexes is specified; succeededIndexes matched rules",
        rules(rule("0-2")),
        span((0, 2), (4, 7)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules",
        rules(rule("3")),
        span((0, 2)),
        None,
    ),
    (
        "rules.succeededCount is specified; succeededIndexes matched rules",
        rules(rule(count=2)),
        span((0, 2)),
        MATCHED,
    ),
    (
        "rules.succeededCount is specified; succeededIndexes didn't match rules",
        rules(rule(count=4)),
        span((0, 2)),
        None,
    ),
    (
        "multiple rules; rules.succeededIndexes is specified; succeededIndexes met one of rules",
        rules(rule("9"), rule("4,6")),
        span((0, 2), (4, 7)),
        "Matched rules at index 1",
    ),
    (
        "multiple rules; rules.succeededIndexes is specified; succeededIndexes met all rules",
        rules(rule("0,1"), rule("5")),
        span((0, 2), (4, 7)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes met all rules",
        rules(rule("3-6", 2)),
        span((0, 2), (4, 7)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes didn't match rules",
        rules(rule("3-6", 2)),
        span((0, 2), (6, 7)),
        None,
    ),
    # (the gate off upstream, but no succeeded index matches nothing either way)
    ("rules.succeededIndexes is specified; succeededIndexes are nothing", rules(rule(count=4)), span(), None),
    (
        "rules.succeededIndexes is specified; succeededIndexes matched rules; rules is proper subset of "
        "succeededIndexes",
        rules(rule("2-4,6-8")),
        span((1, 5), (6, 9)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes matched rules; rules equals succeededIndexes",
        rules(rule("2-4,6-9")),
        span((2, 4), (6, 9)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes matched rules; rules is subset of "
        "succeededIndexes",
        rules(rule("2-4,8-12")),
        span((2, 5), (7, 15)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules is an empty set",
        rules(rule("")),
        span((1, 3)),
        None,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules; succeededIndexes is an "
        "empty set",
        rules(rule("")),
        span(),
        None,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules and "
        "succeededIndexes are empty set",
        rules(rule("")),
        span(),
        None,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules; all elements of "
        "rules.succeededIndexes aren't included in succeededIndexes",
        rules(rule("10-12,14-16")),
        span((1, 3), (5, 7)),
        None,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps "
        "succeededIndexes at first",
        rules(rule("1-3,5-7")),
        span((2, 4), (6, 8)),
        None,
    ),
    (
        "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
        "rules overlaps succeededIndexes at first",
        rules(rule("1-3,5-7", 4)),
        span((2, 4), (6, 8)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps "
        "succeededIndexes at last",
        rules(rule("2-4,6-9")),
        span((1, 3), (5, 7)),
        None,
    ),
    (
        "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
        "rules overlaps succeededIndexes at last",
        rules(rule("2-4,6-9", 4)),
        span((1, 3), (5, 7)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules completely "
        "overlaps succeededIndexes",
        rules(rule("0-4,6-9")),
        span((1, 3), (7, 8)),
        None,
    ),
    (
        "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
        "rules completely overlaps succeededIndexes",
        rules(rule("0-4,6-9", 5)),
        span((1, 3), (7, 8)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps multiple "
        "succeededIndexes at last",
        rules(rule("0-6,8-9")),
        span((1, 3), (5, 9)),
        None,
    ),
    (
        "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
        "rules overlaps multiple succeededIndexes at last",
        rules(rule("0-6,8-9", 7)),
        span((1, 3), (5, 9)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps "
        "succeededIndexes at first, and rules equals succeededIndexes at last",
        rules(rule("0-5,7-9")),
        span((1, 5), (7, 10)),
        None,
    ),
    (
        "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
        "rules overlaps succeededIndexes at first, and rules equals succeededIndexes at last",
        rules(rule("0-5,7-9", 8)),
        span((1, 5), (7, 10)),
        MATCHED,
    ),
    (
        "rules.succeededIndexes is specified; succeededIndexes didn't match rules; the first rules overlaps "
        "succeededIndexes at first",
        rules(rule("0-3,6-9")),
        span((1, 10)),
        None,
    ),
    (
        "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; the "
        "first rules overlaps succeededIndexes at first",
        rules(rule("0-3,6-9", 7)),
        span((1, 10)),
        MATCHED,
    ),
]


@pytest.mark.parametrize(("name", "policy", "succeeded", "want"), MATCH_CASES, ids=lambda v: v)
def test_TestMatchSuccessPolicy(
    name: str, policy: SuccessPolicy | None, succeeded: frozenset[int], want: str | None
) -> None:
    assert match_success_policy(policy, 10, succeeded) == want


# --- TestValidateJob (the successPolicy cases) ---------------------------------------------------------

LABEL = "scenario.yaml: document 1 (Job/default/myjob)"


def job_yaml(spec: str) -> str:
    """A Job ``myjob`` with ``spec`` (YAML lines of its spec) and a valid template."""
    lines = textwrap.indent(textwrap.dedent(spec).strip("\n"), "  ")
    return (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: myjob}\nspec:\n"
        + lines
        + "\n  template:\n    metadata: {annotations: {gpufleet.io/duration: 1h}}\n"
        + "    spec:\n      restartPolicy: Never\n      containers: [{name: main, image: x}]\n"
    )


INDEXED_5 = "completionMode: Indexed\ncompletions: 5\n"


def first_problem(tmp_path: Path, spec: str) -> str:
    path = tmp_path / "scenario.yaml"
    path.write_text(job_yaml(spec))
    with pytest.raises(ScenarioError) as caught:
        load_scenario([path])
    return caught.value.problems[0].replace(f"{tmp_path}/", "")


def test_TestValidateJob_valid_success_policy(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    spec = """
        completionMode: Indexed
        completions: 10
        successPolicy:
          rules:
          - {succeededCount: 1, succeededIndexes: "0,2,4"}
          - {succeededIndexes: "1,3,5-9"}
        """
    path.write_text(job_yaml(spec))
    (job,) = load_scenario([path]).jobs
    assert job.success_policy == SuccessPolicy((rule("0,2,4", 1), rule("1,3,5-9")))


# (upstream error key: "<field>: <text the error contains>"; the job's spec)
VALIDATION_CASES = [
    pytest.param(
        # upstream quotes the Go struct ({"Rules":[]}); gpufleet the manifest's value ({"rules": []})
        "spec.successPolicy: requires indexed completion mode",
        "successPolicy: {rules: []}",
        id="spec.successPolicy: Invalid value: {Rules:[]}: requires indexed completion mode",
    ),
    pytest.param(
        # gpufleet checks the OpenAPI schema's required fields first (rules is one): the same field,
        # "Required value" without validateSuccessPolicy's detail
        "spec.successPolicy.rules: Required value",
        INDEXED_5 + "successPolicy: {}",
        id="spec.successPolicy.rules: Required value: at least one rules must be specified when the "
        "successPolicy is specified",
    ),
    (
        "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes "
        "must be specified",
        INDEXED_5 + "successPolicy: {rules: [{}]}",
    ),
    (
        'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "invalid-format": error parsing '
        'succeededIndexes: cannot convert string to integer for index: "invalid"',
        INDEXED_5 + 'successPolicy: {rules: [{succeededIndexes: "invalid-format"}]}',
    ),
    (
        "spec.successPolicy.rules[0].succeededIndexes: Too long: may not be more than 65536 bytes",
        INDEXED_5 + 'successPolicy: {rules: [{succeededIndexes: "' + "1" * (64 * 1024 + 1) + '"}]}',
    ),
    (
        "spec.successPolicy.rules[0].succeededCount: must be greater than or equal to 0",
        INDEXED_5 + "successPolicy: {rules: [{succeededCount: -1}]}",
    ),
    (
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 6: must be less than or equal to 5 (the "
        "number of specified completions)",
        INDEXED_5 + "successPolicy: {rules: [{succeededCount: 6}]}",
    ),
    (
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 4: must be less than or equal to 3 (the "
        "number of indexes in the specified succeededIndexes field)",
        INDEXED_5 + 'successPolicy: {rules: [{succeededCount: 4, succeededIndexes: "0-2"}]}',
    ),
    (
        "spec.successPolicy.rules: Too many: 21: must have at most 20 items",
        INDEXED_5 + "successPolicy: {rules: [" + ", ".join(["{succeededCount: 5}"] * 21) + "]}",
    ),
]


@pytest.mark.parametrize(("key", "spec"), VALIDATION_CASES, ids=lambda v: v[:120])
def test_TestValidateJob_error_cases(tmp_path: Path, key: str, spec: str) -> None:
    """``errs[0].Field`` is the key's field and ``errs[0].Error()`` contains the rest."""
    field, _, text = key.partition(":")
    problem = first_problem(tmp_path, spec)
    assert problem.startswith(f"{LABEL}: {field}: ")
    assert text.strip() in problem


# --- TestValidateIndexesString ------------------------------------------------------------------------

INDEXES_CASES = [
    ("empty is valid", "", 6, 0, None),
    ("single number is valid", "1", 6, 1, None),
    ("single interval is valid", "1-3", 6, 3, None),
    ("mixed intervals valid", "0,1-3,5,7-10", 12, 9, None),
    ("invalid due to extra space", "0,1-3, 5", 6, 0, 'cannot convert string to integer for index: " 5"'),
    ("invalid due to too large index", "0,1-3,5", 5, 0, 'too large index: "5"'),
    (
        "invalid due to non-increasing order of intervals",
        "1-3,0,5",
        6,
        0,
        "non-increasing order, previous: 3, current: 0",
    ),
    (
        "invalid due to non-increasing order between intervals",
        "0,0,5",
        6,
        0,
        "non-increasing order, previous: 0, current: 0",
    ),
    (
        "invalid due to non-increasing order within interval",
        "0,1-1,5",
        6,
        0,
        "non-increasing order, previous: 1, current: 1",
    ),
    ("invalid due to starting with '-'", "-1,0", 6, 0, 'cannot convert string to integer for index: ""'),
    ("invalid due to ending with '-'", "0,1-", 6, 0, 'cannot convert string to integer for index: ""'),
    (
        "invalid due to repeated '-'",
        "0,1--3",
        6,
        0,
        'the fragment "1--3" violates the requirement that an index interval can have at most two parts '
        "separated by '-'",
    ),
    ("invalid due to repeated ','", "0,,1,3", 6, 0, 'cannot convert string to integer for index: ""'),
]


@pytest.mark.parametrize(("name", "indexes", "completions", "total", "error"), INDEXES_CASES, ids=lambda v: v)
def test_TestValidateIndexesString(
    name: str, indexes: str, completions: int, total: int, error: str | None
) -> None:
    assert indexes_format_error(indexes, completions) == (total, error)


# --- TestValidateJobUpdate (the successPolicy cases) ---------------------------------------------------

NO_UPDATES = (
    "spec.successPolicy is immutable (ValidateImmutableField): gpufleet reads each Job once and models no "
    "update of a Job's spec"
)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.skip(reason=NO_UPDATES))
        for name in ("add success policy", "update success policy", "remove success policy")
    ],
)
def test_TestValidateJobUpdate(name: str) -> None:
    raise AssertionError(name)
