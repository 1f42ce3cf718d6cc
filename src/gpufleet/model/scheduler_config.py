"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``) as data.

One document is one scheduler process with its own queue. Plugin lists are kept as the
user wrote them; ``gpufleet.scheduling.profile`` merges them into kube-scheduler's
defaults exactly as ``pkg/scheduler/apis/config/v1/default_plugins.go`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PluginRef:
    """A plugin named at an extension point of a profile, with its score weight where one is given."""

    name: str
    weight: int | None = None


@dataclass(frozen=True)
class PluginSet:
    """One extension point's ``enabled`` and ``disabled`` plugins in a profile (``*`` disables all the
    defaults)."""

    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


@dataclass
class ProfileConfig:
    """One profile of a KubeSchedulerConfiguration: its scheduler name, plugin sets by extension point,
    each plugin's args, and its own ``percentageOfNodesToScore``."""

    scheduler_name: str = "default-scheduler"
    plugins: dict[str, PluginSet] = field(default_factory=dict)
    plugin_args: dict[str, dict[str, object]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None


@dataclass(frozen=True)
class ProcessSettings:
    """How the process talks to the API (``clientConnection``) and elects its leader
    (``leaderElection``), with the v1 defaults (``SetDefaults_KubeSchedulerConfiguration``); only a live
    scheduler reads them. The Lease's default name is ``gpufleet-scheduler``, not kube-scheduler's own,
    so that a second scheduler never contends for kube-scheduler's Lease."""

    qps: float = 50.0
    burst: int = 100
    leader_elect: bool = True
    lease_duration_s: float = 15.0
    renew_deadline_s: float = 10.0
    retry_period_s: float = 2.0
    resource_name: str = "gpufleet-scheduler"
    resource_namespace: str = "kube-system"


@dataclass
class SchedulerConfig:
    """One scheduler process: its profiles share one queue and one QueueSort plugin."""

    name: str
    profiles: list[ProfileConfig] = field(default_factory=list)
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_s: float = 1.0
    pod_max_backoff_s: float = 10.0
    process: ProcessSettings = field(default_factory=ProcessSettings)
