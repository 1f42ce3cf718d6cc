"""The clock the control loops run on: the time now, and an action scheduled at a later time.

The simulator's event loop (``sim.events``) is one; a live backend's timer is the other. Actions at
the same instant run in ``Priority`` order: completions and failures, arrivals, controllers,
scheduling, then sampling (as the simulator orders them; a live cluster has no such order, and
its loops only need "not before").
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import Protocol


class Priority(IntEnum):
    COMPLETION = 0
    ARRIVAL = 1
    CONTROLLER = 2
    SCHEDULING = 3
    SAMPLE = 4


class Clock(Protocol):
    @property
    def now(self) -> float:
        """Seconds since the run (or the backend) started."""
        ...

    def at(
        self, time: float, priority: Priority, action: Callable[[], None], background: bool = False
    ) -> None:
        """Run ``action`` at ``time`` (at once when it is past); a *background* action (a controller's
        periodic tick) is not, by itself, something left to do."""
        ...
