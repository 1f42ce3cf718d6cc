"""Kueue's partial-admission search,
``kubernetes-sigs/kueue: pkg/scheduler/flavorassigner/podset_reducer_test.go`` (``TestSearch``, at commit
``ff69552e79ad``: 9 cases), held against ``gpufleet.scheduling.kueue.partial_admission``.

Each case gives pod sets (``MakePodSet(name, count).SetMinimumCount(n)``) and a limit on the total pods; the
search must find the largest counts whose total is within it (``wantCount``), or none (``wantFound`` false,
``wantCount`` 0).
"""

from __future__ import annotations

import pytest

from gpufleet.scheduling.kueue.partial_admission import search

#: (case, [(count, minCount or None)], countLimit, wantCount, wantFound)
CASES: list[tuple[str, list[tuple[int, int | None]], int, int, bool]] = [
    ("empty", [], 10, 0, False),
    ("partial not available", [(1, None), (2, 2)], 2, 0, False),
    ("partial available", [(5, 3), (5, 4), (5, 1), (5, 2)], 15, 15, True),
    ("one partial available", [(5, 3), (5, None), (5, None), (5, None)], 19, 19, True),
    ("to min", [(5, 3), (5, 4), (5, 1), (5, 2)], 10, 10, True),
    ("to max", [(5, 3), (5, 4), (5, 1), (5, 2)], 20, 20, True),
    ("no overflow", [(150_000, 1)] * 8, 150_000, 150_000, True),
    ("max pods on 1.27", [(150_000, 1)] + [(1, None)] * 7, 150_000, 150_000, True),
    ("podset with replica count 0", [(0, 0)], 0, 0, False),
]


@pytest.mark.parametrize(
    ("pod_sets", "limit", "want_count", "want_found"),
    [pytest.param(p, limit, count, found, id=f"TestSearch/{name}") for name, p, limit, count, found in CASES],
)
def test_search(
    pod_sets: list[tuple[int, int | None]], limit: int, want_count: int, want_found: bool
) -> None:
    full = [count for count, _ in pod_sets]
    least = [count if minimum is None else minimum for count, minimum in pod_sets]
    found = search(full, least, lambda counts: sum(counts) if sum(counts) <= limit else None)
    assert (found or 0, found is not None) == (want_count, want_found)
