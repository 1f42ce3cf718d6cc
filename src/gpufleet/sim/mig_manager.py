"""MIG Manager in the simulator: a pool's ``migConfigChanges`` applied to its nodes over time. It is
part of the simulated world (NVIDIA's operator on each node; on a live cluster the real one runs).

The decisions are ``gpufleet.lifecycle.mig_reconfigure`` (pure); this module runs them on the clock.
At a change's ``at`` the pool's template takes the new configuration (nodes launched later, and nodes
still starting, come up with it) and every node of the pool that has joined is reconfigured on its own:

* ``drain`` (default): the node is cordoned and the pods on its GPUs are evicted (SIGTERM, then their
  grace period); the label is set once they are gone, checked when the last grace period ends and then
  every second, as ``kubectl drain`` waits;
* the label set, MIG Manager reports ``pending`` and the device plugin stops: the node advertises none of
  its ``nvidia.com/`` resources;
* after the change's ``duration`` the device plugin registers the new layout (``nvidia.com/mig-<profile>``
  in ``mixed``, ``nvidia.com/gpu`` in ``single``), GPU Feature Discovery relabels the node, the state is
  ``success`` and a cordon the drain set is lifted. A pod that still held the GPUs when the label was set
  (``drain: false``) makes it ``failed``: the device plugin comes back with the old layout.

A change that finds the node's layout already in place is ``success`` at once. A change asked while the
node is still reconfiguring waits for it (MIG Manager handles one label value at a time, then the latest).
Each node's reconfiguration is recorded (``summary.json`` ``mig_reconfigurations``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from gpufleet.control.clock import Clock, Priority
from gpufleet.lifecycle.mig_reconfigure import (
    DRAIN_POLL_S,
    MigChangePlan,
    gpu_pods,
    holds_gpus,
    plan_change,
    with_device_resources,
)
from gpufleet.model.mig_configs import (
    MIG_CONFIG_LABEL,
    MIG_CONFIG_STATE_LABEL,
    Layout,
    MigConfigChange,
    is_device_plugin_resource,
)
from gpufleet.scheduling.events import ClusterChange, node_before, node_updated
from gpufleet.sim.cluster import InMemoryCluster
from gpufleet.sim.node_pools import PoolRuntime
from gpufleet.sim.records import PodRecord

if TYPE_CHECKING:
    from gpufleet.cluster.state import Assignment
    from gpufleet.model.node import Node
    from gpufleet.model.pod import Pod


class MigHost(Protocol):
    """What the MIG Manager does to the rest of the simulated cluster."""

    @property
    def records(self) -> dict[str, PodRecord]: ...
    def evict(self, key: str, reason: str) -> None: ...
    def cluster_changed(self, changes: Sequence[ClusterChange], material: bool = True) -> None: ...
    def node_billing_changed(self) -> None: ...
    def devices_changed(self, name: str) -> None:
        """The node's device-plugin resources changed (a GPU fault's Unhealthy devices must stay so)."""
        ...


@dataclass
class MigReconfiguration:
    """One node's reconfiguration, as ``summary.json`` reports it."""

    node: str
    pool: str
    config: str
    from_config: str | None
    requested_s: float  # the node's change begins: cordon and drain (after any change it was still doing)
    evicted: tuple[str, ...] = ()
    started_s: float | None = None  # the label set: ``pending``, no GPU resources advertised
    finished_s: float | None = None  # ``success``: the new resources advertised; or ``failed``
    state: str = "pending"
    blocked_by: tuple[str, ...] = ()  # pods still on the GPUs when MIG Manager applied (``failed``)
    resources: dict[str, int] = field(default_factory=dict)  # device-plugin resources afterwards

    def as_dict(self) -> dict[str, Any]:
        lists = {"evicted": list(self.evicted), "blocked_by": list(self.blocked_by)}
        return {**asdict(self), **lists, "resources": dict(sorted(self.resources.items()))}


@dataclass
class _Running:
    rt: PoolRuntime
    change: MigConfigChange
    plan: MigChangePlan
    record: MigReconfiguration
    cordoned: bool


