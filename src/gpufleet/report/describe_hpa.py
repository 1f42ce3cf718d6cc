"""``gpufleet describe hpa``: one HorizontalPodAutoscaler in ``kubectl describe hpa``'s layout, then
gpufleet's own part.

Mirrors ``k8s.io/kubectl`` v0.34.10 ``pkg/describe/describe.go`` ``describeHorizontalPodAutoscalerV2``: Name,
Namespace, Labels, Annotations, CreationTimestamp, Reference (``Kind/name``), Metrics ``( current / target )``
with one line per metric as kubectl words each type (``"<name>" on pods``, ``resource cpu on pods  (as a
percentage of request)`` with ``50% (250m)``, ``"<name>" on Kind/name (target value)``, ``"<name>" (target
average value)``; ``<unknown>`` while the status has no current value), Min replicas (``<unset>``), Max
replicas, Behavior where set (``printDirectionBehavior``: Stabilization Window, Select Policy, Policies),
``<Kind> pods: N current / N desired``, Conditions (Type, Status, Reason, Message) and Events (a repeated
one's Age ``5m (x3 over 10m)``, as ``DescribeEvents``); the lines go through one ``text/tabwriter``, so each
run of tabbed lines is aligned together.

Below, gpufleet's part: when each condition last changed, every rescale (time, from, to, reason) and, where
the HPA is held (at maxReplicas or minReplicas, rate limited, stabilized, or not scaling), a plain sentence
saying so. What a source does not hold (a summary keeps no labels; a simulated HPA has no creation time) is
said where it would be shown, never filled in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console

from gpufleet.report._format import MISSING
from gpufleet.report.describe import KUBECTL, NOT_KNOWN, aligned, event_rows, time_cell
from gpufleet.report.describe_node import tabbed

#: the component that records the HPA's events (``horizontal.go``'s event recorder)
HPA_CONTROLLER = "horizontal-pod-autoscaler"


def hpa_events(events: Sequence[Mapping[str, Any]], end_s: float) -> list[dict[str, Any]]:
    """A simulated HPA's events (``summary.json``'s ``hpas[].events``) as the describe lists them, each aged
    at the end of the run, in the order they were last recorded."""
    rows = [
        {
            "type": e["type"],
            "reason": e["reason"],
            "at_s": e["last_s"],
            "age_s": end_s - e["last_s"],
            "first_age_s": end_s - e["first_s"],
            "count": e["count"],
            "from": HPA_CONTROLLER,
            "message": e["message"],
        }
        for e in events
    ]
    return sorted(rows, key=lambda e: float(e["at_s"]))


def held_sentences(d: Mapping[str, Any]) -> list[str]:
    """Where the HPA is held, in words, from its conditions and replica counts."""
    conditions = {c["type"]: c for c in d["conditions"] or []}
    out = []
    active = conditions.get("ScalingActive")
    if active is not None and active["status"] == "False":
        out.append(f"It is not scaling from its metrics ({active['reason']}): {active['message']}.")
    limited = conditions.get("ScalingLimited")
    reason = limited["reason"] if limited is not None and limited["status"] == "True" else None
    current, top, bottom = d["current_replicas"], d["max_replicas"], d["min_replicas"]
    if reason == "TooManyReplicas":
        out.append(f"It is at maxReplicas ({top}): its metrics want more replicas than that.")
    elif current is not None and current == top:
        out.append(f"It is at maxReplicas ({top}).")
    if reason == "TooFewReplicas":
        out.append(f"It is at minReplicas ({bottom}): its metrics want fewer replicas than that.")
    if limited is not None and reason in ("ScaleUpLimit", "ScaleDownLimit"):
        direction = "up" if reason == "ScaleUpLimit" else "down"
        out.append(f"Its scale-{direction} is rate limited ({reason}): {limited['message']}.")
    able = conditions.get("AbleToScale")
    if able is not None and able["reason"] in ("ScaleUpStabilized", "ScaleDownStabilized"):
        out.append(f"Its stabilization window holds it ({able['reason']}): {able['message']}.")
    return out


def render_hpa(d: Mapping[str, Any], console: Console) -> None:
    """The record in ``kubectl describe hpa``'s layout, then gpufleet's part."""
    unknown = NOT_KNOWN[d["source"]]
    rows: list[tuple[str, ...]] = [
        ("Name:", d["name"]),
        ("Namespace:", d["namespace"]),
        *_listed("Labels", d["labels"], unknown),
        *_listed("Annotations", d["annotations"], unknown),
        ("CreationTimestamp:", d["creation_timestamp"] or unknown),
        ("Reference:", d["reference"]),
        ("Metrics:", "( current / target )"),
        *(metric_row(m) for m in d["metrics"]),
        ("Min replicas:", "<unset>" if d["min_replicas"] is None else str(d["min_replicas"])),
        ("Max replicas:", str(d["max_replicas"])),
    ]
    if d["behavior"] is not None:
        rows.append(("Behavior:",))
        rows += _direction("Scale Up", d["behavior"].get("scale_up"))
        rows += _direction("Scale Down", d["behavior"].get("scale_down"))
    kind = str(d["reference"]).partition("/")[0]
    rows.append(
        (
            f"{kind} pods:",
            f"{_count(d['current_replicas'])} current / {_count(d['desired_replicas'])} desired",
        )
    )
    if d["conditions"]:
        rows.append(("Conditions:",))
        rows.append(("  Type", "Status", "Reason", "Message"))
        rows.append(("  ----", "------", "------", "-------"))
        rows += [("  " + c["type"], c["status"], c["reason"], c["message"]) for c in d["conditions"]]
    lines = _tabwritten(rows)
    lines += _events_lines(d["events"], d["source"], unknown)
    lines += _gpufleet_lines(d)
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def metric_row(m: Mapping[str, Any]) -> tuple[str, ...]:
    """One metric's line as ``describeHorizontalPodAutoscalerV2`` writes it: what it is, then ``current /
    target`` (``<unknown>`` while the status has no current value; a type it does not know, alone)."""
    target, current = m["target"], m.get("current") or {}
    kind, name = m["type"], m["name"]
    if kind not in ("External", "Pods", "Object", "Resource", "ContainerResource"):
        return (f'  <unknown metric type "{kind}">',)
    if kind == "External":
        field = "average_value" if target["type"] == "AverageValue" else "value"
        which = "target average value" if field == "average_value" else "target value"
        return f'  "{name}" ({which}):', f"{current.get(field, '<unknown>')} / {target.get(field)}"
    if kind == "Pods":
        return (
            f'  "{name}" on pods:',
            f"{current.get('average_value', '<unknown>')} / {target.get('average_value')}",
        )
    if kind == "Object":
        field = "average_value" if target["type"] == "AverageValue" else "value"
        which = "target average value" if field == "average_value" else "target value"
        label = f'  "{name}" on {m.get("object")} ({which}):'
        return label, f"{current.get(field, '<unknown>')} / {target.get(field)}"
    head = (
        f"  resource {name} on pods"
        if kind == "Resource"
        else f'  resource {name} of container "{m.get("container")}" on pods'
    )
    if target["type"] == "AverageValue":
        return f"{head}:", f"{current.get('average_value', '<unknown>')} / {target.get('average_value')}"
    now = (
        f"{current['average_utilization']}% ({current.get('average_value')})"
        if current.get("average_utilization") is not None
        else "<unknown>"
    )
    goal = f"{target['average_utilization']}%" if target.get("average_utilization") is not None else "<auto>"
    return f"{head}  (as a percentage of request):", f"{now} / {goal}"


def _direction(label: str, rules: Mapping[str, Any] | None) -> list[tuple[str, ...]]:
    """``printDirectionBehavior``."""
    if rules is None:
        return []
    rows: list[tuple[str, ...]] = [(f"  {label}:",)]
    if rules.get("stabilization_window_seconds") is not None:
        rows.append((f"    Stabilization Window: {rules['stabilization_window_seconds']} seconds",))
    if rules.get("policies"):
        rows.append((f"    Select Policy: {rules.get('select_policy') or 'Max'}",))
        rows.append(("    Policies:",))
        rows += [
            (f"      - Type: {p['type']}", f"Value: {p['value']}", f"Period: {p['period_seconds']} seconds")
            for p in rules["policies"]
        ]
    return rows


def _tabwritten(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """``text/tabwriter`` over the whole block: a line without a tab (one cell) ends a column block."""
    lines: list[str] = []
    block: list[tuple[str, ...]] = []
    for row in [*rows, ("",)]:
        if len(row) > 1:
            block.append(row)
            continue
        lines += tabbed(block)
        block = []
        lines.append(row[0])
    return lines[:-1]


def _listed(label: str, values: Mapping[str, str] | None, unknown: str) -> list[tuple[str, str]]:
    """``printLabelsMultiline``: the first ``k=v`` beside the label, the others under it; ``<none>``."""
    if values is None:
        return [(f"{label}:", unknown)]
    first, *rest = [f"{k}={v}" for k, v in sorted(values.items())] or ["<none>"]
    return [(f"{label}:", first), *(("", item) for item in rest)]


def _count(value: object) -> str:
    return MISSING if value is None else str(value)


def _events_lines(events: Sequence[Mapping[str, Any]] | None, source: str, unknown: str) -> list[str]:
    """``DescribeEvents``."""
    if not events:
        return tabbed([("Events:", unknown if events is None else "<none>")])
    aged = "at the end of the run" if source != KUBECTL else "now"
    return [f"Events (ages {aged}):", *aligned(event_rows(events))]


def _gpufleet_lines(d: Mapping[str, Any]) -> list[str]:
    """gpufleet's part: when each condition last changed, the replica history, where the HPA is held."""
    g = d["gpufleet"]
    lines = ["", "gpufleet:"]
    if d["last_scale_time"]:
        lines.append(f"  Last scale time:  {d['last_scale_time']}")
    changed = [c for c in d["conditions"] or [] if c.get("last_transition")]
    if changed:
        transitions = [("Type", "Status", "Last Transition")]
        transitions += [(c["type"], c["status"], str(c["last_transition"])) for c in changed]
        lines += ["  Conditions:", *aligned(transitions, "    ")]
    rescales = g.get("rescales")
    if rescales:
        history = [("Time", "From", "To", "Reason")]
        history += [(time_cell(r["at"]), _count(r["from"]), _count(r["to"]), r["reason"]) for r in rescales]
        lines += ["  Replica history:", *aligned(history, "    ")]
    elif rescales is not None:
        lines.append("  Replica history:  no rescale")
    lines += [f"  {sentence}" for sentence in held_sentences(d)]
    if g.get("note"):
        lines.append(f"  ({g['note']})")
    return lines
