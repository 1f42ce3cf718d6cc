"""cluster-autoscaler 1.34's own scale-up orchestrator tests (tag ``cluster-autoscaler-1.34.5``,
``cluster-autoscaler/core/scaleup/orchestrator/orchestrator_test.go`` and
``cluster-autoscaler/core/scaleup/resource/manager_test.go``), test by test: each pytest id is
``<upstream test>`` or ``<upstream test>/<case>`` (a table's unnamed rows by their index). The scale-up
tests run one ``scale_up`` over the nodes, pods and groups of upstream's ``ScaleUpTestConfig``
(``ca_builders.orchestrate``); the expander takes the option of upstream's ``ExpansionOptionToChoose``.
A test of something gpufleet does not model is kept as a skip that says why."""

from __future__ import annotations

import pytest
from ca_builders import Orchestrated, build_gpu_node, build_test_node, build_test_pod, orchestrate

from gpufleet.autoscaling.resource_limits import (
    GPU_TYPE_LABEL,
    apply_limits,
    delta_for_node,
    exceeded,
    resources_left,
)
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU

MIB = 1024 * 1024
#: ``defaultOptions``: ``config.DefaultMaxClusterCores`` and ``DefaultMaxClusterMemory`` GiB
MAX_CORES, MAX_MEMORY = 5000 * 64, 5000 * 64 * 20 * 1024 * MIB
CPU_MEM_LEFT = {"cpu": 10, "memory": 20}  # manager_test.go's TestCheckDeltaWithinLimits

LIMIT_UNKNOWN = (
    "LimitUnknown (a total the cloud provider could not give, ResourcesLeft's error) does not arise: "
    "gpufleet always knows its nodes' resources"
)
SIMILAR_BY_HAND = (
    "the test fixes FindSimilarNodeGroups' answer (constNodeGroupSetProcessor) and each group's schedulable "
    "pod groups by hand; gpufleet derives both from the templates and the pending pods "
    "(TestScaleUpBalanceGroups, test_ca_node_group_balancing.py)"
)
PARALLEL = (
    "the cloud provider's errors on a scale-up of several groups (balancing, --parallel-scale-up) are not "
    "modelled: a launch gpufleet's cloud refuses is a stock-out, which backs its group off"
)
AUTOPROVISIONING = (
    "node group autoprovisioning (NodeGroupListProcessor, NodeGroupManager.CreateNodeGroup) is not modelled"
)
ASYNC = (
    "--async-node-groups (creating node groups asynchronously, AsyncNodeGroupStateChecker) is not modelled"
)
UNHEALTHY = (
    "node group health (ClusterStateRegistry.IsNodeGroupHealthy: too many unready or unregistered nodes, "
    "NotReadyReason) is not modelled; a group's launched, unregistered nodes are upcoming nodes"
)
LIMITER = (
    "BinpackingLimiter processors (stopping the estimates after some groups) are not modelled: every group "
    "is estimated"
)
MIN_SIZE = (
    "--enforce-node-group-min-size (ScaleUpToNodeGroupMinSize: growing a group below its min size to it) is "
    "not modelled"
)
CLOUD_ERRORS = (
    "cloud provider errors by type (authError) and the failed_scale_ups_total metric are not modelled"
)


def ready_node(name: str, millicpu: int, mem: int, gpus: int = 0) -> Node:
    """``buildTestNode(NodeConfig{Name, Cpu, Memory, Gpu, Ready: true})``."""
    return build_gpu_node(name, millicpu, mem, gpus)


def pod(name: str, millicpu: int, mem: int = 0, gpus: int = 0) -> Pod:
    """``buildTestPod(PodConfig{Name, Cpu, Memory, Gpu})`` (``RequestGpuForPod`` when ``gpus`` > 0; gpufleet's
    GPU nodes carry no taint, so ``TolerateGpuForPod`` has nothing to tolerate)."""
    built = build_test_pod(name, millicpu, mem)
    if gpus > 0:
        built.requests[GPU] = gpus
    return built


