"""Kueue's scheduler table with fair sharing, ``kubernetes-sigs/kueue: pkg/scheduler/scheduler_fs_test.go``
(``TestScheduleForFairSharing``, at commit ``ff69552e79ad``: 22 cases), case by case: each pytest id is
``TestScheduleForFairSharing/<upstream case>``, held against one cycle of
``gpufleet.scheduling.kueue.admission.schedule`` (upstream's one ``scheduler.schedule(ctx)``) with the
manager Configuration's ``fairSharing`` on (``enableFairSharing``; the one case with it off runs without).

Each row asserts what upstream's does:

* ``wantAssignments``: every workload holding quota after the cycle (those admitted before it, the
  victims included, and those admitted in it), as its ClusterQueue and each resource's flavor and amount;
* ``wantLeft``: the pending workloads left in the queues' heaps (not admitted, not set aside as
  inadmissible); ``wantInadmissibleLeft`` is empty in every case, so none may be set aside;
* the workloads ``wantWorkloads`` shows evicted (``Preempted``), each with its ``Preempted`` condition's
  reason (``InClusterQueue``, ``InCohortReclamation``, ``InCohortFairSharing``).

Conditions' messages, events and ``wantSkippedPreemptions`` (a metric) are not held: gpufleet keeps no
metrics of skipped preemptions; the skipped preemptor is held as one left pending with no victim.

Setup as upstream's: the namespaces ``default``, ``eng-alpha``, ``eng-beta``, ``eng-gamma`` (label ``dep:
eng``), ``sales`` (``dep: sales``) and ``lend`` (``dep: lend``); gpufleet's namespace selectors see a
namespace's name only, so ``dep In (eng)`` is written as the names carrying that label. A workload names a
LocalQueue (``Queue(...)``), resolved here through upstream's LocalQueues to its ClusterQueue. Unset
``creationTimestamp`` is the zero time (``created=0.0``); ``NOW`` is upstream's ``now``.
"""

from __future__ import annotations

import pytest
from builders import cases
from kueue_builders import (
    NOW,
    UNSET,
    Pending,
    ScheduleRow,
    ScheduleSuite,
    check_schedule,
    cluster_queue,
    cohort,
    cohorts,
    cpu,
    flavor_quotas,
    held,
    in_other,
    lqs,
    on,
    queues,
    single,
)

from gpufleet.model.kueue import (
    ANY,
    LOWER_PRIORITY,
    NEVER,
    PREEMPTION_OVER_BORROWING,
    TRY_NEXT_FLAVOR,
    ClusterQueue,
    FlavorFungibility,
    FlavorQuotas,
    ResourceFlavor,
)
from gpufleet.scheduling.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
)

FLAVORS = {n: ResourceFlavor(n) for n in ("default", "on-demand", "spot", "model-a")}
SUITE = ScheduleSuite(FLAVORS, fair_sharing=True)
Row = ScheduleRow


def simple(
    name: str,
    cohort_name: str | None,
    *groups: tuple[FlavorQuotas, ...],
    weight: float = 1.0,
    reclaim: str = NEVER,
) -> ClusterQueue:
    """``MakeClusterQueue(name).Cohort(cohort).FairWeight(weight).ResourceGroup(...)...``."""
    return cluster_queue(name, *groups, cohort=cohort_name, weight=weight, reclaim=reclaim)


def od(*quota: str) -> tuple[FlavorQuotas, ...]:
    """A resource group of on-demand cpu."""
    return (cpu("on-demand", *quota),)


OTHER_LQS = (
    lqs("eng-alpha", other="other-alpha")
    | lqs("eng-beta", other="other-beta")
    | lqs("eng-gamma", other="other-gamma")
)
TRY_NEXT = FlavorFungibility(when_can_borrow=TRY_NEXT_FLAVOR, when_can_preempt=TRY_NEXT_FLAVOR)


