"""cluster-autoscaler's control loop in the simulator: scan, scale up, scale down, warm nodes.

Every ``scanInterval`` (10 s) while there is something to look at: pods the scheduler
marked unschedulable are estimated against each pool's template (``autoscaling.scale_up``,
upcoming nodes first; the template carries the ResourceSlices of a pool that publishes them) and
an expander picks a pool; when none grows, each pod left gets a ``no-scale-up`` event with
cluster-autoscaler's ``NotTriggerScaleUp`` message (again only when that message changes);
nodes below the utilisation threshold whose pods fit elsewhere become unneeded and are removed
after ``scaleDownUnneededTime``, not within ``scaleDownDelayAfterAdd`` of a scale-up, empty ones
together and others one at a time (drained: pods evicted with their grace period, then the node
deleted); pools with ``warm`` keep that many empty GPU-ready nodes beyond what pods need.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from gpufleet.autoscaling.cluster_autoscaler import (
    Candidate,
    ScaleDownRequest,
    ScaleUpRequest,
    WarmGroup,
    keep_warm,
    scale_down,
    scale_up,
)
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.lifecycle.node_start import plan_node_start
from gpufleet.model.mig_configs import is_device_plugin_resource
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import Resources, add
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.profile import build_profile
from gpufleet.sim.events import Priority
from gpufleet.sim.node_pools import Launch, PoolRuntime
from gpufleet.sim.records import NodeRecord
from gpufleet.workloads.daemonset import daemon_should_run

if TYPE_CHECKING:
    from gpufleet.sim.simulation import Simulation

#: A cloud's spot interruption notice (AWS, Azure: two minutes).
SPOT_NOTICE_S = 120.0


@dataclass
class ScaleEvent:
    t_s: float
    kind: str  # scale-up | scale-up-failed | scale-down | provision-timeout | spot-reclaim | no-scale-up
    pool: str | None
    nodes: tuple[str, ...]
    pods: tuple[str, ...] = ()
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "t_s": self.t_s,
            "kind": self.kind,
            "pool": self.pool,
            "nodes": list(self.nodes),
            "pods": list(self.pods),
            "reason": self.reason,
        }


class ClusterAutoscalerLoop:
    def __init__(self, sim: Simulation):
        self.sim = sim
        self.settings = sim.settings.autoscaler
        self.enabled = any(rt.pool.autoscaled or rt.pool.warm for rt in sim.pools.values())
        self.keeps_warm = any(rt.pool.warm for rt in sim.pools.values())
        self.profile = build_profile(ProfileConfig())
        self.rng = np.random.default_rng([sim.seed, 2])
        self.armed_at: float | None = None
        self.unneeded_since: dict[str, float] = {}
        self.deleting: set[str] = set()
        self.last_scale_up_s = -math.inf
        self.events: list[ScaleEvent] = []
        self.not_triggered: dict[str, str] = {}  # pod -> its last NotTriggerScaleUp message
        self._assessed: tuple[object, ...] | None = None

    # -- the loop ----------------------------------------------------------------------------
    def arm(self, at: float | None = None) -> None:
        if not self.enabled:
            return
        interval = self.settings.scan_interval_s
        t = math.ceil((at if at is not None else self.sim.loop.now) / interval - 1e-9) * interval
        if self.armed_at is None or t < self.armed_at:
            self.armed_at = t
            self.sim.loop.at(t, Priority.CONTROLLER, lambda: self._scan(t), background=True)

    def _scan(self, t: float) -> None:
        if self.armed_at != t:
            return
        self.armed_at = None
        acted = self._scale_up() | self._scale_down() | self._keep_warm()
        busy = (
            acted
            or self.unneeded_since
            or self.deleting
            or any(rt.launching for rt in self.sim.pools.values())
        )
        if busy:
            self.arm(t + self.settings.scan_interval_s)
        elif self._pending():
            backoffs = [rt.backoff_until for rt in self.sim.pools.values() if rt.backed_off(t)]
            if backoffs:
                self.arm(min(backoffs))

    # -- scale-up ----------------------------------------------------------------------------
    def _pending(self) -> list[Pod]:
        sim = self.sim
        waiting = {k for s in sim.schedulers for k in s.waiting}
        return [
            r.pod
            for r in (sim.records[k] for k in sorted(sim.pending_keys))
            if r.phase == "Pending"
            and r.deleted_s is None
            and r.message is not None
            and r.pod.key not in waiting
            and r.pod.node_name is None
            and any(s.serves(r.pod.scheduler_name) for s in sim.schedulers)
        ]

    def _daemon_requests(self, template: Node) -> Resources:
        total: Resources = {}
        for ds in self.sim.daemonsets:
            if daemon_should_run(ds.daemonset.template, template):
                total = add(total, ds.daemonset.template.requests)
        return total

    def _room(self) -> int:
        limit = self.settings.max_nodes_total
        if limit is None:
            return 1 << 30
        alive = sum(len(rt.nodes) for rt in self.sim.pools.values()) + sum(
            1
            for n in self.sim.state.node_names()
            if self.sim.state.nodes[self.sim.state.index[n]].pool is None
        )
        return max(limit - alive, 0)

    def _option(self, rt: PoolRuntime, room: int) -> PoolOption:
        max_nodes = rt.pool.max if rt.pool.max is not None else len(rt.nodes)
        return PoolOption(
            rt.name,
            rt.pool.template,
            self._daemon_requests(rt.pool.template),
            min(max_nodes - len(rt.nodes), room),
            rt.upcoming(),
            rt.pool.price_per_hour,
            max(
                (p for p, expr in self.sim.scenario.expander_priorities if re.search(expr, rt.name)),
                default=0,
            ),
            tuple(rt.slices_for(rt.pool.template.name)),
        )

    def _scale_up(self) -> bool:
        sim, now, room = self.sim, self.sim.loop.now, self._room()
        state = sim.state
        options = [self._option(rt, room) for rt in sim.pools.values() if rt.pool.autoscaled]
        reply = scale_up(
            ScaleUpRequest(
                now,
                state,
                self.profile,
                self._pending(),
                options,
                frozenset(o.name for o in options if sim.pools[o.name].backed_off(now)),
                self.settings.expander,
                self.rng,
                frozenset(state.index[n] for n in self.deleting if n in state.index),
                room == 0 and self.settings.max_nodes_total is not None,
                self.not_triggered,
            )
        )
        for key, reason in reply.not_triggered:
            self.not_triggered[key] = reason
            message = f"pod didn't trigger scale-up: {reason}"
            self.events.append(ScaleEvent(now, "no-scale-up", None, (), (key,), message))
        up = reply.scale_up
        if up is None:
            return False
        rt = sim.pools[up.group]
        launched = [name for _ in range(up.nodes) if (name := self.launch(rt, up.pods)) is not None]
        if launched:
            self.last_scale_up_s = now
            self.events.append(ScaleEvent(now, "scale-up", rt.name, tuple(launched), up.pods))
        return True

    # -- nodes -------------------------------------------------------------------------------
    def launch(self, rt: PoolRuntime, for_pods: tuple[str, ...] = (), warm: bool = False) -> str | None:
        sim, now = self.sim, self.sim.loop.now
        if not rt.in_stock(now):
            rt.back_off(now, self.settings)
            self.events.append(ScaleEvent(now, "scale-up-failed", rt.name, (), for_pods, "stock-out"))
            return None
        node = rt.stamp()
        plan = plan_node_start(rt.stages, rt.rng)
        launch = Launch(node, now, plan, for_pods=for_pods, warm=warm)
        rt.nodes.add(node.name)
        rt.launching[node.name] = launch
        sim.nodes[node.name] = NodeRecord(node.name, rt.name, now, None, None)
        sim.node_billing_changed()
        for key in for_pods:
            sim.pod_waits_for_node(key, provisioning=True)
        sim.loop.at(now + plan.ready_s, Priority.ARRIVAL, lambda: self._join(rt, launch))
        sim.loop.at(now + plan.gpu_ready_s, Priority.ARRIVAL, lambda: self._gpus_ready(rt, launch))
        timeout = now + self.settings.max_node_provision_time_s
        if plan.gpu_ready_s > self.settings.max_node_provision_time_s:
            sim.loop.at(timeout, Priority.ARRIVAL, lambda: self._provision_timeout(rt, launch))
        return node.name

    def _join(self, rt: PoolRuntime, launch: Launch) -> None:
        if launch.node.name not in rt.launching or launch.joined:
            return
        launch.joined = True
        node = launch.node
        staged = launch.plan.gpu_ready_s > launch.plan.ready_s and rt.has_gpus()
        allocatable = (
            {r: 0 if is_device_plugin_resource(r) else n for r, n in node.allocatable.items()}
            if staged
            else dict(node.allocatable)
        )
        self.sim.add_node(
            Node(
                node.name,
                dict(node.labels),
                node.taints,
                node.unschedulable,
                dict(node.capacity),
                allocatable,
                node.pool,
            )
        )

    def _gpus_ready(self, rt: PoolRuntime, launch: Launch) -> None:
        name = launch.node.name
        if rt.launching.get(name) is not launch:
            return
        self._join(rt, launch)
        del rt.launching[name]
        if launch.warm:
            rt.warm.add(name)
        self.sim.node_gpus_ready(launch.node)
        self.expect_reclaim(rt, name)
        stages = {span.stage: round(span.end_s - span.start_s, 6) for span in launch.plan.breakdown()}
        for key in launch.for_pods:
            rec = self.sim.records.get(key)
            if rec is not None and rec.bound_s is None and not rec.node_stages:
                rec.node_stages = dict(stages)
            self.sim.pod_waits_for_node(key, provisioning=self._still_provisioning(key))

    def _still_provisioning(self, key: str) -> bool:
        return any(
            key in launch.for_pods for rt in self.sim.pools.values() for launch in rt.launching.values()
        )

    def _provision_timeout(self, rt: PoolRuntime, launch: Launch) -> None:
        name = launch.node.name
        if rt.launching.get(name) is not launch:
            return
        now = self.sim.loop.now
        del rt.launching[name]
        rt.back_off(now, self.settings)
        self.events.append(
            ScaleEvent(
                now,
                "provision-timeout",
                rt.name,
                (name,),
                launch.for_pods,
                "GPUs not registered within maxNodeProvisionTime",
            )
        )
        self.sim.delete_node(name)
        for key in launch.for_pods:
            self.sim.pod_waits_for_node(key, provisioning=self._still_provisioning(key))

    # -- scale-down --------------------------------------------------------------------------
    def _candidates(self) -> list[Candidate]:
        out = []
        for rt in self.sim.pools.values():
            if not rt.pool.autoscaled:
                continue
            for name in sorted(rt.nodes):
                if name in rt.launching or name in rt.warm or name in self.deleting:
                    continue
                if name in self.sim.state.index:
                    out.append(Candidate(name, rt.name, len(rt.nodes), rt.pool.min))
        return out

    def _scale_down(self) -> bool:
        sim, now, st = self.sim, self.sim.loop.now, self.sim.state
        budgets = sim.scenario.budgets
        # verdicts depend only on the cluster's state: unchanged since the last scan, they stand
        key = (
            st.change_pos,
            st.static_version,
            tuple(sorted(self.deleting)),
            sim.pending,
            sim.running,
            sim.working_gpus,
            len(sim.records),
        )
        assessing = key != self._assessed
        self._assessed = key
        reply = scale_down(
            ScaleDownRequest(
                now,
                st,
                self.profile,
                self._candidates(),
                self.settings.scale_down_utilization_threshold,
                self.settings.scale_down_unneeded_time_s,
                self.settings.scale_down_delay_after_add_s,
                self.last_scale_up_s,
                self.unneeded_since,
                frozenset(self.deleting),
                budgets,
                self._disruptions_allowed() if budgets and assessing else {},
                frozenset(sim.daemon_pod_keys()),
                sim.computes_on_gpus if self.settings.gpu_aware_scale_down else None,
                assess=assessing,
            )
        )
        self.unneeded_since = reply.unneeded_since
        for c in reply.remove:
            self.deleting.add(c.node)
            grace = sim.drain(c.node)
            sim.loop.at(now + grace, Priority.COMPLETION, partial(self._deleted, c.node))
            self.events.append(ScaleEvent(now, "scale-down", c.group, (c.node,)))
        return reply.acted

    # -- spot capacity -----------------------------------------------------------------------
    def expect_reclaim(self, rt: PoolRuntime, name: str) -> None:
        """A spot node is reclaimed after an exponential time (rate ``spot.reclaimPerHour``)."""
        rate = rt.pool.spot_reclaim_per_hour
        if rate:
            at = self.sim.loop.now + rt.rng.exponential(3600 / rate)
            self.sim.loop.at(at, Priority.COMPLETION, partial(self._reclaim, rt, name), background=True)

    def _reclaim(self, rt: PoolRuntime, name: str) -> None:
        """Two minutes' notice: the node is drained, then the instance goes, whatever still runs."""
        sim = self.sim
        if name not in sim.state.index or name in self.deleting:
            return
        self.deleting.add(name)
        self.events.append(
            ScaleEvent(sim.loop.now, "spot-reclaim", rt.name, (name,), reason="spot interruption")
        )
        sim.drain(name)
        sim.loop.at(sim.loop.now + SPOT_NOTICE_S, Priority.COMPLETION, partial(self._deleted, name))

    def _disruptions_allowed(self) -> dict[str, int]:
        """Each PodDisruptionBudget's ``disruptionsAllowed``, by ``namespace/name``."""
        return {f"{b.namespace}/{b.name}": n for b, n in self.sim.pod_disruption_budgets()}

    def _deleted(self, name: str) -> None:
        self.deleting.discard(name)
        self.sim.delete_node(name)

    # -- warm nodes --------------------------------------------------------------------------
    def _keep_warm(self) -> bool:
        sim = self.sim
        warm_pools = [rt for rt in sim.pools.values() if rt.pool.warm]
        if not warm_pools:
            return False
        groups = [
            WarmGroup(
                rt.name,
                rt.pool.warm,
                rt.pool.max if rt.pool.max is not None else len(rt.nodes) + rt.pool.warm,
                len(rt.nodes),
                tuple(sorted(rt.warm)),
                sum(1 for launch in rt.launching.values() if launch.warm),
            )
            for rt in warm_pools
        ]
        reply = keep_warm(groups, sim.state)
        for rt in warm_pools:
            rt.warm -= set(reply.used)
        acted = False
        for group, count in reply.launch:
            rt = sim.pools[group]
            for _ in range(count):
                if self.launch(rt, warm=True) is None:
                    break
                acted = True
        return acted
