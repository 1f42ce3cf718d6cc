"""MIG profiles, placement on one GPU, and the resources the device plugin advertises.

Sources:

* Profile names and per-GPU instance counts: ``NVIDIA/mig-parted`` default configuration
  (``all-<profile>`` entries, as shipped in the GPU Operator's ``default-mig-parted-config``); see
  ``shared/reference/upstream-semantics.md`` section 7.3.
* Placements: ``nvidia-smi mig -lgipp`` as printed on A100, H100 80GB and H100 NVL parts (NVIDIA MIG User
  Guide, "Getting Started with MIG"; Colfax Research, "Sharing NVIDIA GPUs at the System Level", 2024, for
  H100 NVL)::

      Profile ID 19 (1g, base)      Placements: {0,1,2,3,4,5,6}:1
      Profile ID 20 (1g+me)         Placements: {0,1,2,3,4,5,6}:1
      Profile ID 15 (1g, 2x memory) Placements: {0,2,4,6}:2
      Profile ID 14 (2g)            Placements: {0,2,4}:2
      Profile ID  9 (3g)            Placements: {0,4}:4
      Profile ID  5 (4g)            Placement : {0}:4
      Profile ID  0 (7g)            Placement : {0}:8

  ``{starts}:size`` are start indices and sizes on the 8 **memory** slices (NVML
  ``nvmlGpuInstancePlacement_t``: "Index of first occupied memory slice", "Number of memory slices
  occupied"); creating an instance fails if its slices overlap an existing one. The memory fractions agree
  with the MIG User Guide's "Supported MIG Profiles" A100 table (1/8, 2/8, 2/8, 4/8, 4/8, full). H200 and
  B200 keep the same 7-compute / 8-memory-slice geometry and the same profile shapes; their placement lists
  are assumed identical (not checked against a device).
* ``+me`` (media extensions) profiles: one per GPU (MIG User Guide profile tables).
* Resource names per strategy: ``NVIDIA/k8s-device-plugin`` README ("single": ``nvidia.com/gpu`` counts MIG
  devices, all of one profile; "mixed": ``nvidia.com/mig-<profile>``); time-slicing replicas multiply the
  count and ``renameByDefault`` appends ``.shared`` (GPU Operator "Time-Slicing GPUs in Kubernetes").

Modelling conventions (DESIGN):

* ``memory_bytes`` of a profile is the size in its name in decimal gigabytes (``1g.20gb`` = 20e9 bytes).
  The driver reports slightly different, driver-dependent figures (e.g. 19.50 or 19.62 GiB for ``1g.20gb``,
  both *above* 20e9 bytes on A100/H100), so the nominal value is exact, reproducible and conservative there.
* Compute slices: the 7 compute slices sit under memory slices 0-6 (slice 7 has no compute partner); an
  instance of ``g`` compute slices starting at memory slice ``s`` occupies compute slices ``s .. s+g-1``.
  With the placement table above, disjoint memory implies disjoint compute; both are checked.
* A MIG instance counts as ``compute_slices / 7`` of a GPU (:func:`gpu_equivalent`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from gpufleet.model.gpu_catalog import GpuModel

MEMORY_SLICES = 8
COMPUTE_SLICES = 7
GB = 10**9
MIB = 2**20

MigStrategy = Literal["none", "single", "mixed"]
MIG_STRATEGIES: tuple[MigStrategy, ...] = ("none", "single", "mixed")

GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
SHARED_SUFFIX = ".shared"


class MigLayoutError(ValueError):
    """A set of MIG instances that cannot coexist on one GPU, or a layout the strategy rejects."""


@dataclass(frozen=True)
class MigProfile:
    """A GPU-instance profile such as ``3g.40gb``."""

    name: str
    compute_slices: int
    memory_slices: int
    memory_bytes: int
    max_instances: int
    placements: tuple[int, ...]
    media_extensions: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.compute_slices <= COMPUTE_SLICES:
            raise ValueError(f"{self.name}: compute_slices must be 1..{COMPUTE_SLICES}")
        if not 1 <= self.memory_slices <= MEMORY_SLICES:
            raise ValueError(f"{self.name}: memory_slices must be 1..{MEMORY_SLICES}")
        for start in self.placements:
            if start < 0 or start + self.memory_slices > MEMORY_SLICES:
                raise ValueError(f"{self.name}: placement {start} leaves the {MEMORY_SLICES} memory slices")
            if start + self.compute_slices > COMPUTE_SLICES:
                raise ValueError(f"{self.name}: placement {start} leaves the {COMPUTE_SLICES} compute slices")

    @property
    def resource_name(self) -> str:
        """The mixed-strategy extended resource, e.g. ``nvidia.com/mig-1g.10gb``."""
        return MIG_RESOURCE_PREFIX + self.name

    @property
    def nominal_gb(self) -> int:
        """The GB figure in the profile name."""
        return self.memory_bytes // GB

    @property
    def memory_mib(self) -> int:
        """Memory as the GFD ``memory`` label is modelled: name GB x 1024 (README: ``1g.5gb`` -> 5120)."""
        return self.nominal_gb * 1024


@dataclass(frozen=True)
class Placement:
    """One instance at a concrete start slot."""

    profile: MigProfile
    start: int

    @property
    def memory_slices(self) -> range:
        return range(self.start, self.start + self.profile.memory_slices)

    @property
    def compute_slices(self) -> range:
        return range(self.start, self.start + self.profile.compute_slices)


def standard_profiles(small_gb: int, double_gb: int, half_gb: int, full_gb: int) -> tuple[MigProfile, ...]:
    """The seven-slice profile family shared by A100, H100, H200 and B200 (names differ by memory).

    ``small_gb``: the base 1g profile (1 memory slice); ``double_gb``: 1g with 2 memory slices and 2g;
    ``half_gb``: 3g and 4g (4 memory slices); ``full_gb``: 7g.
    """
    every_slot = tuple(range(COMPUTE_SLICES))
    return (
        MigProfile(f"1g.{small_gb}gb", 1, 1, small_gb * GB, 7, every_slot),
        MigProfile(f"1g.{small_gb}gb+me", 1, 1, small_gb * GB, 1, every_slot, media_extensions=True),
        MigProfile(f"1g.{double_gb}gb", 1, 2, double_gb * GB, 4, (0, 2, 4, 6)),
        MigProfile(f"2g.{double_gb}gb", 2, 2, double_gb * GB, 3, (0, 2, 4)),
        MigProfile(f"3g.{half_gb}gb", 3, 4, half_gb * GB, 2, (0, 4)),
        MigProfile(f"4g.{half_gb}gb", 4, 4, half_gb * GB, 1, (0,)),
        MigProfile(f"7g.{full_gb}gb", 7, 8, full_gb * GB, 1, (0,)),
    )


def gpu_equivalent(profile: MigProfile) -> float:
    """DESIGN: a MIG instance counts its share of the 7 compute slices."""
    return profile.compute_slices / COMPUTE_SLICES


def _mask(start: int, size: int) -> int:
    return ((1 << size) - 1) << start


def assign(layout: Sequence[str], model: GpuModel) -> tuple[Placement, ...]:
    """Concrete start slots for ``layout`` on one GPU of ``model``, ordered by start slot.

    Deterministic: instances are placed largest first (memory slices, then compute slices, then name), each
    at the lowest free start slot, backtracking when a later instance does not fit. Raises
    :class:`MigLayoutError` when no placement exists or a profile exceeds its per-GPU instance limit, and
    ``KeyError`` for a profile the model does not have.
    """
    profiles = [model.mig_profile(name) for name in layout]
    for name, n in Counter(p.name for p in profiles).items():
        limit = model.mig_profile(name).max_instances
        if n > limit:
            raise MigLayoutError(f"{model.name}: {n} x {name} exceeds the limit of {limit} per GPU")
    if sum(p.compute_slices for p in profiles) > COMPUTE_SLICES:
        raise MigLayoutError(f"{model.name}: {list(layout)} needs more than {COMPUTE_SLICES} compute slices")
    if sum(p.memory_slices for p in profiles) > MEMORY_SLICES:
        raise MigLayoutError(f"{model.name}: {list(layout)} needs more than {MEMORY_SLICES} memory slices")
    order = sorted(profiles, key=lambda p: (-p.memory_slices, -p.compute_slices, p.name))
    chosen: list[Placement] = []

    def place(i: int, memory: int, compute: int) -> bool:
        if i == len(order):
            return True
        p = order[i]
        for start in p.placements:
            m = _mask(start, p.memory_slices)
            c = _mask(start, p.compute_slices)
            if m & memory or c & compute:
                continue
            chosen.append(Placement(p, start))
            if place(i + 1, memory | m, compute | c):
                return True
            chosen.pop()
        return False

    if not place(0, 0, 0):
        raise MigLayoutError(f"{model.name}: no placement lets {sorted(layout)} coexist on one GPU")
    return tuple(sorted(chosen, key=lambda pl: (pl.start, pl.profile.name)))


def fits(layout: Sequence[str], model: GpuModel) -> bool:
    """Whether the instances in ``layout`` can coexist on ONE GPU of ``model`` (placement slices)."""
    try:
        assign(layout, model)
    except MigLayoutError:
        return False
    return True


def _shared(name: str, replicas: int, rename_by_default: bool) -> str:
    return name + SHARED_SUFFIX if replicas > 1 and rename_by_default else name


def advertised_resources(
    layouts: Sequence[Sequence[str] | None],
    strategy: MigStrategy,
    model: GpuModel | None = None,
    *,
    replicas: int = 1,
    rename_by_default: bool = False,
) -> dict[str, int]:
    """Extended resources the device plugin advertises for a node's GPUs.

    ``layouts[i]`` is GPU ``i``'s MIG instances, or ``None`` when MIG is disabled on it (a whole GPU).
    ``none``: every GPU is a whole ``nvidia.com/gpu``. ``single``: ``nvidia.com/gpu`` counts MIG devices,
    which must all be one profile; GPUs must be all MIG-enabled or all disabled (then: whole GPUs).
    ``mixed``: ``nvidia.com/mig-<profile>`` per profile, plus ``nvidia.com/gpu`` for MIG-disabled GPUs.
    ``replicas`` (time-slicing) multiplies every count; with ``rename_by_default`` names gain ``.shared``.
    When ``model`` is given each layout is checked with :func:`assign`.
    """
    if strategy not in MIG_STRATEGIES:
        raise ValueError(f"unknown MIG strategy {strategy!r}; expected one of {MIG_STRATEGIES}")
    if replicas < 1:
        raise ValueError("replicas must be >= 1")
    if model is not None:
        for layout in layouts:
            if layout is not None:
                assign(layout, model)
    gpu = _shared(GPU_RESOURCE, replicas, rename_by_default)
    out: dict[str, int] = {}
    if strategy == "none":
        out[gpu] = len(layouts) * replicas
        return out
    whole = sum(1 for layout in layouts if layout is None)
    instances = Counter(name for layout in layouts if layout is not None for name in layout)
    if strategy == "single":
        if whole and whole != len(layouts):
            raise MigLayoutError("single strategy: GPUs must be all MIG-enabled or all MIG-disabled")
        if len(instances) > 1:
            raise MigLayoutError(
                f"single strategy: all MIG devices must be one profile, got {sorted(instances)}"
            )
        out[gpu] = (whole + sum(instances.values())) * replicas
        return out
    if whole:
        out[gpu] = whole * replicas
    for name in sorted(instances):
        out[_shared(MIG_RESOURCE_PREFIX + name, replicas, rename_by_default)] = instances[name] * replicas
    return out
