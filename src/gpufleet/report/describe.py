"""``gpufleet describe pod``: one pod in ``kubectl describe pod``'s layout.

The pod is described from a simulation (simulated on the spot, or a saved ``summary.json``) or from
a kubectl dump, each into the same record (what ``-o json`` and ``-o yaml`` print):

- a simulation's pod record (``summary.json``'s ``pods[]``, with the pod's manifest fields and its
  state log when the scenario was simulated on the spot): the Events are those the record implies,
  as the scheduler and the kubelet would have recorded them (Scheduled, FailedScheduling; at every
  container start, restarts included, Pulling and Pulled, Created, Started; BackOff, Killing), the
  kubelet's through client-go's event correlator (:mod:`gpufleet.model.event_correlator`: a repeat
  counted, ``(xN over ...)``), aged at the end of the run; every one is kept to the end (the API server's
  ``--event-ttl`` is not modelled: a note says how many kubectl would no longer list), and the start-up
  stages follow, gpufleet's own (scheduling, node provisioning, image pull, model
  load, warm-up, to working);
- a pod of a kubectl dump (``kubectl get pods,events -A -o json``): its fields, conditions and Events
  as kubectl shows them, aged now, and for a pending pod gpufleet's explanation.

What a source does not hold (a summary keeps no labels; gpufleet models no container limits) is
said where it would be shown, never filled in.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from rich.console import Console

from gpufleet.model.event_correlator import EventCorrelator
from gpufleet.model.final_states import CRASH_LOOP_BACK_OFF, REJECTED
from gpufleet.model.images import normalized_image_name
from gpufleet.model.kubelet_events import (
    ALWAYS,
    created_message,
    killing_message,
    present_message,
    pull_policy,
    pulled_message,
    pulling_message,
    started_message,
)
from gpufleet.model.pod import Pod
from gpufleet.model.resources import format_units
from gpufleet.model.scheduler_records import event_message, recorded_by
from gpufleet.report._format import MISSING, human_duration, kubectl_age
from gpufleet.report.latency import STAGE_ORDER
from gpufleet.report.pod_table import NODE_STAGE_ORDER

SIMULATION, SUMMARY, KUBECTL = "simulation", "summary", "kubectl"
CONDITIONS = ("PodScheduled", "Initialized", "ContainersReady", "Ready")
#: what the layout prints for a field its source does not hold
NOT_KNOWN = {
    SUMMARY: "<not in summary.json>",
    SIMULATION: "<not modelled>",
    KUBECTL: "<none>",
}
#: the kubelet pod worker's requeue after a sync that failed, as one in a container's back-off does
#: (``backOffPeriod``, ``pkg/kubelet/kubelet.go``; its jitter of up to 50 % more,
#: ``workerBackOffPeriodJitterFactor``, is not modelled): each such sync records a BackOff Warning
KUBELET_BACK_OFF_PERIOD_S = 10.0
#: kube-apiserver's ``--event-ttl`` default (``pkg/controlplane/apiserver/options/options.go``: 1 h): an
#: Event's etcd lease, set again at each write (``pkg/registry/core/event/storage/storage.go`` ``TTLFunc``)
EVENT_TTL_S = 3600.0
#: the label column's width in kubectl's describe layout
LABEL_WIDTH = 16
#: the simulator's pod states (its log) and start-up stages (``pods[].stages``) in words
STAGE_WORDS = {
    "before_snapshot": "before the snapshot (since its creation)",
    "pending": "pending (scheduling)",
    "scheduling": "pending (scheduling)",
    "queued": "queued (Kueue)",
    "queueing": "queued (Kueue)",
    "gated": "scheduling gated",
    "scheduling_gated": "scheduling gated",
    "provisioning": "waiting for a new node",
    "node_provisioning": "waiting for a new node",
    "gang_wait": "waiting for its gang",
    "image_pull": "image pull",
    "model_load": "model load",
    "warmup": "warm-up",
    "starting": "container start",
    "other": "container start, other",
}
#: the states a pod is in until it is bound
BEFORE_BINDING = frozenset({"queued", "gated", "pending", "provisioning"})


def described_from_record(
    record: Mapping[str, Any],
    end_time_s: float,
    pod: Pod | None = None,
    log: Sequence[tuple[float, str]] | None = None,
    workload_status: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A simulated pod: its summary ``record``, the run's end (ages count back from it), when the
    scenario was simulated here its ``Pod`` (labels, annotations, priority, requests) and state log, and
    its workload's status (``summary.json``'s ``workload_status``: a Job's conditions and counts, a
    StatefulSet's replica counts)."""
    namespace, _, name = str(record["name"]).partition("/")
    workload = str(record.get("workload") or "")
    bound = record["bound_s"] is not None
    # a container waiting out the kubelet's back-off is not ready; its pod was initialized before it ran
    waiting = record["phase"] == "Running" and record["reason"] == CRASH_LOOP_BACK_OFF
    running = record["running_s"] is not None or bool(record.get("restarts"))
    ready = (
        record["phase"] == "Running"
        and record["working_s"] is not None
        and record["deleted_s"] is None
        and not waiting
    )
    return {
        "source": SIMULATION if pod is not None else SUMMARY,
        "name": name,
        "namespace": namespace,
        "priority": pod.priority if pod is not None else None,
        "priority_class": pod.priority_class_name if pod is not None else None,
        "scheduler": record["scheduler"],
        "node": record["node"],
        "start_time_s": record["bound_s"],  # the kubelet's startTime: when it takes the pod
        "labels": dict(pod.labels) if pod is not None else None,
        "annotations": dict(pod.annotations) if pod is not None else None,
        "status": None,
        "phase": record["phase"],
        "final_state": record.get("final_state"),  # Succeeded, Preempted, ScaledDown, ... (summary.json)
        "deleted_s": record["deleted_s"],
        "reason": None if waiting else record["reason"],  # the container's, not the pod's
        "message": record["message"],
        "controlled_by": _controlled_by(workload),
        "workload_status": dict(workload_status) if workload_status is not None else None,
        "requests": _units(pod.requests) if pod is not None else None,
        "limits": None,
        "gpus": record["gpus"],
        "devices": list(record["devices"]),
        "claims": list(record.get("claims") or []),
        "terminated": _simulated_terminated(
            record.get("terminated"), record["running_s"], record["finished_s"]
        ),
        "last_terminated": _simulated_terminated(record.get("last_terminated"), None, None),
        "waiting": CRASH_LOOP_BACK_OFF if waiting else None,
        "restarts": record.get("restarts"),
        "conditions": [
            {"type": kind, "status": str(holds)}
            for kind, holds in zip(CONDITIONS, (bound, running, ready, ready), strict=True)
        ],
        "events": (events := _implied_events(record, end_time_s, pod)),
        "event_notes": _event_notes(record, events, end_time_s),
        "stages": _stages(record, log),
        "node_stages": dict(record["node_stages"]),
        "end_time_s": end_time_s,
        "explanation": {"hints": hints} if (hints := (record["diagnosis"] or {}).get("hints")) else None,
    }


