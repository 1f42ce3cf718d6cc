"""Which scheduler processes a cluster runs.

Each ``KubeSchedulerConfiguration`` document is one process. Unless one of them defines a
``default-scheduler`` profile, the cluster's own kube-scheduler runs too, with upstream
defaults, and comes first.
"""

from __future__ import annotations

from gpufleet.model.pod import DEFAULT_SCHEDULER
from gpufleet.model.scheduler_config import SchedulerConfig


def scheduler_processes(configs: list[SchedulerConfig]) -> list[SchedulerConfig]:
    names = {p.scheduler_name for c in configs for p in c.profiles} | {
        DEFAULT_SCHEDULER for c in configs if not c.profiles
    }
    if DEFAULT_SCHEDULER in names:
        return list(configs)
    return [SchedulerConfig("kube-scheduler"), *configs]
