"""The plugin registry, as kube-scheduler's (``frameworkruntime.Registry``): every plugin gpufleet
implements, by name.

A plugin registers itself where it is defined, with ``@register`` on its class; every module of
``gpufleet.scheduling.plugins`` is imported the first time the registry is read, so a new plugin
is one new file. Its extension points come from the framework base classes it extends
(``Plugin.points``), and it is built from its ``pluginConfig`` args by its ``from_args``.
Upstream's default plugins that gpufleet accepts in a configuration without simulating them are
``plugin_names.NOT_MODELLED``; other schedulers' plugins it does not model, ``plugin_names.OUT_OF_TREE``.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TypeVar

from gpufleet.scheduling import plugin_names
from gpufleet.scheduling.framework import Plugin

P = TypeVar("P", bound=type[Plugin])

_PLUGINS: dict[str, type[Plugin]] = {}
_loaded = False


def register(cls: P) -> P:
    """Class decorator: the plugin is known by its ``name``."""
    if cls.name in _PLUGINS and _PLUGINS[cls.name] is not cls:
        raise ValueError(f"plugin {cls.name!r} is registered twice")
    _PLUGINS[cls.name] = cls
    return cls


def plugins() -> dict[str, type[Plugin]]:
    """Every registered plugin by name (the plugins package imported once)."""
    global _loaded
    if not _loaded:
        package = importlib.import_module("gpufleet.scheduling.plugins")
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
        _loaded = True
    return _PLUGINS


def known(name: str) -> bool:
    """A plugin name kube-scheduler, gpufleet or an out-of-tree scheduler knows (modelled or not)."""
    return name in plugins() or name in plugin_names.NOT_MODELLED or name in plugin_names.OUT_OF_TREE


def in_tree(name: str) -> bool:
    """One of kube-scheduler's own plugins (gpufleet models it or not)."""
    cls = plugins().get(name)
    return name in plugin_names.NOT_MODELLED if cls is None else cls.origin == "kube-scheduler"
