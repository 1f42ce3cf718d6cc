"""``gpufleet describe job``: one Job in ``kubectl describe job``'s layout, then gpufleet's own part.

Mirrors ``k8s.io/kubectl`` v0.34.10 ``pkg/describe/describe.go`` ``describeJob``: Name, Namespace, Selector
(``LabelSelectorAsSelector``), Labels and Annotations, Controlled By, Parallelism, Completions (``<unset>``),
Completion Mode, Suspend, Backoff Limit, TTL Seconds After Finished, Start Time, Completed At, Duration
(``completionTime - startTime``), Active Deadline Seconds, Pods Statuses (``N Active (N Ready) / N Succeeded /
N Failed``), Completed Indexes of an Indexed Job (``capIndexesListOrNone``, 50 characters), the Pod Template's
containers (image, limits, requests) and Events.

A simulated Job's Events are those kube-controller-manager's Job controller would have recorded, in its
words: ``SuccessfulCreate`` "Created pod: NAME" (``controller.RealPodControl.CreatePods``),
``SuccessfulDelete`` "Deleted pod: NAME" for the pods it deleted (those it removed when it was suspended, or
once it had failed or succeeded: ``deleteActivePods``), ``Suspended`` "Job suspended" (``syncJob``), and at
its end ``Completed`` "Job completed" or a Warning with the failure's reason and message
(``recordJobFinished``), aged at the end of the run. A dump's Events are its own.

Below, gpufleet's part: the Job's conditions with the time each first held (kubectl describe job shows none),
each of its pods (node, created, ended, final state, exit code, restarts) and, for a pod still pending, the
scheduler's message and gpufleet's hints. What a source does not hold (a summary keeps no Job spec; a
simulated object has no uid, so no generated selector) is said where it would be shown, never filled in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from gpufleet.report._format import MISSING, kubectl_age
from gpufleet.report.describe import KUBECTL, NOT_KNOWN, aligned, condition_lines, events_lines, time_cell
from gpufleet.report.describe_node import tabbed

#: ``capIndexesListOrNone``'s soft limit: the list is cut at the first comma from this many characters on
INDEXES_SOFT_LIMIT = 50
#: the label of a Job's pods in the selector upstream's API server generates from the Job's uid
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_CONTROLLER = "job-controller"


@dataclass(frozen=True)
class JobSpec:
    """The Job's spec fields kubectl describe job shows, after the API server's defaults (None: unset)."""

    parallelism: int | None
    completions: int | None
    completion_mode: str | None
    suspend: bool | None
    backoff_limit: int | None
    ttl_seconds_after_finished: int | None
    active_deadline_seconds: int | None

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> JobSpec:
        """From a Job's ``spec`` as the API returns it (a dump: defaults already applied)."""

        def number(key: str) -> int | None:
            value = spec.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        mode = spec.get("completionMode")
        suspend = spec.get("suspend")
        return cls(
            number("parallelism"),
            number("completions"),
            mode if isinstance(mode, str) else None,
            suspend if isinstance(suspend, bool) else None,
            number("backoffLimit"),
            number("ttlSecondsAfterFinished"),
            number("activeDeadlineSeconds"),
        )


@dataclass(frozen=True)
class JobStatus:
    """The Job's status as kubectl describe job reads it; times already written as their source knows
    them (None: not set)."""

    start_time: str | None
    completion_time: str | None
    duration_s: float | None  # completionTime - startTime, where both are set
    active: int
    ready: int | None
    succeeded: int
    failed: int
    completed_indexes: str | None  # None: the source does not hold it


