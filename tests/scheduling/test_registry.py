"""The plugin registry (``scheduling.registry``): every plugin by name, its extension points from the
framework base classes it extends, built from its ``pluginConfig`` args."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling import plugins as plugin_package
from gpufleet.scheduling import registry
from gpufleet.scheduling.plugin_names import NOT_MODELLED
from gpufleet.scheduling.plugins.node_resources_fit import NodeResourcesFit
from gpufleet.scheduling.profile import ProfileError, build_profile


def test_every_default_plugin_of_kube_scheduler_is_modelled_or_named_as_not_modelled() -> None:
    """``getDefaultPlugins`` (1.34) with DynamicResources: each is registered or accepted unsimulated."""
    defaults = {
        "SchedulingGates",
        "PrioritySort",
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "DefaultBinder",
        "DynamicResources",
    }
    for name in defaults:
        assert registry.in_tree(name), name
        assert (name in registry.plugins()) != (name in NOT_MODELLED), name


def test_extension_points_come_from_the_base_classes() -> None:
    plugins = registry.plugins()
    assert plugins["NodeAffinity"].points() == {"preFilter", "filter", "preScore", "score"}
    assert plugins["Coscheduling"].points() == {"queueSort", "preFilter", "postFilter", "permit"}
    assert plugins["DefaultPreemption"].points() == {"postFilter"}
    assert plugins["DynamicResources"].points() == {"preFilter", "filter", "postFilter"}
    assert plugins["DefaultBinder"].points() == {"bind"}
    assert plugins["FGD"].points() == {"preScore", "score"}


def test_origins_say_whose_plugin_it_is() -> None:
    plugins = registry.plugins()
    assert plugins["Coscheduling"].origin == "scheduler-plugins" and not registry.in_tree("Coscheduling")
    assert plugins["FGD"].origin == "gpufleet" and not registry.in_tree("FGD")
    assert registry.known("PodTopologySpread") and not registry.known("NodeResourcesFitt")


def test_a_plugin_is_built_from_its_args() -> None:
    args = {
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "nvidia.com/gpu", "weight": 5}]}
    }
    plugin = registry.plugins()["NodeResourcesFit"].from_args(args)
    assert isinstance(plugin, NodeResourcesFit)
    assert plugin.strategy.type == "MostAllocated" and plugin.strategy.resources == (("nvidia.com/gpu", 5),)


def test_args_a_plugin_cannot_take_are_a_profile_error() -> None:
    config = ProfileConfig(plugin_args={"NodeResourcesFit": {"scoringStrategy": {"type": "Mostly"}}})
    with pytest.raises(
        ProfileError, match=r"pluginConfig NodeResourcesFit: scoringStrategy\.type: unsupported"
    ):
        build_profile(config)


def test_every_plugin_module_has_its_plugins_named_in_the_registry_table() -> None:
    """``MODULES`` names each plugin that a module of ``gpufleet.scheduling.plugins`` registers, with that
    module (as upstream's ``NewInTreeRegistry`` lists each plugin): a new plugin left out of it fails here."""
    for module in pkgutil.iter_modules(plugin_package.__path__):
        importlib.import_module(f"{plugin_package.__name__}.{module.name}")
    defined = {name: cls.__module__.rpartition(".")[2] for name, cls in registry.plugins().items()}
    assert defined == registry.MODULES


def test_a_profile_imports_only_the_modules_of_the_plugins_it_names() -> None:
    """Building the default profile loads neither the gang plugins nor the workload kinds they read."""
    code = (
        "import sys\n"
        "from gpufleet.model.scheduler_config import ProfileConfig\n"
        "from gpufleet.scheduling.profile import build_profile\n"
        "build_profile(ProfileConfig())\n"
        "gangs = ('coscheduling', 'volcano', 'kai_queue', 'workloads')\n"
        "print(sorted(m for m in sys.modules if m.endswith(gangs)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_name_gpufleet_does_not_implement_is_no_plugin() -> None:
    assert registry.plugin("NodeResourcesFitt") is None and registry.plugin("VolumeBinding") is None
    assert registry.plugin("Coscheduling") is registry.plugins()["Coscheduling"]
