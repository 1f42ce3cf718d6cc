"""cluster-autoscaler 1.34's own tables for its cluster state registry and its node groups' backoff (tag
``cluster-autoscaler-1.34.5``: ``cluster-autoscaler/clusterstate/clusterstate_test.go`` and
``cluster-autoscaler/utils/backoff/exponential_backoff_test.go``), case by case, for what gpufleet models:
how registered nodes count (``updateReadinessStats``: Ready, ``Unready``, ``NotStarted`` within 15 minutes
of registering), the acceptable range of a group's size (``updateAcceptableRanges``), the cluster's and a
group's health (``IsClusterHealthy``, ``IsNodeGroupHealthy``: ``autoscaling.cluster_state``, which the loop
asks every scan), each group's one scale-up request and its time-out (``registerOrUpdateScaleUpNoLock``,
``updateScaleRequests``: ``register_scale_up``, ``update_scale_requests``), and the exponential backoff of
a group after failed scale-ups (``sim.node_pools``' ``PoolRuntime.back_off``/``backed_off``).

Upstream's registry is fed nodes and a test cloud provider; here its inputs are the readiness each case's
nodes give (``BuildTestNode`` nodes are registered long before ``now``: a node not Ready is ``Unready``
unless the case sets a recent ``CreationTimestamp``), each group's target size and the scale-up in flight.
Times are seconds from the case's ``now``. Most cases configure ``OkTotalUnreadyCount: 1`` and
``MaxTotalUnreadyPercentage: 10``; gpufleet's defaults are the flags' (3 and 45), which
``tests/control/test_cluster_and_node_group_health.py`` runs through the loop. Upstream's status ConfigMap
(``GetStatus``) and metrics are not modelled: the cases' assertions on them are not ported."""

from __future__ import annotations

import numpy as np
import pytest

from gpufleet.autoscaling.cluster_state import (
    AcceptableRange,
    Readiness,
    ScaleUpRequest,
    acceptable_range,
    cluster_healthy,
    node_group_healthy,
    readiness,
    register_scale_up,
    update_scale_requests,
)
from gpufleet.model.node import Node
from gpufleet.model.quantity import go_duration
from gpufleet.model.simulation import AutoscalerSettings, NodePool
from gpufleet.sim.node_pools import PoolRuntime

OK, PERCENT = 1, 10.0  # the cases' ClusterStateRegistryConfig
LONG_AGO = -365 * 24 * 3600.0  # BuildTestNode's creation time, long before any case's now
MINUTE = 60.0

TARGET_REVERTS = (
    "gpufleet's group size is its launched nodes: no cloud reverts a target size behind the registry's back "
    "(HasNodeGroupStartedScaleUp keeps the request then)"
)
SCALE_DOWN_REQUESTS = (
    "gpufleet keeps no scale-down requests: they only widen AcceptableRange.MaxNodes, read by the incorrect "
    "node group size fixer gpufleet does not model (its cloud's groups are the registry's)"
)
UPCOMING = (
    "gpufleet's upcoming nodes are a group's launches whose GPUs are not registered (NodeGroup.upcoming), "
    "less those registered 15 minutes or more before (Unready: cluster_autoscaler_health.upcoming_nodes): "
    "a group's target is its launched nodes, so target less Ready/Unready/LongUnregistered is that count; "
    "a node down within 15 minutes of registering (NotStarted, upcoming upstream) is not counted"
)
CLOUD_INSTANCES = (
    "the cloud provider's instance list (unregistered instances, HasInstance, the ToBeDeleted taint of a "
    "node deleted on the cloud side) is not modelled: gpufleet's launches are its groups' own nodes"
)
INCORRECT_SIZE = "fixNodeGroupSize's incorrect node group sizes are not modelled (no cloud-side target size)"
FAILURES_LIST = (
    "GetScaleUpFailures feeds metrics; gpufleet's event log keeps each scale-up-failed/provision-timeout"
)
CLUSTER_SIZE = "GetAutoscaledNodesCount feeds metrics and the status ConfigMap, not modelled"
TRUNCATE = "the status ConfigMap's message truncation is not modelled"
REGISTERED = "every gpufleet node group is known to the loop from the start (no registry to register in)"
ASYNC_GROUPS = "asynchronous node group creation (AsyncNodeGroupStateChecker) is not modelled"
NOT_READY_TAINT = (
    "gpufleet's nodes have no node.kubernetes.io/not-ready startup taint: a node's readiness is its Ready "
    "condition alone (GetNodeReadiness also reads the taint)"
)
REMOVE_BACKOFF = (
    "gpufleet never lifts a group's backoff early, and neither does 1.34's core: RemoveBackoff has no "
    "caller outside the tests"
)


