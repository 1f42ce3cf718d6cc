"""Kueue's ``preemption.borrowWithinCohort``: a workload that must borrow may preempt lower-priority
workloads of other ClusterQueues of its cohort (``gpufleet.scheduling.kueue``).

Upstream rules (``kubernetes-sigs/kueue``, ``apis/kueue/v1beta2/clusterqueue_types.go``
``BorrowWithinCohort``): ``policy: LowerPriority`` allows preemption, in other ClusterQueues within
the cohort, for a borrowing workload, but only of workloads of lower priority; ``maxPriorityThreshold``
restricts them to those of priority at most the threshold. The flavor assigner offers preemption
beyond the nominal quota only then (``flavorassigner.go``: ``fitsResourceQuota``,
``canPreemptWhileBorrowing``); the classical preemption classifies such a candidate
``ReclaimWhileBorrowing`` (``preemption/classical/hierarchical_preemption.go``:
``classifyPreemptionVariant``, ``isAboveBorrowingThreshold``) and evicts it with reason
``InCohortReclaimWhileBorrowing``; any other one of another queue only if the workload then does not
borrow (``ReclaimWithoutBorrowing``).
"""

from __future__ import annotations

from gpufleet.model.kueue import ClusterQueue, FlavorQuotas, ResourceFlavor, ResourceGroup, ResourceQuota
from gpufleet.model.pod import Pod
from gpufleet.scheduling.kueue.admission import schedule
from gpufleet.scheduling.kueue.preemption import IN_COHORT_RECLAIM_WHILE_BORROWING
from gpufleet.scheduling.kueue.workload import Admitted, PodSetResources, Workload

GPU = "nvidia.com/gpu"
FLAVORS = {"h100": ResourceFlavor("h100")}


def queue(name: str, gpus: int, **preemption: object) -> ClusterQueue:
    group = ResourceGroup((GPU,), (FlavorQuotas("h100", {GPU: ResourceQuota(gpus)}),))
    return ClusterQueue(name, "research", (), resource_groups=(group,), **preemption)  # type: ignore[arg-type]


def workload(key: str, cq: str, gpus: int, priority: int = 0, created: float = 0.0) -> Workload:
    main = PodSetResources("main", 1, {GPU: gpus}, Pod("t"))
    return Workload(f"Job/{key}", cq, priority, created, 0, (main,))


def running(w: Workload, at: float = 0.0) -> Admitted:
    return Admitted(w, {"main": {GPU: "h100"}}, {("h100", GPU): w.pod_sets[0].requests[GPU]}, at)


def _cohort(
    reclaim: str = "LowerPriority", **borrow: object
) -> tuple[dict[str, ClusterQueue], list[Admitted], Workload]:
    """team-a and team-b own 4 GPUs each; team-b's ``b/low`` (priority 0) uses 6, borrowing 2 of
    team-a's; team-a's ``a/urgent`` (priority 10) asks for 6: beyond team-a's nominal quota, so it
    would borrow even once ``b/low`` is gone."""
    queues = {
        "team-a": queue("team-a", 4, reclaim_within_cohort=reclaim, **borrow),
        "team-b": queue("team-b", 4),
    }
    return queues, [running(workload("b/low", "team-b", 6))], workload("a/urgent", "team-a", 6, 10, 5)


def test_borrow_within_cohort_lower_priority_preempts_a_lower_priority_workload_of_another_queue() -> None:
    queues, admitted, urgent = _cohort(borrow_within_cohort="LowerPriority")
    result = schedule([urgent], admitted, queues, FLAVORS, set())
    assert [(p.key, t.key, t.reason) for p, t in result.preemptions] == [
        ("Job/a/urgent", "Job/b/low", IN_COHORT_RECLAIM_WHILE_BORROWING)
    ]
    assert result.messages["Job/a/urgent"].endswith(
        "insufficient unused quota for nvidia.com/gpu in flavor h100, 4 more needed"
        ". Pending the preemption of 1 workload(s)"
    )


def test_borrow_within_cohort_never_waits_for_the_lower_priority_borrower() -> None:
    """The default: a workload that would borrow may not preempt in other queues."""
    queues, admitted, urgent = _cohort()
    result = schedule([urgent], admitted, queues, FLAVORS, set())
    assert result.preemptions == [] and result.inadmissible == ["Job/a/urgent"]


def test_max_priority_threshold_spares_workloads_above_it() -> None:
    """``maxPriorityThreshold: -1`` is below ``b/low``'s priority 0: ``b/low`` could be preempted only
    if team-a then did not borrow, and it would; at the threshold 0 it is preempted."""
    queues, admitted, urgent = _cohort(borrow_within_cohort="LowerPriority", max_priority_threshold=-1)
    result = schedule([urgent], admitted, queues, FLAVORS, set())
    assert result.preemptions == [] and result.inadmissible == ["Job/a/urgent"]
    queues, admitted, urgent = _cohort(borrow_within_cohort="LowerPriority", max_priority_threshold=0)
    result = schedule([urgent], admitted, queues, FLAVORS, set())
    assert [t.key for _, t in result.preemptions] == ["Job/b/low"]


def test_borrow_within_cohort_spares_workloads_of_equal_priority() -> None:
    """Even with ``reclaimWithinCohort: Any``: only a workload of lower priority may be preempted while
    borrowing."""
    queues, admitted, _ = _cohort("Any", borrow_within_cohort="LowerPriority")
    peer = workload("a/peer", "team-a", 6, priority=0, created=5)
    result = schedule([peer], admitted, queues, FLAVORS, set())
    assert result.preemptions == [] and result.inadmissible == ["Job/a/peer"]
