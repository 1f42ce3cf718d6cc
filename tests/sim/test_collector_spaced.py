"""A simulation runs with the garbage collector's young collections spaced out (gpufleet.collector):
what it computes does not change, and the caller's thresholds hold again once it ends, also when runs in
threads of one process overlap (as for a replay's pause)."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpufleet.collector import YOUNG_THRESHOLD, collector_paused, collector_spaced
from gpufleet.kube import load_scenario
from gpufleet.report import finished_summary
from gpufleet.sim import simulation
from gpufleet.sim.event_loop import EventLoop
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

BURSTS = Path(__file__).parents[2] / "examples" / "experiments" / "bursts.yaml"


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    kept = gc.get_threshold()
    yield kept
    gc.set_threshold(*kept)


def summary_of(sim: Simulation) -> str:
    return json.dumps(finished_summary(build_summary(sim, None)), sort_keys=True)


def test_a_simulation_collects_young_objects_every_young_threshold_and_restores_the_callers_thresholds(
    thresholds: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, int, int]] = []
    step = EventLoop.step

    def watched(self: EventLoop) -> bool:
        seen.append(gc.get_threshold())
        return step(self)

    monkeypatch.setattr(EventLoop, "step", watched)
    gc.set_threshold(700, 7, 9)
    sim = Simulation(load_scenario([BURSTS]))
    sim.run()
    assert seen and set(seen) == {(YOUNG_THRESHOLD, 7, 9)}
    assert gc.get_threshold() == (700, 7, 9)


def test_the_collectors_spacing_changes_no_result(
    thresholds: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    spaced = Simulation(load_scenario([BURSTS]))
    spaced.run()
    gc.set_threshold(700, 10, 10)  # CPython's default young threshold, kept inside the run
    monkeypatch.setattr(simulation, "collector_spaced", lambda: collector_spaced(young=700))
    default = Simulation(load_scenario([BURSTS]))
    default.run()
    assert summary_of(default) == summary_of(spaced)


def test_a_caller_who_collects_less_often_keeps_that(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(50_000, 10, 10)
    with collector_spaced():
        inside = gc.get_threshold()
    assert inside == (50_000, 10, 10) and gc.get_threshold() == (50_000, 10, 10)


def test_blocks_that_overlap_share_the_spacing_until_the_last_leaves_whatever_order_they_leave_in(
    thresholds: tuple[int, int, int],
) -> None:
    """Two runs in threads of one process: the first leaves while the second still runs."""
    gc.set_threshold(700, 7, 9)
    first, second = collector_spaced(), collector_spaced()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    inside = gc.get_threshold()
    second.__exit__(None, None, None)
    assert inside == (YOUNG_THRESHOLD, 7, 9) and gc.get_threshold() == (700, 7, 9)


def test_a_pause_that_overlaps_another_keeps_the_collector_off_until_the_last_ends() -> None:
    enabled = gc.isenabled()
    gc.enable()
    try:
        first, second = collector_paused(), collector_paused()
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)
        off_inside = not gc.isenabled()
        second.__exit__(None, None, None)
        assert off_inside and gc.isenabled()
    finally:
        (gc.enable if enabled else gc.disable)()