def assert_scaled(result: Orchestrated, chosen: tuple[str, int], triggered: list[str]) -> None:
    """``simpleScaleUpTest``: the group grown and by how many nodes, and the pods that triggered it."""
    assert result.chosen == chosen
    assert sorted(result.triggered) == sorted(triggered)
    assert result.reasons == {}


# --- Scale up scenarios ---------------------------------------------------------------------------


def test_scale_up_ok() -> None:
    """``TestScaleUpOK``: only ng2's template (1000m) takes the 500m pod."""
    result = orchestrate(
        [(ready_node("n1", 100, 100), "ng1"), (ready_node("n2", 1000, 1000), "ng2")],
        [(pod("p1", 80), "n1"), (pod("p2", 800), "n2")],
        [pod("p-new", 500)],
        choose="ng2",
    )
    assert_scaled(result, ("ng2", 1), ["p-new"])


def test_mixed_scale_up() -> None:
    """``TestMixedScaleUp``: a pod only ng2 takes triggers ng2's scale-up, one no group takes remains
    unschedulable, one only ng1 takes awaits evaluation (``GetRemainingPods``, ``GetPodsAwaitingEvaluation``:
    here read from the options)."""
    result = orchestrate(
        [(ready_node("n1", 100, 1000), "ng1"), (ready_node("n2", 1000, 100), "ng2")],
        [(pod("p1", 80), "n1"), (pod("p2", 800), "n2")],
        [pod("triggering", 900), pod("remaining", 2000), pod("awaiting", 0, 200)],
        choose="ng2",
    )
    assert_scaled(result, ("ng2", 1), ["triggering"])
    assert result.remaining == ["remaining"]
    assert result.awaiting == ["awaiting"]


#: ``TestZeroOrMaxNodeScaling``'s ``NodeTemplateConfigs``: node ``n`` (1000m, 1000 bytes), machine type ct4p
CT4P = ready_node("n", 1000, 1000)
ATOMIC_RUNNING = [(pod("p1", 900, 900), "n1")]


def test_zero_or_max_node_scaling_atomic_scale_up_ok() -> None:
    """``TestZeroOrMaxNodeScaling/Atomic ScaleUp OK``: one node of ng2 takes the pod; every group being
    ``ZeroOrMaxNodeScaling``, ng2 grows to its max, 5 nodes at once."""
    result = orchestrate(
        [(ready_node("n1", 900, 900), "ng1")], ATOMIC_RUNNING, [pod("p-new", 1000, 1000)],
        max_sizes={"ng1": 5, "ng2": 5}, templates={"ng2": CT4P}, atomic=True,
    )  # fmt: skip
    assert_scaled(result, ("ng2", 5), ["p-new"])


def test_zero_or_max_node_scaling_atomic_scale_up_with_similar_node_groups() -> None:
    """``TestZeroOrMaxNodeScaling/Atomic ScaleUp with similar node groups``: ng2 and ng3 share a template;
    the expander takes ng3, which grows to its max (4) alone (``defaultOptions``: no balancing; with it an
    atomic group is not balanced either, ``test_scale_up_of_an_atomic_pool_is_not_balanced``)."""
    extra = [pod(f"p-new-{k}", 1000, 1000) for k in (1, 2, 3, 4)]
    result = orchestrate(
        [(ready_node("n1", 900, 900), "ng1")], ATOMIC_RUNNING, extra, choose="ng3",
        max_sizes={"ng1": 5, "ng2": 5, "ng3": 4}, templates={"ng2": CT4P, "ng3": CT4P}, atomic=True,
    )  # fmt: skip
    assert_scaled(result, ("ng3", 4), [p.name for p in extra])
    assert result.split == {"ng3": 4}


