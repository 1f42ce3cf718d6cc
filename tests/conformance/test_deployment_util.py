"""The Deployment controller's fenceposts and proportions: ``TestResolveFenceposts``, ``TestMaxUnavailable``,
``TestNewRSNewReplicas`` and ``TestGetReplicaSetFraction``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/deployment/util/deployment_util_test.go``. An
unset ``maxSurge`` or ``maxUnavailable`` (a nil pointer) is written None; an ``intstr`` string that is not a
percentage raises ValueError where upstream returns an error.
"""

from __future__ import annotations

import pytest

from gpufleet.model.workloads import DeploymentStrategy
from gpufleet.workloads.deployment_rolling import (
    ReplicaSetCounts,
    max_unavailable,
    new_rs_new_replicas,
    resolve_fenceposts,
)
from gpufleet.workloads.deployment_scaling import replica_set_fraction

# (maxSurge, maxUnavailable, desired, expectSurge, expectUnavailable, expectError)
FENCEPOSTS = [
    pytest.param("0%", "0%", 0, 0, 1, False, id="both-0-unavailable-1"),
    pytest.param("39%", "39%", 10, 4, 3, False, id="surge-up-unavailable-down"),
    pytest.param("oops", "39%", 10, 0, 0, True, id="bad-surge"),
    pytest.param("55%", "urg", 10, 0, 0, True, id="bad-unavailable"),
    pytest.param(None, "39%", 10, 0, 3, False, id="surge-unset"),
    pytest.param("39%", None, 10, 4, 0, False, id="unavailable-unset"),
    pytest.param(None, None, 10, 0, 1, False, id="both-unset"),
]


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "want_surge", "want_unavailable", "error"), FENCEPOSTS
)
def test_resolve_fenceposts_rounds_surge_up_and_unavailable_down(
    surge: str | None,
    unavailable: str | None,
    desired: int,
    want_surge: int,
    want_unavailable: int,
    error: bool,
) -> None:
    """``ResolveFenceposts``: surge rounded up, unavailable down; both 0 makes the unavailable 1."""
    if error:
        with pytest.raises(ValueError, match="not a percentage"):
            resolve_fenceposts(surge, unavailable, desired)
        return
    assert resolve_fenceposts(surge, unavailable, desired) == (want_surge, want_unavailable)


def rolling(replicas: int, unavailable: int | str) -> tuple[DeploymentStrategy, int]:
    """The test's ``deployment(replicas, maxUnavailable)``: RollingUpdate with maxSurge 1."""
    return DeploymentStrategy("RollingUpdate", 1, unavailable), replicas


MAX_UNAVAILABLE = [
    pytest.param(rolling(10, 5), 5, id="maxUnavailable less than replicas"),
    pytest.param(rolling(10, 10), 10, id="maxUnavailable equal replicas"),
    pytest.param(rolling(5, 10), 5, id="maxUnavailable greater than replicas"),
    pytest.param(rolling(0, 10), 0, id="maxUnavailable with replicas is 0"),
    pytest.param(
        (DeploymentStrategy("Recreate", 0, 0), 0), 0, id="maxUnavailable with Recreate deployment strategy"
    ),
    pytest.param(rolling(10, "50%"), 5, id="maxUnavailable less than replicas with percents"),
    pytest.param(rolling(10, "100%"), 10, id="maxUnavailable equal replicas with percents"),
    pytest.param(rolling(5, "100%"), 5, id="maxUnavailable greater than replicas with percents"),
]


@pytest.mark.parametrize(("deployment", "expected"), MAX_UNAVAILABLE)
def test_max_unavailable_is_at_most_the_replicas(
    deployment: tuple[DeploymentStrategy, int], expected: int
) -> None:
    """``MaxUnavailable``: 0 for Recreate or 0 replicas, else the resolved unavailable capped at replicas.
    (Upstream's Recreate case leaves ``replicas`` nil; 0 stands for it: the strategy decides first.)"""
    strategy, replicas = deployment
    assert max_unavailable(strategy, replicas) == expected


# (Name, strategyType, depReplicas, newRSReplicas, maxSurge, expected)
NEW_RS_NEW_REPLICAS = [
    pytest.param("RollingUpdate", 1, 5, 1, 5, id="can not scale up - to newRSReplicas"),
    pytest.param("RollingUpdate", 6, 2, 10, 6, id="scale up - to depReplicas"),
    pytest.param("Recreate", 3, 1, 1, 3, id="recreate - to depReplicas"),
]


@pytest.mark.parametrize(("kind", "replicas", "new", "surge", "expected"), NEW_RS_NEW_REPLICAS)
def test_new_rs_new_replicas_grows_within_the_surge(
    kind: str, replicas: int, new: int, surge: int, expected: int
) -> None:
    """``NewRSNewReplicas``: the other set (``rs5``, 5 replicas) counts toward the surge; the new set is not
    in ``allRSs``, as upstream's test passes it (maxUnavailable 1)."""
    rs5 = ReplicaSetCounts("rs5", 5)
    new_rs = ReplicaSetCounts("new", new)
    strategy = DeploymentStrategy(kind, surge, 1)
    assert new_rs_new_replicas(strategy, replicas, [rs5], new_rs) == expected


# (name, deploymentReplicas, deploymentStatusReplicas, deploymentMaxSurge, rsReplicas,
#  max-replicas annotation (None: none), expectedFraction)
FRACTION = [
    ("empty deployment always scales to 0", 0, 0, 0, 10, None, -10),
    ("unsynced deployment does not scale when max-replicas annotation is missing", 10, 0, 0, 5, None, 0),
    ("unsynced deployment does not scale when max-replicas annotation is 0", 10, 0, 0, 5, 0, 0),
    ("scale up by 1/5 when max-replicas annotation is missing", 120, 100, 0, 50, None, 10),
    ("scale up by 1/5 when max-replicas annotation is 0", 120, 100, 0, 50, 0, 10),
    ("scale up by 1/5 should increase RS replicas by 1/5", 120, 0, 0, 50, 100, 10),
    (
        "scale up with maxSurge by 1/5 should increase RS replicas approximately by 1/5",
        120,
        0,
        10,
        50,
        110,
        9,
    ),
    ("scale down by 1/6 should decrease RS replicas by 1/6", 10, 0, 0, 6, 12, -1),
    (
        "scale down with maxSurge by 1/6 should decrease RS replicas approximately by 1/6",
        100,
        0,
        10,
        50,
        130,
        -8,
    ),
]


@pytest.mark.parametrize(
    ("replicas", "status", "surge", "rs_replicas", "annotated", "expected"),
    [pytest.param(*row[1:], id=row[0]) for row in FRACTION],
)
def test_replica_set_fraction_scales_by_the_max_replicas_annotation(
    replicas: int, status: int, surge: int, rs_replicas: int, annotated: int | None, expected: int
) -> None:
    """``getReplicaSetFraction`` (``TestGetReplicaSetFraction``; its terminating-replicas gate is off in every
    row): the ReplicaSet's size times ``replicas + maxSurge`` over its ``max-replicas`` (absent or 0: the
    Deployment's ``status.replicas``), rounded half away from zero, less its size (maxUnavailable 1)."""
    rs = ReplicaSetCounts("rs", rs_replicas, max_replicas=annotated)
    assert (
        replica_set_fraction(rs, DeploymentStrategy("RollingUpdate", surge, 1), replicas, status) == expected
    )
