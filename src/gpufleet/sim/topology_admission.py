"""Kueue's topology-aware admission of gangs (TAS), ahead of the scheduler.

Pods of a PodGroup whose template carries ``kueue.x-k8s.io/podset-required-topology: <level
label>`` (all pods in one domain at that level, or none) or ``-preferred-topology`` (try that
level, then spread) wait gated until Kueue finds room for the whole gang
(``gpus.topology.domains.place_gang``); it then injects each pod's domain as a node
selector (down to ``kubernetes.io/hostname``) and lets the scheduler place them. A gang that
requires one rack waits rather than spread. Levels are those of the Kueue ``Topology`` that lists
the requested label (the first such, by name), else the requested label and the hostname.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpufleet.gpus.topology.domains import TopologyLevels, place_gang
from gpufleet.model.pod import Pod

REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
HOSTNAME = "kubernetes.io/hostname"


def topology_request(pod: Pod) -> tuple[str | None, str | None]:
    """(required level, preferred level) the pod's template asks for."""
    return pod.annotations.get(REQUIRED), pod.annotations.get(PREFERRED)


def admit(
    pods: list[Pod],
    free_gpus: Mapping[str, int],
    node_labels: Mapping[str, Mapping[str, str]],
    topologies: Iterable[tuple[str, ...]] = (),
) -> dict[str, str] | str:
    """Each pod's node (``pod key -> node``), or why the gang must wait; ``topologies``: the levels
    of the scenario's Kueue Topology objects, by name."""
    required, preferred = topology_request(pods[0])
    level = required or preferred or HOSTNAME
    listed = next((t for t in topologies if level in t and t[-1] == HOSTNAME), None)
    if listed is not None:
        levels = TopologyLevels(listed)
    else:
        levels = TopologyLevels((level, HOSTNAME)) if level != HOSTNAME else TopologyLevels((HOSTNAME,))
    needs = [p.gpus for p in pods]
    placed = place_gang(needs, free_gpus, node_labels, required, preferred if not required else None, levels)
    if placed is None:
        return (
            f"waiting for topology admission: no {level} domain has room for all {len(pods)} pods "
            f"({sum(needs)} GPUs) of the gang ({REQUIRED if required else PREFERRED})"
        )
    return {pods[i].key: node for i, node in placed.items()}
