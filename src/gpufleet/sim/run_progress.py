"""What a simulation run tells whoever drives it as it goes: the simulated time reached, the horizon
and the events run so far (a protocol the CLI renders as a progress bar).

The engine stays pure: ``Simulation.run`` calls ``advanced`` every ``EVERY_EVENTS`` events and once at
the end, and nothing at all when it is given no observer, so a run without one costs one integer
comparison per event. How often to redraw, and whether to show anything, is the observer's concern.
"""

from __future__ import annotations

from typing import Protocol

#: Events between two calls of ``RunProgress.advanced`` (a few milliseconds of a busy simulation).
EVERY_EVENTS = 64


class RunProgress(Protocol):
    def advanced(self, now_s: float, horizon_s: float | None, events: int) -> None:
        """The run reached simulated time ``now_s`` after ``events`` events; ``horizon_s`` is where it
        will stop (the Simulation's duration), None when it runs until nothing is left to do."""
        ...
