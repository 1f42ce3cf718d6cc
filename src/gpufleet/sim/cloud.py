"""The simulated cloud behind the node pools: instances launched through their start chain, stock,
spot interruptions, and what is billed.

``launch`` is what cluster-autoscaler's ``IncreaseSize`` asks of a cloud: the instance is refused at
once in a stock-out (``PoolRuntime.in_stock``), or it starts (``gpufleet.lifecycle.node_start``): the
node joins the cluster when ``join`` ends, with no device-plugin resource allocatable, and its GPUs
become allocatable when ``devicePlugin`` ends. A spot node is reclaimed after an exponential time
(rate ``spot.reclaimPerHour``) with two minutes' notice: it is drained, then the instance goes with
whatever still runs there (what a node termination handler does on the cloud's notice).
"""

from __future__ import annotations

from functools import partial
from typing import Protocol

from gpufleet.control.clock import Clock, Priority
from gpufleet.control.cluster_autoscaler_loop import ScaleEvent
from gpufleet.gpus.devices import NodeDevices
from gpufleet.lifecycle.node_start import plan_node_start
from gpufleet.model.dra import ResourceSlice
from gpufleet.model.mig_configs import is_device_plugin_resource
from gpufleet.model.node import Node
from gpufleet.sim.cluster import InMemoryCluster
from gpufleet.sim.node_pools import Launch, PoolRuntime

#: A cloud's spot interruption notice (AWS, Azure: two minutes).
SPOT_NOTICE_S = 120.0


class CloudHost(Protocol):
    """What the cloud's instances do to the cluster they join (the simulator)."""

    def node_launched(self, name: str, pool: str) -> None: ...
    def add_node(self, node: Node) -> None: ...
    def node_gpus_ready(self, node: Node) -> None: ...
    def pod_waits_for_node(
        self, key: str, provisioning: bool, stages: dict[str, float] | None = None
    ) -> None: ...
    def reclaimable(self, name: str) -> bool:
        """The node is in the cluster and nobody is deleting it yet."""
        ...

    def drain(self, name: str) -> float: ...
    def delete_node(self, name: str) -> None: ...