def test_zero_or_max_node_scaling_atomic_scale_up_mixed() -> None:
    """``TestZeroOrMaxNodeScaling/Atomic ScaleUp Mixed``: ng3 grows to its max (5) for the pod only it takes;
    one pod fits no group, one only ng1 takes and awaits evaluation."""
    result = orchestrate(
        [(ready_node("n1", 500, 2000), "ng1"), (ready_node("n2", 2000, 500), "ng2")],
        [(pod("p1", 400, 1900), "n1"), (pod("p2", 1900, 400), "n2")],
        [pod("p-triggering", 1000, 1000), pod("p-remaining", 2000, 2000), pod("p-awaiting", 100, 1800)],
        choose="ng3", max_sizes={"ng1": 5, "ng2": 5, "ng3": 5}, templates={"ng3": CT4P}, atomic=True,
    )  # fmt: skip
    assert_scaled(result, ("ng3", 5), ["p-triggering"])
    assert result.remaining == ["p-remaining"]
    assert result.awaiting == ["p-awaiting"]


@pytest.mark.parametrize(
    ("maxima", "reason"),
    [
        pytest.param(
            {"cpu": 3, "memory": MAX_MEMORY},
            "2 max cluster cpu limit reached",
            id="TestZeroOrMaxNodeScaling/Atomic ScaleUp max cores limit hit",
        ),
        pytest.param(
            {"cpu": MAX_CORES, "memory": 3000},
            "2 max cluster memory limit reached",
            id="TestZeroOrMaxNodeScaling/Atomic ScaleUp max memory limit hit",
        ),
    ],
)
def test_zero_or_max_node_scaling_resource_limit_hit(maxima: dict[str, int], reason: str) -> None:
    """``TestZeroOrMaxNodeScaling``: one node of either group fits the limit, but not all the nodes below
    its max (ng1: 4, ng2: 3), which an atomic group adds at once (``IsNodeGroupResourceExceeded`` with
    ``numNodes``): both are skipped."""
    extra = [pod("p-new-1", 1000, 1000), pod("p-new-2", 1000, 1000)]
    result = orchestrate(
        [(ready_node("n1", 900, 900), "ng1")], ATOMIC_RUNNING, extra, maxima=maxima,
        max_sizes={"ng1": 5, "ng2": 3}, templates={"ng2": CT4P}, atomic=True,
    )  # fmt: skip
    assert result.chosen is None
    assert result.reasons == dict.fromkeys(["p-new-1", "p-new-2"], reason)


def test_zero_or_max_node_scaling_atomic_scale_up_max_nodes_count_limit_hit() -> None:
    """``TestZeroOrMaxNodeScaling/Atomic ScaleUp max nodes count limit hit``: ``--max-nodes-total`` 5 with 2
    nodes: ng1 is at its max, ng2's 5 nodes would pass the limit (``atomic scale-up exceeds cluster node
    count limit``)."""
    extra = [pod("p-new-1", 1000, 1000), pod("p-new-2", 1000, 1000)]
    result = orchestrate(
        [(ready_node("n1", 900, 900), "ng1"), (ready_node("n2", 900, 900), "ng1")],
        [(pod("p1", 900, 900), "n1"), (pod("p2", 900, 900), "n1")], extra, max_nodes_total=5,
        max_sizes={"ng1": 2, "ng2": 5}, templates={"ng2": CT4P}, atomic=True,
    )  # fmt: skip
    assert result.chosen is None
    want = "1 atomic scale-up exceeds cluster node count limit, 1 max node group size reached"
    assert result.reasons == dict.fromkeys(["p-new-1", "p-new-2"], want)


def _limited_cluster(ng2: str, mem: tuple[int, int]) -> list[tuple[Node, str]]:
    """n1 (2 cores) of ng1, n2 (4 cores) of ``ng2`` (``""``: no group), their memory ``mem``."""
    return [(ready_node("n1", 2000, mem[0]), "ng1"), (ready_node("n2", 4000, mem[1]), ng2)]


