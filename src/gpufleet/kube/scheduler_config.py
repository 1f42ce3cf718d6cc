"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``): one scheduler process.

Decoded strictly as kube-scheduler 1.34 decodes its ``--config`` (an unknown field is an
error), defaulted as ``pkg/scheduler/apis/config/v1/defaults.go`` (no profiles: one
``default-scheduler`` profile; a single profile without ``schedulerName`` is
``default-scheduler``, several must all be named; backoff 1 s initial, 10 s max) and validated as
``pkg/scheduler/apis/config/validation`` (``ValidateKubeSchedulerConfiguration``: parallelism
above 0, percentages in [0-100], backoffs, unique scheduler names, one QueueSort shared by all
profiles, plugins removed from v1 rejected, unique ``pluginConfig`` names;
``ValidateNodeResourcesFitArgs``: ``ignoredResources`` are label names, ``ignoredResourceGroups``
label names without ``/``). scheduler-plugins' ``CoschedulingArgs`` are validated as
``ValidateCoschedulingArgs``. A plugin gpufleet does not know is an error, as kube-scheduler
fails on a plugin missing from its registry; a known plugin gpufleet does not simulate is a
warning, and so is another scheduler's plugin (``plugin "CapacityScheduling" (scheduler-plugins) is
not modelled``). ``NodeAffinityArgs`` and ``NodeResourcesBalancedAllocationArgs`` are validated as
upstream validates them. Plugin args are kept as written.

v1 has no ``healthzBindAddress``, ``metricsBindAddress`` or ``featureGates`` (older versions
had the first two; feature gates are a command-line flag): kube-scheduler rejects them, and so
does gpufleet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.problems import Reporter, duplicate, invalid, required, unsupported
from gpufleet.kube.spec_model import Duration, SpecModel, validate
from gpufleet.model.label_syntax import qualified_name_problems
from gpufleet.model.node_selector import node_selector_terms, preferred_term
from gpufleet.model.pod import DEFAULT_SCHEDULER
from gpufleet.model.scheduler_config import (
    PluginRef,
    PluginSet,
    ProcessSettings,
    ProfileConfig,
    SchedulerConfig,
)
from gpufleet.scheduling import plugin_names, registry

#: ``invalidPluginsByVersion`` for ``kubescheduler.config.k8s.io/v1``.
_REMOVED_IN_V1 = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})
_V1 = "kubescheduler.config.k8s.io/v1"
SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
#: ``config.MaxCustomPriorityScore``
MAX_CUSTOM_PRIORITY_SCORE = 10


class Plugin(SpecModel):
    name: str
    weight: int | None = None


class PluginSetSpec(SpecModel):
    enabled: list[Plugin] | None = None
    disabled: list[Plugin] | None = None


class Plugins(SpecModel):
    pre_enqueue: PluginSetSpec | None = None
    queue_sort: PluginSetSpec | None = None
    pre_filter: PluginSetSpec | None = None
    filter: PluginSetSpec | None = None
    post_filter: PluginSetSpec | None = None
    pre_score: PluginSetSpec | None = None
    score: PluginSetSpec | None = None
    reserve: PluginSetSpec | None = None
    permit: PluginSetSpec | None = None
    pre_bind: PluginSetSpec | None = None
    bind: PluginSetSpec | None = None
    post_bind: PluginSetSpec | None = None
    multi_point: PluginSetSpec | None = None

    def extension_points(self) -> dict[str, PluginSetSpec]:
        """Extension points the user wrote, by their camelCase name."""
        fields = type(self).model_fields
        return {fields[name].alias or name: value for name, value in self if value is not None}


class PluginConfig(SpecModel):
    name: str
    args: dict[str, Any] | None = None


class Profile(SpecModel):
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] | None = None


class LeaderElection(SpecModel):
    leader_elect: bool | None = None
    lease_duration: Duration | None = None
    renew_deadline: Duration | None = None
    retry_period: Duration | None = None
    resource_lock: str | None = None
    resource_name: str | None = None
    resource_namespace: str | None = None


class ClientConnection(SpecModel):
    kubeconfig: str | None = None
    accept_content_types: str | None = None
    content_type: str | None = None
    qps: float | None = None
    burst: int | None = None


class KubeSchedulerConfiguration(SpecModel):
    api_version: str
    kind: str
    parallelism: int | None = None
    leader_election: LeaderElection | None = None
    client_connection: ClientConnection | None = None
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    profiles: list[Profile] | None = None
    extenders: list[dict[str, Any]] | None = None
    delay_cache_until_active: bool | None = None


