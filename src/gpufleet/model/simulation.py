"""gpufleet's own kinds (``gpufleet.io/v1alpha1``): ``Simulation`` and ``NodePool``."""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.model.node import Node

#: Without ``spec.duration`` a run stops when nothing is left to do, or after 30 days.
MAX_DURATION_S = 30 * 24 * 3600.0


@dataclass(frozen=True)
class SimulationSettings:
    duration_s: float | None = None
    seed: int = 0
    sample_interval_s: float = 10.0


@dataclass
class NodePool:
    """Nodes stamped from one template, named ``<pool>-<n>`` with ``n`` from 0."""

    name: str
    template: Node
    replicas: int = 0
