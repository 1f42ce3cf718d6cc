"""Start-up time measured: for every pod, where the time from its creation to serving went.

Pure code over Kubernetes objects (dicts as ``kubectl get pods,nodes,events -A -o json`` gives
them) and, from a watch, `Observations`. The start chain is seed 000's: Pending and scheduling,
waiting for a node (cluster-autoscaler's ``TriggeredScaleUp`` event, the node's creation, its Ready
condition, its ``nvidia.com/gpu`` allocatable), image pull (the kubelet's ``Pulled`` events with
the duration the kubelet reports), container start, and readiness (model load and warm-up, until
the pod's Ready condition turns True). Each pod's stages add up to ``working - created``
(DESIGN.md's output contract):

- ``scheduling``: pending with no node being made for it: creation to binding (the ``PodScheduled``
  condition's ``lastTransitionTime``), less ``node_provisioning``;
- ``node_provisioning``: from the pod's ``TriggeredScaleUp`` event until the node it was then bound
  to (created after that event) had its GPUs allocatable (a watch) or turned Ready (a dump, which
  does not record when GPUs became allocatable: the time from Ready to binding is ``other``);
- ``image_pull``: the ``Pulled`` events' "including waiting" durations (an image already present
  takes 0), at most the time from binding to serving;
- ``readiness``: from the last container's start (``state.running.startedAt``; the ``Started``
  events' first occurrence once a container restarted) to Ready; model load and warm-up together;
- ``other``: the rest of binding to serving (sandbox, volumes, container creation).

What the objects do not record is said in ``notes``, never guessed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from gpufleet.live.startup_objects import (
    GPU,
    BadField,
    EventRecord,
    amount,
    condition,
    node_gpus,
    node_group,
    optional_time,
    parse_time,
    pod_gpus,
    read_event,
    read_pulled,
    scale_up_groups,
    true_since,
)
from gpufleet.live.startup_records import (
    STAGES,
    ImagePull,
    NodeStartup,
    Observations,
    PodStartup,
    ScaleUp,
    StartupMeasurement,
)
from gpufleet.live.startup_summary import summary

__all__ = ["InputProblem", "Observations", "StartupInputError", "StartupMeasurement", "measure", "summary"]

T = TypeVar("T")
DIGITS = 6
#: a node created up to this long before a pod's TriggeredScaleUp event came with that scale-up: the
#: event is recorded after the nodes are asked for, and both times are in whole seconds
SCALE_UP_SLACK_S = 2.0
NO_GPU_TIME = (
    "gpu allocatable time not recorded in a dump: node_provisioning ends at the node's Ready, and "
    "Ready to binding (the GPUs registering, then the scheduler's next attempt) counts as other"
)


@dataclass(frozen=True)
class InputProblem:
    """An object that cannot be read: which list (``pods``, ``nodes``, ``events``), its index, its field."""

    kind: str
    index: int
    label: str
    path: str
    message: str


class StartupInputError(ValueError):
    def __init__(self, problems: list[InputProblem]) -> None:
        super().__init__("; ".join(f"{p.label}: {p.path}: {p.message}" for p in problems))
        self.problems = problems


def measure(
    pods: Sequence[Mapping[str, Any]],
    nodes: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]],
    observed: Observations | None = None,
    *,
    namespace: str | None = None,
    since: float | None = None,
    lookback_s: float | None = None,
    now: float | None = None,
    group_key: str | None = None,
) -> StartupMeasurement:
    """Measure every pod's start: of ``namespace``, created at or after ``since`` (seconds since the
    epoch) or in the last ``lookback_s`` before the reading, when given.

    ``now`` is the moment of the reading (a pod not yet serving has its stages up to it); by default
    the latest moment the objects record. ``group_key`` is the node label (or annotation) naming a
    node's group. Raises `StartupInputError` listing every object field that cannot be read.
    """
    problems: list[InputProblem] = []
    seen = observed or Observations()

    def read_node(obj: Mapping[str, Any]) -> NodeStartup:
        return _node(obj, seen, observed is not None, group_key)

    node_records = [
        node
        for i, obj in enumerate(nodes)
        if (node := _guard(problems, "nodes", i, obj, read_node)) is not None
    ]
    by_node = {node.name: node for node in node_records}
    about = _events_by_pod(events, problems)
    kept = [
        (i, obj)
        for i, obj in enumerate(pods)
        if namespace is None or (obj.get("metadata") or {}).get("namespace") == namespace
    ]
    moments = [_pod_moments(problems, i, obj, about, seen) for i, obj in kept]
    if problems:
        raise StartupInputError(problems)
    read = [m for m in moments if m is not None]
    latest = [
        *(t for m in read for t in m.times()),
        *(t for n in node_records for t in (n.created, n.ready, n.gpu_ready, n.deleted) if t is not None),
    ]
    end = now if now is not None else max(latest, default=since or 0.0)
    if since is None and lookback_s is not None:
        since = end - lookback_s
    chosen = [m for m in read if since is None or m.created >= since]
    origin = since if since is not None else min((m.created for m in chosen), default=end)
    records = [_pod_record(m, by_node, end) for m in chosen]
    notes = _notes(records, by_node, watched=observed is not None)
    launches: dict[str, float] = {}
    for pod in records:
        if pod.node is not None and pod.node_launched is not None:
            launches[pod.node] = min(launches.get(pod.node, pod.node_launched), pod.node_launched)
    nodes_launched = [replace(node, launched=launches.get(node.name)) for node in node_records]
    return StartupMeasurement(
        pods=tuple(sorted(records, key=lambda pod: pod.name)),
        nodes=tuple(sorted(nodes_launched, key=lambda node: node.name)),
        origin=origin,
        end=end,
        watched=observed is not None,
        notes=tuple(notes),
    )


def _guard(
    problems: list[InputProblem],
    kind: str,
    index: int,
    obj: Mapping[str, Any],
    read: Callable[[Mapping[str, Any]], T],
) -> T | None:
    try:
        return read(obj)
    except BadField as exc:
        problems.append(InputProblem(kind, index, _label(kind, obj), exc.path, exc.message))
        return None


def _label(kind: str, obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    name = (metadata or {}).get("name") or "?"
    namespace = (metadata or {}).get("namespace")
    singular = {"pods": "Pod", "nodes": "Node", "events": "Event"}[kind]
    return f"{singular}/{namespace}/{name}" if namespace else f"{singular}/{name}"


def _name(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping) or not metadata.get("name"):
        raise BadField("metadata.name", "Required value")
    return str(metadata["name"])


# --- nodes ----------------------------------------------------------------------------------------


def _node(obj: Mapping[str, Any], seen: Observations, watched: bool, group_key: str | None) -> NodeStartup:
    name = _name(obj)
    metadata = obj["metadata"]
    created = parse_time(metadata.get("creationTimestamp"), "metadata.creationTimestamp")
    ready = seen.node_ready.get(name)
    notes = []
    if ready is None:
        ready = true_since(obj, "Ready")
        if ready is not None and watched:
            notes.append("Ready before the watch began: its time is the Ready condition's last transition")
    status = obj.get("status") or {}
    capacity = dict(status.get("capacity") or {})
    gpus = node_gpus(obj) or amount(capacity.get(GPU, 0))
    if watched and gpus and name not in seen.gpu_allocatable:
        notes.append("GPUs allocatable before the watch began: their time is not recorded")
    template = {
        "labels": dict(metadata.get("labels") or {}),
        "taints": list((obj.get("spec") or {}).get("taints") or []),
        "capacity": capacity,
        "allocatable": dict(status.get("allocatable") or {}),
    }
    return NodeStartup(
        name=name,
        group=node_group(obj, group_key),
        gpus=gpus,
        created=created,
        ready=ready,
        gpu_ready=seen.gpu_allocatable.get(name),
        deleted=optional_time(metadata, "deletionTimestamp", "metadata"),
        template=template,
        notes=tuple(notes),
        observed_start=name in seen.node_ready or name in seen.gpu_allocatable,
    )


# --- events ---------------------------------------------------------------------------------------


def _events_by_pod(
    events: Sequence[Mapping[str, Any]], problems: list[InputProblem]
) -> dict[tuple[str, str], list[EventRecord]]:
    about: dict[tuple[str, str], list[EventRecord]] = defaultdict(list)
    for index, event in enumerate(events):
        record = _guard(problems, "events", index, event, read_event)
        if record is not None and record.kind == "Pod":
            about[(record.namespace, record.name)].append(record)
    for records in about.values():
        records.sort(key=lambda record: record.at)
    return about


# --- pods: the moments ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Moments:
    name: str
    obj: Mapping[str, Any]
    created: float
    bound: float | None
    running: float | None
    working: float | None
    finished: float | None
    deleted: float | None
    events: tuple[EventRecord, ...]
    notes: tuple[str, ...]

    def times(self) -> Iterable[float]:
        moments = (self.created, self.bound, self.running, self.working, self.finished, self.deleted)
        yield from (t for t in moments if t is not None)
        yield from (event.at for event in self.events)


def _pod_moments(
    problems: list[InputProblem],
    index: int,
    obj: Mapping[str, Any],
    about: Mapping[tuple[str, str], list[EventRecord]],
    seen: Observations,
) -> _Moments | None:
    try:
        name = _name(obj)
        metadata = obj["metadata"]
        namespace = str(metadata.get("namespace") or "default")
        key = f"{namespace}/{name}"
        uid = metadata.get("uid")
        events = tuple(e for e in about.get((namespace, name), []) if not (uid and e.uid and e.uid != uid))
        notes: list[str] = []
        running = seen.pod_running.get(key)
        if running is None:
            running = _running(obj, events, notes)
        working = seen.pod_ready.get(key)
        if working is None:
            working = true_since(obj, "Ready")
            if working is not None and _restarts(obj):
                notes.append(
                    "containers restarted: the Ready condition's lastTransitionTime is its last change, "
                    "the first Ready is not recorded (a watch records it)"
                )
        phase = (obj.get("status") or {}).get("phase")
        if working is None and phase in ("Succeeded", "Failed") and running is not None:
            working = running
            notes.append(
                "the pod ended: its Ready history is not kept, serving counted from the container start"
            )
        created = parse_time(metadata.get("creationTimestamp"), "metadata.creationTimestamp")
        later = [
            seen.pod_bound.get(key, true_since(obj, "PodScheduled")),
            running,
            working,
            _finished(obj) if phase in ("Succeeded", "Failed") else None,
            optional_time(metadata, "deletionTimestamp", "metadata"),
        ]
        if any(t is not None and t < created for t in later):  # clocks apart: the kubelet's, the API's
            notes.append(
                "a time before the pod's creation (a node's clock behind the API server's?) is taken "
                "as its creation"
            )
        bound, running, working, finished, deleted = (None if t is None else max(t, created) for t in later)
        return _Moments(
            name=key,
            obj=obj,
            created=created,
            bound=bound,
            running=running,
            working=working,
            finished=finished,
            deleted=deleted,
            events=events,
            notes=tuple(notes),
        )
    except BadField as exc:
        problems.append(InputProblem("pods", index, _label("pods", obj), exc.path, exc.message))
        return None


def _statuses(obj: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    return list(enumerate((obj.get("status") or {}).get("containerStatuses") or []))


def _restarts(obj: Mapping[str, Any]) -> int:
    return sum(int(status.get("restartCount") or 0) for _, status in _statuses(obj))


def _running(obj: Mapping[str, Any], events: Sequence[EventRecord], notes: list[str]) -> float | None:
    """When the last of the pod's containers first started, or None until every one has."""
    containers = [str(c.get("name")) for c in (obj.get("spec") or {}).get("containers") or []]
    if _restarts(obj):
        first: dict[str, float] = {}
        for event in events:  # in time order: the first Started of a container is its first start
            if event.reason == "Started" and event.message.startswith("Started container "):
                first.setdefault(event.message.removeprefix("Started container "), event.at)
        if containers and all(name in first for name in containers):
            return max(first[name] for name in containers)
        notes.append(
            "containers restarted and their first Started events are gone: startedAt is their last start"
        )
    starts = []
    for index, status in _statuses(obj):
        state = status.get("state") or {}
        which = "running" if state.get("running") else "terminated"
        current = state.get(which)
        if isinstance(current, Mapping) and current.get("startedAt"):
            path = f"status.containerStatuses[{index}].state.{which}.startedAt"
            starts.append(parse_time(current["startedAt"], path))
    if not starts or len(starts) < len(containers):
        return None
    return max(starts)


