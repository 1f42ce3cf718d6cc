"""``python -m e2e.fidelity --out DIR`` (``make fidelity``): every fidelity case on fresh control planes
(the kube-scheduler's on ``--control-planes`` side by side, then the cluster-autoscaler's, the Job
controller's, the ReplicaSet controller's, the StatefulSet controller's, the node lifecycle's and the
Deployment rollouts' on the first), and the report (``DIR/fidelity.md``, ``DIR/fidelity.json``)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from e2e.components import BuildError, build, cluster_autoscaler
from e2e.controlplane import ControlPlane, ControlPlaneError
from e2e.fidelity import report
from e2e.fidelity.autoscaler_cases import autoscaler_cases
from e2e.fidelity.autoscaler_run import AutoscalerResult, run_autoscaler_cases
from e2e.fidelity.deployment_cases import DEPLOYMENT_CASES
from e2e.fidelity.deployment_report import deployment_summary
from e2e.fidelity.deployment_run import run_deployment_cases
from e2e.fidelity.job_cases import JOB_CASES
from e2e.fidelity.job_report import job_summary
from e2e.fidelity.job_run import run_job_cases
from e2e.fidelity.node_failure_cases import NODE_FAILURE_CASES
from e2e.fidelity.node_failure_report import node_failure_summary
from e2e.fidelity.node_failure_run import run_node_failure_cases
from e2e.fidelity.replicaset_cases import REPLICASET_CASES
from e2e.fidelity.replicaset_report import replicaset_summary
from e2e.fidelity.replicaset_run import run_replicaset_cases
from e2e.fidelity.run import CONTROL_PLANES, CaseResult, run_cases, side_by_side
from e2e.fidelity.sources import DEFAULT_GENERATED, all_cases
from e2e.fidelity.statefulset_cases import STATEFULSET_CASES
from e2e.fidelity.statefulset_report import statefulset_summary
from e2e.fidelity.statefulset_run import run_statefulset_cases
from e2e.fidelity.watches import RunError

T = TypeVar("T")


def _controller_section(
    cp: ControlPlane,
    tag: str,
    run: Callable[[], list[T]],
    summarize: Callable[[list[T], float], dict[str, Any]],
) -> dict[str, Any]:
    """A controller's cases run (``run``) and summed up for the report (``summarize``, given how long they
    took), each case's verdict said on stderr; a control plane that fails them (the cases' nodes not Ready)
    ends the run with status 2."""
    began = time.monotonic()
    try:
        results = run()
    except (RunError, ControlPlaneError) as exc:
        print(f"control plane: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    section = summarize(results, time.monotonic() - began)
    for c in section["cases"]:
        state = (c["error"] and "error") or ("agrees" if c["agrees"] else c.get("why") or "differs")
        print(f"[{tag}] {c['name']}: {state}", file=sys.stderr, flush=True)
    return section


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m e2e.fidelity", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/fidelity"))
    parser.add_argument("--generated", type=int, default=DEFAULT_GENERATED, help="how many generated cases")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument(
        "--control-planes",
        type=int,
        default=CONTROL_PLANES,
        help=f"how many control planes run the kube-scheduler cases side by side (default {CONTROL_PLANES})",
    )
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--autoscaler-only", action="store_true", help="only the cluster-autoscaler cases")
    only.add_argument("--jobs-only", action="store_true", help="only the Job controller cases")
    only.add_argument("--replicasets-only", action="store_true", help="only the ReplicaSet controller cases")
    only.add_argument(
        "--statefulsets-only", action="store_true", help="only the StatefulSet controller cases"
    )
    only.add_argument(
        "--nodes-only", action="store_true", help="only the node lifecycle cases (a node fails)"
    )
    only.add_argument("--deployments-only", action="store_true", help="only the Deployment rollout cases")
    args = parser.parse_args(argv)
    if args.control_planes < 1:
        parser.error("--control-planes: at least 1")
    alone = {
        "autoscaler": args.autoscaler_only,
        "jobs": args.jobs_only,
        "replicasets": args.replicasets_only,
        "statefulsets": args.statefulsets_only,
        "nodes": args.nodes_only,
        "deployments": args.deployments_only,
    }
    only_one = any(alone.values())

    def runs(part: str) -> bool:
        """Whether this run has ``part``'s cases: every part's, or only the one asked for alone."""
        return not only_one or alone[part]

    cases = [] if only_one else all_cases(args.generated, args.first_seed)
    try:
        cp = ControlPlane(build()).start()
    except (BuildError, ControlPlaneError) as exc:
        print(f"control plane: {exc}", file=sys.stderr)
        return 2
    try:

        def progress(n: int, result: CaseResult) -> None:
            state = (
                (result.excluded and "excluded")
                or (result.error and "error")
                or f"{result.agreeing}/{len(result.pods)}"
            )
            print(f"[{n}/{len(cases)}] {result.name}: {state}", file=sys.stderr, flush=True)

        try:
            with side_by_side(cp, 1 if only_one else args.control_planes) as clusters:
                results, seconds = run_cases(clusters, cases, progress)
        except ControlPlaneError as exc:  # another control plane did not start, or a component stopped
            print(f"control plane: {exc}", file=sys.stderr)
            return 2
        binary = cluster_autoscaler() if runs("autoscaler") else None
        autoscaler, jobs, replicasets, statefulsets, nodes, deployments = None, None, None, None, None, None
        if binary is not None:

            def said(n: int, result: AutoscalerResult) -> None:
                state = (result.error and "error") or ("agrees" if result.agrees else result.why)
                print(f"[autoscaler {n}] {result.name}: {state}", file=sys.stderr, flush=True)

            ca_results, ca_seconds = run_autoscaler_cases(cp, binary, autoscaler_cases(), said)
            autoscaler = report.autoscaler_summary(ca_results, ca_seconds)
        if runs("jobs"):
            jobs = _controller_section(cp, "job", partial(run_job_cases, cp, JOB_CASES), job_summary)
        if runs("replicasets"):
            run_sets = partial(run_replicaset_cases, cp, REPLICASET_CASES)
            replicasets = _controller_section(cp, "replicaset", run_sets, replicaset_summary)
        if runs("statefulsets"):
            run_stateful = partial(run_statefulset_cases, cp, STATEFULSET_CASES)
            statefulsets = _controller_section(cp, "statefulset", run_stateful, statefulset_summary)
        if runs("nodes"):
            run_nodes = partial(run_node_failure_cases, cp, NODE_FAILURE_CASES)
            nodes = _controller_section(cp, "node", run_nodes, node_failure_summary)
        if runs("deployments"):
            run_rollouts = partial(run_deployment_cases, cp, DEPLOYMENT_CASES)
            deployments = _controller_section(cp, "deployment", run_rollouts, deployment_summary)
        summary = report.write(
            results,
            args.out,
            seconds,
            cp.started_s,
            autoscaler,
            len(clusters),
            jobs,
            replicasets,
            statefulsets,
            nodes,
            deployments,
        )
    finally:
        cp.remove()
    t = summary["kube_scheduler"]
    print(
        f"kube-scheduler: {t['pods_agreeing']}/{t['pods_compared']} pods agree over "
        f"{t['cases_modelled']} modelled cases ({t['not_modelled_pods_agreeing']}/"
        f"{t['not_modelled_pods_compared']} where gpufleet does not model a feature); "
        f"{t['cases_excluded']} excluded, {t['cases_failed']} failed; report: {args.out / 'fidelity.md'}"
    )
    ca = summary["cluster_autoscaler"]
    print(
        f"cluster-autoscaler: {ca['decisions_agreeing']}/{ca['decisions_compared']} decisions agree "
        f"({ca['status']})"
    )
    j = summary["job_controller"]
    print(f"Job controller: {j['cases_agreeing']}/{j['cases_compared']} cases agree ({j['status']})")
    r = summary["replicaset_controller"]
    print(f"ReplicaSet controller: {r['cases_agreeing']}/{r['cases_compared']} cases agree ({r['status']})")
    s = summary["statefulset_controller"]
    print(f"StatefulSet controller: {s['cases_agreeing']}/{s['cases_compared']} cases agree ({s['status']})")
    n = summary["node_lifecycle"]
    print(f"Node lifecycle: {n['cases_agreeing']}/{n['cases_compared']} cases agree ({n['status']})")
    d = summary["deployment_rollouts"]
    print(f"Deployment rollouts: {d['cases_agreeing']}/{d['cases_compared']} cases agree ({d['status']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
