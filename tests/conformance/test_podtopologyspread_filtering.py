"""kube-scheduler v1.34.10 ``pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go``,
ported case by case (the tables converted from the Go source, one row per upstream case):
TestSingleConstraint and TestMultipleConstraints (PreFilter, then each node's Filter status code).
The cases run with ``NodeInclusionPolicyInPodTopologySpread`` on, as 1.34 ships it; those upstream
runs with the gate off use only the default policies (Honor / Ignore), which behave the same.

Not ported: TestPreFilterState, TestPreFilterStateAddPod, TestPreFilterStateRemovePod (they compare
the internal ``TpValueToMatchNum`` / critical-path structures; the Filter verdicts built on them are
what these cases and the preemption tests check), TestPreFilterDisabled (a Go-internal error).
"""

from __future__ import annotations

import pytest
from builders import cases
from pod_builders_affinity import LabelSelector, MakePod, make_node, run_filter

from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import Code
from gpufleet.scheduling.plugins.pod_topology_spread import PodTopologySpread

S, U, UU = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
FOO = LabelSelector().exists("foo").obj()
BAR = LabelSelector().exists("bar").obj()
TAINTS = (Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"),)

SINGLE_CONSTRAINT: list[tuple[object, ...]] = [
    (
        "no existing pods",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [],
        [S, S, S, S],
    ),
    (
        "no existing pods, incoming pod doesn't match itself",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [],
        [S, S, S, S],
    ),
    (
        "existing pods in a different namespace do not count",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").namespace("ns2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [S, S, U, U],
    ),
    (
        "existing pods do not match null selector",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", None, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [S, S, S, S],
    ),
    (
        "pods spread across zones as 3/3, all nodes fit",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [S, S, S, S],
    ),
    (
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zon": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [S, UU, U, U],
    ),
    (
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "rack", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
        ],
        [],
        [UU, UU],
    ),
    (
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, U],
    ),
    (
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [U, S, S, U],
    ),
    (
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        MakePod()
        .name("p")
        .label("bar", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [U, S, S, U],
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("node", ["node-a", "node-y"])
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [S, S, S, U],
    ),
    (
        "terminating Pods should be excluded",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [make_node("node-a", {"node": "node-a"}), make_node("node-b", {"node": "node-b"})],
        [
            MakePod().name("p-a").node("node-a").label("foo", "").terminating().obj(),
            MakePod().name("p-b").node("node-b").label("foo", "").obj(),
        ],
        [S, U],
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("node", ["node-b"])
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [S, S, U, U],
    ),
    (
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the "
        "third node fits",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            2,
            "node",
            "DoNotSchedule",
            FOO,
            4,
            None,
            None,
            None,
        )
        .obj(),
        [
            make_node("node-a", {"node": "node-a"}),
            make_node("node-b", {"node": "node-b"}),
            make_node("node-c", {"node": "node-c"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [U, U, S],
    ),
    (
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the "
        "all nodes fit",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            2,
            "node",
            "DoNotSchedule",
            FOO,
            2,
            None,
            None,
            None,
        )
        .obj(),
        [
            make_node("node-a", {"node": "node-a"}),
            make_node("node-b", {"node": "node-b"}),
            make_node("node-c", {"node": "node-c"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [S, S, S],
    ),
    (
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the "
        "third and fourth nodes fit",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            2,
            "zone",
            "DoNotSchedule",
            FOO,
            3,
            None,
            None,
            None,
        )
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, S],
    ),
    (
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all "
        "nodes fit",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            2,
            "zone",
            "DoNotSchedule",
            FOO,
            1,
            None,
            None,
            None,
        )
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [S, S, S, S],
    ),
    (
        "NodeAffinityPolicy honored with labelSelectors",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a", "foo": ""}),
            make_node("node-b", {"node": "node-b", "foo": ""}),
            make_node("node-x", {"node": "node-x", "foo": ""}),
            make_node("node-y", {"node": "node-y"}),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, S],
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, "Ignore", None, None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a", "foo": ""}),
            make_node("node-b", {"node": "node-b", "foo": ""}),
            make_node("node-x", {"node": "node-x", "foo": ""}),
            make_node("node-y", {"node": "node-y"}),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, U],
    ),
    (
        "NodeAffinityPolicy honored with nodeAffinity",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a", "foo": ""}),
            make_node("node-b", {"node": "node-b", "foo": ""}),
            make_node("node-x", {"node": "node-x", "foo": ""}),
            make_node("node-y", {"node": "node-y"}),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, S],
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, "Ignore", None, None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a", "foo": ""}),
            make_node("node-b", {"node": "node-b", "foo": ""}),
            make_node("node-x", {"node": "node-x", "foo": ""}),
            make_node("node-y", {"node": "node-y"}),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, U],
    ),
    (
        "NodeTaintsPolicy honored",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, "Honor", None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a", "foo": ""}),
            make_node("node-b", {"node": "node-b", "foo": ""}),
            make_node("node-x", {"node": "node-x", "foo": ""}),
            make_node("node-y", {"node": "node-y"}, TAINTS),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, S],
    ),
    (
        "NodeTaintsPolicy ignored",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a", "foo": ""}),
            make_node("node-b", {"node": "node-b", "foo": ""}),
            make_node("node-x", {"node": "node-x", "foo": ""}),
            make_node("node-y", {"node": "node-y"}, TAINTS),
        ],
        [
            MakePod().name("p-b1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, U],
    ),
]