def _simulated_terminated(
    state: Mapping[str, Any] | None, started_s: float | None, finished_s: float | None
) -> dict[str, Any] | None:
    """A summary's container terminated state (``pods[].terminated``) as the describe record keeps it: the
    container, reason, exit code and, where known, when it started and finished (simulated times)."""
    if not state:
        return None
    return {
        "container": state.get("container"),
        "reason": state.get("reason"),
        "exit_code": state.get("exit_code"),
        "started": None if started_s is None else f"t={human_duration(started_s)} (simulated)",
        "finished": None if finished_s is None else f"t={human_duration(finished_s)} (simulated)",
    }


def _controlled_by(workload: str) -> str | None:
    """kubectl's ``Controlled By`` (``Kind/name``) of ``pods[].workload`` (``Kind/ns/name``); None for
    a pod of its own."""
    kind, _, rest = workload.partition("/")
    if not rest or kind == "Pod":
        return None
    return f"{kind}/{rest.partition('/')[2]}"


def _units(resources: Mapping[str, int]) -> dict[str, str]:
    return {name: format_units(name, value) for name, value in sorted(resources.items())}


def _event(kind: str, reason: str, at_s: float, end_s: float, source: str, message: str) -> dict[str, Any]:
    return {
        "type": kind,
        "reason": reason,
        "at_s": at_s,
        "age_s": end_s - at_s,
        "from": source,
        "message": message,
    }


