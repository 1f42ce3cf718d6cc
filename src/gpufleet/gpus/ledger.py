"""The device ledger: which GPU units (whole GPUs, time-slicing replicas, MIG instances, shares of
one GPU, DRA devices) each pod holds, node by node, decided when the pod is bound.

kube-scheduler only counts devices; which ones a pod gets is decided as it is bound (the device
plugin's ``GetPreferredAllocation``, a GPU-sharing scheduler's choice of GPU, the DRA allocation
made at Reserve). The scheduler asks the ledger for a bound pod's units (``allocate``) and they
travel in its scheduling outcome; a pod written with ``spec.nodeName`` gets its units the same
way when its node admits it. The ledger answers ``DeviceView`` (free whole GPUs and their links)
for scores that look at devices, and gives a pod's units back when it leaves the node
(``unassigned``, a ``ClusterState`` part).
"""

from __future__ import annotations

from gpufleet.cluster.shares import SharePlacement
from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.devices import NodeDevices, Unit, dra_units
from gpufleet.gpus.topology.link_graph import LinkGraph
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod


class DeviceLedger:
    def __init__(self, state: ClusterState):
        self.state = state
        self.nodes: dict[str, NodeDevices] = {}
        self.described: list[str] = []  # each node described, described anew or forgotten, in order
        state.devices = state.ledger = self
        state.parts.append(self)

    def of(self, name: str) -> NodeDevices:
        """The devices of a node, described from its labels and allocatable when first asked."""
        devices = self.nodes.get(name)
        if devices is None:
            devices = self.nodes[name] = NodeDevices.of(self.state.nodes[self.state.index[name]])
            self.described.append(name)
        return devices

    def registered(self, node: Node) -> None:
        """The node's devices registered (or changed): described anew from ``node``."""
        self.nodes[node.name] = NodeDevices.of(node)
        self.described.append(node.name)

    def restarted(self, node: Node) -> None:
        """The node's kubelet started again (a reboot): its devices are described anew, every one healthy,
        and the pods still bound there hold what they held (kubelet's devicemanager ``readCheckpoint``
        restores the pods' devices from its checkpoint, and ``devicesToAllocate`` gives a restarted
        container the devices it had): no pod bound since gets them too."""
        before = self.nodes.get(node.name)
        self.registered(node)
        if before is not None:
            after = self.nodes[node.name]
            after.taken, after.shared, after.slot_gpu = before.taken, before.shared, before.slot_gpu

    def forget(self, name: str) -> None:
        """The node's devices are gone or about to change: described again when next asked."""
        if self.nodes.pop(name, None) is not None:
            self.described.append(name)

    @property
    def version(self) -> int:
        """Moves whenever a node's devices are (re)described or forgotten: how many times they were."""
        return len(self.described)

    def described_since(self, version: int) -> list[str]:
        """The nodes whose devices were described, described anew or forgotten since ``version``."""
        return self.described[version:]

    def allocate(self, pod: Pod, node: str) -> list[Unit]:
        """The units the pod gets on ``node`` as it is bound: its fractional shares where the share
        ledger put them, whole GPUs, replicas or MIG instances as the device plugin picks them, and
        the devices its ResourceClaims were allocated."""
        units = self.of(node).allocate(pod, self._shares(pod))
        dra = self.state.dra
        if dra is not None and pod.resource_claims:
            units += dra_units(dra.pod_devices(pod, node))
        return units

    def unavailable(self, pod: Pod, node: str) -> str | None:
        """The device plugin's refusal of the pod on ``node`` (``NodeDevices.unavailable``), or None."""
        return self.of(node).unavailable(pod, self._shares(pod))

    def _shares(self, pod: Pod) -> list[SharePlacement] | None:
        """Where the share ledger put the pod's fractional request (None: nowhere)."""
        return self.state.shares.placed.get(pod.key) if self.state.shares is not None else None

    def unassigned(self, pod: Pod, node: int) -> None:
        name = self.state.nodes[node].name
        if name in self.nodes:
            self.nodes[name].release(pod.key)

    # -- DeviceView --------------------------------------------------------------------------
    def free_gpus(self, node: int) -> tuple[list[int], LinkGraph | None] | None:
        return self.of(self.state.nodes[node].name).free_whole_gpus()
