"""Kueue's Topology-Aware Scheduling at admission: every pod of a pod set in one topology domain.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/flavorassigner/tas_flavorassigner.go`` and
``pkg/cache/scheduler/tas_flavor_snapshot.go`` (``FindTopologyAssignmentsForFlavor``):

* a pod set asks for TAS with a pod-template annotation: ``podset-required-topology: <level>``
  (all its pods in one domain of that level, or it is not admitted), ``podset-preferred-topology``
  (that level, else wider ones, else spread) or ``podset-unconstrained-topology: "true"`` (any
  nodes of the flavor with room; so does a pod set without these annotations in a ClusterQueue whose
  flavors are all TAS flavors: ``flavors.implied_tas``); with a required or preferred level,
  ``podset-group-name`` puts it in a pod set group, whose pod sets the flavor assigner assigns together
  (``flavors``; the group's pod sets are placed each on its own, not as one);
* only a flavor naming a ``Topology`` (``topologyName``) can take such a pod set
  (``Flavor "f" does not support TopologyAwareScheduling``), and only such a pod set a flavor naming one
  (``Flavor "f" supports only TopologyAwareScheduling``); a level the Topology does not list is
  ``no requested topology level: <level>``;
* the nodes are those matching the flavor's ``nodeLabels``; their free capacity is what is left
  after the pods bound to them and the pods admitted by TAS onto them but not yet bound; where the
  Topology's lowest level is the hostname, a node is left out when it has a ``NoSchedule`` or
  ``NoExecute`` taint that neither the pod template's nor the flavor's tolerations tolerate, or does not
  match the pod template's ``nodeSelector`` or required node affinity (``FindFeasibleNodes``; counted in
  the exclusion stats as ``taint "k=v:Effect"``, ``nodeSelector``, ``affinity``);
* when no domain has room: ``topology "t" doesn't allow to fit any of N pod(s)`` or ``topology
  "t" allows to fit only K out of N pod(s)`` (K: the pods the domain that holds most holds at a required
  level, or all the domains at the widest level together for a preferred or unconstrained pod set),
  followed by the exclusion stats (``. Total nodes: M; excluded: resource "r": k``: the leaf domains that
  hold no pod, by the resource that limits them, and the nodes left out, by why); ``no topology domains
  at level: <level>`` when no node carries the level's labels.

The pods of a pod set are alike, so a node's room is the number of pods it holds (the least, over the
requested resources and one ``pods`` slot where the room counts ``pods``, of free / request); the domain
search is upstream's ``findTopologyAssignment`` over those counts (``DomainSearch``): BestFit (the domain that
holds most first, the last one swapped for the one that holds what is left most tightly) for a required
or preferred level, LeastFreeCapacity (the domain that holds least first; ``TASProfileMixed``, on by
default) for an unconstrained pod set, a preferred level climbing one level at a time to the widest and
then spreading over the fewest widest domains, and the walk down one level at a time over the chosen
domains' children taken together. A leaf domain of several nodes (a lowest level other than the
hostname) holds the sum of its nodes' pods. Not modelled: pod set slices, a group's pod sets placed
together, balanced placement and preferred node affinity (alpha, off by default). Each admitted pod gets
its node (the Topology's lowest level, as Kueue's TopologyUngater injects ``kubernetes.io/hostname``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpufleet.model.kueue import Topology
from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, Taint, Toleration, tolerated
from gpufleet.model.pod import Pod, SelectorTerm
from gpufleet.model.resources import PODS

REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
GROUP = "kueue.x-k8s.io/podset-group-name"
HOSTNAME = "kubernetes.io/hostname"


@dataclass(frozen=True)
class TopologyRequest:
    """One pod set's TAS request: ``count`` pods asking ``requests`` each; the pod template's
    ``nodeSelector`` (``node_selector``), required node affinity terms (``affinity``; None: none) and
    tolerations (the pod template's, then its TAS flavor's) filter the nodes where the Topology's lowest
    level is the hostname (``FindFeasibleNodes``)."""

    pod_set: str
    count: int
    requests: Mapping[str, int]
    required: str | None = None
    preferred: str | None = None
    node_selector: tuple[tuple[str, str], ...] = ()
    affinity: tuple[SelectorTerm, ...] | None = None
    tolerations: tuple[Toleration, ...] = ()


def request_for(
    pod_set: str,
    count: int,
    requests: Mapping[str, int],
    template: Pod,
    required: str | None = None,
    preferred: str | None = None,
) -> TopologyRequest:
    """The pod set's TAS request, with its pod template's node constraints (``podset.FromPodSet``:
    ``nodeSelector``, required node affinity, tolerations)."""
    return TopologyRequest(
        pod_set,
        count,
        requests,
        required,
        preferred,
        tuple(sorted(template.node_selector.items())),
        template.required_terms,
        template.tolerations,
    )


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
    """A node's labels and what it has free; a ``pods`` entry, where present, limits the pods it takes;
    its taints."""

    labels: Mapping[str, str]
    free: dict[str, int]
    taints: tuple[Taint, ...] = ()


def _taint_string(taint: Taint) -> str:
    """``corev1.Taint.ToString``: ``key=value:effect``, or ``key:effect`` without a value."""
    return f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"


def _term_matches(term: SelectorTerm, name: str, labels: Mapping[str, str]) -> bool:
    """``nodeaffinity.NodeSelector.Match`` for one term: its expressions on the labels, its fields on the
    node's name; an empty or unparsable term matches nothing."""
    if (not term.expressions and not term.fields) or term.parse_errors:
        return False
    return all(r.matches(dict(labels)) for r in term.expressions) and all(
        r.matches({"metadata.name": name}) for r in term.fields
    )


