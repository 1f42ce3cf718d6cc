"""Node labels GPU Feature Discovery sets, and the allocatable resources of a pool declared by GPU model.

Sources:

* Label names and meanings: ``NVIDIA/k8s-device-plugin`` ``docs/gpu-feature-discovery/README.md``
  ("Generated Labels", "MIG 'single' strategy", "MIG 'mixed' strategy"): ``nvidia.com/gpu.product``,
  ``gpu.memory`` (MiB), ``gpu.count``, ``gpu.family``, ``gpu.compute.major/minor``, ``gpu.replicas``,
  ``mig.capable``, ``mig.strategy``; single strategy overrides product (``A100-SXM4-40GB-MIG-1g.5gb``),
  count (MIG devices) and memory (one MIG device) and adds ``gpu.slices.gi/ci``; mixed strategy adds
  ``nvidia.com/mig-<profile>.count/.memory/.slices.gi/.slices.ci``.
* Time-slicing: GPU Operator "Time-Slicing GPUs in Kubernetes": with ``renameByDefault=false`` (default) the
  product gains ``-SHARED`` (after the MIG suffix: ``A100-SXM4-40GB-MIG-1g.5gb-SHARED``);
  ``nvidia.com/gpu.replicas`` carries the replica count and ``nvidia.com/gpu.sharing-strategy`` is
  ``time-slicing`` (``none`` and ``1`` without sharing, as label dumps from GPU Operator nodes show). The
  device plugin e2e test expects ``Tesla-T4-SHARED`` and ``gpu.replicas=10`` for ten replicas.

Not modelled (skipped, as the values depend on the machine or driver): ``gpu.machine``, ``gpu.mode``,
``cuda.*``, ``gpu.multiprocessors`` and ``gpu.engines.*``, ``mps.capable``, ``gpu.clique``. Labels whose
catalog value is unknown (trace models) are omitted. ``nvidia.com/mig.strategy`` is set only for the
``single`` and ``mixed`` strategies. The MIG memory label is modelled as the profile's name GB x 1024.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gpufleet.model.gpu_catalog import GpuModel
from gpufleet.model.mig import (
    MIG_RESOURCE_PREFIX,
    MIG_STRATEGIES,
    MigLayoutError,
    MigStrategy,
    advertised_resources,
    assign,
)
from gpufleet.model.resources import CPU, MEMORY, PODS, Resources

PREFIX = "nvidia.com/"
SHARED_PRODUCT_SUFFIX = "-SHARED"
DEFAULT_MAX_PODS = 110  # kubelet --max-pods default


def _check(model: GpuModel, count: int, mig_strategy: str, mig_layout: Sequence[str] | None) -> None:
    if count < 0:
        raise ValueError("count must be >= 0")
    if mig_strategy not in MIG_STRATEGIES:
        raise ValueError(f"unknown MIG strategy {mig_strategy!r}; expected one of {MIG_STRATEGIES}")
    if mig_layout is not None:
        if mig_strategy == "none":
            raise ValueError("a MIG layout needs mig_strategy 'single' or 'mixed'")
        if not model.mig_capable:
            raise ValueError(f"{model.name} is not MIG-capable")
        assign(mig_layout, model)
        if mig_strategy == "single" and len(set(mig_layout)) > 1:
            raise MigLayoutError(f"single strategy: one profile per node, got {sorted(set(mig_layout))}")


def gfd_labels(
    model: GpuModel,
    count: int,
    mig_strategy: MigStrategy = "none",
    mig_layout: Sequence[str] | None = None,
    sharing: int | None = None,
    *,
    rename_by_default: bool = False,
) -> dict[str, str]:
    """GFD labels for a node with ``count`` GPUs of ``model``.

    ``mig_layout`` is the MIG instances on each GPU (all GPUs alike, as a mig-parted ``devices: all``
    configuration); ``None`` means MIG is disabled. ``sharing`` is the time-slicing replica count.
    """
    _check(model, count, mig_strategy, mig_layout)
    replicas = sharing or 1
    if replicas < 1:
        raise ValueError("sharing (replicas) must be >= 1")
    product = model.product
    memory_mib = model.memory_mib
    gpu_count = count
    labels: dict[str, str] = {}
    if mig_layout and mig_strategy == "single":
        profile = model.mig_profile(mig_layout[0])
        product = f"{product}-MIG-{profile.name}"
        memory_mib = profile.memory_mib
        gpu_count = count * len(mig_layout)
        labels[PREFIX + "gpu.slices.gi"] = str(profile.compute_slices)
        labels[PREFIX + "gpu.slices.ci"] = str(profile.compute_slices)
    if mig_layout and mig_strategy == "mixed":
        for name, n in sorted(Counter(mig_layout).items()):
            profile = model.mig_profile(name)
            key = MIG_RESOURCE_PREFIX + profile.name
            labels[f"{key}.count"] = str(n * count)
            labels[f"{key}.memory"] = str(profile.memory_mib)
            labels[f"{key}.slices.gi"] = str(profile.compute_slices)
            labels[f"{key}.slices.ci"] = str(profile.compute_slices)
    if replicas > 1 and not rename_by_default:
        product += SHARED_PRODUCT_SUFFIX
    labels[PREFIX + "gpu.product"] = product
    labels[PREFIX + "gpu.count"] = str(gpu_count)
    if memory_mib is not None:
        labels[PREFIX + "gpu.memory"] = str(memory_mib)
    if model.family is not None:
        labels[PREFIX + "gpu.family"] = model.family
    if model.compute_major is not None and model.compute_minor is not None:
        labels[PREFIX + "gpu.compute.major"] = str(model.compute_major)
        labels[PREFIX + "gpu.compute.minor"] = str(model.compute_minor)
    labels[PREFIX + "gpu.replicas"] = str(replicas)
    labels[PREFIX + "gpu.sharing-strategy"] = "time-slicing" if replicas > 1 else "none"
    if not model.trace_model:
        labels[PREFIX + "mig.capable"] = "true" if model.mig_capable else "false"
    if mig_strategy != "none":
        labels[PREFIX + "mig.strategy"] = mig_strategy
    return dict(sorted(labels.items()))


def node_capacity(
    model: GpuModel,
    count: int,
    cpu_millis: int,
    memory_bytes: int,
    *,
    pods: int = DEFAULT_MAX_PODS,
    mig_strategy: MigStrategy = "none",
    mig_layout: Sequence[str] | None = None,
    replicas: int = 1,
    rename_by_default: bool = False,
) -> Resources:
    """Allocatable resources of a node in a pool declared by GPU model (canonical units).

    ``cpu_millis`` and ``memory_bytes`` are the node's allocatable CPU and memory; GPU resources follow the
    device plugin for the strategy (see :func:`gpufleet.model.mig.advertised_resources`), with every GPU
    carrying ``mig_layout`` (``None``: MIG disabled).
    """
    _check(model, count, mig_strategy, mig_layout)
    out: Resources = {CPU: cpu_millis, MEMORY: memory_bytes, PODS: pods}
    if count:
        layouts = [None if mig_layout is None else tuple(mig_layout)] * count
        out.update(
            advertised_resources(
                layouts, mig_strategy, model, replicas=replicas, rename_by_default=rename_by_default
            )
        )
    return out
