"""``gpufleet describe job``: find the Job, read it from its source, and describe it
(``report.describe_job``).

Sources, as for ``describe pod`` (``describe_command``): ``--summary FILE`` (a saved ``summary.json``, which
keeps a Job's status and its pods, not its spec: what it lacks is said); files whose Pod documents carry a
``status`` (``kubectl get jobs,pods,events -A -o json``): the Job as the dump has it, its pods (those it
controls: ``ownerReferences``) and its Events, the pending ones explained by ``explain``; any other scenario
(or the embedded default), simulated here to its end. A Job named without its namespace is found as a pod is
(``model.pod_names``). Bad input, an unknown or ambiguous Job: one line each on stderr, exit status 2.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gpufleet.experiments.describe_command import (
    described,
    find_named,
    is_pod,
    pod_key,
    read_summary,
    simulated,
    simulated_time,
)
from gpufleet.kube.documents import Document
from gpufleet.kube.explain import explain_scenario
from gpufleet.kube.load import scenario_from_documents
from gpufleet.kube.problems import Problems, ScenarioError
from gpufleet.model.pod_names import PodNameError
from gpufleet.report._format import human_duration
from gpufleet.report.describe import (
    KUBECTL,
    SIMULATION,
    SUMMARY,
    dump_event,
    epoch,
    involves,
    manifest_container,
)
from gpufleet.report.describe_job import (
    CONTROLLER_UID,
    JobSpec,
    JobStatus,
    described_job,
    implied_job_events,
    selector_text,
)
from gpufleet.scheduling.profile import ProfileError
from gpufleet.sim.summary import build_summary

JOB = "Job"


def describe_job(
    name: str, paths: Sequence[Path], summary_path: Path | None, namespace: str | None
) -> dict[str, Any]:
    """The described Job (``report.describe_job``'s record); ``DescribeError`` for anything that stops it."""
    return described(
        paths,
        summary_path,
        lambda path: _from_summary(name, read_summary(path), namespace),
        lambda given: _from_dump(name, given.documents, given.sources, given.problems, namespace),
        lambda given: _simulated(name, given.documents, given.sources, given.problems, namespace),
    )


def _job_pods(summary: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    return [p for p in summary["pods"] if p.get("workload") == f"{JOB}/{key}"]


def _pod_row(p: Mapping[str, Any]) -> dict[str, Any]:
    """A pod of a simulated Job (``summary.json``'s ``pods[]``) as gpufleet's part lists it."""
    terminated = p.get("terminated") or {}
    ended = p["finished_s"] if p["finished_s"] is not None else p["deleted_s"]
    return {
        "name": str(p["name"]).partition("/")[2],
        "node": p["node"],
        "created": p["created_s"],
        "ended": ended,
        "state": p.get("final_state") or p["phase"],
        "exit_code": terminated.get("exit_code"),
        "restarts": p.get("restarts"),
    }


def _pending(pods: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "name": str(p["name"]).partition("/")[2],
            "message": p["message"],
            "hints": list((p.get("diagnosis") or {}).get("hints") or []),
        }
        for p in pods
        if p["phase"] == "Pending" and p["bound_s"] is None and p["deleted_s"] is None
    ]


def _simulated_status(
    status: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], indexes: str | None
) -> JobStatus:
    """A simulated Job's status (``workload_status``): ``status.ready`` counts its pods running and ready
    (as ``describe pod``'s Ready condition reads a record)."""
    start, complete = status["start_time_s"], status["completion_time_s"]
    ready = sum(
        1 for p in pods if p["phase"] == "Running" and p["working_s"] is not None and p["deleted_s"] is None
    )
    return JobStatus(
        simulated_time(start),
        simulated_time(complete),
        None if start is None or complete is None else complete - start,
        int(status["active"]),
        ready,
        int(status["succeeded"]),
        int(status["failed"]),
        indexes,
    )


def _gpufleet_part(
    status: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], note: str | None = None
) -> dict[str, Any]:
    part: dict[str, Any] = {
        "conditions": list(status["conditions"]),
        "pods": [_pod_row(p) for p in pods],
        "pending": _pending(pods),
    }
    notes = []
    if status.get("terminating"):
        notes.append(f"{status['terminating']} of its pods terminating")
    if status.get("deleted_s") is not None:
        deleted = human_duration(status["deleted_s"])
        notes.append(f"the Job was deleted at t={deleted} (ttlSecondsAfterFinished)")
    if notes:
        part["note"] = "; ".join(notes)
    if note:
        part["note"] = f"{part['note']}; {note}" if part.get("note") else note
    return part


def _from_summary(name: str, summary: Mapping[str, Any], namespace: str | None) -> dict[str, Any]:
    statuses = summary.get("workload_status") or {}
    jobs = {k.partition("/")[2]: v for k, v in statuses.items() if k.partition("/")[0] == JOB}
    key = find_named(name, list(jobs), namespace, what="Job")
    status, pods, end = jobs[key], _job_pods(summary, key), summary["end_time_s"]
    ns, _, job = key.partition("/")
    return described_job(
        SUMMARY,
        ns,
        job,
        None,
        None,
        None,
        None,
        _simulated_status(status, pods, status.get("completedIndexes")),
        implied_job_events(pods, status["conditions"], end),
        _gpufleet_part(status, pods, "summary.json keeps the Job's status and pods, not its spec"),
        end,
    )


