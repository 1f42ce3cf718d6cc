"""A Deployment's rollout over its ReplicaSets, as pkg/controller/deployment decides it: what each
ReplicaSet's ``spec.replicas`` becomes in one sync (``rolling.go`` ``rolloutRolling``, ``recreate.go``
``rolloutRecreate``), from the fenceposts of ``util/deployment_util.go`` (``ResolveFenceposts``,
``MaxUnavailable``, ``MaxSurge``, ``NewRSNewReplicas``) and intstr's ``GetScaledValueFromIntOrPercent``.

Pure arithmetic over :class:`ReplicaSetCounts` (a ReplicaSet's ``spec.replicas`` and
``status.availableReplicas``); each function changes ``replicas`` as ``scaleReplicaSetAndRecordEvent`` would
and returns what upstream's returns. Which pods a scale-down deletes is the ReplicaSet controller's
(``workloads.replicaset.pods_to_delete``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpufleet.model.workloads import RECREATE, ROLLING_UPDATE, DeploymentStrategy

_PERCENT = re.compile(r"^[0-9]+%$")


@dataclass
class ReplicaSetCounts:
    """What a sync reads and writes of one ReplicaSet of the Deployment: ``replicas`` (``spec.replicas``,
    which the sync changes), ``available`` (``status.availableReplicas``), ``created`` (its rank by
    creation time: ``ReplicaSetsByCreationTimestamp``), and its ``deployment.kubernetes.io/desired-replicas``
    and ``max-replicas`` annotations (``desired``, ``max_replicas``; None: absent), the Deployment's
    ``replicas`` and ``replicas + maxSurge`` when the controller last scaled it."""

    name: str
    replicas: int
    available: int = 0
    created: int = 0
    desired: int | None = None
    max_replicas: int | None = None


def scaled_value(value: int | str, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``: an int as it is, a percentage of ``total`` rounded up
    (``round_up``) or down; ValueError for a string that is not a percentage ("invalid value for
    IntOrString: invalid type: string is not a percentage")."""
    if isinstance(value, int):
        return value
    if not _PERCENT.fullmatch(value):
        raise ValueError(
            f"invalid value for IntOrString: invalid type: string is not a percentage: {value!r}"
        )
    scaled = int(value[:-1]) * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def resolve_fenceposts(
    max_surge: int | str | None, max_unavailable: int | str | None, desired: int
) -> tuple[int, int]:
    """``ResolveFenceposts``: the surge (rounded up) and the unavailable (rounded down) for ``desired``
    replicas, an unset one 0; both 0, the unavailable is 1 ("surge might not work due to quota")."""
    surge = scaled_value(0 if max_surge is None else max_surge, desired, True)
    unavailable = scaled_value(0 if max_unavailable is None else max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_unavailable(strategy: DeploymentStrategy, replicas: int) -> int:
    """``MaxUnavailable``: 0 for ``Recreate`` or no replicas; else the resolved unavailable, at most
    ``replicas``."""
    if strategy.type != ROLLING_UPDATE or replicas == 0:
        return 0
    _, unavailable = resolve_fenceposts(strategy.max_surge, strategy.max_unavailable, replicas)
    return min(unavailable, replicas)


def max_surge(strategy: DeploymentStrategy, replicas: int) -> int:
    """``MaxSurge``: 0 for ``Recreate``; else the resolved surge."""
    if strategy.type != ROLLING_UPDATE:
        return 0
    return resolve_fenceposts(strategy.max_surge, strategy.max_unavailable, replicas)[0]


def replica_count(sets: Sequence[ReplicaSetCounts]) -> int:
    """``GetReplicaCountForReplicaSets``: the sets' ``spec.replicas`` summed."""
    return sum(s.replicas for s in sets)


def new_rs_new_replicas(
    strategy: DeploymentStrategy, replicas: int, all_sets: Sequence[ReplicaSetCounts], new: ReplicaSetCounts
) -> int:
    """``NewRSNewReplicas``: the new ReplicaSet's replicas, as many more as the surge allows over all sets'
    (``maxSurge`` of ``replicas``, rounded up), at most ``replicas``; ``Recreate``: ``replicas``."""
    if strategy.type == RECREATE:
        return replicas
    surge = scaled_value(strategy.max_surge, replicas, True)
    current = replica_count(all_sets)
    most = replicas + surge
    if current >= most:
        return new.replicas
    return new.replicas + min(most - current, replicas - new.replicas)


def reconcile_new_replica_set(
    strategy: DeploymentStrategy, replicas: int, all_sets: Sequence[ReplicaSetCounts], new: ReplicaSetCounts
) -> bool:
    """``reconcileNewReplicaSet``: scale the new ReplicaSet down to ``replicas`` when above, else up as
    ``new_rs_new_replicas`` allows; whether it was scaled."""
    if new.replicas == replicas:
        return False
    wanted = replicas if new.replicas > replicas else new_rs_new_replicas(strategy, replicas, all_sets, new)
    scaled = wanted != new.replicas
    new.replicas = wanted
    return scaled


def cleanup_unhealthy_replicas(old_sets: Sequence[ReplicaSetCounts], max_cleanup: int) -> int:
    """``cleanupUnhealthyReplicas``: scale the old ReplicaSets, oldest first, down by their unavailable
    replicas, at most ``max_cleanup`` in all; how many."""
    return _scale_down_oldest(old_sets, max_cleanup, lambda old: old.replicas - old.available)


def scale_down_old_replica_sets_for_rolling_update(
    strategy: DeploymentStrategy,
    replicas: int,
    all_sets: Sequence[ReplicaSetCounts],
    old_sets: Sequence[ReplicaSetCounts],
) -> int:
    """``scaleDownOldReplicaSetsForRollingUpdate``: scale the old ReplicaSets, oldest first, down by as many
    as are available above ``replicas - maxUnavailable``; how many."""
    least = replicas - max_unavailable(strategy, replicas)
    available = sum(s.available for s in all_sets)
    if available <= least:
        return 0
    return _scale_down_oldest(old_sets, available - least, lambda old: old.replicas)


def _scale_down_oldest(
    old_sets: Sequence[ReplicaSetCounts], allowed: int, room: Callable[[ReplicaSetCounts], int]
) -> int:
    """The old ReplicaSets scaled down, oldest first, each by at most its ``room``, ``allowed`` in all (the
    loop ``cleanupUnhealthyReplicas`` and ``scaleDownOldReplicaSetsForRollingUpdate`` share); how many. A
    negative room (more available than ``replicas``) would scale one up: upstream stops there with an error
    ("got invalid request"), and so does this."""
    total = 0
    for old in sorted(old_sets, key=lambda s: s.created):
        if total >= allowed:
            break
        count = min(room(old), allowed - total)
        if count < 0:
            break
        if old.replicas == 0 or count == 0:
            continue
        old.replicas -= count
        total += count
    return total


def reconcile_old_replica_sets(
    strategy: DeploymentStrategy,
    replicas: int,
    all_sets: Sequence[ReplicaSetCounts],
    old_sets: Sequence[ReplicaSetCounts],
    new: ReplicaSetCounts,
) -> bool:
    """``reconcileOldReplicaSets``: as many old replicas may go as leave ``replicas - maxUnavailable``
    counting the new ReplicaSet's unavailable ones as gone; the unhealthy ones first
    (``cleanup_unhealthy_replicas``), then available ones
    (``scale_down_old_replica_sets_for_rolling_update``); whether any went."""
    if replica_count(old_sets) == 0:
        return False
    least = replicas - max_unavailable(strategy, replicas)
    most_down = replica_count(all_sets) - least - (new.replicas - new.available)
    if most_down <= 0:
        return False
    cleaned = cleanup_unhealthy_replicas(old_sets, most_down)
    scaled = scale_down_old_replica_sets_for_rolling_update(strategy, replicas, [*old_sets, new], old_sets)
    return cleaned + scaled > 0


def rollout_rolling(
    strategy: DeploymentStrategy, replicas: int, old_sets: Sequence[ReplicaSetCounts], new: ReplicaSetCounts
) -> bool:
    """``rolloutRolling``'s one step: scale the new ReplicaSet up (or down) if it can, else the active old
    ones (``FilterActiveReplicaSets``: ``replicas`` above 0) down; whether anything was scaled."""
    all_sets = [*old_sets, new]
    if reconcile_new_replica_set(strategy, replicas, all_sets, new):
        return True
    active = [s for s in old_sets if s.replicas > 0]
    return reconcile_old_replica_sets(strategy, replicas, all_sets, active, new)


def rollout_recreate(
    replicas: int, old_sets: Sequence[ReplicaSetCounts], new: ReplicaSetCounts, old_pods_running: bool
) -> bool:
    """``rolloutRecreate``'s one step: every old ReplicaSet to 0 (``scaleDownOldReplicaSetsForRecreate``);
    once none was scaled and no old pod runs any longer (``oldPodsRunning``: a pod of an old ReplicaSet not
    Succeeded or Failed, one being deleted included), the new one to ``replicas``
    (``scaleUpNewReplicaSetForRecreate``); whether anything was scaled."""
    scaled = False
    for old in old_sets:
        if old.replicas != 0:
            old.replicas, scaled = 0, True
    if scaled or old_pods_running:
        return scaled
    grown = new.replicas != replicas
    new.replicas = replicas
    return grown


def deployment_complete(replicas: int, updated: int, total: int, available: int) -> bool:
    """``DeploymentComplete``: the new ReplicaSet's pods (``updatedReplicas``), all the pods
    (``status.replicas``) and the available ones each number ``replicas``."""
    return updated == replicas and total == replicas and available == replicas
