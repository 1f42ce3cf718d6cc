"""One simulation of a scenario variant as a unit of work, and the figures compare and sweep keep.

A ``ScenarioSpec`` names a run by the scenario (files and directories, as ``gpufleet simulate``
takes them), its parameter overrides (``overrides``) and the seed, which replaces the
``Simulation``'s ``spec.seed`` as ``simulate --seed`` does. ``run_scenario`` loads the variant,
runs the simulation and reads its figures from the same ``summary.json`` content ``simulate``
writes (``report.finished_summary``): cost, pending-to-working time (p50, p95; the summary's
``latency``, pods that began computing), GPUs allocated % and GPUs working % (the summary's
``totals.gpu_allocated_pct`` and ``gpu_working_pct``: GPU-hours allocated, and with pods computing,
over those provisioned), the simulated DCGM_FI_DEV_GPU_UTIL where there is Traffic
(``totals.dcgm_gpu_util_pct``), pods still pending at the end and every pod by final state
(``totals.final_states``), per job size class the p95 wait of the jobs (``jobs.by_gpus``,
``p95_wait_s_jobs_<class>``), the makespan (when the last job ended: null while a job is unfinished
at the end, or when there are none), and where there is Traffic the worst p95 request wait and the
share of requests dropped or timed out. A spec's ``selection`` (``--select``, ``--namespace``)
restricts the pod figures as ``simulate`` does.
``check_variants`` loads every variant once in the parent before anything runs, so bad input is
reported whole, in the loader's words, and exits 2.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpufleet.experiments.overrides import check, editor
from gpufleet.experiments.stats import Metrics
from gpufleet.kube import Problems, ScenarioError, load_scenario, read_documents
from gpufleet.model.pod_selection import PodSelection
from gpufleet.model.scenario import Scenario
from gpufleet.report import finished_summary
from gpufleet.report.job_waits import SIZE_CLASSES, is_replica
from gpufleet.scheduling.profile import ProfileError
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

#: The figures compare and sweep give statistics of, with their headings.
SCENARIO_METRICS: Metrics = (
    ("cost", "cost"),
    ("pending_to_working_p50_s", "p50 pending s"),
    ("pending_to_working_p95_s", "p95 pending s"),
    ("gpu_allocated_pct", "GPUs allocated %"),
    ("gpu_working_pct", "GPUs working %"),
    ("dcgm_gpu_util_pct", "DCGM_FI_DEV_GPU_UTIL (simulated) %"),
    ("pods_pending", "pending at end"),
    ("makespan_s", "makespan s"),
    *((f"p95_wait_s_jobs_{label}", f"p95 wait {label} GPU jobs s") for label, _ in SIZE_CLASSES),
    ("request_p95_wait_s", "request p95 wait s"),
    ("requests_failed_pct", "requests dropped+timed out %"),
    ("goodput_pct", "goodput %"),
    ("mttr_s", "MTTR s"),
)
#: What groups scenario runs.
SCENARIO_GROUP = ("variant",)


@dataclass(frozen=True)
class ScenarioSpec:
    """One simulation: ``scenario`` as the user wrote it (it identifies the run), ``paths`` where to
    read it (absolute), ``overrides`` as (parameter, value as JSON) in order, ``variant`` a short
    label of the scenario and overrides."""

    scenario: str
    paths: tuple[Path, ...]
    overrides: tuple[tuple[str, str], ...]
    seed: int
    variant: str
    selection: PodSelection | None = None

    def parameters(self) -> list[tuple[str, Any]]:
        return [(parameter, json.loads(value)) for parameter, value in self.overrides]

    def params(self) -> dict[str, Any]:
        chosen = {} if self.selection is None else {"selection": self.selection.text}
        return {"scenario": self.scenario, "parameters": dict(self.parameters()), "seed": self.seed, **chosen}

    def run(self) -> dict[str, Any]:
        return run_scenario(self)

    def line(self, result: dict[str, Any]) -> dict[str, Any]:
        return {**self.params(), "variant": self.variant, **result}

    def label(self) -> str:
        return f"{self.variant} seed {self.seed}"


def load_variant(spec: ScenarioSpec) -> Scenario:
    """The scenario with the spec's overrides applied; ``ScenarioError`` or ``OverrideError``."""
    return load_scenario(list(spec.paths), edit=editor(spec.parameters()) if spec.overrides else None)


def run_scenario(spec: ScenarioSpec) -> dict[str, Any]:
    """The run's figures (``scenario_figures``) and its wall seconds."""
    start = time.perf_counter()
    sim = Simulation(load_variant(spec), seed=spec.seed)
    sim.run()
    figures = scenario_figures(finished_summary(build_summary(sim, spec.selection)))
    return {**figures, "wall_seconds": round(time.perf_counter() - start, 3)}


