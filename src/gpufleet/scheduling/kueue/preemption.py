"""Which admitted workloads to evict so that a pending one fits: Kueue's classical preemption.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/preemption/preemption.go`` (``findCandidates``,
``minimalPreemptions``, ``fillBackWorkloads``) and ``preemption/common/ordering.go``
(``CandidatesOrdering``):

* candidates use a (flavor, resource) the pending workload cannot get unused; from its own
  ClusterQueue with ``withinClusterQueue: LowerPriority`` those of lower priority,
  ``LowerOrNewerEqualPriority`` also those of equal priority created later; from the other
  ClusterQueues of its cohort tree (the queues under the same root cohort) that borrow one of
  those resources, with
  ``reclaimWithinCohort: Any`` any workload, ``LowerPriority`` those of lower priority;
* order: workloads already being evicted first, then other ClusterQueues' before its own,
  lower priority first, the most recently admitted first, then by key;
* candidates are removed in that order (another queue's only while it still borrows) until
  the workload fits, then put back from the second-to-last to the first wherever it still
  fits without them. If the workload can fit without borrowing, reclaiming is tried first
  with borrowing forbidden, and otherwise only its own queue's candidates, with borrowing.

A ``Target`` says why: ``InClusterQueue`` or ``InCohortReclamation`` (Kueue's reasons).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpufleet.model.kueue import (
    ANY,
    LOWER_OR_NEWER_EQUAL_PRIORITY,
    LOWER_PRIORITY,
    NEVER,
    ClusterQueue,
    FlavorResource,
)
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.workload import Admitted, Workload

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"


@dataclass(frozen=True)
class Target:
    key: str
    reason: str


def _fits(
    snapshot: QuotaSnapshot, cq: ClusterQueue, usage: Mapping[FlavorResource, int], allow_borrowing: bool
) -> bool:
    for fr, val in usage.items():
        if val > snapshot.available(cq.name, fr):
            return False
        quota = cq.quota(*fr)
        if not allow_borrowing and quota is not None and snapshot.used(cq.name, fr) + val > quota.nominal:
            return False
    return True


def _candidates(
    workload: Workload,
    cq: ClusterQueue,
    needed: Mapping[FlavorResource, int],
    admitted: Sequence[Admitted],
    snapshot: QuotaSnapshot,
) -> list[Admitted]:
    out: list[Admitted] = []
    for a in admitted:
        other = a.workload
        if not any(fr in needed for fr in a.usage):
            continue
        if other.cluster_queue == cq.name:
            policy = cq.within_cluster_queue
            newer_equal = (
                policy == LOWER_OR_NEWER_EQUAL_PRIORITY
                and other.priority == workload.priority
                and (other.created_s, other.order) > (workload.created_s, workload.order)
            )
            if policy != NEVER and (other.priority < workload.priority or newer_equal):
                out.append(a)
            continue
        if other.cluster_queue not in snapshot.queues or snapshot.root(other.cluster_queue) != snapshot.root(
            cq.name
        ):
            continue
        policy = cq.reclaim_within_cohort
        allowed = policy == ANY or (policy == LOWER_PRIORITY and other.priority < workload.priority)
        if allowed and snapshot.borrowing(other.cluster_queue, needed):
            out.append(a)
    return sorted(
        out,
        key=lambda a: (
            not a.evicting,
            a.workload.cluster_queue == cq.name,
            a.workload.priority,
            -a.admitted_s,
            a.workload.key,
        ),
    )


def _minimal(
    cq: ClusterQueue,
    usage: Mapping[FlavorResource, int],
    needed: Mapping[FlavorResource, int],
    candidates: Sequence[Admitted],
    snapshot: QuotaSnapshot,
    allow_borrowing: bool,
) -> list[Admitted]:
    removed: list[Admitted] = []
    fits = False
    for a in candidates:
        if a.workload.cluster_queue != cq.name and not snapshot.borrowing(a.workload.cluster_queue, needed):
            continue
        snapshot.add(a.workload.cluster_queue, a.usage, -1)
        removed.append(a)
        if _fits(snapshot, cq, usage, allow_borrowing):
            fits = True
            break
    if not fits:
        for a in removed:
            snapshot.add(a.workload.cluster_queue, a.usage)
        return []
    for i in range(len(removed) - 2, -1, -1):  # fillBackWorkloads
        a = removed[i]
        snapshot.add(a.workload.cluster_queue, a.usage)
        if _fits(snapshot, cq, usage, allow_borrowing):
            removed[i] = removed[-1]
            removed.pop()
        else:
            snapshot.add(a.workload.cluster_queue, a.usage, -1)
    for a in removed:  # leave the snapshot as it was
        snapshot.add(a.workload.cluster_queue, a.usage)
    return removed


def preemption_targets(
    workload: Workload,
    cq: ClusterQueue,
    usage: Mapping[FlavorResource, int],
    admitted: Sequence[Admitted],
    snapshot: QuotaSnapshot,
) -> list[Target]:
    """The workloads to evict so that ``workload`` (asking ``usage``) fits; empty if none would do."""
    needed = {fr: v for fr, v in usage.items() if v > snapshot.available(cq.name, fr)}
    candidates = _candidates(workload, cq, needed, admitted, snapshot)
    same_queue = [a for a in candidates if a.workload.cluster_queue == cq.name]
    if len(same_queue) == len(candidates):
        chosen = _minimal(cq, usage, needed, candidates, snapshot, allow_borrowing=True)
    else:
        chosen = _minimal(cq, usage, needed, candidates, snapshot, allow_borrowing=False)
        if not chosen:
            chosen = _minimal(cq, usage, needed, same_queue, snapshot, allow_borrowing=True)
    return [
        Target(
            a.workload.key, IN_CLUSTER_QUEUE if a.workload.cluster_queue == cq.name else IN_COHORT_RECLAMATION
        )
        for a in sorted(chosen, key=lambda a: a.workload.key)
    ]
