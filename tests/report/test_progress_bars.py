"""The progress bars of simulate, compare and sweep (report.progress) on a fake terminal, with an
injected clock: what they show, that they wait before showing, and that they show nothing when stderr
is not a terminal or progress is turned off."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from conftest import wait_until
from gpufleet.report.progress import SHOW_AFTER_S, RunsBar, SimulationBar
from gpufleet.report.progress_wanted import NO_PROGRESS_ENV


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=120, color_system=None), buffer


@pytest.fixture(autouse=True)
def progress_not_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NO_PROGRESS_ENV, raising=False)


def simulate(bar: SimulationBar, clock: Clock, steps: int, horizon_s: float | None) -> None:
    """``steps`` updates, one second of wall time and one simulated hour each, 1,000 events apart."""
    for step in range(1, steps + 1):
        clock.now = float(step)
        bar.advanced(3600.0 * step, horizon_s, 1000 * step)


def test_the_simulation_bar_shows_simulated_time_of_the_horizon_events_and_events_per_second() -> None:
    console, shown = terminal()
    clock = Clock()
    with SimulationBar(console, clock=clock) as bar:
        simulate(bar, clock, 6, 24 * 3600.0)
    text = shown.getvalue()
    assert bar.shown
    assert "simulating" in text
    assert "6h of 1d (25%) · ETA 18 s · 6,000 events · 1,000 events/s" in text
    assert "simulated 6h in 6 s: 6,000 events (1,000 events/s)" in text  # the line left behind


def test_without_a_duration_the_bar_says_the_run_goes_on_until_nothing_is_left() -> None:
    console, shown = terminal()
    clock = Clock()
    with SimulationBar(console, clock=clock) as bar:
        simulate(bar, clock, 3, None)
    assert "3h simulated (until nothing is left) · 3,000 events · 1,000 events/s" in shown.getvalue()
    assert "ETA" not in shown.getvalue()


def test_a_run_shorter_than_the_delay_shows_nothing() -> None:
    console, shown = terminal()
    clock = Clock()
    with SimulationBar(console, clock=clock) as bar:
        clock.now = SHOW_AFTER_S / 2
        bar.advanced(3600.0, 7200.0, 500)
    assert not bar.shown
    assert shown.getvalue() == ""


@pytest.mark.parametrize("how", ["not a terminal", "--no-progress", NO_PROGRESS_ENV])
def test_nothing_is_shown_off_a_terminal_or_when_turned_off(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    console, shown = terminal()
    if how == "not a terminal":
        console = Console(file=shown)
    if how == NO_PROGRESS_ENV:
        monkeypatch.setenv(NO_PROGRESS_ENV, "1")
    clock = Clock()
    runs = RunsBar(console, "sweeping", asked=how != "--no-progress", clock=clock)
    with SimulationBar(console, asked=how != "--no-progress", clock=clock) as bar, runs:
        simulate(bar, clock, 5, 7200.0)
        runs.started(2)
        runs.finished("FGD seed 1 (pods.csv)", 3.0)
        runs.failed("FGD seed 2 (pods.csv)", "ValueError: no")
    assert not bar.enabled and not bar.shown and not runs.shown
    assert shown.getvalue() == ""


def test_the_runs_bar_counts_runs_done_and_failed_with_a_line_per_run_and_an_eta() -> None:
    console, shown = terminal()
    clock = Clock()
    with RunsBar(console, "comparing", clock=clock) as bar:
        bar.started(4)
        clock.now = 10.0
        bar.finished("FGD seed 42 (pods.csv)", 9.5)
        clock.now = 20.0
        bar.failed("FGD seed 43 (pods.csv)", "ValueError: boom (at fgd.py:7)")
    text = shown.getvalue()
    assert "1/4 done: FGD seed 42 (pods.csv) (9.5 s)" in text  # held until the bar showed, then printed
    assert "2/4 failed: FGD seed 43 (pods.csv): ValueError: boom (at fgd.py:7)" in text
    assert "2/4 runs · 1 failed · ETA 20 s · 20 s" in text
    assert text.index("1/4 done") < text.index("2/4 failed")


def test_the_runs_bar_appears_after_the_delay_even_before_a_run_ends() -> None:
    console, shown = terminal()
    with RunsBar(console, "sweeping", show_after_s=0.05) as bar:
        bar.started(3)
        wait_until("the bar shows", lambda: bar.shown, timeout_s=10)
    assert "0/3 runs" in shown.getvalue()
