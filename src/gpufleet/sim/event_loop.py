"""The simulator's clock: a tiny event loop keyed by (time, priority, sequence), in the manner of
SimPy's ``core.py``; it is the ``control.clock.Clock`` the control loops run on in a simulation.

Events at the same instant run in ``Priority`` order (completions and failures, arrivals,
controllers, scheduling, then sampling); equal keys keep insertion order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from gpufleet.control.clock import Priority


class EventLoop:
    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[tuple[float, int, int, Callable[[], None]]] = []
        self._seq = 0
        self._background: set[int] = set()  # sequence numbers of periodic controller ticks
        self.steps = 0  # events run so far

    def at(
        self,
        time: float,
        priority: Priority,
        action: Callable[[], None],
        background: bool = False,
        seq: int | None = None,
    ) -> None:
        """Schedule ``action``; a *background* event (a controller's periodic tick) is not, by
        itself, something left to do. ``seq``: a sequence number ``reserve`` kept for it."""
        if seq is None:
            self._seq += 1
            seq = self._seq
        if background:
            self._background.add(seq)
        heapq.heappush(self._heap, (max(time, self.now), int(priority), seq, action))

    def reserve(self, count: int) -> int:
        """The first of ``count`` sequence numbers kept for events scheduled later (``at``'s ``seq``): each
        runs among the events of its instant and priority where it would have, scheduled now. A feed of
        many future events (a trace's arrivals) then schedules each as the one before it runs: the heap
        holds what is due soon, and each of its pushes and pops walks fewer levels."""
        first = self._seq + 1
        self._seq += count
        return first

    def peek_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def pending(self, below: Priority) -> bool:
        """Whether any foreground event of a priority lower than ``below`` is scheduled."""
        return any(p < below and seq not in self._background for _, p, seq, _ in self._heap)

    def step(self) -> bool:
        if not self._heap:
            return False
        time, _, seq, action = heapq.heappop(self._heap)
        self._background.discard(seq)
        self.steps += 1
        self.now = time
        action()
        return True
