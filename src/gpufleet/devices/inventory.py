"""What a machine's GPUs are, printed as a table or written as a ``v1`` Node manifest.

``GpuDevice`` and ``Inventory`` hold what ``read_inventory`` learnt from NVML; ``None``
always means "NVML could not say" (the query is not supported on that GPU or driver),
never zero. ``node_manifest`` labels the node as GPU Feature Discovery (GFD) does
(``nvidia.com/gpu.product``, ``gpu.memory``, ``gpu.count``, ``gpu.family``, ``mig.strategy``,
...) and gives it the capacity the NVIDIA device plugin would advertise: ``nvidia.com/gpu``,
or, for MIG-enabled GPUs under the ``mixed`` strategy, ``nvidia.com/mig-<profile>`` per
profile; plus the host's ``cpu``, ``memory`` and ``pods``.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

_MIB = 1024 * 1024
_GIB = 1024 * _MIB

MigStrategy = Literal["none", "single", "mixed"]
MIG_STRATEGIES: tuple[MigStrategy, ...] = ("none", "single", "mixed")

#: The kubelet's default ``maxPods``.
DEFAULT_PODS = 110


@dataclass(frozen=True)
class MigDevice:
    """One MIG device (a compute instance inside a GPU instance)."""

    index: int
    uuid: str | None
    #: The device plugin's name for it, e.g. ``1g.10gb`` (``nvidia.com/mig-1g.10gb``).
    profile: str | None
    gpu_instance_id: int | None
    compute_instance_id: int | None
    gpu_instance_profile_id: int | None
    memory_mib: int | None
    gpu_instance_slices: int | None
    compute_instance_slices: int | None
    multiprocessors: int | None


@dataclass(frozen=True)
class Health:
    """ECC counters, retired pages and remapped rows; ``None`` where NVML does not report them."""

    ecc_enabled: bool | None = None
    ecc_uncorrected_volatile: int | None = None
    ecc_uncorrected_aggregate: int | None = None
    ecc_corrected_volatile: int | None = None
    retired_pages: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    row_remap_pending: bool | None = None
    row_remap_failure: bool | None = None

    @property
    def known(self) -> bool:
        return any(getattr(self, name) is not None for name in self.__dataclass_fields__)

    def problems(self) -> list[str]:
        """What is wrong, one short phrase each; empty when healthy or unknown."""
        found: list[str] = []
        if self.ecc_uncorrected_volatile:
            found.append(f"{self.ecc_uncorrected_volatile} uncorrected ECC (volatile)")
        if self.ecc_uncorrected_aggregate and self.ecc_uncorrected_aggregate != self.ecc_uncorrected_volatile:
            found.append(f"{self.ecc_uncorrected_aggregate} uncorrected ECC (aggregate)")
        if self.retired_pages:
            found.append(f"{self.retired_pages} retired pages")
        if self.retired_pages_pending:
            found.append("page retirement pending")
        if self.remapped_rows_uncorrectable:
            found.append(f"{self.remapped_rows_uncorrectable} rows remapped")
        if self.row_remap_pending:
            found.append("row remap pending reset")
        if self.row_remap_failure:
            found.append("row remap failed")
        return found

    def summary(self) -> str:
        """``ok``, ``n/a`` (nothing known), or the problems, comma-separated."""
        if not self.known:
            return "n/a"
        return ", ".join(self.problems()) or "ok"


@dataclass(frozen=True)
class Link:
    """How a GPU reaches one peer: the PCIe path word and the NVLinks between them."""

    peer: int
    #: ``PIX``, ``PXB``, ``PHB``, ``NODE`` or ``SYS`` (``nvidia-smi topo -m``); ``None`` if unknown.
    pcie: str | None
    #: Active NVLinks to the peer, directly or through NVSwitches; 0 when none.
    nvlinks: int = 0

    @property
    def word(self) -> str:
        """What ``nvidia-smi topo -m`` prints for the pair: ``NV<n>`` over NVLink, else the PCIe word."""
        if self.nvlinks:
            return f"NV{self.nvlinks}"
        return self.pcie or "?"


@dataclass(frozen=True)
class GpuDevice:
    """One physical GPU."""

    index: int
    name: str
    uuid: str
    pci_bus_id: str
    memory_total_bytes: int
    memory_used_bytes: int | None = None
    compute_capability: tuple[int, int] | None = None
    #: ``False`` when ``nvmlDeviceGetMigMode`` is not supported.
    mig_capable: bool = False
    mig_enabled: bool = False
    #: The mode after the next GPU reset; ``None`` when not MIG-capable.
    mig_pending: bool | None = None
    mig_devices: tuple[MigDevice, ...] = ()
    #: ``False`` when the GPU has no NVLink; ``None`` when not read.
    nvlink_supported: bool | None = None
    nvlink_active: int = 0
    nvswitch_links: int = 0
    links: tuple[Link, ...] = ()
    health: Health = Health()
    #: The optional NVML queries that failed, ``"nvmlDeviceGetMigMode: Not Supported"``.
    unknown: tuple[str, ...] = ()

    @property
    def memory_mib(self) -> int:
        return self.memory_total_bytes // _MIB

    @property
    def family(self) -> str | None:
        return gpu_family(self.compute_capability) if self.compute_capability else None

    def link_to(self, peer: int) -> Link | None:
        return next((link for link in self.links if link.peer == peer), None)

    def mig_profiles(self) -> Counter[str]:
        """How many MIG devices of each profile (unnamed ones count as ``unknown``)."""
        return Counter(m.profile or "unknown" for m in self.mig_devices)


@dataclass(frozen=True)
class Inventory:
    """The GPUs of one machine and its driver."""

    driver_version: str | None
    #: The CUDA version the driver supports, ``(12, 4)``.
    cuda_version: tuple[int, int] | None
    gpus: tuple[GpuDevice, ...]
    unknown: tuple[str, ...] = ()


def gpu_family(capability: tuple[int, int]) -> str:
    """GFD's ``nvidia.com/gpu.family`` for a CUDA compute capability (``undefined`` if new)."""
    major, minor = capability
    if major == 7:
        return "volta" if minor < 5 else "turing"
    if major == 8:
        return "ampere" if minor < 9 else "ada-lovelace"
    names = {1: "tesla", 2: "fermi", 3: "kepler", 5: "maxwell", 6: "pascal", 9: "hopper", 10: "blackwell"}
    return names.get(major, "blackwell" if major == 12 else "undefined")


