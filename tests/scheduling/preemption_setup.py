"""A small cluster for DefaultPreemption tests: 8-GPU nodes, pods placed at chosen times, budgets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from conftest import gpu_node, gpu_pod
from gpufleet.cluster.state import ClusterState
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.pod import POD_GROUP_LABEL, Pod
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.model.workloads import PodGroup
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.scheduler import Outcome, Scheduler


@dataclass
class Budgets:
    """A ``DisruptionView`` with fixed ``disruptionsAllowed``."""

    allowed: list[tuple[DisruptionBudget, int]] = field(default_factory=list)

    def pod_disruption_budgets(self) -> list[tuple[DisruptionBudget, int]]:
        return list(self.allowed)


def pod(
    name: str, gpus: int, priority: int = 0, labels: dict[str, str] | None = None, group: str = ""
) -> Pod:
    all_labels = dict(labels or {})
    if group:
        all_labels[POD_GROUP_LABEL] = group
    return gpu_pod(name, gpus, priority=priority, labels=all_labels)


def budget(name: str, app: str) -> DisruptionBudget:
    return DisruptionBudget("default", name, (("app", app),), min_available=1)


class Cluster:
    def __init__(
        self, *names: str, gpus: int = 8, labels: Mapping[str, dict[str, str]] | None = None
    ) -> None:
        """Nodes ``names`` of ``gpus`` GPUs each, node ``n`` labelled ``labels[n]`` where given."""
        self.state = ClusterState([gpu_node(n, gpus, labels=(labels or {}).get(n)) for n in names])
        self.budgets = Budgets()
        self.state.disruptions = self.budgets
        self.gangs = GangView(self.state)
        self.scheduler = Scheduler(SchedulerConfig("test"), self.state, self.gangs)

    def gang(self, name: str, min_member: int) -> None:
        self.gangs.add_group(PodGroup(name, "default", min_member))

    def place(self, p: Pod, node: str, at: float = 0.0) -> None:
        self.gangs.add_pod(p)
        self.state.assign(p, node, at)

    def protect(self, app: str, allowed: int) -> None:
        self.budgets.allowed.append((budget(f"pdb-{app}", app), allowed))

    def schedule(self, *pods: Pod, now: float = 100.0) -> list[Outcome]:
        for p in pods:
            self.gangs.add_pod(p)
            self.scheduler.add(p, now)
        return self.scheduler.run(now)

    def preemption(self, *pods: Pod) -> Outcome:
        """The one "preempting" outcome of scheduling ``pods``."""
        found = [o for o in self.schedule(*pods) if o.kind == "preempting"]
        assert len(found) == 1, found
        return found[0]
