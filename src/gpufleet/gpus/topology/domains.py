"""Topology levels from node labels, and gang placement within one domain at a level.

**Levels.**  As Kueue's ``Topology`` object (``spec.levels[].nodeLabel``), a
:class:`TopologyLevels` lists node labels from the widest domain to the narrowest, e.g.
``("topology.kubernetes.io/block", "topology.kubernetes.io/rack", "kubernetes.io/hostname")``.
A domain at level ``i`` is identified by the label values of levels ``0..i`` (so rack ``r1`` of
block ``b1`` and rack ``r1`` of block ``b2`` are different domains); a node lacking one of those
labels is in no domain at that level and is not used by topology-aware placement.

**Placement** (:func:`place_gang`), following Kueue Topology Aware Scheduling
(https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/):

* ``kueue.x-k8s.io/podset-required-topology: <level>`` -- all pods on nodes of one domain at
  that level, or no placement at all: the gang waits rather than spread, even when the cluster
  as a whole has room.  Volcano expresses the same as ``networkTopology: {mode: hard,
  highestTierAllowed: <tier>}`` over its HyperNode tiers
  (https://volcano.sh/en/docs/network_topology_aware_scheduling/).
* ``kueue.x-k8s.io/podset-preferred-topology: <level>`` -- try one domain at that level; if no
  domain fits, climb one level at a time toward the widest; if even that fails, spread over
  several domains of the widest level.  Volcano: ``mode: soft``.
* Neither -- spread over all labelled nodes, packed as below.

Among domains that fit, the one with the least free capacity (GPUs) is taken: Kueue's
``BestFit`` and Volcano's HyperNode bin-packing, which keep big free domains whole for big
gangs.  Inside the chosen domain the same rule descends level by level (one child if one fits,
best fit; otherwise the fewest children, largest free first, the last child best fit) down to
nodes, where pods are placed largest first, each on the node with the least free GPUs that still
holds it (best-fit decreasing).  Pods are indivisible, so "fits" means this packing succeeds; as
any polynomial bin packing it may miss an exotic exact fit, never produces an infeasible one.
Pure code: node labels and free GPU counts in, ``{pod index: node}`` out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["TopologyLevels", "domains", "pack", "place_gang"]

DomainKey = tuple[str, ...]


@dataclass(frozen=True)
class TopologyLevels:
    """Node-label keys from the widest domain (index 0) to the narrowest."""

    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.labels:
            raise ValueError("at least one topology level is needed")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"duplicate topology levels in {self.labels}")

    def index(self, level: str) -> int:
        """Position of ``level`` (0 = widest); ``ValueError`` if it is not a level."""
        try:
            return self.labels.index(level)
        except ValueError:
            raise ValueError(f"{level!r} is not one of the topology levels {self.labels}") from None

    def key(self, labels: Mapping[str, str], level: str) -> DomainKey | None:
        """The node's domain at ``level``: its values of levels ``0..level``, ``None`` if unlabelled."""
        values: list[str] = []
        for name in self.labels[: self.index(level) + 1]:
            value = labels.get(name)
            if value is None:
                return None
            values.append(value)
        return tuple(values)


def domains(
    node_labels: Mapping[str, Mapping[str, str]], level: str, levels: TopologyLevels | None = None
) -> dict[DomainKey, list[str]]:
    """Nodes grouped by domain at ``level``, node names sorted.

    With ``levels`` a domain key holds the values of every level down to ``level`` (see module
    docstring); without, it is the 1-tuple of the ``level`` label's value.  Nodes lacking the
    labels are left out.
    """
    result: dict[DomainKey, list[str]] = {}
    for node in sorted(node_labels):
        labels = node_labels[node]
        key: DomainKey | None
        if levels is None:
            value = labels.get(level)
            key = None if value is None else (value,)
        else:
            key = levels.key(labels, level)
        if key is not None:
            result.setdefault(key, []).append(node)
    return result


def pack(
    pods_gpus: Sequence[int], free_gpus_by_node: Mapping[str, int], nodes: Iterable[str]
) -> dict[int, str] | None:
    """Best-fit decreasing: pods largest first (then by index), each on the node among ``nodes``
    with the least free GPUs that holds it (then by name); ``None`` if a pod does not fit."""
    free = {node: free_gpus_by_node.get(node, 0) for node in nodes}
    placement: dict[int, str] = {}
    for pod in sorted(range(len(pods_gpus)), key=lambda p: (-pods_gpus[p], p)):
        need = pods_gpus[pod]
        fitting = [node for node, left in free.items() if left >= need]
        if not fitting:
            return None
        node = min(fitting, key=lambda name: (free[name], name))
        free[node] -= need
        placement[pod] = node
    return placement


def _free(nodes: Iterable[str], free_gpus_by_node: Mapping[str, int]) -> int:
    return sum(free_gpus_by_node.get(node, 0) for node in nodes)


