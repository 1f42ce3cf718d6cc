"""The Deployment controller's rolling update: ``TestDeploymentController_reconcileNewReplicaSet``,
``_reconcileOldReplicaSets``, ``_cleanupUnhealthyReplicas`` and ``_scaleDownOldReplicaSetsForRollingUpdate``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/deployment/rolling_test.go``. A ReplicaSet is
written as :class:`~gpufleet.workloads.deployment_rolling.ReplicaSetCounts` (its ``spec.replicas`` and
``status.availableReplicas``), the Deployment as its strategy and ``replicas``
(``newDeployment(name, replicas, revisionHistoryLimit, maxSurge, maxUnavailable, selector)``). Upstream
reads "scaled" from the fake clientset's update actions; here from what each function returns, and the
replicas it left (``expectedNewReplicas``, ``expectedOldReplicas``) where the table gives them.
"""

from __future__ import annotations

import pytest

from gpufleet.model.workloads import DeploymentStrategy
from gpufleet.workloads.deployment_rolling import (
    ReplicaSetCounts,
    cleanup_unhealthy_replicas,
    reconcile_new_replica_set,
    reconcile_old_replica_sets,
    scale_down_old_replica_sets_for_rolling_update,
)


def rolling(max_surge: int | str, max_unavailable: int | str) -> DeploymentStrategy:
    return DeploymentStrategy("RollingUpdate", max_surge, max_unavailable)


# (deploymentReplicas, maxSurge, oldReplicas, newReplicas, scaleExpected, expectedNewReplicas)
RECONCILE_NEW = [
    pytest.param(10, 0, 10, 0, False, 0, id="should-not-scale-up"),
    pytest.param(10, 2, 10, 0, True, 2, id="surge-2-of-10"),
    pytest.param(10, 2, 5, 0, True, 7, id="room-left-by-old"),
    pytest.param(10, 2, 10, 2, False, 2, id="surge-used"),
    pytest.param(10, 2, 2, 11, True, 10, id="should-scale-down"),
]


@pytest.mark.parametrize(("replicas", "surge", "old", "new", "scaled", "expected"), RECONCILE_NEW)
def test_reconcile_new_replica_set_scales_the_new_set_within_the_surge(
    replicas: int, surge: int, old: int, new: int, scaled: bool, expected: int
) -> None:
    """``reconcileNewReplicaSet``: up to ``replicas + maxSurge`` pods in all, never above ``replicas``; down
    to ``replicas`` when above. (Upstream names both sets ``foo-v2``; maxUnavailable 0.)"""
    new_rs, old_rs = ReplicaSetCounts("foo-v2", new), ReplicaSetCounts("foo-v2", old)
    got = reconcile_new_replica_set(rolling(surge, 0), replicas, [new_rs, old_rs], new_rs)
    assert got is scaled
    assert new_rs.replicas == (expected if scaled else new)


# (deploymentReplicas, maxUnavailable, oldReplicas, newReplicas, readyPodsFromOldRS, readyPodsFromNewRS,
#  scaleExpected)
RECONCILE_OLD = [
    pytest.param(10, 0, 10, 0, 10, 0, True, id="max-unavailable-0"),
    pytest.param(10, 2, 10, 0, 10, 0, True, id="max-unavailable-2"),
    pytest.param(10, 2, 10, 0, 8, 0, True, id="unhealthy-old-cleaned-up"),
    pytest.param(10, 2, 10, 0, 9, 0, True, id="one-unhealthy-one-ready-scaled-down"),
    pytest.param(10, 2, 8, 2, 8, 0, False, id="new-unavailable-blocks-further-scale-down"),
]


