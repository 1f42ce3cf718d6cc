"""Deployment rollouts on the simulation's clock: at each ``Rollout``'s time its Deployment's template
changes (``DeploymentController.roll``), and from then on the Deployment is synced as
pkg/controller/deployment syncs it: on each change of its ReplicaSets' pods (one Ready, one gone, one
turned available after ``minReadySeconds``: the ReplicaSet controller's ``AddAfter(minReadySeconds)``),
and again at once after a sync that scaled a ReplicaSet (its update requeues the Deployment). A sync
counts each ReplicaSet's available pods (``IsPodAvailable``: Ready for ``minReadySeconds``; an instant
exactly ``minReadySeconds`` after counts), deletes the pods a ReplicaSet has too many in the ReplicaSet
controller's order, and creates those it lacks.

Each rollout's start and end (``DeploymentComplete``: every replica updated and available) is noted, for
``summary.json``'s ``rollouts``. A pod that loses its Ready condition without ending (a hung process) is
not told the Deployment until its next sync."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

from gpufleet.control.clock import Clock, Priority
from gpufleet.model.workloads import TemplateChange
from gpufleet.sim.records import PodRecord
from gpufleet.workloads.deployment import DeploymentController, DeploymentReplicaSet


@dataclass
class RolloutRecord:
    """One rollout of a Deployment: the Rollout's name, its ReplicaSet, when it started and when the
    Deployment was complete (None: not by the run's end, or a later rollout took over)."""

    deployment: str
    rollout: str
    replica_set: str
    strategy: str
    started_s: float
    completed_s: float | None = None


class Rollouts:
    """The rollouts of a run's Deployments. ``reconcile`` creates the pods a controller wants;
    ``delete_surplus`` deletes ``count`` of the given pods in the ReplicaSet controller's order, ranked by the
    Deployment's pods on their node."""

    def __init__(
        self,
        clock: Clock,
        records: Mapping[str, PodRecord],
        reconcile: Callable[[DeploymentController], None],
        delete_surplus: Callable[[DeploymentController, list[str], int], None],
    ) -> None:
        self.clock = clock
        self.records = records
        self.reconcile = reconcile
        self.delete_surplus = delete_surplus
        self.records_by_deployment: dict[str, list[RolloutRecord]] = {}
        self._due: set[tuple[str, float]] = set()  # syncs armed, by Deployment and time

    def arm(self, controller: DeploymentController) -> None:
        """The Deployment's template changes at each of its Rollouts' times."""
        for change in controller.deployment.rollouts:
            self.clock.at(change.at_s, Priority.CONTROLLER, partial(self._roll, controller, change))

    def _roll(self, controller: DeploymentController, change: TemplateChange) -> None:
        rs = controller.roll(change)
        d = controller.deployment
        now = self.clock.now
        self.records_by_deployment.setdefault(d.key, []).append(
            RolloutRecord(d.key, change.name, rs.name, d.strategy.type, now)
        )
        self.sync(controller)

    def changed(self, controller: DeploymentController, after_s: float = 0.0) -> None:
        """One of its pods changed (Ready, gone): during a rollout, sync it ``after_s`` from now."""
        if not controller.rolling:
            return
        at = self.clock.now + after_s
        due = (controller.key, at)
        if due in self._due:
            return
        self._due.add(due)
        self.clock.at(at, Priority.CONTROLLER, partial(self._due_sync, controller, due))

    def pod_ready(self, controller: DeploymentController) -> None:
        """A pod turned Ready: it is available now, or once ``minReadySeconds`` passed."""
        self.changed(controller, float(controller.deployment.min_ready_s))

    def _due_sync(self, controller: DeploymentController, due: tuple[str, float]) -> None:
        self._due.discard(due)
        self.sync(controller)

    def _available(self, rs: DeploymentReplicaSet, min_ready_s: float) -> int:
        now = self.clock.now
        count = 0
        for key in rs.pods:
            rec = self.records.get(key)
            if rec is not None and rec.ready and rec.ready_s is not None and rec.ready_s + min_ready_s <= now:
                count += 1
        return count

    def sync(self, controller: DeploymentController) -> None:
        """One sync of a Deployment with ReplicaSets: scale them, delete and create pods, note completion."""
        min_ready = float(controller.deployment.min_ready_s)
        available = {rs.name: self._available(rs, min_ready) for rs in controller.sets}
        scaled = controller.sync(available)
        for pods, count in controller.surplus():
            self.delete_surplus(controller, pods, count)
        self.reconcile(controller)
        if scaled:
            self.changed(controller)
            return
        if controller.rolling and controller.complete(sum(available.values())):
            controller.rolling = False
            self.records_by_deployment[controller.key][-1].completed_s = self.clock.now

    def as_list(self) -> list[dict[str, Any]]:
        """Every rollout, by Deployment then start."""
        return [asdict(r) for _, records in sorted(self.records_by_deployment.items()) for r in records]
