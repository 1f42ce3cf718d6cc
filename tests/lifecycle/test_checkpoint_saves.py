"""Checkpoints that take time to write (``gpufleet.io/checkpoint-save``, ``lifecycle.checkpoints``):
computing pauses while one is written, a checkpoint counts once written, none is written at the end;
with saving free the progress is the time worked (the model without save times)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.lifecycle.checkpoints import Progress, last_checkpoint, progress, time_to_finish


def test_a_task_pays_one_save_per_checkpoint_on_the_way_and_none_at_its_end() -> None:
    """35 s of work, a checkpoint every 10 s taking 2 s: saves at 10, 20, 30 s of work."""
    assert time_to_finish(0.0, 35.0, 10.0, 2.0) == 35.0 + 3 * 2.0
    assert time_to_finish(30.0, 35.0, 10.0, 2.0) == 5.0  # resumed from the last checkpoint
    assert time_to_finish(0.0, 30.0, 10.0, 2.0) == 30.0 + 2 * 2.0  # none at 30 s: the task is done


def test_a_checkpoint_counts_only_once_written() -> None:
    assert progress(0.0, 11.0, 35.0, 10.0, 2.0) == Progress(10.0, 0.0, 1.0)  # writing the first
    assert progress(0.0, 12.0, 35.0, 10.0, 2.0) == Progress(10.0, 10.0, 2.0)  # written
    assert progress(0.0, 13.0, 35.0, 10.0, 2.0) == Progress(11.0, 10.0, 2.0)  # computing again
    assert progress(0.0, 41.0, 35.0, 10.0, 2.0) == Progress(35.0, 35.0, 6.0)  # done


def test_work_resumed_from_a_checkpoint_has_it_saved() -> None:
    assert progress(10.0, 3.0, 35.0, 10.0, 2.0) == Progress(13.0, 10.0, 0.0)
    assert progress(10.0, 11.0, 35.0, 10.0, 2.0) == Progress(20.0, 10.0, 1.0)


def test_a_time_worked_a_rounding_error_short_of_a_checkpoint_has_reached_it() -> None:
    """1200 + t - t for t = 3867.1240091553377 is 1199.9999999999998: the second checkpoint, not the first."""
    assert last_checkpoint(1199.9999999999998, 600.0) == 1200.0
    assert last_checkpoint(1199.0, 600.0) == 600.0


@settings(max_examples=200, deadline=None)
@given(
    start=st.floats(0, 1000),
    elapsed=st.floats(0, 5000),
    task=st.floats(1, 3000),
    interval=st.floats(1, 500),
    save=st.floats(0.001, 100),
)
def test_progress_is_the_time_worked_less_the_saves(
    start: float, elapsed: float, task: float, interval: float, save: float
) -> None:
    """Whatever the times: what is saved never exceeds what is done, done never exceeds the task, and
    done plus the time saving is the time worked until the task ends."""
    start = min(start, task)
    made = progress(start, elapsed, task, interval, save)
    assert start - 1e-6 <= made.saved_s <= made.done_s <= task + 1e-9
    finish = time_to_finish(start, task, interval, save)
    worked = min(elapsed, finish)
    assert abs((made.done_s - start) + made.saving_s - worked) < 1e-6 * max(1.0, finish)
