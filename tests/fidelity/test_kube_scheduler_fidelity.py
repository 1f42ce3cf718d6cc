"""gpufleet held against the real kube-scheduler (the control plane of ``e2e/``, Kubernetes 1.34.10).

Every case runs twice, pod by pod: on the real control plane and in gpufleet (its scheduler on the
state each real pod found, and its simulator with ties broken as kube-scheduler broke them); see
``e2e/fidelity``. The run writes its report to ``out/fidelity/`` (``fidelity.md``, ``fidelity.json``).

A case gpufleet claims to model must agree on every pod: the node (or one of the tied nodes), or
the FailedScheduling message verbatim, preemption's nomination and victims, and the end state. A
case with a feature gpufleet says it does not model must carry that warning; one the upstream
binaries cannot decide says why; a known difference (``e2e/fidelity/known.py``) is reported only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e.fidelity.run import CONTROL_PLANES, CaseResult, Fidelity
from e2e.fidelity.sources import all_cases

OUT = Path(__file__).resolve().parents[2] / "out" / "fidelity"
CASES = all_cases()


@pytest.fixture(scope="module")
def results(fidelity: Fidelity) -> dict[str, CaseResult]:
    return {r.name: r for r in fidelity.scheduler}


def _disagreements(result: CaseResult) -> str:
    return "\n".join(
        f"{p.pod}: decision {p.decision.why or 'agrees'}; end {p.end.why or 'agrees'}\n"
        f"  kube-scheduler {json.dumps(p.real)}\n  gpufleet {json.dumps(p.gpufleet)}\n"
        f"  simulated {json.dumps(p.simulated)}"
        for p in result.pods
        if not (p.decision.agrees and p.end.agrees)
    )


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_gpufleet_decides_each_pod_as_kube_scheduler_does(results: dict[str, CaseResult], name: str) -> None:
    result = results[name]
    assert not result.error, result.error
    if result.excluded:
        assert result.origin != "generated", "every generated case is one the upstream binaries decide"
        return
    if result.not_modelled:
        assert all("is not modelled" in w for w in result.not_modelled)
        return
    if result.known_difference:  # compared and reported, decided otherwise on purpose
        return
    assert result.pods, "the case created pods"
    assert result.agreeing == len(result.pods), _disagreements(result)


def test_seed_004_default_profile_leaves_the_gang_half_bound_as_kube_scheduler_does(
    results: dict[str, CaseResult],
) -> None:
    """Seed 004: S4a, S4b and one rank of T16 take one node each (LeastAllocated spreads them); T16's
    second rank and T8 wait with kube-scheduler's own message, which gpufleet gives verbatim."""
    result = results["examples/seed-004/default-scheduler.yaml"]
    pods = {p.pod.split("/")[1]: p for p in result.pods}
    bound = {name: pods[name].real["node"] for name in ("s4a-0", "s4b-0", "t16-0")}
    assert len(set(bound.values())) == 3 and None not in bound.values()
    message = (
        "0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 3 Insufficient nvidia.com/gpu. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for "
        "incoming pod."
    )
    for name in ("t16-1", "t8-0"):
        assert pods[name].real["node"] is None
        assert pods[name].real["event_message"] == pods[name].real["condition_message"] == message
        assert pods[name].gpufleet == {"message": message}


def test_seed_004_deadlock_binds_one_rank_of_each_gang_on_the_real_cluster(
    results: dict[str, CaseResult],
) -> None:
    result = results["examples/seed-004/deadlock-default-scheduler.yaml"]
    nodes = {p.pod.split("/")[1]: p.real["node"] for p in result.pods}
    assert nodes["train-a-1"] is None and nodes["train-b-1"] is None
    assert {nodes["train-a-0"], nodes["train-b-0"]} == {"gpu-0", "gpu-1"} or None not in (
        nodes["train-a-0"],
        nodes["train-b-0"],
    )
    assert result.agreeing == len(result.pods)


def test_the_report_counts_every_case_and_pod(results: dict[str, CaseResult]) -> None:
    summary = json.loads((OUT / "fidelity.json").read_text())
    assert summary["schema"] == "gpufleet.fidelity/v1" and summary["kubernetes"] == "v1.34.10"
    totals = summary["kube_scheduler"]
    assert totals["cases"] == len(CASES) and totals["cases_failed"] == 0
    assert totals["pods_compared"] >= 1000
    assert totals["pods_agreeing"] == totals["pods_compared"]
    assert summary["cluster_autoscaler"]["status"].startswith(("not run", "run: cluster-autoscaler"))
    assert "## kube-scheduler" in (OUT / "fidelity.md").read_text()


def test_the_report_says_how_many_control_planes_ran_the_cases_and_which_ran_each(fidelity: Fidelity) -> None:
    summary = json.loads((OUT / "fidelity.json").read_text())
    assert summary["control_planes"] == CONTROL_PLANES
    ran_on = [r.control_plane for r in fidelity.scheduler]
    assert [c["control_plane"] or 0 for c in summary["cases"]] == ran_on
    assert {n for n, r in zip(ran_on, fidelity.scheduler, strict=True) if not r.excluded} == set(
        range(1, CONTROL_PLANES + 1)
    )
    said = "one control plane" if CONTROL_PLANES == 1 else f"{CONTROL_PLANES} control planes side by side"
    assert f"s on {said}." in (OUT / "fidelity.md").read_text()
