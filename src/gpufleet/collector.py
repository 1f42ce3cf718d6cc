"""Python's cyclic garbage collector around gpufleet's long runs: a replay and a simulation.

Both build objects that live until the run ends (the cluster, the scheduler's caches, the pods'
records) and make little cyclic garbage (a simulated day leaves about 300 objects in cycles), so the
collector, at CPython's default of a young collection every 700 new container objects, walks the
same survivors again and again to free next to nothing: a simulated day of 500 nodes spent about 6 %
of its CPU in about 240 young, 22 middle and 2 full collections (``docs/performance.md``, "The
simulated day"). Only when the collector runs changes, never what the run computes: gpufleet uses no
finalizer and no weak reference, and reference counting frees all other garbage at once.

* ``collector_paused``: off for the block (an FGD-protocol replay: every object lives to its end).
* ``collector_spaced``: young collections every ``YOUNG_THRESHOLD`` new objects for the block (a
  simulation, which may run for a simulated month: its memory stays bounded by collections that
  still run).

Each puts the collector back as it found it, so a caller's own setting (off, or other thresholds)
holds after the block.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Container objects allocated (less those freed) between young collections while a simulation runs:
#: CPython's default is 700; from about 5,000 the day's collections cost a fifth of what they did.
YOUNG_THRESHOLD = 10_000


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the block, then as it was; once the block ends, the first
    collection frees what it left."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def collector_spaced(young: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Young collections every ``young`` new container objects for the block (never more often than
    the caller had them), the older generations' thresholds as they were; then the thresholds as
    they were."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(young, thresholds[0]), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