RUNNING = [(pod("p1", 1000), "n1"), (pod("p2", 3000), "n2")]


@pytest.mark.parametrize(
    "ng2",
    ["ng2", ""],
    ids=["TestScaleUpMaxCoresLimitHit", "TestScaleUpMaxCoresLimitHitWithNotAutoscaledGroup"],
)
def test_scale_up_max_cores_limit_hit(ng2: str) -> None:
    """``--cores-total`` 0:9 with 6 cores in the cluster (n2 counted in a group or not): ng1's two-node
    option is cut to the one node 3 cores hold (``ApplyLimits``); ng2's 4-core node would exceed the limit
    (skipped)."""
    extra = [pod("p-new-1", 2000), pod("p-new-2", 2000)]
    result = orchestrate(
        _limited_cluster(ng2, (100, 1000)), RUNNING, extra, "ng1", maxima={"cpu": 9, "memory": MAX_MEMORY}
    )
    assert_scaled(result, ("ng1", 1), ["p-new-1", "p-new-2"])
    assert result.options == [("ng1", 2)]


@pytest.mark.parametrize(
    "ng2",
    ["ng2", ""],
    ids=["TestScaleUpMaxMemoryLimitHit", "TestScaleUpMaxMemoryLimitHitWithNotAutoscaledGroup"],
)
def test_scale_up_max_memory_limit_hit(ng2: str) -> None:
    """``--memory-total`` max 1300 MiB with 1100 MiB in the cluster: ng1's three-node option is cut to the
    two nodes of 100 MiB that 200 MiB hold."""
    extra = [pod(f"p-new-{k}", 2000, 100 * MIB) for k in (1, 2, 3)]
    cluster = _limited_cluster(ng2, (100 * MIB, 1000 * MIB))
    result = orchestrate(cluster, RUNNING, extra, "ng1", maxima={"cpu": MAX_CORES, "memory": 1300 * MIB})
    assert_scaled(result, ("ng1", 2), [p.name for p in extra])


def test_no_scale_up_max_cores_limit_hit() -> None:
    """``TestNoScaleUpMaxCoresLimitHit``: 1 core and 50 bytes left: one node of either group exceeds both
    limits, so no group is estimated and each pod is told ``max cluster cpu, memory limit reached``."""
    extra = [pod("p-new-1", 2000), pod("p-new-2", 2000)]
    result = orchestrate(
        _limited_cluster("ng2", (100, 1000)), RUNNING, extra, maxima={"cpu": 7, "memory": 1150}
    )
    assert result.chosen is None
    assert result.options == []
    assert result.reasons == dict.fromkeys(["p-new-1", "p-new-2"], "2 max cluster cpu, memory limit reached")


@pytest.mark.parametrize(
    "case", ["synchronous scale up", "parallel scale up"], ids=lambda c: f"TestScaleUpTwoGroups/{c}"
)
def test_scale_up_two_groups(case: str) -> None:
    """``TestScaleUpTwoGroups`` with ``--balance-similar-node-groups``: two similar groups of one node each,
    two pods that need two nodes: each group grows by one (``GroupTargetSizes`` 2 and 2). gpufleet launches
    the groups' nodes one after another; ``--parallel-scale-up`` changes nothing it models."""
    nodes = [(ready_node(f"{g}-n1", 1500, 1000 * MIB), g) for g in ("ng1", "ng2")]
    running = [(pod("p1", 1400), "ng1-n1"), (pod("p2", 1400), "ng2-n1")]
    result = orchestrate(nodes, running, [pod("p3", 1400), pod("p4", 1400)], balance=True)
    assert result.split == {"ng1": 1, "ng2": 1}
    assert sorted(result.triggered) == ["p3", "p4"]


