"""The simulator's in-memory cluster: the nodes (with what the simulator records of each) and the
pods bound to them as ``ClusterState`` columns, the device ledger and the DRA state, and what its
GPUs amount to.

It holds objects, as the API server does; it never runs a pod's lifecycle: losing a node returns
the pods that were on it, and the simulator ends them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from gpufleet.cluster.state import Assignment, ClusterState
from gpufleet.gpus.devices import NodeDevices
from gpufleet.gpus.dra.state import DraState
from gpufleet.gpus.ledger import DeviceLedger
from gpufleet.model.dra import DeviceID, DraObjects, ResourceSlice
from gpufleet.model.dra_slices import node_gpus
from gpufleet.model.node import Node
from gpufleet.model.node_readiness import READY_UNKNOWN, NotReadyNode
from gpufleet.sim.allocated_sum import AllocatedSum
from gpufleet.sim.records import NodeRecord


class InMemoryCluster:
    def __init__(
        self,
        nodes: list[Node],
        dra: DraObjects | None,
        publishes: Callable[[Node], list[ResourceSlice]],
    ):
        """``dra``: the scenario's DRA objects where DRA is in use; ``publishes``: the ResourceSlices a
        node publishes once its GPUs are ready (a pool with ``publishResourceSlices``)."""
        self.state = ClusterState(nodes)
        self.ledger = DeviceLedger(self.state)  # which device units each pod holds (gpus.ledger)
        self._publishes = publishes
        if dra is not None:
            self.state.dra = DraState(replace(dra, slices=list(dra.slices)))
        for node in nodes:
            self._publish_slices(node)
        self.nodes = {n.name: NodeRecord(n.name, n.pool, 0.0, 0.0, 0.0) for n in nodes}
        #: the records of the nodes launched and not deleted, in launch order (what is billed): the run's
        #: churn leaves ``nodes`` ever longer
        self.alive = dict(self.nodes)
        #: the nodes whose Ready condition is not True (their kubelet is down: a node rebooting), and since
        #: when; a node deleted leaves it
        self.not_ready: dict[str, float] = {}
        #: the nodes whose kubelet is down (a node rebooting, or lost): it starts no pod bound there
        self.kubelet_stopped: set[str] = set()
        #: when the nodes that were NotReady at time 0 registered (their ``creationTimestamp`` on the run's
        #: clock, before 0): cluster-autoscaler counts a NotReady node ``Unready`` from 15 minutes after
        self.registered_s: dict[str, float] = {}
        self._weights_key: tuple[int, int, int, int] | None = None
        self._weights: npt.NDArray[np.float64] = np.zeros((0, 0))
        self._physical: npt.NDArray[np.float64] = np.zeros(0)
        self._dra_gpus_key: tuple[list[ResourceSlice], int] | None = None
        self._dra_gpus_index: dict[DeviceID, str] = {}
        self._allocated_key: tuple[int, int, int] | None = None
        self._allocated = 0.0
        self._total_key: tuple[int, ...] | None = None
        self._total = 0.0
        self._held = AllocatedSum()  # GPU-equivalents allocated without shared GPUs or DRA

    # -- nodes -----------------------------------------------------------------------------
    def not_ready_from_start(self, nodes: Iterable[NotReadyNode]) -> None:
        """Nodes of the scenario (a cluster dump) NotReady when the run starts: NotReady since their
        Ready condition's ``lastTransitionTime``, registered at their ``creationTimestamp`` (both on the
        run's clock); nothing makes them Ready again. A node whose Ready condition is ``Unknown`` has a
        kubelet that posts nothing: its pods' containers do nothing the API server hears of
        (``kubelet_stopped``)."""
        for n in nodes:
            self.not_ready[n.name] = n.since_s
            self.registered_s[n.name] = n.registered_s
            if n.status == READY_UNKNOWN:
                self.kubelet_stopped.add(n.name)

    def launched(self, name: str, pool: str, now: float) -> None:
        """A node was asked of the cloud: recorded from now, not yet in the cluster."""
        self.nodes[name] = self.alive[name] = NodeRecord(name, pool, now, None, None)

    def add_node(self, node: Node, now: float) -> None:
        """The node joins (kubelet Ready)."""
        self.state.add_node(node)
        self.nodes[node.name].ready_s = now

    def node_gpus_ready(self, node: Node, now: float) -> None:
        """The device plugin registered: the node's GPUs become allocatable (and published for DRA)."""
        self.state.set_allocatable(node.name, dict(node.allocatable))
        self._publish_slices(node)
        self.ledger.registered(node)
        self.nodes[node.name].gpu_ready_s = now

    def _publish_slices(self, node: Node) -> None:
        if self.state.dra is not None:
            slices = self._publishes(node)
            if slices:
                self.state.dra.publish(slices)

    def delete_node(self, name: str, now: float) -> list[Assignment]:
        """The node goes away; returns the pods that were on it, in name order, their resources freed."""
        if self.state.dra is not None:
            self.state.dra.withdraw(name)
        lost: list[Assignment] = []
        if name in self.state.index:
            on = self.state.pods_on[self.state.index[name]]
            for key in sorted(a.pod.key for a in on.values()):
                a = self.state.unassign(key)
                assert a is not None
                lost.append(a)
            self.state.remove_node(name)
        self.nodes[name].deleted_s = now
        self.alive.pop(name, None)
        self.not_ready.pop(name, None)
        self.kubelet_stopped.discard(name)
        self.registered_s.pop(name, None)
        return lost

    # -- GPUs ------------------------------------------------------------------------------
    def devices_of(self, node: str) -> NodeDevices:
        return self.ledger.of(node)

    def _gpu_weights(self) -> npt.NDArray[np.float64]:
        """GPU-equivalents of one unit of each resource on each node (DESIGN: a MIG instance counts
        its compute share, a time-slicing replica 1/replicas), and each node's physical GPUs. Kept
        while the nodes, the resource columns and the devices are as they were; after nodes joined,
        left, or had their devices described anew (``DeviceLedger.described_since``), only their rows
        are worked out again (a removed node's row reads zero), all of them after a new column."""
        state = self.state
        key, kept = self._weights_read(), self._weights_key
        if kept == key:
            return self._weights
        if kept is None or kept[2] != key[2]:  # (a new resource column: every row)
            rows: Iterable[int] = range(state.size)
            weights = np.zeros(state.alloc.shape, dtype=np.float64)
            physical = np.zeros(state.size, dtype=np.float64)
        else:
            grown = state.size - kept[0]
            weights = np.concatenate([self._weights, np.zeros((grown, key[2]), dtype=np.float64)])
            physical = np.concatenate([self._physical, np.zeros(grown, dtype=np.float64)])
            described = self.ledger.described_since(kept[3])
            changed = {state.index[n] for n in described if n in state.index}
            rows = sorted(changed | set(range(kept[0], state.size)))
            weights[~state.active], physical[~state.active] = 0.0, 0.0
        active = state.active.tolist()
        for i in rows:
            if not active[i]:
                continue
            weights[i] = 0.0
            devices = self.devices_of(state.nodes[i].name)
            for resource, units in devices.units.items():
                col = state.res_index.get(resource)
                if col is not None and units:
                    weights[i, col] = units[0].share
            physical[i] = devices.gpus
        # read after the nodes' devices were described (the ledger's version moves as it does)
        self._weights, self._physical, self._weights_key = weights, physical, self._weights_read()
        return self._weights

    def _weights_read(self) -> tuple[int, int, int, int]:
        """What the weights are made of: the nodes that joined or left (``ClusterState.membership``; a node's
        taints, labels or cordon move nothing here), the resource columns and the devices."""
        state = self.state
        return (*state.membership, len(state.resources), self.ledger.version)

    def gpus_allocated_per_node(self) -> npt.NDArray[np.float64]:
        """GPU-equivalents requested on each node (fractional shares by their size), and the GPUs
        allocated to ResourceClaims there."""
        held: npt.NDArray[np.float64] = (self.state.requested * self._gpu_weights()).sum(axis=1)
        if self.state.shares is not None:
            held = held - self.state.shares.unused_per_node()
        if self.state.dra is not None:
            held = held + self.dra_gpus_per_node(allocated=True)
        return held

    def gpus_allocated(self) -> float:
        """Their sum, kept while the allocations (``change_pos``), the nodes (``static_version``) and
        their devices (``ledger.version``) are as they were (worked out each time with DRA, whose
        claims are allocated apart from the columns). Without shared GPUs or DRA, each node's part is
        kept too, and only the nodes whose allocation changed since are worked out again
        (``sim.allocated_sum``)."""
        state = self.state
        key = (state.change_pos, state.static_version, self.ledger.version)
        if key != self._allocated_key or state.dra is not None:
            plain = state.shares is None and state.dra is None
            if plain:
                self._allocated = self._held.read(state, self._gpu_weights())
            else:
                self._allocated = float(self.gpus_allocated_per_node().sum())
            self._allocated_key = key
        return self._allocated

    def gpus_total(self) -> float:
        """Physical GPUs on nodes whose devices have registered (GPU allocatable non-zero, or GPUs
        published as DRA ResourceSlices). Kept while what the weights are made of (``_weights_read``) and
        the nodes' allocatable are as they were (worked out each time with DRA)."""
        state = self.state
        key = (*self._weights_read(), state.allocatable_version)
        if key != self._total_key or state.dra is not None:
            registered = (state.alloc * (self._gpu_weights() > 0)).sum(axis=1) > 0
            dra = self.dra_gpus_per_node()
            self._total = float(((self._physical * registered + dra) * state.active).sum())
            self._total_key = key
        return self._total

    def _dra_gpus(self) -> dict[DeviceID, str]:
        """Whole GPUs published as DRA devices, each with its node (kept while the slices stand)."""
        dra = self.state.dra
        if dra is None:
            return {}
        slices, seen = dra.objects.slices, self._dra_gpus_key
        if seen is None or seen[0] is not slices or seen[1] != len(slices):
            self._dra_gpus_index, self._dra_gpus_key = node_gpus(slices), (slices, len(slices))
        return self._dra_gpus_index

    def dra_gpus_per_node(self, allocated: bool = False) -> npt.NDArray[np.float64]:
        """Whole GPUs each node publishes as DRA devices; ``allocated``: those allocated to claims
        (a claim shared by several pods counts its devices once)."""
        out = np.zeros(self.state.size, dtype=np.float64)
        index = self._dra_gpus()
        if index and self.state.dra is not None:
            for device in self.state.dra.allocated_devices() if allocated else index:
                i = self.state.index.get(index.get(device, ""))
                if i is not None:
                    out[i] += 1
        return out