def _finished(obj: Mapping[str, Any]) -> float | None:
    ends = []
    for index, status in _statuses(obj):
        terminated = (status.get("state") or {}).get("terminated")
        if isinstance(terminated, Mapping):
            at = optional_time(
                terminated, "finishedAt", f"status.containerStatuses[{index}].state.terminated"
            )
            if at is not None:
                ends.append(at)
    return max(ends, default=None)


# --- pods: the stages -----------------------------------------------------------------------------


def _pod_record(moments: _Moments, nodes: Mapping[str, NodeStartup], end: float) -> PodStartup:
    obj = moments.obj
    status = obj.get("status") or {}
    notes = list(moments.notes)
    pulls = _pulls(moments, notes)
    scale_up = _scale_up(moments.events)
    gpus = pod_gpus(obj)
    node_name = (obj.get("spec") or {}).get("nodeName") or None
    node = nodes.get(node_name) if node_name else None
    until = next(t for t in (moments.working, moments.finished, moments.deleted, end) if t is not None)
    waited_until = min(moments.bound, until) if moments.bound is not None else until
    stages: dict[str, float] = defaultdict(float)
    node_launched = _waiting_stages(stages, notes, moments, scale_up, node, gpus, waited_until)
    if moments.bound is not None and until > moments.bound:
        _started_stages(stages, notes, moments.bound, moments.running, until, pulls)
    scheduled = condition(obj, "PodScheduled")
    pending_reason = scheduled[1] if scheduled is not None and scheduled[1].get("status") == "False" else None
    return PodStartup(
        name=moments.name,
        phase=str(status.get("phase") or "Pending"),
        reason=_reason(obj, pending_reason),
        node=node_name,
        gpus=gpus,
        owner=_owner(obj),
        created=moments.created,
        bound=moments.bound,
        running=moments.running,
        working=moments.working,
        finished=moments.finished,
        deleted=moments.deleted,
        message=_message(pending_reason, moments.events) if moments.bound is None else None,
        stages={name: round(stages[name], DIGITS) for name in STAGES if stages.get(name, 0.0) > 0},
        pulls=pulls,
        scale_up=scale_up,
        notes=tuple(notes),
        node_launched=node_launched,
    )