class _Placer:
    def __init__(
        self,
        pods_gpus: Sequence[int],
        free_gpus_by_node: Mapping[str, int],
        node_labels: Mapping[str, Mapping[str, str]],
        levels: TopologyLevels,
    ) -> None:
        self.pods = pods_gpus
        self.free = free_gpus_by_node
        self.levels = levels
        self.labels = {
            node: node_labels.get(node, {})
            for node in free_gpus_by_node
            if levels.key(node_labels.get(node, {}), levels.labels[-1]) is not None
        }

    def groups(self, nodes: Sequence[str], depth: int) -> list[list[str]]:
        level = self.levels.labels[depth]
        grouped = domains({n: self.labels[n] for n in nodes}, level, self.levels)
        return [grouped[key] for key in sorted(grouped)]

    def fits(self, nodes: Sequence[str]) -> bool:
        return pack(self.pods, self.free, nodes) is not None

    def best_single(self, groups: list[list[str]]) -> list[str] | None:
        fitting = [g for g in groups if self.fits(g)]
        if not fitting:
            return None
        return min(fitting, key=lambda g: (_free(g, self.free), g))

    def fewest(self, groups: list[list[str]]) -> list[str] | None:
        """Fewest groups, largest free first, with the last one swapped for the best fit."""
        ordered = sorted(groups, key=lambda g: (-_free(g, self.free), g))
        taken: list[list[str]] = []
        for group in ordered:
            taken.append(group)
            if self.fits([n for g in taken for n in g]):
                head = [n for g in taken[:-1] for n in g]
                rest = [g for g in ordered if g not in taken[:-1]]
                last = min((g for g in rest if self.fits(head + g)), key=lambda g: (_free(g, self.free), g))
                return head + last
        return None

    def descend(self, nodes: list[str], depth: int) -> dict[int, str] | None:
        """Place within ``nodes`` (one domain at ``depth``), compact at each narrower level."""
        if depth + 1 >= len(self.levels.labels):
            return pack(self.pods, self.free, nodes)
        children = self.groups(nodes, depth + 1)
        one = self.best_single(children)
        if one is not None:
            return self.descend(one, depth + 1)
        several = self.fewest(children)
        if several is None:
            return None
        return pack(self.pods, self.free, several)

    def at_level(self, nodes: list[str], depth: int) -> dict[int, str] | None:
        one = self.best_single(self.groups(nodes, depth))
        return None if one is None else self.descend(one, depth)

    def spread(self, nodes: list[str]) -> dict[int, str] | None:
        """One widest domain if one fits, else the fewest widest domains, packed best fit."""
        groups = self.groups(nodes, 0)
        one = self.best_single(groups)
        if one is not None:
            return self.descend(one, 0)
        several = self.fewest(groups)
        return None if several is None else pack(self.pods, self.free, several)


def place_gang(
    pods_gpus: Sequence[int],
    free_gpus_by_node: Mapping[str, int],
    node_labels: Mapping[str, Mapping[str, str]],
    required_level: str | None,
    preferred_level: str | None,
    levels: TopologyLevels,
) -> dict[int, str] | None:
    """Place every pod of a gang (``pods_gpus[i]`` GPUs for pod ``i``) or none.

    ``required_level``: one domain at that level or ``None``.  ``preferred_level``: that level,
    then wider levels one at a time, then several widest domains.  Both: one domain at the
    required level, and the preference applied inside it (the preferred level must be at or
    below the required one).  Neither: spread over all labelled nodes.  Only nodes in
    ``free_gpus_by_node`` carrying every level's label are used.
    """
    for need in pods_gpus:
        if need < 0:
            raise ValueError(f"a pod cannot need {need} GPUs")
    req = None if required_level is None else levels.index(required_level)
    pref = None if preferred_level is None else levels.index(preferred_level)
    if req is not None and pref is not None and pref < req:
        raise ValueError("the preferred level must be at or below the required level")
    placer = _Placer(pods_gpus, free_gpus_by_node, node_labels, levels)
    nodes = sorted(placer.labels)
    if not pods_gpus:
        return {}
    if req is not None:
        # Best-fit order over the required domains that fit; the preference works inside one.
        candidates = [g for g in placer.groups(nodes, req) if placer.fits(g)]
        if not candidates:
            return None
        domain = min(candidates, key=lambda g: (_free(g, free_gpus_by_node), g))
        if pref is None:
            return placer.descend(domain, req)
        for depth in range(pref, req - 1, -1):
            placed = placer.at_level(domain, depth)
            if placed is not None:
                return placed
        return placer.descend(domain, req)
    if pref is not None:
        for depth in range(pref, -1, -1):
            placed = placer.at_level(nodes, depth)
            if placed is not None:
                return placed
    return placer.spread(nodes)
