"""Kueue's fair sharing (the manager Configuration's ``fairSharing``) as pure decisions
(``gpufleet.scheduling.kueue``), cycle after cycle until nothing changes, each victim gone at once.

Upstream rules (``kubernetes-sigs/kueue``): ``keps/1714-fair-sharing``;
``pkg/cache/scheduler/fair_sharing.go`` (a queue's share: what it borrows above its nominal quota over
what its cohort could lend, divided by its ``fairSharing.weight``);
``pkg/scheduler/preemption/preemption.go`` (``fairPreemptions``: a queue within its nominal quota
reclaims it, reason ``InCohortReclamation``; beyond it, it preempts from the queue with the highest
share while its own share with the workload stays at most the target's without the victim,
``LessThanOrEqualToFinalShare``, reason ``InCohortFairSharing``);
``pkg/scheduler/fair_sharing_iterator.go`` (the heads of a cycle go by the share their queues would
have, the lowest first).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from conftest import simulated
from gpufleet.model.kueue import (
    ANY,
    ClusterQueue,
    Cohort,
    FairSharing,
    FlavorQuotas,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from gpufleet.model.pod import Pod
from gpufleet.scheduling.kueue.admission import schedule
from gpufleet.scheduling.kueue.preemption import IN_COHORT_FAIR_SHARING, IN_COHORT_RECLAMATION
from gpufleet.scheduling.kueue.workload import Admitted, PodSetResources, Workload

GPU = "nvidia.com/gpu"
H100 = ("h100", GPU)
FLAVORS = {"h100": ResourceFlavor("h100")}
ON = FairSharing()


def _gpus(nominal: int) -> tuple[ResourceGroup, ...]:
    return (ResourceGroup((GPU,), (FlavorQuotas("h100", {GPU: ResourceQuota(nominal)}),)),)


def team(name: str, nominal: int, weight: float = 1.0, cohort: str | None = "research") -> ClusterQueue:
    """A ClusterQueue (of the cohort ``research``) owning ``nominal`` GPUs that reclaims from any other
    (``reclaimWithinCohort: Any``)."""
    return ClusterQueue(
        name, cohort, (), resource_groups=_gpus(nominal), reclaim_within_cohort=ANY, fair_weight=weight
    )


def job(key: str, cq: str, gpus: int, priority: int = 0, created: float = 0.0, order: int = 0) -> Workload:
    """A Job ``key`` of ``gpus`` GPUs in ``cq``."""
    main = PodSetResources("main", 1, {GPU: gpus}, Pod("t"))
    return Workload(f"Job/{key}", cq, priority, created, order, (main,))


def jobs(cq: str, count: int, gpus: int, created: float, name: str = "job") -> list[Workload]:
    """``count`` Jobs of ``gpus`` GPUs each, in ``cq``, created at ``created``."""
    return [job(f"{cq}/{name}-{i}", cq, gpus, created=created, order=i) for i in range(count)]


def running(workloads: list[Workload]) -> list[Admitted]:
    return [
        Admitted(w, {"main": {GPU: "h100"}}, {H100: w.pod_sets[0].requests[GPU]}, i)
        for i, w in enumerate(workloads)
    ]


def settle(
    queues: dict[str, ClusterQueue],
    admitted: list[Admitted],
    pending: list[Workload],
    fair_sharing: FairSharing | None,
    cohorts: dict[str, Cohort] | None = None,
) -> tuple[dict[str, int], Counter[str]]:
    """Cycles until one changes nothing, victims gone at once: the GPUs each queue then uses, and the
    preemptions by reason."""
    reasons: Counter[str] = Counter()
    admitted, pending = list(admitted), list(pending)
    while True:
        result = schedule(pending, admitted, queues, FLAVORS, set(), cohorts, fair_sharing=fair_sharing)
        gone = {t.key for _, t in result.preemptions}
        reasons.update(t.reason for _, t in result.preemptions)
        admitted = [a for a in admitted if a.workload.key not in gone]
        for w, assignment in result.admitted:
            admitted.append(Admitted(w, assignment.flavors, assignment.usage, len(admitted) + 1000.0))
        taken = {w.key for w, _ in result.admitted}
        pending = [w for w in pending if w.key not in taken]
        if not result.admitted and not result.preemptions:
            used = Counter[str]()
            for a in admitted:
                used[a.workload.cluster_queue] += a.usage[H100]
            return dict(used), reasons


def test_an_idle_team_reclaims_its_nominal_quota_with_reclamation_as_the_reason() -> None:
    """Both teams own 8 GPUs; team-a borrowed all 16 while team-b was idle. team-b's jobs reclaim its
    nominal quota: within it, fair sharing preempts whatever borrows (``FairSharingPreemptWithinNominal``)
    with upstream's reason ``InCohortReclamation``; beyond it team-a would have to give up its own
    nominal quota, which no share allows: an even split."""
    queues = {"team-a": team("team-a", 8), "team-b": team("team-b", 8)}
    used, reasons = settle(queues, running(jobs("team-a", 8, 2, 0.0)), jobs("team-b", 8, 2, 600.0), ON)
    assert used == {"team-a": 8, "team-b": 8}
    assert reasons == {IN_COHORT_RECLAMATION: 4}


POOL = {"research": Cohort("research", None, _gpus(12))}  # 12 GPUs no team owns


def test_fair_sharing_splits_a_shared_pool_evenly() -> None:
    """The cohort's own 12 GPUs are lent to both teams (4 GPUs each of their own). team-a borrowed all
    16 (team-b's 4 and the pool's 12) while team-b was idle; team-b's jobs first reclaim team-b's 4
    (``InCohortReclamation``), then preempt team-a's borrowing jobs as long as team-b's share with the
    job stays at most team-a's without the victim (``InCohortFairSharing``): 6 borrowed GPUs each."""
    queues = {"team-a": team("team-a", 4), "team-b": team("team-b", 4)}
    used, reasons = settle(
        queues, running(jobs("team-a", 20, 1, 0.0)), jobs("team-b", 16, 1, 600.0), ON, POOL
    )
    assert used == {"team-a": 10, "team-b": 10}
    assert reasons == {IN_COHORT_RECLAMATION: 4, IN_COHORT_FAIR_SHARING: 6}