def scenario_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """The figures of a ``gpufleet.summary/v1`` document that compare and sweep keep."""
    totals = summary["totals"]
    latency = summary["latency"]["pending_to_working_s"]
    traffic = [t for _, t in sorted(summary["traffic"].items())]
    waits = [t["p95_wait_s"] for t in traffic if t["p95_wait_s"] is not None]
    requests = sum(t["requests"] for t in traffic)
    dropped, timed_out = sum(t["dropped"] for t in traffic), sum(t["timed_out"] for t in traffic)
    return {
        "cost": totals["cost"],
        "pending_to_working_p50_s": latency["p50"],
        "pending_to_working_p95_s": latency["p95"],
        "pods_started": latency["count"],
        "pods_pending": totals["pods_pending"],
        "pods_failed": totals["pods_failed"],
        "final_states": totals["final_states"],
        "gpu_hours_provisioned": totals["gpu_hours_provisioned"],
        "gpu_allocated_pct": totals["gpu_allocated_pct"],
        "gpu_working_pct": totals["gpu_working_pct"],
        "dcgm_gpu_util_pct": totals.get("dcgm_gpu_util_pct"),
        "makespan_s": makespan(summary["pods"]),
        **{f"p95_wait_s_jobs_{c['gpus']}": c["p95_wait_s"] for c in summary["jobs"]["by_gpus"]},
        "request_p95_wait_s": max(waits) if waits else None,
        "requests_dropped": dropped if traffic else None,
        "requests_timed_out": timed_out if traffic else None,
        "requests_failed_pct": round(100 * (dropped + timed_out) / requests, 4) if requests else None,
        **_fault_figures(summary.get("faults")),
        "end_time_s": summary["end_time_s"],
        "node_pools": sorted(summary["timeline"]["nodes_by_pool"]),
    }


def _fault_figures(faults: dict[str, Any] | None) -> dict[str, Any]:
    """Goodput (percent) and MTTR of a run with a FaultModel; None without one."""
    totals = faults["totals"] if faults is not None else {}
    goodput = totals.get("goodput")
    return {
        "faults": totals.get("faults"),
        "goodput_pct": None if goodput is None else round(100 * goodput, 4),
        "mttr_s": totals.get("mttr_s"),
    }


def makespan(pods: Sequence[dict[str, Any]]) -> float | None:
    """When the last job's last pod ended (``finished_s``, or ``deleted_s`` for one deleted first);
    None when a job pod has not ended by the end of the run (the makespan is not known) or there are
    no job pods (replicas of a Deployment, DaemonSet, ... are not jobs)."""
    ends = [p.get("finished_s") if p.get("finished_s") is not None else p.get("deleted_s") for p in pods]
    jobs = [end for pod, end in zip(pods, ends, strict=True) if not is_replica(pod)]
    if not jobs or any(end is None for end in jobs):
        return None
    return max(float(end) for end in jobs if end is not None)


def _problems(spec: ScenarioSpec) -> list[str]:
    try:
        Simulation(load_variant(spec), seed=spec.seed)
    except ScenarioError as exc:
        return exc.problems
    except ProfileError as exc:
        return [f"KubeSchedulerConfiguration: {exc}"]
    return []


def check_variants(specs: Sequence[ScenarioSpec], grid: Path | None = None) -> list[str]:
    """Every problem of loading the specs' scenarios, each once: first the scenarios as written;
    then parameters that name no document or field path (``GRID: parameters: PARAM: why``); then
    what the loader finds in the overridden documents (``GRID: with VARIANT: FILE: ...``)."""
    problems: list[str] = []
    bases = {(s.scenario, s.paths): s for s in specs}
    for scenario, paths in sorted(bases, key=str):
        problems += [
            p for p in _problems(ScenarioSpec(scenario, paths, (), 0, scenario)) if p not in problems
        ]
    if problems:
        return problems
    prefix = f"{grid}: " if grid is not None else ""
    for _, paths in sorted(bases, key=str):
        values: dict[str, list[Any]] = {}
        for s in specs:
            if s.paths == paths:
                for parameter, value in s.parameters():
                    values.setdefault(parameter, []).append(value)
        documents, _ = read_documents(list(paths), Problems())
        problems += [f"{prefix}parameters: {p}" for p in check(list(values.items()), documents)]
    if problems:
        return problems
    seen: set[str] = set()
    for spec in dict.fromkeys(ScenarioSpec(s.scenario, s.paths, s.overrides, 0, s.variant) for s in specs):
        for problem in _problems(spec) if spec.overrides else []:
            if problem not in seen:
                seen.add(problem)
                problems.append(f"{prefix}with {spec.variant}: {problem}")
    return problems
