"""Kueue's Topology-Aware Scheduling search, ``kubernetes-sigs/kueue: pkg/cache/scheduler/tas_cache_test.go``
(``TestFindTopologyAssignments``, at commit ``ff69552e79ad``: 140 cases), case by case: each pytest id is
``TestFindTopologyAssignments/<upstream case>``, held against ``gpufleet.scheduling.kueue.topology.place``.

Each case gives nodes (labels and ``status.allocatable``), the Topology's levels, the flavor's
``nodeLabels`` and pod sets (a required, preferred or no level, one pod's requests, a count); the pod
sets are placed one after another, each on what the ones before left (upstream's assumed usage), and
each must get upstream's assignment -- the pods per lowest-level domain (the hostname alone where the
lowest level is ``kubernetes.io/hostname``, else the values of every level) -- or its failure message
(gpufleet's ``couldn't assign flavors to pod set <name>: `` prefix is stripped). The domains' order in
upstream's assignment is an encoding detail; the domains and their counts are compared.

What a node has free is what gpufleet's cluster state hands the search (``ControllerKueue._rooms``):
allocatable less the requests of the pods bound to it and not terminal -- upstream's non-TAS pods
(``pods``), prior usage of the flavor (``priorOwnUsage``) and of sibling flavors on the same hosts
(``priorFlavorUsage``) -- so ``N(..., used=...)`` writes those pods' requests on the node.

Skipped, with the reason on each row: upstream features gpufleet's TAS does not model (pod set slices,
multi-layer slices, pod set groups placed together, balanced placement and preferred node affinity --
both alpha and off by default at this commit --, failed-node replacement, elastic workload slices) and
node readiness (the caller's filter). A pod set's ``nodeSelector`` and tolerations (``PS``) and a node's
taints (``N``) are the search's (``topology.excluded_by``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest
from builders import Skip, cases

from gpufleet.model.kueue import Topology
from gpufleet.model.node import Taint, Toleration
from gpufleet.model.resources import parse_resource_list
from gpufleet.scheduling.kueue.topology import NodeRoom, TopologyRequest, place

DC = "cloud.com/datacenter"
BLOCK = "cloud.com/topology-block"
RACK = "cloud.com/topology-rack"
HOST = "kubernetes.io/hostname"
ONE = (HOST,)
TWO = (BLOCK, RACK)
THREE = (BLOCK, RACK, HOST)


def _units(quantities: Mapping[str, str]) -> dict[str, int]:
    parsed, problems = parse_resource_list(dict(quantities), "x")
    assert not problems, problems
    return parsed


@dataclass(frozen=True)
class N:
    """``testingnode.MakeNode(name).Label(...).StatusAllocatable(...)``; ``used``: the requests of the
    pods bound to it (one ``pods`` each)."""

    name: str
    labels: Mapping[str, str]
    allocatable: Mapping[str, str]
    used: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()

    def room(self) -> NodeRoom:
        free = _units(self.allocatable)
        for r, v in _units(self.used).items():
            free[r] = free.get(r, 0) - v
        return NodeRoom(dict(self.labels), free, self.taints)


def n3(
    name: str, block: str, rack: str, host: str, cpu: str = "1", memory: str = "1Gi", pods: str = "10"
) -> N:
    return N(name, {BLOCK: block, RACK: rack, HOST: host}, {"cpu": cpu, "memory": memory, "pods": pods})


def host(name: str, cpu: str = "1", pods: str = "10", **labels: str) -> N:
    return N(name, {HOST: name, **labels}, {"cpu": cpu, "pods": pods})


#      b1                   b2
#   /      \             /      \
#  r1       r2          r1       r2
#  |      /  |  \       |         |
#  x3    x5  x1  x6     x2       x4
DEFAULT_NODES = (
    n3("b1-r1-x3", "b1", "r1", "x3"),
    n3("b1-r2-x5", "b1", "r2", "x5"),
    n3("b1-r2-x1", "b1", "r2", "x1"),
    n3("b1-r2-x6", "b1", "r2", "x6"),
    n3("b2-r2-x2", "b2", "r1", "x2"),
    n3("b2-r2-x4", "b2", "r2", "x4", cpu="2", memory="4Gi", pods="40"),
)
SCATTERED_NODES = (
    n3("b1-r1-x3", "b1", "r1", "x3", cpu="4"),
    n3("b1-r1-x5", "b1", "r1", "x5"),
    n3("b1-r1-x1", "b1", "r1", "x1"),
    n3("b2-r1-x6", "b2", "r1", "x6", cpu="2"),
    n3("b2-r1-x2", "b2", "r1", "x2"),
)
MULTIPOD_NODESET = (
    n3("b1-r1-x3", "b1", "r1", "x3", cpu="10"),
    n3("b1-r2-x5", "b1", "r2", "x5", cpu="10"),
    n3("b1-r2-x1", "b1", "r2", "x1", cpu="10"),
    n3("b1-r2-x6", "b1", "r2", "x6", cpu="10"),
    n3("b2-r1-x2", "b2", "r1", "x2", cpu="10"),
    n3("b2-r2-x4", "b2", "r2", "x4", cpu="20", memory="4Gi", pods="40"),
)
BINARY_TREES_NODES = (
    n3("b1-r1-x3", "b1", "r1", "x3"),
    n3("b1-r1-x5", "b1", "r1", "x5"),
    n3("b1-r2-x1", "b1", "r2", "x1"),
    n3("b1-r2-x6", "b1", "r2", "x6"),
    n3("b2-r1-x2", "b2", "r1", "x2"),
    n3("b2-r1-x4", "b2", "r1", "x4"),
    n3("b2-r2-x7", "b2", "r2", "x7"),
    n3("b2-r2-x8", "b2", "r2", "x8"),
)

Want = Mapping[tuple[str, ...], int] | str


@dataclass(frozen=True)
class PS:
    """One ``PodSetTestCase``: ``required``/``preferred`` levels (neither: unconstrained or implied),
    one pod's requests, the count, and the assignment (lowest-level values -> pods) or reason."""

    requests: Mapping[str, int]
    count: int
    want: Want
    required: str | None = None
    preferred: str | None = None
    name: str = "main"
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()


