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

from gpufleet.cluster.shares import GpuChoice
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.scheduling import registry
from gpufleet.scheduling.framework import (
    ArgsError,
    Bind,
    DynamicFilter,
    DynamicScore,
    NodesPreFilter,
    Permit,
    Plugin,
    PostFilter,
    PreEnqueue,
    PreFilter,
    QueueSort,
    StaticFilter,
    StaticScore,
    Wording,
)
from gpufleet.scheduling.pod_aware import PodAwareFilter, PodAwareScore
from gpufleet.scheduling.queueing_hints import HintMap, hint_map

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


class ProfileError(ValueError):
    """A configuration kube-scheduler would refuse to start with."""


@dataclass
class Profile:
    """A scheduler profile built from its configuration: its plugins, grouped by the extension points
    gpufleet's framework runs."""

    scheduler_name: str
    queue_sort: QueueSort
    #: PreEnqueue plugins (SchedulingGates): a pod one of them turns away never enters the queue
    pre_enqueues: list[PreEnqueue] = field(default_factory=list)
    pre_filters: list[PreFilter] = field(default_factory=list)
    #: PreFilters that narrow the nodes considered (NodeAffinity's ``matchFields``)
    node_prefilters: list[NodesPreFilter] = field(default_factory=list)
    #: StaticFilter, DynamicFilter or PodAwareFilter, in order
    filters: list[Plugin] = field(default_factory=list)
    static_scores: list[tuple[StaticScore, int]] = field(default_factory=list)
    dynamic_scores: list[tuple[DynamicScore, int]] = field(default_factory=list)
    #: the filters and scores that depend on the pods placed (``pod_aware``), judged in each cycle,
    #: never cached
    pod_filters: list[PodAwareFilter] = field(default_factory=list)
    pod_scores: list[tuple[PodAwareScore, int]] = field(default_factory=list)
    post_filters: list[PostFilter] = field(default_factory=list)
    permit: Permit | None = None
    percentage_of_nodes_to_score: int | None = None
    plugin_names: tuple[str, ...] = ()
    gpu_choice: GpuChoice | None = None  # a score plugin's pick of GPU inside the chosen node (Reserve)
    wording: Wording | None = None  # another scheduler's messages (Volcano's); None: kube-scheduler's
    hints: HintMap = ()  # its plugins' events and queueing hints

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


def plugins_set_enabled(plugins_by_point: dict[str, PluginSet], point: str) -> tuple[PluginRef, ...]:
    return plugins_by_point.get(point, PluginSet()).enabled


def expand(point: str, plugins_by_point: dict[str, PluginSet]) -> list[PluginRef]:
    """The plugins enabled at one extension point, after multiPoint expansion (a plugin joins the
    points its base classes stand for)."""
    specific = plugins_by_point.get(point, PluginSet())
    _check_unique(point, specific.enabled)
    if "*" in specific.disabled:
        return list(specific.enabled)
    explicit = {p.name for p in specific.enabled}
    overridden: set[str] = set()
    multi: list[PluginRef] = []
    for ref in plugins_set_enabled(plugins_by_point, "multiPoint"):
        cls = registry.plugin(ref.name)
        if cls is None or point not in cls.points() or ref.name in specific.disabled:
            continue
        if ref.name in explicit:
            overridden.add(ref.name)
        elif all(m.name != ref.name for m in multi):
            multi.append(ref)
        else:
            raise ProfileError(f"plugin {ref.name!r} already registered as {point!r}")
    # ``expandMultiPointPlugins``' order: the multiPoint plugins also named at the point, in the point's
    # order; then the other multiPoint plugins; then the rest of the point's own
    overrides = [p for p in specific.enabled if p.name in overridden]
    seen = overridden | {p.name for p in multi}
    return overrides + multi + [p for p in specific.enabled if p.name not in seen]


def _check_unique(point: str, enabled: tuple[PluginRef, ...]) -> None:
    """``updatePluginList``: a plugin is enabled at most once at one extension point (else
    ``plugin "X" already registered as ...``, and kube-scheduler does not start)."""
    seen: set[str] = set()
    for ref in enabled:
        if ref.name in seen:
            raise ProfileError(f"plugin {ref.name!r} already registered as {point!r}")
        seen.add(ref.name)


#: the extension points gpufleet's framework models (where it can tell whether a plugin implements one)
MODELLED_POINTS: frozenset[str] = frozenset().union(
    *(
        kind.extension_points
        for kind in (
            QueueSort,
            PreEnqueue,
            PreFilter,
            NodesPreFilter,
            StaticFilter,
            DynamicFilter,
            PodAwareFilter,
            PostFilter,
            StaticScore,
            DynamicScore,
            PodAwareScore,
            Permit,
            Bind,
        )
    )
)


