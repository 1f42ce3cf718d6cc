"""Which admitted workloads to evict so that a pending one fits: Kueue's classical preemption.

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/preemption/preemption.go`` (``classicalPreemptions``,
``fillBackWorkloads``, ``workloadFits``), ``preemption/classical/hierarchical_preemption.go`` and
``candidate_generator.go`` (which workloads are candidates, of which kind, and when one is still
valid) and ``CandidatesOrdering``. The (flavor, resource) pairs that need preemption are those the
workload asks more of than is available (the flavor assigner's ``Preempt`` mode):

* candidates use one of those pairs. From the workload's own ClusterQueue (``withinClusterQueue``):
  ``LowerPriority`` those of lower priority, ``LowerOrNewerEqualPriority`` also those of equal
  priority created later. From the other ClusterQueues of its cohort tree (``reclaimWithinCohort``:
  ``Any`` any workload, ``LowerPriority`` those of lower priority), walking up from its cohort to
  the root: at each cohort, the ClusterQueues below it and outside the subtree already walked whose
  way up to it is over quota in one of those pairs (a ClusterQueue over its nominal quota, a cohort
  over its subtree quota). Once the workload fits in the quota of its ClusterQueue, or of a cohort
  walked so far (``QuantitiesFitInQuota``), it has the better claim: the queues found from there on
  give *hierarchy* candidates; before, *priority* candidates, which it may only preempt if it then
  does not borrow, except (``borrowWithinCohort.policy: LowerPriority``) those of lower priority than
  it and, where ``maxPriorityThreshold`` is set, of at most that priority: those it may preempt while
  it borrows (``classifyPreemptionVariant``: ``ReclaimWhileBorrowing``);
* order: the workloads already being evicted first, then hierarchy, priority and own-queue
  candidates, each kind from lower priority, the most recently admitted, then by key;
* candidates are removed in that order (another queue's only while it, and each cohort on its way
  up to where it meets the workload's, is still over quota) until the workload fits, then put back
  from the second-to-last to the first wherever it still fits without them;
* that search runs with borrowing allowed (the priority candidates it may preempt only without
  borrowing skipped) when no other queue gives a candidate, or when the ``borrowWithinCohort`` policy
  is ``Never`` (the default) and the workload's ClusterQueue already uses its nominal quota of a pair
  needing preemption; else, with ``Never`` and no hierarchy candidates, first without borrowing, then
  with it; else with borrowing, then without. The first run that fits gives the targets.

With fair sharing on (the manager Configuration's ``fairSharing``), ``fairPreemptions`` instead:

* candidates: the workloads the policies let it preempt that use a pair needing preemption, of its own
  ClusterQueue (``withinClusterQueue``) and, with ``reclaimWithinCohort``, of every other ClusterQueue
  of its cohort tree that uses more than its nominal quota of such a pair (``findCandidates``), in
  ``CandidatesOrdering``;
* the workload's usage is added to its queue, and the ClusterQueues are taken in fair sharing's order
  (``fair_ordering.TargetOrdering``): one of its own queue's candidates is preempted
  (``InClusterQueue``); while its queue stays within its nominal quota of the pairs needing preemption
  (``FairSharingPreemptWithinNominal``, on by default), another queue's next candidate is
  (``InCohortReclamation``); otherwise the first of the queue's candidates that the first strategy
  allows (``InCohortFairSharing``), comparing the shares of the two queues' almost least common
  ancestors, the ones refused kept for the second strategy. Each removal is followed by a check that
  the workload fits (borrowing allowed) and, after one that does not, by a new choice of queue;
* if it does not fit yet and a second strategy is configured (``LessThanInitialShare``), each queue of
  the refused candidates, in the same order, gives its first candidate if the rule holds, and is then
  dropped (``runSecondFsStrategy``);
* once it fits, the candidates are put back from the second-to-last to the first wherever it still
  fits without them (``fillBackWorkloads``). ``borrowWithinCohort`` plays no part.

A ``Target`` says why: ``InClusterQueue``, ``InCohortReclamation``, ``InCohortReclaimWhileBorrowing`` or
``InCohortFairSharing`` (Kueue's reasons).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpufleet.model.kueue import (
    ANY,
    LOWER_OR_NEWER_EQUAL_PRIORITY,
    LOWER_PRIORITY,
    NEVER,
    ClusterQueue,
    FairSharing,
    FlavorResource,
)
from gpufleet.scheduling.kueue.fair_ordering import TargetOrdering
from gpufleet.scheduling.kueue.fair_sharing import STRATEGIES, Strategy, less_than_initial_share
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.workload import Admitted, Workload

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"


@dataclass(frozen=True)
class Target:
    key: str
    reason: str


class _Kind(enum.Enum):
    """``classical.preemptionVariant``."""

    WITHIN_CQ = enum.auto()
    HIERARCHICAL_RECLAIM = enum.auto()
    RECLAIM_WITHOUT_BORROWING = enum.auto()  # only if the workload then does not borrow
    RECLAIM_WHILE_BORROWING = enum.auto()  # even if it does (``borrowWithinCohort``)

    @property
    def reason(self) -> str:
        """``PreemptionReason``."""
        if self is _Kind.WITHIN_CQ:
            return IN_CLUSTER_QUEUE
        if self is _Kind.RECLAIM_WHILE_BORROWING:
            return IN_COHORT_RECLAIM_WHILE_BORROWING
        return IN_COHORT_RECLAMATION


@dataclass(frozen=True)
class _Candidate:
    admitted: Admitted
    kind: _Kind
    lca: str | None  # the cohort where its ClusterQueue's path meets the preemptor's; None: the same queue

    @property
    def queue(self) -> str:
        return self.admitted.workload.cluster_queue


@dataclass(frozen=True)
class _Search:
    """What one preemption search looks at: ``preemptionCtx``."""

    workload: Workload
    cq: ClusterQueue
    usage: Mapping[FlavorResource, int]
    needed: frozenset[FlavorResource]  # ``frsNeedPreemption``
    admitted: Mapping[str, list[Admitted]]  # by ClusterQueue (``ClusterQueueSnapshot.Workloads``)
    snapshot: QuotaSnapshot


def _satisfies_policy(search: _Search, other: Workload) -> bool:
    """``satisfiesPreemptionPolicy``: the policy for the candidate's queue lets the workload preempt it."""
    workload = search.workload
    own = other.cluster_queue == search.cq.name
    policy = search.cq.within_cluster_queue if own else search.cq.reclaim_within_cohort
    lower = other.priority < workload.priority
    if policy == LOWER_PRIORITY:
        return lower
    if policy == LOWER_OR_NEWER_EQUAL_PRIORITY:
        newer = (other.created_s, other.order) > (workload.created_s, workload.order)
        return lower or (other.priority == workload.priority and newer)
    return policy == ANY