def _implied_events(record: Mapping[str, Any], end_s: float, pod: Pod | None) -> list[dict[str, Any]]:
    """The Events the scheduler and the kubelet would have recorded, in upstream's words, from the
    record's times: FailedScheduling (a pod still pending), Scheduled, the kubelet's refusal at admission
    (``rejectPod``: a Warning with the pod's reason), at each container start Pulling/Pulled, Created and
    Started (``_start_events``), BackOff (each sync in a restart back-off), Killing (deleted); the
    kubelet's go through one event correlator, in time order."""
    key, scheduler = str(record["name"]), str(record["scheduler"])
    events = []
    if record["bound_s"] is None and record["message"] and record["phase"] == "Pending":
        events.append(
            _event(
                "Warning",
                "FailedScheduling",
                record["created_s"],
                end_s,
                scheduler,
                event_message(record["message"]),
            )
        )
    if record["bound_s"] is not None:
        assigned = f"Successfully assigned {key} to {record['node']}"
        events.append(_event("Normal", "Scheduled", record["bound_s"], end_s, scheduler, assigned))
    return sorted([*events, *_kubelet_events(record, end_s, pod)], key=lambda e: float(e["at_s"]))


def _kubelet_events(record: Mapping[str, Any], end_s: float, pod: Pod | None) -> list[dict[str, Any]]:
    """The kubelet's events about the pod as the API server is left with them (``EventCorrelator``): each
    with its count and the age of its first time."""
    container = _container(record, pod)
    field_path = f"spec.containers{{{container}}}" if container else ""
    recorded: list[tuple[float, str, str, str, str]] = []
    message = record["message"] or ""
    if record["phase"] == "Failed" and message.startswith(REJECTED) and record["finished_s"] is not None:
        recorded.append(
            (record["finished_s"], "Warning", str(record["reason"]), message.removeprefix(REJECTED), "")
        )
    recorded += [(*event, field_path) for event in _start_events(record, container)]
    recorded += _back_off_events(record, end_s, pod, container, field_path)
    deleted = record["deleted_s"]
    if (
        deleted is not None
        and record["running_s"] is not None
        and deleted <= (record["finished_s"] or deleted)
    ):
        recorded.append((deleted, "Normal", "Killing", killing_message(container).rstrip(), field_path))
    correlator = EventCorrelator()
    for at_s, kind, reason, text, path in sorted(recorded, key=lambda r: r[0]):
        correlator.record(at_s, kind, reason, text, path)
    return [
        {
            **_event(e.type, e.reason, e.last_s, end_s, "kubelet", e.message),
            "count": e.count,
            "first_age_s": end_s - e.first_s,
        }
        for e in correlator.events
    ]


def _container(record: Mapping[str, Any], pod: Pod | None) -> str:
    """The name of the container the simulation runs (its first): the events' ``involvedObject``."""
    return next(
        (str(s["container"]) for s in (record.get("terminated"), record.get("last_terminated")) if s),
        pod.behavior.container if pod is not None else "",
    )


def _container_starts(record: Mapping[str, Any]) -> list[float]:
    """``pods[].container_starts``; a summary.json written before it was kept has the latest start only."""
    starts = record.get("container_starts")
    if starts is not None:
        return [float(at) for at in starts]
    return [] if record["running_s"] is None else [float(record["running_s"])]


def _image(record: Mapping[str, Any]) -> tuple[str, str]:
    """The first container's image (``pods[].image``) and its ``imagePullPolicy``."""
    image = str(record.get("image") or "")
    return image, str(record.get("image_pull_policy") or pull_policy(image))


def _start_events(record: Mapping[str, Any], container: str) -> list[tuple[float, str, str, str]]:
    """``startContainer`` at each container start, restarts included: the image (``EnsureImageExists``: the
    pull before the first start where one was simulated, Pulling then Pulled with its times and size; else,
    under ``IfNotPresent`` or ``Never``, Pulled "already present on machine"; under ``Always`` the kubelet
    pulls again, which gpufleet does not simulate: no Pulled, see :func:`_event_notes`), then Created and
    Started."""
    image, policy = _image(record)
    pull = record.get("image_pull")
    out: list[tuple[float, str, str, str]] = []
    for index, at_s in enumerate(_container_starts(record)):
        if index == 0 and pull:
            pulled = normalized_image_name(image) if image else ""
            out.append((pull["requested_s"], "Normal", "Pulling", pulling_message(pulled)))
            waited_s = pull["landed_s"] - pull["requested_s"]
            message = pulled_message(pulled, pull["pull_s"], waited_s, int(pull["size_bytes"]))
            out.append((pull["landed_s"], "Normal", "Pulled", message))
        elif policy != ALWAYS and image:
            out.append((at_s, "Normal", "Pulled", present_message(image)))
        out.append((at_s, "Normal", "Created", created_message(container)))
        out.append((at_s, "Normal", "Started", started_message(container).rstrip()))
    return out


