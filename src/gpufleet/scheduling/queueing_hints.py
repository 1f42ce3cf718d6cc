"""Which unschedulable pods a cluster event moves: kube-scheduler's queueing hints (SchedulerQueueingHints,
GA and locked on in 1.34: ``pkg/features/kube_features.go``).

Mirrors ``pkg/scheduler/scheduler.go`` ``buildQueueingHintMap`` (each plugin's ``EventsToRegister``; a
plugin without them, ``defaultEnqueueExtension``, is registered for the wildcard event; no hint
function means Queue) and ``backend/queue/scheduling_queue.go`` ``isPodWorthRequeuing``: a pod no
plugin rejected is always worth it; the wildcard event moves every pod, or only the pod it carries
(``EventForceActivate``); otherwise only a plugin that rejected the pod, registered for an event the
incoming one matches (``MatchClusterEvents``), can move it, when its hint says Queue (a hint's error
counts as Queue). gpufleet has no plugin that returns Pending, so a Queue is always
``queueAfterBackoff``.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import (
    EVERY_EVENT,
    ClusterChange,
    ClusterEvent,
    EventPod,
    HintError,
    HintFn,
    QueueingHint,
)
from gpufleet.scheduling.framework import Plugin

#: a profile's registrations: (event, plugin name, hint function or None for Queue)
HintMap = tuple[tuple[ClusterEvent, str, HintFn | None], ...]


def hint_map(plugins: Iterable[Plugin]) -> HintMap:
    """``buildQueueingHintMap`` over a profile's plugins."""
    return tuple(
        (registered.event, plugin.name, registered.hint)
        for plugin in plugins
        for registered in plugin.events_to_register() or EVERY_EVENT
    )


def interested(hints: HintMap, event: ClusterEvent) -> frozenset[str]:
    """The plugins registered for an event ``event`` matches (``isEventOfInterest``, by plugin)."""
    return frozenset(name for registered, name, _ in hints if registered.matches(event))


def worth_requeuing(hints: HintMap, pod: Pod, rejectors: frozenset[str], change: ClusterChange) -> bool:
    """``isPodWorthRequeuing``: whether ``change`` moves ``pod``, which the plugins ``rejectors`` rejected."""
    if not rejectors:
        return True
    event = change.event
    if event.is_wildcard:
        target = change.new
        return target is None or (isinstance(target, EventPod) and target.pod.key == pod.key)
    for registered, name, hint in hints:
        if name not in rejectors or not registered.matches(event):
            continue
        if hint is None:
            return True
        try:
            if hint(pod, change.old, change.new) is QueueingHint.QUEUE:
                return True
        except HintError:
            return True
    return False
