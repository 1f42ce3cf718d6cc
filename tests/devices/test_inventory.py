"""``gpufleet inventory`` against stand-ins for ``pynvml`` that answer as nvidia-ml-py does.

Each fake is a module holding pynvml's own constants, struct classes and ``NVMLError_*``
classes; its functions return real ``c_nvmlMemory_t``, ``nvmlPciInfo_t``,
``c_nvmlDeviceAttributes`` ... and raise errors the way ``_nvmlCheckReturn`` does
(``NVMLError(NVML_ERROR_NOT_SUPPORTED)`` is an ``NVMLError_NotSupported``). No GPU is needed.
"""

from __future__ import annotations

import ctypes
import io
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpufleet.devices import (
    inventory_command,
    mig_profile_name,
    node_manifest,
    read_inventory,
)
from gpufleet.devices.inventory import gpu_family, host_memory_kib, label_value
from gpufleet.kube import load_scenario

pynvml = pytest.importorskip("pynvml")

MIB = 1024 * 1024
SWITCH = pynvml.NVML_NVLINK_DEVICE_TYPE_SWITCH
GPU_TYPE = pynvml.NVML_NVLINK_DEVICE_TYPE_GPU


def nvml_error(code: int) -> Exception:
    """What pynvml raises for ``code``: ``NVMLError(code)`` is the matching subclass."""
    error: Exception = pynvml.NVMLError(code)
    return error


@dataclass
class FakeMig:
    slot: int
    gi_slices: int
    ci_slices: int
    memory_mb: int
    sms: int
    gi_id: int
    ci_id: int = 0
    gi_profile_id: int = 19


@dataclass
class FakeLink:
    active: bool
    remote_bus: str
    remote_type: int | None = SWITCH  # None: the query raises FunctionNotFound (old driver)


@dataclass
class FakeGpu:
    name: str
    bus_id: str
    total_mib: int
    used_mib: int = 512
    capability: tuple[int, int] | None = (9, 0)
    mig_mode: tuple[int, int] | None = (0, 0)  # None: NotSupported
    migs: list[FakeMig] = field(default_factory=list)
    max_mig: int = 7
    nvlinks: list[FakeLink] | None = None  # None: NotSupported; links past the list: InvalidArgument
    ecc_mode: tuple[int, int] | None = (1, 1)
    ecc_errors: dict[tuple[int, int], int] = field(default_factory=dict)
    retired: dict[int, list[int]] | None = None  # None: NotSupported (row-remapping GPUs)
    remapped: tuple[int, int, int, int] | None = (0, 0, 0, 0)
    uuid: str = ""


def handle_for(registry: dict[int, Any], value: Any, struct: type[ctypes.Structure], pointer: Any) -> Any:
    """A real, non-NULL pynvml handle (a ctypes pointer) that the fake can map back to ``value``."""
    target = struct()
    handle = pointer(target)
    registry[ctypes.addressof(target)] = (value, target)
    return handle


