"""The fault model (``gpufleet.io/v1alpha1`` ``FaultModel``): how often GPUs and nodes fail, per GPU model,
and faults at given times for reproducible what-ifs.

Each fault class has the response NVIDIA documents for it (the XID catalogue's "Resolution" column,
https://docs.nvidia.com/deploy/xid-errors/): ``gpu`` (the device plugin marks the GPU unhealthy until a GPU
reset; pods on it fail), ``reboot`` (the node goes down and comes back after a reboot), ``replace`` (the
pods on the GPU fail; the node is drained for repair, PodDisruptionBudgets holding, and deleted; a new one
takes its place), ``lost`` (the node is gone at once, with its pods; a new one takes its place) or ``hang``
(the processes on the GPU stop computing and keep their GPUs, no XID: an NCCL hang; only a livenessProbe
has the kubelet restart them, ``sim.hung_processes``). XIDs the
NVIDIA device plugin ignores as application errors (``internal/rm/health.go``: 13, 31, 43, 45, 68, 109)
are not faults here.

Default rates per GPU-hour come from the Llama 3 paper's 54-day interruption table ("The Llama 3 Herd of
Models", Meta 2024, arXiv:2407.21783, Table 5: 419 unexpected interruptions on 16,384 H100 80GB GPUs, i.e.
per 21,233,664 GPU-hours); how a row splits between classes is an assumption, said at each rate
(``DEFAULT_RATES``; docs/faults.md has the table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Response = Literal["gpu", "reboot", "replace", "lost", "hang"]
#: the responses that take the node down with its kubelet: a user may taint it out-of-service
NODE_DOWN: tuple[Response, ...] = ("reboot", "lost")

#: GPU-hours of the Llama 3 405B pre-training snapshot: 16,384 GPUs for 54 days
LLAMA3_GPU_HOURS = 16_384 * 54 * 24

#: fault class -> (the response, the manifest's rate field)
CLASSES: dict[str, tuple[Response, str]] = {
    "xid-gpu-reset": ("gpu", "xidGpuReset"),
    "xid-node-reboot": ("reboot", "xidNodeReboot"),
    "xid-node-replace": ("replace", "xidNodeReplace"),
    "ecc-double-bit": ("gpu", "eccDoubleBit"),
    "row-remap-failure": ("replace", "rowRemapFailure"),
    "driver-crash": ("reboot", "driverCrash"),
    "node-loss": ("lost", "nodeLoss"),
    "nic": ("reboot", "nic"),
    "nvlink": ("gpu", "nvlink"),
    "process-hang": ("hang", "processHang"),
}

#: XIDs the device plugin treats as fatal, by class (NVIDIA XID catalogue, "Resolution"): 48 double-bit
#: ECC (reset), 63 row-remap pending (reset), 64 row-remap failure (replace the GPU), 74 NVLink (reset),
#: 79 fallen off the bus (reboot), 92 high single-bit ECC rate (reset), 94 contained ECC (reset),
#: 95 uncontained ECC (reset)
XIDS: dict[int, str] = {
    48: "ecc-double-bit",
    63: "xid-gpu-reset",
    64: "row-remap-failure",
    74: "nvlink",
    79: "xid-node-reboot",
    92: "xid-gpu-reset",
    94: "ecc-double-bit",
    95: "ecc-double-bit",
}

#: XIDs the NVIDIA device plugin skips as application errors (``internal/rm/health.go``)
APPLICATION_XIDS = frozenset({13, 31, 43, 45, 68, 109})


def _per_gpu_hour(interruptions: float) -> float:
    return interruptions / LLAMA3_GPU_HOURS


#: default rate per GPU-hour of each class, and where it comes from (Llama 3 Table 5 rows); a class
#: without one (``process-hang``: no public count of XID-less hangs) is drawn only where a rate is given
DEFAULT_RATES: dict[str, tuple[float, str]] = {
    "xid-gpu-reset": (_per_gpu_hour(19 + 17), "Llama 3: GPU SRAM (19) + GPU system processor (17)"),
    "xid-node-reboot": (_per_gpu_hour(148 / 2), "Llama 3: faulty GPU (148), half (assumption)"),
    "xid-node-replace": (_per_gpu_hour(148 / 2), "Llama 3: faulty GPU (148), half (assumption)"),
    "ecc-double-bit": (_per_gpu_hour(72), "Llama 3: GPU HBM3 memory (72)"),
    "row-remap-failure": (_per_gpu_hour(72 / 10), "assumption: a tenth of the HBM3 rate"),
    "driver-crash": (_per_gpu_hour(54 / 10), "assumption: a tenth of Llama 3's software bugs (54)"),
    "node-loss": (
        _per_gpu_hour(32 + 3 + 2 + 2 + 2 + 3),
        "Llama 3: host maintenance (32), power supply (3), chassis (2), CPU (2), memory (2), SSD (3)",
    ),
    "nic": (_per_gpu_hour(7 + 35), "Llama 3: NIC (7) + network switch and cable (35)"),
    "nvlink": (_per_gpu_hour(148 / 10), "assumption: a tenth of faulty GPU (148), which counts NVLink"),
}


@dataclass(frozen=True)
class FaultRates:
    """Rates per GPU-hour of each class for the nodes whose ``nvidia.com/gpu.product`` matches (``*``:
    any node with GPUs)."""

    product: str
    rates: dict[str, float]

    def matches(self, product: str | None) -> bool:
        return self.product == "*" or self.product == product


@dataclass(frozen=True)
class ScheduledFault:
    """A fault at a given time: ``gpu`` is the GPU index (a MIG node: the instance, in resource order);
    ``out_of_service_s``: a fault that takes the node down (``reboot``, ``lost``), after how long a user
    taints it ``node.kubernetes.io/out-of-service`` (``model.out_of_service``), None: never."""

    at_s: float
    node: str
    kind: str  # a class of ``CLASSES``
    gpu: int | None = None
    xid: int | None = None
    out_of_service_s: float | None = None


@dataclass(frozen=True)
class FaultResponse:
    """How long the response takes: the health check to notice (NVML XID events reach the device plugin
    at once; NPD or DCGM polling takes longer), a GPU reset, a node reboot."""

    detection_s: float = 0.0
    gpu_reset_s: float = 300.0  # assumption
    reboot_s: float = 600.0  # assumption


@dataclass(frozen=True)
class FaultModel:
    name: str
    rates: tuple[FaultRates, ...] = ()
    faults: tuple[ScheduledFault, ...] = ()
    response: FaultResponse = field(default_factory=FaultResponse)

    def rates_for(self, product: str | None) -> dict[str, float]:
        """The rates of the first entry that matches the product (none: no random faults)."""
        entry = next((r for r in self.rates if r.matches(product)), None)
        return {} if entry is None else entry.rates
