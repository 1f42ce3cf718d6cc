"""What kube-scheduler recorded about a pod in a cluster dump: its ``PodScheduled`` condition and
its ``FailedScheduling`` Events (``schedule_one.go`` ``handleSchedulingFailure`` writes both: the
condition through ``updatePod``, the Event through the event recorder, with the same message).
``gpufleet explain`` prints them verbatim beside its own evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

#: ``validation.NoteLengthLimit``: kube-scheduler cuts the Event's copy of a longer message
#: (``schedule_one.go`` ``truncateMessage``: the first 1,020 bytes and `` ...``); the condition's is whole.
NOTE_LENGTH_LIMIT = 1024
_TRUNCATED = " ..."
#: ``v1.PodReasonUnschedulable``: the ``PodScheduled=False`` reason kube-scheduler writes after a FitError
UNSCHEDULABLE = "Unschedulable"


def event_message(message: str) -> str:
    """What a FailedScheduling Event carries of ``message`` (``truncateMessage``, in bytes as Go counts;
    a character cut in two is dropped, where Go would keep its first bytes)."""
    raw = message.encode()
    if len(raw) <= NOTE_LENGTH_LIMIT:
        return message
    return raw[: NOTE_LENGTH_LIMIT - len(_TRUNCATED)].decode(errors="ignore") + _TRUNCATED


def recorded_by(scheduler_name: str, simulated: bool) -> str:
    """Who wrote a pod's records, as ``explain`` and ``describe`` name it: kube-scheduler for a scheduler
    gpufleet runs; else the pod's own scheduler (``schedulerName``), whose records they show as it wrote
    them."""
    return "kube-scheduler" if simulated else f'scheduler "{scheduler_name}"'


@dataclass(frozen=True)
class Recorded:
    """One message kube-scheduler wrote: ``source`` says where (``PodScheduled=False
    (Unschedulable)``, ``FailedScheduling event``), ``at`` when (None: no time in the dump), ``reason`` the
    ``PodScheduled`` condition's reason (None: an Event, or a condition without one)."""

    source: str
    message: str
    at: datetime | None = None
    reason: str | None = None

    @property
    def unschedulable(self) -> bool:
        """A ``PodScheduled=False`` condition of reason ``Unschedulable``: what cluster-autoscaler lists as
        an unschedulable pod (``utils/kubernetes/listers.go`` ``isUnschedulable``), whatever its message."""
        return self.reason == UNSCHEDULABLE


@dataclass(frozen=True)
class PodEvent:
    """A ``FailedScheduling`` Event about a pod (core/v1 ``involvedObject``, events.k8s.io/v1
    ``regarding``); ``uid`` is empty when the Event names none; ``order`` is its place in the input."""

    namespace: str
    name: str
    uid: str
    recorded: Recorded
    order: int