def ready(n: int) -> tuple[str, ...]:
    return tuple(f"r{k}" for k in range(n))


def nodes(*specs: tuple[str, float | None]) -> Readiness:
    """The readiness at 0 s of nodes given as (name, None) when Ready, else (name, registered at)."""
    unready = {name: since for name, since in specs if since is not None}
    return readiness((name for name, _ in specs), unready, 0.0)


# -- readiness and health --------------------------------------------------------------------------------
def test_ok_with_scale_up() -> None:
    """``TestOKWithScaleUp``: ng1 (target 5, one Ready node, a scale-up of 4 registered at now with
    maxNodeProvisionTime 1m, not timed out) and ng2 (target 1, one Ready): the cluster and ng1 healthy, no
    scale-up failure. (Its status ConfigMap's ScaleUp InProgress/NoActivity: not modelled.)"""
    requests: dict[str, ScaleUpRequest] = {}
    register_scale_up(requests, "ng1", 4, 0.0, MINUTE)
    assert update_scale_requests(requests, {"ng1": 4}, 0.0) == []
    total = nodes(("ng1-1", None), ("ng2-1", None))
    assert cluster_healthy(total, 2, OK, PERCENT)
    ng1 = nodes(("ng1-1", None))
    assert node_group_healthy(
        acceptable_range(5, scale_up_increase=requests["ng1"].increase), ng1, OK, PERCENT
    )


def test_empty_ok() -> None:
    """``TestEmptyOK``: ng1 of target 0 and no node is healthy; after a scale-up of 3 (target 3) it still
    is, its acceptable minimum 0 (``MinNodes == 0 && CurrentTarget > 0``)."""
    assert cluster_healthy(Readiness(), 0, OK, PERCENT)
    assert node_group_healthy(acceptable_range(0), None, OK, PERCENT)
    assert node_group_healthy(acceptable_range(3, scale_up_increase=3), None, OK, PERCENT)


@pytest.mark.skip(reason=TARGET_REVERTS)
def test_has_node_group_started_scale_up() -> None:
    """``TestHasNodeGroupStartedScaleUp/Target size reverts back to zero``."""


@pytest.mark.parametrize(
    ("target", "increase", "want"),
    [
        pytest.param(1, 0, AcceptableRange(1, 1, 1), id="failed scale up by 3 nodes"),
        pytest.param(6, 1, AcceptableRange(5, 6, 6), id="partially failed scale up"),
        pytest.param(4, 3, AcceptableRange(1, 4, 4), id="scale up ongoing, no change"),
        pytest.param(4, 0, AcceptableRange(4, 4, 4), id="no scale up, no change"),
    ],
)
def test_recalculate_state_after_node_group_size_changed(
    target: int, increase: int, want: AcceptableRange
) -> None:
    """``TestRecalculateStateAfterNodeGroupSizeChanged``: ``Recalculate`` gives the range of the new target
    less the scale-up in flight. (Its upcoming count: see ``test_upcoming_nodes``' reason.)"""
    assert acceptable_range(target, scale_up_increase=increase) == want


def test_ok_one_unready_node() -> None:
    """``TestOKOneUnreadyNode``: one of two nodes Unready (not more than OkTotalUnreadyCount 1): healthy."""
    total = nodes(("ng1-1", None), ("ng2-1", LONG_AGO))
    assert total == Readiness(("ng1-1",), ("ng2-1",))
    assert cluster_healthy(total, 2, OK, PERCENT)
    assert node_group_healthy(acceptable_range(1), nodes(("ng1-1", None)), OK, PERCENT)


def test_node_without_node_group_dont_crash() -> None:
    """``TestNodeWithoutNodeGroupDontCrash``: a node of no group counts in the cluster's readiness only."""
    assert cluster_healthy(nodes(("no_ng", None)), 1, OK, PERCENT)


