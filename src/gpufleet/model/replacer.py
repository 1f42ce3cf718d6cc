"""``dataclasses.replace`` for one dataclass at a third of its cost, for the model's objects copied in hot
paths (the FGD protocol's tuned copies of trace pods, each replay's copies of the trace's nodes).

The fields ``__init__`` takes are read in one call (``operator.attrgetter``), the changed ones put in their
places, and the object made by ``__init__``, as ``replace`` makes it (so ``__post_init__`` runs, and a field
that ``__init__`` does not take is left to it). Not by copying ``__dict__``: reading an object's
``__dict__`` moves its attributes into a dictionary of its own, and every later read of them is about
twice as slow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from operator import attrgetter
from typing import Any, TypeVar

T = TypeVar("T")


def replacer(cls: type[T]) -> Callable[..., T]:
    """A function ``(obj, **changes)`` that does what ``dataclasses.replace(obj, **changes)`` does for
    instances of the dataclass ``cls`` (not of its subclasses)."""
    names = [f.name for f in fields(cls) if f.init]  # type: ignore[arg-type]
    values = attrgetter(*names)
    positions = {name: k for k, name in enumerate(names)}

    def replaced(obj: T, **changes: Any) -> T:
        made = list(values(obj))
        for name, value in changes.items():
            made[positions[name]] = value
        return cls(*made)

    return replaced
