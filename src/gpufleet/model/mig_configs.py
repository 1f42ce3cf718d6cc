"""Named MIG configurations, as MIG Manager applies them from a node's ``nvidia.com/mig.config`` label.

Sources:

* Configuration names and contents: ``NVIDIA/mig-parted`` ``deployments/systemd/config-default.yaml`` (the GPU
  Operator ships the same file as its ``default-mig-parted-config`` ConfigMap). Every entry is
  ``devices: all``: one configuration gives every GPU of the node the same instances, so a change
  reconfigures all of them at once.

  - ``all-disabled``: ``mig-enabled: false`` (whole GPUs);
  - ``all-enabled``: MIG on, ``mig-devices: {}`` (no instances);
  - ``all-<profile>``: that profile at its per-GPU maximum (``all-1g.10gb`` is ``"1g.10gb": 7`` on H100 and
    A100 80GB, ``"1g.10gb": 4`` on A100 40GB; ``all-3g.40gb`` is ``"3g.40gb": 2``);
  - ``all-<profile>.me``: one ``<profile>+me`` instance (``all-1g.10gb.me``);
  - ``all-balanced``: two base 1g instances, one 2g and one 3g per GPU (H100/A100 80GB ``1g.10gb: 2,
    2g.20gb: 1, 3g.40gb: 1``; A100 40GB ``1g.5gb: 2, 2g.10gb: 1, 3g.20gb: 1``; H200 ``1g.18gb: 2,
    2g.35gb: 1, 3g.71gb: 1``; B200 ``1g.23gb: 2, 2g.45gb: 1, 3g.90gb: 1``).

  The file's ``device-filter`` entries give each GPU only the profiles it has; a configuration naming a
  profile the GPU lacks (``all-1g.5gb`` on an H100) has nothing to apply there: gpufleet rejects it as input.
* Label names and states: ``nvidia.com/mig.config`` (what the administrator asks for) and
  ``nvidia.com/mig.config.state``, which MIG Manager sets to ``pending`` while it works, ``rebooting`` when it
  reboots the node for a mode change (``WITH_REBOOT``), then ``success`` or ``failed``
  (``NVIDIA/mig-parted`` ``pkg/mig/reconfigure/reconfigure.go``).
* Reconfiguration time (:data:`DEFAULT_RECONFIGURE_S`): from the state going ``pending`` to the device plugin
  advertising the new instances. MIG Manager first stops the device plugin, GPU Feature Discovery, DCGM and
  the DCGM exporter and waits (up to 5 minutes) for their pods to go, applies the configuration with
  ``nvidia-mig-parted apply``, then restarts them. A public MIG Manager log on an 8 x H100 node
  (``NVIDIA/gpu-operator`` issue #1310) shows 36 s from "Updating to MIG config" to "Applying MIG device
  configuration"; the apply itself takes seconds, and the device plugin pod then starts and registers. 60 s
  is gpufleet's round figure of that order, not an upstream constant: set ``duration`` per change (a mode
  change that needs a reboot takes minutes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpufleet.model.gfd_labels import gfd_labels
from gpufleet.model.gpu_catalog import GpuModel, lookup
from gpufleet.model.mig import MigProfile, MigStrategy, advertised_resources

MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_CONFIG_STATE_LABEL = "nvidia.com/mig.config.state"
MIG_CONFIG_STATES = ("pending", "rebooting", "success", "failed")
DEFAULT_RECONFIGURE_S = 60.0
DEVICE_PLUGIN_PREFIX = "nvidia.com/"

DISABLED = "all-disabled"
ENABLED = "all-enabled"
BALANCED = "all-balanced"
_ME_SUFFIX = "+me"

#: One GPU's MIG instances (profile names); ``None``: MIG disabled, a whole GPU.
Layout = tuple[str, ...] | None


class MigConfigError(ValueError):
    """A configuration name that mig-parted's default file does not give this GPU model."""


def _base(model: GpuModel) -> list[MigProfile]:
    return [p for p in model.mig_profiles if not p.media_extensions]


def known_configs(model: GpuModel) -> tuple[str, ...]:
    """The configuration names of mig-parted's default file that apply to ``model``."""
    if not model.mig_capable:
        return (DISABLED,)
    named = [f"all-{p.name}" for p in _base(model)]
    media = [f"all-{p.name.removesuffix(_ME_SUFFIX)}.me" for p in model.mig_profiles if p.media_extensions]
    return (DISABLED, ENABLED, *named, *media, BALANCED)


def config_layout(name: str, model: GpuModel) -> Layout:
    """The instances configuration ``name`` puts on each GPU of ``model`` (``None``: MIG disabled)."""
    if not model.mig_capable:
        raise MigConfigError(f"{model.name} is not MIG-capable")
    if name == DISABLED:
        return None
    if name == ENABLED:
        return ()
    if name == BALANCED:
        one, two, three = (
            next(p for p in _base(model) if (p.compute_slices, p.memory_slices) == slices)
            for slices in ((1, 1), (2, 2), (3, 4))
        )
        return (one.name, one.name, two.name, three.name)
    for profile in model.mig_profiles:
        plain = profile.name.removesuffix(_ME_SUFFIX)
        wanted = f"all-{plain}.me" if profile.media_extensions else f"all-{plain}"
        if name == wanted:
            return (profile.name,) * profile.max_instances
    known = ", ".join(known_configs(model))
    raise MigConfigError(f"mig-parted's default configurations for {model.name} are: {known}")


@dataclass(frozen=True)
class MigConfigChange:
    """The administrator sets ``nvidia.com/mig.config`` to ``config`` at ``at_s``.

    ``drain``: the GPU Operator's documented procedure, cordon the node and evict the pods on its GPUs
    first (MIG Manager itself evicts nothing); ``duration_s``: MIG Manager's work, from ``pending`` to
    the new resources advertised.
    """

    at_s: float
    config: str
    drain: bool = True
    duration_s: float = DEFAULT_RECONFIGURE_S


@dataclass(frozen=True)
class MigManaged:
    """A node pool's GPUs, whose MIG layout MIG Manager sets: the same for every GPU (``devices: all``)."""

    model: str  # catalog key
    gpus: int
    strategy: MigStrategy
    layout: Layout
    config: str | None = None  # the pool's initial ``nvidia.com/mig.config``, when it names one
    replicas: int = 1  # time-slicing replicas of each device
    changes: tuple[MigConfigChange, ...] = field(default=())

    @property
    def gpu_model(self) -> GpuModel:
        return lookup(self.model)

    def resources(self, layout: Layout) -> dict[str, int]:
        """What the device plugin advertises for the node's GPUs, each carrying ``layout``."""
        if not self.gpus:
            return {}
        layouts: Sequence[Sequence[str] | None] = [layout] * self.gpus
        return advertised_resources(layouts, self.strategy, self.gpu_model, replicas=self.replicas)

    def labels(self, layout: Layout, config: str | None) -> dict[str, str]:
        """GPU Feature Discovery's labels for ``layout``, and ``nvidia.com/mig.config`` when named."""
        sharing = self.replicas if self.replicas > 1 else None
        out = gfd_labels(self.gpu_model, self.gpus, self.strategy, layout, sharing)
        if config is not None:
            out[MIG_CONFIG_LABEL] = config
        return out


def is_device_plugin_resource(name: str) -> bool:
    """A resource the NVIDIA device plugin advertises (``nvidia.com/gpu``, ``nvidia.com/mig-<profile>``)."""
    return name.startswith(DEVICE_PLUGIN_PREFIX)
