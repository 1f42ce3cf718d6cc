"""Kueue's own flavor-assignment table, ``kubernetes-sigs/kueue:
pkg/scheduler/flavorassigner/flavorassigner_test.go`` (``TestAssignFlavors``, at commit
``ff69552e79ad``: 60 cases), case by case: each pytest id is ``TestAssignFlavors/<upstream case>``,
held against ``gpufleet.scheduling.kueue.flavors.assign_flavors``. A case gpufleet cannot express is
kept as a skip that says why.

Asserted: the representative mode, each pod set's flavor of each resource (upstream's pod sets'
``Flavors``: none for a pod set that found none) and on ``Fit`` whether the assignment borrows
(upstream's ``Borrowing > 0``; on ``Preempt`` upstream's borrowing is what its stub oracle says the
queue borrows after preemption); for the cases of several pod sets (and the one with reclaimable pods)
also what the pod sets use together (``Usage.Quota.Assigned``), and for the former each pod set's
reasons (``Status``). gpufleet keeps one mode per pod set, not one per resource, so those are not
compared. The preemption oracle is upstream's test oracle: it
answers ``Preempt`` with no borrowing for every simulated preemption unless a case's
``simulationResult`` says otherwise (``AssignCase.simulation``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from builders import Skip, cases
from kueue_builders import (
    Incoming,
    PodSet,
    assigned,
    cluster_queue,
    flavor_quotas,
    incoming,
    queues,
    quota_usage,
)

from gpufleet.model.kueue import (
    ANY,
    DEFAULT_FUNGIBILITY,
    LOWER_PRIORITY,
    MAY_STOP_SEARCH,
    NEVER,
    TRY_NEXT_FLAVOR,
    ClusterQueue,
    FlavorFungibility,
    FlavorQuotas,
    FlavorResource,
    ResourceFlavor,
)
from gpufleet.model.node import Taint, Toleration
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.scheduling.kueue.flavors import Granular, Mode, Possibility
from gpufleet.scheduling.kueue.quota import Usage

SPOT = Taint("instance", "spot")
SPOT_TOLERATION = Toleration("instance", "Equal", "spot", "NoSchedule")
RESOURCE_FLAVORS = {
    f.name: f
    for f in (
        ResourceFlavor("default"),
        ResourceFlavor("one", {"type": "one"}),
        ResourceFlavor("two", {"type": "two"}),
        ResourceFlavor("b_one", {"b_type": "one"}),
        ResourceFlavor("b_two", {"b_type": "two"}),
        ResourceFlavor("tainted", node_taints=(SPOT,)),
        ResourceFlavor(
            "taint_and_toleration",
            node_taints=(SPOT,),
            tolerations=(SPOT_TOLERATION,),
        ),
        ResourceFlavor("label-x-a", {"x": "a"}),
        ResourceFlavor("label-xy-b", {"x": "b", "y": "k"}),
        ResourceFlavor("tas-a", topology="tas-topo-a"),
        ResourceFlavor("tas-b", topology="tas-topo-b"),
    )
}
CQ = "test-clusterqueue"
SECONDARY = "test-secondary-clusterqueue"
COHORT = "test-cohort"
GPU = "example.com/gpu"

SLICES = Skip("elastic workload slices (ElasticJobsViaWorkloadSlices, replaceWorkloadSlice) are not modelled")
TAS_SPLIT = Skip(
    "a TAS pod set whose resources land in different TAS flavors (MultipleTASFlavorsAssignedError): "
    "gpufleet's Topology-Aware Scheduling checks flavors one resource group at a time and has no such check"
)


@dataclass(frozen=True)
class AssignCase:
    queues: dict[str, ClusterQueue]
    workload: Incoming
    mode: Mode  # upstream's wantRepMode
    flavors: dict[str, str] = field(default_factory=dict)  # resource -> flavor of the pod set ``main``
    #: the cases of several pod sets: each one's resource -> flavor (for ``flavors``), what they use together
    #: (``Usage.Quota.Assigned``, compared too where a case of one pod set gives it) and the reasons of each
    #: that has some (its ``Status``)
    pod_sets: dict[str, dict[str, str]] = field(default_factory=dict)
    quota: dict[FlavorResource, str] = field(default_factory=dict)
    reasons: dict[str, tuple[str, ...]] = field(default_factory=dict)
    borrows: bool = False  # upstream's Borrowing > 0 (its oracle's answer, on Preempt)
    usage: dict[str, Usage] = field(default_factory=dict)  # clusterQueueUsage, secondaryClusterQueueUsage
    #: the test oracle's ``simulationResult``: (possibility, borrowing after) per (flavor, resource)
    simulation: dict[FlavorResource, Granular] = field(default_factory=dict)
    fair_sharing: bool = False  # ``enableFairSharing``


def wl(requests: dict[str, str], pod: Pod | None = None) -> Incoming:
    """The case's single pod set ``main`` (count 1) in ``test-clusterqueue``."""
    return incoming(CQ, PodSet("main", 1, requests, pod=pod))