def _waiting_stages(
    stages: dict[str, float],
    notes: list[str],
    moments: _Moments,
    scale_up: ScaleUp | None,
    node: NodeStartup | None,
    gpus: float,
    until: float,
) -> float | None:
    """Creation to binding (or to ``until``): ``scheduling``, ``node_provisioning`` and, from a dump,
    the node's Ready to the binding as ``other``. Returns when the scale-up that made the pod's node
    began, if its node was launched for it."""
    created = moments.created
    if scale_up is None or scale_up.at >= until:
        stages["scheduling"] += max(until - created, 0.0)
        return None
    if moments.bound is None:
        launched = max(scale_up.at, created)
        stages["scheduling"] += launched - created
        stages["node_provisioning"] += until - launched
        notes.append(
            "waiting for the scale-up it triggered; which node is meant for it is not recorded until bound"
        )
        return None
    if node is None or node.created < scale_up.at - SCALE_UP_SLACK_S:
        where = f"node {node.name}, which existed before" if node else "a node not in the input"
        notes.append(f"triggered a scale-up ({', '.join(scale_up.groups)}) but was bound to {where}")
        stages["scheduling"] += until - created
        return None
    # cluster-autoscaler records the event once it has asked for the nodes: a provider that makes the
    # Node at once (kwok's) makes it first, so the scale-up began at the earlier of the two
    launched = max(min(scale_up.at, node.created), created)
    stages["scheduling"] += launched - created
    uses_gpus = gpus > 0 and node.gpus > 0
    ready = node.gpu_ready if uses_gpus and node.gpu_ready is not None else node.ready
    if ready is None or ready > until:
        notes.append(f"node {node.name}'s first Ready is not recorded: node_provisioning ends at the binding")
        ready = until
    ready = max(ready, launched)
    stages["node_provisioning"] += ready - launched
    rest = "other" if uses_gpus and node.gpu_ready is None else "scheduling"
    stages[rest] += until - ready
    return min(scale_up.at, node.created)


