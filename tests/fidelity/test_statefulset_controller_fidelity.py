"""gpufleet's StatefulSet controller held against kube-controller-manager's (the control plane of ``e2e/``,
Kubernetes 1.34.10, kube-scheduler placing the pods, kwok playing them): the order ``updateStatefulSet``
creates and deletes pods in (``OrderedReady``: ``processReplica`` by ascending ordinal, each once the one
before is Running, Ready and available; ``processCondemned`` by descending ordinal, each once the one before
is gone, the first unavailable pod first; ``Parallel``: all at once), ``ordinals.start``,
``minReadySeconds``, a pod made again under its name only once the old one is gone; see
``e2e/fidelity/statefulset_cases.py`` for the cases and ``e2e/fidelity/statefulset_run.py`` for both sides.

The cases run side by side on the session's control plane (about 25 s with their nodes' start and
cleanup). What is compared: the order of the steps and of the pods' creations and ends, the time between
them (within ``TOLERANCE_S``), the pods left and how many were made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e.fidelity import report
from e2e.fidelity.statefulset_cases import STATEFULSET_CASES, Outcome
from e2e.fidelity.statefulset_report import STATEFULSET_CONTROLLER_NOT_RUN, statefulset_summary
from e2e.fidelity.statefulset_run import StatefulSetResult, run_gpufleet, timeline
from e2e.fidelity.timeline import TOLERANCE_S, gaps_agree

CASES = {c.name: c for c in STATEFULSET_CASES}


@pytest.fixture(scope="module")
def results(controller_sets: dict[str, dict[str, StatefulSetResult]]) -> dict[str, StatefulSetResult]:
    """This set's results, from the controller sets run at once (``controller_sets``)."""
    return controller_sets["statefulsets"]


def test_each_case_runs_in_a_namespace_of_its_own_on_nodes_of_its_own() -> None:
    assert len({c.namespace for c in STATEFULSET_CASES}) == len(STATEFULSET_CASES) == 15
    nodes = [n["metadata"]["name"] for c in STATEFULSET_CASES for n in c.nodes()]
    assert len(set(nodes)) == len(nodes)


@pytest.mark.parametrize("name", list(CASES))
def test_gpufleet_orders_each_case_as_upstreams_rules_say(name: str) -> None:
    """No control plane needed: gpufleet's simulator on its own, without a warning."""
    case = CASES[name]
    ours, warnings = run_gpufleet(case)
    assert not warnings
    assert ours.outcome == case.expected, case.note
    assert gaps_agree(ours.gaps_s, case.gaps_s), f"{case.note}: {ours.gaps_s}"


def test_a_parallel_burst_is_compared_as_a_set_but_a_pod_is_made_again_after_it_is_gone() -> None:
    """``runForAll`` runs a ``Parallel`` set's creations and deletions concurrently: pods created or gone
    within ``BURST_S`` of each other are in no order of upstream's rules, but a pod made again under its name
    comes after the old one is gone; under ``OrderedReady`` the order is the controller's."""
    parallel, ordered = CASES["parallel-scale-down-undone-while-terminating"], CASES["ordered-scale-up"]
    real = [(4.0, "step 1"), (9.0, "-serve-1"), (9.1, "+serve-1"), (9.2, "-serve-2"), (9.3, "+serve-2")]
    ours = [(4.0, "step 1"), (10.0, "-serve-2"), (10.0, "-serve-1"), (10.0, "+serve-1"), (10.0, "+serve-2")]
    both = ("step 1", "-serve-1", "-serve-2", "+serve-1", "+serve-2")
    assert timeline(parallel, real, []).outcome.order == timeline(parallel, ours, []).outcome.order == both
    assert timeline(parallel, real, []).gaps_s == pytest.approx((5.0, 0.1, 0.1, 0.1))
    apart = [(9.0, "-serve-1"), (10.5, "+serve-1")]
    assert timeline(parallel, apart, []).outcome.order == ("-serve-1", "+serve-1")
    assert timeline(ordered, [(0.0, "+serve-1"), (0.0, "+serve-0")], []).outcome == Outcome(
        (), ("+serve-1", "+serve-0"), 2
    )


