"""Reads the real GPU devices of this machine through NVML (``nvidia-ml-py``).

``read_inventory(nvml)`` turns what NVML answers into an ``Inventory`` (models, memory, MIG
mode and instances, NVLink and PCIe topology, ECC health); ``format_inventory`` prints it
as a table and ``node_manifest`` writes it as a ``v1`` Node with the labels GPU Feature
Discovery sets, which ``gpufleet.kube.load_scenario`` reads as scenario input.
``inventory_command`` is the ``gpufleet inventory`` command. Nothing here needs a GPU
to import: ``pynvml`` is imported only when the command runs.
"""

from gpufleet.devices.cli_inventory import inventory_command
from gpufleet.devices.inventory import (
    GpuDevice,
    Health,
    Inventory,
    Link,
    MigDevice,
    format_inventory,
    infer_mig_strategy,
    mig_profile_name,
    node_manifest,
)
from gpufleet.devices.nvml_reader import NvmlUnavailable, read_inventory

__all__ = [
    "GpuDevice",
    "Health",
    "Inventory",
    "Link",
    "MigDevice",
    "NvmlUnavailable",
    "format_inventory",
    "infer_mig_strategy",
    "inventory_command",
    "mig_profile_name",
    "node_manifest",
    "read_inventory",
]
