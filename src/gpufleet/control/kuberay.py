"""KubeRay's loops: the RayJob controller's requeue (every 3 s, ``RayJobDefaultRequeueDuration``), and
in every Ray cluster Ray itself and its autoscaler (every 5 s, ``AUTOSCALER_UPDATE_INTERVAL_S``).

Ray is modelled as far as the autoscaler sees it. A cluster's demand (``gpufleet.io/ray-demand``,
``model.ray``) counts from the time its head pod first works (Ray is up): each entry's bundles are
submitted at ``at``; at each tick Ray places the submitted bundles first-fit on the Ray nodes that
work (the head and the workers past their start chain), in name order, and each runs ``duration``
from there; a bundle whose node went is submitted again. The bundles Ray could not place are the
pending demand. A worker with no bundle is idle from the tick it was found so.

The autoscaler (``autoscaling.ray_autoscaler.schedule``) runs once the head works, as v2's reconciler
waits for the head; its launches raise a group's ``replicas`` and its terminations lower them and
delete those workers (``workersToDelete``), and the operator creates the pods at once
(``workloads.raycluster.ClusterPods``). The decision code is pure; this module only feeds it and
applies its reply through a ``RayPort``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from gpufleet.autoscaling.ray_autoscaler import (
    UPSCALING_SPEED,
    NodeType,
    RayNode,
    SchedulingRequest,
    fits,
    schedule,
    take,
)
from gpufleet.control.clock import Clock, Priority
from gpufleet.control.port import ClusterReads
from gpufleet.model.ray import RayDemand
from gpufleet.workloads.kind import WorkloadController
from gpufleet.workloads.raycluster import HEAD_GROUP, ClusterPods, RayClusterController
from gpufleet.workloads.rayjob import RayJobController

RAYJOB_REQUEUE_S = 3.0  # RayJobDefaultRequeueDuration
AUTOSCALER_INTERVAL_S = 5.0  # AUTOSCALER_UPDATE_INTERVAL_S


class RayPort(ClusterReads, Protocol):
    @property
    def controllers(self) -> Mapping[str, WorkloadController]:
        """Every workload's controller by ``<kind>/<ns>/<name>``."""
        ...

    def reconcile(self, controller: WorkloadController) -> None:
        """Create the pods the controller wants now."""
        ...

    def delete_pod(self, key: str, reason: str) -> None: ...


@dataclass
class Bundle:
    resources: dict[str, float]
    duration_s: float | None
    node: str | None = None  # the pod key it runs on
    ends_s: float | None = None


@dataclass
class RayRuntime:
    """Ray inside one cluster: its bundles, and since when each worker is idle."""

    demand: tuple[RayDemand, ...]
    up_s: float | None = None  # when the head first worked
    submitted: int = 0  # demand entries submitted so far
    bundles: list[Bundle] = field(default_factory=list)
    idle_since: dict[str, float] = field(default_factory=dict)

    def busy(self) -> bool:
        """Whether it has demand to come or bundles not done."""
        return self.submitted < len(self.demand) or bool(self.bundles)