#: Top-level fields that configure the process, not its decisions.
_NOT_MODELLED = (
    "parallelism",
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "extenders",
    "delayCacheUntilActive",
)


class ResourceSpec(SpecModel):
    name: str
    weight: int | None = None  # 0 or absent defaults to 1


class UtilizationShapePoint(SpecModel):
    utilization: int
    score: int


class RequestedToCapacityRatio(SpecModel):
    shape: list[UtilizationShapePoint] | None = None


class ScoringStrategy(SpecModel):
    type: str | None = None
    resources: list[ResourceSpec] | None = None
    requested_to_capacity_ratio: RequestedToCapacityRatio | None = None


class NodeResourcesFitArgs(SpecModel):
    api_version: str | None = None
    kind: str | None = None
    ignored_resources: list[str] | None = None
    ignored_resource_groups: list[str] | None = None
    scoring_strategy: ScoringStrategy | None = None


class CoschedulingArgs(SpecModel):
    api_version: str | None = None
    kind: str | None = None
    permit_waiting_time_seconds: int | None = None
    pod_group_backoff_seconds: int | None = None
    pod_group_reject_percentage: int | None = None


def scheduler_config(name: str, body: Mapping[str, Any], report: Reporter) -> SchedulerConfig | None:
    """The scheduler process ``body`` configures, named ``name`` (``FILE#N``)."""
    config = validate(KubeSchedulerConfiguration, body, report)
    if config is None:
        return None
    report.unmodelled_fields(config.given(), _NOT_MODELLED)
    _check_process(config, report)
    profiles = config.profiles or [Profile()]
    # v1 defaulting names a profile only when it is the only one.
    names = [p.scheduler_name or "" for p in profiles]
    if len(profiles) == 1 and profiles[0].scheduler_name is None:
        names = [DEFAULT_SCHEDULER]
    seen: set[str] = set()
    for i, (profile, scheduler_name) in enumerate(zip(profiles, names, strict=True)):
        path = f"profiles[{i}]"
        if not scheduler_name:
            report.error(f"{path}.schedulerName", required())
        elif scheduler_name in seen:
            report.error(f"{path}.schedulerName", duplicate(scheduler_name))
        seen.add(scheduler_name)
        _percentage(profile.percentage_of_nodes_to_score, report, f"{path}.percentageOfNodesToScore")
        _check_plugins(profile, report, path)
        _check_plugin_config(profile, report, path)
    _check_common_queue_sort(profiles, report)
    return SchedulerConfig(
        name=name,
        profiles=[_profile(p, n) for p, n in zip(profiles, names, strict=True)],
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        pod_initial_backoff_s=float(_initial_backoff(config)),
        pod_max_backoff_s=float(_max_backoff(config)),
        process=_process(config),
    )


def _process(config: KubeSchedulerConfiguration) -> ProcessSettings:
    election, connection = (
        config.leader_election or LeaderElection(),
        config.client_connection or ClientConnection(),
    )
    default = ProcessSettings()
    return ProcessSettings(
        qps=connection.qps if connection.qps is not None else default.qps,
        burst=connection.burst if connection.burst is not None else default.burst,
        leader_elect=election.leader_elect if election.leader_elect is not None else default.leader_elect,
        lease_duration_s=election.lease_duration or default.lease_duration_s,
        renew_deadline_s=election.renew_deadline or default.renew_deadline_s,
        retry_period_s=election.retry_period or default.retry_period_s,
        resource_name=election.resource_name or default.resource_name,
        resource_namespace=election.resource_namespace or default.resource_namespace,
    )


def _initial_backoff(config: KubeSchedulerConfiguration) -> int:
    return 1 if config.pod_initial_backoff_seconds is None else config.pod_initial_backoff_seconds


def _max_backoff(config: KubeSchedulerConfiguration) -> int:
    return 10 if config.pod_max_backoff_seconds is None else config.pod_max_backoff_seconds


def _profile(profile: Profile, scheduler_name: str) -> ProfileConfig:
    plugins = profile.plugins.extension_points() if profile.plugins else {}
    return ProfileConfig(
        scheduler_name=scheduler_name,
        plugins={
            point: PluginSet(
                enabled=tuple(PluginRef(p.name, p.weight) for p in plugin_set.enabled or ()),
                disabled=tuple(p.name for p in plugin_set.disabled or ()),
            )
            for point, plugin_set in plugins.items()
        },
        plugin_args={c.name: dict(c.args or {}) for c in profile.plugin_config or ()},
        percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
    )


