"""Workload kinds: one module each (``job``, ``deployment``, ``daemonset``), each a controller that
expands its workload into pods and gangs (``kind.WorkloadController``), registered in one place by
its module's ``@register_kind``. Every module of this package is imported the first time a kind is
asked for, so a new kind is one new module here: its workload object, its controller and (for a
kind the manifest reader does not know) its reader (``kind.ManifestReader``)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import TypeVar

from gpufleet.model.workloads import Workload
from gpufleet.workloads.kind import GVK, Factory, Reader, WorkloadController

C = TypeVar("C", bound=Callable[..., WorkloadController])

_KINDS: dict[type, Factory] = {}
_READERS: dict[GVK, Reader] = {}
_ANNOTATIONS: dict[GVK, frozenset[str]] = {}
_loaded = False


def register_kind(
    model: type,
    api: GVK | None = None,
    read: Reader | None = None,
    annotations: frozenset[str] = frozenset(),
) -> Callable[[C], C]:
    """Class decorator on a controller: it drives workloads of ``model``; with ``api`` and ``read``,
    manifests of that ``apiVersion``/``kind`` are read into ``model`` objects by ``read``;
    ``annotations``: the ``gpufleet.io/`` annotations its own metadata may carry besides
    ``submit-at`` (read with ``ManifestReader.annotation``)."""
    if (api is None) != (read is None):
        raise ValueError("a kind's reader needs both api and read")

    def decorate(controller: C) -> C:
        _KINDS[model] = controller
        if api is not None and read is not None:
            _READERS[api] = read
            _ANNOTATIONS[api] = annotations
        return controller

    return decorate


def _load() -> None:
    global _loaded
    if not _loaded:
        for module in pkgutil.iter_modules(__path__):
            if module.name != "kind":
                importlib.import_module(f"{__name__}.{module.name}")
        _loaded = True


def controller_for(workload: Workload) -> WorkloadController:
    """The controller of a workload, by the kind of its object."""
    _load()
    factory = _KINDS.get(type(workload))
    if factory is None:
        raise KeyError(f"no workload kind drives {type(workload).__name__}")
    return factory(workload)


def manifest_readers() -> dict[GVK, Reader]:
    """The registered kinds' readers, by ``(group, version, kind)``."""
    _load()
    return dict(_READERS)


def workload_annotations(api: GVK) -> frozenset[str]:
    """The ``gpufleet.io/`` annotations a registered kind's metadata may carry besides ``submit-at``."""
    _load()
    return _ANNOTATIONS.get(api, frozenset())
