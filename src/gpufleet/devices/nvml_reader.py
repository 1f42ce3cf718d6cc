"""Reads the local GPUs through NVML into an ``Inventory``.

``read_inventory(nvml)`` takes the ``pynvml`` module (``nvidia-ml-py``) as a parameter, so
tests pass a stand-in that answers with pynvml's own structs and raises its own
``NVMLError_*`` classes. Only the identity of each GPU (name, UUID, PCI bus id, memory) is
required; every other query (MIG, NVLink, topology, ECC, retired pages, remapped rows,
compute capability) that raises an ``NVMLError`` (``NotSupported``, ``NoPermission``, ...) or
is missing from an older pynvml is recorded as unknown, with the reason in
``GpuDevice.unknown``, and never stops the read.

XID errors are not read: NVML reports them only as events that occur after a listener
registers, not as a history; the kernel log (``NVRM: Xid``) holds that.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from gpufleet.devices.inventory import GpuDevice, Health, Inventory, Link, MigDevice, mig_profile_name

T = TypeVar("T")

_MIB = 1024 * 1024

#: ``nvmlGpuTopologyLevel_t`` constant names to the words of ``nvidia-smi topo -m``.
_TOPOLOGY_WORDS = (
    ("NVML_TOPOLOGY_INTERNAL", "PIX"),
    ("NVML_TOPOLOGY_SINGLE", "PIX"),
    ("NVML_TOPOLOGY_MULTIPLE", "PXB"),
    ("NVML_TOPOLOGY_HOSTBRIDGE", "PHB"),
    ("NVML_TOPOLOGY_NODE", "NODE"),
    ("NVML_TOPOLOGY_SYSTEM", "SYS"),
)


class NvmlUnavailable(Exception):
    """NVML cannot start: no ``pynvml``, no ``libnvidia-ml.so.1``, or no loaded driver."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_inventory(nvml: ModuleType) -> Inventory:
    """Every GPU NVML sees, read through ``nvml`` (the ``pynvml`` module or a stand-in).

    Raises ``NvmlUnavailable`` when ``nvmlInit`` reports ``LibraryNotFound`` or
    ``DriverNotLoaded``; other ``NVMLError`` from ``nvmlInit`` or from the required queries
    propagate.
    """
    no_driver = (nvml.NVMLError_LibraryNotFound, nvml.NVMLError_DriverNotLoaded)
    try:
        nvml.nvmlInit()
    except no_driver as exc:
        raise NvmlUnavailable(_text(exc)) from None
    try:
        return _Reader(nvml).read()
    finally:
        with contextlib.suppress(nvml.NVMLError):
            nvml.nvmlShutdown()


def topology_word(nvml: ModuleType, level: int) -> str | None:
    """The ``nvidia-smi topo -m`` word (PIX, PXB, PHB, NODE, SYS) for an ``NVML_TOPOLOGY_*`` level."""
    for name, word in _TOPOLOGY_WORDS:
        if getattr(nvml, name, None) == level:
            return word
    return None


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return str(value)


def _bus_key(bus_id: str) -> str:
    """A PCI bus id in one spelling: 8-digit domain, lower case (NVML uses 4 or 8 digits)."""
    bus_id = bus_id.strip().lower()
    domain, sep, rest = bus_id.partition(":")
    if sep and rest.count(":") == 1:
        return f"{domain.rjust(8, '0')[-8:]}:{rest}"
    return bus_id


