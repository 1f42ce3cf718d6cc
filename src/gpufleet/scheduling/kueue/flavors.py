"""Flavor assignment: which ResourceFlavor gives each requested resource, and whether it fits now.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/flavorassigner/flavorassigner.go``
(``assignFlavors``, ``findFlavorForPodSets``, ``fitsResourceQuota``, ``isPreferred``,
``shouldTryNextFlavor``):

* every requested resource must be covered by a resource group, else
  ``resource R unavailable in ClusterQueue``; a zero request is left out unless a group covers it,
  and then gets a flavor like any other; where a group covers ``pods``, the workload asks for one
  of it per pod;
* per group, flavors are tried in order; a flavor whose ``nodeTaints`` the pods do not
  tolerate (``untolerated taint {k: v} in flavor F``) or whose ``nodeLabels`` contradict the
  pods' nodeSelector or required node affinity (``flavor F doesn't match node affinity``) is skipped
  (``flavorSelector``: only selector keys and affinity expressions on the flavor's own label keys
  count; a term left without expressions matches every flavor), and so is one without a
  ``topologyName`` for a workload that asks for Topology-Aware Scheduling
  (``Flavor "F" does not support TopologyAwareScheduling``);
* per resource, with ``val`` the workload's request: ``val`` above what the queue could ever
  hold is ``insufficient quota for R in flavor F, request > maximum capacity (V > M)``;
  ``val`` within what is available now fits, at a *borrowing level*: 0 within the queue's nominal
  quota, else the height of the lowest subtree of the cohort tree that holds it
  (``FindHeightOfLowestSubtreeThatFits``); otherwise ``insufficient unused quota for R in flavor F,
  N more needed``, and preemption may help only if ``val`` is within the nominal quota, or a subtree
  of the cohort tree below its root would hold it (``mayReclaimInHierarchy``), or the queue's
  ``borrowWithinCohort`` policy is not ``Never`` (``canPreemptWhileBorrowing``). Then the preemption is
  simulated (the ``Oracle``: the admission's runs ``preemption.preemption_targets`` for that flavor and
  resource): no targets, targets in the queue itself (preempt) or only in other queues (reclaim),
  and the borrowing level once they are gone;
* a flavor's mode is the worst of its resources'. The search stops at a flavor that fits without
  borrowing, or that borrows where ``flavorFungibility.whenCanBorrow`` is ``MayStopSearch`` (the
  default), or that preempts where ``whenCanPreempt`` is ``MayStopSearch`` (the default is
  ``TryNextFlavor``; v1beta1's deprecated ``Borrow`` and ``Preempt`` are read as ``MayStopSearch``);
  where no flavor stops it, the best tried is taken: a fit above a preemption without targets and both
  above no fit; then, by ``preference``, reclaim over preempt over a preemption without targets and on a
  tie the lower borrowing level (``BorrowingOverPreemption``, the default), or the lower borrowing
  level first (``PreemptionOverBorrowing``).

Not modelled: the flavor a workload's last attempt reached (``LastAssignment``: upstream's next
attempt resumes the search after it); a workload's pod sets are assigned together, as one.

The reasons of every flavor tried are kept, sorted, and make the Workload's ``QuotaReserved``
condition message: ``couldn't assign flavors to pod set main: <reasons joined by ", ">``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from gpufleet.model.kueue import (
    PREEMPTION_OVER_BORROWING,
    TRY_NEXT_FLAVOR,
    ClusterQueue,
    FlavorFungibility,
    FlavorQuotas,
    FlavorResource,
    ResourceFlavor,
)
from gpufleet.model.node import tolerated
from gpufleet.model.pod import Pod
from gpufleet.model.resources import PODS, format_units
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.workload import POD_SET, Workload


class Mode(enum.IntEnum):
    """How a flavor can take the request; the lowest over resources and groups wins."""

    NO_FIT = 0
    PREEMPT = 1
    FIT = 2


@dataclass(frozen=True)
class Assignment:
    mode: Mode
    flavors: dict[str, str]  # resource -> flavor
    usage: dict[FlavorResource, int]
    borrows: bool
    reasons: tuple[str, ...]

    def message(self, pod_sets: tuple[str, ...] = (POD_SET,)) -> str:
        """The ``QuotaReserved`` message. A workload of several pod sets (a PyTorchJob's master and
        workers) is assigned as one here, so the message names them all, where Kueue names the first
        that did not fit."""
        what = f"pod set {pod_sets[0]}" if len(pod_sets) == 1 else f"pod sets {', '.join(pod_sets)}"
        return f"couldn't assign flavors to {what}: " + ", ".join(sorted(self.reasons))


def _flavor_mismatch(pod: Pod, flavor: ResourceFlavor, topology: bool = False) -> str | None:
    if topology and flavor.topology is None:  # tas_flavorassigner.go checkPodSetAndFlavorMatchForTAS
        return f'Flavor "{flavor.name}" does not support TopologyAwareScheduling'
    for taint in flavor.node_taints:
        if not tolerated(taint, pod.tolerations + flavor.tolerations):
            return f"untolerated taint {taint.describe()} in flavor {flavor.name}"
    labels = flavor.node_labels
    terms = [tuple(r for r in t.expressions if r.key in labels) for t in pod.required_terms or ()]
    if any(k in labels and labels[k] != v for k, v in pod.node_selector.items()) or (
        all(terms) and terms and not any(all(r.matches(labels) for r in t) for t in terms)
    ):
        return f"flavor {flavor.name} doesn't match node affinity"
    return None


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
    snapshot: QuotaSnapshot, cq: ClusterQueue, quotas: FlavorQuotas, resource: str, val: int, oracle: Oracle
) -> tuple[Granular, str | None]:
    fr = (quotas.flavor, resource)
    most = snapshot.potential_available(cq.name, fr)
    if val > most:
        shown = f"{format_units(resource, val)} > {format_units(resource, most)}"
        where = f"{resource} in flavor {quotas.flavor}"
        refused: Granular = (Possibility.NO_FIT, 0)
        return refused, f"insufficient quota for {where}, request > maximum capacity ({shown})"
    borrow, reclaims_below_root = snapshot.lowest_subtree_that_fits(cq.name, fr, val)
    available = snapshot.available(cq.name, fr)
    if val <= available:
        return (Possibility.FIT, borrow), None
    more = format_units(resource, val - available)
    reason = f"insufficient unused quota for {resource} in flavor {quotas.flavor}, {more} more needed"
    # preemption may help: within the nominal quota, in a subtree below the root (``mayReclaimInHierarchy``)
    # or while borrowing (``canPreemptWhileBorrowing``: ``borrowWithinCohort``; fair sharing is not modelled)
    reclaims = val <= quotas.resources[resource].nominal or reclaims_below_root or cq.preempts_while_borrowing
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


def requests_of(workload: Workload, covered: AbstractSet[str]) -> dict[str, int]:
    """What the flavors are assigned for: the workload's requests (a zero one only where a group covers
    it: ``covered``) and, where a group covers ``pods``, its pods (each pod counts one)."""
    requests = {r: v for r, v in workload.requests.items() if v > 0 or r in covered}
    if PODS in covered:
        requests[PODS] = workload.pod_count
    return requests


def assign_flavors(
    workload: Workload,
    cq: ClusterQueue,
    flavors: Mapping[str, ResourceFlavor],
    snapshot: QuotaSnapshot,
    oracle: Oracle,
) -> Assignment:
    """Each group's flavor: in order, the first that fits and no policy of the queue's
    ``flavorFungibility`` sends the search on from; where each does, the one ``preferred`` ranks first."""
    covered = {r for g in cq.resource_groups for r in g.covered}
    requests = requests_of(workload, covered)
    fungibility = cq.flavor_fungibility
    reasons: list[str] = []
    chosen: dict[str, str] = {}
    mode = Mode.FIT
    for resource in sorted(requests):
        if resource not in covered:
            reasons.append(f"resource {resource} unavailable in ClusterQueue")
            mode = Mode.NO_FIT
    for group in cq.resource_groups:
        wanted = sorted(r for r in group.covered if r in requests)
        if not wanted:
            continue
        best: tuple[Granular, str] | None = None
        for quotas in group.flavors:
            mismatch = _flavor_mismatch(workload.pod, flavors[quotas.flavor], bool(workload.topology))
            if mismatch is not None:
                reasons.append(mismatch)
                continue
            flavor_mode = BEST  # the worst over the group's resources
            for resource in wanted:
                got, reason = _fits(snapshot, cq, quotas, resource, requests[resource], oracle)
                if preferred(flavor_mode, got, fungibility):
                    flavor_mode = got
                if reason is not None:  # (every resource's, as upstream goes on past one that does not fit)
                    reasons.append(reason)
            if not _try_next(flavor_mode, fungibility):
                best = (flavor_mode, quotas.flavor)
                break
            if flavor_mode[0] is not Possibility.NO_FIT and (
                best is None or preferred(flavor_mode, best[0], fungibility)
            ):
                best = (flavor_mode, quotas.flavor)
        if best is None:
            mode = Mode.NO_FIT
            continue
        mode = min(mode, best[0][0].mode)
        chosen.update({r: best[1] for r in wanted})
    usage = {(chosen[r], r): requests[r] for r in sorted(chosen)}
    borrows = any(
        snapshot.used(cq.name, fr) + v > (q.nominal if (q := cq.quota(*fr)) is not None else 0)
        for fr, v in usage.items()
        if v > 0
    )
    if mode is not Mode.FIT:
        return Assignment(mode, chosen, usage, borrows, tuple(reasons))
    return Assignment(mode, chosen, usage, borrows, ())
