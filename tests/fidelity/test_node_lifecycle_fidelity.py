"""gpufleet's node failure timeline held against kube-controller-manager's node lifecycle, taint eviction and
ReplicaSet controllers (the control plane of ``e2e/``, Kubernetes 1.34.10; a second kwok plays the nodes that
fail and is killed, so their Leases and status stop as a kubelet's that stopped): NotReady after
``--node-monitor-grace-period``, the pods marked not ready then (``MarkPodsNotReady``), the unreachable
taints, the pods deleted after what they tolerate (``DefaultTolerationSeconds``' 300 s, their own, forever),
a zone's rate limiter, a ReplicaSet's pods replaced while the old ones stay Terminating; see
``e2e/fidelity/node_failure_cases.py`` for the cases and ``e2e/fidelity/node_failure_run.py`` for both sides
and the tolerances.

The cases run side by side on the session's control plane, its ``--node-monitor-grace-period`` 50 s
(``e2e.controlplane.NODE_MONITOR_GRACE_S``; gpufleet's side given the same) (about 100 s: the grace period,
the longest toleration, the nodes' start and cleanup)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e.controlplane import NODE_MONITOR_GRACE_S as GRACE
from e2e.fidelity import report
from e2e.fidelity.node_failure_cases import NODE_FAILURE_CASES
from e2e.fidelity.node_failure_report import NODE_LIFECYCLE_NOT_RUN, node_failure_summary
from e2e.fidelity.node_failure_run import (
    NodeFailureResult,
    NodeTimeline,
    PodTimeline,
    Timeline,
    differences,
    faults_in_taint_order,
    run_gpufleet,
)

CASES = {c.name: c for c in NODE_FAILURE_CASES}


@pytest.fixture(scope="module")
def results(controller_sets: dict[str, dict[str, NodeFailureResult]]) -> dict[str, NodeFailureResult]:
    """This set's results, from the controller sets run at once (``controller_sets``)."""
    return controller_sets["nodes"]


def test_each_case_runs_in_a_namespace_and_a_zone_of_its_own_on_nodes_of_its_own() -> None:
    assert len({c.namespace for c in NODE_FAILURE_CASES}) == len(NODE_FAILURE_CASES) == 5
    nodes = [n["metadata"] for c in NODE_FAILURE_CASES for n in c.node_manifests()]
    assert len({n["name"] for n in nodes}) == len(nodes)
    zones = {n["labels"]["topology.kubernetes.io/zone"] for n in nodes}
    assert zones == {c.namespace for c in NODE_FAILURE_CASES}
    down = [n["name"] for n in nodes if n["annotations"]["kwok.x-k8s.io/node"] == "kwok-down"]
    assert down == [c.node_name(x) for c in NODE_FAILURE_CASES for x in c.down]


@pytest.mark.parametrize("name", list(CASES))
def test_gpufleet_runs_each_case_without_a_warning(name: str) -> None:
    assert run_gpufleet(CASES[name])[1] == []


def test_gpufleet_marks_the_pods_not_ready_when_the_node_goes_not_ready_not_at_the_fault() -> None:
    """``monitorNodeHealth`` calls ``MarkPodsNotReady`` in the pass that set the node's Ready Unknown (the
    grace period after the kubelet stopped); the taints come in that pass too (NoExecute: the zone's limiter
    lets its first through at once). Found against the real controller: gpufleet had the pod lose Ready at
    the fault."""
    timeline, _ = run_gpufleet(CASES["default-tolerations"])
    assert timeline == Timeline(
        (NodeTimeline("a", 0.0, GRACE, GRACE, GRACE),),
        (PodTimeline("p", "a", None, 300.0, GRACE, None, False),),
    )


def test_gpufleet_deletes_pods_after_their_own_toleration_seconds_and_leaves_them_terminating() -> None:
    """``processPodOnNode``: deleted ``tolerationSeconds`` after the NoExecute taint; no kubelet confirms
    their end, so they are not gone (the 30 s grace period is long past for p10)."""
    pods = {p.pod: p for p in run_gpufleet(CASES["toleration-seconds"])[0].pods}
    assert [(pods[n].deleting_s, pods[n].gone) for n in ("p10", "p30")] == [
        (GRACE + 10.0, False),
        (GRACE + 30.0, False),
    ]
    forever = {p.pod: p for p in run_gpufleet(CASES["tolerated-forever"])[0].pods}
    assert (forever["forever"].tolerates_s, forever["forever"].deleting_s) == (None, None)
    assert forever["elsewhere"].ready_lost_s is None


def test_gpufleet_replaces_a_replicasets_pods_on_the_node_that_is_up_as_their_deletion_begins() -> None:
    pods = run_gpufleet(CASES["replicaset"])[0].pods
    assert [(p.pod, p.created_s, p.deleting_s) for p in pods] == [
        ("serve@a1", None, GRACE + 10.0),
        ("serve@a2", None, GRACE + 10.0),
        ("serve@b1", GRACE + 10.0, None),
        ("serve@b2", GRACE + 10.0, None),
    ]


def test_gpufleet_taints_the_second_node_of_a_zone_10_s_after_the_first() -> None:
    """``--node-eviction-rate`` 0.1: the zone's ``RateLimitedTimedQueue`` lets one NoExecute taint through
    every 10 s."""
    timeline = run_gpufleet(CASES["two-down-in-a-zone"])[0]
    assert [n.no_execute_s for n in timeline.nodes] == [GRACE, GRACE + 10.0]
    assert [p.deleting_s for p in timeline.pods] == [GRACE, GRACE + 10.0]