def _event_notes(record: Mapping[str, Any], events: Sequence[Mapping[str, Any]], end_s: float) -> list[str]:
    """What the Events table leaves out, said: the Pulling and Pulled events of a container started under
    ``imagePullPolicy: Always`` without a pull simulated, and the API server's ``--event-ttl`` (1 h after
    an Event's last write it is deleted: gpufleet keeps every Event to the end of the run)."""
    notes = []
    image, policy = _image(record)
    starts = len(_container_starts(record)) - (1 if record.get("image_pull") else 0)
    if image and policy == ALWAYS and starts > 0:
        notes.append(
            f"imagePullPolicy Always: the kubelet pulls {json.dumps(image)} at every container "
            f"start (Pulling, Pulled); gpufleet simulates no pull of an image on the node: {starts} "
            "start(s) without them"
        )
    expired = [e for e in events if e["at_s"] is not None and end_s - e["at_s"] > EVENT_TTL_S]
    if expired:
        notes.append(
            f"the API server deletes an Event {human_duration(EVENT_TTL_S)} after its last write "
            "(kube-apiserver --event-ttl, not modelled): kubectl would no longer list "
            f"{len(expired)} of these"
        )
    return notes


def _back_off_events(
    record: Mapping[str, Any], end_s: float, pod: Pod | None, container: str, field_path: str
) -> list[tuple[float, str, str, str, str]]:
    """``doBackOff``: while a container waits out its restart back-off (``pods[].back_offs``), each sync
    of the pod, one every :data:`KUBELET_BACK_OFF_PERIOD_S` from its exit, records the Warning BackOff
    "Back-off restarting failed container NAME in pod NAME_NAMESPACE(UID)" (``format.Pod``), until the
    back-off is over, the pod is deleted or the run ends."""
    namespace, _, name = str(record["name"]).partition("/")
    uid = NOT_KNOWN[SIMULATION if pod is not None else SUMMARY]  # a simulated pod has no metadata.uid
    message = f"Back-off restarting failed container {container} in pod {name}_{namespace}({uid})"
    stop = min(end_s, record["deleted_s"] if record["deleted_s"] is not None else end_s)
    out = []
    for ended_s, wait_s in record.get("back_offs") or []:
        syncs = math.ceil(wait_s / KUBELET_BACK_OFF_PERIOD_S)
        for k in range(syncs):
            at_s = ended_s + k * KUBELET_BACK_OFF_PERIOD_S
            if at_s > stop:
                break
            out.append((at_s, "Warning", "BackOff", message, field_path))
    return out


def _stages(record: Mapping[str, Any], log: Sequence[tuple[float, str]] | None) -> list[dict[str, Any]]:
    """The start-up: with the state log, each state entered and how long it lasted (the last until the
    pod finished, was deleted or the run ended: no duration), after the time before the run of a dump's pod
    created before it (from ``created_s``); else the record's stage durations."""
    if log is None:  # summary.json sorts its keys: the stages in the order a pod goes through them
        stages = sorted(record["stages"].items(), key=lambda item: _rank(STAGE_ORDER, item[0]))
        return [
            {"stage": STAGE_WORDS.get(stage, stage), "at_s": None, "duration_s": seconds}
            for stage, seconds in stages
        ]
    rows = []
    created = record["created_s"]
    if log and created is not None and created < log[0][0]:
        before = STAGE_WORDS["before_snapshot"]
        rows.append({"stage": before, "at_s": created, "duration_s": log[0][0] - created})
    for (at, state), (following, _) in zip(log, [*log[1:], (None, "")], strict=True):
        lasted = None if following is None else following - at
        rows.append({"stage": STAGE_WORDS.get(state, state), "at_s": at, "duration_s": lasted})
    bound_s = record["bound_s"]
    if bound_s is not None:  # binding is no state of its own: a mark before the first state after it
        leading = len(rows) - len(log)  # the row of the time before the snapshot, where there is one
        after = (i for i, (at, state) in enumerate(log) if at >= bound_s and state not in BEFORE_BINDING)
        rows.insert(
            leading + next(after, len(log)),
            {"stage": f"bound to {record['node']}", "at_s": bound_s, "duration_s": None},
        )
    return rows


