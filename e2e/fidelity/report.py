"""The fidelity report: ``fidelity.json`` (schema ``gpufleet.fidelity/v1``) and ``fidelity.md``.

Totals count pods of the cases gpufleet claims to model (no ``... is not modelled`` warning, not
excluded, run without error): a pod agrees when both its decision and its end agree. Cases with a
feature gpufleet says it does not model are counted apart, and excluded cases are listed with the
reason. Every disagreement is written with both sides. The cluster-autoscaler's, the Job controller's, the
ReplicaSet controller's, the StatefulSet controller's, the node lifecycle's and the Deployment rollouts' cases
have sections of their own (``autoscaler_summary``, ``e2e.fidelity.job_report``, ``replicaset_report``,
``statefulset_report``, ``node_failure_report``, ``deployment_report``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from e2e.components import CLUSTER_AUTOSCALER_REFUSED, CLUSTER_AUTOSCALER_VERSION, KUBERNETES_VERSION
from e2e.fidelity.autoscaler_run import AutoscalerResult
from e2e.fidelity.deployment_report import deployment_markdown, deployment_summary
from e2e.fidelity.job_report import job_markdown, job_summary
from e2e.fidelity.node_failure_report import node_failure_markdown, node_failure_summary
from e2e.fidelity.replicaset_report import replicaset_markdown, replicaset_summary
from e2e.fidelity.run import CaseResult
from e2e.fidelity.section import pct
from e2e.fidelity.statefulset_report import statefulset_markdown, statefulset_summary

SCHEMA = "gpufleet.fidelity/v1"
CLUSTER_AUTOSCALER_NOT_RUN = (
    f"not run: {CLUSTER_AUTOSCALER_REFUSED}, and no cluster-autoscaler binary was given "
    "(GPUFLEET_CLUSTER_AUTOSCALER)"
)


def totals(results: list[CaseResult]) -> dict[str, Any]:
    modelled = [r for r in results if r.modelled]
    apart = [r for r in results if r.not_modelled and not r.excluded and not r.error]
    known = [r for r in results if r.known_difference and not r.error]
    return {
        "cases_known_difference": len(known),
        "known_difference_pods_compared": sum(len(r.pods) for r in known),
        "known_difference_pods_agreeing": sum(r.agreeing for r in known),
        "cases": len(results),
        "cases_modelled": len(modelled),
        "cases_not_modelled": len(apart),
        "cases_excluded": sum(1 for r in results if r.excluded),
        "cases_failed": sum(1 for r in results if r.error),
        "cases_run_again": sum(1 for r in results if r.reruns),
        "pods_compared": sum(len(r.pods) for r in modelled),
        "pods_agreeing": sum(r.agreeing for r in modelled),
        "not_modelled_pods_compared": sum(len(r.pods) for r in apart),
        "not_modelled_pods_agreeing": sum(r.agreeing for r in apart),
    }


def _case_json(r: CaseResult) -> dict[str, Any]:
    return {
        "name": r.name,
        "origin": r.origin,
        "note": r.note,
        "excluded": r.excluded or None,
        "known_difference": r.known_difference or None,
        "error": r.error or None,
        "not_modelled": r.not_modelled,
        "real_s": round(r.real_s, 3),
        "control_plane": r.control_plane or None,
        "reruns": r.reruns,
        "rerun_why": r.rerun_why,
        "pods": [
            {
                "pod": p.pod,
                "agrees": p.decision.agrees and p.end.agrees,
                "decision": {"agrees": p.decision.agrees, "why": p.decision.why or None},
                "end": {"agrees": p.end.agrees, "why": p.end.why or None},
                "kube_scheduler": p.real,
                "gpufleet": p.gpufleet,
                "simulated": p.simulated,
            }
            for p in r.pods
        ],
    }


def autoscaler_summary(results: list[AutoscalerResult] | None, seconds: float = 0.0) -> dict[str, Any]:
    if results is None:
        return {"decisions_compared": 0, "decisions_agreeing": 0, "status": CLUSTER_AUTOSCALER_NOT_RUN}
    compared = [r for r in results if not r.error]
    return {
        "version": CLUSTER_AUTOSCALER_VERSION,
        "status": (
            f"run: cluster-autoscaler {CLUSTER_AUTOSCALER_VERSION} (kwok provider), {len(results)} cases"
        ),
        "run_s": round(seconds, 1),
        "decisions_compared": len(compared),
        "decisions_agreeing": sum(r.agrees for r in compared),
        "cases_failed": len(results) - len(compared),
        "cases": [
            {
                "name": r.name,
                "origin": r.origin,
                "kind": r.kind,
                "note": r.note or None,
                "agrees": r.agrees,
                "why": r.why or None,
                "error": r.error or None,
                "cluster_autoscaler": r.real,
                "gpufleet": r.gpufleet,
                "real_s": round(r.real_s, 2),
            }
            for r in results
        ],
    }


def write(
    results: list[CaseResult],
    out: Path,
    seconds: float,
    started_s: float,
    autoscaler: dict[str, Any] | None = None,
    control_planes: int = 1,
    jobs: dict[str, Any] | None = None,
    replicasets: dict[str, Any] | None = None,
    statefulsets: dict[str, Any] | None = None,
    nodes: dict[str, Any] | None = None,
    deployments: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report of a run: ``seconds`` the kube-scheduler cases took on ``control_planes`` side by side,
    ``started_s`` the first control plane's start; ``autoscaler``, ``jobs``, ``replicasets``,
    ``statefulsets``, ``nodes`` and ``deployments`` the sections of the cluster-autoscaler's, the Job
    controller's, the ReplicaSet controller's, the StatefulSet controller's, the node lifecycle's and the
    Deployment rollouts' cases (``autoscaler_summary``, ``job_summary``, ``replicaset_summary``,
    ``statefulset_summary``, ``node_failure_summary``, ``deployment_summary``; None: not run)."""
    out.mkdir(parents=True, exist_ok=True)
    summary = {
        "schema": SCHEMA,
        "kubernetes": KUBERNETES_VERSION,
        "control_plane_start_s": round(started_s, 2),
        "run_s": round(seconds, 1),
        "control_planes": control_planes,
        "kube_scheduler": totals(results),
        "cluster_autoscaler": autoscaler or autoscaler_summary(None),
        "job_controller": jobs or job_summary(None),
        "replicaset_controller": replicasets or replicaset_summary(None),
        "statefulset_controller": statefulsets or statefulset_summary(None),
        "node_lifecycle": nodes or node_failure_summary(None),
        "deployment_rollouts": deployments or deployment_summary(None),
        "cases": [_case_json(r) for r in results],
    }
    (out / "fidelity.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / "fidelity.md").write_text(markdown(results, summary))
    return summary


def _control_planes(count: int) -> str:
    return "one control plane" if count == 1 else f"{count} control planes side by side"


def markdown(results: list[CaseResult], summary: dict[str, Any]) -> str:
    t = summary["kube_scheduler"]
    lines = [
        f"# gpufleet against the real control plane (Kubernetes {summary['kubernetes']})",
        "",
        f"Control plane started in {summary['control_plane_start_s']} s; "
        f"the cases ran in {summary['run_s']} s on {_control_planes(summary['control_planes'])}.",
        "",
        "## kube-scheduler",
        "",
        f"- modelled cases: **{t['pods_agreeing']} of {t['pods_compared']} pods agree** "
        f"({pct(t['pods_agreeing'], t['pods_compared'])}) over {t['cases_modelled']} cases",
        f"- cases with features gpufleet does not model: {t['not_modelled_pods_agreeing']} of "
        f"{t['not_modelled_pods_compared']} pods agree over {t['cases_not_modelled']} cases",
        f"- known differences (deliberate, listed below): {t['known_difference_pods_agreeing']} of "
        f"{t['known_difference_pods_compared']} pods agree over {t['cases_known_difference']} cases",
        f"- excluded (the upstream binaries cannot decide them): {t['cases_excluded']}; "
        f"failed to run: {t['cases_failed']}; run again (kube-scheduler decided on stale nodes, a new "
        f"node's not-ready taint still in its cache, or a component stalled past a wait; `rerun_why` in "
        f"fidelity.json): {t['cases_run_again']}",
        "",
        "| origin | cases | modelled | pods compared | pods agreeing |",
        "|---|---|---|---|---|",
    ]
    for origin in sorted({r.origin for r in results}):
        rs = [r for r in results if r.origin == origin]
        modelled = [r for r in rs if r.modelled]
        compared = sum(len(r.pods) for r in modelled)
        agreeing = sum(r.agreeing for r in modelled)
        lines.append(f"| {origin} | {len(rs)} | {len(modelled)} | {compared} | {agreeing} |")
    lines += ["", *_autoscaler_markdown(summary["cluster_autoscaler"])]
    disagreements = [(r, p) for r in results for p in r.pods if not (p.decision.agrees and p.end.agrees)]
    lines += ["## Disagreements", ""]
    if not disagreements:
        lines.append("None.")
    for r, p in disagreements:
        apart = " (features gpufleet does not model)" if r.not_modelled else ""
        apart = " (known difference)" if r.known_difference else apart
        lines += [
            f"### {r.name}: {p.pod}{apart}",
            "",
            f"- decision: {'agrees' if p.decision.agrees else p.decision.why}",
            f"- end: {'agrees' if p.end.agrees else p.end.why}",
            f"- kube-scheduler: `{json.dumps(p.real)}`",
            f"- gpufleet: `{json.dumps(p.gpufleet)}`",
            f"- simulated: `{json.dumps(p.simulated)}`",
            "",
        ]
    known = [r for r in results if r.known_difference]
    if known:
        lines += ["## Known differences", "", "| case | why |", "|---|---|"]
        lines += [f"| {r.name} | {r.known_difference} |" for r in known]
        lines.append("")
    not_modelled = Counter(w for r in results for w in {w.split(": ")[-1] for w in r.not_modelled})
    if not_modelled:
        lines += ["## What gpufleet said it does not model", "", "| warning | cases |", "|---|---|"]
        lines += [f"| {w} | {n} |" for w, n in sorted(not_modelled.items())]
        lines.append("")
    excluded = [r for r in results if r.excluded]
    if excluded:
        lines += ["## Excluded", "", "| case | why |", "|---|---|"]
        lines += [f"| {r.name} | {r.excluded} |" for r in excluded]
        lines.append("")
    failed = [r for r in results if r.error]
    if failed:
        lines += ["## Failed to run", "", "| case | error |", "|---|---|"]
        lines += [f"| {r.name} | {r.error.splitlines()[0]} |" for r in failed]
        lines.append("")
    lines += job_markdown(summary["job_controller"])
    lines += replicaset_markdown(summary["replicaset_controller"])
    lines += statefulset_markdown(summary["statefulset_controller"])
    lines += node_failure_markdown(summary["node_lifecycle"])
    lines += deployment_markdown(summary["deployment_rollouts"])
    return "\n".join(lines)


def _autoscaler_markdown(ca: dict[str, Any]) -> list[str]:
    lines = ["## cluster-autoscaler", "", ca["status"] + ".", ""]
    if "cases" not in ca:
        return lines
    lines += [
        f"**{ca['decisions_agreeing']} of {ca['decisions_compared']} decisions agree** "
        f"({pct(ca['decisions_agreeing'], ca['decisions_compared'])}); cases failed to run: "
        f"{ca['cases_failed']}; {ca['run_s']} s.",
        "",
        "| case | decision | cluster-autoscaler | gpufleet | agrees |",
        "|---|---|---|---|---|",
    ]
    for c in ca["cases"]:
        verdict = "error" if c["error"] else ("yes" if c["agrees"] else "**no**")
        lines.append(
            f"| {c['name']} | {c['kind']} | `{json.dumps(c['cluster_autoscaler'])}` | "
            f"`{json.dumps(c['gpufleet'])}` | {verdict} |"
        )
    lines.append("")
    return lines