def test_nodes_not_ready_in_one_pass_fail_in_gpufleet_in_the_order_the_real_zone_tainted_them() -> None:
    """Two nodes NotReady in the same ``monitorNodeHealth`` pass are queued for the NoExecute taint in the
    order the controller listed them (a map's order): the real side tainted b first, though the watches saw a
    NotReady 20 ms sooner, so gpufleet's fault of b comes first, and then a's just after it; the taints and
    pod deletions then agree."""
    g = GRACE
    real = (NodeTimeline("a", 0.0, g - 0.02, g - 0.02, g + 10.1), NodeTimeline("b", 0.0, g, g, g + 0.1))
    faults = faults_in_taint_order(real)
    assert faults == {"b": 0.0, "a": 0.001}
    ours = run_gpufleet(CASES["two-down-in-a-zone"], 20.0, faults)[0]
    assert {n.node: n.no_execute_s for n in ours.nodes} == {"a": g + 10.0, "b": g}
    assert faults_in_taint_order((NodeTimeline("a", 0.0, g - 10.0, g - 10, g - 10),)) == {"a": -10.0}


def test_the_comparison_allows_notready_within_a_lease_renewal_and_two_monitor_passes() -> None:
    """NotReady may come up to 10.9 s sooner or 10.5 s later than the grace period after the kill; what
    follows it (gpufleet's fault placed where the real NotReady says), within 2 s."""

    def compare(not_ready: float, lost: float) -> list[str]:
        real = Timeline(
            (NodeTimeline("a", 0.0, not_ready, not_ready, not_ready),),
            (PodTimeline("p", "a", None, 300.0, lost, None, False),),
        )
        ours = run_gpufleet(CASES["default-tolerations"], 20.0, {"a": not_ready - GRACE})[0]
        assert ours.nodes[0].not_ready_s == ours.pods[0].ready_lost_s == not_ready
        return differences(real, ours)

    g = GRACE
    assert compare(g - 10.0, g - 10.0) == compare(g + 10.0, g + 11.5) == []
    assert compare(g - 11.0, g - 11.0) == [
        f"node a: NotReady {g - 11.0:g} s after the kill, gpufleet {g:g} s (tolerance -10.9/+10.5 s)"
    ]
    assert compare(g, g + 2.5) == [f"pod p Ready False: real {g + 2.5}, gpufleet {g}"]


@pytest.mark.parametrize("name", list(CASES))
def test_gpufleets_node_failure_timeline_agrees_with_the_real_controllers(
    results: dict[str, NodeFailureResult], name: str
) -> None:
    result = results[name]
    assert not result.error, result.error
    assert result.agrees, f"{CASES[name].note}\n  " + "\n  ".join(result.differences)


def test_the_real_controllers_keep_default_tolerations_and_terminating_pods_as_upstreams_rules_say(
    results: dict[str, NodeFailureResult],
) -> None:
    """The cases show on the real side what they were written for: DefaultTolerationSeconds' 300 s, pods
    deleted on a dead node left Terminating, a ReplicaSet's replacements on node b, a zone's second taint
    10 s after its first (the harness works)."""
    real = {name: r.real for name, r in results.items()}
    assert all(t is not None for t in real.values())
    default = real["default-tolerations"]
    assert default is not None and default.pods[0].tolerates_s == 300.0 and default.pods[0].deleting_s is None
    replaced = real["replicaset"]
    assert replaced is not None
    assert [(p.node, p.created_s is None, p.deleting_s is not None, p.gone) for p in replaced.pods] == [
        ("a", True, True, False),
        ("a", True, True, False),
        ("b", False, False, False),
        ("b", False, False, False),
    ]
    zone = real["two-down-in-a-zone"]
    assert zone is not None
    first, second = sorted(n.no_execute_s or 0.0 for n in zone.nodes)
    assert second - first >= 9.5


def test_the_report_has_a_node_lifecycle_section_with_every_case(
    results: dict[str, NodeFailureResult], tmp_path: Path
) -> None:
    ordered = [results[c.name] for c in NODE_FAILURE_CASES]
    summary = report.write([], tmp_path, 0.0, 0.0, nodes=node_failure_summary(ordered, 100.0))
    section = json.loads((tmp_path / "fidelity.json").read_text())["node_lifecycle"]
    assert section == json.loads(json.dumps(summary["node_lifecycle"]))
    assert section["status"].startswith("run: kube-controller-manager v1.34.10's node lifecycle")
    assert section["cases_compared"] == len(NODE_FAILURE_CASES) and section["cases_failed"] == 0
    text = (tmp_path / "fidelity.md").read_text()
    assert "## Node lifecycle (kube-controller-manager)" in text and "| toleration-seconds |" in text


def test_a_report_without_the_node_cases_says_where_they_run(tmp_path: Path) -> None:
    report.write([], tmp_path, 0.0, 0.0)
    section = json.loads((tmp_path / "fidelity.json").read_text())["node_lifecycle"]
    assert section == {"cases_compared": 0, "cases_agreeing": 0, "status": NODE_LIFECYCLE_NOT_RUN}
    assert f"{NODE_LIFECYCLE_NOT_RUN}." in (tmp_path / "fidelity.md").read_text()
