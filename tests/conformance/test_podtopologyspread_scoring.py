"""kube-scheduler v1.34.10 ``pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go``,
ported case by case (the table converted from the Go source, one row per upstream case):
TestPodTopologySpreadScore (PreScore over the candidate nodes, the failed nodes in the snapshot
too, then Score and NormalizeScore; ``DefaultingType: System``) and TestPreScoreSkip.

Not ported: TestPreScoreStateEmptyNodes (it compares the internal ``preScoreState``; the scores
built on it are what TestPodTopologySpreadScore checks), the benchmark.
"""

from __future__ import annotations

import numpy as np
import pytest
from builders import Skip, cases
from pod_builders_affinity import LabelSelector, MakePod, make_node, run_scores, snapshot

from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.plugins.pod_topology_spread import PodTopologySpread

FOO = LabelSelector().exists("foo").obj()
BAR = LabelSelector().exists("bar").obj()
TAINTS = (Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"),)

POD_TOPOLOGY_SPREAD_SCORE: list[tuple[object, ...]] = [
    (
        "one constraint on node, no existing pods",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"kubernetes.io/hostname": "node-b"}),
        ],
        [],
        [],
        [100, 100],
    ),
    (
        "one constraint on node, only one node is candidate",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [make_node("node-a", {"kubernetes.io/hostname": "node-a"})],
        [make_node("node-b", {"kubernetes.io/hostname": "node-b"})],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
        ],
        [100],
    ),
    (
        "one constraint on node, all nodes have the same number of matching pods",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"kubernetes.io/hostname": "node-b"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
        ],
        [100, 100],
    ),
    (
        "one constraint on node, all 4 nodes are candidates",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"kubernetes.io/hostname": "node-b"}),
            make_node("node-c", {"kubernetes.io/hostname": "node-c"}),
            make_node("node-d", {"kubernetes.io/hostname": "node-d"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-d1").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d2").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d3").node("node-d").label("foo", "").obj(),
        ],
        [20, 60, 100, 0],
    ),
    (
        "one constraint on node, null selector",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", None, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"kubernetes.io/hostname": "node-b"}),
            make_node("node-c", {"kubernetes.io/hostname": "node-c"}),
            make_node("node-d", {"kubernetes.io/hostname": "node-d"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-d1").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d2").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d3").node("node-d").label("foo", "").obj(),
        ],
        [100, 100, 100, 100],
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"kubernetes.io/hostname": "node-b"}),
            make_node("node-c", {"kubernetes.io/hostname": "node-c"}),
            make_node("node-d", {"kubernetes.io/hostname": "node-d"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-d1").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d2").node("node-d").label("foo", "").obj(),
            MakePod().name("p-d3").node("node-d").label("foo", "").obj(),
        ],
        [33, 66, 100, 16],
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(3, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"kubernetes.io/hostname": "node-b"}),
            make_node("node-c", {"kubernetes.io/hostname": "node-c"}),
            make_node("node-d", {"kubernetes.io/hostname": "node-d"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a3").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a4").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b3").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
            MakePod().name("p-c2").node("node-c").label("foo", "").obj(),
            MakePod().name("p-d1").node("node-d").label("foo", "").obj(),
        ],
        [44, 66, 77, 100],
    ),
    (
        "system defaulting, nodes don't have zone, pods match service",
        Skip("upstream's default selector comes from a Service here; gpufleet has no Services"),
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"kubernetes.io/hostname": "node-b"}),
            make_node("node-x", {"kubernetes.io/hostname": "node-x"}),
        ],
        [make_node("node-y", {"kubernetes.io/hostname": "node-y"})],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a3").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a4").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [33, 83, 100],
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"n": "node-b"}),
            make_node("node-x", {"kubernetes.io/hostname": "node-x"}),
        ],
        [make_node("node-y", {"kubernetes.io/hostname": "node-y"})],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a3").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a4").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [16, 0, 100],
    ),
    (
        "one constraint on zone, 3 out of 4 nodes are candidates",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"zone": "zone1", "kubernetes.io/hostname": "node-b"}),
            make_node("node-x", {"zone": "zone2", "kubernetes.io/hostname": "node-x"}),
        ],
        [make_node("node-y", {"zone": "zone2", "kubernetes.io/hostname": "node-y"})],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a3").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a4").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [75, 75, 100],
    ),
    (
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "kubernetes.io/hostname": "node-a"}),
            make_node("node-x", {"zone": "zone2", "kubernetes.io/hostname": "node-x"}),
        ],
        [
            make_node("node-b", {"zone": "zone1", "kubernetes.io/hostname": "node-b"}),
            make_node("node-y", {"zone": "zone2", "kubernetes.io/hostname": "node-y"}),
        ],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-x2").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        [100, 63],
    ),
    (
        "two Constraints on zone, 2 out of 4 nodes are candidates",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, "zone", "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [make_node("node-a", {"zone": "zone1"}), make_node("node-x", {"zone": "zone2"})],
        [make_node("node-b", {"zone": "zone1"}), make_node("node-y", {"zone": "zone2"})],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [85, 100],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"zone": "zone1", "kubernetes.io/hostname": "node-b"}),
            make_node("node-x", {"zone": "zone2", "kubernetes.io/hostname": "node-x"}),
            make_node("node-y", {"zone": "zone2", "kubernetes.io/hostname": "node-y"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("bar", "").obj(),
        ],
        [60, 20, 100, 60],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"zone": "zone1", "kubernetes.io/hostname": "node-b"}),
            make_node("node-x", {"zone": "zone2", "kubernetes.io/hostname": "node-x"}),
            make_node("node-y", {"zone": "zone2", "kubernetes.io/hostname": "node-y"}),
        ],
        [],
        [
            MakePod().name("p-b1").node("node-b").label("bar", "").obj(),
            MakePod().name("p-x1").node("node-x").label("foo", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").label("bar", "").obj(),
        ],
        [100, 60, 40, 0],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", BAR, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"zone": "zone1", "kubernetes.io/hostname": "node-b"}),
            make_node("node-x", {"zone": "zone2", "kubernetes.io/hostname": "node-x"}),
        ],
        [make_node("node-y", {"zone": "zone2", "kubernetes.io/hostname": "node-y"})],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-y").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-y").label("bar", "").obj(),
        ],
        [50, 25, 100],
    ),
    (
        "existing pods in a different namespace do not count",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"kubernetes.io/hostname": "node-b"}),
        ],
        [],
        [
            MakePod().name("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
        ],
        [100, 33],
    ),
    (
        "terminating Pods should be excluded",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"kubernetes.io/hostname": "node-b"}),
        ],
        [],
        [
            MakePod().name("p-a").node("node-a").label("foo", "").terminating().obj(),
            MakePod().name("p-b").node("node-b").label("foo", "").obj(),
        ],
        [100, 0],
    ),
    (
        "minDomains has no effect when ScheduleAnyway",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            2,
            "node",
            "ScheduleAnyway",
            FOO,
            10,
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
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-b2").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [75, 75, 100],
    ),
    (
        "NodeAffinityPolicy honoed with labelSelectors",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a", "foo": ""}),
            make_node("node-b", {"node": "node-b", "foo": ""}),
            make_node("node-c", {"node": "node-c"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [0, 33, 100],
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, "Ignore", None, None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a", "foo": ""}),
            make_node("node-b", {"node": "node-b", "foo": ""}),
            make_node("node-c", {"node": "node-c"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [66, 100, 100],
    ),
    (
        "NodeAffinityPolicy honoed with nodeAffinity",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a", "foo": ""}),
            make_node("node-b", {"node": "node-b", "foo": ""}),
            make_node("node-c", {"node": "node-c"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [0, 33, 100],
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        MakePod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, "Ignore", None, None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a", "foo": ""}),
            make_node("node-b", {"node": "node-b", "foo": ""}),
            make_node("node-c", {"node": "node-c"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [66, 100, 100],
    ),
    (
        "NodeTaintsPolicy honored",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, None, "Honor", None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a"}),
            make_node("node-b", {"node": "node-b"}),
            make_node("node-c", {"node": "node-c"}, TAINTS),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [0, 33, 100],
    ),
    (
        "NodeTaintsPolicy ignored",
        MakePod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", "ScheduleAnyway", FOO, None, None, None, None)
        .obj(),
        [
            make_node("node-a", {"node": "node-a"}),
            make_node("node-b", {"node": "node-b"}),
            make_node("node-c", {"node": "node-c"}, TAINTS),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-a2").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        [66, 100, 100],
    ),
    (
        "matchLabelKeys ignored when feature gate disabled",
        Skip("MatchLabelKeysInPodTopologySpread is on in 1.34; gpufleet models no gate turned off"),
    ),
    (
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", (), None, None, None, ["foo"])
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", (), None, None, None, ["bar"])
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"zone": "zone1", "kubernetes.io/hostname": "node-b"}),
            make_node("node-c", {"zone": "zone2", "kubernetes.io/hostname": "node-c"}),
            make_node("node-d", {"zone": "zone2", "kubernetes.io/hostname": "node-d"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            MakePod().name("p-y1").node("node-c").label("foo", "").obj(),
            MakePod().name("p-y2").node("node-c").label("bar", "").obj(),
        ],
        [60, 20, 60, 100],
    ),
    (
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        MakePod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .label("baz", "")
        .spread_constraint(1, "zone", "ScheduleAnyway", FOO, None, None, None, None)
        .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", BAR, None, None, None, ["baz"])
        .obj(),
        [
            make_node("node-a", {"zone": "zone1", "kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"zone": "zone1", "kubernetes.io/hostname": "node-b"}),
            make_node("node-c", {"zone": "zone2", "kubernetes.io/hostname": "node-c"}),
            make_node("node-d", {"zone": "zone2", "kubernetes.io/hostname": "node-d"}),
        ],
        [],
        [
            MakePod().name("p-a1").node("node-a").label("foo", "").obj(),
            MakePod().name("p-b1").node("node-b").label("foo", "").label("bar", "").label("baz", "").obj(),
            MakePod().name("p-c1").node("node-c").label("foo", "").obj(),
            MakePod().name("p-c2").node("node-c").label("bar", "").obj(),
            MakePod().name("p-d3").node("node-c").label("bar", "").label("baz", "").obj(),
        ],
        [60, 20, 60, 100],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "failed", "existing", "want"),
    cases("TestPodTopologySpreadScore", POD_TOPOLOGY_SPREAD_SCORE, 5),
)
def test_pod_topology_spread_score(
    pod: Pod, nodes: list[Node], failed: list[Node], existing: list[Pod], want: list[int]
) -> None:
    filtered = [n.name for n in nodes]
    assert run_scores(PodTopologySpread(), pod, [*nodes, *failed], existing, filtered) == want


PRE_SCORE_SKIP: list[tuple[object, ...]] = [
    (
        "the pod doesn't have soft topology spread Constraints",
        MakePod().name("p").namespace("default").obj(),
        {"defaultingType": "List"},
        [
            make_node("node-a", {"kubernetes.io/hostname": "node-a"}),
            make_node("node-b", {"kubernetes.io/hostname": "node-b"}),
        ],
    ),
    (
        "default constraints and a replicaset that doesn't match",
        Skip(
            "gpufleet keeps no controller's selector: a pod a ReplicaSet controls is taken as selected by "
            "its own labels, whether or not that ReplicaSet is in the input (a kubectl dump lists none)"
        ),
    ),
]


@pytest.mark.parametrize(("pod", "args", "nodes"), cases("TestPreScoreSkip", PRE_SCORE_SKIP, 3))
def test_pre_score_skip(pod: Pod, args: dict[str, object], nodes: list[Node]) -> None:
    """PreScore returns Skip: ``pod_scores`` gives None (every node 0)."""
    state = snapshot(nodes, [], None)
    plugin = PodTopologySpread.from_args(args)
    assert plugin.pod_scores(PodContext(pod, state), np.arange(len(nodes), dtype=np.int64)) is None
