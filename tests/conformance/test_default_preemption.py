"""kube-scheduler v1.34.10's own DefaultPreemption tables,
``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go``, case by case:
each pytest id is ``<upstream test>/<upstream case>``. A case gpufleet cannot express is kept as a
skip that says why. Upstream also counts filter calls (``expectedNumFilterCalled``), an
implementation detail not ported; ``TestPostFilter``'s async-API variant is the same case twice."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from preemption_builders import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    NEG,
    ONE_POD,
    SMALL,
    VERY_HIGH,
    VERY_LARGE,
    Placed,
    PreemptionCase,
    anti_affinity_exists,
    labelled_nodes,
    node,
    pdb,
    pod,
    spread_exists,
)

from gpufleet.model.pod import Pod
from gpufleet.scheduling.framework import Code

EXTENDERS = "scheduler extenders (KubeSchedulerConfiguration.extenders) are not modelled"
TEST_PLUGIN = "a test-only PreFilter plugin whose AddPod/RemovePod fails: gpufleet has no third-party plugins"
FAKE_FILTER = (
    "a test-only filter plugin (FakeFilter/TrueFilter/FalseFilter/MatchFilter) has no gpufleet analogue"
)
CANDIDATE_SAMPLE = (
    "minCandidateNodesPercentage/minCandidateNodesAbsolute and the random offset are not modelled: "
    "gpufleet dry-runs every node (upstream does too below 100 nodes with the default args)"
)
DISRUPTED_PODS = (
    "PodDisruptionBudget status.disruptedPods (evictions the disruption controller has not yet seen) "
    "is not modelled: gpufleet's budgets are recounted at once"
)
CUSTOM_HOOKS = (
    "IsEligiblePod/MoreImportantPod hooks are Go API for out-of-tree plugins, with no configuration field"
)


FOO_SPREAD = (spread_exists(1, "zone", "foo"), spread_exists(1, "hostname", "foo"))


def spread_pods(a1: int, a2: int, prefix: str) -> list[Placed]:
    """The topology-spread cases' pods, all labelled ``foo``: two on node-a (of priorities ``a1`` and
    ``a2``), one low on node-b, two high on node-x."""
    spec = [("a1", a1, "node-a"), ("a2", a2, "node-a"), ("b1", LOW, "node-b"), ("x1", HIGH, "node-x")]
    spec.append(("x2", HIGH, "node-x"))
    return [Placed(pod(f"{prefix}-{n}", prio, labels={"foo": ""}), at) for n, prio, at in spec]


# --- TestPostFilter ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PostFilterCase:
    preemptor: object
    nodes: list[object]
    placed: list[Placed]
    unschedulable: list[str]  # filteredNodesStatuses' Unschedulable nodes (the rest: unresolvable)
    nominated: str | None
    message: str = ""
    pdbs: list[object] = field(default_factory=list)


def _post_filter_cases() -> list[object]:
    node_res = {"cpu": 200, "memory": 400}
    one = [node("node1", ONE_POD)]
    two = [node("node1", ONE_POD), node("node2", ONE_POD)]
    p1_on_1 = [Placed(pod("p1"), "node1")]

    def case(name: str, c: PostFilterCase | None = None, skip: str = "") -> object:
        marks = [pytest.mark.skip(reason=skip)] if skip else []
        return pytest.param(c, id=f"TestPostFilter/{name}", marks=marks)

    return [
        case(
            "pod with higher priority can be made schedulable",
            PostFilterCase(pod("p", HIGH), one, p1_on_1, ["node1"], "node1"),
        ),
        case(
            "pod with tied priority is still unschedulable",
            PostFilterCase(
                pod("p"),
                one,
                p1_on_1,
                ["node1"],
                None,
                "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            ),
        ),
        case(
            "preemption should respect filteredNodesStatuses",
            PostFilterCase(
                pod("p", HIGH),
                one,
                p1_on_1,
                [],
                None,
                "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            ),
        ),
        case(
            "preemption should respect absent NodeToStatusMap entry meaning UnschedulableAndUnresolvable",
            PostFilterCase(
                pod("p", HIGH),
                one,
                p1_on_1,
                [],
                None,
                "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            ),
        ),
        case(
            "pod can be made schedulable on one node",
            PostFilterCase(
                pod("p", MID),
                two,
                [Placed(pod("p1", HIGH), "node1"), Placed(pod("p2", LOW), "node2")],
                ["node1", "node2"],
                "node2",
            ),
        ),
        case(
            "pod can be made schedulable on minHighestPriority node",
            PostFilterCase(
                pod("p", VERY_HIGH),
                two,
                [
                    Placed(pod("p1", HIGH, labels={"pdb": "non-violating"}), "node1"),
                    Placed(pod("p2", LOW, labels={"pdb": "violating"}), "node1"),
                    Placed(pod("p3", MID, labels={"pdb": "violating"}), "node2"),
                ],
                ["node1", "node2"],
                "node2",
                pdbs=[
                    pdb("violating-pdb", {"pdb": "violating"}, 0),
                    pdb("non-violating-pdb", {"pdb": "non-violating"}, 2**31 - 1),
                ],
            ),
        ),
        case("preemption result filtered out by extenders", skip=EXTENDERS),
        case(
            "no candidate nodes found, no enough resource after removing low priority pods",
            PostFilterCase(
                pod("p", HIGH, LARGE),
                [node("node1", node_res), node("node2", node_res)],
                [Placed(pod("p1"), "node1"), Placed(pod("p2"), "node2")],
                ["node1", "node2"],
                None,
                "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
            ),
        ),
        case(
            "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
            PostFilterCase(
                pod("p", HIGH, LARGE),
                [node("node1", ONE_POD), node("node2", node_res), node("node3", ONE_POD)],
                [
                    Placed(pod("p1", HIGH), "node1"),
                    Placed(pod("p2"), "node2"),
                    Placed(pod("p3", HIGH), "node3"),
                ],
                ["node1", "node2", "node3"],
                None,
                "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                "2 No preemption victims found for incoming pod.",
            ),
        ),
        case(
            "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes "
            "don't have enough CPU resource",
            PostFilterCase(
                pod("p", HIGH, LARGE),
                [node(f"node{k}", node_res) for k in (1, 2, 3, 4)],
                [Placed(pod("p1"), "node1"), Placed(pod("p2"), "node2")],
                ["node1", "node2"],
                None,
                "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                "2 Preemption is not helpful for scheduling.",
            ),
        ),
        case("only one node but failed with TestPlugin", skip=TEST_PLUGIN),
        case("one failed with TestPlugin and the other pass", skip=TEST_PLUGIN),
    ]


@pytest.mark.parametrize("c", _post_filter_cases())
def test_post_filter(c: PostFilterCase) -> None:
    """``DefaultPreemption.PostFilter``: the nominated node, or Unschedulable with upstream's message."""
    cluster = PreemptionCase(c.nodes, c.placed, c.pdbs)  # type: ignore[arg-type]
    result = cluster.post_filter(c.preemptor, c.unschedulable)  # type: ignore[arg-type]
    assert result.nominated == c.nominated
    if c.nominated is not None:
        assert result.status.code == Code.SUCCESS
    else:
        assert (result.status.code, result.status.reasons) == (Code.UNSCHEDULABLE, (c.message,))


