"""Kueue's own classical-preemption table, ``kubernetes-sigs/kueue:
pkg/scheduler/preemption/preemption_test.go`` (``TestPreemption``, at commit ``014d9490c7f3``: 36
cases, written against the v1beta1 API but testing the hierarchical classical preemption that
v1beta2 releases still run), case by case: each pytest id is ``TestPreemption/<upstream case>``,
held against ``gpufleet.scheduling.kueue.preemption``. A case gpufleet cannot express is kept as a
skip that says why.

Upstream hands ``GetTargets`` a flavor assignment whose per-resource mode (``Fit``/``Preempt``) says
which (flavor, resource) pairs need preemption; gpufleet derives them from the quota, as Kueue's
flavor assigner does (``Preempt`` where the request exceeds what is available). Where a case marks a
resource ``Preempt`` that would in fact fit (two cases below), the outcome is the same either way.
Upstream's default ClusterQueues include five in the cohort ``with_shared_cq`` (``a_standard``,
``b_standard``, ``a_best_effort``, ``b_best_effort``, ``shared``) for the ``BorrowWithinCohort`` cases
(read at ``ff69552e79``, where upstream asserts each Workload's ``Preempted`` condition: its reason is
the one compared here).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from builders import Skip, cases
from kueue_builders import (
    NOW,
    Incoming,
    PodSet,
    admitted,
    cluster_queue,
    flavor_quotas,
    incoming,
    main,
    preempted,
    queues,
)

from gpufleet.model.kueue import (
    ANY,
    LOWER_OR_NEWER_EQUAL_PRIORITY,
    LOWER_PRIORITY,
    NEVER,
    ClusterQueue,
    Cohort,
)
from gpufleet.scheduling.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
)
from gpufleet.scheduling.kueue.workload import Admitted


def _cohort_queue(
    name: str, cohort: str, cpu: tuple[str, ...], memory: tuple[str, ...], **policy: str
) -> ClusterQueue:
    return cluster_queue(
        name, (flavor_quotas("default", ("cpu", *cpu), ("memory", *memory)),), cohort=cohort, **policy
    )


def _shared_cq_queue(
    name: str, cpu: tuple[str, ...], within: str = NEVER, reclaim: str = LOWER_PRIORITY
) -> ClusterQueue:
    """A ClusterQueue of the cohort ``with_shared_cq``: ``BorrowWithinCohort: {Policy: LowerPriority,
    MaxPriorityThreshold: 0}``."""
    return cluster_queue(
        name,
        (flavor_quotas("default", ("cpu", *cpu)),),
        cohort="with_shared_cq",
        within=within,
        reclaim=reclaim,
        borrow=LOWER_PRIORITY,
        threshold=0,
    )


DEFAULT_QUEUES = queues(
    cluster_queue(
        "standalone",
        (flavor_quotas("default", ("cpu", "6")),),
        (flavor_quotas("alpha", ("memory", "3Gi")), flavor_quotas("beta", ("memory", "3Gi"))),
        within=LOWER_PRIORITY,
    ),
    _cohort_queue("c1", "cohort", ("6", "6"), ("3Gi", "3Gi"), within=LOWER_PRIORITY, reclaim=LOWER_PRIORITY),
    _cohort_queue("c2", "cohort", ("6", "6"), ("3Gi", "3Gi"), within=NEVER, reclaim=ANY),
    _cohort_queue("d1", "cohort-no-limits", ("6",), ("3Gi",), within=LOWER_PRIORITY, reclaim=LOWER_PRIORITY),
    _cohort_queue("d2", "cohort-no-limits", ("6",), ("3Gi",), within=NEVER, reclaim=ANY),
    _cohort_queue("l1", "legion", ("6", "12"), ("3Gi", "6Gi"), within=LOWER_PRIORITY, reclaim=LOWER_PRIORITY),
    cluster_queue(
        "preventStarvation", (flavor_quotas("default", ("cpu", "6")),), within=LOWER_OR_NEWER_EQUAL_PRIORITY
    ),
    _shared_cq_queue("a_standard", ("1", "12")),
    _shared_cq_queue("b_standard", ("1", "12"), within=LOWER_PRIORITY, reclaim=ANY),
    _shared_cq_queue("a_best_effort", ("1", "12")),
    _shared_cq_queue("b_best_effort", ("0", "13")),
    cluster_queue("shared", (flavor_quotas("default", ("cpu", "10")),), cohort="with_shared_cq"),
    cluster_queue(
        "lend1",
        (flavor_quotas("default", ("cpu", "6", "", "4")),),
        cohort="cohort-lend",
        within=LOWER_PRIORITY,
        reclaim=LOWER_PRIORITY,
    ),
    cluster_queue(
        "lend2",
        (flavor_quotas("default", ("cpu", "6", "", "2")),),
        cohort="cohort-lend",
        within=LOWER_PRIORITY,
        reclaim=LOWER_PRIORITY,
    ),
    _cohort_queue("a", "cohort-three", ("2",), ("2",), within=LOWER_PRIORITY, reclaim=ANY),
    _cohort_queue("b", "cohort-three", ("2",), ("2",)),
    _cohort_queue("c", "cohort-three", ("2",), ("2",)),
)


@dataclass(frozen=True)
class PreemptionCase:
    admitted: list[Admitted]
    incoming: Incoming
    want: set[tuple[str, str]] = field(default_factory=set)  # upstream's wantPreempted
    queues: dict[str, ClusterQueue] = field(default_factory=lambda: DEFAULT_QUEUES)
    cohorts: dict[str, Cohort] | None = None


def in_cq(*names: str) -> set[tuple[str, str]]:
    return {(f"/{n}", IN_CLUSTER_QUEUE) for n in names}


def reclaimed(*names: str) -> set[tuple[str, str]]:
    return {(f"/{n}", IN_COHORT_RECLAMATION) for n in names}


def reclaimed_while_borrowing(*names: str) -> set[tuple[str, str]]:
    return {(f"/{n}", IN_COHORT_RECLAIM_WHILE_BORROWING) for n in names}


def cpu(amount: str) -> dict[str, str]:
    return {"cpu": amount}


def cpu_mem(cpus: str, memory: str) -> dict[str, str]:
    return {"cpu": cpus, "memory": memory}


def _cohort_three(requests: dict[str, str]) -> list[Admitted]:
    """The cohort-three cases' workloads, each asking ``requests``: ``a1``, ``a2`` (priority -2) and
    ``a3`` (-1) in ClusterQueue ``a``, ``b1`` to ``b3`` (0) in ``b``."""
    a = [admitted(f"a{i}", "a", requests, priority=p) for i, p in enumerate((-2, -2, -1), start=1)]
    return [*a, *(admitted(f"b{i}", "b", requests) for i in range(1, 4))]


TABLE: list[tuple[str, PreemptionCase | Skip]] = [
    (
        "preempt lowest priority",
        PreemptionCase(
            [
                admitted("low", "standalone", cpu("2"), priority=-1),
                admitted("mid", "standalone", cpu("2")),
                admitted("high", "standalone", cpu("2"), priority=1),
            ],
            incoming("standalone", main(cpu("2")), priority=1),
            in_cq("low"),
        ),
    ),
    (
        "preempt multiple",
        PreemptionCase(
            [
                admitted("low", "standalone", cpu("2"), priority=-1),
                admitted("mid", "standalone", cpu("2")),
                admitted("high", "standalone", cpu("2"), priority=1),
            ],
            incoming("standalone", main(cpu("3")), priority=1),
            in_cq("low", "mid"),
        ),
    ),
    (
        "no preemption for low priority",
        PreemptionCase(
            [
                admitted("low", "standalone", cpu("3"), priority=-1),
                admitted("mid", "standalone", cpu("3")),
            ],
            incoming("standalone", main(cpu("1")), priority=-1),
        ),
    ),
    (
        "not enough low priority workloads",
        PreemptionCase(
            [
                admitted("low", "standalone", cpu("3"), priority=-1),
                admitted("mid", "standalone", cpu("3")),
            ],
            incoming("standalone", main(cpu("4"))),
        ),
    ),
    (
        "some free quota, preempt low priority",
        PreemptionCase(
            [
                admitted("low", "standalone", cpu("1"), priority=-1),
                admitted("mid", "standalone", cpu("1")),
                admitted("high", "standalone", cpu("3"), priority=1),
            ],
            incoming("standalone", main(cpu("2")), priority=1),
            in_cq("low"),
        ),
    ),
    (
        "minimal set excludes low priority",
        PreemptionCase(
            [
                admitted("low", "standalone", cpu("1"), priority=-1),
                admitted("mid", "standalone", cpu("2")),
                admitted("high", "standalone", cpu("3"), priority=1),
            ],
            incoming("standalone", main(cpu("2")), priority=1),
            in_cq("mid"),
        ),
    ),
    (
        "only preempt workloads using the chosen flavor",
        PreemptionCase(
            [
                admitted("low", "standalone", {"memory": "2Gi"}, priority=-1, flavor="alpha"),
                admitted("mid", "standalone", {"memory": "1Gi"}, flavor="beta"),
                admitted("high", "standalone", {"memory": "1Gi"}, priority=1, flavor="beta"),
            ],
            incoming("standalone", main(cpu_mem("1", "2Gi"), memory="beta"), priority=1),
            in_cq("mid"),
        ),
    ),
    (
        "reclaim quota from borrower",
        PreemptionCase(
            [
                admitted("c1-low", "c1", cpu("3"), priority=-1),
                admitted("c2-mid", "c2", cpu("3")),
                admitted("c2-high", "c2", cpu("6"), priority=1),
            ],
            incoming("c1", main(cpu("3")), priority=1),
            reclaimed("c2-mid"),
        ),
    ),
    (
        "reclaim quota if workload requests 0 resources for a resource at nominal quota",
        PreemptionCase(
            [
                admitted("c1-low", "c1", cpu_mem("3", "3Gi"), priority=-1),  # SimpleReserveQuota
                admitted("c2-mid", "c2", cpu("3")),
                admitted("c2-high", "c2", cpu("6"), priority=1),
            ],
            incoming("c1", main(cpu_mem("3", "0")), priority=1),
            reclaimed("c2-mid"),
        ),
    ),
    (
        "no workloads borrowing",
        PreemptionCase(
            [
                admitted("c1-high", "c1", cpu("4"), priority=1),
                admitted("c2-low-1", "c2", cpu("4"), priority=-1),
            ],
            incoming("c1", main(cpu("4")), priority=1),
        ),
    ),
    (
        "not enough workloads borrowing",
        PreemptionCase(
            [
                admitted("c1-high", "c1", cpu("4"), priority=1),
                admitted("c2-low-1", "c2", cpu("4"), priority=-1),
                admitted("c2-low-2", "c2", cpu("4"), priority=-1),
            ],
            incoming("c1", main(cpu("4")), priority=1),
        ),
    ),
    (
        # upstream marks memory Preempt, though 5Gi fits c1's 3Gi plus what it may borrow
        "preempting locally and borrowing other resources in cohort, without cohort candidates",
        PreemptionCase(
            [
                admitted("c1-low", "c1", cpu("4"), priority=-1),
                admitted("c2-low-1", "c2", cpu("4"), priority=-1),
                admitted("c2-high-2", "c2", cpu("4"), priority=1),
            ],
            incoming("c1", main(cpu_mem("4", "5Gi")), priority=1),
            in_cq("c1-low"),
        ),
    ),
    (
        "preempting locally and borrowing same resource in cohort",
        PreemptionCase(
            [
                admitted("c1-med", "c1", cpu("4")),
                admitted("c1-low", "c1", cpu("4"), priority=-1),
                admitted("c2-low-1", "c2", cpu("4"), priority=-1),
            ],
            incoming("c1", main(cpu("4")), priority=1),
            in_cq("c1-low"),
        ),
    ),
    (
        "preempting locally and borrowing same resource in cohort; no borrowing limit in the cohort",
        PreemptionCase(
            [
                admitted("d1-med", "d1", cpu("4")),
                admitted("d1-low", "d1", cpu("4"), priority=-1),
                admitted("d2-low-1", "d2", cpu("4"), priority=-1),
            ],
            incoming("d1", main(cpu("4")), priority=1),
            in_cq("d1-low"),
        ),
    ),
    (
        # upstream marks memory Preempt, though 5Gi fits c1's 3Gi plus what it may borrow
        "preempting locally and borrowing other resources in cohort, with cohort candidates",
        PreemptionCase(
            [
                admitted("c1-med", "c1", cpu("4")),
                admitted("c2-low-1", "c2", cpu("5"), priority=-1),
                admitted("c2-low-2", "c2", cpu("1"), priority=-1),
                admitted("c2-low-3", "c2", cpu("1"), priority=-1),
            ],
            incoming("c1", main(cpu_mem("2", "5Gi")), priority=1),
            in_cq("c1-med"),
        ),
    ),
    (
        "preempting locally and not borrowing same resource in 1-queue cohort",
        PreemptionCase(
            [
                admitted("l1-med", "l1", cpu("4")),
                admitted("l1-low", "l1", cpu("2"), priority=-1),
            ],
            incoming("l1", main(cpu("4")), priority=1),
            in_cq("l1-med"),
        ),
    ),
    (
        "do not reclaim borrowed quota from same priority for withinCohort=ReclaimFromLowerPriority",
        PreemptionCase(
            [
                admitted("c1", "c1", cpu("2")),
                admitted("c2-1", "c2", cpu("4")),
                admitted("c2-2", "c2", cpu("4")),
            ],
            incoming("c1", main(cpu("4"))),
        ),
    ),
    (
        "reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny",
        PreemptionCase(
            [
                admitted("c1-1", "c1", cpu("4")),
                admitted("c1-2", "c1", cpu("4"), priority=1),
                admitted("c2", "c2", cpu("2")),
            ],
            incoming("c2", main(cpu("4"))),
            reclaimed("c1-1"),
        ),
    ),
    (
        "preempt from all ClusterQueues in cohort",
        PreemptionCase(
            [
                admitted("c1-low", "c1", cpu("3"), priority=-1),
                admitted("c1-mid", "c1", cpu("2")),
                admitted("c2-low", "c2", cpu("3"), priority=-1),
                admitted("c2-mid", "c2", cpu("4")),
            ],
            incoming("c1", main(cpu("4"))),
            in_cq("c1-low") | reclaimed("c2-low"),
        ),
    ),
    (
        "can't preempt workloads in ClusterQueue for withinClusterQueue=Never",
        PreemptionCase(
            [admitted("c2-low", "c2", cpu("3"), priority=-1)],
            incoming("c2", main(cpu("4")), priority=1),
        ),
    ),
    (
        # gpufleet's flavor assigner gives a workload's pod sets one flavor; preemption takes the usage
        # per (flavor, resource), here as upstream's assignment has it
        "each podset preempts a different flavor",
        PreemptionCase(
            [
                admitted("low-alpha", "standalone", {"memory": "2Gi"}, priority=-1, flavor="alpha"),
                admitted("low-beta", "standalone", {"memory": "2Gi"}, priority=-1, flavor="beta"),
            ],
            incoming(
                "standalone",
                PodSet("launcher", 1, {"memory": "2Gi"}, {"memory": "alpha"}),
                PodSet("workers", 2, {"memory": "1Gi"}, {"memory": "beta"}),
            ),
            in_cq("low-alpha", "low-beta"),
        ),
    ),
    (
        "preempt newer workloads with the same priority",
        PreemptionCase(
            [
                admitted("wl1", "preventStarvation", cpu("2"), priority=2),
                admitted("wl2", "preventStarvation", cpu("2"), priority=1, created=NOW, reserved_at=NOW + 1),
                admitted("wl3", "preventStarvation", cpu("2"), priority=1, created=NOW),
            ],
            incoming("preventStarvation", PodSet("launcher", 1, cpu("2")), priority=1, created=NOW - 15),
            in_cq("wl2"),
        ),
    ),
    (
        "use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue "
        "while borrowing",
        PreemptionCase(
            [
                admitted("a_best_effort_low", "a_best_effort", cpu("10"), priority=-1),
                admitted("b_best_effort_low", "b_best_effort", cpu("1"), priority=-1),
            ],
            incoming("a_standard", main(cpu("10"))),
            reclaimed_while_borrowing("a_best_effort_low"),
        ),
    ),
    (
        "use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above "
        "MaxPriorityThreshold, if borrowing is required even after the preemption",
        PreemptionCase(
            [admitted("b_standard", "b_standard", cpu("10"), priority=1)],
            incoming("a_standard", main(cpu("10")), priority=2),
        ),
    ),
    (
        "use BorrowWithinCohort; allow preempting a lower-priority workload with priority above "
        "MaxPriorityThreshold, if borrowing is not required after the preemption",
        PreemptionCase(
            [admitted("b_standard", "b_standard", cpu("13"), priority=1)],
            incoming("a_standard", main(cpu("1")), priority=2),
            reclaimed("b_standard"),
        ),
    ),
    (
        "use BorrowWithinCohort; don't allow for preemption of lower-priority workload from the same "
        "ClusterQueue",
        PreemptionCase(
            [admitted("a_standard", "a_standard", cpu("13"), priority=1)],
            incoming("a_standard", main(cpu("1")), priority=2),
        ),
    ),
    (
        "use BorrowWithinCohort; only preempt from CQ if no workloads below threshold and already above "
        "nominal",
        PreemptionCase(
            [
                admitted("a_standard_1", "a_standard", cpu("10"), priority=1),
                admitted("a_standard_2", "a_standard", cpu("1"), priority=1),
                admitted("b_standard_1", "b_standard", cpu("1"), priority=1),
                admitted("b_standard_2", "b_standard", cpu("1"), priority=2),
            ],
            incoming("b_standard", main(cpu("1")), priority=3),
            in_cq("b_standard_1"),
        ),
    ),
    (
        "use BorrowWithinCohort; preempt from CQ and from other CQs with workloads below threshold",
        PreemptionCase(
            [
                admitted("b_standard_high", "b_standard", cpu("10"), priority=2),
                admitted("b_standard_mid", "b_standard", cpu("1"), priority=1),
                admitted("a_best_effort_low", "a_best_effort", cpu("1"), priority=-1),
                admitted("a_best_effort_lower", "a_best_effort", cpu("1"), priority=-2),
            ],
            incoming("b_standard", main(cpu("2")), priority=2),
            in_cq("b_standard_mid") | reclaimed_while_borrowing("a_best_effort_lower"),
        ),
    ),
    (
        "reclaim quota from lender",
        PreemptionCase(
            [
                admitted("lend1-low", "lend1", cpu("3"), priority=-1),
                admitted("lend2-mid", "lend2", cpu("3")),
                admitted("lend2-high", "lend2", cpu("4"), priority=1),
            ],
            incoming("lend1", main(cpu("3")), priority=1),
            reclaimed("lend2-mid"),
        ),
    ),
    (
        "preempt from all ClusterQueues in cohort-lend",
        PreemptionCase(
            [
                admitted("lend1-low", "lend1", cpu("3"), priority=-1),
                admitted("lend1-mid", "lend1", cpu("2")),
                admitted("lend2-low", "lend2", cpu("3"), priority=-1),
                admitted("lend2-mid", "lend2", cpu("4")),
            ],
            incoming("lend1", main(cpu("4"))),
            in_cq("lend1-low") | reclaimed("lend2-low"),
        ),
    ),
    (
        "cannot preempt from other ClusterQueues if exceeds requestable quota including lending limit",
        PreemptionCase(
            [admitted("lend2-low", "lend2", cpu("10"), priority=-1)],
            incoming("lend1", main(cpu("9"))),
        ),
    ),
    (
        "preemptions from cq when target queue is exhausted for the single requested resource",
        PreemptionCase(
            _cohort_three(cpu("1")),
            incoming("a", main(cpu("2"))),
            in_cq("a1", "a2"),
        ),
    ),
    (
        "preemptions from cq when target queue is exhausted for two requested resources",
        PreemptionCase(
            _cohort_three(cpu_mem("1", "1")),
            incoming("a", main(cpu_mem("2", "2"))),
            in_cq("a1", "a2"),
        ),
    ),
    (
        "preemptions from cq when target queue is exhausted for one requested resource, but not the other",
        PreemptionCase(
            _cohort_three(cpu("1")),
            incoming("a", main(cpu_mem("2", "2"))),
            in_cq("a1", "a2"),
        ),
    ),
    (
        "allow preemption from other cluster queues if target cq is not exhausted for the requested resource",
        PreemptionCase(
            [
                admitted("a1", "a", cpu("1"), priority=-1),
                *(admitted(f"b{i}", "b", cpu("1")) for i in range(1, 5)),
                admitted("b5", "b", cpu("1"), priority=-1),
            ],
            incoming("a", main(cpu("2"))),
            in_cq("a1") | reclaimed("b5"),
        ),
    ),
    (
        "long range preemption",
        PreemptionCase(
            [admitted("to-be-preempted", "cq-right", cpu("5"))],
            incoming("cq-left", main(cpu("8")), name="incoming"),
            reclaimed("to-be-preempted"),
            queues(
                cluster_queue(
                    "cq-left", (flavor_quotas("default", ("cpu", "10")),), cohort="cohort-left", reclaim=ANY
                ),
                cluster_queue("cq-right", (flavor_quotas("default", ("cpu", "0")),), cohort="cohort-right"),
            ),
            {"cohort-left": Cohort("cohort-left", "root"), "cohort-right": Cohort("cohort-right", "root")},
        ),
    ),
]


@pytest.mark.parametrize("case", cases("TestPreemption", TABLE, 1))
def test_preemption(case: PreemptionCase) -> None:
    assert preempted(case.queues, case.admitted, case.incoming, case.cohorts) == case.want
