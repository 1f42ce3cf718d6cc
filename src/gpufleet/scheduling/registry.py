"""The plugin registry, as kube-scheduler's (``frameworkruntime.Registry``): every plugin gpufleet
implements, by name.

A plugin registers itself where it is defined, with ``@register`` on its class, and is named in
``MODULES`` with its module of ``gpufleet.scheduling.plugins``, as upstream's ``NewInTreeRegistry`` names
each in-tree plugin: a profile imports only the modules of the plugins it names (``plugin``), the
listing of them all (``plugins``) every module. A new plugin is a new file and its line in ``MODULES``
(``tests/scheduling/test_registry.py`` names a module whose plugins it lacks). Its extension points come
from the framework base classes it extends (``Plugin.points``), and it is built from its
``pluginConfig`` args by its ``from_args``.
Upstream's default plugins that gpufleet accepts in a configuration without simulating them are
``plugin_names.NOT_MODELLED``; other schedulers' plugins it does not model, ``plugin_names.OUT_OF_TREE``.
"""

from __future__ import annotations

import importlib
from typing import TypeVar

from gpufleet.scheduling import plugin_names
from gpufleet.scheduling.framework import Plugin

P = TypeVar("P", bound=type[Plugin])

#: Every plugin gpufleet implements, by name: the module of ``gpufleet.scheduling.plugins`` it is defined in.
MODULES: dict[str, str] = {
    "Backfill": "backfill",
    "BestFit": "fgd_policies",
    "Coscheduling": "coscheduling",
    "DefaultBinder": "default_binder",
    "DefaultPreemption": "default_preemption",
    "DotProd": "fgd_policies",
    "DynamicResources": "dynamic_resources",
    "FGD": "fgd",
    "FGDSupply": "fgd_supply",
    "GpuClustering": "fgd_policies",
    "GpuMemoryFit": "gpu_memory_fit",
    "GpuPacking": "fgd_policies",
    "GpuShare": "gpu_share",
    "GpuTopology": "gpu_topology",
    "ImageLocality": "image_locality",
    "InterPodAffinity": "inter_pod_affinity",
    "KaiQueueLimit": "kai_queue",
    "NodeAffinity": "node_affinity",
    "NodeName": "node_name",
    "NodePorts": "node_ports",
    "NodeResourcesBalancedAllocation": "balanced_allocation",
    "NodeResourcesFit": "node_resources_fit",
    "NodeUnschedulable": "node_unschedulable",
    "PodTopologySpread": "pod_topology_spread",
    "PrioritySort": "priority_sort",
    "Random": "fgd_policies",
    "SchedulingGates": "scheduling_gates",
    "TaintToleration": "taint_toleration",
    "VolcanoGang": "volcano",
    "VolcanoQueue": "volcano",
}

_PLUGINS: dict[str, type[Plugin]] = {}
_loaded = False


def register(cls: P) -> P:
    """Class decorator: the plugin is known by its ``name``."""
    if cls.name in _PLUGINS and _PLUGINS[cls.name] is not cls:
        raise ValueError(f"plugin {cls.name!r} is registered twice")
    _PLUGINS[cls.name] = cls
    return cls


def plugin(name: str) -> type[Plugin] | None:
    """The plugin of that name (its module imported the first time), None where there is none."""
    cls = _PLUGINS.get(name)
    if cls is None and name in MODULES:
        importlib.import_module(f"{__package__}.plugins.{MODULES[name]}")
        cls = _PLUGINS.get(name)
    return cls


def plugins() -> dict[str, type[Plugin]]:
    """Every registered plugin by name (every plugin module imported once)."""
    global _loaded
    if not _loaded:
        for module in sorted(set(MODULES.values())):
            importlib.import_module(f"{__package__}.plugins.{module}")
        _loaded = True
    return _PLUGINS


def known(name: str) -> bool:
    """A plugin name kube-scheduler, gpufleet or an out-of-tree scheduler knows (modelled or not)."""
    return (
        name in MODULES
        or name in _PLUGINS
        or name in plugin_names.NOT_MODELLED
        or name in plugin_names.OUT_OF_TREE
    )


def in_tree(name: str) -> bool:
    """One of kube-scheduler's own plugins (gpufleet models it or not)."""
    cls = plugin(name)
    return name in plugin_names.NOT_MODELLED if cls is None else cls.origin == "kube-scheduler"
