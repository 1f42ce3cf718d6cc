"""How the real side reads FailedScheduling Events: one list for every pod of a case, each pod's
messages oldest first, as the per-pod query reads them."""

from __future__ import annotations

from datetime import UTC, datetime

from e2e.fidelity.real import failed_scheduling_by_pod
from lightkube.models.core_v1 import EventSource, ObjectReference
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Event


def _event(name: str, uid: str, reason: str, second: int, message: str) -> Event:
    return Event(
        metadata=ObjectMeta(name=name, namespace="default"),
        involvedObject=ObjectReference(kind="Pod", name=uid, uid=uid),
        reason=reason,
        message=message,
        source=EventSource(component="default-scheduler"),
        firstTimestamp=datetime(2026, 12, 2, 8, 0, second, tzinfo=UTC),
    )


def test_every_pods_failed_scheduling_messages_come_from_one_list_oldest_first() -> None:
    events = [
        _event("b.2", "pod-b", "FailedScheduling", 5, "0/2 nodes are available: later"),
        _event("a.1", "pod-a", "FailedScheduling", 3, "0/2 nodes are available: a"),
        _event("b.1", "pod-b", "FailedScheduling", 1, "0/2 nodes are available: first"),
        _event("b.3", "pod-b", "Scheduled", 6, "Successfully assigned default/b to node-0"),
        _event("n.1", "node-0", "RegisteredNode", 0, "Node node-0 event: Registered Node"),
    ]
    assert failed_scheduling_by_pod(events) == {
        "pod-a": ["0/2 nodes are available: a"],
        "pod-b": ["0/2 nodes are available: first", "0/2 nodes are available: later"],
    }