def _percentage(value: int | None, report: Reporter, path: str) -> None:
    if value is not None and not 0 <= value <= 100:
        report.error(path, invalid(value, "not in valid range [0-100]"))


def _check_process(config: KubeSchedulerConfiguration, report: Reporter) -> None:
    if config.parallelism is not None and config.parallelism <= 0:
        report.error(
            "parallelism", invalid(config.parallelism, "should be an integer value greater than zero")
        )
    election = config.leader_election
    if election and election.leader_elect and election.resource_lock not in (None, "leases"):
        report.error(
            "leaderElection.resourceLock",
            invalid(election.resource_lock, 'resourceLock value must be "leases"'),
        )
    _percentage(config.percentage_of_nodes_to_score, report, "percentageOfNodesToScore")
    initial, maximum = _initial_backoff(config), _max_backoff(config)
    if initial <= 0:
        report.error("podInitialBackoffSeconds", invalid(initial, "must be greater than 0"))
    if maximum < initial:
        report.error(
            "podMaxBackoffSeconds",
            invalid(maximum, "must be greater than or equal to PodInitialBackoffSeconds"),
        )


def _check_plugin_name(name: str, report: Reporter, path: str, *, disabled: bool = False) -> None:
    """Unknown and removed plugins are errors; an enabled plugin gpufleet does not simulate, a warning."""
    if disabled and name == "*":
        return
    if name in _REMOVED_IN_V1 and not disabled:
        report.error(
            path,
            invalid(name, f'was invalid in version "{_V1}" (KubeSchedulerConfiguration is version "{_V1}")'),
        )
    elif not registry.known(name):
        report.error(f"{path}.name", f'plugin "{name}" does not exist')
    elif name in plugin_names.NOT_MODELLED and not disabled:
        report.not_modelled(path, name)
    elif name in plugin_names.OUT_OF_TREE and not disabled:
        origin = plugin_names.OUT_OF_TREE[name]
        report.warn(f"{path}.name", f'plugin "{name}" ({origin}) is not modelled; ignored')


def _check_plugins(profile: Profile, report: Reporter, path: str) -> None:
    plugins = profile.plugins.extension_points() if profile.plugins else {}
    for point, plugin_set in plugins.items():
        where = f"{path}.plugins.{point}"
        for i, plugin in enumerate(plugin_set.enabled or ()):
            _check_plugin_name(plugin.name, report, f"{where}.enabled[{i}]")
        for i, plugin in enumerate(plugin_set.disabled or ()):
            _check_plugin_name(plugin.name, report, f"{where}.disabled[{i}]", disabled=True)


def _check_plugin_config(profile: Profile, report: Reporter, path: str) -> None:
    seen: set[str] = set()
    for i, config in enumerate(profile.plugin_config or ()):
        where = f"{path}.pluginConfig[{i}]"
        if config.name in seen:
            report.error(where, duplicate(config.name))
        seen.add(config.name)
        _check_plugin_name(config.name, report, where)
        check_args = _ARGS_CHECKS.get(config.name)
        if check_args is not None:
            check_args(config.args or {}, report, f"{where}.args")


def _check_kind(kind: str | None, expected: str, report: Reporter, path: str) -> None:
    if kind is not None and kind != expected:
        report.error(f"{path}.kind", unsupported(kind, (expected,)))