def _check_implements(point: str, plugin: Plugin) -> None:
    """``updatePluginList``: a plugin enabled at an extension point must implement it (``plugin "X" does not
    extend <point> plugin``). Checked for gpufleet's own plugins only, at the points gpufleet models: an
    upstream plugin may implement points (NodeResourcesFit's PreFilter) that gpufleet's model of it leaves
    out, and kube-scheduler accepts it there."""
    if plugin.origin == "gpufleet" and point in MODELLED_POINTS and point not in type(plugin).points():
        raise ProfileError(f"plugin {plugin.name!r} does not extend {point} plugin")


def _weights(plugins: dict[str, PluginSet]) -> dict[str, int]:
    weights = {p.name: p.weight or 1 for p in plugins.get("multiPoint", PluginSet()).enabled}
    weights.update({p.name: p.weight or 1 for p in plugins.get("score", PluginSet()).enabled})
    return weights


def _instantiate(name: str, args: dict[str, Any]) -> Plugin | None:
    cls = registry.plugin(name)
    if cls is None:
        return None
    try:
        return cls.from_args(args)
    except ArgsError as exc:
        raise ProfileError(f"pluginConfig {name}: {exc}") from None


def merged_plugin_sets(config: ProfileConfig) -> dict[str, PluginSet]:
    """The profile's plugin sets by extension point, ``multiPoint`` merged into the defaults (what
    ``expand`` reads)."""
    merged = {
        "multiPoint": merge_plugin_set(
            PluginSet(DEFAULT_MULTIPOINT + GPUFLEET_MULTIPOINT), config.plugins.get("multiPoint", PluginSet())
        )
    }
    for point, plugin_set in config.plugins.items():
        if point != "multiPoint":
            merged[point] = merge_plugin_set(PluginSet(), plugin_set)
    return merged


def build_profile(config: ProfileConfig, default_percentage: int | None = None) -> Profile:
    """Merge a profile's plugins into the defaults and instantiate the modelled plugins."""
    merged = merged_plugin_sets(config)
    instances: dict[str, Plugin] = {}

    def get(name: str) -> Plugin | None:
        if name not in instances:
            plugin = _instantiate(name, dict(config.plugin_args.get(name, {})))
            if plugin is None:
                return None
            instances[name] = plugin
        return instances[name]

    def at(point: str) -> list[Plugin]:
        found = [p for p in (get(ref.name) for ref in expand(point, merged)) if p is not None]
        for plugin in found:
            _check_implements(point, plugin)
        return found

    sorts = at("queueSort")
    if len(sorts) != 1:
        names = [type(p).__name__ for p in sorts]
        raise ProfileError(
            f"profile {config.scheduler_name!r}: exactly one queueSort plugin required, got {names}"
        )
    queue_sort = sorts[0]
    assert isinstance(queue_sort, QueueSort)
    weights = _weights(merged)
    profile = Profile(config.scheduler_name, queue_sort)
    profile.pre_enqueues = [p for p in at("preEnqueue") if isinstance(p, PreEnqueue)]
    profile.pre_filters = [p for p in at("preFilter") if isinstance(p, PreFilter)]
    profile.node_prefilters = [p for p in at("preFilter") if isinstance(p, NodesPreFilter)]
    filter_kinds = StaticFilter | DynamicFilter | PodAwareFilter
    profile.filters = [p for p in at("filter") if isinstance(p, filter_kinds)]
    profile.pod_filters = [p for p in profile.filters if isinstance(p, PodAwareFilter)]
    for plugin in at("score"):
        if isinstance(plugin, StaticScore):
            profile.static_scores.append((plugin, weights.get(plugin.name, 1)))
        elif isinstance(plugin, DynamicScore):
            profile.dynamic_scores.append((plugin, weights.get(plugin.name, 1)))
        elif isinstance(plugin, PodAwareScore):
            profile.pod_scores.append((plugin, weights.get(plugin.name, 1)))
    choices = [c for p, _ in profile.dynamic_scores if (c := getattr(p, "choose_gpu", None)) is not None]
    profile.gpu_choice = choices[0] if choices else None
    profile.post_filters = [p for p in at("postFilter") if isinstance(p, PostFilter)]
    for point in ("preScore", "bind"):  # (points gpufleet keeps no list of: checked all the same)
        at(point)
    permits = [p for p in at("permit") if isinstance(p, Permit)]
    profile.permit = permits[0] if permits else None
    profile.percentage_of_nodes_to_score = (
        config.percentage_of_nodes_to_score
        if config.percentage_of_nodes_to_score is not None
        else default_percentage
    )
    profile.plugin_names = tuple(instances)
    profile.hints = hint_map(instances.values())
    profile.wording = next((p for p in instances.values() if isinstance(p, Wording)), None)
    return profile


def build_profiles(config: SchedulerConfig) -> list[Profile]:
    profiles = [
        build_profile(p, config.percentage_of_nodes_to_score) for p in config.profiles or [ProfileConfig()]
    ]
    sorts = {type(p.queue_sort) for p in profiles}
    if len(sorts) > 1:
        raise ProfileError(f"{config.name}: all profiles of one scheduler must use the same queueSort plugin")
    return profiles
