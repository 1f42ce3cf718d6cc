"""cluster-autoscaler's expanders (``expander/*``, cluster-autoscaler 1.34): which scale-up option wins.

Each expander is a filter (``BestOptions``) that keeps the options it ranks best:
- ``least-waste`` (upstream default, ``expander/waste``): lowest ``wastedCPU + wastedMemory``,
  each the share of the new nodes' capacity that the option's pods leave unrequested
  (``scale_up.waste``); it ignores GPUs, as upstream does.
- ``least-waste-gpu`` (gpufleet's GPU-aware variant): lowest wasted GPU share first, then
  upstream's cpu + memory waste — so a 1-GPU pod does not get an 8-GPU node when a 1-GPU
  node would do.
- ``least-nodes`` (``expander/leastnodes``): fewest new nodes (an option adding none is dropped).
- ``most-pods`` (``expander/mostpods``): most pods placed.
- ``price``: lowest price per hour of the new nodes per pod placed (a simplification of
  upstream's GCE-only price expander, which also weighs node "unfitness").
- ``priority`` (``expander/priority``): the highest priority that the
  ``cluster-autoscaler-priority-expander`` ConfigMap gives the pool's name. A pool it does not
  name is not used, nor one named only below -1 (upstream's running maximum starts at -1);
  when that leaves no option, every option is kept.
- ``random``: one option at random (seeded).

A comma-separated list chains them (``factory/chain.go``): each filter narrows the options the
previous one kept, the chain stops as soon as one option is left, and what is still tied at the
end is picked at random. Options are first put in pool-name order, so that a seed decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from gpufleet.autoscaling.scale_up import Estimate
from gpufleet.model.resources import CPU, GPU, MEMORY

EXPANDERS = ("least-waste", "least-waste-gpu", "least-nodes", "most-pods", "price", "priority", "random")


def _cpu_mem_waste(e: Estimate) -> float:
    return e.waste.get(CPU, 0.0) + e.waste.get(MEMORY, 0.0)


def _lowest(score: Callable[[Estimate], float]) -> Callable[[list[Estimate]], list[Estimate]]:
    def keep(options: list[Estimate]) -> list[Estimate]:
        best = min((score(e) for e in options), default=0.0)
        return [e for e in options if abs(score(e) - best) < 1e-12]

    return keep


def pool_priority(name: str, priorities: Sequence[tuple[int, str]]) -> int | None:
    """The highest priority whose expression matches the pool's name anywhere (Go's
    ``regexp.MatchString``); None when none does."""
    return max((p for p, expr in priorities if re.search(expr, name)), default=None)


def _highest_priority(options: list[Estimate]) -> list[Estimate]:
    """``priority.BestOptions``."""
    top = max((e.priority for e in options if e.priority is not None), default=None)
    if top is None or top < -1:
        return options
    return [e for e in options if e.priority == top]


FILTERS: dict[str, Callable[[list[Estimate]], list[Estimate]]] = {
    "least-waste": _lowest(_cpu_mem_waste),
    "least-waste-gpu": _lowest(lambda e: e.waste.get(GPU, 0.0) * 10 + _cpu_mem_waste(e)),
    "least-nodes": lambda options: _lowest(lambda e: e.nodes)([e for e in options if e.nodes > 0]),
    "most-pods": _lowest(lambda e: -len(e.pods)),
    "price": _lowest(lambda e: e.price_per_hour * e.nodes / len(e.pods)),
    "priority": _highest_priority,
    "random": lambda options: options,  # the chain's end picks among what is left
}


def choose(options: list[Estimate], expander: str, rng: np.random.Generator) -> Estimate | None:
    """``chainStrategy.BestOption`` over the expanders named in ``expander``."""
    tied = sorted(options, key=lambda e: e.pool)
    for name in expander.split(","):
        tied = FILTERS[name.strip()](tied)
        if len(tied) == 1:
            return tied[0]
    return tied[int(rng.integers(len(tied)))] if tied else None