class _Reader:
    """One pass over the devices; ``unknown`` collects the optional queries that failed."""

    def __init__(self, nvml: ModuleType) -> None:
        self.nvml = nvml
        self.unknown: list[str] = []

    def optional(self, fn_name: str, *args: Any) -> Any:
        """``nvml.<fn_name>(*args)``, or ``None`` (noted in ``unknown``) when it fails or is missing."""
        fn: Callable[..., Any] | None = getattr(self.nvml, fn_name, None)
        if fn is None:
            self.unknown.append(f"{fn_name}: not in this pynvml")
            return None
        try:
            return fn(*args)
        except self.nvml.NVMLError as exc:
            self.unknown.append(f"{fn_name}: {_text(exc)}")
            return None

    def read(self) -> Inventory:
        nvml = self.nvml
        driver = self.optional("nvmlSystemGetDriverVersion")
        cuda = self.optional("nvmlSystemGetCudaDriverVersion")
        system_unknown = tuple(self.unknown)
        count = int(nvml.nvmlDeviceGetCount())
        handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        bus_ids = [_text(nvml.nvmlDeviceGetPciInfo(h).busId) for h in handles]
        nvlinks = [self.nvlinks(h, bus_ids) for h in handles]
        gpus: list[GpuDevice] = []
        for i, handle in enumerate(handles):
            self.unknown = list(nvlinks[i].notes)
            gpus.append(self.device(i, handle, bus_ids[i], handles, nvlinks))
        return Inventory(
            driver_version=_text(driver) if driver is not None else None,
            cuda_version=(int(cuda) // 1000, int(cuda) % 1000 // 10) if cuda is not None else None,
            gpus=tuple(gpus),
            unknown=system_unknown,
        )

    def device(
        self,
        index: int,
        handle: Any,
        bus_id: str,
        handles: list[Any],
        nvlinks: list[_NvLinks],
    ) -> GpuDevice:
        nvml = self.nvml
        memory = nvml.nvmlDeviceGetMemoryInfo(handle)
        capability = self.optional("nvmlDeviceGetCudaComputeCapability", handle)
        mig_mode = self.optional("nvmlDeviceGetMigMode", handle)
        enable = nvml.NVML_DEVICE_MIG_ENABLE
        mig_enabled = mig_mode is not None and int(mig_mode[0]) == enable
        own = nvlinks[index]
        return GpuDevice(
            index=index,
            name=_text(nvml.nvmlDeviceGetName(handle)),
            uuid=_text(nvml.nvmlDeviceGetUUID(handle)),
            pci_bus_id=bus_id,
            memory_total_bytes=int(memory.total),
            memory_used_bytes=int(memory.used),
            compute_capability=(int(capability[0]), int(capability[1])) if capability is not None else None,
            mig_capable=mig_mode is not None,
            mig_enabled=mig_enabled,
            mig_pending=int(mig_mode[1]) == enable if mig_mode is not None else None,
            mig_devices=self.mig_devices(handle, int(memory.total)) if mig_enabled else (),
            nvlink_supported=own.supported,
            nvlink_active=own.active,
            nvswitch_links=own.switch,
            links=tuple(
                self.link(index, peer, handles, nvlinks) for peer in range(len(handles)) if peer != index
            ),
            health=self.health(handle),
            unknown=tuple(self.unknown),
        )

    def link(self, index: int, peer: int, handles: list[Any], nvlinks: list[_NvLinks]) -> Link:
        level = self.optional("nvmlDeviceGetTopologyCommonAncestor", handles[index], handles[peer])
        own, other = nvlinks[index], nvlinks[peer]
        direct = own.peers.get(peer, 0)
        through_switch = min(own.switch, other.switch)
        return Link(
            peer=peer,
            pcie=topology_word(self.nvml, int(level)) if level is not None else None,
            nvlinks=direct + through_switch,
        )

    def nvlinks(self, handle: Any, bus_ids: list[str]) -> _NvLinks:
        """Active NVLinks of one GPU: how many reach each local GPU, how many an NVSwitch."""
        saved, self.unknown = self.unknown, []
        try:
            return self._nvlinks(handle, bus_ids)
        finally:
            self.unknown = saved

    def _nvlinks(self, handle: Any, bus_ids: list[str]) -> _NvLinks:
        nvml = self.nvml
        result = _NvLinks()
        result.notes = self.unknown
        local = {_bus_key(b): i for i, b in enumerate(bus_ids)}
        max_links = int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 0))
        switch_type = getattr(nvml, "NVML_NVLINK_DEVICE_TYPE_SWITCH", None)
        gpu_type = getattr(nvml, "NVML_NVLINK_DEVICE_TYPE_GPU", None)
        for link in range(max_links):
            try:
                state = nvml.nvmlDeviceGetNvLinkState(handle, link)
            except nvml.NVMLError as exc:
                if link == 0:
                    # NotSupported on link 0: a GPU without NVLink (T4, L4, PCIe cards).
                    self.unknown.append(f"nvmlDeviceGetNvLinkState: {_text(exc)}")
                    result.supported = False
                    return result
                continue  # links past the GPU's own count answer InvalidArgument / NotSupported
            result.supported = True
            if int(state) != nvml.NVML_FEATURE_ENABLED:
                continue
            result.active += 1
            remote = self.optional("nvmlDeviceGetNvLinkRemotePciInfo", handle, link)
            kind = self.optional("nvmlDeviceGetNvLinkRemoteDeviceType", handle, link)
            peer = local.get(_bus_key(_text(remote.busId))) if remote is not None else None
            if kind is not None and int(kind) == switch_type:
                result.switch += 1
            elif peer is not None:
                result.peers[peer] = result.peers.get(peer, 0) + 1
            elif kind is None or int(kind) != gpu_type:
                result.switch += 1  # not a local GPU: an NVSwitch on drivers without the device type
        return result

    def mig_devices(self, handle: Any, parent_total_bytes: int) -> tuple[MigDevice, ...]:
        nvml = self.nvml
        count = self.optional("nvmlDeviceGetMaxMigDeviceCount", handle)
        found: list[MigDevice] = []
        for slot in range(int(count or 0)):
            try:
                mig = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
            except nvml.NVMLError_NotFound:
                continue  # an empty slot
            except nvml.NVMLError as exc:
                self.unknown.append(f"nvmlDeviceGetMigDeviceHandleByIndex({slot}): {_text(exc)}")
                continue
            found.append(self.mig_device(handle, mig, slot, parent_total_bytes))
        return tuple(found)

    def mig_device(self, parent: Any, mig: Any, slot: int, parent_total_bytes: int) -> MigDevice:
        uuid = self.optional("nvmlDeviceGetUUID", mig)
        attributes = self.optional("nvmlDeviceGetAttributes", mig)
        memory = self.optional("nvmlDeviceGetMemoryInfo", mig)
        gi_id = self.optional("nvmlDeviceGetGpuInstanceId", mig)
        ci_id = self.optional("nvmlDeviceGetComputeInstanceId", mig)
        gi_profile_id = None
        if gi_id is not None:
            instance = self.optional("nvmlDeviceGetGpuInstanceById", parent, gi_id)
            info = self.optional("nvmlGpuInstanceGetInfo", instance) if instance is not None else None
            gi_profile_id = int(info.profileId) if info is not None else None
        memory_mib: int | None = None
        profile = None
        gi_slices = ci_slices = multiprocessors = None
        if attributes is not None:
            memory_mib = int(attributes.memorySizeMB)
            gi_slices = int(attributes.gpuInstanceSliceCount)
            ci_slices = int(attributes.computeInstanceSliceCount)
            multiprocessors = int(attributes.multiprocessorCount)
            profile = mig_profile_name(gi_slices, ci_slices, memory_mib, parent_total_bytes)
        elif memory is not None:
            memory_mib = int(memory.total) // _MIB
        if profile is None and gi_profile_id is not None:
            # NVML's own name, "MIG 1g.10gb" (R525+), when the attributes were not readable.
            info = self.optional("nvmlDeviceGetGpuInstanceProfileInfoById", parent, gi_profile_id)
            if info is not None:
                profile = _text(info.name).removeprefix("MIG ").strip() or None
        return MigDevice(
            index=slot,
            uuid=_text(uuid) if uuid is not None else None,
            profile=profile,
            gpu_instance_id=int(gi_id) if gi_id is not None else None,
            compute_instance_id=int(ci_id) if ci_id is not None else None,
            gpu_instance_profile_id=gi_profile_id,
            memory_mib=memory_mib,
            gpu_instance_slices=gi_slices,
            compute_instance_slices=ci_slices,
            multiprocessors=multiprocessors,
        )

    def health(self, handle: Any) -> Health:
        nvml = self.nvml
        ecc_mode = self.optional("nvmlDeviceGetEccMode", handle)
        ecc_enabled = int(ecc_mode[0]) == nvml.NVML_FEATURE_ENABLED if ecc_mode is not None else None
        uncorrected, corrected = (
            nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
            nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED,
        )
        volatile, aggregate = nvml.NVML_VOLATILE_ECC, nvml.NVML_AGGREGATE_ECC

        def ecc(error_type: int, counter: int) -> int | None:
            if not ecc_enabled:
                return None
            value = self.optional("nvmlDeviceGetTotalEccErrors", handle, error_type, counter)
            return int(value) if value is not None else None

        retired: int | None = None
        for cause in (
            nvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
            nvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR,
        ):
            pages = self.optional("nvmlDeviceGetRetiredPages", handle, cause)
            if pages is None:
                break
            retired = (retired or 0) + len(pages)
        pending = (
            self.optional("nvmlDeviceGetRetiredPagesPendingStatus", handle) if retired is not None else None
        )
        rows = self.optional("nvmlDeviceGetRemappedRows", handle)
        return Health(
            ecc_enabled=ecc_enabled,
            ecc_uncorrected_volatile=ecc(uncorrected, volatile),
            ecc_uncorrected_aggregate=ecc(uncorrected, aggregate),
            ecc_corrected_volatile=ecc(corrected, volatile),
            retired_pages=retired,
            retired_pages_pending=int(pending) == nvml.NVML_FEATURE_ENABLED if pending is not None else None,
            remapped_rows_correctable=int(rows[0]) if rows is not None else None,
            remapped_rows_uncorrectable=int(rows[1]) if rows is not None else None,
            row_remap_pending=bool(rows[2]) if rows is not None else None,
            row_remap_failure=bool(rows[3]) if rows is not None else None,
        )


class _NvLinks:
    """What one GPU's active NVLinks reach."""

    def __init__(self) -> None:
        self.supported: bool | None = None
        self.active = 0
        self.switch = 0
        self.peers: dict[int, int] = {}
        self.notes: list[str] = []