def _simulated(
    name: str, documents: list[Document], sources: list[str], problems: Problems, namespace: str | None
) -> dict[str, Any]:
    sim = simulated(documents, sources, problems)
    summary = build_summary(sim)
    statuses = summary.get("workload_status") or {}
    key = find_named(name, [j.key for j in sim.scenario.jobs], namespace, what="Job")
    model = next(j for j in sim.scenario.jobs if j.key == key)
    status, pods, end = statuses[f"{JOB}/{key}"], _job_pods(summary, key), sim.end_time
    body = next((d.body for d in documents if _is_job(d) and pod_key(d.body) == key), {})
    meta, spec = body.get("metadata") or {}, body.get("spec") or {}
    ttl = spec.get("ttlSecondsAfterFinished")
    job_spec = JobSpec(
        model.parallelism,
        model.completions,
        "Indexed" if model.indexed else "NonIndexed",
        model.suspend,
        model.backoff_limit,
        ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None,
        None if model.active_deadline_s is None else int(model.active_deadline_s),
    )
    selector = (
        selector_text(spec.get("selector"))
        if spec.get("manualSelector") is True
        else f"{CONTROLLER_UID}=<not modelled: a simulated Job has no uid>"
    )
    indexes = status.get("completedIndexes", "") if model.indexed else None
    return described_job(
        SIMULATION,
        model.namespace,
        model.name,
        meta,
        job_spec,
        selector,
        _manifest_containers(spec),
        _simulated_status(status, pods, indexes),
        implied_job_events(pods, status["conditions"], end),
        _gpufleet_part(status, pods),
        end,
    )


def _manifest_containers(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pod template's containers as written (``report.describe.manifest_container``)."""
    pod_spec = ((spec.get("template") or {}).get("spec")) or {}
    return [manifest_container(c) for c in pod_spec.get("containers") or [] if isinstance(c, Mapping)]


def _from_dump(
    name: str, documents: Sequence[Document], sources: list[str], problems: Problems, namespace: str | None
) -> dict[str, Any]:
    jobs = {pod_key(d.body): d.body for d in documents if _is_job(d)}
    key = find_named(name, list(jobs), namespace, what="Job")
    body, now = jobs[key], time.time()
    meta, spec, status = body.get("metadata") or {}, body.get("spec") or {}, body.get("status") or {}
    ns, job = key.split("/", 1)
    pods = [d.body for d in documents if is_pod(d) and _owned_by(d.body, ns, job)]
    events = sorted(
        (
            dump_event(d.body, now)
            for d in documents
            if d.body.get("kind") == "Event" and involves(d.body, ns, job, JOB)
        ),
        key=lambda e: -(e["age_s"] or 0),
    )
    start, complete = epoch(status.get("startTime")), epoch(status.get("completionTime"))
    ready = status.get("ready")
    job_status = JobStatus(
        status.get("startTime"),
        status.get("completionTime"),
        None if start is None or complete is None else complete - start,
        int(status.get("active") or 0),
        ready if isinstance(ready, int) else None,
        int(status.get("succeeded") or 0),
        int(status.get("failed") or 0),
        str(status.get("completedIndexes") or ""),
    )
    part = {"pods": [_dumped_pod(p) for p in pods], **_explained(documents, sources, problems, pods)}
    return described_job(
        KUBECTL,
        ns,
        job,
        meta,
        JobSpec.of(spec),
        selector_text(spec.get("selector")),
        _manifest_containers(spec),
        job_status,
        events,
        part,
    )


def _dumped_pod(body: Mapping[str, Any]) -> dict[str, Any]:
    """A pod of the dump as gpufleet's part lists it: its first container's exit code and restarts."""
    meta, spec, status = body.get("metadata") or {}, body.get("spec") or {}, body.get("status") or {}
    first = next((cs for cs in status.get("containerStatuses") or [] if isinstance(cs, Mapping)), {})
    terminated = (first.get("state") or {}).get("terminated") or {}
    return {
        "name": meta.get("name"),
        "node": spec.get("nodeName"),
        "created": meta.get("creationTimestamp"),
        "ended": terminated.get("finishedAt"),
        "state": "Terminating" if meta.get("deletionTimestamp") else status.get("phase"),
        "exit_code": terminated.get("exitCode"),
        "restarts": first.get("restartCount"),
    }


def _explained(
    documents: Sequence[Document], sources: list[str], problems: Problems, pods: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The Job's pending pods as ``explain`` judges them."""
    keys = {pod_key(p) for p in pods if (p.get("status") or {}).get("phase") == "Pending"}
    if not keys:
        return {"pending": []}
    try:
        explained = explain_scenario(scenario_from_documents(list(documents), sources, problems))
    except ScenarioError as exc:
        return {"pending": [], "note": f"gpufleet cannot explain its pending pods: {exc.problems[0]}"}
    except (ProfileError, PodNameError) as exc:
        return {"pending": [], "note": f"gpufleet cannot explain its pending pods: {exc}"}
    rows = []
    for e in explained:
        if e["pod"] in keys:
            hints = [f"cannot judge: {s} is not modelled" for s in e["cannot_judge"]]
            hints += e["diagnosis"]["hints"] if e.get("diagnosis") else []
            rows.append({"name": e["pod"].partition("/")[2], "message": e["message"], "hints": hints})
    return {"pending": rows}


def _is_job(document: Document) -> bool:
    return document.body.get("apiVersion") == "batch/v1" and document.body.get("kind") == JOB


def _owned_by(body: Mapping[str, Any], namespace: str, name: str) -> bool:
    meta = body.get("metadata") or {}
    return (meta.get("namespace") or "default") == namespace and any(
        isinstance(ref, Mapping)
        and ref.get("kind") == JOB
        and ref.get("name") == name
        and ref.get("controller")
        for ref in meta.get("ownerReferences") or []
    )
