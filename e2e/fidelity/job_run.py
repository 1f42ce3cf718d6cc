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

import json
import threading
import time
import urllib.error
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

from e2e.controlplane import ControlPlane, ControlPlaneError
from e2e.fidelity.case import load_documents
from e2e.fidelity.job_cases import JOB_NAME, JobCase, Outcome, Patch
from e2e.fidelity.job_times import Times, times_disagree
from gpufleet.control.clock import Priority
from gpufleet.model.failed_indexes import format_indexes
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.job import JobController

#: how long one watch lasts before it is opened again from the last resourceVersion (the most a
#: ``Watches`` takes to stop)
WATCH_S = 2
#: how long a case may take on the real side: generous, as only a case that fails waits it out
CASE_TIMEOUT_S = 120.0
#: how long the pods of the cases may take to be gone once deleted
CLEANUP_TIMEOUT_S = 50.0
TERMINAL = ("Complete", "Failed")
#: the conditions of a Job whose end the controller decided: the interim ones first
#: (``delayTerminalCondition``), the terminal ones once no pod of it is terminating
DECIDED = ("FailureTarget", "SuccessCriteriaMet", *TERMINAL)
COLLECTIONS = {
    "jobs": "/apis/batch/v1/jobs",
    "pods": "/api/v1/pods?labelSelector=batch.kubernetes.io%2Fjob-name",
    "nodes": "/api/v1/nodes",
}
T = TypeVar("T")


class JobRunError(RuntimeError):
    """The control plane did not get where a case waits for in time, or refused what it was given."""


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


