"""kube-scheduler's scheduling queue (``pkg/scheduler/backend/queue``), in virtual time.

Three places: the active queue (a heap ordered by the profile's QueueSort plugin), the
backoff queue (pods that failed wait ``podInitialBackoffSeconds`` doubling per attempt up
to ``podMaxBackoffSeconds``, counted apart for failures a plugin rejected and for errors; their
expiry is truncated to its 1-second ordering window, SchedulerPopFromBackoffQ being on in 1.34) and the
unschedulable pods, which a cluster event moves back when their queueing hints say so
(``queueing_hints``; ``movePodsToActiveOrBackoffQueue``), to backoff if their backoff has not expired
(``requeuePodWithQueueingStrategy``), and which return anyway once more than
``podMaxInUnschedulablePodsDuration`` (5 minutes) passed since their failure, at the next of the
30-second runs of ``flushUnschedulablePodsLeftover``. A failure no plugin is named for (no nodes at
all, a PreBind error) goes to backoff at once (``AddUnschedulableIfNotPresent``:
``determineSchedulingHintForInFlightPod`` with no rejector plugins). A pod keeps its queue timestamp
(when it was added, or when its last attempt failed) through its moves, which orders pods of equal
priority (``moveToActiveQ`` leaves ``Timestamp`` alone).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import ClusterChange

#: ``DefaultPodMaxInUnschedulablePodsDuration``
MAX_IN_UNSCHEDULABLE_S = 300.0
#: ``Run``: ``flushUnschedulablePodsLeftover`` every 30 seconds (``wait.Until``), from the queue's start
#: (virtual time 0)
LEFTOVER_FLUSH_PERIOD_S = 30.0
#: ``backoffQOrderingWindowDuration``: ``flushBackoffQCompleted`` runs at each whole second
BACKOFF_WINDOW_S = 1.0


@dataclass
class QueuedPod:
    """``framework.QueuedPodInfo``: a pod in the scheduling queue, with its attempts and backoff."""

    pod: Pod
    seq: int
    #: ``Timestamp``: when the pod was added, or when its last attempt failed
    timestamp: float
    initial_timestamp: float
    #: ``UnschedulableCount``: the failed attempts some plugin rejected
    unschedulable_count: int = 0
    #: ``ConsecutiveErrorsCount``: the failures no plugin was named for since the last rejection
    consecutive_errors: int = 0
    #: when its backoff completes (``isPodBackingoff`` turns false)
    backoff_until: float = 0.0
    version: int = 0
    shape: tuple[object, ...] = field(default_factory=tuple)
    #: the plugins that rejected its last attempt (``UnschedulablePlugins``)
    rejectors: frozenset[str] = frozenset()
    #: a failure no plugin was named for, backing off: the cluster changed since (its retry may not fail
    #: alike)
    changed_since: bool = False


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
        #: by backoff completion, then as they came; then the version and the pod's key
        self._backoff: list[tuple[float, int, int, str]] = []
        #: the pods with a live entry in ``_backoff``
        self.backing_off: set[str] = set()
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
        self._push_active(qp)

    def remove(self, pod_key: str) -> None:
        qp = self.entries.pop(pod_key, None)
        if qp is not None:
            qp.version += 1
            self.backing_off.discard(pod_key)
            if self.unschedulable.pop(pod_key, None) is not None:
                self._unindex(qp)

    def _push_active(self, qp: QueuedPod) -> None:
        qp.version += 1
        self.backing_off.discard(qp.pod.key)
        heapq.heappush(self._active, (*self.sort_key(qp), qp.version, qp.pod.key))

    def _push_backoff(self, qp: QueuedPod) -> None:
        qp.version += 1
        self.backing_off.add(qp.pod.key)
        heapq.heappush(self._backoff, (qp.backoff_until, qp.seq, qp.version, qp.pod.key))

    def _live(self, entry: tuple[object, ...]) -> QueuedPod | None:
        """The pod of a heap entry (its last items the version and the key), unless it moved since."""
        qp = self.entries.get(cast(str, entry[-1]))
        return qp if qp is not None and qp.version == entry[-2] else None

    def pop(self) -> QueuedPod | None:
        """``Pop``: the head of the active queue. (SchedulerPopFromBackoffQ's other half, taking the
        podBackoffQ's head when the active queue is empty, is not modelled: in virtual time a gang whose
        members reject each other at Permit would be tried again and again at one instant.)"""
        while self._active:
            qp = self._live(heapq.heappop(self._active))
            if qp is not None:
                return qp
        return None

    def backoff_duration(self, count: int) -> float:
        """``calculateBackoffDuration``: none before a failure, then the initial backoff doubling per
        failure, capped at the maximum."""
        if count == 0:
            return 0.0
        doublings = min(count - 1, 64)  # capped before it can overflow a float
        return float(min(self.initial_backoff_s * 2.0**doublings, self.max_backoff_s))

    def backoff_completes(self, qp: QueuedPod) -> float:
        """``getBackoffTime`` and ``isPodBackingoff`` with SchedulerPopFromBackoffQ (beta, on by default in
        1.34): the expiry, ``Timestamp`` plus the backoff of the consecutive errors if there are any, else of
        the unschedulable count, truncated to its ordering window (``alignToWindow``); the pod backs off while
        that window is not past, so it completes at the next window's start. A maximum of 0 turns backoff
        off."""
        count = qp.consecutive_errors or qp.unschedulable_count
        if self.max_backoff_s == 0 or count == 0:
            return 0.0
        window = math.floor((qp.timestamp + self.backoff_duration(count)) / BACKOFF_WINDOW_S)
        return (window + 1) * BACKOFF_WINDOW_S

    def mark_unschedulable(self, qp: QueuedPod, now: float, rejectors: frozenset[str] = frozenset()) -> None:
        """``AddUnschedulableIfNotPresent``: a failed attempt that the plugins ``rejectors`` rejected counts
        as unschedulable and clears the consecutive errors, one with none counts as an error; the timestamp
        is refreshed. The pod waits for a cluster event its hints queue it for (or the leftover flush); with
        no rejector, it backs off and is tried again."""
        key = qp.pod.key
        if rejectors:
            qp.unschedulable_count += 1
            qp.consecutive_errors = 0
        else:
            qp.consecutive_errors += 1
        qp.version += 1
        qp.timestamp = now
        qp.backoff_until = self.backoff_completes(qp)
        qp.rejectors = rejectors
        qp.changed_since = False
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
            self._push_backoff(qp)
        else:
            self._push_active(qp)

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
        """The unschedulable pods ``only`` picks go back to the active or backoff queue. (``Activate`` sends
        them, and backing-off ones, straight to the active queue; not modelled: in virtual time a gang whose
        members activate each other at Permit would be tried again and again at one instant.)"""
        for qp in sorted(self.unschedulable.values(), key=lambda q: q.seq):
            if only(qp):
                self._requeue(qp, now)

    def advance(self, now: float) -> None:
        """``flushBackoffQCompleted`` (pods whose backoff completed go to the active queue) and
        ``flushUnschedulablePodsLeftover`` at its runs up to ``now``."""
        while self._backoff and self._backoff[0][0] <= now:
            entry = heapq.heappop(self._backoff)
            if (qp := self._live(entry)) is not None:
                self._push_active(qp)
        stale = [qp for qp in self.unschedulable.values() if self.leftover_flush(qp) <= now]
        for qp in sorted(stale, key=lambda q: q.seq):
            self._requeue(qp, now)

    @staticmethod
    def leftover_flush(qp: QueuedPod) -> float:
        """The first run of ``flushUnschedulablePodsLeftover`` that moves the unschedulable ``qp``: more than
        ``podMaxInUnschedulablePodsDuration`` after its timestamp (``currentTime.Sub(Timestamp) >``)."""
        runs = math.floor((qp.timestamp + MAX_IN_UNSCHEDULABLE_S) / LEFTOVER_FLUSH_PERIOD_S) + 1
        return runs * LEFTOVER_FLUSH_PERIOD_S

    def next_time(self) -> float | None:
        """When the queue next has something to do without an outside event."""
        times = [self._backoff[0][0]] if self._backoff else []
        if self.unschedulable:
            times.append(min(self.leftover_flush(q) for q in self.unschedulable.values()))
        return min(times) if times else None

    def note_change(self) -> None:
        """The cluster changed: the pods backing off after a failure no plugin was named for may not fail
        alike any more."""
        for entry in self._backoff:
            if (qp := self._live(entry)) is not None and not qp.rejectors:
                qp.changed_since = True

    def has_backoff(self) -> bool:
        """Pods backing off that a cluster event moved (some plugin rejected them: the event may have helped),
        or whose failure no plugin was named for with the cluster changed since (``note_change``); not the
        others, which fail alike while nothing changes."""
        return any(
            (qp := self._live(entry)) is not None and (qp.rejectors or qp.changed_since)
            for entry in self._backoff
        )

    def has_active(self) -> bool:
        return any(self._live(entry) is not None for entry in self._active)
