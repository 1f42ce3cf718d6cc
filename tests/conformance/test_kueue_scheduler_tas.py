"""Kueue's scheduler with Topology-Aware Scheduling, ``kubernetes-sigs/kueue:
pkg/scheduler/scheduler_tas_test.go`` (``TestScheduleForTAS``, at commit ``ff69552e79ad``: 67 cases), case
by case: each pytest id is ``TestScheduleForTAS/<upstream case>``, held against one cycle of
``gpufleet.scheduling.kueue.admission.schedule`` with the case's Topologies and nodes.
``TestScheduleForTASPreemption``, ``TestScheduleForTASCohorts``,
``TestScheduleForTASWhenWorkloadModifiedConcurrently`` and ``TestSecondPassSkipsWaitForPodsReadyBlock`` are
not ported.

Asserted: for a workload admitted in the cycle, each pod set's flavor of each resource and its TAS
assignment (pods per hostname), and the admission checks its reservation gets (which keep it from being
``Admitted`` until they are Ready: ``scheduling.kueue.admission_checks``); for one left pending, its
``QuotaReserved`` message (upstream's ``Pending`` event, with ``couldn't assign flavors to pod set <name>:
...``). Events other than these, ``wantLeft`` and ``wantInadmissibleLeft`` are the cycle's bookkeeping,
held by ``test_kueue_schedule.py``.

What a node has free is what gpufleet's cluster state hands the search: allocatable less the requests of
the pods bound to it, non-TAS (``pods``) or admitted by TAS (``bar-admitted``), one ``pods`` each; those
admitted workloads' quota is not modelled here (every case's ClusterQueue has room for them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import pytest
from builders import Skip, cases
from kueue_builders import cluster_queue, flavor_quotas

from gpufleet.model.kueue import ClusterQueue, ResourceFlavor, Topology
from gpufleet.model.node import Taint, Toleration
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.model.resources import parse_resource_list
from gpufleet.scheduling.kueue.admission import schedule
from gpufleet.scheduling.kueue.admission_checks import (
    ADMITTED,
    UNSATISFIED_CHECKS,
    CheckState,
    admitted_condition,
    checks_for_workload,
)
from gpufleet.scheduling.kueue.topology import NodeRoom, request_for
from gpufleet.scheduling.kueue.workload import PodSetResources, Workload

BLOCK = "cloud.com/topology-block"
RACK = "cloud.provider.com/rack"
HOST = "kubernetes.io/hostname"
TOPOLOGIES = {
    "tas-single-level": Topology("tas-single-level", (HOST,)),
    "tas-two-level": Topology("tas-two-level", (RACK, HOST)),
    "tas-three-level": Topology("tas-three-level", (BLOCK, RACK, HOST)),
}
TAS_NODE = {"tas-node": "true"}


def _units(quantities: Mapping[str, str]) -> dict[str, int]:
    parsed, problems = parse_resource_list(dict(quantities), "x")
    assert not problems, problems
    return parsed


@dataclass(frozen=True)
class N:
    """``testingnode.MakeNode(name).Label("tas-node", "true").Label(hostname, name)...``; ``used``: the
    requests of the pods bound to it (one ``pods`` each)."""

    name: str
    allocatable: Mapping[str, str]
    labels: Mapping[str, str] = field(default_factory=dict)
    used: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()

    def room(self) -> NodeRoom:
        free = _units(self.allocatable)
        for r, v in _units(self.used).items():
            free[r] = free.get(r, 0) - v
        return NodeRoom({**TAS_NODE, HOST: self.name, **self.labels}, free, self.taints)


@dataclass(frozen=True)
class P:
    """``MakePodSet(name, count).Request(...)`` with ``RequiredTopologyRequest(required)``,
    ``PreferredTopologyRequest(preferred)`` or ``UnconstrainedTopologyRequest()``; ``tas=False``: no
    topology request at all; ``min_count``: ``SetMinimumCount``; ``affinity``: a required node affinity
    term ``key In (value)``."""

    name: str
    count: int
    requests: Mapping[str, str]
    required: str | None = None
    preferred: str | None = None
    tas: bool = True
    min_count: int | None = None
    affinity: tuple[str, str] | None = None


#: a workload's pod sets' wanted (flavor of each resource, pods per hostname), or its message
Want = Mapping[str, tuple[Mapping[str, str], Mapping[str, int]]] | str


@dataclass(frozen=True)
class Case:
    nodes: tuple[N, ...]
    flavors: tuple[ResourceFlavor, ...]
    cq: ClusterQueue
    pod_sets: tuple[P, ...]
    want: Want
    #: the admission checks the reservation gets (``AdmissionChecksForWorkload``), which hold back its
    #: ``Admitted`` condition (upstream's events: ``QuotaReserved`` without ``Admitted``)
    want_checks: tuple[str, ...] = ()


DEFAULT_SINGLE_NODE = (N("x1", {"cpu": "1", "memory": "1Gi", "pods": "10"}),)
TAS_DEFAULT = ResourceFlavor("tas-default", dict(TAS_NODE), topology="tas-single-level")
TAS_TWO_LEVEL = ResourceFlavor("tas-default", dict(TAS_NODE), topology="tas-two-level")
DEFAULT = ResourceFlavor("default")
DEFAULT_CQ = cluster_queue("tas-main", (flavor_quotas("tas-default", ("cpu", "50"), ("memory", "50Gi")),))
CPU_ONLY_CQ = cluster_queue("tas-main", (flavor_quotas("tas-default", ("cpu", "50")),))
TAS_THEN_DEFAULT_CQ = cluster_queue(
    "tas-main", (flavor_quotas("tas-default", ("cpu", "50")), flavor_quotas("default", ("cpu", "50")))
)
ZERO_CAPACITY_NODES = (
    N("x1", {"cpu": "0", "pods": "10"}, {RACK: "r1"}),
    N("x2", {"cpu": "1", "pods": "10"}, {RACK: "r1"}),
    N("x3", {"cpu": "1", "pods": "10"}, {RACK: "r1"}),
)
TWO_HOSTS_IN_R1 = (
    N("x1", {"cpu": "8", "pods": "10"}, {RACK: "r1"}),
    N("y1", {"cpu": "8", "pods": "10"}, {RACK: "r1"}),
)

REPLACEMENT = (
    "failed-node replacement (TASFailedNodeReplacement, unhealthyNodes, second pass) is not modelled"
)
PROVISIONING = (
    "delayed topology requests are not modelled: with a ProvisioningRequest admission check on a TAS flavor, "
    "upstream reserves quota with DelayedTopologyRequest Pending and assigns the topology in a second pass "
    "once the check is Ready (on the provisioned nodes); gpufleet runs ProvisioningRequest checks "
    "(control.kueue_queues) but assigns a TAS pod set's topology at quota reservation, on the nodes there "
    "then"
)
SLICES = (
    "pod set slices (podset-slice-required-topology / podset-slice-size) are not modelled by gpufleet's TAS"
)
MULTI_LAYER = "multi-layer pod set slices (TASMultiLayerTopology) are not modelled"
TRANSFORMATIONS = "resource transformations (Configuration.resources.transformations) are not modelled"
DELETED_NODE = "an admitted workload's TopologyAssignment on a deleted node is the cache's bookkeeping"
SHARED = (
    "two TAS flavors over the same nodes (TASHandleOverlappingFlavors) share per-flavor TAS usage; gpufleet "
    "has one cluster-wide free map"
)
LIBRARY = "SchedulerLibraryIntegration (the scheduler framework's filters in TAS) is not modelled"


TABLE: list[tuple[str, Case] | tuple[str, Skip]] = [
    (
        "initial scheduling; one-byte memory request fits on a 2Gi node with vectorized requests disabled",
        Case(
            (N("x1", {"memory": "2Gi", "pods": "10"}),),
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"memory": "1"}, required=HOST),),
            {"one": ({"memory": "tas-default"}, {"x1": 1})},
        ),
    ),
    (
        "initial scheduling; TAS uses podspec memory for placement",
        Case(
            (
                N("x1", {"cpu": "4", "memory": "2Gi", "pods": "10"}),
                N("x2", {"cpu": "4", "memory": "2Gi", "pods": "10"}),
            ),
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 2, {"cpu": "1", "memory": "1536Mi"}, preferred=HOST),),
            {"one": ({"cpu": "tas-default", "memory": "tas-default"}, {"x1": 1, "x2": 1})},
        ),
    ),
    (
        "workload with a PodSet of size zero",
        Case(
            (N("x1", {"cpu": "3", "pods": "10"}, {RACK: "r1"}),),
            (TAS_TWO_LEVEL,),
            DEFAULT_CQ,
            (P("launcher", 1, {"cpu": "1"}, preferred=HOST), P("worker", 0, {"cpu": "1"}, preferred=HOST)),
            {"launcher": ({"cpu": "tas-default"}, {"x1": 1}), "worker": ({"cpu": "tas-default"}, {})},
        ),
    ),
    ("workload in CQ with ProvisioningRequest; second pass; baseline scenario", Skip(PROVISIONING)),
    (
        "workload in CQ with ProvisioningRequest; second pass; multi-resource workload fully consumes quota",
        Skip(PROVISIONING),
    ),
    (  # the first flavor fits and has no check: TAS assigned, admitted at once
        "workload in CQ with two TAS flavors, only the second is using Provisioning Admission Check",
        Case(
            (N("x1", {"cpu": "1", "pods": "10"}, {"tas-group": "reservation"}),),
            (
                ResourceFlavor("tas-reservation", {"tas-group": "reservation"}, topology="tas-single-level"),
                ResourceFlavor(
                    "tas-provisioning", {"tas-group": "provisioning"}, topology="tas-single-level"
                ),
            ),
            replace(
                cluster_queue(
                    "tas-main",
                    (
                        flavor_quotas("tas-reservation", ("cpu", "1")),
                        flavor_quotas("tas-provisioning", ("cpu", "1")),
                    ),
                ),
                admission_checks=(("prov-check", ("tas-provisioning",)),),
            ),
            (P("one", 1, {"cpu": "1"}, required=HOST),),
            {"one": ({"cpu": "tas-reservation"}, {"x1": 1})},
        ),
    ),
    (
        "second pass replacement must not take a domain claimed by another workload in the same cycle",
        Skip(REPLACEMENT),
    ),
    ("workload with unhealthyNode annotation; second pass; baseline scenario", Skip(REPLACEMENT)),
    (
        "workload with unhealthyNode annotation; second pass; preferred; fit in different rack",
        Skip(REPLACEMENT),
    ),
    ("workload with unhealthyNode annotation; second pass; preferred; no fit", Skip(REPLACEMENT)),
    ("workload with unhealthyNode annotation; second pass; podspec constraints apply", Skip(REPLACEMENT)),
    ("workload with unhealthyNode annotation; second pass; preferred; no fit; FailFast", Skip(REPLACEMENT)),
    (
        "workload with unhealthyNode annotation; second pass; preferred; no fit; FailFast (not found "
        "error on patch)",
        Skip(REPLACEMENT),
    ),
    (
        "workload with unhealthyNode annotation; second pass; preferred; no fit; FailFast (test error on "
        "patch)",
        Skip(REPLACEMENT),
    ),
    ("workload with unhealthyNode annotation; second pass; required rack; fit", Skip(REPLACEMENT)),
    (
        "workload with unhealthyNode annotation; second pass; required rack for a single node; fit",
        Skip(REPLACEMENT),
    ),
    ("workload with unhealthyNode annotation; second pass; required rack; no fit", Skip(REPLACEMENT)),
    ("workload with unhealthyNode annotation; second pass; two podsets", Skip(REPLACEMENT)),
    ("workload with unhealthyNode; second pass; slices; baseline", Skip(REPLACEMENT)),
    (
        "workload with unhealthyNode; second pass; slices; unhealthy node hosts incomplete slice",
        Skip(REPLACEMENT),
    ),
    (
        "workload with unhealthyNode; second pass; slices; unhealthy node hosts whole slices",
        Skip(REPLACEMENT),
    ),
    (
        "workload with unhealthyNode; second pass; slices; unhealthy node hosts whole slice and "
        "incomplete slice",
        Skip(REPLACEMENT),
    ),
    (
        "workload with unhealthyNode; second pass; slices; unhealthy node hosts the whole workload",
        Skip(REPLACEMENT),
    ),
    ("workload with unhealthyNode; second pass; slices; finds correct slice domain", Skip(REPLACEMENT)),
    ("large workload in CQ with ProvisioningRequest; second pass", Skip(PROVISIONING)),
    ("workload in CQ with ProvisioningRequest when two TAS flavors; second pass", Skip(PROVISIONING)),
    (
        "workload in CQ with two TAS flavors - one with ProvisioningRequest, one regular; second pass",
        Skip(PROVISIONING),
    ),
    (
        "workload in CQ with ProvisioningRequest gets QuotaReserved only; implicit defaulting",
        Skip(PROVISIONING),
    ),
    (
        "workload in CQ with ProvisioningRequest when two TAS flavors; second pass; implicit defaulting",
        Skip(PROVISIONING),
    ),
    ("workload in CQ with ProvisioningRequest gets QuotaReserved only", Skip(PROVISIONING)),
    (
        "workload with a custom AdmissionCheck gets TAS assigned",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT,),
            replace(CPU_ONLY_CQ, admission_checks=(("custom-check", ()),)),
            (P("one", 1, {"cpu": "1"}, required=HOST),),
            {"one": ({"cpu": "tas-default"}, {"x1": 1})},
            want_checks=("custom-check",),
        ),
    ),
    (
        "workload which does not specify TAS annotation uses the only TAS flavor",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT, DEFAULT),
            CPU_ONLY_CQ,
            (P("one", 1, {"cpu": "1"}, tas=False),),
            {"one": ({"cpu": "tas-default"}, {"x1": 1})},
        ),
    ),
    (
        "workload requiring TAS skips the non-TAS flavor",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT, DEFAULT),
            cluster_queue(
                "tas-main",
                (flavor_quotas("default", ("cpu", "50")), flavor_quotas("tas-default", ("cpu", "50"))),
            ),
            (P("one", 1, {"cpu": "1"}, required=HOST),),
            {"one": ({"cpu": "tas-default"}, {"x1": 1})},
        ),
    ),
    (
        # upstream: Flavors considered: one: tas-default(NoFit;Flavor "tas-default" supports only
        # TopologyAwareScheduling)
        "workload which does not need TAS skips the TAS flavor",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT, DEFAULT),
            TAS_THEN_DEFAULT_CQ,
            (P("one", 1, {"cpu": "1"}, tas=False),),
            {"one": ({"cpu": "default"}, {})},
        ),
    ),
    (
        "workload with mixed PodSets (requiring TAS and not)",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT, DEFAULT),
            TAS_THEN_DEFAULT_CQ,
            (
                P("launcher", 1, {"cpu": "500m"}, tas=False),
                P("worker", 1, {"cpu": "500m"}, required=HOST),
            ),
            {"launcher": ({"cpu": "default"}, {}), "worker": ({"cpu": "tas-default"}, {"x1": 1})},
        ),
    ),
    (
        "workload required TAS gets scheduled",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "1"}, required=HOST),),
            {"one": ({"cpu": "tas-default"}, {"x1": 1})},
        ),
    ),
    (
        "workload requests topology level which is not present in topology",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "1"}, required="cloud.com/non-existing"),),
            'couldn\'t assign flavors to pod set one: Flavor "tas-default" does not contain the '
            "requested level",
        ),
    ),
    (
        "workload requests topology level which is only present in second flavor",
        Case(
            (N("x1", {"cpu": "1", "pods": "10"}, {"cloud.com/custom-level": "x1"}),),
            (
                TAS_DEFAULT,
                ResourceFlavor("tas-custom-flavor", dict(TAS_NODE), topology="tas-custom-topology"),
            ),
            cluster_queue(
                "tas-main",
                (
                    flavor_quotas("tas-default", ("cpu", "50")),
                    flavor_quotas("tas-custom-flavor", ("cpu", "50")),
                ),
            ),
            (P("one", 1, {"cpu": "1"}, required="cloud.com/custom-level"),),
            {"one": ({"cpu": "tas-custom-flavor"}, {"x1": 1})},
        ),
    ),
    (
        "workload does not get scheduled as it does not fit within the node capacity",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 2, {"cpu": "1"}, required=HOST),),
            'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 1 '
            "out of 2 pod(s)",
        ),
    ),
    (
        # bar-admitted's pod (1 CPU) is on x1.
        "workload does not get scheduled as the node capacity is already used by another TAS workload",
        Case(
            (N("x1", {"cpu": "1", "memory": "1Gi", "pods": "10"}, used={"cpu": "1", "pods": "1"}),),
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "1"}, required=HOST),),
            "couldn't assign flavors to pod set one: topology \"tas-single-level\" doesn't allow to fit "
            "any of 1 "
            'pod(s). Total nodes: 1; excluded: resource "cpu": 1',
        ),
    ),
    (
        "workload does not get scheduled as the node capacity is already used by a non-TAS pod",
        Case(
            (N("x1", {"cpu": "1", "memory": "1Gi", "pods": "10"}, used={"cpu": "600m", "pods": "1"}),),
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "1"}, required=HOST),),
            "couldn't assign flavors to pod set one: topology \"tas-single-level\" doesn't allow to fit "
            "any of 1 "
            'pod(s). Total nodes: 1; excluded: resource "cpu": 1',
        ),
    ),
    (
        "workload does not get scheduled as node capacity is completely used by non-TAS pod",
        Case(
            (
                N(
                    "x1",
                    {"cpu": "1", "memory": "1Gi", "pods": "1"},
                    used={"cpu": "1", "memory": "1Gi", "pods": "1"},
                ),
            ),
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "1"}, required=HOST),),
            "couldn't assign flavors to pod set one: topology \"tas-single-level\" doesn't allow to fit "
            "any of 1 "
            'pod(s). Total nodes: 1; excluded: resource "cpu": 1',
        ),
    ),
    (
        # bar-admitted's pod (500m, 500Mi) is on x1.
        "workload gets admitted next to already admitted workload, multiple resources used",
        Case(
            (
                N(
                    "x1",
                    {"cpu": "1", "memory": "1Gi", "pods": "10"},
                    used={"cpu": "500m", "memory": "500Mi", "pods": "1"},
                ),
            ),
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "500m", "memory": "500Mi"}, required=HOST),),
            {"one": ({"cpu": "tas-default", "memory": "tas-default"}, {"x1": 1})},
        ),
    ),
    (
        "workload with multiple PodSets requesting the same TAS flavor; multiple levels",
        Case(
            (
                N("x1", {"cpu": "3", "pods": "10"}, {RACK: "r1"}),
                N("y1", {"cpu": "3", "pods": "10"}, {RACK: "r1"}),
            ),
            (TAS_TWO_LEVEL,),
            CPU_ONLY_CQ,
            (P("launcher", 1, {"cpu": "1"}, preferred=HOST), P("worker", 1, {"cpu": "7"}, preferred=HOST)),
            "couldn't assign flavors to pod set worker: topology \"tas-two-level\" doesn't allow to fit "
            "any of 1 "
            'pod(s). Total nodes: 2; excluded: resource "cpu": 2',
        ),
    ),
    (
        "scheduling workload with multiple PodSets requesting TAS flavor and will succeed",
        Case(
            TWO_HOSTS_IN_R1,
            (TAS_TWO_LEVEL,),
            cluster_queue("tas-main", (flavor_quotas("tas-default", ("cpu", "16")),)),
            (P("launcher", 1, {"cpu": "1"}, required=HOST), P("worker", 15, {"cpu": "1"}, preferred=HOST)),
            {
                "launcher": ({"cpu": "tas-default"}, {"x1": 1}),
                "worker": ({"cpu": "tas-default"}, {"x1": 7, "y1": 8}),
            },
        ),
    ),
    (
        "scheduling workload with multiple PodSets requesting higher level topology",
        Case(
            TWO_HOSTS_IN_R1,
            (TAS_TWO_LEVEL,),
            cluster_queue("tas-main", (flavor_quotas("tas-default", ("cpu", "16")),)),
            (P("launcher", 1, {"cpu": "1"}, required=RACK), P("worker", 15, {"cpu": "1"}, required=RACK)),
            {
                "launcher": ({"cpu": "tas-default"}, {"x1": 1}),
                "worker": ({"cpu": "tas-default"}, {"x1": 7, "y1": 8}),
            },
        ),
    ),
    ("scheduling workload when the node for another admitted workload is deleted", Skip(DELETED_NODE)),
    (
        "scheduling workload on a tainted node when the toleration is on ResourceFlavor",
        Case(
            (N("x1", {"cpu": "1", "pods": "10"}, taints=(Taint("example.com/gpu", "present"),)),),
            (
                ResourceFlavor(
                    "tas-default",
                    dict(TAS_NODE),
                    tolerations=(Toleration("example.com/gpu", "Exists"),),
                    topology="tas-single-level",
                ),
            ),
            CPU_ONLY_CQ,
            (P("one", 1, {"cpu": "1"}, preferred=HOST),),
            {"one": ({"cpu": "tas-default"}, {"x1": 1})},
        ),
    ),
    (
        "two ResourceFlavors share nodes: pending workload lands on the fallback flavor when the primary "
        "flavor is "
        "full",
        Skip(SHARED),
    ),
    ("multi-PodSet workload across sibling flavors must not self-overlap on shared node", Skip(SHARED)),
    (
        "TAS workload gets scheduled as trimmed by partial admission",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 5, {"cpu": "1"}, required=HOST, min_count=1),),
            {"one": ({"cpu": "tas-default"}, {"x1": 1})},
        ),
    ),
    (
        # A running non-TAS pod (300m) and bar-admitted's 2 pods (150m each) are on x1 (3 pods at most).
        "workload does not get scheduled as the node capacity (.status.allocatable['pods']) is already "
        "used by "
        "non-TAS and TAS workloads",
        Case(
            (N("x1", {"cpu": "1000m", "pods": "3"}, used={"cpu": "600m", "pods": "3"}),),
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "300m"}, required=HOST),),
            "couldn't assign flavors to pod set one: topology \"tas-single-level\" doesn't allow to fit "
            "any of 1 "
            'pod(s). Total nodes: 1; excluded: resource "pods": 1',
        ),
    ),
    (
        "workload with zero value request gets scheduled",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "0", "memory": "10Mi"}, tas=False),),
            {"one": ({"cpu": "tas-default", "memory": "tas-default"}, {"x1": 1})},
        ),
    ),
    (
        "workload with unhealthyNode annotation; second pass; preferred; no fit when using slices; FailFast",
        Skip(REPLACEMENT),
    ),
    (
        # upstream ignores the message (TopologyPlacementFailed); gpufleet's exclusion stats name the affinity
        "does not admit workload when node does not match required affinity",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "1"}, preferred=HOST, affinity=("unused-key", "value")),),
            "couldn't assign flavors to pod set one: topology \"tas-single-level\" doesn't allow to fit "
            "any of 1 pod(s). Total nodes: 1; excluded: affinity: 1",
        ),
    ),
    (
        "admits workload when node matches required affinity",
        Case(
            (N("x1", {"cpu": "1", "memory": "1Gi", "pods": "10"}, {"expected-label": "expected-value"}),),
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "1"}, preferred=HOST, affinity=("expected-label", "expected-value")),),
            {"one": ({"cpu": "tas-default"}, {"x1": 1})},
        ),
    ),
    (
        "admits workload when nodes are partially empty; unconstrained",
        Case(
            ZERO_CAPACITY_NODES,
            (TAS_TWO_LEVEL,),
            DEFAULT_CQ,
            (P("one", 2, {"cpu": "1"}),),
            {"one": ({"cpu": "tas-default"}, {"x2": 1, "x3": 1})},
        ),
    ),
    (
        "admits workload when nodes are partially empty; preferred",
        Case(
            ZERO_CAPACITY_NODES,
            (TAS_TWO_LEVEL,),
            DEFAULT_CQ,
            (P("one", 2, {"cpu": "1"}, preferred=RACK),),
            {"one": ({"cpu": "tas-default"}, {"x2": 1, "x3": 1})},
        ),
    ),
    (
        "admits workload when nodes are partially empty; required",
        Case(
            ZERO_CAPACITY_NODES,
            (TAS_TWO_LEVEL,),
            DEFAULT_CQ,
            (P("one", 2, {"cpu": "1"}, required=RACK),),
            {"one": ({"cpu": "tas-default"}, {"x2": 1, "x3": 1})},
        ),
    ),
    (
        "admits workload with zero-quantity request for resource not in ClusterQueue with TAS",
        Case(
            DEFAULT_SINGLE_NODE,
            (TAS_DEFAULT,),
            DEFAULT_CQ,
            (P("one", 1, {"cpu": "1", "example.com/gpu": "0"}, preferred=HOST),),
            {"one": ({"cpu": "tas-default"}, {"x1": 1})},
        ),
    ),
    ("workload with Resource Transformation (Retain CPU → cpu_credits)", Skip(TRANSFORMATIONS)),
    (
        "workload with Resource Transformation (Retain CPU → cpu_credits, not enough credits)",
        Skip(TRANSFORMATIONS),
    ),
    ("multi-layer topology: block required with rack and host slices; workload fits", Skip(MULTI_LAYER)),
    ("multi-layer topology: host slice rounding makes rack slice impossible; NoFit", Skip(MULTI_LAYER)),
    ("SchedulerLibraryIntegration enabled: generic TAS workload admitted on healthy node", Skip(LIBRARY)),
    (
        "SchedulerLibraryIntegration enabled: non-hostname lowest-level TAS excludes unschedulable node",
        Skip(LIBRARY),
    ),
    (
        "SchedulerLibraryIntegration enabled: hostname lowest-level TAS filters unschedulable node via WAS",
        Skip(LIBRARY),
    ),
]


def _workload(case: Case) -> Workload:
    pod_sets = []
    for p in case.pod_sets:
        each = _units(p.requests)
        total = {r: v * p.count for r, v in each.items()}
        terms = None
        if p.affinity is not None:
            terms = (SelectorTerm((Requirement(p.affinity[0], "In", (p.affinity[1],)),)),)
        pod = Pod(p.name, requests=each, required_terms=terms)
        topology = request_for(p.name, p.count, each, pod, p.required, p.preferred) if p.tas else None
        pod_sets.append(PodSetResources(p.name, p.count, total, pod, topology, min_count=p.min_count))
    return Workload("Job/default/foo", "tas-main", 0, 0.0, 0, tuple(pod_sets))


@pytest.mark.parametrize("case", cases("TestScheduleForTAS", TABLE, 1))
def test_schedule_for_tas(case: Case) -> None:
    workload = _workload(case)
    topologies = {
        **TOPOLOGIES,
        "tas-custom-topology": Topology("tas-custom-topology", ("cloud.com/custom-level",)),
    }
    result = schedule(
        [workload],
        [],
        {"tas-main": case.cq},
        {f.name: f for f in case.flavors},
        set(),
        topologies=topologies,
        nodes={n.name: n.room() for n in case.nodes},
    )
    if isinstance(case.want, str):
        assert result.admitted == []
        assert result.messages[workload.key] == case.want
        return
    assert [w.key for w, _ in result.admitted] == [workload.key]
    assignment = result.admitted[0][1]
    placed = result.placements.get(workload.key, {})
    got = {}
    for ps in workload.pod_sets:
        hosts: dict[str, int] = {}
        for node in placed.get(ps.name, []):
            hosts[node] = hosts.get(node, 0) + 1
        got[ps.name] = (assignment.flavors[ps.name], hosts)
    assert got == {name: (dict(f), dict(h)) for name, (f, h) in case.want.items()}
    assigned = {f for flavors in assignment.flavors.values() for f in flavors.values()}
    checks = checks_for_workload(case.cq, assigned)
    assert checks == case.want_checks
    admitted = admitted_condition(True, [CheckState(name) for name in checks])
    assert admitted == (UNSATISFIED_CHECKS if checks else ADMITTED)