def mig_profile_name(gi_slices: int, ci_slices: int, memory_mib: int, parent_total_bytes: int) -> str:
    """The device plugin's name of a MIG device: ``<gi>g.<mem>gb``, ``<ci>c.<gi>g.<mem>gb`` if smaller.

    Memory is the instance's share of the GPU rounded up to eighths, times the GPU's memory in
    whole GiB (rounded up), as NVIDIA's go-nvlib names profiles: 9856 MiB of an 80 GB H100 is
    ``10gb``, 4864 MiB of a 40 GB A100 is ``5gb``.
    """
    total_gb = math.ceil(parent_total_bytes / _GIB) if parent_total_bytes > 0 else 0
    fraction = memory_mib * _MIB / parent_total_bytes if parent_total_bytes > 0 else 0.0
    fraction = math.ceil(fraction * 8 - 1e-9) / 8
    gb = math.floor(fraction * total_gb + 0.5)
    name = f"{gi_slices}g.{gb}gb"
    return f"{ci_slices}c.{name}" if 0 < ci_slices < gi_slices else name


def infer_mig_strategy(inv: Inventory) -> MigStrategy:
    """``none`` when no GPU has MIG enabled, else ``mixed``, which is exact for any MIG layout.

    ``single`` is a device-plugin setting that cannot be seen on the hardware; ask for it
    explicitly (``node_manifest(..., mig_strategy="single")``) where every GPU is MIG-enabled
    with one profile.
    """
    return "mixed" if any(g.mig_enabled for g in inv.gpus) else "none"


def _fmt_gib(value: int) -> str:
    return f"{value / _GIB:.1f} GiB"


def _mig_cell(gpu: GpuDevice) -> str:
    if not gpu.mig_capable:
        return "n/a"
    text = "enabled" if gpu.mig_enabled else "disabled"
    if gpu.mig_enabled:
        profiles = gpu.mig_profiles()
        parts = [f"{n}x{profile}" for profile, n in sorted(profiles.items())]
        text += f" ({', '.join(parts)})" if parts else " (no instances)"
    if gpu.mig_pending is not None and gpu.mig_pending != gpu.mig_enabled:
        text += f", {'enabled' if gpu.mig_pending else 'disabled'} after reset"
    return text