class MigManagers:
    """The MIG Manager of every node of pools with ``migConfigChanges``."""

    def __init__(
        self, clock: Clock, pools: dict[str, PoolRuntime], cluster: InMemoryCluster, host: MigHost
    ) -> None:
        self.clock = clock
        self.pools = pools
        self.cluster = cluster
        self.host = host
        self.records: list[MigReconfiguration] = []
        self.layouts: dict[str, Layout] = {}  # node -> its layout, once a change touched its pool
        self.configs: dict[str, str | None] = {}  # node -> its ``nvidia.com/mig.config``
        self.running: dict[str, _Running] = {}
        self.queued: dict[str, tuple[PoolRuntime, MigConfigChange]] = {}

    def start(self) -> None:
        for name in sorted(self.pools):
            rt = self.pools[name]
            for change in rt.pool.mig.changes if rt.pool.mig is not None else ():
                self.clock.at(change.at_s, Priority.ARRIVAL, partial(self._requested, rt, change))

    # -- the administrator relabels the pool's nodes ------------------------------------------
    def _requested(self, rt: PoolRuntime, change: MigConfigChange) -> None:
        mig = rt.pool.mig
        assert mig is not None
        for name in sorted(rt.nodes):
            self.layouts.setdefault(name, mig.layout)
            self.configs.setdefault(name, mig.config)
        plan = plan_change(mig, mig.layout, mig.config, change, ())
        template = copy.copy(rt.pool.template)  # the scenario's own pool stays as it was written
        self._reconfigured(template, plan)
        rt.pool = replace(
            rt.pool, template=template, mig=replace(mig, layout=plan.layout, config=change.config)
        )
        self.host.node_billing_changed()
        state = self.cluster.state
        for name in sorted(rt.nodes):
            launch = rt.launching.get(name)
            if launch is None:
                if name in state.index:
                    self._request(rt, change, name)
                continue
            # still starting: MIG Manager applies the label before the device plugin first registers
            self._reconfigured(launch.node, plan)
            self.layouts[name], self.configs[name] = plan.layout, change.config
            if name in state.index:  # joined: its labels, and whatever the join already advertised
                joined = state.nodes[state.index[name]]
                advertised = any(is_device_plugin_resource(r) and n for r, n in joined.allocatable.items())
                state.set_labels(name, launch.node.labels)
                devices = plan.resources if advertised else {}
                state.set_allocatable(name, with_device_resources(joined.allocatable, devices))

    def _request(self, rt: PoolRuntime, change: MigConfigChange, name: str) -> None:
        if name in self.running:
            self.queued[name] = (rt, change)
            return
        mig = rt.pool.mig
        assert mig is not None
        state = self.cluster.state
        plan = plan_change(mig, self.layouts[name], self.configs[name], change, self._pods_on(name))
        now = self.clock.now
        record = MigReconfiguration(name, rt.name, change.config, self.configs[name], now, plan.evict)
        self.records.append(record)
        node = state.nodes[state.index[name]]
        if plan.already_applied:  # mig-parted asserts the layout: ``success`` without stopping anything
            self._relabel(node, plan)
            state.set_labels(name, node.labels)
            self.configs[name] = change.config
            record.started_s = record.finished_s = now
            record.state, record.resources = "success", dict(plan.resources)
            return
        cordon = change.drain and not node.unschedulable
        self.running[name] = _Running(rt, change, plan, record, cordon)
        if cordon:
            state.cordon(name)
        grace = 0.0
        for key in plan.evict:
            rec = self.host.records[key]
            rec.message = f"evicted to reconfigure MIG on node {name} to {change.config}"
            grace = max(grace, rec.pod.termination_grace_s)
            self.host.evict(key, "Evicted")
        if plan.evict:
            self.clock.at(now + grace, Priority.CONTROLLER, partial(self._label_when_drained, name))
        else:
            self._label(name)

    def _assignments(self, name: str) -> list[Assignment]:
        state = self.cluster.state
        return list(state.pods_on[state.index[name]].values())

    def _pods_on(self, name: str) -> list[Pod]:
        return [a.pod for a in self._assignments(name)]

    def _label_when_drained(self, name: str) -> None:
        """Set the label once the evicted pods are gone; a GPU pod that was never evicted (admitted by
        ``nodeName`` after the cordon) does not hold it up: MIG Manager will find it."""
        if name not in self.cluster.state.index:
            self._gone(name)
            return
        if any(a.terminating and holds_gpus(a.pod) for a in self._assignments(name)):
            self.clock.at(
                self.clock.now + DRAIN_POLL_S, Priority.CONTROLLER, partial(self._label_when_drained, name)
            )
            return
        self._label(name)

    # -- MIG Manager -------------------------------------------------------------------------
    def _label(self, name: str) -> None:
        """The label is set: ``pending``, the device plugin and its peers stop, MIG Manager applies."""
        run = self.running[name]
        state = self.cluster.state
        node = state.nodes[state.index[name]]
        now = self.clock.now
        run.record.started_s = now
        run.record.blocked_by = gpu_pods(self._pods_on(name))  # mig-parted: "In use by another client"
        old = node_before(node)
        labels = {**node.labels, MIG_CONFIG_LABEL: run.change.config, MIG_CONFIG_STATE_LABEL: "pending"}
        state.set_labels(name, labels)
        self.configs[name] = run.change.config
        state.set_allocatable(name, with_device_resources(node.allocatable, {}))
        self.host.devices_changed(name)
        self.host.cluster_changed(node_updated(old, node))
        done = now + run.change.duration_s
        self.clock.at(done, Priority.CONTROLLER, partial(self._finished, name))

    def _finished(self, name: str) -> None:
        """The device plugin registers again, GFD relabels the node, MIG Manager reports."""
        if name not in self.cluster.state.index:
            self._gone(name)
            return
        run = self.running.pop(name)
        state = self.cluster.state
        node = state.nodes[state.index[name]]
        record = run.record
        record.finished_s = self.clock.now
        before = node_before(node)
        mig = run.rt.pool.mig
        assert mig is not None
        if record.blocked_by:
            record.state = "failed"
            old = mig.resources(self.layouts[name])
            state.set_labels(name, {**node.labels, MIG_CONFIG_STATE_LABEL: "failed"})
            state.set_allocatable(name, with_device_resources(node.allocatable, old))
            record.resources = old
        else:
            record.state = "success"
            self._relabel(node, run.plan)
            state.set_labels(name, node.labels)
            state.set_allocatable(name, with_device_resources(node.allocatable, run.plan.resources))
            self.cluster.ledger.forget(name)  # described again from the new resources when next needed
            self.layouts[name] = run.plan.layout
            record.resources = dict(run.plan.resources)
        self.host.devices_changed(name)
        if run.cordoned:
            state.cordon(name, unschedulable=False)
        self.host.cluster_changed(node_updated(before, node))
        self._next(name)

    def _gone(self, name: str) -> None:
        """The node was deleted while it reconfigured: the record stays unfinished."""
        self.running.pop(name, None)
        self.queued.pop(name, None)

    def _next(self, name: str) -> None:
        queued = self.queued.pop(name, None)
        if queued is not None:
            rt, change = queued
            self._request(rt, change, name)

    @staticmethod
    def _relabel(node: Node, plan: MigChangePlan) -> None:
        """GPU Feature Discovery's labels for the new layout; MIG Manager's ``success``."""
        labels = {k: v for k, v in node.labels.items() if k not in plan.stale_labels}
        node.labels = {**labels, **plan.labels, MIG_CONFIG_STATE_LABEL: "success"}

    @classmethod
    def _reconfigured(cls, node: Node, plan: MigChangePlan) -> None:
        """A node that comes up with the new configuration: its labels and device-plugin resources."""
        cls._relabel(node, plan)
        node.capacity = with_device_resources(node.capacity, plan.resources)
        node.allocatable = with_device_resources(node.allocatable, plan.resources)
