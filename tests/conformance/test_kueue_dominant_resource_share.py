"""Kueue's own dominant-resource-share table, ``kubernetes-sigs/kueue:
pkg/cache/scheduler/fair_sharing_test.go`` (``TestDominantResourceShare``, at commit ``ff69552e79ad``: 16
cases), case by case: each pytest id is ``TestDominantResourceShare/<upstream case>``, held against
``QuotaSnapshot.dominant_resource_share`` for every ClusterQueue and Cohort of the case. A case gpufleet
cannot express is kept as a skip that says why.

Compared, as upstream does: each node's rounded weighted share (``roundedWeightedShare``: the share
rounded up, the largest int64 for a node of weight 0 that borrows), its dominant resource and whether it
borrows. The usage is ``cq``'s. Upstream's ``flvResQ`` (a workload's requests, added to each node's usage
in that one computation) is added to ``cq``'s usage here, as every caller upstream does
(``SimulateUsageAddition``); in those cases no other node's share depends on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest
from builders import Skip, cases
from kueue_builders import cluster_queue, cohort, flavor_quotas, quota_usage

from gpufleet.model.kueue import ClusterQueue, Cohort, FlavorResource
from gpufleet.scheduling.kueue.quota import QuotaSnapshot

GPU = "example.com/gpu"
COHORT = "test-cohort"
INT64_MAX = 2**63 - 1

#: (node, dominant resource, rounded weighted share, borrowing): upstream's ``fairSharingResult``
Result = tuple[str, str, int, bool]


@dataclass(frozen=True)
class ShareCase:
    cq: ClusterQueue
    usage: dict[FlavorResource, str]
    want: set[Result]
    lending: ClusterQueue | None = None  # ``lendingClusterQueue``
    cohorts: tuple[Cohort, ...] = ()
    workload: dict[FlavorResource, str] = field(default_factory=dict)  # ``flvResQ``


def cq(
    *quotas: tuple[str, ...], weight: float = 1.0, flavor: str = "default", parent: str | None = COHORT
) -> ClusterQueue:
    """``MakeClusterQueue("cq").Cohort(parent).FairWeight(weight)`` with one flavor's quotas."""
    return cluster_queue("cq", (flavor_quotas(flavor, *quotas),), cohort=parent, weight=weight)


def lending(*quotas: tuple[str, ...], weight: float = 1.0) -> ClusterQueue:
    """``lending-cq`` in ``test-cohort``, flavor ``default``."""
    return cluster_queue("lending-cq", (flavor_quotas("default", *quotas),), cohort=COHORT, weight=weight)


def idle(*names: str) -> set[Result]:
    """Nodes that borrow nothing."""
    return {(n, "", 0, False) for n in names}


CPU2_GPU5 = (("cpu", "2"), (GPU, "5"))
LENDING_CPU8_GPU5 = lending(("cpu", "8"), (GPU, "5"))
BORROWING_CHILD = cohort("child-cohort", parent="root", weight=2)


def gpu_root(nominal: str) -> Cohort:
    return cohort("root", (flavor_quotas("default", (GPU, nominal)),))


