"""A Deployment scaled while it has more than one active ReplicaSet (an HPA mid-rollout), as
pkg/controller/deployment's ``sync.go`` decides it: ``isScalingEvent`` (an active ReplicaSet's
``desired-replicas`` annotation is not the Deployment's ``replicas``), then ``scale``: the one active (or the
newest) ReplicaSet takes every replica (``FindActiveOrLatest``); a saturated new one leaves the old ones none
(``IsSaturated``); else, under ``RollingUpdate``, the replicas to add or remove are spread over the active
ReplicaSets in proportion to their size (``GetReplicaSetProportion``, ``getReplicaSetFraction``), the
leftover to the largest. Each ReplicaSet scaled gets the ``desired-replicas`` and ``max-replicas``
annotations (``scaleReplicaSet``, ``SetReplicasAnnotations``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from gpufleet.model.workloads import ROLLING_UPDATE, DeploymentStrategy
from gpufleet.workloads.deployment_rolling import ReplicaSetCounts, max_surge, replica_count


def annotate(rs: ReplicaSetCounts, strategy: DeploymentStrategy, replicas: int) -> None:
    """``SetReplicasAnnotations``: ``desired-replicas`` is ``replicas``, ``max-replicas``
    ``replicas + MaxSurge``."""
    rs.desired, rs.max_replicas = replicas, replicas + max_surge(strategy, replicas)


def scale_replica_set(rs: ReplicaSetCounts, size: int, strategy: DeploymentStrategy, replicas: int) -> bool:
    """``scaleReplicaSet``: the new size and the Deployment's annotations; whether the size changed."""
    scaled = rs.replicas != size
    rs.replicas = size
    annotate(rs, strategy, replicas)
    return scaled


def is_scaling_event(replicas: int, sets: Sequence[ReplicaSetCounts]) -> bool:
    """``isScalingEvent``: an active ReplicaSet (``replicas`` above 0) annotated with another desired
    count."""
    return any(rs.replicas > 0 and rs.desired is not None and rs.desired != replicas for rs in sets)


def find_active_or_latest(
    new: ReplicaSetCounts, old_sets: Sequence[ReplicaSetCounts]
) -> ReplicaSetCounts | None:
    """``FindActiveOrLatest``: the only active ReplicaSet; the new one when none is active; None when
    several."""
    active = [rs for rs in (*old_sets, new) if rs.replicas > 0]
    if not active:
        return new
    return active[0] if len(active) == 1 else None


def is_saturated(replicas: int, new: ReplicaSetCounts) -> bool:
    """``IsSaturated``: the new ReplicaSet has, wants and has available every replica."""
    return new.replicas == replicas and new.desired == replicas and new.available == replicas


def _round(value: float) -> int:
    """``integer.RoundToInt32``: ``math.Round``, halves away from zero."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def replica_set_fraction(
    rs: ReplicaSetCounts, strategy: DeploymentStrategy, replicas: int, status: int
) -> int:
    """``getReplicaSetFraction``: how many replicas ``rs`` gains (or loses) when the Deployment's
    ``replicas + maxSurge`` replaces the one it was annotated with (``max-replicas``; absent or 0:
    ``status``, the Deployment's ``status.replicas``; that 0 too: none); scaling to 0, all of them."""
    if replicas == 0:
        return -rs.replicas
    most = replicas + max_surge(strategy, replicas)
    before = rs.max_replicas or status
    if before == 0:
        return 0
    return _round(rs.replicas * most / before) - rs.replicas


def replica_set_proportion(
    rs: ReplicaSetCounts, strategy: DeploymentStrategy, replicas: int, status: int, to_add: int, added: int
) -> int:
    """``GetReplicaSetProportion``: ``rs``'s fraction, within what is left to add (or remove)."""
    if rs.replicas == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = replica_set_fraction(rs, strategy, replicas, status)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def scale(
    strategy: DeploymentStrategy,
    replicas: int,
    status: int,
    old_sets: Sequence[ReplicaSetCounts],
    new: ReplicaSetCounts,
) -> bool:
    """``scale``: the ReplicaSets' sizes after the Deployment's ``replicas`` changed (``status``: its
    ``status.replicas``, its active pods); whether any size changed."""
    only = find_active_or_latest(new, old_sets)
    if only is not None:
        return only.replicas != replicas and scale_replica_set(only, replicas, strategy, replicas)
    if is_saturated(replicas, new):
        scaled = False
        for old in old_sets:
            if old.replicas > 0:
                scaled = scale_replica_set(old, 0, strategy, replicas) or scaled
        return scaled
    if strategy.type != ROLLING_UPDATE:
        return False
    active = [rs for rs in (*old_sets, new) if rs.replicas > 0]
    allowed = replicas + max_surge(strategy, replicas) if replicas > 0 else 0
    to_add = allowed - replica_count(active)
    if to_add > 0:  # ReplicaSetsBySizeNewer
        active.sort(key=lambda rs: (-rs.replicas, -rs.created))
    elif to_add < 0:  # ReplicaSetsBySizeOlder
        active.sort(key=lambda rs: (-rs.replicas, rs.created))
    sizes, added = [], 0
    for rs in active:
        proportion = replica_set_proportion(rs, strategy, replicas, status, to_add, added)
        sizes.append(rs.replicas + proportion)
        added += proportion
    if to_add != 0:  # the leftover to the largest
        sizes[0] = max(sizes[0] + to_add - added, 0)
    scaled = False
    for rs, size in zip(active, sizes, strict=True):
        scaled = scale_replica_set(rs, size, strategy, replicas) or scaled
    return scaled
