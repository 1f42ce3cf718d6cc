"""gpufleet's Deployment rollouts held against kube-controller-manager's Deployment and ReplicaSet controllers
(the control plane of ``e2e/``, Kubernetes 1.34.10, kube-scheduler placing the pods, kwok playing them): a
Deployment's template changed (a gpufleet ``Rollout`` at the time the real side patched it), rolled out as
``rolloutRolling`` (``NewRSNewReplicas`` within ``maxSurge``, ``reconcileOldReplicaSets`` within
``maxUnavailable``, ``cleanupUnhealthyReplicas`` first, ``ResolveFenceposts`` rounding, ``IsPodAvailable``
after ``minReadySeconds``) or ``rolloutRecreate`` (``oldPodsRunning``) does, a second change mid-rollout, a
rollback to the first template, a surge pod that cannot be scheduled; see ``e2e/fidelity/deployment_cases.py``
for the cases and ``e2e/fidelity/deployment_run.py`` for both sides.

The cases run side by side on the session's control plane, with the Job, ReplicaSet and node lifecycle
sets (``controller_sets``). What is compared: the order of the steps and of the pods' creations and ends by
version (a rolling update's bursts as multisets), the time between them (within ``TOLERANCE_S``), the pods
left and how many were made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e.fidelity import report
from e2e.fidelity.deployment_cases import DEPLOYMENT_CASES, Outcome
from e2e.fidelity.deployment_report import DEPLOYMENT_CONTROLLER_NOT_RUN, deployment_summary
from e2e.fidelity.deployment_run import DeploymentResult, run_gpufleet, simulated, timeline
from e2e.fidelity.timeline import gaps_agree

from gpufleet.workloads.deployment import DeploymentController

CASES = {c.name: c for c in DEPLOYMENT_CASES}


@pytest.fixture(scope="module")
def results(controller_sets: dict[str, dict[str, DeploymentResult]]) -> dict[str, DeploymentResult]:
    """This set's results, from the controller sets run at once (``controller_sets``)."""
    return controller_sets["deployments"]


def test_each_case_runs_in_a_namespace_of_its_own_on_nodes_of_its_own() -> None:
    assert len({c.namespace for c in DEPLOYMENT_CASES}) == len(DEPLOYMENT_CASES) == 9
    nodes = [n["metadata"]["name"] for c in DEPLOYMENT_CASES for n in c.nodes()]
    assert len(set(nodes)) == len(nodes)


@pytest.mark.parametrize("name", list(CASES))
def test_gpufleet_rolls_out_each_case_as_upstreams_rules_say(name: str) -> None:
    """No control plane needed: gpufleet's simulator on its own, without a warning."""
    case = CASES[name]
    ours, warnings = run_gpufleet(case)
    assert not warnings
    assert ours.outcome == case.expected, case.note
    assert gaps_agree(ours.gaps_s, case.gaps_s), f"{case.note}: {ours.gaps_s}"


def test_a_rolling_updates_burst_is_a_multiset_and_a_recreates_entries_keep_their_order() -> None:
    """The Deployment controller scales the ReplicaSets, the ReplicaSet controller makes and deletes each
    one's pods on its own: within a burst a rolling update's order is in no rule of upstream's; a
    ``Recreate`` makes no new pod before every old one is gone (``rolloutRecreate``, ``oldPodsRunning``)."""
    rolling, spaced, recreate = CASES["defaults"], CASES["defaults-min-ready"], CASES["recreate"]
    start = [(0.5, "+v1"), (3.0, "step 1")]
    one = [*start, (3.1, "-v1"), (3.2, "+v2"), (6.3, "+v2"), (6.4, "-v1")]
    other = [*start, (3.0, "+v2"), (3.0, "+v2"), (3.0, "-v1"), (3.0, "-v1")]
    both = ("step 1", "+v2", "-v1", "+v2", "-v1")
    assert timeline(rolling, one, []).outcome.order == timeline(rolling, other, []).outcome.order == both
    assert timeline(rolling, one, []).gaps_s == pytest.approx((0.1, 0.1, 3.1, 0.1))
    assert timeline(spaced, one, []).outcome.order == ("step 1", "+v2", "-v1", "+v2", "-v1")
    assert timeline(spaced, [*start, (3.0, "-v1"), (6.0, "+v2")], []).outcome.order == (
        "step 1",
        "-v1",
        "+v2",
    )
    made_first = [*start, (3.0, "+v2"), (6.0, "-v1")]
    assert timeline(recreate, made_first, []).outcome == Outcome((), ("step 1", "+v2", "-v1"), 1)


