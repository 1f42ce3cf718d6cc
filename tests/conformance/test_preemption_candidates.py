"""kube-scheduler v1.34.10's own tables for the preemption Evaluator,
``pkg/scheduler/framework/preemption/preemption_test.go``, case by case (ids
``<upstream test>/<upstream case>``).

Every table here drives the Evaluator through test doubles or API-server calls that gpufleet has
no counterpart of, so each case is kept as a skip with its reason; what these functions do for
DefaultPreemption is checked by ``test_default_preemption.py`` (``TestDryRunPreemption``,
``TestSelectBestCandidate``, ``TestPreempt``)."""

from __future__ import annotations

import pytest

FAKE_EVALUATOR = (
    "drives the Evaluator through a test double (FakePostFilterPlugin: every lower-priority pod a "
    "victim, a fixed numViolatingVictim); gpufleet has only DefaultPreemption's SelectVictimsOnNode"
)
FAKE_SCORE = (
    "drives SelectCandidate through a test double's OrderedScoreFuncs (victims' container count); "
    "gpufleet has only pickOneNodeForPreemption's criteria"
)
API_CALLS = (
    "checks API-server calls (DisruptionTarget patch, victim deletion, their failures, events); "
    "gpufleet evicts victims in its own event loop, where such calls do not fail"
)
EXTENDERS = "scheduler extenders (KubeSchedulerConfiguration.extenders) are not modelled"
NOMINATED_PATCH = "checks the API patch that clears status.nominatedNodeName; gpufleet keeps no pod status"

CASES = [
    ("TestDryRunPreemption", "no pdb violation", FAKE_EVALUATOR),
    ("TestDryRunPreemption", "pdb violation on each node", FAKE_EVALUATOR),
    ("TestSelectCandidate", "pod has different number of containers on each node", FAKE_SCORE),
    ("TestPrepareCandidate", "no victims", API_CALLS),
    ("TestPrepareCandidate", "one victim without condition", API_CALLS),
    ("TestPrepareCandidate", "one victim with same condition", API_CALLS),
    ("TestPrepareCandidate", "one victim, not-found victim error is ignored when patching", API_CALLS),
    ("TestPrepareCandidate", "one victim, but pod deletion failed", API_CALLS),
    ("TestPrepareCandidate", "one victim, not-found victim error is ignored when deleting", API_CALLS),
    ("TestPrepareCandidate", "one victim, but patch pod failed", API_CALLS),
    (
        "TestPrepareCandidate",
        "two victims without condition, one passes successfully and the second fails",
        API_CALLS,
    ),
    ("TestCallExtenders", "no extenders", EXTENDERS),
    ("TestCallExtenders", "one extender supports preemption", EXTENDERS),
    ("TestCallExtenders", "one extender with return no victims", EXTENDERS),
    ("TestCallExtenders", "one extender does not support preemption", EXTENDERS),
    ("TestCallExtenders", "one extender with no return victims and is ignorable", EXTENDERS),
    ("TestCallExtenders", "one extender returns error and is ignorable", EXTENDERS),
    ("TestCallExtenders", "one extender returns error and is not ignorable", EXTENDERS),
    ("TestCallExtenders", "one extender with empty victims input", EXTENDERS),
    ("TestRemoveNominatedNodeName", "Should make patch request to clear node name", NOMINATED_PATCH),
    (
        "TestRemoveNominatedNodeName",
        "Should not make patch request if nominated node is already cleared",
        NOMINATED_PATCH,
    ),
]


@pytest.mark.parametrize(
    "case", [pytest.param(n, id=f"{t}/{n}", marks=pytest.mark.skip(reason=why)) for t, n, why in CASES]
)
def test_evaluator_case(case: str) -> None:
    """Kept for the count and the reason: no case of this file is expressible in gpufleet."""
