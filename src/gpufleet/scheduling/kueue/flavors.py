"""Flavor assignment: which ResourceFlavor gives each requested resource, and whether it fits now.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/flavorassigner/flavorassigner.go``
(``assignFlavors``, ``findFlavorForPodSetResource``, ``fitsResourceQuota``), with the default
``flavorFungibility`` (``whenCanBorrow: Borrow``, ``whenCanPreempt: TryNextFlavor``):

* every requested resource must be covered by a resource group, else
  ``resource R unavailable in ClusterQueue``; a zero request is left out unless a group covers it,
  and then gets a flavor like any other;
* per group, flavors are tried in order; a flavor whose ``nodeTaints`` the pods do not
  tolerate (``untolerated taint {k: v} in flavor F``) or whose ``nodeLabels`` contradict the
  pods' nodeSelector or required node affinity (``flavor F doesn't match node affinity``) is skipped
  (``flavorSelector``: only selector keys and affinity expressions on the flavor's own label keys
  count; a term left without expressions matches every flavor), and so is one without a
  ``topologyName`` for a workload that asks for Topology-Aware Scheduling
  (``Flavor "F" does not support TopologyAwareScheduling``);
* per resource, with ``val`` the workload's request: ``val`` above what the queue could ever
  hold is ``insufficient quota for R in flavor F, request > maximum capacity (V > M)``;
  ``val`` within what is available now fits (borrowing if it takes the queue over its
  nominal quota); otherwise ``insufficient unused quota for R in flavor F, N more needed``,
  and preemption may help only if ``val`` is within the nominal quota, or a subtree of the cohort
  tree below its root would hold it (``fitsResourceQuota``: ``mayReclaimInHierarchy``);
* the first flavor that fits is taken; else the first where preemption may help.

The reasons of every flavor tried are kept, sorted, and make the Workload's ``QuotaReserved``
condition message: ``couldn't assign flavors to pod set main: <reasons joined by ", ">``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from gpufleet.model.kueue import ClusterQueue, FlavorQuotas, FlavorResource, ResourceFlavor
from gpufleet.model.node import tolerated
from gpufleet.model.pod import Pod
from gpufleet.model.resources import format_units
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


def _fits(
    snapshot: QuotaSnapshot, cq: ClusterQueue, quotas: FlavorQuotas, resource: str, val: int
) -> tuple[Mode, str | None]:
    fr = (quotas.flavor, resource)
    most = snapshot.potential_available(cq.name, fr)
    if val > most:
        shown = f"{format_units(resource, val)} > {format_units(resource, most)}"
        where = f"{resource} in flavor {quotas.flavor}"
        return Mode.NO_FIT, f"insufficient quota for {where}, request > maximum capacity ({shown})"
    available = snapshot.available(cq.name, fr)
    if val <= available:
        return Mode.FIT, None
    more = format_units(resource, val - available)
    reason = f"insufficient unused quota for {resource} in flavor {quotas.flavor}, {more} more needed"
    reclaims = val <= quotas.resources[resource].nominal or snapshot.reclaims_in_a_subtree(cq.name, fr, val)
    return (Mode.PREEMPT if reclaims else Mode.NO_FIT), reason


def assign_flavors(
    workload: Workload, cq: ClusterQueue, flavors: Mapping[str, ResourceFlavor], snapshot: QuotaSnapshot
) -> Assignment:
    covered = {r for g in cq.resource_groups for r in g.covered}
    requests = {r: v for r, v in workload.requests.items() if v > 0 or r in covered}
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
        best: tuple[Mode, str] | None = None
        for quotas in group.flavors:
            mismatch = _flavor_mismatch(workload.pod, flavors[quotas.flavor], bool(workload.topology))
            if mismatch is not None:
                reasons.append(mismatch)
                continue
            flavor_mode = Mode.FIT
            for resource in wanted:
                got, reason = _fits(snapshot, cq, quotas, resource, requests[resource])
                flavor_mode = min(flavor_mode, got)
                if reason is not None:
                    reasons.append(reason)
            if flavor_mode > Mode.NO_FIT and (best is None or flavor_mode > best[0]):
                best = (flavor_mode, quotas.flavor)
            if flavor_mode == Mode.FIT:
                break
        if best is None:
            mode = Mode.NO_FIT
            continue
        mode = min(mode, best[0])
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
