"""Workload kinds: one module each (``job``, ``deployment``, ``daemonset``), each a controller that
expands its workload into pods (``kind.WorkloadController``), registered in one place by its
module's ``@register_kind``. Every module of this package is imported the first time a
controller is asked for, so a new kind is one new module here (and its manifest reader in
``gpufleet.kube``)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import TypeVar

from gpufleet.workloads.kind import Factory, Workload, WorkloadController

C = TypeVar("C", bound=Callable[..., WorkloadController])

_KINDS: dict[type, Factory] = {}
_loaded = False


def register_kind(model: type) -> Callable[[C], C]:
    """Class decorator on a controller: it drives workloads of ``model`` (a ``model.workloads`` class)."""

    def decorate(controller: C) -> C:
        _KINDS[model] = controller
        return controller

    return decorate


def _kinds() -> dict[type, Factory]:
    global _loaded
    if not _loaded:
        for module in pkgutil.iter_modules(__path__):
            if module.name != "kind":
                importlib.import_module(f"{__name__}.{module.name}")
        _loaded = True
    return _KINDS


def controller_for(workload: Workload) -> WorkloadController:
    """The controller of a workload, by the kind of its model object."""
    factory = _kinds().get(type(workload))
    if factory is None:
        raise KeyError(f"no workload kind drives {type(workload).__name__}")
    return factory(workload)