def _check_fit_args(raw: dict[str, Any], report: Reporter, path: str) -> None:
    """``ValidateNodeResourcesFitArgs`` (after v1 defaulting: no strategy is LeastAllocated)."""
    args = validate(NodeResourcesFitArgs, raw, report, path)
    if args is None:
        return
    _check_kind(args.kind, "NodeResourcesFitArgs", report, path)
    for i, name in enumerate(args.ignored_resources or ()):
        for message in qualified_name_problems(name):
            report.error(f"{path}.ignoredResources[{i}]", invalid(name, message))
    for i, group in enumerate(args.ignored_resource_groups or ()):
        where = f"{path}.ignoredResourceGroups[{i}]"
        if "/" in group:
            report.error(where, invalid(group, "resource group name can't contain '/'"))
        for message in qualified_name_problems(group):
            report.error(where, invalid(group, message))
    strategy = args.scoring_strategy
    if strategy is None:
        return
    where = f"{path}.scoringStrategy"
    if strategy.type not in SCORING_STRATEGIES:
        report.error(f"{where}.type", unsupported(strategy.type or "", SCORING_STRATEGIES))
    for i, resource in enumerate(strategy.resources or ()):
        weight = resource.weight or 1
        if not 0 < weight <= 100:
            detail = f"resource weight of {resource.name} not in valid range (0, 100]"
            report.error(f"{where}.resources[{i}].weight", invalid(weight, detail))
    ratio = strategy.requested_to_capacity_ratio
    if ratio is not None:  # checked whatever the type, and named ``scoringStrategy.shape``, as upstream does
        _check_shape(ratio.shape or [], report, f"{where}.shape")
    elif strategy.type == "RequestedToCapacityRatio":  # kube-scheduler would dereference nil and crash
        detail = "must be specified when type is RequestedToCapacityRatio"
        report.error(f"{where}.requestedToCapacityRatio", required(detail))