@pytest.mark.parametrize(
    ("replicas", "unavailable", "old", "new", "old_ready", "new_ready", "scaled"), RECONCILE_OLD
)
def test_reconcile_old_replica_sets_keeps_the_minimum_available(
    replicas: int, unavailable: int, old: int, new: int, old_ready: int, new_ready: int, scaled: bool
) -> None:
    """``reconcileOldReplicaSets``: old replicas go, unhealthy ones first, while ``replicas -
    maxUnavailable`` stay available, the new set's unavailable pods counted as gone (maxSurge 0; upstream
    checks only whether it scaled: its ``expectedOldReplicas`` is not asserted there, nor here)."""
    new_rs = ReplicaSetCounts("foo-new", new, new_ready)
    old_rs = ReplicaSetCounts("foo-old", old, old_ready)
    got = reconcile_old_replica_sets(rolling(0, unavailable), replicas, [old_rs, new_rs], [old_rs], new_rs)
    assert got is scaled


# (oldReplicas, readyPods, unHealthyPods, maxCleanupCount, cleanupCountExpected)
CLEANUP = [
    pytest.param(10, 8, 2, 1, 1, id="capped-by-max-cleanup"),
    pytest.param(10, 8, 2, 3, 2, id="all-unhealthy"),
    pytest.param(10, 8, 2, 0, 0, id="max-cleanup-0"),
    pytest.param(10, 10, 0, 3, 0, id="none-unhealthy"),
]


@pytest.mark.parametrize(("old", "ready", "unhealthy", "most", "expected"), CLEANUP)
def test_cleanup_unhealthy_replicas_scales_down_the_unavailable_ones(
    old: int, ready: int, unhealthy: int, most: int, expected: int
) -> None:
    """``cleanupUnhealthyReplicas``: an old set loses its unavailable replicas, at most ``maxCleanupCount``
    (upstream's ``unHealthyPods`` is ``oldReplicas - readyPods`` in every row: its pods are not made)."""
    assert unhealthy == old - ready
    old_rs = ReplicaSetCounts("foo-v2", old, ready)
    assert cleanup_unhealthy_replicas([old_rs], most) == expected
    assert old_rs.replicas == old - expected


# (deploymentReplicas, maxUnavailable, readyPods, oldReplicas, scaleExpected, expectedOldReplicas)
SCALE_DOWN = [
    pytest.param(10, 0, 10, 10, True, 9, id="max-unavailable-0"),
    pytest.param(10, 2, 10, 10, True, 8, id="max-unavailable-2"),
    pytest.param(10, 2, 8, 10, False, 10, id="at-minimum-available"),
    pytest.param(10, 2, 10, 0, False, 0, id="old-set-empty"),
    pytest.param(10, 2, 1, 10, False, 10, id="below-minimum-available"),
]


@pytest.mark.parametrize(("replicas", "unavailable", "ready", "old", "scaled", "expected"), SCALE_DOWN)
def test_scale_down_old_replica_sets_leaves_the_minimum_available(
    replicas: int, unavailable: int, ready: int, old: int, scaled: bool, expected: int
) -> None:
    """``scaleDownOldReplicaSetsForRollingUpdate``: the old set goes down by as many as are available above
    ``replicas - maxUnavailable`` (resolved with maxSurge 0: ``ResolveFenceposts`` makes an unavailable of
    0 into 1, hence 9 in the first row)."""
    old_rs = ReplicaSetCounts("foo-v2", old, ready)
    got = scale_down_old_replica_sets_for_rolling_update(
        rolling(0, unavailable), replicas, [old_rs], [old_rs]
    )
    assert (got > 0) is scaled
    assert old_rs.replicas == expected


def test_cleanup_stops_where_an_old_replica_set_has_more_available_than_its_replicas() -> None:
    """gpufleet's own row: ``cleanupUnhealthyReplicas`` never scales a ReplicaSet up; where one has more
    available pods than ``replicas`` (its surplus not yet deleted) the count would be negative, and upstream
    returns "got invalid request" there, scaling nothing more."""
    first = ReplicaSetCounts("web-a", replicas=1, available=2, created=0)
    second = ReplicaSetCounts("web-b", replicas=2, available=0, created=1)
    assert cleanup_unhealthy_replicas([second, first], max_cleanup=3) == 0
    assert (first.replicas, second.replicas) == (1, 2)