@pytest.mark.parametrize(
    "case",
    [
        "synchronous scale up - two failures",
        "parallel scale up - two failures",
        "synchronous scale up - one failure",
        "parallel scale up - one failure",
    ],
    ids=lambda c: f"TestCloudProviderFailingToScaleUpGroups/{c}",
)
def test_cloud_provider_failing_to_scale_up_groups(case: str) -> None:
    pytest.skip(PARALLEL)


@pytest.mark.parametrize(
    "autoscaled_n1",
    [True, False],
    ids=["TestScaleUpCapToMaxTotalNodesLimit", "TestScaleUpCapToMaxTotalNodesLimitWithNotAutoscaledGroup"],
)
def test_scale_up_cap_to_max_total_nodes_limit(autoscaled_n1: bool) -> None:
    """``TestScaleUpCapToMaxTotalNodesLimit`` (and ``...WithNotAutoscaledGroup``: ``n1`` in no group, still
    counted): with ``--max-nodes-total`` 3 and 2 nodes, ng2 grows by 1 though its option wants 3
    (``GetCappedNewNodeCount``). gpufleet caps the estimate itself (production's ``ClusterCapacityThreshold``
    limiter; the test's estimator has none), so its option is 1 node and only the pod on it triggers the
    scale-up (upstream's test counts the 3 pods of its uncapped option)."""
    result = orchestrate(
        [
            (ready_node("n1", 2000, 100 * MIB), "ng1" if autoscaled_n1 else ""),
            (ready_node("n2", 4000, 1000 * MIB), "ng2"),
        ],
        [(pod("p1", 1000), "n1"), (pod("p2", 3000), "n2")],
        [pod(f"p-new-{k}", 4000, 100 * MIB) for k in (1, 2, 3)],
        choose="ng2",
        max_nodes_total=3,
    )
    assert_scaled(result, ("ng2", 1), ["p-new-1"])
    assert result.options == [("ng2", 1)]


def test_will_consider_gpu_and_standard_pool_for_pod_which_does_not_require_gpu() -> None:
    """``TestWillConsiderGpuAndStandardPoolForPodWhichDoesNotRequireGpu``: both pools are options."""
    nodes = [
        (ready_node("gpu-node-1", 2000, 1000 * MIB, 1), "gpu-pool"),
        (ready_node("std-node-1", 2000, 1000 * MIB), "std-pool"),
    ]
    running = [
        (pod("gpu-pod-1", 2000, 1000 * MIB, 1), "gpu-node-1"),
        (pod("std-pod-1", 2000, 1000 * MIB), "std-node-1"),
    ]
    result = orchestrate(nodes, running, [pod("extra-std-pod", 2000, 1000 * MIB)], "std-pool", 100)
    assert_scaled(result, ("std-pool", 1), ["extra-std-pod"])
    assert sorted(result.options) == [("gpu-pool", 1), ("std-pool", 1)]


def test_will_consider_only_gpu_pool_for_pod_which_does_requires_gpu() -> None:
    """``TestWillConsiderOnlyGpuPoolForPodWhichDoesRequiresGpu``: only the GPU pool is an option."""
    nodes = [
        (ready_node("gpu-node-1", 2000, 1000 * MIB, 1), "gpu-pool"),
        (ready_node("std-node-1", 2000, 1000 * MIB), "std-pool"),
    ]
    running = [
        (pod("gpu-pod-1", 2000, 1000 * MIB, 1), "gpu-node-1"),
        (pod("std-pod-1", 2000, 1000 * MIB), "std-node-1"),
    ]
    result = orchestrate(nodes, running, [pod("extra-gpu-pod", 2000, 1000 * MIB, 1)], "gpu-pool", 100)
    assert_scaled(result, ("gpu-pool", 1), ["extra-gpu-pod"])
    assert result.options == [("gpu-pool", 1)]


