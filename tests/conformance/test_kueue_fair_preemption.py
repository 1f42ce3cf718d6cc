"""Kueue's own fair-sharing preemption table, ``kubernetes-sigs/kueue:
pkg/scheduler/preemption/preemption_fair_test.go`` (``TestFairPreemptions``, at commit ``ff69552e79ad``:
35 cases), case by case: each pytest id is ``TestFairPreemptions/<upstream case>``, held against
``gpufleet.scheduling.kueue.preemption.preemption_targets`` with fair sharing on. A case gpufleet cannot
express is kept as a skip that says why.

Upstream hands ``GetTargets`` the incoming workload with its cpu assigned flavor ``default`` (or the
case's ``assignmentFlavor``) in mode ``Preempt``; gpufleet derives the pairs needing preemption from the
quota, as Kueue's flavor assigner does. Upstream gives each admitted workload its name as UID, so that
candidates of equal rank go by name; gpufleet's go by key, which orders them alike. Strategies left
empty are Kueue's default, ``[LessThanOrEqualToFinalShare, LessThanInitialShare]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from builders import cases
from kueue_builders import admitted, cluster_queue, cohort, flavor_quotas, incoming, main, preempted, queues

from gpufleet.model.kueue import (
    ANY,
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    LOWER_PRIORITY,
    ClusterQueue,
    Cohort,
    FairSharing,
)
from gpufleet.scheduling.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
)
from gpufleet.scheduling.kueue.workload import Admitted


def cpu_queue(
    name: str,
    cpu: str,
    cohort_name: str | None,
    *,
    weight: float = 1.0,
    flavor: str = "default",
    **policy: str,
) -> ClusterQueue:
    """``MakeClusterQueue(name).Cohort(cohort).ResourceGroup(MakeFlavorQuotas(flavor).Resource(cpu,
    ...)).FairWeight(weight)``."""
    return cluster_queue(
        name, (flavor_quotas(flavor, ("cpu", cpu)),), cohort=cohort_name, weight=weight, **policy
    )


def _base(name: str) -> ClusterQueue:
    """``a``, ``b`` and ``c`` of ``baseCQs``: 3 cpu in ``all``, ``WithinClusterQueue: LowerPriority``,
    ``ReclaimWithinCohort: Any``, ``BorrowWithinCohort: {LowerPriority, MaxPriorityThreshold: -3}``."""
    return cluster_queue(
        name,
        (flavor_quotas("default", ("cpu", "3")),),
        cohort="all",
        within=LOWER_PRIORITY,
        reclaim=ANY,
        borrow=LOWER_PRIORITY,
        threshold=-3,
    )


BASE_CQS = queues(_base("a"), _base("b"), _base("c"), cpu_queue("preemptible", "0", "all"))


def _weighted(name: str, weight: float = 1.0) -> ClusterQueue:
    """3 cpu in ``all``, ``WithinClusterQueue: LowerPriority``, ``ReclaimWithinCohort: Any``."""
    return cpu_queue(name, "3", "all", weight=weight, within=LOWER_PRIORITY, reclaim=ANY)


@dataclass(frozen=True)
class FairCase:
    admitted: list[Admitted]
    incoming: str  # the cpu it asks for
    target: str  # ``targetCQ``
    want: set[tuple[str, str]] = field(default_factory=set)  # upstream's wantPreempted
    queues: dict[str, ClusterQueue] = field(default_factory=lambda: BASE_CQS)
    cohorts: dict[str, Cohort] = field(default_factory=dict)
    strategies: tuple[str, ...] = ()
    priority: int = 0
    flavor: str = "default"  # ``assignmentFlavor``


def units(*names: str, cq: str | None = None, priority: int = 0, flavor: str = "default") -> list[Admitted]:
    """``unitWl`` (1 cpu) named each of ``names``, reserving quota in ``cq`` (else the name's first
    letter)."""
    return [admitted(n, cq or n[0], {"cpu": "1"}, priority=priority, flavor=flavor) for n in names]


def sized(name: str, cpu: str, cq: str | None = None, priority: int = 0) -> Admitted:
    return admitted(name, cq or name[0], {"cpu": cpu}, priority=priority)


def fair(reason: str, *names: str) -> set[tuple[str, str]]:
    return {(f"/{n}", reason) for n in names}


def graded(cq: str, *names: str) -> list[Admitted]:
    """Each of ``names`` (1 cpu) with priority 1, 2, ... in order (``Priority(i)``)."""
    return [admitted(n, cq, {"cpu": "1"}, priority=i) for i, n in enumerate(names, start=1)]


def cohorts(*items: Cohort) -> dict[str, Cohort]:
    return {c.name: c for c in items}


CPU1 = (flavor_quotas("default", ("cpu", "1")),)
CPU3 = (flavor_quotas("default", ("cpu", "3")),)
CPU5 = (flavor_quotas("default", ("cpu", "5")),)

TABLE: list[tuple[str, FairCase]] = [
    (
        "reclaim nominal from user using the most",
        FairCase(
            units("a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5", "c1"),
            "1",
            "c",
            fair(IN_COHORT_RECLAMATION, "b1"),
        ),
    ),
    (
        "can reclaim from queue using less, "
        "if taking the latest workload from user using the most isn't enough",
        FairCase(
            [sized("a1", "3"), sized("a2", "1"), sized("b1", "2"), sized("b2", "3")],
            "3",
            "c",
            fair(IN_COHORT_RECLAMATION, "a1"),
        ),
    ),
    (
        "reclaim borrowable quota from user using the most",
        FairCase(
            units("a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5", "c1"),
            "1",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b1"),
        ),
    ),
    (
        "preempt one from each CQ borrowing",
        FairCase(
            [
                sized("a1", "0.5"),
                sized("a2", "0.5"),
                sized("a3", "3"),
                sized("b1", "0.5"),
                sized("b2", "0.5"),
                sized("b3", "3"),
            ],
            "2",
            "c",
            fair(IN_COHORT_RECLAMATION, "a1", "b1"),
        ),
    ),
    (
        "can't preempt when everyone under nominal",
        FairCase(units("a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2", "c3"), "1", "c"),
    ),
    (
        "can't preempt when it would switch the imbalance",
        FairCase(units("a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5"), "2", "a"),
    ),
    (
        "can preempt lower priority workloads from same CQ",
        FairCase(
            [*units("a1_low", "a2_low", priority=-1), *units("a3", "a4", "b1", "b2", "b3", "b4", "b5")],
            "2",
            "a",
            fair(IN_CLUSTER_QUEUE, "a1_low", "a2_low"),
        ),
    ),
    (
        "can preempt a combination of same CQ and highest user",
        FairCase(
            [*units("a_low", priority=-1), *units("a2", "a3", "b1", "b2", "b3", "b4", "b5", "b6")],
            "2",
            "a",
            fair(IN_CLUSTER_QUEUE, "a_low") | fair(IN_COHORT_FAIR_SHARING, "b1"),
        ),
    ),
    (
        "preempt huge workload if there is no other option, as long as the target CQ gets a lower share",
        FairCase([sized("b1", "9")], "2", "a", fair(IN_COHORT_RECLAMATION, "b1")),
    ),
    (
        "can't preempt huge workload if the incoming is also huge",
        FairCase([sized("a1", "2"), sized("b1", "7")], "5", "a"),
    ),
    (
        "can't preempt 2 smaller workloads if the incoming is huge",
        FairCase([sized("b1", "2"), sized("b2", "2"), sized("b3", "3")], "6", "a"),
    ),
    (
        "preempt from target and others even if over nominal",
        FairCase(
            [
                sized("a1_low", "2", priority=-1),
                sized("a2_low", "1", priority=-1),
                sized("b1", "3"),
                sized("b2", "3"),
            ],
            "4",
            "a",
            fair(IN_CLUSTER_QUEUE, "a1_low") | fair(IN_COHORT_FAIR_SHARING, "b1"),
        ),
    ),
    (
        "prefer to preempt workloads that don't make the target CQ have the biggest share",
        FairCase(
            [sized("b1", "2"), sized("b2", "1"), sized("b3", "2"), sized("c1", "1")],
            "3.5",
            "a",
            # It would have been possible to preempt "/b1" under rule S2-b, but S2-a was possible first.
            fair(IN_COHORT_FAIR_SHARING, "b2"),
        ),
    ),
    (
        "preempt from different cluster queues if the end result has a smaller max share",
        FairCase(
            [sized("b1", "2"), sized("b2", "2.5"), sized("c1", "2"), sized("c2", "2.5")],
            "3.5",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b1", "c1"),
        ),
    ),
    (
        "scenario above does not flap",
        FairCase([sized("a1", "3.5"), sized("b2", "2.5"), sized("c2", "2.5")], "2", "b"),
    ),
    (
        "cannot preempt if it would make the candidate CQ go under nominal after preempting one element",
        FairCase([sized("b1", "3"), sized("b2", "3"), sized("c1", "3")], "4", "a"),
    ),
    # preemption.borrowWithinCohort does not affect how we handle Fair Sharing preemptions. Lower
    # priority workloads are not preempted unless DominantResourceShare value indicates that they
    # should be preempted.
    (
        "workloads under priority threshold not capriciously preempted",
        FairCase(
            [
                *units("a1", "a2", "a3", "b1", "b2", "b3"),
                *units("preemptible1", "preemptible2", "preemptible3", cq="preemptible", priority=-3),
            ],
            "2",
            "a",
        ),
    ),
    (
        "preempt lower priority first, even if big",
        FairCase(
            [sized("a1", "3"), sized("b_low", "5"), sized("b_high", "1", priority=1)],
            "1",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b_low"),
            strategies=(LESS_THAN_INITIAL_SHARE,),
        ),
    ),
    (
        "preempt workload that doesn't transfer the imbalance, even if high priority",
        FairCase(
            [sized("a1", "3"), sized("b_low", "5"), sized("b_high", "1", priority=1)],
            "1",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b_high"),
            strategies=(LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,),
        ),
    ),
    (
        "CQ with higher weight can preempt more",
        FairCase(
            units("a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5", "b6"),
            "2",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b1", "b2"),
            queues(_weighted("a", 2), _weighted("b"), _weighted("c")),
        ),
    ),
    (
        "can preempt anything borrowing from CQ with 0 weight",
        FairCase(
            units("a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5", "b6"),
            "3",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b1", "b2", "b3"),
            queues(_weighted("a"), _weighted("b", 0), _weighted("c")),
        ),
    ),
    (
        "can't preempt nominal from CQ with 0 weight",
        FairCase(
            units("a1", "a2", "a3", "b1", "b2", "b3"),
            "1",
            "a",
            queues=queues(_weighted("a"), _weighted("b", 0)),
        ),
    ),
    (
        "can't preempt nominal from Cohort with 0 weight",
        FairCase(
            units("right-1", cq="right-cq"),
            "1",
            "left-cq",
            queues=queues(
                cpu_queue("left-cq", "0", "root", reclaim=ANY),
                cpu_queue("right-cq", "0", "right-cohort", weight=0, reclaim=ANY),
            ),
            cohorts=cohorts(cohort("right-cohort", CPU1, parent="root", weight=0)),
        ),
    ),
    (
        "can preempt within cluster queue when no cohort",
        FairCase(
            units("a1"),
            "1",
            "a",
            fair(IN_CLUSTER_QUEUE, "a1"),
            queues(cpu_queue("a", "1", None, within=LOWER_PRIORITY)),
            priority=1000,
        ),
    ),
    # Each Cohort provides 5 capacity, while each CQ provides 1 capacity. The 3 tuple is
    # (Usage,Quota,SubtreeQuota):
    #
    #                ROOT(20,5,20)
    #             /       |         \
    #       LEFT(5,5,7)  c(5,1,1)   RIGHT(10,5,7)
    #       /       \               /      \
    #     a(0,1,1)    b(5,1,1)   d(5,1,1)    e(5,1,1)
    #
    # ClusterQueue a is able to preempt workloads in all of these ClusterQueues: FairWeight of a, and
    # LEFT, is 2.0; FairWeight of e is 0.99, to make preemptions deterministic.
    (
        "hierarchical preemption",
        FairCase(
            [
                *graded("b", "b1", "b2", "b3", "b4", "b5"),
                *graded("c", "c1", "c2", "c3", "c4", "c5"),
                *graded("d", "d1", "d2", "d3", "d4", "d5"),
                *graded("e", "e1", "e2", "e3", "e4", "e5"),
            ],
            "5",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b1", "b2", "c1", "c2", "e1"),
            queues(
                cpu_queue("a", "1", "LEFT", weight=2, reclaim=ANY),
                cpu_queue("b", "1", "LEFT"),
                cpu_queue("c", "1", "ROOT"),
                cpu_queue("d", "1", "RIGHT"),
                cpu_queue("e", "1", "RIGHT", weight=0.99),
            ),
            cohorts(
                cohort("ROOT", CPU5),
                cohort("LEFT", CPU5, parent="ROOT", weight=2),
                cohort("RIGHT", CPU5, parent="ROOT"),
            ),
        ),
    ),
    # though ClusterQueue b is borrowing, its Cohort is not, and therefore it cannot be preempted.
    #             ROOT
    #           /      \
    #       a(3,5,5)   RIGHT(1,1,1)
    #                        \
    #                         b(1,0,0)
    #
    # incoming workload to a, of size 5, must preempt its own workloads, despite its fair weight being
    # high, and RIGHT/b having a low weight.
    (
        "borrowing cq in non-borrowing cohort is protected",
        FairCase(
            [*units("a1", "a2", "a3", priority=-1), *units("b1", priority=-1)],
            "5",
            "a",
            fair(IN_CLUSTER_QUEUE, "a1", "a2", "a3"),
            queues(
                cpu_queue("a", "5", "ROOT", weight=10, reclaim=ANY, within=LOWER_PRIORITY),
                ClusterQueue("b", "RIGHT", (), fair_weight=0.1),
            ),
            cohorts(cohort("ROOT"), cohort("RIGHT", CPU1, parent="ROOT", weight=0.1)),
        ),
    ),
    # Preempting the small workload would bring RIGHT to a DRS of 0, and we can't even consider the
    # higher priority workload. incoming workload to a, of size 4, must preempt its own workloads
    #             ROOT
    #           /      \
    #       a(3,5,5)   RIGHT(4,3,3)
    #                        \
    #                         b(4,0,0)
    (
        "forced to preempt within clusterqueue because borrowing workload too important",
        FairCase(
            [*units("a1", "a2", "a3", priority=-1), sized("b1", "4", priority=100)],
            "4",
            "a",
            fair(IN_CLUSTER_QUEUE, "a1", "a2", "a3"),
            queues(
                cpu_queue("a", "5", "ROOT", weight=10, reclaim=LOWER_PRIORITY, within=LOWER_PRIORITY),
                ClusterQueue("b", "RIGHT", (), fair_weight=0.1),
            ),
            cohorts(cohort("ROOT"), cohort("RIGHT", CPU3, parent="ROOT", weight=0.1)),
        ),
    ),
    #                      ROOT
    #                    /   |   \
    #                   A    B    C
    #                   |    |    |
    #                   AA   BB   CC
    #                   |    |    |
    #                  AAA  BBB  CCC
    #                   |    |    |
    #                   a    b   CCCC
    # cq-a wants capacity, cq-b uses capacity, and Cohort-CCCC provides capacity. Organization A is more
    # important than organization B, indicated by relative FairSharing value, so the preemption is possible.
    (
        "deep preemption",
        FairCase(
            units("b1"),
            "1",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b1"),
            queues(cpu_queue("a", "0", "AAA", reclaim=ANY), cpu_queue("b", "0", "BBB")),
            cohorts(
                cohort("ROOT"),
                cohort("A", parent="ROOT", weight=1.01),
                cohort("AA", parent="A"),
                cohort("AAA", parent="AA"),
                cohort("B", parent="ROOT", weight=0.99),
                cohort("BB", parent="B"),
                cohort("BBB", parent="BB"),
                cohort("C", parent="ROOT"),
                cohort("CC", parent="C"),
                cohort("CCC", parent="CC"),
                cohort("CCCC", CPU1, parent="CCC"),
            ),
        ),
    ),
    (
        "cq with zero weight can reclaim nominal quota",
        FairCase(
            units("b1"),
            "1",
            "a",
            fair(IN_COHORT_RECLAMATION, "b1"),
            queues(cpu_queue("a", "1", "ROOT", weight=0, reclaim=ANY), cpu_queue("b", "0", "ROOT")),
        ),
    ),
    (
        "cohort with zero weight can reclaim nominal quota",
        FairCase(
            units("b1"),
            "1",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b1"),
            queues(cpu_queue("a", "0", "A", weight=0, reclaim=ANY), cpu_queue("b", "0", "ROOT")),
            cohorts(cohort("A", CPU1, parent="ROOT", weight=0)),
        ),
    ),
    # CQ "a": 3 CPU nominal on premium, 0 on cheap. CQ "b": 0 CPU nominal on premium, 6 on cheap.
    # Admitted: a uses 2 premium (within nominal) + 5 cheap (borrowed): high DRS; b uses 1 premium
    # (borrowed from a's lendable): low DRS. Incoming: a wants 1 premium CPU (within nominal: 2+1=3 <= 3).
    # Without nominal-first, DRS(a) > DRS(b) blocks preemption; with it, a is within nominal for premium.
    (
        "nominal first: workload fitting within nominal can preempt despite high aggregate DRS",
        FairCase(
            [
                *units("a_prem1", "a_prem2", flavor="premium"),
                *units("a_cheap1", "a_cheap2", "a_cheap3", "a_cheap4", "a_cheap5", flavor="cheap"),
                *units("b_prem1", flavor="premium"),
            ],
            "1",
            "a",
            fair(IN_COHORT_RECLAMATION, "b_prem1"),
            queues(
                cluster_queue(
                    "a",
                    (flavor_quotas("premium", ("cpu", "3")), flavor_quotas("cheap", ("cpu", "0"))),
                    cohort="all",
                    reclaim=ANY,
                ),
                cluster_queue(
                    "b",
                    (flavor_quotas("premium", ("cpu", "0")), flavor_quotas("cheap", ("cpu", "6"))),
                    cohort="all",
                ),
            ),
            flavor="premium",
        ),
    ),
    # The preemptor has a fair weight of 0 and borrows, so its share is +Inf. The target borrows on a
    # non-zero weight, so its share is finite: neither strategy can pass and no target is returned.
    (
        "zero weight borrowing preemptor cannot preempt from a borrowing CQ with a non-zero weight",
        FairCase(
            units("a1", "b1", "b2"),
            "1",
            "a",
            queues=queues(cpu_queue("a", "1", "all", weight=0, reclaim=ANY), cpu_queue("b", "1", "all")),
        ),
    ),
    # Both the preemptor and the target have a fair weight of 0 and borrow, so both shares are +Inf.
    # CompareDRS falls back to the unweighted ratios in that case, and a candidate can win.
    (
        "zero weight borrowing preemptor can preempt from a borrowing CQ which also has zero weight",
        FairCase(
            units("b1", "b2", "b3"),
            "2",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b1"),
            queues(cpu_queue("a", "1", "all", weight=0, reclaim=ANY), cpu_queue("b", "0", "all", weight=0)),
            cohorts(cohort("all", CPU3)),
        ),
    ),
    # Same shape as the case above, with non-zero fair weights on both sides.
    (
        "non-zero weight borrowing preemptor preempts from a borrowing CQ",
        FairCase(
            units("b1", "b2", "b3"),
            "2",
            "a",
            fair(IN_COHORT_FAIR_SHARING, "b1"),
            queues(cpu_queue("a", "1", "all", reclaim=ANY), cpu_queue("b", "0", "all")),
            cohorts(cohort("all", CPU3)),
        ),
    ),
    # ROOT ── A (weight 0, 1 CPU) ── p (weight 1, 2 CPU, preemptor)
    #      │                      └─ y (weight 1, 2 CPU)
    #      └─ x (weight 1, 1 CPU)
    # The preemptor's almostLCA is p for target y, and A for target x. A borrows on a zero weight, so its
    # share is +Inf and no candidate in x can pass the first strategy. The candidates from x must still
    # be kept for the second strategy: once y1 is preempted A stops borrowing, which brings A's share down
    # to 0 and lets a candidate from x win.
    (
        "candidates skipped by the first strategy are still available to the second strategy",
        FairCase(
            [sized("p1", "2"), sized("y1", "2"), sized("y2", "2"), *units("x1", "x2")],
            "1",
            "p",
            fair(IN_COHORT_FAIR_SHARING, "y1", "x1"),
            queues(
                cpu_queue("p", "2", "A", reclaim=ANY),
                cpu_queue("y", "2", "A"),
                cpu_queue("x", "1", "ROOT"),
            ),
            cohorts(cohort("A", CPU1, parent="ROOT", weight=0)),
        ),
    ),
]


@pytest.mark.parametrize("case", cases("TestFairPreemptions", TABLE, 1))
def test_fair_preemptions(case: FairCase) -> None:
    preemptor = incoming(case.target, main({"cpu": case.incoming}, cpu=case.flavor), priority=case.priority)
    strategies = FairSharing(case.strategies) if case.strategies else FairSharing()
    assert preempted(case.queues, case.admitted, preemptor, case.cohorts, strategies) == case.want
