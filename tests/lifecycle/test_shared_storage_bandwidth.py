"""Model storage shared fairly by concurrent reads (seed 004's cold-start arithmetic)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.lifecycle.shared_bandwidth import Completion, SharedBandwidth

GB = 10**9
TEN_GB_S = 10 * GB


def drain(storage: SharedBandwidth[str]) -> list[Completion[str]]:
    """Every remaining completion, collecting each at its own time as a simulator would."""
    done: list[Completion[str]] = []
    while (nxt := storage.next_completion()) is not None:
        done += storage.advance(nxt.time_s)
    return done


def test_one_replica_reads_140_gb_at_10_gb_s_in_14_s() -> None:
    storage = SharedBandwidth[str](TEN_GB_S)
    storage.add(0.0, "replica-0", 140 * GB)
    assert storage.next_completion() == Completion(14.0, "replica-0")
    assert storage.advance(13.9) == []
    assert storage.advance(14.0) == [Completion(14.0, "replica-0")]
    assert storage.next_completion() is None
    assert len(storage) == 0


def test_eight_replicas_starting_together_each_take_112_s() -> None:
    storage = SharedBandwidth[str](TEN_GB_S)
    for n in range(8):
        storage.add(0.0, f"replica-{n}", 140 * GB)
    assert storage.next_completion() == Completion(112.0, "replica-0")
    assert storage.advance(112.0) == [Completion(112.0, f"replica-{n}") for n in range(8)]


def test_a_second_read_arriving_halfway_slows_the_first() -> None:
    # 0-7 s: a alone at 10 GB/s reads 70 GB. 7-21 s: both at 5 GB/s; a's last 70 GB take 14 s
    # and b reads 70 GB. 21-28 s: b alone reads its last 70 GB at 10 GB/s.
    storage = SharedBandwidth[str](TEN_GB_S)
    storage.add(0.0, "a", 140 * GB)
    assert storage.advance(7.0) == []
    storage.add(7.0, "b", 140 * GB)
    assert storage.next_completion() == Completion(21.0, "a")
    assert storage.advance(21.0) == [Completion(21.0, "a")]
    assert storage.next_completion() == Completion(28.0, "b")
    assert drain(storage) == [Completion(28.0, "b")]


def test_a_small_read_arriving_late_can_finish_first() -> None:
    # a: 100 GB from 0; b: 10 GB from 5 s. At 5 s a has 50 GB left; both at 5 GB/s, b done at 7 s
    # (a then has 40 GB left), a alone finishes at 11 s.
    storage = SharedBandwidth[str](TEN_GB_S)
    storage.add(0.0, "a", 100 * GB)
    storage.add(5.0, "b", 10 * GB)
    assert drain(storage) == [Completion(7.0, "b"), Completion(11.0, "a")]


def test_removing_a_read_returns_its_bytes_left_and_speeds_up_the_others() -> None:
    storage = SharedBandwidth[str](TEN_GB_S)
    storage.add(0.0, "a", 140 * GB)
    storage.add(0.0, "b", 140 * GB)
    assert storage.remove(10.0, "b") == 90 * GB  # 50 GB read at 5 GB/s
    assert storage.next_completion() == Completion(19.0, "a")  # 90 GB left at 10 GB/s
    assert drain(storage) == [Completion(19.0, "a")]
    with pytest.raises(KeyError):
        storage.remove(20.0, "b")


def test_calls_after_a_completion_still_see_it_at_its_own_time() -> None:
    storage = SharedBandwidth[str](TEN_GB_S)
    storage.add(0.0, "a", 140 * GB)
    storage.add(20.0, "b", 10 * GB)  # a finished at 14 s, so b reads alone
    assert storage.next_completion() == Completion(14.0, "a")
    assert storage.advance(20.0) == [Completion(14.0, "a")]
    assert drain(storage) == [Completion(21.0, "b")]


def test_a_read_added_the_instant_another_finishes_does_not_share_with_it() -> None:
    storage = SharedBandwidth[str](TEN_GB_S)
    storage.add(0.0, "a", 140 * GB)
    storage.add(14.0, "b", 10 * GB)
    assert storage.next_completion() == Completion(14.0, "a")
    assert drain(storage) == [Completion(14.0, "a"), Completion(15.0, "b")]


def test_a_read_removed_after_it_finished_is_withdrawn() -> None:
    storage = SharedBandwidth[str](TEN_GB_S)
    storage.add(0.0, "a", 140 * GB)
    assert storage.remove(30.0, "a") == 0.0
    assert storage.advance(30.0) == []


def test_an_empty_read_finishes_at_once() -> None:
    storage = SharedBandwidth[str](TEN_GB_S)
    storage.add(0.0, "a", 140 * GB)
    storage.add(3.0, "empty", 0)
    assert storage.next_completion() == Completion(3.0, "empty")
    assert drain(storage) == [Completion(3.0, "empty"), Completion(14.0, "a")]


def test_misuse_is_refused() -> None:
    storage = SharedBandwidth[str](TEN_GB_S)
    storage.add(5.0, "a", GB)
    with pytest.raises(ValueError, match="already in progress"):
        storage.add(5.0, "a", GB)
    with pytest.raises(ValueError, match="time went backwards"):
        storage.advance(4.0)
    with pytest.raises(ValueError, match="size must be a non-negative"):
        storage.add(5.0, "b", -1)
    with pytest.raises(ValueError, match="bandwidth must be a positive"):
        SharedBandwidth[str](0)


def reference_finish_times(transfers: list[tuple[float, float]], bandwidth: float) -> list[float]:
    """Processor sharing by brute force: remaining bytes of every transfer, event by event."""
    order = sorted(range(len(transfers)), key=lambda i: transfers[i][0])
    remaining: dict[int, float] = {}
    finish = [0.0] * len(transfers)
    now, nxt = 0.0, 0
    while nxt < len(order) or remaining:
        arrival = transfers[order[nxt]][0] if nxt < len(order) else float("inf")
        if remaining:
            rate = bandwidth / len(remaining)
            first = min(remaining, key=lambda i: (remaining[i], i))
            completion = now + remaining[first] / rate
        else:
            rate, completion = 0.0, float("inf")
        step_to = min(arrival, completion)
        for i in remaining:
            remaining[i] -= (step_to - now) * rate
        now = step_to
        if completion <= arrival:
            finish[first] = now
            del remaining[first]
            for i in [i for i, left in remaining.items() if left <= 1e-9 * bandwidth]:
                finish[i] = now
                del remaining[i]
        else:
            remaining[order[nxt]] = transfers[order[nxt]][1]
            nxt += 1
    return finish


def run(transfers: list[tuple[float, float]], bandwidth: float) -> dict[int, float]:
    """Feed arrivals in time order to SharedBandwidth, collecting completions as they happen."""
    storage = SharedBandwidth[int](bandwidth)
    finish: dict[int, float] = {}
    for i in sorted(range(len(transfers)), key=lambda i: transfers[i][0]):
        at, size = transfers[i]
        while (nxt := storage.next_completion()) is not None and nxt.time_s <= at:
            finish.update((done.key, done.time_s) for done in storage.advance(nxt.time_s))
        storage.add(at, i, size)
    while (nxt := storage.next_completion()) is not None:
        finish.update((done.key, done.time_s) for done in storage.advance(nxt.time_s))
    return finish


TRANSFERS = st.lists(
    st.tuples(st.floats(0, 1000, allow_nan=False), st.floats(0, 1e12, allow_nan=False)),
    min_size=1,
    max_size=25,
)
BANDWIDTHS = st.floats(1e6, 1e11, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(transfers=TRANSFERS, bandwidth=BANDWIDTHS)
def test_completions_match_a_brute_force_processor_sharing(
    transfers: list[tuple[float, float]], bandwidth: float
) -> None:
    finish = run(transfers, bandwidth)
    expected = reference_finish_times(transfers, bandwidth)
    assert sorted(finish) == list(range(len(transfers)))
    for i, (at, size) in enumerate(transfers):
        assert finish[i] >= at + size / bandwidth * (1 - 1e-9) - 1e-9
        assert finish[i] == pytest.approx(expected[i], rel=1e-7, abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(transfers=TRANSFERS, bandwidth=BANDWIDTHS)
def test_work_is_conserved_sizes_equal_bandwidth_times_busy_time(
    transfers: list[tuple[float, float]], bandwidth: float
) -> None:
    finish = run(transfers, bandwidth)
    # Busy time: the union of the intervals [arrival, finish] of every transfer.
    busy, reach = 0.0, float("-inf")
    for start, end in sorted((at, finish[i]) for i, (at, _) in enumerate(transfers)):
        if end > reach:
            busy += end - max(start, reach)
            reach = end
    total = sum(size for _, size in transfers)
    assert busy * bandwidth == pytest.approx(total, rel=1e-7, abs=bandwidth * 1e-6)


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.floats(0, 1e12, allow_nan=False), min_size=1, max_size=30), bandwidth=BANDWIDTHS)
def test_simultaneous_reads_finish_in_size_order_at_the_closed_form_times(
    sizes: list[float], bandwidth: float
) -> None:
    storage = SharedBandwidth[int](bandwidth)
    for i, size in enumerate(sizes):
        storage.add(0.0, i, size)
    done = []
    while (nxt := storage.next_completion()) is not None:
        done += storage.advance(nxt.time_s)
    assert [c.key for c in done] == sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    # The k-th smallest (from 0) finishes after the gaps between sorted sizes, each read by n - j transfers.
    ordered = sorted(sizes)
    expected, previous = 0.0, 0.0
    for k, completion in enumerate(done):
        expected += (ordered[k] - previous) * (len(sizes) - k) / bandwidth
        previous = ordered[k]
        assert completion.time_s == pytest.approx(expected, rel=1e-9, abs=1e-9)