def test_without_fair_sharing_the_borrower_keeps_the_pool() -> None:
    """Classical preemption: once team-b would borrow, team-a's borrowing jobs are candidates it may only
    preempt if it then did not borrow (``borrowWithinCohort: Never``): team-b gets its own 4 GPUs only."""
    queues = {"team-a": team("team-a", 4), "team-b": team("team-b", 4)}
    used, reasons = settle(
        queues, running(jobs("team-a", 20, 1, 0.0)), jobs("team-b", 16, 1, 600.0), None, POOL
    )
    assert used == {"team-a": 16, "team-b": 4}
    assert reasons == {IN_COHORT_RECLAMATION: 4}


def test_weights_two_to_one_split_the_pool_two_to_one() -> None:
    """``fairSharing.weight: 2`` halves team-b's share: it borrows twice what team-a keeps, 8 and 4."""
    queues = {"team-a": team("team-a", 4), "team-b": team("team-b", 4, weight=2)}
    used, reasons = settle(
        queues, running(jobs("team-a", 20, 1, 0.0)), jobs("team-b", 16, 1, 600.0), ON, POOL
    )
    assert used == {"team-a": 8, "team-b": 12}
    assert reasons == {IN_COHORT_RECLAMATION: 4, IN_COHORT_FAIR_SHARING: 8}


def test_the_head_of_the_queue_with_the_lower_share_is_admitted_first() -> None:
    """Two GPUs of the pool are free; team-a already borrows 4, team-b nothing; each offers a 2-GPU job,
    team-a's older. Classically the older goes first (both borrow); with fair sharing the head whose
    queue would have the lower share: team-b's."""
    queues = {"team-a": team("team-a", 4), "team-b": team("team-b", 4)}
    admitted = running([*jobs("team-a", 8, 1, 0.0), *jobs("team-b", 4, 1, 0.0)])
    heads = [*jobs("team-a", 1, 2, 10.0, "head"), *jobs("team-b", 1, 2, 20.0, "head")]
    cohorts = {"research": Cohort("research", None, _gpus(6))}
    classical = schedule(heads, admitted, queues, FLAVORS, set(), cohorts)
    fair = schedule(heads, admitted, queues, FLAVORS, set(), cohorts, fair_sharing=ON)
    assert [w.cluster_queue for w, _ in classical.admitted] == ["team-a"]
    assert [w.cluster_queue for w, _ in fair.admitted] == ["team-b"]


