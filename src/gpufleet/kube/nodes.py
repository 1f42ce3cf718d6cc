"""Nodes (``v1`` Node, and the Node-like template of a NodePool) as kube-scheduler sees them.

``status.capacity`` and ``status.allocatable`` (which defaults to capacity, as the
scheduler's ``NodeInfo`` reads it), labels, ``spec.taints`` and ``spec.unschedulable``. A
node without ``pods`` gets the kubelet's default ``maxPods`` of 110. Pressure conditions that hold
are warnings: the node lifecycle controller turns them into taints, which a snapshot carries in
``spec.taints`` anyway. A Node of a scenario or dump (``readiness``) has its Ready condition read:
its status (``True``, or ``False`` / ``Unknown``: NotReady, which cluster-autoscaler counts; a node with
no Ready condition, as a hand-written manifest has none, is Ready) and ``lastTransitionTime``, with its
``metadata.creationTimestamp`` and the latest time the object shows (``model.node_readiness`` maps them
onto the run's clock). kube-scheduler never reads the condition, only the ``node.kubernetes.io/not-ready``
(Ready ``False``) or ``node.kubernetes.io/unreachable`` (``Unknown``) taint the node lifecycle controller
adds at its next pass (``doNoScheduleTaintingPass``); a NotReady node of a dump without either taint was
caught before that pass: it gets the ``NoSchedule`` taint the controller adds, with a warning (the
``NoExecute`` one, and the evictions it brings after ``tolerationSeconds``, are not modelled). A template of
a NodePool (no ``readiness``) keeps a Ready condition not ``True`` as a warning: its nodes are Ready.
``status.images`` (each image's ``names`` and ``sizeBytes``) are the images already on the node, by
every name, as the scheduler's snapshot indexes them for ImageLocality (``createImageExistenceMap``).
The annotation ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"`` keeps the node (or
the NodePool's nodes) from cluster-autoscaler's scale-down; an annotation
``delay-deletion.cluster-autoscaler.kubernetes.io/<anything>`` (any value) has cluster-autoscaler wait before
deleting it, for as long as ``--node-deletion-delay-timeout``: nobody removes it in a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from gpufleet.kube import pod_annotations, resource_lists, taints
from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.problems import Reporter, invalid, unsupported
from gpufleet.model.node import NO_SCHEDULE, Node, Taint
from gpufleet.model.node_readiness import LIFECYCLE_TAINT_KEYS, NOT_READY_TAINT_KEY, UNREACHABLE_TAINT_KEY
from gpufleet.model.resources import PODS

#: The kubelet's default ``maxPods``.
DEFAULT_MAX_PODS = 110
#: The status of each condition when the node is healthy.
_HEALTHY = {"Ready": "True"}
_HEALTHY_OTHERWISE = "False"

#: cluster-autoscaler's node annotation that keeps the node from scale-down (``ScaleDownDisabledKey``)
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
#: cluster-autoscaler's ``DelayDeletionAnnotationPrefix``
DELAY_DELETION_PREFIX = "delay-deletion.cluster-autoscaler.kubernetes.io/"


def node(
    meta: Meta, body: Mapping[str, Any], report: Reporter, name: str | None = None, readiness: bool = False
) -> Node:
    """The node ``body`` describes (``name`` overrides ``metadata.name``); problems go to ``report``.
    ``readiness``: a Node of a scenario or dump, whose Ready condition and times are read."""
    pod_annotations.read(meta.annotations, report.at("metadata"), pod_annotations.NO_KEYS)
    spec, status = mapping(body.get("spec")), mapping(body.get("status"))
    capacity = resource_lists.read(status.get("capacity"), report, "status.capacity")
    allocatable = resource_lists.read(status.get("allocatable"), report, "status.allocatable") or dict(
        capacity
    )
    if not mapping(status.get("capacity")) and not mapping(status.get("allocatable")):
        report.error("status.capacity", "a node needs capacity (cpu, memory, pods, ...)")
    allocatable.setdefault(PODS, capacity.get(PODS, DEFAULT_MAX_PODS))
    if capacity:
        capacity.setdefault(PODS, allocatable[PODS])
    node_taints = taints.taints(spec.get("taints"), report, "spec.taints")
    _warn_conditions(status, report, readiness)
    ready, since, observed = _ready_condition(status, report) if readiness else ("True", None, [])
    metadata = mapping(body.get("metadata"))
    created = (
        unix_time(metadata.get("creationTimestamp"), report, "metadata.creationTimestamp")
        if readiness
        else None
    )
    if ready != "True" and not any(
        t.key in (NOT_READY_TAINT_KEY, UNREACHABLE_TAINT_KEY) for t in node_taints
    ):
        key = LIFECYCLE_TAINT_KEYS.get(ready, NOT_READY_TAINT_KEY)
        node_taints = (*node_taints, Taint(key, "", NO_SCHEDULE))
        report.warn(
            "spec.taints",
            f"Ready={ready} without the {key} taint: tainted {key}:{NO_SCHEDULE}, as the node lifecycle "
            "controller taints it at its next pass (kube-scheduler reads the taint, not the condition)",
        )
    times = [t for t in (*observed, created) if t is not None]
    return Node(
        name=name if name is not None else meta.name,
        labels=dict(meta.labels),
        taints=node_taints,
        unschedulable=bool(spec.get("unschedulable")),
        capacity=capacity,
        allocatable=allocatable,
        images=_images(status),
        scale_down_disabled=meta.annotations.get(SCALE_DOWN_DISABLED) == "true",
        delay_deletion=any(key.startswith(DELAY_DELETION_PREFIX) for key in meta.annotations),
        ready=ready,
        ready_since_unix=since,
        created_unix=created,
        observed_unix=max(times) if times else None,
    )


def _images(status: Mapping[str, Any]) -> dict[str, int]:
    images: dict[str, int] = {}
    for image in items(status.get("images")):
        size = image.get("sizeBytes")
        for name in image.get("names") or ():
            if isinstance(name, str):
                images[name] = size if isinstance(size, int) and size > 0 else 0
    return images


def _warn_conditions(status: Mapping[str, Any], report: Reporter, readiness: bool) -> None:
    for i, condition in enumerate(items(status.get("conditions"))):
        kind, state = condition.get("type"), condition.get("status")
        if readiness and kind == "Ready":
            continue  # read (``_ready_condition``)
        if state != _HEALTHY.get(str(kind), _HEALTHY_OTHERWISE):
            note = "the node is treated as Ready" if kind == "Ready" else ""
            report.not_modelled(f"status.conditions[{i}]", f"{kind}={state}", note=note)


def _ready_condition(status: Mapping[str, Any], report: Reporter) -> tuple[str, float | None, list[float]]:
    """The Ready condition's status (``True`` where there is none) and ``lastTransitionTime``, and every
    condition's ``lastHeartbeatTime`` and ``lastTransitionTime``, as Unix seconds."""
    ready, since, seen = "True", None, []
    for i, condition in enumerate(items(status.get("conditions"))):
        where = f"status.conditions[{i}]"
        heartbeat = unix_time(condition.get("lastHeartbeatTime"), report, f"{where}.lastHeartbeatTime")
        transition = unix_time(condition.get("lastTransitionTime"), report, f"{where}.lastTransitionTime")
        seen += [t for t in (heartbeat, transition) if t is not None]
        if condition.get("type") == "Ready":
            state = condition.get("status")
            if state not in ("True", "False", "Unknown"):
                report.error(f"{where}.status", unsupported(state, ("True", "False", "Unknown")))
                continue
            ready, since = str(state), transition
    return ready, since, seen


def unix_time(value: object, report: Reporter, path: str) -> float | None:
    """An RFC 3339 time (YAML may have read it as a date-time) as Unix seconds; one without a zone is UTC,
    as the API server writes every time. None when absent or invalid (reported)."""
    if value is None or value == "":
        return None
    at = value
    if not isinstance(at, datetime):
        try:
            at = datetime.fromisoformat(str(value))
        except ValueError:
            report.error(path, invalid(value, "must be an RFC 3339 time"))
            return None
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).timestamp()
