"""gpufleet's own kinds (``gpufleet.io/v1alpha1``): ``Simulation`` and ``NodePool`` (DESIGN.md).

``Simulation``: ``duration``, ``seed``, ``sampleInterval``, ``storage.bandwidth``,
``registry.bandwidth`` and ``autoscaler``, cluster-autoscaler's flags camelCased
(``scanInterval``, ``expander``, ``maxNodeProvisionTime``, ``maxNodesTotal``, ``maxNodesPerScaleup``,
``coresTotal`` and ``memoryTotal`` (``<min>:<max>``, memory in GiB), ``gpuTotal`` (``<type>:<min>:<max>``
entries; the minima bound scale-down, not modelled: a warning),
``balanceSimilarNodeGroups``, ``balancingIgnoreLabel`` (a list),
``scaleDownUnneededTime``, ``scaleDownUnreadyEnabled``, ``scaleDownUnreadyTime``,
``scaleDownEnabled`` (false: no scale-down, scale-up goes on), ``scaleDownDelayAfterAdd``,
``scaleDownDelayAfterDelete`` (0 by default) and ``scaleDownDelayAfterFailure`` (3 minutes; set by a
scale-down that fails as it starts, which none does in gpufleet: a drain failing later sets it neither
upstream), ``scaleDownUtilizationThreshold``, ``scaleDownGpuUtilizationThreshold``,
``ignoreDaemonsetsUtilization``, ``unremovableNodeRecheckTimeout``, ``maxScaleDownParallelism`` and
``maxDrainParallelism`` (integers, 0 or more: 10 and 1 by default; 0 deletes no node, or drains none),
``maxBulkSoftTaintCount`` (0 or more, 10 by default: the DeletionCandidate soft taints a scan changes),
``expendablePodsPriorityCutoff`` (an integer, -10 by default, as the flag's Go ``int``: pods of a lower
priority are expendable, ``gpufleet.autoscaling.expendable``), ``newPodScaleUpDelay`` (a pod that young, or
younger than its ``cluster-autoscaler.kubernetes.io/pod-scale-up-delay`` when longer, triggers no scale-up:
``gpufleet.autoscaling.young_pods``), ``bypassedSchedulerNames`` (a list: set, no wait for very new pods,
``gpufleet.autoscaling.new_pods``, and the pods of those schedulers not yet processed are unschedulable),
``maxGracefulTerminationSec`` (an integer, 600 by default: a drain's
grace periods are cut to it; 0 or less cuts none), ``drainPriorityConfig`` (the flag's
``<priority>:<seconds>,...``: a drain evicts in priority groups, ``gpufleet.autoscaling.eviction``; not with
``maxGracefulTerminationSec``), ``maxPodEvictionTime`` (2 minutes: how long a refused eviction is retried),
``nodeDeletionBatcherInterval`` (0: the nodes of a group due within it of the first deleted together:
``gpufleet.control.cluster_autoscaler_actuation``), ``daemonsetEvictionForEmptyNodes`` (false) and
``daemonsetEvictionForOccupiedNodes`` (true: whether a node's DaemonSet pods are evicted before its deletion,
``gpufleet.autoscaling.eviction``), ``nodeDeletionDelayTimeout`` (2 minutes: how long a node annotated
``delay-deletion.cluster-autoscaler.kubernetes.io/...`` waits to be deleted), ``nodeDeleteDelayAfterTaint``
(5 s: how long after marking its nodes a scale-down starts draining or deleting them) and
``dynamicNodeDeleteDelayAfterTaintEnabled`` (false; true: that delay is twice the taint's measured round
trip, which gpufleet's taint does not take: 0, with a warning),
``skipNodesWithSystemPods`` and
``skipNodesWithCustomControllerPods`` (booleans, true by default: ``gpufleet.autoscaling.drainability``),
``scaleDownNonEmptyCandidatesCount``, ``scaleDownCandidatesPoolRatio`` and ``scaleDownCandidatesPoolMinCount``
(accepted with a warning: cluster-autoscaler 1.34 reads them nowhere),
``initialNodeGroupBackoffDuration``, ``maxNodeGroupBackoffDuration``, ``nodeGroupBackoffResetTimeout``), with
upstream's defaults; ``controllerManager`` and ``apiServer``, kube-controller-manager's node lifecycle flags
and kube-apiserver's default toleration seconds (``gpufleet.kube.node_lifecycle_flags``). ``NodePool``:
``replicas``, a Node-like ``template`` (validated against the Kubernetes Node schema), ``min``, ``max``,
``warm``, ``pricePerHour``, ``provisioning`` (the start chain's stages in order, read by
``gpufleet.lifecycle.node_start``), ``stock``, ``gpu`` (declared by GPU model; ``migConfig`` names a
mig-parted configuration and ``migConfigChanges`` changes it over time, ``gpufleet.model.mig_configs``) and
``zeroOrMaxNodeScaling`` (a boolean, with ``max``: cluster-autoscaler's ``ZeroOrMaxNodeScaling``, the pool
grown to its max in one scale-up and removed only whole).
The loader does not stamp nodes: the simulator names them ``<pool>-<n>``.

``QueueFeed``: work items pushed to a named list (``spec.list``): ``items`` (``{at, count,
work}`` batches) and/or ``rate`` (``{perHour, work, from, until}``, Poisson arrivals).
``Traffic``: requests per second aimed at a Deployment of the same namespace (``target``),
as ``rps`` steps ``{at, value}`` in time order, and what one replica serves
(``perReplicaRps``); optionally ``timeoutSeconds`` (a request that would wait longer gives up, as
a client or gateway timeout does) and ``maxQueue`` (requests arriving while that many wait are
refused, as vLLM's or Triton's bounded queue answers 503/429), and the CPU and memory its pods use
(quantities, 0 or more, as the metrics server reports them to an HPA's Resource metric):
``cpuPerRequest`` (CPU-seconds per served request, e.g. ``20m``), ``idleCpu`` (cores, every running pod),
``idleMemory`` (bytes, every running pod) and ``memoryPerQueuedRequest`` (bytes per request waiting on a
serving pod); ``gpufleet.sim.traffic`` says how they combine. Times are Go durations from the start
of the simulation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from gpufleet.autoscaling.eviction import parse_drain_priority_config
from gpufleet.autoscaling.expanders import EXPANDERS
from gpufleet.kube import nodes, objects, schema_check
from gpufleet.kube.node_lifecycle_flags import (
    ApiServer,
    ControllerManager,
    default_toleration_seconds,
    node_lifecycle_config,
)
from gpufleet.kube.objects import Meta
from gpufleet.kube.problems import Reporter, forbidden, invalid, required, unsupported
from gpufleet.kube.spec_model import (
    Bandwidth,
    Duration,
    Fraction01,
    NonNegativeInt,
    PositiveDuration,
    SpecModel,
    validate,
)
from gpufleet.lifecycle.node_start import parse_provisioning
from gpufleet.model.gfd_labels import gfd_labels, node_capacity
from gpufleet.model.gpu_catalog import CATALOG, GpuModel, lookup
from gpufleet.model.load import FeedItems, FeedRate, QueueFeed, Traffic, TrafficUsage
from gpufleet.model.mig import MigLayoutError
from gpufleet.model.mig_configs import (
    DEFAULT_RECONFIGURE_S,
    MIG_CONFIG_LABEL,
    MIG_CONFIG_STATE_LABEL,
    Layout,
    MigConfigChange,
    MigConfigError,
    MigManaged,
    config_layout,
)
from gpufleet.model.node import Node
from gpufleet.model.quantity import parse_duration, parse_quantity
from gpufleet.model.simulation import AutoscalerSettings, NodePool, SimulationSettings, Stock

NODE_DEFINITION = "io.k8s.api.core.v1.Node"
_HOSTNAME_LABEL = "kubernetes.io/hostname"


class Storage(SpecModel):
    bandwidth: Bandwidth


class ImageRegistry(SpecModel):
    bandwidth: Bandwidth


#: an integer as Go's ``strconv.ParseInt`` reads one in base 10
_INTEGER = re.compile(r"[+-]?[0-9]+")
#: a Go ``int`` flag's value (``flag.Int``: 64 bits)
GoInt = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


def _gpu_limit(limit: str) -> tuple[str, int, int]:
    """``parseSingleGpuLimit``: a ``--gpu-total`` entry's GPU type, minimum and maximum."""
    parts = limit.split(":")
    if len(parts) != 3:
        raise ValueError(f"incorrect gpu limit specification: {limit}")
    bounds: list[int] = []
    for name, part in zip(("min", "max"), parts[1:], strict=True):
        if _INTEGER.fullmatch(part) is None:
            raise ValueError(f"incorrect gpu limit - {name} is not integer: {limit}")
        if int(part) < 0:
            raise ValueError(f"incorrect gpu limit - {name} is less than 0; {limit}")
        bounds.append(int(part))
    if bounds[0] > bounds[1]:
        raise ValueError(f"incorrect gpu limit - min is greater than max; {limit}")
    return parts[0], bounds[0], bounds[1]


