"""Containers an object makes on first write (issue 18: the month's memory).

A controller kept for every Job of a run (``workloads.job.JobController``) holds a dozen sets, dictionaries
and lists that most Jobs never fill (adopted pods, per-index backoffs, restarts, pods being deleted): made
empty in ``__init__`` they cost some 1.5 KB a Job for the whole run. Such an attribute holds instead a
shared empty container that cannot be written (``EMPTY_MAPPING``, ``EMPTY_SET``, ``EMPTY_SEQUENCE``, and it
is typed read-only: ``Mapping``, ``AbstractSet``, ``Sequence``), so that reads, as fast as any attribute's,
see an empty container; it is written through its ``LazyContainer``:

- ``lazy.of(obj)`` is the container to write, made by the factory (and kept) the first time;
- ``lazy.drop(obj)`` lets it go: reads see the shared empty one again (state nothing reads any more).

This mirrors no upstream rule: it only changes how gpufleet holds its state, never what the state is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from types import MappingProxyType
from typing import Any, Generic, TypeVar, cast

M = TypeVar("M")  # the container, mutable
K = TypeVar("K")
V = TypeVar("V")

#: what an attribute holds until its container is made: shared, and none of them can be written
EMPTY_MAPPING: Mapping[Any, Any] = MappingProxyType({})
EMPTY_SET: AbstractSet[Any] = frozenset()
EMPTY_SEQUENCE: Sequence[Any] = ()


class LazyContainer(Generic[M]):
    """The writer of attribute ``name``, which holds ``empty`` until ``of`` makes its container with
    ``factory``."""

    __slots__ = ("empty", "factory", "name")

    def __init__(self, name: str, factory: Callable[[], M], empty: object) -> None:
        self.name = name
        self.factory = factory
        self.empty = empty

    def of(self, obj: object) -> M:
        """``obj``'s container, to write: made (and kept) the first time."""
        held = getattr(obj, self.name)
        if held is self.empty:
            held = self.factory()
            setattr(obj, self.name, held)
        return cast(M, held)

    def drop(self, obj: object) -> None:
        """``obj`` no longer keeps its container: it reads empty again."""
        setattr(obj, self.name, self.empty)


def lazy_dict(name: str) -> LazyContainer[dict[K, V]]:
    """The writer of a dictionary attribute ``name`` (``EMPTY_MAPPING`` until written)."""
    return LazyContainer(name, dict, EMPTY_MAPPING)


def lazy_set(name: str) -> LazyContainer[set[K]]:
    """The writer of a set attribute ``name`` (``EMPTY_SET`` until written)."""
    return LazyContainer(name, set, EMPTY_SET)


def lazy_list(name: str) -> LazyContainer[list[K]]:
    """The writer of a list attribute ``name`` (``EMPTY_SEQUENCE`` until written)."""
    return LazyContainer(name, list, EMPTY_SEQUENCE)