def test_ok_one_unready_node_with_scale_down_candidate() -> None:
    """``TestOKOneUnreadyNodeWithScaleDownCandidate``: as ``TestOKOneUnreadyNode``, both groups healthy
    (ng2's one node Unready is one missing: not more than 1). Its scale-down candidates are the status
    ConfigMap's, not ported."""
    total = nodes(("ng1-1", None), ("ng2-1", LONG_AGO))
    assert cluster_healthy(total, 2, OK, PERCENT)
    assert node_group_healthy(acceptable_range(1), nodes(("ng1-1", None)), OK, PERCENT)
    assert node_group_healthy(acceptable_range(1), nodes(("ng2-1", LONG_AGO)), OK, PERCENT)


def test_missing_nodes() -> None:
    """``TestMissingNodes``: ng1 of target 5 has one Ready node and no scale-up in flight: four missing,
    more than 1 and than 10% of its one node, so ng1 is unhealthy; the cluster (two Ready) is healthy."""
    assert cluster_healthy(nodes(("ng1-1", None), ("ng2-1", None)), 2, OK, PERCENT)
    assert not node_group_healthy(acceptable_range(5), nodes(("ng1-1", None)), OK, PERCENT)


def test_too_many_unready() -> None:
    """``TestTooManyUnready``: both nodes Unready (2 > 1 and 2 > 10% of 2): the cluster is unhealthy;
    ng1 (one node missing) is healthy."""
    total = nodes(("ng1-1", LONG_AGO), ("ng2-1", LONG_AGO))
    assert not cluster_healthy(total, 2, OK, PERCENT)
    assert node_group_healthy(acceptable_range(1), nodes(("ng1-1", LONG_AGO)), OK, PERCENT)


def test_unready_long_after_creation() -> None:
    """``TestUnreadyLongAfterCreation``: a node not Ready, created 30 minutes before, is ``Unready``, not
    ``NotStarted``. (Its upcoming count: see ``test_upcoming_nodes``' reason.)"""
    total = nodes(("ng1-1", None), ("ng2-1", -30 * MINUTE))
    assert (len(total.unready), len(total.not_started)) == (1, 0)


@pytest.mark.parametrize(
    ("specs", "not_started", "ready_count"),
    [
        pytest.param(
            (("ng1-1", None), ("ng2-1", -10 * MINUTE)), 1, 1, id="TestNotStarted/not ready, created 10m ago"
        ),
        pytest.param(
            (),
            1,
            1,
            id="TestNotStarted/ready with the not-ready taint",
            marks=pytest.mark.skip(reason=NOT_READY_TAINT),
        ),
        pytest.param((("ng1-1", None), ("ng2-1", None)), 0, 2, id="TestNotStarted/ready, taint removed"),
    ],
)
def test_not_started(specs: tuple[tuple[str, float | None], ...], not_started: int, ready_count: int) -> None:
    """``TestNotStarted``: a node not Ready within ``MaxNodeStartupTime`` (15m) of its creation is
    ``NotStarted``; Ready (and without the not-ready taint) it is Ready."""
    total = nodes(*specs)
    assert (len(total.not_started), len(total.ready)) == (not_started, ready_count)


def test_expired_scale_up() -> None:
    """``TestExpiredScaleUp``: a scale-up of 4 registered 3 minutes before now, maxNodeProvisionTime 2m, its
    four nodes still upcoming (target 5, one Ready), has timed out at now (``ExpectedAddTime.Before(now)``):
    it is the one scale-up failure and is removed, so ng1's acceptable minimum is its target again and ng1
    is unhealthy; the cluster is healthy. (gpufleet's loop backs the group off and logs a provision-timeout:
    ``tests/control/test_cluster_autoscaler_scale_up_requests.py``.)"""
    requests: dict[str, ScaleUpRequest] = {}
    register_scale_up(requests, "ng1", 4, -3 * MINUTE, 2 * MINUTE)
    failed = update_scale_requests(requests, {"ng1": 4}, 0.0)
    assert [(r.group, r.increase) for r in failed] == [("ng1", 4)] and requests == {}
    assert cluster_healthy(nodes(("ng1-1", None)), 1, OK, PERCENT)
    increase = requests["ng1"].increase if "ng1" in requests else 0
    assert not node_group_healthy(
        acceptable_range(5, scale_up_increase=increase), nodes(("ng1-1", None)), OK, PERCENT
    )


