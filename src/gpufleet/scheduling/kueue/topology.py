"""Kueue's Topology-Aware Scheduling at admission: every pod of a pod set in one topology domain.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/flavorassigner/tas_flavorassigner.go`` and
``pkg/cache/scheduler/tas_flavor_snapshot.go`` (``FindTopologyAssignmentsForFlavor``):

* a pod set asks for TAS with a pod-template annotation: ``podset-required-topology: <level>``
  (all its pods in one domain of that level, or it is not admitted), ``podset-preferred-topology``
  (that level, else wider ones, else spread) or ``podset-unconstrained-topology: "true"`` (any
  nodes of the flavor with room); with a required or preferred level, ``podset-group-name`` puts it
  in a pod set group, whose pod sets the flavor assigner assigns together (``flavors``; the group's
  pod sets are placed each on its own, not as one);
* only a flavor naming a ``Topology`` (``topologyName``) can take such a pod set
  (``Flavor "f" does not support TopologyAwareScheduling``); a level the Topology does not list is
  ``no requested topology level: <level>``;
* the nodes are those matching the flavor's ``nodeLabels``; their free capacity is what is left
  after the pods bound to them and the pods admitted by TAS onto them but not yet bound;
* when no domain has room: ``topology "t" doesn't allow to fit any of N pod(s)`` or ``topology
  "t" allows to fit only K out of N pod(s)`` (K: the most pods one domain of the level holds).

The pods of a pod set are alike, so a node's room is the number of pods it holds (the least, over
the requested resources, of free / request); the domain search and best-fit packing are
``gpufleet.gpus.topology.domains.place_gang`` over those counts. Each admitted pod gets its node
(the Topology's lowest level, as Kueue's TopologyUngater injects ``kubernetes.io/hostname``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpufleet.gpus.topology.domains import TopologyLevels, domains, place_gang
from gpufleet.model.kueue import Topology

REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
GROUP = "kueue.x-k8s.io/podset-group-name"


@dataclass(frozen=True)
class TopologyRequest:
    """One pod set's TAS request: ``count`` pods asking ``requests`` each."""

    pod_set: str
    count: int
    requests: Mapping[str, int]
    required: str | None = None
    preferred: str | None = None


def request_of(annotations: Mapping[str, str]) -> tuple[str | None, str | None] | None:
    """(required level, preferred level) of a pod template, or None if it asks for no TAS."""
    required, preferred = annotations.get(REQUIRED), annotations.get(PREFERRED)
    if required is None and preferred is None and annotations.get(UNCONSTRAINED) != "true":
        return None
    return required, preferred


def group_of(annotations: Mapping[str, str]) -> str | None:
    """The pod set group a pod template names (``podSetGroupName``), kept only with a required or
    preferred topology (upstream's ``podSetTopologyRequestBuilder``)."""
    return annotations.get(GROUP) if REQUIRED in annotations or PREFERRED in annotations else None


@dataclass(frozen=True)
class NodeRoom:
    labels: Mapping[str, str]
    free: dict[str, int]


def _room(free: Mapping[str, int], requests: Mapping[str, int], most: int) -> int:
    fits = [free.get(r, 0) // v for r, v in requests.items() if v > 0]
    return max(min([most, *fits]), 0)


def place(
    asks: list[TopologyRequest], topology: Topology, nodes: Mapping[str, NodeRoom]
) -> dict[str, list[str]] | str:
    """Each pod set's nodes (one per pod), or why the workload does not fit the topology (the
    ``QuotaReserved`` message: ``couldn't assign flavors to pod set <name>: <reason>``)."""
    levels = TopologyLevels(topology.levels)
    free = {name: dict(room.free) for name, room in nodes.items()}
    labels = {name: room.labels for name, room in nodes.items()}
    out: dict[str, list[str]] = {}
    for ask in asks:
        why = f"couldn't assign flavors to pod set {ask.pod_set}: "
        for level in (ask.required, ask.preferred):
            if level is not None and level not in topology.levels:
                return f"{why}no requested topology level: {level}"
        room = {name: _room(f, ask.requests, ask.count) for name, f in free.items()}
        placed = place_gang([1] * ask.count, room, labels, ask.required, ask.preferred, levels)
        if placed is None:
            level = ask.required or topology.levels[0]
            groups = domains(labels, level, levels).values()
            best = min(max((sum(room[n] for n in group) for group in groups), default=0), ask.count)
            name = f'topology "{topology.name}"'
            if best == 0:
                return f"{why}{name} doesn't allow to fit any of {ask.count} pod(s)"
            return f"{why}{name} allows to fit only {best} out of {ask.count} pod(s)"
        chosen = [placed[i] for i in range(ask.count)]
        for node in chosen:
            for r, v in ask.requests.items():
                free[node][r] = free[node].get(r, 0) - v
        out[ask.pod_set] = chosen
    return out
