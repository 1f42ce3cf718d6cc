"""JobSet failure policy rules against a failed child Job's reason and message.

Upstream: ``kubernetes-sigs/jobset`` v0.12.0, ``pkg/controllers/failure_policy_test.go``:

- ``TestFailurePolicyRuleIsApplicable`` (``ruleIsApplicable``): every row, a rule of
  ``onJobFailureReasons``/``onJobFailureMessagePatterns``/``targetReplicatedJobs`` against a failed Job
  of a replicated Job, with a failure reason and message (an empty string where the row gives none).
- ``TestFindFirstFailedPolicyRuleAndJob`` (``findFirstFailedPolicyRuleAndJob``): every row; upstream's
  failed Jobs carry a ``Failed`` condition whose ``lastTransitionTime`` orders them (``job1`` 6 h ago,
  ``job1DupEarlierFailure`` 12 h ago, ``job2`` 3 h ago, ``job3`` 1 h ago); gpufleet's controller keeps
  its failed Jobs in the order they got their ``Failed`` condition, so each row's Jobs are given sorted by
  that time.

``TestFindFirstFailedJob`` (the earliest of the failed Jobs) and ``TestApplyFailurePolicyRuleAction`` (the
actions' status updates, among them the ``RestartJob`` actions behind a feature gate that is off) are not
ported: the first is the order above, the second ``tests/workloads/test_jobset*.py`` checks through the
simulator.
"""

from __future__ import annotations

import pytest

from gpufleet.workloads.jobset import FailedJob, FailureRule, first_failed_rule_and_job

RJOB_1, RJOB_2 = "test-replicated-job-1", "test-replicated-job-2"
BACKOFF, DEADLINE, FAILED_INDEXES = "BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes"


def rule(
    reasons: tuple[str, ...] = (), targets: tuple[str, ...] = (), patterns: tuple[str, ...] = ()
) -> FailureRule:
    return FailureRule("rule", "RestartJobSet", reasons, patterns, targets)


# name: (rule, the failed Job's replicated Job, its failure reason, its failure message, expected)
RULE_IS_APPLICABLE = {
    "a job has failed and the failure policy rule matches all possible parent replicated jobs and matches "
    "all possible job failure reasons": (rule(), RJOB_1, BACKOFF, "", True),
    "a job has failed and the failure policy rule matches all possible parent replicated jobs and matches "
    "the job failure reason": (rule((BACKOFF,)), RJOB_1, BACKOFF, "", True),
    "a job has failed and the failure policy rule matches all possible parent replicated jobs and does not "
    "match the job failure reason": (rule((BACKOFF,)), RJOB_1, DEADLINE, "", False),
    "a job has failed and the failure policy rule matches the parent replicatedJob and matches all possible "
    "job failure reasons": (rule((), (RJOB_1,)), RJOB_1, BACKOFF, "", True),
    "a job has failed and the failure policy rule matches the parent replicatedJob and matches the job "
    "failure reason": (rule((BACKOFF,), (RJOB_1,)), RJOB_1, BACKOFF, "", True),
    "a job has failed and the failure policy rule matches the parent replicatedJob and does not match the "
    "job failure reason": (rule((BACKOFF,), (RJOB_1,)), RJOB_1, DEADLINE, "", False),
    "a job has failed and the failure policy rule does not match the parent replicatedJob and matches all "
    "possible job failure reasons": (rule((), (RJOB_1,)), RJOB_2, BACKOFF, "", False),
    "a job has failed and the failure policy rule does not match the parent replicatedJob and matches the "
    "job failure reason": (rule((BACKOFF,), (RJOB_1,)), RJOB_2, BACKOFF, "", False),
    "a job has failed and the failure policy rule does not match the parent replicatedJob and does not "
    "match the job failure reason": (rule((BACKOFF,), (RJOB_1,)), RJOB_2, DEADLINE, "", False),
    "a job has failed and the failure policy rule matches the job failure message pattern": (
        rule(patterns=("^job failed because.*",)),
        RJOB_1,
        "",
        "job failed because of a bug",
        True,
    ),
    "a job has failed and the failure policy rule does not match the job failure message pattern": (
        rule(patterns=("^job failed because.*",)),
        RJOB_1,
        "",
        "another error message",
        False,
    ),
    "a job has failed and the failure policy rule matches both the job failure reason and message pattern": (
        rule((BACKOFF,), patterns=(".*bug.*",)),
        RJOB_1,
        BACKOFF,
        "job failed because of a bug",
        True,
    ),
    "a job has failed and the failure policy rule matches the job failure reason but not the message "
    "pattern": (
        rule((BACKOFF,), patterns=(".*bug.*",)),
        RJOB_1,
        BACKOFF,
        "job failed due to something else",
        False,
    ),
}


@pytest.mark.parametrize(("name", "row"), RULE_IS_APPLICABLE.items(), ids=list(RULE_IS_APPLICABLE))
def test_failure_policy_rule_is_applicable(name: str, row: tuple[FailureRule, str, str, str, bool]) -> None:
    """``TestFailurePolicyRuleIsApplicable``."""
    applied, rjob, reason, message, expected = row
    assert applied.applies(FailedJob("test-job", rjob, reason, message)) is expected


RJOB = "test-replicatedJob"
JOB_1 = FailedJob("job1", RJOB, BACKOFF, "")
JOB_1_DUP_EARLIER_FAILURE = FailedJob("job1DupEarlierFailure", RJOB, BACKOFF, "")
JOB_2 = FailedJob("job2", RJOB, DEADLINE, "")
JOB_3 = FailedJob("job3", RJOB, FAILED_INDEXES, "")
RULE_1, RULE_2, RULE_3 = rule((BACKOFF,)), rule((DEADLINE,)), rule((FAILED_INDEXES,))
UNMATCHED_RULE = rule(targets=("fakeReplicatedJobName",))

