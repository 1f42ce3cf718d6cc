"""Flavor assignment: which ResourceFlavor gives each pod set each requested resource, and whether it fits.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/flavorassigner/flavorassigner.go``
(``assignFlavors``, ``findFlavorForPodSets``, ``checkFlavorForPodSets``, ``fitsResourceQuota``,
``isPreferred``, ``shouldTryNextFlavor``, ``resolvePodSetFlavors``):

* each pod set is assigned flavors of its own, in order; pod sets of one ``podSetGroupName`` (a TAS
  request's ``kueue.x-k8s.io/podset-group-name``: a LeaderWorkerSet's leader and workers) are assigned
  together, for their summed requests, and each gets the group's flavors of the resources it asks for
  (one asking for nothing, its group's TAS flavors). What the pod sets assigned so far take of a
  (flavor, resource) counts against the next (``assignment.Usage``: ``previously considered podsets
  requests``);
* a pod set asks for its requests over all its pods; a zero request is left out unless a group covers
  it, and then gets a flavor like any other; where a group covers ``pods``, one of it per pod. Its
  resources are taken in order (upstream's are a map's, in no order), each with the resource group
  covering it: one no group covers is ``resource R unavailable in ClusterQueue``;
* per group, flavors are tried in order; a flavor whose ``nodeTaints`` a pod set of the group does
  not tolerate (``untolerated taint {k v NoSchedule <nil>} in flavor F``: upstream's ``%s`` of the
  ``corev1.Taint``) or whose ``nodeLabels`` contradict its
  nodeSelector or required node affinity (``flavor F doesn't match node affinity``) is skipped
  (``flavorSelector``: only selector keys and affinity expressions on the flavor's own label keys
  count; a term left without expressions matches every flavor), and so is one without a
  ``topologyName`` for a pod set that asks for Topology-Aware Scheduling
  (``Flavor "F" does not support TopologyAwareScheduling``) or whose Topology does not list the pod
  set's required or preferred level (``Flavor "F" does not contain the requested level``), and one with a
  ``topologyName`` for a pod set that asks for none (``Flavor "F" supports only TopologyAwareScheduling``).
  In a ClusterQueue whose flavors are all TAS flavors, a pod set that asks for no TAS asks for it
  implicitly, unconstrained (``isTASImplied``: ``implied_tas``);
* per resource, with ``val`` what the earlier pod sets took of it in the flavor plus the request:
  ``val`` above what the queue could ever hold is ``insufficient quota for R in flavor F, previously
  considered podsets requests (P) + current podset request (V) > maximum capacity (M)``; ``val`` within
  what is available now fits, at a *borrowing level*: 0 within the queue's nominal quota, else the
  height of the lowest subtree of the cohort tree that holds it (``FindHeightOfLowestSubtreeThatFits``);
  otherwise ``insufficient unused quota for R in flavor F, N more needed``, and preemption may help only
  if ``val`` is within the nominal quota, or a subtree of the cohort tree below its root would hold it
  (``mayReclaimInHierarchy``), or the queue's ``borrowWithinCohort`` policy is not ``Never``, or fair
  sharing is on and its ``reclaimWithinCohort`` is not ``Never`` (``canPreemptWhileBorrowing``). Then
  the preemption is simulated (the ``Oracle``: the admission's runs
  ``preemption.preemption_targets`` for that flavor and resource): no targets, targets in the queue
  itself (preempt) or only in other queues (reclaim), and the borrowing level once they are gone;
* a flavor's mode is the worst of its resources'. The search stops at a flavor that fits without
  borrowing, or that borrows where ``flavorFungibility.whenCanBorrow`` is ``MayStopSearch`` (the
  default), or that preempts where ``whenCanPreempt`` is ``MayStopSearch`` (the default is
  ``TryNextFlavor``; v1beta1's deprecated ``Borrow`` and ``Preempt`` are read as ``MayStopSearch``);
  where no flavor stops it, the best tried is taken: a fit above a preemption without targets and both
  above no fit; then, by ``preference``, reclaim over preempt over a preemption without targets and on a
  tie the lower borrowing level (``BorrowingOverPreemption``, the default), or the lower borrowing
  level first (``PreemptionOverBorrowing``);
* a resource group where no flavor can take the request leaves its pod sets without flavors (``NoFit``)
  and ends the assignment there: the pod sets after them are not tried. A pod set's mode is ``Fit``
  where its group gave no reasons, else the worst of its resources' flavors'; the workload's is the
  worst of its pod sets' (``RepresentativeMode``).

Not modelled: the flavor a workload's last attempt reached (``LastAssignment``: upstream's next
attempt resumes the search after it).

The reasons of a group are those of every flavor tried for a resource group that does not simply fit
(of a resource group that found no flavor, only its own); each pod set with reasons makes a part of the
Workload's ``QuotaReserved`` condition message: ``couldn't assign flavors to pod set <name>: <reasons,
sorted, joined by ", ">``, the parts joined by ``"; "`` (``Assignment.Message``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import NamedTuple

from gpufleet.model.kueue import (
    NEVER,
    PREEMPTION_OVER_BORROWING,
    TRY_NEXT_FLAVOR,
    ClusterQueue,
    FlavorFungibility,
    FlavorQuotas,
    FlavorResource,
    ResourceFlavor,
    Topology,
)
from gpufleet.model.node import Taint, tolerated
from gpufleet.model.pod import Pod
from gpufleet.model.resources import PODS, format_units
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.topology import TopologyRequest, request_for
from gpufleet.scheduling.kueue.workload import PodSetResources, Workload


class Mode(enum.IntEnum):
    """How a flavor can take the request; the lowest over resources and groups wins."""

    NO_FIT = 0
    PREEMPT = 1
    FIT = 2


@dataclass(frozen=True)
class PodSetAssignment:
    """One pod set's flavor of each resource it asks for (none where its group found none), how it
    fits, and its group's reasons."""

    name: str
    mode: Mode
    flavors: dict[str, str]  # resource -> flavor
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Assignment:
    """The pod sets' assignments, in order (up to the first that found no flavor), and what they use
    of each (flavor, resource) together; ``borrowing``: the highest borrowing level of a resource's flavor
    (upstream's ``Assignment.Borrowing``, the ``borrow`` of each ``FlavorAssignment`` ``append`` takes the
    most of: 0 within the queue's nominal quota, else the height of the lowest subtree of the cohort tree
    that holds the request; on ``Preempt``, once the targets are gone)."""

    pod_sets: tuple[PodSetAssignment, ...]
    usage: dict[FlavorResource, int]
    borrowing: int

    @property
    def borrows(self) -> bool:
        return self.borrowing > 0

    @property
    def mode(self) -> Mode:
        """``RepresentativeMode``: the worst of the pod sets'."""
        return min((ps.mode for ps in self.pod_sets), default=Mode.NO_FIT)

    @property
    def flavors(self) -> dict[str, dict[str, str]]:
        """Each pod set's flavor of each resource (``podSetAssignments``)."""
        return {ps.name: ps.flavors for ps in self.pod_sets}

    def message(self) -> str:
        """The ``QuotaReserved`` message: each pod set with reasons, in order."""
        return "; ".join(
            f"couldn't assign flavors to pod set {ps.name}: " + ", ".join(sorted(ps.reasons))
            for ps in self.pod_sets
            if ps.reasons
        )