def test_will_consider_all_pools_which_fit_two_pods_requiring_gpus() -> None:
    """``TestWillConsiderAllPoolsWhichFitTwoPodsRequiringGpus``: three 1-GPU pods need 3, 2 and 1 nodes of
    the 1-, 2- and 4-GPU pools; the standard pool is no option."""
    nodes = [(ready_node(f"gpu-{g}-node-1", 2000, 1000 * MIB, g), f"gpu-{g}-pool") for g in (1, 2, 4)] + [
        (ready_node("std-node-1", 2000, 1000 * MIB), "std-pool")
    ]
    running = [
        (pod("gpu-pod-1", 2000, 1000 * MIB, 1), "gpu-1-node-1"),
        (pod("gpu-pod-2", 2000, 1000 * MIB, 2), "gpu-2-node-1"),
        (pod("gpu-pod-3", 2000, 1000 * MIB, 4), "gpu-4-node-1"),
        (pod("std-pod-1", 2000, 1000 * MIB), "std-node-1"),
    ]
    extra = [pod(f"extra-gpu-pod-{k}", 1, 1 * MIB, 1) for k in (1, 2, 3)]
    result = orchestrate(nodes, running, extra, "gpu-1-pool", 100)
    assert_scaled(result, ("gpu-1-pool", 3), [p.name for p in extra])
    assert sorted(result.options) == [("gpu-1-pool", 3), ("gpu-2-pool", 2), ("gpu-4-pool", 1)]


# --- No scale up scenarios ------------------------------------------------------------------------


def test_no_create_node_group_max_cores_limit_hit() -> None:
    """``TestNoCreateNodeGroupMaxCoresLimitHit``."""
    pytest.skip(AUTOPROVISIONING)


def test_all_or_nothing() -> None:
    """``TestAllOrNothing``: 11 pods of 1000m, group ng (n1, max 10) can add 9 nodes: with ``allOrNothing``
    nothing grows and every pod remains unschedulable. Upstream's test estimator has no threshold, so its
    option of 11 nodes is cut after the expander (``balanceScaleUps``' capacity) and each pod's
    ``NotTriggerScaleUp`` says ``all-or-nothing``; gpufleet's estimate is limited by the group's room (the
    ``SngCapacityThreshold`` cluster-autoscaler's own binary sets), so its option of 9 pods is dropped for not
    taking them all (``Some pods can't fit ... all-or-nothing``) and no group rejects a pod: no message."""
    pods = [pod(f"pod-{i}", 1000, 100) for i in range(11)]
    result = orchestrate([(ready_node("n1", 1000, 1000), "ng")], [], pods, all_or_nothing=True)
    assert result.chosen is None
    assert result.triggered == []
    assert result.reasons == {}
    without = orchestrate([(ready_node("n1", 1000, 1000), "ng")], [], pods)
    assert without.chosen == ("ng", 9)


def test_scale_up_unhealthy() -> None:
    """``TestScaleUpUnhealthy``."""
    pytest.skip(UNHEALTHY)


def test_binpacking_limiter() -> None:
    """``TestBinpackingLimiter``."""
    pytest.skip(LIMITER)


def test_scale_up_no_help() -> None:
    """``TestScaleUpNoHelp``: no group's template takes the 500m pod: no scale-up, and the pod gets its
    ``NotTriggerScaleUp`` message (``ReasonsMessage``: the reason with the number of groups giving it)."""
    result = orchestrate([(ready_node("n1", 100, 1000), "ng1")], [(pod("p1", 80), "n1")], [pod("p-new", 500)])
    assert result.chosen is None
    assert result.options == []
    assert result.reasons == {"p-new": "1 Insufficient cpu"}


@pytest.mark.parametrize(
    "case",
    [
        "no similar node groups",
        "some similar node groups, but no schedulable pods",
        "some similar node groups and same schedulable pods, but balancing disabled",
        "some similar node groups and same schedulable pods",
        "similar node groups can schedule more pods",
        "similar node groups can schedule different/no pods",
    ],
    ids=lambda c: f"TestComputeSimilarNodeGroups/{c}",
)
def test_compute_similar_node_groups(case: str) -> None:
    pytest.skip(SIMILAR_BY_HAND)


