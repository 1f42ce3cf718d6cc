"""Kueue admission, borrowing and preemption as pure decisions (``gpufleet.scheduling.kueue``).

Upstream rules: ``kubernetes-sigs/kueue`` ``pkg/scheduler/flavorassigner`` (fit, borrowing limits,
messages), ``pkg/cache/scheduler/resource_node.go`` (available quota in a cohort),
``pkg/scheduler/scheduler.go`` (heads, StrictFIFO vs BestEffortFIFO) and
``pkg/scheduler/preemption`` (candidates and their order, reclaim, within the ClusterQueue).
"""

from __future__ import annotations

from gpufleet.model.kueue import (
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from gpufleet.model.pod import Pod
from gpufleet.scheduling.kueue.admission import schedule
from gpufleet.scheduling.kueue.flavors import Mode, assign_flavors, no_simulation
from gpufleet.scheduling.kueue.oracle import preemption_oracle
from gpufleet.scheduling.kueue.preemption import IN_CLUSTER_QUEUE, IN_COHORT_RECLAMATION, preemption_targets
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.workload import Admitted, PodSetResources, Workload

GPU = "nvidia.com/gpu"
H100 = ResourceFlavor("h100", {"gpu": "h100"})
FLAVORS = {"h100": H100, "a100": ResourceFlavor("a100", {"gpu": "a100"})}


def queue(name: str, gpus: int, cohort: str | None = "research", **kw: object) -> ClusterQueue:
    borrowing = kw.pop("borrowing_limit", None)
    lending = kw.pop("lending_limit", None)
    quota = ResourceQuota(gpus, borrowing, lending)  # type: ignore[arg-type]
    group = ResourceGroup((GPU,), (FlavorQuotas("h100", {GPU: quota}),))
    return ClusterQueue(name, cohort, (), resource_groups=(group,), **kw)  # type: ignore[arg-type]


def job(
    key: str,
    cq: str,
    requests: dict[str, int],
    pod: Pod | None = None,
    count: int = 1,
    priority: int = 0,
    created: float = 0.0,
) -> Workload:
    """A Job of ``count`` pods asking ``requests`` in all: its one pod set ``main``."""
    main = PodSetResources("main", count, requests, Pod("t") if pod is None else pod)
    return Workload(f"Job/{key}", cq, priority, created, 0, (main,))


def workload(key: str, cq: str, gpus: int, priority: int = 0, created: float = 0.0) -> Workload:
    return job(key, cq, {GPU: gpus}, priority=priority, created=created)


def admitted(w: Workload, at: float = 0.0, evicting: bool = False, flavor: str = "h100") -> Admitted:
    gpus = w.pod_sets[0].requests[GPU]
    return Admitted(w, {"main": {GPU: flavor}}, {(flavor, GPU): gpus}, at, evicting)


def test_admission_within_nominal_quota_then_insufficient_unused_quota_message() -> None:
    queues = {"team-a": queue("team-a", 8, cohort=None)}
    pending = [workload("a/one", "team-a", 4), workload("a/two", "team-a", 4, created=1)]
    first = schedule(pending, [], queues, FLAVORS, set())
    assert [w.key for w, _ in first.admitted] == ["Job/a/one"]  # one head per queue per cycle
    second = schedule(pending[1:], [admitted(pending[0])], queues, FLAVORS, set())
    assert [w.key for w, _ in second.admitted] == ["Job/a/two"]
    third = schedule(
        [workload("a/three", "team-a", 2, created=2)],
        [admitted(pending[0]), admitted(pending[1])],
        queues,
        FLAVORS,
        set(),
    )
    assert third.admitted == []
    assert third.messages == {
        "Job/a/three": "couldn't assign flavors to pod set main: "
        "insufficient unused quota for nvidia.com/gpu in flavor h100, 2 more needed"
    }


def test_best_effort_fifo_lets_a_smaller_workload_pass_a_blocked_head() -> None:
    queues = {"team-a": queue("team-a", 8, cohort=None)}
    running = [admitted(workload("a/running", "team-a", 4))]
    pending = [workload("a/big", "team-a", 8, created=1), workload("a/small", "team-a", 2, created=2)]
    set_aside: set[str] = set()
    first = schedule(pending, running, queues, FLAVORS, set_aside)
    assert first.admitted == [] and first.inadmissible == ["Job/a/big"]
    set_aside.update(first.inadmissible)
    second = schedule(pending, running, queues, FLAVORS, set_aside)
    assert [w.key for w, _ in second.admitted] == ["Job/a/small"]


def test_strict_fifo_head_blocks_the_queue() -> None:
    queues = {"team-a": queue("team-a", 8, cohort=None, queueing_strategy="StrictFIFO")}
    running = [admitted(workload("a/running", "team-a", 4))]
    pending = [workload("a/big", "team-a", 8, created=1), workload("a/small", "team-a", 2, created=2)]
    result = schedule(pending, running, queues, FLAVORS, set())
    assert result.admitted == [] and result.inadmissible == []
    assert not result.changed()  # the head stays; nothing behind it is tried
    assert "Job/a/small" not in result.messages


def test_higher_priority_is_the_head_before_older() -> None:
    queues = {"team-a": queue("team-a", 4, cohort=None)}
    pending = [workload("a/old", "team-a", 4, created=0), workload("a/urgent", "team-a", 4, 100, created=5)]
    result = schedule(pending, [], queues, FLAVORS, set())
    assert [w.key for w, _ in result.admitted] == ["Job/a/urgent"]


def test_borrowing_from_the_cohort_within_borrowing_limit() -> None:
    queues = {"team-a": queue("team-a", 4, borrowing_limit=2), "team-b": queue("team-b", 8)}
    snapshot = QuotaSnapshot(queues, {})
    fits = assign_flavors(workload("a/six", "team-a", 6), queues["team-a"], FLAVORS, snapshot, no_simulation)
    assert fits.mode is Mode.FIT and fits.borrows and fits.flavors == {"main": {GPU: "h100"}}
    too_big = assign_flavors(
        workload("a/seven", "team-a", 7), queues["team-a"], FLAVORS, snapshot, no_simulation
    )
    assert too_big.mode is Mode.NO_FIT
    assert too_big.message() == (
        "couldn't assign flavors to pod set main: "
        "insufficient quota for nvidia.com/gpu in flavor h100, previously considered podsets requests (0) + "
        "current podset request (7) > maximum capacity (6)"
    )


def test_lending_limit_caps_what_the_cohort_can_borrow() -> None:
    queues = {"team-a": queue("team-a", 4), "team-b": queue("team-b", 8, lending_limit=2)}
    snapshot = QuotaSnapshot(queues, {})
    assert snapshot.available("team-a", ("h100", GPU)) == 6
    assert snapshot.available("team-b", ("h100", GPU)) == 12  # 6 guaranteed + the pool's 6
    snapshot.add("team-a", {("h100", GPU): 6})
    assert snapshot.available("team-b", ("h100", GPU)) == 6  # its guaranteed part is never lent


def test_flavors_are_tried_in_order_and_the_first_that_fits_is_taken() -> None:
    group = ResourceGroup(
        (GPU,), (FlavorQuotas("h100", {GPU: ResourceQuota(8)}), FlavorQuotas("a100", {GPU: ResourceQuota(8)}))
    )
    cq = ClusterQueue("team-a", None, (), resource_groups=(group,))
    snapshot = QuotaSnapshot({"team-a": cq}, {"team-a": {("h100", GPU): 8}})
    got = assign_flavors(workload("a/x", "team-a", 8), cq, FLAVORS, snapshot, no_simulation)
    assert got.mode is Mode.FIT and got.flavors == {"main": {GPU: "a100"}}
    pinned = job("a/y", "team-a", {GPU: 8}, Pod("t", node_selector={"gpu": "h100"}))
    refused = assign_flavors(pinned, cq, FLAVORS, snapshot, no_simulation)
    assert refused.mode is Mode.PREEMPT and refused.flavors == {"main": {GPU: "h100"}}
    assert "flavor a100 doesn't match node affinity" in refused.pod_sets[0].reasons


def test_resource_not_covered_is_unavailable_in_cluster_queue() -> None:
    cq = queue("team-a", 8, cohort=None)
    w = job("a/x", "team-a", {GPU: 1, "cpu": 1000})
    got = assign_flavors(w, cq, FLAVORS, QuotaSnapshot({"team-a": cq}, {}), no_simulation)
    assert got.mode is Mode.NO_FIT and "resource cpu unavailable in ClusterQueue" in got.message()


def _borrowed_cohort(policy: str) -> tuple[dict[str, ClusterQueue], list[Admitted], Workload]:
    queues = {"team-a": queue("team-a", 8, reclaim_within_cohort=policy), "team-b": queue("team-b", 8)}
    own = admitted(workload("b/own", "team-b", 8), at=0)
    borrow_old = admitted(workload("b/borrow-old", "team-b", 4), at=10)
    borrow_new = admitted(workload("b/borrow-new", "team-b", 4), at=20)
    return queues, [own, borrow_old, borrow_new], workload("a/train", "team-a", 4, created=30)


def test_reclaim_within_cohort_any_evicts_the_most_recently_admitted_borrower() -> None:
    queues, running, pending = _borrowed_cohort("Any")
    snapshot = QuotaSnapshot(queues, {"team-b": {("h100", GPU): 16}})
    targets = preemption_targets(pending, queues["team-a"], {("h100", GPU): 4}, running, snapshot)
    assert [(t.key, t.reason) for t in targets] == [("Job/b/borrow-new", IN_COHORT_RECLAMATION)]
    result = schedule([pending], running, queues, FLAVORS, set())
    assert [(p.key, t.key) for p, t in result.preemptions] == [("Job/a/train", "Job/b/borrow-new")]
    assert result.messages["Job/a/train"].endswith(
        "insufficient unused quota for nvidia.com/gpu in flavor h100, 4 more needed"
        ". Pending the preemption of 1 workload(s)"
    )


def test_reclaim_within_cohort_never_waits() -> None:
    queues, running, pending = _borrowed_cohort("Never")
    result = schedule([pending], running, queues, FLAVORS, set())
    assert result.preemptions == [] and result.inadmissible == ["Job/a/train"]


def test_reclaim_lower_priority_spares_equal_priority_borrowers() -> None:
    queues, running, pending = _borrowed_cohort("LowerPriority")
    assert schedule([pending], running, queues, FLAVORS, set()).preemptions == []
    urgent = workload("a/urgent", "team-a", 4, priority=10, created=30)
    result = schedule([urgent], running, queues, FLAVORS, set())
    assert [t.key for _, t in result.preemptions] == ["Job/b/borrow-new"]


def test_within_cluster_queue_lower_priority_preempts_only_lower_priority() -> None:
    queues = {"team-a": queue("team-a", 8, cohort=None, within_cluster_queue="LowerPriority")}
    low = admitted(workload("a/low", "team-a", 8, priority=0), at=0)
    high = workload("a/high", "team-a", 8, priority=100, created=5)
    result = schedule([high], [low], queues, FLAVORS, set())
    assert [(t.key, t.reason) for _, t in result.preemptions] == [("Job/a/low", IN_CLUSTER_QUEUE)]
    peer = workload("a/peer", "team-a", 8, priority=0, created=5)
    assert schedule([peer], [low], queues, FLAVORS, set()).preemptions == []


def test_a_victim_already_being_evicted_is_not_evicted_twice() -> None:
    queues, running, pending = _borrowed_cohort("Any")
    running[-1] = admitted(running[-1].workload, at=20, evicting=True)
    result = schedule([pending], running, queues, FLAVORS, set())
    assert result.preemptions == [] and not result.changed()  # it waits for the victim to be gone


def test_a_queue_without_quota_reclaims_its_cohorts_quota_lent_up_the_tree() -> None:
    """``fitsResourceQuota``: preemption may help where a subtree below the root would hold the
    request (``FindHeightOfLowestSubtreeThatFits``: ``mayReclaimInHierarchy``), though the queue has no
    nominal quota. The cohort ``team`` owns 8 GPUs and lends them up to ``org``, where ``x`` borrows
    them; ``a`` under ``team`` reclaims them (``InCohortReclamation``). Under a flat cohort, a queue
    without quota has no claim and waits."""
    cohorts = {
        "org": Cohort("org"),
        "team": Cohort(
            "team", "org", (ResourceGroup((GPU,), (FlavorQuotas("h100", {GPU: ResourceQuota(8)}),)),)
        ),
    }
    queues = {
        "a": queue("a", 0, cohort="team", reclaim_within_cohort="Any"),
        "x": queue("x", 0, cohort="org"),
    }
    running = [admitted(workload("x/borrower", "x", 8), at=10)]
    pending = workload("a/train", "a", 8, created=30)
    snapshot = QuotaSnapshot(queues, {"x": {("h100", GPU): 8}}, cohorts)
    oracle = preemption_oracle(pending, queues["a"], running, snapshot)
    assert assign_flavors(pending, queues["a"], FLAVORS, snapshot, oracle).mode is Mode.PREEMPT
    targets = preemption_targets(pending, queues["a"], {("h100", GPU): 8}, running, snapshot)
    assert [(t.key, t.reason) for t in targets] == [("Job/x/borrower", IN_COHORT_RECLAMATION)]
    flat = {"a": queue("a", 0, cohort="org", reclaim_within_cohort="Any"), "x": queues["x"]}
    flat_cohorts = {"org": Cohort("org", None, cohorts["team"].resource_groups)}
    flat_snapshot = QuotaSnapshot(flat, {"x": {("h100", GPU): 8}}, flat_cohorts)
    assert assign_flavors(pending, flat["a"], FLAVORS, flat_snapshot, no_simulation).mode is Mode.NO_FIT


def _two_flavors(name: str, h100: int, a100: int, **kw: object) -> ClusterQueue:
    """A queue of the ``research`` cohort with GPUs in flavors h100 then a100."""
    flavors = (
        FlavorQuotas("h100", {GPU: ResourceQuota(h100)}),
        FlavorQuotas("a100", {GPU: ResourceQuota(a100)}),
    )
    return ClusterQueue(name, "research", (), resource_groups=(ResourceGroup((GPU,), flavors),), **kw)  # type: ignore[arg-type]


def test_when_can_borrow_try_next_flavor_takes_a_later_flavor_within_quota_over_borrowing() -> None:
    """``shouldTryNextFlavor``: a flavor that fits only by borrowing stops the search with the default
    ``whenCanBorrow: MayStopSearch``; with ``TryNextFlavor`` the next flavor, which fits within the queue's
    own quota, is taken."""
    lender = _two_flavors("lender", 8, 0)
    for policy, flavor, borrows in (("MayStopSearch", "h100", True), ("TryNextFlavor", "a100", False)):
        fungibility = FlavorFungibility(when_can_borrow=policy)
        queues = {"a": _two_flavors("a", 4, 8, flavor_fungibility=fungibility), "lender": lender}
        result = schedule([workload("a/x", "a", 6)], [], queues, FLAVORS, set())
        [(_, got)] = result.admitted
        assert (got.flavors, got.borrows) == ({"main": {GPU: flavor}}, borrows)


def test_a_preemption_without_targets_sends_the_search_to_the_next_flavor() -> None:
    """``isPreferred``/``shouldTryNextFlavor`` with the preemption oracle: where the simulated preemption
    finds no targets (``NoCandidates``), even ``whenCanPreempt: MayStopSearch`` goes on, and a later flavor
    that fits is taken. Here h100 is the queue's, used by a workload of higher priority, and a100 is free."""
    fungibility = FlavorFungibility(when_can_preempt="MayStopSearch")
    queues = {
        "a": _two_flavors("a", 8, 8, flavor_fungibility=fungibility, within_cluster_queue="LowerPriority")
    }
    running = [admitted(workload("a/important", "a", 8, priority=100))]
    result = schedule([workload("a/x", "a", 4)], running, queues, FLAVORS, set())
    assert [(w.key, a.flavors) for w, a in result.admitted] == [("Job/a/x", {"main": {GPU: "a100"}})]
    assert result.preemptions == []
    low = [admitted(workload("a/low", "a", 8, priority=-1))]  # a target: the search stops at h100
    stopped = schedule([workload("a/x", "a", 4)], low, queues, FLAVORS, set())
    assert stopped.admitted == [] and [t.key for _, t in stopped.preemptions] == ["Job/a/low"]


def test_a_pods_quota_counts_each_pod_of_the_workload() -> None:
    """``assignFlavors``: where a resource group covers ``pods``, a pod set asks for one per pod."""
    group = ResourceGroup(
        (GPU, "pods"), (FlavorQuotas("h100", {GPU: ResourceQuota(64), "pods": ResourceQuota(4)}),)
    )
    cq = ClusterQueue("a", None, (), resource_groups=(group,))
    refused = schedule([job("a/x", "a", {GPU: 8}, count=5)], [], {"a": cq}, FLAVORS, set())
    assert refused.admitted == []
    assert refused.messages["Job/a/x"] == (
        "couldn't assign flavors to pod set main: insufficient quota for pods in flavor h100, "
        "previously considered podsets requests (0) + current podset request (5) > maximum capacity (4)"
    )
    fits = schedule([job("a/y", "a", {GPU: 8}, count=4)], [], {"a": cq}, FLAVORS, set())
    [(_, got)] = fits.admitted
    assert got.usage == {("h100", GPU): 8, ("h100", "pods"): 4}


def test_a_flavor_whose_preemption_finds_targets_ranks_above_an_earlier_one_whose_does_not() -> None:
    """``isPreferred``: with the default ``whenCanPreempt: TryNextFlavor`` every flavor is tried; one whose
    simulated preemption has targets ranks above one without (``NoCandidates``), whatever their order.
    Here h100 is held by a workload of higher priority, a100 by one of lower."""
    queues = {"a": _two_flavors("a", 8, 8, within_cluster_queue="LowerPriority")}
    important = workload("a/important", "a", 8, priority=100)
    low = workload("a/low", "a", 8, priority=-1)
    running = [admitted(important), admitted(low, flavor="a100")]
    result = schedule([workload("a/x", "a", 4)], running, queues, FLAVORS, set())
    assert [(w.key, t.key) for w, t in result.preemptions] == [("Job/a/x", "Job/a/low")]
    assert result.inadmissible == []
