"""The controller sections of the fidelity report (``e2e.fidelity.report``: the Job, ReplicaSet and
StatefulSet controllers', the node lifecycle's and the Deployment rollouts') written from fixed results,
filled by hand: in each an agreeing case, one that disagrees and one that failed to run; ``fidelity.json``
and ``fidelity.md`` as they were before the sections shared their shape (``e2e.fidelity.section``). No
control plane needed."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from e2e.fidelity import job_report, report
from e2e.fidelity.deployment_report import deployment_summary
from e2e.fidelity.deployment_run import DeploymentResult
from e2e.fidelity.job_cases import JOB_CASES
from e2e.fidelity.job_cases import Outcome as JobOutcome
from e2e.fidelity.job_run import JobResult
from e2e.fidelity.job_times import Times
from e2e.fidelity.node_failure_report import node_failure_summary
from e2e.fidelity.node_failure_run import NodeFailureResult, NodeTimeline, PodTimeline, Timeline
from e2e.fidelity.replicaset_cases import Outcome as SetOutcome
from e2e.fidelity.replicaset_report import replicaset_summary
from e2e.fidelity.replicaset_run import ReplicaSetResult
from e2e.fidelity.statefulset_cases import Outcome as StatefulOutcome
from e2e.fidelity.statefulset_report import statefulset_summary
from e2e.fidelity.statefulset_run import StatefulSetResult
from e2e.fidelity.statefulset_run import Timeline as StatefulTimeline
from e2e.fidelity.timeline import Outcome as TimelineOutcome

FAILED = "the control plane refused it\n  a second line the report leaves out"


def _jobs() -> list[JobResult]:
    failed = JobOutcome("Failed/BackoffLimitExceeded", 0, 3, 3)
    indexed = JobOutcome("Complete/Completed", 3, 0, 3, "0-2")
    return [
        JobResult(
            "backoff-limit",
            failed,
            Times((0.0, 10.0, 30.0), 32.0),
            [],
            failed,
            Times((0.41, 11.2, 31.87), 33.056),
            [],
            (),
            "",
            34.567,
        ),
        JobResult(
            "indexed-completions",
            replace(indexed, completed_indexes="0,2", pods=4),
            Times((0.0, 0.0, 0.0, 5.0), 12.0),
            ["a warning"],
            indexed,
            Times((0.3, 0.31, 0.32), 5.2),
            [],
            (2.5, 8.25),
            "",
            6.0,
        ),
        JobResult("created-suspended", JobOutcome("", 0, 0, 0), Times((), None), [], error=FAILED),
    ]


def _replicasets() -> list[ReplicaSetResult]:
    made = SetOutcome((("a", 0), ("a", 1)), 3)
    return [
        ReplicaSetResult("scale-up", made, [], made, (3.04,), "", 4.21),
        ReplicaSetResult(
            "deletion-cost", SetOutcome((("", 1), ("b", 0)), 3), [], made, (3.0, 6.123), "", 9.5
        ),
        ReplicaSetResult("doubled-up", made, [], error=FAILED),
    ]


def _statefulsets() -> list[StatefulSetResult]:
    ordered = StatefulTimeline(
        StatefulOutcome(("serve-0", "serve-1"), ("step 1", "+serve-0", "+serve-1"), 2), (0.0, 5.0)
    )
    burst = StatefulTimeline(StatefulOutcome(("serve-0", "serve-1"), ("+serve-0", "+serve-1"), 2), (0.0, 0.0))
    down = StatefulTimeline(StatefulOutcome(("serve-0",), ("step 1", "-serve-1"), 1), (0.3,))
    gone_first = StatefulOutcome(("serve-1",), ("-serve-0", "step 1"), 2)
    return [
        StatefulSetResult(
            "min-ready-seconds", ordered, [], replace(ordered, gaps_s=(0.25, 5.4321)), (1.0,), "", 7.25
        ),
        StatefulSetResult("parallel-scale-up", burst, [], replace(burst, gaps_s=(0.1, 4.0)), (), "", 3.5),
        StatefulSetResult("ordered-scale-down", down, [], replace(down, outcome=gone_first), (2.0,)),
        StatefulSetResult(
            "ordinals-start", StatefulTimeline(StatefulOutcome((), (), 0), ()), [], error=FAILED
        ),
    ]


def _deployments() -> list[DeploymentResult]:
    rolled = StatefulTimeline(TimelineOutcome(("v2",), ("step 1", "+v2", "-v1"), 1), (0.0, 0.0))
    waited = StatefulTimeline(TimelineOutcome(("v2",), ("step 1", "-v1", "+v2"), 1), (6.0, 0.0))
    return [
        DeploymentResult("defaults", rolled, [], replace(rolled, gaps_s=(0.4, 0.61)), (3.2,), "", 8.5),
        DeploymentResult("recreate", waited, [], replace(waited, outcome=rolled.outcome), (3.0,), "", 12.25),
        DeploymentResult("rollback", rolled, [], error=FAILED),
    ]


def _nodes() -> list[NodeFailureResult]:
    down = Timeline(
        (NodeTimeline("a", 0.0, 50.0, 50.0, 50.5),), (PodTimeline("p", "a", None, 300.0, 50.0, None, False),)
    )
    replaced = Timeline(
        (NodeTimeline("a", -0.5, 49.5, None, 58.0),),
        (PodTimeline("serve@b1", "b", 60.0, 10.0, None, 61.5, True),),
    )
    return [
        NodeFailureResult("default-tolerations", down, [], down),
        NodeFailureResult(
            "replicaset",
            Timeline(
                (NodeTimeline("a", 0.0, 50.0, 50.0, 50.0),),
                (PodTimeline("serve@b1", "b", 50.0, 10.0, None, None, False),),
            ),
            [],
            replaced,
            "",
            ["node a NoSchedule: real None, gpufleet 50.0", "pods: more"],
            1,
            ["dropped on a stale cache"],
        ),
        NodeFailureResult("toleration-seconds", Timeline((), ()), ["a warning"], error=FAILED),
    ]


def _write(out: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, str]:
    """The report of the fixed results: fidelity.json (parsed) and fidelity.md. One Job case is taken as
    untimed and one as a known difference, so that the section's notes on them are written too."""
    cases = {c.name: c for c in JOB_CASES}
    marked = {
        "indexed-completions": replace(cases["indexed-completions"], differs="a known difference"),
        "created-suspended": replace(cases["created-suspended"], untimed="the pods never start"),
    }
    monkeypatch.setattr(job_report, "JOB_CASES", tuple(marked.get(c.name, c) for c in JOB_CASES))
    report.write(
        [],
        out,
        12.34,
        5.678,
        jobs=job_report.job_summary(_jobs(), 45.67),
        replicasets=replicaset_summary(_replicasets(), 30.04),
        statefulsets=statefulset_summary(_statefulsets(), 25.55),
        nodes=node_failure_summary(_nodes(), 100.0),
        deployments=deployment_summary(_deployments(), 40.04),
    )
    return json.loads((out / "fidelity.json").read_text()), (out / "fidelity.md").read_text()


