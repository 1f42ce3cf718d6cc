"""cluster-autoscaler's expanders (``expander/*``): which scale-up option wins.

- ``least-waste`` (upstream default): lowest ``wastedCPU + wastedMemory`` over the new
  nodes; it ignores GPUs, as upstream does.
- ``least-waste-gpu`` (gpufleet's GPU-aware variant): lowest wasted GPU share first, then
  upstream's cpu + memory waste — so a 1-GPU pod does not get an 8-GPU node when a 1-GPU
  node would do.
- ``most-pods``: most pods placed.
- ``price``: lowest price per hour of the new nodes per pod placed (a simplification of
  upstream's GCE-only price expander, which also weighs node "unfitness").
- ``priority``: highest pool priority (upstream reads it from the
  ``cluster-autoscaler-priority-expander`` ConfigMap; gpufleet takes it from the pool).
- ``random``.

A comma-separated list chains expanders, each narrowing the ties of the previous; what
is still tied is broken at random (seeded).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpufleet.autoscaling.scale_up import Estimate
from gpufleet.model.resources import CPU, GPU, MEMORY

EXPANDERS = ("least-waste", "least-waste-gpu", "most-pods", "price", "priority", "random")


def _cpu_mem_waste(e: Estimate) -> float:
    return e.waste.get(CPU, 0.0) + e.waste.get(MEMORY, 0.0)


_SCORES: dict[str, Callable[[Estimate], float]] = {
    "least-waste": _cpu_mem_waste,
    "least-waste-gpu": lambda e: e.waste.get(GPU, 0.0) * 10 + _cpu_mem_waste(e),
    "most-pods": lambda e: -len(e.pods),
    "price": lambda e: e.price_per_hour * e.nodes / len(e.pods),
    "priority": lambda e: -e.priority,
    "random": lambda e: 0.0,
}


def choose(options: list[Estimate], expander: str, rng: np.random.Generator) -> Estimate | None:
    if not options:
        return None
    tied = sorted(options, key=lambda e: e.pool)
    for name in expander.split(","):
        score = _SCORES[name.strip()]
        best = min(score(e) for e in tied)
        tied = [e for e in tied if abs(score(e) - best) < 1e-12]
    return tied[int(rng.integers(len(tied)))] if len(tied) > 1 else tied[0]