def excluded_by(name: str, room: NodeRoom, ask: TopologyRequest) -> str | None:
    """Why the pod set cannot go to the node at all, as the exclusion stats name it, or None
    (``defaultSimulatorSnapshot.FindFeasibleNodes``, ``pkg/cache/scheduler/scheduling_simulator_default.go``):
    its first ``NoSchedule``/``NoExecute`` taint the tolerations do not tolerate (``taint "k=v:Effect"``;
    ``FindMatchingUntoleratedTaint`` with ``IsSchedulingTaint``), then the ``nodeSelector``
    (``nodeSelector``), then the required node affinity (``affinity``)."""
    for taint in room.taints:
        if taint.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerated(taint, ask.tolerations):
            return f'taint "{_taint_string(taint)}"'
    if any(room.labels.get(k) != v for k, v in ask.node_selector):
        return "nodeSelector"
    if ask.affinity is not None and not any(_term_matches(t, name, room.labels) for t in ask.affinity):
        return "affinity"
    return None


def _pod_requests(requests: Mapping[str, int], free: Mapping[str, int]) -> dict[str, int]:
    """One pod's requests with its ``pods`` slot (upstream adds ``resources.OnePodRequest``), counted
    on rooms that track ``pods``."""
    return {**requests, PODS: 1} if PODS in free else dict(requests)