def _eligible(search: _Search, other: Admitted) -> bool:
    """The candidate uses a pair needing preemption (``WorkloadUsesResources``) and the policy for its
    queue lets the workload preempt it."""
    return any(fr in search.needed for fr in other.usage) and _satisfies_policy(search, other.workload)


def _above_threshold(cq: ClusterQueue, candidate: int, incoming: int) -> bool:
    """``isAboveBorrowingThreshold``: a candidate of this priority may not be preempted while the
    workload borrows: not lower than the workload's, or above ``maxPriorityThreshold`` where it is set."""
    if candidate >= incoming:
        return True
    return cq.max_priority_threshold is not None and candidate > cq.max_priority_threshold


def _variant(search: _Search, other: Admitted, advantage: bool) -> _Kind | None:
    """``classifyPreemptionVariant``: whether (``None``: not) and how the workload may preempt
    ``other``, which uses a pair needing preemption and which the policy lets it preempt; one of
    another queue with ``advantage`` (its quota is the workload's by the cohort tree) is a hierarchy
    candidate, else a priority one, that it may preempt while borrowing only where
    ``borrowWithinCohort`` allows."""
    if not _eligible(search, other):
        return None
    if other.workload.cluster_queue == search.cq.name:
        return _Kind.WITHIN_CQ
    if advantage:
        return _Kind.HIERARCHICAL_RECLAIM
    cq, priority = search.cq, other.workload.priority
    if not cq.preempts_while_borrowing or _above_threshold(cq, priority, search.workload.priority):
        return _Kind.RECLAIM_WITHOUT_BORROWING
    return _Kind.RECLAIM_WHILE_BORROWING