def _rank(order: Sequence[str], name: str) -> tuple[int, str]:
    return (order.index(name) if name in order else len(order), name)


def described_from_kubectl(
    body: Mapping[str, Any],
    events: Sequence[Mapping[str, Any]],
    explanation: Mapping[str, Any] | None,
    now: float | None = None,
) -> dict[str, Any]:
    """A pod of a kubectl dump, its Events (those whose ``involvedObject``/``regarding`` is it) and, for
    a pending pod, gpufleet's explanation (``explain``'s record); ages count back from ``now``."""
    meta, spec, status = body.get("metadata") or {}, body.get("spec") or {}, body.get("status") or {}
    reading = time.time() if now is None else now
    containers = [c for c in spec.get("containers") or [] if isinstance(c, Mapping)]
    statuses = {cs.get("name"): cs for cs in status.get("containerStatuses") or [] if isinstance(cs, Mapping)}
    return {
        "source": KUBECTL,
        "name": meta.get("name"),
        "namespace": meta.get("namespace", "default"),
        "priority": spec.get("priority"),
        "priority_class": spec.get("priorityClassName"),
        "scheduler": spec.get("schedulerName", "default-scheduler"),
        "node": spec.get("nodeName"),
        "start_time": status.get("startTime"),
        "labels": dict(meta.get("labels") or {}),
        "annotations": dict(meta.get("annotations") or {}),
        "status": "Terminating" if meta.get("deletionTimestamp") else None,
        "phase": status.get("phase"),
        "reason": status.get("reason"),
        "message": status.get("message"),
        "controlled_by": next(
            (
                f"{ref.get('kind')}/{ref.get('name')}"
                for ref in meta.get("ownerReferences") or []
                if isinstance(ref, Mapping) and ref.get("controller")
            ),
            None,
        ),
        "workload_status": None,
        "containers": [
            {
                **manifest_container(c),
                "terminated": _dump_terminated(statuses.get(c.get("name")), "state"),
                "last_terminated": _dump_terminated(statuses.get(c.get("name")), "lastState"),
            }
            for c in containers
        ],
        "conditions": [
            {
                "type": c.get("type"),
                "status": c.get("status"),
                **({"message": c["message"]} if c.get("message") else {}),
            }
            for c in status.get("conditions") or []
            if isinstance(c, Mapping)
        ],
        "events": sorted((dump_event(e, reading) for e in events), key=lambda e: -(e["age_s"] or 0)),
        "explanation": dict(explanation) if explanation is not None else None,
    }


def manifest_container(container: Mapping[str, Any]) -> dict[str, Any]:
    """A container as a manifest writes it: its name, image, requests and limits (``DescribePodTemplate``,
    ``describeContainerResource``)."""
    resources = container.get("resources") or {}
    return {
        "name": container.get("name"),
        "image": container.get("image"),
        "requests": {str(k): str(v) for k, v in (resources.get("requests") or {}).items()},
        "limits": {str(k): str(v) for k, v in (resources.get("limits") or {}).items()},
    }


def _dump_terminated(status: Mapping[str, Any] | None, which: str) -> dict[str, Any] | None:
    """A container status's ``state`` or ``lastState`` (``which``) where it is ``terminated``: its reason,
    message, exit code, start and finish as the dump has them; None otherwise."""
    terminated = ((status or {}).get(which) or {}).get("terminated")
    if not isinstance(terminated, Mapping):
        return None
    return {
        "container": (status or {}).get("name"),
        "reason": terminated.get("reason"),
        "message": terminated.get("message"),
        "exit_code": terminated.get("exitCode", 0),
        "started": terminated.get("startedAt"),
        "finished": terminated.get("finishedAt"),
    }


