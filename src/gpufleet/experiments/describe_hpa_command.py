"""``gpufleet describe hpa``: find the HorizontalPodAutoscaler, read it from its source, and describe it
(``report.describe_hpa``).

Sources, as for ``describe job`` (``describe_job_command``): ``--summary FILE`` (a saved ``summary.json``,
whose ``hpas`` keep each HPA's spec, status, conditions, events and rescales, not its labels); files holding
pods or HPAs with a ``status`` (``kubectl get hpa,deployments,pods,events -A -o json``): the HPA's own spec,
status, conditions and Events as the dump has them, its rescales read from its ``SuccessfulRescale``
Events; any
other scenario (or the embedded default), simulated here to its end (``summary.json``'s record, with the
labels and annotations of its manifest; a KEDA ScaledObject's HPA under the name KEDA gives it). An HPA
named without its namespace is found as a pod is (``model.pod_names``). Bad input, an unknown or ambiguous
HPA: one line each on stderr, exit status 2.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gpufleet.experiments.describe_command import (
    DescribeError,
    described,
    find_named,
    is_pod,
    pod_key,
    read_summary,
    simulated,
    simulated_time,
)
from gpufleet.kube.documents import Document
from gpufleet.kube.problems import Problems
from gpufleet.report.describe import KUBECTL, SIMULATION, SUMMARY, dump_event, involves
from gpufleet.report.describe_hpa import hpa_events
from gpufleet.sim.summary import build_summary

HPA = "HorizontalPodAutoscaler"
#: the ``SuccessfulRescale`` event's message (``reconcileAutoscaler``)
RESCALED = re.compile(r"New size: (\d+); reason: (.*)", re.DOTALL)
#: ``MetricSpec.type`` -> the field that holds its source
SOURCE_FIELDS = {
    "Resource": "resource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
    "ContainerResource": "containerResource",
}


def describe_hpa(
    name: str, paths: Sequence[Path], summary_path: Path | None, namespace: str | None
) -> dict[str, Any]:
    """The described HPA (``report.describe_hpa`` renders it); ``DescribeError`` for what stops it."""
    return described(
        paths,
        summary_path,
        lambda path: _from_summary(name, path, namespace),
        lambda given: _from_dump(name, given.documents, namespace),
        lambda given: _simulated(name, given.documents, given.sources, given.problems, namespace),
        lambda d: (is_pod(d) or _is_hpa(d)) and bool(d.body.get("status")),
    )


def _from_record(
    source: str, key: str, rec: Mapping[str, Any], end_s: float, meta: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A simulated HPA's record (``summary.json``'s ``hpas[key]``) as the describe shows it."""
    ns, _, name = key.partition("/")
    note = None
    if rec.get("scaled_object"):
        note = (
            f"the HPA KEDA's ScaledObject {rec['scaled_object']} owns; KEDA itself scales its target to and "
            "from zero, which is no rescale of this HPA"
        )
    return {
        "source": source,
        "name": name,
        "namespace": ns,
        "labels": None if meta is None else dict(meta.get("labels") or {}),
        "annotations": None if meta is None else dict(meta.get("annotations") or {}),
        "creation_timestamp": None,
        "reference": str(rec["reference"]),
        "metrics": [dict(m) for m in rec["metrics"]],
        "min_replicas": int(rec["min_replicas"]),
        "max_replicas": int(rec["max_replicas"]),
        "behavior": rec["behavior"],
        "current_replicas": int(rec["current_replicas"]),
        "desired_replicas": int(rec["desired_replicas"]),
        "last_scale_time": simulated_time(rec["last_scale_time_s"]),
        "conditions": [
            {
                "type": c["type"],
                "status": c["status"],
                "reason": c["reason"],
                "message": c["message"],
                "last_transition": simulated_time(c["last_transition_s"]),
            }
            for c in rec["conditions"]
        ],
        "events": hpa_events(rec["events"], end_s),
        "end_time_s": end_s,
        "gpufleet": {
            "rescales": [
                {"at": r["t_s"], "from": r["from"], "to": r["to"], "reason": r["reason"]}
                for r in rec["rescales"]
            ],
            **({"note": note} if note else {}),
        },
    }


def _from_summary(name: str, path: Path, namespace: str | None) -> dict[str, Any]:
    summary = read_summary(path)
    hpas = summary.get("hpas") or {}
    if not isinstance(hpas, Mapping):
        raise DescribeError([f"--summary {path}: hpas is not an object"])
    key = find_named(name, list(hpas), namespace, what="HPA")
    try:
        return _from_record(SUMMARY, key, hpas[key], summary["end_time_s"], None)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DescribeError([f"--summary {path}: hpas[{key}]: not a gpufleet HPA record ({exc!r})"]) from None


def _simulated(
    name: str, documents: list[Document], sources: list[str], problems: Problems, namespace: str | None
) -> dict[str, Any]:
    sim = simulated(documents, sources, problems)
    hpas = build_summary(sim).get("hpas") or {}
    key = find_named(name, list(hpas), namespace, what="HPA")
    body = next((d.body for d in documents if _is_hpa(d) and pod_key(d.body) == key), None)
    meta = None if body is None else body.get("metadata") or {}
    return _from_record(SIMULATION, key, hpas[key], sim.end_time, meta)