def test_gpufleet_says_a_rollout_whose_surge_pod_cannot_be_scheduled_stalls() -> None:
    """``DeploymentComplete`` never holds: the surge pod stays pending and ``maxUnavailable`` 0 deletes no
    old pod (``reconcileOldReplicaSets``: ``maxScaledDown`` 0); ``summary.json``'s rollout has no end, where
    every other case's ends."""
    for case in DEPLOYMENT_CASES:
        sim, _ = simulated(case)
        ends = [r["completed_s"] for r in sim.rollouts.as_list()]
        if case.name == "surge-unschedulable":
            assert ends == [None]
        else:
            assert None not in ends[-1:], case.name


def test_a_rollback_takes_the_first_templates_replicaset_back() -> None:
    """``getNewReplicaSet`` finds the ReplicaSet whose template equals the Deployment's
    (``FindNewReplicaSet``): the rollback's ReplicaSet is the first one, scaled up again."""
    sim, _ = simulated(CASES["rollback"])
    rolled, back = (r["replica_set"] for r in sim.rollouts.as_list())
    controller = sim.controllers[CASES["rollback"].key]
    assert isinstance(controller, DeploymentController)
    assert [(rs.name, rs.first) for rs in controller.sets] == [(rolled, False), (back, True)]


def test_an_old_replicaset_not_yet_available_is_cleaned_up_before_the_surge_of_the_one_before() -> None:
    """``cleanupUnhealthyReplicas`` scales the old ReplicaSets down oldest first where their pods are not all
    available: changed again before v1's pods were available (``minReadySeconds`` 5, changes at 3 s and 4 s),
    v1's go first and v2's surge pod last, the order a real run made when its first pods came late."""
    ours, _ = run_gpufleet(CASES["changed-mid-rollout"], (3.0, 4.0))
    rollout = ("+v3", "-v1", "+v3", "-v1", "+v3", "-v1", "-v2")
    assert ours.outcome.order == ("step 1", "+v2", "step 2", *rollout)
    assert gaps_agree(ours.gaps_s, (0, 0, 0, 5, 0, 5, 0, 5))


@pytest.mark.parametrize("name", list(CASES))
def test_the_real_deployment_controller_rolls_out_each_case_as_upstreams_rules_say(
    results: dict[str, DeploymentResult], name: str
) -> None:
    """The case shows on the real side what it was written for (the harness and kwok's Stages work)."""
    result, case = results[name], CASES[name]
    assert not result.error, result.error
    assert result.real is not None
    assert result.real.outcome == case.expected, case.note
    assert gaps_agree(result.real.gaps_s, case.gaps_s), f"{case.note}: {result.real.gaps_s}"


@pytest.mark.parametrize("name", list(CASES))
def test_gpufleet_rolls_out_each_case_as_the_real_deployment_controller_does(
    results: dict[str, DeploymentResult], name: str
) -> None:
    result = results[name]
    assert not result.error, result.error
    assert result.agrees, f"{CASES[name].note}\n  real {result.real}\n  gpufleet {result.gpufleet}"


def test_the_report_has_a_deployment_rollouts_section_with_every_case(
    results: dict[str, DeploymentResult], tmp_path: Path
) -> None:
    ordered = [results[c.name] for c in DEPLOYMENT_CASES]
    summary = report.write([], tmp_path, 0.0, 0.0, deployments=deployment_summary(ordered, 30.0))
    section = json.loads((tmp_path / "fidelity.json").read_text())["deployment_rollouts"]
    assert section == json.loads(json.dumps(summary["deployment_rollouts"]))
    assert section["status"].startswith("run: kube-controller-manager v1.34.10's Deployment and ReplicaSet")
    assert section["cases_compared"] == len(DEPLOYMENT_CASES) and section["cases_failed"] == 0
    row = next(c for c in section["cases"] if c["name"] == "recreate")
    assert row["gpufleet"] == {
        "left": ["v2", "v2", "v2"],
        "order": ["step 1", "-v1", "-v1", "-v1", "+v2", "+v2", "+v2"],
        "made": 3,
        "gaps_s": [6.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    }
    text = (tmp_path / "fidelity.md").read_text()
    assert "## Deployment rollouts (kube-controller-manager)" in text
    assert "| recreate | Recreate |" in text


def test_a_report_without_the_deployment_cases_says_where_they_run(tmp_path: Path) -> None:
    report.write([], tmp_path, 0.0, 0.0)
    section = json.loads((tmp_path / "fidelity.json").read_text())["deployment_rollouts"]
    assert section == {"cases_compared": 0, "cases_agreeing": 0, "status": DEPLOYMENT_CONTROLLER_NOT_RUN}
    assert f"{DEPLOYMENT_CONTROLLER_NOT_RUN}." in (tmp_path / "fidelity.md").read_text()
