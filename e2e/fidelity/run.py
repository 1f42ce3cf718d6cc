"""Running fidelity cases: each case flattened, decided on the real control plane and by gpufleet,
and judged pod by pod (``CaseResult``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from e2e.fidelity.autoscaler_run import AutoscalerResult
from e2e.fidelity.case import Case, CaseError, Flat, flatten
from e2e.fidelity.compare import Verdict, decision_agrees, decision_summary, end_agrees, real_summary
from e2e.fidelity.gpufleet_side import SimulatedPod, decisions, simulate
from e2e.fidelity.known import KNOWN_DIFFERENCES
from e2e.fidelity.real import RealCluster, RealRunError

#: created before the nodes, in this order; the rest of a case's cluster objects after them
FIRST_KINDS = ("PriorityClass", "DeviceClass")


@dataclass
class PodResult:
    pod: str
    decision: Verdict
    end: Verdict
    real: dict[str, Any]
    gpufleet: dict[str, Any]
    simulated: dict[str, Any]


@dataclass
class CaseResult:
    name: str
    origin: str
    note: str
    excluded: str = ""
    error: str = ""
    known_difference: str = ""  # a deliberate divergence (``known.KNOWN_DIFFERENCES``)
    not_modelled: list[str] = field(default_factory=list)
    pods: list[PodResult] = field(default_factory=list)
    real_s: float = 0.0

    @property
    def modelled(self) -> bool:
        """gpufleet claims to decide it as kube-scheduler does."""
        return not self.excluded and not self.not_modelled and not self.error and not self.known_difference

    @property
    def agreeing(self) -> int:
        return sum(1 for p in self.pods if p.decision.agrees and p.end.agrees)


def _sim_summary(pod: SimulatedPod | None) -> dict[str, Any]:
    return {"gone": True} if pod is None else {"node": pod.node, "message": pod.message}


def run_case(cluster: RealCluster, case: Case) -> CaseResult:
    result = CaseResult(
        case.name, case.origin, case.note, known_difference=KNOWN_DIFFERENCES.get(case.name, "")
    )
    try:
        flat = flatten(case)
    except CaseError as exc:
        result.error = f"not a valid scenario: {exc}"
        return result
    result.excluded, result.not_modelled = flat.excluded, flat.not_modelled
    if flat.excluded:
        return result
    try:
        real = _run_real(cluster, flat)
    except RealRunError as exc:
        result.error = str(exc)
        return result
    result.real_s = real.seconds
    chosen = decisions(flat, real)
    ended, _ = simulate(flat, real)
    for step in real.steps:
        decision = chosen[step.pod]
        result.pods.append(
            PodResult(
                step.pod,
                decision_agrees(step, decision),
                end_agrees(real.final.get(step.pod), ended.get(step.pod)),
                {
                    **real_summary(step),
                    "end": vars(real.final[step.pod]) if step.pod in real.final else {"gone": True},
                },
                decision_summary(decision),
                _sim_summary(ended.get(step.pod)),
            )
        )
    return result


def _run_real(cluster: RealCluster, flat: Flat) -> Any:
    cluster.reset()
    cluster.scheduler(flat.scheduler_config)
    first = [d for d in flat.cluster_objects if d["kind"] in FIRST_KINDS]
    for doc in sorted(first, key=lambda d: FIRST_KINDS.index(d["kind"])):
        cluster.create(doc)
    cluster.nodes(flat.nodes)
    for doc in flat.cluster_objects:
        if doc["kind"] not in FIRST_KINDS:
            cluster.create(doc)
    return cluster.run(flat.pods, flat.profiles, flat.later)


def run_cases(
    cluster: RealCluster, cases: Iterable[Case], progress: Callable[[int, CaseResult], None] | None = None
) -> tuple[list[CaseResult], float]:
    started = time.monotonic()
    results = []
    for n, case in enumerate(cases, 1):
        result = run_case(cluster, case)
        results.append(result)
        if progress is not None:
            progress(n, result)
    cluster.reset()
    return results, time.monotonic() - started


@dataclass
class Fidelity:
    """One whole fidelity run: the kube-scheduler cases and, where a binary was given, the
    cluster-autoscaler cases (None when they could not run)."""

    scheduler: list[CaseResult]
    autoscaler: list[AutoscalerResult] | None
