"""A simulation runs with the garbage collector's young collections spaced out, and what existed before
it frozen (gpufleet.collector): what it computes does not change, and the caller's thresholds (and what it
froze) hold again once it ends, also when runs in threads of one process overlap (as for a replay's pause).
Reading a scenario pauses the collector."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpufleet.collector import (
    YOUNG_THRESHOLD,
    collector_frozen,
    collector_paused,
    collector_spaced,
    freeze_after_pauses,
)
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


def test_what_existed_before_a_simulation_is_left_out_of_its_collections_and_back_in_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The scenario (made before the run, living to its end) is frozen (``gc.freeze``) while the run
    goes on; then what was frozen is back in the oldest generation, where collections find it. (The
    frozen count is read every 100th step: CPython 3.11 counts the permanent generation one object at a
    time, which in a whole-suite run's heap took half a minute over every step.)"""
    scenario = load_scenario([BURSTS])
    sim = Simulation(scenario)
    counts: list[int] = []
    steps = 0
    step = EventLoop.step

    def watched(self: EventLoop) -> bool:
        nonlocal steps
        if steps % 100 == 0:
            counts.append(gc.get_freeze_count())
        steps += 1
        return step(self)

    monkeypatch.setattr(EventLoop, "step", watched)
    assert gc.get_freeze_count() == 0
    sim.run()
    assert len(counts) > 1 and min(counts) > 0
    assert not frozen(scenario.pods) and any(o is scenario.pods for o in gc.get_objects(2))


def frozen(obj: object) -> bool:
    """Tracked, and in none of the collector's generations: in its permanent one (``gc.freeze``)."""
    return gc.is_tracked(obj) and not any(o is obj for o in gc.get_objects())


def test_what_a_caller_froze_stays_frozen_and_a_block_freezes_nothing_more() -> None:
    """A sweep's worker forks with its traces frozen: its runs leave that as they find it."""
    old = [["made before the caller froze"]]
    gc.freeze()
    try:
        new = [["made after"]]
        with collector_spaced(), collector_frozen():
            inside = frozen(old), frozen(new)
        assert inside == (True, False) and frozen(old)
    finally:
        gc.unfreeze()


def test_frozen_blocks_that_overlap_keep_what_the_first_froze_until_the_last_leaves() -> None:
    made = [["before both"]]
    first, second = collector_frozen(), collector_spaced()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    still = frozen(made)
    second.__exit__(None, None, None)
    assert still and not frozen(made)


def test_what_a_pause_inside_a_frozen_block_made_is_frozen_until_the_block_ends() -> None:
    """A scenario read with the collector paused inside ``gpufleet whatif``'s frozen block lives to its
    end: the first collection after the pause would walk all of it."""
    with collector_spaced():
        with collector_paused():
            read = [["read while paused"]]
        inside = frozen(read)
    assert inside and not frozen(read)
    with collector_paused():
        alone = [["read while paused, in no frozen block"]]
    assert not frozen(alone)


def test_after_freeze_after_pauses_what_a_pause_made_that_lives_on_is_frozen_until_switched_off() -> None:
    """A sweep's worker: each replay's memos for its trace's next runs are frozen as its pause ends."""
    freeze_after_pauses()
    try:
        with collector_paused():
            kept = [["kept for the next run"]]
        inside = frozen(kept)
    finally:
        freeze_after_pauses(False)
        gc.unfreeze()
    with collector_paused():
        later = [["made once it was switched off"]]
    assert inside and not frozen(later)


def test_the_collector_is_off_from_reading_a_scenarios_files_to_the_end_of_their_conversion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the files are read into, and what that becomes, lives as long as the scenario: no collection
    walks it meanwhile (the documents made of the parsed files included)."""
    from gpufleet.kube import load

    enabled: list[tuple[str, bool]] = []
    reading, converting = load.read_documents, load.scenario_from_documents

    def read(*args: Any, **kwargs: Any) -> Any:
        enabled.append(("reading", gc.isenabled()))
        out = reading(*args, **kwargs)
        enabled.append(("read", gc.isenabled()))
        return out

    def convert(*args: Any, **kwargs: Any) -> Any:
        enabled.append(("converting", gc.isenabled()))
        return converting(*args, **kwargs)

    monkeypatch.setattr(load, "read_documents", read)
    monkeypatch.setattr(load, "scenario_from_documents", convert)
    assert gc.isenabled()
    scenario = load_scenario([BURSTS])
    assert [job.name for job in scenario.jobs][:1] == ["burst-1"]
    assert enabled == [("reading", False), ("read", False), ("converting", False)]
    assert gc.isenabled()