def pod(
    selector: dict[str, str] | None = None,
    affinity: tuple[tuple[Requirement, ...], ...] | None = None,
    tolerations: tuple[Toleration, ...] = (),
) -> Pod:
    """A pod of the set: its nodeSelector, required node affinity terms (each ``In`` expressions) and
    tolerations."""
    terms = None if affinity is None else tuple(SelectorTerm(t) for t in affinity)
    return Pod(
        "in", namespace="", node_selector=selector or {}, required_terms=terms, tolerations=tolerations
    )


def within(key: str, *values: str) -> Requirement:
    return Requirement(key, "In", values)


def cq(
    *groups: tuple[object, ...],
    cohort: str | None = None,
    name: str = CQ,
    fungibility: FlavorFungibility = DEFAULT_FUNGIBILITY,
) -> ClusterQueue:
    return cluster_queue(name, *groups, cohort=cohort, fungibility=fungibility)  # type: ignore[arg-type]


def fungible(borrow: str, preempt: str) -> FlavorFungibility:
    """``FlavorFungibility(kueue.FlavorFungibility{WhenCanBorrow: borrow, WhenCanPreempt: preempt})``."""
    return FlavorFungibility(borrow, preempt)


STOP, NEXT = MAY_STOP_SEARCH, TRY_NEXT_FLAVOR


def pods_of(count: int, requests: dict[str, str]) -> Incoming:
    """``MakePodSet(kueue.DefaultPodSetName, count).Request(...)`` in ``test-clusterqueue``."""
    return incoming(CQ, PodSet("main", count, requests))


def one_two(one: tuple[str, ...], two: tuple[str, ...]) -> tuple[object, ...]:
    """Flavors ``one`` and ``two``, each with 10 pods and the cpu quota given (nominal, borrowing
    limit, lending limit)."""
    return (
        flavor_quotas("one", ("pods", "10"), ("cpu", *one)),
        flavor_quotas("two", ("pods", "10"), ("cpu", *two)),
    )


#: The secondary queue of the fungibility cases: 1 cpu of flavor ``one`` in the cohort.
SECONDARY_ONE = cq((flavor_quotas("one", ("cpu", "1")),), cohort=COHORT, name=SECONDARY)
USED_TWO_OF_ONE = {CQ: quota_usage({("one", "cpu"): "2"})}


def cpu_in(*flavors: str) -> tuple[object, ...]:
    """A group with one flavor per name, each with 4 cpu."""
    return tuple(flavor_quotas(f, ("cpu", "4")) for f in flavors)


def borrowing_cq(
    *flavors: FlavorQuotas, fungibility: FlavorFungibility = DEFAULT_FUNGIBILITY
) -> ClusterQueue:
    """``test-clusterqueue`` of the borrowWithinCohort cases: its flavors in one group, in the cohort,
    ``Preemption{ReclaimWithinCohort: LowerPriority, BorrowWithinCohort: {Policy: LowerPriority}}``."""
    return cluster_queue(
        CQ, flavors, cohort=COHORT, reclaim=LOWER_PRIORITY, borrow=LOWER_PRIORITY, fungibility=fungibility
    )


def fair_sharing_cq(reclaim: str) -> ClusterQueue:
    """``test-clusterqueue`` of the fair sharing cases: flavors ``one`` (0 cpu) and ``two`` (12 cpu) in the
    cohort, ``MayStopSearch`` for both, ``Preemption{ReclaimWithinCohort: reclaim}``."""
    flavors = (flavor_quotas("one", ("cpu", "0")), flavor_quotas("two", ("cpu", "12")))
    return cluster_queue(CQ, flavors, cohort=COHORT, reclaim=reclaim, fungibility=fungible(STOP, STOP))


def secondary_cpu(*flavors: tuple[str, str]) -> ClusterQueue:
    """``test-secondary-clusterqueue``: (flavor, cpu nominal quota) in one group, in the cohort."""
    return cq(
        tuple(flavor_quotas(f, ("cpu", nominal)) for f, nominal in flavors), cohort=COHORT, name=SECONDARY
    )


