"""A package's names imported when first used (PEP 562's module ``__getattr__``), so that importing
the package (and the CLI with it) does not import what a command never uses."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_getattr(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: each name of ``where`` from the submodule it maps to."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{where[name]}"), name)

    return __getattr__
