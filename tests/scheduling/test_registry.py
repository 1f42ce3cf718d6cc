"""The plugin registry (``scheduling.registry``): every plugin by name, its extension points from the
framework base classes it extends, built from its ``pluginConfig`` args."""

from __future__ import annotations

import pytest

from gpufleet.model.scheduler_config import ProfileConfig
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