def fake_nvml(
    gpus: list[FakeGpu],
    topology: Callable[[int, int], int] | None = None,
    init_error: int | None = None,
    driver: str = "550.54.15",
    cuda: int = 12040,
) -> types.ModuleType:
    """A module that answers like pynvml for ``gpus``; ``topology(i, j)`` gives ``NVML_TOPOLOGY_*``."""
    m = types.ModuleType("fake_pynvml")
    for name, value in vars(pynvml).items():
        if name.startswith(("NVML", "c_nvml", "nvmlPciInfo", "struct_c_nvml")) and (
            isinstance(value, type) or not callable(value)
        ):
            setattr(m, name, value)
    devices: dict[int, Any] = {}
    instances: dict[int, Any] = {}
    for i, g in enumerate(gpus):
        g.uuid = g.uuid or f"GPU-{i:08x}-0000-0000-0000-000000000000"
    handles = [
        handle_for(devices, ("gpu", i), pynvml.struct_c_nvmlDevice_t, pynvml.c_nvmlDevice_t)
        for i in range(len(gpus))
    ]
    mig_handles = {
        (i, mig.slot): handle_for(
            devices, ("mig", i, mig), pynvml.struct_c_nvmlDevice_t, pynvml.c_nvmlDevice_t
        )
        for i, g in enumerate(gpus)
        for mig in g.migs
    }
    m.calls = []  # type: ignore[attr-defined]

    def lookup(handle: Any) -> tuple[Any, ...]:
        value: tuple[Any, ...] = devices[ctypes.addressof(handle.contents)][0]
        return value

    def gpu(handle: Any) -> FakeGpu:
        kind, index, *_ = lookup(handle)
        assert kind == "gpu", "a GPU query got a MIG handle"
        return gpus[index]

    def mig(handle: Any) -> FakeMig:
        kind, _, found = lookup(handle)
        assert kind == "mig"
        result: FakeMig = found
        return result

    def not_supported() -> Exception:
        return nvml_error(pynvml.NVML_ERROR_NOT_SUPPORTED)

    def nvmlInit() -> None:
        m.calls.append("nvmlInit")  # type: ignore[attr-defined]
        if init_error is not None:
            raise nvml_error(init_error)

    def nvmlShutdown() -> None:
        m.calls.append("nvmlShutdown")  # type: ignore[attr-defined]

    def nvmlDeviceGetHandleByIndex(index: int) -> Any:
        if not 0 <= index < len(gpus):
            raise nvml_error(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return handles[index]

    def nvmlDeviceGetName(handle: Any) -> str:
        return gpu(handle).name

    def nvmlDeviceGetUUID(handle: Any) -> str:
        kind, index, *rest = lookup(handle)
        if kind == "mig":
            return f"MIG-{index}-{rest[0].slot}"
        return gpus[index].uuid

    def nvmlDeviceGetPciInfo(handle: Any) -> Any:
        info = pynvml.nvmlPciInfo_t()
        info.busId = gpu(handle).bus_id
        info.busIdLegacy = gpu(handle).bus_id[4:]
        return info

    def nvmlDeviceGetMemoryInfo(handle: Any) -> Any:
        kind, index, *rest = lookup(handle)
        if kind == "mig":
            total = rest[0].memory_mb * MIB
            return pynvml.c_nvmlMemory_t(total=total, free=total, used=0)
        g = gpus[index]
        return pynvml.c_nvmlMemory_t(
            total=g.total_mib * MIB, free=(g.total_mib - g.used_mib) * MIB, used=g.used_mib * MIB
        )

    def nvmlDeviceGetCudaComputeCapability(handle: Any) -> tuple[int, int]:
        g = gpu(handle)
        if g.capability is None:
            raise not_supported()
        return g.capability

    def nvmlDeviceGetMigMode(handle: Any) -> list[int]:
        g = gpu(handle)
        if g.mig_mode is None:
            raise not_supported()
        return list(g.mig_mode)

    def nvmlDeviceGetMaxMigDeviceCount(handle: Any) -> int:
        g = gpu(handle)
        if g.mig_mode is None:
            raise not_supported()
        return g.max_mig

    def nvmlDeviceGetMigDeviceHandleByIndex(handle: Any, index: int) -> Any:
        _, i, *_ = lookup(handle)
        if (i, index) not in mig_handles:
            raise nvml_error(pynvml.NVML_ERROR_NOT_FOUND)
        return mig_handles[(i, index)]

    def nvmlDeviceGetAttributes(handle: Any) -> Any:
        found = mig(handle)
        return pynvml.c_nvmlDeviceAttributes(
            multiprocessorCount=found.sms,
            gpuInstanceSliceCount=found.gi_slices,
            computeInstanceSliceCount=found.ci_slices,
            memorySizeMB=found.memory_mb,
        )

    def nvmlDeviceGetGpuInstanceId(handle: Any) -> int:
        return mig(handle).gi_id

    def nvmlDeviceGetComputeInstanceId(handle: Any) -> int:
        return mig(handle).ci_id

    def nvmlDeviceGetGpuInstanceById(handle: Any, gi_id: int) -> Any:
        kind, i, *_ = lookup(handle)
        assert kind == "gpu"
        found = next((x for x in gpus[i].migs if x.gi_id == gi_id), None)
        if found is None:
            raise nvml_error(pynvml.NVML_ERROR_NOT_FOUND)
        return handle_for(instances, found, pynvml.struct_c_nvmlGpuInstance_t, pynvml.c_nvmlGpuInstance_t)

    def nvmlGpuInstanceGetInfo(instance: Any) -> Any:
        found: FakeMig = instances[ctypes.addressof(instance.contents)][0]
        info = pynvml.c_nvmlGpuInstanceInfo_t()
        info.id, info.profileId = found.gi_id, found.gi_profile_id
        return info

    def nvmlDeviceGetTopologyCommonAncestor(a: Any, b: Any) -> int:
        if topology is None:
            raise not_supported()
        return topology(lookup(a)[1], lookup(b)[1])

    def link_of(handle: Any, link: int) -> FakeLink:
        g = gpu(handle)
        if g.nvlinks is None:
            raise not_supported()
        if link >= len(g.nvlinks):
            raise nvml_error(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return g.nvlinks[link]

    def nvmlDeviceGetNvLinkState(handle: Any, link: int) -> int:
        active: int = pynvml.NVML_FEATURE_ENABLED if link_of(handle, link).active else 0
        return active

    def nvmlDeviceGetNvLinkRemotePciInfo(handle: Any, link: int) -> Any:
        info = pynvml.nvmlPciInfo_t()
        info.busId = link_of(handle, link).remote_bus
        return info

    def nvmlDeviceGetNvLinkRemoteDeviceType(handle: Any, link: int) -> int:
        kind = link_of(handle, link).remote_type
        if kind is None:
            raise nvml_error(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
        return kind

    def nvmlDeviceGetEccMode(handle: Any) -> list[int]:
        g = gpu(handle)
        if g.ecc_mode is None:
            raise not_supported()
        return list(g.ecc_mode)

    def nvmlDeviceGetTotalEccErrors(handle: Any, error_type: int, counter: int) -> int:
        g = gpu(handle)
        if g.ecc_mode is None or not g.ecc_mode[0]:
            raise not_supported()
        return g.ecc_errors.get((error_type, counter), 0)

    def nvmlDeviceGetRetiredPages(handle: Any, cause: int) -> list[int]:
        g = gpu(handle)
        if g.retired is None:
            raise not_supported()
        return g.retired.get(cause, [])

    def nvmlDeviceGetRetiredPagesPendingStatus(handle: Any) -> int:
        if gpu(handle).retired is None:
            raise not_supported()
        return 0

    def nvmlDeviceGetRemappedRows(handle: Any) -> tuple[int, int, int, int]:
        g = gpu(handle)
        if g.remapped is None:
            raise not_supported()
        return g.remapped

    functions: dict[str, Callable[..., Any]] = {
        name: value for name, value in locals().items() if name.startswith("nvml") and callable(value)
    }
    for name, fn in functions.items():
        setattr(m, name, fn)
    m.nvmlSystemGetDriverVersion = lambda: driver  # type: ignore[attr-defined]
    m.nvmlSystemGetCudaDriverVersion = lambda: cuda  # type: ignore[attr-defined]
    m.nvmlDeviceGetCount = lambda: len(gpus)  # type: ignore[attr-defined]
    return m


# --- machines -------------------------------------------------------------------------------

H100 = "NVIDIA H100 80GB HBM3"
H100_MIB = 81559


def hgx_h100(errors_on: int | None = None, remote_type: int | None = SWITCH) -> types.ModuleType:
    """8 x H100 SXM, 18 NVLinks each to the NVSwitches; GPUs 0-3 and 4-7 on two NUMA nodes."""
    buses = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
    gpus = []
    for i, bus in enumerate(buses):
        links = [FakeLink(True, f"00000000:{0x05 + link % 4:02x}:00.0", remote_type) for link in range(18)]
        g = FakeGpu(H100, f"00000000:{bus}:00.0", H100_MIB, nvlinks=links)
        if i == errors_on:
            uncorrected = pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
            g.ecc_errors = {
                (uncorrected, pynvml.NVML_VOLATILE_ECC): 2,
                (uncorrected, pynvml.NVML_AGGREGATE_ECC): 5,
            }
            g.remapped = (0, 1, 1, 0)
        gpus.append(g)

    def topology(a: int, b: int) -> int:
        level: int = pynvml.NVML_TOPOLOGY_NODE if a // 4 == b // 4 else pynvml.NVML_TOPOLOGY_SYSTEM
        return level

    return fake_nvml(gpus, topology)


def pcie_box() -> types.ModuleType:
    """2 x L40S on one PCIe host bridge, no NVLink, no MIG, page retirement supported."""
    gpus = [
        FakeGpu(
            "NVIDIA L40S",
            f"00000000:{bus}:00.0",
            46068,
            capability=(8, 9),
            mig_mode=None,
            nvlinks=None,
            retired={},
            remapped=None,
        )
        for bus in ("41", "61")
    ]
    return fake_nvml(gpus, lambda a, b: pynvml.NVML_TOPOLOGY_HOSTBRIDGE)


def one_g_10gb(slot: int) -> FakeMig:
    return FakeMig(slot, gi_slices=1, ci_slices=1, memory_mb=9856, sms=16, gi_id=7 + slot, gi_profile_id=19)


def mig_h100(migs: list[FakeMig] | None = None, mode: tuple[int, int] = (1, 1)) -> types.ModuleType:
    """One H100 with MIG on, seven 1g.10gb instances unless ``migs`` says otherwise."""
    links = [FakeLink(False, "00000000:00:00.0") for _ in range(18)]
    gpu = FakeGpu(H100, "00000000:18:00.0", H100_MIB, mig_mode=mode, nvlinks=links)
    gpu.migs = [one_g_10gb(slot) for slot in range(7)] if migs is None else migs
    return fake_nvml([gpu])


def t4() -> types.ModuleType:
    """One T4: MIG and NVLink queries raise NVMLError_NotSupported, so does row remapping."""
    gpu = FakeGpu(
        "Tesla T4",
        "00000000:00:1e.0",
        15360,
        capability=(7, 5),
        mig_mode=None,
        nvlinks=None,
        retired={},
        remapped=None,
    )
    return fake_nvml([gpu], driver="535.161.08", cuda=12020)


def run(
    module: types.ModuleType, as_yaml: bool = False, node: str | None = "gpu-node"
) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = inventory_command(as_yaml, node, nvml=lambda: module, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def manifest(module: types.ModuleType, **kw: Any) -> dict[str, Any]:
    return node_manifest(read_inventory(module), "gpu-node", cpus=224, memory_kib=2113362456, **kw)


def loads(tmp_path: Path, doc: dict[str, Any]) -> Any:
    """The one node gpufleet's own loader reads from ``doc`` written as YAML."""
    path = tmp_path / "node.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    scenario = load_scenario([path])
    assert len(scenario.nodes) == 1
    assert scenario.warnings == []
    return scenario.nodes[0]


# --- 8 x H100 SXM with NVSwitch ---------------------------------------------------------------


def test_hgx_h100_reads_every_gpu_and_the_nvswitch_fabric() -> None:
    module = hgx_h100()
    inv = read_inventory(module)
    assert module.calls == ["nvmlInit", "nvmlShutdown"]
    assert inv.driver_version == "550.54.15"
    assert inv.cuda_version == (12, 4)
    assert [g.pci_bus_id for g in inv.gpus][:2] == ["00000000:18:00.0", "00000000:2a:00.0"]
    first = inv.gpus[0]
    assert (first.name, first.memory_mib, first.family) == (H100, H100_MIB, "hopper")
    assert first.mig_capable and not first.mig_enabled
    assert (first.nvlink_active, first.nvswitch_links) == (18, 18)
    assert [link.word for link in first.links] == ["NV18"] * 7
    assert [link.pcie for link in first.links] == ["NODE"] * 3 + ["SYS"] * 4
    assert first.health.summary() == "ok"


def test_hgx_h100_table() -> None:
    code, out, err = run(hgx_h100())
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "driver 550.54.15, CUDA 12.4, 8 GPUs"
    assert lines[1].split() == ["GPU", "NAME", "MEMORY", "MIG", "NVLINK", "HEALTH"]
    assert lines[2].split() == ["0", *H100.split(), "79.6", "GiB", "disabled", "NV18", "to", "1-7", "ok"]
    assert lines[9].split()[-4:] == ["NV18", "to", "0-6", "ok"]
    matrix = lines[11:]
    assert matrix[0].split() == [f"GPU{i}" for i in range(8)]
    assert matrix[1].split() == ["GPU0", "X"] + ["NV18"] * 7
    assert matrix[8].split() == ["GPU7"] + ["NV18"] * 7 + ["X"]


def test_hgx_h100_without_remote_device_type_still_finds_the_switches() -> None:
    inv = read_inventory(hgx_h100(remote_type=None))
    assert inv.gpus[0].nvswitch_links == 18
    assert inv.gpus[0].link_to(5) is not None
    assert inv.gpus[0].link_to(5).word == "NV18"  # type: ignore[union-attr]
    assert any("nvmlDeviceGetNvLinkRemoteDeviceType: Function Not Found" in u for u in inv.gpus[0].unknown)


def test_hgx_h100_manifest_labels_and_capacity(tmp_path: Path) -> None:
    doc = manifest(hgx_h100())
    labels = doc["metadata"]["labels"]
    assert doc["apiVersion"] == "v1" and doc["kind"] == "Node"
    assert doc["metadata"]["name"] == "gpu-node"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert labels["nvidia.com/gpu.memory"] == "81559"
    assert labels["nvidia.com/gpu.count"] == "8"
    assert labels["nvidia.com/gpu.family"] == "hopper"
    assert labels["nvidia.com/gpu.compute.major"] == "9"
    assert labels["nvidia.com/mig.capable"] == "true"
    assert labels["nvidia.com/mig.strategy"] == "none"
    assert labels["nvidia.com/cuda.driver.major"] == "550"
    assert labels["nvidia.com/cuda.runtime.minor"] == "4"
    assert doc["status"]["capacity"] == {
        "cpu": "224",
        "memory": "2113362456Ki",
        "pods": "110",
        "nvidia.com/gpu": "8",
    }
    node = loads(tmp_path, doc)
    assert node.name == "gpu-node"
    assert node.allocatable["nvidia.com/gpu"] == 8
    assert node.labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"


def test_ecc_errors_are_reported() -> None:
    code, out, _ = run(hgx_h100(errors_on=3))
    assert code == 0
    row = out.splitlines()[2 + 3]
    assert row.startswith("3 ")
    assert row.endswith(
        "2 uncorrected ECC (volatile), 5 uncorrected ECC (aggregate), 1 rows remapped, "
        "row remap pending reset"
    )
    health = read_inventory(hgx_h100(errors_on=3)).gpus[3].health
    assert (health.ecc_uncorrected_volatile, health.ecc_uncorrected_aggregate) == (2, 5)
    assert health.ecc_corrected_volatile == 0
    assert health.retired_pages is None  # H100 remaps rows; page retirement is NotSupported
    assert health.row_remap_pending is True and health.row_remap_failure is False


# --- 2 x PCIe --------------------------------------------------------------------------------


def test_pcie_box_table_and_manifest(tmp_path: Path) -> None:
    code, out, _ = run(pcie_box())
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "driver 550.54.15, CUDA 12.4, 2 GPUs"
    assert lines[2].split() == ["0", "NVIDIA", "L40S", "45.0", "GiB", "n/a", "n/a", "ok"]
    assert lines[6].split() == ["GPU0", "X", "PHB"]
    assert lines[7].split() == ["GPU1", "PHB", "X"]
    inv = read_inventory(pcie_box())
    assert inv.gpus[0].health.retired_pages == 0
    assert inv.gpus[0].health.retired_pages_pending is False
    doc = manifest(pcie_box())
    labels = doc["metadata"]["labels"]
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-L40S"
    assert labels["nvidia.com/gpu.family"] == "ada-lovelace"
    assert labels["nvidia.com/mig.capable"] == "false"
    assert labels["nvidia.com/mig.strategy"] == "none"
    assert doc["status"]["capacity"]["nvidia.com/gpu"] == "2"
    assert loads(tmp_path, doc).capacity["nvidia.com/gpu"] == 2


# --- MIG -------------------------------------------------------------------------------------


def test_mig_h100_seven_1g_10gb_is_mixed(tmp_path: Path) -> None:
    inv = read_inventory(mig_h100())
    gpu = inv.gpus[0]
    assert gpu.mig_enabled and gpu.mig_pending
    assert [m.profile for m in gpu.mig_devices] == ["1g.10gb"] * 7
    first = gpu.mig_devices[0]
    assert (first.gpu_instance_id, first.gpu_instance_profile_id, first.memory_mib) == (7, 19, 9856)
    assert first.uuid == "MIG-0-0"
    assert gpu.nvlink_supported is True and gpu.nvlink_active == 0

    code, out, _ = run(mig_h100())
    assert code == 0
    assert out.splitlines()[2].split()[7:] == ["enabled", "(7x1g.10gb)", "none", "ok"]

    doc = manifest(mig_h100())
    labels = doc["metadata"]["labels"]
    assert labels["nvidia.com/mig.strategy"] == "mixed"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert labels["nvidia.com/mig-1g.10gb.count"] == "7"
    assert labels["nvidia.com/mig-1g.10gb.memory"] == "9856"
    assert labels["nvidia.com/mig-1g.10gb.multiprocessors"] == "16"
    assert labels["nvidia.com/mig-1g.10gb.slices.gi"] == "1"
    capacity = doc["status"]["capacity"]
    assert capacity["nvidia.com/mig-1g.10gb"] == "7"
    assert "nvidia.com/gpu" not in capacity
    node = loads(tmp_path, doc)
    assert node.allocatable["nvidia.com/mig-1g.10gb"] == 7


def test_mig_single_strategy_on_request() -> None:
    doc = manifest(mig_h100(), mig_strategy="single")
    labels = doc["metadata"]["labels"]
    assert labels["nvidia.com/mig.strategy"] == "single"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"
    assert labels["nvidia.com/gpu.count"] == "7"
    assert labels["nvidia.com/gpu.memory"] == "9856"
    assert doc["status"]["capacity"]["nvidia.com/gpu"] == "7"
    mixed = [one_g_10gb(0), FakeMig(2, 2, 2, 19968, 32, gi_id=3, gi_profile_id=14)]
    with pytest.raises(ValueError, match="single MIG strategy"):
        manifest(mig_h100(mixed), mig_strategy="single")


def test_mig_mixed_profiles_empty_slots_and_pending_mode(tmp_path: Path) -> None:
    migs = [
        FakeMig(0, 3, 3, 40192, 60, gi_id=1, gi_profile_id=9),
        FakeMig(4, 2, 2, 19968, 32, gi_id=5, gi_profile_id=14),
        FakeMig(6, 2, 1, 19968, 16, gi_id=6, ci_id=1, gi_profile_id=14),
    ]
    inv = read_inventory(mig_h100(migs))
    assert [m.profile for m in inv.gpus[0].mig_devices] == ["3g.40gb", "2g.20gb", "1c.2g.20gb"]
    assert not [u for u in inv.gpus[0].unknown if "MigDeviceHandle" in u]  # empty slots are NotFound
    capacity = manifest(mig_h100(migs))["status"]["capacity"]
    assert {k: v for k, v in capacity.items() if k.startswith("nvidia.com/")} == {
        "nvidia.com/mig-1c.2g.20gb": "1",
        "nvidia.com/mig-2g.20gb": "1",
        "nvidia.com/mig-3g.40gb": "1",
    }
    loads(tmp_path, manifest(mig_h100(migs)))

    _, out, _ = run(mig_h100([], mode=(0, 1)))
    assert "disabled, enabled after reset" in out.splitlines()[2]


def test_mig_profile_names_follow_the_device_plugin() -> None:
    h100 = H100_MIB * MIB
    assert mig_profile_name(1, 1, 9856, h100) == "1g.10gb"
    assert mig_profile_name(1, 1, 19968, h100) == "1g.20gb"
    assert mig_profile_name(3, 3, 40192, h100) == "3g.40gb"
    assert mig_profile_name(7, 7, 80896, h100) == "7g.80gb"
    a100_40 = 40960 * MIB
    assert mig_profile_name(1, 1, 4864, a100_40) == "1g.5gb"
    assert mig_profile_name(7, 3, 40192, a100_40) == "3c.7g.40gb"


# --- T4: MIG and NVLink NotSupported ---------------------------------------------------------


def test_t4_not_supported_queries_are_unknown_not_fatal(tmp_path: Path) -> None:
    inv = read_inventory(t4())
    gpu = inv.gpus[0]
    assert (gpu.mig_capable, gpu.mig_enabled, gpu.mig_pending) == (False, False, None)
    assert gpu.nvlink_supported is False
    assert gpu.health.remapped_rows_uncorrectable is None
    assert "nvmlDeviceGetMigMode: Not Supported" in gpu.unknown
    assert "nvmlDeviceGetNvLinkState: Not Supported" in gpu.unknown
    assert "nvmlDeviceGetRemappedRows: Not Supported" in gpu.unknown

    code, out, _ = run(t4())
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "driver 535.161.08, CUDA 12.2, 1 GPU"
    assert lines[2].split() == ["0", "Tesla", "T4", "15.0", "GiB", "n/a", "n/a", "ok"]
    assert lines[4].split() == ["GPU0"]
    assert lines[5].split() == ["GPU0", "X"]

    doc = manifest(t4())
    labels = doc["metadata"]["labels"]
    assert labels["nvidia.com/gpu.product"] == "Tesla-T4"
    assert labels["nvidia.com/gpu.family"] == "turing"
    assert labels["nvidia.com/gpu.memory"] == "15360"
    assert labels["nvidia.com/cuda.driver.rev"] == "08"
    assert doc["status"]["capacity"]["nvidia.com/gpu"] == "1"
    assert loads(tmp_path, doc).capacity["nvidia.com/gpu"] == 1


def test_yaml_output_is_the_manifest(tmp_path: Path) -> None:
    code, out, err = run(t4(), as_yaml=True, node="t4-node")
    assert (code, err) == (0, "")
    doc = yaml.safe_load(out)
    assert doc["metadata"]["name"] == "t4-node"
    assert doc["metadata"]["labels"]["kubernetes.io/hostname"] == "t4-node"
    assert loads(tmp_path, doc).name == "t4-node"


# --- no driver -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded"),
        (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found"),
    ],
)
def test_no_driver_is_one_line_and_exit_1(code: int, reason: str) -> None:
    module = fake_nvml([], init_error=code)
    status, out, err = run(module)
    assert (status, out) == (1, "")
    assert err == f"no NVIDIA driver found: {reason}\n"
    assert module.calls == ["nvmlInit"]


def test_no_pynvml_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    out, err = io.StringIO(), io.StringIO()
    assert inventory_command(False, None, out=out, err=err) == 1
    assert out.getvalue() == ""
    lines = err.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("no NVIDIA driver found: nvidia-ml-py is not installed")


def test_other_nvml_errors_are_one_line_and_exit_1() -> None:
    module = fake_nvml([], init_error=pynvml.NVML_ERROR_NO_PERMISSION)
    status, _, err = run(module)
    assert (status, err) == (1, "NVML error: Insufficient Permissions\n")


def test_no_gpus_prints_a_header_only() -> None:
    code, out, _ = run(fake_nvml([]))
    assert (code, out) == (0, "driver 550.54.15, CUDA 12.4, 0 GPUs\n")


# --- helpers ---------------------------------------------------------------------------------


def test_families_labels_and_meminfo(tmp_path: Path) -> None:
    assert [gpu_family(c) for c in [(7, 0), (7, 5), (8, 0), (8, 9), (9, 0), (10, 0), (12, 0), (99, 0)]] == [
        "volta",
        "turing",
        "ampere",
        "ada-lovelace",
        "hopper",
        "blackwell",
        "blackwell",
        "undefined",
    ]
    assert label_value("NVIDIA A100-SXM4-80GB") == "NVIDIA-A100-SXM4-80GB"
    assert label_value("NVIDIA RTX 6000 Ada Generation (x)") == "NVIDIA-RTX-6000-Ada-Generation-x"
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       2113362456 kB\nMemFree:        100 kB\n")
    assert host_memory_kib(meminfo) == 2113362456
    assert host_memory_kib(tmp_path / "missing") is None
