"""The Job controller's fidelity cases (``e2e.fidelity.job_cases``) run on both sides.

- The real side: every case at once on the test control plane, each Job in its namespace on its own kwok
  node, until the Job has a terminal condition (``Complete`` or ``Failed``). What the cases read of the
  cluster comes from watches (``Watches``: the Jobs, their pods, the nodes), so that a pod created and
  deleted between two looks is still counted, and so that a dozen cases waiting side by side do not poll
  the API server. Its times are when the watches first told of each pod (``Watches.first_seen``) and of
  the Job's end as the controller decided it (``Watches.decided_at``), against the Job's own first sight
  (``e2e.fidelity.job_times``). A ``Patch`` is made once the Job is where it means it and ``at_s`` after
  the Job's creation, whichever is later.
- gpufleet's side: the case's node and Job simulated to the end (``Simulation.run``, until nothing is left
  to do), after the real side's run. gpufleet's scenarios cannot patch a Job later, so a ``Patch`` is
  played on the simulator's clock when the real side made it (``at_s`` where there is no real side) as the
  API server's update reaches the Job controller: its Job's ``spec.suspend`` set, the Job's start time
  cleared or set again (``workload_suspended``, ``workload_resumed``, as Kueue's eviction and admission do)
  and the controller reconciled (``manageJob``: a suspended Job deletes its active pods). (A user's patch
  does not clear ``status.startTime`` as Kueue's eviction does: the two differ only for a Job resumed after
  its deadline counted from its first start, which ``syncJob`` fails at once; the cases resume before.)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from e2e.controlplane import ControlPlane
from e2e.fidelity.case import load_documents
from e2e.fidelity.job_cases import JOB_NAME, JobCase, Outcome, Patch
from e2e.fidelity.job_times import Times, times_disagree
from e2e.fidelity.stepped_run import steps_at
from e2e.fidelity.watches import CASE_TIMEOUT_S, RunError, Watches, side_by_side
from gpufleet.control.clock import Priority
from gpufleet.model.failed_indexes import format_indexes
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.job import JobController

TERMINAL = ("Complete", "Failed")
#: the conditions of a Job whose end the controller decided: the interim ones first
#: (``delayTerminalCondition``), the terminal ones once no pod of it is terminating
DECIDED = ("FailureTarget", "SuccessCriteriaMet", *TERMINAL)
COLLECTIONS = {
    "jobs": "/apis/batch/v1/jobs",
    "pods": "/api/v1/pods?labelSelector=batch.kubernetes.io%2Fjob-name",
    "nodes": "/api/v1/nodes",
}


@dataclass
class JobResult:
    name: str
    gpufleet: Outcome
    gpufleet_times: Times
    warnings: list[str]  # gpufleet's warnings on the case's scenario
    real: Outcome | None = None
    real_times: Times | None = None
    #: the Job's pods on the real side as last seen (deleted ones as they were before)
    real_pods: list[dict[str, Any]] = field(default_factory=list)
    patched_s: tuple[float, ...] = ()  # when the real side made each patch, s after the Job's creation
    error: str = ""
    real_s: float = 0.0  # how long the case took on the real side

    @property
    def outcome_agrees(self) -> bool:
        return not self.error and self.real == self.gpufleet

    def times_why(self, timed: bool) -> str:
        """What differs in time between the sides (``job_times.times_disagree``); empty when nothing does,
        when the case's times are not compared (``timed`` false) or the real side did not run."""
        if not timed or self.real_times is None:
            return ""
        return times_disagree(self.real_times, self.gpufleet_times)


def _decided(collection: str, obj: dict[str, Any]) -> bool:
    """A Job whose end the controller decided."""
    return collection == "jobs" and bool(_condition(obj, DECIDED))


def _job(watches: Watches, namespace: str) -> dict[str, Any] | None:
    return watches.get("jobs", namespace, JOB_NAME)


def _condition(job: dict[str, Any] | None, types: tuple[str, ...]) -> str:
    """The first of the Job's conditions of ``types`` that holds, as ``<type>/<reason>``; empty if none."""
    conditions = ((job or {}).get("status") or {}).get("conditions") or []
    return next(
        (
            f"{c['type']}/{c.get('reason', '')}"
            for c in conditions
            if c["type"] in types and c["status"] == "True"
        ),
        "",
    )


def _ready_for(watches: Watches, namespace: str, patch: Patch) -> bool:
    """Whether the real Job is where ``patch`` means it: suspending, once one of its pods runs; resuming,
    once it is suspended (its ``Suspended`` condition) and none of its pods is left."""
    if patch.suspend:
        return any((p.get("status") or {}).get("phase") == "Running" for p in watches.live_pods(namespace))
    return bool(_condition(_job(watches, namespace), ("Suspended",))) and not watches.live_pods(namespace)


def _finished(watches: Watches, namespace: str) -> dict[str, Any] | None:
    """The real Job once it has a terminal condition; None before."""
    job = _job(watches, namespace)
    return job if _condition(job, TERMINAL) else None


@dataclass(frozen=True)
class RealRun:
    """A case on the real side: its outcome and times, its pods as last seen, and when each patch was
    made (in seconds after the Job's creation)."""

    outcome: Outcome
    times: Times
    pods: list[dict[str, Any]]
    patched_s: tuple[float, ...]


