"""Cluster events and queueing hints, as kube-scheduler types them.

Mirrors ``k8s.io/kube-scheduler/framework/types.go`` (``ActionType``, ``EventResource``,
``ClusterEvent``, ``ClusterEventWithHint``, ``QueueingHint``), ``pkg/scheduler/framework/types.go``
(``MatchClusterEvents``, ``ClusterEventIsWildCard``) and ``pkg/scheduler/framework/events.go``
(``NodeSchedulingPropertiesChange``: which Node update events one node update makes). A change to
the cluster is told to the scheduling queue as ``ClusterChange``s: an event with the old and new
object (a ``Node``, or an ``EventPod``: the pod and where it is), either None on add and delete. A
change a caller cannot describe is the wildcard event (``EVERYTHING``), which moves every pod.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, IntFlag, StrEnum
from typing import TypeVar

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod


class ActionType(IntFlag):
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    ALL = 4095
    UPDATE = ALL & ~(ADD | DELETE)


class Resource(StrEnum):
    POD = "Pod"
    #: incoming events only (never registered): a pod bound or assumed on a node, or one with none
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnschedulablePod"
    NODE = "Node"
    RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
    RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
    DEVICE_CLASS = "resource.k8s.io/DeviceClass"
    WILDCARD = "*"


@dataclass(frozen=True)
class ClusterEvent:
    """``framework.ClusterEvent``: a kind of object and what happened to it (a plugin registers the ones
    that may make a pod it rejected schedulable)."""

    resource: Resource
    action: ActionType

    @property
    def is_wildcard(self) -> bool:
        """``ClusterEventIsWildCard``."""
        return self.resource is Resource.WILDCARD and self.action == ActionType.ALL

    def matches(self, incoming: ClusterEvent) -> bool:
        """``MatchClusterEvents(self, incoming)``: ``incoming`` is this registered event or a more specific
        one (Pod matches AssignedPod and UnschedulablePod)."""
        if self.is_wildcard:
            return True
        resource = self.resource
        same = (
            resource is Resource.WILDCARD
            or resource is incoming.resource
            or (
                resource is Resource.POD
                and incoming.resource in (Resource.ASSIGNED_POD, Resource.UNSCHEDULED_POD)
            )
        )
        return same and bool(self.action & incoming.action) and incoming.action <= self.action


WILDCARD_EVENT = ClusterEvent(Resource.WILDCARD, ActionType.ALL)
NODE_ADD = ClusterEvent(Resource.NODE, ActionType.ADD)
NODE_DELETE = ClusterEvent(Resource.NODE, ActionType.DELETE)
ASSIGNED_POD_ADD = ClusterEvent(Resource.ASSIGNED_POD, ActionType.ADD)
ASSIGNED_POD_DELETE = ClusterEvent(Resource.ASSIGNED_POD, ActionType.DELETE)
UNSCHEDULED_POD_ADD = ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.ADD)
UNSCHEDULED_POD_UNGATED = ClusterEvent(
    Resource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
)
RESOURCE_SLICE_ADD = ClusterEvent(Resource.RESOURCE_SLICE, ActionType.ADD)
RESOURCE_SLICE_UPDATE = ClusterEvent(Resource.RESOURCE_SLICE, ActionType.UPDATE)
RESOURCE_CLAIM_UPDATE = ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.UPDATE)


class QueueingHint(Enum):
    QUEUE = "Queue"
    SKIP = "QueueSkip"


@dataclass(frozen=True)
class EventPod:
    """A pod as an event carries it: ``spec.nodeName`` (bound or assumed; '' when unscheduled) and
    ``status.nominatedNodeName`` beside the pod."""

    pod: Pod
    node_name: str = ""
    nominated_node_name: str = ""


#: ``QueueingHintFn``: the unschedulable pod, the old and the new object; raises ``HintError`` for objects
#: of the wrong kind (upstream's error, which the queue reads as Queue)
HintFn = Callable[[Pod, object, object], QueueingHint]


@dataclass(frozen=True)
class EventWithHint:
    """``ClusterEventWithHint``: no hint function means Queue (``defaultQueueingHintFn``)."""

    event: ClusterEvent
    hint: HintFn | None = None


#: what a plugin without ``EventsToRegister`` is registered for (``defaultEnqueueExtension``)
EVERY_EVENT = (EventWithHint(WILDCARD_EVENT),)


@dataclass(frozen=True)
class ClusterChange:
    """One event as the queue hears it, with the objects before and after."""

    event: ClusterEvent
    old: object = None
    new: object = None


EVERYTHING = (ClusterChange(WILDCARD_EVENT),)

#: a pod leaving a node, or an unscheduled one deleted: what frees a queue's quota (gpufleet's queue
#: plugins, KAI's and Volcano's: they register this alone, with no hint function)
POD_DELETED = EventWithHint(ClusterEvent(Resource.POD, ActionType.DELETE))


def taint_events(after_node: HintFn, after_toleration: HintFn) -> tuple[EventWithHint, ...]:
    """What a plugin that reads node taints and the pod's tolerations registers (TaintToleration's and
    NodeUnschedulable's ``EventsToRegister``): a node added or its taints changed, the pod's tolerations
    changed; each with the plugin's own hint."""
    return (
        EventWithHint(ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT), after_node),
        EventWithHint(ClusterEvent(Resource.POD, ActionType.UPDATE_POD_TOLERATION), after_toleration),
    )


class HintError(TypeError):
    """A hint function was given objects of another kind than it expects (``util.As`` failing)."""


T = TypeVar("T")


def as_objects(kind: type[T], old: object, new: object) -> tuple[T | None, T | None]:
    """``util.As[T](old, new)``: each None or of ``kind``, else ``HintError``."""
    for obj in (old, new):
        if obj is not None and not isinstance(obj, kind):
            raise HintError(f"expected {kind.__name__}, got {type(obj).__name__}")
    return old, new  # type: ignore[return-value]


def as_new(kind: type[T], old: object, new: object) -> tuple[T | None, T]:
    """``as_objects`` where the new object must be there (an add or an update)."""
    before, after = as_objects(kind, old, new)
    if after is None:
        raise HintError(f"expected a new {kind.__name__}, got None")
    return before, after


def node_updated(old: Node, new: Node) -> tuple[ClusterChange, ...]:
    """A node update's changes, none when nothing the scheduler reads changed
    (``NodeSchedulingPropertiesChange``: spec.unschedulable turned off, as UpdateNodeTaint; allocatable,
    labels, taints; the scale-down-disabled annotation, gpufleet's only modelled one)."""
    actions = []
    if old.unschedulable and not new.unschedulable:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if old.allocatable != new.allocatable:
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if old.labels != new.labels:
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if old.taints != new.taints:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if old.scale_down_disabled != new.scale_down_disabled:
        actions.append(ActionType.UPDATE_NODE_ANNOTATION)
    return tuple(ClusterChange(ClusterEvent(Resource.NODE, a), old, new) for a in actions)


def node_before(node: Node) -> Node:
    """The node as it is now, kept aside before a change (the state changes its nodes in place, replacing
    their dicts, never changing them)."""
    return copy.copy(node)


def assigned_pod_deleted(pod: Pod, node: str) -> ClusterChange:
    """A pod bound or assumed on ``node`` left it (deleted, ended, or forgotten by its scheduler)."""
    return ClusterChange(ASSIGNED_POD_DELETE, EventPod(pod, node), None)
