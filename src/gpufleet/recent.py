"""Process-wide memos that keep only their newest entries: an ``OrderedDict`` used as a least recently
used cache whose entry the caller makes (``functools.lru_cache`` keys by a function's arguments; these
key by what the caller chooses, such as a task set, or pods by their ids, and may hand out an entry
made from the caller's own state)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def newest(kept: OrderedDict[K, V], key: K, make: Callable[[], V], size: int) -> V:
    """``kept[key]``, made by ``make`` where there is none, as the newest entry; the oldest go so that at
    most ``size`` are kept."""
    if key in kept:
        kept.move_to_end(key)
        return kept[key]
    value = make()
    while len(kept) >= size:
        kept.popitem(last=False)
    kept[key] = value
    return value
