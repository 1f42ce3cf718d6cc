"""Running fidelity cases: each case flattened, decided on the real control plane and by gpufleet,
and judged pod by pod (``CaseResult``).

The control plane decides one case at a time; gpufleet's side (flattening a case before, deciding
and simulating it after) needs nothing from it but what the real side recorded, so it runs in a
worker process meanwhile, and the results come back in the cases' order."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

from e2e.fidelity.autoscaler_run import AutoscalerResult
from e2e.fidelity.case import Case, CaseError, Flat, flatten
from e2e.fidelity.compare import Verdict, decision_agrees, decision_summary, end_agrees, real_summary
from e2e.fidelity.gpufleet_side import SimulatedPod, decisions, simulate
from e2e.fidelity.known import KNOWN_DIFFERENCES
from e2e.fidelity.real import RealCluster, RealRun, RealRunError

#: created before the nodes, in this order; the rest of a case's cluster objects after them
FIRST_KINDS = ("PriorityClass", "DeviceClass")
#: how many cases gpufleet's side flattens ahead of the real side
LOOKAHEAD = 2


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


def prepare(case: Case) -> tuple[CaseResult, Flat | None]:
    """The case flattened, and its result so far: an invalid scenario's error, an excluded case's
    reason, the features gpufleet does not model (None: nothing to run on the control plane)."""
    result = CaseResult(
        case.name, case.origin, case.note, known_difference=KNOWN_DIFFERENCES.get(case.name, "")
    )
    try:
        flat = flatten(case)
    except CaseError as exc:
        result.error = f"not a valid scenario: {exc}"
        return result, None
    result.excluded, result.not_modelled = flat.excluded, flat.not_modelled
    return result, None if flat.excluded else flat


def judge(result: CaseResult, flat: Flat, real: RealRun) -> CaseResult:
    """gpufleet's side of the case on what the real side recorded, pod by pod."""
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


def _run_real(cluster: RealCluster, flat: Flat) -> RealRun:
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
    """Every case, its real side in order on ``cluster``; gpufleet's side (``prepare`` before,
    ``judge`` after) runs meanwhile in one worker process, ``LOOKAHEAD`` cases ahead, since it needs
    nothing from the control plane but what the real side recorded."""
    started = time.monotonic()
    cases = list(cases)
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as worker:
        prepared = deque(worker.submit(prepare, case) for case in cases[:LOOKAHEAD])
        judged: deque[Future[CaseResult]] = deque()
        results: list[CaseResult] = []

        def report(wait: bool) -> None:
            while judged and (wait or judged[0].done()):
                results.append(judged.popleft().result())
                if progress is not None:
                    progress(len(results), results[-1])

        for n in range(len(cases)):
            if n + LOOKAHEAD < len(cases):
                prepared.append(worker.submit(prepare, cases[n + LOOKAHEAD]))
            result, flat = prepared.popleft().result()
            if flat is None:
                judged.append(_done(result))
            else:
                try:
                    judged.append(worker.submit(judge, result, flat, _run_real(cluster, flat)))
                except RealRunError as exc:
                    result.error = str(exc)
                    judged.append(_done(result))
            report(wait=False)
        report(wait=True)
    cluster.reset()
    return results, time.monotonic() - started


def _done(result: CaseResult) -> Future[CaseResult]:
    future: Future[CaseResult] = Future()
    future.set_result(result)
    return future


@dataclass
class Fidelity:
    """One whole fidelity run: the kube-scheduler cases and, where a binary was given, the
    cluster-autoscaler cases (None when they could not run)."""

    scheduler: list[CaseResult]
    autoscaler: list[AutoscalerResult] | None
