"""kube-scheduler's scheduling queue (``pkg/scheduler/backend/queue``), in virtual time.

Three places: the active queue (a heap ordered by the profile's QueueSort plugin), the
backoff queue (pods that failed wait ``podInitialBackoffSeconds`` doubling per attempt up
to ``podMaxBackoffSeconds``) and the unschedulable pods, which a cluster event moves back when
their queueing hints say so (``queueing_hints``; ``movePodsToActiveOrBackoffQueue``), to backoff if
their backoff has not expired (``requeuePodWithQueueingStrategy``), and which return anyway after
``podMaxInUnschedulablePodsDuration`` (5 minutes, ``flushUnschedulablePodsLeftover``). A failure no
plugin is named for (no nodes at all, a PreBind error, a rejection at Permit) goes to backoff at once
(``AddUnschedulableIfNotPresent``: ``determineSchedulingHintForInFlightPod`` with no rejector plugins).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import ClusterChange

MAX_IN_UNSCHEDULABLE_S = 300.0


@dataclass
class QueuedPod:
    pod: Pod
    seq: int
    timestamp: float
    initial_timestamp: float
    attempts: int = 0
    backoff_until: float = 0.0
    unschedulable_since: float = 0.0
    version: int = 0
    shape: tuple[object, ...] = field(default_factory=tuple)
    #: the plugins that rejected its last attempt (``UnschedulablePlugins``)
    rejectors: frozenset[str] = frozenset()


#: The QueueSort plugin's order of a pod: a tuple compared level by level, of one length for every pod.
SortKey = Callable[[QueuedPod], tuple[object, ...]]


class SchedulingQueue:
    def __init__(self, sort_key: SortKey, initial_backoff_s: float = 1.0, max_backoff_s: float = 10.0):
        self.sort_key = sort_key
        self.initial_backoff_s = initial_backoff_s
        self.max_backoff_s = max_backoff_s
        self.entries: dict[str, QueuedPod] = {}
        #: the sort key's items, then the entry's version and the pod's key, in one flat tuple (a nested
        #: key would be compared twice per level: for equality, then for order)
        self._active: list[tuple[object, ...]] = []
        self._backoff: list[tuple[float, int, int, str]] = []
        self.unschedulable: dict[str, QueuedPod] = {}
        #: the unschedulable pods by a plugin that rejected them
        self._rejected_by: dict[str, dict[str, QueuedPod]] = {}
        self._seq = 0

    def __contains__(self, pod_key: str) -> bool:
        return pod_key in self.entries

    def add(self, pod: Pod, now: float) -> None:
        self._seq += 1
        qp = QueuedPod(pod, self._seq, now, now, shape=pod.shape())
        self.entries[pod.key] = qp
        self._push_active(qp, now)

    def remove(self, pod_key: str) -> None:
        qp = self.entries.pop(pod_key, None)
        if qp is not None:
            qp.version += 1
            if self.unschedulable.pop(pod_key, None) is not None:
                self._unindex(qp)

    def _push_active(self, qp: QueuedPod, now: float) -> None:
        qp.version += 1
        qp.timestamp = now
        heapq.heappush(self._active, (*self.sort_key(qp), qp.version, qp.pod.key))

    def pop(self) -> QueuedPod | None:
        while self._active:
            entry = heapq.heappop(self._active)
            key: str = entry[-1]  # type: ignore[assignment]
            qp = self.entries.get(key)
            version = entry[-2]
            if qp is not None and qp.version == version and key not in self.unschedulable:
                return qp
        return None

    def backoff_duration(self, attempts: int) -> float:
        doublings = min(max(attempts - 1, 0), 64)  # capped before it can overflow a float
        return float(min(self.initial_backoff_s * 2.0**doublings, self.max_backoff_s))

    def mark_unschedulable(self, qp: QueuedPod, now: float, rejectors: frozenset[str] = frozenset()) -> None:
        """A failed attempt that the plugins ``rejectors`` rejected: the pod waits for a cluster event its
        hints queue it for (or the 5-minute flush); with none, it backs off and is tried again."""
        key = qp.pod.key
        qp.attempts += 1
        qp.version += 1
        qp.backoff_until = now + self.backoff_duration(qp.attempts)
        qp.unschedulable_since = now
        qp.rejectors = rejectors
        self.unschedulable[key] = qp
        for name in rejectors:
            self._rejected_by.setdefault(name, {})[key] = qp
        if not rejectors:
            self._requeue(qp, now)

    def _unindex(self, qp: QueuedPod) -> None:
        for name in qp.rejectors:
            del self._rejected_by[name][qp.pod.key]

    def _requeue(self, qp: QueuedPod, now: float) -> None:
        del self.unschedulable[qp.pod.key]
        self._unindex(qp)
        if qp.backoff_until > now:
            qp.version += 1
            heapq.heappush(self._backoff, (qp.backoff_until, qp.seq, qp.version, qp.pod.key))
        else:
            self._push_active(qp, now)

    def move(
        self,
        change: ClusterChange,
        now: float,
        worth: Callable[[QueuedPod, ClusterChange], bool],
        plugins: frozenset[str] | None = None,
    ) -> None:
        """``movePodsToActiveOrBackoffQueue``: the unschedulable pods ``worth`` says ``change`` may help go
        back to the active or backoff queue, in the order they came. ``plugins``: only pods some of these
        plugins rejected can be helped (the plugins registered for the event); None: any pod."""
        if plugins is None:
            candidates = list(self.unschedulable.values())
        else:
            by = self._rejected_by
            found = {key: qp for name in plugins if (pods := by.get(name)) for key, qp in pods.items()}
            candidates = list(found.values())
        for qp in sorted(candidates, key=lambda q: q.seq):
            if worth(qp, change):
                self._requeue(qp, now)

    def requeue_where(self, now: float, only: Callable[[QueuedPod], bool]) -> None:
        """The unschedulable pods ``only`` picks go back to the active or backoff queue."""
        for qp in sorted(self.unschedulable.values(), key=lambda q: q.seq):
            if only(qp):
                self._requeue(qp, now)

    def advance(self, now: float) -> None:
        """Move pods whose backoff expired, and flush long-unschedulable pods."""
        while self._backoff and self._backoff[0][0] <= now:
            _, _, version, key = heapq.heappop(self._backoff)
            qp = self.entries.get(key)
            if qp is not None and qp.version == version:
                self._push_active(qp, now)
        stale = [
            qp for qp in self.unschedulable.values() if qp.unschedulable_since + MAX_IN_UNSCHEDULABLE_S <= now
        ]
        for qp in sorted(stale, key=lambda q: q.seq):
            self._requeue(qp, now)

    def next_time(self) -> float | None:
        """When the queue next has something to do without an outside event."""
        times = [self._backoff[0][0]] if self._backoff else []
        if self.unschedulable:
            times.append(
                min(q.unschedulable_since for q in self.unschedulable.values()) + MAX_IN_UNSCHEDULABLE_S
            )
        return min(times) if times else None

    def has_backoff(self) -> bool:
        """Pods backing off that a cluster event moved (some plugin rejected them: the event may have helped);
        not those whose failure no plugin was named for, which fail alike while nothing changes."""
        return any(
            (qp := self.entries.get(key)) is not None and qp.version == version and qp.rejectors
            for _, _, version, key in self._backoff
        )

    def has_active(self) -> bool:
        for entry in self._active:
            key: str = entry[-1]  # type: ignore[assignment]
            qp = self.entries.get(key)
            if qp is not None and qp.version == entry[-2] and key not in self.unschedulable:
                return True
        return False