def _min_max(flag: str) -> tuple[int, int]:
    """``parseMinMaxFlag`` (``--cores-total``, ``--memory-total``): ``<min>:<max>``, integers, ``0 <= min
    <= max``, in its words."""
    tokens = flag.split(":", 1)
    if len(tokens) != 2:
        raise ValueError(f"wrong nodes configuration: {flag}")
    bounds: list[int] = []
    for name, token in zip(("min", "max"), tokens, strict=True):
        if _INTEGER.fullmatch(token) is None:
            raise ValueError(f"failed to set {name} size: {token}, expected integer")
        bounds.append(int(token))
    if bounds[0] < 0:
        raise ValueError("min size must be greater or equal to  0")
    if bounds[1] < bounds[0]:
        raise ValueError("max size must be greater or equal to min size")
    return bounds[0], bounds[1]


class Autoscaler(SpecModel):
    scan_interval: PositiveDuration | None = None
    expander: str | None = None
    max_node_provision_time: PositiveDuration | None = None
    max_nodes_total: NonNegativeInt | None = None
    max_nodes_per_scaleup: NonNegativeInt | None = None
    cores_total: str | None = None  # "<min>:<max>", as the flag
    memory_total: str | None = None  # "<min>:<max>" in GiB, as the flag
    gpu_total: list[str] | None = None  # each "<type>:<min>:<max>", as the flag
    balance_similar_node_groups: bool | None = None
    balancing_ignore_label: list[str] | None = None  # the flag, each label
    scale_down_unneeded_time: Duration | None = None
    scale_down_unready_enabled: bool | None = None
    scale_down_unready_time: Duration | None = None
    scale_down_enabled: bool | None = None
    scale_down_delay_after_add: Duration | None = None
    scale_down_delay_after_delete: Duration | None = None
    scale_down_delay_after_failure: Duration | None = None
    #: read by no code in cluster-autoscaler 1.34 (the legacy scale-down that read them is gone): accepted,
    #: with a warning that they change nothing (``unread_flags``)
    scale_down_non_empty_candidates_count: GoInt | None = None
    scale_down_candidates_pool_ratio: float | None = None  # (the flag's float64)
    scale_down_candidates_pool_min_count: GoInt | None = None
    unremovable_node_recheck_timeout: Duration | None = None
    max_scale_down_parallelism: NonNegativeInt | None = None
    max_drain_parallelism: NonNegativeInt | None = None
    scale_down_utilization_threshold: Fraction01 | None = None
    scale_down_gpu_utilization_threshold: Fraction01 | None = None
    ignore_daemonsets_utilization: bool | None = None
    initial_node_group_backoff_duration: Duration | None = None
    max_node_group_backoff_duration: Duration | None = None
    node_group_backoff_reset_timeout: Duration | None = None
    ok_total_unready_count: NonNegativeInt | None = None
    max_bulk_soft_taint_count: NonNegativeInt | None = None
    max_total_unready_percentage: float | None = None  # (the flag's float, unchecked as upstream's)
    expendable_pods_priority_cutoff: GoInt | None = None  # (the flag's int: any, negative too)
    new_pod_scale_up_delay: Duration | None = None
    bypassed_scheduler_names: list[str] | None = None  # the flag, each name
    max_graceful_termination_sec: GoInt | None = None  # (the flag's int: 0 or less cuts no grace period)
    drain_priority_config: str | None = None  # the flag: "<priority>:<seconds>,..."
    max_pod_eviction_time: Duration | None = None
    node_deletion_batcher_interval: Duration | None = None
    daemonset_eviction_for_empty_nodes: bool | None = None
    daemonset_eviction_for_occupied_nodes: bool | None = None
    node_deletion_delay_timeout: Duration | None = None
    node_delete_delay_after_taint: Duration | None = None
    dynamic_node_delete_delay_after_taint_enabled: bool | None = None
    skip_nodes_with_system_pods: bool | None = None
    skip_nodes_with_custom_controller_pods: bool | None = None
    gpu_aware_scale_down: bool | None = None

    @field_validator("expander")
    @classmethod
    def _known_expanders(cls, value: str | None) -> str | None:
        """As cluster-autoscaler's ``Factory.Build``: known names, each once, none after ``random``
        (which always leaves one option)."""
        names = [name.strip() for name in (value or "").split(",")]
        for k, name in enumerate(names):
            if name not in EXPANDERS:
                raise ValueError(unsupported(name, EXPANDERS))
            if name in names[:k]:
                raise ValueError(
                    f"Expander {name} was specified multiple times, each expander must not be "
                    "specified more than once"
                )
            if k and names[k - 1] == "random":
                raise ValueError(
                    f"Expander {name} came after an expander random that will always return only one "
                    f"result, this is not allowed since {name} will never be used"
                )
        return value

    @field_validator("drain_priority_config")
    @classmethod
    def _drain_priority_config(cls, value: str | None) -> str | None:
        """As ``parseShutdownGracePeriodsAndPriorities``, which cluster-autoscaler exits on."""
        if value is not None:
            parse_drain_priority_config(value)
        return value

    @model_validator(mode="after")
    def _one_drain_config(self) -> Autoscaler:
        """cluster-autoscaler exits when both ``--drain-priority-config`` and
        ``--max-graceful-termination-sec`` are given (``createAutoscalingOptions``)."""
        if self.drain_priority_config is not None and self.max_graceful_termination_sec is not None:
            raise ValueError(
                "Invalid configuration, could not use drainPriorityConfig (--drain-priority-config) together "
                "with maxGracefulTerminationSec (--max-graceful-termination-sec)"
            )
        return self

    @field_validator("gpu_total")
    @classmethod
    def _gpu_limits(cls, value: list[str] | None) -> list[str] | None:
        """As ``parseSingleGpuLimit``: ``<type>:<min>:<max>``, both integers, ``0 <= min <= max``."""
        for limit in value or ():
            _gpu_limit(limit)
        return value

    @field_validator("cores_total", "memory_total")
    @classmethod
    def _min_max_flags(cls, value: str | None) -> str | None:
        if value is not None:
            _min_max(value)
        return value

    def unmodelled_minima(self) -> list[tuple[str, str]]:
        """The field and the words of each minimum above 0: cluster-autoscaler's ``--cores-total``,
        ``--memory-total`` and ``--gpu-total`` minima keep scale-down from going below them
        (``ResourceLimiter.GetMin``), which gpufleet does not model."""
        found = []
        for field, flag in (("coresTotal", self.cores_total), ("memoryTotal", self.memory_total)):
            low = _min_max(flag)[0] if flag is not None else 0
            if low > 0:
                found.append((field, f"minimum {low}"))
        for k, limit in enumerate(self.gpu_total or ()):
            gpu_type, low, _ = _gpu_limit(limit)
            if low > 0:
                found.append((f"gpuTotal[{k}]", f"minimum {low} of {gpu_type}"))
        return found

    def unread_flags(self) -> list[str]:
        """The fields set whose flags cluster-autoscaler 1.34 reads nowhere:
        ``--scale-down-non-empty-candidates-count``, ``--scale-down-candidates-pool-ratio`` and
        ``--scale-down-candidates-pool-min-count`` reach ``AutoscalingOptions`` and no code reads them there
        (the planner bounds its simulations with ``unneededNodesLimit`` alone)."""
        given = (
            ("scaleDownNonEmptyCandidatesCount", self.scale_down_non_empty_candidates_count),
            ("scaleDownCandidatesPoolRatio", self.scale_down_candidates_pool_ratio),
            ("scaleDownCandidatesPoolMinCount", self.scale_down_candidates_pool_min_count),
        )
        return [field for field, value in given if value is not None]

    def settings(self) -> AutoscalerSettings:
        """These knobs over cluster-autoscaler's defaults."""
        given: dict[str, Any] = {
            "scan_interval_s": self.scan_interval,
            "expander": self.expander,
            "max_node_provision_time_s": self.max_node_provision_time,
            "max_nodes_total": self.max_nodes_total,
            "max_nodes_per_scale_up": self.max_nodes_per_scaleup,
            "max_cores_total": None if self.cores_total is None else _min_max(self.cores_total)[1],
            "max_memory_total": None
            if self.memory_total is None
            else _min_max(self.memory_total)[1] * 1024**3,
            "gpu_total": None
            if self.gpu_total is None
            else tuple((gpu_type, high) for gpu_type, _, high in map(_gpu_limit, self.gpu_total)),
            "balance_similar_node_groups": self.balance_similar_node_groups,
            "balancing_ignore_labels": None
            if self.balancing_ignore_label is None
            else tuple(self.balancing_ignore_label),
            "scale_down_unneeded_time_s": self.scale_down_unneeded_time,
            "scale_down_unready_enabled": self.scale_down_unready_enabled,
            "scale_down_unready_time_s": self.scale_down_unready_time,
            "scale_down_enabled": self.scale_down_enabled,
            "scale_down_delay_after_add_s": self.scale_down_delay_after_add,
            "scale_down_delay_after_delete_s": self.scale_down_delay_after_delete,
            "scale_down_delay_after_failure_s": self.scale_down_delay_after_failure,
            "unremovable_node_recheck_timeout_s": self.unremovable_node_recheck_timeout,
            "max_scale_down_parallelism": self.max_scale_down_parallelism,
            "max_drain_parallelism": self.max_drain_parallelism,
            "scale_down_utilization_threshold": self.scale_down_utilization_threshold,
            "scale_down_gpu_utilization_threshold": self.scale_down_gpu_utilization_threshold,
            "ignore_daemonsets_utilization": self.ignore_daemonsets_utilization,
            "initial_backoff_s": self.initial_node_group_backoff_duration,
            "max_backoff_s": self.max_node_group_backoff_duration,
            "backoff_reset_s": self.node_group_backoff_reset_timeout,
            "ok_total_unready_count": self.ok_total_unready_count,
            "max_bulk_soft_taint_count": self.max_bulk_soft_taint_count,
            "max_total_unready_percentage": self.max_total_unready_percentage,
            "expendable_pods_priority_cutoff": self.expendable_pods_priority_cutoff,
            "new_pod_scale_up_delay_s": self.new_pod_scale_up_delay,
            "bypassed_scheduler_names": None
            if self.bypassed_scheduler_names is None
            else tuple(self.bypassed_scheduler_names),
            "max_graceful_termination_s": self.max_graceful_termination_sec,
            "drain_priority_config": None
            if self.drain_priority_config is None
            else parse_drain_priority_config(self.drain_priority_config),
            "max_pod_eviction_time_s": self.max_pod_eviction_time,
            "node_deletion_batcher_interval_s": self.node_deletion_batcher_interval,
            "daemonset_eviction_for_empty_nodes": self.daemonset_eviction_for_empty_nodes,
            "daemonset_eviction_for_occupied_nodes": self.daemonset_eviction_for_occupied_nodes,
            "node_deletion_delay_timeout_s": self.node_deletion_delay_timeout,
            "node_delete_delay_after_taint_s": 0.0
            if self.dynamic_node_delete_delay_after_taint_enabled
            else self.node_delete_delay_after_taint,
            "skip_nodes_with_system_pods": self.skip_nodes_with_system_pods,
            "skip_nodes_with_custom_controller_pods": self.skip_nodes_with_custom_controller_pods,
            "gpu_aware_scale_down": self.gpu_aware_scale_down,
        }
        return replace(AutoscalerSettings(), **{k: v for k, v in given.items() if v is not None})