def _go_taint(taint: Taint) -> str:
    """The taint as ``checkFlavorForPodSets`` prints it (``untolerated taint %s``): Go's ``%s`` of a
    ``corev1.Taint`` struct, its fields in order, the unset ``timeAdded`` as ``<nil>``."""
    return f"{{{taint.key} {taint.value} {taint.effect} <nil>}}"


def _has_level(request: TopologyRequest, levels: tuple[str, ...]) -> bool:
    """``TASFlavorSnapshot.HasLevel``: the topology lists the pod set's required or preferred level (an
    unconstrained pod set names none)."""
    level = request.required or request.preferred
    return level is None or level in levels


def _flavor_mismatch(
    pod: Pod, flavor: ResourceFlavor, topology: TopologyRequest | None, levels: tuple[str, ...] | None
) -> str | None:
    """Why the flavor cannot take the pod set; ``levels``: those of the flavor's Topology, where known.
    The TAS checks are ``tas_flavorassigner.go``'s ``checkPodSetAndFlavorMatchForTAS``."""
    if topology is not None and flavor.topology is None:
        return f'Flavor "{flavor.name}" does not support TopologyAwareScheduling'
    if topology is None and flavor.topology is not None:
        return f'Flavor "{flavor.name}" supports only TopologyAwareScheduling'
    if topology is not None and levels is not None and not _has_level(topology, levels):
        return f'Flavor "{flavor.name}" does not contain the requested level'
    for taint in flavor.node_taints:
        if not tolerated(taint, pod.tolerations + flavor.tolerations):
            return f"untolerated taint {_go_taint(taint)} in flavor {flavor.name}"
    labels = flavor.node_labels
    terms = [tuple(r for r in t.expressions if r.key in labels) for t in pod.required_terms or ()]
    if any(k in labels and labels[k] != v for k, v in pod.node_selector.items()) or (
        all(terms) and terms and not any(all(r.matches(labels) for r in t) for t in terms)
    ):
        return f"flavor {flavor.name} doesn't match node affinity"
    return None


