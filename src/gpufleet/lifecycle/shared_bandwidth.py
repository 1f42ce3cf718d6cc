"""One bandwidth shared fairly by concurrent transfers (processor sharing).

Source: seed 004's cold-start arithmetic (one replica reads 140 GB of weights at 10 GB/s in
14 s; eight replicas starting together on shared storage with 10 GB/s in all read
8 × 140 GB = 1120 GB and each takes 112 s, eight times as long) and DESIGN.md
(``Simulation.spec.storage.bandwidth``, shared model storage). While ``n`` transfers are
active each gets ``bandwidth / n``.

Exact and event-driven, with virtual time: ``V`` is the number of bytes every active
transfer has received since the storage was last idle, growing at ``bandwidth / n``. A
transfer of ``size`` bytes that starts when ``V = v`` finishes when ``V = v + size``, so
transfers finish in the order of those tags whatever arrives in between, and the next
completion is ``(tag - V) * n / bandwidth`` seconds away. Each event costs O(log n).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable
from typing import Generic, NamedTuple, TypeVar

K = TypeVar("K", bound=Hashable)


class Completion(NamedTuple, Generic[K]):
    time_s: float
    key: K


class SharedBandwidth(Generic[K]):
    """Transfers identified by ``key`` sharing ``bandwidth`` bytes per second fairly.

    Times passed to ``add``, ``remove`` and ``advance`` must not decrease. Transfers that
    finish at the same instant are reported the one with fewer bytes left first, then the one
    added first (reads started together: smallest first). ``add`` and ``remove`` at ``now``
    leave the transfers that finish exactly at ``now`` to ``advance(now)``, so that adding
    several transfers at one instant does not depend on float rounding of the ones already
    there.
    """

    def __init__(self, bandwidth: float) -> None:
        if not (math.isfinite(bandwidth) and bandwidth > 0):
            raise ValueError(f"bandwidth must be a positive number of bytes per second: {bandwidth!r}")
        self.bandwidth = bandwidth
        self._clock = 0.0
        self._virtual = 0.0
        self._sequence = 0
        #: key -> (finish tag, sequence) of each active transfer.
        self._active: dict[K, tuple[float, int]] = {}
        #: (finish tag, sequence, key); entries of removed transfers are skipped when met.
        self._heap: list[tuple[float, int, K]] = []
        #: Transfers that finished, not yet returned by ``advance``.
        self._finished: list[Completion[K]] = []

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is transferring (or finished and not yet collected by ``advance``)."""
        return key in self._active or any(done.key == key for done in self._finished)

    def __len__(self) -> int:
        """How many transfers are active."""
        return len(self._active)

    def add(self, now: float, key: K, size_bytes: float) -> None:
        """Start transferring ``size_bytes`` for ``key`` at ``now``."""
        if not (math.isfinite(size_bytes) and size_bytes >= 0):
            raise ValueError(f"size must be a non-negative number of bytes: {size_bytes!r}")
        self._run_until(now, including_now=False)
        if key in self._active or any(done.key == key for done in self._finished):
            raise ValueError(f"transfer {key!r} is already in progress")
        tag = self._virtual + size_bytes
        self._active[key] = (tag, self._sequence)
        heapq.heappush(self._heap, (tag, self._sequence, key))
        self._sequence += 1

    def remove(self, now: float, key: K) -> float:
        """Stop ``key``'s transfer at ``now``; the bytes it had left (0 if it had just finished).

        A transfer that finished before ``now`` and was not yet returned by ``advance`` is
        withdrawn. Raises ``KeyError`` for a key that is not transferring.
        """
        self._run_until(now, including_now=False)
        if key not in self._active:
            for index, done in enumerate(self._finished):
                if done.key == key:
                    del self._finished[index]
                    return 0.0
            raise KeyError(key)
        tag, _ = self._active.pop(key)
        left = max(0.0, tag - self._virtual)
        self._settle_idle()
        return left

    def next_completion(self) -> Completion[K] | None:
        """The next transfer to finish if nothing else starts or stops; None when idle.

        A time at or before the last call's ``now`` means a transfer has already finished:
        call ``advance`` with the current time to collect it.
        """
        if self._finished:
            return self._finished[0]
        head = self._head()
        if head is None:
            return None
        tag, _, key = head
        return Completion(self._finish_time(tag), key)

    def advance(self, now: float) -> list[Completion[K]]:
        """Move to ``now``; the transfers that finished by then, in the order they finished."""
        self._run_until(now, including_now=True)
        finished, self._finished = self._finished, []
        return finished

    def _run_until(self, now: float, *, including_now: bool) -> None:
        """Move the clock to ``now``, finishing the transfers due before it (or at it, if asked)."""
        if now < self._clock:
            raise ValueError(f"time went backwards: {now!r} < {self._clock!r}")
        while (head := self._head()) is not None:
            tag, _, key = head
            finish = self._finish_time(tag)
            if finish > now or (finish == now and not including_now):
                break
            heapq.heappop(self._heap)
            del self._active[key]
            self._clock, self._virtual = finish, tag
            self._finished.append(Completion(finish, key))
            self._settle_idle()
        if self._active:
            self._virtual += (now - self._clock) * self.bandwidth / len(self._active)
        self._clock = now

    def _finish_time(self, tag: float) -> float:
        """When the transfer tagged ``tag`` finishes if the active set does not change."""
        return self._clock + max(0.0, tag - self._virtual) * len(self._active) / self.bandwidth

    def _head(self) -> tuple[float, int, K] | None:
        """The active transfer with the smallest tag, after dropping removed ones from the heap."""
        while self._heap:
            tag, sequence, key = self._heap[0]
            if self._active.get(key) == (tag, sequence):
                return self._heap[0]
            heapq.heappop(self._heap)
        return None

    def _settle_idle(self) -> None:
        """Restart virtual time at 0 once nothing is active, so that tags stay small and exact."""
        if not self._active:
            self._virtual = 0.0
            self._heap.clear()