def _most_local_capacity(fair: bool) -> Row:
    gpu_od_spot = (flavor_quotas("on-demand", ("gpu", "3")), flavor_quotas("spot", ("gpu", "3")))
    return Row(
        [
            held("default/a1", "queue1", {"gpu": "8"}, "on-demand"),
            held("default/a2", "queue1", {"gpu": "3"}, "spot"),
        ],
        [Pending("default/a3", "queue1", {"gpu": "1"})],
        {
            "default/a1": on("queue1", "on-demand", gpu="8"),
            "default/a2": on("queue1", "spot", gpu="3"),
            "default/a3": on("queue1", "spot", gpu="1"),
        },
        set(),
        queues=queues(
            cluster_queue(
                "queue1",
                gpu_od_spot,
                cohort="child-cohort",
                fungibility=TRY_NEXT,
                within=LOWER_PRIORITY,
                reclaim=ANY,
            )
        ),
        local_queues=lqs("default", queue1="queue1"),
        cohorts=cohorts(
            cohort(
                "root-cohort",
                (flavor_quotas("on-demand", ("gpu", "2")), flavor_quotas("spot", ("gpu", "0"))),
            ),
            cohort(
                "child-cohort",
                (flavor_quotas("on-demand", ("gpu", "5")), flavor_quotas("spot", ("gpu", "7"))),
                parent="root-cohort",
            ),
        ),
        fair_sharing=fair,
    )


def _two_queues_weighted(weight: float) -> Row:
    return Row(
        [held("eng-alpha/b0", "b", {"cpu": "4"}, "on-demand")],
        [
            Pending("eng-alpha/b1", "lq-b", {"cpu": "4"}, priority=9001, pod_set="one"),
            Pending("eng-alpha/c1", "lq-c", {"cpu": "4"}, pod_set="one"),
        ],
        {"eng-alpha/b0": single("b", "on-demand", "4"), "eng-alpha/c1": single("c", "on-demand", "4")},
        {"eng-alpha/b1"},
        queues=queues(
            simple("b", "A", od("0"), weight=weight, reclaim=ANY),
            simple("c", "A", od("0"), weight=weight, reclaim=ANY),
        ),
        local_queues=lqs("eng-alpha", lq_b="b", lq_c="c"),
        cohorts=cohorts(cohort("A", od("8"))),
    )


def _singles_b_c(b1_priority: int, c1_priority: int, b1_created: float, c1_created: float) -> Row:
    return Row(
        [],
        [
            Pending(
                "eng-alpha/b1", "lq-b", {"cpu": "10"}, priority=b1_priority, created=b1_created, pod_set="one"
            ),
            Pending(
                "eng-alpha/c1", "lq-c", {"cpu": "10"}, priority=c1_priority, created=c1_created, pod_set="one"
            ),
        ],
        {"eng-alpha/c1": single("c", "on-demand", "10")},
        {"eng-alpha/b1"},
        queues=queues(simple("b", "A", od("0")), simple("c", "A", od("0"))),
        local_queues=lqs("eng-alpha", lq_b="b", lq_c="c"),
        cohorts=cohorts(cohort("A", od("10")), cohort("B")),
    )


def _other(name: str, *resources: tuple[str, ...], within: str = NEVER, reclaim: str = NEVER) -> ClusterQueue:
    """``in_other`` with one resource group of the flavor ``default``."""
    return in_other(name, (flavor_quotas("default", *resources),), within=within, reclaim=reclaim)


