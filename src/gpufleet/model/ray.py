"""Ray resource demand: what a Ray program asks of its cluster over time (tasks, actors), which the
Ray autoscaler scales worker groups on. Given on a RayCluster or RayJob as the
``gpufleet.io/ray-demand`` annotation (``kube.pod_annotations``): a YAML or JSON list of
``{at, bundles, resources, duration}``: from ``at`` after the Ray head is up, ``bundles`` requests of
``resources`` (Ray resource names: ``CPU``, ``GPU``, ``memory``, custom ones) each run for
``duration`` once Ray places them (no ``duration``: until the cluster goes)."""

from __future__ import annotations

from dataclasses import dataclass

RAY_DEMAND = "gpufleet.io/ray-demand"


@dataclass(frozen=True)
class RayDemand:
    at_s: float
    bundles: int
    resources: tuple[tuple[str, float], ...]  # Ray resource -> amount, per bundle
    duration_s: float | None = None
