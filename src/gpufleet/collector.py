"""Python's cyclic garbage collector around gpufleet's long runs (a replay, a simulation) and the
commands that hold a large cluster state to their end.

Both build objects that live until the run ends (the cluster, the scheduler's caches, the pods'
records) and make little cyclic garbage (a simulated day leaves about 300 objects in cycles), so the
collector, at CPython's default of a young collection every 700 new container objects, walks the
same survivors again and again to free next to nothing: a simulated day of 500 nodes spent about 6 %
of its CPU in about 240 young, 22 middle and 2 full collections (``docs/performance.md``, "The
simulated day"). Only when the collector runs changes, never what the run computes: gpufleet uses no
finalizer, its one weak reference (the GPU-share ledger's to its cluster, which holds the ledger)
never outlives its object in use, and reference counting frees all other garbage at once.

A replay's cluster and scheduler hold no reference cycle (an assignment does not point back to the pod
index, the share ledger's reference to its cluster is weak, the queue's sort key does not hold the
scheduler), so they are freed as the replay returns: left to the collector, the first collection after
the block walked every object the run made (up to a tenth of a replay's CPU).

* ``collector_paused``: off for the block (an FGD-protocol replay: every object lives to its end; the
  reading of a trace file's rows: the nodes and pods made of them live as long as the trace; the
  parsing of manifest files and their conversion into a scenario, which the documents and the scenario
  outlive; ``gpufleet explain``, ``gpufleet validate`` and ``describe pod`` of a dump, one pass over a
  cluster state that lives to their end: reading a snapshot of 20,000 pods made about a dozen
  collections that freed nothing, a seventh of explaining it).
* ``collector_spaced``: young collections every ``YOUNG_THRESHOLD`` new objects for the block (a
  simulation, which may run for a simulated month: its memory stays bounded by collections that
  still run), which never walk what existed before it (``gc.freeze``: the scenario, and what was read
  to make it, live on through the run). Made while the collector was paused, a snapshot's 20,000 pods
  (millions of objects) were otherwise walked by the run's first young collection, then by a middle
  and a full one, for nothing: two fifths of simulating it in ``gpufleet whatif``.
* ``collector_frozen``: what exists as the block begins left out of its collections (``gc.freeze``),
  then back in the oldest generation; a pause inside it freezes what it made as it ends (a scenario
  read inside ``gpufleet simulate``'s or ``gpufleet whatif``'s block, which lives to the command's end).
* ``freeze_after_pauses``: from then on in the process, what each pause made that outlives it is frozen
  as the pause ends (a sweep's worker: its replays keep memos for the trace's next runs).
* ``frozen_for_exit``: every object frozen as the command line's process ends, so that the interpreter's
  last collection at shutdown walks none of them.

Each puts the collector back as it found it, so a caller's own setting (off, or other thresholds)
holds after the block. The setting is the process's, so blocks that overlap (runs in threads of one
process) share it: the first to enter changes it and the last to leave puts back what the first
found, whatever order they leave in.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

#: Container objects allocated (less those freed) between young collections while a simulation runs:
#: CPython's default is 700; from about 5,000 the day's collections cost a fifth of what they did.
YOUNG_THRESHOLD = 10_000


@dataclass
class _Held:
    """One process-wide collector setting: how many blocks are inside, and what the first one found."""

    blocks: int = 0
    found: Any = None


_LOCK = threading.Lock()
_PAUSED, _SPACED, _FROZEN = _Held(), _Held(), _Held()
#: ``freeze_after_pauses``' setting
_freezing_after_pauses = False


@contextmanager
def _holding(held: _Held, change: Callable[[], Any], put_back: Callable[[Any], None]) -> Iterator[None]:
    """``change`` (it returns what it found) when the first block enters, ``put_back`` of that when the
    last leaves."""
    with _LOCK:
        if held.blocks == 0:
            held.found = change()
        held.blocks += 1
    try:
        yield
    finally:
        with _LOCK:
            held.blocks -= 1
            if held.blocks == 0:
                put_back(held.found)


def collector_paused() -> AbstractContextManager[None]:
    """The cyclic collector off for the block, then as it was; once the block ends, the first
    collection frees what it left. Inside a block that froze what existed as it began
    (``collector_frozen``), what the pause made is frozen too as it ends: it lives on as well, and the
    first collection would otherwise walk all of it."""

    def change() -> bool:
        enabled = gc.isenabled()
        gc.disable()
        return enabled

    def put_back(enabled: bool) -> None:
        if (_FROZEN.blocks and _FROZEN.found) or _freezing_after_pauses:
            gc.freeze()
        if enabled:
            gc.enable()

    return _holding(_PAUSED, change, put_back)


def freeze_after_pauses(on: bool = True) -> None:
    """From now on in this process (``on``; off with False), what a pause made that outlives it is frozen
    as the pause ends, as inside ``collector_frozen``: a sweep's worker, whose replays keep what the next
    runs of their trace use (the workload, the fragmentation values, the static verdicts' memo), which
    the first collection after each replay would otherwise walk, then every middle and full one again."""
    global _freezing_after_pauses
    _freezing_after_pauses = on


def collector_frozen() -> AbstractContextManager[None]:
    """The objects that exist as the block begins left out of its collections (``gc.freeze``), where
    none are frozen yet (a sweep's worker has its traces frozen: left as they are); then what was
    frozen back in the oldest generation (``gc.unfreeze``)."""

    def change() -> bool:
        freezing = gc.get_freeze_count() == 0
        if freezing:
            gc.freeze()
        return freezing

    def put_back(froze: bool) -> None:
        if froze:
            gc.unfreeze()

    return _holding(_FROZEN, change, put_back)


@contextmanager
def collector_spaced(young: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Young collections every ``young`` new container objects for the block (never more often than
    the caller had them; blocks that overlap it keep the first one's), the older generations'
    thresholds as they were, and what exists as the block begins frozen (``collector_frozen``); then the
    thresholds as they were."""

    def change() -> tuple[int, int, int]:
        thresholds = gc.get_threshold()
        gc.set_threshold(max(young, thresholds[0]), *thresholds[1:])
        return thresholds

    with collector_frozen(), _holding(_SPACED, change, lambda thresholds: gc.set_threshold(*thresholds)):
        yield


def frozen_for_exit() -> None:
    """Every object the process holds frozen (``gc.freeze``) as its command ends: the interpreter's last
    collection, as it shuts down (made even with the collector off), would walk them all to find the few
    in cycles, and the process is about to end, which frees everything (0.9-1.6 s of CPU after a what-if
    of a 20,000-pod snapshot)."""
    gc.freeze()