@pytest.mark.parametrize(
    "choose",
    [None, "ng2"],
    ids=[
        "TestScaleUpBalanceGroups/balance groups",
        "TestScaleUpBalanceGroups/balance groups recomputes similar nodegroups",
    ],
)
def test_scale_up_balance_groups(choose: str | None) -> None:
    """``TestScaleUpBalanceGroups``: four similar groups (min 1; max 1, 2, 5, 5; sizes 1, 1, 1, 3) of 100m
    nodes, each node running an 80m pod; two 80m pods need two nodes, split smallest first: ng2 and ng3 grow
    to 2 (ng1, at its max, is no option). The second case's expander picks ng2's option with no similar
    groups: they are computed again (``balanceScaleUps``), as gpufleet always does."""
    sizes = {"ng1": 1, "ng2": 1, "ng3": 1, "ng4": 3}
    nodes = [(ready_node(f"{g}-node-{i}", 100, 1000), g) for g, size in sizes.items() for i in range(size)]
    running = [(pod(f"{g}-pod-{i}", 80), f"{g}-node-{i}") for g, size in sizes.items() for i in range(size)]
    extra = [pod(f"test-pod-{i}", 80) for i in range(2)]
    result = orchestrate(
        nodes, running, extra, choose, max_sizes={"ng1": 1, "ng2": 2, "ng3": 5, "ng4": 5}, balance=True
    )
    assert result.split == {"ng2": 1, "ng3": 1}


@pytest.mark.parametrize(
    "test", ["TestScaleUpAutoprovisionedNodeGroup", "TestScaleUpBalanceAutoprovisionedNodeGroups"]
)
def test_scale_up_autoprovisioned_node_group(test: str) -> None:
    pytest.skip(AUTOPROVISIONING)


def test_scale_up_to_meet_node_group_min_size() -> None:
    """``TestScaleUpToMeetNodeGroupMinSize``."""
    pytest.skip(MIN_SIZE)


@pytest.mark.parametrize("row", [0, 1, 2], ids=lambda r: f"TestScaleupAsyncNodeGroupsEnabled/{r}")
def test_scale_up_async_node_groups_enabled(row: int) -> None:
    pytest.skip(ASYNC)


def test_auth_error_handling() -> None:
    """``TestAuthErrorHandling``."""
    pytest.skip(CLOUD_ERRORS)


# --- the resource manager: orchestrator_test.go's TestCheckDeltaWithinLimits, manager_test.go ------


@pytest.mark.parametrize(
    ("left", "delta", "over"),
    [
        pytest.param({"a": 10}, {"a": 10}, [], id="orchestrator_test.go/TestCheckDeltaWithinLimits/0"),
        pytest.param({"a": 10}, {"a": 11}, ["a"], id="orchestrator_test.go/TestCheckDeltaWithinLimits/1"),
        pytest.param({"a": 10}, {"b": 10}, [], id="orchestrator_test.go/TestCheckDeltaWithinLimits/2"),
        pytest.param(
            {},
            {},
            [],
            id="orchestrator_test.go/TestCheckDeltaWithinLimits/3",
            marks=pytest.mark.skip(reason=LIMIT_UNKNOWN),
        ),
        pytest.param(
            {},
            {},
            [],
            id="orchestrator_test.go/TestCheckDeltaWithinLimits/4",
            marks=pytest.mark.skip(reason=LIMIT_UNKNOWN),
        ),
        pytest.param(
            {"a": 10, "b": 20, "c": 30},
            {"a": 11, "b": 20, "c": 31},
            ["a", "c"],
            id="orchestrator_test.go/TestCheckDeltaWithinLimits/5",
        ),
        pytest.param(
            CPU_MEM_LEFT, {"cpu": 8, "memory": 16}, [], id="manager_test.go/TestCheckDeltaWithinLimits/0"
        ),
        pytest.param(
            CPU_MEM_LEFT,
            {"cpu": 12, "memory": 16},
            ["cpu"],
            id="manager_test.go/TestCheckDeltaWithinLimits/1",
        ),
        pytest.param(
            CPU_MEM_LEFT,
            {"cpu": 8, "memory": 32},
            ["memory"],
            id="manager_test.go/TestCheckDeltaWithinLimits/2",
        ),
        pytest.param(
            CPU_MEM_LEFT,
            {"cpu": 16, "memory": 96},
            ["cpu", "memory"],
            id="manager_test.go/TestCheckDeltaWithinLimits/3",
        ),
    ],
)
def test_check_delta_within_limits(left: dict[str, int], delta: dict[str, int], over: list[str]) -> None:
    """``CheckDeltaWithinLimits`` (orchestrator_test.go's table, then manager_test.go's): the resources
    exceeded, sorted."""
    assert exceeded(left, delta) == over


