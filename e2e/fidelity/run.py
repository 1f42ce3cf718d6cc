"""Running fidelity cases: each case flattened, decided on the real control plane and by gpufleet,
and judged pod by pod (``CaseResult``).

A control plane decides one case at a time; gpufleet's side (flattening a case before, deciding
and simulating it after) needs nothing from it but what the real side recorded, so it runs in a
worker process meanwhile, and the results come back in the cases' order. Given several control
planes, the cases are dealt out to them in turn and run side by side, each control plane with its own
worker: a case's real side waits mostly on the components (kwok marking nodes Ready, the node
lifecycle controller's taints, kube-scheduler's decisions), not on the cores."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

from e2e.controlplane import ControlPlane
from e2e.fidelity.autoscaler_run import AutoscalerResult
from e2e.fidelity.case import Case, CaseError, Flat, flatten
from e2e.fidelity.compare import Verdict, decision_agrees, decision_summary, end_agrees, real_summary
from e2e.fidelity.gpufleet_side import SimulatedPod, decisions, simulate
from e2e.fidelity.known import KNOWN_DIFFERENCES
from e2e.fidelity.real import RealCluster, RealRun, RealRunError, RealRunTimeout, decided_on_stale_nodes

#: created before the nodes, in this order; the rest of a case's cluster objects after them
FIRST_KINDS = ("PriorityClass", "DeviceClass")
#: how many cases gpufleet's side flattens ahead of the real side
LOOKAHEAD = 2
#: how many control planes ``make test`` and ``make fidelity`` deal the cases to, side by side
#: (``make fidelity --control-planes N``): on two cores two took a sample of the cases in 0.53-0.69x the
#: time of one, three in 0.46-0.48x
CONTROL_PLANES = 2
#: how many times a case is run again when kube-scheduler decided it on stale nodes
#: (``real.decided_on_stale_nodes``: a new node's ``not-ready`` taint still in its cache, its informers
#: lagging under load) or a wait timed out (``real.RealRunTimeout``: a component stalled); its result
#: says how many times it was, and why
STALE_RERUNS = 3


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
    control_plane: int = 0  # which of ``run_cases``' clusters ran its real side (from 1; 0: none did)
    reruns: int = 0  # times its real side ran again (``STALE_RERUNS``)
    rerun_why: list[str] = field(default_factory=list)  # why, each time

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


def _run_real_fresh(cluster: RealCluster, flat: Flat, result: CaseResult) -> RealRun:
    """The case's real side, run again (at most ``STALE_RERUNS`` times, counted and explained in
    ``result``) while kube-scheduler decided it on stale nodes or a wait timed out; the last
    timeout is raised when no run was left."""
    while True:
        try:
            real = _run_real(cluster, flat)
        except RealRunTimeout as exc:
            why = str(exc)
        else:
            if not decided_on_stale_nodes(flat.nodes, real):
                return real
            why = "kube-scheduler decided on stale nodes"
            if result.reruns >= STALE_RERUNS:
                return real
        if result.reruns >= STALE_RERUNS:
            raise RealRunTimeout(why)
        result.reruns += 1
        result.rerun_why.append(why)


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


@contextmanager
def side_by_side(first: ControlPlane, count: int = CONTROL_PLANES) -> Iterator[list[RealCluster]]:
    """``first`` and ``count - 1`` more control planes started from its binaries (removed after), each as a
    ``RealCluster``."""
    more: list[ControlPlane] = []
    try:
        for _ in range(count - 1):
            more.append(ControlPlane(first.bins))
            more[-1].start()
        yield [RealCluster(cp) for cp in (first, *more)]
    finally:
        for cp in more:
            cp.remove()


def run_cases(
    clusters: Sequence[RealCluster],
    cases: Iterable[Case],
    progress: Callable[[int, CaseResult], None] | None = None,
) -> tuple[list[CaseResult], float]:
    """Every case, in the cases' order: case ``k`` on ``clusters[k % len(clusters)]``, the clusters side
    by side (``progress`` hears of each case as it is judged, numbered in the order they end)."""
    started = time.monotonic()
    cases = list(cases)
    results: list[CaseResult | None] = [None] * len(cases)
    lock = threading.Lock()

    def judged(k: int, result: CaseResult) -> None:
        with lock:
            results[k] = result
            if progress is not None:
                progress(sum(1 for r in results if r is not None), result)

    share = len(clusters)
    # the first cluster's cases run in this thread: a component that a case restarts (kube-scheduler, for
    # its configuration) dies with the thread that started it (``PR_SET_PDEATHSIG``), and the first
    # control plane outlives the run
    with ThreadPoolExecutor(max_workers=max(1, share - 1)) as shards:
        others = [
            shards.submit(_run_shard, cluster, n + 1, list(range(n, len(cases), share)), cases, judged)
            for n, cluster in enumerate(clusters)
            if n
        ]
        _run_shard(clusters[0], 1, list(range(0, len(cases), share)), cases, judged)
        for shard in others:
            shard.result()
    return [r for r in results if r is not None], time.monotonic() - started


def _run_shard(
    cluster: RealCluster,
    number: int,
    which: list[int],
    cases: list[Case],
    judged: Callable[[int, CaseResult], None],
) -> None:
    """Cases ``which`` (positions in ``cases``), their real side in order on ``cluster`` (``run_cases``'
    cluster ``number``, from 1); gpufleet's side (``prepare`` before, ``judge`` after) runs meanwhile in
    one worker process, ``LOOKAHEAD`` cases ahead, since it needs nothing from the control plane but
    what the real side recorded."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as worker:
        prepared = deque(worker.submit(prepare, cases[k]) for k in which[:LOOKAHEAD])
        pending: deque[tuple[int, Future[CaseResult]]] = deque()

        def report(wait: bool) -> None:
            while pending and (wait or pending[0][1].done()):
                k, future = pending.popleft()
                judged(k, future.result())

        for n, k in enumerate(which):
            if n + LOOKAHEAD < len(which):
                prepared.append(worker.submit(prepare, cases[which[n + LOOKAHEAD]]))
            result, flat = prepared.popleft().result()
            if flat is None:
                pending.append((k, _done(result)))
            else:
                result.control_plane = number
                try:
                    real = _run_real_fresh(cluster, flat, result)
                    pending.append((k, worker.submit(judge, result, flat, real)))
                except RealRunError as exc:
                    result.error = str(exc)
                    pending.append((k, _done(result)))
            report(wait=False)
        report(wait=True)
    cluster.reset()


def _done(result: CaseResult) -> Future[CaseResult]:
    future: Future[CaseResult] = Future()
    future.set_result(result)
    return future


@dataclass
class Fidelity:
    """One whole fidelity run: the kube-scheduler cases and, where a binary was given, the
    cluster-autoscaler cases (None when they could not run); the control planes the kube-scheduler cases
    were dealt to besides the first (``side_planes``, removed after them) and the first's kube-scheduler
    configuration once they were done (``first_scheduler_config``)."""

    scheduler: list[CaseResult]
    autoscaler: list[AutoscalerResult] | None
    side_planes: tuple[ControlPlane, ...] = ()
    first_scheduler_config: dict[str, Any] | None = None
