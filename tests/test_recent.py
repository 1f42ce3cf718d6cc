"""``recent.newest``: a memo keeping its newest entries, made by the caller where missing."""

from __future__ import annotations

from collections import OrderedDict

from gpufleet.recent import newest


def test_a_memo_makes_what_it_lacks_hands_back_what_it_has_and_drops_the_least_recently_used() -> None:
    kept: OrderedDict[str, int] = OrderedDict()
    made: list[str] = []

    def make(key: str) -> int:
        made.append(key)
        return len(made)

    assert [newest(kept, k, lambda k=k: make(k), 2) for k in ("a", "b", "a", "c", "b", "a")] == [
        1,
        2,
        1,
        3,
        4,
        5,
    ]
    assert made == ["a", "b", "c", "b", "a"] and list(kept) == ["b", "a"]