# --- TestDryRunPreemption ---------------------------------------------------------------------


def _dry_run_cases() -> list[object]:
    def case(
        name: str,
        nodes: int | list[str] = 0,
        preemptor: object = None,
        placed: list[Placed] | None = None,
        expected: dict[str, tuple[list[str], int]] | None = None,
        pdbs: list[object] | None = None,
        skip: str = "",
    ) -> object:
        marks = [pytest.mark.skip(reason=skip)] if skip else []
        cluster = (nodes, preemptor, placed or [], pdbs or [], expected or {})
        return pytest.param(cluster, id=f"TestDryRunPreemption/{name}", marks=marks)

    def on(node_name: str, *pods: tuple[str, int, dict[str, int], float]) -> list[Placed]:
        return [Placed(pod(n, prio, req), node_name, start) for n, prio, req, start in pods]

    foo = {"app": "foo"}
    same_pdb = [
        Placed(pod("p1.1", MID, MEDIUM, labels=foo), "node1"),
        Placed(pod("p1.2", MID, MEDIUM, labels=foo), "node1"),
    ]
    return [
        case("a pod that does not fit on any node", skip=FAKE_FILTER),
        case("a pod that fits with no preemption", skip=FAKE_FILTER),
        case("a pod that fits on one node with no preemption", skip=FAKE_FILTER),
        case(
            "a pod that fits on both nodes when lower priority pods are preempted",
            2,
            pod("p", HIGH, LARGE),
            on("node1", ("p1", MID, LARGE, 0)) + on("node2", ("p2", MID, LARGE, 0)),
            {"node1": (["p1"], 0), "node2": (["p2"], 0)},
        ),
        case(
            "a pod that would fit on the nodes, but other pods running are higher priority, "
            "no preemption would happen",
            2,
            pod("p", LOW, LARGE),
            on("node1", ("p1", MID, LARGE, 0)) + on("node2", ("p2", MID, LARGE, 0)),
            {},
        ),
        case(
            "medium priority pod is preempted, but lower priority one stays as it is small",
            2,
            pod("p", HIGH, LARGE),
            on("node1", ("p1.1", LOW, SMALL, 0), ("p1.2", MID, LARGE, 0))
            + on("node2", ("p2", MID, LARGE, 0)),
            {"node1": (["p1.2"], 0), "node2": (["p2"], 0)},
        ),
        case(
            "mixed priority pods are preempted",
            2,
            pod("p", HIGH, LARGE),
            on(
                "node1",
                ("p1.1", MID, SMALL, 0),
                ("p1.2", LOW, SMALL, 0),
                ("p1.3", MID, MEDIUM, 0),
                ("p1.4", HIGH, SMALL, 0),
            )
            + on("node2", ("p2", HIGH, LARGE, 0)),
            {"node1": (["p1.2", "p1.3"], 0)},
        ),
        case(
            "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
            2,
            pod("p", HIGH, LARGE),
            on(
                "node1",
                ("p1.1", LOW, SMALL, 5),
                ("p1.2", LOW, SMALL, 4),
                ("p1.3", MID, MEDIUM, 3),
                ("p1.4", HIGH, SMALL, 2),
            )
            + on("node2", ("p2", HIGH, LARGE, 1)),
            {"node1": (["p1.1", "p1.3"], 0)},
        ),
        case(
            "pod with anti-affinity is preempted",
            2,
            pod("p", HIGH, SMALL, labels={"foo": ""}),
            [
                Placed(
                    pod("p1.1", LOW, SMALL, {"foo": ""}, affinity=anti_affinity_exists("foo", "hostname")),
                    "node1",
                ),
                *on("node1", ("p1.2", MID, SMALL, 0), ("p1.3", HIGH, SMALL, 0)),
                *on("node2", ("p2", HIGH, SMALL, 0)),
            ],
            {"node1": (["p1.1"], 0)},
        ),
        case(
            "preemption to resolve pod topology spread filter failure",
            ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
            pod("p", HIGH, labels={"foo": ""}, spread=FOO_SPREAD),
            spread_pods(MID, LOW, "pod"),
            {"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)},
        ),
        case(
            "get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
            skip=FAKE_FILTER,
        ),
        case(
            "preemption with violation of same pdb",
            1,
            pod("p", HIGH, VERY_LARGE),
            same_pdb,
            {"node1": (["p1.1", "p1.2"], 1)},
            [pdb("pdb", foo, 1)],
        ),
        case(
            # the disruptedPods entry names a pod that is no victim: the outcome is the same without it
            "preemption with violation of the pdb with pod whose eviction was processed, "
            "the victim doesn't belong to DisruptedPods",
            1,
            pod("p", HIGH, VERY_LARGE),
            same_pdb,
            {"node1": (["p1.1", "p1.2"], 1)},
            [pdb("pdb", foo, 1)],
        ),
        case(
            "preemption with violation of the pdb with pod whose eviction was processed, "
            "the victim belongs to DisruptedPods",
            skip=DISRUPTED_PODS,
        ),
        case(
            "preemption with violation of the pdb with pod whose eviction was processed, "
            "the victim which belongs to DisruptedPods is treated as 'nonViolating'",
            skip=DISRUPTED_PODS,
        ),
        case(
            "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2", skip=CANDIDATE_SAMPLE
        ),
        case(
            "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2", skip=CANDIDATE_SAMPLE
        ),
        case("preemption offset across multiple scheduling cycles and wrap around", skip=CANDIDATE_SAMPLE),
        case(
            "preemption looks past numCandidates until a non-PDB violating node is found",
            skip=CANDIDATE_SAMPLE,
        ),
    ]


@pytest.mark.parametrize("c", _dry_run_cases())
def test_dry_run_preemption(
    c: tuple[int | list[str], object, list[Placed], list[object], dict[str, object]],
) -> None:
    """``DryRunPreemption`` (``SelectVictimsOnNode`` on each node of ``veryLargeRes``): each candidate
    node with its victims (by name) and ``NumPDBViolations``."""
    nodes, preemptor, placed, pdbs, expected = c
    names = nodes if isinstance(nodes, list) else [f"node{k}" for k in range(1, nodes + 1)]
    cluster = PreemptionCase(labelled_nodes(names, VERY_LARGE), placed, pdbs)  # type: ignore[arg-type]
    assert cluster.dry_run(preemptor) == expected  # type: ignore[arg-type]


# --- TestSelectBestCandidate ------------------------------------------------------------------


def _select_best_cases() -> list[object]:
    def case(
        name: str,
        preemptor: object,
        nodes: int,
        pods: list[tuple[str, int, dict[str, int], float]],
        expected: list[str],
    ) -> object:
        placed = [Placed(pod(n, prio, req), f"node{n[1]}", start) for n, prio, req, start in pods]
        return pytest.param((nodes, preemptor, placed, expected), id=f"TestSelectBestCandidate/{name}")

    p = pod("p", HIGH, VERY_LARGE)
    return [
        case(
            "a pod that fits on both nodes when lower priority pods are preempted",
            pod("p", HIGH, LARGE),
            2,
            [("p1", MID, LARGE, 0), ("p2", MID, LARGE, 0)],
            ["node1", "node2"],
        ),
        case(
            "node with min highest priority pod is picked",
            p,
            3,
            [
                ("p1.1", MID, MEDIUM, 0),
                ("p1.2", MID, LARGE, 0),
                ("p2.1", MID, MEDIUM, 0),
                ("p2.2", LOW, MEDIUM, 0),
                ("p3.1", LOW, MEDIUM, 0),
                ("p3.2", LOW, MEDIUM, 0),
            ],
            ["node3"],
        ),
        case(
            "when highest priorities are the same, minimum sum of priorities is picked",
            p,
            3,
            [
                ("p1.1", MID, MEDIUM, 0),
                ("p1.2", MID, LARGE, 0),
                ("p2.1", MID, LARGE, 0),
                ("p2.2", LOW, MEDIUM, 0),
                ("p3.1", MID, MEDIUM, 0),
                ("p3.2", MID, MEDIUM, 0),
            ],
            ["node2"],
        ),
        case(
            "when highest priority and sum are the same, minimum number of pods is picked",
            p,
            3,
            [
                ("p1.1", MID, SMALL, 0),
                ("p1.2", NEG, SMALL, 0),
                ("p1.3", MID, SMALL, 0),
                ("p1.4", NEG, SMALL, 0),
                ("p2.1", MID, LARGE, 0),
                ("p2.2", NEG, MEDIUM, 0),
                ("p3.1", MID, MEDIUM, 0),
                ("p3.2", NEG, SMALL, 0),
                ("p3.3", LOW, SMALL, 0),
            ],
            ["node2"],
        ),
        case(
            "sum of adjusted priorities is considered",
            p,
            3,
            [
                ("p1.1", MID, SMALL, 0),
                ("p1.2", NEG, SMALL, 0),
                ("p1.3", NEG, SMALL, 0),
                ("p2.1", MID, LARGE, 0),
                ("p2.2", NEG, MEDIUM, 0),
                ("p3.1", MID, MEDIUM, 0),
                ("p3.2", NEG, SMALL, 0),
                ("p3.3", LOW, SMALL, 0),
            ],
            ["node2"],
        ),
        case(
            "non-overlapping lowest high priority, sum priorities, and number of pods",
            pod("p", VERY_HIGH, VERY_LARGE),
            4,
            [
                ("p1.1", MID, SMALL, 0),
                ("p1.2", LOW, SMALL, 0),
                ("p1.3", LOW, SMALL, 0),
                ("p2.1", HIGH, LARGE, 0),
                ("p3.1", MID, MEDIUM, 0),
                ("p3.2", LOW, SMALL, 0),
                ("p3.3", LOW, SMALL, 0),
                ("p3.4", LOW, MEDIUM, 0),
                ("p4.1", MID, MEDIUM, 0),
                ("p4.2", MID, SMALL, 0),
                ("p4.3", MID, SMALL, 0),
                ("p4.4", NEG, SMALL, 0),
            ],
            ["node1"],
        ),
        case(
            "same priority, same number of victims, different start time for each node's pod",
            p,
            3,
            [
                ("p1.1", MID, MEDIUM, 2),
                ("p1.2", MID, MEDIUM, 2),
                ("p2.1", MID, MEDIUM, 3),
                ("p2.2", MID, MEDIUM, 3),
                ("p3.1", MID, MEDIUM, 1),
                ("p3.2", MID, MEDIUM, 1),
            ],
            ["node2"],
        ),
        case(
            "same priority, same number of victims, different start time for all pods",
            p,
            3,
            [
                ("p1.1", MID, MEDIUM, 4),
                ("p1.2", MID, MEDIUM, 2),
                ("p2.1", MID, MEDIUM, 5),
                ("p2.2", MID, MEDIUM, 1),
                ("p3.1", MID, MEDIUM, 3),
                ("p3.2", MID, MEDIUM, 6),
            ],
            ["node3"],
        ),
        case(
            "different priority, same number of victims, different start time for all pods",
            p,
            3,
            [
                ("p1.1", LOW, MEDIUM, 4),
                ("p1.2", MID, MEDIUM, 2),
                ("p2.1", MID, MEDIUM, 6),
                ("p2.2", LOW, MEDIUM, 1),
                ("p3.1", LOW, MEDIUM, 3),
                ("p3.2", MID, MEDIUM, 5),
            ],
            ["node2"],
        ),
    ]


@pytest.mark.parametrize("c", _select_best_cases())
def test_select_best_candidate(c: tuple[int, object, list[Placed], list[str]]) -> None:
    """``SelectCandidate`` (``pickOneNodeForPreemption``): the node chosen is one upstream accepts,
    and gpufleet's equally ranked candidates are all among them."""
    nodes, preemptor, placed, expected = c
    cluster = PreemptionCase([node(f"node{k}", VERY_LARGE) for k in range(1, nodes + 1)], placed)
    best = cluster.best(preemptor)  # type: ignore[arg-type]
    assert best and set(best) <= set(expected)


# --- TestCustomSelection, TestCustomOrdering --------------------------------------------------

_CUSTOM = [
    ("TestCustomSelection", "filter for matching pod label: high priority"),
    ("TestCustomSelection", "filter for matching pod label: mid priority"),
    ("TestCustomSelection", "filter for matching pod label: low priority"),
    ("TestCustomSelection", "filter for matching victim node: high priority"),
    ("TestCustomSelection", "filter for matching victim node: mid priority"),
    ("TestCustomSelection", "filter for matching victim node: low priority"),
    ("TestCustomSelection", "only pods at or above specified priority can preempted: high priority"),
    ("TestCustomSelection", "only pods at or above specified priority can preempted: mid priority"),
    ("TestCustomSelection", "only pods at or below specified priority can be preempted: high priority"),
    ("TestCustomOrdering", "select newest pods"),
    ("TestCustomOrdering", "select alphabetically-last pods"),
]


@pytest.mark.parametrize(
    "case", [pytest.param(n, id=f"{t}/{n}", marks=pytest.mark.skip(reason=CUSTOM_HOOKS)) for t, n in _CUSTOM]
)
def test_custom_preemption_hooks(case: str) -> None:
    """Kept for the count: upstream tests Go hooks that no configuration reaches."""


# --- TestPodEligibleToPreemptOthers ---------------------------------------------------------


def _eligible_cases() -> list[object]:
    def case(
        name: str, preemptor: object, placed: list[Placed], unresolvable: bool, expected: bool
    ) -> object:
        return pytest.param(
            (preemptor, placed, unresolvable, expected), id=f"TestPodEligibleToPreemptOthers/{name}"
        )

    victim = Placed(pod("p1", LOW), "node1", terminating=True, preempted=True)
    deleted = Placed(pod("p1", LOW), "node1", terminating=True)
    return [
        case("Pod with nominated node", pod("p_with_nominated_node", HIGH), [deleted], True, True),
        case("Pod without nominated node", pod("p_without_nominated_node", HIGH), [], False, True),
        case(
            "Pod with 'PreemptNever' preemption policy",
            pod("p_with_preempt_never_policy", HIGH, preemption_policy="Never"),
            [],
            False,
            False,
        ),
        case(
            "preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
            pod("p_with_nominated_node", HIGH),
            [victim],
            False,
            False,
        ),
        case("non-victim Pods terminating", pod("p_with_nominated_node", HIGH), [deleted], False, True),
    ]


@pytest.mark.parametrize("c", _eligible_cases())
def test_pod_eligible_to_preempt_others(c: tuple[Pod, list[Placed], bool, bool]) -> None:
    """``PodEligibleToPreemptOthers``: the pod's nominated node (``node1`` where the case has pods) is
    UnschedulableAndUnresolvable for it when ``unresolvable``, else not."""
    preemptor, placed, unresolvable, expected = c
    cluster = PreemptionCase([node("node1", VERY_LARGE)], placed)
    nominated = "node1" if placed else None
    request = cluster.request(preemptor, [] if unresolvable else ["node1"], nominated)
    assert (cluster.plugin.not_eligible(request) is None) == expected


# --- TestPreempt ------------------------------------------------------------------------------

_BASIC = [
    Placed(pod("p1.1", LOW, SMALL), "node1"),
    Placed(pod("p1.2", LOW, SMALL), "node1"),
    Placed(pod("p2.1", HIGH, LARGE), "node2"),
    Placed(pod("p3.1", MID, MEDIUM), "node3"),
]


def _preempt_cases() -> list[object]:
    def case(name: str, skip: str = "", **kw: object) -> object:
        marks = [pytest.mark.skip(reason=skip)] if skip else []
        return pytest.param(kw or None, id=f"TestPreempt/{name}", marks=marks)

    return [
        case(
            "basic preemption logic",
            preemptor=pod("p", HIGH, VERY_LARGE),
            nominated="node1",
            victims=("default/p1.1", "default/p1.2"),
        ),
        case(
            "preemption for topology spread constraints",
            preemptor=pod("p", HIGH, labels={"foo": ""}, spread=FOO_SPREAD),
            nominated="node-b",
            victims=("default/p-b1",),
            nodes=["node-a/zone1", "node-b/zone1", "node-x/zone2"],
            placed=spread_pods(HIGH, HIGH, "p"),
        ),
        case("Scheduler extenders allow only node1, otherwise node3 would have been chosen", skip=EXTENDERS),
        case("Scheduler extenders do not allow any preemption", skip=EXTENDERS),
        case(
            "One scheduler extender allows only node1, the other returns error but ignorable. "
            "Only node1 would be chosen",
            skip=EXTENDERS,
        ),
        case(
            "One scheduler extender allows only node1, but it is not interested in given pod, "
            "otherwise node1 would have been chosen",
            skip=EXTENDERS,
        ),
        case(
            "no preempting in pod",
            preemptor=pod("p", HIGH, VERY_LARGE, preemption_policy="Never"),
            nominated=None,
            victims=(),
        ),
        case(
            "PreemptionPolicy is nil",
            preemptor=pod("p", HIGH, VERY_LARGE),
            nominated="node1",
            victims=("default/p1.1", "default/p1.2"),
        ),
    ]


@pytest.mark.parametrize("c", _preempt_cases())
def test_preempt(c: dict[str, object]) -> None:
    """``Evaluator.Preempt`` on three ``veryLargeRes`` nodes: the nominated node and the pods it
    preempts (``preemptionPolicy: Never``: none, and no nomination)."""
    names: list[str] = c.get("nodes", ["node1", "node2", "node3"])  # type: ignore[assignment]
    cluster = PreemptionCase(labelled_nodes(names, VERY_LARGE), c.get("placed", _BASIC))  # type: ignore[arg-type]
    result = cluster.post_filter(c["preemptor"], [n.split("/")[0] for n in names])  # type: ignore[arg-type]
    assert (result.nominated, result.victims) == (c["nominated"], c["victims"])