# name: (the rules, the failed Jobs in the order they failed, the rule and Job found, None for neither)
FIND_FIRST_FAILED_POLICY_RULE_AND_JOB: dict[
    str, tuple[list[FailureRule], list[FailedJob], tuple[FailureRule, FailedJob] | None]
] = {
    "There are 0 failed jobs and there are 0 failure policy rules, therefore nil is returned for both the "
    "rule and job.": ([], [], None),
    "There is 1 failed job and there are 0 failure policy rules, therefore nil is returned for both the rule "
    "and job.": ([], [JOB_1], None),
    "There is 1 failed job, there is 1 failure policy rule, and the failure policy rule does not match the "
    "job, therefore nil is returned for both the rule and job.": ([RULE_2], [JOB_1], None),
    "There is 1 failed job, there are 3 failure policy rules, and the failed job matches the first failure "
    "policy rule, therefore the job and first failure policy rule are returned.": (
        [RULE_1, RULE_2, RULE_3],
        [JOB_1],
        (RULE_1, JOB_1),
    ),
    "There is 1 failed job, there are 3 failure policy rules, the failed job does not match the first "
    "failure policy rule, and the failed job matches the second failure policy rule, therefore the job and "
    "second failure policy rule are returned.": ([RULE_1, RULE_2, RULE_3], [JOB_2], (RULE_2, JOB_2)),
    "There is 1 failed job, there are 3 failure policy rules, the failed job does not match the first nor "
    "second failure policy rules, and the failed job matches the third failure policy rule, therefore the "
    "job and the the third failure policy rule are returned.": (
        [RULE_1, RULE_2, RULE_3],
        [JOB_3],
        (RULE_3, JOB_3),
    ),
    "There are 2 failed jobs and there are 0 failure policy rules, therefore nil is returned for both the "
    "rule and job.": ([], [JOB_1, JOB_2], None),
    "There are 2 failed jobs, the second job failed before the first job, there is 1 failure policy rule, "
    "and the failure policy rule does not match any of the jobs, therefore nil is returned for both the "
    "rule and job.": ([RULE_2], [JOB_1_DUP_EARLIER_FAILURE, JOB_1], None),
    "There are 2 failed jobs, the second job failed before the first job, there is 1 failure policy rule, "
    "and the failure policy rule matches both jobs, therefore the second job and the failure policy rule "
    "are returned.": ([RULE_1], [JOB_1_DUP_EARLIER_FAILURE, JOB_1], (RULE_1, JOB_1_DUP_EARLIER_FAILURE)),
    "There are 2 failed jobs, the second job failed before the first job, there are 2 failure policy rules, "
    "the first failure policy does not match any of the jobs, and the second failure policy rule matches "
    "both jobs, therefore the second job and the second failure policy rule are returned.": (
        [UNMATCHED_RULE, RULE_1],
        [JOB_1_DUP_EARLIER_FAILURE, JOB_1],
        (RULE_1, JOB_1_DUP_EARLIER_FAILURE),
    ),
}


@pytest.mark.parametrize(
    ("name", "row"),
    FIND_FIRST_FAILED_POLICY_RULE_AND_JOB.items(),
    ids=list(FIND_FIRST_FAILED_POLICY_RULE_AND_JOB),
)
def test_find_first_failed_policy_rule_and_job(
    name: str, row: tuple[list[FailureRule], list[FailedJob], tuple[FailureRule, FailedJob] | None]
) -> None:
    """``TestFindFirstFailedPolicyRuleAndJob``."""
    rules, failed, expected = row
    assert first_failed_rule_and_job(rules, failed) == expected


_ORDER = (
    "gpufleet's controller keeps its failed Jobs in the order they got their Failed condition (no condition "
    "time to sort by): the earliest is the first, which the rows above rely on"
)
_ACTION = (
    "the action's status update in one reconcile (restart counts, the FailurePolicy_<rule> reason) is "
    "checked through the simulator in tests/workloads/test_jobset*.py, not as a table"
)
_RESTART_JOB = (
    "the RestartJob actions need JobSet's RestartJob feature gate, off by default (gpufleet refuses them)"
)
_FIRST, _APPLY = "TestFindFirstFailedJob/", "TestApplyFailurePolicyRuleAction/"
NOT_PORTED = {
    **{
        _FIRST + name: _ORDER
        for name in (
            "No failed jobs",
            "Single failed job",
            "Multiple failed jobs, earliest first",
            "Jobs without failed condition",
        )
    },
    **{
        _APPLY + name: _ACTION
        for name in (
            "FailJobSet action",
            "RestartJobSet when restarts < maxRestarts increments restarts count and counts towards max",
            "RestartJobSet when restarts < maxRestarts with matching rule sets FailurePolicy_{RuleName} "
            "reason",
            "RestartJobSet action when restarts >= maxRestarts fails the jobset",
            "RestartJobSetAndIgnoreMaxRestarts action does not count toward max restarts",
        )
    },
    **{
        _APPLY + name: _RESTART_JOB
        for name in (
            "RestartJob action when combined restarts < maxRestarts increments jobRestart count and counts "
            "towards max",
            "RestartJob action when combined restarts >= maxRestarts fails the jobset",
            "RestartJobSet action when combined restarts >= maxRestarts and a previous individual restart "
            "fails the jobset",
            "RestartJobAndIgnoreMaxRestarts action does not count toward max restarts",
        )
    },
}


@pytest.mark.parametrize("name", list(NOT_PORTED), ids=list(NOT_PORTED))
def test_rows_not_ported(name: str) -> None:
    """Upstream's other rows of the file, each with why it has no counterpart here."""
    pytest.skip(NOT_PORTED[name])
