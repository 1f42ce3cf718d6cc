"""The GPU node start chain: from the launch request to GPUs the scheduler can allocate.

Source: seed 000 (GPU autoscaling: "Pod Pending, the autoscaler finds resources short,
asks the cloud for a node, the cloud looks for GPU capacity, the instance boots, the driver
initialises, the node joins Kubernetes, the GPUs register"; a created instance is not a
usable GPU: what counts is node creation -> Node Ready -> device plugin registered) and
DESIGN.md (``NodePool.spec.provisioning``). Stages:

- ``capacityWait``: the cloud looks for GPU capacity;
- ``boot``: the instance boots;
- ``driver``: the GPU driver and container toolkit install;
- ``join``: the kubelet registers and the node turns Ready;
- ``devicePlugin``: the device plugin registers the GPUs, which become allocatable. Always
  last.

A pool lists its stages in the order they happen: seed 000's order is boot, driver, join;
with the GPU Operator the driver installs after join. Stages run one after another; a
stage not listed takes no time. Without ``join`` the node is Ready when the last stage
before ``devicePlugin`` ends (an instant join in seed 000's place, after the driver).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gpufleet.lifecycle.distributions import DurationSpec, parse_duration_spec

CAPACITY_WAIT = "capacityWait"
BOOT = "boot"
DRIVER = "driver"
JOIN = "join"
DEVICE_PLUGIN = "devicePlugin"
#: Every stage name, in seed 000's order.
STAGE_NAMES = (CAPACITY_WAIT, BOOT, DRIVER, JOIN, DEVICE_PLUGIN)


@dataclass(frozen=True)
class StartStage:
    name: str
    duration: DurationSpec


class StageSpan(NamedTuple):
    """One stage of a planned start, in seconds from the launch request."""

    stage: str
    start_s: float
    end_s: float


def validate_stages(stages: Iterable[StartStage]) -> tuple[StartStage, ...]:
    """``stages`` as a tuple, after checking names, duplicates and that ``devicePlugin`` is last.

    Raises ``ValueError`` naming the offending stage.
    """
    checked = tuple(stages)
    seen: set[str] = set()
    for index, stage in enumerate(checked):
        if stage.name not in STAGE_NAMES:
            raise ValueError(f"unknown stage {stage.name!r}; stages are {', '.join(STAGE_NAMES)}")
        if stage.name in seen:
            raise ValueError(f"stage {stage.name!r} is listed twice")
        if stage.name == DEVICE_PLUGIN and index != len(checked) - 1:
            raise ValueError(f"{DEVICE_PLUGIN} (GPUs allocatable) must be the last stage")
        seen.add(stage.name)
    return checked


def parse_provisioning(value: Mapping[str, object] | Iterable[tuple[str, object]]) -> tuple[StartStage, ...]:
    """Read ``NodePool.spec.provisioning``: stage name -> duration spec, in order.

    ``value`` is the mapping or its ``(name, spec)`` pairs (pairs keep a stage written twice,
    which is then refused). Raises ``ValueError`` prefixed with the stage whose value is wrong.
    """
    stages = []
    for name, spec in value.items() if isinstance(value, Mapping) else value:
        try:
            duration = parse_duration_spec(spec)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        stages.append(StartStage(name, duration))
    return validate_stages(stages)


@dataclass(frozen=True)
class NodeStartPlan:
    """When each stage of one node's start ends, in seconds from the launch request, in order."""

    ends: tuple[tuple[str, float], ...]

    @property
    def ready_s(self) -> float:
        """When the node turns Ready (kubelet joined): the end of ``join``."""
        ready = 0.0
        for name, end in self.ends:
            if name == DEVICE_PLUGIN:
                break
            ready = end
            if name == JOIN:
                break
        return ready

    @property
    def gpu_ready_s(self) -> float:
        """When the GPUs are allocatable: the end of ``devicePlugin``, or of the last stage."""
        return self.ends[-1][1] if self.ends else 0.0

    def breakdown(self) -> tuple[StageSpan, ...]:
        """Each stage with its start and end, in order, for waterfalls."""
        spans = []
        start = 0.0
        for name, end in self.ends:
            spans.append(StageSpan(name, start, end))
            start = end
        return tuple(spans)


def plan_node_start(stages: Sequence[StartStage], rng: np.random.Generator) -> NodeStartPlan:
    """Sample one node's start: each stage's duration, drawn in the listed order from ``rng``."""
    ends = []
    elapsed = 0.0
    for stage in validate_stages(stages):
        elapsed += stage.duration.sample(rng)
        ends.append((stage.name, elapsed))
    return NodeStartPlan(tuple(ends))
