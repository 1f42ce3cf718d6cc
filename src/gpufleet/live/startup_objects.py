"""Reading the moments Kubernetes objects record: timestamps, conditions, events and their messages.

The objects are plain dicts as ``kubectl get -o json`` gives them. Times are RFC 3339: ``metav1.Time``
fields (``creationTimestamp``, a condition's ``lastTransitionTime``, ``startedAt``, an Event's
``firstTimestamp``/``lastTimestamp``) have 1 s resolution; ``metav1.MicroTime`` (an Event's
``eventTime``, ``series.lastObservedTime``) has microseconds. Both read as float seconds since the
epoch.

Events come in two shapes: ``v1`` Event (``involvedObject``, ``message``, ``firstTimestamp``,
``lastTimestamp``, ``eventTime``), which ``kubectl get events -o json`` gives, and
``events.k8s.io/v1`` Event (``regarding``, ``note``, ``eventTime``, ``deprecatedFirstTimestamp``).
An event's moment is its first occurrence: ``eventTime``, else ``firstTimestamp``, else
``lastTimestamp``, else its creation (the event recorder's correlator counts repeats of an event
in ``count`` and moves ``lastTimestamp``, k8s.io/client-go ``tools/record/events_cache.go``).

Messages parsed, in the words of their upstream sources:

- kubelet ``Pulled`` (k8s.io/kubernetes v1.34.10 ``pkg/kubelet/images/image_manager.go``,
  ``EnsureImageExists``): ``Successfully pulled image "X" in 3.2s (3.5s including waiting). Image
  size: N bytes.``, the durations Go ``time.Duration`` strings truncated to milliseconds; older
  kubelets' ``... in 3.2s (3.5s including waiting)`` (no size) and ``... in 3.5s`` (one duration,
  waiting included) are read too; or ``Container image "X" already present on machine`` (no pull).
- cluster-autoscaler ``TriggeredScaleUp`` (1.34.5 ``processors/status/eventing_scale_up_processor.go``,
  with ``ScaleUpInfo.String`` of ``processors/nodegroupset/nodegroup_set_processor.go``):
  ``pod triggered scale-up: [{group 0->1 (max: 4)}]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from gpufleet.model.quantity import parse_duration

GPU = "nvidia.com/gpu"

#: Node labels and annotations that name a node's group, tried in order: cluster-autoscaler's kwok
#: provider's annotation (``cloudprovider/kwok/kwok_constants.go`` NGNameAnnotation), then the
#: node-pool labels of GKE, EKS managed node groups, AKS and Karpenter, then the instance type
#: (``node.kubernetes.io/instance-type``, a well-known label the kubelet sets from the cloud).
NODE_GROUP_KEYS = (
    "cluster-autoscaler.kwok.nodegroup/name",
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool",
    "karpenter.sh/nodepool",
    "node.kubernetes.io/instance-type",
)

_PULLED = re.compile(
    r'^Successfully pulled image "(?P<image>[^"]*)" in (?P<pull>[^\s(]+)'
    r"(?: \((?P<waiting>\S+) including waiting\))?(?:\. Image size: (?P<size>\d+) bytes\.)?$"
)
_PRESENT = re.compile(r'^Container image "(?P<image>[^"]*)" already present on machine')
_SCALE_UP = re.compile(r"\{(?P<group>\S+) (?P<current>\d+)->(?P<new>\d+) \(max: (?P<max>\d+)\)\}")


class BadField(ValueError):
    """A field that cannot be read; ``path`` is its JSON path in the object."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def parse_time(value: object, path: str) -> float:
    """An RFC 3339 time (``metav1.Time`` or ``MicroTime``) as seconds since the epoch."""
    if value is None:
        raise BadField(path, "Required value")
    epoch = _epoch(value) if isinstance(value, str) else None
    if epoch is None:
        shown = json.dumps(value, default=str)[:80]
        raise BadField(path, f"Invalid value: {shown}: not an RFC 3339 time with a zone (Z or +hh:mm)")
    return epoch