@dataclass(frozen=True)
class Case:
    nodes: tuple[N, ...]
    levels: tuple[str, ...]
    pod_sets: tuple[PS, ...]
    node_labels: Mapping[str, str] = field(default_factory=dict)


CPU1 = {"cpu": 1000}
GPU_TAINT = Taint("example.com/gpu", "present")
SLICES = (
    "pod set slices (podset-slice-required-topology / podset-slice-size) are not modelled by gpufleet's TAS"
)
MULTI_LAYER = (
    "multi-layer pod set slices (podSetSliceRequiredTopologyConstraints, "
    "TASMultiLayerTopology) are not modelled"
)
GROUPS = (
    "pod set groups (podset-group-name, leader and workers placed together) are placed each on its own by "
    "gpufleet (topology.py docstring)"
)
BALANCED = "TASBalancedPlacement is alpha and off by default at this commit; gpufleet does not model it"
AFFINITY = (
    "preferred node affinity of the pod template (TASRespectNodeAffinityPreferred, alpha and off by default; "
    "the case turns it on) is not applied by gpufleet's TAS search (required terms are)"
)
REPLACEMENT = (
    "failed-node replacement (TASFailedNodeReplacement, the workload's unhealthyNodes) is not modelled"
)
ELASTIC = (
    "elastic workload slices with TAS (ElasticJobsViaWorkloadSlicesWithTAS, alpha and off by default; "
    "previousAssignment) are not modelled"
)
READINESS = (
    "node readiness and spec.unschedulable are the caller's filter (ControllerKueue._rooms over active "
    "nodes), "
    "not the search's"
)


def v(*values: str) -> tuple[str, ...]:
    return values


