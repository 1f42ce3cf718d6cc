"""kube-scheduler's records in a cluster dump: a pod's ``PodScheduled`` condition and the
``FailedScheduling`` Events about pods (``kubectl get pods,events -A -o json``).

An Event is core/v1 (``involvedObject``, ``message``, ``lastTimestamp``, ``count``) or
events.k8s.io/v1 (``regarding``, ``note``, ``deprecatedLastTimestamp``); its time is the latest it
carries (``series.lastObservedTime``, then the last, event and first timestamps, then
``metadata.creationTimestamp``). An Event with another reason, or about another kind of object,
is a warning: it changes nothing gpufleet models.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.problems import Reporter, invalid
from gpufleet.model.scheduler_records import PodEvent, Recorded

FAILED_SCHEDULING = "FailedScheduling"
POD_SCHEDULED = "PodScheduled"
EVENTS_V1 = "events.k8s.io/v1"
#: Where each Event version keeps what it says and when (latest first).
_CORE = ("involvedObject", "message", ("lastTimestamp", "eventTime", "firstTimestamp"))
_EVENTS_V1 = ("regarding", "note", ("deprecatedLastTimestamp", "eventTime", "deprecatedFirstTimestamp"))


def pod_scheduled(status: Mapping[str, Any], report: Reporter) -> Recorded | None:
    """The pod's ``PodScheduled`` condition when it says the pod is not scheduled (``status: False``,
    whatever its reason: ``Unschedulable``, ``SchedulingGated``, ``SchedulerError``, another scheduler's own),
    with its message and reason."""
    for i, condition in enumerate(items(status.get("conditions"))):
        if condition.get("type") == POD_SCHEDULED and condition.get("status") == "False":
            at = _time(
                condition.get("lastTransitionTime"), report, f"status.conditions[{i}].lastTransitionTime"
            )
            reason = str(condition.get("reason") or "") or None
            source = f"{POD_SCHEDULED}=False ({reason or 'no reason'})"
            return Recorded(source, str(condition.get("message") or ""), at, reason)
    return None


def pod_event(meta: Meta, body: Mapping[str, Any], report: Reporter, order: int) -> PodEvent | None:
    """The Event ``body`` when it is a ``FailedScheduling`` Event about a pod, else None (warned)."""
    subject, text, times = _EVENTS_V1 if body.get("apiVersion") == EVENTS_V1 else _CORE
    target = mapping(body.get(subject))
    reason = body.get("reason")
    if reason != FAILED_SCHEDULING or target.get("kind") != "Pod":
        what = f"reason {reason} about a {target.get('kind') or 'missing'} object"
        report.not_modelled("", what, note=f"explain reads {FAILED_SCHEDULING} events of pods")
        return None
    at = None
    series = mapping(body.get("series"))
    for path, value in (
        ("series.lastObservedTime", series.get("lastObservedTime")),
        *((field, body.get(field)) for field in times),
        ("metadata.creationTimestamp", mapping(body.get("metadata")).get("creationTimestamp")),
    ):
        at = at or _time(value, report, path)
    recorded = Recorded(f"{FAILED_SCHEDULING} event", str(body.get(text) or ""), at)
    namespace = target.get("namespace") or meta.namespace
    return PodEvent(
        str(namespace), str(target.get("name") or ""), str(target.get("uid") or ""), recorded, order
    )


def _time(value: object, report: Reporter, path: str) -> datetime | None:
    """An RFC 3339 time (``2025-01-02T03:04:05Z``, or with microseconds), or None when absent; one
    without a zone is UTC, as the API server writes every time."""
    if value is None or value == "":
        return None
    try:
        at = datetime.fromisoformat(str(value))
    except ValueError:
        report.error(path, invalid(value, "must be an RFC 3339 time"))
        return None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
