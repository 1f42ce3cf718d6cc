"""Periodic checkpoints that take time to save: how far a computation got, and what it kept, after some
time working.

A training process checkpoints every ``interval`` of computation (``gpufleet.io/checkpoint-interval``)
and stops computing while the checkpoint is written (``gpufleet.io/checkpoint-save``, synchronous
saving as ``torch.save`` of the state dict and PyTorch DCP's ``save`` do); the checkpoint counts once
written. No checkpoint is taken when the task is done. Work resumed from a checkpoint (or from the
start) has that progress saved already. With saving free (``save`` 0) this is the simulator's model
before save times: progress is the time worked, kept to the last multiple of the interval.

The cost of a save against the work a fault loses gives an optimum interval, Young's first-order
approximation sqrt(2 x save x MTBF) (J. W. Young, "A first order approximation to the optimum
checkpoint interval", CACM 17(9), 1974; refined by J. T. Daly, FGCS 22(3), 2006).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """After some time working from a start: the computation done, the part of it saved in a checkpoint,
    and the time spent writing checkpoints (a save under way included)."""

    done_s: float
    saved_s: float
    saving_s: float


def _intervals(done_s: float, interval_s: float) -> int:
    """How many whole intervals ``done_s`` of computation holds. A sum of times a rounding error short of
    a multiple of the interval (1199.9999999999998 for 1200) holds it."""
    return math.floor(done_s / interval_s + 1e-12)


def last_checkpoint(done_s: float, interval_s: float) -> float:
    """The computation kept by the last checkpoint after ``done_s`` of it, saving free: the last multiple
    of the interval reached."""
    return _intervals(done_s, interval_s) * interval_s


def _checkpoints(start_s: float, task_s: float, interval_s: float) -> tuple[float, int]:
    """The first checkpoint past ``start_s`` (a start on a checkpoint has it saved) and how many are
    taken before the task's end."""
    first = (_intervals(start_s, interval_s) + 1) * interval_s
    return first, max(math.ceil((task_s - first) / interval_s - 1e-12), 0)


def progress(start_s: float, elapsed_s: float, task_s: float, interval_s: float, save_s: float) -> Progress:
    """The progress of a task of ``task_s`` seconds of computation, begun at ``start_s`` of it (saved),
    after ``elapsed_s`` seconds working, checkpointing every ``interval_s`` of computation (> 0) and
    pausing ``save_s`` for each save."""
    first, count = _checkpoints(start_s, task_s, interval_s)
    if count == 0 or elapsed_s <= first - start_s:
        done = min(start_s + elapsed_s, task_s)
        return Progress(done, task_s if done >= task_s else start_s, 0.0)
    cycle = save_s + interval_s
    after = elapsed_s - (first - start_s)  # from the moment the first save begins
    j = min(math.floor(after / cycle), count - 1)  # the checkpoint reached last
    into = after - j * cycle
    reached = first + j * interval_s
    if into < save_s:  # writing it: the one before is the last saved
        return Progress(reached, reached - interval_s if j > 0 else start_s, j * save_s + into)
    done = min(reached + max(into - save_s, 0.0), task_s)
    return Progress(done, task_s if done >= task_s else reached, (j + 1) * save_s)


def time_to_finish(start_s: float, task_s: float, interval_s: float, save_s: float) -> float:
    """Seconds working from ``start_s`` of the task to its end: the computation left and a save at each
    checkpoint on the way (none at the end)."""
    return task_s - start_s + _checkpoints(start_s, task_s, interval_s)[1] * save_s