@pytest.mark.skip(reason=SCALE_DOWN_REQUESTS)
def test_register_scale_down() -> None:
    """``TestRegisterScaleDown``."""


def test_node_group_scale_up_time() -> None:
    """``TestNodeGroupScaleUpTime``: a group not scaling up has no scale-up request (the error); one scaled
    up has its request's ``Time``, the scale-up's. (Its nil node group case has no counterpart: a group is
    named here.)"""
    requests: dict[str, ScaleUpRequest] = {}
    assert "ng1" not in requests
    register_scale_up(requests, "ng1", 1, 42.0, 15 * MINUTE)
    assert requests["ng1"].time == 42.0


@pytest.mark.skip(reason=UPCOMING)
def test_upcoming_nodes() -> None:
    """``TestUpcomingNodes``."""


@pytest.mark.skip(reason=CLOUD_INSTANCES)
def test_taint_based_node_deletion() -> None:
    """``TestTaintBasedNodeDeletion``."""


@pytest.mark.skip(reason=INCORRECT_SIZE)
def test_incorrect_size() -> None:
    """``TestIncorrectSize``."""


@pytest.mark.skip(reason=CLOUD_INSTANCES)
def test_unregistered_nodes() -> None:
    """``TestUnregisteredNodes``."""


@pytest.mark.skip(reason=CLOUD_INSTANCES)
def test_cloud_provider_deleted_nodes() -> None:
    """``TestCloudProviderDeletedNodes``."""


def pool() -> PoolRuntime:
    return PoolRuntime.of(NodePool("ng1", Node("template")), np.random.default_rng(0))


def test_scale_up_backoff() -> None:
    """``TestScaleUpBackoff`` (``newBackoff``: 5m doubling to 30m, reset after 3h; maxNodeProvisionTime
    2m): ng1 of target 4 with three Ready nodes. A scale-up of 1 registered 180 s before now times out at
    now (after 3m0s): the group stays healthy (one node missing, not more than 1) and is backed off for 5m;
    5m1s later it is not; a second scale-up registered 121 s before then times out (after 2m1s) and backs
    it off for 10m (the first had ended): still backed off 5m1s after; a successful scale-up (its node
    Ready at once) is done and does not lift the backoff. (Its ErrorInfo: not kept; its message's
    duration is the provision-timeout event's.)"""
    settings, ng1, three = AutoscalerSettings(), pool(), nodes(("r0", None), ("r1", None), ("r2", None))
    limit, requests = 2 * MINUTE, dict[str, ScaleUpRequest]()

    def update(now: float, upcoming: int) -> list[str]:
        failed = update_scale_requests(requests, {"ng1": upcoming}, now)
        for _ in failed:
            ng1.back_off(now, settings)
        return [go_duration(now - r.time) for r in failed]

    now = 0.0
    register_scale_up(requests, "ng1", 1, now - 180.0, limit)
    assert update(now, 1) == ["3m0s"]
    assert ng1.backed_off(now) and node_group_healthy(acceptable_range(4), three, OK, PERCENT)
    now += 5 * MINUTE + 1
    assert not ng1.backed_off(now)
    register_scale_up(requests, "ng1", 1, now - 121.0, limit)
    assert update(now, 1) == ["2m1s"]
    assert ng1.backed_off(now) and ng1.backoff_s == 10 * MINUTE
    assert node_group_healthy(acceptable_range(4), three, OK, PERCENT)
    now += 5 * MINUTE + 1
    assert ng1.backed_off(now)
    register_scale_up(requests, "ng1", 1, now, limit)
    assert update(now, 0) == [] and requests == {}  # its node is there: done
    four = nodes(("r0", None), ("r1", None), ("r2", None), ("r3", None))
    assert node_group_healthy(acceptable_range(4), four, OK, PERCENT) and ng1.backed_off(now)


@pytest.mark.skip(reason=CLUSTER_SIZE)
def test_get_cluster_size() -> None:
    """``TestGetClusterSize``."""


