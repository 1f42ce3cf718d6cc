"""Scheduling profiles: a ``KubeSchedulerConfiguration`` profile merged into the defaults.

Mirrors Kubernetes 1.34: ``getDefaultPlugins`` (all defaults through ``multiPoint``, score
weights TaintToleration 3, NodeAffinity 2, PodTopologySpread 2, InterPodAffinity 2,
NodeResourcesFit 1, NodeResourcesBalancedAllocation 1, ImageLocality 1), ``mergePluginSet``
(a re-listed default is replaced in place, ``disabled: [{name: "*"}]`` drops every default
of that point, other custom plugins are appended) and the framework's
``expandMultiPointPlugins`` (plugins named at a specific point first, then multiPoint
plugins implementing it, unless disabled there). A profile must end with exactly one
QueueSort plugin, and the plugins of one scheduler share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.scheduling.framework import (
    DynamicFilter,
    DynamicScore,
    Plugin,
    PreFilter,
    StaticFilter,
    StaticScore,
)
from gpufleet.scheduling.gpu_shares import GpuChoice
from gpufleet.scheduling.plugins.backfill import Backfill
from gpufleet.scheduling.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from gpufleet.scheduling.plugins.coscheduling import DEFAULT_PERMIT_WAITING_TIME_S, Coscheduling
from gpufleet.scheduling.plugins.default_preemption import DefaultPreemption
from gpufleet.scheduling.plugins.dynamic_resources import DynamicResources
from gpufleet.scheduling.plugins.fgd import FragmentationGradient, typical_pods
from gpufleet.scheduling.plugins.fgd_policies import BestFit, DotProd, GpuClustering, GpuPacking, Random
from gpufleet.scheduling.plugins.fgd_supply import SupplyAwareFragmentationGradient
from gpufleet.scheduling.plugins.gpu_memory_fit import GpuMemoryFit
from gpufleet.scheduling.plugins.gpu_share import GpuShare
from gpufleet.scheduling.plugins.gpu_topology import GpuTopology
from gpufleet.scheduling.plugins.node_affinity import NodeAffinity
from gpufleet.scheduling.plugins.node_name import NodeName
from gpufleet.scheduling.plugins.node_resources_fit import (
    DEFAULT_RESOURCES,
    STRATEGIES,
    NodeResourcesFit,
    ScoringStrategy,
)
from gpufleet.scheduling.plugins.node_unschedulable import NodeUnschedulable
from gpufleet.scheduling.plugins.priority_sort import PrioritySort

DEFAULT_MULTIPOINT: tuple[PluginRef, ...] = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DynamicResources"),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
)
#: gpufleet's own plugins that every profile runs unless it disables them (after upstream's defaults).
GPUFLEET_MULTIPOINT: tuple[PluginRef, ...] = (PluginRef("GpuShare"),)

#: Extension points of the plugins gpufleet models (upstream's are used for expansion).
POINTS: dict[str, frozenset[str]] = {
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "DefaultPreemption": frozenset({"postFilter"}),
    "DefaultBinder": frozenset({"bind"}),
    "Coscheduling": frozenset({"queueSort", "preFilter", "postFilter", "permit", "reserve"}),
    "GpuMemoryFit": frozenset({"filter"}),
    "DynamicResources": frozenset({"preFilter", "filter", "postFilter", "reserve", "preBind"}),
    "GpuShare": frozenset({"filter", "reserve"}),
    "FGD": frozenset({"preScore", "score"}),
    "FGDSupply": frozenset({"preScore", "score"}),
    "GpuTopology": frozenset({"score"}),
    "Backfill": frozenset({"filter"}),
    **{
        name: frozenset({"preScore", "score"})
        for name in ("BestFit", "DotProd", "GpuPacking", "GpuClustering", "Random")
    },
}


class ProfileError(ValueError):
    """A configuration kube-scheduler would refuse to start with."""


@dataclass
class Profile:
    scheduler_name: str
    queue_sort: PrioritySort | Coscheduling
    pre_filters: list[PreFilter] = field(default_factory=list)
    filters: list[Plugin] = field(default_factory=list)  # StaticFilter or DynamicFilter, in order
    static_scores: list[tuple[StaticScore, int]] = field(default_factory=list)
    dynamic_scores: list[tuple[DynamicScore, int]] = field(default_factory=list)
    post_filters: list[Plugin] = field(default_factory=list)
    permit: Coscheduling | None = None
    node_affinity_prefilter: bool = False
    percentage_of_nodes_to_score: int | None = None
    plugin_names: tuple[str, ...] = ()
    gpu_choice: GpuChoice | None = None  # a score plugin's pick of GPU inside the chosen node (Reserve)

    @property
    def static_filters(self) -> list[StaticFilter]:
        return [f for f in self.filters if isinstance(f, StaticFilter)]

    @property
    def dynamic_filters(self) -> list[DynamicFilter]:
        return [f for f in self.filters if isinstance(f, DynamicFilter)]


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    disabled = set(custom.disabled)
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    custom_index = {p.name: i for i, p in enumerate(custom.enabled)}
    if "*" not in disabled:
        for plugin in default.enabled:
            if plugin.name in disabled:
                continue
            if plugin.name in custom_index:
                replaced.add(custom_index[plugin.name])
                plugin = custom.enabled[custom_index[plugin.name]]
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(tuple(enabled), custom.disabled)


def expand(point: str, plugins: dict[str, PluginSet]) -> list[PluginRef]:
    """The plugins enabled at one extension point, after multiPoint expansion."""
    specific = plugins.get(point, PluginSet())
    if "*" in specific.disabled:
        return list(specific.enabled)
    explicit = {p.name for p in specific.enabled}
    overrides: list[PluginRef] = []
    multi: list[PluginRef] = []
    for ref in plugins.get("multiPoint", PluginSet()).enabled:
        if point not in POINTS.get(ref.name, frozenset()) or ref.name in specific.disabled:
            continue
        if ref.name in explicit:
            overrides.extend(p for p in specific.enabled if p.name == ref.name)
        elif all(m.name != ref.name for m in multi):
            multi.append(ref)
        else:
            raise ProfileError(f"plugin {ref.name!r} already registered as {point!r}")
    seen = {p.name for p in overrides} | {p.name for p in multi}
    return overrides + multi + [p for p in specific.enabled if p.name not in seen]


def _weights(plugins: dict[str, PluginSet]) -> dict[str, int]:
    weights = {p.name: p.weight or 1 for p in plugins.get("multiPoint", PluginSet()).enabled}
    weights.update({p.name: p.weight or 1 for p in plugins.get("score", PluginSet()).enabled})
    return weights


def _strategy(args: dict[str, Any]) -> ScoringStrategy:
    raw = args.get("scoringStrategy") or {}
    kind = raw.get("type") or "LeastAllocated"
    if kind not in STRATEGIES:
        raise ProfileError(f"pluginConfig NodeResourcesFit: scoringStrategy.type: unsupported value {kind!r}")
    resources = (
        tuple((r["name"], int(r.get("weight") or 1)) for r in raw.get("resources") or ()) or DEFAULT_RESOURCES
    )
    shape_raw = (raw.get("requestedToCapacityRatio") or {}).get("shape") or ()
    shape = tuple((int(p.get("utilization", 0)), int(p.get("score", 0))) for p in shape_raw)
    if kind == "RequestedToCapacityRatio" and not shape:
        raise ProfileError(
            "pluginConfig NodeResourcesFit: requestedToCapacityRatio.shape: at least one point required"
        )
    return ScoringStrategy(kind, resources, shape or ((0, 10), (100, 0)))


def _instantiate(name: str, args: dict[str, Any]) -> Plugin | None:
    if name == "NodeResourcesFit":
        return NodeResourcesFit(_strategy(args))
    if name == "NodeResourcesBalancedAllocation":
        resources = tuple((r["name"], int(r.get("weight") or 1)) for r in args.get("resources") or ())
        return NodeResourcesBalancedAllocation(resources or DEFAULT_RESOURCES)
    if name in ("FGD", "FGDSupply"):
        fgd_class = FragmentationGradient if name == "FGD" else SupplyAwareFragmentationGradient
        try:
            return fgd_class(typical_pods(args))
        except ValueError as exc:
            raise ProfileError(f"pluginConfig {name}: args.{exc}") from None
    if name == "Random":
        return Random(int(args.get("seed", 0)))
    if name == "Coscheduling":
        return Coscheduling(float(args.get("permitWaitingTimeSeconds", DEFAULT_PERMIT_WAITING_TIME_S)))
    simple: dict[str, type[Plugin]] = {
        "PrioritySort": PrioritySort,
        "NodeUnschedulable": NodeUnschedulable,
        "NodeName": NodeName,
        "NodeAffinity": NodeAffinity,
        "DefaultPreemption": DefaultPreemption,
        "GpuMemoryFit": GpuMemoryFit,
        "DynamicResources": DynamicResources,
        "GpuShare": GpuShare,
        "GpuTopology": GpuTopology,
        "Backfill": Backfill,
        "BestFit": BestFit,
        "DotProd": DotProd,
        "GpuPacking": GpuPacking,
        "GpuClustering": GpuClustering,
    }
    if name == "TaintToleration":
        from gpufleet.scheduling.plugins.taint_toleration import TaintToleration

        return TaintToleration()
    cls = simple.get(name)
    return cls() if cls else None


def build_profile(config: ProfileConfig, default_percentage: int | None = None) -> Profile:
    """Merge a profile's plugins into the defaults and instantiate the modelled plugins."""
    merged = {
        "multiPoint": merge_plugin_set(
            PluginSet(DEFAULT_MULTIPOINT + GPUFLEET_MULTIPOINT), config.plugins.get("multiPoint", PluginSet())
        )
    }
    for point, plugin_set in config.plugins.items():
        if point != "multiPoint":
            merged[point] = merge_plugin_set(PluginSet(), plugin_set)
    instances: dict[str, Plugin] = {}

    def get(name: str) -> Plugin | None:
        if name not in instances:
            plugin = _instantiate(name, dict(config.plugin_args.get(name, {})))
            if plugin is None:
                return None
            instances[name] = plugin
        return instances[name]

    def at(point: str) -> list[Plugin]:
        return [p for p in (get(ref.name) for ref in expand(point, merged)) if p is not None]

    sorts = at("queueSort")
    if len(sorts) != 1:
        names = [type(p).__name__ for p in sorts]
        raise ProfileError(
            f"profile {config.scheduler_name!r}: exactly one queueSort plugin required, got {names}"
        )
    queue_sort = sorts[0]
    assert isinstance(queue_sort, PrioritySort | Coscheduling)
    weights = _weights(merged)
    profile = Profile(config.scheduler_name, queue_sort)
    profile.pre_filters = [p for p in at("preFilter") if isinstance(p, PreFilter)]
    profile.node_affinity_prefilter = any(isinstance(p, NodeAffinity) for p in at("preFilter"))
    profile.filters = [p for p in at("filter") if isinstance(p, StaticFilter | DynamicFilter)]
    for plugin in at("score"):
        if isinstance(plugin, StaticScore):
            profile.static_scores.append((plugin, weights.get(plugin.name, 1)))
        elif isinstance(plugin, DynamicScore):
            profile.dynamic_scores.append((plugin, weights.get(plugin.name, 1)))
    choices = [c for p, _ in profile.dynamic_scores if (c := getattr(p, "choose_gpu", None)) is not None]
    profile.gpu_choice = choices[0] if choices else None
    profile.post_filters = at("postFilter")
    permits = [p for p in at("permit") if isinstance(p, Coscheduling)]
    profile.permit = permits[0] if permits else None
    profile.percentage_of_nodes_to_score = (
        config.percentage_of_nodes_to_score
        if config.percentage_of_nodes_to_score is not None
        else default_percentage
    )
    profile.plugin_names = tuple(instances)
    return profile


def build_profiles(config: SchedulerConfig) -> list[Profile]:
    profiles = [
        build_profile(p, config.percentage_of_nodes_to_score) for p in config.profiles or [ProfileConfig()]
    ]
    sorts = {type(p.queue_sort) for p in profiles}
    if len(sorts) > 1:
        raise ProfileError(f"{config.name}: all profiles of one scheduler must use the same queueSort plugin")
    return profiles