def _from_queue(search: _Search, queue: str, lca: str | None, advantage: bool) -> list[_Candidate]:
    """``getCandidatesFromCQ``: the queue's workloads the workload may preempt, each of its kind."""
    out: list[_Candidate] = []
    for a in search.admitted.get(queue, ()):
        kind = _variant(search, a, advantage)
        if kind is not None:
            out.append(_Candidate(a, kind, lca))
    return out


def _over_quota_queues(search: _Search, cohort: str, skip: str | None) -> list[str]:
    """``collectCandidatesInSubtree``: the ClusterQueues under ``cohort`` (but not under ``skip``, nor
    the preemptor's) over quota in a pair needing preemption, through cohorts that are too."""
    snapshot = search.snapshot
    out: list[str] = []
    for child in snapshot.children.get(cohort, ()):
        if child == skip or snapshot.within_quota(child, search.needed):
            continue
        kind, name = child.split(":", 1)
        if kind == "cohort":
            out.extend(_over_quota_queues(search, child, skip))
        elif name != search.cq.name:
            out.append(name)
    return out


def _cohort_candidates(search: _Search) -> tuple[list[_Candidate], list[_Candidate]]:
    """``collectCandidatesForHierarchicalReclaim``: the hierarchy candidates and the priority ones."""
    hierarchy: list[_Candidate] = []
    priority: list[_Candidate] = []
    if search.cq.cohort is None or search.cq.reclaim_within_cohort == NEVER:
        return hierarchy, priority
    snapshot = search.snapshot
    advantage, remaining = snapshot.fit_in_quota(f"cq:{search.cq.name}", search.usage)
    previous: str | None = None
    for cohort in snapshot.ancestors(search.cq.name):
        out = hierarchy if advantage else priority
        for queue in _over_quota_queues(search, cohort, previous):
            out.extend(_from_queue(search, queue, cohort, advantage))
        fits, remaining = snapshot.fit_in_quota(cohort, remaining)
        advantage = advantage or fits
        previous = cohort
    return hierarchy, priority


def _rank(search: _Search, a: Admitted) -> tuple[bool, bool, int, float, str]:
    """``CandidatesOrdering``: being evicted, another queue's, lower priority, admitted more recently,
    then by key."""
    return (
        not a.evicting,
        a.workload.cluster_queue == search.cq.name,
        a.workload.priority,
        -a.admitted_s,
        a.workload.key,
    )


def _ordered(search: _Search, *kinds: list[_Candidate]) -> list[_Candidate]:
    """``NewCandidateIterator``: each kind in ``CandidatesOrdering``, the evicted of every kind before the
    rest."""
    ranked = [sorted(candidates, key=lambda c: _rank(search, c.admitted)) for candidates in kinds]
    return [c for evicting in (True, False) for cs in ranked for c in cs if c.admitted.evicting == evicting]


def _valid(search: _Search, candidate: _Candidate, borrow: bool) -> bool:
    """``candidateIsValid``: a candidate of another queue still frees quota the workload may take:
    its queue, and each cohort up to where it meets the workload's, is still over quota."""
    if candidate.queue == search.cq.name:
        return True
    if borrow and candidate.kind is _Kind.RECLAIM_WITHOUT_BORROWING:
        return False
    node: str | None = f"cq:{candidate.queue}"
    while node is not None and node != candidate.lca:
        if search.snapshot.within_quota(node, search.needed):
            return False
        node = search.snapshot.parent(node)
    return True


def _fits(search: _Search, allow_borrowing: bool) -> bool:
    """``workloadFits``: within what is available, and without borrowing unless allowed."""
    cq, snapshot = search.cq, search.snapshot
    for fr, val in search.usage.items():
        quota = cq.quota(*fr)
        nominal = 0 if quota is None else quota.nominal
        if not allow_borrowing and snapshot.used(cq.name, fr) + val > nominal:
            return False
        if val > snapshot.available(cq.name, fr):
            return False
    return True