class Watches:
    """The Jobs, the pods of Jobs and the nodes as the API server last told of them, kept by one watch each
    (opened again every ``WATCH_S`` from its last resourceVersion; listed again after an ``ERROR`` event,
    a resourceVersion too old): the latest of each object by namespace and name, a deleted one kept as it
    last was, and the uids ever seen by namespace; when each uid was first seen and when each namespace's
    Job was first seen with its end decided (``DECIDED``), by ``time.monotonic``. ``wait`` waits for a state
    of them."""

    def __init__(self, cp: ControlPlane) -> None:
        self.cp = cp
        self.changed = threading.Condition()
        self.objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {c: {} for c in COLLECTIONS}
        self.uids: dict[str, dict[str, set[str]]] = {c: defaultdict(set) for c in COLLECTIONS}
        self.deleted: set[str] = set()  # uids
        self.first_seen: dict[str, float] = {}  # uid -> time.monotonic()
        self.decided_at: dict[str, float] = {}  # namespace -> time.monotonic()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(c, self._list(c)), daemon=True, name=f"watch {c}")
            for c in COLLECTIONS
        ]
        for thread in self._threads:
            thread.start()

    def _list(self, collection: str) -> str:
        listing = self.cp.get(COLLECTIONS[collection])
        if listing is None:
            raise JobRunError(f"the API server did not list {COLLECTIONS[collection]}")
        with self.changed:
            for obj in listing["items"]:
                self._note(collection, "ADDED", obj)
            self.changed.notify_all()
        return str(listing["metadata"]["resourceVersion"])

    def _note(self, collection: str, kind: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        self.objects[collection][(namespace, meta["name"])] = obj
        self.uids[collection][namespace].add(meta["uid"])
        now = time.monotonic()
        self.first_seen.setdefault(meta["uid"], now)
        if collection == "jobs" and _condition(obj, DECIDED):
            self.decided_at.setdefault(namespace, now)
        if kind == "DELETED":
            self.deleted.add(meta["uid"])

    def _run(self, collection: str, version: str) -> None:
        while not self._stop.is_set():
            try:
                for event in self.cp.watch(COLLECTIONS[collection], version, WATCH_S):
                    if event["type"] == "ERROR":
                        version = self._list(collection)
                        break
                    obj = event["object"]
                    version = obj["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK":
                        with self.changed:
                            self._note(collection, event["type"], obj)
                            self.changed.notify_all()
            except (urllib.error.URLError, OSError, ValueError, JobRunError):
                self._stop.wait(0.5)

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=WATCH_S + 15)

    def wait(self, what: str, check: Callable[[], T | None], deadline: float) -> T:
        """``check()``'s first truthy value (called under the watches' lock, after every event), by
        ``deadline`` (``time.monotonic``)."""
        with self.changed:
            while not (value := check()):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise JobRunError(f"{what}: not by the case's deadline ({CASE_TIMEOUT_S:g} s)")
                self.changed.wait(left)
            return value

    def job(self, namespace: str) -> dict[str, Any] | None:
        return self.objects["jobs"].get((namespace, JOB_NAME))

    def pods(self, namespace: str) -> list[dict[str, Any]]:
        return [p for (ns, _), p in self.objects["pods"].items() if ns == namespace]

    def live_pods(self, namespace: str) -> list[dict[str, Any]]:
        return [p for p in self.pods(namespace) if p["metadata"]["uid"] not in self.deleted]


@contextmanager
def watching(cp: ControlPlane) -> Iterator[Watches]:
    watches = Watches(cp)
    try:
        yield watches
    finally:
        watches.close()


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
    return bool(_condition(watches.job(namespace), ("Suspended",))) and not watches.live_pods(namespace)


def _finished(watches: Watches, namespace: str) -> dict[str, Any] | None:
    """The real Job once it has a terminal condition; None before."""
    job = watches.job(namespace)
    return job if _condition(job, TERMINAL) else None


@dataclass(frozen=True)
class RealRun:
    """A case on the real side: its outcome and times, its pods as last seen, and when each patch was
    made (in seconds after the Job's creation)."""

    outcome: Outcome
    times: Times
    pods: list[dict[str, Any]]
    patched_s: tuple[float, ...]


def run_real(cp: ControlPlane, watches: Watches, case: JobCase) -> RealRun:
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
        raise JobRunError(f"{ns}: {exc}") from None
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
    job = watches.job(namespace)
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
    at = [p.at_s for p in case.patches] if patched_s is None else patched_s
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


def _node_ready(watches: Watches, name: str) -> bool:
    node = watches.objects["nodes"].get(("", name)) or {}
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def run_job_cases(cp: ControlPlane, cases: tuple[JobCase, ...]) -> list[JobResult]:
    """Every case on the real side at once (after their namespaces and nodes are there and Ready), then
    simulated by gpufleet; the namespaces and nodes are deleted afterwards."""
    results = []
    with watching(cp) as watches:
        try:
            namespaces = [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": c.namespace}} for c in cases
            ]
            listed = {"apiVersion": "v1", "kind": "List", "items": [*namespaces, *(c.node() for c in cases)]}
            cp.kubectl("create", "-f", "-", stdin=json.dumps(listed))
            watches.wait(
                "the cases' nodes Ready",
                lambda: all(_node_ready(watches, c.namespace) for c in cases),
                time.monotonic() + CASE_TIMEOUT_S,
            )
            with ThreadPoolExecutor(max_workers=len(cases), thread_name_prefix="job-case") as pool:
                futures = [pool.submit(_timed, run_real, cp, watches, c) for c in cases]
                for case, future in zip(cases, futures, strict=True):
                    try:
                        real, real_s = future.result()
                    except (JobRunError, ControlPlaneError) as exc:
                        results.append(JobResult(case.name, *run_gpufleet(case), error=str(exc)))
                        continue
                    ours = run_gpufleet(case, real.patched_s)
                    results.append(
                        JobResult(
                            case.name, *ours, real.outcome, real.times, real.pods, real.patched_s, "", real_s
                        )
                    )
        finally:
            _clean(cp, watches, cases)
    return results


def _timed(run: Callable[..., T], *args: Any) -> tuple[T, float]:
    """``run(*args)`` and how long it took."""
    began = time.monotonic()
    return run(*args), time.monotonic() - began


def _clean(cp: ControlPlane, watches: Watches, cases: tuple[JobCase, ...]) -> None:
    """Delete the cases' namespaces and pods, wait for the pods to be gone, then delete the cases' nodes, so
    that later tests on the same control plane find none of their objects. The namespace controller sweeps
    the rest of each namespace (the Job, its Events) meanwhile; waiting for it would take 20 s more. The
    nodes go last: kwok removes the finalizers of the pods it plays as they are deleted (the API server
    removes an ended pod at once), which it stops doing once their node is gone."""
    from lightkube.resources.core_v1 import Pod

    names = [c.namespace for c in cases]
    client = cp.client()
    cp.kubectl("delete", "namespace", *names, "--ignore-not-found", "--wait=false")  # no new pod from here
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="job-clean") as pool:
        list(pool.map(lambda name: client.deletecollection(Pod, namespace=name, grace_period=0), names))
    watches.wait(
        "the cases' pods gone",
        lambda: not any(watches.live_pods(name) for name in names),
        time.monotonic() + CLEANUP_TIMEOUT_S,
    )
    cp.kubectl("delete", "node", *names, "--ignore-not-found")