def parse_start_time(value: object) -> object:
    """``startTime``: an RFC 3339 date-time with its offset (``2026-12-07T08:00:00Z``; YAML may already
    have read it as a date-time), as Unix seconds."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an RFC 3339 date-time") from None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"{value.isoformat()!r} has no UTC offset (write Z or +hh:mm)")
        return value.timestamp()
    return value


class SimulationSpec(SpecModel):
    duration: PositiveDuration | None = None
    #: the wall-clock time of the run's 0 (a cron trigger reads it); default the Unix epoch
    start_time: Annotated[float, BeforeValidator(parse_start_time)] | None = None
    seed: NonNegativeInt = 0
    sample_interval: PositiveDuration = 10.0
    storage: Storage | None = None
    registry: ImageRegistry | None = None
    autoscaler: Autoscaler | None = None
    controller_manager: ControllerManager | None = None
    api_server: ApiServer | None = None


class StockAvailability(SpecModel):
    at: Duration
    count: NonNegativeInt


class StockSpec(SpecModel):
    stockout_probability: Fraction01 = 0.0
    available: list[StockAvailability] | None = None


class MigConfigChangeSpec(SpecModel):
    """The administrator sets ``nvidia.com/mig.config`` on the pool's nodes (``model.mig_configs``)."""

    at: Duration
    config: str
    drain: bool = True  # cordon and evict the pods on the GPUs first, as the GPU Operator docs require
    duration: PositiveDuration = DEFAULT_RECONFIGURE_S  # MIG Manager: from ``pending`` to the new resources