def _check_shape(shape: list[UtilizationShapePoint], report: Reporter, path: str) -> None:
    """``validateFunctionShape``."""
    if not shape:
        report.error(path, required("at least one point must be specified"))
        return
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            report.error(
                f"{path}[{i}].utilization",
                invalid(shape[i].utilization, "values must be sorted in increasing order"),
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            report.error(
                f"{path}[{i}].utilization", invalid(point.utilization, "not in valid range [0, 100]")
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            detail = f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
            report.error(f"{path}[{i}].score", invalid(point.score, detail))


def _check_coscheduling_args(raw: dict[str, Any], report: Reporter, path: str) -> None:
    """scheduler-plugins' ``ValidateCoschedulingArgs``."""
    args = validate(CoschedulingArgs, raw, report, path)
    if args is None:
        return
    _check_kind(args.kind, "CoschedulingArgs", report, path)
    for field, value in (
        ("permitWaitingTimeSeconds", args.permit_waiting_time_seconds),
        ("podGroupBackoffSeconds", args.pod_group_backoff_seconds),
    ):
        if value is not None and value < 0:
            report.error(f"{path}.{field}", invalid(value, "must be greater than 0"))
    percentage = args.pod_group_reject_percentage
    if percentage is not None and not 0 <= percentage <= 100:
        report.error(f"{path}.podGroupRejectPercentage", invalid(percentage, "must be between 0 and 100"))


class NodeResourcesBalancedAllocationArgs(SpecModel):
    api_version: str | None = None
    kind: str | None = None
    resources: list[ResourceSpec] | None = None


def _check_balanced_args(raw: dict[str, Any], report: Reporter, path: str) -> None:
    """``ValidateNodeResourcesBalancedAllocationArgs`` (after v1 defaulting: a weight of 0 is 1):
    each resource once, each weight 1."""
    args = validate(NodeResourcesBalancedAllocationArgs, raw, report, path)
    if args is None:
        return
    _check_kind(args.kind, "NodeResourcesBalancedAllocationArgs", report, path)
    seen: set[str] = set()
    for i, resource in enumerate(args.resources or ()):
        if resource.name in seen:
            report.error(f"{path}.resources[{i}].name", duplicate(resource.name))
        seen.add(resource.name)
        weight = resource.weight or 1
        if weight != 1:
            report.error(f"{path}.resources[{i}].weight", invalid(weight, "must be 1"))


class AddedAffinity(SpecModel):
    required_during_scheduling_ignored_during_execution: dict[str, Any] | None = None
    preferred_during_scheduling_ignored_during_execution: list[dict[str, Any]] | None = None


class NodeAffinityArgs(SpecModel):
    api_version: str | None = None
    kind: str | None = None
    added_affinity: AddedAffinity | None = None


def _check_node_affinity_args(raw: dict[str, Any], report: Reporter, path: str) -> None:
    """``ValidateNodeAffinityArgs``: every ``addedAffinity`` term must parse (``NewNodeSelector``,
    ``NewPreferredSchedulingTerms``: a label key and values the selector parser accepts)."""
    args = validate(NodeAffinityArgs, raw, report, path)
    if args is None:
        return
    _check_kind(args.kind, "NodeAffinityArgs", report, path)
    added = args.added_affinity
    if added is None:
        return
    where = f"{path}.addedAffinity"
    required = node_selector_terms(added.required_during_scheduling_ignored_during_execution or {})
    preferred = added.preferred_during_scheduling_ignored_during_execution or ()
    terms = [
        (f"{where}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]", t)
        for i, t in enumerate(required)
    ]
    terms += [
        # ``NewPreferredSchedulingTerms`` names a preference's fields from the list index
        (f"{where}.preferredDuringSchedulingIgnoredDuringExecution[{i}]", preferred_term(p).term)
        for i, p in enumerate(preferred)
    ]
    for at, term in terms:
        for error in term.parse_errors:
            field, message = error.split(": ", 1)
            report.error(f"{at}.{field}", message)


class DefaultPreemptionArgs(SpecModel):
    api_version: str | None = None
    kind: str | None = None
    min_candidate_nodes_percentage: int | None = None
    min_candidate_nodes_absolute: int | None = None


def _check_default_preemption_args(raw: dict[str, Any], report: Reporter, path: str) -> None:
    """``ValidateDefaultPreemptionArgs`` (after v1 defaulting: percentage 10, absolute 100): a percentage in
    [0, 100], an absolute count not negative, not both zero. (gpufleet's DefaultPreemption considers
    every node, whatever they say.)"""
    args = validate(DefaultPreemptionArgs, raw, report, path)
    if args is None:
        return
    _check_kind(args.kind, "DefaultPreemptionArgs", report, path)
    percentage = 10 if args.min_candidate_nodes_percentage is None else args.min_candidate_nodes_percentage
    absolute = 100 if args.min_candidate_nodes_absolute is None else args.min_candidate_nodes_absolute
    percentage_path, absolute_path = (
        f"{path}.minCandidateNodesPercentage",
        f"{path}.minCandidateNodesAbsolute",
    )
    if not 0 <= percentage <= 100:
        report.error(percentage_path, invalid(percentage, "not in valid range [0, 100]"))
    if absolute < 0:
        report.error(absolute_path, invalid(absolute, "not in valid range [0, inf)"))
    if percentage == 0 and absolute == 0:
        report.error(
            percentage_path,
            invalid(percentage, "cannot be zero at the same time as minCandidateNodesAbsolute"),
        )
        report.error(
            absolute_path, invalid(absolute, "cannot be zero at the same time as minCandidateNodesPercentage")
        )


_ARGS_CHECKS = {
    "DefaultPreemption": _check_default_preemption_args,
    "NodeResourcesFit": _check_fit_args,
    "Coscheduling": _check_coscheduling_args,
    "NodeAffinity": _check_node_affinity_args,
    "NodeResourcesBalancedAllocation": _check_balanced_args,
}


_SAME_QUEUE_SORT = "queueSort must be the same for all profiles"


def _check_common_queue_sort(profiles: list[Profile], report: Reporter) -> None:
    """``validateCommonQueueSort``: every profile has the first profile's QueueSort and its args."""

    def queue_sort(profile: Profile) -> PluginSetSpec:
        return (profile.plugins.queue_sort if profile.plugins else None) or PluginSetSpec()

    def args_of(profile: Profile, plugin: str) -> dict[str, Any] | None:
        return next((c.args for c in profile.plugin_config or () if c.name == plugin), None)

    canon = queue_sort(profiles[0])
    enabled = canon.enabled or []
    if len(enabled) > 1:
        detail = "only one queue sort plugin can be enabled"
        report.error("profiles[0].plugins.queueSort.enabled", invalid(len(enabled), detail))
    name = enabled[0].name if enabled else None
    canon_args = args_of(profiles[0], name) if name else None
    for i, profile in enumerate(profiles[1:], start=1):
        current = queue_sort(profile)
        if _plugin_set_key(current) != _plugin_set_key(canon):
            shown = current.given()
            report.error(f"profiles[{i}].plugins.queueSort", invalid(shown, _SAME_QUEUE_SORT))
        for j, config in enumerate(profile.plugin_config or ()):
            if config.name == name and config.args != canon_args:
                report.error(f"profiles[{i}].pluginConfig[{j}].args", invalid(config.args, _SAME_QUEUE_SORT))


def _plugin_set_key(plugin_set: PluginSetSpec) -> tuple[tuple[tuple[str, int | None], ...], ...]:
    """What ``apiequality.Semantic.DeepEqual`` compares (a missing list equals an empty one)."""
    return tuple(
        tuple((p.name, p.weight) for p in plugins or ())
        for plugins in (plugin_set.enabled, plugin_set.disabled)
    )
