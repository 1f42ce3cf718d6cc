"""Kueue's partial admission: the largest pod counts, between each pod set's ``count`` and ``minCount``,
that a workload can be admitted with.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/flavorassigner/podset_reducer.go`` (``PodSetReducer``), which
``getInitialAssignments`` (``pkg/scheduler/scheduler.go``) runs when a workload's whole counts neither fit
nor find preemption targets and the ``PartialAdmission`` gate (beta, on by default since Kueue 0.5) is on:
every pod set gives up its share of the total reducible pods (``count - minCount``) in step, ``delta * i /
totalDelta`` at step ``i`` (rounded down), and a binary search (Go's ``sort.Search`` over ``0..totalDelta``)
finds the first step whose counts ``fits``; it assumes the steps that fit are the later ones. Found only when
the step the search ends on is one that fit. Upstream's ``fits`` is the flavor assigner, which places TAS pod
sets, so the admission's counts fit both the quota and the topology (``admission.schedule``'s ``placeable``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

R = TypeVar("R")


def counts_at(full: Sequence[int], minimum: Sequence[int], step: int) -> list[int]:
    """The pod counts at ``step`` (``fillPodSetSizesForSearchIndex``): each pod set's ``full`` count less its
    share of ``step`` out of the total reducible pods."""
    deltas = [f - m for f, m in zip(full, minimum, strict=True)]
    total = sum(deltas)
    return [f - d * step // total for f, d in zip(full, deltas, strict=True)]


def search(full: Sequence[int], minimum: Sequence[int], fits: Callable[[list[int]], R | None]) -> R | None:
    """``PodSetReducer.Search``: what ``fits`` answered (None: does not fit) for the largest counts the binary
    search found to fit, or None where none did (nothing to reduce, or the search ended on a step that does
    not fit)."""
    total = sum(f - m for f, m in zip(full, minimum, strict=True))
    if total == 0:
        return None
    last_good, last = 0, None
    lo, hi = 0, total + 1
    while lo < hi:  # Go's ``sort.Search``: the first step in [0, total] that fits
        mid = (lo + hi) // 2
        answer = fits(counts_at(full, minimum, mid))
        if answer is None:
            lo = mid + 1
        else:
            last_good, last, hi = mid, answer, mid
    return last if lo == last_good else None
