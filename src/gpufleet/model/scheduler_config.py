"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``) as data.

One document is one scheduler process with its own queue. Plugin lists are kept as the
user wrote them; ``gpufleet.scheduling.profile`` merges them into kube-scheduler's
defaults exactly as ``pkg/scheduler/apis/config/v1/default_plugins.go`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PluginRef:
    name: str
    weight: int | None = None


@dataclass(frozen=True)
class PluginSet:
    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


@dataclass
class ProfileConfig:
    scheduler_name: str = "default-scheduler"
    plugins: dict[str, PluginSet] = field(default_factory=dict)
    plugin_args: dict[str, dict[str, object]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None


@dataclass
class SchedulerConfig:
    """One scheduler process: its profiles share one queue and one QueueSort plugin."""

    name: str
    profiles: list[ProfileConfig] = field(default_factory=list)
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_s: float = 1.0
    pod_max_backoff_s: float = 10.0