def _minimal(search: _Search, candidates: Sequence[_Candidate], allow_borrowing: bool) -> list[_Candidate]:
    """One run of ``classicalPreemptions``: remove valid candidates in order until the workload fits,
    then ``fillBackWorkloads``; the snapshot is left as it was. Empty if it never fits."""
    snapshot = search.snapshot
    removed: list[_Candidate] = []
    fits = False
    for c in candidates:
        if not _valid(search, c, allow_borrowing):
            continue
        snapshot.add(c.queue, c.admitted.usage, -1)
        removed.append(c)
        if _fits(search, allow_borrowing):
            fits = True
            break
    if fits:
        kept = {a.workload.key for a in _fill_back(search, [c.admitted for c in removed], allow_borrowing)}
        removed = [c for c in removed if c.admitted.workload.key in kept]
    _restore(snapshot, [c.admitted for c in removed])
    return removed if fits else []


def _fill_back(search: _Search, removed: list[Admitted], allow_borrowing: bool) -> list[Admitted]:
    """``fillBackWorkloads``: from the second-to-last to the first, a removed workload is put back where
    the workload still fits without it (its place taken by the last); the snapshot keeps the rest out."""
    snapshot = search.snapshot
    for i in range(len(removed) - 2, -1, -1):
        a = removed[i]
        snapshot.add(a.workload.cluster_queue, a.usage)
        if _fits(search, allow_borrowing):
            removed[i] = removed[-1]
            removed.pop()
        else:
            snapshot.add(a.workload.cluster_queue, a.usage, -1)
    return removed


def _restore(snapshot: QuotaSnapshot, removed: Sequence[Admitted]) -> None:
    """``restoreSnapshot``."""
    for a in removed:
        snapshot.add(a.workload.cluster_queue, a.usage)


def _under_nominal(search: _Search) -> bool:
    """``queueUnderNominalInResourcesNeedingPreemption``."""
    for fr in search.needed:
        quota = search.cq.quota(*fr)
        if search.snapshot.used(search.cq.name, fr) >= (0 if quota is None else quota.nominal):
            return False
    return True


def _borrows(snapshot: QuotaSnapshot, cq: ClusterQueue, fr: FlavorResource) -> bool:
    """``ClusterQueueSnapshot.Borrowing``: the queue uses more than its nominal quota of ``fr``."""
    quota = cq.quota(*fr)
    return snapshot.used(cq.name, fr) > (0 if quota is None else quota.nominal)


def _fair_candidates(search: _Search) -> list[Admitted]:
    """``findCandidates``: the workloads of the queue (``withinClusterQueue``) and of the other queues of
    its cohort tree that borrow a pair needing preemption (``reclaimWithinCohort``, ``cqIsBorrowing``)
    that the policies let it preempt and that use such a pair, in ``CandidatesOrdering``."""
    cq, snapshot = search.cq, search.snapshot
    queues = [] if cq.within_cluster_queue == NEVER else [cq.name]
    if cq.cohort is not None and cq.reclaim_within_cohort != NEVER:
        root = snapshot.root(cq.name)
        queues.extend(
            name
            for name, other in sorted(snapshot.queues.items())
            if name != cq.name
            and snapshot.root(name) == root
            and any(_borrows(snapshot, other, fr) for fr in search.needed)
        )
    found = (a for q in queues for a in search.admitted.get(q, ()) if _eligible(search, a))
    return sorted(found, key=lambda a: _rank(search, a))


def _take(search: _Search, targets: list[tuple[Admitted, str]], victim: Admitted, reason: str) -> bool:
    """Remove ``victim``'s usage; whether the workload now fits (``workloadFitsForFairSharing``: borrowing
    allowed, its own usage, added for the shares, left out)."""
    snapshot = search.snapshot
    snapshot.add(victim.workload.cluster_queue, victim.usage, -1)
    targets.append((victim, reason))
    snapshot.add(search.cq.name, search.usage, -1)
    fits = _fits(search, True)
    snapshot.add(search.cq.name, search.usage)
    return fits