TABLE: list[tuple[str, Case] | tuple[str, Skip]] = [
    ("node replacement skipped for single-Pod-owned workload; gate on", Skip(REPLACEMENT)),
    ("node replaced for Job-owned workload; gate on", Skip(REPLACEMENT)),
    ("node replaced for pod-group workload with two Pod owners; gate on", Skip(REPLACEMENT)),
    (
        "node replaced for size-1 pod-group workload (is-group-workload annotation); gate on",
        Skip(REPLACEMENT),
    ),
    ("node replaced for single-Pod-owned workload; gate off", Skip(REPLACEMENT)),
    (
        "minimize the number of used racks before optimizing the number of nodes; BestFit",
        Case(
            (
                N("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "2", "pods": "10"}),
                N("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, {"cpu": "2", "pods": "20"}),
                N("b1-r3-x1", {BLOCK: "b1", RACK: "r3", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
                N("b1-r3-x6", {BLOCK: "b1", RACK: "r3", HOST: "x6"}, {"cpu": "1", "pods": "10"}),
                N("b1-r3-x2", {BLOCK: "b1", RACK: "r3", HOST: "x2"}, {"cpu": "1", "pods": "10"}),
                N("b1-r3-x4", {BLOCK: "b1", RACK: "r3", HOST: "x4"}, {"cpu": "1", "pods": "10"}),
            ),
            THREE,
            (PS(CPU1, 4, {v("x1"): 1, v("x2"): 1, v("x4"): 1, v("x6"): 1}, required=BLOCK),),
        ),
    ),
    (
        "choose the node that can accommodate all Pods",
        Case(
            (
                N("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "2", "pods": "10"}),
                N("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, {"cpu": "1", "pods": "10"}),
                N("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
            ),
            THREE,
            (PS(CPU1, 2, {v("x3"): 2}, required=BLOCK),),
        ),
    ),
    (
        "no annotation; implied default to unconstrained; 6 pods fit into hosts scattered across the whole "
        "datacenter even they could fit into single rack; BestFit",
        Case(
            SCATTERED_NODES,
            THREE,
            (PS(CPU1, 6, {v("x1"): 1, v("x3"): 1, v("x5"): 1, v("x2"): 1, v("x6"): 2}),),
        ),
    ),
    (
        "unconstrained; 6 pods fit into hosts scattered across the whole datacenter even they could fit into "
        "single rack; BestFit",
        Case(
            SCATTERED_NODES,
            THREE,
            (PS(CPU1, 6, {v("x1"): 1, v("x3"): 1, v("x5"): 1, v("x2"): 1, v("x6"): 2}),),
        ),
    ),
    (
        "unconstrained; a single pod fits into each host; BestFit",
        Case(DEFAULT_NODES, THREE, (PS(CPU1, 1, {v("x3"): 1}),)),
    ),
    (
        "unconstrained; a single pod fits into each host; LeastFreeCapacity; TASProfileMixed",
        Case(DEFAULT_NODES, THREE, (PS(CPU1, 1, {v("x3"): 1}),)),
    ),
    (
        "block required; 4 pods fit into one host each; BestFit",
        Case(
            BINARY_TREES_NODES,
            THREE,
            (PS(CPU1, 4, {v("x3"): 1, v("x5"): 1, v("x1"): 1, v("x6"): 1}, required=BLOCK),),
        ),
    ),
    (
        "host required; single Pod fits in the host; BestFit",
        Case(DEFAULT_NODES, THREE, (PS(CPU1, 1, {v("x3"): 1}, required=HOST),)),
    ),
    (
        "host required; single Pod fits in the host; BestFit; TASProfileMixed",
        Case(DEFAULT_NODES, THREE, (PS(CPU1, 1, {v("x3"): 1}, required=HOST),)),
    ),
    (
        "host preferred; single Pod fits in the host; BestFit; TASProfileMixed",
        Case(DEFAULT_NODES, THREE, (PS(CPU1, 1, {v("x3"): 1}, required=HOST),)),
    ),
    (
        "rack required; single Pod fits in a rack; BestFit",
        Case(DEFAULT_NODES, TWO, (PS(CPU1, 1, {v("b1", "r1"): 1}, required=RACK),)),
    ),
    (
        "rack required; multiple Pods fit in a rack; BestFit",
        Case(DEFAULT_NODES, TWO, (PS(CPU1, 3, {v("b1", "r2"): 3}, required=RACK),)),
    ),
    (
        "block preferred; Pods fit in 2 blocks; BestFit",
        Case(
            (
                N("b1", {BLOCK: "b1"}, {"cpu": "2", "pods": "20"}),
                N("b2", {BLOCK: "b2"}, {"cpu": "1", "pods": "10"}),
                N("b3", {BLOCK: "b3"}, {"cpu": "4", "pods": "40"}),
            ),
            (BLOCK,),
            (PS(CPU1, 5, {v("b2"): 1, v("b3"): 4}, preferred=BLOCK),),
        ),
    ),
    (
        "rack required; multiple Pods fit in some racks; BestFit",
        Case(DEFAULT_NODES, TWO, (PS(CPU1, 2, {v("b2", "r2"): 2}, required=RACK),)),
    ),
    (
        "rack required; too many pods to fit in any rack; BestFit",
        Case(
            DEFAULT_NODES,
            TWO,
            (PS(CPU1, 4, 'topology "default" allows to fit only 3 out of 4 pod(s)', required=RACK),),
        ),
    ),
    (
        "block required; single Pod fits in a block and a single rack; BestFit",
        Case(DEFAULT_NODES, TWO, (PS(CPU1, 1, {v("b2", "r1"): 1}, required=BLOCK),)),
    ),
    (
        "block required; single Pod fits in a block spread across two racks; BestFit",
        Case(DEFAULT_NODES, TWO, (PS(CPU1, 4, {v("b1", "r1"): 1, v("b1", "r2"): 3}, required=BLOCK),)),
    ),
    (
        "block required; Pods fit in a block spread across two racks; BestFit",
        Case(DEFAULT_NODES, TWO, (PS(CPU1, 4, {v("b1", "r1"): 1, v("b1", "r2"): 3}, required=BLOCK),)),
    ),
    (
        "block required; single Pod which cannot be split; BestFit",
        Case(
            DEFAULT_NODES,
            TWO,
            (
                PS(
                    {"cpu": 4000},
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 4; '
                    'excluded: resource "cpu": 4',
                    required=BLOCK,
                ),
            ),
        ),
    ),
    (
        "block required; too many Pods to fit requested; BestFit",
        Case(
            DEFAULT_NODES,
            TWO,
            (PS(CPU1, 5, 'topology "default" allows to fit only 4 out of 5 pod(s)', required=BLOCK),),
        ),
    ),
    (
        "rack required; single Pod requiring memory; BestFit",
        Case(DEFAULT_NODES, TWO, (PS({"memory": 1024}, 4, {v("b1", "r1"): 4}, required=RACK),)),
    ),
    (
        "rack preferred; but only block can accommodate the workload; BestFit",
        Case(DEFAULT_NODES, TWO, (PS(CPU1, 4, {v("b1", "r1"): 1, v("b1", "r2"): 3}, preferred=RACK),)),
    ),
    (
        "rack preferred; but only multiple blocks can accommodate the workload; BestFit",
        Case(
            DEFAULT_NODES,
            TWO,
            (PS(CPU1, 6, {v("b1", "r1"): 1, v("b1", "r2"): 3, v("b2", "r2"): 2}, preferred=RACK),),
        ),
    ),
    (
        "block preferred; but only multiple blocks can accommodate the workload; BestFit",
        Case(
            DEFAULT_NODES,
            TWO,
            (PS(CPU1, 6, {v("b1", "r1"): 1, v("b1", "r2"): 3, v("b2", "r2"): 2}, preferred=BLOCK),),
        ),
    ),
    (
        "block preferred; but the workload cannot be accommodate in entire topology; BestFit",
        Case(
            DEFAULT_NODES,
            TWO,
            (PS(CPU1, 10, 'topology "default" allows to fit only 7 out of 10 pod(s)', preferred=BLOCK),),
        ),
    ),
    (
        "only nodes with matching labels are considered; no matching node; BestFit",
        Case(
            (N("b1-r1-x3", {"zone": "zone-a", HOST: "x3"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),),
            ONE,
            (PS(CPU1, 1, "no topology domains at level: kubernetes.io/hostname", required=HOST),),
            node_labels={"zone": "zone-b"},
        ),
    ),
    (
        "only nodes with matching labels are considered; matching node is found; BestFit",
        Case(
            (N("b1-r1-x3", {"zone": "zone-a", HOST: "x3"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),),
            ONE,
            (PS(CPU1, 1, {v("x3"): 1}, required=HOST),),
            node_labels={"zone": "zone-a"},
        ),
    ),
    (
        "only nodes with matching levels are considered; no host label on node; BestFit",
        Case(
            (N("b1-r1-x3", {BLOCK: "b1", RACK: "r1"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),),
            THREE,
            (PS(CPU1, 1, "no topology domains at level: cloud.com/topology-rack", required=RACK),),
        ),
    ),
    (
        # The pod has no nodeName: it uses nothing on x3.
        "don't consider unscheduled Pods when computing capacity; BestFit",
        Case((host("x3"),), ONE, (PS({"cpu": 600}, 1, {v("x3"): 1}, required=HOST),)),
    ),
    (
        # Failed and succeeded pods on x3 use nothing.
        "don't consider terminal pods when computing the capacity; BestFit",
        Case((host("x3"),), ONE, (PS({"cpu": 600}, 1, {v("x3"): 1}, required=HOST),)),
    ),
    (
        "include usage from pending scheduled non-TAS pods, blocked assignment; BestFit",
        Case(
            (N("x3", {HOST: "x3"}, {"cpu": "1", "pods": "10"}, {"cpu": "600m", "pods": "1"}),),
            ONE,
            (
                PS(
                    {"cpu": 600},
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                    'excluded: resource "cpu": 1',
                    required=HOST,
                ),
            ),
        ),
    ),
    (
        "include usage from running non-TAS pods, blocked assignment; BestFit",
        Case(
            (N("x3", {HOST: "x3"}, {"cpu": "1", "pods": "10"}, {"cpu": "600m", "pods": "1"}),),
            ONE,
            (
                PS(
                    {"cpu": 600},
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                    'excluded: resource "cpu": 1',
                    required=HOST,
                ),
            ),
        ),
    ),
    (
        "node allocatable capacity completely used by non-TAS pod; empty remainingCapacity",
        Case(
            (N("x3", {HOST: "x3"}, {"cpu": "1", "pods": "1"}, {"cpu": "1", "pods": "1"}),),
            ONE,
            (
                PS(
                    {"cpu": 100},
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                    'excluded: resource "cpu": 1',
                    required=HOST,
                ),
            ),
        ),
    ),
    (
        "include usage from non-TAS pods; pod usage",
        Case(
            (N("x3", {HOST: "x3"}, {"pods": "10"}, {"pods": "2"}),),
            ONE,
            (PS({"cpu": 0}, 9, 'topology "default" allows to fit only 8 out of 9 pod(s)', required=HOST),),
        ),
    ),
    (
        "include usage from running non-TAS pods, found free capacity on another node; BestFit",
        Case(
            (
                N("x3", {HOST: "x3"}, {"cpu": "1", "pods": "10"}, {"cpu": "600m", "pods": "1"}),
                host("x5"),
            ),
            ONE,
            (PS({"cpu": 600}, 1, {v("x5"): 1}, required=HOST),),
        ),
    ),
    ("no assignment as node is not ready; BestFit", Skip(READINESS)),
    ("no assignment as node is unschedulable; BestFit", Skip(READINESS)),
    (
        "skip node which has untolerated taint; BestFit",
        Case(
            (
                N(
                    "x3",
                    {"zone": "zone-a", HOST: "x3"},
                    {"cpu": "1", "memory": "1Gi", "pods": "10"},
                    taints=(GPU_TAINT,),
                ),
            ),
            ONE,
            (
                PS(
                    CPU1,
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                    'excluded: taint "example.com/gpu=present:NoSchedule": 1',
                    required=HOST,
                ),
            ),
            {"zone": "zone-a"},
        ),
    ),
    (
        "detailed failure message with exclusion stats",
        Case(
            (
                N("x1", {HOST: "x1"}, {"cpu": "1", "pods": "10"}, taints=(Taint("key", "value"),)),
                N("x2", {HOST: "x2", "zone": "zone-b"}, {"cpu": "1", "pods": "10"}),
                N("x3", {HOST: "x3", "zone": "zone-b"}, {"cpu": "2", "pods": "10"}),
                N("x4", {HOST: "x4", "zone": "zone-a"}, {"cpu": "100m", "pods": "10"}),
            ),
            ONE,
            (
                PS(
                    CPU1,
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 4; '
                    'excluded: nodeSelector: 2, resource "cpu": 1, taint "key=value:NoSchedule": 1',
                    required=HOST,
                    node_selector={"zone": "zone-a"},
                ),
            ),
        ),
    ),
    (
        "resource exclusion picks most restrictive resource",
        Case(
            (
                N(
                    "dual-shortage",
                    {HOST: "dual-shortage"},
                    {"cpu": "500m", "pods": "10", "example.com/gpu": "0"},
                ),
            ),
            ONE,
            (
                PS(
                    {"cpu": 1000, "example.com/gpu": 1},
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                    'excluded: resource "cpu": 1',
                    required=HOST,
                ),
            ),
        ),
    ),
    (
        "allow to schedule on node with tolerated taint; BestFit",
        Case(
            (
                N(
                    "b1-r1-x3",
                    {"zone": "zone-a", HOST: "x3"},
                    {"cpu": "1", "memory": "1Gi", "pods": "10"},
                    taints=(GPU_TAINT,),
                ),
            ),
            ONE,
            (
                PS(
                    CPU1,
                    1,
                    {v("x3"): 1},
                    required=HOST,
                    tolerations=(Toleration("example.com/gpu", "Equal", "present"),),
                ),
            ),
        ),
    ),
    (
        "no assignment as node does not have enough allocatable pods (.status.allocatable['pods']); BestFit",
        Case(
            (
                N(
                    "b1-r1-x3",
                    {"zone": "zone-a", HOST: "x3"},
                    {"cpu": "1000m", "pods": "1"},
                    {"cpu": "300m", "pods": "1"},
                ),
            ),
            ONE,
            (
                PS(
                    {"cpu": 300},
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                    'excluded: resource "pods": 1',
                    required=HOST,
                ),
            ),
            node_labels={"zone": "zone-a"},
        ),
    ),
    (
        "multiple PodSets account assumed pod usage against allocatable pods; BestFit",
        Case(
            (host("x1", cpu="2", pods="1"),),
            ONE,
            (
                PS(CPU1, 1, {v("x1"): 1}, required=HOST, name="one"),
                PS(
                    CPU1,
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                    'excluded: resource "pods": 1',
                    required=HOST,
                    name="two",
                ),
            ),
        ),
    ),
    (
        "skip node which doesn't match node selector, missing label; BestFit",
        Case(
            (N("x3", {"zone": "zone-a", HOST: "x3"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),),
            ONE,
            (
                PS(
                    {"cpu": 300},
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                    "excluded: nodeSelector: 1",
                    required=HOST,
                    node_selector={"custom-label-1": "custom-value-1"},
                ),
            ),
            {"zone": "zone-a"},
        ),
    ),
    (
        "skip node which doesn't match node selector, label exists, value doesn't match; BestFit",
        Case(
            (
                N(
                    "x3",
                    {"zone": "zone-a", HOST: "x3", "custom-label-1": "value-1"},
                    {"cpu": "1", "memory": "1Gi", "pods": "10"},
                ),
            ),
            ONE,
            (
                PS(
                    {"cpu": 300},
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                    "excluded: nodeSelector: 1",
                    required=HOST,
                    node_selector={"custom-label-1": "value-2"},
                ),
            ),
            {"zone": "zone-a"},
        ),
    ),
    (
        "allow to schedule on node which matches node; BestFit",
        Case(
            (
                N(
                    "b1-r1-x3",
                    {"zone": "zone-a", HOST: "x3", "custom-label-1": "value-1"},
                    {"cpu": "1", "memory": "1Gi", "pods": "10"},
                ),
                N(
                    "b1-r1-x5",
                    {"zone": "zone-a", HOST: "x5", "custom-label-1": "value-2"},
                    {"cpu": "1", "memory": "1Gi", "pods": "10"},
                ),
            ),
            ONE,
            (PS(CPU1, 1, {v("x5"): 1}, required=HOST, node_selector={"custom-label-1": "value-2"}),),
            {"zone": "zone-a"},
        ),
    ),
    ("block required for podset; host required for slices; BestFit", Skip(SLICES)),
    (
        "block required for podset; host required for slices; prioritize more free slice capacity first "
        "and then "
        "tight fit; BestFit",
        Skip(SLICES),
    ),
    (
        "block required for podset; host required for slices; select domains with tight fit; BestFit",
        Skip(SLICES),
    ),
    ("block required for podset; rack required for slices; BestFit", Skip(SLICES)),
    ("block preferred for podset; rack required for slices; BestFit", Skip(SLICES)),
    ("block required for podset; host required for slices; optimize last domain; BestFit", Skip(SLICES)),
    (
        "block preferred for podset; host required for slices; 2 blocks with unbalanced subdomains; BestFit",
        Skip(SLICES),
    ),
    ("balanced placement; basic", Skip(BALANCED)),
    ("balanced placement; select optmial set of domains", Skip(BALANCED)),
    ("balanced placement; select optmial set of domains; with slices", Skip(BALANCED)),
    ("balanced placement; select correct block", Skip(BALANCED)),
    ("balanced placement; cannot chose domains from different blocks", Skip(BALANCED)),
    ("balanced placement; select correct block; prefer blocks with single rack; with slices", Skip(BALANCED)),
    ("balanced placement; four level topology; slice two levels below balanced level", Skip(BALANCED)),
    ("balanced placement; four level topology; slice one level below balanced level", Skip(BALANCED)),
    (
        "balanced placement; four level topology; balance on rack level; slice not on the lowest level",
        Skip(BALANCED),
    ),
    ("balanced placement; three level topology; balance on the same level as slice", Skip(BALANCED)),
    ("balanced placement; three level topology; balance on the lowest level", Skip(BALANCED)),
    ("balanced placement; leader worker set", Skip(BALANCED)),
    ("balanced placement; prioritize (using entropy) balanced domains; second rack wins", Skip(BALANCED)),
    ("balanced placement; prioritize (using entropy) balanced domains; first rack wins", Skip(BALANCED)),
    ("balanced placement; two level topology; balance on the highest level", Skip(BALANCED)),
    ("balanced placement; select correct block taking into account pruning", Skip(BALANCED)),
    ("balanced placement; should not prune domain", Skip(BALANCED)),
    ("balanced placement; leader worker set does not reserve leader space on every node", Skip(BALANCED)),
    ("balanced placement; fallback to BestFit when leader worker set cannot meet threshold", Skip(BALANCED)),
    (
        "block required for podset; rack required for slices; podset fits in a block, but slices do not "
        "fit in racks",
        Skip(SLICES),
    ),
    (
        "block required for podset; rack required for slices; only 1 out of 2 slices fit the topology",
        Skip(SLICES),
    ),
    (
        "block required for podset; rack required for slices; podset fits in both blocks, but slices fit "
        "in only "
        "one block",
        Skip(SLICES),
    ),
    ("slice required topology level cannot be above the main required topology level", Skip(SLICES)),
    ("slice size is required when slice topology is requested", Skip(SLICES)),
    ("cannot request not existing slice topology", Skip(SLICES)),
    ("no topology for podset; host required for slices; BestFit", Skip(SLICES)),
    ("no topology for podset; host required for slices; multiple blocks; BestFit", Skip(SLICES)),
    ("no topology for podset; rack required for slices; multiple blocks; BestFit", Skip(SLICES)),
    (
        "find topology assignment for two podsets with overlapping domain",
        Case(
            (
                N("b1", {BLOCK: "b1"}, {"cpu": "2", "pods": "10"}),
                N("b2", {BLOCK: "b2"}, {"cpu": "2", "pods": "10"}),
                N("b3", {BLOCK: "b3"}, {"cpu": "2", "pods": "10"}),
            ),
            (BLOCK,),
            (
                PS(CPU1, 3, {v("b1"): 2, v("b2"): 1}, preferred=BLOCK, name="podset1"),
                PS(CPU1, 3, {v("b2"): 1, v("b3"): 2}, preferred=BLOCK, name="podset2"),
            ),
        ),
    ),
    ("find topology assignment for two podsets with the same group", Skip(GROUPS)),
    (
        "find topology assignment for grouped podsets preserves worker capacity when placing leader",
        Skip(GROUPS),
    ),
    (
        "find topology assignment for sliced grouped podsets preserves worker capacity when placing leader",
        Skip(GROUPS),
    ),
    (
        "find topology assignment for preferred grouped podsets preserves capacity across domains",
        Skip(GROUPS),
    ),
    (
        "find topology assignment for unconstrained grouped podsets spreads leader and worker across "
        "domains with "
        "TASProfileMixed",
        Skip(GROUPS),
    ),
    ("find topology assignment for grouped podsets preserves leader below the slice level", Skip(GROUPS)),
    (
        "find topology assignment for two podsets with the same group with domains that can tightly fit "
        "leader and "
        "workers",
        Skip(GROUPS),
    ),
    (
        "find topology assignment for grouped podsets skips domain where only workers fit without leader",
        Skip(GROUPS),
    ),
    (
        "find topology assignment for grouped podsets skips domain where mixed-size workers only fit "
        "without leader",
        Skip(GROUPS),
    ),
    (
        "find topology assignment for grouped podsets keeps tight domain when leader and workers fit "
        "together",
        Skip(GROUPS),
    ),
    ("find topology assignment for two podsets with the same group - no fit", Skip(GROUPS)),
    (
        "find topology assignment for two podsets with the same group - optimizes domain for both leader "
        "and workers",
        Skip(GROUPS),
    ),
    ("BestFit: podset group workers spread across hosts", Skip(GROUPS)),
    (
        "find topology assignment for two podsets with the same group - leader does not fit anywhere",
        Skip(GROUPS),
    ),
    ("find topology assignment for two podsets with the same group - multiple hosts", Skip(GROUPS)),
    (
        "find topology assignment for two podsets with the same group requesting same resources and "
        "nodes in the "
        "same rack",
        Skip(GROUPS),
    ),
    (
        "multiple podsets: rack required for both, different resource requests; BestFit",
        Case(
            MULTIPOD_NODESET,
            TWO,
            (
                PS(CPU1, 2, {v("b1", "r1"): 2}, required=RACK, name="podset1"),
                PS({"memory": 1024}, 1, {v("b1", "r1"): 1}, required=RACK, name="podset2"),
            ),
        ),
    ),
    (
        "multiple podsets: block required for one, unconstrained for another; TASProfileMixed",
        Case(
            MULTIPOD_NODESET,
            THREE,
            (
                PS(CPU1, 8, {v("x2"): 8}, required=BLOCK, name="podset1"),
                PS(CPU1, 2, {v("x2"): 2}, name="podset2"),
            ),
        ),
    ),
    (
        "temporary state cleanup prevents leakage across PodSets",
        Case(
            (
                N("n1", {HOST: "x1"}, {"cpu": "4", "memory": "4Gi", "pods": "10"}),
                N("n2", {HOST: "x2"}, {"cpu": "4", "memory": "4Gi", "pods": "10"}),
            ),
            ONE,
            (
                PS({"cpu": 1000, "memory": 1000}, 1, {v("x1"): 1}, name="ps1"),
                PS(
                    {"cpu": 1000, "memory": 1000},
                    1,
                    'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 2; '
                    "excluded: nodeSelector: 2",
                    name="ps2",
                    node_selector={"never": "match"},
                ),
            ),
        ),
    ),
    ("elastic workload scale up: delta-only placement preserves previous assignment", Skip(ELASTIC)),
    ("elastic workload scale up: spread across multiple nodes preserved", Skip(ELASTIC)),
    ("elastic workload scale down: truncates assignment", Skip(ELASTIC)),
    ("elastic workload same count: reuses previous assignment exactly", Skip(ELASTIC)),
    ("elastic workload scale down with leader: truncates workers, reuses leader", Skip(ELASTIC)),
    ("elastic workload same count with leader: reuses both assignments exactly", Skip(ELASTIC)),
    (
        "elastic workload scale up with leader: places delta workers, preserves leader assignment",
        Skip(ELASTIC),
    ),
    (
        "elastic workload scale up with leader: stale leader assignment falls back to fresh placement",
        Skip(ELASTIC),
    ),
    (
        "multi-layer topology: block required; rack slices of 4; host slices of 2; TASMultiLayerTopology",
        Skip(MULTI_LAYER),
    ),
    ("multi-layer topology: no feature gate; additional layers ignored", Skip(MULTI_LAYER)),
    (
        "multi-layer topology: mimic a real-world GB200 cluster, with NVL36 arch (2GPUs/node); dc "
        "required; aizone "
        "slices of 48; rack slices of 16; TASMultiLayerTopology",
        Skip(MULTI_LAYER),
    ),
    ("multi-layer topology: host slice rounding makes rack slice impossible", Skip(MULTI_LAYER)),
    ("multi-layer topology: small host kills rack slices despite enough total capacity", Skip(MULTI_LAYER)),
    ("multi-layer topology: enough hostname slices but not enough rack slices", Skip(MULTI_LAYER)),
    ("multi-layer topology: 3-layer negative case with small hosts cascading up", Skip(MULTI_LAYER)),
    ("with preferred affinity", Skip(AFFINITY)),
    ("with required and preferred affinity", Skip(AFFINITY)),
    ("with multiple preferred affinities", Skip(AFFINITY)),
    ("affinity takes precedence over best fit", Skip(AFFINITY)),
    (
        "affinity ordering with required topology level chooses secondary domain if primary is too small",
        Skip(AFFINITY),
    ),
    (
        "affinity ordering with preferred inner topology level bubbles up to parent level to avoid "
        "splitting across "
        "parent domains",
        Skip(AFFINITY),
    ),
    ("flat topology, preferred mode, size 5 pods x 1", Skip(AFFINITY)),
    ("flat topology, unconstrained mode, size 5 pods x 1", Skip(AFFINITY)),
    ("flat topology, preferred mode, size 2 pods x 2", Skip(f"{AFFINITY}; {SLICES}")),
    ("flat topology, unconstrained mode, size 2 pods x 2", Skip(f"{AFFINITY}; {SLICES}")),
    (
        "LWS with leader and workers; preferred affinity on workers; leader cannot fit on preferred zone",
        Skip(f"{AFFINITY}; {GROUPS}"),
    ),
    ("optimize the last domain for LWS using BestFit", Skip(GROUPS)),
    (
        # The sibling flavor's pod (1 CPU) is bound to x1.
        "sibling-flavor usage on the shared hostname reduces remaining capacity",
        Case(
            (
                N("b1-x1", {BLOCK: "b1", HOST: "x1"}, {"cpu": "1", "pods": "10"}, {"cpu": "1", "pods": "1"}),
                N("b1-x2", {BLOCK: "b1", HOST: "x2"}, {"cpu": "1", "pods": "10"}),
            ),
            (BLOCK, HOST),
            (PS(CPU1, 1, {v("x2"): 1}, required=HOST),),
        ),
    ),
    (
        "non-hostname-leaf topology: nil aggregatedDomainUsages preserves per-flavor behavior",
        Case(DEFAULT_NODES, TWO, (PS(CPU1, 1, {v("b1", "r1"): 1}, required=RACK),)),
    ),
    (
        # Prior workloads of the flavor use b1/r1 and b1/r2 whole.
        "non-hostname-leaf topology: prior c.usage must be applied even when aggregatedDomainUsages is "
        "non-nil empty",
        Case(
            (
                N("b1-r1", {BLOCK: "b1", RACK: "r1"}, {"cpu": "1", "pods": "10"}, {"cpu": "1", "pods": "1"}),
                N("b1-r2", {BLOCK: "b1", RACK: "r2"}, {"cpu": "1", "pods": "10"}, {"cpu": "1", "pods": "1"}),
                N("b2-r1", {BLOCK: "b2", RACK: "r1"}, {"cpu": "1", "pods": "10"}),
                N("b2-r2", {BLOCK: "b2", RACK: "r2"}, {"cpu": "1", "pods": "10"}),
            ),
            TWO,
            (PS(CPU1, 1, {v("b2", "r1"): 1}, required=RACK),),
        ),
    ),
    ("stable tie break on identical nodes: TASBalancedPlacement enabled", Skip(BALANCED)),
    (
        "stable tie break on identical nodes: TASBalancedPlacement disabled",
        Case(
            (
                N("x2", {BLOCK: "b1", RACK: "r1", HOST: "x2"}, {"cpu": "1", "pods": "10"}),
                N("x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
            ),
            THREE,
            (PS(CPU1, 1, {v("x1"): 1}, required=HOST),),
        ),
    ),
    ("stable tie break on identical nodes: reversed order, TASBalancedPlacement enabled", Skip(BALANCED)),
    (
        "stable tie break on identical nodes: reversed order, TASBalancedPlacement disabled",
        Case(
            (
                N("x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
                N("x2", {BLOCK: "b1", RACK: "r1", HOST: "x2"}, {"cpu": "1", "pods": "10"}),
            ),
            THREE,
            (PS(CPU1, 1, {v("x1"): 1}, required=HOST),),
        ),
    ),
]


def _assignment(case: Case, nodes: Mapping[str, NodeRoom], placed: list[str]) -> dict[tuple[str, ...], int]:
    """Pods per lowest-level domain: the hostname alone where the lowest level is the hostname
    (upstream's ``buildAssignment``), else the values of every level."""
    levels = case.levels[-1:] if case.levels[-1] == HOST else case.levels
    out: dict[tuple[str, ...], int] = {}
    for node in placed:
        key = tuple(nodes[node].labels[level] for level in levels)
        out[key] = out.get(key, 0) + 1
    return out


@pytest.mark.parametrize("case", cases("TestFindTopologyAssignments", TABLE, 1))
def test_find_topology_assignments(case: Case) -> None:
    rooms = {n.name: n.room() for n in case.nodes}
    flavor_nodes = {
        name: room
        for name, room in rooms.items()
        if all(room.labels.get(k) == val for k, val in case.node_labels.items())
    }
    topology = Topology("default", case.levels)
    asks = [
        TopologyRequest(
            ps.name,
            ps.count,
            dict(ps.requests),
            ps.required,
            ps.preferred,
            tuple(sorted(ps.node_selector.items())),
            tolerations=ps.tolerations,
        )
        for ps in case.pod_sets
    ]
    for i, ps in enumerate(case.pod_sets):
        got = place(asks[: i + 1], topology, flavor_nodes)
        if isinstance(ps.want, str):
            assert got == f"couldn't assign flavors to pod set {ps.name}: {ps.want}"
        else:
            assert not isinstance(got, str), got
            assert _assignment(case, flavor_nodes, got[ps.name]) == dict(ps.want)