def test_update_scale_up() -> None:
    """``TestUpdateScaleUp`` (maxNodeProvisionTime 10s): ``RegisterScaleUp`` of 100 makes ng1's request;
    a negative delta a minute later lowers its ``Increase`` and keeps its times; a positive one adds to it
    and moves ``Time`` and ``ExpectedAddTime``; one that brings it below 0 removes it; and a negative delta
    without a request makes none."""
    requests: dict[str, ScaleUpRequest] = {}
    now, later, limit = 0.0, MINUTE, 10.0
    register_scale_up(requests, "ng1", 100, now, limit)
    assert requests["ng1"] == ScaleUpRequest("ng1", 100, now, now + 10.0)
    register_scale_up(requests, "ng1", -20, later, limit)
    assert requests["ng1"] == ScaleUpRequest("ng1", 80, now, now + 10.0)
    register_scale_up(requests, "ng1", 30, later, limit)
    assert requests["ng1"] == ScaleUpRequest("ng1", 110, later, later + 10.0)
    register_scale_up(requests, "ng1", -200, now, limit)
    assert "ng1" not in requests
    register_scale_up(requests, "ng1", -200, now, limit)
    assert "ng1" not in requests


@pytest.mark.skip(reason=FAILURES_LIST)
def test_scale_up_failures() -> None:
    """``TestScaleUpFailures``."""


# (ng1, ng2): target, long unregistered, scale-up increase, scale-downs in flight
ACCEPTABLE_RANGES = [
    ("No scale-ups/scale-downs", ((10, 0, 0, 0), (20, 0, 0, 0)), ((10, 10), (20, 20))),
    ("Ongoing scale-ups", ((10, 0, 3, 0), (20, 0, 5, 0)), ((7, 10), (15, 20))),
    ("Ongoing scale-downs", ((10, 0, 0, 2), (20, 0, 0, 3)), ((10, 12), (20, 23))),
    ("Some short unregistered nodes", ((10, 0, 0, 0), (20, 0, 0, 0)), ((10, 10), (20, 20))),
    ("Some long unregistered nodes", ((10, 2, 0, 0), (20, 3, 0, 0)), ((8, 10), (17, 20))),
    ("Everything together", ((10, 2, 3, 2), (20, 4, 5, 3)), ((5, 12), (11, 23))),
]


@pytest.mark.parametrize(
    ("groups", "want"),
    [pytest.param(g, w, id=f"TestUpdateAcceptableRanges/{n}") for n, g, w in ACCEPTABLE_RANGES],
)
def test_update_acceptable_ranges(
    groups: tuple[tuple[int, int, int, int], ...], want: tuple[tuple[int, int], ...]
) -> None:
    """``TestUpdateAcceptableRanges``: each group's target less its long-unregistered nodes and its scale-up
    in flight, up to its target plus its scale-downs (short-unregistered nodes change nothing)."""
    for (target, long, increase, downs), (low, high) in zip(groups, want, strict=True):
        assert acceptable_range(target, long, increase, downs) == AcceptableRange(low, high, target)


INCORRECT_SIZES = [
    "node groups with correct sizes",
    "node groups with correct sizes after not being correct sized",
    "node groups below the target size",
    "node groups above the target size",
    "node groups below the target size with changed delta",
    "node groups below the target size with the same delta",
    "node groups below the target size with short unregistered nodes",
    "node groups below the target size with long unregistered nodes",
    "node groups below the target size with various unregistered nodes",
]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            n, id=f"TestUpdateIncorrectNodeGroupSizes/{n}", marks=pytest.mark.skip(reason=INCORRECT_SIZE)
        )
        for n in INCORRECT_SIZES
    ],
)
def test_update_incorrect_node_group_sizes(case: str) -> None:
    """``TestUpdateIncorrectNodeGroupSizes``."""


TRUNCATIONS = [
    "Message doesn't exceed maxSize",
    "Message exceeds maxSize",
    "Message doesn't exceed maxSize and maxSize is smaller than truncatedMessageSuffix length",
    "Message exceeds maxSize and maxSize is smaller than truncatedMessageSuffix length",
]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(n, id=f"TestTruncateIfExceedMaxSize/{n}", marks=pytest.mark.skip(reason=TRUNCATE))
        for n in TRUNCATIONS
    ],
)
def test_truncate_if_exceed_max_size(case: str) -> None:
    """``TestTruncateIfExceedMaxSize``."""


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(n, id=f"TestIsNodeGroupRegistered/{n}", marks=pytest.mark.skip(reason=REGISTERED))
        for n in ("registered-node-group", "unregistered-node-group")
    ],
)
def test_is_node_group_registered(case: str) -> None:
    """``TestIsNodeGroupRegistered``."""


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            k, id=f"TestUpcomingNodesFromUpcomingNodeGroups/{k}", marks=pytest.mark.skip(reason=ASYNC_GROUPS)
        )
        for k in range(5)
    ],
)
def test_upcoming_nodes_from_upcoming_node_groups(case: int) -> None:
    """``TestUpcomingNodesFromUpcomingNodeGroups`` (five unnamed cases)."""


