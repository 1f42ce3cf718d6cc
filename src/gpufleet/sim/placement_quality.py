"""How a gang's placement stretches its computation (``gpus.topology.rings``).

``gpufleet.io/duration`` is a training job's time on an ideal placement (its ranks on the fewest
nodes). When a gang starts working, its ranks per node (the GPUs of its members on each node)
give the NCCL ring's cross-node edges and, through the ring communication model, a stretch of
every member's compute time. The bandwidths: inside a node the GPU model's NVLink bandwidth from
the catalog (PCIe 4.0 x16, 32 GB/s, when it has none or is unknown); between nodes one 400 Gb/s
NIC per GPU (50 GB/s); exposed communication is 30 % of the ideal step time. These are
documented assumptions, not measurements.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from gpufleet.gpus.topology.rings import cross_node_edges, ring_stretch
from gpufleet.model.gpu_catalog import lookup

PCIE_GBYTES_PER_S = 32.0
NIC_GBYTES_PER_S = 50.0
COMM_FRACTION = 0.3


@dataclass(frozen=True)
class RingPlacement:
    ranks_per_node: tuple[int, ...]
    cross_node_edges: int
    stretch: float


def intra_node_bandwidth(product: str | None) -> float:
    if not product:
        return PCIE_GBYTES_PER_S
    try:
        model = lookup(product)
    except KeyError:
        return PCIE_GBYTES_PER_S
    return float(model.nvlink_gbytes_per_s or PCIE_GBYTES_PER_S)


def ring_placement(
    members: Sequence[tuple[str, int]], gpus_per_node: int, product: str | None
) -> RingPlacement:
    """``members``: (node, GPUs) of each working member."""
    per_node = Counter[str]()
    for node, gpus in members:
        per_node[node] += gpus
    ranks = tuple(per_node[n] for n in sorted(per_node))
    stretch = ring_stretch(
        ranks,
        intra_node_bandwidth(product),
        NIC_GBYTES_PER_S,
        COMM_FRACTION,
        gpus_per_node=max(gpus_per_node, *ranks),  # nodes of a gang may differ; a node holds its ranks
    )
    return RingPlacement(ranks, cross_node_edges(ranks), stretch)