def run_real(cp: ControlPlane, watches: Watches, *, case: JobCase) -> RealRun:
    """The case's Job created on the control plane (its namespace and node are there already), patched as
    the case says, until it has a terminal condition."""
    from lightkube import ApiError, codecs
    from lightkube.resources.batch_v1 import Job
    from lightkube.types import PatchType

    deadline = time.monotonic() + CASE_TIMEOUT_S
    ns = case.namespace
    # through the API, not kubectl: 25 kubectl processes starting at once hold two cores for a second
    client = cp.client()
    patched = []
    try:
        client.create(codecs.from_dict(case.job()))
        created = watches.wait(f"{ns}: the Job", partial(_job_seen, watches, ns), deadline)
        for patch in case.patches:
            watches.wait(f"{ns}: ready for {patch}", partial(_ready_for, watches, ns, patch), deadline)
            time.sleep(max(0.0, created + patch.at_s - time.monotonic()))
            patched.append(time.monotonic() - created)
            body = {"spec": {"suspend": patch.suspend}}
            client.patch(Job, JOB_NAME, body, namespace=ns, patch_type=PatchType.MERGE)
    except ApiError as exc:
        raise RunError(f"{ns}: {exc}") from None
    job = watches.wait(f"{ns}: a terminal condition", partial(_finished, watches, ns), deadline)
    listed = cp.get(f"/api/v1/namespaces/{ns}/pods") or {"items": []}  # a pod the watch has yet to tell of
    with watches.changed:
        uids = watches.uids["pods"][ns] | {p["metadata"]["uid"] for p in listed["items"]}
        seen = [watches.first_seen.setdefault(uid, time.monotonic()) - created for uid in uids]
        times = Times(tuple(sorted(seen)), watches.decided_at[ns] - created)
        pods = sorted(watches.pods(ns), key=lambda p: str(p["metadata"]["creationTimestamp"]))
    status = job.get("status") or {}
    outcome = Outcome(
        _condition(job, TERMINAL),
        status.get("succeeded", 0),
        status.get("failed", 0),
        len(uids),
        status.get("completedIndexes", ""),
        status.get("failedIndexes", ""),
    )
    return RealRun(outcome, times, pods, tuple(patched))


def _job_seen(watches: Watches, namespace: str) -> float | None:
    """When the watches first told of the namespace's Job; None before."""
    job = _job(watches, namespace)
    return None if job is None else watches.first_seen[job["metadata"]["uid"]]


def _set_suspend(sim: Simulation, key: str, suspend: bool) -> None:
    """A ``Patch`` reaching gpufleet's Job controller (see the module's docstring)."""
    controller = sim.controllers[key]
    assert isinstance(controller, JobController)
    controller.job = replace(controller.job, suspend=suspend)
    if suspend:
        sim.workload_suspended(key)
    else:
        sim.workload_resumed(key)
    sim.reconcile(controller)


def run_gpufleet(case: JobCase, patched_s: Sequence[float] | None = None) -> tuple[Outcome, Times, list[str]]:
    """The case simulated by gpufleet to the end, its patches made at ``patched_s`` (the real side's
    times; None: the case's ``at_s``): its outcome, its times, and gpufleet's warnings on the scenario."""
    sim = Simulation(load_documents([case.node(), case.job()]))
    at = steps_at(case.patches, patched_s)
    for patch, at_s in zip(case.patches, at, strict=True):
        sim.loop.at(at_s, Priority.ARRIVAL, partial(_set_suspend, sim, case.key, patch.suspend))
    sim.run()
    summary = build_summary(sim)
    status = summary["workload_status"][case.key]
    controller = sim.controllers[case.key]
    assert isinstance(controller, JobController)
    ended = next((c for c in status["conditions"] if c["type"] in TERMINAL), None)
    decided = next((c["time_s"] for c in status["conditions"] if c["type"] in DECIDED), None)
    pods = [p for p in summary["pods"] if p["workload"] == case.key]
    outcome = Outcome(
        "" if ended is None else f"{ended['type']}/{ended['reason']}",
        status["succeeded"],
        status["failed"],
        len(pods),
        format_indexes(controller.succeeded_indexes) if controller.job.indexed else "",
        status.get("failedIndexes", ""),
    )
    times = Times(tuple(sorted(p["created_s"] for p in pods)), decided)
    return outcome, times, list(summary["warnings"])


def run_job_cases(cp: ControlPlane, cases: tuple[JobCase, ...]) -> list[JobResult]:
    """Every case on the real side at once (``watches.side_by_side``), then simulated by gpufleet."""
    runs = [partial(run_real, cp, case=c) for c in cases]
    namespaces = [c.namespace for c in cases]
    real = side_by_side(cp, COLLECTIONS, namespaces, [c.node() for c in cases], runs, _decided)
    results = []
    for case, side in zip(cases, real, strict=True):
        if side.value is None:
            results.append(JobResult(case.name, *run_gpufleet(case), error=side.error))
            continue
        run = side.value
        ours = run_gpufleet(case, run.patched_s)
        results.append(
            JobResult(case.name, *ours, run.outcome, run.times, run.pods, run.patched_s, "", side.seconds)
        )
    return results
