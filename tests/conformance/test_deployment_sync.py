"""A Deployment scaled mid-rollout: ``TestScale`` (proportional scaling).

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/deployment/sync_test.go``. Each ReplicaSet is
written as :class:`~gpufleet.workloads.deployment_rolling.ReplicaSetCounts`, annotated (``desired``,
``max_replicas``) as the test annotates it from ``oldDeployment`` (its ``replicas`` and ``replicas +
MaxSurge``); creation times become ``created`` ranks (older lower). ``newDeployment`` defaults maxSurge and
maxUnavailable to 0, and its ``status.replicas`` to 0. Skipped (``SKIPPED``): the rows without a new
ReplicaSet and the row whose ReplicaSet update fails.
"""

from __future__ import annotations

import pytest

from gpufleet.model.workloads import DeploymentStrategy
from gpufleet.workloads.deployment_rolling import ReplicaSetCounts, max_surge
from gpufleet.workloads.deployment_scaling import scale

NEWER, OLD, OLDER = 2, 1, 0


def strategy(surge: int = 0, unavailable: int = 0) -> DeploymentStrategy:
    return DeploymentStrategy("RollingUpdate", surge, unavailable)


# (name, deployment (replicas, surge, unavailable), oldDeployment (replicas, surge), new (replicas, created),
#  old [(name, replicas, created)], expected new, expected old, new status.availableReplicas)
SCALE = [
    ("normal scaling event: 10 -> 12", (12, 0, 0), (10, 0), 10, [], 12, [], 0),
    ("normal scaling event: 10 -> 5", (5, 0, 0), (10, 0), 10, [], 5, [], 0),
    ("proportional scaling: 5 -> 10", (10, 0, 0), (5, 0), 2, [3], 4, [6], 0),
    ("proportional scaling: 5 -> 3", (3, 0, 0), (5, 0), 2, [3], 1, [2], 0),
    ("proportional scaling: 9 -> 4", (4, 0, 0), (9, 0), 8, [1], 4, [0], 0),
    ("proportional scaling: 7 -> 10", (10, 0, 0), (7, 0), 2, [3, 2], 3, [4, 3], 0),
    ("proportional scaling: 13 -> 8", (8, 0, 0), (13, 0), 2, [8, 3], 1, [5, 2], 0),
    ("leftover distribution: 3 -> 4", (4, 0, 0), (3, 0), 1, [1, 1], 2, [1, 1], 0),
    ("leftover distribution: 3 -> 2", (2, 0, 0), (3, 0), 1, [1, 1], 1, [1, 0], 0),
    ("proportional scaling: 6 -> 0", (0, 0, 0), (6, 0), 3, [2, 1], 0, [0, 0], 0),
    ("proportional scaling: 0 -> 6", (6, 0, 0), (6, 0), 0, [0, 0], 6, [0, 0], 0),
    ("deployment with surge pods", (20, 2, 0), (10, 2), 6, [6], 11, [11], 0),
    ("change both surge and size", (50, 6, 0), (10, 3), 5, [8], 22, [34], 0),
    ("saturated but broken new replica set does not affect old pods", (2, 1, 1), (2, 1), 2, [1], 2, [1], 0),
]


NO_NEW_SET = "no new ReplicaSet: gpufleet's Deployment has one from a Rollout's first sync on"
#: upstream's rows gpufleet cannot express, and why
SKIPPED = [
    ("proportional scaling (no new rs): 4 -> 5", NO_NEW_SET),
    ("failed rs update", "a ReplicaSet update that fails: gpufleet has no API to fail"),
    ("change both size and template", NO_NEW_SET),
]


@pytest.mark.parametrize(
    ("deployment", "before", "new", "old", "want_new", "want_old", "available"),
    [pytest.param(*row[1:], id=row[0]) for row in SCALE]
    + [
        pytest.param(None, None, None, None, None, None, None, id=name, marks=pytest.mark.skip(reason=reason))
        for name, reason in SKIPPED
    ],
)
def test_scale_spreads_a_change_of_replicas_over_the_replica_sets_in_proportion(
    deployment: tuple[int, int, int],
    before: tuple[int, int],
    new: int,
    old: list[int],
    want_new: int,
    want_old: list[int],
    available: int,
) -> None:
    """``scale``: the one active ReplicaSet takes all; else each its share of ``replicas + maxSurge`` by
    its ``max-replicas`` annotation, the leftover to the largest (newest first when growing, oldest first
    when shrinking). The old sets are given newest first, as upstream lists them."""
    replicas, surge, unavailable = deployment
    before_replicas, before_surge = before
    annotated_max = before_replicas + max_surge(strategy(before_surge, 1), before_replicas)
    new_rs = ReplicaSetCounts("new", new, available, NEWER, before_replicas, annotated_max)
    old_rss = [
        ReplicaSetCounts(f"old-{i}", size, 0, created, before_replicas, annotated_max)
        for i, (size, created) in enumerate(zip(old, (OLD, OLDER), strict=False))
    ]
    scale(strategy(surge, unavailable), replicas, 0, old_rss, new_rs)
    assert new_rs.replicas == want_new
    assert [rs.replicas for rs in old_rss] == want_old