def _terminated_lines(label: str, state: Mapping[str, Any] | None) -> list[str]:
    """kubectl's ``describeStatus`` of a terminated container state (``State``, ``Last State``): its
    Reason and Message where set, Exit Code, Started and Finished (where known)."""
    if not state:
        return []
    lines = [f"    {label + ':':<16}Terminated"]
    for name, key in (("Reason", "reason"), ("Message", "message")):
        if state.get(key):
            lines.append(f"      {name + ':':<14}{state[key]}")
    lines.append(f"      {'Exit Code:':<14}{state.get('exit_code')}")
    for name, key in (("Started", "started"), ("Finished", "finished")):
        if state.get(key):
            lines.append(f"      {name + ':':<14}{state[key]}")
    return lines


def dump_event(event: Mapping[str, Any], now: float) -> dict[str, Any]:
    """A core/v1 or events.k8s.io/v1 Event as kubectl describe lists it (``DescribeEvents``): its latest
    time, and for a repeated one its count (``count``, or its ``series``') and the age of its first time
    (``eventTime``, else ``firstTimestamp``)."""
    source = event.get("source") or {}
    first = epoch(event.get("eventTime") or event.get("firstTimestamp"))
    at = (
        event.get("lastTimestamp")
        or event.get("deprecatedLastTimestamp")
        or event.get("eventTime")
        or event.get("firstTimestamp")
    )
    return {
        "type": event.get("type"),
        "reason": event.get("reason"),
        "at": at,
        "age_s": None if (when := epoch(at)) is None else now - when,
        "from": source.get("component")
        or event.get("reportingController")
        or event.get("reportingComponent"),
        "message": event.get("message") or event.get("note"),
        "count": event.get("count") or (event.get("series") or {}).get("count") or 1,
        "first_age_s": None if first is None else now - first,
    }


def epoch(stamp: object) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def involves(event: Mapping[str, Any], namespace: str | None, name: str, kind: str = "Pod") -> bool:
    """Whether an Event (core/v1 ``involvedObject`` or events.k8s.io/v1 ``regarding``) is about the object
    (a pod in ``namespace``; a Node, cluster-scoped, with ``namespace`` None: its Events may be in any)."""
    target = event.get("involvedObject") or event.get("regarding") or {}
    return bool(
        target.get("kind") == kind
        and target.get("name") == name
        and (
            namespace is None
            or (target.get("namespace") or event.get("metadata", {}).get("namespace")) == namespace
        )
    )


def render_described(d: Mapping[str, Any], console: Console) -> None:
    """The record in ``kubectl describe pod``'s layout."""
    unknown = NOT_KNOWN[d["source"]]
    lines: list[str] = []

    def field(label: str, value: object) -> None:
        lines.append(f"{label + ':':<{LABEL_WIDTH}}{MISSING if value is None else value}")

    def mapping(label: str, values: Mapping[str, Any] | None) -> None:
        if values is None:
            field(label, unknown)
            return
        items = [f"{k}={v}" for k, v in sorted(values.items())] or ["<none>"]
        field(label, items[0])
        lines.extend(" " * LABEL_WIDTH + item for item in items[1:])

    field("Name", d["name"])
    field("Namespace", d["namespace"])
    field("Priority", unknown if d["priority"] is None and d["source"] == SUMMARY else d["priority"] or 0)
    if d["priority_class"]:
        field("Priority Class Name", d["priority_class"])
    field("Scheduler", d["scheduler"])
    field("Node", d["node"] or "<none>")
    field("Start Time", _start_time(d))
    mapping("Labels", d["labels"])
    mapping("Annotations", d["annotations"])
    field("Status", d["status"] or d["phase"])
    if d.get("final_state") and d["final_state"] != d["phase"]:
        field("Final State", d["final_state"])
    if d.get("deleted_s") is not None:
        field("Deleted", f"t={human_duration(d['deleted_s'])} (simulated)")
    if d["reason"]:
        field("Reason", d["reason"])
    if d["message"]:
        field("Message", d["message"])
    if d.get("controlled_by"):
        field("Controlled By", d["controlled_by"])
    _containers(d, lines, unknown)
    if d["conditions"]:
        lines.append("Conditions:")
        lines.extend(aligned([("Type", "Status"), *((c["type"], c["status"]) for c in d["conditions"])]))
    else:
        lines.append(f"{'Conditions:':<{LABEL_WIDTH}}<none>")
    lines += _workload_status(d)
    lines += events_lines(d) + _stages_lines(d) + _explanation(d)
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _start_time(d: Mapping[str, Any]) -> str:
    if d["source"] == KUBECTL:
        return str(d["start_time"] or "<none>")
    at = d["start_time_s"]
    return (
        "<none>"
        if at is None
        else f"t={human_duration(at)} (simulated; the run ends at {human_duration(d['end_time_s'])})"
    )