def _group_node(cpu: int, mem: int) -> Node:
    """``newNode``: ``BuildTestNode(name, cpu*1000, mem)``."""
    return build_test_node("n", cpu * 1000, mem)


@pytest.mark.parametrize(("cpu", "mem"), [(8, 16), (4, 32)], ids=["TestDeltaForNode/0", "TestDeltaForNode/1"])
def test_delta_for_node(cpu: int, mem: int) -> None:
    assert delta_for_node(_group_node(cpu, mem)) == {"cpu": cpu, "memory": mem}


@pytest.mark.parametrize(
    ("size", "cpu", "mem", "left"),
    [
        pytest.param(5, 8, 16, {"cpu": 960, "memory": 920}, id="TestResourcesLeft/0"),
        pytest.param(100, 4, 8, {"cpu": 600, "memory": 200}, id="TestResourcesLeft/1"),
    ],
)
def test_resources_left(size: int, cpu: int, mem: int, left: dict[str, int]) -> None:
    """``ResourcesLeft`` with 1000 cores and 1000 bytes: the group's size times its template."""
    assert resources_left({"cpu": 1000, "memory": 1000}, [(_group_node(cpu, mem), size)]) == left


@pytest.mark.parametrize(
    ("left", "count"),
    [
        pytest.param({"cpu": 80, "memory": 160}, 10, id="TestApplyLimits/0"),
        pytest.param({"cpu": 80, "memory": 100}, 6, id="TestApplyLimits/1"),
        pytest.param({"cpu": 39, "memory": 160}, 4, id="TestApplyLimits/2"),
        pytest.param({"cpu": 40, "memory": 80}, 5, id="TestApplyLimits/3"),
    ],
)
def test_apply_limits(left: dict[str, int], count: int) -> None:
    """``ApplyLimits`` of 10 new nodes of 8 cores and 16 bytes."""
    assert apply_limits(10, left, delta_for_node(_group_node(8, 16))) == count


def test_resource_manager_with_gpu_resource() -> None:
    """``TestResourceManagerWithGpuResource``: a limit of 16 GPUs of type ``gpu`` (the node's GPU label,
    here ``nvidia.com/gpu.product``) with one 4-GPU node: 12 left, 3 more nodes."""
    node = build_gpu_node("n1", 8000, 16, 4)
    node.labels[GPU_TYPE_LABEL] = "gpu"
    delta = delta_for_node(node)
    assert delta == {"cpu": 8, "memory": 16, "gpu": 4}
    left = resources_left({"cpu": 320, "memory": 640, "gpu": 16}, [(node, 1)])
    assert left == {"cpu": 312, "memory": 624, "gpu": 12}
    assert exceeded(left, delta) == []
    assert apply_limits(10, left, delta) == 3