def _started_stages(
    stages: dict[str, float],
    notes: list[str],
    bound: float,
    running: float | None,
    until: float,
    pulls: Sequence[ImagePull],
) -> None:
    """Binding to serving (or to ``until``): ``image_pull``, ``readiness`` and ``other``."""
    window = until - bound
    pulled = min(sum(pull.waiting_s for pull in pulls if pull.at <= until), window)
    if running is None or running > until:
        readiness = 0.0
        if running is None:
            notes.append("its containers have not all started")
    else:
        readiness = until - min(max(running, bound + pulled), until)
    stages["image_pull"] += pulled
    stages["readiness"] += readiness
    stages["other"] += window - pulled - readiness


def _pulls(moments: _Moments, notes: list[str]) -> tuple[ImagePull, ...]:
    pulls = []
    for event in moments.events:
        if event.reason != "Pulled":
            continue
        pulled = read_pulled(event.message)
        if pulled is None:
            notes.append(f"a Pulled message not in the kubelet's format, not read: {event.message!r}")
            continue
        pulls.append(
            ImagePull(
                pulled.image, event.at, pulled.pull_s, pulled.waiting_s, pulled.size_bytes, pulled.present
            )
        )
    return tuple(pulls)


def _scale_up(events: Sequence[EventRecord]) -> ScaleUp | None:
    for event in events:
        if event.reason == "TriggeredScaleUp":
            return ScaleUp(event.at, tuple(scale_up_groups(event.message)))
    return None