# -- utils/backoff/exponential_backoff_test.go -------------------------------------------------------------
def test_backoff_two_keys() -> None:
    """``TestBackoffTwoKeys`` (10m initial, 1h max): a failure of id1 at 1m backs id1 off until 11m, its
    last instant included, and never id2."""
    settings = AutoscalerSettings(initial_backoff_s=10 * MINUTE, max_backoff_s=60 * MINUTE)
    id1, id2 = pool(), pool()
    assert not id1.backed_off(0.0) and not id2.backed_off(0.0)
    id1.back_off(MINUTE, settings)
    assert id1.backed_off(2 * MINUTE) and not id2.backed_off(0.0)
    assert not id1.backed_off(11 * MINUTE + 0.001)


def test_max_backoff() -> None:
    """``TestMaxBackoff`` (1m initial, 3m max): a failure at the backoff's last instant (1m) keeps 1m; one
    after it ended (3m) doubles to 2m, over by 6m. (ErrorInfo: not kept.)"""
    settings = AutoscalerSettings(initial_backoff_s=MINUTE, max_backoff_s=3 * MINUTE)
    id1 = pool()
    id1.back_off(0.0, settings)
    assert id1.backed_off(0.0) and not id1.backed_off(MINUTE + 0.001)
    id1.back_off(MINUTE, settings)
    assert id1.backed_off(MINUTE) and not id1.backed_off(3 * MINUTE)
    id1.back_off(3 * MINUTE, settings)
    assert id1.backed_off(3 * MINUTE) and not id1.backed_off(6 * MINUTE)


@pytest.mark.skip(reason=REMOVE_BACKOFF)
def test_remove_backoff() -> None:
    """``TestRemoveBackoff``."""


def test_reset_stale_backoff_data() -> None:
    """``TestResetStaleBackoffData`` (1m initial, 3m max, reset 3h): id1 failed at 0, id2 at 1h. At 1h
    neither's data is stale; at 4h id1's is (its last failure plus 3h before 4h: the next failure backs off
    1m again) and id2's not (1h + 3h is not before 4h: the next failure doubles); at 5h both are. gpufleet
    forgets stale data at the next failure (upstream at each loop's ``RemoveStaleBackoffData``): the
    same backoffs."""
    settings = AutoscalerSettings(
        initial_backoff_s=MINUTE, max_backoff_s=3 * MINUTE, backoff_reset_s=3 * 3600.0
    )

    def next_backoff(failures: list[float], at: float) -> float:
        group = pool()
        for t in failures:
            group.back_off(t, settings)
        group.back_off(at, settings)
        return group.backoff_s

    assert next_backoff([0.0], 3600.0) == 2 * MINUTE  # not stale at 1h
    assert next_backoff([0.0], 4 * 3600.0) == MINUTE  # stale at 4h
    assert next_backoff([3600.0], 4 * 3600.0) == 2 * MINUTE  # not stale at 4h
    assert next_backoff([3600.0], 5 * 3600.0) == MINUTE  # stale at 5h


def test_increase_existing_backoff() -> None:
    """``TestIncreaseExistingBackoff`` (1s initial, 10m max): out of the 1s backoff at 1.001s, a failure
    doubles it to 2s; one during it (1s later) moves its end, not its length: over at 2.001s after."""
    settings = AutoscalerSettings(initial_backoff_s=1.0, max_backoff_s=10 * MINUTE)
    id1, now = pool(), 0.0
    id1.back_off(now, settings)
    assert id1.backed_off(now)
    now += 1.001
    assert not id1.backed_off(now)
    id1.back_off(now, settings)
    assert id1.backed_off(now) and id1.backoff_s == 2.0
    now += 1.0
    id1.back_off(now, settings)
    assert id1.backed_off(now) and id1.backoff_s == 2.0
    now += 2.001
    assert not id1.backed_off(now)
