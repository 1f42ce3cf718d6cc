"""gpufleet's own kinds (``gpufleet.io/v1alpha1``): ``Simulation`` and ``NodePool``."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.model.default_toleration_seconds import DefaultTolerationSeconds
from gpufleet.model.mig_configs import MigManaged
from gpufleet.model.node import Node
from gpufleet.model.node_lifecycle_config import NodeLifecycleConfig

#: Without ``spec.duration`` a run stops when nothing is left to do, or after 30 days.
MAX_DURATION_S = 30 * 24 * 3600.0


@dataclass(frozen=True)
class AutoscalerSettings:
    """cluster-autoscaler's flags, with upstream defaults (FAQ flag table)."""

    scan_interval_s: float = 10.0
    expander: str = "least-waste"
    max_node_provision_time_s: float = 15 * 60.0
    max_nodes_total: int | None = None
    max_nodes_per_scale_up: int = 1000  # --max-nodes-per-scaleup: the estimator's node limit (0: none)
    max_cores_total: int = 5000 * 64  # --cores-total's max (config.DefaultMaxClusterCores)
    #: --memory-total's max, in bytes (the flag's GiB; config.DefaultMaxClusterMemory)
    max_memory_total: int = 5000 * 64 * 20 * 1024**3
    #: --gpu-total: each GPU type's maximum (``<type>:<min>:<max>``; the min is scale-down's, not modelled)
    gpu_total: tuple[tuple[str, int], ...] = ()
    balance_similar_node_groups: bool = False  # --balance-similar-node-groups
    balancing_ignore_labels: tuple[str, ...] = ()  # --balancing-ignore-label, each
    scale_down_unneeded_time_s: float = 10 * 60.0
    #: --scale-down-unready-enabled: unready nodes are scale-down candidates too ...
    scale_down_unready_enabled: bool = True
    #: ... once unneeded for --scale-down-unready-time (``unneeded.Nodes.RemovableAt``)
    scale_down_unready_time_s: float = 20 * 60.0
    #: --scale-down-enabled: false, no scan looks for unneeded nodes nor deletes any (nor soft-taints one);
    #: scale-up goes on (``RunOnce``: ``if a.ScaleDownEnabled``)
    scale_down_enabled: bool = True
    #: --scale-down-delay-after-add, --scale-down-delay-after-delete and --scale-down-delay-after-failure:
    #: no node is deleted while a scale-up, a scan that started deleting nodes, or a failed deletion is
    #: more recent than that (``isScaleDownInCooldown``: ``last.Add(delay).After(now)``)
    scale_down_delay_after_add_s: float = 10 * 60.0
    scale_down_delay_after_delete_s: float = 0.0
    #: (``lastScaleDownFailTime`` is set when ``StartDeletion`` returns an error: its nodes' taints could not
    #: be written, or its snapshot not built; gpufleet's port writes taints and drains without failing, so
    #: no deletion fails and this delay never starts: read and kept, it changes nothing)
    scale_down_delay_after_failure_s: float = 3 * 60.0
    #: --unremovable-node-recheck-timeout: a node the removal simulation found unremovable is not checked
    #: again for this long (``unremovable.Nodes``)
    unremovable_node_recheck_timeout_s: float = 5 * 60.0
    #: --max-scale-down-parallelism: nodes (empty and drained) being deleted at once, those in progress
    #: counted; it also bounds the unneeded nodes a scan looks for (``unneededNodesLimit``) ...
    max_scale_down_parallelism: int = 10
    #: ... --max-drain-parallelism: of them, nodes being drained (the deprecated --max-empty-bulk-delete is
    #: no longer a flag in 1.34)
    max_drain_parallelism: int = 1
    scale_down_utilization_threshold: float = 0.5
    scale_down_gpu_utilization_threshold: float = 0.5
    ignore_daemonsets_utilization: bool = False
    initial_backoff_s: float = 5 * 60.0
    max_backoff_s: float = 30 * 60.0
    backoff_reset_s: float = 3 * 3600.0  # --node-group-backoff-reset-timeout
    #: --ok-total-unready-count and --max-total-unready-percentage: more unready nodes than both, in the
    #: cluster, halt autoscaling (``IsClusterHealthy``); in a group, skip it in scale-up
    #: (``IsNodeGroupHealthy``)
    ok_total_unready_count: int = 3
    max_total_unready_percentage: float = 45.0
    #: --max-bulk-soft-taint-count: the DeletionCandidate soft taints a scan puts on unneeded nodes or takes
    #: off needed ones, at most (0: none, and none kept; ``actuation.UpdateSoftDeletionTaints``)
    max_bulk_soft_taint_count: int = 10
    #: --expendable-pods-priority-cutoff: pods of a lower priority are expendable: they never trigger a
    #: scale-up, and scale-down ignores them (``autoscaling.expendable``)
    expendable_pods_priority_cutoff: int = -10
    #: --new-pod-scale-up-delay: a pending pod no older than this (or than its
    #: ``cluster-autoscaler.kubernetes.io/pod-scale-up-delay``, when longer) triggers no scale-up
    #: (``filterOutYoungPods``: ``autoscaling.young_pods``)
    new_pod_scale_up_delay_s: float = 0.0
    #: --bypassed-scheduler-names: set, cluster-autoscaler does not wait for unschedulable pods to be 2 s old
    #: (30 s with a GPU pod) before scaling up (``allPodsAreNew``: ``autoscaling.new_pods``), and takes
    #: the pending pods of these schedulers that no scheduler has processed as unschedulable
    #: (``SchedulerUnprocessedPods``; ``default-scheduler`` stands for an empty ``schedulerName`` too)
    bypassed_scheduler_names: tuple[str, ...] = ()
    #: --max-graceful-termination-sec: a drain evicts each pod with its terminationGracePeriodSeconds cut to
    #: this (0 or less: not cut; ``Evictor.evictPod``)
    max_graceful_termination_s: int = 10 * 60
    #: --drain-priority-config: set, a drain evicts the pods group by group in ascending priority, each
    #: group's grace period its own: ``(priority, shutdownGracePeriodSeconds)`` pairs as given
    #: (``autoscaling.eviction``); upstream takes it with no --max-graceful-termination-sec
    drain_priority_config: tuple[tuple[int, int], ...] = ()
    #: --max-pod-eviction-time: how long a drain tries again an eviction refused (a PodDisruptionBudget's
    #: 429) before the drain fails
    max_pod_eviction_time_s: float = 2 * 60.0
    #: --node-deletion-batcher-interval: the nodes of a group whose deletion is due within this long of the
    #: first are deleted together, that long after it (0: each at once)
    node_deletion_batcher_interval_s: float = 0.0
    #: --daemonset-eviction-for-empty-nodes and --daemonset-eviction-for-occupied-nodes: whether the node's
    #: DaemonSet pods not annotated ``enable-ds-eviction`` are evicted before an empty node's deletion, or in
    #: a drain (``autoscaling.eviction.pods_to_evict``)
    daemonset_eviction_for_empty_nodes: bool = False
    daemonset_eviction_for_occupied_nodes: bool = True
    #: --node-deletion-delay-timeout: how long a node annotated
    #: ``delay-deletion.cluster-autoscaler.kubernetes.io/...`` is kept from deletion once drained, waiting for
    #: the annotation to go (0: not at all; ``WaitForDelayDeletion``)
    node_deletion_delay_timeout_s: float = 2 * 60.0
    #: --node-delete-delay-after-taint: how long after marking the nodes to delete (``taintNodesSync``) their
    #: drain, or an empty one's deletion, starts (``deleteNodesAsync``'s sleep; 0: at once)
    node_delete_delay_after_taint_s: float = 5.0
    #: --skip-nodes-with-system-pods and --skip-nodes-with-custom-controller-pods: the drainability rules
    #: (``options.NodeDeleteOptions``, ``autoscaling.drainability.DeleteOptions``)
    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    #: gpufleet's GPU-aware option (not upstream): never drain a node where a GPU pod is computing.
    gpu_aware_scale_down: bool = False