def _from_dump(name: str, documents: Sequence[Document], namespace: str | None) -> dict[str, Any]:
    hpas = {pod_key(d.body): d for d in documents if _is_hpa(d)}
    key = find_named(name, list(hpas), namespace, what="HPA")
    document, now = hpas[key], time.time()
    body = document.body
    meta, spec, status = body.get("metadata") or {}, body.get("spec") or {}, body.get("status") or {}
    ns, hpa = key.split("/", 1)
    events = sorted(
        (
            dump_event(d.body, now)
            for d in documents
            if d.body.get("kind") == "Event" and involves(d.body, ns, hpa, HPA)
        ),
        key=lambda e: -(e["age_s"] or 0),
    )
    ref = spec.get("scaleTargetRef") or {}
    v1 = body.get("apiVersion") == "autoscaling/v1"
    min_replicas = spec.get("minReplicas")
    return {
        "source": KUBECTL,
        "name": hpa,
        "namespace": ns,
        "labels": dict(meta.get("labels") or {}),
        "annotations": dict(meta.get("annotations") or {}),
        "creation_timestamp": meta.get("creationTimestamp"),
        "reference": f"{ref.get('kind')}/{ref.get('name')}",
        "metrics": _v1_metrics(spec, status) if v1 else _dumped_metrics(spec, status),
        "min_replicas": min_replicas if isinstance(min_replicas, int) else None,
        "max_replicas": spec.get("maxReplicas"),
        "behavior": None if v1 else _dumped_behavior(spec.get("behavior")),
        "current_replicas": status.get("currentReplicas"),
        "desired_replicas": status.get("desiredReplicas"),
        "last_scale_time": status.get("lastScaleTime"),
        "conditions": [
            {
                "type": c.get("type"),
                "status": c.get("status"),
                "reason": c.get("reason"),
                "message": c.get("message"),
                "last_transition": c.get("lastTransitionTime"),
            }
            for c in status.get("conditions") or []
            if isinstance(c, Mapping)
        ],
        "events": events,
        "end_time_s": None,
        "gpufleet": {
            "rescales": _dumped_rescales(events),
            "note": "a dump keeps the last of each repeated Event: the replica history is its "
            "SuccessfulRescale Events, without the count each started from"
            + (
                "; an autoscaling/v1 HPA: its CPU target only, its conditions are not in its status"
                if v1
                else ""
            ),
        },
    }


def _dumped_rescales(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in events:
        match = RESCALED.fullmatch(str(e["message"] or "")) if e["reason"] == "SuccessfulRescale" else None
        if match is not None:
            out.append({"at": e["at"], "from": None, "to": int(match[1]), "reason": match[2]})
    return out


def _value(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """A ``MetricTarget`` or ``MetricValueStatus`` in the record's words."""
    out: dict[str, Any] = {}
    for api, key in (
        ("value", "value"),
        ("averageValue", "average_value"),
        ("averageUtilization", "average_utilization"),
    ):
        if raw and raw.get(api) is not None:
            out[key] = raw[api] if key == "average_utilization" else str(raw[api])
    return out


def _dumped_metrics(spec: Mapping[str, Any], status: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``spec.metrics`` with ``status.currentMetrics`` (matched by position, as kubectl does)."""
    current = [m for m in status.get("currentMetrics") or [] if isinstance(m, Mapping)]
    out = []
    for i, m in enumerate(m for m in spec.get("metrics") or [] if isinstance(m, Mapping)):
        kind = str(m.get("type"))
        field = SOURCE_FIELDS.get(kind, "")
        source = m.get(field) or {}
        named = kind in ("Resource", "ContainerResource")
        target = source.get("target") or {}
        now = (current[i].get(field) or {}).get("current") if i < len(current) else None
        record: dict[str, Any] = {
            "type": kind,
            "name": source.get("name") if named else (source.get("metric") or {}).get("name"),
            "target": {"type": target.get("type"), **_value(target)},
            "current": _value(now) if now else None,
        }
        if kind == "Object":
            described = source.get("describedObject") or {}
            record["object"] = f"{described.get('kind')}/{described.get('name')}"
        if kind == "ContainerResource":
            record["container"] = source.get("container")
        out.append(record)
    return out


def _v1_metrics(spec: Mapping[str, Any], status: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An ``autoscaling/v1`` HPA's one CPU metric (``targetCPUUtilizationPercentage``)."""
    target, current = (
        spec.get("targetCPUUtilizationPercentage"),
        status.get("currentCPUUtilizationPercentage"),
    )
    return [
        {
            "type": "Resource",
            "name": "cpu",
            "target": {"type": "Utilization", **({} if target is None else {"average_utilization": target})},
            "current": None
            if current is None
            else {"average_utilization": current, "average_value": "<unknown>"},
        }
    ]


def _dumped_behavior(raw: object) -> dict[str, Any] | None:
    if not isinstance(raw, Mapping):
        return None

    def rules(direction: object) -> dict[str, Any] | None:
        if not isinstance(direction, Mapping):
            return None
        return {
            "stabilization_window_seconds": direction.get("stabilizationWindowSeconds"),
            "select_policy": direction.get("selectPolicy"),
            "policies": [
                {"type": p.get("type"), "value": p.get("value"), "period_seconds": p.get("periodSeconds")}
                for p in direction.get("policies") or []
                if isinstance(p, Mapping)
            ],
        }

    return {"scale_up": rules(raw.get("scaleUp")), "scale_down": rules(raw.get("scaleDown"))}


def _is_hpa(document: Document) -> bool:
    return document.body.get("kind") == HPA and str(document.body.get("apiVersion")).startswith(
        "autoscaling/"
    )