@lru_cache(maxsize=1 << 16)
def _epoch(text: str) -> float | None:
    """Many objects share a second: each distinct time text is parsed once."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return None if moment.tzinfo is None else moment.timestamp()


def optional_time(obj: Mapping[str, Any], key: str, path: str) -> float | None:
    """``obj[key]`` as a time, or None when it is absent or null."""
    value = obj.get(key)
    return None if value in (None, "") else parse_time(value, f"{path}.{key}" if path else key)


def condition(obj: Mapping[str, Any], kind: str) -> tuple[str, Mapping[str, Any]] | None:
    """The ``status.conditions`` entry of type ``kind`` and its JSON path, or None."""
    for index, entry in enumerate((obj.get("status") or {}).get("conditions") or []):
        if isinstance(entry, Mapping) and entry.get("type") == kind:
            return f"status.conditions[{index}]", entry
    return None


def is_true(obj: Mapping[str, Any], kind: str) -> bool:
    """Whether the condition ``kind`` is True now."""
    found = condition(obj, kind)
    return found is not None and found[1].get("status") == "True"


def true_since(obj: Mapping[str, Any], kind: str) -> float | None:
    """When the condition ``kind`` last turned True (its ``lastTransitionTime``); None unless it is True."""
    found = condition(obj, kind)
    if found is None or not is_true(obj, kind):
        return None
    return optional_time(found[1], "lastTransitionTime", found[0])


def amount(value: object) -> float:
    """A plain count quantity (``"8"``, ``8``); extended resources such as GPUs are whole numbers."""
    try:
        return float(str(value))
    except ValueError:
        return 0.0


def pod_gpus(pod: Mapping[str, Any]) -> float:
    """GPUs the pod's containers ask for (``limits``, else ``requests``, of ``nvidia.com/gpu``)."""
    total = 0.0
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        asked = (resources.get("limits") or {}).get(GPU, (resources.get("requests") or {}).get(GPU, 0))
        total += amount(asked)
    return total


def node_gpus(node: Mapping[str, Any]) -> float:
    """``nvidia.com/gpu`` in the node's ``status.allocatable`` (0 until the device plugin registers)."""
    return amount(((node.get("status") or {}).get("allocatable") or {}).get(GPU, 0))


def node_group(node: Mapping[str, Any], key: str | None) -> str | None:
    """The node's group: the label (or annotation) ``key``, else the first of `NODE_GROUP_KEYS` it carries."""
    metadata = node.get("metadata") or {}
    labels, annotations = metadata.get("labels") or {}, metadata.get("annotations") or {}
    for candidate in (key,) if key else NODE_GROUP_KEYS:
        value = labels.get(candidate) or annotations.get(candidate)
        if value:
            return str(value)
    return None


@dataclass(frozen=True)
class EventRecord:
    """One Event about an object, in either API shape."""

    kind: str
    namespace: str
    name: str
    uid: str | None
    reason: str
    message: str
    at: float  # first occurrence, seconds since the epoch


def read_event(event: Mapping[str, Any]) -> EventRecord | None:
    """An Event of either shape, or None for one that names no object."""
    target = event.get("involvedObject") or event.get("regarding")
    if not isinstance(target, Mapping) or not target.get("name"):
        return None
    at = None
    for key in ("eventTime", "firstTimestamp", "deprecatedFirstTimestamp", "lastTimestamp"):
        at = optional_time(event, key, "")
        if at is not None:
            break
    if at is None:
        at = parse_time((event.get("metadata") or {}).get("creationTimestamp"), "metadata.creationTimestamp")
    return EventRecord(
        kind=str(target.get("kind") or ""),
        namespace=str(target.get("namespace") or ""),
        name=str(target["name"]),
        uid=target.get("uid") or None,
        reason=str(event.get("reason") or ""),
        message=str(event.get("message") or event.get("note") or ""),
        at=at,
    )


@dataclass(frozen=True)
class Pulled:
    """What a kubelet ``Pulled`` event says."""

    image: str
    pull_s: float  # the pull itself; 0 when the image was already present
    waiting_s: float  # from the pull's start, waiting for earlier pulls included
    size_bytes: int | None
    present: bool


def read_pulled(message: str) -> Pulled | None:
    """A ``Pulled`` event's message, or None when it is in neither of the kubelet's formats."""
    match = _PULLED.match(message)
    if match:
        try:
            pull = parse_duration(match["pull"])
            waiting = parse_duration(match["waiting"]) if match["waiting"] else pull
        except ValueError:
            return None
        size = int(match["size"]) if match["size"] else None
        return Pulled(match["image"], pull, waiting, size, present=False)
    match = _PRESENT.match(message)
    if match:
        return Pulled(match["image"], 0.0, 0.0, None, present=True)
    return None


def scale_up_groups(message: str) -> list[str]:
    """``group current->new (max: N)`` of each node group a ``TriggeredScaleUp`` message names."""
    return [f"{m['group']} {m['current']}->{m['new']} (max: {m['max']})" for m in _SCALE_UP.finditer(message)]