def test_gaps_agree_within_the_tolerance_and_not_a_wait_apart() -> None:
    """A ``minReadySeconds`` of 5 s waited on one side only disagrees; the real side's latency does not."""
    assert gaps_agree((0.2, 5.05, 5.3), (0.0, 5.0, 5.0))
    assert not gaps_agree((0.2, 0.1, 0.1), (0.0, 5.0, 5.0))
    assert not gaps_agree((0.0, 5.0), (0.0, 5.0, 5.0))
    assert TOLERANCE_S < 5 / 2


@pytest.mark.parametrize("name", list(CASES))
def test_the_real_statefulset_controller_orders_each_case_as_upstreams_rules_say(
    results: dict[str, StatefulSetResult], name: str
) -> None:
    """The case shows on the real side what it was written for (the harness and kwok's Stages work)."""
    result, case = results[name], CASES[name]
    assert not result.error, result.error
    assert result.real is not None
    assert result.real.outcome == case.expected, case.note
    assert gaps_agree(result.real.gaps_s, case.gaps_s), f"{case.note}: {result.real.gaps_s}"


def test_kwok_keeps_a_deleted_pod_for_its_termination_grace_period(
    results: dict[str, StatefulSetResult],
) -> None:
    """``e2e/kwok/stages.yaml``'s ``pod-delete-after-grace``: a pod of the label deleted with 6 s of grace is
    gone at its ``deletionTimestamp`` (whole seconds: up to a second early), not at once."""
    real = results["deleted-pod-made-again"].real
    assert real is not None
    gone = real.outcome.order.index("-serve-0") - 1  # (one step before it, not timed)
    assert 5.0 - 0.1 <= real.gaps_s[gone] <= 6.0 + TOLERANCE_S


@pytest.mark.parametrize("name", list(CASES))
def test_gpufleet_orders_each_case_as_the_real_statefulset_controller_does(
    results: dict[str, StatefulSetResult], name: str
) -> None:
    result = results[name]
    assert not result.error, result.error
    assert result.agrees, f"{CASES[name].note}\n  real {result.real}\n  gpufleet {result.gpufleet}"


def test_the_report_has_a_statefulset_controller_section_with_every_case(
    results: dict[str, StatefulSetResult], tmp_path: Path
) -> None:
    ordered = [results[c.name] for c in STATEFULSET_CASES]
    summary = report.write([], tmp_path, 0.0, 0.0, statefulsets=statefulset_summary(ordered, 25.0))
    section = json.loads((tmp_path / "fidelity.json").read_text())["statefulset_controller"]
    assert section == json.loads(json.dumps(summary["statefulset_controller"]))
    assert section["status"].startswith("run: kube-controller-manager v1.34.10's StatefulSet controller")
    assert section["cases_compared"] == len(STATEFULSET_CASES) and section["cases_failed"] == 0
    row = next(c for c in section["cases"] if c["name"] == "min-ready-seconds")
    assert row["gpufleet"] == {
        "left": ["serve-0", "serve-1", "serve-2"],
        "order": ["step 1", "+serve-0", "+serve-1", "+serve-2"],
        "made": 3,
        "gaps_s": [0.0, 5.0, 5.0],
    }
    text = (tmp_path / "fidelity.md").read_text()
    assert "## StatefulSet controller (kube-controller-manager)" in text
    assert "| min-ready-seconds | OrderedReady |" in text
    assert "step 1, +serve-0 (0.0), +serve-1 (5.0), +serve-2 (5.0)" in text


def test_a_report_without_the_statefulset_cases_says_where_they_run(tmp_path: Path) -> None:
    report.write([], tmp_path, 0.0, 0.0)
    section = json.loads((tmp_path / "fidelity.json").read_text())["statefulset_controller"]
    assert section == {"cases_compared": 0, "cases_agreeing": 0, "status": STATEFULSET_CONTROLLER_NOT_RUN}
    assert f"{STATEFULSET_CONTROLLER_NOT_RUN}." in (tmp_path / "fidelity.md").read_text()