def _containers(d: Mapping[str, Any], lines: list[str], unknown: str) -> None:
    lines.append("Containers:")
    if d["source"] == KUBECTL:
        for c in d["containers"]:
            lines.append(f"  {c['name']}:")
            lines.append(f"    Image:      {c['image'] or '<none>'}")
            for label in ("Limits", "Requests"):
                values = c[label.lower()]
                lines.append(f"    {label}:" + ("" if values else " <none>"))
                lines.extend(f"      {k}: {v}" for k, v in sorted(values.items()))
            lines += _terminated_lines("State", c.get("terminated"))
            lines += _terminated_lines("Last State", c.get("last_terminated"))
        return
    lines.append("  (all containers, as the scheduler sums them)")
    requests = d["requests"]
    lines.append("    Limits:     " + NOT_KNOWN[SIMULATION])
    if requests is None:
        lines.append(f"    Requests:   {unknown} (GPUs: {d['gpus']:g})")
    else:
        lines.append("    Requests:" + ("" if requests else " <none>"))
        lines.extend(f"      {k}: {v}" for k, v in requests.items())
    if d["devices"]:
        lines.append(f"    GPU devices: {', '.join(d['devices'])}")
    for claim in d.get("claims") or []:
        held = ", ".join(f"{r['request']}: {r['device']}" for r in claim["results"])
        lines.append(f"    ResourceClaim {claim['name']}: {held}")
    states = [
        (label, d.get(key)) for label, key in (("State", "terminated"), ("Last State", "last_terminated"))
    ]
    known = [(label, state) for label, state in states if state]
    restarts = d.get("restarts")
    if known or restarts:  # its first container's, the one the simulation gives an exit code
        lines.append(f"  {(known[0][1]['container'] if known else None) or '(first container)'}:")
        if d.get("waiting"):  # kubectl's describeStatus of a waiting state
            lines += [f"    {'State:':<16}Waiting", f"      {'Reason:':<14}{d['waiting']}"]
        for label, state in known:
            lines += _terminated_lines(label, state)
        if restarts is not None:
            lines.append(f"    {'Restart Count:':<16}{restarts}")


def _workload_status(d: Mapping[str, Any]) -> list[str]:
    """The pod's Job as ``kubectl describe job`` shows it: its pod counts and its conditions, each
    with the simulated time it first held; its StatefulSet's replica counts (``status``)."""
    status = d.get("workload_status")
    if not status:
        return []
    kind = str(d["controlled_by"]).partition("/")[0]
    if "replicas" in status:
        return [_replica_status(kind, status)]
    counts = f"{status['active']} Active / {status['succeeded']} Succeeded / {status['failed']} Failed"
    if status.get("terminating"):
        counts += f" / {status['terminating']} Terminating"
    label = f"{kind} Pods Statuses:"
    lines = [label.ljust(max(LABEL_WIDTH, len(label) + 2)) + counts]
    if "failedIndexes" in status:  # kubectl describe job's Failed Indexes (backoffLimitPerIndex)
        label = f"{kind} Failed Indexes:"
        lines.append(label.ljust(max(LABEL_WIDTH, len(label) + 2)) + (status["failedIndexes"] or "<none>"))
    if status.get("deleted_s") is not None:  # its ttlSecondsAfterFinished expired
        label = f"{kind} Deleted:"
        deleted = f"t={human_duration(status['deleted_s'])} (ttlSecondsAfterFinished)"
        lines.append(label.ljust(max(LABEL_WIDTH, len(label) + 2)) + deleted)
    return [*lines, *condition_lines(status["conditions"], f"{kind} Conditions")]