MULTIPLE_CONSTRAINTS: list[tuple[object, ...]] = [
    (
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, U],
    ),
    (
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        [U, U, U, U],
    ),
    (
        "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("bar", "").obj(),
        ],
        [U, U, S, U],
    ),
    (
        "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("bar", "").obj(),
        ],
        [U, U, U, U],
    ),
    (
        "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [U, S, U, U],
    ),
    (
        "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        MakePod()
        .name("p")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", BAR, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("bar", "").obj(),
        ],
        [S, S, U, U],
    ),
    (
        "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [U, S, UU, U],
    ),
    (
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, "Ignore", None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
            make_node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}),
            make_node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, U],
    ),
    (
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, "Honor", None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
            make_node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}),
            make_node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}, TAINTS),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, U],
    ),
    (
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
            make_node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, TAINTS),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, S, S, U],
    ),
    (
        "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, "Honor", None)
        .spread_constraint(1, "node", "DoNotSchedule", FOO, None, "Ignore", None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
            make_node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, TAINTS),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, U],
    ),
    (
        "two Constraints on zone, spreads = [3/3, 2/1]",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", BAR, None, None, None, None)
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [U, U, S, S],
    ),
    (
        "two Constraints on zone, spreads = [3/4, 2/1]",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "DoNotSchedule", BAR, None, None, None, None)
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "node": "node-a"}),
            make_node("node-b", {"zone": "zone1", "node": "node-b"}),
            make_node("node-x", {"zone": "zone2", "node": "node-x"}),
            make_node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        [U, U, U, U],
    ),
]


def check(pod: Pod, nodes: list[Node], existing: list[Pod], want: list[Code]) -> None:
    """``DefaultingType: List`` with no default constraints: only the pod's own."""
    plugin = PodTopologySpread.from_args({"defaultingType": "List"})
    _, statuses = run_filter(plugin, pod, nodes, existing)
    assert [s.code for s in statuses] == want


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "want"), cases("TestSingleConstraint", SINGLE_CONSTRAINT, 4)
)
def test_single_constraint(pod: Pod, nodes: list[Node], existing: list[Pod], want: list[Code]) -> None:
    check(pod, nodes, existing, want)


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "want"), cases("TestMultipleConstraints", MULTIPLE_CONSTRAINTS, 4)
)
def test_multiple_constraints(pod: Pod, nodes: list[Node], existing: list[Pod], want: list[Code]) -> None:
    check(pod, nodes, existing, want)