def _first_strategy(
    search: _Search, candidates: list[Admitted], strategy: Strategy, targets: list[tuple[Admitted, str]]
) -> tuple[bool, list[Admitted]]:
    """``runFirstFsStrategy``: whether the workload fits, and the candidates the strategy refused."""
    cq = search.cq.name
    ordering = TargetOrdering(search.snapshot, cq, candidates, lambda a: _rank(search, a))
    # ``FairSharingPreemptWithinNominal``: with the workload, its queue stays within its nominal quota
    within_nominal = not any(_borrows(search.snapshot, search.cq, fr) for fr in search.needed)
    retry: list[Admitted] = []
    for queue in ordering:
        if queue == cq or within_nominal:
            reason = IN_CLUSTER_QUEUE if queue == cq else IN_COHORT_RECLAMATION
            if _take(search, targets, ordering.pop(queue), reason):
                return True, []
            continue
        preemptor_new, target_old = ordering.shares(queue)
        while ordering.has_workload(queue):
            candidate = ordering.pop(queue)
            if strategy(preemptor_new, target_old, ordering.share_without(queue, candidate)):
                if _take(search, targets, candidate, IN_COHORT_FAIR_SHARING):
                    return True, []
                break  # the shares changed: the next queue may be another
            retry.append(candidate)
    return False, retry


def _second_strategy(search: _Search, retry: list[Admitted], targets: list[tuple[Admitted, str]]) -> bool:
    """``runSecondFsStrategy`` (rule S2-b, ``LessThanInitialShare``): each queue of the refused
    candidates gives its first if the preemptor's share is below the queue's, once."""
    ordering = TargetOrdering(search.snapshot, search.cq.name, retry, lambda a: _rank(search, a))
    for queue in ordering:
        preemptor_new, target_old = ordering.shares(queue)
        candidate = ordering.pop(queue)
        if less_than_initial_share(preemptor_new, target_old, target_old) and _take(
            search, targets, candidate, IN_COHORT_FAIR_SHARING
        ):
            return True
        ordering.drop(queue)
    return False


def _fair_preemptions(search: _Search, strategies: tuple[str, ...]) -> list[Target]:
    """``fairPreemptions``: the first strategy, then (if configured and still needed) the second; the
    snapshot is left as it was. Empty if the workload never fits."""
    candidates = _fair_candidates(search)
    if not candidates:
        return []
    snapshot, cq = search.snapshot, search.cq.name
    targets: list[tuple[Admitted, str]] = []
    snapshot.add(cq, search.usage)  # the shares include the incoming workload
    fits, retry = _first_strategy(search, candidates, STRATEGIES[strategies[0]], targets)
    if not fits and len(strategies) > 1:
        fits = _second_strategy(search, retry, targets)
    snapshot.add(cq, search.usage, -1)
    removed = [a for a, _ in targets]
    if fits:
        removed = _fill_back(search, removed, True)
    _restore(snapshot, removed)
    reasons = {a.workload.key: reason for a, reason in targets}
    return [Target(a.workload.key, reasons[a.workload.key]) for a in removed] if fits else []


def preemption_targets(
    workload: Workload,
    cq: ClusterQueue,
    usage: Mapping[FlavorResource, int],
    admitted: Sequence[Admitted],
    snapshot: QuotaSnapshot,
    fair_sharing: FairSharing | None = None,
) -> list[Target]:
    """The workloads to evict so that ``workload`` (asking ``usage``) fits; empty if none would do. With
    ``fair_sharing``, fair sharing's preemption."""
    needed = frozenset(fr for fr, v in usage.items() if v > snapshot.available(cq.name, fr))
    by_queue: dict[str, list[Admitted]] = {}
    for a in admitted:
        by_queue.setdefault(a.workload.cluster_queue, []).append(a)
    search = _Search(workload, cq, usage, needed, by_queue, snapshot)
    if fair_sharing is not None:
        return sorted(_fair_preemptions(search, fair_sharing.preemption_strategies), key=lambda t: t.key)
    same_queue = [] if cq.within_cluster_queue == NEVER else _from_queue(search, cq.name, None, False)
    hierarchy, priority = _cohort_candidates(search)
    candidates = _ordered(search, hierarchy, priority, same_queue)
    forbidden = not cq.preempts_while_borrowing  # ``IsBorrowingWithinCohortForbidden``
    if not (hierarchy or priority) or (forbidden and not _under_nominal(search)):
        runs: tuple[bool, ...] = (True,)
    elif forbidden and not hierarchy:
        runs = (False, True)
    else:
        runs = (True, False)
    for allow_borrowing in runs:
        chosen = _minimal(search, candidates, allow_borrowing)
        if chosen:
            targets = [Target(c.admitted.workload.key, c.kind.reason) for c in chosen]
            return sorted(targets, key=lambda t: t.key)
    return []
