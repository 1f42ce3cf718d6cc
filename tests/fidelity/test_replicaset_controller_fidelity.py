"""gpufleet's ReplicaSet controller held against kube-controller-manager's (the control plane of ``e2e/``,
Kubernetes 1.34.10, kube-scheduler placing the pods, kwok playing them): scale-up, the order a scale-down
deletes pods in (``controller.ActivePodsWithRanks``: pending first, pod-deletion-cost, pods doubled up on a
node, ready for less time), a Deployment scaled through its ReplicaSet, a deleted pod replaced; see
``e2e/fidelity/replicaset_cases.py`` for the cases and ``e2e/fidelity/replicaset_run.py`` for both sides.

The cases run side by side on the session's control plane (about half a minute with their nodes' start and
cleanup). What is compared is the end: the pods left, by node and by the step they were made after, and how
many pods were made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e.fidelity import report
from e2e.fidelity.replicaset_cases import REPLICASET_CASES, Outcome
from e2e.fidelity.replicaset_report import REPLICASET_CONTROLLER_NOT_RUN, replicaset_summary
from e2e.fidelity.replicaset_run import ReplicaSetResult, run_gpufleet

CASES = {c.name: c for c in REPLICASET_CASES}


@pytest.fixture(scope="module")
def results(controller_sets: dict[str, dict[str, ReplicaSetResult]]) -> dict[str, ReplicaSetResult]:
    """This set's results, from the controller sets run at once (``controller_sets``)."""
    return controller_sets["replicasets"]


def test_each_case_runs_in_a_namespace_of_its_own_on_nodes_of_its_own() -> None:
    assert len({c.namespace for c in REPLICASET_CASES}) == len(REPLICASET_CASES) == 10
    nodes = [n["metadata"]["name"] for c in REPLICASET_CASES for n in c.nodes()]
    assert len(set(nodes)) == len(nodes)


@pytest.mark.parametrize("name", list(CASES))
def test_gpufleet_ends_each_case_as_upstreams_rules_say(name: str) -> None:
    """No control plane needed: gpufleet's simulator on its own, without a warning."""
    outcome, warnings = run_gpufleet(CASES[name])
    assert not warnings
    assert outcome == CASES[name].expected, CASES[name].note


def test_gpufleet_deletes_a_deployments_pods_doubled_up_on_a_node_first() -> None:
    """``getPodsRankedByRelatedPodsOnSameNode``: of 3 pods on node a and 1 on node b, a scale-down to 2
    deletes two of a's; the cost rule comes first, so a pod on b of cost -1 goes before them."""
    assert run_gpufleet(CASES["doubled-up"])[0] == Outcome((("a", 0), ("b", 0)), 4)
    assert run_gpufleet(CASES["cost-over-rank"])[0] == Outcome((("a", 0), ("a", 0)), 3)


def test_gpufleet_ranks_no_pod_of_a_replicaset_no_controller_owns_by_node() -> None:
    """``getReplicaSetsWithSameController`` finds nothing for a ReplicaSet without a controller, so
    ``getIndirectlyRelatedPods`` counts no pod on any node: the same steps keep the pods doubled up on node a
    for a bare ReplicaSet and the new pod on node b for a Deployment (found against the real controller)."""
    assert run_gpufleet(CASES["replicaset-ranks-no-node"])[0] == Outcome((("a", 0), ("a", 0)), 3)
    assert run_gpufleet(CASES["deployment-ranks-by-node"])[0] == Outcome((("a", 0), ("b", 1)), 3)


@pytest.mark.parametrize("name", list(CASES))
def test_the_real_replicaset_controller_ends_each_case_as_upstreams_rules_say(
    results: dict[str, ReplicaSetResult], name: str
) -> None:
    """The case shows on the real side what it was written for (the harness and the nodes' sizes work)."""
    result = results[name]
    assert not result.error, result.error
    assert result.real == CASES[name].expected, CASES[name].note


@pytest.mark.parametrize("name", list(CASES))
def test_gpufleet_ends_each_case_as_the_real_replicaset_controller_does(
    results: dict[str, ReplicaSetResult], name: str
) -> None:
    result = results[name]
    assert not result.error, result.error
    assert result.agrees, f"{CASES[name].note}\n  real {result.real}\n  gpufleet {result.gpufleet}"


def test_the_report_has_a_replicaset_controller_section_with_every_case(
    results: dict[str, ReplicaSetResult], tmp_path: Path
) -> None:
    ordered = [results[c.name] for c in REPLICASET_CASES]
    summary = report.write([], tmp_path, 0.0, 0.0, replicasets=replicaset_summary(ordered, 30.0))
    section = json.loads((tmp_path / "fidelity.json").read_text())["replicaset_controller"]
    assert section == json.loads(json.dumps(summary["replicaset_controller"]))
    assert section["status"].startswith("run: kube-controller-manager v1.34.10's ReplicaSet and Deployment")
    assert section["cases_compared"] == len(REPLICASET_CASES) and section["cases_failed"] == 0
    row = next(c for c in section["cases"] if c["name"] == "deletion-cost")
    assert row["gpufleet"] == {"left": [["c", 0]], "made": 3}
    text = (tmp_path / "fidelity.md").read_text()
    assert "## ReplicaSet controller (kube-controller-manager)" in text
    assert "| deletion-cost | ReplicaSet |" in text and "left c/0; made 3" in text


def test_a_report_without_the_replicaset_cases_says_where_they_run(tmp_path: Path) -> None:
    report.write([], tmp_path, 0.0, 0.0)
    section = json.loads((tmp_path / "fidelity.json").read_text())["replicaset_controller"]
    assert section == {"cases_compared": 0, "cases_agreeing": 0, "status": REPLICASET_CONTROLLER_NOT_RUN}
    assert f"{REPLICASET_CONTROLLER_NOT_RUN}." in (tmp_path / "fidelity.md").read_text()