def test_the_controller_sections_are_written_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary, text = _write(tmp_path, monkeypatch)
    assert summary == EXPECTED_JSON
    assert text.splitlines() == list(EXPECTED_MARKDOWN)


#: the timeline both sides of the agreeing node lifecycle case have
DOWN = {
    "nodes": [
        {
            "node": "a",
            "fault_s": 0.0,
            "not_ready_s": 50.0,
            "no_schedule_s": 50.0,
            "no_execute_s": 50.5,
        }
    ],
    "pods": [
        {
            "pod": "p",
            "node": "a",
            "created_s": None,
            "tolerates_s": 300.0,
            "ready_lost_s": 50.0,
            "deleting_s": None,
            "gone": False,
        }
    ],
}

EXPECTED_JSON: dict[str, Any] = {
    "schema": "gpufleet.fidelity/v1",
    "kubernetes": "v1.34.10",
    "control_plane_start_s": 5.68,
    "run_s": 12.3,
    "control_planes": 1,
    "kube_scheduler": {
        "cases_known_difference": 0,
        "known_difference_pods_compared": 0,
        "known_difference_pods_agreeing": 0,
        "cases": 0,
        "cases_modelled": 0,
        "cases_not_modelled": 0,
        "cases_excluded": 0,
        "cases_failed": 0,
        "cases_run_again": 0,
        "pods_compared": 0,
        "pods_agreeing": 0,
        "not_modelled_pods_compared": 0,
        "not_modelled_pods_agreeing": 0,
    },
    "cluster_autoscaler": {
        "decisions_compared": 0,
        "decisions_agreeing": 0,
        "status": (
            "not run: the Go module proxy refuses k8s.io/autoscaler/cluster-autoscaler at "
            "every version (403 'This module version is not available'), so `make test` "
            "cannot build it, and no cluster-autoscaler binary was given "
            "(GPUFLEET_CLUSTER_AUTOSCALER)"
        ),
    },
    "job_controller": {
        "version": "v1.34.10",
        "status": (
            "run: kube-controller-manager v1.34.10's Job controller (its pods played by "
            "kwok), 3 cases side by side"
        ),
        "run_s": 45.7,
        "time_tolerance_s": 5.0,
        "cases_compared": 2,
        "cases_agreeing": 1,
        "outcomes_agreeing": 1,
        "times_compared": 2,
        "times_agreeing": 1,
        "cases_failed": 1,
        "cases": [
            {
                "name": "backoff-limit",
                "note": (
                    "a pod that keeps failing: retried after 10 s, then more failures than "
                    "backoffLimit fail the Job"
                ),
                "agrees": True,
                "outcome_agrees": True,
                "times_compared": True,
                "untimed": None,
                "known_difference": None,
                "times_agree": True,
                "why": None,
                "error": None,
                "patched_s": [],
                "kube_controller_manager": {
                    "condition": "Failed/BackoffLimitExceeded",
                    "succeeded": 0,
                    "failed": 3,
                    "pods": 3,
                    "completed_indexes": "",
                    "failed_indexes": "",
                    "pods_created_s": [0.41, 11.2, 31.87],
                    "finished_s": 33.06,
                },
                "gpufleet": {
                    "condition": "Failed/BackoffLimitExceeded",
                    "succeeded": 0,
                    "failed": 3,
                    "pods": 3,
                    "completed_indexes": "",
                    "failed_indexes": "",
                    "pods_created_s": [0.0, 10.0, 30.0],
                    "finished_s": 32.0,
                },
                "real_s": 34.57,
            },
            {
                "name": "indexed-completions",
                "note": "an Indexed Job of completions 3, parallelism 2, every index succeeding",
                "agrees": False,
                "outcome_agrees": False,
                "times_compared": True,
                "untimed": None,
                "known_difference": "a known difference",
                "times_agree": False,
                "why": (
                    "pods: 3, gpufleet 4; completed_indexes: '0-2', gpufleet '0,2'; end decided at "
                    "5.20 s (4.88 s after the event before), gpufleet 12.00 s (12.00 s)"
                ),
                "error": None,
                "patched_s": [2.5, 8.25],
                "kube_controller_manager": {
                    "condition": "Complete/Completed",
                    "succeeded": 3,
                    "failed": 0,
                    "pods": 3,
                    "completed_indexes": "0-2",
                    "failed_indexes": "",
                    "pods_created_s": [0.3, 0.31, 0.32],
                    "finished_s": 5.2,
                },
                "gpufleet": {
                    "condition": "Complete/Completed",
                    "succeeded": 3,
                    "failed": 0,
                    "pods": 4,
                    "completed_indexes": "0,2",
                    "failed_indexes": "",
                    "pods_created_s": [0.0, 0.0, 0.0, 5.0],
                    "finished_s": 12.0,
                },
                "real_s": 6.0,
            },
            {
                "name": "created-suspended",
                "note": "suspend at creation: no pod; resumed, it runs its pods",
                "agrees": False,
                "outcome_agrees": False,
                "times_compared": False,
                "untimed": "the pods never start",
                "known_difference": None,
                "times_agree": None,
                "why": None,
                "error": "the control plane refused it\n  a second line the report leaves out",
                "patched_s": [],
                "kube_controller_manager": None,
                "gpufleet": {
                    "condition": "",
                    "succeeded": 0,
                    "failed": 0,
                    "pods": 0,
                    "completed_indexes": "",
                    "failed_indexes": "",
                    "pods_created_s": [],
                    "finished_s": None,
                },
                "real_s": 0.0,
            },
        ],
    },
    "replicaset_controller": {
        "version": "v1.34.10",
        "status": (
            "run: kube-controller-manager v1.34.10's ReplicaSet and Deployment controllers "
            "(kube-scheduler placing, kwok playing the pods), 3 cases side by side"
        ),
        "run_s": 30.0,
        "cases_compared": 2,
        "cases_agreeing": 1,
        "cases_failed": 1,
        "cases": [
            {
                "name": "scale-up",
                "kind": "ReplicaSet",
                "note": "scaled up: the new pods are made at once, after the step",
                "agrees": True,
                "error": None,
                "stepped_s": [3.04],
                "kube_controller_manager": {"left": [["a", 0], ["a", 1]], "made": 3},
                "gpufleet": {"left": [["a", 0], ["a", 1]], "made": 3},
                "real_s": 4.21,
            },
            {
                "name": "deletion-cost",
                "kind": "ReplicaSet",
                "note": "rule 4: the lower pod-deletion-cost goes first, an unannotated pod counting 0",
                "agrees": False,
                "error": None,
                "stepped_s": [3.0, 6.12],
                "kube_controller_manager": {"left": [["a", 0], ["a", 1]], "made": 3},
                "gpufleet": {"left": [["", 1], ["b", 0]], "made": 3},
                "real_s": 9.5,
            },
            {
                "name": "doubled-up",
                "kind": "Deployment",
                "note": (
                    "rule 5: a Deployment's ReplicaSet deletes the pods on the node that holds more "
                    "of its pods first"
                ),
                "agrees": False,
                "error": "the control plane refused it\n  a second line the report leaves out",
                "stepped_s": [],
                "kube_controller_manager": None,
                "gpufleet": {"left": [["a", 0], ["a", 1]], "made": 3},
                "real_s": 0.0,
            },
        ],
    },
    "statefulset_controller": {
        "version": "v1.34.10",
        "status": (
            "run: kube-controller-manager v1.34.10's StatefulSet controller (kube-scheduler "
            "placing, kwok playing the pods), 4 cases side by side"
        ),
        "tolerance_s": 2.0,
        "run_s": 25.6,
        "cases_compared": 3,
        "cases_agreeing": 1,
        "cases_failed": 1,
        "cases": [
            {
                "name": "min-ready-seconds",
                "policy": "OrderedReady",
                "note": (
                    "OrderedReady with minReadySeconds 5, scaled from 0 to 3: each pod 5 s after the "
                    "one before is Ready"
                ),
                "agrees": True,
                "why": None,
                "error": None,
                "stepped_s": [1.0],
                "kube_controller_manager": {
                    "left": ["serve-0", "serve-1"],
                    "order": ["step 1", "+serve-0", "+serve-1"],
                    "made": 2,
                    "gaps_s": [0.25, 5.43],
                },
                "gpufleet": {
                    "left": ["serve-0", "serve-1"],
                    "order": ["step 1", "+serve-0", "+serve-1"],
                    "made": 2,
                    "gaps_s": [0.0, 5.0],
                },
                "real_s": 7.25,
            },
            {
                "name": "parallel-scale-up",
                "policy": "Parallel",
                "note": "Parallel, scaled from 0 to 3: all at once, minReadySeconds 5 waited for by none",
                "agrees": False,
                "why": "gaps (more than 2 s apart)",
                "error": None,
                "stepped_s": [],
                "kube_controller_manager": {
                    "left": ["serve-0", "serve-1"],
                    "order": ["+serve-0", "+serve-1"],
                    "made": 2,
                    "gaps_s": [0.1, 4.0],
                },
                "gpufleet": {
                    "left": ["serve-0", "serve-1"],
                    "order": ["+serve-0", "+serve-1"],
                    "made": 2,
                    "gaps_s": [0.0, 0.0],
                },
                "real_s": 3.5,
            },
            {
                "name": "ordered-scale-down",
                "policy": "OrderedReady",
                "note": (
                    "OrderedReady, scaled from 3 to 1: the highest ordinal first, the next once it is gone"
                ),
                "agrees": False,
                "why": "order",
                "error": None,
                "stepped_s": [2.0],
                "kube_controller_manager": {
                    "left": ["serve-1"],
                    "order": ["-serve-0", "step 1"],
                    "made": 2,
                    "gaps_s": [0.3],
                },
                "gpufleet": {
                    "left": ["serve-0"],
                    "order": ["step 1", "-serve-1"],
                    "made": 1,
                    "gaps_s": [0.3],
                },
                "real_s": 0.0,
            },
            {
                "name": "ordinals-start",
                "policy": "OrderedReady",
                "note": "ordinals.start 5: pods 5 and 6, then 7 when scaled to 3",
                "agrees": False,
                "why": None,
                "error": "the control plane refused it\n  a second line the report leaves out",
                "stepped_s": [],
                "kube_controller_manager": None,
                "gpufleet": {"left": [], "order": [], "made": 0, "gaps_s": []},
                "real_s": 0.0,
            },
        ],
    },
    "node_lifecycle": {
        "version": "v1.34.10",
        "status": (
            "run: kube-controller-manager v1.34.10's node lifecycle, taint eviction and "
            "ReplicaSet controllers (a second kwok playing the nodes that fail, killed), 3 "
            "cases side by side"
        ),
        "tolerances_s": {"not_ready_early": 10.9, "not_ready_late": 10.5, "after_not_ready": 2.0},
        "run_s": 100.0,
        "cases_compared": 2,
        "cases_agreeing": 1,
        "cases_failed": 1,
        "cases": [
            {
                "name": "default-tolerations",
                "note": (
                    "a pod of no toleration of its own: DefaultTolerationSeconds gives it 300 s, so "
                    "it stays past the run, its Ready condition False from the node's NotReady "
                    "(MarkPodsNotReady)"
                ),
                "agrees": True,
                "error": None,
                "differences": [],
                "reruns": 0,
                "rerun_why": [],
                "kube_controller_manager": DOWN,
                "gpufleet": DOWN,
            },
            {
                "name": "replicaset",
                "note": (
                    "a ReplicaSet's pods tolerating 10 s: deleted 10 s after the taint, replaced at "
                    "once on the node that is up (the down one tainted NoSchedule), the old ones "
                    "left Terminating"
                ),
                "agrees": False,
                "error": None,
                "differences": ["node a NoSchedule: real None, gpufleet 50.0", "pods: more"],
                "reruns": 1,
                "rerun_why": ["dropped on a stale cache"],
                "kube_controller_manager": {
                    "nodes": [
                        {
                            "node": "a",
                            "fault_s": -0.5,
                            "not_ready_s": 49.5,
                            "no_schedule_s": None,
                            "no_execute_s": 58.0,
                        }
                    ],
                    "pods": [
                        {
                            "pod": "serve@b1",
                            "node": "b",
                            "created_s": 60.0,
                            "tolerates_s": 10.0,
                            "ready_lost_s": None,
                            "deleting_s": 61.5,
                            "gone": True,
                        }
                    ],
                },
                "gpufleet": {
                    "nodes": [
                        {
                            "node": "a",
                            "fault_s": 0.0,
                            "not_ready_s": 50.0,
                            "no_schedule_s": 50.0,
                            "no_execute_s": 50.0,
                        }
                    ],
                    "pods": [
                        {
                            "pod": "serve@b1",
                            "node": "b",
                            "created_s": 50.0,
                            "tolerates_s": 10.0,
                            "ready_lost_s": None,
                            "deleting_s": None,
                            "gone": False,
                        }
                    ],
                },
            },
            {
                "name": "toleration-seconds",
                "note": (
                    "pods tolerating unreachable:NoExecute for 10 s and 30 s are deleted that long "
                    "after the taint, and stay Terminating (no kubelet confirms it)"
                ),
                "agrees": False,
                "error": "the control plane refused it\n  a second line the report leaves out",
                "differences": [],
                "reruns": 0,
                "rerun_why": [],
                "kube_controller_manager": None,
                "gpufleet": {"nodes": [], "pods": []},
            },
        ],
    },
    "deployment_rollouts": {
        "version": "v1.34.10",
        "status": (
            "run: kube-controller-manager v1.34.10's Deployment and ReplicaSet controllers "
            "(kube-scheduler placing, kwok playing the pods), 3 cases side by side"
        ),
        "tolerance_s": 2.0,
        "run_s": 40.0,
        "cases_compared": 2,
        "cases_agreeing": 1,
        "cases_failed": 1,
        "cases": [
            {
                "name": "defaults",
                "strategy": "RollingUpdate 25%/25%",
                "note": (
                    "25 %/25 % of 4 (surge 1, 1 unavailable), pods available once Ready: the whole "
                    "rollout one burst, 4 new pods made and 4 old deleted"
                ),
                "agrees": True,
                "why": None,
                "error": None,
                "stepped_s": [3.2],
                "kube_controller_manager": {
                    "left": ["v2"],
                    "order": ["step 1", "+v2", "-v1"],
                    "made": 1,
                    "gaps_s": [0.4, 0.61],
                },
                "gpufleet": {
                    "left": ["v2"],
                    "order": ["step 1", "+v2", "-v1"],
                    "made": 1,
                    "gaps_s": [0.0, 0.0],
                },
                "real_s": 8.5,
            },
            {
                "name": "recreate",
                "strategy": "Recreate",
                "note": (
                    "Recreate, a grace period of 6 s: every old pod deleted, the new ones made "
                    "once all are gone"
                ),
                "agrees": False,
                "why": "order",
                "error": None,
                "stepped_s": [3.0],
                "kube_controller_manager": {
                    "left": ["v2"],
                    "order": ["step 1", "+v2", "-v1"],
                    "made": 1,
                    "gaps_s": [6.0, 0.0],
                },
                "gpufleet": {
                    "left": ["v2"],
                    "order": ["step 1", "-v1", "+v2"],
                    "made": 1,
                    "gaps_s": [6.0, 0.0],
                },
                "real_s": 12.25,
            },
            {
                "name": "rollback",
                "strategy": "RollingUpdate 1/0",
                "note": (
                    "maxSurge 1, maxUnavailable 0: rolled out to v2, then back to v1: v1's "
                    "ReplicaSet scaled up again"
                ),
                "agrees": False,
                "why": None,
                "error": "the control plane refused it\n  a second line the report leaves out",
                "stepped_s": [],
                "kube_controller_manager": None,
                "gpufleet": {
                    "left": ["v2"],
                    "order": ["step 1", "+v2", "-v1"],
                    "made": 1,
                    "gaps_s": [0.0, 0.0],
                },
                "real_s": 0.0,
            },
        ],
    },
    "cases": [],
}