def _replica_status(kind: str, status: Mapping[str, Any]) -> str:
    """A StatefulSet's ``status`` counts (``computeReplicaStatus``), in kubectl describe's ``|`` style."""
    label = f"{kind} Replicas:"
    counts = " | ".join(
        f"{status[key]} {word}"
        for key, word in (
            ("replicas", "total"),
            ("readyReplicas", "ready"),
            ("availableReplicas", "available"),
            ("currentReplicas", "current"),
            ("updatedReplicas", "updated"),
        )
    )
    return label.ljust(max(LABEL_WIDTH, len(label) + 2)) + counts


def condition_lines(conditions: Sequence[Mapping[str, Any]], label: str = "Conditions") -> list[str]:
    """A workload's conditions (``workload_status``), each with the simulated time it first held."""
    if not conditions:
        return [f"{label + ':':<{LABEL_WIDTH}}<none>"]
    rows = [("Type", "Status", "Reason", "Since", "Message")]
    for c in conditions:
        rows.append((c["type"], c["status"], c["reason"], f"t={human_duration(c['time_s'])}", c["message"]))
    return [f"{label}:", *aligned(rows)]


def time_cell(value: object) -> str:
    """A simulated time (seconds) as ``t=...``, a dump's as it has it."""
    if value is None:
        return MISSING
    return f"t={human_duration(value)}" if isinstance(value, int | float) else str(value)


def aligned(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Rows as kubectl describe prints its tables: columns padded to their widest cell, the last
    column (a message) whole, however long."""
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return [
        indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def events_lines(d: Mapping[str, Any]) -> list[str]:
    if not d["events"]:
        return [f"{'Events:':<{LABEL_WIDTH}}<none>"]
    aged = "at the end of the run" if d["source"] != KUBECTL else "now"
    notes = [f"  (gpufleet: {note})" for note in d.get("event_notes") or []]
    return [f"Events (ages {aged}):", *aligned(event_rows(d["events"])), *notes]


def event_rows(events: Sequence[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    """``DescribeEvents``' table: a repeated event's Age is ``<last> (xN over <first>)``."""
    rows: list[tuple[str, ...]] = [
        ("Type", "Reason", "Age", "From", "Message"),
        ("----", "------", "----", "----", "-------"),
    ]
    for e in events:
        age = MISSING if e["age_s"] is None else kubectl_age(max(e["age_s"], 0.0))
        count, first = e.get("count") or 1, e.get("first_age_s")
        if count > 1 and first is not None:
            age = f"{age} (x{count} over {kubectl_age(max(first, 0.0))})"
        rows.append((e["type"] or "", e["reason"] or "", age, e["from"] or "", e["message"] or ""))
    return rows


def _stages_lines(d: Mapping[str, Any]) -> list[str]:
    if d["source"] == KUBECTL:
        return []
    stages, node_stages = d["stages"], d["node_stages"]
    if not stages and not node_stages:
        return ["Start-up (gpufleet): <none>"]
    rows = [("Stage", "At", "Lasted")]
    for index, s in enumerate(stages):
        at = MISSING if s["at_s"] is None else f"t={human_duration(s['at_s'])}"
        lasted = human_duration(s["duration_s"])
        if s["duration_s"] is None:
            lasted = "until the end" if index == len(stages) - 1 else ""
        rows.append((s["stage"], at, lasted))
    chain = (
        node_stages.items()
        if d["source"] == SIMULATION
        else sorted(node_stages.items(), key=lambda item: _rank(NODE_STAGE_ORDER, item[0]))
    )  # summary.json sorts its keys
    rows.extend((f"node {stage}", MISSING, human_duration(seconds)) for stage, seconds in chain)
    return [
        "Start-up (gpufleet, simulated):",
        *aligned(rows),
    ]


def _explanation(d: Mapping[str, Any]) -> list[str]:
    e = d["explanation"]
    if not e:
        return []
    writer = recorded_by(str(e.get("scheduler")), e.get("scheduler_simulated", True))
    lines = [f"{writer}, {r['source']}: {r['message']}" for r in e.get("recorded") or []]
    if e.get("message"):
        lines.append(f"gpufleet: {e['message']}")
    if e.get("schedulable_now"):
        lines.append(f"would be placed on {' or '.join(e['equally_good_nodes'])} now")
    if e.get("verdict"):
        lines.append(e["verdict"])
    hints = e.get("hints") or (e.get("diagnosis") or {}).get("hints") or []
    lines.extend(f"- {hint}" for hint in hints)
    return ["Explanation (gpufleet explain):", *(f"  {line}" for line in lines)]