#: Shared model storage, read by every loading replica at once (seed 004's example figure).
DEFAULT_STORAGE_BANDWIDTH = 10e9
#: Image pulls per node (one at a time, as the kubelet's default ``serializeImagePulls``).
DEFAULT_REGISTRY_BANDWIDTH = 200e6


@dataclass(frozen=True)
class SimulationSettings:
    duration_s: float | None = None
    seed: int = 0
    sample_interval_s: float = 10.0
    autoscaler: AutoscalerSettings = field(default_factory=AutoscalerSettings)
    #: kube-controller-manager's node lifecycle flags (``spec.controllerManager``)
    node_lifecycle: NodeLifecycleConfig = field(default_factory=NodeLifecycleConfig)
    #: kube-apiserver's DefaultTolerationSeconds flags (``spec.apiServer``)
    default_tolerations: DefaultTolerationSeconds = field(default_factory=DefaultTolerationSeconds)
    storage_bandwidth: float = DEFAULT_STORAGE_BANDWIDTH  # bytes/s
    registry_bandwidth: float = DEFAULT_REGISTRY_BANDWIDTH  # bytes/s per node
    #: the wall-clock time (Unix seconds) of the run's time 0 (``spec.startTime``): what a KEDA cron
    #: trigger reads; default 1970-01-01T00:00:00Z, a Thursday
    start_time_s: float = 0.0
    #: whether ``spec.startTime`` set ``start_time_s`` (else a cluster dump's NotReady nodes are placed on the
    #: run's clock by the latest time their objects show: ``model.node_readiness``)
    start_time_set: bool = False


@dataclass(frozen=True)
class Stock:
    """What the cloud can give: a stock-out probability per node request and/or instances over time."""

    stockout_probability: float = 0.0
    available: tuple[tuple[float, int], ...] | None = None  # (from time, count) steps; None = unlimited


@dataclass
class NodePool:
    """Nodes stamped from one template, named ``<pool>-<n>`` with ``n`` from 0, never reused.

    ``provisioning`` keeps the start-chain stages in the order the pool wrote them, each with
    its raw duration spec (parsed by ``gpufleet.lifecycle.distributions``). A pool
    autoscales only if it sets ``max``; with ``zero_or_max_node_scaling`` it does so all at once.
    """

    name: str
    template: Node
    replicas: int = 0
    min: int = 0
    max: int | None = None
    warm: int = 0
    price_per_hour: float = 0.0
    provisioning: tuple[tuple[str, object], ...] = ()
    stock: Stock = field(default_factory=Stock)
    #: spot capacity: each node is reclaimed at this rate (Poisson), with two minutes' notice
    spot_reclaim_per_hour: float | None = None
    #: the GPUs each node publishes as a DRA ResourceSlice instead of device-plugin resources:
    #: (product name, count, memory bytes per GPU)
    dra_gpus: tuple[str, int, int] | None = None
    #: a pool declared by a MIG-capable GPU model with a MIG strategy: its layout, as MIG Manager sets it,
    #: and the ``nvidia.com/mig.config`` changes asked of its nodes over time
    mig: MigManaged | None = None
    #: cluster-autoscaler's ``NodeGroupAutoscalingOptions.ZeroOrMaxNodeScaling``: the group grows to its max
    #: in one scale-up and shrinks to zero all at once (an atomic slice of hosts, useful only whole)
    zero_or_max_node_scaling: bool = False

    @property
    def autoscaled(self) -> bool:
        return self.max is not None
