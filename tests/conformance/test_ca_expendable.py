"""cluster-autoscaler 1.34's own tables for expendable pods and pods waiting for a preemption (tag
``cluster-autoscaler-1.34.5``): ``core/utils/expendable_test.go`` (``TestIsExpendablePod``,
``TestFilterOutExpendableAndSplit``, ``TestFilterOutExpendablePods``),
``core/podlistprocessor/filter_out_expendable_test.go`` (``TestFilterOutExpendable``) and
``core/static_autoscaler_test.go`` (``TestStaticAutoscalerRunOncePodsWithPriorities``), case by case.

A gpufleet pod always has a priority (the Priority admission plugin's: 0 without a class), so upstream's
"pod priority not set" rows are read with priority 0, which gives their answer at their cutoffs (0 and -1); a
row where it does not (a positive cutoff) is skipped. ``IsExpendablePod`` reads no preemption policy, and
gpufleet's pod carries upstream's."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from ca_builders import build_test_node, build_test_pod, filter_out_expendable, non_expendable_scheduled

from gpufleet.autoscaling.cluster_autoscaler import (
    Candidate,
    ScaleDownRequest,
    ScaleUpRequest,
    scale_down,
    scale_up,
)
from gpufleet.autoscaling.expendable import is_expendable, split_pending
from gpufleet.autoscaling.scale_down import UtilizationRule
from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.cluster.state import ClusterState
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.profile import build_profile


def pod(name: str, millicpu: int, priority: int = 0, policy: str = "PreemptLowerPriority") -> Pod:
    """``BuildTestPod(name, millicpu, 200000)`` with ``Spec.Priority`` and ``Spec.PreemptionPolicy``."""
    made = build_test_pod(name, millicpu, 200000, priority=priority)
    made.preemption_policy = policy
    return made


@pytest.mark.parametrize(
    ("priority", "policy", "cutoff", "want"),
    [
        pytest.param(0, "PreemptLowerPriority", 0, False, id="pod priority not set, zero cutoff"),
        pytest.param(0, "PreemptLowerPriority", -1, False, id="pod priority not set, negative cutoff"),
        pytest.param(
            -1,
            "PreemptLowerPriority",
            0,
            True,
            id="pod priority set, default preemption policy, higher cutoff",
        ),
        pytest.param(
            -1,
            "PreemptLowerPriority",
            -1,
            False,
            id="pod priority set, default preemption policy, equal cutoff",
        ),
        pytest.param(
            -1,
            "PreemptLowerPriority",
            -2,
            False,
            id="pod priority set, default preemption policy, smaller cutoff",
        ),
        pytest.param(
            -1,
            "PreemptLowerPriority",
            0,
            True,
            id="pod priority set, preempt lower priority preemption policy, higher cutoff",
        ),
        pytest.param(
            -1,
            "PreemptLowerPriority",
            -1,
            False,
            id="pod priority set, preempt lower priority preemption policy, equal cutoff",
        ),
        pytest.param(
            -1,
            "PreemptLowerPriority",
            -2,
            False,
            id="pod priority set, preempt lower priority preemption policy, smaller cutoff",
        ),
        pytest.param(-1, "Never", 0, True, id="pod priority set, never preemption policy, higher cutoff"),
        pytest.param(-1, "Never", -1, False, id="pod priority set, never preemption policy, equal cutoff"),
        pytest.param(-1, "Never", -2, False, id="pod priority set, never preemption policy, smaller cutoff"),
    ],
)
def test_is_expendable_pod(priority: int, policy: str, cutoff: int, want: bool) -> None:
    """``TestIsExpendablePod``: expendable only when the priority is below the cutoff."""
    assert is_expendable(pod("p", 0, priority, policy), cutoff) is want


P1, P2 = pod("p1", 1000, priority=1), pod("p2", 1000, priority=100)
W1, W2 = pod("w1", 1000, priority=1), pod("w2", 1000, priority=100)
WAITING = {"default/w1": "node1", "default/w2": "node2"}


@pytest.mark.parametrize(
    ("nodes", "cutoff", "candidates", "waiting"),
    [
        pytest.param(["node1", "node2"], 0, ["p1", "p2"], ["w1", "w2"], id="cutoff 0"),
        pytest.param(["node1", "node2"], 10, ["p2"], ["w2"], id="cutoff 10"),
        pytest.param(["node1"], 0, ["p1", "p2", "w2"], ["w1"], id="node2 missing"),
    ],
)
def test_filter_out_expendable_and_split(
    nodes: list[str], cutoff: int, candidates: list[str], waiting: list[str]
) -> None:
    """``TestFilterOutExpendableAndSplit``: the expendable pods in neither list, a pod nominated to a node
    the cluster has waiting for the preemption, one nominated to a node that is gone a candidate."""
    state = ClusterState([build_test_node(name, 10, 10) for name in nodes])
    left, waits = split_pending([P1, P2, W1, W2], state, cutoff, WAITING)
    assert ([p.name for p in left], [p.name for p, _ in waits]) == (candidates, waiting)


def test_filter_out_expendable_pods() -> None:
    """``TestFilterOutExpendablePods``: of the scheduled pods at cutoff 0, the one at -10 is left out
    (upstream names both nominated pods ``w1``; gpufleet's pod keys are unique, the second is ``w2`` here)."""
    pods = [pod("p1", 1500), pod("p2", 3000), pod("w1", 1500, priority=-10), pod("w2", 1500, priority=10)]
    assert non_expendable_scheduled(pods, 0) == ["p1", "p2", "w2"]


MIXED = "TestFilterOutExpendable/mixed expendable"
#: a row whose pods without a priority meet a positive cutoff
NULL_PRIORITY = (
    "p4 and p5 have no priority (nil: never expendable, whatever the cutoff); a gpufleet pod always has one, "
    "the Priority admission plugin's 0 without a class, which is below this row's cutoff of 2"
)


def prio(name: str, priority: int | None = None) -> Pod:
    """``BuildTestPod(name, 1000, 1)``, with ``priority(...)`` where given."""
    return build_test_pod(name, 1000, 1, priority=0 if priority is None else priority)


@pytest.mark.parametrize(
    ("pods", "nominated", "cutoff", "nodes", "want", "in_snapshot"),
    [
        pytest.param([], {}, 0, [], [], [], id="TestFilterOutExpendable/no pods"),
        pytest.param(
            [prio("p")], {}, 0, [], ["p"], [], id="TestFilterOutExpendable/single non-expendable pod"
        ),
        pytest.param(
            [prio("p1", 2), prio("p2", 3)],
            {},
            2,
            [],
            ["p1", "p2"],
            [],
            id="TestFilterOutExpendable/non-expendable pods with priority >= to cutoff priority",
        ),
        pytest.param([prio("p", 2)], {}, 3, [], [], [], id="TestFilterOutExpendable/single expednable pod"),
        pytest.param(
            [prio("p")],
            {"default/p": "node-1"},
            0,
            ["node-1"],
            [],
            ["p"],
            id="TestFilterOutExpendable/single waiting-for-low-priority-preemption pod",
        ),
        pytest.param(
            [prio("p1", 3), prio("p2", 4), prio("p3", 1), prio("p4"), prio("p5")],
            {"default/p5": "node-1"},
            2,
            ["node-1"],
            ["p1", "p2", "p4"],
            ["p5"],
            id=f"{MIXED}, non-expendable & waiting-for-low-priority-preemption pods",
            marks=pytest.mark.skip(reason=NULL_PRIORITY),
        ),
    ],
)
def test_filter_out_expendable(
    pods: list[Pod],
    nominated: dict[str, str],
    cutoff: int,
    nodes: list[str],
    want: list[str],
    in_snapshot: list[str],
) -> None:
    """The pods returned and the pods the snapshot's nodes (``BuildTestNode(name, 2400, 2400)``) hold
    afterwards (``ElementsMatch``)."""
    built = [build_test_node(name, 2400, 2400) for name in nodes]
    remaining, snapshot = filter_out_expendable(pods, built, cutoff, nominated)
    assert (sorted(remaining), sorted(snapshot)) == (sorted(want), sorted(in_snapshot))


def test_static_autoscaler_run_once_pods_with_priorities() -> None:
    """``TestStaticAutoscalerRunOncePodsWithPriorities`` (``ExpendablePodsPriorityCutoff: 10``): n1 (100m,
    group ng1) runs p1 (40m, priority 1), n2 and n3 (1000m, group ng2) run p2 (400m, priority 1) and p3 (400m,
    priority 100) on n2; pending p4 (500m), p5 (800m, nominated to n3) and p6 (1000m), priority 100. Scale-up:
    p1 and p2 are expendable, p5 waits on n3, p4 fits n2 (600m free without p2), p6 fits nowhere: ng2 grows
    by 1. Scale-down later (p6 gone, p4 on n2, ng2 at 3): only n1, running nothing but expendable p1, is
    removed (n2 at 90%, n3 at 80% with p5 in the snapshot)."""
    owner = OwnerRef("ReplicaSet", "rs")
    n1, n2, n3 = (
        build_test_node("n1", 100, 1000),
        build_test_node("n2", 1000, 1000),
        build_test_node("n3", 1000, 1000),
    )

    def made(name: str, millicpu: int, priority: int) -> Pod:
        return Pod(name, requests={"cpu": millicpu, "memory": 0}, owner=owner, priority=priority)

    p1, p2, p3 = made("p1", 40, 1), made("p2", 400, 1), made("p3", 400, 100)
    p4, p5, p6 = made("p4", 500, 100), made("p5", 800, 100), made("p6", 1000, 100)
    state = ClusterState([n1, n2, n3])
    for p, node in ((p1, "n1"), (p2, "n2"), (p3, "n2")):
        state.assign(p, node, 0.0)
    profile, nominated = build_profile(ProfileConfig()), {"default/p5": "n3"}
    options = [
        PoolOption("ng1", n1, room=9, size=1, max_size=10),
        PoolOption("ng2", n2, room=8, size=2, max_size=10),
    ]
    ask = ScaleUpRequest(
        0.0, state, profile, [p4, p5, p6], options, frozenset(), "least-waste", np.random.default_rng(0),
        frozenset(), False, expendable_cutoff=10, nominated=nominated,
    )  # fmt: skip
    reply = scale_up(ask)
    assert reply.scale_up is not None and (reply.scale_up.group, reply.scale_up.nodes) == ("ng2", 1)
    state.assign(p4, "n2", 0.0)
    placed = scale_up(replace(ask, pending=[p4, p5])).placed
    assert [(p.name, node) for p, node in placed] == [("p5", "n3")]
    candidates = [Candidate("n1", "ng1", 1, 0), Candidate("n2", "ng2", 3, 0), Candidate("n3", "ng2", 3, 0)]
    unneeded: dict[str, float] = {}
    removed: list[str] = []
    for now in (7200.0, 10800.0):  # "Mark unneeded nodes", then "Scale down"
        request = ScaleDownRequest(
            now, state, profile, candidates, UtilizationRule(0.5, 0.5), 60.0, 0.0, -math.inf, unneeded,
            frozenset(), [], {}, frozenset(), None, unready_time_s=60.0, placed=placed, expendable_cutoff=10,
        )  # fmt: skip
        down = scale_down(request)
        unneeded, removed = down.unneeded_since, removed + [c.node for c in down.remove]
    assert removed == ["n1"]