class SimulatedCloud:
    def __init__(
        self, pools: dict[str, PoolRuntime], clock: Clock, host: CloudHost, events: list[ScaleEvent]
    ) -> None:
        self.pools = pools
        self.clock = clock
        self.host = host
        self.events = events  # the autoscaler's event log: a spot interruption is recorded there
        self.going_away: set[str] = set()  # spot nodes given notice, until they are gone
        self._pool_gpus: dict[str, int] = {}

    def slices_of(self, node: Node) -> list[ResourceSlice]:
        """The ResourceSlices a node of a pool with ``publishResourceSlices`` publishes."""
        pool = self.pools.get(node.pool or "")
        return pool.slices_for(node.name) if pool is not None else []

    # -- instances -------------------------------------------------------------------------
    def launch(self, group: str, for_pods: tuple[str, ...] = (), warm: bool = False) -> str | None:
        """Start one node of the pool; its name, or None in a stock-out."""
        rt, now = self.pools[group], self.clock.now
        if not rt.in_stock(now):
            return None
        node = rt.stamp()
        plan = plan_node_start(rt.stages, rt.rng)
        launch = Launch(node, now, plan, for_pods=for_pods, warm=warm)
        rt.nodes.add(node.name)
        rt.launching[node.name] = launch
        self.host.node_launched(node.name, rt.name)
        for key in for_pods:
            self.host.pod_waits_for_node(key, provisioning=True)
        self.clock.at(now + plan.ready_s, Priority.ARRIVAL, lambda: self._join(rt, launch))
        self.clock.at(now + plan.gpu_ready_s, Priority.ARRIVAL, lambda: self._gpus_ready(rt, launch))
        return node.name

    def _join(self, rt: PoolRuntime, launch: Launch) -> None:
        if launch.node.name not in rt.launching or launch.joined:
            return
        launch.joined, launch.registered_s = True, self.clock.now
        node = launch.node
        staged = launch.plan.gpu_ready_s > launch.plan.ready_s and rt.has_gpus()
        allocatable = (
            {r: 0 if is_device_plugin_resource(r) else n for r, n in node.allocatable.items()}
            if staged
            else dict(node.allocatable)
        )
        self.host.add_node(
            Node(
                node.name,
                dict(node.labels),
                node.taints,
                node.unschedulable,
                dict(node.capacity),
                allocatable,
                node.pool,
                scale_down_disabled=node.scale_down_disabled,
                delay_deletion=node.delay_deletion,
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
        self.host.node_gpus_ready(launch.node)
        self.expect_reclaim(rt, name)
        stages = {span.stage: round(span.end_s - span.start_s, 6) for span in launch.plan.breakdown()}
        for key in launch.for_pods:
            self.host.pod_waits_for_node(key, self.provisioning_for(key), stages)

    def provisioning_for(self, key: str) -> bool:
        """Whether a node launched for the pod is still starting."""
        return any(key in launch.for_pods for rt in self.pools.values() for launch in rt.launching.values())

    def deleted(self, name: str, pool: str | None) -> None:
        """A node was deleted: it is no longer the pool's (a launch still in flight is cancelled)."""
        rt = self.pools.get(pool or "")
        if rt is not None:
            rt.nodes.discard(name)
            rt.warm.discard(name)
            rt.launching.pop(name, None)

    # -- spot interruptions ----------------------------------------------------------------
    def expect_reclaim(self, rt: PoolRuntime, name: str) -> None:
        """A spot node is reclaimed after an exponential time (rate ``spot.reclaimPerHour``)."""
        rate = rt.pool.spot_reclaim_per_hour
        if rate:
            at = self.clock.now + rt.rng.exponential(3600 / rate)
            self.clock.at(at, Priority.COMPLETION, partial(self._reclaim, rt, name), background=True)

    def _reclaim(self, rt: PoolRuntime, name: str) -> None:
        """Two minutes' notice: the node is drained, then the instance goes, whatever still runs."""
        if not self.host.reclaimable(name):
            return
        self.going_away.add(name)
        now = self.clock.now
        self.events.append(ScaleEvent(now, "spot-reclaim", rt.name, (name,), reason="spot interruption"))
        self.host.drain(name)
        self.clock.at(now + SPOT_NOTICE_S, Priority.COMPLETION, partial(self._reclaimed, name))

    def _reclaimed(self, name: str) -> None:
        self.going_away.discard(name)
        self.host.delete_node(name)

    # -- billing ---------------------------------------------------------------------------
    def billing(self, cluster: InMemoryCluster) -> tuple[float, int]:
        """The price per hour billed and the GPUs provisioned: every node launched and not deleted
        (a pool's by its template, from the launch; others by their devices)."""
        pools = self.pools
        price: float = 0
        gpus = 0
        alive = cluster.alive.values()
        for r in alive:
            if r.pool in pools:
                price += pools[r.pool].pool.price_per_hour
                gpus += self._template_gpus(r.pool)
            else:
                gpus += cluster.devices_of(r.name).gpus
        if cluster.state.dra is None and all(rt.pool.dra_gpus is None for rt in pools.values()):
            return price, gpus  # (no node publishes DRA GPUs)
        dra_gpus = cluster.dra_gpus_per_node()  # a pool's DRA GPUs count from the launch, as its template's
        for r in alive:
            pool = pools[r.pool].pool if r.pool in pools else None
            if pool is not None and pool.dra_gpus is not None:
                gpus += pool.dra_gpus[1]
            elif r.name in cluster.state.index:
                gpus += int(dra_gpus[cluster.state.index[r.name]])
        return price, gpus

    def _template_gpus(self, pool: str) -> int:
        """Physical GPUs of one node of the pool (not time-slicing replicas; MIG GPUs counted whole)."""
        gpus = self._pool_gpus.get(pool)
        if gpus is None:
            gpus = self._pool_gpus[pool] = NodeDevices.of(self.pools[pool].pool.template).gpus
        return gpus