class GpuSpec(SpecModel):
    """A pool declared by GPU model: capacity and GFD labels follow from the catalog."""

    model: str
    count: Annotated[int, Field(ge=1)]
    mig_strategy: Literal["none", "single", "mixed"] = "none"
    mig_layout: list[str] | None = None  # the MIG instances on each GPU (mig-parted ``devices: all``)
    mig_config: str | None = None  # a mig-parted configuration name, as in ``nvidia.com/mig.config``
    mig_config_changes: list[MigConfigChangeSpec] | None = None
    time_slicing_replicas: Annotated[int, Field(ge=1)] | None = None
    publish_resource_slices: bool = False  # DRA instead of the device plugin

    @field_validator("model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        try:
            lookup(value)
        except KeyError:
            raise ValueError(unsupported(value, sorted(CATALOG))) from None
        return value


class SpotSpec(SpecModel):
    reclaim_per_hour: Annotated[float, Field(ge=0)]


class NodePoolSpec(SpecModel):
    replicas: NonNegativeInt = 0
    template: dict[str, Any]
    min: NonNegativeInt = 0
    max: NonNegativeInt | None = None
    warm: NonNegativeInt = 0
    price_per_hour: Annotated[float, Field(ge=0)] = 0.0
    provisioning: dict[str, Any] | None = None
    stock: StockSpec | None = None
    spot: SpotSpec | None = None
    gpu: GpuSpec | None = None
    zero_or_max_node_scaling: bool = False  # NodeGroupAutoscalingOptions.ZeroOrMaxNodeScaling

    @field_validator("provisioning")
    @classmethod
    def _stages(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            parse_provisioning(value)  # the simulator's own reading: stage names, order, durations
        return value


def simulation(body: Mapping[str, Any], report: Reporter) -> SimulationSettings:
    spec = validate(SimulationSpec, body.get("spec") or {}, report, "spec") or SimulationSpec()
    defaults = SimulationSettings()
    for field, what in spec.autoscaler.unmodelled_minima() if spec.autoscaler else ():
        report.warn(
            f"spec.autoscaler.{field}",
            f"the {what} bounds scale-down, which gpufleet does not model: only the maximum is kept",
        )
    for field in spec.autoscaler.unread_flags() if spec.autoscaler else ():
        report.warn(
            f"spec.autoscaler.{field}", "cluster-autoscaler 1.34 reads this flag nowhere: it changes nothing"
        )
    if spec.autoscaler and spec.autoscaler.dynamic_node_delete_delay_after_taint_enabled:
        report.warn(
            "spec.autoscaler.dynamicNodeDeleteDelayAfterTaintEnabled",
            "the delay after the ToBeDeleted taint is then twice the longest round trip of a taint to the "
            "API server in the last hour (taintNodesSync), which gpufleet does not model: taken as 0, "
            "nodeDeleteDelayAfterTaint ignored",
        )
    return SimulationSettings(
        duration_s=spec.duration,
        start_time_s=spec.start_time if spec.start_time is not None else defaults.start_time_s,
        start_time_set=spec.start_time is not None,
        seed=spec.seed,
        sample_interval_s=spec.sample_interval,
        autoscaler=spec.autoscaler.settings() if spec.autoscaler else defaults.autoscaler,
        storage_bandwidth=spec.storage.bandwidth if spec.storage else defaults.storage_bandwidth,
        registry_bandwidth=spec.registry.bandwidth if spec.registry else defaults.registry_bandwidth,
        node_lifecycle=node_lifecycle_config(spec.controller_manager, report),
        default_tolerations=default_toleration_seconds(spec.api_server),
    )


def node_pool(meta: Meta, body: Mapping[str, Any], report: Reporter) -> NodePool | None:
    if body.get("spec") is None:
        report.error("spec", required())
        return None
    spec = validate(NodePoolSpec, body["spec"], report, "spec")
    if spec is None:
        return None
    if spec.max is not None and spec.min > spec.max:
        report.error("spec.min", invalid(spec.min, f"must be less than or equal to max ({spec.max})"))
    if spec.max is not None and spec.replicas > spec.max:
        report.error(
            "spec.replicas", invalid(spec.replicas, f"must be less than or equal to max ({spec.max})")
        )
    if spec.zero_or_max_node_scaling and spec.max is None:
        detail = "a pool that scales from zero to its max size at once needs max"
        report.error("spec.zeroOrMaxNodeScaling", invalid(True, detail))
    at_template = report.at("spec.template")
    schema_check.check(spec.template, NODE_DEFINITION, at_template)
    template_meta = objects.meta(spec.template, namespaced=False)
    template = nodes.node(template_meta, spec.template, at_template, name=meta.name)
    if _HOSTNAME_LABEL not in template_meta.labels:
        del template.labels[_HOSTNAME_LABEL]  # each stamped node gets its own name
    price = spec.price_per_hour
    mig = None
    if spec.gpu is not None:
        errors = report.error_count
        mig = _mig_managed(spec.gpu, report.at("spec.gpu"))
        try:
            if report.error_count == errors:
                catalog_price = _declare_by_gpu_model(template, spec.gpu, mig)
                price = price or catalog_price
        except (ValueError, KeyError) as err:  # KeyError: a MIG profile the model does not have
            report.error("spec.gpu", str(err.args[0]))
    return NodePool(
        meta.name,
        template,
        spec.replicas,
        min=spec.min,
        max=spec.max,
        warm=spec.warm,
        price_per_hour=price,
        provisioning=tuple((spec.provisioning or {}).items()),
        stock=_stock(spec.stock),
        spot_reclaim_per_hour=spec.spot.reclaim_per_hour if spec.spot is not None else None,
        dra_gpus=_dra_gpus(spec.gpu),
        mig=mig,
        zero_or_max_node_scaling=spec.zero_or_max_node_scaling,
    )


def _dra_gpus(gpu: GpuSpec | None) -> tuple[str, int, int] | None:
    """With ``publishResourceSlices`` the pool's GPUs are DRA devices (the NVIDIA DRA driver's product
    names use spaces where GFD labels use dashes)."""
    if gpu is None or not gpu.publish_resource_slices:
        return None
    model = lookup(gpu.model)
    return (model.product or model.name).replace("-", " "), gpu.count, model.memory_bytes or 0


def _mig_managed(gpu: GpuSpec, report: Reporter) -> MigManaged | None:
    """The pool's MIG layout as MIG Manager sets it (``migLayout`` or the ``migConfig`` it names) and the
    changes asked of it; None for a pool without MIG. Reports what cannot be applied to the model."""
    model = lookup(gpu.model)
    if gpu.mig_config is not None and gpu.mig_layout is not None:
        report.error("migConfig", forbidden("may not be set together with migLayout"))
    if gpu.mig_strategy == "none" or not model.mig_capable:
        for path, value in (("migConfig", gpu.mig_config), ("migConfigChanges", gpu.mig_config_changes)):
            if value is not None:
                report.error(path, forbidden("needs a MIG-capable model and migStrategy single or mixed"))
        return None
    if gpu.publish_resource_slices and gpu.mig_config_changes:
        report.error(
            "migConfigChanges", forbidden("MIG Manager changes device-plugin resources, not DRA slices")
        )
    mig = MigManaged(model.name, gpu.count, gpu.mig_strategy, None, replicas=gpu.time_slicing_replicas or 1)
    layout: Layout = None if gpu.mig_layout is None else tuple(gpu.mig_layout)
    if gpu.mig_config is not None:
        layout = _config_layout(mig, model, gpu.mig_config, report, "migConfig")
    changes = []
    for i, change in enumerate(gpu.mig_config_changes or ()):
        _config_layout(mig, model, change.config, report, f"migConfigChanges[{i}].config")
        changes.append(MigConfigChange(change.at, change.config, change.drain, change.duration))
    return replace(
        mig, layout=layout, config=gpu.mig_config, changes=tuple(sorted(changes, key=lambda c: c.at_s))
    )


def _config_layout(mig: MigManaged, model: GpuModel, config: str, report: Reporter, path: str) -> Layout:
    """The layout of a mig-parted configuration, if the pool's model and strategy can carry it."""
    try:
        layout = config_layout(config, model)
        mig.resources(layout)  # the single strategy takes one profile per node
    except (MigConfigError, MigLayoutError) as err:
        report.error(path, invalid(config, str(err)))
        return None
    return layout


def _declare_by_gpu_model(template: Node, gpu: GpuSpec, mig: MigManaged | None) -> float:
    """Fill the template's GPU capacity and GFD labels from the catalog; returns the default price
    of the node (the catalog's per-GPU price times the count; 0 when unknown)."""
    model = lookup(gpu.model)
    replicas = gpu.time_slicing_replicas or 1
    layout = mig.layout if mig is not None else gpu.mig_layout
    capacity = node_capacity(
        model,
        gpu.count,
        template.allocatable.get("cpu", 0),
        template.allocatable.get("memory", 0),
        pods=template.allocatable.get("pods", 110),
        mig_strategy=gpu.mig_strategy,
        mig_layout=layout,
        replicas=replicas,
    )
    labels = gfd_labels(model, gpu.count, gpu.mig_strategy, layout, replicas if replicas > 1 else None)
    if mig is not None and mig.config is not None:  # MIG Manager applied it when the node came up
        labels.update({MIG_CONFIG_LABEL: mig.config, MIG_CONFIG_STATE_LABEL: "success"})
    template.labels.update({k: v for k, v in labels.items() if k not in template.labels})
    if gpu.publish_resource_slices:  # one cluster runs either the DRA driver or the device plugin
        capacity = {r: v for r, v in capacity.items() if not r.startswith("nvidia.com/")}
    template.capacity = {**template.capacity, **capacity}
    template.allocatable = {**template.allocatable, **capacity}
    return (model.default_price_per_hour or 0.0) * gpu.count


def _stock(spec: StockSpec | None) -> Stock:
    if spec is None:
        return Stock()
    available = (
        tuple((step.at, step.count) for step in spec.available) if spec.available is not None else None
    )
    return Stock(spec.stockout_probability, available)


NonNegativeDuration = Annotated[float, BeforeValidator(parse_duration), Field(ge=0)]
PositiveNumber = Annotated[float, Field(gt=0)]


def _non_negative_quantity(value: object) -> float:
    """A Kubernetes quantity (``250m``, ``2``, ``512Mi``), 0 or more."""
    amount = parse_quantity(value)
    if amount < 0:
        raise ValueError(invalid(value, "must be greater than or equal to 0"))
    return float(amount)


NonNegativeQuantity = Annotated[float, BeforeValidator(_non_negative_quantity)]


def _named(value: object) -> object:
    """A name must not be empty (other types are left to the strict ``str`` check)."""
    if isinstance(value, str) and not value.strip():
        raise ValueError(required())
    return value


Name = Annotated[str, BeforeValidator(_named)]


class FeedItemsSpec(SpecModel):
    at: NonNegativeDuration
    count: NonNegativeInt
    work: PositiveDuration


class FeedRateSpec(SpecModel):
    per_hour: PositiveNumber
    work: PositiveDuration
    from_: NonNegativeDuration = Field(default=0.0, alias="from")
    until: NonNegativeDuration | None = None


class QueueFeedSpec(SpecModel):
    list_: Name = Field(alias="list")
    items: list[FeedItemsSpec] | None = None
    rate: FeedRateSpec | None = None


class RpsStep(SpecModel):
    at: NonNegativeDuration
    value: Annotated[float, Field(ge=0)]


class TrafficSpec(SpecModel):
    target: Name
    target_kind: Literal["Deployment", "ReplicaSet", "StatefulSet", "LeaderWorkerSet"] = "Deployment"
    rps: list[RpsStep]
    per_replica_rps: PositiveNumber
    timeout_seconds: PositiveNumber | None = None
    max_queue: NonNegativeInt | None = None
    cpu_per_request: NonNegativeQuantity | None = None
    idle_cpu: NonNegativeQuantity | None = None
    idle_memory: NonNegativeQuantity | None = None
    memory_per_queued_request: NonNegativeQuantity | None = None


def queue_feed(meta: Meta, body: Mapping[str, Any], report: Reporter) -> QueueFeed | None:
    if body.get("spec") is None:
        report.error("spec", required())
        return None
    spec = validate(QueueFeedSpec, body["spec"], report, "spec")
    if spec is None:
        return None
    raw = body["spec"]
    if raw.get("items") is None and raw.get("rate") is None:
        report.error("spec", required("at least one of items or rate"))
    rate = None
    if spec.rate is not None:
        until = spec.rate.until
        if until is not None and until <= spec.rate.from_:
            report.error("spec.rate.until", invalid(raw["rate"]["until"], "must be later than from"))
        rate = FeedRate(spec.rate.per_hour, spec.rate.work, spec.rate.from_, until)
    batches = tuple(FeedItems(i.at, i.count, i.work) for i in spec.items or ())
    return QueueFeed(
        meta.name,
        meta.namespace,
        spec.list_,
        items=tuple(sorted(batches, key=lambda b: b.at_s)),
        rate=rate,
    )


def traffic(meta: Meta, body: Mapping[str, Any], report: Reporter) -> Traffic | None:
    if body.get("spec") is None:
        report.error("spec", required())
        return None
    spec = validate(TrafficSpec, body["spec"], report, "spec")
    if spec is None:
        return None
    if not spec.rps:
        report.error("spec.rps", required("at least one step"))
    written = body["spec"].get("rps")
    in_order = range(1, len(spec.rps) if len(spec.rps) == len(written) else 0)  # none dropped
    for i in in_order:
        if spec.rps[i].at <= spec.rps[i - 1].at:
            at = written[i].get("at")
            report.error(f"spec.rps[{i}].at", invalid(at, f"must be later than spec.rps[{i - 1}].at"))
    steps = tuple((step.at, step.value) for step in spec.rps)
    return Traffic(
        meta.name,
        meta.namespace,
        spec.target,
        steps,
        spec.per_replica_rps,
        spec.target_kind,
        timeout_s=spec.timeout_seconds,
        max_queue=spec.max_queue,
        usage=TrafficUsage(
            spec.cpu_per_request, spec.idle_cpu, spec.idle_memory, spec.memory_per_queued_request
        ),
    )
