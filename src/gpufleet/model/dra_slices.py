"""ResourceSlices generated from GPU facts, as the NVIDIA DRA driver (``gpu.nvidia.com``) publishes
them: one pool per node, devices ``gpu-<index>`` with ``productName``, ``architecture``,
``cudaComputeCapability``, ``uuid``, ``index`` attributes and ``memory`` capacity."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable

from gpufleet.model.dra import AttributeValue, Device, DeviceID, ResourceSlice, VersionValue

NVIDIA_DRIVER = "gpu.nvidia.com"

#: (architecture, CUDA compute capability) by a product-name marker, for :func:`slices_for_node`.
_GPU_FAMILIES = (
    ("B200", "Blackwell", "10.0.0"),
    ("GB200", "Blackwell", "10.0.0"),
    ("H200", "Hopper", "9.0.0"),
    ("H100", "Hopper", "9.0.0"),
    ("GH200", "Hopper", "9.0.0"),
    ("L40", "Ada Lovelace", "8.9.0"),
    ("L4", "Ada Lovelace", "8.9.0"),
    ("A100", "Ampere", "8.0.0"),
    ("A10", "Ampere", "8.6.0"),
    ("T4", "Turing", "7.5.0"),
    ("V100", "Volta", "7.0.0"),
)
_DNS_LABEL_JUNK = re.compile(r"[^a-z0-9.-]+")


def gpu_family(product: str) -> tuple[str, str] | None:
    """``(architecture, cudaComputeCapability)`` of a known NVIDIA data-centre product name."""
    words = product.upper().replace("-", " ").split()
    for marker, architecture, capability in _GPU_FAMILIES:
        if marker in words:
            return architecture, capability
    return None


def slices_for_node(
    node_name: str,
    gpu_count: int,
    product: str,
    memory_bytes: int,
    driver: str = NVIDIA_DRIVER,
    *,
    brand: str = "Nvidia",
    architecture: str | None = None,
    cuda_compute_capability: str | None = None,
    driver_version: str | None = None,
    cuda_driver_version: str | None = None,
) -> ResourceSlice:
    """The ResourceSlice a node with ``gpu_count`` ``product`` GPUs publishes (one pool, named after the
    node). Architecture and compute capability default from the product name when it is a known one;
    versions are left out unless given. UUIDs are stable per node and index (``GPU-<uuid5>``)."""
    if architecture is None or cuda_compute_capability is None:
        family = gpu_family(product)
        if family is not None:
            architecture = architecture or family[0]
            cuda_compute_capability = cuda_compute_capability or family[1]
    devices = []
    for index in range(gpu_count):
        attributes: dict[str, AttributeValue] = {
            "type": "gpu",
            "uuid": f"GPU-{uuid.uuid5(uuid.NAMESPACE_DNS, f'{node_name}/gpu-{index}.{driver}')}",
            "index": index,
            "minor": index,
            "productName": product,
            "brand": brand,
        }
        if architecture:
            attributes["architecture"] = architecture
        for key, version in (
            ("cudaComputeCapability", cuda_compute_capability),
            ("driverVersion", driver_version),
            ("cudaDriverVersion", cuda_driver_version),
        ):
            if version:
                attributes[key] = VersionValue(version)
        devices.append(Device(f"gpu-{index}", attributes, {"memory": memory_bytes}))
    slice_name = _DNS_LABEL_JUNK.sub("-", f"{node_name}-{driver}".lower()).strip("-.")
    return ResourceSlice(slice_name, driver, node_name, tuple(devices), node_name=node_name)


def is_whole_gpu(device: Device, driver: str) -> bool:
    """Whether a DRA device is one whole GPU, so that it counts as one GPU-equivalent: a device of
    the NVIDIA DRA driver whose ``type`` is ``gpu`` (or unset; its ``mig`` devices are partitions)."""
    return driver == NVIDIA_DRIVER and device.attribute("type", driver) in (None, "gpu")


def node_gpus(slices: Iterable[ResourceSlice]) -> dict[DeviceID, str]:
    """The whole GPUs that node-local slices publish, each with its node."""
    return {
        DeviceID(s.driver, s.pool, d.name): s.node_name
        for s in slices
        if s.node_name is not None
        for d in s.devices
        if is_whole_gpu(d, s.driver)
    }