class KubeRayLoops:
    def __init__(self, port: RayPort, clock: Clock):
        self.port = port
        self.clock = clock
        self.runtimes: dict[str, RayRuntime] = {}  # by "<owner kind>/<ns>/<cluster>"
        self.started = False

    def start(self) -> None:
        self.clock.at(0.0, Priority.CONTROLLER, self._operator_tick, background=True)
        self.clock.at(0.0, Priority.CONTROLLER, self._ray_tick, background=True)

    def _clusters(self) -> list[tuple[ClusterPods, tuple[RayDemand, ...]]]:
        out = []
        for key in sorted(self.port.controllers):
            c = self.port.controllers[key]
            if isinstance(c, RayClusterController):
                out.append((c.pods, c.demand))
            elif isinstance(c, RayJobController) and c.cluster is not None:
                out.append((c.cluster, c.job.demand))
        return out

    def active(self) -> bool:
        """Whether a loop has something left to do (else its ticks alone keep nothing alive): a RayJob
        not finished or whose cluster is still to be deleted, demand to come or to finish, or working
        workers above their group's minimum that may go idle."""
        for c in self.port.controllers.values():
            if isinstance(c, RayJobController):
                shutting = c.job.shutdown_after_finishes and c.cluster is not None and not c.cluster_deleted
                if c.status in ("Initializing", "Running") or (c.done and shutting):
                    return True
        for pods, demand in self._clusters():
            if pods.deleted:
                continue
            runtime = self.runtimes.get(self._key(pods))
            if runtime.busy() if runtime is not None else bool(demand):
                return True
            if pods.spec.autoscaling and self._above_min(pods):
                return True
        return False

    def _above_min(self, pods: ClusterPods) -> bool:
        working = self._working(pods)
        return any(
            pods.desired(g) > g.min_replicas * g.num_of_hosts
            and any(pods.active[k] == g.name for k in working)
            for g in pods.spec.groups
        )

    @staticmethod
    def _key(pods: ClusterPods) -> str:
        return f"{pods.owner.kind}/{pods.namespace}/{pods.name}"

    # -- the RayJob controller --------------------------------------------------------------
    def _operator_tick(self) -> None:
        now = self.clock.now
        records = self.port.pods
        for key in sorted(self.port.controllers):
            c = self.port.controllers[key]
            if not isinstance(c, RayJobController):
                continue
            selected = None
            if c.job.selector_cluster is not None:
                target = self.port.controllers.get(f"RayCluster/{c.job.namespace}/{c.job.selector_cluster}")
                selected = target.pods if isinstance(target, RayClusterController) else None
            for pod_key in c.sync(now, records, selected):
                self.port.delete_pod(pod_key, "Deleted")
            self.port.reconcile(c)
        self.clock.at(now + RAYJOB_REQUEUE_S, Priority.CONTROLLER, self._operator_tick, background=True)

    # -- Ray and its autoscaler -------------------------------------------------------------
    def _ray_tick(self) -> None:
        now = self.clock.now
        for pods, demand in self._clusters():
            if pods.deleted:
                continue
            runtime = self.runtimes.setdefault(self._key(pods), RayRuntime(demand))
            working = self._working(pods)
            head = next((k for k, g in pods.active.items() if g == HEAD_GROUP), None)
            if head is None or head not in working:
                continue
            if runtime.up_s is None:
                runtime.up_s = now
            free = self._place(runtime, pods, working, now)
            if pods.spec.autoscaling:
                self._autoscale(runtime, pods, free, now)
        self.clock.at(now + AUTOSCALER_INTERVAL_S, Priority.CONTROLLER, self._ray_tick, background=True)

    def _working(self, pods: ClusterPods) -> set[str]:
        records = self.port.pods
        return {
            k
            for k in pods.active
            if k in records and records[k].working_s is not None and records[k].deleted_s is None
        }

    def _resources(self, pods: ClusterPods, key: str) -> dict[str, float]:
        group = pods.active[key]
        if group == HEAD_GROUP:
            return dict(pods.spec.head_resources)
        return dict(next(g.resources for g in pods.spec.groups if g.name == group))

    def _place(
        self, runtime: RayRuntime, pods: ClusterPods, working: set[str], now: float
    ) -> dict[str, dict[str, float]]:
        """Ray's own scheduling at this tick; the free resources of every Ray pod afterwards."""
        up = runtime.up_s if runtime.up_s is not None else now
        while runtime.submitted < len(runtime.demand) and up + runtime.demand[runtime.submitted].at_s <= now:
            entry = runtime.demand[runtime.submitted]
            runtime.bundles += [Bundle(dict(entry.resources), entry.duration_s) for _ in range(entry.bundles)]
            runtime.submitted += 1
        runtime.bundles = [b for b in runtime.bundles if b.ends_s is None or b.ends_s > now]
        for b in runtime.bundles:
            if b.node is not None and b.node not in working:
                b.node, b.ends_s = None, None  # its node went: Ray runs it again elsewhere
        free = {k: self._resources(pods, k) for k in sorted(pods.active)}
        for b in runtime.bundles:
            if b.node is not None:
                take(b.resources, free[b.node])
        for b in runtime.bundles:
            if b.node is None:
                node = next((k for k in sorted(working) if fits(b.resources, free[k])), None)
                if node is not None:
                    take(b.resources, free[node])
                    b.node = node
                    b.ends_s = None if b.duration_s is None else now + b.duration_s
        used = {b.node for b in runtime.bundles if b.node is not None}
        for k in working:
            if k in used:
                runtime.idle_since.pop(k, None)
            else:
                runtime.idle_since.setdefault(k, now)
        return free

    def _autoscale(
        self, runtime: RayRuntime, pods: ClusterPods, free: dict[str, dict[str, float]], now: float
    ) -> None:
        spec = pods.spec
        types = [
            NodeType(
                g.name,
                g.resources,
                g.min_replicas * g.num_of_hosts,
                g.max_replicas * g.num_of_hosts,
                g.num_of_hosts,
                g.idle_timeout_s,
            )
            for g in spec.groups
        ]
        nodes = [
            RayNode(
                k, pods.active[k], free[k], now - runtime.idle_since[k] if k in runtime.idle_since else 0.0
            )
            for k in sorted(pods.active)
        ]
        pending = [b.resources for b in runtime.bundles if b.node is None]
        request = SchedulingRequest(
            types, nodes, pending, spec.idle_timeout_s, UPSCALING_SPEED[spec.upscaling_mode]
        )
        reply = schedule(request)
        by_group: dict[str, list[str]] = {}
        for key in reply.to_terminate:
            by_group.setdefault(pods.active[key], []).append(key)
        for group, keys in by_group.items():
            pods.scale(group, -len(keys), keys)
            for key in keys:
                runtime.idle_since.pop(key, None)
                self.port.delete_pod(key, "ScaledDown")
        for group, count in reply.to_launch.items():
            pods.scale(group, count)
        if reply.to_launch or reply.to_terminate:
            self._reconcile_owner(pods)

    def _reconcile_owner(self, pods: ClusterPods) -> None:
        for c in self.port.controllers.values():
            if (isinstance(c, RayClusterController) and c.pods is pods) or (
                isinstance(c, RayJobController) and c.cluster is pods
            ):
                self.port.reconcile(c)