def selector_text(selector: Mapping[str, Any] | None) -> str:
    """``metav1.LabelSelectorAsSelector(...).String()``: the requirements sorted by key, ``k=v``, ``k in
    (a,b)``, ``k notin (a,b)``, ``k``, ``!k``, joined by commas; ``<none>`` for an empty selector."""
    if not selector:
        return "<none>"
    requirements: list[tuple[str, str]] = [
        (str(k), f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()
    ]
    for expression in selector.get("matchExpressions") or []:
        key, operator = str(expression.get("key")), expression.get("operator")
        values = ",".join(sorted(str(v) for v in expression.get("values") or []))
        text = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(str(operator), f"{key} {operator} ({values})")
        requirements.append((key, text))
    return ",".join(text for _, text in sorted(requirements)) or "<none>"


def capped_indexes(indexes: str) -> str:
    """``capIndexesListOrNone``: ``<none>`` when empty; past 50 characters, cut at the next comma and
    ``...`` added."""
    if not indexes:
        return "<none>"
    cut = indexes.find(",", INDEXES_SOFT_LIMIT)
    return indexes if cut < 0 else indexes[:cut] + ",..."


def job_event(kind: str, reason: str, at_s: float, end_s: float, message: str) -> dict[str, Any]:
    return {
        "type": kind,
        "reason": reason,
        "at_s": at_s,
        "age_s": end_s - at_s,
        "from": JOB_CONTROLLER,
        "message": message,
    }


def implied_job_events(
    pods: Sequence[Mapping[str, Any]], conditions: Sequence[Mapping[str, Any]], end_s: float
) -> list[dict[str, Any]]:
    """The Events the Job controller would have recorded for a simulated Job (see the module docstring),
    from its pods' records (``summary.json``'s ``pods[]``) and its conditions (``workload_status``)."""
    held = {c["type"]: c for c in conditions if c["status"] == "True"}
    finishing = [
        c["time_s"] for t, c in held.items() if t in ("FailureTarget", "SuccessCriteriaMet", "Failed")
    ]
    finishing += [c["time_s"] for t, c in held.items() if t == "Complete"]
    finished_from = min(finishing, default=None)
    events = []
    for pod in pods:
        name = str(pod["name"]).partition("/")[2]
        events.append(
            job_event("Normal", "SuccessfulCreate", pod["created_s"], end_s, f"Created pod: {name}")
        )
        asked = (pod.get("disruptions") or [None])[0]
        by_job = pod.get("final_state") == "Suspended" or (
            pod.get("final_state") == "Deleted" and finished_from is not None and asked is not None
            and asked >= finished_from
        )  # fmt: skip
        if by_job and asked is not None:
            events.append(job_event("Normal", "SuccessfulDelete", asked, end_s, f"Deleted pod: {name}"))
    if (suspended := held.get("Suspended")) is not None:
        events.append(job_event("Normal", "Suspended", suspended["time_s"], end_s, "Job suspended"))
    if (complete := held.get("Complete")) is not None:
        events.append(job_event("Normal", "Completed", complete["time_s"], end_s, "Job completed"))
    if (failed := held.get("Failed")) is not None:
        events.append(job_event("Warning", failed["reason"], failed["time_s"], end_s, failed["message"]))
    return sorted(events, key=lambda e: float(e["at_s"]))


def described_job(
    source: str,
    namespace: str,
    name: str,
    meta: Mapping[str, Any] | None,
    spec: JobSpec | None,
    selector: str | None,
    containers: Sequence[Mapping[str, Any]] | None,
    status: JobStatus,
    events: Sequence[Mapping[str, Any]] | None,
    gpufleet: Mapping[str, Any],
    end_time_s: float | None = None,
) -> dict[str, Any]:
    """The Job's record (what ``-o json`` and ``-o yaml`` print): kubectl's fields (None where the source
    holds nothing of one), then ``gpufleet``: its ``conditions``, ``pods`` and ``pending`` rows."""
    owner = next(
        (
            f"{ref.get('kind')}/{ref.get('name')}"
            for ref in (meta or {}).get("ownerReferences") or []
            if isinstance(ref, Mapping) and ref.get("controller")
        ),
        None,
    )
    return {
        "source": source,
        "name": name,
        "namespace": namespace,
        "selector": selector,
        "labels": None if meta is None else dict(meta.get("labels") or {}),
        "annotations": None if meta is None else dict(meta.get("annotations") or {}),
        "controlled_by": owner,
        "spec": None if spec is None else vars(spec),
        "start_time": status.start_time,
        "completed_at": status.completion_time,
        "duration_s": status.duration_s,
        "pods_statuses": {
            "active": status.active,
            "ready": status.ready,
            "succeeded": status.succeeded,
            "failed": status.failed,
        },
        "completed_indexes": status.completed_indexes,
        "containers": None if containers is None else [dict(c) for c in containers],
        "events": None if events is None else list(events),
        "end_time_s": end_time_s,
        "gpufleet": dict(gpufleet),
    }


def render_job(d: Mapping[str, Any], console: Console) -> None:
    """The record in ``kubectl describe job``'s layout, then gpufleet's part."""
    unknown = NOT_KNOWN[d["source"]]
    rows: list[tuple[str, str]] = [
        ("Name:", d["name"]),
        ("Namespace:", d["namespace"]),
        ("Selector:", d["selector"] or unknown),
        *_listed("Labels", d["labels"], unknown),
        *_listed("Annotations", d["annotations"], unknown),
    ]
    if d["controlled_by"]:
        rows.append(("Controlled By:", d["controlled_by"]))
    rows += _spec_rows(d["spec"], unknown)
    if d["start_time"]:
        rows.append(("Start Time:", d["start_time"]))
    if d["completed_at"]:
        rows.append(("Completed At:", d["completed_at"]))
    if d["duration_s"] is not None:
        rows.append(("Duration:", kubectl_age(d["duration_s"])))
    spec = d["spec"]
    if spec is not None and spec["active_deadline_seconds"] is not None:
        rows.append(("Active Deadline Seconds:", f"{spec['active_deadline_seconds']}s"))
    rows.append(("Pods Statuses:", _pods_statuses(d["pods_statuses"])))
    if spec is None or spec["completion_mode"] == "Indexed":
        indexes = d["completed_indexes"]
        rows.append(("Completed Indexes:", unknown if indexes is None else capped_indexes(indexes)))
    lines = tabbed(rows) + _template(d["containers"], unknown)
    events = d["events"]
    lines += events_lines(d) if events else tabbed([("Events:", unknown if events is None else "<none>")])
    lines += _gpufleet_lines(d["gpufleet"], d["source"])
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _listed(label: str, values: Mapping[str, str] | None, unknown: str) -> list[tuple[str, str]]:
    """``printLabelsMultiline``: the first ``k=v`` beside the label, the others under it; ``<none>``."""
    if values is None:
        return [(f"{label}:", unknown)]
    first, *rest = [f"{k}={v}" for k, v in sorted(values.items())] or ["<none>"]
    return [(f"{label}:", first), *(("", item) for item in rest)]


def _spec_rows(spec: Mapping[str, Any] | None, unknown: str) -> list[tuple[str, str]]:
    """Parallelism to TTL Seconds After Finished, each only where set, as ``describeJob`` writes them
    (Completions ``<unset>`` where unset)."""
    if spec is None:
        return [("Parallelism:", unknown), ("Completions:", unknown), ("Backoff Limit:", unknown)]
    rows: list[tuple[str, str]] = []
    if spec["parallelism"] is not None:
        rows.append(("Parallelism:", str(spec["parallelism"])))
    completions = spec["completions"]
    rows.append(("Completions:", "<unset>" if completions is None else str(completions)))
    for label, key in (
        ("Completion Mode:", "completion_mode"),
        ("Suspend:", "suspend"),
        ("Backoff Limit:", "backoff_limit"),
        ("TTL Seconds After Finished:", "ttl_seconds_after_finished"),
    ):
        value = spec[key]
        if value is not None:
            rows.append((label, str(value).lower() if isinstance(value, bool) else str(value)))
    return rows


def _pods_statuses(counts: Mapping[str, Any]) -> str:
    ready = "" if counts["ready"] is None else f" ({counts['ready']} Ready)"
    return f"{counts['active']} Active{ready} / {counts['succeeded']} Succeeded / {counts['failed']} Failed"


def _template(containers: Sequence[Mapping[str, Any]] | None, unknown: str) -> list[str]:
    """``DescribePodTemplate``'s containers: each one's image, limits and requests."""
    if containers is None:
        return [f"Pod Template:  {unknown}"]
    lines = ["Pod Template:", "  Containers:"]
    for c in containers:
        lines += [f"   {c['name']}:", f"    Image:      {c.get('image') or '<none>'}"]
        for label in ("Limits", "Requests"):
            values = c.get(label.lower())
            if values is None:
                lines.append(f"    {label}:     {unknown}")
            elif values:
                lines.append(f"    {label}:")
                lines.extend(f"      {k}:  {v}" for k, v in sorted(values.items()))
    return lines


def _gpufleet_lines(g: Mapping[str, Any], source: str) -> list[str]:
    """gpufleet's part: the conditions with their times, the pods, the pending pods' reasons."""
    lines = ["", "gpufleet:"]
    if source != KUBECTL:
        lines += ["  " + line for line in condition_lines(g.get("conditions") or [])]
    pods = g.get("pods") or []
    times = "simulated" if source != KUBECTL else "ages now"
    if pods:
        rows = [("Pod", "Node", "Created", "Ended", "State", "Exit Code", "Restarts")]
        rows += [
            (
                p["name"],
                p["node"] or "<none>",
                time_cell(p["created"]),
                time_cell(p["ended"]),
                p["state"] or MISSING,
                MISSING if p["exit_code"] is None else str(p["exit_code"]),
                MISSING if p["restarts"] is None else str(p["restarts"]),
            )
            for p in pods
        ]
        lines += [f"  Pods ({times}):", *aligned(rows, "    ")]
    else:
        lines.append("  Pods:  <none>")
    for p in g.get("pending") or []:
        lines.append(f"  {p['name']} is pending: {p['message'] or 'not tried yet'}")
        lines.extend(f"    - {hint}" for hint in p["hints"])
    if g.get("note"):
        lines.append(f"  ({g['note']})")
    return lines