def _reason(obj: Mapping[str, Any], pending: Mapping[str, Any] | None) -> str | None:
    status = obj.get("status") or {}
    if status.get("reason"):
        return str(status["reason"])
    if status.get("phase") in ("Succeeded", "Failed"):
        for _, container in _statuses(obj):
            terminated = (container.get("state") or {}).get("terminated") or {}
            if terminated.get("reason"):
                return str(terminated["reason"])
    if pending is not None and pending.get("reason"):
        return str(pending["reason"])
    return None


def _message(pending: Mapping[str, Any] | None, events: Sequence[EventRecord]) -> str | None:
    """The scheduler's words for a pod not bound: its PodScheduled=False message, else its latest
    ``FailedScheduling`` event."""
    if pending is not None and pending.get("message"):
        return str(pending["message"])
    failed = [event.message for event in events if event.reason == "FailedScheduling"]
    return failed[-1] if failed else None


def _owner(obj: Mapping[str, Any]) -> str | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return f"{ref.get('kind')}/{ref.get('name')}"
    return None


def _notes(pods: Sequence[PodStartup], nodes: Mapping[str, NodeStartup], watched: bool) -> list[str]:
    """What the input cannot record, said once for the measurement."""
    notes = []
    if not watched:
        if any(node.gpus > 0 for node in nodes.values()):
            notes.append(NO_GPU_TIME)
        notes.append(
            "a dump keeps each condition's last transition only: Ready times are the last change of Ready "
            "(a watch records the first)"
        )
    if any("readiness" in pod.stages for pod in pods):
        notes.append("readiness is model load and warm-up together: the objects cannot separate them")
    return notes