def _count_in(free: Mapping[str, int], requests: Mapping[str, int]) -> tuple[int, str]:
    """How many pods fit in ``free`` and the resource that limits them, ties broken by name
    (``resources.CountInWithLimitingResource``; a negative free amount fits none)."""
    fits = sorted((max(free.get(r, 0), 0) // v, r) for r, v in requests.items() if v > 0)
    return fits[0] if fits else (2**31 - 1, "")


@dataclass
class Domain:
    """A topology domain: its level values (widest first), its nodes, its children one level down and the
    pods it holds (upstream's ``domain`` and its ``domainState.podCount``)."""

    values: tuple[str, ...]
    nodes: list[str]
    children: list[Domain]
    count: int = 0


class _NoFit(Exception):
    """The pod set does not fit: ``fits`` pods do, or ``reason`` says why none is searched."""

    def __init__(self, fits: int, reason: str = "") -> None:
        super().__init__(reason)
        self.fits = fits
        self.reason = reason


class DomainSearch:
    """``TASFlavorSnapshot.findTopologyAssignment`` (``pkg/cache/scheduler/tas_flavor_snapshot.go``)
    for one pod set of alike pods, without slices, pod set groups, balanced placement or node
    affinity: phase 1 counts the pods each domain holds (``fillInCounts``: a leaf its nodes' pods, a
    parent its children's), phase 2a finds the level and the domains that hold them all
    (``findLevelWithFitDomains``), phase 2b walks down one level at a time taking the fewest domains
    (``updateCountsToMinimumGeneric`` over ``sortedDomains``).  A pod set with neither a required nor
    a preferred level is unconstrained, searched at the lowest level with LeastFreeCapacity (fewest
    pods first; ``TASProfileMixed``, on by default); the others use BestFit (most pods first, the
    last domain swapped for the one that holds what is left most tightly)."""

    def __init__(self, levels: tuple[str, ...], labels: Mapping[str, Mapping[str, str]]) -> None:
        self.levels = levels
        self.per_level: list[dict[tuple[str, ...], Domain]] = [{} for _ in levels]
        for node in sorted(labels):
            values = [labels[node].get(level) for level in levels]
            if any(v is None for v in values):
                continue
            key = tuple(str(v) for v in values)
            for depth in range(len(levels)):
                prefix = key[: depth + 1]
                if prefix not in self.per_level[depth]:
                    self.per_level[depth][prefix] = Domain(prefix, [], [])
                    if depth > 0:
                        self.per_level[depth - 1][key[:depth]].children.append(self.per_level[depth][prefix])
                self.per_level[depth][prefix].nodes.append(node)
        self.unconstrained = False

    def leaves(self) -> list[Domain]:
        return list(self.per_level[-1].values())

    def fill(self, room: Mapping[str, int]) -> None:
        """``fillInCounts``: the pods each domain holds."""
        for depth in range(len(self.levels) - 1, -1, -1):
            for dom in self.per_level[depth].values():
                below = [room[n] for n in dom.nodes] if not dom.children else [c.count for c in dom.children]
                dom.count = sum(below)

    def sorted(self, domains: list[Domain]) -> list[Domain]:
        """``sortedDomains``: BestFit most pods first, LeastFreeCapacity fewest first; then by values."""
        sign = 1 if self.unconstrained else -1
        return sorted(domains, key=lambda d: (sign * d.count, d.values))

    @staticmethod
    def best_fit(domains: list[Domain], need: int) -> Domain:
        """``findBestFitDomainBy``: the first domain holding the fewest pods that still holds ``need``."""
        fitting = [d for d in domains if d.count >= need]
        return min(fitting, key=lambda d: d.count) if fitting else domains[0]

    def find_level(self, depth: int, need: int, required: bool) -> tuple[int, list[Domain]]:
        """``findLevelWithFitDomains``: the level and the domains there that hold ``need`` pods."""
        level = list(self.per_level[depth].values())
        if not level:
            raise _NoFit(0, f"no topology domains at level: {self.levels[depth]}")
        ordered = self.sorted(level)
        top = ordered[0]
        if self.unconstrained:
            for dom in ordered:
                if dom.count >= need:
                    return depth, [dom]
        elif top.count >= need:
            top = self.best_fit(ordered, need)
        if top.count >= need:
            return depth, [top]
        if required:
            raise _NoFit(top.count)
        if depth > 0 and not self.unconstrained:
            return self.find_level(depth - 1, need, required)
        taken: list[Domain] = []
        left = need
        for i, dom in enumerate(ordered):
            if left <= 0:
                break
            if not self.unconstrained and dom.count >= left:
                dom = self.best_fit(ordered[i:], left)
            taken.append(dom)
            left -= dom.count
        if left > 0:
            raise _NoFit(need - left)
        return depth, taken

    def to_minimum(self, domains: list[Domain], need: int) -> list[tuple[Domain, int]]:
        """``updateCountsToMinimumGeneric``: the domains in order until ``need`` pods are placed, the
        last one swapped for the best fit (BestFit only)."""
        out: list[tuple[Domain, int]] = []
        left = need
        for i, dom in enumerate(domains):
            if not self.unconstrained and dom.count >= left:
                dom = self.best_fit(domains[i:], left)
            if dom.count >= left:
                out.append((dom, left))
                return out
            out.append((dom, dom.count))
            left -= dom.count
        return out

    def find(self, required: str | None, preferred: str | None, count: int) -> list[tuple[Domain, int]]:
        """Each leaf domain taken and its pods; ``_NoFit`` when they do not fit."""
        self.unconstrained = required is None and preferred is None
        level = required or preferred or self.levels[-1]
        depth, fit = self.find_level(self.levels.index(level), count, required is not None)
        chosen = self.to_minimum(fit, count)
        for _ in range(depth, len(self.levels) - 1):
            children = [c for dom, _ in chosen for c in dom.children]
            chosen = self.to_minimum(self.sorted(children), count)
        return [(dom, n) for dom, n in chosen if n > 0]


def _exclusions(
    search: DomainSearch,
    free: Mapping[str, Mapping[str, int]],
    requests: Mapping[str, int],
    excluded: Mapping[str, str],
) -> str:
    """``notFitMessage``'s exclusion stats: ``. Total nodes: N; excluded: nodeSelector: k, resource "r": k,
    ...`` (``tasExclusionStats.formatReasons``, sorted): a node the pod template's constraints exclude
    counted under its reason (``excluded``), a leaf that holds no pod under the resource that limits it."""
    leaves = search.leaves()
    counts: dict[str, int] = {}
    for leaf in leaves:
        reasons = [excluded[n] for n in leaf.nodes if n in excluded]
        if reasons and len(reasons) == len(leaf.nodes):
            counts[reasons[0]] = counts.get(reasons[0], 0) + 1
            continue
        total: dict[str, int] = {}
        for node in leaf.nodes:
            if node in excluded:
                continue
            for r, v in free[node].items():
                total[r] = total.get(r, 0) + v
        fits, resource = _count_in(total, _pod_requests(requests, total))
        if fits == 0 and resource:
            key = f'resource "{resource}"'
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return ""
    reasons = sorted(f"{r}: {k}" for r, k in counts.items())
    return f". Total nodes: {len(leaves)}; excluded: {', '.join(reasons)}"


def _spread(leaf: Domain, pods: int, room: Mapping[str, int]) -> list[str]:
    """The nodes of a leaf domain for its ``pods`` (one node where the lowest level is the hostname;
    else its nodes filled in name order, where kube-scheduler would pick among them)."""
    out: list[str] = []
    for node in leaf.nodes:
        take = min(room[node], pods - len(out))
        out.extend([node] * take)
    return out


def place(
    asks: list[TopologyRequest], topology: Topology, nodes: Mapping[str, NodeRoom]
) -> dict[str, list[str]] | str:
    """Each pod set's nodes (one per pod), or why the workload does not fit the topology (the
    ``QuotaReserved`` message: ``couldn't assign flavors to pod set <name>: <reason>``).  The pod sets
    are placed one after another, each on what the ones before it left (upstream's assumed usage)."""
    free = {name: dict(room.free) for name, room in nodes.items()}
    search = DomainSearch(topology.levels, {name: room.labels for name, room in nodes.items()})
    by_host = topology.levels[-1] == HOSTNAME  # ``isLowestLevelNode``: only then are nodes filtered
    out: dict[str, list[str]] = {}
    for ask in asks:
        why = f"couldn't assign flavors to pod set {ask.pod_set}: "
        for level in (ask.required, ask.preferred):
            if level is not None and level not in topology.levels:
                return f"{why}no requested topology level: {level}"
        excluded: dict[str, str] = {}
        if by_host:
            for name in sorted(nodes):
                reason = excluded_by(name, nodes[name], ask)
                if reason is not None:
                    excluded[name] = reason
        room = {
            name: 0 if name in excluded else _count_in(f, _pod_requests(ask.requests, f))[0]
            for name, f in free.items()
        }
        search.fill(room)
        try:
            chosen = search.find(ask.required, ask.preferred, ask.count)
        except _NoFit as no:
            if no.reason:
                return why + no.reason
            name = f'topology "{topology.name}"'
            stats = _exclusions(search, free, ask.requests, excluded)
            if no.fits == 0:
                return f"{why}{name} doesn't allow to fit any of {ask.count} pod(s){stats}"
            return f"{why}{name} allows to fit only {no.fits} out of {ask.count} pod(s){stats}"
        placed = [node for leaf, pods in chosen for node in _spread(leaf, pods, room)]
        for node in placed:
            for r, v in _pod_requests(ask.requests, free[node]).items():
                free[node][r] = free[node].get(r, 0) - v
        out[ask.pod_set] = placed
    return out
