"""NCCL ring edges across nodes, and how much a worse placement stretches a training job.

**Cross-node edges.**  NCCL orders a ring's ranks node by node, so the ring leaves each node once
and enters the next once; with ``N`` nodes holding ranks the ring has ``N`` cross-node edges
(the last node wraps to the first), none on one node.  Seed 004: a 16-rank job on 2 whole 8-GPU
nodes has 2 cross-node edges; spread over 3 nodes (``[4, 4, 8]`` or any other split) it has 3.

**Communication model** (:func:`ring_stretch`).  A ring all-reduce of ``S`` bytes over ``n`` ranks
takes ``2(n-1)`` steps, in each of which every rank sends ``S/n`` bytes to its ring neighbour at
once, so it lasts ``t = 2(n-1)/n * S / B`` where ``B`` is the bandwidth of the slowest ring edge:
the nccl-tests "bus bandwidth" (``busbw = algbw * 2(n-1)/n`` for all-reduce;
https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md).  NCCL runs ``c`` rings
(channels) at once; we take ``c = G``, one ring per GPU of a full node and per rail NIC, the
rail-optimised layout of DGX H100 / SuperPOD (one ConnectX-7 per GPU).  Every ring has one
cross-node edge leaving each node, so the ``c`` rings' cross-node edges leaving a node that holds
``r`` of the job's ranks share the ``r`` NICs next to those ranks' GPUs; each gets
``inter_bw * r / c``.  So::

    B(p) = intra_bw                                   if p uses one node
    B(p) = min(intra_bw, inter_bw * min_i(r_i) / c)   otherwise (r_i: ranks on node i)

``intra_bw`` is the per-GPU bandwidth inside a node (NVLink/NVSwitch, or PCIe), ``inter_bw`` the
per-NIC network bandwidth, both in the same unit.  With ``T`` the job's time on the ideal
placement (``gpufleet.io/duration``) and ``f`` the fraction of it spent in exposed (not
overlapped) communication there::

    T(p) = T * ((1 - f) + f * B(ideal) / B(p)),   stretch = T(p) / T >= 1

The *ideal* placement puts the ranks on the fewest nodes, ``ceil(n / G)`` (all full but the
last), so it has stretch 1.0.  A placement that splits ranks more finely than that puts more
ring edges on fewer NICs and stretches the job; one that could beat the ideal (a less uneven
split of a job that does not fill its last node) is clamped to 1.0.  Tree and NVLS algorithms,
latency and congestion in the fabric are out of scope: this is a bandwidth-bound model of the
large all-reduces of data-parallel training.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["cross_node_edges", "ideal_ranks_per_node", "ring_bandwidth", "ring_stretch"]


def _used(ranks_per_node: Sequence[int]) -> list[int]:
    for r in ranks_per_node:
        if r < 0:
            raise ValueError(f"ranks per node must be >= 0, got {r}")
    return [r for r in ranks_per_node if r > 0]


def cross_node_edges(ranks_per_node: Sequence[int]) -> int:
    """Cross-node edges of one ring that orders ranks node by node: the number of nodes holding
    ranks, or 0 when at most one does (``[8, 8]`` -> 2, ``[4, 4, 8]`` -> 3, ``[16]`` -> 0)."""
    used = _used(ranks_per_node)
    return len(used) if len(used) > 1 else 0


def ideal_ranks_per_node(ranks: int, gpus_per_node: int) -> list[int]:
    """The fewest-nodes placement of ``ranks``: full nodes of ``gpus_per_node``, then the rest."""
    if ranks < 0 or gpus_per_node < 1:
        raise ValueError("ranks must be >= 0 and gpus_per_node >= 1")
    full, rest = divmod(ranks, gpus_per_node)
    return [gpus_per_node] * full + ([rest] if rest else [])


def ring_bandwidth(
    ranks_per_node: Sequence[int], intra_bw: float, inter_bw: float, gpus_per_node: int | None = None
) -> float:
    """``B(p)`` of the module docstring: the bandwidth of the slowest edge of each ring."""
    if intra_bw <= 0 or inter_bw <= 0:
        raise ValueError("bandwidths must be > 0")
    used = _used(ranks_per_node)
    if not used:
        raise ValueError("no ranks placed")
    channels = gpus_per_node if gpus_per_node is not None else max(used)
    if channels < max(used):
        raise ValueError(f"a node holds {max(used)} ranks but gpus_per_node is {channels}")
    if len(used) == 1:
        return intra_bw
    return min(intra_bw, inter_bw * min(used) / channels)


def ring_stretch(
    ranks_per_node: Sequence[int],
    intra_bw: float,
    inter_bw: float,
    comm_fraction: float,
    gpus_per_node: int | None = None,
) -> float:
    """``T(p) / T`` of the module docstring (>= 1.0; 1.0 on the fewest nodes).

    ``gpus_per_node`` (``G``) defaults to the largest count on one node.
    """
    if not 0.0 <= comm_fraction <= 1.0:
        raise ValueError(f"comm_fraction must be in [0, 1], got {comm_fraction}")
    used = _used(ranks_per_node)
    g = gpus_per_node if gpus_per_node is not None else max(used, default=1)
    actual = ring_bandwidth(used, intra_bw, inter_bw, g)
    ideal = ring_bandwidth(ideal_ranks_per_node(sum(used), g), intra_bw, inter_bw, g)
    return max(1.0, (1.0 - comm_fraction) + comm_fraction * ideal / actual)
