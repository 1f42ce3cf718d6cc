"""Fractional GPU requests as users write them: KAI Scheduler's annotations and HAMi's resources.

* KAI (``docs/gpu-sharing`` of NVIDIA/KAI-Scheduler): pod annotation ``gpu-fraction`` (a share of
  one GPU, ``0 < f <= 1``) or ``gpu-memory`` (MiB of one GPU), and ``gpu-fraction-num-devices``
  (how many GPUs get that share, default 1). Such a pod does not also request ``nvidia.com/gpu``.
* HAMi (Project-HAMi/HAMi README): container resources ``nvidia.com/gpu`` (vGPUs, each on a
  different GPU) with ``nvidia.com/gpumem`` (MiB per vGPU) or ``nvidia.com/gpumem-percentage``
  (percent of the GPU's memory) and ``nvidia.com/gpucores`` (percent of its compute, 0-100).
  Nodes do not advertise the last three; they are taken out of the pod's requests here, and the
  ``nvidia.com/gpu`` count becomes the share's count. ``deviceSplitCount`` (at most 10 vGPUs per
  GPU by default) is not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from gpufleet.kube.problems import Reporter, invalid
from gpufleet.model.gpu_share import MILLI, GpuShare
from gpufleet.model.resources import GPU, Resources

KAI_FRACTION = "gpu-fraction"
KAI_MEMORY = "gpu-memory"
KAI_DEVICES = "gpu-fraction-num-devices"
HAMI_MEMORY = "nvidia.com/gpumem"
HAMI_MEMORY_PERCENT = "nvidia.com/gpumem-percentage"
HAMI_CORES = "nvidia.com/gpucores"
HAMI_RESOURCES = (HAMI_MEMORY, HAMI_MEMORY_PERCENT, HAMI_CORES)
MIB = 2**20


def read(
    annotations: Mapping[str, str], requests: Resources, report: Reporter
) -> tuple[GpuShare | None, Resources]:
    """The pod's fractional request, if any, and its requests without the resources it came from.

    ``report`` is positioned at the pod (``metadata`` and ``spec`` below it)."""
    kai = _kai(annotations, requests, report.at("metadata"))
    hami = _hami(requests, report.at("spec"))
    if kai is not None and hami is not None:
        report.at("metadata").error(
            f"annotations.{KAI_FRACTION if KAI_FRACTION in annotations else KAI_MEMORY}",
            "a KAI fractional request cannot be combined with HAMi's nvidia.com/gpumem or gpucores",
        )
        return None, requests
    if hami is not None:
        return hami, {r: v for r, v in requests.items() if r not in HAMI_RESOURCES and r != GPU}
    return kai, requests


def _kai(annotations: Mapping[str, str], requests: Resources, report: Reporter) -> GpuShare | None:
    fraction, memory = annotations.get(KAI_FRACTION), annotations.get(KAI_MEMORY)
    if fraction is None and memory is None:
        if KAI_DEVICES in annotations:
            report.error(f"annotations.{KAI_DEVICES}", f"requires {KAI_FRACTION} or {KAI_MEMORY}")
        return None
    path = f"annotations.{KAI_FRACTION if fraction is not None else KAI_MEMORY}"
    if fraction is not None and memory is not None:
        report.error(path, f"{KAI_FRACTION} and {KAI_MEMORY} cannot both be set")
        return None
    if requests.get(GPU, 0):
        report.error(path, f"a fractional request cannot be combined with a {GPU} request")
        return None
    count = _whole(annotations.get(KAI_DEVICES, "1"), report, f"annotations.{KAI_DEVICES}")
    if count is None:
        return None
    if fraction is not None:
        try:
            value = Fraction(fraction)
        except (ValueError, ZeroDivisionError):
            value = Fraction(-1)
        if not 0 < value <= 1:
            report.error(path, invalid(fraction, "must be a number greater than 0 and at most 1"))
            return None
        milli = max(1, round(value * MILLI))
        return GpuShare(count, compute_milli=milli, source=f"{KAI_FRACTION}: {fraction}")
    assert memory is not None
    mib = _whole(memory, report, path)
    if mib is None:
        return None
    return GpuShare(count, memory_bytes=float(mib * MIB), source=f"{KAI_MEMORY}: {memory}")


def _hami(requests: Resources, report: Reporter) -> GpuShare | None:
    given = [r for r in HAMI_RESOURCES if r in requests]
    if not given:
        return None
    path = "containers.resources.limits"
    count = requests.get(GPU, 0)
    if count <= 0:
        report.error(f"{path}.{given[0]}", f"HAMi's {given[0]} requires a {GPU} (vGPU) count")
        return None
    if HAMI_MEMORY in requests and HAMI_MEMORY_PERCENT in requests:
        report.error(f"{path}.{HAMI_MEMORY_PERCENT}", f"set one of {HAMI_MEMORY} and {HAMI_MEMORY_PERCENT}")
        return None
    for resource in (HAMI_MEMORY_PERCENT, HAMI_CORES):
        if requests.get(resource, 0) > 100:
            report.error(
                f"{path}.{resource}", invalid(requests[resource], "must be a percentage from 0 to 100")
            )
            return None
    if requests.get(HAMI_MEMORY, 1) <= 0:
        report.error(f"{path}.{HAMI_MEMORY}", invalid(requests[HAMI_MEMORY], "must be greater than 0"))
        return None
    compute = requests.get(HAMI_CORES, 0) * MILLI // 100
    source = ", ".join(f"{r}: {requests[r]}" for r in given)
    if HAMI_MEMORY in requests:
        return GpuShare(
            count, compute, memory_bytes=float(requests[HAMI_MEMORY] * MIB), source=source, isolated=True
        )
    percent = requests.get(HAMI_MEMORY_PERCENT, 100)
    return GpuShare(count, compute, memory_milli=percent * MILLI // 100, source=source, isolated=True)


def _whole(text: str, report: Reporter, path: str) -> int | None:
    if not text.isdigit() or int(text) <= 0:
        report.error(path, invalid(text, "must be a whole number greater than 0"))
        return None
    return int(text)
