"""``gpufleet.lazy_container``: an attribute holds a shared empty container that cannot be written until its
writer makes the container (first write); dropped, it reads empty again (issue 18, the month's memory)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from gpufleet.lazy_container import EMPTY_MAPPING, lazy_dict

_COUNTS = lazy_dict("counts")


class Holder:
    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: Mapping[str, int] = EMPTY_MAPPING


def test_an_attribute_reads_empty_until_its_writer_makes_the_container_once() -> None:
    holder = Holder()
    assert holder.counts is EMPTY_MAPPING and dict(holder.counts) == {}
    _COUNTS.of(holder)["a"] = 1
    made = holder.counts
    _COUNTS.of(holder)["b"] = 2
    assert holder.counts is made and dict(made) == {"a": 1, "b": 2}


def test_the_shared_empty_container_cannot_be_written() -> None:
    """Written through the attribute instead of its writer, the shared empty one refuses (it would be every
    holder's)."""
    with pytest.raises(TypeError):
        Holder().counts["a"] = 1  # type: ignore[index]


def test_a_dropped_container_reads_empty_again() -> None:
    holder = Holder()
    _COUNTS.of(holder)["a"] = 1
    _COUNTS.drop(holder)
    assert holder.counts is EMPTY_MAPPING
    assert _COUNTS.of(holder) == {}