TABLE: list[tuple[str, AssignCase | Skip]] = [
    (
        "single flavor, fits",
        AssignCase(
            queues(cq((flavor_quotas("default", ("cpu", "1"), ("memory", "2Mi")),))),
            wl({"cpu": "1", "memory": "1Mi"}),
            Mode.FIT,
            {"cpu": "default", "memory": "default"},
        ),
    ),
    (
        "single flavor, fits tainted flavor",
        AssignCase(
            queues(cq(cpu_in("tainted"))),
            wl({"cpu": "1"}, pod(tolerations=(SPOT_TOLERATION,))),
            Mode.FIT,
            {"cpu": "tainted"},
        ),
    ),
    (
        "single flavor, fits tainted flavor with toleration",
        AssignCase(
            queues(cq(cpu_in("taint_and_toleration"))),
            wl({"cpu": "1"}),
            Mode.FIT,
            {"cpu": "taint_and_toleration"},
        ),
    ),
    (
        "single flavor, used resources, doesn't fit",
        AssignCase(
            queues(cq(cpu_in("default"))),
            wl({"cpu": "2"}),
            Mode.PREEMPT,
            {"cpu": "default"},
            usage={CQ: quota_usage({("default", "cpu"): "3"})},
        ),
    ),
    (
        "multiple resource groups, fits",
        AssignCase(
            queues(
                cq(
                    (flavor_quotas("one", ("cpu", "2")), flavor_quotas("two", ("cpu", "4"))),
                    (flavor_quotas("b_one", ("memory", "1Gi")), flavor_quotas("b_two", ("memory", "5Gi"))),
                )
            ),
            wl({"cpu": "3", "memory": "10Mi"}),
            Mode.FIT,
            {"cpu": "two", "memory": "b_one"},
        ),
    ),
    (
        "multiple flavors, leader worker set, leader and workers request the same resources fits",
        AssignCase(
            queues(cq((flavor_quotas("one", ("cpu", "4")), flavor_quotas("two", ("cpu", "9"))))),
            incoming(
                CQ,
                PodSet("worker", 4, {"cpu": "2"}, group="group1"),
                PodSet("leader", 1, {"cpu": "1"}, group="group1"),
            ),
            Mode.FIT,
            pod_sets={"worker": {"cpu": "two"}, "leader": {"cpu": "two"}},
            quota={("two", "cpu"): "9"},
        ),
    ),
    (
        "multiple flavors, leader worker set, workers request GPU, leader does not request GPU, fits",
        AssignCase(
            queues(
                cq(
                    (flavor_quotas("one", ("cpu", "10"), ("memory", "10")),),
                    (flavor_quotas("two", ("cpu", "5"), ("memory", "5"), (GPU, "4")),),
                )
            ),
            incoming(
                CQ,
                PodSet("worker", 4, {"cpu": "1", "memory": "1", GPU: "1"}, group="group1"),
                PodSet("leader", 1, {"cpu": "1", "memory": "1"}, group="group1"),
            ),
            Mode.FIT,
            pod_sets={
                "worker": {"cpu": "two", "memory": "two", GPU: "two"},
                "leader": {"cpu": "two", "memory": "two"},
            },
            quota={("two", "cpu"): "5", ("two", "memory"): "5", ("two", GPU): "4"},
        ),
    ),
    (
        "multiple flavors, leader worker set, workers request GPU, leader does "
        "not request GPU, does not fit, "
        "without group it would fit",
        AssignCase(
            queues(
                cq(
                    (
                        flavor_quotas("one", ("cpu", "4"), (GPU, "4")),
                        flavor_quotas("two", ("cpu", "5"), (GPU, "0")),
                    )
                )
            ),
            incoming(
                CQ,
                PodSet("worker", 4, {"cpu": "1", GPU: "1"}, group="group1"),
                PodSet("leader", 1, {"cpu": "1"}, group="group1"),
            ),
            Mode.NO_FIT,
            pod_sets={"worker": {}, "leader": {}},
            reasons=dict.fromkeys(
                ("worker", "leader"),
                (
                    "insufficient quota for cpu in flavor one, previously considered podsets requests (0) + "
                    "current podset request (5) > maximum capacity (4)",
                    "insufficient quota for example.com/gpu in flavor two, previously considered podsets "
                    "requests (0) + current podset request (4) > maximum capacity (0)",
                ),
            ),
        ),
    ),
    (
        "multiple resource groups, one could fit with preemption, other doesn't fit",
        AssignCase(
            queues(cq((flavor_quotas("one", ("cpu", "3")),), (flavor_quotas("b_one", ("memory", "1Mi")),))),
            wl({"cpu": "3", "memory": "10Mi"}),
            Mode.NO_FIT,
            usage={CQ: quota_usage({("one", "cpu"): "1"})},
        ),
    ),
    (
        "multiple resource groups with multiple resources, fits",
        AssignCase(
            queues(
                cq(
                    (
                        flavor_quotas("one", ("cpu", "2"), ("memory", "1Gi")),
                        flavor_quotas("two", ("cpu", "4"), ("memory", "15Mi")),
                    ),
                    (flavor_quotas("b_one", (GPU, "4")), flavor_quotas("b_two", (GPU, "2"))),
                )
            ),
            wl({"cpu": "3", "memory": "10Mi", GPU: "3"}),
            Mode.FIT,
            {"cpu": "two", "memory": "two", GPU: "b_one"},
        ),
    ),
    (
        "multiple resource groups with multiple resources, fits with different modes",
        AssignCase(
            queues(
                cq(
                    (
                        flavor_quotas("one", ("cpu", "2"), ("memory", "1Gi")),
                        flavor_quotas("two", ("cpu", "4"), ("memory", "15Mi")),
                    ),
                    (flavor_quotas("b_one", (GPU, "4")),),
                    cohort=COHORT,
                ),
                cq((flavor_quotas("b_one", (GPU, "0")),), cohort=COHORT, name=SECONDARY),
            ),
            wl({"cpu": "3", "memory": "10Mi", GPU: "3"}),
            Mode.PREEMPT,
            {"cpu": "two", "memory": "two", GPU: "b_one"},
            borrows=True,
            usage={
                CQ: quota_usage({("two", "memory"): "10Mi"}),
                SECONDARY: quota_usage({("b_one", GPU): "2"}),
            },
        ),
    ),
    (
        "multiple resources in a group, doesn't fit",
        AssignCase(
            queues(
                cq(
                    (
                        flavor_quotas("one", ("cpu", "2"), ("memory", "1Gi")),
                        flavor_quotas("two", ("cpu", "4"), ("memory", "5Mi")),
                    )
                )
            ),
            wl({"cpu": "3", "memory": "10Mi"}),
            Mode.NO_FIT,
        ),
    ),
    (
        "multiple flavors, fits while skipping tainted flavor",
        AssignCase(queues(cq(cpu_in("tainted", "two"))), wl({"cpu": "3"}), Mode.FIT, {"cpu": "two"}),
    ),
    (
        "multiple flavors, fits a node selector",
        AssignCase(
            queues(cq(cpu_in("one", "two"))),
            wl({"cpu": "1"}, pod({"type": "two", "ignored1": "foo"}, ((within("ignored2", "bar"),),))),
            Mode.FIT,
            {"cpu": "two"},
        ),
    ),
    (
        "multiple flavors, fits with node affinity",
        AssignCase(
            queues(
                cq(
                    (
                        flavor_quotas("one", ("cpu", "4"), ("memory", "1Gi")),
                        flavor_quotas("two", ("cpu", "4"), ("memory", "1Gi")),
                    )
                )
            ),
            wl({"cpu": "1", "memory": "1Mi"}, pod({"ignored1": "foo"}, ((within("type", "two"),),))),
            Mode.FIT,
            {"cpu": "two", "memory": "two"},
        ),
    ),
    (
        "multiple flavors, node affinity fits any flavor",
        AssignCase(
            queues(cq(cpu_in("one", "two"))),
            wl({"cpu": "1"}, pod(affinity=((within("ignored2", "bar"),), (within("cpuType", "two"),)))),
            Mode.FIT,
            {"cpu": "one"},
        ),
    ),
    (
        "multiple flavors with different label keys, selector only uses flavor's own keys",
        AssignCase(
            queues(cq(cpu_in("label-x-a", "label-xy-b"))),
            wl({"cpu": "1"}, pod({"x": "a", "y": "g"})),
            Mode.FIT,
            {"cpu": "label-x-a"},
        ),
    ),
    (
        "labelless flavor in group with labeled flavor, workload uses labeled selector",
        AssignCase(
            queues(cq(cpu_in("default", "two"))),
            wl({"cpu": "1"}, pod({"type": "two"})),
            Mode.FIT,
            {"cpu": "default"},
        ),
    ),
    (
        "multiple flavors, doesn't fit node affinity",
        AssignCase(
            queues(cq(cpu_in("one", "two"))),
            wl({"cpu": "1"}, pod(affinity=((within("type", "three"),),))),
            Mode.NO_FIT,
        ),
    ),
    (
        "multiple specs, fit different flavors",
        AssignCase(
            queues(cq((flavor_quotas("one", ("cpu", "4")), flavor_quotas("two", ("cpu", "10"))))),
            incoming(CQ, PodSet("driver", 1, {"cpu": "5"}), PodSet("worker", 1, {"cpu": "3"})),
            Mode.FIT,
            pod_sets={"driver": {"cpu": "two"}, "worker": {"cpu": "one"}},
            quota={("one", "cpu"): "3", ("two", "cpu"): "5"},
        ),
    ),
    (
        "multiple specs, fits borrowing",
        AssignCase(
            queues(
                cq((flavor_quotas("default", ("cpu", "2", "98"), ("memory", "2Gi")),), cohort=COHORT),
                cq(
                    (flavor_quotas("default", ("cpu", "198"), ("memory", "198Gi")),),
                    cohort=COHORT,
                    name=SECONDARY,
                ),
            ),
            incoming(
                CQ,
                PodSet("driver", 1, {"cpu": "4", "memory": "1Gi"}),
                PodSet("worker", 1, {"cpu": "6", "memory": "4Gi"}),
            ),
            Mode.FIT,
            borrows=True,
            pod_sets={name: {"cpu": "default", "memory": "default"} for name in ("driver", "worker")},
            quota={("default", "cpu"): "10", ("default", "memory"): "5Gi"},
        ),
    ),
    (
        "not enough space to borrow",
        AssignCase(
            queues(
                cq((flavor_quotas("one", ("cpu", "1")),), cohort=COHORT),
                cq((flavor_quotas("one", ("cpu", "10", "", "0")),), cohort=COHORT, name=SECONDARY),
            ),
            wl({"cpu": "2"}),
            Mode.NO_FIT,
            usage={SECONDARY: quota_usage({("one", "cpu"): "9"})},
        ),
    ),
    (
        "past max, but can preempt in ClusterQueue",
        AssignCase(
            queues(
                cq((flavor_quotas("one", ("cpu", "2", "8")),), cohort=COHORT),
                cq((flavor_quotas("one", ("cpu", "98")),), cohort=COHORT, name=SECONDARY),
            ),
            wl({"cpu": "2"}),
            Mode.PREEMPT,
            {"cpu": "one"},
            borrows=True,
            usage={CQ: quota_usage({("one", "cpu"): "9"}), SECONDARY: quota_usage({("one", "cpu"): "9"})},
        ),
    ),
    (
        "past min, but can preempt in ClusterQueue",
        AssignCase(
            queues(cq((flavor_quotas("one", ("cpu", "2")),))),
            wl({"cpu": "2"}),
            Mode.PREEMPT,
            {"cpu": "one"},
            usage={CQ: quota_usage({("one", "cpu"): "1"})},
        ),
    ),
    (
        "past min, but can preempt in cohort and ClusterQueue",
        AssignCase(
            queues(
                cq((flavor_quotas("one", ("cpu", "3")),), cohort=COHORT),
                cq((flavor_quotas("one", ("cpu", "7")),), cohort=COHORT, name=SECONDARY),
            ),
            wl({"cpu": "2"}),
            Mode.PREEMPT,
            {"cpu": "one"},
            borrows=True,
            usage={CQ: quota_usage({("one", "cpu"): "2"}), SECONDARY: quota_usage({("one", "cpu"): "8"})},
        ),
    ),
    (
        "can only preempt flavors that match affinity",
        AssignCase(
            queues(cq(cpu_in("one", "two"))),
            wl({"cpu": "2"}, pod({"type": "two"})),
            Mode.PREEMPT,
            {"cpu": "two"},
            usage={CQ: quota_usage({("one", "cpu"): "3", ("two", "cpu"): "3"})},
        ),
    ),
    (
        "each podset requires preemption on a different flavor",
        AssignCase(
            queues(cq((flavor_quotas("one", ("cpu", "4")), flavor_quotas("tainted", ("cpu", "10"))))),
            incoming(
                CQ,
                PodSet("launcher", 1, {"cpu": "2"}),
                PodSet("workers", 10, {"cpu": "1"}, pod=pod(tolerations=(SPOT_TOLERATION,))),
            ),
            Mode.PREEMPT,
            usage={CQ: quota_usage({("one", "cpu"): "3", ("tainted", "cpu"): "3"})},
            pod_sets={"launcher": {"cpu": "one"}, "workers": {"cpu": "tainted"}},
            quota={("one", "cpu"): "2", ("tainted", "cpu"): "10"},
            reasons={
                "launcher": (
                    "insufficient unused quota for cpu in flavor one, 1 more needed",
                    "untolerated taint {instance spot NoSchedule <nil>} in flavor tainted",
                ),
                "workers": (
                    "insufficient quota for cpu in flavor one, previously considered podsets requests (2) + "
                    "current podset request (10) > maximum capacity (4)",
                    "insufficient unused quota for cpu in flavor tainted, 3 more needed",
                ),
            },
        ),
    ),
    (
        "resource not listed in clusterQueue",
        AssignCase(queues(cq((flavor_quotas("one", ("cpu", "4")),))), wl({GPU: "2"}), Mode.NO_FIT),
    ),
    (
        "zero resource request not in clusterQueue should succeed",
        AssignCase(queues(cq(cpu_in("default"))), wl({"cpu": "1", GPU: "0"}), Mode.FIT, {"cpu": "default"}),
    ),
    (
        "zero resource request defined in clusterQueue should get flavor assigned",
        AssignCase(
            queues(cq((flavor_quotas("default", ("cpu", "4"), (GPU, "4")),))),
            wl({"cpu": "1", GPU: "0"}),
            Mode.FIT,
            {"cpu": "default", GPU: "default"},
        ),
    ),
    (
        "num pods fit",
        AssignCase(
            queues(cq((flavor_quotas("default", ("pods", "3"), ("cpu", "10")),))),
            pods_of(3, {"cpu": "1"}),
            Mode.FIT,
            {"cpu": "default", "pods": "default"},
        ),
    ),
    (
        "num pods don't fit",
        AssignCase(
            queues(cq((flavor_quotas("default", ("pods", "2"), ("cpu", "10")),))),
            pods_of(3, {"cpu": "1"}),
            Mode.NO_FIT,
        ),
    ),
    (
        "with reclaimable pods; reclaimablePods on",
        AssignCase(
            queues(cq((flavor_quotas("default", ("pods", "3"), ("cpu", "10")),))),
            incoming(CQ, PodSet("main", 5, {"cpu": "1"}), reclaimable={"main": 2}),
            Mode.FIT,
            {"cpu": "default", "pods": "default"},
            quota={("default", "pods"): "3", ("default", "cpu"): "3"},
        ),
    ),
    (
        # the ReclaimablePods gate off: gpufleet keeps it on, so the workload is given no reclaimable pods
        "with reclaimable pods; reclaimablePods off",
        AssignCase(
            queues(cq((flavor_quotas("default", ("pods", "5"), ("cpu", "10")),))),
            pods_of(5, {"cpu": "1"}),
            Mode.FIT,
            {"cpu": "default", "pods": "default"},
        ),
    ),
    *(
        (
            name,
            AssignCase(
                queues(cq(one_two(("10",), ("10",)), fungibility=fungible(STOP, STOP))),
                wl({"cpu": "9"}),
                Mode.PREEMPT,
                {"cpu": "one", "pods": "one"},
                usage=USED_TWO_OF_ONE,
            ),
        )
        for name in (
            "preempt before try next flavor",
            "preempt before try next flavor; using WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
        )
    ),
    (
        "preempt try next flavor",
        AssignCase(
            queues(cq(one_two(("10",), ("10",)))),
            wl({"cpu": "9"}),
            Mode.FIT,
            {"cpu": "two", "pods": "two"},
            usage=USED_TWO_OF_ONE,
        ),
    ),
    (
        "borrow try next flavor, found the first flavor",
        AssignCase(
            queues(
                cq(one_two(("10", "1"), ("1",)), cohort=COHORT, fungibility=fungible(NEXT, NEXT)),
                SECONDARY_ONE,
            ),
            wl({"cpu": "9"}),
            Mode.FIT,
            {"cpu": "one", "pods": "one"},
            borrows=True,
            usage=USED_TWO_OF_ONE,
        ),
    ),
    (
        "borrow try next flavor, found the second flavor",
        AssignCase(
            queues(
                cq(one_two(("10", "1"), ("10",)), cohort=COHORT, fungibility=fungible(NEXT, NEXT)),
                SECONDARY_ONE,
            ),
            wl({"cpu": "9"}),
            Mode.FIT,
            {"cpu": "two", "pods": "two"},
            usage=USED_TWO_OF_ONE,
        ),
    ),
    (
        "borrow before try next flavor",
        AssignCase(
            queues(cq(one_two(("10", "1"), ("10",)), cohort=COHORT), SECONDARY_ONE),
            wl({"cpu": "9"}),
            Mode.FIT,
            {"cpu": "one", "pods": "one"},
            borrows=True,
            usage=USED_TWO_OF_ONE,
        ),
    ),
    *(
        (
            name,
            AssignCase(
                queues(
                    borrowing_cq(
                        flavor_quotas("one", ("cpu", *one)),
                        flavor_quotas("two", ("cpu", "12")),
                        fungibility=fungible(STOP, STOP),
                    ),
                    secondary_cpu(("one", "12")),
                ),
                wl({"cpu": "12"}),
                Mode.PREEMPT,
                {"cpu": "one"},
                usage={SECONDARY: quota_usage({("one", "cpu"): "10"})},
                simulation={("one", "cpu"): (Possibility.PREEMPT, 1)},
            ),
        )
        for name, one in (
            (
                "when borrowing while preemption is needed for flavor one; WhenCanBorrow=MayStopSearch",
                ("0", "12"),
            ),
            (
                "when borrowing while preemption is needed for flavor one; "
                "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
                ("0", "12"),
            ),
            (
                "when borrowing while preemption is needed for flavor one, no borrowingLimit; "
                "WhenCanBorrow=MayStopSearch",
                ("0",),
            ),
            (
                "when borrowing while preemption is needed for flavor one, no borrowingLimit; "
                "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
                ("0",),
            ),
        )
    ),
    *(
        (
            name,
            AssignCase(
                queues(
                    borrowing_cq(
                        flavor_quotas("one", ("cpu", "0", "12")),
                        flavor_quotas("two", ("cpu", "12")),
                        fungibility=fungible(NEXT, STOP),
                    ),
                    secondary_cpu(("one", "12")),
                ),
                wl({"cpu": "12"}),
                Mode.FIT,
                {"cpu": "two"},
            ),
        )
        for name in (
            "when borrowing while preemption is needed for flavor one; WhenCanBorrow=TryNextFlavor",
            "when borrowing while preemption is needed for flavor one; "
            "WhenCanBorrow=TryNextFlavor,WhenCanPreempt=MayStopSearch",
        )
    ),
    (
        "when borrowing while preemption is needed, but borrowingLimit exceeds "
        "the quota available in the cohort",
        AssignCase(
            queues(borrowing_cq(flavor_quotas("one", ("cpu", "0", "12"))), secondary_cpu(("one", "11"))),
            wl({"cpu": "12"}),
            Mode.NO_FIT,
            usage={SECONDARY: quota_usage({("one", "cpu"): "10"})},
        ),
    ),
    (
        "lend try next flavor, found the second flavor",
        AssignCase(
            queues(
                cq(
                    one_two(("10", "", "1"), ("10", "", "0")), cohort=COHORT, fungibility=fungible(NEXT, NEXT)
                ),
                SECONDARY_ONE,
            ),
            wl({"cpu": "9"}),
            Mode.FIT,
            {"cpu": "two", "pods": "two"},
            usage=USED_TWO_OF_ONE,
        ),
    ),
    (
        "lend try next flavor, found the first flavor",
        AssignCase(
            queues(
                cq(one_two(("10", "", "1"), ("1", "", "0")), cohort=COHORT, fungibility=fungible(NEXT, NEXT)),
                SECONDARY_ONE,
            ),
            wl({"cpu": "9"}),
            Mode.FIT,
            {"cpu": "one", "pods": "one"},
            borrows=True,
            usage=USED_TWO_OF_ONE,
        ),
    ),
    *(
        (
            name,
            AssignCase(
                queues(
                    borrowing_cq(
                        flavor_quotas("one", ("cpu", "0", "2")),
                        flavor_quotas("two", ("cpu", "0", "2")),
                        fungibility=fungible(STOP, STOP),
                    ),
                    secondary_cpu(("one", "2"), ("two", "2")),
                ),
                wl({"cpu": "2"}),
                Mode.FIT,
                {"cpu": "two"},
                borrows=True,
                usage={SECONDARY: quota_usage({("one", "cpu"): "2"})},
                simulation={("one", "cpu"): (Possibility.NO_CANDIDATES, 0)},
            ),
        )
        for name in (
            "cannot preempt in cohort (oracle returns None) for the first flavor, "
            "tries the second flavor (which fits)",
            "cannot preempt in cohort (oracle returns None) for the first flavor, "
            "tries the second flavor (which fits); "
            "using deprecated WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
        )
    ),
    (
        "quota exhausted, but can preempt in cohort and ClusterQueue",
        AssignCase(
            queues(
                cq((flavor_quotas("one", ("pods", "10"), ("cpu", "10", "", "0")),), cohort=COHORT),
                cq((flavor_quotas("one", ("pods", "0"), ("cpu", "0")),), cohort=COHORT, name=SECONDARY),
            ),
            wl({"cpu": "9"}),
            Mode.PREEMPT,
            {"cpu": "one", "pods": "one"},
            usage=USED_TWO_OF_ONE,
            simulation={("one", "cpu"): (Possibility.PREEMPT, 1)},
        ),
    ),
    *(
        (
            name,
            AssignCase(
                queues(fair_sharing_cq(ANY), secondary_cpu(("one", "12"))),
                wl({"cpu": "12"}),
                Mode.PREEMPT,
                {"cpu": "one"},
                usage={SECONDARY: quota_usage({("one", "cpu"): "10"})},
                simulation={("one", "cpu"): (Possibility.PREEMPT, 1)},
                fair_sharing=True,
            ),
        )
        for name in (
            "when borrowing while preemption is needed for flavor one, fair "
            "sharing enabled, reclaimWithinCohort=Any",
            "when borrowing while preemption is needed for flavor one, fair "
            "sharing enabled, reclaimWithinCohort=Any; "
            "using deprecated WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
        )
    ),
    *(
        (
            name,
            AssignCase(
                queues(fair_sharing_cq(NEVER), secondary_cpu(("one", "12"))),
                wl({"cpu": "12"}),
                Mode.FIT,
                {"cpu": "two"},
                usage={SECONDARY: quota_usage({("one", "cpu"): "10"})},
                simulation={("one", "cpu"): (Possibility.NO_CANDIDATES, 0)},
                fair_sharing=True,
            ),
        )
        for name in (
            "when borrowing while preemption is needed for flavor one, fair "
            "sharing enabled, reclaimWithinCohort=Never",
            "when borrowing while preemption is needed for flavor one, fair "
            "sharing enabled, reclaimWithinCohort=Never; "
            "using deprecated WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
        )
    ),
    ("workload slice preemption fits in the original workload resource flavor", SLICES),
    ("workload slice preemption does not fit in the original workload resource flavor", SLICES),
    ("multiple TAS flavors assigned to different resources in the same PodSet leads to NoFit", TAS_SPLIT),
    (
        "multi-podset, one fits and another fails, fitting podset attempts skipped in resolveNoFitReason",
        AssignCase(
            queues(cq((flavor_quotas("one", ("cpu", "2")), flavor_quotas("two", ("cpu", "2"))))),
            incoming(
                CQ,
                PodSet("fitting-podset", 1, {"cpu": "1"}, pod=pod({"type": "one"})),
                PodSet("blocking-podset", 1, {"cpu": "5"}),
            ),
            Mode.NO_FIT,
            pod_sets={"fitting-podset": {"cpu": "one"}, "blocking-podset": {}},
            quota={("one", "cpu"): "1"},
            reasons={
                "blocking-podset": (
                    "insufficient quota for cpu in flavor one, previously considered podsets requests (1) + "
                    "current podset request (5) > maximum capacity (2)",
                    "insufficient quota for cpu in flavor two, previously considered podsets requests (0) + "
                    "current podset request (5) > maximum capacity (2)",
                )
            },
        ),
    ),
]


@pytest.mark.parametrize("case", cases("TestAssignFlavors", TABLE, 1))
def test_assign_flavors(case: AssignCase) -> None:
    got = assigned(
        case.queues, case.usage, case.workload, RESOURCE_FLAVORS, case.simulation, case.fair_sharing
    )
    assert got.mode is case.mode
    assert got.flavors == (case.pod_sets or {"main": case.flavors})
    if case.mode is Mode.FIT:
        assert got.borrows == case.borrows
    if case.pod_sets or case.quota:
        assert got.usage == quota_usage(case.quota)
    if case.pod_sets:
        assert {ps.name: tuple(sorted(ps.reasons)) for ps in got.pod_sets if ps.reasons} == case.reasons