TABLE: list[tuple[str, Row]] = [
    (
        "with fair sharing: schedule workload with lowest share first",
        Row(
            [
                held("eng-alpha/all_nominal", "eng-alpha", {"cpu": "50"}, "on-demand"),
                held("eng-beta/borrowing", "eng-beta", {"cpu": "55"}, "on-demand"),
            ],
            [
                Pending("eng-beta/older_new", "main", {"cpu": "1"}, created=NOW - 60, pod_set="one"),
                Pending("eng-alpha/new", "main", {"cpu": "1"}, count=5, created=NOW, pod_set="one"),
            ],
            {
                "eng-alpha/all_nominal": single("eng-alpha", "on-demand", "50"),
                "eng-beta/borrowing": single("eng-beta", "on-demand", "55"),
                "eng-alpha/new": single("eng-alpha", "on-demand", "5"),
            },
            {"eng-beta/older_new"},
            queues=queues(cluster_queue("eng-shared", od("10", "0"), cohort="eng")),
        ),
    ),
    (
        "with fair sharing: nominal-first ordering admits workload fitting within nominal "
        "despite higher CQ DRS",
        Row(
            [
                held("eng-alpha/spot-heavy", "fs-nom-a", {"cpu": "80"}, "spot"),
                held("eng-beta/light-usage", "fs-nom-b", {"cpu": "5"}, "on-demand"),
            ],
            [
                Pending(
                    "eng-beta/borrow-wl", "fs-nom", {"cpu": "1"}, count=15, created=NOW - 60, pod_set="one"
                ),
                Pending("eng-alpha/nom-wl", "fs-nom", {"cpu": "1"}, count=45, created=NOW, pod_set="one"),
            ],
            {
                "eng-alpha/spot-heavy": single("fs-nom-a", "spot", "80"),
                "eng-beta/light-usage": single("fs-nom-b", "on-demand", "5"),
                "eng-alpha/nom-wl": single("fs-nom-a", "on-demand", "45"),
            },
            {"eng-beta/borrow-wl"},
            queues=queues(
                simple("fs-nom-a", "fs-nom", od("50", "0"), (cpu("spot", "50", "50"),)),
                simple("fs-nom-b", "fs-nom", od("10", "50"), (cpu("spot", "50", "0"),)),
            ),
            local_queues=lqs("eng-alpha", fs_nom="fs-nom-a") | lqs("eng-beta", fs_nom="fs-nom-b"),
        ),
    ),
    (
        "with fair sharing: hierarchical nominal-first prefers non-borrowing subtree",
        Row(
            [held("eng-alpha/c0", "cq-c", {"cpu": "10"}, "on-demand")],
            [
                Pending("eng-alpha/wl-a", "lq-a", {"cpu": "5"}, pod_set="one"),
                Pending("eng-alpha/wl-b", "lq-b", {"cpu": "5"}, pod_set="one"),
            ],
            {
                "eng-alpha/c0": single("cq-c", "on-demand", "10"),
                "eng-alpha/wl-a": single("cq-a", "on-demand", "5"),
            },
            {"eng-alpha/wl-b"},
            queues=queues(
                simple("cq-a", "Cohort-A", od("0")),
                simple("cq-b", "Cohort-B", od("5")),
                simple("cq-c", "Cohort-B", od("0")),
            ),
            local_queues=lqs("eng-alpha", lq_a="cq-a", lq_b="cq-b", lq_c="cq-c"),
            cohorts=cohorts(
                cohort("root"), cohort("Cohort-A", od("10"), parent="root"), cohort("Cohort-B", parent="root")
            ),
        ),
    ),
    (
        "with fair sharing: hierarchical nominal-first with deeper nesting",
        Row(
            [held("eng-alpha/c0", "cq-c", {"cpu": "10"}, "on-demand")],
            [
                Pending("eng-alpha/wl-a", "lq-a", {"cpu": "5"}, pod_set="one"),
                Pending("eng-alpha/wl-b", "lq-b", {"cpu": "5"}, pod_set="one"),
            ],
            {
                "eng-alpha/c0": single("cq-c", "on-demand", "10"),
                "eng-alpha/wl-a": single("cq-a", "on-demand", "5"),
            },
            {"eng-alpha/wl-b"},
            queues=queues(
                simple("cq-a", "SUB-A", od("0")),
                simple("cq-b", "Cohort-B", od("5")),
                simple("cq-c", "Cohort-B", od("0")),
            ),
            local_queues=lqs("eng-alpha", lq_a="cq-a", lq_b="cq-b", lq_c="cq-c"),
            cohorts=cohorts(
                cohort("root"),
                cohort("Cohort-A", parent="root"),
                cohort("SUB-A", od("10"), parent="Cohort-A"),
                cohort("Cohort-B", parent="root"),
            ),
        ),
    ),
    (
        "with fair sharing: hierarchical nominal-first with mixed CQ and cohort quotas",
        Row(
            [
                held("eng-alpha/a2-admitted", "cq-a2", {"cpu": "6"}, "on-demand"),
                held("eng-alpha/c-admitted", "cq-c", {"cpu": "20"}, "on-demand"),
            ],
            [
                Pending("eng-alpha/wl-a1", "lq-a1", {"cpu": "7"}, pod_set="one"),
                Pending("eng-alpha/wl-b", "lq-b", {"cpu": "4"}, pod_set="one"),
            ],
            {
                "eng-alpha/a2-admitted": single("cq-a2", "on-demand", "6"),
                "eng-alpha/c-admitted": single("cq-c", "on-demand", "20"),
                "eng-alpha/wl-a1": single("cq-a1", "on-demand", "7"),
            },
            {"eng-alpha/wl-b"},
            queues=queues(
                simple("cq-a1", "Cohort-A", od("5")),
                simple("cq-a2", "Cohort-A", od("3")),
                simple("cq-b", "Cohort-B", od("5")),
                simple("cq-c", "Cohort-B", od("3")),
            ),
            local_queues=lqs("eng-alpha", lq_a1="cq-a1", lq_a2="cq-a2", lq_b="cq-b", lq_c="cq-c"),
            cohorts=cohorts(
                cohort("root"),
                cohort("Cohort-A", od("10"), parent="root"),
                cohort("Cohort-B", od("10"), parent="root"),
            ),
        ),
    ),
    (
        "with fair sharing: hierarchical nominal-first per-flavor ignores cross-flavor borrowing",
        Row(
            [
                held("eng-alpha/spot-admitted", "cq-a", {"cpu": "5"}, "spot"),
                held("eng-alpha/od-admitted", "cq-b", {"cpu": "8"}, "on-demand"),
            ],
            [
                Pending("eng-alpha/wl-a", "lq-a", {"cpu": "4"}, pod_set="one"),
                Pending("eng-alpha/wl-b", "lq-b", {"cpu": "4"}, pod_set="one"),
            ],
            {
                "eng-alpha/spot-admitted": single("cq-a", "spot", "5"),
                "eng-alpha/od-admitted": single("cq-b", "on-demand", "8"),
                "eng-alpha/wl-a": single("cq-a", "on-demand", "4"),
            },
            {"eng-alpha/wl-b"},
            queues=queues(
                simple("cq-a", "Cohort-A", (cpu("on-demand", "0"), cpu("spot", "0"))),
                simple("cq-b", "Cohort-B", (cpu("on-demand", "5"), cpu("spot", "0"))),
            ),
            local_queues=lqs("eng-alpha", lq_a="cq-a", lq_b="cq-b"),
            cohorts=cohorts(
                cohort("root"),
                cohort("Cohort-A", od("10"), parent="root"),
                cohort("Cohort-B", (cpu("spot", "10"),), parent="root"),
            ),
        ),
    ),
    (
        "hierarchical fair sharing schedule workload which wins tournament",
        Row(
            [
                held("eng-alpha/d0", "d", {"cpu": "10"}, "on-demand"),
                held("eng-alpha/e0", "e", {"cpu": "20"}, "on-demand"),
                held("eng-alpha/g0", "g", {"cpu": "100"}, "on-demand"),
            ],
            [
                Pending("eng-alpha/d1", "lq-d", {"cpu": "70"}, pod_set="one"),
                Pending("eng-alpha/e1", "lq-e", {"cpu": "61"}, pod_set="one"),
                Pending("eng-alpha/f1", "lq-f", {"cpu": "1"}, pod_set="one"),
                Pending("eng-alpha/g1", "lq-g", {"cpu": "1"}, pod_set="one"),
            ],
            {
                "eng-alpha/d0": single("d", "on-demand", "10"),
                "eng-alpha/e0": single("e", "on-demand", "20"),
                "eng-alpha/g0": single("g", "on-demand", "100"),
                "eng-alpha/d1": single("d", "on-demand", "70"),
            },
            {"eng-alpha/e1", "eng-alpha/f1", "eng-alpha/g1"},
            queues=queues(
                simple("d", "B", od("0")),
                simple("e", "B", od("0")),
                simple("f", "C", od("0")),
                simple("g", "C", od("0")),
            ),
            local_queues=lqs("eng-alpha", lq_d="d", lq_e="e", lq_f="f", lq_g="g"),
            cohorts=cohorts(cohort("A", od("200")), cohort("B", parent="A"), cohort("C", parent="A")),
        ),
    ),
    (
        "fair sharing schedule workload with lowest drf after admission",
        Row(
            [held("eng-alpha/b0", "b", {"cpu": "10"}, "on-demand")],
            [
                Pending("eng-alpha/b1", "lq-b", {"cpu": "50"}, pod_set="one"),
                Pending("eng-alpha/c1", "lq-c", {"cpu": "75"}, pod_set="one"),
            ],
            {"eng-alpha/b0": single("b", "on-demand", "10"), "eng-alpha/b1": single("b", "on-demand", "50")},
            {"eng-alpha/c1"},
            queues=queues(simple("b", "A", od("0")), simple("c", "A", od("0"))),
            local_queues=lqs("eng-alpha", lq_b="b", lq_c="c"),
            cohorts=cohorts(cohort("A", od("100"))),
        ),
    ),
    (
        "fair sharing two queues with weight 0 schedules workload which borrows less",
        _two_queues_weighted(0.0),
    ),
    (
        "fair sharing two queues with high weight schedules workload which borrows less",
        _two_queues_weighted(123456789.0),
    ),
    (
        "fair sharing schedule singleton cqs and cq without cohort",
        Row(
            [],
            [
                Pending("eng-alpha/a1", "lq-a", {"cpu": "10"}, pod_set="one"),
                Pending("eng-alpha/b1", "lq-b", {"cpu": "10"}, pod_set="one"),
                Pending("eng-alpha/c1", "lq-c", {"cpu": "10"}, pod_set="one"),
            ],
            {
                "eng-alpha/a1": single("a", "on-demand", "10"),
                "eng-alpha/b1": single("b", "on-demand", "10"),
                "eng-alpha/c1": single("c", "on-demand", "10"),
            },
            set(),
            queues=queues(simple("a", "A", od("0")), simple("b", "B", od("10")), simple("c", None, od("10"))),
            local_queues=lqs("eng-alpha", lq_a="a", lq_b="b", lq_c="c"),
            cohorts=cohorts(cohort("A", od("10")), cohort("B")),
        ),
    ),
    ("fair sharing schedule highest priority first", _singles_b_c(99, 101, 0.0, 0.0)),
    ("fair sharing schedule earliest timestamp first", _singles_b_c(101, 101, NOW + 1, NOW)),
    (
        "with fair sharing: preempt workload from CQ with the highest share",
        Row(
            [
                held("eng-alpha/all_spot", "eng-alpha", {"cpu": "100"}, "spot"),
                *(held(f"eng-alpha/alpha{i}", "eng-alpha", {"cpu": "20"}, "on-demand") for i in range(1, 5)),
                held("eng-gamma/gamma1", "eng-gamma", {"cpu": "10"}, "on-demand"),
                *(held(f"eng-gamma/gamma{i}", "eng-gamma", {"cpu": "20"}, "on-demand") for i in range(2, 5)),
            ],
            [Pending("eng-beta/preemptor", "main", {"cpu": "30"})],
            {
                "eng-alpha/all_spot": single("eng-alpha", "spot", "100"),
                **{f"eng-alpha/alpha{i}": single("eng-alpha", "on-demand", "20") for i in range(1, 5)},
                "eng-gamma/gamma1": single("eng-gamma", "on-demand", "10"),
                **{f"eng-gamma/gamma{i}": single("eng-gamma", "on-demand", "20") for i in range(2, 5)},
            },
            {"eng-beta/preemptor"},
            {("eng-alpha/alpha1", IN_COHORT_RECLAMATION), ("eng-gamma/gamma1", IN_COHORT_RECLAMATION)},
            queues=queues(cluster_queue("eng-gamma", od("50", "0"), cohort="eng")),
        ),
    ),
    (
        "multiple preemptions within cq when fair sharing",
        Row(
            [
                held("eng-alpha/a1", "other-alpha", {"cpu": "3"}, "default"),
                held("eng-beta/b1", "other-beta", {"cpu": "3"}, "default"),
                held("eng-gamma/c1", "other-gamma", {"cpu": "3"}, "default"),
            ],
            [
                Pending("eng-alpha/preemptor", "other", {"cpu": "3"}, priority=100),
                Pending("eng-beta/preemptor", "other", {"cpu": "3"}, priority=100),
                Pending("eng-gamma/preemptor", "other", {"cpu": "3"}, priority=100),
            ],
            {
                "eng-alpha/a1": single("other-alpha", "default", "3"),
                "eng-beta/b1": single("other-beta", "default", "3"),
                "eng-gamma/c1": single("other-gamma", "default", "3"),
            },
            {"eng-alpha/preemptor", "eng-beta/preemptor", "eng-gamma/preemptor"},
            {
                ("eng-alpha/a1", IN_CLUSTER_QUEUE),
                ("eng-beta/b1", IN_CLUSTER_QUEUE),
                ("eng-gamma/c1", IN_CLUSTER_QUEUE),
            },
            queues=queues(
                _other("other-alpha", ("cpu", "2"), within=LOWER_PRIORITY, reclaim=UNSET),
                _other("other-beta", ("cpu", "2"), within=LOWER_PRIORITY, reclaim=UNSET),
                _other("other-gamma", ("cpu", "2"), within=LOWER_PRIORITY, reclaim=UNSET),
                _other("resource-bank", ("cpu", "3")),
            ),
            local_queues=OTHER_LQS,
        ),
    ),
    (
        # RecomputeAssignmentUponPreemptionTargetsOverlap: false, gpufleet's only behaviour: a preemptor whose
        # targets overlap an earlier one's this cycle is skipped. c1 requests ``gamma-resource`` too, but its
        # admission assigns cpu only, so only cpu holds quota.
        "multiple preemptions skip overlapping preemption targets",
        Row(
            [
                held("eng-alpha/a1", "other-alpha", {"alpha-resource": "1"}, "default"),
                held("eng-beta/b1", "other-beta", {"beta-resource": "1"}, "default"),
                held("eng-gamma/c1", "other-gamma", {"cpu": "9"}, "default"),
            ],
            [
                Pending("eng-alpha/preemptor", "other", {"cpu": "3", "alpha-resource": "1"}, priority=100),
                Pending(
                    "eng-beta/pretending-preemptor", "other", {"cpu": "3", "beta-resource": "1"}, priority=99
                ),
            ],
            {
                "eng-alpha/a1": on("other-alpha", "default", alpha_resource="1"),
                "eng-beta/b1": on("other-beta", "default", beta_resource="1"),
                "eng-gamma/c1": single("other-gamma", "default", "9"),
            },
            {"eng-alpha/preemptor", "eng-beta/pretending-preemptor"},
            {("eng-alpha/a1", IN_CLUSTER_QUEUE), ("eng-gamma/c1", IN_COHORT_FAIR_SHARING)},
            queues=queues(
                _other(
                    "other-alpha", ("cpu", "0"), ("alpha-resource", "1"), within=LOWER_PRIORITY, reclaim=ANY
                ),
                _other(
                    "other-beta", ("cpu", "0"), ("beta-resource", "1"), within=LOWER_PRIORITY, reclaim=ANY
                ),
                _other(
                    "other-gamma", ("cpu", "0"), ("gamma-resource", "1"), within=LOWER_PRIORITY, reclaim=ANY
                ),
                _other("resource-bank", ("cpu", "9")),
            ),
            local_queues=OTHER_LQS,
        ),
    ),
    (
        "not enough resources with fair sharing enabled",
        Row([], [Pending("sales/new", "main", {"cpu": "100"}, pod_set="one")], {}, {"sales/new"}),
    ),
    (
        "with fair sharing: prefer reclamation over cq priority based preemption; "
        "with preemption while borrowing",
        Row(
            [
                held("eng-alpha/a1", "other-alpha", {"gpu": "5"}, "on-demand", priority=50),
                held("eng-beta/b1", "other-beta", {"gpu": "5"}, "spot", priority=50),
            ],
            [Pending("eng-alpha/preemptor", "other", {"gpu": "8"}, priority=100)],
            {
                "eng-alpha/a1": on("other-alpha", "on-demand", gpu="5"),
                "eng-beta/b1": on("other-beta", "spot", gpu="5"),
            },
            {"eng-alpha/preemptor"},
            {("eng-beta/b1", IN_COHORT_FAIR_SHARING)},
            queues=queues(
                cluster_queue(
                    "other-alpha",
                    (flavor_quotas("on-demand", ("gpu", "7")), flavor_quotas("spot", ("gpu", "7"))),
                    cohort="other",
                    within=LOWER_PRIORITY,
                    reclaim=LOWER_PRIORITY,
                ),
                cluster_queue(
                    "other-beta",
                    (flavor_quotas("on-demand", ("gpu", "3")), flavor_quotas("spot", ("gpu", "3"))),
                    cohort="other",
                ),
            ),
            local_queues=lqs("eng-alpha", other="other-alpha") | lqs("eng-beta", other="other-beta"),
        ),
    ),
    ("prefer flavor with most local capacity", _most_local_capacity(True)),
    ("prefer flavor with most local capacity (FS=false)", _most_local_capacity(False)),
    (
        "fair sharing: in-CQ preemption for CQ without cohort; repro for nil pointer panic",
        Row(
            [held("default/nc-low", "no-cohort-cq", {"cpu": "4"}, "default", priority=-1)],
            [Pending("default/nc-high", "no-cohort-queue", {"cpu": "4"}, priority=100)],
            {"default/nc-low": single("no-cohort-cq", "default", "4")},
            {"default/nc-high"},
            {("default/nc-low", IN_CLUSTER_QUEUE)},
            queues=queues(
                cluster_queue("no-cohort-cq", (cpu("default", "4"),), within=LOWER_PRIORITY, reclaim=UNSET)
            ),
            local_queues=lqs("default", no_cohort_queue="no-cohort-cq"),
        ),
    ),
    (
        "PreemptionOverBorrowing with fair sharing: preempt in first flavor instead of borrowing in second",
        Row(
            [held("default/fs-low-pob", "fs-pob-cq", {"cpu": "5"}, "on-demand", priority=-1)],
            [Pending("default/fs-high-pob", "fs-pob-queue", {"cpu": "5"})],
            {"default/fs-low-pob": single("fs-pob-cq", "on-demand", "5")},
            {"default/fs-high-pob"},
            {("default/fs-low-pob", IN_CLUSTER_QUEUE)},
            queues=queues(
                cluster_queue(
                    "fs-pob-cq",
                    (cpu("on-demand", "5", "0"), cpu("spot", "0", "5")),
                    cohort="fs-pob-cohort",
                    within=LOWER_PRIORITY,
                    reclaim=UNSET,
                    fungibility=FlavorFungibility(
                        when_can_borrow=TRY_NEXT_FLAVOR,
                        when_can_preempt=TRY_NEXT_FLAVOR,
                        preference=PREEMPTION_OVER_BORROWING,
                    ),
                ),
                cluster_queue(
                    "fs-pob-lender", (cpu("on-demand", "0"), cpu("spot", "5")), cohort="fs-pob-cohort"
                ),
            ),
            local_queues=lqs("default", fs_pob_queue="fs-pob-cq"),
        ),
    ),
]


@pytest.mark.parametrize("row", cases("TestScheduleForFairSharing", TABLE, 1))
def test_schedule_for_fair_sharing(row: Row) -> None:
    check_schedule(row, SUITE)
