"""Which free GPUs of one node a multi-GPU pod gets, and how well a node can host it.

:func:`best_set` picks the best-connected ``k``-subset of the free GPUs, ordering candidates by

1. the worst pairwise link (:attr:`Link.cost`: ``NV#``/``NVS`` < ``PIX`` < ``PXB`` < ``PHB`` <
   ``NODE`` < ``SYS``, the order of ``nvidia-smi topo -m``'s legend), so a 4-GPU pod on a node
   with two NVLink islands of 4 gets a whole island rather than GPUs split across sockets;
2. the sum of pairwise link costs (fewer slow hops in the collective);
3. the free islands left behind (:meth:`LinkGraph.islands` at ``NVLINK``, then ``PIX``, ``PXB``,
   ``PHB``, ``NODE``), their sizes sorted descending and compared lexicographically, larger
   first: best fit, so a 2-GPU pod takes from a partly used island and keeps a whole one free;
4. the lowest GPU indices.

This follows the idea of the ``besteffort`` policy of NVIDIA's ``gpuallocator`` package
(github.com/NVIDIA/go-gpuallocator, behind the Kubernetes device plugin's preferred allocation):
score candidate sets by their pairwise links and take the best-connected one.  NCCL ranks paths
on the same scale (``NCCL_P2P_LEVEL``: ``NVL``, ``PIX``, ``PXB``, ``PHB``, ``SYS``;
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html), so the chosen set is the
one its rings run fastest on.

Complexity: the search is exact branch and bound over ``C(m, k)`` subsets of the ``m`` free GPUs
(``O(C(m, k) * k)`` time, ``O(k)`` stack), pruned by the best worst link and a lower bound on the
remaining sum; ``C(8, 4) = 70`` and ``C(16, 8) = 12870`` are milliseconds.  Step 3 treats the free
part of each island as shrinking by the GPUs taken (exact for the all-to-all islands of NVSwitch,
NVLink islands, bridged pairs and PCIe switches, the layouts :mod:`.link_graph` builds).

:func:`island_score` turns this into a 0..100 node score for the scheduler's Score phase:
60 points for the quality of the chosen set's worst link, 40 for best fit (``k`` over the free
size of the island the set lies in), so nodes that host the pod inside one island without
breaking up a larger free island score highest.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpufleet.gpus.topology.link_graph import LinkGraph, LinkLevel

__all__ = ["FRAGMENTATION_LEVELS", "best_set", "island_score", "largest_free_island"]

FRAGMENTATION_LEVELS: tuple[LinkLevel, ...] = (
    LinkLevel.NVLINK,
    LinkLevel.PIX,
    LinkLevel.PXB,
    LinkLevel.PHB,
    LinkLevel.NODE,
)
"""Island levels whose leftover free sizes break ties (step 3), most important first."""

_QUALITY_POINTS = 60
_FIT_POINTS = 40


def _checked_free(graph: LinkGraph, free: Iterable[int], k: int) -> list[int]:
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    members = sorted(set(free))
    for g in members:
        if not 0 <= g < graph.n:
            raise ValueError(f"GPU {g} is not on this node (0..{graph.n - 1})")
    return members


def _frag_key(
    chosen: tuple[int, ...],
    island_of: list[dict[int, int]],
    island_sizes: list[list[int]],
) -> tuple[tuple[int, ...], ...]:
    key: list[tuple[int, ...]] = []
    for membership, sizes in zip(island_of, island_sizes, strict=True):
        left = list(sizes)
        for g in chosen:
            left[membership[g]] -= 1
        key.append(tuple(-s for s in sorted((s for s in left if s > 0), reverse=True)))
    return tuple(key)


def best_set(graph: LinkGraph, free: Iterable[int], k: int) -> tuple[int, ...] | None:
    """The best-connected ``k`` GPUs among ``free`` (sorted ascending), ``None`` if fewer are free.

    Order: worst pairwise link, then sum of link costs, then the free islands left behind (larger
    first), then lowest indices; see the module docstring.
    """
    cand = _checked_free(graph, free, k)
    if k == 0:
        return ()
    if len(cand) < k:
        return None
    cost = [[graph.cost(i, j) for j in range(graph.n)] for i in range(graph.n)]
    min_cost = min((cost[a][b] for a in cand for b in cand if a != b), default=0)
    best: list[tuple[int, int]] = []
    ties: list[tuple[int, ...]] = []
    chosen: list[int] = []

    def search(start: int, worst: int, total: int) -> None:
        if len(chosen) == k:
            key = (worst, total)
            if not best or key < best[0]:
                best[:] = [key]
                ties[:] = [tuple(chosen)]
            elif key == best[0]:
                ties.append(tuple(chosen))
            return
        need = k - len(chosen)
        for idx in range(start, len(cand) - need + 1):
            g = cand[idx]
            new_worst = max([worst, *(cost[g][c] for c in chosen)])
            new_total = total + sum(cost[g][c] for c in chosen)
            if best:
                after = need - 1
                future_pairs = after * (len(chosen) + 1) + after * (after - 1) // 2
                if (new_worst, new_total + future_pairs * min_cost) > best[0]:
                    continue
            chosen.append(g)
            search(idx + 1, new_worst, new_total)
            chosen.pop()

    search(0, 0, 0)
    if len(ties) == 1:
        return ties[0]
    island_of: list[dict[int, int]] = []
    island_sizes: list[list[int]] = []
    for level in FRAGMENTATION_LEVELS:
        groups = graph.islands(cand, level)
        island_of.append({g: idx for idx, group in enumerate(groups) for g in group})
        island_sizes.append([len(group) for group in groups])
    return min(ties, key=lambda s: (_frag_key(s, island_of, island_sizes), s))


def largest_free_island(graph: LinkGraph, free: Iterable[int], level: LinkLevel = LinkLevel.NVLINK) -> int:
    """Size of the largest group of ``free`` GPUs joined by links at ``level`` or better."""
    groups = graph.islands(_checked_free(graph, free, 0), level)
    return len(groups[0]) if groups else 0


def island_score(graph: LinkGraph, free: Iterable[int], k: int) -> int:
    """0..100: how well this node hosts a ``k``-GPU pod (0 if it cannot, 100 if nothing to place).

    ``quality`` = 1 for a worst link of NVLink (or a single GPU), 0.8 ``PIX``, 0.6 ``PXB``,
    0.4 ``PHB``, 0.2 ``NODE``, 0 ``SYS``; ``fit`` = ``k`` / free size of the island (at that
    worst-link level) holding :func:`best_set`'s choice.  Score = round(60 * quality + 40 * fit).
    """
    members = _checked_free(graph, free, k)
    if k == 0:
        return 100
    chosen = best_set(graph, members, k)
    if chosen is None:
        return 0
    level = max(graph.worst_link(chosen).level, LinkLevel.NVLINK)
    quality = (LinkLevel.SYS - level) / (LinkLevel.SYS - LinkLevel.NVLINK)
    holder = next(group for group in graph.islands(members, level) if chosen[0] in group)
    fit = k / len(holder)
    return max(0, min(100, round(_QUALITY_POINTS * quality + _FIT_POINTS * fit)))
