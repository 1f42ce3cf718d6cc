"""GPUs as devices on a node: which device (or MIG instance, or time-slicing replica) a pod got,
what share of a physical GPU that is, and whether the pod's memory fits.

A node's devices follow from what GPU Feature Discovery and the NVIDIA device plugin put on it:
``nvidia.com/gpu.count`` and ``nvidia.com/gpu.memory`` (MiB) labels; time-slicing or MPS
(``nvidia.com/gpu.replicas``, ``nvidia.com/gpu.sharing-strategy``): the node advertises
``replicas x GPUs`` of ``nvidia.com/gpu`` and each replica is ``1/replicas`` of a GPU — with
time-slicing, replicas share the GPU's memory with no isolation; with MPS each client is limited
to ``memory / replicas``; MIG with the ``mixed`` strategy advertises ``nvidia.com/mig-<profile>``
resources, each instance counting ``g/7`` of a GPU with the profile's memory (``1g.10gb``:
10 GB); with ``single`` the node advertises instances as ``nvidia.com/gpu``.

A multi-GPU pod gets the best-connected free set of whole GPUs (``gpus.topology``): the
node's link graph comes from the label ``gpufleet.io/gpu-topology`` (``nvswitch``,
``nvlink-islands-<k>``, ``nvlink-pairs``, ``pcie-<per switch>``) or else from its GPU model's
default layout; without either, the lowest free indices.

Fractional requests (KAI, HAMi): the scheduler's ledger (``cluster.shares``) decides which
of the node's shared GPUs ("slots") a share goes on; here each slot is bound to a physical GPU
with no other holder the first time it is used (never one the device plugin reports Unhealthy), and
freed with its last share. Whole-GPU pods
never get a GPU that holds shares. A share unit is ``<gpu>:<milli>m`` (``<gpu>:<compute>m,<memory>m-memory``
when they differ) and counts the larger of the two over 1000 of a GPU; its memory is capped (HAMi)
or shared with its neighbours (KAI).

Memory truth (``gpufleet.io/gpu-memory``): a pod whose process needs more than its instance or
MPS share holds, or than what is left of a time-sliced GPU, fails with CUDA out-of-memory
when it allocates at start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpufleet.cluster.shares import SharePlacement
from gpufleet.gpus.topology.device_choice import best_set
from gpufleet.gpus.topology.link_graph import (
    DEFAULT_LAYOUTS,
    LinkGraph,
    default_graph,
    nvlink_islands,
    nvlink_pairs,
    nvswitch,
    pcie,
)
from gpufleet.model.dra import Device, DeviceID
from gpufleet.model.dra_slices import is_whole_gpu
from gpufleet.model.gpu_catalog import lookup
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU

TOPOLOGY_LABEL = "gpufleet.io/gpu-topology"

MIG_PREFIX = "nvidia.com/mig-"
_MIG_PROFILE = re.compile(r"^(\d+)g\.(\d+)gb$")
MIG_COMPUTE_SLICES = 7


@dataclass(frozen=True)
class Unit:
    """One allocatable GPU unit: a whole GPU, a replica of one, or a MIG instance."""

    id: str
    gpu: int
    share: float  # GPU-equivalent
    memory_bytes: float | None  # what the holder may use alone; None: the GPU's memory, shared
    #: a fractional share's (compute, memory) in thousandths of its GPU; None for any other unit
    milli: tuple[int, int] | None = None


@dataclass
class NodeDevices:
    node: str
    gpus: int
    memory_bytes: float | None  # per physical GPU, when known
    sharing: str  # "none" | "time-slicing" | "mps" | "mig"
    units: dict[str, list[Unit]] = field(default_factory=dict)  # resource -> units
    taken: dict[str, str] = field(default_factory=dict)  # unit id -> pod key
    graph: LinkGraph | None = None
    slot_gpu: dict[int, int] = field(default_factory=dict)  # shared-GPU slot of the ledger -> GPU index
    shared: dict[str, list[Unit]] = field(default_factory=dict)  # pod key -> its share units
    #: unit ids the device plugin reports Unhealthy (an XID on their GPU): never allocated
    unhealthy: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, node: Node) -> NodeDevices:
        labels = node.labels
        memory_mib = labels.get("nvidia.com/gpu.memory")
        memory = float(memory_mib) * 2**20 if memory_mib and memory_mib.isdigit() else None
        units: dict[str, list[Unit]] = {}
        mig = {r: n for r, n in node.allocatable.items() if r.startswith(MIG_PREFIX) and n > 0}
        advertised = node.allocatable.get(GPU, 0)
        replicas = int(labels.get("nvidia.com/gpu.replicas", "1") or 1)
        count_label = labels.get("nvidia.com/gpu.count", "")
        sharing = labels.get("nvidia.com/gpu.sharing-strategy", "time-slicing" if replicas > 1 else "none")
        if mig:
            gpus = int(count_label) if count_label.isdigit() else 0
            k = 0
            for resource, n in sorted(mig.items()):
                g, gb = _profile(resource[len(MIG_PREFIX) :])
                units[resource] = [
                    Unit(f"{resource[len(MIG_PREFIX) :]}-{k + i}", -1, g / MIG_COMPUTE_SLICES, gb * 1e9)
                    for i in range(n)
                ]
                k += n
            return cls(node.name, gpus, memory, "mig", units)
        if labels.get("nvidia.com/mig.strategy") == "single" and "-MIG-" in labels.get(
            "nvidia.com/gpu.product", ""
        ):
            profile = labels["nvidia.com/gpu.product"].rsplit("-MIG-", 1)[1]
            g, gb = _profile(profile)
            units[GPU] = [
                Unit(f"{profile}-{i}", -1, g / MIG_COMPUTE_SLICES, gb * 1e9) for i in range(advertised)
            ]
            gpus = int(count_label) if count_label.isdigit() else 0
            return cls(node.name, gpus, memory, "mig", units)
        gpus = advertised // replicas if replicas > 1 else advertised
        limit = memory / replicas if memory is not None and sharing == "mps" else None
        graph = link_graph_of(node, gpus) if replicas == 1 and gpus > 1 else None
        if (
            graph is not None
            and len({graph.link(i, j) for i in range(gpus) for j in range(gpus) if i != j}) == 1
        ):
            graph = None  # all-to-all alike (NVSwitch): any set is as good as the lowest indices
        units[GPU] = [
            Unit(f"{g}" if replicas == 1 else f"{g}::{r}", g, 1 / replicas, limit if replicas > 1 else memory)
            for g in range(gpus)
            for r in range(replicas)
        ]
        return cls(node.name, gpus, memory, "none" if replicas == 1 else sharing, units, graph=graph)

    def allocate(self, pod: Pod, shares: list[SharePlacement] | None = None) -> list[Unit]:
        """Units for every GPU resource the pod requests: whole GPUs lowest index first; replicas on
        the GPU with the most replicas free (then lowest index); MIG instances in order; ``shares``:
        where the scheduler put its fractional request."""
        got: list[Unit] = self._share_units(pod, shares) if shares else []
        in_shared_use = set(self.slot_gpu.values())
        for resource, amount in sorted(pod.requests.items()):
            free = self._free(resource, in_shared_use)
            if self.sharing in ("time-slicing", "mps") and resource == GPU:
                per_gpu: dict[int, int] = {}
                for u in free:
                    per_gpu[u.gpu] = per_gpu.get(u.gpu, 0) + 1
                free.sort(key=lambda u: (-per_gpu[u.gpu], u.gpu, u.id))
            elif self.graph is not None and resource == GPU and amount > 1:
                chosen = best_set(self.graph, [u.gpu for u in free], amount)
                if chosen is not None:
                    free = [u for u in free if u.gpu in chosen]
            got.extend(free[:amount])
        for u in got:
            self.taken[u.id] = pod.key
        return got

    def _free(self, resource: str, in_shared_use: set[int]) -> list[Unit]:
        """The units of ``resource`` the device plugin may hand out: healthy, held by nobody, on no GPU
        that holds shares."""
        return [
            u
            for u in self.units.get(resource, ())
            if u.id not in self.taken and u.id not in self.unhealthy and u.gpu not in in_shared_use
        ]

    def unavailable(self, pod: Pod, shares: list[SharePlacement] | None = None) -> str | None:
        """The device plugin's refusal where the units free now cannot cover one of the pod's device
        requests (kubelet's devicemanager ``devicesToAllocate``: "requested number of devices
        unavailable for R. Requested: N, Available: K"), None where they can; ``shares``: its fractional
        request's slots, of which those no GPU holds yet each need a GPU nothing holds. The scheduler
        counted allocatable as it was when the pod was assumed; a GPU reported Unhealthy while the pod
        waited at Permit leaves it fewer."""
        in_shared_use = set(self.slot_gpu.values())
        wanted = [
            (r, amount, len(self._free(r, in_shared_use)))
            for r, amount in sorted(pod.requests.items())
            if r in self.units
        ]
        if shares and GPU in self.units:
            fresh = len({p.slot for p in shares if p.slot not in self.slot_gpu})
            wanted.append((GPU, fresh, len(self._unheld_gpus())))
        for resource, amount, free in wanted:
            if amount > free:
                return (
                    f"requested number of devices unavailable for {resource}. Requested: {amount}, "
                    f"Available: {free}"
                )
        return None

    def _unheld_gpus(self) -> set[int]:
        """The GPUs no unit of which is held or reported Unhealthy, holding no share: where a share's slot
        may open."""
        held = self.taken.keys() | self.unhealthy
        busy = set(self.slot_gpu.values()) | {
            u.gpu for units in self.units.values() for u in units if u.id in held
        }
        return set(range(self.gpus)) - busy

    def _share_units(self, pod: Pod, shares: list[SharePlacement]) -> list[Unit]:
        share = pod.gpu_share
        isolated = share is not None and share.isolated
        units = []
        for p in shares:
            gpu = self.slot_gpu.get(p.slot)
            if gpu is None:  # a GPU nothing holds and the device plugin reports healthy
                gpu = self.slot_gpu[p.slot] = min(self._unheld_gpus())
            memory = self.memory_bytes * p.memory / MILLI if isolated and self.memory_bytes else None
            name = (
                f"{gpu}:{p.compute}m" if p.compute == p.memory else f"{gpu}:{p.compute}m,{p.memory}m-memory"
            )
            units.append(Unit(name, gpu, max(p.compute, p.memory) / MILLI, memory, (p.compute, p.memory)))
        self.shared[pod.key] = units
        return units

    def release(self, pod_key: str) -> None:
        self.taken = {u: p for u, p in self.taken.items() if p != pod_key}
        if self.shared.pop(pod_key, None):
            still = {u.gpu for units in self.shared.values() for u in units}
            self.slot_gpu = {s: g for s, g in self.slot_gpu.items() if g in still}

    def free_whole_gpus(self) -> tuple[list[int], LinkGraph | None] | None:
        """Indices of the GPUs nothing holds, and the link graph (None: all alike); None unless the
        node's GPUs are whole devices."""
        if self.sharing != "none" or GPU not in self.units:
            return None
        held = self.taken.keys() | self.unhealthy
        busy = {u.gpu for u in self.units[GPU] if u.id in held} | set(self.slot_gpu.values())
        return [g for g in range(self.gpus) if g not in busy], self.graph

    def holders_of_gpu(self, gpu: int) -> set[str]:
        ids = {u.id for units in self.units.values() for u in units if u.gpu == gpu}
        holders = {p for u, p in self.taken.items() if u in ids}
        return holders | {p for p, units in self.shared.items() if any(u.gpu == gpu for u in units)}


def link_graph_of(node: Node, gpus: int) -> LinkGraph | None:
    layout = node.labels.get(TOPOLOGY_LABEL, "")
    if layout == "nvswitch":
        return nvswitch(gpus)
    if layout == "nvlink-pairs":
        return nvlink_pairs(gpus)
    match = re.fullmatch(r"(nvlink-islands|pcie)-(\d+)", layout)
    if match and gpus % int(match.group(2)) == 0:
        size = int(match.group(2))
        return nvlink_islands(gpus, size) if match.group(1) == "nvlink-islands" else pcie(gpus, size)
    product = node.labels.get("nvidia.com/gpu.product")
    if not product:
        return None
    try:
        model = lookup(product).name
    except KeyError:
        return None
    return default_graph(model, gpus) if model in DEFAULT_LAYOUTS else None


def _profile(name: str) -> tuple[int, float]:
    match = _MIG_PROFILE.match(name)
    if not match:
        return 1, 0.0
    return int(match.group(1)), float(match.group(2))


def out_of_memory(pod: Pod, units: list[Unit], devices: NodeDevices, used_by: dict[str, float]) -> bool:
    """Whether the pod's CUDA allocation fails: over its instance/MPS share, or over what its
    time-shared GPU has left after the other holders' memory (``used_by``: pod key -> bytes)."""
    need = pod.behavior.gpu_memory_bytes
    if need is None or not units:
        return False
    for unit in units:
        if unit.memory_bytes is not None and devices.sharing != "time-slicing":
            if need > unit.memory_bytes:
                return True
        elif devices.memory_bytes is not None:
            others = sum(used_by.get(p, 0.0) for p in devices.holders_of_gpu(unit.gpu) if p != pod.key)
            if others + need > devices.memory_bytes:
                return True
    return False


def dra_units(devices: list[tuple[DeviceID, Device]]) -> list[Unit]:
    """A pod's DRA devices as units: a whole GPU (``dra_slices.is_whole_gpu``) counts as one
    GPU-equivalent, any other device as none; a device's ``memory`` capacity is its memory. A claim
    shared by several pods counts its GPUs once, allocated or working."""
    return [
        Unit(
            str(i),
            -1,
            1.0 if is_whole_gpu(d, i.driver) else 0.0,
            float(d.capacity["memory"]) if "memory" in d.capacity else None,
        )
        for i, d in devices
    ]
