"""The worker pool of compare and sweep (``runs.execute`` with several jobs): workers are forked with
what the parent holds (the traces it read) frozen, so their garbage collections never walk it, and freeze
what their runs' pauses made that lives on."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Any

from gpufleet.collector import collector_paused
from gpufleet.experiments import runs


@dataclass(frozen=True)
class FrozenCount:
    """A run saying how many objects its process's collector leaves alone (``gc.get_freeze_count``)."""

    n: int

    def params(self) -> dict[str, Any]:
        return {"n": self.n}

    def run(self) -> dict[str, Any]:
        before = gc.get_freeze_count()
        with collector_paused():
            kept = [[self.n] for _ in range(100)]  # what a replay keeps for its trace's next runs
        return {"frozen": before, "kept frozen": gc.get_freeze_count() - before >= len(kept)}

    def line(self, result: dict[str, Any]) -> dict[str, Any]:
        return {**self.params(), **result}

    def label(self) -> str:
        return f"run {self.n}"


def test_pool_workers_leave_the_parents_objects_to_it_and_the_parent_collects_as_before() -> None:
    held = [[i] for i in range(1_000)]  # what a parent reads before the runs (its traces)
    results = list(runs.execute([FrozenCount(n) for n in range(4)], jobs=2))
    assert sorted(spec.n for spec, _ in results) == [0, 1, 2, 3]
    assert all(isinstance(r, dict) and r["frozen"] >= len(held) for _, r in results)
    assert gc.get_freeze_count() == 0  # frozen only while the workers were forked


def test_in_a_pool_worker_what_a_pause_made_that_lives_on_is_frozen_as_it_ends() -> None:
    """``freeze_after_pauses`` in each worker: a replay's memos for its trace's next runs are not walked by
    the worker's collections after it; in this process a pause freezes nothing."""
    results = list(runs.execute([FrozenCount(n) for n in range(4)], jobs=2))
    assert all(isinstance(r, dict) and r["kept frozen"] for _, r in results)
    alone = FrozenCount(9).run()
    assert alone["kept frozen"] is False and gc.get_freeze_count() == 0
