"""What a start-up measurement holds: per pod its moments and stages, per node its start chain.

Times are seconds since the epoch (UTC); a moment the objects do not record is None and the
record's ``notes`` say why. `Observations` carries the moments only a watch sees (objects keep the
last transition of a condition, not the first, and no time at all for an allocatable change).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The stages of a pod's start, in the order they happen: the summary contract's names
#: (``scheduling``, ``node_provisioning``, ``image_pull``, ``other``) and ``readiness``, model load
#: and warm-up together (from the last container's start to the Ready condition), which the objects
#: cannot separate.
STAGES = ("scheduling", "node_provisioning", "image_pull", "readiness", "other")


@dataclass
class Observations:
    """Moments a watch saw that objects do not keep, in seconds since the epoch.

    ``gpu_allocatable``: node name -> when its ``nvidia.com/gpu`` allocatable first became > 0;
    ``node_ready``: node name -> when its Ready condition first became True;
    ``pod_ready``: ``namespace/name`` -> when the pod's Ready condition first became True;
    ``pod_bound``: ``namespace/name`` -> when its ``PodScheduled`` condition became True, and
    ``pod_running``: when all its containers were first running (the objects keep both in whole
    seconds only).
    """

    gpu_allocatable: dict[str, float] = field(default_factory=dict)
    node_ready: dict[str, float] = field(default_factory=dict)
    pod_ready: dict[str, float] = field(default_factory=dict)
    pod_bound: dict[str, float] = field(default_factory=dict)
    pod_running: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ImagePull:
    """One kubelet ``Pulled`` event of the pod's start."""

    image: str
    at: float
    pull_s: float
    waiting_s: float
    size_bytes: int | None
    present: bool


@dataclass(frozen=True)
class ScaleUp:
    """The first cluster-autoscaler ``TriggeredScaleUp`` event about the pod."""

    at: float
    groups: tuple[str, ...]


@dataclass(frozen=True)
class PodStartup:
    name: str  # namespace/name
    phase: str
    reason: str | None
    node: str | None
    gpus: float
    owner: str | None  # Kind/name of its controller
    created: float
    bound: float | None
    running: float | None  # every container started
    working: float | None  # Ready first True (model loaded, warmed up)
    finished: float | None
    deleted: float | None
    message: str | None
    stages: dict[str, float]  # named parts of created .. working (or .. now, for a pod not there yet)
    pulls: tuple[ImagePull, ...]
    scale_up: ScaleUp | None
    notes: tuple[str, ...]
    #: when the scale-up that made its node began (its TriggeredScaleUp, or the Node's creation if
    #: that came first); None unless it was bound to a node launched for it
    node_launched: float | None = None


@dataclass(frozen=True)
class NodeStartup:
    name: str
    group: str | None
    gpus: float
    created: float
    ready: float | None
    gpu_ready: float | None
    deleted: float | None
    template: dict[str, Any]  # labels, taints, capacity and allocatable, for a NodePool template
    notes: tuple[str, ...]
    #: the launch request: the earliest moment a scale-up that made it began (see `PodStartup.node_launched`)
    launched: float | None = None
    #: a watch saw it turn Ready or its GPUs become allocatable: it was starting during the reading
    observed_start: bool = False


@dataclass(frozen=True)
class StartupMeasurement:
    pods: tuple[PodStartup, ...]
    nodes: tuple[NodeStartup, ...]
    origin: float  # time 0 of the summary: --since, or the earliest pod creation
    end: float  # the moment of the reading (or the latest moment the objects record)
    watched: bool  # Observations were given
    notes: tuple[str, ...]  # what the input does not record, once each