TABLE: list[tuple[str, ShareCase | Skip]] = [
    (
        "no cohort",
        ShareCase(
            cq(("cpu", "2000"), (GPU, "5"), parent=None),
            {("default", "cpu"): "1", ("default", GPU): "2"},
            idle("cq"),
        ),
    ),
    (
        "usage below nominal",
        ShareCase(
            cq(*CPU2_GPU5),
            {("default", "cpu"): "1", ("default", GPU): "2"},
            idle("cq", "lending-cq", COHORT),
            LENDING_CPU8_GPU5,
        ),
    ),
    (
        "usage above nominal",
        ShareCase(
            cq(*CPU2_GPU5),
            {("default", "cpu"): "3", ("default", GPU): "7"},
            {("cq", GPU, 200, True)} | idle("lending-cq", COHORT),  # (7-5)*1000/10
            LENDING_CPU8_GPU5,
        ),
    ),
    (
        "usage slightly above nominal in a cohort with large quotas",
        ShareCase(
            cq((GPU, "500")),
            {("default", GPU): "501"},
            {("cq", GPU, 1, True)} | idle("lending-cq", COHORT),
            lending((GPU, "1000"), weight=300),
        ),
    ),
    (
        "usage way above nominal in a cohort with large quotas and weights",
        ShareCase(
            cq((GPU, "500"), weight=300),
            {("default", GPU): "800"},
            {("cq", GPU, 1, True)} | idle("lending-cq", COHORT),
            lending((GPU, "1000"), weight=300),
        ),
    ),
    (
        "one resource above nominal",
        ShareCase(
            cq(*CPU2_GPU5),
            {("default", "cpu"): "3", ("default", GPU): "3"},
            {("cq", "cpu", 100, True)} | idle("lending-cq", COHORT),  # (3-2)*1000/10
            LENDING_CPU8_GPU5,
        ),
    ),
    (
        "usage with workload above nominal",
        ShareCase(
            cq(*CPU2_GPU5),
            {("default", "cpu"): "1", ("default", GPU): "2"},
            {("cq", "cpu", 300, True)} | idle("lending-cq", COHORT),  # (1+4-2)*1000/10
            LENDING_CPU8_GPU5,
            workload={("default", "cpu"): "4", ("default", GPU): "4"},
        ),
    ),
    (
        "A resource with zero lendable",
        ShareCase(
            cq(("cpu", "2"), (GPU, "2", "", "0")),
            {("default", "cpu"): "1", ("default", GPU): "1"},
            {("cq", "cpu", 300, True)} | idle("lending-cq", COHORT),  # (1+4-2)*1000/10
            lending(("cpu", "8"), (GPU, "64", "", "0")),
            workload={("default", "cpu"): "4", ("default", GPU): "4"},
        ),
    ),
    (
        "multiple flavors",
        ShareCase(
            cluster_queue(
                "cq",
                (flavor_quotas("on-demand", ("cpu", "20")), flavor_quotas("spot", ("cpu", "80"))),
                cohort=COHORT,
            ),
            {("on-demand", "cpu"): "15", ("spot", "cpu"): "5"},
            {("cq", "cpu", 25, True)} | idle("lending-cq", COHORT),  # ((15+10-20)+0)*1000/200
            lending(("cpu", "100")),
            workload={("on-demand", "cpu"): "10"},
        ),
    ),
    (
        "above nominal with integer weight",
        ShareCase(
            cq((GPU, "5"), weight=2),
            {("default", GPU): "7"},
            {("cq", GPU, 100, True)} | idle("lending-cq", COHORT),  # ((7-5)*1000/10)/2
            lending((GPU, "5")),
        ),
    ),
    (
        "above nominal with decimal weight",
        ShareCase(
            cq((GPU, "5"), weight=0.5),
            {("default", GPU): "7"},
            {("cq", GPU, 400, True)} | idle("lending-cq", COHORT),  # ((7-5)*1000/10)/(1/2)
            lending((GPU, "5")),
        ),
    ),
    (
        "above nominal with zero weight",
        ShareCase(
            cq((GPU, "5"), weight=0),
            {("default", GPU): "7"},
            {("cq", GPU, INT64_MAX, True)} | idle("lending-cq", COHORT),
            lending((GPU, "10")),
        ),
    ),
    (
        "cohort has resource share",
        ShareCase(
            cq((GPU, "5"), parent="child-cohort"),
            {("default", GPU): "10"},
            # (5 / 50) * 1000; (5 / 50) * 1000 / 2
            {("cq", GPU, 100, True), ("child-cohort", GPU, 50, True)} | idle("root"),
            cohorts=(BORROWING_CHILD, gpu_root("45")),
        ),
    ),
    (
        "resource share defined for resources only available at the root cohort",
        ShareCase(
            cq((GPU, "0"), parent="child-cohort"),
            {("default", GPU): "10"},
            # (10 / 50) * 1000; (10 / 50) * 1000 / 2
            {("cq", GPU, 200, True), ("child-cohort", GPU, 100, True)} | idle("root"),
            cohorts=(BORROWING_CHILD, gpu_root("50")),
        ),
    ),
    (
        "resource share affected by borrowing limit",
        ShareCase(
            cq((GPU, "0"), parent="child-cohort"),
            {("default", GPU): "10"},
            # Cohort resources from view of CQ are 10, while from view of child-cohort are 50:
            # (10 / 10) * 1000; (10 / 50) * 1000
            {("cq", GPU, 1000, True), ("child-cohort", GPU, 200, True)} | idle("root"),
            cohorts=(
                cohort("child-cohort", (flavor_quotas("default", (GPU, "0", "10")),), parent="root"),
                gpu_root("50"),
            ),
        ),
    ),
    (
        "borrowing against unlimited lendable capacity (exabyte-scale quota)",
        Skip(
            "Kueue's saturating Unlimited amount (1E cpu overflows int64 milli-cpu) is not modelled: "
            "gpufleet's quota amounts are exact integers"
        ),
    ),
]


def rounded(drs_weighted: float, zero_weight_borrows: bool) -> int:
    """``roundedWeightedShare``."""
    return INT64_MAX if zero_weight_borrows else math.ceil(drs_weighted)


@pytest.mark.parametrize("case", cases("TestDominantResourceShare", TABLE, 1))
def test_dominant_resource_share(case: ShareCase) -> None:
    queues = {q.name: q for q in (case.cq, case.lending) if q is not None}
    usage = quota_usage(case.usage)
    for fr, amount in quota_usage(case.workload).items():
        usage[fr] = usage.get(fr, 0) + amount
    snapshot = QuotaSnapshot(queues, {"cq": usage}, {c.name: c for c in case.cohorts})
    nodes = [*(f"cq:{q}" for q in snapshot.queues), *(f"cohort:{c}" for c in snapshot.cohorts)]
    got = set()
    for node in nodes:
        drs = snapshot.dominant_resource_share(node)
        share = rounded(drs.weighted(), drs.zero_weight_borrows)
        got.add((node.split(":", 1)[1], drs.dominant, share, drs.borrowing))
    assert got == case.want
