"""What kube-scheduler recorded about a pending pod, and whether gpufleet's own evaluation agrees.

The records are the pod's ``PodScheduled=False`` condition and its latest ``FailedScheduling``
Event (matched by ``involvedObject``: namespace and name, and uid where both carry one), shown
verbatim. gpufleet agrees when it finds no node either and words the failure the same; otherwise
it says how it disagrees: it would place the pod, or the two messages differ in these parts (a
FitError's parts: ``0/N nodes are available:``, each ``<count> <reason>``, each PostFilter
message), so that a user sees at once what gpufleet models differently or what changed since
kube-scheduler's last attempt.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from gpufleet.model.scenario import BarePod
from gpufleet.model.scheduler_records import PodEvent, Recorded, event_message

#: Where a FitError message splits into parts: after ``nodes are available:``, between histogram
#: entries (``, `` before a count) and between sentences.
_PARTS = re.compile(r"(?<=nodes are available:) |, (?=\d+ )|(?<=\.) ")


def events_by_pod(events: Sequence[PodEvent]) -> dict[tuple[str, str], list[PodEvent]]:
    """The FailedScheduling Events about each pod, by (namespace, name)."""
    by_pod: dict[tuple[str, str], list[PodEvent]] = {}
    for event in events:
        by_pod.setdefault((event.namespace, event.name), []).append(event)
    return by_pod


def recorded_for(bare: BarePod, events: dict[tuple[str, str], list[PodEvent]]) -> list[Recorded]:
    """The pod's PodScheduled condition and its latest FailedScheduling Event (the latest time, then
    the last in the input; an Event about an earlier pod of the same name, by uid, left out)."""
    records = [bare.scheduled] if bare.scheduled is not None else []
    own = [
        e
        for e in events.get((bare.pod.namespace, bare.pod.name), ())
        if not (bare.uid and e.uid and bare.uid != e.uid)
    ]
    if own:
        records.append(max(own, key=lambda e: (_when(e.recorded.at), e.order)).recorded)
    return records


def verdict(records: Sequence[Recorded], nodes: Sequence[str], message: str) -> str | None:
    """``gpufleet agrees ...`` or ``gpufleet disagrees: ...`` against the latest record (None when
    there is none); ``nodes``: where gpufleet would place the pod (empty: nowhere, ``message``)."""
    if not records:
        return None
    last = max(records, key=lambda r: _when(r.at))
    if nodes:
        return (
            f"gpufleet disagrees: kube-scheduler could not place the pod ({last.source}), gpufleet would "
            f"place it on {' or '.join(nodes)} now (or the cluster changed since kube-scheduler's attempt)"
        )
    if last.message in (message, event_message(message)):
        return f"gpufleet agrees with kube-scheduler's message ({last.source})"
    theirs, ours = Counter(_PARTS.split(last.message)), Counter(_PARTS.split(message))
    only_theirs = _quoted(theirs - ours)
    only_ours = _quoted(ours - theirs)
    parts = [f"only kube-scheduler's has {only_theirs}"] if only_theirs else []
    parts += [f"only gpufleet's has {only_ours}"] if only_ours else []
    detail = "; ".join(parts) or "the two messages differ in their order"
    return f"gpufleet disagrees with kube-scheduler's message ({last.source}): {detail}"


def _quoted(parts: Counter[str]) -> str:
    return ", ".join(f'"{p.rstrip(".")}"' for p in sorted(parts.elements()))


def _when(at: datetime | None) -> float:
    return at.timestamp() if at is not None else float("-inf")
