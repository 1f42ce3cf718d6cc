"""Which active pods a Job deletes in ``manageJob`` (``pkg/controller/job``, Kubernetes v1.34.10): more active
pods than it wants (``wantActive``: ``parallelism``, at most the remaining ``completions``) and, for an
Indexed Job, every active pod of no completion index, of an index out of range or of an index another
active pod holds (``activePodsForRemoval``, ``appendDuplicatedIndexPodsForRemoval``), in the order of
``controller.ActivePods`` (``pkg/controller/controller_utils.go``): the pods to delete first come first.

Upstream sorts with ``sort.Sort``, which promises no order among equal pods; here equal pods keep the order
given (a snapshot's), so that a run is deterministic. Times are RFC 3339 text in UTC (the API server writes
them so), which sorts as time does.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cmp_to_key

from gpufleet.model.owned import OwnedPod
from gpufleet.workloads.replicaset import activity


def _after_or_zero(a: str, b: str) -> int:
    """``afterOrZero`` of two different times as a comparison: an unset time (``""``) first, else the later
    one first."""
    if not a or not b:
        return -1 if not a else 1
    return -1 if a > b else 1


def compare_active_pods(a: OwnedPod, b: OwnedPod) -> int:
    """``ActivePods.Less`` as a comparison: negative when ``a`` is deleted before ``b``, positive when after,
    0 when neither ``Less`` holds. (Sidecar containers' restarts are not compared: none is read.)"""
    first_a = activity(a.node, a.phase, a.ready_since is not None)
    first_b = activity(b.node, b.phase, b.ready_since is not None)
    if first_a != first_b:  # 1-3: unassigned, Pending, not ready first
        return -1 if first_a < first_b else 1
    if a.ready_since is not None and b.ready_since is not None and a.ready_since != b.ready_since:
        return _after_or_zero(a.ready_since, b.ready_since)  # 4. ready for less time < more time
    if a.max_restarts != b.max_restarts:  # 5. more container restarts < fewer (compareMaxContainerRestarts)
        return b.max_restarts - a.max_restarts
    if a.created != b.created:  # 6. unset creation time < newer < older
        return _after_or_zero(a.created, b.created)
    return 0


def _ranked(pods: Sequence[OwnedPod]) -> list[OwnedPod]:
    return sorted(pods, key=cmp_to_key(compare_active_pods))


def duplicated_index_pods(
    pods: Sequence[OwnedPod], completions: int
) -> tuple[list[OwnedPod], list[OwnedPod]]:
    """``appendDuplicatedIndexPodsForRemoval``: the active pods of an Indexed Job by completion index (no
    index first), split into those to delete (each of no index or of an index not below ``completions``; of
    each index more pods hold, all but the one deleted last) and those left."""
    rm: list[OwnedPod] = []
    left: list[OwnedPod] = []
    by_index: dict[int | None, list[OwnedPod]] = {}
    for p in sorted(pods, key=lambda p: -1 if p.completion_index is None else p.completion_index):
        by_index.setdefault(p.completion_index, []).append(p)
    for index, same in by_index.items():
        if index is None or index >= completions:
            rm += same
        elif len(same) == 1:
            left += same
        else:
            ranked = _ranked(same)
            rm += ranked[:-1]
            left.append(ranked[-1])
    return rm, left


def pods_for_removal(pods: Sequence[OwnedPod], rm_at_least: int, completions: int | None) -> list[OwnedPod]:
    """``activePodsForRemoval``: of a Job's active ``pods``, at least ``rm_at_least`` to delete; an Indexed
    Job's (``completions`` given) invalid and duplicated ones first (``duplicated_index_pods``), then as many
    more as it takes, first in ``ActivePods`` order."""
    rm, left = duplicated_index_pods(pods, completions) if completions is not None else ([], list(pods))
    if len(rm) < rm_at_least:
        rm += _ranked(left)[: rm_at_least - len(rm)]
    return rm