def tas_only(cq: ClusterQueue, flavors: Mapping[str, ResourceFlavor]) -> bool:
    """``clusterQueue.isTASOnly`` (``pkg/cache/scheduler/clusterqueue.go``): every flavor of every resource
    group of the queue is a TAS flavor (one naming a ``topologyName``)."""
    return all(
        f.flavor in flavors and flavors[f.flavor].topology is not None
        for g in cq.resource_groups
        for f in g.flavors
    )


def implied_tas(workload: Workload, cq: ClusterQueue, flavors: Mapping[str, ResourceFlavor]) -> Workload:
    """The workload with each pod set that asks for no TAS given an unconstrained TAS request when its
    queue is TAS-only (``isTASImplied`` in ``tas_flavorassigner.go``: ``!IsExplicitlyRequestingTAS &&
    cq.IsTASOnly()``; ``levelKeyWithImpliedFallback`` searches such a pod set at the lowest level, as
    unconstrained); itself otherwise. A pod's requests are its pod set's over its count."""
    if all(ps.topology is not None for ps in workload.pod_sets) or not tas_only(cq, flavors):
        return workload
    pod_sets = tuple(
        ps
        if ps.topology is not None
        else replace(
            ps,
            topology=request_for(
                ps.name,
                ps.count,
                {r: v // ps.count if ps.count else 0 for r, v in ps.requests.items()},
                ps.pod,
            ),
        )
        for ps in workload.pod_sets
    )
    return replace(workload, pod_sets=pod_sets)


class Possibility(enum.IntEnum):
    """How one flavor can take a request, finer than ``Mode`` (upstream's ``preemptionMode``): a
    preemption the simulation found no targets for ranks below one that has them, and reclaiming quota
    other queues borrowed above preempting within the queue."""

    NO_FIT = 0
    NO_CANDIDATES = 1
    PREEMPT = 2
    RECLAIM = 3
    FIT = 4

    @property
    def mode(self) -> Mode:
        """``flavorAssignmentMode``: a preemption, with targets or not, is ``Preempt``."""
        return {Possibility.NO_FIT: Mode.NO_FIT, Possibility.FIT: Mode.FIT}.get(self, Mode.PREEMPT)


#: (how a flavor takes a request, its borrowing level: 0 within the queue's own quota, else the height
#: of the lowest subtree of the cohort tree that holds it; upstream's ``granularMode``)
Granular = tuple[Possibility, int]
BEST: Granular = (Possibility.FIT, 0)
#: Preemption simulated for ``val`` of one (flavor, resource): what it could do, and the borrowing level
#: once its targets are gone (upstream's ``SimulatePreemption``).
Oracle = Callable[[FlavorResource, int], Granular]


def no_simulation(fr: FlavorResource, val: int) -> Granular:
    """An oracle that simulates nothing: preemption would find targets and leave the queue within its
    own quota (upstream's table tests' stub, ``testOracle`` without results)."""
    return Possibility.PREEMPT, 0


def _fits(
    snapshot: QuotaSnapshot,
    cq: ClusterQueue,
    quotas: FlavorQuotas,
    resource: str,
    request: tuple[int, int],
    oracle: Oracle,
    fair_sharing: bool,
) -> tuple[Granular, str | None]:
    """``fitsResourceQuota`` for ``request``: (what the earlier pod sets took, what this one asks)."""
    fr = (quotas.flavor, resource)
    most = snapshot.potential_available(cq.name, fr)
    val = sum(request)
    if val > most:
        earlier, current = (format_units(resource, v) for v in request)
        shown = f"previously considered podsets requests ({earlier}) + current podset request ({current})"
        where = f"{resource} in flavor {quotas.flavor}"
        refused: Granular = (Possibility.NO_FIT, 0)
        return (
            refused,
            f"insufficient quota for {where}, {shown} > maximum capacity ({format_units(resource, most)})",
        )
    borrow, reclaims_below_root = snapshot.lowest_subtree_that_fits(cq.name, fr, val)
    available = snapshot.available(cq.name, fr)
    if val <= available:
        return (Possibility.FIT, borrow), None
    more = format_units(resource, val - available)
    reason = f"insufficient unused quota for {resource} in flavor {quotas.flavor}, {more} more needed"
    # preemption may help: within the nominal quota, in a subtree below the root (``mayReclaimInHierarchy``)
    # or while borrowing (``canPreemptWhileBorrowing``: ``borrowWithinCohort``, or fair sharing's reclaim)
    while_borrowing = cq.preempts_while_borrowing or (fair_sharing and cq.reclaim_within_cohort != NEVER)
    reclaims = val <= quotas.resources[resource].nominal or reclaims_below_root or while_borrowing
    return (oracle(fr, val) if reclaims else (Possibility.NO_FIT, borrow)), reason


def preferred(a: Granular, b: Granular, fungibility: FlavorFungibility) -> bool:
    """``isPreferred``: whether ``a`` ranks above ``b``. What fits not at all ranks last, a preemption
    without targets next; then, by ``preference``, the better possibility and on a tie the lower
    borrowing level (``BorrowingOverPreemption``, the default), or the other way round."""
    if a[0] is Possibility.NO_FIT:
        return False
    if b[0] is Possibility.NO_FIT:
        return True
    if (a[0] is Possibility.NO_CANDIDATES) != (b[0] is Possibility.NO_CANDIDATES):
        return b[0] is Possibility.NO_CANDIDATES
    if fungibility.preference == PREEMPTION_OVER_BORROWING:
        return (-a[1], a[0]) > (-b[1], b[0])
    return (a[0], -a[1]) > (b[0], -b[1])


def _try_next(mode: Granular, fungibility: FlavorFungibility) -> bool:
    """``shouldTryNextFlavor``: on past a flavor that does not fit, needs a preemption without targets,
    or needs a preemption (borrowing) where ``whenCanPreempt`` (``whenCanBorrow``) is TryNextFlavor."""
    possibility, borrow = mode
    if possibility in (Possibility.NO_FIT, Possibility.NO_CANDIDATES):
        return True
    if (
        possibility in (Possibility.PREEMPT, Possibility.RECLAIM)
        and fungibility.when_can_preempt == TRY_NEXT_FLAVOR
    ):
        return True
    return borrow > 0 and fungibility.when_can_borrow == TRY_NEXT_FLAVOR


def requests_of(pod_set: PodSetResources, covered: AbstractSet[str]) -> dict[str, int]:
    """What the flavors are assigned for: the pod set's requests (a zero one only where a group covers
    it: ``covered``) and, where a group covers ``pods``, its pods (each pod counts one)."""
    requests = {r: v for r, v in pod_set.requests.items() if v > 0 or r in covered}
    if PODS in covered:
        requests[PODS] = pod_set.count
    return requests


class FlavorAssignment(NamedTuple):
    """A resource's flavor, how it takes the resource and at which borrowing level (upstream's
    ``FlavorAssignment``)."""

    flavor: str
    mode: Mode
    borrow: int


Chosen = dict[str, FlavorAssignment]


@dataclass(frozen=True)
class _Search:
    """What one assignment looks at (upstream's ``FlavorAssigner``), and what its pod sets assigned so
    far take of each (flavor, resource): ``usage``."""

    cq: ClusterQueue
    flavors: Mapping[str, ResourceFlavor]
    snapshot: QuotaSnapshot
    oracle: Oracle
    usage: dict[FlavorResource, int]
    fair_sharing: bool
    topologies: Mapping[str, Topology]

    def mismatch(self, pod_sets: list[PodSetResources], flavor: ResourceFlavor) -> str | None:
        """``checkFlavorForPodSets``: why the flavor cannot take one of the pod sets, if it cannot."""
        topology = None if flavor.topology is None else self.topologies.get(flavor.topology)
        levels = None if topology is None else topology.levels
        for ps in pod_sets:
            why = _flavor_mismatch(ps.pod, flavor, ps.topology, levels)
            if why is not None:
                return why
        return None

    def find_flavor(
        self, pod_sets: list[PodSetResources], quotas_of: tuple[FlavorQuotas, ...], requests: dict[str, int]
    ) -> tuple[Chosen | None, list[str]]:
        """``findFlavorForPodSets``: in order, the first flavor that fits and no policy of the queue's
        ``flavorFungibility`` sends the search on from; where each does, the one ``preferred`` ranks
        first; and the reasons (none where it fits). None where no flavor can take ``requests``."""
        fungibility = self.cq.flavor_fungibility
        reasons: list[str] = []
        best: tuple[Granular, Chosen] | None = None
        for quotas in quotas_of:
            mismatch = self.mismatch(pod_sets, self.flavors[quotas.flavor])
            if mismatch is not None:
                reasons.append(mismatch)
                continue
            flavor_mode = BEST  # the worst over the group's resources
            chosen: Chosen = {}
            for resource in sorted(requests):
                earlier = self.usage.get((quotas.flavor, resource), 0)
                request = (earlier, requests[resource])
                got, reason = _fits(
                    self.snapshot, self.cq, quotas, resource, request, self.oracle, self.fair_sharing
                )
                if preferred(flavor_mode, got, fungibility):
                    flavor_mode = got
                if reason is not None:  # (every resource's, as upstream goes on past one that does not fit)
                    reasons.append(reason)
                chosen[resource] = FlavorAssignment(quotas.flavor, got[0].mode, got[1])
            if not _try_next(flavor_mode, fungibility):
                best = (flavor_mode, chosen)
                break
            if flavor_mode[0] is not Possibility.NO_FIT and (
                best is None or preferred(flavor_mode, best[0], fungibility)
            ):
                best = (flavor_mode, chosen)
        if best is None:
            return None, reasons
        return best[1], [] if best[0][0] is Possibility.FIT else reasons

    def assign_group(
        self, pod_sets: list[PodSetResources], requests: dict[str, int]
    ) -> tuple[Chosen | None, list[str]]:
        """A pod set group's flavor of each resource it asks for, its resources taken in order, each
        with its resource group; None, with the reasons of the resource group that found no flavor,
        where one did not."""
        chosen: Chosen = {}
        reasons: list[str] = []
        for resource in sorted(requests):
            if resource in chosen:  # its resource group's flavor was found with another resource's
                continue
            group = next((g for g in self.cq.resource_groups if resource in g.covered), None)
            if group is None:
                return None, [f"resource {resource} unavailable in ClusterQueue"]
            wanted = {r: v for r, v in requests.items() if r in group.covered}
            found, why = self.find_flavor(pod_sets, group.flavors, wanted)
            if found is None:
                return None, why
            chosen.update(found)
            reasons.extend(why)
        return chosen, reasons

    def resolve(self, pod_set: PodSetResources, asks: dict[str, int], chosen: Chosen) -> Chosen:
        """``resolvePodSetFlavors``: the group's flavors of the resources the pod set asks for; where it
        asks for none, in a pod set group, the group's TAS flavors."""
        if asks or pod_set.group is None:
            return {r: got for r, got in chosen.items() if r in asks}
        return {r: got for r, got in chosen.items() if self.flavors[got.flavor].topology is not None}


def _groups(pod_sets: tuple[PodSetResources, ...]) -> list[list[PodSetResources]]:
    """The pod sets as they are assigned: those of one ``podSetGroupName`` together, where the first of
    them stands; each other alone (upstream's ``orderedgroups``)."""
    groups: dict[str | int, list[PodSetResources]] = {}
    for i, ps in enumerate(pod_sets):
        groups.setdefault(i if ps.group is None else ps.group, []).append(ps)
    return list(groups.values())


def assign_flavors(
    workload: Workload,
    cq: ClusterQueue,
    flavors: Mapping[str, ResourceFlavor],
    snapshot: QuotaSnapshot,
    oracle: Oracle,
    fair_sharing: bool = False,
    topologies: Mapping[str, Topology] | None = None,
) -> Assignment:
    """Each pod set's flavors, pod set group by pod set group, each group seeing what the earlier ones
    took (``assignFlavors``); it stops at a group that finds no flavor for a resource. ``fair_sharing``:
    fair sharing is on; ``topologies``: the Topologies by name, for the TAS flavors' levels."""
    covered = {r for g in cq.resource_groups for r in g.covered}
    search = _Search(cq, flavors, snapshot, oracle, {}, fair_sharing, topologies or {})
    assigned: list[PodSetAssignment] = []
    borrowing = 0
    for group in _groups(workload.pod_sets):
        asks = [requests_of(ps, covered) for ps in group]
        requests: dict[str, int] = {}
        for ask in asks:
            for r, v in ask.items():
                requests[r] = requests.get(r, 0) + v
        chosen, reasons = search.assign_group(group, requests)
        for ps, ask in zip(group, asks, strict=True):
            mine = {} if chosen is None else search.resolve(ps, ask, chosen)
            if chosen is None:
                mode = Mode.NO_FIT
            elif not reasons:
                mode = Mode.FIT
            else:  # the worst of its flavors' (one that asks for nothing and has none: NoFit)
                mode = min((got.mode for got in mine.values()), default=Mode.NO_FIT)
            assigned.append(
                PodSetAssignment(ps.name, mode, {r: got.flavor for r, got in mine.items()}, tuple(reasons))
            )
            for r, got in mine.items():
                fr = (got.flavor, r)
                search.usage[fr] = search.usage.get(fr, 0) + ask.get(r, 0)
                borrowing = max(borrowing, got.borrow)
        if chosen is None:
            break
    return Assignment(tuple(assigned), search.usage, borrowing)
