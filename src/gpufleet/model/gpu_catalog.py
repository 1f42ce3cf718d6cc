"""A catalog of GPU models: memory, interconnect, default price and MIG profiles.

Sources:

* ``product``, ``memory_mib``, ``family``, ``compute_major/minor``: the values GPU Feature Discovery labels
  (``nvidia.com/gpu.product``, ``gpu.memory`` in MiB, ``gpu.family``, ``gpu.compute.*``; GFD README in
  ``NVIDIA/k8s-device-plugin``). Checked against published label dumps and ``nvidia-smi`` memory totals:
  T4 ``Tesla-T4`` 15360 (GFD README), L4 ``NVIDIA-L4`` 23034 ada-lovelace 8.9, A100 ``NVIDIA-A100-SXM4-40GB``
  40960 / ``-80GB`` 81920 ampere 8.0, H100 ``NVIDIA-H100-80GB-HBM3`` 81559 hopper 9.0, H200 ``NVIDIA-H200``
  143771, B200 ``NVIDIA-B200`` 183359, RTX 4090 24564, P100 PCIe 16280, V100 32GB 32510. A10 (23028) and
  V100 16GB (16160) are the usual ``nvidia-smi`` totals, not re-checked here.
* Compute capability and architecture: NVIDIA MIG User Guide "Supported GPUs" table for A100/H100/H200/B200
  (8.0, 9.0, 9.0, 10.0); CUDA compute-capability list for the others.
* NVLink bandwidth per GPU (total, GB/s): V100 SXM2 300, A100 SXM4 600, H100/H200 SXM 900, B200 1800 (NVIDIA
  product pages). The catalog's A100, H100, H200 and B200 are the SXM/HGX parts.
* MIG profiles: ``NVIDIA/mig-parted`` per-GPU defaults (see :mod:`gpufleet.model.mig`).
* Trace models: Alibaba ``cluster-trace-gpu-v2023`` (FGD, ATC'23) names ``T4``, ``P100``, ``V100M16``,
  ``V100M32``, ``A10``, ``G2`` and ``G3``. ``G2`` and ``G3`` are undisclosed; they are catalog entries with
  ``trace_model=True`` and unknown (``None``) specs. The trace names only memory for V100; the SXM2 form
  factor and P100's PCIe product string are assumptions.

``default_price_per_hour`` (USD per GPU-hour) is a round planning figure in the range of 2024-2025 public
on-demand cloud list prices per GPU; it is an assumption to be overridden per scenario, not a quote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpufleet.model.mig import MigProfile, standard_profiles

Interconnect = Literal["nvlink", "pcie"]
MIB = 2**20


@dataclass(frozen=True)
class GpuModel:
    """One GPU model. ``None`` marks a spec the source does not disclose (trace models)."""

    name: str
    product: str
    memory_mib: int | None
    family: str | None
    compute_major: int | None
    compute_minor: int | None
    interconnect: Interconnect | None
    nvlink_gbytes_per_s: int | None
    default_price_per_hour: float | None
    memory_gb: int | None = None
    mig_profiles: tuple[MigProfile, ...] = ()
    trace_model: bool = False

    @property
    def memory_bytes(self) -> int | None:
        """Memory as the driver reports it (``memory_mib`` MiB)."""
        return None if self.memory_mib is None else self.memory_mib * MIB

    @property
    def mig_capable(self) -> bool:
        return bool(self.mig_profiles)

    def mig_profile(self, name: str) -> MigProfile:
        """The profile called ``name`` (``"1g.10gb"``; a ``MIG `` or ``mig-`` prefix is accepted)."""
        key = name.removeprefix("MIG ").removeprefix("mig-")
        for profile in self.mig_profiles:
            if profile.name == key:
                return profile
        known = ", ".join(p.name for p in self.mig_profiles) or "none (not MIG-capable)"
        raise KeyError(f"{self.name} has no MIG profile {name!r}; known: {known}")


_A100_40 = standard_profiles(5, 10, 20, 40)
_A100_80 = standard_profiles(10, 20, 40, 80)
_H200 = standard_profiles(18, 35, 71, 141)
_B200 = standard_profiles(23, 45, 90, 180)

_MODELS: tuple[GpuModel, ...] = (
    GpuModel("T4", "Tesla-T4", 15360, "turing", 7, 5, "pcie", None, 0.35, 16),
    GpuModel("L4", "NVIDIA-L4", 23034, "ada-lovelace", 8, 9, "pcie", None, 0.80, 24),
    GpuModel("A10", "NVIDIA-A10", 23028, "ampere", 8, 6, "pcie", None, 1.00, 24),
    GpuModel("RTX-4090", "NVIDIA-GeForce-RTX-4090", 24564, "ada-lovelace", 8, 9, "pcie", None, 0.40, 24),
    GpuModel("A100-40GB", "NVIDIA-A100-SXM4-40GB", 40960, "ampere", 8, 0, "nvlink", 600, 3.00, 40, _A100_40),
    GpuModel("A100-80GB", "NVIDIA-A100-SXM4-80GB", 81920, "ampere", 8, 0, "nvlink", 600, 4.00, 80, _A100_80),
    GpuModel("H100-80GB", "NVIDIA-H100-80GB-HBM3", 81559, "hopper", 9, 0, "nvlink", 900, 6.00, 80, _A100_80),
    GpuModel("H200-141GB", "NVIDIA-H200", 143771, "hopper", 9, 0, "nvlink", 900, 8.00, 141, _H200),
    GpuModel("B200", "NVIDIA-B200", 183359, "blackwell", 10, 0, "nvlink", 1800, 11.00, 180, _B200),
    GpuModel("P100", "Tesla-P100-PCIE-16GB", 16280, "pascal", 6, 0, "pcie", None, 0.60, 16),
    GpuModel("V100-16GB", "Tesla-V100-SXM2-16GB", 16160, "volta", 7, 0, "nvlink", 300, 1.50, 16),
    GpuModel("V100-32GB", "Tesla-V100-SXM2-32GB", 32510, "volta", 7, 0, "nvlink", 300, 2.00, 32),
    GpuModel("G2", "G2", None, None, None, None, None, None, None, trace_model=True),
    GpuModel("G3", "G3", None, None, None, None, None, None, None, trace_model=True),
)

#: Catalog key -> model.
CATALOG: dict[str, GpuModel] = {m.name: m for m in _MODELS}

#: GPU model names used by the Alibaba ``cluster-trace-gpu-v2023`` node list -> catalog key.
TRACE_NAMES: dict[str, str] = {
    "T4": "T4",
    "P100": "P100",
    "V100M16": "V100-16GB",
    "V100M32": "V100-32GB",
    "A10": "A10",
    "G2": "G2",
    "G3": "G3",
}

#: Other spellings accepted by :func:`lookup` (older drivers omit the ``NVIDIA-`` prefix).
ALIASES: dict[str, str] = {
    "A100-SXM4-40GB": "A100-40GB",
    "A100-SXM4-80GB": "A100-80GB",
    "H100": "H100-80GB",
    "H200": "H200-141GB",
    "RTX4090": "RTX-4090",
    "NVIDIA-Tesla-T4": "T4",
}

_BY_PRODUCT: dict[str, str] = {m.product: m.name for m in _MODELS}


def lookup(name_or_product: str) -> GpuModel:
    """A model by catalog key, GFD product string (``NVIDIA-H100-80GB-HBM3``), trace name or alias.

    A GFD product with a sharing suffix (``-MIG-1g.10gb``, ``-SHARED``) resolves to the physical GPU.
    Raises ``KeyError`` listing the known names.
    """
    key = name_or_product.strip()
    key = key.removesuffix("-SHARED")
    if "-MIG-" in key:
        key = key.split("-MIG-", 1)[0]
    if key in CATALOG:
        return CATALOG[key]
    for table in (_BY_PRODUCT, TRACE_NAMES, ALIASES):
        if key in table:
            return CATALOG[table[key]]
    known = sorted({*CATALOG, *_BY_PRODUCT, *TRACE_NAMES, *ALIASES})
    raise KeyError(f"unknown GPU model {name_or_product!r}; known: {', '.join(known)}")