def _nvlink_cell(gpu: GpuDevice) -> str:
    if gpu.nvlink_supported is False:
        return "n/a"
    by_word: dict[str, list[int]] = {}
    for link in gpu.links:
        if link.nvlinks:
            by_word.setdefault(link.word, []).append(link.peer)
    if not by_word:
        return "none"
    return "; ".join(f"{word} to {_ranges(peers)}" for word, peers in sorted(by_word.items()))


def _ranges(values: list[int]) -> str:
    """``1-3,5`` for ``[1, 2, 3, 5]``."""
    parts: list[str] = []
    start = prev = values[0]
    for v in [*values[1:], None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return ",".join(parts)


def format_inventory(inv: Inventory) -> str:
    """A table of the GPUs (index, name, memory, MIG, NVLink peers, ECC) and the ``topo -m`` matrix."""
    driver = inv.driver_version or "unknown"
    cuda = f"{inv.cuda_version[0]}.{inv.cuda_version[1]}" if inv.cuda_version else "unknown"
    lines = [f"driver {driver}, CUDA {cuda}, {len(inv.gpus)} GPU{'s' if len(inv.gpus) != 1 else ''}"]
    if not inv.gpus:
        return "\n".join(lines) + "\n"
    header = ("GPU", "NAME", "MEMORY", "MIG", "NVLINK", "HEALTH")
    rows = [
        (
            str(g.index),
            g.name,
            _fmt_gib(g.memory_total_bytes),
            _mig_cell(g),
            _nvlink_cell(g),
            g.health.summary(),
        )
        for g in inv.gpus
    ]
    lines.extend(_table([header, *rows]))
    lines.append("")
    names = [f"GPU{g.index}" for g in inv.gpus]
    matrix = [["", *names]]
    for g in inv.gpus:
        cells = [("X" if p.index == g.index else _pair_word(g, p.index)) for p in inv.gpus]
        matrix.append([f"GPU{g.index}", *cells])
    lines.extend(_table(matrix))
    return "\n".join(lines) + "\n"


def _pair_word(gpu: GpuDevice, peer: int) -> str:
    link = gpu.link_to(peer)
    return link.word if link else "?"


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


_LABEL_VALUE_BAD = re.compile(r"[^A-Za-z0-9._-]")


def label_value(text: str) -> str:
    """``text`` as a label value: spaces to ``-`` (as GFD does), other bad characters dropped."""
    value = _LABEL_VALUE_BAD.sub("", text.strip().replace(" ", "-"))[:63]
    return value.strip("-_.")


def host_cpus() -> int | None:
    """This machine's logical CPUs (``os.cpu_count``)."""
    return os.cpu_count()


def host_memory_kib(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """``MemTotal`` from ``/proc/meminfo`` in KiB, or ``None`` where it cannot be read."""
    try:
        text = meminfo.read_text()
    except OSError:
        return None
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(match.group(1)) if match else None


def _single_profile(inv: Inventory) -> MigDevice:
    migs = [m for g in inv.gpus for m in g.mig_devices]
    profiles = {m.profile for m in migs}
    if not migs or not all(g.mig_enabled for g in inv.gpus) or len(profiles) != 1 or None in profiles:
        raise ValueError("the single MIG strategy needs every GPU MIG-enabled with one profile, named")
    return migs[0]


def node_labels(inv: Inventory, strategy: MigStrategy) -> dict[str, str]:
    """GFD's labels for the node (``nvidia.com/...``), described from its first GPU, as GFD does."""
    labels: dict[str, str] = {}
    if inv.driver_version:
        parts = inv.driver_version.split(".")
        for key, part in zip(("major", "minor", "rev"), parts, strict=False):
            labels[f"nvidia.com/cuda.driver.{key}"] = part
    if inv.cuda_version:
        labels["nvidia.com/cuda.runtime.major"] = str(inv.cuda_version[0])
        labels["nvidia.com/cuda.runtime.minor"] = str(inv.cuda_version[1])
    if not inv.gpus:
        return labels
    first = inv.gpus[0]
    product = label_value(first.name)
    count, memory = len(inv.gpus), first.memory_mib
    labels["nvidia.com/mig.capable"] = str(any(g.mig_capable for g in inv.gpus)).lower()
    labels["nvidia.com/mig.strategy"] = strategy
    if strategy == "single":
        mig = _single_profile(inv)
        product = f"{product}-MIG-{mig.profile}"
        count = sum(len(g.mig_devices) for g in inv.gpus)
        labels.update(_mig_labels("nvidia.com/gpu", mig))
        memory = mig.memory_mib if mig.memory_mib is not None else memory
    elif strategy == "mixed":
        seen: dict[str, int] = Counter(m.profile for g in inv.gpus for m in g.mig_devices if m.profile)
        for profile, n in sorted(seen.items()):
            mig = next(m for g in inv.gpus for m in g.mig_devices if m.profile == profile)
            prefix = f"nvidia.com/mig-{profile}"
            labels[f"{prefix}.count"] = str(n)
            labels.update(_mig_labels(prefix, mig))
    labels["nvidia.com/gpu.product"] = product
    labels["nvidia.com/gpu.count"] = str(count)
    labels["nvidia.com/gpu.memory"] = str(memory)
    labels["nvidia.com/gpu.replicas"] = "1"
    if first.compute_capability:
        labels["nvidia.com/gpu.compute.major"] = str(first.compute_capability[0])
        labels["nvidia.com/gpu.compute.minor"] = str(first.compute_capability[1])
        labels["nvidia.com/gpu.family"] = gpu_family(first.compute_capability)
    return dict(sorted(labels.items()))


def _mig_labels(prefix: str, mig: MigDevice) -> dict[str, str]:
    labels: dict[str, str] = {}
    if mig.memory_mib is not None:
        labels[f"{prefix}.memory"] = str(mig.memory_mib)
    if mig.multiprocessors is not None:
        labels[f"{prefix}.multiprocessors"] = str(mig.multiprocessors)
    if mig.gpu_instance_slices is not None:
        labels[f"{prefix}.slices.gi"] = str(mig.gpu_instance_slices)
    if mig.compute_instance_slices is not None:
        labels[f"{prefix}.slices.ci"] = str(mig.compute_instance_slices)
    return labels


def gpu_capacity(inv: Inventory, strategy: MigStrategy) -> dict[str, int]:
    """The extended resources the device plugin advertises under ``strategy``."""
    if strategy == "single":
        _single_profile(inv)
        return {"nvidia.com/gpu": sum(len(g.mig_devices) for g in inv.gpus)}
    if strategy == "none":
        return {"nvidia.com/gpu": len(inv.gpus)} if inv.gpus else {}
    capacity: dict[str, int] = {}
    whole = sum(1 for g in inv.gpus if not g.mig_enabled)
    if whole:
        capacity["nvidia.com/gpu"] = whole
    for g in inv.gpus:
        for profile, n in g.mig_profiles().items():
            if profile != "unknown":
                key = f"nvidia.com/mig-{profile}"
                capacity[key] = capacity.get(key, 0) + n
    return dict(sorted(capacity.items()))


def node_manifest(
    inv: Inventory,
    node_name: str,
    *,
    mig_strategy: MigStrategy | None = None,
    cpus: int | None = None,
    memory_kib: int | None = None,
    pods: int = DEFAULT_PODS,
) -> dict[str, Any]:
    """A ``v1`` Node for ``inv`` with GFD's labels and the device plugin's GPU capacity.

    ``mig_strategy`` defaults to ``infer_mig_strategy(inv)``; ``cpus`` and ``memory_kib``
    default to this host's (``os.cpu_count``, ``/proc/meminfo``). Raises ``ValueError`` for
    ``single`` on a machine that cannot run it.
    """
    strategy = mig_strategy or infer_mig_strategy(inv)
    if strategy not in MIG_STRATEGIES:
        raise ValueError(f"unknown MIG strategy {strategy!r}; expected one of {', '.join(MIG_STRATEGIES)}")
    cpus = cpus if cpus is not None else host_cpus()
    memory_kib = memory_kib if memory_kib is not None else host_memory_kib()
    capacity: dict[str, str] = {}
    if cpus is not None:
        capacity["cpu"] = str(cpus)
    if memory_kib is not None:
        capacity["memory"] = f"{memory_kib}Ki"
    capacity["pods"] = str(pods)
    capacity.update({k: str(v) for k, v in gpu_capacity(inv, strategy).items()})
    labels = {"kubernetes.io/hostname": node_name, "kubernetes.io/os": "linux", **node_labels(inv, strategy)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name, "labels": labels},
        "status": {"capacity": capacity, "allocatable": dict(capacity)},
    }