EXAMPLE = Path(__file__).parents[2] / "examples" / "kueue" / "fair-sharing.yaml"
CONFIGURATION = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
---
"""


def test_example_team_b_reclaims_its_quota_then_half_the_pool_and_goes_first_by_share() -> None:
    """``examples/kueue/fair-sharing.yaml`` through the simulator: team-a's six 4-GPU jobs take all 24
    GPUs; team-b's jobs (at 10 min) reclaim team-b's 8 GPUs (``InCohortReclamation``) and 4 of the pool's 8
    (``InCohortFairSharing``), each once the victim's pod is gone (30 s grace). When team-b's jobs finish,
    its waiting jobs go before team-a's older requeued ones: team-b's share would be the lower."""
    summary = simulated([EXAMPLE])
    queues = summary["kueue"]["cluster_queues"]
    assert queues["team-a"]["preempted"] == {IN_COHORT_RECLAMATION: 2, IN_COHORT_FAIR_SHARING: 1}
    steps = queues["team-b"]["usage"]["h100/nvidia.com/gpu"]["steps"]
    assert steps[:4] == [[0.0, 0.0], [630.0, 4.0], [660.0, 8.0], [690.0, 12.0]]
    admissions = {w["name"]: w["admissions"] for w in summary["kueue"]["workloads"]}
    assert [admissions[f"Job/team-b/b-{i}"] for i in (4, 5, 6)] == [[4230.0], [4260.0], [4290.0]]
    assert [admissions[f"Job/team-a/a-{i}"][-1] for i in (1, 2, 3)] == [7830.0, 7860.0, 7890.0]


def test_example_without_fair_sharing_team_b_gets_its_own_quota_only(tmp_path: Path) -> None:
    """The same scenario without the Configuration: classical preemption reclaims team-b's 8 GPUs and no
    more; team-a keeps the pool until its jobs end."""
    text = EXAMPLE.read_text()
    assert CONFIGURATION in text
    path = tmp_path / "classical.yaml"
    path.write_text(text.replace(CONFIGURATION, ""))
    queues = simulated([path])["kueue"]["cluster_queues"]
    assert queues["team-a"]["preempted"] == {IN_COHORT_RECLAMATION: 2}
    assert queues["team-b"]["usage"]["h100/nvidia.com/gpu"]["peak"] == 8.0


def _cycle(
    queues: dict[str, ClusterQueue],
    cohorts: dict[str, Cohort],
    admitted: list[Workload],
    pending: list[Workload],
) -> list[str]:
    """One fair sharing cycle: the keys admitted."""
    result = schedule(pending, running(admitted), queues, FLAVORS, set(), cohorts, fair_sharing=ON)
    return [w.key for w, _ in result.admitted]


def test_a_tournament_in_each_cohort_of_the_tree_picks_the_head_of_the_lowest_share() -> None:
    """Upstream's ``TestScheduleForFairSharing`` "hierarchical fair sharing schedule workload which wins
    tournament" (cpu there, GPUs here): cohort A (200, its own) over B (queues d, e) and C (f, g), each
    queue owning nothing; d, e and g use 10, 20 and 100. In B, d1 (70: d at 80) beats e1 (61: e at 81); in
    C, f1 (1) beats g1; at A, B with d1 (100 of 200) beats C with f1 (101). d1 takes the last 70; the
    others no longer fit."""
    queues = {q: team(q, 0, cohort=c) for q, c in (("d", "B"), ("e", "B"), ("f", "C"), ("g", "C"))}
    cohorts = {"A": Cohort("A", None, _gpus(200)), "B": Cohort("B", "A"), "C": Cohort("C", "A")}
    running = [job("d0", "d", 10), job("e0", "e", 20), job("g0", "g", 100)]
    pending = [
        job("d1", "d", 70),
        job("e1", "e", 61),
        job("f1", "f", 1),
        job("g1", "g", 1),
    ]
    assert _cycle(queues, cohorts, running, pending) == ["Job/d1"]


def test_the_head_with_the_lowest_share_after_admission_goes_first() -> None:
    """``TestScheduleForFairSharing`` "fair sharing schedule workload with lowest drf after admission": b0
    uses 10 of cohort A's 100; b1 (50: b at 60) goes before c1 (75), which then does not fit."""
    queues = {"b": team("b", 0, cohort="A"), "c": team("c", 0, cohort="A")}
    cohorts = {"A": Cohort("A", None, _gpus(100))}
    pending = [job("b1", "b", 50), job("c1", "c", 75)]
    assert _cycle(queues, cohorts, [job("b0", "b", 10)], pending) == ["Job/b1"]


def test_with_weights_zero_or_high_the_queue_that_borrows_less_goes_first_whatever_the_priority() -> None:
    """``TestScheduleForFairSharing`` "fair sharing two queues with weight 0 (and with high weight)
    schedules workload which borrows less": of cohort A's 8, b0 uses 4; b1 (priority 9001) would bring b to
    8, c1 (priority 0) c to 4: c1 goes first (two zero weights compare their unweighted shares), and b1 no
    longer fits."""
    cohorts = {"A": Cohort("A", None, _gpus(8))}
    pending = [job("b1", "b", 4, priority=9001), job("c1", "c", 4)]
    for weight in (0.0, 123456789.0):
        queues = {"b": team("b", 0, weight, "A"), "c": team("c", 0, weight, "A")}
        assert _cycle(queues, cohorts, [job("b0", "b", 4)], pending) == ["Job/c1"]
