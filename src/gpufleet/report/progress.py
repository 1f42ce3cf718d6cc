"""Progress on stderr for work that takes a while, drawn with ``rich.progress``.

``SimulationBar`` follows one simulation (``simulate``): simulated time reached of the horizon, events
run, events per second, and the time left at the pace so far. ``RunsBar`` follows the runs of
``compare`` and ``sweep``: runs done of those to do, failures, the time left, and a line above the bar
for each run as it finishes or fails. They are the observers the simulator and the experiments call
(``sim.run_progress.RunProgress``, ``experiments.runs.RunsProgress``); this module imports neither.

Nothing is drawn unless the console is a terminal and progress is wanted (``report.progress_wanted``:
no ``--no-progress``, no ``GPUFLEET_NO_PROGRESS`` in the environment, the way ``NO_COLOR`` works: set
and not empty), and nothing before the work has gone on ``SHOW_AFTER_S``: a short run shows no bar at
all, and a run without a terminal is not slowed down (its driver is given no observer). Durations are
shown in human form.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn
from rich.text import Text

from gpufleet.report._format import human_duration
from gpufleet.report.progress_wanted import progress_wanted

#: Seconds of work before a bar appears.
SHOW_AFTER_S = 1.5
#: Characters of the bar itself, leaving an 80-column terminal room for the figures.
BAR_WIDTH = 20

Clock = Callable[[], float]


def time_left(task: Task) -> str:
    """`` · ETA 3m 20s``: what is left at the pace so far (elapsed × left / done), once some is done."""
    elapsed, done, total = task.elapsed, task.completed, task.total
    if not elapsed or not done or total is None or done >= total:
        return ""
    return f" · ETA {human_duration(round(elapsed * (total - done) / done))}"


class _Figures(ProgressColumn):
    """Text computed from the task when drawn, so elapsed time and ETA move between updates."""

    def __init__(self, text: Callable[[Task], str]) -> None:
        super().__init__()
        self._text = text

    def render(self, task: Task) -> Text:
        return Text(self._text(task), no_wrap=True, overflow="ellipsis")


class _DelayedBar:
    """A rich ``Progress`` of one task on ``console``, started once the work has gone on ``show_after_s``
    (by ``clock``), at an update or from a timer, whichever comes first; lines given before then are
    printed when it starts. ``close`` (or leaving the ``with`` block) stops it and clears the bar."""

    def __init__(
        self,
        console: Console,
        label: str,
        figures: Callable[[Task], str],
        asked: bool,
        show_after_s: float,
        clock: Clock,
    ) -> None:
        self.enabled = progress_wanted(console, asked)
        self.shown = False
        self.progress = Progress(
            TextColumn(label),
            BarColumn(bar_width=BAR_WIDTH),
            _Figures(figures),
            console=console,
            transient=True,
            get_time=clock,
        )
        self.task = self.progress.add_task(label, total=None)
        self._clock, self._started_at, self._show_after_s = clock, clock(), show_after_s
        self._held: list[str] = []
        self._closed = False
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        if self.enabled:
            self._timer = threading.Timer(show_after_s, self.show_if_due)
            self._timer.daemon = True
            self._timer.start()

    def show_if_due(self) -> None:
        with self._lock:
            due = self._clock() - self._started_at >= self._show_after_s
            if self.shown or self._closed or not due:
                return
            self.progress.start()
            self.shown = True
            for line in self._held:
                self._print(line)

    def line(self, text: str) -> None:
        """A line above the bar (held until the bar shows)."""
        if not self.enabled:
            return
        with self._lock:
            if self.shown:
                self._print(text)
            else:
                self._held.append(text)

    def _print(self, text: str) -> None:
        self.progress.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self.shown:
                self.progress.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _events(task: Task) -> str:
    events = int(task.fields.get("events", 0))
    rate = f" · {events / task.elapsed:,.0f} events/s" if task.elapsed else ""
    return f"{events:,} events{rate}"


def _simulated(task: Task) -> str:
    """``5h 9m of 1d (21%) · ETA 40 s · 10,880 events · 1,879 events/s``; without a horizon
    ``5h 9m simulated (until nothing is left) · ...``."""
    reached = human_duration(task.completed)
    if task.total is None:
        return f"{reached} simulated (until nothing is left) · {_events(task)}"
    share = 100 * task.completed / task.total if task.total else 100.0
    return f"{reached} of {human_duration(task.total)} ({share:.0f}%){time_left(task)} · {_events(task)}"


class SimulationBar(_DelayedBar):
    """``simulate``'s bar (a ``sim.run_progress.RunProgress``), and once it was shown a closing line:
    ``simulated 1d in 13.4 s: 42,290 events (3,156 events/s)``."""

    def __init__(
        self,
        console: Console,
        asked: bool = True,
        show_after_s: float = SHOW_AFTER_S,
        clock: Clock = time.monotonic,
    ) -> None:
        super().__init__(console, "simulating", _simulated, asked, show_after_s, clock)

    def advanced(self, now_s: float, horizon_s: float | None, events: int) -> None:
        if not self.enabled:
            return
        self.progress.update(self.task, completed=now_s, total=horizon_s, events=events)
        if not self.shown:
            self.show_if_due()

    def close(self) -> None:
        task = self.progress.tasks[0]
        if self.shown and task.elapsed:
            events = int(task.fields.get("events", 0))
            self.line(
                f"simulated {human_duration(task.completed)} in {human_duration(task.elapsed)}: "
                f"{events:,} events ({events / task.elapsed:,.0f} events/s)"
            )
        super().close()


def _runs(task: Task) -> str:
    total = "?" if task.total is None else f"{task.total:.0f}"
    failed = int(task.fields.get("failed", 0))
    failures = f" · {failed} failed" if failed else ""
    elapsed = human_duration(round(task.elapsed or 0))
    return f"{task.completed:.0f}/{total} runs{failures}{time_left(task)} · {elapsed}"


class RunsBar(_DelayedBar):
    """``compare``'s and ``sweep``'s bar over runs (an ``experiments.runs.RunsProgress``): done (or
    failed) of those to do, elapsed, ETA; a line per run as it ends (``3/20 done: FGD seed 42 (4.21 s)``,
    ``4/20 failed: FGD seed 43: ValueError: ...``)."""

    def __init__(
        self,
        console: Console,
        label: str,
        asked: bool = True,
        show_after_s: float = SHOW_AFTER_S,
        clock: Clock = time.monotonic,
    ) -> None:
        super().__init__(console, label, _runs, asked, show_after_s, clock)
        self._failed = 0

    def started(self, total: int) -> None:
        if self.enabled:
            self.progress.update(self.task, total=total)

    def finished(self, label: str, seconds: float | None) -> None:
        took = "" if seconds is None else f" ({human_duration(seconds)})"
        self._ended(f"done: {label}{took}")

    def failed(self, label: str, error: str) -> None:
        self._failed += 1
        self._ended(f"failed: {label}: {error}")

    def _ended(self, what: str) -> None:
        if not self.enabled:
            return
        self.progress.update(self.task, advance=1, failed=self._failed)
        task = self.progress.tasks[0]
        total = "?" if task.total is None else f"{task.total:.0f}"
        self.line(f"{task.completed:.0f}/{total} {what}")
        self.show_if_due()