EXPECTED_MARKDOWN = (
    "# gpufleet against the real control plane (Kubernetes v1.34.10)",
    "",
    "Control plane started in 5.68 s; the cases ran in 12.3 s on one control plane.",
    "",
    "## kube-scheduler",
    "",
    "- modelled cases: **0 of 0 pods agree** (-) over 0 cases",
    "- cases with features gpufleet does not model: 0 of 0 pods agree over 0 cases",
    "- known differences (deliberate, listed below): 0 of 0 pods agree over 0 cases",
    (
        "- excluded (the upstream binaries cannot decide them): 0; failed to run: 0; run "
        "again (kube-scheduler decided on stale nodes, a new node's not-ready taint "
        "still in its cache, or a component stalled past a wait; `rerun_why` in "
        "fidelity.json): 0"
    ),
    "",
    "| origin | cases | modelled | pods compared | pods agreeing |",
    "|---|---|---|---|---|",
    "",
    "## cluster-autoscaler",
    "",
    (
        "not run: the Go module proxy refuses k8s.io/autoscaler/cluster-autoscaler at "
        "every version (403 'This module version is not available'), so `make test` "
        "cannot build it, and no cluster-autoscaler binary was given "
        "(GPUFLEET_CLUSTER_AUTOSCALER)."
    ),
    "",
    "## Disagreements",
    "",
    "None.",
    "## Job controller (kube-controller-manager)",
    "",
    (
        "run: kube-controller-manager v1.34.10's Job controller (its pods played by "
        "kwok), 3 cases side by side."
    ),
    "",
    (
        "**1 of 2 cases agree** (50.0 %): outcomes 1 of 2, times 1 of 2 (each pod's "
        "creation, then the Job's end decided, step by step: the time since the event "
        "before within 5 s of gpufleet's); cases failed to run: 1; 45.7 s."
    ),
    "",
    (
        "| case | note | kube-controller-manager | gpufleet | pods created; end decided, "
        "s (kube-controller-manager / gpufleet) | agrees |"
    ),
    "|---|---|---|---|---|---|",
    (
        "| backoff-limit | a pod that keeps failing: retried after 10 s, then more "
        "failures than backoffLimit fail the Job | Failed/BackoffLimitExceeded, "
        "succeeded 0, failed 3, pods 3 | Failed/BackoffLimitExceeded, succeeded 0, "
        "failed 3, pods 3 | 0.41, 11.2, 31.87; 33.06 / 0, 10, 30; 32.0 | yes |"
    ),
    (
        "| indexed-completions | an Indexed Job of completions 3, parallelism 2, every "
        "index succeeding | Complete/Completed, succeeded 3, failed 0, pods 3, completed "
        "0-2 | Complete/Completed, succeeded 3, failed 0, pods 4, completed 0,2 | 0.3, "
        '0.31, 0.32; 5.2 / 0, 0, 0, 5; 12.0 | **no**: "pods: 3, gpufleet 4; '
        "completed_indexes: '0-2', gpufleet '0,2'; end decided at 5.20 s (4.88 s after "
        'the event before), gpufleet 12.00 s (12.00 s)" (known, not yet mended) |'
    ),
    (
        "| created-suspended | suspend at creation: no pod; resumed, it runs its pods | "
        "- | not finished, succeeded 0, failed 0, pods 0 | - / none; None (not compared) "
        "| error |"
    ),
    "",
    "Times not compared (created-suspended): the pods never start.",
    "",
    "Known disagreements, not yet mended:",
    "",
    "- indexed-completions: a known difference",
    "",
    "Failed to run:",
    "",
    "- created-suspended: the control plane refused it",
    "",
    "## ReplicaSet controller (kube-controller-manager)",
    "",
    (
        "run: kube-controller-manager v1.34.10's ReplicaSet and Deployment controllers "
        "(kube-scheduler placing, kwok playing the pods), 3 cases side by side."
    ),
    "",
    (
        "**1 of 2 cases agree** (50.0 %): the pods left (each as its node, then the "
        "steps made before its creation) and how many were made; cases failed to run: 1; "
        "30.0 s."
    ),
    "",
    "| case | kind | note | kube-controller-manager | gpufleet | agrees |",
    "|---|---|---|---|---|---|",
    (
        "| scale-up | ReplicaSet | scaled up: the new pods are made at once, after the "
        "step | left a/0, a/1; made 3 | left a/0, a/1; made 3 | yes |"
    ),
    (
        "| deletion-cost | ReplicaSet | rule 4: the lower pod-deletion-cost goes first, "
        "an unannotated pod counting 0 | left a/0, a/1; made 3 | left pending/1, b/0; "
        "made 3 | **no** |"
    ),
    (
        "| doubled-up | Deployment | rule 5: a Deployment's ReplicaSet deletes the pods "
        "on the node that holds more of its pods first | - | left a/0, a/1; made 3 | "
        "error |"
    ),
    "",
    "Failed to run:",
    "",
    "- doubled-up: the control plane refused it",
    "",
    "## StatefulSet controller (kube-controller-manager)",
    "",
    (
        "run: kube-controller-manager v1.34.10's StatefulSet controller (kube-scheduler "
        "placing, kwok playing the pods), 4 cases side by side."
    ),
    "",
    (
        "**1 of 3 cases agree** (33.3 %): the order the steps were made and the pods "
        "created (+) and gone (-) in, each pod's entry with the seconds since the entry "
        "before it (agreeing within 2 s), the pods left and how many were made; cases "
        "failed to run: 1; 25.6 s."
    ),
    "",
    "| case | policy | note | kube-controller-manager | gpufleet | agrees |",
    "|---|---|---|---|---|---|",
    (
        "| min-ready-seconds | OrderedReady | OrderedReady with minReadySeconds 5, "
        "scaled from 0 to 3: each pod 5 s after the one before is Ready | step 1, "
        "+serve-0 (0.2), +serve-1 (5.4) | step 1, +serve-0 (0.0), +serve-1 (5.0) | yes |"
    ),
    (
        "| parallel-scale-up | Parallel | Parallel, scaled from 0 to 3: all at once, "
        "minReadySeconds 5 waited for by none | +serve-0 (0.1), +serve-1 (4.0) | "
        "+serve-0 (0.0), +serve-1 (0.0) | **no** (gaps (more than 2 s apart)) |"
    ),
    (
        "| ordered-scale-down | OrderedReady | OrderedReady, scaled from 3 to 1: the "
        "highest ordinal first, the next once it is gone | -serve-0 (0.3), step 1 | step "
        "1, -serve-1 (0.3) | **no** (order) |"
    ),
    (
        "| ordinals-start | OrderedReady | ordinals.start 5: pods 5 and 6, then 7 when "
        "scaled to 3 | - |  | error |"
    ),
    "",
    "Failed to run:",
    "",
    "- ordinals-start: the control plane refused it",
    "",
    "## Node lifecycle (kube-controller-manager)",
    "",
    (
        "run: kube-controller-manager v1.34.10's node lifecycle, taint eviction and "
        "ReplicaSet controllers (a second kwok playing the nodes that fail, killed), 3 "
        "cases side by side."
    ),
    "",
    (
        "**1 of 2 cases agree** (50.0 %): when each failing node went NotReady after its "
        "kubelet stopped (tolerance -10.9/+10.5 s: the Lease renew interval, the monitor "
        "period), then, gpufleet's fault placed where the real NotReady says, its "
        "taints, each pod's Ready False and deletion, the replacements and where (within "
        "2 s); cases failed to run: 1; 100.0 s. Times in seconds after the kill."
    ),
    "",
    "| case | note | kube-controller-manager | gpufleet | agrees |",
    "|---|---|---|---|---|",
    (
        "| default-tolerations | a pod of no toleration of its own: "
        "DefaultTolerationSeconds gives it 300 s, so it stays past the run, its Ready "
        "condition False from the node's NotReady (MarkPodsNotReady) | a: NotReady 50.0, "
        "NoExecute 50.5; p on a | a: NotReady 50.0, NoExecute 50.5; p on a | yes |"
    ),
    (
        "| replicaset | a ReplicaSet's pods tolerating 10 s: deleted 10 s after the "
        "taint, replaced at once on the node that is up (the down one tainted "
        "NoSchedule), the old ones left Terminating | a: NotReady 49.5, NoExecute 58.0; "
        "serve@b1 on b made 60.0 deleted 61.5 | a: NotReady 50.0, NoExecute 50.0; "
        "serve@b1 on b made 50.0 | **no** |"
    ),
    (
        "| toleration-seconds | pods tolerating unreachable:NoExecute for 10 s and 30 s "
        "are deleted that long after the taint, and stay Terminating (no kubelet "
        "confirms it) | -; - | ;  | error |"
    ),
    "",
    "Differences:",
    "",
    "- replicaset: node a NoSchedule: real None, gpufleet 50.0; pods: more",
    "",
    "Run again:",
    "",
    "- replicaset: dropped on a stale cache",
    "",
    "Failed to run:",
    "",
    "- toleration-seconds: the control plane refused it",
    "",
    "## Deployment rollouts (kube-controller-manager)",
    "",
    (
        "run: kube-controller-manager v1.34.10's Deployment and ReplicaSet controllers "
        "(kube-scheduler placing, kwok playing the pods), 3 cases side by side."
    ),
    "",
    (
        "**1 of 2 cases agree** (50.0 %): the order the steps were made and the pods created (+) "
        "and gone (-) in, each pod's entry with the seconds since the entry before it (agreeing "
        "within 2 s), the pods left and how many were made; cases failed to run: 1; 40.0 s."
    ),
    "",
    "| case | strategy | note | kube-controller-manager | gpufleet | agrees |",
    "|---|---|---|---|---|---|",
    (
        "| defaults | RollingUpdate 25%/25% | 25 %/25 % of 4 (surge 1, 1 unavailable), pods "
        "available once Ready: the whole rollout one burst, 4 new pods made and 4 old deleted | "
        "step 1, +v2 (0.4), -v1 (0.6) | step 1, +v2 (0.0), -v1 (0.0) | yes |"
    ),
    (
        "| recreate | Recreate | Recreate, a grace period of 6 s: every old pod deleted, the new "
        "ones made once all are gone | step 1, +v2 (6.0), -v1 (0.0) | step 1, -v1 (6.0), +v2 (0.0) "
        "| **no** (order) |"
    ),
    (
        "| rollback | RollingUpdate 1/0 | maxSurge 1, maxUnavailable 0: rolled out to v2, then "
        "back to v1: v1's ReplicaSet scaled up again | - | step 1, +v2 (0.0), -v1 (0.0) | error |"
    ),
    "",
    "Failed to run:",
    "",
    "- rollback: the control plane refused it",
)
